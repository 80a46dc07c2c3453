#!/usr/bin/env python3
"""Reproduction runs of "Load Balancing for AI Training Workloads" (McClure et al., arXiv 2507.21372).

Usage (with a Python that has the fabricsim package: `pip install ./python`):
    experiments/lb-ai-training/run.py [TARGET ...] [--seeds N] [--first-seed S] [--jobs N] [--quick] [--only REGEX]
                                      [--timeout-s S] [--backend local|ray] [--address ADDR] [--quiet]

Targets E1-E15 follow the paper's experiments (Fig. 1-12, §3.1, §5, §6, §7) as the
reproduction plan numbers them; T0 runs the single-flow sanity check of every load-balancing ×
loss-recovery pair. Each run is one scenario and one seed, and each target a sweep of named runs through
`fabricsim.sweep` (files in out/<TARGET>/<run>/): a run's summary becomes a row of
results/<TARGET>.json as soon as it finishes, so an interrupted sweep keeps what it did and a
rerun (e.g. with more seeds) only does what is missing. `report.py` turns the rows into the
mean ± std / min / max tables, plots and the numbers RESULTS.md quotes. `--quick` runs a few
small runs of each target, its rows going to out/quick-results/.

Fabric (paper §4, §5): 3-tier fat tree, k = 8 (128 hosts, 8 pods, 16 cores), 100 Gb/s links of
1 µs, no switch latency, 4096 B packets (64 B headers, 64 B ACKs), Q = 32 KiB per port
(8 packets), ECN step at 0.6·Q at dequeue (only host flowlets read it). Workloads (paper §5):
all-to-all and m concurrent permutations (m relabelled shifts), 500-packet messages
(2,016,000 B of payload = 500 × 4096 B on the wire), all starting together. Hosts pace each
flow at c·B_link/F (`cc = "pacer"`), start U(0, P/r).
"""
import argparse
import functools
import os
import sys

import fabricsim

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "out")
RESULTS = os.path.join(HERE, "results")

PKTS, MTU, HEADER = 500, 4096, 64
MSG_BYTES = PKTS * (MTU - HEADER)  # 2,016,000 B of payload per flow
HOSTS = 128


def cct_opt_us(flows_per_host, gbps=100):
    """The paper's normalisation constant (§5.3): a host's messages at line rate."""
    return flows_per_host * PKTS * MTU * 8 / (gbps * 1e3)


# Load-balancing schemes (paper §2.1, Fig. 3): name -> (host path selection, switch path selection).
LB = {
    "ecmp": ('"ecmp"', "ecmp"),
    "ecmp_sub2": ('{ name = "ecmp_subflows", subflows = 2 }', "ecmp"),
    "spray": ('"spray"', "ecmp"),
    "srr": ('"ecmp"', "round_robin"),
    "sar_pkt": ('"ecmp"', "adaptive_packet"),
    "sar_flowlet": ('"ecmp"', "flowlet"),
    "sar_ecmp": ('"ecmp"', "adaptive_ecmp"),
    "hflowlet": ('"host_flowlet"', "ecmp"),
}
# LB-HADAPT is the paper's alias of host spraying (§2.1): its runs are the `spray` runs.
ALL_LB = list(LB)

