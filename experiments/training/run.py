#!/usr/bin/env python3
"""Training steps on AI-cluster fabrics (issue 47): one iteration of a GPT-3-175B-like and of a
Llama-2-70B-like model on 1024 GPUs (128 servers × 8, a 400 Gb/s NIC per GPU, an NVLink-class
scale-up domain of 3600 Gb/s per GPU), Megatron-style (`workload.kind = "training"`):

  gpt3      96 layers, hidden 12288, 96 heads, sequence 2048, vocabulary 51200 (Brown et al.
            2020, Table 2.1); tp 8 × pp 16 × dp 8, 512 sequences per iteration (64
            micro-batches of 1 per replica), full recomputation
  llama70   80 layers, hidden 8192, 64 heads with 8 key/value heads, SwiGLU MLP of 28672,
            sequence 4096, vocabulary 32000 (the Llama 2 70B shape); tp 8 × pp 8 × dp 16, 256
            sequences per iteration (16 micro-batches per replica), full recomputation
  mixtral   32 layers, hidden 4096, 32 heads with 8 key/value heads, 8 experts (SwiGLU 14336),
            top-2, sequence 2048, vocabulary 32000 (a Mixtral-8x7B-like shape); tp 8 × pp 4 ×
            dp 32 with ep 8, 128 sequences per iteration (4 micro-batches per replica), full
            recomputation, in the tp-pp-dp order only

TP inside each server, its collectives analytic on the scale-up domain
(`tp_network = "analytic"`); the pipeline's messages and the gradient AllReduces (ring, 1 MiB
chunks, Megatron's default buckets) as packets. GPUs at 989 TFLOP/s × 0.5 (the workload's
default efficiency, an assumption).

Fabrics and transports are the AI-fabrics study's (experiments/ai-fabrics/run.py, imported):
`rail` (rail-optimized, 2 units of 64 servers, 16 rail leaves, 8 spines, 1:1) and `racks` (the
same switches and cables, every NIC of a server on one leaf: a plain Clos); RoCEv2 (DCQCN, PFC,
ECMP, go-back-N), STrack, NSCC + REPS, and MCC on top of RoCE (NIC CC off, message-level
congestion control, adaptive packet routing, PFC), with one row of the same without MCC's gate
(`pfc_ar`: PFC and adaptive routing alone); and `rail` with one spine down.

Two rank orders: Megatron-LM's default (rank t + 8·(d + dp·p): a DP ring joins the same GPU of
servers 8 or 16 apart, under one leaf on both fabrics) and, for the GPT-3-like model,
Megatron-Core's tp-pp-dp mapping (`-tpppdp-` rows: t + 8·(p + pp·d): a replica's stages on
neighbouring servers, its DP ring across servers 16 apart, so it crosses the spines).

Each row records the iteration time, its compute and network ideals, its critical path
(compute and each group's exposed communication), the bytes per group, packet counters, wall
and CPU time, peak RSS, the binary's commit and the scenario with its sha256.

    experiments/training/run.py [--fabricsim target/release/fabricsim] [--only REGEX]

Rows go to results/results.json; a row already there (same id, same scenario) is kept.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
RESULTS = HERE / "results" / "results.json"

_spec = importlib.util.spec_from_file_location("ai_fabrics", REPO / "experiments" / "ai-fabrics" / "run.py")
ai_fabrics = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ai_fabrics)

MODELS = {
    "gpt3": (
        "model = { layers = 96, hidden = 12288, heads = 96, seq = 2048, vocab = 51200, micro_batch = 1, global_batch = 512 }\n"
        "parallelism = { tp = 8, pp = 16, dp = 8, recompute = true, tp_network = \"analytic\" }"
    ),
    "llama70": (
        "model = { layers = 80, hidden = 8192, heads = 64, kv_heads = 8, ffn = 28672, gated_ffn = true, seq = 4096, vocab = 32000, micro_batch = 1, global_batch = 256 }\n"
        "parallelism = { tp = 8, pp = 8, dp = 16, recompute = true, tp_network = \"analytic\" }"
    ),
    # A Mixtral-8x7B-like mixture of experts (8 experts, top-2, SwiGLU), sequence 2048: its
    # token AllToAlls among 8 replicas' GPUs of one TP rank (ep 8); experts split over tp 8.
    "mixtral": (
        "model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, ffn = 14336, gated_ffn = true, seq = 2048, vocab = 32000, micro_batch = 1, global_batch = 128, experts = 8, top_k = 2 }\n"
        "parallelism = { tp = 8, pp = 4, dp = 32, ep = 8, recompute = true, tp_network = \"analytic\" }"
    ),
}

TRANSPORTS = ("roce", "strack", "nscc")

# MCC on top of RoCE (Li et al., APNet 2025, the configuration of scenarios/mcc/): the NIC's
# congestion control off (line rate), message-level congestion control in the collective library
# (`gate = "mcc"`), adaptive packet routing in the switches, a receiver that places out-of-order
# packets, PFC as RoCEv2's.
MCC = ai_fabrics.TRANSPORTS["roce"].replace('cc = "dcqcn"', 'cc = "line_rate"').replace('reliability = "go_back_n"', 'reliability = "rc_ooo"\ngate = "mcc"').replace("trimming = false\n", 'trimming = false\nlb = { name = "adaptive_packet", compare = "bytes" }\n')
# The same without MCC's gate: PFC and adaptive packet routing alone (the MCC study's "PFC only"
# baseline), to tell MCC's message-level congestion control from the switches' routing.
PFC_AR = MCC.replace('\ngate = "mcc"', "")
# Every transport's `[switch]` and `[transport]` tables, by the name the row ids use.
TRANSPORT_TABLES = {**ai_fabrics.TRANSPORTS, "mcc": MCC, "pfc_ar": PFC_AR}


def scenario(model: str, fabric: str, transport: str, spine_down: bool = False, order: str = "") -> str:
    down = f'\n[topology.failures]\nkind = "tor_uplinks"\nlinks = ["{ai_fabrics.SPINE_DOWN[fabric]}"]\n' if spine_down else ""
    shape = MODELS[model].replace('tp_network = "analytic" }', f'tp_network = "analytic", order = "{order}" }}') if order else MODELS[model]
    return f"""name = "training {model}{' ' + order if order else ''} {fabric} {transport}{' spine down' if spine_down else ''}"
