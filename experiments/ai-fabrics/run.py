#!/usr/bin/env python3
"""AI-cluster fabrics side by side (issue 46): a 1024-GPU cluster of 128 servers × 8 GPUs, each
GPU with its own 400 Gb/s NIC and an NVLink-class scale-up domain (3600 Gb/s per GPU each way,
150 ns per link), on three fabrics built from the same 51.2 Tb/s switches (128 ports of 400G):

  rail      rail-optimized, 2 tiers: 2 scalable units of 64 servers, 16 rail leaves (64 GPU
            ports, 64 uplinks), 8 spines (8 cables from each leaf); 1:1. 24 switches.
  racks     the same switches and cables, every NIC of a server on one leaf (8 servers per
            leaf): a plain Clos of the same switch count. 24 switches.
  rail_only the rails without the spines (Wang et al. 2023): one 128-port switch per rail.
            8 switches; GPUs on different rails of different servers meet by forwarding
            through the scale-up domain.
  rail2p    two planes of the rail-optimized wiring from the same 24 switches at 256 × 200G
            ports, each GPU's 400G NIC as two 200G ports (AllToAll only; also with a spine
            of one plane down, and `rail` with one of its spines down); a connection striped
            half and half over the two ports.
  rail2pp   rail2p with each connection one queue pair sprayed per packet over the NIC's two
            ports (`nic_port_choice = "packet"`: the next free port), healthy and spine down.
  rail2pe   the same with each packet on the port its entropy selects
            (`nic_port_choice = "entropy"`), healthy and spine down.
  rail2t    dual-ToR from the same 24 switches at 200G: each NIC's two 200G ports on the two
            leaves of a pair (AllToAll only; also with one leaf, tor1, down).

Workloads, one job over all 1024 GPUs (rank i = GPU i, servers in order):
  ring      flat ring AllReduce of 64 MiB per GPU in 256 KiB chunks; on `rail` once with its
            server-crossing hops over the spines (ring) and once relayed by PXN (ring_pxn)
  hier      hierarchical AllReduce (group 8: in-server ReduceScatter, a ring per rail across
            the servers, in-server AllGather), 64 MiB
  hier_tree the same with a double binary tree per rail across the servers instead of the
            ring (NCCL's tree across servers), 64 MiB
  hier_ch4  hier as 4 channels (NCCL's), each on a quarter of the data (rail only)
  a2a       direct AllToAll of 16 MiB per GPU (16 KiB to each peer, every peer at once); also
            with the scale-up domain at 1600, 800 and 400 Gb/s per GPU (rail, rail_only; RoCEv2)

Transports:
  roce      RoCEv2: DCQCN, PFC, ECMP, go-back-N, 1-BDP-class buffers (as experiments/strack)
  strack    STrack: its CC, adaptive spraying, selective retransmission, lossy 5-BDP buffers
  nscc      NSCC + REPS: trimming, SACK, htsim_uec's ACK settings (docs/src/howto/recipes.md)
  nscc_ack1 the same with an ACK per packet (AllToAll only: a sensitivity)

Each row records the CCT, its ideal, the bytes the spines carried, the wall and CPU time and
peak RSS, the commit and the scenario's sha256 (the scenario itself is in the row).

    experiments/ai-fabrics/run.py [--fabricsim target/release/fabricsim] [--only REGEX] [--rerun-unless-commit SHA]

Rows go to results/results.json; a row already there (same id, same scenario) is kept.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
RESULTS = HERE / "results" / "results.json"

SERVERS, GPUS = 128, 8

FABRICS = {
    # 2 units of 64 servers: a leaf has 64 GPU ports and 64 uplinks, 8 cables to each of 8 spines.
    "rail": 'kind = "rail_optimized"\nservers_per_su = 64\nspines = 8',
    "racks": 'kind = "racks"\nservers_per_su = 64\nspines = 8',
    # One unit of 128 servers: each rail is one 128-port switch.
    "rail_only": 'kind = "rail_only"\nservers_per_su = 128',
}

# Two planes from the same 24 switches run at 256 ports of 200G (a 400G NIC as two 200G
# ports): per plane one unit of 128 servers, 8 rail leaves (128 GPU ports, 128 uplinks) and 4
# spines, 32 cables from each leaf to each.
PLANES = {
    "rail2p": 'kind = "rail_optimized"\nservers_per_su = 128\nspines = 4\nplanes = 2\nlink_rate_gbps = 200',
    # Dual-ToR from the same 24 switches at 256 × 200G: 8 leaf pairs (16 leaves, 128 GPU ports
    # and 128 uplinks each), 8 spines (16 cables from each leaf to each).
    "rail2t": 'kind = "rail_optimized"\nservers_per_su = 128\nspines = 8\ndual_tor = true\nlink_rate_gbps = 200',
    # The two planes with each connection one queue pair sprayed packet by packet over the
    # NIC's two ports (the next free one), instead of striped half and half.
    "rail2pp": 'kind = "rail_optimized"\nservers_per_su = 128\nspines = 4\nplanes = 2\nnic_port_choice = "packet"\nlink_rate_gbps = 200',
    # ... or with each packet on the port its entropy selects (the sender's path selection
    # chooses the plane).
    "rail2pe": 'kind = "rail_optimized"\nservers_per_su = 128\nspines = 4\nplanes = 2\nnic_port_choice = "entropy"\nlink_rate_gbps = 200',
}

# A spine down (every cable of it removed at build time): spine0 of the one-plane fabric,
# plane 1's first spine (spine4) of the two-plane one.
SPINE_DOWN = {"rail": "tor*-spine0", "rail2p": "tor*-spine4", "rail2pp": "tor*-spine4", "rail2pe": "tor*-spine4", "rail2t": "tor1-*"}

TRANSPORTS = {
    "roce": """[switch]
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
""",
    "strack": """[switch]
