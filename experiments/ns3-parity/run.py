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

ConWeave's load-balancer cases (`--suite conweave`) stand fabricsim beside ConWeave's fork of
that simulator (conweave-project/conweave-ns3 @ 236a801, `scratch/network-load-balance.cc`)
under `LB_MODE` 0 (ECMP), 2 (DRILL), 3 (CONGA) and 6 (LetFlow), DCQCN with PFC, on a 2:1
leaf-spine: a permutation and a short AliStorage load (the CDF in data/cdf), three seeds each
(the seed draws the flows and is the config's RANDOM_SEED). The config is the one ConWeave's
`run.py` writes for DCQCN at 100 G, key by key; fabricsim runs what `from-ns3` makes of it.
Rows go to `results/conweave.json`.

    experiments/ns3-parity/run.py --suite conweave --conweave /work/conweave-ns3 --fabricsim target/ci/fabricsim
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
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

# ---- ConWeave's simulator -------------------------------------------------------------------

# The config ConWeave's run.py writes (its `config_template`) for `--cc dcqcn` on a 100 G
# fabric, key by key, with its DCQCN values (RATE_AI 10 * bw / 25 Mb/s, no window), its
# thresholds per rate (bw * 0.2e9 .. bw * 4e9 b/s: ECN 100 / 400 KB, 0.2) and ConWeave's dummy
# timers for the other LB modes. None: set per run (files, LB_MODE, seed).
CW_RATES = [20_000_000_000, 50_000_000_000, 100_000_000_000, 200_000_000_000, 250_000_000_000, 400_000_000_000]
CONWEAVE_CONFIG = [
    ("TOPOLOGY_FILE", None), ("FLOW_FILE", None),
    ("FLOW_INPUT_FILE", None), ("CNP_OUTPUT_FILE", None), ("FCT_OUTPUT_FILE", None), ("PFC_OUTPUT_FILE", None),
    ("QLEN_MON_FILE", None), ("VOQ_MON_FILE", None), ("VOQ_MON_DETAIL_FILE", None), ("UPLINK_MON_FILE", None),
    ("CONN_MON_FILE", None), ("EST_ERROR_MON_FILE", None),
    ("QLEN_MON_START", None), ("QLEN_MON_END", None), ("SW_MONITORING_INTERVAL", 10000),
    ("FLOWGEN_START_TIME", 2.0), ("FLOWGEN_STOP_TIME", None), ("BUFFER_SIZE", 9),
    ("CC_MODE", 1), ("LB_MODE", None), ("ENABLE_PFC", 1), ("ENABLE_IRN", 0),
    ("CONWEAVE_TX_EXPIRY_TIME", 1000), ("CONWEAVE_REPLY_TIMEOUT_EXTRA", 4), ("CONWEAVE_PATH_PAUSE_TIME", 16),
    ("CONWEAVE_EXTRA_VOQ_FLUSH_TIME", 64), ("CONWEAVE_DEFAULT_VOQ_WAITING_TIME", 400),
    ("ALPHA_RESUME_INTERVAL", 1), ("RATE_DECREASE_INTERVAL", 4), ("CLAMP_TARGET_RATE", 0), ("RP_TIMER", 300),
    ("FAST_RECOVERY_TIMES", 1), ("EWMA_GAIN", 0.00390625), ("RATE_AI", "40Mb/s"), ("RATE_HAI", "100Mb/s"),
    ("MIN_RATE", "100Mb/s"), ("DCTCP_RATE_AI", "1000Mb/s"),
    ("ERROR_RATE_PER_LINK", "0.0000"), ("L2_CHUNK_SIZE", 4000), ("L2_ACK_INTERVAL", 1), ("L2_BACK_TO_ZERO", 0),
    ("RATE_BOUND", 1), ("HAS_WIN", 0), ("VAR_WIN", 0), ("FAST_REACT", 0), ("MI_THRESH", 0), ("INT_MULTI", 1),
    ("GLOBAL_T", 1), ("U_TARGET", 0.95), ("MULTI_RATE", 0), ("SAMPLE_FEEDBACK", 0),
    ("ENABLE_QCN", 1), ("USE_DYNAMIC_PFC_THRESHOLD", 1), ("PACKET_PAYLOAD_SIZE", 1000),
    ("LINK_DOWN", "0 0 0"),
    ("KMAX_MAP", f"{len(CW_RATES)} " + " ".join(f"{r} 400" for r in CW_RATES)),
    ("KMIN_MAP", f"{len(CW_RATES)} " + " ".join(f"{r} 100" for r in CW_RATES)),
    ("PMAX_MAP", f"{len(CW_RATES)} " + " ".join(f"{r} 0.20" for r in CW_RATES)),
    ("LOAD", None), ("RANDOM_SEED", None),
]

# ConWeave's modes: (LB_MODE, name).
LB_SCHEMES = [(0, "ecmp"), (2, "drill"), (3, "conga"), (6, "letflow")]


def size_cdf(name: str) -> list:
    """(bytes, percent) points of `data/cdf/NAME.cdf`, piecewise-linear between them."""
    pts = []
    for line in (REPO / "data" / "cdf" / f"{name}.cdf").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            b, p = line.split()[:2]
            pts.append((float(b), float(p)))
    return pts


def draw_size(rng: random.Random, cdf: list) -> int:
    u = rng.uniform(0, 100)
    for (b0, p0), (b1, p1) in zip(cdf, cdf[1:]):
        if u <= p1 and p1 > p0:
            return max(1, round(b0 + (b1 - b0) * (u - p0) / (p1 - p0)))
    return int(cdf[-1][0])


def poisson_load(seed: int, cdf_name: str, load: float, dur_s: float) -> list:
    """Each host of the leaf-spine starts flows as a Poisson process from 2 s for `dur_s`, to a
    uniformly random other host, sizes from the CDF, at `load` × the host rate on average (as
    ConWeave's traffic_gen.py draws its loads); flows sorted by start, starts in whole ns."""
    rng = random.Random(seed)
    cdf = size_cdf(cdf_name)
    mean = sum((p1 - p0) / 100 * (b0 + b1) / 2 for (b0, p0), (b1, p1) in zip(cdf, cdf[1:]))
    rate = load * 100e9 / 8 / mean  # flows per second per host
    flows = []
    for src in range(LS_HOSTS):
        t = 2.0 + rng.expovariate(rate)
        while t < 2.0 + dur_s:
            dst = rng.randrange(LS_HOSTS - 1)
            dst += dst >= src
            flows.append((src, dst, draw_size(rng, cdf), round(t, 9), 0))
            t += rng.expovariate(rate)
    flows.sort(key=lambda f: (f[3], f[0]))
    return flows


CW_CASES = [
    *[Case(f"cw_perm_4MB_s{k}", "leaf_spine", permutation(k, 4_000_000), k) for k in SEEDS],
    *[Case(f"cw_alistorage_50pct_1ms_s{k}", "leaf_spine", poisson_load(k, "alistorage2019", 0.5, 0.001), k) for k in SEEDS],
]


# ConWeave's simulator asserts that its topology file's name contains one it knows
# (`topo2bdpMap`, which sizes IRN's BDP only, unused with ENABLE_IRN 0): the file is named so.
CW_TOPOLOGY = "topology.leaf_spine_128_100G_OS2.txt"


def write_cw_config(work: Path, case: Case, name: str, lb_mode: int) -> Path:
    """ConWeave's config for this case and LB mode; the paths absolute (the simulator runs in
    its own folder)."""
    stop = max(f[3] for f in case.flows)
    out = lambda what: work / f"cw-{name}-{what}.txt"
    given = {
        "TOPOLOGY_FILE": work / CW_TOPOLOGY, "FLOW_FILE": work / "cw-flow.txt",
        "FLOW_INPUT_FILE": out("in"), "CNP_OUTPUT_FILE": out("cnp"), "FCT_OUTPUT_FILE": out("fct"), "PFC_OUTPUT_FILE": out("pfc"),
        "QLEN_MON_FILE": out("qlen"), "VOQ_MON_FILE": out("voq"), "VOQ_MON_DETAIL_FILE": out("voq_detail"), "UPLINK_MON_FILE": out("uplink"),
        "CONN_MON_FILE": out("conn"), "EST_ERROR_MON_FILE": out("est_error"),
        "QLEN_MON_START": 2.0, "QLEN_MON_END": f"{stop:.9f}", "FLOWGEN_STOP_TIME": f"{stop:.9f}",
        "LB_MODE": lb_mode, "LOAD": 50, "RANDOM_SEED": case.seed or 1,
    }
    given.update(case.config)
    config = work / f"cw-{name}-config.txt"
    config.write_text("".join(f"{k} {given.get(k, v)}\n" for k, v in CONWEAVE_CONFIG))
    return config


def write_cw_inputs(work: Path, case: Case) -> list[int]:
    """The leaf-spine's topology (its 1000ns delays spelt as ConWeave's files spell them: its
    simulator asserts one-hop delays of 1000 ns) and ConWeave's flow file (no DPORT)."""
    hosts, links = leaf_spine_nodes()
    links = [l.replace("0.001ms", "1000ns") for l in links]
    switches = list(range(LS_HOSTS, LS_HOSTS + TORS + SPINES))
    nodes = len(hosts) + len(switches)
    (work / CW_TOPOLOGY).write_text(f"{nodes} {len(switches)} {len(links)}\n{' '.join(map(str, switches))}\n" + "".join(l + "\n" for l in links))
    lines = "".join(f"{s} {d} 3 {b} {t:.9f}\n" for s, d, b, t, _ in case.flows)
    (work / "cw-flow.txt").write_text(f"{len(case.flows)}\n{lines}")
    return hosts


def flow_keys(flows: list) -> list[str]:
    """`SRC-DST-K` for each flow, K its rank among the flows from SRC: ConWeave's source port
    less 10000, so that both sides name the same flow."""
    seen: dict = {}
    keys = []
    for s, d, *_ in flows:
        keys.append(f"{s}-{d}-{seen.get(s, 0)}")
        seen[s] = seen.get(s, 0) + 1
    return keys


def run_conweave(sim: Path, work: Path, name: str, config: Path) -> dict:
    env = dict(os.environ, LD_LIBRARY_PATH=str(sim / "build"))
    t0 = time.monotonic()
    subprocess.run([str(sim / "build" / "scratch" / "network-load-balance"), str(config)], check=True, cwd=sim, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    fct = {}
    # FCT lines: SRC DST SPORT DPORT SIZE START_ns FCT_ns IDEAL_ns, decimal node ids.
    for line in (work / f"cw-{name}-fct.txt").read_text().splitlines():
        src, dst, sport, _dport, _size, _start, fct_ns, _ideal = line.split()
        fct[f"{src}-{dst}-{int(sport) - 10000}"] = int(fct_ns) / 1e3
    # PFC lines: TIME NODE NODE_TYPE IF_INDEX TYPE (1 PAUSE, 0 RESUME), where the frame is
    # received. ConWeave's switch sends a PAUSE for every packet that arrives above the
    # threshold (SwitchNode::CheckAndSendPfc does not check whether the port is paused), so
    # its frames are counted as pause episodes: a PAUSE on a port not already paused, what
    # fabricsim counts.
    state, frames, pauses = {}, 0, 0
    for line in (work / f"cw-{name}-pfc.txt").read_text().splitlines():
        _t, node, _ty, port, kind = line.split()
        frames += kind == "1"
        pauses += kind == "1" and state.get((node, port)) != "1"
        state[(node, port)] = kind
    return {"fct_us": fct, "pauses": pauses, "pause_frames": frames, "peak_queue_bytes": None, "wall_s": wall}


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


def run_fabricsim(bin_: list[str], work: Path, hosts: list[int], case: Case, name: str, config: Path, keys: list[str] | None = None) -> dict:
    """Translates `config` with `fabricsim from-ns3` and runs it with the case's seed; flows
    named `keys[flow id]` when given, else `SRC-DST` (node ids)."""
    path = work / f"{name}.toml"
    subprocess.run([*bin_, "from-ns3", str(config), "-o", str(path)], check=True, cwd=REPO, stdout=subprocess.DEVNULL)
    text = path.read_text()
    out = work / f"fabricsim-{name}"
    sets = ["--set", "run.port_stats=true"] + (["--seed", str(case.seed)] if case.seed is not None else [])
    t0 = time.monotonic()
    subprocess.run([*bin_, "run", "--quiet", "--out", str(out), *sets, str(path)], check=True, cwd=REPO, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    with open(out / "flows.csv") as f:
        rows_ = list(csv.DictReader(f))
    if keys is not None:
        fct = {keys[int(r["flow"])]: float(r["fct_us"]) for r in rows_ if r["fct_us"]}
    else:
        fct = {f"{hosts[int(r['src'])]}-{hosts[int(r['dst'])]}": float(r["fct_us"]) for r in rows_}
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


def row_of(case: Case, name: str, mode: int, ours: dict, ref: dict, **extra) -> dict:
    """One result row: the inputs both read (flows as their file lists them), the scenario
    fabricsim ran, both sides' figures; printed as it is made."""
    if ref["fct_us"] and set(ref["fct_us"]) != set(ours["fct_us"]):
        missing = sorted(set(ref["fct_us"]) ^ set(ours["fct_us"]))[:5]
        raise SystemExit(f"{case.name} {name}: the simulators finished different flows (e.g. {missing})")
    (o50, o99, omax), (r50, r99, rmax) = figures(ours["fct_us"]), figures(ref["fct_us"])
    row = {
        "case": case.name, "topology": case.topo, "seed": case.seed, "config": case.config, "scheme": name, "cc_mode": mode, **extra,
        "flows": case.flows, "scenario": ours.pop("scenario"),
        "fabricsim": ours, "ns3": ref,
        "fabricsim_p50_us": o50, "fabricsim_p99_us": o99, "fabricsim_max_us": omax,
        "ns3_p50_us": r50, "ns3_p99_us": r99, "ns3_max_us": rmax,
        "within_10pct": abs(o50 / r50 - 1) <= 0.1 and abs(omax / rmax - 1) <= 0.1 if ref["fct_us"] else None,
    }
    kb = lambda b: "-" if b is None else f"{b / 1e3:.0f}"
    print(
        f"{case.name:20} {name:7} {r50:9.1f}/{r99:9.1f}/{rmax:9.1f} {o50:9.1f}/{o99:9.1f}/{omax:9.1f} "
        f"{o50 / r50:6.3f}/{o99 / r99:6.3f}/{omax / rmax:6.3f} {str(ref['pauses']):>6}/{ours['pauses']:<7} {kb(ref['peak_queue_bytes']):>6}/{kb(ours['peak_queue_bytes']):<7}",
        flush=True,
    )
    return row


def seed_spread(a, work: Path, hosts: list[int], case: Case, name: str, lb_mode: int, keys: list[str]) -> dict:
    """The same flows under seeds 101..100+K in both simulators (ConWeave's RANDOM_SEED drives
    its rand(): DRILL's samples, LetFlow's paths, CONGA's ties; fabricsim's seed its own draws
    and its ECN marking): how far each one's p50 and max move with the seed alone."""
    out = {"seeds": [], "ns3": [], "fabricsim": []}
    for k in range(1, a.spread + 1):
        seeded = dataclasses.replace(case, seed=100 + k)
        tag = f"{name}-r{100 + k}"
        config = write_cw_config(work, seeded, tag, lb_mode)
        ours = run_fabricsim(fabricsim_bin(a.fabricsim), work, hosts, seeded, tag, config, keys)
        ref = run_conweave(a.conweave, work, tag, config) if a.conweave else {"fct_us": {}}
        o, r = figures(ours["fct_us"]), figures(ref["fct_us"])
        out["seeds"].append(100 + k)
        out["fabricsim"].append([o[0], o[2]])
        out["ns3"].append([r[0], r[2]])
    lo_hi = lambda v: f"{min(v):.1f}-{max(v):.1f}"
    print(f"{'':20} {name:7} seeds 101-{100 + a.spread}: ns-3 p50 {lo_hi([x[0] for x in out['ns3']])} max {lo_hi([x[1] for x in out['ns3']])}; fabricsim p50 {lo_hi([x[0] for x in out['fabricsim']])} max {lo_hi([x[1] for x in out['fabricsim']])}", flush=True)
    return out


def write_rows(path: Path, commit: str, rows: list, merge: bool) -> None:
    """One row a line (the all-to-all's per-flow figures would make an indented file long).
    `merge` (a run with --only): the file's rows of other (case, scheme) stay."""
    if merge and path.exists():
        ran = {(r["case"], r["scheme"]) for r in rows}
        rows = [r for r in json.loads(path.read_text())["rows"] if (r["case"], r["scheme"]) not in ran] + rows
    for r in rows:
        r.setdefault("commit", commit)
    body = ",\n".join(json.dumps(r) for r in rows)
    path.write_text(f'{{"commit": {json.dumps(commit)}, "rows": [\n{body}\n]}}\n')


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns3", type=Path, help="the built simulator's simulation/ folder (omit: fabricsim only)")
    ap.add_argument("--conweave", type=Path, help="ConWeave's built simulator folder (omit: fabricsim only)")
    ap.add_argument("--suite", choices=["hpcc", "conweave", "all"], default="hpcc", help="the HPCC simulator's cases, ConWeave's load-balancer cases, or both (default hpcc)")
    ap.add_argument("--fabricsim", help="the fabricsim binary (default: target/release/fabricsim, else cargo run)")
    ap.add_argument("--work", type=Path, default=HERE / "work", help="scratch folder (not committed)")
    ap.add_argument("--only", help="run only the cases whose name contains this")
    ap.add_argument("--schemes", help="comma-separated scheme names to run (default all)")
    ap.add_argument("--spread", type=int, default=0, help="ConWeave cases: also run both simulators with K other seeds (101..100+K: RANDOM_SEED and fabricsim's seed; same flows) and keep each one's p50 and max")
    a = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    want = lambda name: not a.schemes or name in a.schemes.split(",")
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    print(f"{'case':20} {'scheme':7} {'ns-3 p50/p99/max us':>28} {'fabricsim p50/p99/max us':>28} {'ratio p50/p99/max':>20} {'pauses ns3/fs':>14} {'peak KB ns3/fs':>15}")
    rows, cw_rows = [], []

    def selected(cases, suite):
        """The cases of `suite` that `--only` keeps, each with its scratch folder (made)."""
        for case in cases if a.suite in (suite, "all") else []:
            if a.only and a.only not in case.name:
                continue
            work = a.work / case.name
            work.mkdir(parents=True, exist_ok=True)
            yield case, work

    for case, work in selected(CASES, "hpcc"):
        hosts = write_inputs(work, case)
        for mode, name in SCHEMES:
            if not want(name):
                continue
            config = write_config(work, case, name, mode)
            ours = run_fabricsim(fabricsim_bin(a.fabricsim), work, hosts, case, name, config)
            ref = run_ns3(a.ns3, work, name, config) if a.ns3 else {"fct_us": {}, "pauses": None, "peak_queue_bytes": None}
            rows.append(row_of(case, name, mode, ours, ref))
    for case, work in selected(CW_CASES, "conweave"):
        hosts = write_cw_inputs(work, case)
        keys = flow_keys(case.flows)
        for lb_mode, name in LB_SCHEMES:
            if not want(name):
                continue
            config = write_cw_config(work, case, name, lb_mode)
            ours = run_fabricsim(fabricsim_bin(a.fabricsim), work, hosts, case, name, config, keys)
            ref = run_conweave(a.conweave, work, name, config) if a.conweave else {"fct_us": {}, "pauses": None, "peak_queue_bytes": None}
            row = row_of(case, name, 1, ours, ref, lb_mode=lb_mode)
            if a.spread:
                row["spread"] = seed_spread(a, work, hosts, case, name, lb_mode, keys)
            cw_rows.append(row)
    for what, got in (("HPCC simulator", rows), ("ConWeave's simulator", cw_rows)):
        judged = [r for r in got if r["within_10pct"] is not None]
        if judged:
            hit = sum(r["within_10pct"] for r in judged)
            print(f"parity beside the {what}: {hit} of {len(judged)} case x scheme rows within 10 % on both p50 and max FCT ({hit / len(judged):.0%})")
    if rows and not a.only and not a.schemes:
        write_rows(out / "results.json", commit, rows, merge=False)
    if cw_rows:
        write_rows(out / "conweave.json", commit, cw_rows, merge=bool(a.only or a.schemes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
