#!/usr/bin/env python3
"""fabricsim beside the HPCC ns-3 RDMA simulator (issue 43), on the same inputs.

The first case is the example that `simulation/mix/` of alibaba-edu/High-Precision-Congestion-
Control runs: a star of 65 hosts on one switch (100 Gb/s, 1 us links) and the first two flows
of its flow file, 200 MB each from nodes 2 and 3 to node 1, starting at 2 s. Incasts 8, 16 and
32 -> 1 on that star follow, then a random permutation and an all-to-all on a 2-tier
leaf-spine (4 ToRs x 8 hosts, 4 spines, every link 100 Gb/s and 1 us), three seeds each.

This driver writes every input itself (the topology and flow formats read by the simulator's
`scratch/third.cc`); a random workload is drawn from its seed, and both simulators read the same
flow file. Then for each congestion control:

- runs fabricsim on a scenario that reads them (`flow_list` with `format = "ns3"`), with the
  example config's constants written out (`ecn_*`, PFC buffer, DCQCN's timers and steps, the
  rate-scaled 1-BDP window of `HAS_WIN 1` / `VAR_WIN 1` counted in the network's BDP as
  `GLOBAL_T 1` does, 1000 B payload + the mode's headers) and the case's seed;
- with `--ns3 DIR` (the built `simulation/` folder), runs the simulator on a copy of
  `DIR/mix/config.txt` pointed at the same inputs, `CC_MODE` set and tracing off.

It prints one row per (case, scheme): per-flow FCT p50 / p99 / max on both sides, PFC PAUSE
frames and the deepest switch queue on both sides, and the parity rate (the fraction of rows
within 10 % on both p50 and max FCT). `results/results.json` keeps every row with its flows and
the scenario fabricsim ran, and the commit.

    experiments/ns3-parity/run.py --ns3 /work/ns3-hpcc/simulation --fabricsim target/ci/fabricsim
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

STAR_HOSTS = 65  # nodes 1..=65 around switch 0
# The 2-tier fabric: ToRs x hosts per ToR, spines (2:1 at the ToRs: 8 hosts, 4 uplinks).
TORS, PER_TOR, SPINES = 4, 8, 4
LS_HOSTS = TORS * PER_TOR
SEEDS = (1, 2, 3)


@dataclass
class Case:
    """One input: a fabric (`star` or `leaf_spine`), its flows as (src node, dst node, bytes,
    start s, dport), the seed that drew them (None: nothing random), and config keys that differ
    from the example's."""

    name: str
    topo: str
    flows: list
    seed: int | None = None
    config: dict = field(default_factory=dict)


def permutation(seed: int, size: int) -> list:
    """Every host of the leaf-spine sends `size` bytes to another, a random derangement; the
    seed also draws each flow's DPORT (the ns-3 ECMP hash reads it)."""
    rng = random.Random(seed)
    while True:
        dst = list(range(LS_HOSTS))
        rng.shuffle(dst)
        if all(s != d for s, d in enumerate(dst)):
            break
    return [(s, dst[s], size, 2.0, rng.randrange(100, 60000)) for s in range(LS_HOSTS)]


def all_to_all(seed: int, size: int) -> list:
    """Every ordered host pair of the leaf-spine, `size` bytes each, all at 2 s, in an order and
    with DPORTs drawn from the seed (both simulators start same-time flows in file order)."""
    rng = random.Random(seed)
    pairs = [(s, d) for s in range(LS_HOSTS) for d in range(LS_HOSTS) if s != d]
    rng.shuffle(pairs)
    return [(s, d, size, 2.0, rng.randrange(100, 60000)) for s, d in pairs]


# The star's cases come first: the simulator's example (the first two lines of its flow file),
# then incasts that load the switch port to node 1 past Kmin, so that the controllers react.
CASES = [
    Case("example_2to1_200MB", "star", [(2, 1, 200_000_000, 2.0, 100), (3, 1, 200_000_000, 2.0, 100)]),
    Case("incast_8to1_10MB", "star", [(s, 1, 10_000_000, 2.0, 100) for s in range(2, 10)]),
    Case("incast_16to1_4MB", "star", [(s, 1, 4_000_000, 2.0, 100) for s in range(2, 18)]),
    Case("incast_32to1_2MB", "star", [(s, 1, 2_000_000, 2.0, 100) for s in range(2, 34)]),
    *[Case(f"ls_perm_10MB_s{k}", "leaf_spine", permutation(k, 10_000_000), k) for k in SEEDS],
    *[Case(f"ls_a2a_100KB_s{k}", "leaf_spine", all_to_all(k, 100_000), k) for k in SEEDS],
    # The example's 32 MiB buffer never pauses; smaller ones do (PFC and the MMU side by side).
    *[Case(f"ls_a2a_100KB_s1_buf{mib}", "leaf_spine", all_to_all(1, 100_000), 1, {"BUFFER_SIZE": mib}) for mib in (4, 2)],
]

