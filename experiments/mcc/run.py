#!/usr/bin/env python3
"""Reproduction runs of "Congestion Control for AI Workloads with Message-Level Signaling"
(Li, Ren, Li, Liu, Chen, APNet 2025: MCC; §2.2 motivation, §3 design, §4 CCL integration, §5).

Usage (with a Python that has the fabricsim package: `pip install ./python`):
    experiments/mcc/run.py [TARGET ...] [--seeds N] [--jobs N] [--quick] [--only REGEX]
                           [--timeout-s S] [--backend local|ray] [--address ADDR] [--quiet]

Targets (the reproduction plan; sizes are per DP group, 4 groups at once):
  T1  Fig. 2: DCQCN+AR vs PFC+AR, Mode F, 0.5 / 1 / 2 GB per group, asymmetric fabric
  T2  Fig. 3: l1 / l2 utilisation and ECN marking rate over time under DCQCN+AR (the 1 GB runs
      of T1 carry the trace; this target re-reads them, no runs of its own)
  T3  Fig. 6a + T4 Fig. 6b + T8: 4 x 250 MB, Mode F, MCC / DCQCN / TIMELY / PFC only, all + AR
  T5  the same in Mode C (2-rank ring AllReduce per pair, both directions)
  T6  symmetric fabric (l2 at 100 G), Mode F, 4 x 250 MB, every scheme
  T7  MCC sensitivity: r, sample_every, message-delay variant B, decrease law, 50 G / 25 G hosts

Each run is one scenario and one seed; its summary (plus link-utilisation statistics from the
port trace and MCC's decision counts) becomes a row of results/<TARGET>.json as soon as it
finishes; each target is a sweep of named runs through `fabricsim.sweep` (files in
out/<TARGET>/<run>/; a rerun does only what is missing; `--quick` rows go to
out/quick-results/). `report.py` turns the rows into the tables RESULTS.md quotes and the plots.

Fabric and constants (paper §2.2 Fig. 1 and §5; what the paper leaves open follows the mcc
spec's A-numbered resolutions, cited per line below): 2 leaves x 2 spines, 8 servers with one
100 G NIC each (A-29), S0-S3 under tor0 and S4-S7 under tor1 (A-31), 1 us links (A-30), l2 =
tor0-spine1 at 50 G both ways (A-28) with its queue and ECN thresholds scaled (A-25); adaptive
routing by exact queued bytes with random ties (A-23); PFC on every scheme with the HPCC MMU's
32 MB buffer and alpha 1/8 (A-1, A-27); ECN at dequeue, 400 / 1600 KB and P_max 0.2 at 100 G
(spec 2.10.1); 1000 B payload + 48 B header, 60 B ACKs (A-26); a reorder-tolerant RoCE
receiver with one ACK per packet (A-20); 64 KiB chunks (A-3). The baselines post every chunk at
once (A-2). DCQCN: `preset = "hpcc"` (spec 2.10.1 constants and its Mellanox reaction point);
TIMELY: spec 2.10.2 defaults.
"""
import csv
import argparse
import os

import fabricsim

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "out")
RESULTS = os.path.join(HERE, "results")

MSG = 65_536
PAYLOAD, HEADER = 1000, 48

SCHEMES = {
    # MCC in the CCL, NIC congestion control off (paper §2.1, Fig. 5).
    "mcc": 'cc = "line_rate"\ngate = "mcc"',
    # DCQCN with the HPCC ns-3 "dcqcn" constants and reaction point (spec §2.10.1, A-24).
    "dcqcn": 'cc = { name = "dcqcn", preset = "hpcc" }',
    # TIMELY as HPCC ns-3 CC_MODE 7 (spec §2.10.2).
    "timely": 'cc = "timely"',
    # No CC: PFC only (spec §2.10.3).
    "pfc": 'cc = "line_rate"',
}


