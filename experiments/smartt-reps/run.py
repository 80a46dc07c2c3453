#!/usr/bin/env python3
"""Reproduction runs of the SMaRTT-REPS paper (shared/specs/smartt-reps.md §7: targets A1, A3, T1-T21, T7 and T8 from scenarios/; A4 is a test, A2 was not run: RESULTS.md).

Usage (with a Python that has the fabricsim package: `pip install ./python`):
    experiments/smartt-reps/run.py [TARGET ...] [--jobs N] [--quick] [--only REGEX] [--timeout-s S]
                                   [--backend local|ray] [--address ADDR] [--quiet]

Each target is a sweep of named fabricsim runs (a scenario written out as TOML) through
`fabricsim.sweep`: each run's files go to out/<TARGET>/<run>/, its row to results/<TARGET>.json
as it finishes, so an interrupted sweep keeps what it did and a rerun only does what is missing
(rows with an `error` run again). `report.py` turns the JSON files into tables, plots and the
numbers quoted in RESULTS.md. `--quick` shrinks fabrics and sizes for a smoke test (its rows go
to out/quick-results/). `peak_rss_mb` includes the sweep worker's Python (about 60 MB).

Fabric (spec §5.1): 3-tier fat tree, k = 16 (1024 hosts), 800 Gb/s links, 600 ns per link,
400 ns per switch, 4 KiB MTU (64 B header), 1-BDP queues with RED 20-80 %, trimming on;
oversubscription at the aggregation->core tier. Schemes (spec §5.3): every CC runs over REPS.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "out")
RESULTS = os.path.join(HERE, "results")

# Scheme name -> transport settings (spec §5.3: every CC over REPS, trimming on).
SCHEMES = {
    "smartt": {"cc": "smartt"},
    "eqds": {"cc": "line_rate", "credit": "eqds"},
    "swift": {"cc": "swift"},
    "bbr": {"cc": "bbr"},
    "mprdma": {"cc": "mprdma"},
    "eqds+smartt": {"cc": "smartt", "credit": "eqds"},
    "eqds+mprdma": {"cc": "mprdma", "credit": "eqds"},
    "ecn_only": {"cc": "smartt", "cc_params": {"signals": "ecn_only"}},
    "rtt_only": {"cc": "smartt", "cc_params": {"signals": "rtt_only"}},
}
FIVE = ["smartt", "eqds", "swift", "bbr", "mprdma"]


def toml_value(v):
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, str):
        return f'"{v}"'
    return str(v)


def fabric(k=16, os_ratio=1, trimming=True, switch_extra="", gbps=800, link_ns=600, switch_ns=400):
    tier = f'\noversubscription = "{os_ratio}:1"\noversubscribed_tier = "agg"' if os_ratio > 1 else ""
    return f"""[topology]
kind = "fat_tree"
k = {k}{tier}
link_rate_gbps = {gbps}
link_latency_ns = {link_ns}
switch_latency_ns = {switch_ns}

[switch]
buffer_bdp = 1.0
ecn_kmin = 0.2
ecn_kmax = 0.8
trimming = {str(trimming).lower()}
{switch_extra}"""


def scenario(name, scheme, workload, seed=1, k=16, os_ratio=1, trimming=True, lb="reps", cc_params=None, transport=None, run_extra="", switch_extra="", **link):
    """A scenario: `scheme` names a SCHEMES entry; `cc_params` adds controller parameters;
    `transport` adds plain [transport] keys (e.g. rto_us)."""
    sch = dict(SCHEMES[scheme])
    params = dict(sch.get("cc_params", {}))
    params.update(cc_params or {})
    lines = [f'lb = "{lb}"']
    if "credit" in sch:
        lines.append(f'credit = "{sch["credit"]}"')
    for key, v in (transport or {}).items():
        lines.append(f"{key} = {toml_value(v)}")
    lines.append("[transport.cc]")
    lines.append(f'name = "{sch["cc"]}"')
    lines += [f"{key} = {toml_value(v)}" for key, v in params.items()]
    tr = "\n".join(lines)
    return f"""name = "{name}"
seed = {seed}
{fabric(k, os_ratio, trimming, switch_extra, **link)}
[transport]
{tr}

[workload]
{workload}

