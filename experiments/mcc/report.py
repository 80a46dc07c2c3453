#!/usr/bin/env python3
"""Tables and plots of the MCC reproduction from results/<T>.json (see run.py).

Usage: experiments/mcc/report.py [--plots]   (plots need matplotlib; they go to results/*.png)

Every figure is over seeds: mean, with min and max in brackets. CCT is the slowest group's
completion (spec A-34), in ms. The ideal is the wire time of the cross-leaf bytes through
tor0's available uplink capacity (150 G asymmetric, 200 G symmetric) with 1048 B packets per
1000 B of payload (a lower bound: no queueing, no propagation); "norm. thr." is goodput over
that capacity (A-35; at most 0.954 because of headers).
"""
import json
import os
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
WIRE = 1048 / 1000


def load(t):
    path = os.path.join(RESULTS, f"{t}.json")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [r for r in json.load(f) if "error" not in r]


def group(rows):
    """{run id without the seed: [rows]}"""
    g = defaultdict(list)
    for r in rows:
        g[r["run"].rsplit("-s", 1)[0]].append(r)
    return g


def agg(vals, fmt="{:.2f}"):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "–"
    m = sum(vals) / len(vals)
    if len(vals) == 1:
        return fmt.format(m)
    return f"{fmt.format(m)} [{fmt.format(min(vals))}–{fmt.format(max(vals))}]"


def mean(vals):
    vals = [v for v in vals if v is not None]
    return sum(vals) / len(vals) if vals else None


def uplink_gbps(r):
    return 100.0 + r["l2_gbps"] if r["host_gbps"] * 4 > 100.0 + r["l2_gbps"] else r["host_gbps"] * 4


def ideal_ms(r, mode="F"):
    """Lower bound of the CCT: cross-leaf wire bytes over tor0's uplinks. Mode F: one way, 1048 B
    per 1000 B of payload. Mode C: each rank sends S, so each direction carries as much as Mode
    F, and the 60 B ACKs of the other direction's packets share the same links (1108 B)."""
    per_kb = WIRE if mode == "F" else (1048 + 60) / 1000
    return r["payload_bytes_total"] * per_kb * 8 / (uplink_gbps(r) * 1e9) * 1e3


def norm_thr(r):
    return r["payload_bytes_total"] * 8 / (r["cct_us"] * 1e3) / uplink_gbps(r)


def link(r, l, k):
    return r.get("links", {}).get(l, {}).get(k)


