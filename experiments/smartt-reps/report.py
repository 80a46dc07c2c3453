#!/usr/bin/env python3
"""Tables and plots from results/*.json (written by run.py): results/<T>.md and results/<T>.png.

Usage: experiments/smartt-reps/report.py [TARGET ...]

Columns: completion (latest FCT), spec ideal (the paper's normaliser, spec §5.4: base RTT plus the
bottleneck's bytes at its rate), ratio = completion / spec ideal, spread = (slowest − fastest FCT) /
fastest, trims, retransmissions, duplicate deliveries (spurious retransmissions), simulator wall
time. fabricsim's own `ideal_completion_time_us` (kept as `ideal_us` in the JSON) is a tighter
lower bound (the busiest bottleneck at full rate plus the shortest one-way propagation), so a run
may finish below the spec ideal but never below fabricsim's.
"""
import csv
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
OUT = os.path.join(HERE, "out")


def load(t):
    p = os.path.join(RESULTS, f"{t}.json")
    return json.load(open(p)) if os.path.exists(p) else []


def spec_ideals(t):
    import importlib.util

    spec = importlib.util.spec_from_file_location("run", os.path.join(HERE, "run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.ideals(t)


def row_figures(r, ideal_fn=None):
    f = r["fct_us"]
    spec_ideal = ideal_fn(r["base_rtt_us"]) if ideal_fn else None
    return {
        "spec_ideal_us": spec_ideal,
        "spec_ratio": r["completion_us"] / spec_ideal if spec_ideal else float("nan"),
        "completion_us": r["completion_us"],
        "ideal_us": r["ideal_us"],
        "ratio": r["completion_us"] / r["ideal_us"] if r["ideal_us"] else float("nan"),
        "spread": (f["max"] - f["min"]) / f["min"] if f["min"] else float("nan"),
        "trims": r["packets"]["trimmed"],
        "retx": r["packets"]["retransmitted"],
        "dups": r["duplicates"],
        "sent": r["packets"]["data_sent"],
        "rtt_p50": r["ack_rtt_us"]["p50"],
        "rtt_p99": r["ack_rtt_us"]["p99"],
        "wall_s": r["wall_s"],
        "ok": not r["invariants"] and r["flows_finished"] == r["flows"],
    }


def table(t, rows):
    ideals = spec_ideals(t)
    lines = [f"### {t}", "", "| run | completion µs | spec ideal µs | / ideal | spread | trims | retx | dup | ACK RTT p50/p99 µs | wall s | sound |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['run']} | error: {r['error'][:80]} |||||||||")
            continue
        x = row_figures(r, ideals.get(r["run"]))
        lines.append(
            f"| {r['run']} | {x['completion_us']:.1f} | {x['spec_ideal_us'] or float('nan'):.1f} | {x['spec_ratio']:.3f} | {x['spread']:.3f} | {x['trims']} | "
            f"{x['retx']} | {x['dups']} | {x['rtt_p50']:.1f}/{x['rtt_p99']:.1f} | {x['wall_s']:.1f} | {'yes' if x['ok'] else 'NO'} |"
        )
    return "\n".join(lines) + "\n"


def bar_plot(t, rows, plt):
    rows = [r for r in rows if "error" not in r]
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(max(5, 0.55 * len(rows)), 3.2))
    names = [r["run"] for r in rows]
    ax.bar(names, [r["completion_us"] for r in rows], color="#4878a8", label="completion")
    ax.scatter(names, [r["ideal_us"] for r in rows], color="k", marker="_", s=300, label="ideal", zorder=3)
    ax.set_ylabel("µs")
    ax.set_title(f"{t}: completion time")
    ax.tick_params(axis="x", rotation=60, labelsize=7)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, f"{t}.png"), dpi=110)
    plt.close(fig)


def cwnd_plot(plt):
    """T1: congestion windows of the 8 incast senders (paper Fig. 2)."""
    runs = sorted(glob.glob(os.path.join(OUT, "T1", "*", "trace.csv")))
    if not runs:
        return
    fig, axes = plt.subplots(1, len(runs), figsize=(4 * len(runs), 3), sharey=True)
    for ax, path in zip(axes, runs):
        series = {}
        for row in csv.DictReader(open(path)):
            if row["cwnd_bytes"]:
                series.setdefault(row["flow"], ([], []))
                series[row["flow"]][0].append(float(row["time_us"]))
                series[row["flow"]][1].append(int(row["cwnd_bytes"]) / 1024)
        for flow, (x, y) in sorted(series.items()):
            ax.plot(x, y, lw=0.8)
        ax.set_title(os.path.basename(os.path.dirname(path)), fontsize=9)
        ax.set_xlabel("time µs")
    axes[0].set_ylabel("cwnd KiB")
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, "T1-cwnd.png"), dpi=110)
    plt.close(fig)