# Loss recovery (paper §2.3, §6, §7): name -> ([transport.reliability] lines, [switch] lines, [switch.pfc] lines).
NO_TRIM = ["trimming = false", 'control_lane = "separate"', "control_lane_factor = 1.0"]
TRIM = ["trimming = true", 'control_lane = "shared"']
PFC = ["enabled = true", 'threshold = "static"', 'xoff_bytes = "32KiB"', 'resume_offset_bytes = "4KiB"']
LR = {
    "code0": (['name = "code"', "epsilon = 0.0"], NO_TRIM, []),
    "code5": (['name = "code"', "epsilon = 0.05"], NO_TRIM, []),
    "tcp": (['name = "tcp"'], NO_TRIM, []),
    "tcp_dinf": (['name = "tcp"', "fast_retransmit = false"], NO_TRIM, []),
    "trim": (['name = "trim"'], TRIM, []),
    "trim_rts": (['name = "trim"'], TRIM + ['trimmed_headers = "to_sender"'], []),
    "roce": (['name = "go_back_n"', 'nack_repeat = "base_rtt"'], NO_TRIM, PFC),
    # E2's Swift (spec §2.2 CC-SWIFT: htsim's Swift model): RTO at least 100 µs, and an expiry
    # resends from snd_una on (htsim's Swift rewinds its highest sent sequence to the last ACK).
    "tcp_swift": (['name = "tcp"', 'on_rto = "go_back_n"', "rto_min_us = 100.0"], NO_TRIM, []),
    "subtcp3": (['name = "subflow_tcp"', "d = 3"], NO_TRIM, []),
    "subtcp6": (['name = "subflow_tcp"', "d = 6"], NO_TRIM, []),
    # T13's d sweep (spec: d in {3, 6, 9, 12}, S recomputed by Eq. 1): E13 only.
    "subtcp9": (['name = "subflow_tcp"', "d = 9"], NO_TRIM, []),
    "subtcp12": (['name = "subflow_tcp"', "d = 12"], NO_TRIM, []),
    # Sensitivity (S2): htsim's header lane of 2·Q of its own; trimming without desync.
    "trim_lane2q": (['name = "trim"'], ["trimming = true", 'control_lane = "separate"', "control_lane_factor = 2.0"], []),
    "trim_nodesync": (['name = "trim"', 'desync = "none"'], TRIM, []),
    # Sensitivity (S3): the spec's alternative desync rule, and resends outside the pacing
    # schedule (the reading of §6.2's Fig. 8 explanation) with the phase rule, the U(0, base RTT)
    # delay or no desync.
    "trim_elig": (['name = "trim"', 'desync = "eligibility"'], TRIM, []),
    "trim_atonce": (['name = "trim"', 'resend = "at_once"'], TRIM, []),
    "trim_atonce_elig": (['name = "trim"', 'resend = "at_once"', 'desync = "eligibility"'], TRIM, []),
    "trim_atonce_nodesync": (['name = "trim"', 'resend = "at_once"', 'desync = "none"'], TRIM, []),
}
FIVE_LR = ["tcp", "roce", "trim", "trim_rts", "code5"]
SUB_LR = ["subtcp3", "subtcp6", "tcp", "trim", "trim_rts", "code5"]
C_GRID = [0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0]
C_BEST = [0.7, 0.85, 1.0]  # the grid around the best c for the runs with a second swept axis
FAILURES = [(2, 0.9), (3, 0.6), (4, 0.45), (6, 0.3), (9, 0.2)]  # f·p = 1.8, f maximal (paper Fig. 4)

# Swift as the paper's comparison runs it (htsim's constants, spec §2.2 CC-SWIFT).
SWIFT = ['name = "swift"', "base_target_us = 20.0", "h_us = 3.05", "flow_scaling = true", "min_cwnd_pkts = 0.001", "max_cwnd_pkts = 1000.0", "retx_reset_threshold = 5"]


def ata():
    return f'kind = "all_to_all"\nflow_bytes = {MSG_BYTES}', HOSTS - 1


def perm(m):
    if m == HOSTS - 1:
        return ata()
    return f'kind = "permutation"\nmethod = "shifts"\npermutations = {m}\nflow_bytes = {MSG_BYTES}', m