def table(rows, schemes, title, mode="F"):
    g = group(rows)
    print(f"\n### {title}\n")
    print("| scheme | CCT ms | ideal ms | CCT / ideal | mean group CCT ms | norm. thr. | l1 util | l2 util | l1 100-µs min | l1 < 70 % of time | l2 marking | PFC pauses | drops / retx / NACKs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for x in schemes:
        rs = g.get(x, [])
        if not rs:
            continue
        print(
            f"| {x} | {agg([r['cct_us'] / 1e3 for r in rs])} | {ideal_ms(rs[0], mode):.2f} | {agg([r['cct_us'] / 1e3 / ideal_ms(r, mode) for r in rs], '{:.3f}')} "
            f"| {agg([r['group_cct_mean_us'] / 1e3 for r in rs])} | {agg([norm_thr(r) for r in rs], '{:.3f}')} "
            f"| {agg([link(r, 'l1', 'util_mean') for r in rs], '{:.3f}')} | {agg([link(r, 'l2', 'util_mean') for r in rs], '{:.3f}')} "
            f"| {agg([link(r, 'l1', 'util100_min') for r in rs], '{:.2f}')} | {agg([link(r, 'l1', 'frac_below_70') for r in rs], '{:.3f}')} "
            f"| {agg([link(r, 'l2', 'mark_rate_mean') for r in rs], '{:.4f}')} | {agg([r['pfc_pause_frames'] for r in rs], '{:.0f}')} "
            f"| {sum(r['dropped'] for r in rs)} / {sum(r['retransmitted'] for r in rs)} / {sum(r['nacks'] for r in rs)} |"
        )
    return g


def gains(g, base, others):
    """CCT reduction of `base` against each of `others` (per seed, then averaged)."""
    out = {}
    for o in others:
        pairs = [(a, b) for a in g.get(base, []) for b in g.get(o, []) if a["run"].rsplit("-s", 1)[1] == b["run"].rsplit("-s", 1)[1]]
        if pairs:
            out[o] = (
                mean([1 - a["cct_us"] / b["cct_us"] for a, b in pairs]),
                mean([b["cct_us"] / a["cct_us"] - 1 for a, b in pairs]),
                mean([(link(a, "l1", "util_mean") + link(a, "l2", "util_mean") * a["l2_gbps"] / 100) / (link(b, "l1", "util_mean") + link(b, "l2", "util_mean") * b["l2_gbps"] / 100) - 1 for a, b in pairs]),
            )
    return out


def print_gains(g, base, others):
    for o, (red, thr, link_thr) in gains(g, base, others).items():
        print(f"- {base} against {o}: CCT reduction {100 * red:+.1f} % (goodput gain {100 * thr:+.1f} %; l1 + l2 bytes per second in the steady interval {100 * link_thr:+.1f} %)")


def mcc_states(rs):
    c = defaultdict(int)
    for r in rs:
        for k in ("grow", "hold", "shrink"):
            c[k] += r["mcc"].get(k, 0)
    n = sum(c.values())
    return f"grow {c['grow']}, hold {c['hold']}, shrink {c['shrink']} ({100 * c['hold'] / n:.0f} % hold)" if n else "–"


def main():
    plots = "--plots" in sys.argv
    t1 = load("T1")
    if t1:
        print("\n## T1 (Fig. 2): DCQCN+AR vs PFC+AR, Mode F, asymmetric")
        g = group(t1)
        sizes = sorted({k.split("-")[0] for k in g}, key=lambda s: float(s[:-2]) * (1e3 if s.endswith("GB") else 1))
        print("\n| size per group | DCQCN CCT ms | PFC CCT ms | DCQCN / PFC | DCQCN norm. thr. | PFC norm. thr. | DCQCN pauses | PFC pauses | DCQCN l1 util | PFC l1 util |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for s in sizes:
            d, p = g.get(f"{s}-dcqcn", []), g.get(f"{s}-pfc", [])
            ratio = [a["cct_us"] / b["cct_us"] for a in d for b in p if a["run"].rsplit("-s", 1)[1] == b["run"].rsplit("-s", 1)[1]]
            print(
                f"| {s} | {agg([r['cct_us'] / 1e3 for r in d])} | {agg([r['cct_us'] / 1e3 for r in p])} | {agg(ratio, '{:.3f}')} "
                f"| {agg([norm_thr(r) for r in d], '{:.3f}')} | {agg([norm_thr(r) for r in p], '{:.3f}')} "
                f"| {agg([r['pfc_pause_frames'] for r in d], '{:.0f}')} | {agg([r['pfc_pause_frames'] for r in p], '{:.0f}')} "
                f"| {agg([link(r, 'l1', 'util_mean') for r in d], '{:.3f}')} | {agg([link(r, 'l1', 'util_mean') for r in p], '{:.3f}')} |"
            )
        d1 = g.get("1GB-dcqcn", [])
        if d1:
            print("\n## T2 (Fig. 3): DCQCN+AR 1 GB, the overreaction mechanism")
            print(f"\n- l1 utilisation {agg([link(r, 'l1', 'util_mean') for r in d1], '{:.3f}')}, 100-µs minimum {agg([link(r, 'l1', 'util100_min') for r in d1])}, share of 100-µs bins below 70 % {agg([link(r, 'l1', 'frac_below_70') for r in d1], '{:.3f}')}")
            print(f"- marking rate: l2 {agg([link(r, 'l2', 'mark_rate_mean') for r in d1], '{:.4f}')}, l1 {agg([link(r, 'l1', 'mark_rate_mean') for r in d1], '{:.4f}')}; mean queue l2 {agg([link(r, 'l2', 'queue_mean_kb') for r in d1], '{:.0f}')} KB, l1 {agg([link(r, 'l1', 'queue_mean_kb') for r in d1], '{:.0f}')} KB")
            print(f"- most negative correlation of l1 utilisation with l2's marking rate: {agg([r['overreaction']['vs_l2_marks']['r'] for r in d1 if r['overreaction']['vs_l2_marks']])} (lags {[r['overreaction']['vs_l2_marks']['lag_us'] for r in d1 if r['overreaction']['vs_l2_marks']]} µs); with its own: {agg([r['overreaction']['vs_l1_marks']['r'] for r in d1 if r['overreaction']['vs_l1_marks']])}")
    schemes = ["mcc", "dcqcn", "timely", "pfc"]
    for t, title, mode in [("T3", "T3 / T4 / T8 (Fig. 6): 4 × 250 MB, Mode F, asymmetric", "F"), ("T5", "T5: 4 × 250 MB, Mode C (ring AllReduce), asymmetric", "C"), ("T6", "T6: 4 × 250 MB, Mode F, symmetric (l2 at 100 G)", "F")]:
        rows = load(t)
        if not rows:
            continue
        g = table(rows, schemes, title, mode)
        print()
        print_gains(g, "mcc", ["dcqcn", "timely", "pfc"])
        print(f"- MCC decisions: {mcc_states(g.get('mcc', []))}")
    t7 = load("T7")
    if t7:
        g = group(t7)
        base = group(load("T3"))
        print("\n## T7: sensitivity (4 × 250 MB, Mode F, asymmetric unless the host rate says otherwise)\n")
        print("| variant | CCT ms | CCT / ideal | l1 util | l2 util | PFC pauses | MCC decisions |")
        print("|---|---|---|---|---|---|---|")
        for k, rs in list(base.items()) + list(g.items()):
            if k not in g and k not in ("mcc", "dcqcn", "timely", "pfc"):
                continue
            print(f"| {k} | {agg([r['cct_us'] / 1e3 for r in rs])} | {agg([r['cct_us'] / 1e3 / ideal_ms(r) for r in rs], '{:.3f}')} | {agg([link(r, 'l1', 'util_mean') for r in rs], '{:.3f}')} | {agg([link(r, 'l2', 'util_mean') for r in rs], '{:.3f}')} | {agg([r['pfc_pause_frames'] for r in rs], '{:.0f}')} | {mcc_states(rs) if k.startswith('mcc') else '–'} |")
        print("\n(rows without a suffix are T3's runs, for reference)")
    if plots:
        plot()


def plot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def series(t, rid):
        for r in load(t):
            if r["run"] == rid and "links" in r:
                return r
        return None

    # Fig. 3: DCQCN+AR, 1 GB: l1 / l2 utilisation and marking rate.
    r = series("T1", "1GB-dcqcn-s1")
    if r:
        fig, ax = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
        for l, c in [("l1", "C0"), ("l2", "C1")]:
            s = r["links"][l]["series"]
            ax[0].plot(s["t_ms"], s["util"], c, lw=0.6, label=f"{l} utilisation")
            ax[1].plot(s["t_ms"], s["mark"], c, lw=0.6, label=f"{l} ECN marking rate")
        ax[0].set_ylabel("utilisation (100 µs)")
        ax[1].set_ylabel("CE-marked / sent")
        ax[1].set_xlabel("time (ms)")
        for a in ax:
            a.legend(loc="upper right")
        ax[0].set_title("DCQCN + AR, 4 × 1 GB, l2 at 50 G (cf. MCC paper Fig. 3)")
        fig.tight_layout()
        fig.savefig(os.path.join(RESULTS, "fig3_dcqcn_l1_l2.png"), dpi=110)
        plt.close(fig)
    # Fig. 6a: l1 / l2 utilisation per scheme.
    for t, name in [("T3", "fig6a_mode_f"), ("T5", "t5_mode_c")]:
        rs = [(x, series(t, f"{x}-s1")) for x in ["mcc", "dcqcn", "timely", "pfc"]]
        rs = [(x, r) for x, r in rs if r]
        if not rs:
            continue
        fig, ax = plt.subplots(len(rs), 1, figsize=(9, 1.9 * len(rs)), sharex=True)
        for a, (x, r) in zip(ax, rs):
            for l, c in [("l1", "C0"), ("l2", "C1")]:
                s = r["links"][l]["series"]
                a.plot(s["t_ms"], s["util"], c, lw=0.6, label=f"{l} ({100 if l == 'l1' else r['l2_gbps']:.0f} G)")
            a.set_ylim(0, 1.05)
            a.set_ylabel(f"{x}\nutilisation")
            a.legend(loc="lower right", fontsize=7)
        ax[-1].set_xlabel("time (ms)")
        ax[0].set_title(f"4 × 250 MB, l2 at 50 G, 100 µs bins (cf. MCC paper Fig. 6a) — {t}")
        fig.tight_layout()
        fig.savefig(os.path.join(RESULTS, f"{name}.png"), dpi=110)
        plt.close(fig)


if __name__ == "__main__":
    main()