trimming = false
buffer_bdp = 5.0
ecn_kmin = 0.05
ecn_kmax = 0.15

[transport]
cc = "strack"
lb = "strack"
reliability = "strack"
ack_every = 4
rto_us = 100
""",
    "nscc": """[switch]
trimming = true
control_lane = "separate"
control_lane_factor = 2

[transport]
reliability = "sack"
ack_coalesce_bytes = 16384
ack_on_ce = true
cc = "nscc"
lb = "reps"
""",
}

# NSCC + REPS with an ACK for every packet (no ack_coalesce_bytes): the AllToAll's sensitivity
# (RESULTS.md: with ~1000 QPs per NIC a QP's 16 KiB ACK batch fills slower than the RTO).
TRANSPORTS["nscc_ack1"] = TRANSPORTS["nscc"].replace("ack_coalesce_bytes = 16384\n", "")

# RoCEv2 whose receiver places out-of-order packets (`rc_ooo`, as RoCE NICs do under adaptive
# routing) instead of go-back-N: the sprayed planes' reordering without its NACKs.
TRANSPORTS["roce_ooo"] = TRANSPORTS["roce"].replace('reliability = "go_back_n"', 'reliability = "rc_ooo"')

WORKLOADS = {
    "ring": '{ op = "allreduce", algorithm = "ring", bytes = "64MiB" }',
    "hier": '{ op = "allreduce", algorithm = "hier", group = 8, bytes = "64MiB" }',
    "hier_tree": '{ op = "allreduce", algorithm = "hier_tree", group = 8, bytes = "64MiB" }',
    "hier_ch4": '{ op = "allreduce", algorithm = "hier", group = 8, bytes = "64MiB", channels = 4 }',
    "a2a": '{ op = "alltoall", bytes = "16MiB" }',
}


def scenario(fabric: str, workload: str, transport: str, pxn: bool, scale_up_gbps: int = 3600, spine_down: bool = False) -> str:
    cross = '\ncross_rail = "pxn"' if pxn else ""
    topo = FABRICS.get(fabric) or PLANES[fabric]
    rate = "" if "link_rate_gbps" in topo else "\nlink_rate_gbps = 400"
    down = f'\n[topology.failures]\nkind = "tor_uplinks"\nlinks = ["{SPINE_DOWN[fabric]}"]\n' if spine_down else ""
    return f"""name = "ai-fabrics {fabric} {workload} {transport}"
seed = 1

[topology]
{topo}
servers = {SERVERS}{rate}
link_latency_ns = 1000
switch_latency_ns = 0

[topology.server]
gpus = {GPUS}
scale_up_gbps = {scale_up_gbps}{cross}
{down}
{TRANSPORTS[transport]}
[workload]
kind = "collectives"
chunk = "256KiB"

[[workload.jobs]]
ranks = {SERVERS * GPUS}
placement = "contiguous"
collectives = [ {WORKLOADS[workload]} ]