def scenario(name, seed, lb="spray", lr="code0", c=1.0, workload=None, q="32KiB", gbps=100, failure=None, cc=None, jitter=0.0):
    """One run's TOML. `failure` is (f, p) partial LAG loss, or "flaky"."""
    host_lb, switch_lb = LB[lb]
    rel, switch_lines, pfc = LR[lr]
    wl, _ = workload or ata()
    cc_lines = cc or ['name = "pacer"', f"rate_coefficient = {c}"] + ([f"gap_jitter = {jitter}"] if jitter else [])
    fail = ""
    if failure == "flaky":
        fail = '\n[topology.failures]\nkind = "flaky"\nf = 2\nburst_gap_us = 100\nburst_len_us = 10'
    elif failure:
        fail = f'\n[topology.failures]\nkind = "partial_lag"\nf = {failure[0]}\np = {failure[1]}'
    pfc_table = ("\n[switch.pfc]\n" + "\n".join(pfc)) if pfc else ""
    # Under PFC the ingress thresholds keep the fabric lossless; the egress queue is not the limit.
    buffer = '"1MiB"' if pfc else f'"{q}"'
    return f"""name = "lb-ai-training {name}"
seed = {seed}

[topology]
kind = "fat_tree"
k = 8
link_rate_gbps = {gbps}
link_latency_ns = 1000
switch_latency_ns = 0{fail}

[switch]
buffer_bytes = {buffer}
ecn_kmin = 0.6
ecn_kmax = 0.6
ecn_pmax = 1.0
ecn_mark_at = "dequeue"
lb = "{switch_lb}"
{chr(10).join(switch_lines)}{pfc_table}

[transport]
mtu_bytes = {MTU}
header_bytes = {HEADER}
ack_bytes = 64
lb = {host_lb}

[transport.reliability]
{chr(10).join(rel)}

[transport.cc]
{chr(10).join(cc_lines)}

[workload]
{wl}
"""


