#!/usr/bin/env python3
"""Tables and plots of the STrack reproduction runs (results/<TARGET>.json, out/<TARGET>/...).

Usage: experiments/strack/report.py [TARGET ...]

Writes results/<TARGET>.md (a table beside the paper's claim) and results/<TARGET>.png for
every target with results; RESULTS.md quotes these files.
"""
import csv
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
OUT = os.path.join(HERE, "out")
SIZES = ["4KiB", "128KiB", "512KiB", "2MiB", "16MiB", "64MiB", "100MiB"]
SCHEMES = ["strack", "strack_obl", "roce1", "roce4"]

CLAIMS = {
    "RT1": "Fig. 4: at one sender of a 32->1 incast the first ACK is already ECN-marked at the base RTT; the RTT rises noticeably only around 16 us.",
    "RT14": "Ablations of the spec's assumptions (E1 bitmap polarity, ACK coalescing, max_cwnd, oblivious range, RTO, probe range): keep the configuration that best matches R9/R15/R17.",
    "RT2": "Fig. 1-2: RoCEv2 with 4 QPs finishes faster than with 1 QP for every case (ECMP collisions).",
    "RT3": "Fig. 9: STrack up to 6.3x better than RoCEv2 (max FCT); adaptive ahead of oblivious only from 16 MB (33 % at 100 MB); STrack near ideal.",
    "RT4": "Figs 10-11: at 200 G and 800 G STrack beats RoCEv2 from 128 KB up, up to 6x at 64/100 MB.",
    "RT5": "Figs 12-13: 4:1 and 8:1: STrack up to 3x better than RoCEv2 at every size; adaptive ~ oblivious; max FCT ~4x/8x the full-bisection ideal.",
    "RT6": "Figs 14-15: 64/256 uplinks down: spraying up to 6x better than RoCEv2; adaptive up to 60 % better than oblivious (64 down, 100 MB); STrack close to its healthy value.",
    "RT7": "Figs 16-18: 32->1 x 16 MB: STrack drops only in the first RTT, queue settles near 8 us within ~95 us, fair 12.5 Gb/s per flow; RoCEv2 queue up to 37.5 MB, converging after ~7.8 ms with PAUSEs meanwhile, unfair.",
    "RT7ref": "Ours (issue 43): RT7's RoCEv2 at the reference MMU's alpha = 1/8 and the calibrated 1/128, with the DCQCN paper's reaction point and the ns-3 simulators' Mellanox one: which gives Fig. 16's 37.5 MB peak?",
    "RT2f3": "Fig. 3: A2A at parallelism 32, RoCEv2 1 QP, T-MOT: last-hop arrivals above 400 Gb/s from about 2 ms, peak 489.256 Gb/s at 2357 us, sustained about 500 us; last-hop queue delay up to 46 us (2.3 MB).",
    "RT3f8": "Fig. 8 (16 MB permutation): STrack's inter-switch queues exceed 8 us only before about 370 us (while adaptive spraying finds good paths); RoCEv2's reach 250 us until the run ends.",
    "RT8": "Fig. 19: 32->1 incast: STrack ~ RoCEv2 at every size, both near N*S/rate.",
    "RT9": "Fig. 20: 8/32/128->1 x 16 MB: STrack's last-hop queue stabilizes near 8 us; 128->1 slightly above.",
    "RT10": "Figs 21, 25: 64 AllReduce on T-2K: STrack < RoCE-4QP < RoCE-1QP for every algorithm; peak gaps for DBT: 3x vs 1 QP, 27.4 % vs 4 QP; STrack's CCT CDF nearly vertical, RoCE-4QP spread ~27 %.",
    "RT10big": "Ours: RT10's DBT at the spec's assumed 128 MB per rank (RT10 runs 8 MiB): do the ordering and the gaps survive the scale-down?",
    "RT10s": "Sensitivity (ours): RT10 with htsim's DCQCN increase steps (R_AI = line/20, R_HAI = line/10) instead of the DCQCN paper's.",
    "RT6x": "Ours: why STrack loses most of its speed under degraded links (RT6, 1/10 rate, still routed) but not under removed ones; K 32 fabric, 4 ToRs x 1 of 16 uplinks, 16 MiB permutation.",
    "RT3seeds": "Ours: RT3 at 2 MiB (seeds 1-5) and 16 MiB (seeds 1-3): is each ratio more than seed 1's draw of permutation, hashes and spray offsets?",
    "RT3s": "Sensitivity (ours): RT3's RoCEv2 with htsim's DCQCN increase steps (R_AI = line/20, R_HAI = line/10).",
    "RT11": "Figs 22, 26: 64 AlltoAll: STrack up to 79 % better than 1 QP and 19 % better than 4 QP, peak at P = 32; tighter CDF.",
    "RT12b": "Ours: RT10/RT12 with block placement (random blocks of 8 NICs, spec §5.3.4), 1:1 and 4:1: does STrack keep its 1:1 times on 4:1 when ranks share ToRs?",
    "RT12": "Figs 23, 27: AllReduce on 4:1: STrack ~ its full-bisection times; RoCE RING/HD worse; peak gaps DBT 4.86x vs 1 QP, 4.13x vs 4 QP.",
    "RT13": "Figs 24, 28: AlltoAll on 4:1: STrack ~4x its full-bisection time; up to 51.5 % better than 1 QP, 17.8 % than 4 QP, peak at P = 16.",
}


