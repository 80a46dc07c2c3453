#!/usr/bin/env python3
"""Reproduction runs of the STrack paper (shared/specs/strack.md §7, targets RT-2 ... RT-14).

Usage (with a Python that has the fabricsim package: `pip install ./python`):
    experiments/strack/run.py [TARGET ...] [--jobs N] [--quick] [--max-bytes SIZE] [--only REGEX] [--timeout-s S]
                              [--backend local|ray] [--address ADDR] [--quiet]

Each target is a sweep of named fabricsim runs (a scenario written out as TOML) through
`fabricsim.sweep`: each run's files go to out/<TARGET>/<run>/, its row (`row` below) to
results/<TARGET>.json as it finishes, so an interrupted sweep keeps what it did and a rerun
only does what is missing (rows with an `error` run again). `report.py` turns the JSON into
tables and plots. `--quick` shrinks T-8K to 128 hosts and T-2K to 128 hosts for a smoke test
(its rows go to out/quick-results/); `--max-bytes` skips permutation/incast sizes above the
given size (the 64 MB and 100 MB points take tens of minutes each at 8192 hosts on a 2-core
machine). `peak_rss_mb` is the sweep worker's peak during the run: the run's memory plus the
Python process's (about 60 MB; the runs before the switch to `fabricsim.sweep` ran the CLI).

Fabrics (spec §5.2): 2-tier leaf-spine, T-8K = K 128 (128 ToRs × 64 hosts, 64 spines),
T-2K = K 64, T-MOT = K 8; 1 µs per link, no switch latency, 4 KiB MTU (64 B header).
Schemes (spec §4, §5.4):
  strack       lossy, drop above 5 BDP per queue, ECN 25-75 % BDP at dequeue, STrack CC + adaptive
               spraying + SACK/OOO/probe/RTO (100 µs), ACK every 4 packets;
  strack_obl   the same with oblivious round-robin spraying over 256 entropies (spec §2.6);
  roce1        RoCEv2: PFC shared buffer (5 MB per Tb/s, dynamic threshold α = 1/128: calibrated,
               as spec §5.4 asks, so that the 32->1 16 MB incast peaks at the paper's 37.5 MB of
               last-hop queue; 1/8 never pauses there and peaks at 83 MB), ECN step at 1 BDP,
               DCQCN, one QP = one ECMP path, go-back-N;
  roce4        the same with 4 QPs per connection (collectives only).
"""
import argparse
import csv
import os
import sys

import fabricsim

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "out")
RESULTS = os.path.join(HERE, "results")

SIZES = ["4KiB", "128KiB", "512KiB", "2MiB", "16MiB", "64MiB", "100MiB"]


def nbytes(s):
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    for u, m in units.items():
        if s.endswith(u):
            return int(float(s[: -len(u)]) * m)
    return int(s)


def scheme_toml(scheme, gbps=400):
    if scheme.startswith("strack"):
        lb = 'lb = { name = "strack", mode = "oblivious" }' if scheme == "strack_obl" else 'lb = "strack"'
        return f"""[switch]
trimming = false
buffer_bdp = 5.0
ecn_kmin = 0.05
ecn_kmax = 0.15

[transport]
cc = "strack"
{lb}
reliability = "strack"
ack_every = 4
rto_us = 100
"""
    if scheme.startswith("roce"):
        return """[switch]
trimming = false
buffer_bdp = 1.0
ecn_kmin = 1.0
ecn_kmax = 1.0

[switch.pfc]
enabled = true
alpha = 0.0078125

[transport]
cc = "dcqcn"
lb = "ecmp"
reliability = "go_back_n"
"""
    raise ValueError(scheme)


def scenario(name, scheme, workload, k=128, gbps=400, os_ratio=1, failures=None, seed=1, run_extra=""):
    osub = f'\noversubscription = "{os_ratio}:1"' if os_ratio > 1 else ""
    fail = ""
    if failures:
        fail = f"\n[topology.failures]\ntors = 16\nuplinks_per_tor = {failures[0]}\nmodel = \"{failures[1]}\"\n"
    return f"""name = "strack {name} {scheme}"
seed = {seed}

[topology]
kind = "leaf_spine"
k = {k}{osub}
link_rate_gbps = {gbps}
link_latency_ns = 1000
switch_latency_ns = 0
{fail}
{scheme_toml(scheme, gbps)}
[workload]
{workload}
{run_extra}"""


