#!/usr/bin/env python3
"""Tables of the SeqBalance reproduction from results/<TARGET>.json (written by run.py).

Usage: experiments/seqbalance/report.py [TARGET ...]   (default: every target with results)

Prints markdown: the numbers RESULTS.md quotes. FCT figures count the flows that started in
the stationary window (20-80 % of the arrival period) and finished; a scheme whose runs left
window flows unfinished (DRILL, stopped at 3x the arrival period) is marked with the count.
"""
import json
import os
import statistics as st
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
LOADS = [30, 40, 50, 60, 70, 80]


def load(target):
    path = os.path.join(RESULTS, f"{target}.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return [r for r in json.load(f) if "error" not in r]


def pct(x):
    return f"{100 * (x - 1):+.1f} %"


def t0(rows):
    print("| scheme | 1 KB | 64 KB | 1 MB | 10 MB |\n|---|---|---|---|---|")
    by = defaultdict(dict)
    for r in rows:
        lb, size = r["run"].rsplit("-", 1)
        by[lb][size] = r["slowdown"]["mean"]
    for lb, d in by.items():
        print(f"| {lb} | " + " | ".join(f"{d.get(s, float('nan')):.3f}" for s in ["1KB", "64KB", "1MB", "10MB"]) + " |")
    drops = sum(r["dropped"] for r in rows)
    print(f"\nDrops over all T0 runs: {drops}; sequence NACKs: {sum(r['seq_nacks'] for r in rows)}")


def t1(rows):
    fct = {r["run"]: r["fct_us"]["mean"] for r in rows}
    print("| constants | size | Δ = 2 µs | Δ = 10 µs | Δ = 50 µs | undelayed FCT (µs) |\n|---|---|---|---|---|---|")
    for var in ["plain", "lineage"]:
        for size in ["64KB", "1MB", "10MB"]:
            base = fct.get(f"{var}-{size}-hold0")
            if not base:
                continue
            cells = [f"{fct[f'{var}-{size}-hold{h}'] / base:.2f}×" if f"{var}-{size}-hold{h}" in fct else "–" for h in [2, 10, 50]]
            print(f"| {var} | {size} | " + " | ".join(cells) + f" | {base:.1f} |")


def t2(rows):
    print("| traffic | θ (µs) | flowlets | median (MB) | max (MB) | bytes in flowlets > 10 MB |\n|---|---|---|---|---|---|")
    agg = defaultdict(list)
    for r in rows:
        kind = r["run"].split("-")[0]
        for f in r.get("flowlets", []):
            agg[(kind, f["gap_us"])].append(f)
    for (kind, gap), fs in sorted(agg.items()):
        n = sum(f["flowlets"] for f in fs)
        med = st.mean(f["p50_bytes"] or 0 for f in fs) / 1e6
        mx = max(f["max_bytes"] or 0 for f in fs) / 1e6
        big = st.mean(f["bytes_in_flowlets_above_10mb"] or 0 for f in fs)
        print(f"| {kind} | {gap:g} | {n} | {med:.2f} | {mx:.1f} | {100 * big:.0f} % |")
    print(f"\n({len(rows)} runs, seeds pooled: flowlet counts summed, medians averaged)")


def t3(rows):
    by = defaultdict(dict)
    for r in rows:
        cdf, n, seed = r["run"].split("-")
        by[(cdf, seed)][int(n[1:])] = r
    for cdf in ["alistorage2019", "websearch"]:
        print(f"\n{cdf}, 80 % load: FCT relative to N = 4 (mean over seeds), median uplink imbalance")
        print("| N | avg FCT | p99 FCT | avg slowdown | p99 slowdown | median imbalance |\n|---|---|---|---|---|---|")
        keys = [k for k in by if k[0] == cdf]
        for n in range(1, 7):
            rel = defaultdict(list)
            for k in keys:
                d = by[k]
                if n not in d or 4 not in d:
                    continue
                rel["avg"].append(d[n]["fct_us"]["mean"] / d[4]["fct_us"]["mean"])
                rel["p99"].append(d[n]["fct_us"]["p99"] / d[4]["fct_us"]["p99"])
                rel["sd"].append(d[n]["slowdown"]["mean"] / d[4]["slowdown"]["mean"])
                rel["sd99"].append(d[n]["slowdown"]["p99"] / d[4]["slowdown"]["p99"])
                rel["imb"].append(d[n]["uplink_imbalance"]["imbalance"]["p50"])
            if rel:
                print(f"| {n} | " + " | ".join(f"{st.mean(rel[k]):.3f}" for k in ["avg", "p99", "sd", "sd99"]) + f" | {st.mean(rel['imb']):.3f} |")
        for a, b in [(2, 4), (4, 6)]:
            g = [(by[k][b]["fct_us"]["mean"] / by[k][a]["fct_us"]["mean"], by[k][b]["fct_us"]["p99"] / by[k][a]["fct_us"]["p99"]) for k in keys if a in by[k] and b in by[k]]
            if g:
                print(f"\nN = {a} → {b}: avg FCT {pct(st.mean(x for x, _ in g))}, p99 FCT {pct(st.mean(y for _, y in g))}")


def phases(r, stagger_ms=20, skip_ms=5):
    """Total and per-spine Gb/s on tor0's uplinks in each client phase, leaving out the first
    `skip_ms` of each phase (the new client's ramp-up)."""
    ub = r.get("uplink_bytes") or {}
    out = []
    for k in range(3):
        lo, hi = k * stagger_ms + skip_ms, (k + 1) * stagger_ms
        per = {link: sum(v[lo:hi]) * 8 / ((hi - lo) * 1e-3) / 1e9 for link, v in ub.items()}
        out.append((sum(per.values()), per))
    return out


def testbed(rows, label):
    full = [r for r in rows if r["run"].endswith("end60ms")]
    by = defaultdict(list)
    for r in full:
        by[r["run"].split("-s")[0]].append(r)
    print(f"{label}: total Gb/s on the clients' leaf uplinks per phase (mean [min, max] over seeds)")
    print("| scheme | seeds | 1 client | 2 clients | 3 clients | 3-client per-spine (mean) |\n|---|---|---|---|---|---|")
    totals = {}
    for scheme, rs in by.items():
        ph = [phases(r) for r in rs]
        cells = []
        for k in range(3):
            v = [p[k][0] for p in ph]
            cells.append(f"{st.mean(v):.1f} [{min(v):.1f}, {max(v):.1f}]")
        totals[scheme] = st.mean(p[2][0] for p in ph)
        links = sorted(ph[0][2][1])
        spread = ", ".join(f"{st.mean(p[2][1][link] for p in ph):.1f}" for link in links)
        print(f"| {scheme} | {len(rs)} | " + " | ".join(cells) + f" | {spread} |")
    if "ecmp" in totals and "sb-A" in totals:
        print(f"\nSeqBalance (Mode A) / ECMP, 3-client phase: {totals['sb-A'] / totals['ecmp']:.3f}")
    # Congestion-packet bandwidth per phase from the run prefixes (CP counts at 20, 40, 60 ms).
    cps = defaultdict(dict)
    data = defaultdict(dict)
    for r in rows:
        if r["run"].startswith("sb"):
            head, end = r["run"].rsplit("-end", 1)
            cps[head][int(end[:-2])] = r["congestion_packets"]
            data[head][int(end[:-2])] = r["data_sent"]
    if cps:
        print("\nCongestion packets (64 B) per phase, SeqBalance: bandwidth and share of data bandwidth (mean over seeds)")
        print("| mode | 1 client | 2 clients | 3 clients |\n|---|---|---|---|")
        for mode in ["sb-A", "sb-B"]:
            heads = [h for h in cps if h.startswith(mode) and len(cps[h]) == 3]
            if not heads:
                continue
            cells = []
            for a, b in [(0, 20), (20, 40), (40, 60)]:
                bw = [(cps[h][b] - cps[h].get(a, 0)) * 64 * 8 / 20e-3 for h in heads]
                share = [(cps[h][b] - cps[h].get(a, 0)) * 64 / max(1, (data[h][b] - data[h].get(a, 0)) * 1048) for h in heads]
                cells.append(f"{st.mean(bw) / 1e3:.1f} kb/s ({100 * st.mean(share):.4f} %)")
            print(f"| {mode} | " + " | ".join(cells) + " |")


def fct_table(rows, schemes, label):
    by = defaultdict(dict)
    for r in rows:
        cdf, l, lb, seed = r["run"].split("-")
        by[(cdf, int(l[1:]), seed)][lb] = r
    for cdf in ["alistorage2019", "websearch"]:
        print(f"\n{label}, {cdf}: FCT normalised to ECMP (mean over seeds of the per-seed ratio); seeds per load in ()")
        print("| metric | scheme | " + " | ".join(f"{l} %" for l in LOADS) + " | mean over loads |\n|---|---|" + "---|" * (len(LOADS) + 1))
        for metric, pick in [("avg FCT", lambda r: r["fct_us"]["mean"]), ("p99 FCT", lambda r: r["fct_us"]["p99"]),
                             ("avg slowdown", lambda r: r["slowdown"]["mean"]), ("p99 slowdown", lambda r: r["slowdown"]["p99"])]:
            for lb in schemes[1:]:
                cells, means = [], []
                for l in LOADS:
                    keys = [k for k in by if k[0] == cdf and k[1] == l and lb in by[k] and "ecmp" in by[k]]
                    if not keys:
                        cells.append("–")
                        continue
                    ratios = [pick(by[k][lb]) / pick(by[k]["ecmp"]) for k in keys]
                    unf = sum(by[k][lb]["window"]["flows"] - by[k][lb]["window"]["flows_finished"] for k in keys)
                    m = st.mean(ratios)
                    means.append(m)
                    mark = f" ({len(keys)}{', ' + str(unf) + ' unfinished' if unf else ''})"
                    cells.append(f"{m:.3f}{mark}")
                avg = f"{st.mean(means):.3f} ({pct(st.mean(means))})" if means else "–"
                print(f"| {metric} | {lb} | " + " | ".join(cells) + f" | {avg} |")
        # Absolute ECMP figures, for scale.
        cells = []
        for l in LOADS:
            keys = [k for k in by if k[0] == cdf and k[1] == l and "ecmp" in by[k]]
            cells.append(f"{st.mean(by[k]['ecmp']['fct_us']['mean'] for k in keys):.0f} / {st.mean(by[k]['ecmp']['fct_us']['p99'] for k in keys):.0f}" if keys else "–")
        print(f"| ECMP avg / p99 FCT (µs) | | " + " | ".join(cells) + " | |")
    # T7: uplink imbalance at 80 %.
    print(f"\n{label}: median uplink imbalance ((max − min) / mean per ToR per 100 µs) at 80 % load")
    print("| workload | " + " | ".join(schemes) + " |\n|---|" + "---|" * len(schemes))
    for cdf in ["alistorage2019", "websearch"]:
        cells = []
        for lb in schemes:
            v = [by[k][lb]["uplink_imbalance"]["imbalance"]["p50"] for k in by if k[0] == cdf and k[1] == 80 and lb in by[k] and "uplink_imbalance" in by[k][lb]]
            cells.append(f"{st.mean(v):.3f}" if v else "–")
        print(f"| {cdf} | " + " | ".join(cells) + " |")
    walls = [r["wall_s"] for r in rows if "-l80-" in r["run"] and "-ecmp-" in r["run"]]
    rss = [r["peak_rss_mb"] for r in rows if "-l80-" in r["run"]]
    if walls:
        print(f"\nWall time of the 80 % ECMP runs: {min(walls):.0f}-{max(walls):.0f} s; peak RSS at 80 % over all schemes: up to {max(rss):.0f} MB")
    bad = [r["run"] for r in rows if r["dropped"] or r["pfc_headroom_drops"] or r["invariant_violations"]]
    print(f"Runs with drops, headroom overflows or invariant violations: {bad or 'none'}")


def main():
    targets = sys.argv[1:] or ["T0", "T1", "T2", "T3", "T4", "T5", "T6", "T8"]
    for t in targets:
        rows = load(t)
        if not rows:
            continue
        print(f"\n## {t}\n")
        {
            "T0": t0,
            "T1": t1,
            "T2": t2,
            "T3": t3,
            "T4": lambda r: testbed(r, "T4 symmetric"),
            "T5": lambda r: testbed(r, "T5 asymmetric (80G + 40G + 40G)"),
            "T6": lambda r: fct_table(r, ["ecmp", "seqbalance", "letflow", "conga", "drill"], "T6 2-tier"),
            "T8": lambda r: fct_table(r, ["ecmp", "seqbalance", "letflow"], "T8 3-tier"),
        }[t](rows)


if __name__ == "__main__":
    main()