def scenario(rid, seed, scheme, size, mode="F", l2_factor=0.5, host_gbps=100, gate_extra="", trace=True, transport=None):
    """One run: `size` bytes per group (a string such as "250MB"), `mode` "F" (one transfer
    Si -> S(i+4)) or "C" (2-rank ring AllReduce per pair); `l2_factor` None = symmetric."""
    failure = "" if l2_factor is None else f"""
[topology.failures]
links = ["tor0-spine1"]           # l2 (paper Fig. 1)
model = "degraded"
degraded_rate_factor = {l2_factor}
scale_queue = true                # A-25: ECN thresholds scale with the rate (200 / 800 KB at 50 G)
"""
    transport = transport or SCHEMES[scheme]
    if gate_extra:
        transport = 'cc = "line_rate"\n[transport.gate]\nname = "mcc"\n' + gate_extra
    op = '{ op = "broadcast", bytes = "%s" }' % size if mode == "F" else '{ op = "allreduce", algorithm = "ring", bytes = "%s" }' % size
    jobs = "".join(f"""
[[workload.jobs]]
placement = "list"
hosts = [{i}, {i + 4}]
collectives = [{op}]
""" for i in range(4))
    run = ""
    if trace:
        run = '\n[run]\ntrace_ports = ["tor0-spine0", "tor0-spine1"]\ntrace_interval_us = 10\n'
        if scheme == "mcc":
            run += "gate_log = true\n"
    host = "" if host_gbps == 100 else f"host_link_rate_gbps = {host_gbps}\n"
    return f"""name = "{rid}"
seed = {seed}

[topology]
kind = "leaf_spine"
tors = 2
hosts_per_tor = 4
spines = 2
link_rate_gbps = 100
{host}link_latency_ns = 1000
{failure}
[switch]
trimming = false
lb = {{ name = "adaptive_packet", compare = "bytes" }}
ecn_kmin_bytes = "400KB"
ecn_kmax_bytes = "1600KB"
ecn_pmax = 0.2
ecn_mark_at = "dequeue"

[switch.pfc]
enabled = true
buffer_bytes = "32MB"
alpha = 0.125
resume_offset_bytes = "3KB"

[transport]
mtu_bytes = {PAYLOAD + HEADER}
header_bytes = {HEADER}
ack_bytes = 60
lb = "ecmp"
reliability = "rc_ooo"
{transport}

[workload]
kind = "collectives"
chunk = "64KiB"
{jobs}{run}"""


def seeds(args):
    return range(args.first_seed, args.first_seed + args.seeds)


def t1(args):
    sizes = ["50MB"] if args.quick else ["500MB", "1GB", "2GB"]
    return [(f"{s}-{x}-s{k}", scenario(f"{s}-{x}-s{k}", k, x, s)) for s in sizes for x in ["dcqcn", "pfc"] for k in seeds(args)]


def t3(args, mode="F", l2=0.5):
    size = "25MB" if args.quick else "250MB"
    return [(f"{x}-s{k}", scenario(f"{x}-s{k}", k, x, size, mode=mode, l2_factor=l2)) for x in SCHEMES for k in seeds(args)]


def t7(args):
    size = "25MB" if args.quick else "250MB"
    variants = {
        "r1": "oversubscription = 1.0",
        "r2": "oversubscription = 2.0",
        "sample1": "sample_every = 1",
        "sample32": "sample_every = 32",
        "round_trip": 'message_delay = "round_trip"\nt_msg_us = 124.0',
        "littles_law": 'decrease = "littles_law"',
        "halve": 'decrease = "halve"',
    }
    runs = [(f"mcc-{v}-s{k}", scenario(f"mcc-{v}-s{k}", k, "mcc", size, gate_extra=g)) for v, g in variants.items() for k in seeds(args)]
    # DCQCN's constants (spec T7 "DCQCN dcqcn_paper timers"): HPCC's `dcqcn_paper` column (α
    # and decrease periods 50 µs, increase timer 55 µs) and the DCQCN paper's defaults.
    dcqcn = {
        "dcqcn-paper_timers": 'cc = { name = "dcqcn", preset = "hpcc", alpha_timer_us = 50.0, rate_timer_us = 55.0, rate_decrease_interval_us = 50.0 }',
        "dcqcn-defaults": 'cc = "dcqcn"',
        # The DCQCN paper's reaction point with the spec's constants (a cut at every CNP,
        # CNP packets at most one per 4 µs): the preset's before issue 43.
        "dcqcn-paper_rp": 'cc = { name = "dcqcn", preset = "hpcc", reaction_point = "paper" }',
        # One CNP (and cut) per CE-marked packet: an upper bound on how hard the spec's
        # constants can react (the Mellanox reaction point cuts at most once per 4 µs).
        "dcqcn-cnp_every_mark": 'cc = { name = "dcqcn", preset = "hpcc", reaction_point = "paper", cnp_interval_us = 0.0 }',
    }
    for v, cc in dcqcn.items():
        runs += [(f"{v}-s{k}", scenario(f"{v}-s{k}", k, "dcqcn", size, transport=cc)) for k in seeds(args)]
    # A-2 sensitivity: an NCCL_STEPS-like cap of 8 chunks in flight per connection for the
    # baselines too.
    for x in ["dcqcn", "timely", "pfc"]:
        cap = SCHEMES[x] + '\ngate = { name = "max_outstanding", messages = 8 }'
        runs += [(f"{x}-cap8-s{k}", scenario(f"{x}-cap8-s{k}", k, x, size, transport=cap)) for k in seeds(args)]
    # Host links at 50 G and 25 G (spec T7): no global congestion at 25 G.
    for gbps in [50, 25]:
        for x in ["mcc", "dcqcn", "timely"]:
            runs += [(f"{x}-host{gbps}-s{k}", scenario(f"{x}-host{gbps}-s{k}", k, x, size, host_gbps=gbps)) for k in seeds(args)]
    return runs