def perm(size):
    return f'kind = "permutation"\nflow_bytes = "{size}"'


def incast(n, size):
    return f'kind = "incast"\nsenders = {n}\nreceiver = 0\nflow_bytes = "{size}"'


def collectives(op, algo, size, ranks, jobs, qps=1, parallelism=None, placement="random"):
    par = f", parallelism = {parallelism}" if parallelism else ""
    return f"""kind = "collectives"
chunk = "128KiB"

[[workload.jobs]]
count = {jobs}
ranks = {ranks}
placement = "{placement}"
qps = {qps}
collectives = [ {{ op = "{op}", algorithm = "{algo}", bytes = "{size}"{par} }} ]"""


def targets(quick, max_bytes):
    k8, k2 = (16, 16) if quick else (128, 64)
    sizes = [s for s in SIZES if nbytes(s) <= max_bytes]
    if quick:
        sizes = [s for s in sizes if nbytes(s) <= 2 << 20]
    three = ["strack", "strack_obl", "roce1"]
    t = {}
    t["RT3"] = [(f"{s}-{sc}", scenario("RT3", sc, perm(s), k=k8)) for s in sizes for sc in three]
    # RT3 again with other seeds (other permutations, ECMP hashes and spray offsets): how much of
    # each ratio is the draw of seed 1.
    t["RT3seeds"] = [(f"seed{n}-{s}-{sc}", scenario("RT3", sc, perm(s), k=k8, seed=n))
                     for s, seeds in [("2MiB", [2, 3, 4, 5]), ("16MiB", [2, 3])] if nbytes(s) <= max_bytes
                     for n in seeds for sc in three]
    t["RT4"] = [(f"{g}G-{s}-{sc}", scenario("RT4", sc, perm(s), k=k8, gbps=g)) for g in [200, 800] for s in sizes for sc in three]
    t["RT5"] = [(f"{r}to1-{s}-{sc}", scenario("RT5", sc, perm(s), k=k8, os_ratio=r)) for r in [4, 8] for s in sizes for sc in three]
    per_tor = [4, 16] if not quick else [1, 2]
    t["RT6"] = [(f"{d}down-{m}-{s}-{sc}", scenario("RT6", sc, perm(s), k=k8, failures=(d, m)))
                for d in per_tor for m in ["removed", "degraded"] for s in sizes for sc in three]
    trace = '[run]\ntrace_interval_us = 10\ntrace_ports = ["tor0-host0"]\ntrace_conns = [0, 1, 2, 3, 4, 5, 6, 7]\nevent_log = true'
    t["RT7"] = [(sc, scenario("RT7", sc, incast(32, "16MiB"), k=k8, run_extra=trace)) for sc in ["strack", "roce1"]]
    # RT7's RoCE run under the reference MMU's own α (1/8) and the ns-3 simulators' Mellanox
    # reaction point (issue 43): does either give Fig. 16's 37.5 MB without the α calibration?
    # (`ns3_rt7.py` runs the same incast in the HPCC paper's ns-3 simulator.)
    mlx = 'cc = { name = "dcqcn", reaction_point = "mellanox", byte_counter_bytes = 0 }'
    t["RT7ref"] = [(f"roce1-alpha{a}-{rp}", scenario("RT7ref", "roce1", incast(32, "16MiB"), k=k8, run_extra=trace)
                    .replace("alpha = 0.0078125", f"alpha = {1 / a}").replace('cc = "dcqcn"', mlx if rp == "mellanox" else 'cc = "dcqcn"'))
                   for a in [8, 128] for rp in ["paper", "mellanox"]]
    t["RT8"] = [(f"{s}-{sc}", scenario("RT8", sc, incast(32, s), k=k8)) for s in sizes for sc in ["strack", "roce1"]]
    t["RT9"] = [(f"{n}to1", scenario("RT9", "strack", incast(n, "16MiB"), k=k8, run_extra=trace)) for n in [8, 32, 128]]
    # RT-1 (Fig. 4): ECN vs RTT per ACK at one sender of a 32->1 incast.
    t["RT1"] = [("strack", scenario("RT1", "strack", incast(32, "16MiB"), k=k8, run_extra="[run]\nack_log_conns = [0]\nend_time_us = 300"))]
    # RT-14 ablations of the spec's assumptions, on the 2 MiB permutation and the 32->1 incast
    # (the spec's 100 MB / 64-down versions take hours here).
    variants = {
        "base": ("", ""),
        "literal_bitmap": ("", 'bitmap = "literal"'),
        "ack_every_1": ("ack_every = 1", ""),
        "max_cwnd_1.5": ("max_cwnd_bdp = 1.5", ""),
        "obl_window_range": ("", 'mode = "oblivious", oblivious_range = "window"'),
        "rto_50": ("rto_us = 50", ""),
        "rto_500": ("rto_us = 500", ""),
        "probe_literal": ('probe_range = "literal"', ""),
        "ack_on_ce": ("ack_on_ce = true", ""),
        "ack_every_1+max_cwnd_1.5": ("ack_every = 1;max_cwnd_bdp = 1.5", ""),
    }
    # The 16 MiB permutation, where adaptive spraying starts to pay, for the two settings that
    # decide how far STrack sits above the ideal (ACK coalescing and the window cap).
    at_16 = ("base", "ack_every_1", "max_cwnd_1.5", "ack_every_1+max_cwnd_1.5")
    t["RT14"] = []
    for v, (tr, lbp) in variants.items():
        loads = [("perm2MiB", perm("2MiB")), ("incast32", incast(32, "16MiB"))]
        if v in at_16 and not quick:
            loads.append(("perm16MiB", perm("16MiB")))
        for wname, wl in loads:
            toml = scenario("RT14", "strack", wl, k=k8)
            if lbp:
                toml = toml.replace('lb = "strack"', 'lb = { name = "strack", ' + lbp + " }")
            for change in filter(None, tr.split(";")):
                if change.startswith("ack_every"):
                    toml = toml.replace("ack_every = 4", change)
                elif change.startswith("rto"):
                    toml = toml.replace("rto_us = 100", change)
                elif change.startswith("max_cwnd"):
                    toml = toml.replace('cc = "strack"', 'cc = { name = "strack", ' + change + " }")
                elif change.startswith("probe") or change.startswith("ack_on_ce"):
                    toml = toml.replace('reliability = "strack"', 'reliability = { name = "strack", ' + change + " }")
            t["RT14"].append((f"{v}-{wname}", toml))
    # Multi-job collectives on T-2K: 64 jobs of 32 ranks (spec §5.3.4). The per-rank size is
    # scaled down from 128 MB (see RESULTS.md) to keep a run within minutes.
    coll_mb = "8MiB" if not quick else "1MiB"
    jobs, ranks = (64, 32) if not quick else (4, 32)
    four = ["strack", "roce1", "roce4"]
    for tgt, osr in [("RT10", 1), ("RT12", 4)]:
        t[tgt] = [(f"{a}-{sc}", scenario(tgt, sc, collectives("allreduce", a, coll_mb, ranks, jobs, qps=4 if sc == "roce4" else 1), k=k2, os_ratio=osr))
                  for a in ["dbt", "ring", "hd"] for sc in four]
    # RT12 with block placement (spec §5.3.4's alternative: random blocks of 8 NICs), on 1:1 and
    # 4:1, to test whether the paper's "STrack ≈ its 1:1 times on 4:1" needs ranks packed on ToRs.
    t["RT12b"] = [(f"{tag}-{a}-{sc}", scenario("RT12b", sc, collectives("allreduce", a, coll_mb, ranks, jobs, placement="random_blocks"), k=k2, os_ratio=osr))
                  for sc in ["strack", "roce1"] for tag, osr in [("1to1", 1), ("4to1", 4)] for a in ["dbt", "ring", "hd"]]
    # RT10's DBT at the spec's assumed 128 MB per rank (spec §5.3.4): checks that the 8 MiB
    # scale-down keeps the ordering and the size of the gaps.
    t["RT10big"] = [(f"dbt-{sc}", scenario("RT10big", sc, collectives("allreduce", "dbt", "128MiB" if not quick else "2MiB", ranks, jobs, qps=4 if sc == "roce4" else 1), k=k2))
                    for sc in four]
    for tgt, osr in [("RT11", 1), ("RT13", 4)]:
        t[tgt] = [(f"P{p}-{sc}", scenario(tgt, sc, collectives("alltoall", "direct", coll_mb, ranks, jobs, qps=4 if sc == "roce4" else 1, parallelism=p), k=k2, os_ratio=osr))
                  for p in [8, 16, 32, 64] for sc in four]
    # Sensitivity of RT10 to DCQCN's increase steps: htsim's DCQCN model (which the STrack
    # authors extended) raises the rate by line/20 per step and line/10 in hyper increase, far
    # above the DCQCN paper's 40 Mb/s per 40 G we use by default.
    htsim_dcqcn = 'cc = { name = "dcqcn", rate_ai_mbps = 20000, rate_hai_mbps = 40000 }'
    t["RT10s"] = [(f"{a}-{sc}", scenario("RT10s", sc, collectives("allreduce", a, coll_mb, ranks, jobs, qps=4 if sc == "roce4" else 1), k=k2).replace('cc = "dcqcn"', htsim_dcqcn))
                  for a in ["dbt", "ring"] for sc in ["roce1", "roce4"]]
    t["RT3s"] = [(f"{s}-roce1", scenario("RT3s", "roce1", perm(s), k=k8).replace('cc = "dcqcn"', htsim_dcqcn)) for s in sizes if nbytes(s) >= 512 << 10]
    # Diagnosis of STrack under degraded links (RT6's open question) on a small fabric: K 32
    # (32 ToRs x 16 hosts, 16 spines), 4 ToRs lose 1 of 16 uplinks (6.25 %, as 4 of 64 in T-8K),
    # 16 MiB. The seed-1 failure set includes tor8-spine14, whose queue is traced (report.py warns
    # if a change of seed or topology drops it from `failed_links`), and flow 135 (tor8 -> tor7),
    # one of the slowest, whose window is traced.
    diag = '[run]\ntrace_interval_us = 10\ntrace_ports = ["tor8-spine14", "spine14-tor8"]\ntrace_conns = [135]'
    dsize = "16MiB" if not quick else "2MiB"

    def diag_case(sc, failure, change=None):
        toml = scenario("RT6x", sc, perm(dsize), k=32, failures=failure, run_extra=diag).replace("tors = 16", "tors = 4")
        return toml.replace(*change) if change else toml
    t["RT6x"] = [
        ("healthy-strack", diag_case("strack", None)),
        ("removed-strack", diag_case("strack", (1, "removed"))),
        ("degraded-strack", diag_case("strack", (1, "degraded"))),
        ("degraded-strack_obl", diag_case("strack_obl", (1, "degraded"))),
        ("degraded-strack-literal_bitmap", diag_case("strack", (1, "degraded"), ('lb = "strack"', 'lb = { name = "strack", bitmap = "literal" }'))),
        ("degraded-strack-rto_1000", diag_case("strack", (1, "degraded"), ("rto_us = 100", "rto_us = 1000"))),
        ("degraded-strack-ack_every_1", diag_case("strack", (1, "degraded"), ("ack_every = 4", "ack_every = 1"))),
        ("degraded-strack_obl-ack_every_1", diag_case("strack_obl", (1, "degraded"), ("ack_every = 4", "ack_every = 1"))),
    ]
    # Motivation (Figs 1-3): one 32-rank collective on T-MOT, RoCEv2 with 1 and 4 QPs.
    mot = "128MiB" if not quick else "8MiB"
    t["RT2"] = [(f"dbt-{sc}", scenario("RT2", sc, collectives("allreduce", "dbt", mot, 32, 1, qps=4 if sc == "roce4" else 1, placement="contiguous"), k=8))
                for sc in ["roce1", "roce4"]]
    t["RT2"] += [(f"a2a-P{p}-{sc}", scenario("RT2", sc, collectives("alltoall", "direct", mot, 32, 1, qps=4 if sc == "roce4" else 1, parallelism=p, placement="contiguous"), k=8))
                 for p in [8, 16, 32] for sc in ["roce1", "roce4"]]
    # Fig. 8 (RT-3, 16 MB): inter-switch queues over time. The paper logs all 16 K; we trace the
    # 2048 of ToRs 0-15 (their 64 uplinks and the spines' 64 links down to them) every 10 µs.
    f8 = "[run]\ntrace_interval_us = 10\ntrace_ports = [" + ", ".join(f'"tor{t}-spine{s}", "spine{s}-tor{t}"' for t in range(16 if not quick else 2) for s in range(64 if not quick else 8)) + "]"
    t["RT3f8"] = [(f"16MiB-{sc}", scenario("RT3f8", sc, perm("16MiB" if not quick else "2MiB"), k=k8, run_extra=f8)) for sc in ["strack", "roce1"]]
    # Fig. 3 (RT-2): A2A at parallelism 32 with RoCEv2 1 QP, every last-hop queue traced (queue
    # and bytes sent per 5 µs: the arrival rate is their sum's change).
    trace3 = "[run]\ntrace_interval_us = 5\ntrace_ports = [" + ", ".join(f'"tor{h // 4}-host{h}"' for h in range(32)) + "]"
    t["RT2f3"] = [("a2a-P32-roce1", scenario("RT2f3", "roce1", collectives("alltoall", "direct", mot, 32, 1, parallelism=32, placement="contiguous"), k=8, run_extra=trace3))]
    return t