def incast_plot(t, rows, plt):
    """T11 / T11w: completion / the spec's ideal (§5.4) against size, per scheme and incast degree
    (paper Fig. 14). fabricsim's own `ideal_us` is a tighter lower bound (see the module doc), so it
    is not the paper's normaliser."""
    ideals = spec_ideals(t)
    data = {}
    for r in rows:
        if "error" in r:
            continue
        scheme, n, size = r["run"].split("-")
        ideal = ideals[r["run"]](r["base_rtt_us"]) if ideals.get(r["run"]) else r["ideal_us"]
        data.setdefault(n, {}).setdefault(scheme, []).append((size, r["completion_us"] / ideal))
    if not data:
        return
    fig, axes = plt.subplots(1, len(data), figsize=(4.5 * len(data), 3.2), sharey=True)
    axes = axes if len(data) > 1 else [axes]
    for ax, (n, schemes) in zip(axes, sorted(data.items(), key=lambda kv: int(kv[0][1:]))):
        for scheme, pts in schemes.items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=scheme)
        ax.set_title(f"incast {n[1:]}:1")
        ax.tick_params(axis="x", rotation=45, labelsize=7)
    axes[0].set_ylabel("completion / spec ideal")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, f"{t}.png"), dpi=110)
    plt.close(fig)


def t21():
    """T21 (abstract): baseline completion / SMaRTT completion − 1 over T12–T18, per workload."""
    lines = ["### T21 (computed from T12–T16, T18)", "",
             "Δ = baseline completion / SMaRTT completion − 1 (positive: SMaRTT faster).", "",
             "| target | workload | SMaRTT µs | best baseline (Δ) | worst baseline (Δ) |", "|---|---|---|---|---|"]
    worst_all, best_all = None, None
    for t in ["T12", "T13", "T14", "T15", "T16", "T18"]:
        groups = {}
        for r in load(t):
            if "error" in r or r["flows_finished"] != r["flows"]:
                continue
            prefix, _, scheme = r["run"].rpartition("-")
            groups.setdefault(prefix, {})[scheme] = r["completion_us"]
        for prefix, by_scheme in groups.items():
            if "smartt" not in by_scheme or len(by_scheme) < 2:
                continue
            base = by_scheme["smartt"]
            deltas = sorted((c / base - 1, s) for s, c in by_scheme.items() if s != "smartt")
            (lo, lo_s), (hi, hi_s) = deltas[0], deltas[-1]
            lines.append(f"| {t} | {prefix or '—'} | {base:.1f} | {lo_s} ({lo:+.1%}) | {hi_s} ({hi:+.1%}) |")
            if worst_all is None or hi > worst_all[0]:
                worst_all = (hi, hi_s, t, prefix)
            if best_all is None or lo < best_all[0]:
                best_all = (lo, lo_s, t, prefix)
    if worst_all:
        lines += ["", f"Largest baseline gap: {worst_all[1]} {worst_all[0]:+.1%} ({worst_all[2]} {worst_all[3] or ''}); "
                  f"largest SMaRTT deficit: {best_all[1]} {best_all[0]:+.1%} ({best_all[2]} {best_all[3] or ''})."]
    with open(os.path.join(RESULTS, "T21.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
        print("matplotlib not installed: tables only (pip install matplotlib)")
    targets = sys.argv[1:] or sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(RESULTS, "*.json")))
    for t in [t for t in targets if t != "T21"]:
        rows = load(t)
        with open(os.path.join(RESULTS, f"{t}.md"), "w") as f:
            f.write(table(t, rows))
        if plt:
            if t in ("T11", "T11w"):
                incast_plot(t, rows, plt)
            else:
                bar_plot(t, rows, plt)
            if t == "T1":
                cwnd_plot(plt)
        print(f"{t}: {len(rows)} rows")
    if not sys.argv[1:] or "T21" in sys.argv[1:]:
        t21()


if __name__ == "__main__":
    main()