# The simulator's example config (`simulation/mix/config.txt`), key by key, as this driver
# writes it for both simulators: the ns-3 run reads it with the case's files, CC_MODE and the
# output keys put in, and fabricsim runs what `fabricsim from-ns3` translates it into. The
# values are the example's; only the paths, CC_MODE, GLOBAL_T (below), tracing and the queue
# monitor's window differ.
EXAMPLE_CONFIG = [
    ("ENABLE_QCN", 1), ("USE_DYNAMIC_PFC_THRESHOLD", 1), ("PACKET_PAYLOAD_SIZE", 1000),
    ("TOPOLOGY_FILE", None), ("FLOW_FILE", None), ("TRACE_FILE", None), ("TRACE_OUTPUT_FILE", None),
    ("FCT_OUTPUT_FILE", None), ("PFC_OUTPUT_FILE", None), ("SIMULATOR_STOP_TIME", "4.00"),
    ("CC_MODE", None), ("ALPHA_RESUME_INTERVAL", 1), ("RATE_DECREASE_INTERVAL", 4), ("CLAMP_TARGET_RATE", 0),
    ("RP_TIMER", 900), ("EWMA_GAIN", 0.00390625), ("FAST_RECOVERY_TIMES", 1), ("RATE_AI", "50Mb/s"),
    ("RATE_HAI", "100Mb/s"), ("MIN_RATE", "100Mb/s"), ("DCTCP_RATE_AI", "1000Mb/s"),
    ("ERROR_RATE_PER_LINK", "0.0000"), ("L2_CHUNK_SIZE", 4000), ("L2_ACK_INTERVAL", 1), ("L2_BACK_TO_ZERO", 0),
    ("HAS_WIN", 1), ("GLOBAL_T", 1), ("VAR_WIN", 1), ("FAST_REACT", 1), ("U_TARGET", 0.95), ("MI_THRESH", 0),
    ("INT_MULTI", 1), ("MULTI_RATE", 0), ("SAMPLE_FEEDBACK", 0), ("PINT_LOG_BASE", 1.05), ("PINT_PROB", "1.0"),
    ("RATE_BOUND", 1), ("ACK_HIGH_PRIO", 0), ("LINK_DOWN", "0 0 0"), ("ENABLE_TRACE", 0),
    ("KMAX_MAP", "3 25000000000 400 50000000000 800 100000000000 1600"),
    ("KMIN_MAP", "3 25000000000 100 50000000000 200 100000000000 400"),
    ("PMAX_MAP", "3 25000000000 0.2 50000000000 0.2 100000000000 0.2"),
    ("BUFFER_SIZE", 32), ("QLEN_MON_FILE", None),
    # Sample every switch queue from the flows' start to 2.1 s: the monitor writes its
    # histograms only at multiples of 100 ms, so its window must reach one after 2 s.
    ("QLEN_MON_START", 2000000000), ("QLEN_MON_END", 2100000000),
]

# One row per scheme: (ns-3 CC_MODE, name). fabricsim's side of each comes from `from-ns3`.
SCHEMES = [(1, "dcqcn"), (3, "hpcc"), (8, "dctcp"), (7, "timely")]


def write_config(work: Path, case: Case, name: str, mode: int) -> Path:
    """The example config for this case and mode. GLOBAL_T 1 (every window the largest BDP)
    stays, but for DCTCP on the leaf-spine: fabricsim's dctcp sizes windows per path, so
    `from-ns3` refuses it there, and both simulators run GLOBAL_T 0 instead."""
    files = {
        "TOPOLOGY_FILE": work / "topology.txt",
        "FLOW_FILE": work / "flow.txt",
        "TRACE_FILE": work / "trace.txt",
        "TRACE_OUTPUT_FILE": work / f"ns3-{name}.tr",
        "FCT_OUTPUT_FILE": work / f"ns3-{name}-fct.txt",
        "PFC_OUTPUT_FILE": work / f"ns3-{name}-pfc.txt",
        "QLEN_MON_FILE": work / f"ns3-{name}-qlen.txt",
        "CC_MODE": mode,
    }
    if mode == 8 and case.topo == "leaf_spine":
        files["GLOBAL_T"] = 0
    files.update(case.config)
    (work / "trace.txt").write_text("0\n")
    lines = [f"{k} {files.get(k, v)}" for k, v in EXAMPLE_CONFIG]
    config = work / f"ns3-{name}-config.txt"
    config.write_text("\n".join(lines) + "\n")
    return config


def star_nodes() -> tuple[list[int], list[str]]:
    """(host node ids in fabricsim's host order, link lines): switch 0, hosts 1..=65."""
    return list(range(1, STAR_HOSTS + 1)), [f"0 {h} 100Gbps 0.001ms 0" for h in range(1, STAR_HOSTS + 1)]


