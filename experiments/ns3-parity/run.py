#!/usr/bin/env python3
"""fabricsim beside the HPCC ns-3 RDMA simulator (issue 43), on that simulator's own example.

The case is the example that `simulation/mix/` of alibaba-edu/High-Precision-Congestion-Control
runs: a star of 65 hosts on one switch (100 Gb/s, 1 us links) and the first two flows of its
flow file, 200 MB each from nodes 2 and 3 to node 1, starting at 2 s. This driver writes those
inputs itself (the topology and flow formats read by the simulator's `scratch/third.cc`), then
for each congestion control:

- runs fabricsim on a scenario that reads them (`flow_list` with `format = "ns3"`), with the
  example config's constants written out (`ecn_*`, PFC buffer, DCQCN's timers and steps, the
  rate-scaled 1-BDP window of `HAS_WIN 1` / `VAR_WIN 1`, 1000 B payload + the mode's headers);
- with `--ns3 DIR` (the built `simulation/` folder), runs the simulator on a copy of
  `DIR/mix/config.txt` pointed at the same inputs, `CC_MODE` set and tracing off.

It prints one row per (scheme, flow) and writes `results/results.json` with the commit.

    experiments/ns3-parity/run.py --ns3 /work/ns3-hpcc/simulation
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
from statistics import median
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

HOSTS = 65  # nodes 1..=65 around switch 0

# Cases on that star: (name, flows as (src node, dst node, bytes, start s)). The first is the
# simulator's example (the first two lines of its flow file); the incasts load the switch port
# to node 1 past Kmin, so that the controllers react.
CASES = [
    ("example_2to1_200MB", [(2, 1, 200_000_000, 2.0), (3, 1, 200_000_000, 2.0)]),
    ("incast_8to1_10MB", [(s, 1, 10_000_000, 2.0) for s in range(2, 10)]),
    ("incast_32to1_2MB", [(s, 1, 2_000_000, 2.0) for s in range(2, 34)]),
]

# The example config's DCQCN (CC_MODE 1): ALPHA_RESUME_INTERVAL 1, RATE_DECREASE_INTERVAL 4,
# RP_TIMER 900, EWMA_GAIN 1/256, FAST_RECOVERY_TIMES 1, RATE_AI 50Mb/s, RATE_HAI 100Mb/s,
# MIN_RATE 100Mb/s, CLAMP_TARGET_RATE 0, HAS_WIN 1 and VAR_WIN 1 (a window of the largest BDP,
# scaled by rate / line rate).
DCQCN = (
    '{ name = "dcqcn", g = 0.00390625, alpha_timer_us = 1, rate_timer_us = 900, fast_recovery_steps = 1, '
    "rate_ai_mbps = 50, rate_hai_mbps = 100, min_rate_mbps = 100, clamp_target_rate = false, "
    "cnp_interval_us = 4, window_bdp = 1.0, window_scales_with_rate = true }"
)

# TIMELY (CC_MODE 7): the simulator's TimelyAlpha/Beta/TLow/THigh/MinRtt defaults are
# fabricsim's (0.875, 0.8, 50 us, 500 us, 20 us); RATE_AI, RATE_HAI and MIN_RATE come from the
# config, and so does the window every mode has there (HAS_WIN 1, VAR_WIN 1).
TIMELY = '{ name = "timely", rate_ai_mbps = 50, rate_hai_mbps = 100, min_rate_mbps = 100, window_bdp = 1.0, window_scales_with_rate = true }'

# (ns-3 CC_MODE, name, fabricsim cc, header bytes). A data packet carries 1000 B of payload
# and CustomHeader::GetStaticWholeHeaderSize: Ethernet 14 + IP 20 + UDP 8 + pg 2 + seq 4 = 48
# B, plus the INT header of the mode (IntHeader::GetStaticSize): none for DCQCN and DCTCP, an
# 8 B timestamp for TIMELY. (The example's FCT file confirms 48: its ideal FCT of a 200 MB flow,
# 16 772 160 ns, is 200 000 packets of 1048 B at 100 Gb/s plus the 4.16 us base RTT.)
SCHEMES = [(1, "dcqcn", DCQCN, 48), (8, "dctcp", '"dctcp"', 48), (7, "timely", TIMELY, 56)]


def write_inputs(work: Path, flows) -> None:
    links = "".join(f"0 {h} 100Gbps 0.001ms 0\n" for h in range(1, HOSTS + 1))
    (work / "topology.txt").write_text(f"{HOSTS + 1} 1 {HOSTS}\n0\n{links}")
    lines = "".join(f"{s} {d} 3 100 {b} {t:g}\n" for s, d, b, t in flows)
    (work / "flow.txt").write_text(f"{len(flows)}\n{lines}")


def scenario(cc: str, header: int) -> str:
    return f"""# The HPCC ns-3 simulator's example (experiments/ns3-parity/run.py writes the inputs)
[topology]
kind = "leaf_spine"
tors = 1
hosts_per_tor = {HOSTS}
spines = 1
link_rate_gbps = 100
link_latency_ns = 1000
switch_latency_ns = 0

