#!/usr/bin/env bash
# Runs the shared benchmark matrices on htsim's fabric and prints wall time, peak memory,
# events/s and packet-hops/s beside htsim's reference figures (../shared/bench/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(1024 8192)
declare -A htsim_wall=([128]=0.69 [1024]=16.8 [8192]=229)
declare -A htsim_rss=([128]=20 [1024]=184 [8192]=2700)
for n in "${sizes[@]}"; do
  out="out/bench_$n"
  ./target/release/fabricsim run "bench/perm_$n.toml" --quiet --out "$out" >/dev/null
  python3 - "$out/summary.json" "$n" "${htsim_wall[$n]}" "${htsim_rss[$n]}" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); n = sys.argv[2]; hw = float(sys.argv[3]); hr = float(sys.argv[4])
p = s["performance"]; rss = (p["peak_rss_bytes"] or 0) / 1e6
print(f"perm_{n}n_2MiB: wall {p['wall_seconds']:.2f} s (htsim {hw} s, {hw/p['wall_seconds']:.1f}x faster), "
      f"peak RSS {rss:.0f} MB (htsim {hr:.0f} MB, {rss/hr:.2f}x), "
      f"{p['events_per_second']/1e6:.2f} M events/s, {p['packet_hops_per_second']/1e6:.2f} M packet-hops/s, "
      f"max FCT {s['fct_us']['max']:.1f} us")
PY
done
