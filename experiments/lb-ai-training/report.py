#!/usr/bin/env python3
"""Tables and plots from results/*.json (written by run.py): results/<T>.md and results/<T>.png.

Usage: experiments/lb-ai-training/report.py [TARGET ...]

One table row per configuration (every run field but the seed), over its seeds:
- norm. CCT = completion time / CCT_opt, CCT_opt = a host's messages at line rate (paper §5.3:
  127 × 500 × 4096 B × 8 / 100 Gb/s = 20.8 ms for the all-to-all, m × 163.84 µs for m
  permutations): mean ± sample standard deviation, min, max over the seeds;
- loss = data packets dropped or trimmed / data packets sent (paper Fig. 2); worst flow = the
  highest per-flow loss rate (mean over seeds);
- spurious/flow = data packets a receiver got twice, per flow; RTO and FR = retransmission
  timeouts and fast retransmits (all flows, mean over seeds); trims; PFC paused µs summed over
  ports; re-routes per packet (adaptive switches);
- wall = simulator wall seconds per run (mean), and the target's total.
Runs with unfinished flows or with invariant violations (which run.py records rather than
raising) are counted in `seeds` and named there, and left out of the CCT figures.
Targets with a swept rate coefficient c also get a "best c" table: per configuration the c with
the lowest mean norm. CCT (paper §6: "we report the best c").
"""
import json
import math
import os
import sys
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")

# Per target: (x field, series field, x label) of its plot; None = a bar chart by configuration.
PLOTS = {
    "E1": ("c", "lb", "host rate / link rate (c)"),
    "E7": ("m", "lb", "concurrent permutations m (flows per host)"),
    "E9": ("c", "lr", "rate coefficient c"),
    "E10": ("m", "lr", "flows per host m (best c)"),
    "E13": ("m", "lr", "flows per host m (best c)"),
}
META = {"seed", "cct_opt_us"}


def load(t):
    p = os.path.join(RESULTS, f"{t}.json")
    if not os.path.exists(p):
        return []
    return [r for r in json.load(open(p)) if "error" not in r or not r["error"]]


def config_fields(rows):
    skip = META | {"run", "wall_s", "completion_us", "norm_cct", "ideal_us", "flows", "flows_finished", "stalled_since_us", "loss", "data_sent",
                   "retransmitted", "dropped", "trimmed", "nacks", "seq_nacks", "timeouts", "fast_retransmits", "duplicates", "wire_losses",
                   "reroutes_per_packet", "pfc_paused_us", "queues_by_tier", "fct_us", "invariants", "events", "error",
                   # Provenance (issue 44): which engine and exact scenario made a row, not a configuration.
                   "commit", "scenario_sha256"}
    fields = []
    for r in rows:
        for k in r:
            if k not in skip and k not in fields:
                fields.append(k)
    return fields


def mean(v):
    v = [x for x in v if x is not None]
    return sum(v) / len(v) if v else None


def std(v):
    v = [x for x in v if x is not None]
    if len(v) < 2:
        return 0.0
    m = sum(v) / len(v)
    return math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))


def groups(rows):
    """Configuration tuple -> its rows, in first-seen order."""
    fields = config_fields(rows)
    g = OrderedDict()
    for r in rows:
        g.setdefault(tuple(r.get(f) for f in fields), []).append(r)
    return fields, g


def violated(r):
    """Whether the run reported invariant violations (run.py records them instead of failing)."""
    return bool(r.get("invariants"))


def figures(rs):
    # A run with unfinished flows has no CCT (its completion time counts only the finished
    # ones): it is counted as unfinished and left out of the CCT figures. So is a run that broke
    # one of the simulator's invariants (a deadlock, a conservation error): its figures mean
    # nothing, and the table says how many there were.
    done = [r for r in rs if r["flows_finished"] == r["flows"] and not violated(r)]
    cct = [r["norm_cct"] for r in done] or [float("nan")]
    per_flow = lambda r, k: r["loss"][k]
    return {
        "n": len(rs),
        "unfinished": sum(1 for r in rs if r["flows_finished"] < r["flows"]),
        "violated": sum(1 for r in rs if violated(r)),
        "mean": mean(cct), "std": std(cct), "min": min(cct), "max": max(cct),
        "cct_ms": mean([r["completion_us"] / 1e3 for r in done]),
        "loss": mean([per_flow(r, "data_loss_rate") for r in rs]),
        "worst": mean([per_flow(r, "flow_loss_rate")["max"] for r in rs]),
        "spurious": mean([per_flow(r, "spurious_retransmissions_per_flow")["mean"] for r in rs]),
        "rto": mean([r["timeouts"] for r in rs]),
        "fr": mean([r["fast_retransmits"] for r in rs]),
        "trims": mean([r["trimmed"] for r in rs]),
        "pfc_us": mean([r["pfc_paused_us"] for r in rs]),
        "reroutes": mean([r["reroutes_per_packet"] for r in rs]),
        "wall": mean([r["wall_s"] for r in rs]),
    }


def fmt(x, d=3):
    if x is None:
        return "–"
    if isinstance(x, float):
        if abs(x) >= 1000:
            return f"{x:.0f}"
        return f"{x:.{d}f}"
    return str(x)


