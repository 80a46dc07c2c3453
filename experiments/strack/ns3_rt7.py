#!/usr/bin/env python3
"""RT7's 32->1 incast in the ns-3 RDMA simulator of the HPCC paper, at that simulator's own MMU
(dynamic threshold α = 1/8), beside fabricsim on the same input: does the reference MMU give
Fig. 16's 37.5 MB of last-hop queue without the α calibration of RESULTS.md (α = 1/128)?

Usage: experiments/strack/ns3_rt7.py --ns3 PATH/simulation [--fabricsim BIN] [--work DIR]

The input is RT7's (run.py, seed 1): 32 senders, 16 MiB each, to host 0, at 400 G with 1 µs
links, 4 KiB packets, PFC with 5 MB of shared buffer per Tb/s (256 MiB per switch), an ECN step
at 1 BDP (416 KB) and DCQCN with the DCQCN paper's constants where ns-3 has a key for them
(R_AI 400 Mb/s, R_HAI 4 Gb/s, 55 µs timers, F = 5, g = 1/256; ns-3's DCQCN is the Mellanox
reaction point, which fabricsim runs as `reaction_point = "mellanox"`). The fabric is cut down
because the simulator keeps a map per host pair (8192² entries would not fit): the receiver's
ToR whole (64 hosts, 64 spine ports, as in T-8K), one ToR of 64 hosts for each ToR the senders
sit on in RT7 (the senders at their T-8K positions within it), and all 64 spines. Both
simulators read the same config: fabricsim's side is `fabricsim from-ns3` of it, which also
runs ns-3's ECMP hash. The last-hop queue is the egress queue of the receiver's ToR port to
host 0: ns-3's from its packet trace of that switch (`qlen` of every event there), fabricsim's
from `[run] trace_ports`.

Needs experiments/strack/out/RT7/roce1/flows.csv (`run.py RT7`) for the senders, and the
ns-3 build and trace reader described in experiments/ns3-parity/RESULTS.md.
"""
import argparse
import csv
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
spec = importlib.util.spec_from_file_location("ns3_parity", REPO / "experiments" / "ns3-parity" / "run.py")
parity = importlib.util.module_from_spec(spec)
sys.modules["ns3_parity"] = parity  # its dataclass looks its module up
spec.loader.exec_module(parity)

PER_TOR, SPINES, K8_TORS = 64, 64, 128
SIZE = 16 << 20
# Config keys that differ from the simulator's example (ns3-parity's EXAMPLE_CONFIG): RT7's.
RT7_CONFIG = {
    "PACKET_PAYLOAD_SIZE": 4032,  # 4 KiB packets; ns-3 adds 48 B of headers (fabricsim's RT7: 64 B)
    "HAS_WIN": 0,  # RoCEv2 as STrack's paper runs it: rate-based DCQCN, no window
    "RATE_AI": "400Mb/s", "RATE_HAI": "4000Mb/s", "MIN_RATE": "100Mb/s",
    "RP_TIMER": 55, "ALPHA_RESUME_INTERVAL": 55, "FAST_RECOVERY_TIMES": 5, "EWMA_GAIN": 0.00390625,
    # ECN step at 1 BDP (400 Gb/s x 8.33 µs = 416 KB): Kmin = Kmax, Pmax 1.
    "KMAX_MAP": "1 400000000000 416", "KMIN_MAP": "1 400000000000 416", "PMAX_MAP": "1 400000000000 1.0",
    "BUFFER_SIZE": 256,  # 5 MB per Tb/s of a 128 x 400 G switch
    "ENABLE_TRACE": 1,
    # One sample of the queue monitor only: at 100 ns over this many ports it would take hours.
    "QLEN_MON_START": 3000000000, "QLEN_MON_END": 3000000000,
}


def senders() -> list[int]:
    with open(HERE / "out" / "RT7" / "roce1" / "flows.csv") as f:
        rows = list(csv.DictReader(f))
    assert all(r["dst"] == "0" for r in rows) and len(rows) == 32, "RT7's incast: 32 flows to host 0"
    return [int(r["src"]) for r in rows]