def row(s, run_id, wall, run_dir):
    """The results row of one run's summary (RT6x adds its diagnosis, see `degraded_diagnosis`)."""
    r = {
        "run": run_id,
        "wall_s": round(wall, 2),
        "hosts": s["hosts"],
        "completion_us": s["completion_time_us"],
        "ideal_us": s["ideal_completion_time_us"],
        "base_rtt_us": s["base_rtt_us"],
        "fct_us": s["fct_us"],
        "packets": s["packets"],
        "pfc": s.get("pfc"),
        "collectives": s.get("collectives"),
        "duplicates": s["duplicate_data_packets"],
        "flows_finished": s["flows_finished"],
        "flows": s["flows"],
        "failed_links": len(s.get("failed_links", [])),
        "invariants": s["invariant_violations"],
        "peak_rss_mb": round((s["performance"]["peak_rss_bytes"] or 0) / 1e6, 1),
        "packet_hops_per_s": s["performance"]["packet_hops_per_second"],
    }
    if os.path.basename(os.path.dirname(run_dir)) == "RT6x":
        r["diagnosis"] = degraded_diagnosis(s, run_dir)
    return r


def degraded_diagnosis(s, run_dir):
    """What RT6x asks of a run: max / median FCT of flows by whether their source or destination
    ToR lost an uplink, the failed links, the traced ports' mean queue while busy, and the traced
    flow's window (min and mean) while it had data in flight."""
    failed = s.get("failed_links", [])
    bad_tors = {int(l.split("-")[0][3:]) for l in failed}
    per_tor = s["hosts"] // (s["switches"] * 2 // 3)  # leaf-spine K: K ToRs, K/2 spines, K/2 hosts per ToR
    groups = {}
    with open(os.path.join(run_dir, "flows.csv")) as f:
        for fl in csv.DictReader(f):
            src, dst = int(fl["src"]) // per_tor in bad_tors, int(fl["dst"]) // per_tor in bad_tors
            g = "both" if src and dst else "src" if src else "dst" if dst else "neither"
            groups.setdefault(g, []).append(float(fl["fct_us"]))
    fct = {g: {"flows": len(v), "max": max(v), "p50": sorted(v)[len(v) // 2]} for g, v in groups.items()}
    ports = {}
    with open(os.path.join(run_dir, "port_trace.csv")) as f:
        for p in csv.DictReader(f):
            ports.setdefault(p["link"], []).append(int(p["queue_bytes"]))
    queue = {l: {"mean_busy_bytes": sum(q for q in v if q) / max(1, sum(1 for q in v if q)), "max_bytes": max(v)} for l, v in ports.items()}
    cw = []
    with open(os.path.join(run_dir, "trace.csv")) as f:
        cw = [int(c["cwnd_bytes"]) for c in csv.DictReader(f) if int(c["in_flight_bytes"]) > 0]
    window = {"min_bytes": min(cw), "mean_bytes": sum(cw) / len(cw)} if cw else None
    return {"failed_links": failed, "fct_by_group": fct, "queue": queue, "flow135_cwnd": window}


def describe(r):
    return f"max FCT {r['fct_us']['max']} us, completion {r['completion_us']} us"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("targets", nargs="*")
    ap.add_argument("--quick", action="store_true", help="small fabrics and sizes, a smoke test")
    ap.add_argument("--max-bytes", default="100MiB", help="skip permutation/incast sizes above this")
    fabricsim.add_sweep_arguments(ap, jobs=1)
    a = ap.parse_args()
    t = targets(a.quick, nbytes(a.max_bytes))
    results = os.path.join(OUT, "quick-results") if a.quick else RESULTS
    for name in a.targets or list(t):
        print(f"{name}:", flush=True)
        fabricsim.sweep({"scenarios": dict(t[name])}, errors="record", run_dirs=os.path.join(OUT, name), row=row,
                        describe=describe, results=os.path.join(results, f"{name}.json"), **fabricsim.sweep_options(a))


if __name__ == "__main__":
    sys.exit(main())