HEAD = ["seeds", "norm. CCT mean ± std", "min", "max", "CCT ms", "loss", "worst flow", "spurious/flow", "RTO", "FR", "trims", "PFC µs", "re-routes/pkt", "wall s"]


def table_rows(fields, g):
    out = []
    for key, rs in g.items():
        f = figures(rs)
        notes = [f"{f['unfinished']} unfinished"] if f["unfinished"] else []
        notes += [f"{f['violated']} broke invariants"] if f["violated"] else []
        unf = f" ({', '.join(notes)})" if notes else ""
        out.append(list(map(str, key)) + [f"{f['n']}{unf}", f"{f['mean']:.3f} ± {f['std']:.3f}", fmt(f["min"]), fmt(f["max"]), fmt(f["cct_ms"], 2),
                                          fmt(f["loss"], 4), fmt(f["worst"], 3), fmt(f["spurious"], 2), fmt(f["rto"], 0), fmt(f["fr"], 0), fmt(f["trims"], 0),
                                          fmt(f["pfc_us"], 0), fmt(f["reroutes"], 2), fmt(f["wall"], 1)])
    return out


def md_table(header, rows):
    s = "| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n"
    for r in rows:
        s += "| " + " | ".join(r) + " |\n"
    return s


def best_c(fields, g):
    """Per configuration without c: the c of the lowest mean norm. CCT, and its figures."""
    if "c" not in fields:
        return None, None
    ci = fields.index("c")
    rest = [f for f in fields if f != "c"]
    best = OrderedDict()
    for key, rs in g.items():
        k = key[:ci] + key[ci + 1:]
        f = figures(rs)
        if f["mean"] != f["mean"]:
            continue  # no finished run
        if k not in best or f["mean"] < best[k][1]["mean"]:
            best[k] = (key[ci], f, rs)
    return rest, best


def plot(t, fields, g):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4))
    spec = PLOTS.get(t)
    if spec and spec[0] in fields and spec[1] in fields:
        x, series, xlabel = spec
        if t in ("E10", "E13"):
            rest, best = best_c(fields, g)
            pts = {}
            for k, (c, f, _) in best.items():
                d = dict(zip(rest, k))
                pts.setdefault(d[series], []).append((d[x], f["mean"], f["std"]))
        else:
            pts = {}
            for key, rs in g.items():
                d = dict(zip(fields, key))
                f = figures(rs)
                pts.setdefault(d[series], []).append((d[x], f["mean"], f["std"]))
        for name, p in pts.items():
            p.sort()
            ax.errorbar([a for a, _, _ in p], [b for _, b, _ in p], yerr=[e for _, _, e in p], marker="o", capsize=3, label=str(name))
        if t == "E1":
            cs = sorted({dict(zip(fields, k))["c"] for k in g})
            ax.plot(cs, [1 / c for c in cs], "k--", label="ideal (CCT_opt / c)")
        if x == "m":
            ax.set_xscale("log", base=2)
        ax.set_xlabel(xlabel)
        ax.legend(fontsize=7)
    else:
        labels, means, errs = [], [], []
        for key, rs in g.items():
            f = figures(rs)
            labels.append("/".join(map(str, key)))
            means.append(f["mean"])
            errs.append(f["std"])
        ax.bar(range(len(labels)), means, yerr=errs, capsize=2)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=70, fontsize=6)
        lo = min(means) if means else 1
        ax.set_ylim(max(0, lo * 0.9), None)
    ax.set_ylabel("norm. CCT (CCT / CCT_opt)")
    ax.set_title(f"lb-ai-training {t}")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, f"{t}.png"), dpi=110)
    plt.close(fig)
    return True


def report(t):
    rows = load(t)
    if not rows:
        return None
    fields, g = groups(rows)
    text = f"# {t}\n\n" + md_table(fields + HEAD, table_rows(fields, g))
    rest, best = best_c(fields, g)
    if best:
        brows = []
        for k, (c, f, _) in best.items():
            brows.append(list(map(str, k)) + [str(c), f"{f['n']}", f"{f['mean']:.3f} ± {f['std']:.3f}", fmt(f["min"]), fmt(f["max"]), fmt(f["loss"], 4),
                                              fmt(f["spurious"], 2), fmt(f["rto"], 0), fmt(f["fr"], 0)])
        text += "\n## Best c per configuration\n\n" + md_table(rest + ["best c", "seeds", "norm. CCT mean ± std", "min", "max", "loss", "spurious/flow", "RTO", "FR"], brows)
    total = sum(r["wall_s"] for r in rows)
    text += f"\n{len(rows)} runs, {total:.0f} s of simulator wall time in all ({total / max(1, len(rows)):.1f} s per run).\n"
    with open(os.path.join(RESULTS, f"{t}.md"), "w") as f:
        f.write(text)
    plot(t, fields, g)
    return text


def main():
    ts = sys.argv[1:] or ["T0"] + [f"E{i}" for i in range(1, 16)] + ["S1", "S2", "S3"]
    for t in ts:
        text = report(t)
        if text:
            print(text)


if __name__ == "__main__":
    sys.exit(main())