def load(t):
    p = os.path.join(RESULTS, f"{t}.json")
    return json.load(open(p)) if os.path.exists(p) else []


def by_run(rows):
    return {r["run"]: r for r in rows if "error" not in r}


def fmt(x, nd=1):
    return "-" if x is None else f"{x:.{nd}f}"


def sweep_table(t, rows, prefixes):
    """Permutation/incast sweeps: one row per (prefix, size)."""
    d = by_run(rows)
    out = [f"# {t}\n", f"Paper: {CLAIMS[t]}\n", "| case | size | ideal us | STrack max FCT | oblivious | RoCEv2 1QP | RoCE/STrack | obl/STrack | wall s (STrack, RoCE) |", "|---|---|---|---|---|---|---|---|---|"]
    series = {}
    for pre in prefixes:
        for s in SIZES:
            k = f"{pre}{s}-"
            got = {sc: d.get(k + sc) for sc in SCHEMES}
            if not any(got.values()):
                continue
            m = {sc: (g["fct_us"]["max"] if g else None) for sc, g in got.items()}
            ideal = next(g["ideal_us"] for g in got.values() if g)
            ratio = (m["roce1"] / m["strack"]) if m["roce1"] and m["strack"] else None
            obl = (m["strack_obl"] / m["strack"]) if m["strack_obl"] and m["strack"] else None
            walls = ", ".join(fmt(got[sc]["wall_s"], 0) if got[sc] else "-" for sc in ["strack", "roce1"])
            out.append(f"| {pre.rstrip('-') or 'base'} | {s} | {fmt(ideal)} | {fmt(m['strack'])} | {fmt(m['strack_obl'])} | {fmt(m['roce1'])} | {fmt(ratio, 2)} | {fmt(obl, 2)} | {walls} |")
            for sc in ["strack", "strack_obl", "roce1"]:
                if m[sc]:
                    series.setdefault((pre, sc), []).append((s, m[sc] / ideal))
    return out, series


def seed_spread(rows):
    """Min / mean / max over seeds of each size's RoCE/STrack and oblivious/STrack ratios."""
    d = by_run(rows)
    out = ["\n| size | seeds | RoCE/STrack min / mean / max | obl/STrack min / mean / max | STrack / ideal min / max |", "|---|---|---|---|---|"]
    for s in SIZES:
        seeds = sorted({rid.split("-")[0] for rid in d if rid.split("-")[1] == s})
        full = [n for n in seeds if all(f"{n}-{s}-{sc}" in d for sc in ["strack", "strack_obl", "roce1"])]
        if not full:
            continue
        mx = lambda n, sc: d[f"{n}-{s}-{sc}"]["fct_us"]["max"]
        rr = [mx(n, "roce1") / mx(n, "strack") for n in full]
        ob = [mx(n, "strack_obl") / mx(n, "strack") for n in full]
        si = [mx(n, "strack") / d[f"{n}-{s}-strack"]["ideal_us"] for n in full]
        span = lambda v: f"{min(v):.2f} / {sum(v) / len(v):.2f} / {max(v):.2f}"
        out.append(f"| {s} | {len(full)} | {span(rr)} | {span(ob)} | {min(si):.2f} / {max(si):.2f} |")
    return out


def sweep_plot(t, series, plt):
    fig, ax = plt.subplots(figsize=(7, 4))
    for (pre, sc), pts in sorted(series.items()):
        xs = [SIZES.index(s) for s, _ in pts]
        ax.plot(xs, [v for _, v in pts], marker="o", label=f"{pre.rstrip('-') or ''} {sc}".strip())
    ax.set_xticks(range(len(SIZES)), SIZES)
    ax.set_yscale("log")
    ax.set_ylabel("max FCT / ideal")
    ax.set_title(f"{t}: max FCT normalized to the ideal")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, f"{t}.png"), dpi=110)


