#!/usr/bin/env python3
"""Runs the benchmark matrices and prints (optionally records) the figures; `scripts/bench.sh`
builds the binaries and calls this.

Sides, run interleaved (round 1: every side, round 2: every side, ...) so that a machine's drift
and neighbours hit every side alike; figures are medians over the rounds:
  new        this tree's fabricsim on bench/perm_N.toml (fixed 1-BDP window + oblivious spraying)
  base       fabricsim built from an earlier commit (`--ab REV`), same scenario files
  htsim      an htsim_uec binary (`--htsim BIN`) on the same matrix: NSCC + REPS, trimming, 400 G
  new-nscc   (with --htsim) this tree's fabricsim on the scenario `fabricsim from-htsim`
             translates that same htsim command line into: the same scheme on both sides
  SIDE-Nt    (with --threads N[,M...]) each fabricsim side again with --threads N (and M...),
             the base's too: the speed-up over the same side's serial run, new-Nt against
             base-Nt (an A/B of the partitioned engine), and the run's critical path
             (summary.json `critical_path_seconds`) plus the process's time outside the
             simulation (parsing, setup, writing results; wall minus `wall_seconds`): serial
             wall over that sum is what N free cores could reach at best (the replicas' build
             and merge not counted), so a 2-core machine tells how 16 partitions would scale
Each run is timed by /usr/bin/time (wall, peak RSS of the process); fabricsim's events/s and
packet-hops/s come from its summary.json. A ratio is only printed between sides measured here.

`--record` appends one row per fabricsim side and matrix to bench/HISTORY.md.
"""
import argparse
import datetime
import csv
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HISTORY = REPO / "bench" / "HISTORY.md"
HTSIM_ARGS = ["-linkspeed", "400000", "-load_balancing_algo", "reps", "-end", "20000"]