def leaf_spine_nodes() -> tuple[list[int], list[str]]:
    """Hosts first (nodes 0..32, host h under ToR h / 8, as fabricsim's leaf_spine numbers
    them), then the ToRs (32..36) and the spines (36..40)."""
    tor0, spine0 = LS_HOSTS, LS_HOSTS + TORS
    links = [f"{h} {tor0 + h // PER_TOR} 100Gbps 0.001ms 0" for h in range(LS_HOSTS)]
    links += [f"{tor0 + t} {spine0 + s} 100Gbps 0.001ms 0" for t in range(TORS) for s in range(SPINES)]
    return list(range(LS_HOSTS)), links


def write_inputs(work: Path, case: Case) -> list[int]:
    """Writes topology.txt and flow.txt; returns the host node ids in fabricsim's host order."""
    if case.topo == "star":
        hosts, links = star_nodes()
        switches = [0]
    else:
        hosts, links = leaf_spine_nodes()
        switches = list(range(LS_HOSTS, LS_HOSTS + TORS + SPINES))
    nodes = len(hosts) + len(switches)
    (work / "topology.txt").write_text(f"{nodes} {len(switches)} {len(links)}\n{' '.join(map(str, switches))}\n" + "".join(l + "\n" for l in links))
    lines = "".join(f"{s} {d} 3 {p} {b} {t:g}\n" for s, d, b, t, p in case.flows)
    (work / "flow.txt").write_text(f"{len(case.flows)}\n{lines}")
    return hosts


def fabricsim_bin(given: str | None) -> list[str]:
    if given:
        return [given]
    built = REPO / "target" / "release" / "fabricsim"
    return [str(built)] if built.exists() else ["cargo", "run", "--release", "-q", "--"]