def link_series(path):
    """Per traced link, its port-trace samples: (time µs, bytes sent, CE marks, queue bytes)."""
    raw = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            raw.setdefault(r["link"], []).append((float(r["time_us"]), int(r["tx_bytes"]), int(r["ecn_marks"]), int(r["queue_bytes"])))
    return raw


def stats(raw, rates, cct_us):
    """Utilisation statistics of l1 and l2 in the steady interval [5 %, 95 %] of the CCT (A-37)
    and 100 us series for the plots: utilisation = bytes sent / (rate x time) per interval;
    marking rate = packets CE-marked / data packets sent (tor0's uplinks carry only data in
    Mode F; in Mode C they also carry ACKs, so it is a lower bound there)."""
    out = {}
    lo, hi = 0.05 * cct_us, 0.95 * cct_us
    for link, name in [("tor0-spine0", "l1"), ("tor0-spine1", "l2")]:
        rows = raw.get(link, [])
        gbps = rates[name]
        util10, mark10, q10 = [], [], []
        series = {"t_ms": [], "util": [], "mark": [], "queue_kb": []}
        acc = [0, 0, 0, 0, 0]  # bytes, marks, queue sum, samples, start time
        for (t0, b0, m0, _), (t1, b1, m1, q1) in zip(rows, rows[1:]):
            if t1 > cct_us:
                break
            dt = t1 - t0
            u = (b1 - b0) * 8 / (gbps * 1e3 * dt)
            pk = (b1 - b0) / (PAYLOAD + HEADER)
            if lo <= t0 and t1 <= hi:
                util10.append(u)
                mark10.append((m1 - m0) / pk if pk > 0 else 0.0)
                q10.append(q1)
            acc[0] += b1 - b0
            acc[1] += m1 - m0
            acc[2] += q1
            acc[3] += 1
            if acc[3] == 10:  # 100 us bins for the plots
                series["t_ms"].append(round(t1 / 1e3, 3))
                series["util"].append(round(acc[0] * 8 / (gbps * 1e3 * 100), 4))
                pk = acc[0] / (PAYLOAD + HEADER)
                series["mark"].append(round(acc[1] / pk, 5) if pk else 0.0)
                series["queue_kb"].append(round(acc[2] / 10 / 1e3, 1))
                acc = [0, 0, 0, 0, 0]
        util100 = [u for t, u in zip(series["t_ms"], series["util"]) if lo <= t * 1e3 - 100 and t * 1e3 <= hi]
        n = max(len(util10), 1)
        out[name] = {
            "util_mean": sum(util10) / n,
            "util100_min": min(util100) if util100 else None,
            "util100_p5": sorted(util100)[len(util100) // 20] if util100 else None,
            "frac_below_70": sum(u < 0.7 for u in util100) / max(len(util100), 1),
            "mark_rate_mean": sum(mark10) / n,
            "queue_mean_kb": sum(q10) / n / 1e3,
            "series": series,
        }
    return out


def corr(x, y):
    n = len(x)
    if n < 3:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / (sxx * syy) ** 0.5 if sxx > 0 and syy > 0 else None


def overreaction(st, cct_us):
    """Spec T2's check: the correlation of l1's utilisation (100 us bins, steady interval [5 %,
    95 %] of the CCT) with l2's and with its own marking rate, each at the lag (0-1 ms, the
    marks first) where it is most negative."""
    keep = [i for i, t in enumerate(st["l1"]["series"]["t_ms"]) if 0.05 * cct_us <= t * 1e3 <= 0.95 * cct_us]
    l1 = {k: [v[i] for i in keep] for k, v in st["l1"]["series"].items()}
    l2 = {k: [v[i] for i in keep] for k, v in st["l2"]["series"].items()}
    res = {}
    for name, marks in [("vs_l2_marks", l2["mark"]), ("vs_l1_marks", l1["mark"])]:
        best = None
        for lag in range(0, 11):
            c = corr(l1["util"][lag:], marks[: len(marks) - lag] if lag else marks)
            if c is not None and (best is None or c < best[0]):
                best = (c, lag * 100)
        res[name] = {"r": best[0], "lag_us": best[1]} if best else None
    return res


def gate_counts(path):
    counts = {"grow": 0, "hold": 0, "shrink": 0}
    windows = []
    if os.path.exists(path):
        with open(path) as f:
            for r in csv.DictReader(f):
                counts[r["state"]] += 1
                windows.append(int(r["window_bytes"]))
    if windows:
        counts["window_mean_bytes"] = sum(windows) / len(windows)
    return counts


def row(s, rid, wall, run_dir):
    p = s["packets"]
    topo = s["scenario"]["topology"]
    fail = topo.get("failures")
    l2 = 100.0 * (fail["degraded_rate_factor"] if fail else 1.0)
    with open(os.path.join(run_dir, "ccts.csv")) as f:
        rows = list(csv.DictReader(f))
    ccts = [float(x["cct_us"]) for x in rows]
    total = sum(int(x["bytes"]) for x in rows)
    r = {
        "run": rid,
        "wall_s": wall,
        "peak_rss_mb": s["performance"]["peak_rss_bytes"] / 1e6,
        "events": s["events"],
        "cct_us": s["completion_time_us"],
        "group_cct_mean_us": sum(ccts) / len(ccts),
        "group_cct_us": ccts,
        "flows_finished": s["flows_finished"],
        "flows": s["flows"],
        "data_sent": p["data_sent"],
        "retransmitted": p["retransmitted"],
        "dropped": p["dropped"],
        "nacks": p["nacks"] + p["seq_nacks"],
        "timeouts": p["timeouts"],
        "cnps": p["cnps"],
        "ecn_marked": p["ecn_marked"],
        "pfc_pause_frames": s["pfc"]["pause_frames"],
        "pfc_paused_time_us": s["pfc"]["paused_time_us"],
        "pfc_headroom_drops": s["pfc"]["headroom_overflow_drops"],
        "max_switch_buffer_bytes": s["pfc"]["max_switch_buffer_bytes"],
        "invariant_violations": s["invariant_violations"],
        "l2_gbps": l2,
        "host_gbps": topo.get("host_link_rate_gbps") or topo.get("link_rate_gbps"),
        "payload_bytes_total": total,
    }
    trace = os.path.join(run_dir, "port_trace.csv")
    if os.path.exists(trace):
        st = stats(link_series(trace), {"l1": 100.0, "l2": l2}, s["completion_time_us"])
        r["overreaction"] = overreaction(st, s["completion_time_us"])
        # The 100 µs series stay only where report.py plots them (seed 1 of the main runs).
        if not (rid.endswith("-s1") and (rid.count("-") == 1 or rid == "1GB-dcqcn-s1")):
            for v in st.values():
                del v["series"]
        r["links"] = st
    r["mcc"] = gate_counts(os.path.join(run_dir, "gate_log.csv"))
    return r


def describe(r):
    l = r.get("links", {})
    u = " ".join(f"{k} {v['util_mean']:.2f}" for k, v in l.items())
    return f"CCT {r['cct_us'] / 1e3:.2f} ms, pauses {r['pfc_pause_frames']}, util {u}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="*")
    ap.add_argument("--quick", action="store_true", help="small fabrics and sizes, a smoke test")
    fabricsim.add_sweep_arguments(ap, jobs=2)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=1)
    args = ap.parse_args()
    targets = {
        "T1": t1(args),
        "T3": t3(args),
        "T5": t3(args, mode="C"),
        "T6": t3(args, l2=None),
        "T7": t7(args),
    }
    results = os.path.join(OUT, "quick-results") if args.quick else RESULTS
    for name in args.targets or list(targets):
        print(f"{name}:", flush=True)
        fabricsim.sweep({"scenarios": dict(targets[name])}, errors="record", run_dirs=os.path.join(OUT, name), row=row,
                        describe=describe, results=os.path.join(results, f"{name}.json"), **fabricsim.sweep_options(args))


if __name__ == "__main__":
    main()
