#!/usr/bin/env python3
"""Compares the outputs run.py left in out/<case>/: htsim's per-flow completion lines
("Flow NAME flowId K ... finished at T", T in µs; FCT = T minus the flow's start in the
matrix) against fabricsim's flows.csv, plus packet counts, wall time, CPU time and peak RSS, and
each row's provenance (fabricsim's commit and a hash of each seed's resolved scenario).

Prints a Markdown table (one row per case) and writes out/results.json. Verdict: p50 and max
FCT both within 10 % of htsim's.

    python3 experiments/htsim-parity/compare.py [--out DIR] [--json FILE]
"""

import argparse
import csv
import hashlib
import json
import re
import shlex
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FINISH = re.compile(r"^Flow (\S+) flowId (\d+) .*?finished at ([0-9.eE+-]+)")
NEW = re.compile(r"^New: (\d+) Rtx: (\d+)")


def percentile(xs, q):
    """Nearest-rank percentile (the same rule for both simulators)."""
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = max(0, min(len(xs) - 1, int(-(-q * len(xs) // 1)) - 1))
    return xs[k]


def matrix_starts(path):
    """flow id -> start (µs) of an htsim matrix."""
    starts = {}
    for line in path.read_text().splitlines():
        w = line.split()
        if "->" in line and "id" in w and "start" in w:
            starts[int(w[w.index("id") + 1])] = float(w[w.index("start") + 1])
    return starts


def time_v(path):
    """(wall s, cpu s, peak RSS MB) from a /usr/bin/time -v report."""
    wall = cpu = rss = float("nan")
    if not path.exists():
        return wall, cpu, rss
    user = sys_ = 0.0
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith("Elapsed (wall clock) time"):
            t = line.rsplit(" ", 1)[1]
            parts = [float(p) for p in t.split(":")]
            wall = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
        elif line.startswith("User time"):
            user = float(line.rsplit(" ", 1)[1])
        elif line.startswith("System time"):
            sys_ = float(line.rsplit(" ", 1)[1])
        elif line.startswith("Maximum resident set size"):
            rss = float(line.rsplit(" ", 1)[1]) / 1024
    return wall, user + sys_, rss


def htsim_side(case, starts):
    fcts, new, rtx = [], None, None
    log = case / "htsim.log"
    if log.exists():
        for line in log.read_text(errors="replace").splitlines():
            m = FINISH.match(line)
            if m:
                fcts.append(float(m.group(3)) - starts.get(int(m.group(2)), 0.0))
            m = NEW.match(line)
            if m:
                new, rtx = int(m.group(1)), int(m.group(2))
    return {"fcts": fcts, "data_sent": (new + rtx) if new is not None else None, "rtx": rtx}


def fabricsim_side(case):
    out = case / "fabricsim"
    fcts, data_sent, rtx, commit, scenario_sha256 = [], None, None, None, None
    if (out / "flows.csv").exists():
        with open(out / "flows.csv") as f:
            for row in csv.DictReader(f):
                if row["fct_us"] not in ("", "nan"):
                    fcts.append(float(row["fct_us"]))
    if (out / "summary.json").exists():
        s = json.loads((out / "summary.json").read_text())
        p = s.get("packets", {})
        data_sent, rtx = p.get("data_sent"), p.get("retransmitted", p.get("retransmits"))
        # Provenance, as the Python sweeps record it: the engine's commit and a hash of the
        # resolved scenario (its JSON with sorted keys).
        commit = (s.get("engine") or {}).get("commit")
        scenario = json.dumps(s.get("scenario"), sort_keys=True, separators=(",", ":"))
        scenario_sha256 = hashlib.sha256(scenario.encode()).hexdigest()
    return {"fcts": fcts, "data_sent": data_sent, "rtx": rtx, "commit": commit, "scenario_sha256": scenario_sha256}


def fmt(v):
    """A packet count (a mean over seeds may have a fraction)."""
    return "-" if v is None else f"{v:.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE / "out"))
    ap.add_argument("--json", default=None)
    ap.add_argument("--pool", action="store_true", help="one row per case over all its seeds (out/<case>__sS): FCTs pooled, packets, times and RSS averaged")
    args = ap.parse_args()
    groups = {}
    for case in sorted(p for p in Path(args.out).iterdir() if (p / "command.txt").exists()):
        key = re.sub(r"__s\d+$", "", case.name) if args.pool else case.name
        groups.setdefault(key, []).append(case)
    rows = []
    for key, cases in groups.items():
        sides, times, flows, line = {"htsim": [], "fabricsim": []}, {"htsim": [], "fabricsim": []}, 0, ""
        for case in cases:
            line = (case / "command.txt").read_text().strip()
            argv = shlex.split(line)
            starts = matrix_starts(Path(argv[argv.index("-tm") + 1]))
            flows += len(starts)
            sides["htsim"].append(htsim_side(case, starts))
            sides["fabricsim"].append(fabricsim_side(case))
            times["htsim"].append(time_v(case / "htsim.time"))
            times["fabricsim"].append(time_v(case / "fabricsim.time"))
        mean = lambda xs: sum(xs) / len(xs) if xs and None not in xs else None
        pooled = lambda ds: {"fcts": [x for d in ds for x in d["fcts"]], "data_sent": mean([d["data_sent"] for d in ds]), "rtx": mean([d["rtx"] for d in ds])}
        h, f = pooled(sides["htsim"]), pooled(sides["fabricsim"])
        hw, hc, hm = (sum(t[i] for t in times["htsim"]) / len(cases) for i in range(3))
        fw, fc, fm = (sum(t[i] for t in times["fabricsim"]) / len(cases) for i in range(3))
        r = {"case": key + (f" ({len(cases)} seeds)" if args.pool and len(cases) > 1 else ""), "flows": flows, "command": line}
        commits = sorted({d["commit"] or "unknown" for d in sides["fabricsim"]})
        r["commit"] = commits[0] if len(commits) == 1 else commits
        # One hash per seed (the scenarios differ in their seed).
        r["scenario_sha256"] = [d["scenario_sha256"] for d in sides["fabricsim"]]
        for side, d in (("htsim", h), ("fabricsim", f)):
            r[side] = {
                "finished": len(d["fcts"]),
                "p50": percentile(d["fcts"], 0.5),
                "p99": percentile(d["fcts"], 0.99),
                "max": max(d["fcts"]) if d["fcts"] else float("nan"),
                "data_sent": d["data_sent"],
                "rtx": d["rtx"],
            }
        r["htsim"].update(wall_s=hw, cpu_s=hc, rss_mb=hm)
        r["fabricsim"].update(wall_s=fw, cpu_s=fc, rss_mb=fm)
        hp, fp = r["htsim"], r["fabricsim"]
        r["ratio_p50"] = fp["p50"] / hp["p50"] if hp["p50"] else float("nan")
        r["ratio_max"] = fp["max"] / hp["max"] if hp["max"] else float("nan")
        both = hp["finished"] == fp["finished"] == r["flows"]
        r["within_10pct"] = both and abs(r["ratio_p50"] - 1) <= 0.10 and abs(r["ratio_max"] - 1) <= 0.10
        rows.append(r)
    print("| case | flows done h/f | p50 µs htsim / fabricsim (ratio) | p99 µs h / f | max µs htsim / fabricsim (ratio) | data pkts h / f (rtx) | verdict | wall s h / f | CPU s h / f | RSS MB h / f |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        h, f = r["htsim"], r["fabricsim"]
        print(
            f"| {r['case']} | {h['finished']}/{f['finished']} of {r['flows']} | {h['p50']:.1f} / {f['p50']:.1f} ({r['ratio_p50']:.3f}) | {h['p99']:.1f} / {f['p99']:.1f} "
            f"| {h['max']:.1f} / {f['max']:.1f} ({r['ratio_max']:.3f}) | {fmt(h['data_sent'])} ({fmt(h['rtx'])}) / {fmt(f['data_sent'])} ({fmt(f['rtx'])}) "
            f"| {'within 10 %' if r['within_10pct'] else 'MISS'} | {h['wall_s']:.2f} / {f['wall_s']:.2f} | {h['cpu_s']:.2f} / {f['cpu_s']:.2f} | {h['rss_mb']:.0f} / {f['rss_mb']:.0f} |"
        )
    path = Path(args.json) if args.json else Path(args.out) / "results.json"
    path.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