def run_fabricsim(bin_: list[str], work: Path, hosts: list[int], case: Case, name: str, config: Path) -> dict:
    """Translates `config` with `fabricsim from-ns3` and runs it with the case's seed."""
    path = work / f"{name}.toml"
    subprocess.run([*bin_, "from-ns3", str(config), "-o", str(path)], check=True, cwd=REPO, stdout=subprocess.DEVNULL)
    text = path.read_text()
    out = work / f"fabricsim-{name}"
    sets = ["--set", "run.port_stats=true"] + (["--seed", str(case.seed)] if case.seed is not None else [])
    t0 = time.monotonic()
    subprocess.run([*bin_, "run", "--quiet", "--out", str(out), *sets, str(path)], check=True, cwd=REPO, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    with open(out / "flows.csv") as f:
        fct = {f"{hosts[int(r['src'])]}-{hosts[int(r['dst'])]}": float(r["fct_us"]) for r in csv.DictReader(f)}
    summary = json.loads((out / "summary.json").read_text())
    pfc = summary.get("pfc") or {}
    # Deepest data queue of a switch port (host NICs excluded), and the bytes each ToR uplink sent.
    peak, uplinks = 0, {}
    with open(out / "ports.csv") as f:
        for r in csv.DictReader(f):
            if not r["class"].startswith("host"):
                peak = max(peak, int(r["max_queue_bytes"]))
            if r["class"] == "tor_up":
                uplinks[r["link"]] = int(r["tx_bytes"])
    return {"fct_us": fct, "pauses": int(pfc.get("pause_frames", 0)), "peak_queue_bytes": peak, "max_switch_buffer_bytes": pfc.get("max_switch_buffer_bytes"), "tor_uplink_tx_bytes": uplinks, "wall_s": wall, "scenario": text}


def ns3_peak_queue(path: Path) -> int | None:
    """Deepest egress queue of any switch port in the QLEN_MON file: the highest 1 KB bin with a
    sample (sampled every 100 ns) of its last dump, in bytes (the bin's lower edge)."""
    if not path.exists():
        return None
    last = None
    peak = 0
    for line in path.read_text().splitlines():
        if line.startswith("time:"):
            last, peak = line, 0
            continue
        counts = [int(x) for x in line.split()[2:]]
        top = max((i for i, c in enumerate(counts) if c), default=0)
        peak = max(peak, top * 1000)
    return peak if last else None


def run_ns3(sim: Path, work: Path, name: str, config: Path) -> dict:
    env = dict(os.environ, LD_LIBRARY_PATH=str(sim / "build"))
    t0 = time.monotonic()
    subprocess.run([str(sim / "build" / "scratch" / "third"), str(config)], check=True, cwd=sim, env=env, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    fct = {}
    for line in (work / f"ns3-{name}-fct.txt").read_text().splitlines():
        src_ip, dst_ip, _sport, _dport, _size, _start, fct_ns, _ideal = line.split()
        # 11.x.y.1, node id = x * 256 + y
        node = lambda ip: ((int(ip, 16) >> 16) & 0xFF) * 256 + ((int(ip, 16) >> 8) & 0xFF)
        fct[f"{node(src_ip)}-{node(dst_ip)}"] = int(fct_ns) / 1e3
    # PFC file: `time node node_type if_index type`, logged where the frame is received; 1 = PAUSE.
    pfc = [l.split() for l in (work / f"ns3-{name}-pfc.txt").read_text().splitlines() if l.strip()]
    pauses = sum(1 for p in pfc if p[4] == "1")
    return {"fct_us": fct, "pauses": pauses, "peak_queue_bytes": ns3_peak_queue(work / f"ns3-{name}-qlen.txt"), "wall_s": wall}


def quantile(values: list[float], q: float) -> float:
    """The median for q = 0.5 (as statistics.median), else the nearest-rank quantile."""
    v = sorted(values)
    if not v:
        return float("nan")
    if q == 0.5:
        m = len(v) // 2
        return v[m] if len(v) % 2 else (v[m - 1] + v[m]) / 2
    return v[min(len(v) - 1, max(0, math.ceil(q * len(v)) - 1))]


def figures(fct: dict) -> tuple[float, float, float]:
    v = list(fct.values())
    return quantile(v, 0.5), quantile(v, 0.99), max(v) if v else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns3", type=Path, help="the built simulator's simulation/ folder (omit: fabricsim only)")
    ap.add_argument("--fabricsim", help="the fabricsim binary (default: target/release/fabricsim, else cargo run)")
    ap.add_argument("--work", type=Path, default=HERE / "work", help="scratch folder (not committed)")
    ap.add_argument("--only", help="run only the cases whose name contains this")
    a = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    rows = []
    print(f"{'case':20} {'scheme':7} {'ns-3 p50/p99/max us':>28} {'fabricsim p50/p99/max us':>28} {'ratio p50/p99/max':>20} {'pauses ns3/fs':>14} {'peak KB ns3/fs':>15}")
    for case in CASES:
        if a.only and a.only not in case.name:
            continue
        work = a.work / case.name
        work.mkdir(parents=True, exist_ok=True)
        hosts = write_inputs(work, case)
        for mode, name in SCHEMES:
            config = write_config(work, case, name, mode)
            ours = run_fabricsim(fabricsim_bin(a.fabricsim), work, hosts, case, name, config)
            ref = run_ns3(a.ns3, work, name, config) if a.ns3 else {"fct_us": {}, "pauses": None, "peak_queue_bytes": None}
            if ref["fct_us"] and set(ref["fct_us"]) != set(ours["fct_us"]):
                raise SystemExit(f"{case.name} {name}: the simulators finished different flows")
            (o50, o99, omax), (r50, r99, rmax) = figures(ours["fct_us"]), figures(ref["fct_us"])
            # The inputs both read (flows as their file lists them) and the scenario fabricsim ran.
            row = {
                "case": case.name, "topology": case.topo, "seed": case.seed, "config": case.config, "scheme": name, "cc_mode": mode,
                "flows": case.flows, "scenario": ours.pop("scenario"),
                "fabricsim": ours, "ns3": ref,
                "fabricsim_p50_us": o50, "fabricsim_p99_us": o99, "fabricsim_max_us": omax,
                "ns3_p50_us": r50, "ns3_p99_us": r99, "ns3_max_us": rmax,
                "within_10pct": abs(o50 / r50 - 1) <= 0.1 and abs(omax / rmax - 1) <= 0.1 if ref["fct_us"] else None,
            }
            rows.append(row)
            kb = lambda b: "-" if b is None else f"{b / 1e3:.0f}"
            print(
                f"{case.name:20} {name:7} {r50:9.1f}/{r99:9.1f}/{rmax:9.1f} {o50:9.1f}/{o99:9.1f}/{omax:9.1f} "
                f"{o50 / r50:6.3f}/{o99 / r99:6.3f}/{omax / rmax:6.3f} {str(ref['pauses']):>6}/{ours['pauses']:<7} {kb(ref['peak_queue_bytes']):>6}/{kb(ours['peak_queue_bytes']):<7}",
                flush=True,
            )
    judged = [r for r in rows if r["within_10pct"] is not None]
    if judged:
        hit = sum(r["within_10pct"] for r in judged)
        print(f"parity: {hit} of {len(judged)} case x scheme rows within 10 % on both p50 and max FCT ({hit / len(judged):.0%})")
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    if not a.only:
        # One row a line: the all-to-all's per-flow figures would make an indented file long.
        body = ",\n".join(json.dumps(r) for r in rows)
        (out / "results.json").write_text(f'{{"commit": {json.dumps(commit)}, "rows": [\n{body}\n]}}\n')
    return 0


if __name__ == "__main__":
    sys.exit(main())