seed = 1

[topology]
{ai_fabrics.FABRICS[fabric]}
servers = {ai_fabrics.SERVERS}
link_rate_gbps = 400
link_latency_ns = 1000
switch_latency_ns = 0

[topology.server]
gpus = {ai_fabrics.GPUS}
scale_up_gbps = 3600
{down}
{TRANSPORT_TABLES[transport]}
[workload]
kind = "training"
chunk = "1MiB"
{shape}
"""


def cases():
    """(id, scenario) of every point: model × fabric × transport, and `rail` with a spine down;
    the GPT-3-like model also in the tp-pp-dp rank order (first: its DP rings cross the spines)."""
    out = []
    for transport in TRANSPORTS:
        for fabric in ("rail", "racks"):
            out.append((f"gpt3-tpppdp-{fabric}-{transport}", scenario("gpt3", fabric, transport, order="tp-pp-dp")))
    for fabric in ("rail", "racks"):
        out.append((f"gpt3-tpppdp-{fabric}-mcc", scenario("gpt3", fabric, "mcc", order="tp-pp-dp")))
    out.append(("gpt3-tpppdp-racks-pfc_ar", scenario("gpt3", "racks", "pfc_ar", order="tp-pp-dp")))
    for transport in TRANSPORTS:
        out.append((f"gpt3-tpppdp-rail_down-{transport}", scenario("gpt3", "rail", transport, spine_down=True, order="tp-pp-dp")))
    for model in ("gpt3", "llama70"):
        for transport in TRANSPORTS:
            for fabric in ("rail", "racks"):
                out.append((f"{model}-{fabric}-{transport}", scenario(model, fabric, transport)))
            out.append((f"{model}-rail_down-{transport}", scenario(model, "rail", transport, spine_down=True)))
    # The mixture of experts in the tp-pp-dp order: an EP group's GPUs 4 servers apart, under one
    # rail leaf on `rail`, under four leaves on `racks`.
    for transport in ("roce", "strack"):
        for fabric in ("rail", "racks"):
            out.append((f"mixtral-tpppdp-{fabric}-{transport}", scenario("mixtral", fabric, transport, order="tp-pp-dp")))
    # Run first: the fabric and transport comparisons where DP crosses the spines, the
    # Llama-like step on rail, then one row of each scheme and case not yet covered (MCC and
    # NSCC + REPS where the transport decides, the spine down where the rings cross the spines,
    # the mixture of experts).
    first = ["gpt3-tpppdp-rail-roce", "gpt3-tpppdp-racks-roce", "gpt3-tpppdp-rail-strack", "gpt3-tpppdp-racks-strack",
             "llama70-rail-roce", "llama70-rail-strack", "llama70-racks-roce",
             "gpt3-tpppdp-racks-mcc", "gpt3-tpppdp-rail_down-roce", "gpt3-tpppdp-racks-pfc_ar", "gpt3-tpppdp-racks-nscc",
             "mixtral-tpppdp-rail-roce"]
    return sorted(out, key=lambda c: first.index(c[0]) if c[0] in first else len(first))


def run_one(binary: str, case_id: str, text: str) -> dict:
    s, _, wall, cpu = ai_fabrics.run_scenario(binary, case_id, text)
    it = s["training"]["iterations"][0]
    if it["time_us"] is None:
        raise SystemExit(f"{case_id}: the iteration did not finish")
    pk = s["packets"]
    return {
        "id": case_id,
        "time_us": it["time_us"],
        "compute_ideal_us": it["compute_ideal_us"],
        "network_ideal_us": it["network_ideal_us"],
        "slowdown": it["slowdown"],
        "critical_path": it["critical_path"],
        "groups": s["training"]["groups"],
        "data_packets": pk["data_sent"],
        "retransmitted": pk["retransmitted"],
        "dropped": pk["dropped"],
        "trimmed": pk["trimmed"],
        "timeouts": pk["timeouts"],
        "pfc": s.get("pfc"),
        "invariant_violations": s.get("invariant_violations"),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "peak_rss_mb": round(s["performance"]["peak_rss_bytes"] / 2**20, 1),
        "events": s["events"],
        # The commit the binary was built from (summary.json's engine), not the checkout's.
        "commit": s["engine"]["commit"],
        "scenario_sha256": hashlib.sha256(text.encode()).hexdigest(),
        "scenario": text,
    }


def show(row: dict) -> str:
    cp = row["critical_path"]
    return f"{row['id']:28s} step {row['time_us'] / 1e3:9.1f} ms  ideal {row['network_ideal_us'] / 1e3:9.1f} ms  exposed tp {cp['tp_us'] / 1e3:7.1f} pp {cp['pp_us'] / 1e3:7.1f} dp {cp['dp_us'] / 1e3:7.1f} ms  {row['wall_s']:7.1f} s  {row['peak_rss_mb']:7.0f} MB"


def main():
    ai_fabrics.run_rows(__doc__, RESULTS, cases(), run_one, show)

if __name__ == "__main__":
    main()
