#!/usr/bin/env bash
# Benchmarks fabricsim on the shared matrices (htsim's fabric; ../shared/bench/README.md).
#
#   scripts/bench.sh [SIZES...]                 one run each: wall, peak RSS, events/s vs htsim
#   scripts/bench.sh --ab REV [--runs N] [SIZES...]
#                                               interleaved A/B: this tree against commit REV
#                                               (default HEAD~1), N rounds (default 3) of
#                                               A then B, medians of wall time and peak RSS,
#                                               plus retired instructions (perf stat) where
#                                               perf works: a figure the machine's noise and
#                                               other processes barely move.
#
# SIZES are 128, 1024, 8192 (default 1024 8192). Both sides run the same scenario files from this
# tree, so only the binaries differ. The A/B mode also checks that both sides wrote identical
# flows.csv (a refactor must not change results).
set -euo pipefail
cd "$(dirname "$0")/.."

ab=""
runs=3
sizes=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ab) ab="${2:-HEAD~1}"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    *) sizes+=("$1"); shift ;;
  esac
done
[ ${#sizes[@]} -eq 0 ] && sizes=(1024 8192)
declare -A htsim_wall=([128]=0.69 [1024]=16.8 [8192]=229)
declare -A htsim_rss=([128]=20 [1024]=184 [8192]=2700)

cargo build --release -q
new_bin="$PWD/target/release/fabricsim"

summarize() { # summary.json size -> one line
  python3 - "$1" "$2" "${htsim_wall[$2]}" "${htsim_rss[$2]}" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); n = sys.argv[2]; hw = float(sys.argv[3]); hr = float(sys.argv[4])
p = s["performance"]; rss = (p["peak_rss_bytes"] or 0) / 1e6
print(f"perm_{n}n_2MiB: wall {p['wall_seconds']:.2f} s (htsim {hw} s, {hw/p['wall_seconds']:.1f}x faster), "
      f"peak RSS {rss:.0f} MB (htsim {hr:.0f} MB, {rss/hr:.2f}x), "
      f"{p['events_per_second']/1e6:.2f} M events/s, {p['packet_hops_per_second']/1e6:.2f} M packet-hops/s, "
      f"max FCT {s['fct_us']['max']:.1f} us")
PY
}

if [ -z "$ab" ]; then
  for n in "${sizes[@]}"; do
    out="out/bench_$n"
    "$new_bin" run "bench/perm_$n.toml" --quiet --out "$out" >/dev/null
    summarize "$out/summary.json" "$n"
  done
  exit 0
fi

# --- A/B: build REV in a temporary worktree with its own target folder -------------------------
rev=$(git rev-parse --short "$ab")
base_dir="target/bench-base"
base_bin="$base_dir/fabricsim-$rev"
if [ ! -x "$base_bin" ]; then
  tmp=$(mktemp -d)
  git worktree add -q --detach "$tmp/src" "$rev"
  (cd "$tmp/src" && CARGO_TARGET_DIR="$PWD/../target" cargo build --release -q -p fabricsim-cli)
  mkdir -p "$base_dir"
  cp "$tmp/target/release/fabricsim" "$base_bin"
  git worktree remove --force "$tmp/src"
  rm -rf "$tmp"
fi

have_perf=0
if command -v perf >/dev/null && perf stat -x, -e instructions true >/dev/null 2>&1; then have_perf=1; fi

for n in "${sizes[@]}"; do
  res="out/bench_ab_$n"
  rm -rf "$res"; mkdir -p "$res"
  for i in $(seq 1 "$runs"); do
    for side in base new; do
      bin=$new_bin; [ "$side" = base ] && bin=$base_bin
      o="$res/$side-$i"
      if [ $have_perf = 1 ]; then
        perf stat -x, -e instructions -o "$o.perf" "$bin" run "bench/perm_$n.toml" --quiet --out "$o" >/dev/null
      else
        "$bin" run "bench/perm_$n.toml" --quiet --out "$o" >/dev/null
      fi
    done
  done
  python3 - "$res" "$runs" "$n" "$rev" <<'PY'
import json, statistics, sys, filecmp, os
res, runs, n, rev = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def load(side):
    wall, rss, ins = [], [], []
    for i in range(1, runs + 1):
        s = json.load(open(f"{res}/{side}-{i}/summary.json"))["performance"]
        wall.append(s["wall_seconds"]); rss.append((s["peak_rss_bytes"] or 0) / 1e6)
        pf = f"{res}/{side}-{i}.perf"
        if os.path.exists(pf):
            for line in open(pf):
                f = line.strip().split(",")
                if len(f) > 2 and f[2].startswith("instructions") and f[0].replace(".", "").isdigit():
                    ins.append(float(f[0]))
    return wall, rss, ins
b, a = load("base"), load("new")
same = all(filecmp.cmp(f"{res}/base-{i}/flows.csv", f"{res}/new-{i}/flows.csv", shallow=False) for i in range(1, runs + 1))
med = statistics.median
line = (f"perm_{n}n_2MiB, {runs} interleaved rounds: wall median {med(b[0]):.2f} s ({rev}) -> {med(a[0]):.2f} s (this tree), "
        f"ratio {med(a[0])/med(b[0]):.3f}; walls base {[round(x, 2) for x in b[0]]} new {[round(x, 2) for x in a[0]]}; "
        f"peak RSS {med(b[1]):.0f} -> {med(a[1]):.0f} MB")
if b[2] and a[2]:
    line += f"; instructions {med(b[2])/1e9:.2f} G -> {med(a[2])/1e9:.2f} G (ratio {med(a[2])/med(b[2]):.4f})"
line += "; flows.csv identical" if same else "; flows.csv DIFFERS"
print(line)
PY
done