[run]
{run_extra}
"""


MTU, PAYLOAD, GBPS = 4096, 4032, 800.0
# A1's flow list (one 32 MiB flow from the first host to the last), written by `main`.
ONE_FLOW = os.path.join(OUT, "A1", "smartt", "one_flow.csv")


def nbytes(size):
    units = {"KiB": 1 << 10, "MiB": 1 << 20}
    for u, f in units.items():
        if size.endswith(u):
            return int(size[: -len(u)]) * f
    return int(size)


def wire_us(size_bytes, gbps=GBPS):
    """Serialization of `size_bytes` of payload with headers (S_w = S·MTU/payload)."""
    return size_bytes * MTU / PAYLOAD * 8 / (gbps * 1e3)


def ideals(target):
    """Run id -> the paper's ideal completion (spec §5.4) as a function of the base RTT (µs)."""
    out = {}
    for rid, _, f in targets(False).get(target, []):
        out[rid] = f
    return out


def perm(size, m=1, large=None, cross_pod=True):
    w = f'kind = "permutation"\nflow_bytes = "{size}"\npermutations = {m}'
    if cross_pod:
        w += '\nlocality = "cross_pod"'
    if large:
        w += f'\nlarge_flows = 1\nlarge_flow_bytes = "{large}"'
    return w


def incast(n, size, receiver=5):
    return f'kind = "incast"\nsenders = {n}\nreceiver = {receiver}\nflow_bytes = "{size}"'