def read_csv(path):
    return list(csv.DictReader(open(path))) if os.path.exists(path) else []


def incast_dynamics(t, rows, plt, runs):
    """Last-hop queue delay and per-flow throughput of traced incast runs."""
    out = [f"# {t}\n", f"Paper: {CLAIMS[t]}\n",
           "| run | max FCT us | ideal us | peak queue MB | peak queue us | median queue us after 500 us | drops (last at us) | PAUSE frames | per-flow goodput, 100 us bins, 2 ms to 90 % of the run (min/max Gb/s) |",
           "|---|---|---|---|---|---|---|---|---|"]
    d = by_run(rows)
    fig, axes = plt.subplots(len(runs), 2, figsize=(11, 3 * len(runs)), squeeze=False)
    for i, run in enumerate(runs):
        r = d.get(run)
        if not r:
            continue
        base = os.path.join(OUT, t, run)
        q = read_csv(os.path.join(base, "port_trace.csv"))
        ev = read_csv(os.path.join(base, "events.csv"))
        tr = read_csv(os.path.join(base, "trace.csv"))
        times = [float(x["time_us"]) for x in q]
        qus = [int(x["queue_bytes"]) * 8 / 400e3 for x in q]  # bytes -> us at 400 Gb/s
        late = sorted(v for tt, v in zip(times, qus) if tt > 500)
        drops = [float(e["time_us"]) for e in ev if e["event"] == "drop"]
        pauses = [float(e["time_us"]) for e in ev if e["event"] == "pause"]
        # Per-flow goodput in 100 us bins from acked bytes.
        flows = {}
        for x in tr:
            flows.setdefault(x["flow"], []).append((float(x["time_us"]), int(x["acked_bytes"])))
        rates = []
        ax = axes[i][1]
        for f, pts in sorted(flows.items()):
            xs, ys = [], []
            for (t0, b0), (t1, b1) in zip(pts[::10], pts[10::10]):
                xs.append(t1)
                ys.append((b1 - b0) * 8 / ((t1 - t0) * 1e3))
            ax.plot(xs, ys, lw=0.8)
            # Steady state: from 2 ms to 90 % of the run (flows finishing make the last bins noisy).
            rates += [y for x_, y in zip(xs, ys) if 2000 < x_ < 0.9 * r["fct_us"]["max"]]
        ax.set_title(f"{run}: per-flow goodput (Gb/s, 100 us bins)")
        ax.set_xlabel("us")
        ax = axes[i][0]
        ax.plot(times, qus, lw=0.8)
        for x_ in drops[:200]:
            ax.axvline(x_, color="r", lw=0.3)
        for x_ in pauses[:200]:
            ax.axvline(x_, color="g", lw=0.3)
        ax.set_title(f"{run}: last-hop queue delay (us); drops red, PAUSEs green")
        ax.set_xlabel("us")
        peak = max(qus) if qus else 0
        out.append(
            f"| {run} | {fmt(r['fct_us']['max'])} | {fmt(r['ideal_us'])} | {fmt(peak * 400e3 / 8 / 1e6, 1)} | {fmt(peak)} | {fmt(late[len(late) // 2] if late else None)} | "
            f"{len(drops)} ({fmt(max(drops) if drops else None)}) | {(r.get('pfc') or {}).get('pause_frames', '-')} | "
            f"{fmt(min(rates) if rates else None)} / {fmt(max(rates) if rates else None)} |")
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, f"{t}.png"), dpi=100)
    return out


def inter_switch_queues(t, rows, plt):
    """Fig. 8: the deepest traced inter-switch queue over time, and when the last one above
    8 us (the base RTT) was seen."""
    out = [f"# {t}\n", f"Paper: {CLAIMS[t]}\n", "| run | max FCT us | traced ports | deepest queue us | last sample above 8 us, at us | samples above 8 us after 500 us (share of sample times) |", "|---|---|---|---|---|---|"]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    for r in rows:
        deepest, ports = {}, set()
        for x in read_csv(os.path.join(OUT, t, r["run"], "port_trace.csv")):
            tt = float(x["time_us"])
            ports.add(x["link"])
            deepest[tt] = max(deepest.get(tt, 0.0), int(x["queue_bytes"]) * 8 / 400e3)
        times = sorted(deepest)
        above = [tt for tt in times if deepest[tt] > 8]
        late = [tt for tt in times if tt > 500]
        share = sum(deepest[tt] > 8 for tt in late) / len(late) if late else 0.0
        ax.plot(times, [deepest[tt] for tt in times], lw=0.8, label=r["run"])
        out.append(f"| {r['run']} | {fmt(r['fct_us']['max'])} | {len(ports)} | {fmt(max(deepest.values(), default=0))} | {fmt(above[-1] if above else None)} | {share:.2f} |")
    ax.axhline(8, color="k", lw=0.5)
    ax.set_xlabel("us")
    ax.set_ylabel("deepest traced queue, us at 400 Gb/s")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, f"{t}.png"), dpi=100)
    return out