def targets(seeds, first_seed=1):
    """Target -> [(run id, TOML, meta)]: meta holds the configuration and CCT_opt."""
    t = {}
    ss = range(first_seed, first_seed + seeds)

    def add(target, cfg, seed, **kw):
        workload = kw.get("workload") or ata()
        meta = dict(cfg, seed=seed, cct_opt_us=cct_opt_us(workload[1], kw.get("gbps", 100)))
        rid = "-".join(f"{v}" for v in cfg.values()) + f"-s{seed}"
        t.setdefault(target, []).append((rid, scenario(f"{target} {rid}", seed, **kw), meta))

    # T0: one flow (host 0 -> host 127) on an idle fabric, every LB x LR pair, norm. CCT -> 1.
    one = (f'kind = "incast"\nsender_hosts = [0]\nreceiver = {HOSTS - 1}\nflow_bytes = {MSG_BYTES}', 1)
    for lb in ALL_LB:
        for lr in LR:
            add("T0", {"lb": lb, "lr": lr}, 1, lb=lb, lr=lr, workload=one, c=1.0)
    for s in ss:
        # E1 (Fig. 1/2): host rate swept, ECMP vs spraying, ideal coding. c = 1 is E3's run.
        for lb in ["ecmp", "spray"]:
            for c in [0.5, 0.6, 0.7, 0.8, 0.9, 0.95]:
                add("E1", {"lb": lb, "c": c}, s, lb=lb, c=c)
        # E3 + E4 (Fig. 3): every LB scheme, all-to-all, no failures, c = 1.
        for lb in ALL_LB:
            add("E3", {"lb": lb}, s, lb=lb)
        # E5 (Fig. 4): static partial LAG loss, f·p = 1.8 (not the bottleneck, Eq. 2).
        for f in FAILURES:
            for lb in ALL_LB:
                add("E5", {"f": f[0], "p": f[1], "lb": lb}, s, lb=lb, failure=f)
        # E6 (Fig. 5): (3, 0.9), the damaged uplinks are the bottleneck.
        for lb in ALL_LB:
            add("E6", {"lb": lb}, s, lb=lb, failure=(3, 0.9))
        # E7 (Fig. 6): m concurrent permutations (m = 127 is the all-to-all of E3).
        for m in [1, 2, 4, 8, 16, 32, 64]:
            for lb in ALL_LB:
                add("E7", {"m": m, "lb": lb}, s, lb=lb, workload=perm(m))
        # E8 (Fig. 7, Table 2): 400 KB buffers, all-to-all and one permutation.
        for wl, w in [("ata", ata()), ("perm1", perm(1))]:
            for lb in ALL_LB:
                add("E8", {"wl": wl, "lb": lb}, s, lb=lb, workload=w, q="400KB")
        # E2 (§3.1): Swift (TCP-like recovery) vs the fixed-rate pacer, spraying.
        for wl, w in [("ata", ata()), ("perm1", perm(1))]:
            for q in ["32KiB", "400KB"]:
                init = 1.0 / w[1]
                add("E2", {"wl": wl, "q": q, "cc": "swift"}, s, lb="spray", lr="tcp_swift", workload=w, q=q, cc=SWIFT + [f"init_cwnd_bdp = {init}"])
                add("E2", {"wl": wl, "q": q, "cc": "fixed"}, s, lb="spray", lr="code0", workload=w, q=q)
        # E9 (Fig. 8): loss recovery vs c, all-to-all.
        for lr in FIVE_LR:
            for c in C_GRID:
                add("E9", {"lr": lr, "c": c}, s, lr=lr, c=c)
        # E10 (Fig. 9): loss recovery vs flows per host (m = 127 is E9).
        for m in [1, 2, 4, 8, 16, 32, 64]:
            for lr in FIVE_LR + ["tcp_dinf"]:
                for c in C_BEST:
                    add("E10", {"m": m, "lr": lr, "c": c}, s, lr=lr, c=c, workload=perm(m))
        # E11 (Fig. 10): loss recovery under a static failure and under flaky links.
        for fail in [(2, 0.9), "flaky"]:
            for lr in FIVE_LR:
                for c in C_BEST:
                    fname = "flaky" if fail == "flaky" else "lag2x0.9"
                    add("E11", {"fail": fname, "lr": lr, "c": c}, s, lr=lr, c=c, failure=fail)
        # E12 (§6): loss recovery with 400 KB buffers.
        for lr in FIVE_LR:
            for c in [0.9, 0.95, 1.0]:
                add("E12", {"lr": lr, "c": c}, s, lr=lr, c=c, q="400KB")
        # E13 (Fig. 11): subflow TCP vs the others, few flows per host.
        for m in [1, 2, 4, 8, 16]:
            for lr in SUB_LR + ["subtcp9", "subtcp12"]:
                for c in C_BEST:
                    add("E13", {"m": m, "lr": lr, "c": c}, s, lr=lr, c=c, workload=perm(m))
        # E14 (Fig. 12): the same under the (2, 0.9) failure, one permutation.
        for lr in SUB_LR:
            for c in C_BEST:
                add("E14", {"lr": lr, "c": c}, s, lr=lr, c=c, workload=perm(1), failure=(2, 0.9))
        # S1 (ours, spec §8): how much hinges on exactly periodic pacing (gap jitter) and on
        # the buffer size the paper's copy lost (Q).
        for lb in ["ecmp", "spray", "srr", "sar_pkt"]:
            for c in [0.5, 0.8, 1.0]:
                # Without jitter these are E1's and E3's runs.
                if c == 1.0 or lb in ("ecmp", "spray"):
                    add("S1", {"lb": lb, "c": c, "jitter": 0.1, "q": "32KiB"}, s, lb=lb, c=c, jitter=0.1)
            add("S1", {"lb": lb, "c": 1.0, "jitter": 0.0, "q": "64KiB"}, s, lb=lb, q="64KiB")
        # S2 (ours, spec §8.5): the trimming buffer model and the desync rule at full scale.
        for lr in ["trim_lane2q", "trim_nodesync"]:
            for c in [0.85, 1.0]:
                add("S2", {"lr": lr, "c": c}, s, lr=lr, c=c)
        # S3 (ours, issue 44's trimming investigation): the other desync rules, and resends that
        # go at once, outside the pacing schedule, on T9's grid and on T11's and T14's static
        # failure (LR-TRIM with next_slot and phase is E9-E14's `trim`).
        for lr in ["trim_elig", "trim_atonce", "trim_atonce_elig", "trim_atonce_nodesync"]:
            for c in C_GRID:
                add("S3", {"wl": "ata", "fail": "none", "lr": lr, "c": c}, s, lr=lr, c=c)
            for c in C_BEST:
                add("S3", {"wl": "ata", "fail": "lag2x0.9", "lr": lr, "c": c}, s, lr=lr, c=c, failure=(2, 0.9))
                add("S3", {"wl": "perm1", "fail": "none", "lr": lr, "c": c}, s, lr=lr, c=c, workload=perm(1))
                add("S3", {"wl": "perm1", "fail": "lag2x0.9", "lr": lr, "c": c}, s, lr=lr, c=c, workload=perm(1), failure=(2, 0.9))
        # E15 (§7): 400 Gb/s links, one permutation.
        for lr in SUB_LR:
            for c in C_BEST:
                add("E15", {"lr": lr, "c": c}, s, lr=lr, c=c, workload=perm(1), gbps=400)
    return t