def targets(quick):
    """Target -> [(run id, scenario TOML, ideal(brtt_us) -> µs or None)]."""
    k = 8 if quick else 16
    big = "8MiB" if quick else "32MiB"
    huge = "16MiB" if quick else "64MiB"
    notrim = {"trimming": False}
    no_trim_cc = {"qa_on_timeout": True}
    # Without trimming, losses are found by the retransmission timer: 3 x base RTT (spec §2.11).
    no_trim_tr = {"rto_us": 30}

    def p_ideal(size, os_ratio, m=1, gbps=GBPS):
        return lambda brtt: brtt + m * wire_us(nbytes(size), gbps / os_ratio)

    def i_ideal(n, size, gbps=GBPS):
        return lambda brtt: brtt + n * wire_us(nbytes(size), gbps)

    def uneven_ideal(small, large, os_ratio):
        t1 = wire_us(nbytes(small), GBPS / os_ratio)
        return lambda brtt: brtt + t1 + wire_us(nbytes(large) - nbytes(small))

    t = {}
    t["A1"] = [("smartt", scenario("A1", "smartt", f'kind = "flow_list"\nfile = {json.dumps(ONE_FLOW)}', k=k), lambda brtt: brtt + wire_us(32 << 20))]
    t["T1"] = [(s, scenario("T1", s, incast(8, "8MiB"), k=k, run_extra="trace_interval_us = 1.0\ntrace_conns = [0,1,2,3,4,5,6,7]"), i_ideal(8, "8MiB"))
               for s in ["smartt", "ecn_only", "rtt_only"]]
    t["T3"] = [(f"every{n}", scenario("T3", "smartt", incast(8, "8MiB"), k=k, cc_params={"react_every": n}), i_ideal(8, "8MiB")) for n in [1, 2, 5, 10, 25, 50]]
    t["T4"] = [(f"{sz}-wtd{w}", scenario("T4", "smartt", perm(sz), k=k, cc_params={"wtd": w}), p_ideal(sz, 1)) for sz in ["2MiB", big] for w in [True, False]]
    t["T5"] = [(f"os{o}-{lb}", scenario("T5", "smartt", perm(big), k=k, os_ratio=o, lb=lb), p_ideal(big, o)) for o in [4, 8] for lb in ["reps", "spray", "plb", "ecmp"]]
    t["T6"] = [(f"swift-{lb}", scenario("T6", "swift", perm(big), k=k, os_ratio=8, lb=lb), p_ideal(big, 8)) for lb in ["reps", "spray", "plb"]]
    t["T9"] = [("trim", scenario("T9", "smartt", incast(16, "512KiB"), k=k), i_ideal(16, "512KiB")),
               ("notrim", scenario("T9", "smartt", incast(16, "512KiB"), k=k, cc_params=no_trim_cc, transport=no_trim_tr, **notrim), i_ideal(16, "512KiB"))]
    # T9 at the spec's RTO (3 x its 11.47 µs base RTT, spec §2.11) and around it (issue 44:
    # the 30 µs above is the driver's rounding).
    t["T9rto"] = [(f"notrim-rto{r}", scenario("T9rto", "smartt", incast(16, "512KiB"), k=k, cc_params=no_trim_cc, transport={"rto_us": r}, **notrim), i_ideal(16, "512KiB"))
                  for r in [22.9, 30, 34.4, 45.9, 68.8]]
    t["T10"] = []
    for wl_name, wl, o, ideal in [("perm2M-4", perm("2MiB"), 4, p_ideal("2MiB", 4)), ("perm2M-8", perm("2MiB"), 8, p_ideal("2MiB", 8)),
                                  (f"perm{big}-8", perm(big), 8, p_ideal(big, 8)), ("inc8-512K", incast(8, "512KiB"), 1, i_ideal(8, "512KiB")),
                                  ("inc16-2M", incast(16, "2MiB"), 1, i_ideal(16, "2MiB")), ("inc32-8M", incast(32, "8MiB"), 1, i_ideal(32, "8MiB"))]:
        t["T10"].append((f"{wl_name}-trim", scenario("T10", "smartt", wl, k=k, os_ratio=o), ideal))
        t["T10"].append((f"{wl_name}-notrim", scenario("T10", "smartt", wl, k=k, os_ratio=o, cc_params=no_trim_cc, transport=no_trim_tr, **notrim), ideal))
        # T10md (issue 44): the same without trimming but with the trimming runs' md, which
        # separates the cost of detecting losses by timeout from the doubled md (paper §3.3)
        # the no-trimming runs also get.
        t.setdefault("T10md", []).append((f"{wl_name}-notrim-md2", scenario("T10md", "smartt", wl, k=k, os_ratio=o, cc_params=dict(no_trim_cc, timeout_md=2.0), transport=no_trim_tr, **notrim), ideal))
    # T7 and T8 (Fig. 11, 13): the testbeds as scenario files (their comments say what is
    # assumed), with REPS as written and with oblivious spraying.
    for target, file in [("T7", "t7_tb16.toml"), ("T8", "t8_tb128.toml")]:
        text = open(os.path.join(HERE, "scenarios", file)).read()
        t[target] = [(lb, text.replace('lb = "reps"', f'lb = "{lb}"'), None) for lb in ["reps", "spray"]]
    sizes = ["4KiB", "64KiB", "256KiB", "512KiB", "1MiB", "2MiB", "8MiB"] + ([] if quick else ["32MiB"])
    # BBR ignores trims, so from 1 MiB its 100 senders keep the receiver's link busy with trimmed
    # headers alone (≈ 1.5× its rate): under strict priority no data gets through and the run
    # never ends. Those points run in T11w with the spec's alternative switch (WRR 20:1).
    starves = lambda s, n, sz: s == "bbr" and n == 100 and nbytes(sz) >= 1 << 20
    t["T11"] = [(f"{s}-n{n}-{sz}", scenario("T11", s, incast(n, sz), k=k), i_ideal(n, sz)) for s in FIVE for n in [8, 32, 100] for sz in sizes if not starves(s, n, sz)]
    wrr = "control_wrr_weight = 20"
    t["T11w"] = [(f"{s}-n100-{sz}", scenario("T11w", s, incast(100, sz), k=k, switch_extra=wrr), i_ideal(100, sz)) for s in ["smartt", "bbr"] for sz in sizes]
    t["T12"] = [(s, scenario("T12", s, perm("2MiB"), k=k, os_ratio=8), p_ideal("2MiB", 8)) for s in FIVE]
    t["T13"] = [(s, scenario("T13", s, perm(big), k=k, os_ratio=8), p_ideal(big, 8)) for s in FIVE]
    t["T14"] = [(f"os{o}-{sz}-{s}", scenario("T14", s, perm(sz), k=k, os_ratio=o), p_ideal(sz, o)) for o in [2, 4] for sz in ["2MiB", big] for s in FIVE]
    t["T15"] = [(f"m{m}-{s}", scenario("T15", s, perm("2MiB", m=m), k=k, os_ratio=8), p_ideal("2MiB", 8, m)) for m in [2, 4, 8] for s in FIVE]
    t["T16"] = [(s, scenario("T16", s, perm("2MiB", large="4MiB"), k=k, os_ratio=8), uneven_ideal("2MiB", "4MiB", 8)) for s in FIVE]
    # FT128 at 4:1, 16 hosts per pod, 112 destinations outside the pod (spec §5.4).
    a2a_ideal = lambda brtt: brtt + max(127, 112 * 4) * wire_us(512 << 10)
    t["T18"] = [(f"k{w}-{s}", scenario("T18", s, f'kind = "all_to_all"\nflow_bytes = "512KiB"\nmax_concurrent = {w}', k=8, os_ratio=4), a2a_ideal)
                for w in [1, 2, 4, 8, 16] for s in FIVE]
    t["T19"] = [(s, scenario("T19", s, perm("2MiB"), k=k, os_ratio=8), p_ideal("2MiB", 8)) for s in ["eqds", "eqds+mprdma", "eqds+smartt", "smartt"]]
    # T19 over seeds 1-5 (issue 44: seed 1's order of the two EQDS variants reverses on seed 3).
    t["T19seeds"] = [(f"s{n}-{s}", scenario("T19", s, perm("2MiB"), seed=n, k=k, os_ratio=8), p_ideal("2MiB", 8))
                     for n in [2, 3, 4, 5] for s in ["eqds", "eqds+mprdma", "eqds+smartt", "smartt"]]
    t["T20"] = [(s, scenario("T20", s, perm(big, large=huge), k=k, os_ratio=8), uneven_ideal(big, huge, 8)) for s in ["eqds", "eqds+mprdma", "eqds+smartt", "smartt"]]
    # Robustness checks of spec §7 part C (not in the paper's figures). C1: T9 and T12 with
    # 700 ns links and no switch latency (base RTT ≈ 8.6 µs, §4.2's number). C2: the reference
    # network SMaRTT's constants were tuned on (100 Gb/s, ≈ 12 µs base RTT: 500 ns links, 400 ns
    # switches), where its bandwidth scaling is 1. C3: SMaRTT incasts of 200 and 400 senders.
    fast = {"link_ns": 700, "switch_ns": 0}
    t["C1"] = [(f"T9-{v}", scenario("C1", "smartt", incast(16, "512KiB"), k=k, **extra, **fast), i_ideal(16, "512KiB"))
               for v, extra in [("trim", {}), ("notrim", {"cc_params": no_trim_cc, "transport": no_trim_tr, **notrim})]]
    t["C1"] += [(f"T12-{s}", scenario("C1", s, perm("2MiB"), k=k, os_ratio=8, **fast), p_ideal("2MiB", 8)) for s in FIVE]
    ref = {"gbps": 100, "link_ns": 500, "switch_ns": 400}
    t["C2"] = [(f"T12-{s}", scenario("C2", s, perm("2MiB"), k=k, os_ratio=8, **ref), p_ideal("2MiB", 8, gbps=100)) for s in FIVE]
    t["C2"] += [(f"T9-{s}", scenario("C2", s, incast(16, "512KiB"), k=k, **ref), i_ideal(16, "512KiB", gbps=100)) for s in FIVE]
    t["C3"] = [(f"n{n}-512KiB", scenario("C3", "smartt", incast(n, "512KiB"), k=k), i_ideal(n, "512KiB")) for n in [100, 200, 400]]
    return t


