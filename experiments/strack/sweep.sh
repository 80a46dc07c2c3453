#!/usr/bin/env bash
# The order the full sweep was run in this repository (cheapest and most telling first);
# each step appends to results/<TARGET>.json and skips runs already there.
set -u
cd "$(dirname "$0")"
R="python3 run.py --jobs 2"
$R --max-bytes 2MiB RT3
$R RT7 RT9
$R --max-bytes 16MiB RT8
$R --max-bytes 2MiB RT5 RT6
$R RT1 RT2 RT10 RT11
$R RT14
$R --max-bytes 16MiB RT3
$R --max-bytes 2MiB RT4 RT14
$R RT10 RT12 RT13 RT10s
$R --max-bytes 16MiB RT3s
$R --max-bytes 16MiB RT5 RT6 RT4
$R RT3 RT5 RT6 RT4 RT8
