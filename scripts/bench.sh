#!/usr/bin/env bash
# Benchmarks fabricsim on the htsim benchmark matrices in bench/matrices/ (htsim's fabric:
# 3-tier fat tree, 400 Gb/s, 1 us links, 4096 B packets, 1-BDP queues, trimming).
#
#   scripts/bench.sh [SIZES...]                   this tree, one run each (--runs N for medians)
#   scripts/bench.sh --ab REV [--runs N] [SIZES]  interleaved A/B against commit REV (default
#                                                 HEAD~1): medians of wall time and peak RSS, and
#                                                 a check that both wrote identical flows.csv
#   scripts/bench.sh --htsim BIN [--runs N] [SIZES]
#                                                 side by side with an htsim_uec binary (build it
#                                                 from its public repository, outside this one):
#                                                 htsim NSCC + REPS against fabricsim's benchmark
#                                                 scenario and against the same htsim command line
#                                                 translated by `fabricsim from-htsim`; prints the
#                                                 ratios measured in this run, by wall and by
#                                                 CPU time
#   --htsim-args "ARGS"                           htsim_uec's arguments after -tm (default
#                                                 -linkspeed 400000 -load_balancing_algo reps
#                                                 -end 20000), the same on both sides
#   --threads N[,M...]                            also run each fabricsim side with --threads N
#                                                 (the partitioned engine; several counts as
#                                                 2,4,8,16): speed-up, a check that it wrote the
#                                                 serial run's flows.csv, and the critical path
#                                                 (what N free cores could reach)
#   --record [--note TEXT]                        append the figures to bench/HISTORY.md
#
# SIZES are 128, 1024, 8192 (default 1024 8192). The options combine (--ab and --htsim in one
# interleaved run). scripts/bench.py does the measuring; see its docstring.
set -euo pipefail
cd "$(dirname "$0")/.."

ab=""
pass=()
runs=1
while [ $# -gt 0 ]; do
  case "$1" in
    --ab) ab="${2:-HEAD~1}"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --htsim|--htsim-args|--note|--htsim-label|--threads) pass+=("$1" "$2"); shift 2 ;;
    --record) pass+=("$1"); shift ;;
    *) pass+=("$1"); shift ;;
  esac
done
[ -n "$ab" ] && [ "$runs" = 1 ] && runs=3

cargo build --release -q -p fabricsim-cli
args=(--new "$PWD/target/release/fabricsim" --runs "$runs")

if [ -n "$ab" ]; then
  # Build REV in a temporary worktree with its own target folder (kept in target/bench-base).
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
  args+=(--base "$PWD/$base_bin" --base-label "$rev")
fi

exec python3 scripts/bench.py "${args[@]}" "${pass[@]}"