def last_hop_arrivals(t, rows):
    """Fig. 3: the arrival rate into each traced last-hop queue (bytes sent plus queue growth
    over a window) and the deepest queue."""
    out = [f"# {t}\n", f"Paper: {CLAIMS[t]}\n", "| window | peak arrival Gb/s | at us | port | port-time above 400 Gb/s, us |", "|---|---|---|---|---|"]
    for r in rows:
        by = {}
        for x in read_csv(os.path.join(OUT, t, r["run"], "port_trace.csv")):
            by.setdefault(x["link"], []).append((float(x["time_us"]), int(x["queue_bytes"]), int(x["tx_bytes"])))
        deepest = max(((q, tt, link) for link, pts in by.items() for tt, q, _ in pts), default=(0, 0.0, "-"))
        for window_us in (5, 10, 50):
            peak, over = (0.0, 0.0, "-"), 0.0
            for link, pts in by.items():
                pts.sort()
                k = max(1, round(window_us / (pts[1][0] - pts[0][0]))) if len(pts) > 1 else 1
                for (t0, q0, b0), (t1, q1, b1) in zip(pts, pts[k:]):
                    gbps = ((b1 - b0) + (q1 - q0)) * 8 / ((t1 - t0) * 1e3)
                    peak = max(peak, (gbps, t1, link))
                    if gbps > 400:
                        over += (t1 - t0) / k
            out.append(f"| {window_us} us | {peak[0]:.1f} | {peak[1]:.0f} | {peak[2]} | {over:.0f} |")
        out.append(f"\nDeepest last-hop queue: {deepest[0] / 1e6:.3f} MB ({deepest[0] * 8 / 400e3:.1f} us at 400 Gb/s) at {deepest[1]:.0f} us on {deepest[2]}; CCT {r['collectives']['cct_us']['max']:.1f} us.")
    return out


def collective_table(t, rows, cases):
    d = by_run(rows)
    out = [f"# {t}\n", f"Paper: {CLAIMS[t]}\n",
           "| case | STrack max CCT us | RoCE 1QP | RoCE 4QP | 1QP/STrack | 4QP/STrack | spread (max/min) STrack, 1QP, 4QP | wall s |", "|---|---|---|---|---|---|---|---|"]
    for c in cases:
        g = {sc: d.get(f"{c}-{sc}") for sc in ["strack", "roce1", "roce4"]}
        cct = {sc: (x["collectives"]["cct_us"] if x and x.get("collectives") else None) for sc, x in g.items()}
        mx = {sc: (v["max"] if v else None) for sc, v in cct.items()}
        spread = ", ".join(fmt(v["max"] / v["min"], 2) if v and v["min"] else "-" for v in cct.values())
        r1 = mx["roce1"] / mx["strack"] if mx["roce1"] and mx["strack"] else None
        r4 = mx["roce4"] / mx["strack"] if mx["roce4"] and mx["strack"] else None
        wall = ", ".join(fmt(x["wall_s"], 0) if x else "-" for x in g.values())
        out.append(f"| {c} | {fmt(mx['strack'])} | {fmt(mx['roce1'])} | {fmt(mx['roce4'])} | {fmt(r1, 2)} | {fmt(r4, 2)} | {spread} | {wall} |")
    return out


def motivation_table(rows):
    d = by_run(rows)
    out = ["# RT2\n", f"Paper: {CLAIMS['RT2']}\n", "| case | RoCE 1QP CCT us | RoCE 4QP CCT us | 1QP/4QP |", "|---|---|---|---|"]
    for c in ["dbt", "a2a-P8", "a2a-P16", "a2a-P32"]:
        a, b = d.get(f"{c}-roce1"), d.get(f"{c}-roce4")
        ca = a["collectives"]["cct_us"]["max"] if a and a.get("collectives") else None
        cb = b["collectives"]["cct_us"]["max"] if b and b.get("collectives") else None
        out.append(f"| {c} | {fmt(ca)} | {fmt(cb)} | {fmt(ca / cb if ca and cb else None, 2)} |")
    return out