def fabric(src: list[int]) -> tuple[list[int], str, list[tuple], int]:
    """(fabricsim host order, topology file text, ns-3 flows, the receiver's ToR node id).
    ToR 0 is the receiver's; the senders' T-8K ToRs become ToRs 1.. in order of first use."""
    tors = {0: 0}
    for h in src:
        tors.setdefault(h // PER_TOR, len(tors))
    hosts = len(tors) * PER_TOR
    tor0, spine0 = hosts, hosts + len(tors)
    links = [f"{h} {tor0 + h // PER_TOR} 400Gbps 0.001ms 0" for h in range(hosts)]
    links += [f"{tor0 + t} {spine0 + s} 400Gbps 0.001ms 0" for t in range(len(tors)) for s in range(SPINES)]
    switches = list(range(tor0, spine0 + SPINES))
    topo = f"{hosts + len(switches)} {len(switches)} {len(links)}\n{' '.join(map(str, switches))}\n" + "".join(l + "\n" for l in links)
    node = lambda h: tors[h // PER_TOR] * PER_TOR + h % PER_TOR
    flows = [(node(h), 0, SIZE, 2.0, 100 + i) for i, h in enumerate(src)]
    return list(range(hosts)), topo, flows, tor0


def ns3_last_hop_peak(sim: Path, trace: Path, tor: int) -> int:
    """Deepest queue of the ToR's port to host 0 (its interface 1: the first link in the
    topology file) over every traced event at that switch, in bytes."""
    reader = sim.parent / "analysis" / "trace_reader"
    out = subprocess.run([str(reader), str(trace)], check=True, capture_output=True, text=True).stdout
    peak = 0
    for line in out.splitlines():
        f = line.split()
        if len(f) > 4 and f[1] == f"n:{tor}" and f[2].startswith("1:"):
            peak = max(peak, int(f[3]))
    return peak


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns3", type=Path, required=True, help="the built simulator's simulation/ folder")
    ap.add_argument("--fabricsim", help="the fabricsim binary (default: target/release/fabricsim, else cargo run)")
    ap.add_argument("--work", type=Path, default=HERE / "out" / "ns3-RT7")
    a = ap.parse_args()
    work = a.work
    work.mkdir(parents=True, exist_ok=True)
    hosts, topo, flows, tor0 = fabric(senders())
    (work / "topology.txt").write_text(topo)
    (work / "flow.txt").write_text(f"{len(flows)}\n" + "".join(f"{s} {d} 3 {p} {b} {t:g}\n" for s, d, b, t, p in flows))
    case = parity.Case("rt7", "leaf_spine", flows, None, RT7_CONFIG)
    config = parity.write_config(work, case, "dcqcn", 1)
    (work / "trace.txt").write_text(f"1\n{tor0}\n")
    bin_ = parity.fabricsim_bin(a.fabricsim)
    # fabricsim: from-ns3's translation, with the last hop traced.
    scenario = work / "dcqcn.toml"
    subprocess.run([*bin_, "from-ns3", str(config), "-o", str(scenario)], check=True, cwd=REPO, stdout=subprocess.DEVNULL)
    out = work / "fabricsim-dcqcn"
    subprocess.run([*bin_, "run", "--quiet", "--out", str(out), "--set", "run.trace_interval_us=1", "--set", 'run.trace_ports=["tor0-host0"]', str(scenario)], check=True, cwd=REPO, stdout=subprocess.DEVNULL)
    summary = json.loads((out / "summary.json").read_text())
    with open(out / "port_trace.csv") as f:
        fs_peak = max(int(r["queue_bytes"]) for r in csv.DictReader(f))
    with open(out / "flows.csv") as f:
        fs_max = max(float(r["fct_us"]) for r in csv.DictReader(f))
    ref = parity.run_ns3(a.ns3, work, "dcqcn", config)
    ns3_peak = ns3_last_hop_peak(a.ns3, work / "ns3-dcqcn.tr", tor0)
    row = {
        "engine_commit": summary["engine"]["commit"],
        "ns3": {"max_fct_us": max(ref["fct_us"].values()), "pause_frames": ref["pauses"], "last_hop_peak_bytes": ns3_peak, "wall_s": round(ref["wall_s"], 1)},
        "fabricsim": {"max_fct_us": fs_max, "pause_frames": (summary.get("pfc") or {}).get("pause_frames"), "last_hop_peak_bytes": fs_peak,
                      "max_switch_buffer_bytes": (summary.get("pfc") or {}).get("max_switch_buffer_bytes")},
        "scenario": scenario.read_text(),
    }
    (HERE / "results" / "ns3-RT7.json").write_text(json.dumps(row, indent=1) + "\n")
    print(json.dumps({k: v for k, v in row.items() if k != "scenario"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