[run]
port_stats = true
"""


def small(text: str) -> str:
    """`text` (a 1024-GPU AllToAll of 16 MiB per GPU in one unit) on 16 servers: 128 GPUs,
    2 MiB per GPU, so still 16 KiB to each peer."""
    for a, b in (("servers = 128", "servers = 16"), ("servers_per_su = 128", "servers_per_su = 16"), (f"ranks = {SERVERS * GPUS}", "ranks = 128"), ('bytes = "16MiB"', 'bytes = "2MiB"')):
        assert a in text, a
        text = text.replace(a, b)
    return text


def cases():
    """(id, scenario) of every point: each fabric × workload × transport, and the ring relayed
    by PXN on the rail-optimized fabric."""
    out = []
    for workload in WORKLOADS:
        for fabric in FABRICS:
            for transport in TRANSPORTS:
                # (RoCEv2 with an out-of-order receiver: the planes' rows only.)
                if transport == "roce_ooo" or (transport == "nscc_ack1" and workload != "a2a") or (workload == "hier_ch4" and fabric != "rail"):
                    continue
                out.append((f"{workload}-{fabric}-{transport}", scenario(fabric, workload, transport, False)))
                if workload == "ring" and fabric == "rail":
                    out.append((f"ring_pxn-{fabric}-{transport}", scenario(fabric, workload, transport, True)))
    # The AllToAll's sensitivity to the scale-up rate, which carries rail-only's forwarding.
    for gbps in (1600, 800, 400):
        for fabric in ("rail", "rail_only"):
            out.append((f"a2a_su{gbps}-{fabric}-roce", scenario(fabric, "a2a", "roce", False, gbps)))
    # Planes and a spine down: the AllToAll on one plane of 400G and on two of 200G, healthy
    # and with a spine down (the main table has the healthy one-plane rows).
    for transport in (t for t in TRANSPORTS if t != "roce_ooo"):
        out.append((f"a2a_down-rail-{transport}", scenario("rail", "a2a", transport, False, spine_down=True)))
        out.append((f"a2a-rail2p-{transport}", scenario("rail2p", "a2a", transport, False)))
        out.append((f"a2a_down-rail2p-{transport}", scenario("rail2p", "a2a", transport, False, spine_down=True)))
    # The two planes sprayed per packet, healthy and with plane 1's spine down.
    # RoCEv2 with an out-of-order receiver, sprayed and (spine down) striped for comparison.
    for transport in ("roce", "strack", "nscc_ack1", "roce_ooo"):
        out.append((f"a2a-rail2pp-{transport}", scenario("rail2pp", "a2a", transport, False)))
        out.append((f"a2a_down-rail2pp-{transport}", scenario("rail2pp", "a2a", transport, False, spine_down=True)))
    out.append(("a2a_down-rail2p-roce_ooo", scenario("rail2p", "a2a", "roce_ooo", False, spine_down=True)))
    # The planes chosen by the packets' entropy, healthy and with plane 1's spine down.
    for transport in ("roce", "strack", "nscc_ack1"):
        out.append((f"a2a-rail2pe-{transport}", scenario("rail2pe", "a2a", transport, False)))
        out.append((f"a2a_down-rail2pe-{transport}", scenario("rail2pe", "a2a", transport, False, spine_down=True)))
    # Where healthy spraying loses, located on a small copy: the AllToAll's 16 KiB per peer on
    # 128 GPUs (16 servers in one unit, 2 MiB per GPU), striped and to the next free port.
    for fabric in ("rail2p", "rail2pp"):
        out.append((f"a2a128-{fabric}-nscc_ack1", small(scenario(fabric, "a2a", "nscc_ack1", False))))
    # Dual-ToR, healthy and with one leaf of a pair down (every cable of tor1).
    for transport in ("roce", "strack", "nscc_ack1"):
        out.append((f"a2a-rail2t-{transport}", scenario("rail2t", "a2a", transport, False)))
        out.append((f"a2a_down-rail2t-{transport}", scenario("rail2t", "a2a", transport, False, spine_down=True)))
    return out


def run_scenario(binary: str, case_id: str, text: str, read=lambda out: None):
    """Runs scenario `text` in a temporary folder: (summary.json, `read(out folder)`, wall
    seconds, CPU seconds of the run); exits naming the case if fabricsim fails."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{case_id}.toml"
        path.write_text(text)
        out = Path(tmp) / "out"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.time()
        p = subprocess.run([binary, "run", str(path), "--out", str(out), "-q"], capture_output=True, text=True)
        wall = time.time() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            raise SystemExit(f"{case_id}: fabricsim failed ({p.returncode}):\n{p.stderr}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return json.loads((out / "summary.json").read_text()), read(out), wall, cpu


def run_one(binary: str, case_id: str, text: str) -> dict:
    s, ports, wall, cpu = run_scenario(binary, case_id, text, lambda out: (out / "ports.csv").read_text().splitlines() if (out / "ports.csv").exists() else [])
    spine_bytes = 0
    # Per port class (tor_down, tor_up, spine_down, ...): ECN marks and the deepest data queue.
    by_class = {}
    if ports:
        head = ports[0].split(",")
        link, tx, cls, marks, queue = (head.index(k) for k in ("link", "tx_bytes", "class", "ecn_marks", "max_queue_bytes"))
        spine_bytes = sum(int(r.split(",")[tx]) for r in ports[1:] if "spine" in r.split(",")[link])
        for r in ports[1:]:
            f = r.split(",")
            m = by_class.setdefault(f[cls], {"ecn_marks": 0, "max_queue_bytes": 0})
            m["ecn_marks"] += int(f[marks])
            m["max_queue_bytes"] = max(m["max_queue_bytes"], int(f[queue]))
    c, pk = s["collectives"], s["packets"]
    if c["finished"] != c["instances"]:
        raise SystemExit(f"{case_id}: {c['finished']} of {c['instances']} collectives finished")
    return {
        "id": case_id,
        "cct_us": c["cct_us"]["max"],
        # One instance: its ideal is its CCT over its normalised CCT.
        "ideal_us": c["cct_us"]["max"] / c["normalized_cct"]["max"],
        "normalized_cct": c["normalized_cct"]["max"],
        "spine_tx_bytes": spine_bytes,
        "rails": s.get("rails"),
        "data_packets": pk["data_sent"],
        "retransmitted": pk["retransmitted"],
        "dropped": pk["dropped"],
        "trimmed": pk["trimmed"],
        "timeouts": pk["timeouts"],
        "pfc": s.get("pfc"),
        "max_queue_bytes": s.get("max_queue_bytes"),
        "by_port_class": by_class,
        "invariant_violations": s.get("invariant_violations"),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "peak_rss_mb": round(s["performance"]["peak_rss_bytes"] / 2**20, 1),
        "events": s["events"] if isinstance(s.get("events"), int) else s.get("events"),
        # The commit the binary was built from (summary.json's engine), not the checkout's.
        "commit": s["engine"]["commit"],
        "scenario_sha256": hashlib.sha256(text.encode()).hexdigest(),
        "scenario": text,
    }


def run_rows(doc: str, results: Path, points, run_one, show) -> None:
    """The drivers' command line: runs each (id, scenario) of `points` with `run_one(binary,
    id, text)` unless `results` already holds a row of that id and scenario (and, with
    --rerun-unless-commit, of that commit), replacing any older row of the id and writing the
    file after each run; `show(row)` is the line printed."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fabricsim", default=str(REPO / "target" / "release" / "fabricsim"))
    ap.add_argument("--only", help="run only the points whose id matches this regular expression")
    ap.add_argument("--rerun-unless-commit", metavar="SHA", help="also rerun the rows whose commit does not start with SHA "
                    "(the binary's commit, to bring every row onto one engine; an interrupted rerun resumes)")
    args = ap.parse_args()
    rows = json.loads(results.read_text()) if results.exists() else []
    keep = args.rerun_unless_commit
    have = {(r["id"], r["scenario_sha256"]) for r in rows if not keep or r["commit"].startswith(keep[:12])}
    for case_id, text in points:
        if args.only and not re.search(args.only, case_id):
            continue
        if (case_id, hashlib.sha256(text.encode()).hexdigest()) in have:
            continue
        row = run_one(args.fabricsim, case_id, text)
        rows = [r for r in rows if r["id"] != case_id] + [row]
        results.parent.mkdir(exist_ok=True)
        results.write_text(json.dumps(rows, indent=1) + "\n")
        print(show(row), flush=True)


def main():
    run_rows(__doc__, RESULTS, cases(), run_one, lambda row: f"{row['id']:28s} CCT {row['cct_us']:10.1f} us  norm {row['normalized_cct']:.3f}  spine {row['spine_tx_bytes'] / 2**30:7.2f} GiB  {row['wall_s']:7.1f} s  {row['peak_rss_mb']:7.0f} MB")


if __name__ == "__main__":
    main()