def ecn_vs_rtt(rows, plt):
    out = ["# RT1\n", f"Paper: {CLAIMS['RT1']}\n"]
    acks = read_csv(os.path.join(OUT, "RT1", "strack", "acks.csv"))
    if not acks:
        return out + ["(no acks.csv)"]
    r = by_run(rows).get("strack")
    base = r["base_rtt_us"] if r else 0
    t = [float(a["time_us"]) for a in acks]
    rtt = [float(a["rtt_us"]) for a in acks]
    ecn = [a["ecn"] == "1" for a in acks]
    first_mark = next((i for i, e in enumerate(ecn) if e), None)
    rise = next((i for i, x in enumerate(rtt) if x > base + 2.0), None)
    out.append("| quantity | ours |\n|---|---|")
    out.append(f"| first ACK: time, RTT, ECN | {t[0]:.2f} us, {rtt[0]:.2f} us, {int(ecn[0])} |")
    if first_mark is not None:
        out.append(f"| first ECN-marked ACK: time, RTT | {t[first_mark]:.2f} us, {rtt[first_mark]:.2f} us |")
    if rise is not None:
        out.append(f"| first ACK with RTT > base RTT + 2 us ({base:.2f} + 2): time, RTT | {t[rise]:.2f} us, {rtt[rise]:.2f} us |")
    out.append(f"| marked ACKs in the first 100 us | {sum(1 for x, e in zip(t, ecn) if e and x < 100)} of {sum(1 for x in t if x < 100)} |")
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.scatter([x for x, e in zip(t, ecn) if not e], [y for y, e in zip(rtt, ecn) if not e], s=4, label="unmarked")
    ax.scatter([x for x, e in zip(t, ecn) if e], [y for y, e in zip(rtt, ecn) if e], s=4, color="r", label="ECN-marked")
    ax.set_xlabel("time (us)")
    ax.set_ylabel("RTT (us)")
    ax.set_title("RT1: one sender of a 32->1 incast, per ACK")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, "RT1.png"), dpi=110)
    return out


def ablation_table(rows):
    d = by_run(rows)
    out = ["# RT14\n", f"Paper: {CLAIMS['RT14']}\n",
           "| variant | workload | max FCT us | ideal us | retransmitted | dropped | OOO / probe recoveries | timeouts |", "|---|---|---|---|---|---|---|---|"]
    for rid, r in d.items():
        v, w = rid.rsplit("-", 1)
        p = r["packets"]
        out.append(f"| {v} | {w} | {fmt(r['fct_us']['max'])} | {fmt(r['ideal_us'])} | {p['retransmitted']} | {p['dropped']} | {p['ooo_recoveries']} / {p['probe_recoveries']} | {p['timeouts']} |")
    return out


def degraded_diagnosis(rows, plt):
    """RT6x: FCT by whether a flow's ToRs lost an uplink, the degraded uplink's queue, and the
    window of one affected flow (tor8 -> tor7)."""
    d = by_run(rows)
    out = ["# RT6x\n", f"Paper: {CLAIMS['RT6x']}\n",
           "| run | max FCT us | neither ToR affected: max / p50 | source ToR: max / p50 | destination ToR: max / p50 | dropped | timeouts | mean busy queue tor8-spine14 KB | flow 135 cwnd min / mean KB |",
           "|---|---|---|---|---|---|---|---|---|"]
    for rid, r in d.items():
        g, q, w = r["diagnosis"]["fct_by_group"], r["diagnosis"]["queue"].get("tor8-spine14"), r["diagnosis"]["flow135_cwnd"]
        cell = lambda k: f"{fmt(g[k]['max'])} / {fmt(g[k]['p50'])}" if k in g else "-"
        out.append(f"| {rid} | {fmt(r['fct_us']['max'])} | {cell('neither')} | {cell('src')} | {cell('dst')} | {r['packets']['dropped']} | {r['packets']['timeouts']} | "
                   f"{fmt(q['mean_busy_bytes'] / 1e3, 0) if q else '-'} | {fmt(w['min_bytes'] / 1e3, 0) + ' / ' + fmt(w['mean_bytes'] / 1e3, 0) if w else '-'} |")
    if "tor8-spine14" not in d.get("degraded-strack", {}).get("diagnosis", {}).get("failed_links", []):
        out.append("\n**Warning**: tor8-spine14 is not among the degraded links of this seed; the traced queue is a healthy one.")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for rid in ["degraded-strack", "degraded-strack_obl", "degraded-strack-ack_every_1", "healthy-strack"]:
        base = os.path.join(OUT, "RT6x", rid)
        if not os.path.exists(os.path.join(base, "trace.csv")):
            continue
        q = [p for p in read_csv(os.path.join(base, "port_trace.csv")) if p["link"] == "tor8-spine14"]
        ax1.plot([float(p["time_us"]) for p in q], [int(p["queue_bytes"]) / 1e6 for p in q], label=rid)
        c = read_csv(os.path.join(base, "trace.csv"))
        ax2.plot([float(x["time_us"]) for x in c], [int(x["cwnd_bytes"]) / 1e3 for x in c], label=rid)
    ax1.set_xlabel("time (us)"); ax1.set_ylabel("queue of degraded uplink tor8-spine14 (MB)")
    ax2.set_xlabel("time (us)"); ax2.set_ylabel("cwnd of flow 135, tor8 -> tor7 (KB)")
    ax1.legend(fontsize=7); ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, "RT6x.png"), dpi=110)
    return out