[switch]
trimming = false
# KMIN_MAP / KMAX_MAP / PMAX_MAP at 100 Gb/s: 400 KB, 1600 KB, 0.2
ecn_kmin_bytes = "400KB"
ecn_kmax_bytes = "1600KB"
ecn_pmax = 0.2

[switch.pfc]
enabled = true
# BUFFER_SIZE 32 (MB)
buffer_bytes = "32MB"

[transport]
# PACKET_PAYLOAD_SIZE 1000 and the headers of this mode
mtu_bytes = {1000 + header}
header_bytes = {header}
reliability = "go_back_n"
cc = {cc}

[workload]
kind = "flow_list"
file = "flow.txt"
format = "ns3"
ns3_topology = "topology.txt"
"""


def fabricsim_bin(given: str | None) -> list[str]:
    if given:
        return [given]
    built = REPO / "target" / "release" / "fabricsim"
    return [str(built)] if built.exists() else ["cargo", "run", "--release", "-q", "--"]


def run_fabricsim(bin_: list[str], work: Path, name: str, cc: str, header: int) -> dict[int, float]:
    path = work / f"{name}.toml"
    path.write_text(scenario(cc, header))
    out = work / f"fabricsim-{name}"
    subprocess.run([*bin_, "run", "--quiet", "--out", str(out), str(path)], check=True, cwd=REPO, stdout=subprocess.DEVNULL)
    with open(out / "flows.csv") as f:
        # Host h is node h + 1 (switch 0 comes first in the topology).
        return {int(r["src"]) + 1: float(r["fct_us"]) for r in csv.DictReader(f)}


def run_ns3(sim: Path, work: Path, name: str, mode: int) -> dict[int, float]:
    keys = {
        "TOPOLOGY_FILE": work / "topology.txt",
        "FLOW_FILE": work / "flow.txt",
        "TRACE_OUTPUT_FILE": work / f"ns3-{name}.tr",
        "FCT_OUTPUT_FILE": work / f"ns3-{name}-fct.txt",
        "PFC_OUTPUT_FILE": work / f"ns3-{name}-pfc.txt",
        "QLEN_MON_FILE": work / f"ns3-{name}-qlen.txt",
        "CC_MODE": mode,
        "ENABLE_TRACE": 0,
    }
    lines = []
    for line in (sim / "mix" / "config.txt").read_text().splitlines():
        word = line.split()[0] if line.split() else ""
        lines.append(f"{word} {keys[word]}" if word in keys else line)
    config = work / f"ns3-{name}-config.txt"
    config.write_text("\n".join(lines) + "\n")
    env = dict(os.environ, LD_LIBRARY_PATH=str(sim / "build"))
    subprocess.run([str(sim / "build" / "scratch" / "third"), str(config)], check=True, cwd=sim, env=env, stdout=subprocess.DEVNULL)
    fct = {}
    for line in (work / f"ns3-{name}-fct.txt").read_text().splitlines():
        src_ip, _dst, _sport, _dport, _size, _start, fct_ns, _ideal = line.split()
        # 11.x.y.1, node id = x * 256 + y
        ip = int(src_ip, 16)
        fct[((ip >> 16) & 0xFF) * 256 + ((ip >> 8) & 0xFF)] = int(fct_ns) / 1e3
    return fct


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns3", type=Path, help="the built simulator's simulation/ folder (omit: fabricsim only)")
    ap.add_argument("--fabricsim", help="the fabricsim binary (default: target/release/fabricsim, else cargo run)")
    ap.add_argument("--work", type=Path, default=HERE / "work", help="scratch folder (not committed)")
    a = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    rows = []
    print(f"{'case':20} {'scheme':7} {'ns-3 p50/max us':>22} {'fabricsim p50/max us':>22} {'ratio p50/max':>14}")
    for case, flows in CASES:
        work = a.work / case
        work.mkdir(parents=True, exist_ok=True)
        write_inputs(work, flows)
        for mode, name, cc, header in SCHEMES:
            ours = run_fabricsim(fabricsim_bin(a.fabricsim), work, name, cc, header)
            ref = run_ns3(a.ns3, work, name, mode) if a.ns3 else {}
            # The scenario fabricsim ran, and the inputs both read (flows as their file lists them).
            row = {"case": case, "scheme": name, "cc_mode": mode, "flows": flows, "scenario": scenario(cc, header), "fabricsim_fct_us": ours, "ns3_fct_us": ref}
            q = lambda d: (median(d.values()), max(d.values())) if d else (float("nan"), float("nan"))
            (o50, omax), (r50, rmax) = q(ours), q(ref)
            row.update(fabricsim_p50_us=o50, fabricsim_max_us=omax, ns3_p50_us=r50, ns3_max_us=rmax)
            rows.append(row)
            print(f"{case:20} {name:7} {r50:10.1f} /{rmax:10.1f} {o50:10.1f} /{omax:10.1f} {o50 / r50:6.3f} /{omax / rmax:6.3f}")
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "results.json").write_text(json.dumps({"commit": commit, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