def timed(cmd, cwd):
    """Runs cmd; returns (wall seconds, peak RSS in MB, CPU seconds: user + system) as
    /usr/bin/time measured them. CPU time is the fairer figure on a shared machine: a
    neighbour's load stretches the wall of both sides, not their CPU time."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        full = ["/usr/bin/time", "-f", "%e %M %U %S", "-o", tf.name] + cmd
        r = subprocess.run(full, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit(f"bench: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
        wall, rss_kb, user, system = tf.read().split()[-4:]
    return float(wall), float(rss_kb) / 1024, float(user) + float(system)


def same_flows(a, b):
    """Whether two flows.csv files agree on every column both have (a newer build may add
    columns, e.g. the fair-share ideal; the rows of the columns they share must be equal)."""
    with open(a, newline="") as fa, open(b, newline="") as fb:
        ra, rb = list(csv.reader(fa)), list(csv.reader(fb))
    if len(ra) != len(rb) or not ra:
        return False
    common = [c for c in ra[0] if c in rb[0]]
    ia, ib = [ra[0].index(c) for c in common], [rb[0].index(c) for c in common]
    return all([x[i] for i in ia] == [y[j] for j in ib] for x, y in zip(ra, rb))


def machine():
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores ({platform.node()})"


def commit_label():
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    return rev + ("+dirty" if dirty else "")


def thread_counts(text):
    """`--threads`: one count or several, comma-separated, each at least 2."""
    try:
        counts = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give thread counts as N or N,M,... (integers)")
    if not counts or any(c < 2 for c in counts):
        raise argparse.ArgumentTypeError(f"{text!r}: each thread count must be at least 2 (1 is the serial side every run has)")
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sizes", nargs="*", type=int, default=[1024, 8192])
    ap.add_argument("--new", required=True, help="this tree's fabricsim binary")
    ap.add_argument("--base", help="an earlier fabricsim binary (A/B)")
    ap.add_argument("--base-label", default="base")
    ap.add_argument("--htsim", help="an htsim_uec binary, run side by side")
    ap.add_argument("--htsim-label", default="htsim_uec")
    ap.add_argument("--htsim-args", default=" ".join(HTSIM_ARGS),
                    help="htsim_uec's arguments after `-tm MATRIX`, given to htsim and to `fabricsim from-htsim` alike "
                         f"(default: {' '.join(HTSIM_ARGS)})")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=thread_counts, default=[], help="also run the fabricsim sides with --threads N (partitioned engine); several as N,M,...")
    ap.add_argument("--record", action="store_true", help="append the figures to bench/HISTORY.md")
    ap.add_argument("--note", default="", help="what changed (the HISTORY row's note)")
    a = ap.parse_args()
    for n in a.sizes:
        if not (REPO / "bench" / f"perm_{n}.toml").exists() and n != 128:
            sys.exit(f"bench: no matrix for {n} hosts (sizes: 128, 1024, 8192)")
    work = Path(tempfile.mkdtemp(prefix="fabricsim-bench-"))
    rows = []
    try:
        for n in a.sizes:
            matrix = REPO / "bench" / "matrices" / f"perm_{n}n_2MiB.cm"
            scenario = REPO / "bench" / f"perm_{n}.toml"
            if not scenario.exists():  # 128 hosts: the matrix itself, on the same fabric
                scenario = matrix
            sides = {"new": [a.new, "run", str(scenario), "--quiet"]}
            if a.base:
                sides["base"] = [a.base, "run", str(scenario), "--quiet"]
            if a.htsim:
                htsim_args = a.htsim_args.split()
                htsim = [str(Path(a.htsim).resolve()), "-tm", str(matrix)] + htsim_args
                sides["htsim"] = htsim
                translated = work / f"nscc_{n}.toml"
                line = " ".join(["htsim_uec", "-tm", str(matrix)] + htsim_args)
                print(f"htsim side: {line}")
                subprocess.run([a.new, "from-htsim", line, "-o", str(translated)], check=True, stdout=subprocess.DEVNULL)
                sides["new-nscc"] = [a.new, "run", str(translated), "--quiet"]
            # The base too, so that a change to the partitioned engine gets its own A/B.
            serial_sides = [s for s in sides if s.startswith("new") or s == "base"]
            for t in a.threads:
                for side in serial_sides:
                    sides[f"{side}-{t}t"] = sides[side] + ["--threads", str(t)]
            figures = {s: {"wall": [], "cpu": [], "rss": [], "events": [], "hops": [], "critical": []} for s in sides}
            for i in range(1, a.runs + 1):
                for side, cmd in sides.items():
                    out = work / f"{side}-{n}-{i}"
                    f = figures[side]
                    if side == "htsim":
                        # htsim writes its outputs into its working folder: a fresh one per run.
                        cwd = work / f"htsim-{n}-{i}"
                        cwd.mkdir()
                        wall, rss, cpu = timed(cmd, cwd)
                        shutil.rmtree(cwd, ignore_errors=True)
                    else:
                        wall, rss, cpu = timed(cmd + ["--out", str(out)], REPO)
                        p = json.load(open(out / "summary.json"))["performance"]
                        f["events"].append(p["events_per_second"])
                        f["hops"].append(p["packet_hops_per_second"])
                        if p.get("critical_path_seconds") is not None:
                            f["critical"].append(p["critical_path_seconds"] + max(0.0, wall - p["wall_seconds"]))
                    f["wall"].append(wall)
                    f["cpu"].append(cpu)
                    f["rss"].append(rss)
            med = {s: {k: (statistics.median(v) if v else None) for k, v in f.items()} for s, f in figures.items()}
            print(f"perm_{n}n_2MiB, {a.runs} interleaved rounds (medians; wall, CPU time and peak RSS by /usr/bin/time):")
            for side, m in med.items():
                extra = f", {m['events']/1e6:.2f} M events/s, {m['hops']/1e6:.2f} M packet-hops/s" if m["events"] else ""
                walls = [round(x, 2) for x in figures[side]["wall"]]
                print(f"  {side:9s} wall {m['wall']:8.2f} s {walls}  CPU {m['cpu']:8.2f} s  peak RSS {m['rss']:7.0f} MB{extra}")
            if a.base:
                same = all(same_flows(work / f"base-{n}-{i}" / "flows.csv", work / f"new-{n}-{i}" / "flows.csv") for i in range(1, a.runs + 1))
                print(f"  new vs {a.base_label}: wall ratio {med['new']['wall'] / med['base']['wall']:.3f}, "
                      f"peak RSS {med['base']['rss']:.0f} -> {med['new']['rss']:.0f} MB; flows.csv {'identical' if same else 'DIFFERS'}")
            def identical(x, y):
                return all(same_flows(work / f"{x}-{n}-{i}" / "flows.csv", work / f"{y}-{n}-{i}" / "flows.csv") for i in range(1, a.runs + 1))

            for t in a.threads:
                threaded = f"-{t}t"
                if a.base:
                    b, m = med[f"base{threaded}"], med[f"new{threaded}"]
                    print(f"  new{threaded} vs {a.base_label}{threaded}: wall ratio {m['wall'] / b['wall']:.3f}, "
                          f"peak RSS {b['rss']:.0f} -> {m['rss']:.0f} MB; flows.csv {'identical' if identical(f'base{threaded}', f'new{threaded}') else 'DIFFERS'}")
                for side in [s for s in sides if s.endswith(threaded)]:
                    serial = side[: -len(threaded)]
                    m = med[side]
                    bound = f"; critical path with the serial setup {m['critical']:.2f} s: at most {med[serial]['wall'] / m['critical']:.1f}x on {t} free cores" if m["critical"] else ""
                    print(f"  {side} vs {serial}: {med[serial]['wall'] / m['wall']:.2f}x faster ({med[serial]['wall'] / m['wall'] / t:.2f} of linear), "
                          f"peak RSS {med[serial]['rss']:.0f} -> {m['rss']:.0f} MB; flows.csv {'identical' if identical(serial, side) else 'DIFFERS'}{bound}")
            if a.htsim:
                h = med["htsim"]
                for side in [s for s in sides if s.startswith("new")]:
                    m = med[side]
                    print(f"  {side} vs {a.htsim_label}: {h['wall'] / m['wall']:.1f}x faster by wall, {h['cpu'] / m['cpu']:.1f}x by CPU time, {m['rss'] / h['rss']:.2f}x the memory")
            for side in [s for s in sides if s.startswith("new")]:
                m = med[side]
                h = med.get("htsim")
                scheme = "fixed + spray"
                if side.startswith("new-nscc"):
                    scheme = "NSCC + REPS (from-htsim)" if a.htsim_args == " ".join(HTSIM_ARGS) else f"NSCC + REPS (from-htsim: {a.htsim_args})"
                threads = next((t for t in a.threads if side.endswith(f"-{t}t")), None)
                if threads:
                    scheme += f", --threads {threads}"
                base_side = "base" + side[len("new"):].replace("-nscc", "")
                rows.append([
                    datetime.date.today().isoformat(), commit_label(), f"perm_{n}n_2MiB",
                    scheme,
                    f"{m['wall']:.2f}", f"{m['rss']:.0f}", f"{m['events'] / 1e6:.2f}", f"{m['hops'] / 1e6:.2f}",
                    f"{h['wall'] / m['wall']:.1f}x (CPU {h['cpu'] / m['cpu']:.1f}x), {m['rss'] / h['rss']:.2f}x mem" if h else "",
                    f"{m['wall'] / med[base_side]['wall']:.3f} vs {a.base_label}" if a.base and base_side in med and "nscc" not in side else "",
                    str(a.runs), machine(), a.note,
                ])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if a.record:
        with open(HISTORY, "a") as f:
            for r in rows:
                f.write("| " + " | ".join(c.replace("|", "/") for c in r) + " |\n")
        print(f"recorded {len(rows)} rows in {HISTORY.relative_to(REPO)}")


if __name__ == "__main__":
    main()