def row(metas, s, run_id, wall, run_dir):
    """The results row of one run's summary, with its configuration (`metas[run_id]`) first."""
    meta = metas[run_id]
    pk = s["packets"]
    r = dict(meta)
    r.update({
        "run": run_id,
        "wall_s": round(wall, 2),
        "completion_us": s["completion_time_us"],
        "norm_cct": s["completion_time_us"] / meta["cct_opt_us"],
        "ideal_us": s["ideal_completion_time_us"],
        "flows": s["flows"],
        "flows_finished": s["flows_finished"],
        "stalled_since_us": s.get("stalled_since_us"),
        "loss": s["loss"],
        "data_sent": pk["data_sent"],
        "retransmitted": pk["retransmitted"],
        "dropped": pk["dropped"],
        "trimmed": pk["trimmed"],
        "nacks": pk["nacks"],
        "seq_nacks": pk["seq_nacks"],
        "timeouts": pk["timeouts"],
        "fast_retransmits": pk["fast_retransmits"],
        "duplicates": s["duplicate_data_packets"],
        "wire_losses": pk.get("wire_losses"),
        "reroutes_per_packet": (s.get("reroutes_per_packet") or {}).get("mean"),
        "pfc_paused_us": (s.get("pfc") or {}).get("paused_time_us"),
        "queues_by_tier": s.get("queues_by_tier"),
        "fct_us": s["fct_us"],
        "invariants": s["invariant_violations"],
        "events": s["events"],
    })
    return r


def describe(r):
    return f"norm CCT {r['norm_cct']:.3f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("targets", nargs="*")
    ap.add_argument("--quick", action="store_true", help="small fabrics and sizes, a smoke test")
    fabricsim.add_sweep_arguments(ap, jobs=1)
    ap.add_argument("--seeds", type=int, default=10, help="seeds per configuration (paper: 10)")
    ap.add_argument("--first-seed", type=int, default=1)
    a = ap.parse_args()
    all_t = targets(1 if a.quick else a.seeds, a.first_seed)
    if a.quick:
        # Smoke test: one seed of a few small runs of each target.
        all_t = {k: [r for r in v if "ata" not in r[1] and "all_to_all" not in r[1]][:3] or v[:0] for k, v in all_t.items()}
    results = os.path.join(OUT, "quick-results") if a.quick else RESULTS
    for name in a.targets or list(all_t):
        print(f"{name}:", flush=True)
        # The row function goes to the workers, so it takes the target's configurations along.
        metas = {rid: meta for rid, _, meta in all_t[name]}
        fabricsim.sweep({"scenarios": {rid: toml for rid, toml, _ in all_t[name]}}, errors="record", run_dirs=os.path.join(OUT, name),
                        row=functools.partial(row, metas), describe=describe, results=os.path.join(results, f"{name}.json"),
                        **fabricsim.sweep_options(a))


if __name__ == "__main__":
    sys.exit(main())