def main():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    chosen = sys.argv[1:] or list(CLAIMS)
    for t in chosen:
        rows = load(t)
        if not rows:
            continue
        if t in ("RT3", "RT4", "RT5", "RT6", "RT8"):
            prefixes = {"RT3": [""], "RT8": [""], "RT4": ["200G-", "800G-"], "RT5": ["4to1-", "8to1-"],
                        "RT6": ["4down-removed-", "4down-degraded-", "16down-removed-", "16down-degraded-"]}[t]
            lines, series = sweep_table(t, rows, prefixes)
            sweep_plot(t, series, plt)
        elif t == "RT7":
            lines = incast_dynamics(t, rows, plt, ["strack", "roce1"])
        elif t == "RT7ref":
            lines = incast_dynamics(t, rows, plt, [f"roce1-alpha{a}-{rp}" for a in [8, 128] for rp in ["paper", "mellanox"]])
        elif t == "RT9":
            lines = incast_dynamics(t, rows, plt, ["8to1", "32to1", "128to1"])
        elif t == "RT3s":
            base = [r for r in load("RT3") if not r["run"].endswith("roce1")]
            lines, series = sweep_table(t, base + rows, [""])
            sweep_plot(t, series, plt)
        elif t == "RT3seeds":
            seed1 = [dict(r, run="seed1-" + r["run"]) for r in load("RT3") if r["run"].split("-")[0] in ("2MiB", "16MiB")]
            lines, _ = sweep_table(t, seed1 + rows, [f"seed{n}-" for n in range(1, 6)])
            lines += seed_spread(seed1 + rows)
        elif t == "RT10s":
            lines = collective_table(t, [r for r in load("RT10") if r["run"].endswith("strack")] + rows, ["dbt", "ring"])
        elif t == "RT12b":
            lines = collective_table(t, rows, [f"{o}-{a}" for o in ["1to1", "4to1"] for a in ["dbt", "ring", "hd"]])
        elif t == "RT10big":
            lines = collective_table(t, rows, ["dbt"])
        elif t in ("RT10", "RT12"):
            lines = collective_table(t, rows, ["dbt", "ring", "hd"])
        elif t in ("RT11", "RT13"):
            lines = collective_table(t, rows, ["P8", "P16", "P32", "P64"])
        elif t == "RT3f8":
            lines = inter_switch_queues(t, rows, plt)
        elif t == "RT2f3":
            lines = last_hop_arrivals(t, rows)
        elif t == "RT2":
            lines = motivation_table(rows)
        elif t == "RT1":
            lines = ecn_vs_rtt(rows, plt)
        elif t == "RT14":
            lines = ablation_table(rows)
        elif t == "RT6x":
            lines = degraded_diagnosis(rows, plt)
        bad = [r["run"] for r in rows if r.get("invariants")]
        lines.append(f"\nRuns: {len(rows)}; invariant violations in: {bad or 'none'}; largest peak RSS {max(r.get('peak_rss_mb', 0) for r in rows):.0f} MB.")
        with open(os.path.join(RESULTS, f"{t}.md"), "w") as f:
            f.write("\n".join(lines) + "\n")
        plt.close("all")
        print(f"{t}: {len(rows)} runs")


if __name__ == "__main__":
    main()
