#!/usr/bin/env python3
"""Side-by-side validation of fabricsim against htsim (issue 19 item 5).

Runs every case of cases.txt (every scheme on every matrix) in both simulators from the SAME
htsim command line: htsim runs it as written (plus `-tm MATRIX`), fabricsim runs the scenario
`fabricsim from-htsim` translates it into. Each simulator runs under `/usr/bin/time -v` (wall
time, CPU time, peak RSS). Outputs per case go to out/<case>/ (htsim.log, htsim.time,
fabricsim.toml, fabricsim/ with flows.csv and summary.json, fabricsim.time); compare.py reads
them and writes the table.

htsim is not part of this repository: build it beside it (see RESULTS.md) and pass its folder
with --htsim DIR or HTSIM_DIR (the folder holding htsim_uec and htsim_eqds).

    python3 experiments/htsim-parity/run.py --htsim /work/htsim-build/htsim/sim/build/datacenter
    python3 experiments/htsim-parity/run.py --only incast_8to1 --only nscc
    python3 experiments/htsim-parity/compare.py > experiments/htsim-parity/results/table.md
"""

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def write_incasts():
    """The incast matrices of the validation set: N senders (the last N hosts of a 128-host
    fabric, all in other pods than host 0 for N <= 112) to host 0, 4 MiB each, all at t = 0."""
    out = HERE / "matrices"
    out.mkdir(exist_ok=True)
    for n in (8, 32):
        senders = range(128 - n, 128)
        lines = [f"{h}->0 id {i + 1} start 0 size 4194304" for i, h in enumerate(senders)]
        text = f"Nodes 128\nConnections {n}\n" + "\n".join(lines) + "\n"
        path = out / f"incast_{n}to1_4MiB_128n.cm"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


def read_cases(path):
    """(name, htsim command line, matrix path) for every scheme x matrix of cases.txt."""
    schemes, matrices, section = [], [], None
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line in ("[schemes]", "[matrices]"):
            section = line
        elif section == "[schemes]":
            name, cmd = line.split(None, 1)
            schemes.append((name, cmd.strip()))
        else:
            matrices.append(line)
    cases = []
    for m in matrices:
        if m.startswith("bench/"):
            mpath = REPO / "bench" / "matrices" / m[len("bench/"):]
        else:
            mpath = HERE / m
        stem = Path(m).stem
        for name, cmd in schemes:
            cases.append((f"{stem}__{name}", cmd, mpath))
    return cases


def timed(cmd, cwd, log, timefile):
    """Runs cmd under /usr/bin/time -v, stdout+stderr of cmd into log, time's report into timefile."""
    with open(log, "w") as out:
        full = ["/usr/bin/time", "-v", "-o", str(timefile)] + cmd
        return subprocess.run(full, cwd=cwd, stdout=out, stderr=subprocess.STDOUT).returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--htsim", default=os.environ.get("HTSIM_DIR"), help="folder with htsim_uec and htsim_eqds (or HTSIM_DIR)")
    ap.add_argument("--fabricsim", default=str(REPO / "target" / "release" / "fabricsim"))
    ap.add_argument("--cases", default=str(HERE / "cases.txt"))
    ap.add_argument("--out", default=str(HERE / "out"))
    ap.add_argument("--only", action="append", default=[], help="run only cases whose name contains every one of these")
    ap.add_argument("--skip-htsim", action="store_true", help="rerun fabricsim only (keep htsim's outputs)")
    ap.add_argument("--nice", action="store_true", help="run both simulators under nice -n 19")
    ap.add_argument("--seeds", default="", help="comma-separated seeds: each case once per seed (-seed S added to its line; out/<case>__sS)")
    args = ap.parse_args()
    if not args.htsim and not args.skip_htsim:
        sys.exit("error: --htsim DIR (or HTSIM_DIR): the folder holding htsim_uec and htsim_eqds")
    write_incasts()
    prefix = ["nice", "-n", "19"] if args.nice else []
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()] or [None]
    for base, cmd, matrix in read_cases(Path(args.cases)):
        if not all(o in base for o in args.only):
            continue
        for seed in seeds:
            run_case(args, prefix, base if seed is None else f"{base}__s{seed}", cmd if seed is None else f"{cmd} -seed {seed}", matrix)


def run_case(args, prefix, name, cmd, matrix):
    """One case in both simulators (see the module doc)."""
    if True:
        case = Path(args.out) / name
        case.mkdir(parents=True, exist_ok=True)
        line = f"{cmd} -tm {matrix}"
        (case / "command.txt").write_text(line + "\n")
        argv = shlex.split(line)
        if not args.skip_htsim:
            binary = str(Path(args.htsim) / argv[0])
            rc = timed(prefix + [binary] + argv[1:], case, case / "htsim.log", case / "htsim.time")
            print(f"{name}: htsim exit {rc}", flush=True)
        toml = case / "fabricsim.toml"
        tr = subprocess.run([args.fabricsim, "from-htsim", line, "-o", str(toml)], capture_output=True, text=True)
        if tr.returncode != 0:
            print(f"{name}: from-htsim failed: {tr.stderr.strip()}", flush=True)
            return
        rc = timed(prefix + [args.fabricsim, "run", "--quiet", "--force", str(toml), "--out", str(case / "fabricsim")], case, case / "fabricsim.log", case / "fabricsim.time")
        print(f"{name}: fabricsim exit {rc}", flush=True)


if __name__ == "__main__":
    main()