def flow_gbps(run_dir):
    """Min / mean / max of the flows' goodput (payload bytes over FCT) in Gb/s, from flows.csv."""
    import csv

    path = os.path.join(run_dir or "", "flows.csv")
    if not run_dir or not os.path.exists(path):
        return None
    rates = [int(f["bytes"]) * 8 / (float(f["fct_us"]) * 1e3) for f in csv.DictReader(open(path)) if f["fct_us"] not in ("", "0")]
    return {"min": min(rates), "mean": sum(rates) / len(rates), "max": max(rates)} if rates else None


def row(s, run_id, wall, run_dir):
    """The results row of one run's summary."""
    return {
        "run": run_id,
        "wall_s": round(wall, 2),
        "completion_us": s["completion_time_us"],
        "ideal_us": s["ideal_completion_time_us"],
        "base_rtt_us": s["base_rtt_us"],
        "bdp_bytes": s["bdp_bytes"],
        "fct_us": s["fct_us"],
        "ack_rtt_us": s["ack_rtt_us"],
        "packets": s["packets"],
        "duplicates": s["duplicate_data_packets"],
        "flows_finished": s["flows_finished"],
        "flows": s["flows"],
        "invariants": s["invariant_violations"],
        "peak_rss_mb": (s["performance"]["peak_rss_bytes"] or 0) / 1e6,
        "flow_gbps": flow_gbps(run_dir),
    }


def main():
    import fabricsim  # here, not at the top: report.py imports this file for `ideals` alone

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("targets", nargs="*")
    ap.add_argument("--quick", action="store_true", help="small fabrics and sizes, a smoke test")
    fabricsim.add_sweep_arguments(ap, jobs=2)
    a = ap.parse_args()
    os.makedirs(os.path.dirname(ONE_FLOW), exist_ok=True)
    with open(ONE_FLOW, "w") as f:
        f.write(f"src,dst,bytes,start_us\n0,{(8 if a.quick else 16) ** 3 // 4 - 1},33554432,0\n")
    all_t = targets(a.quick)
    results = os.path.join(OUT, "quick-results") if a.quick else RESULTS
    for name in a.targets or list(all_t):
        print(f"{name}:", flush=True)
        fabricsim.sweep({"scenarios": {rid: toml for rid, toml, _ in all_t[name]}}, errors="record", run_dirs=os.path.join(OUT, name),
                        row=row, results=os.path.join(results, f"{name}.json"), **fabricsim.sweep_options(a))


if __name__ == "__main__":
    sys.exit(main())
