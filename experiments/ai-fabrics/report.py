#!/usr/bin/env python3
"""The AI-fabrics study's tables from results/results.json: one row per (workload, fabric) with
each transport's CCT (µs) and normalised CCT, the bytes the spines carried, and the rows'
commits; then the fabric counts that set the cost. Writes results/table.md and prints it.

    experiments/ai-fabrics/report.py
"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKLOADS = [("ring", "flat ring AllReduce, 64 MiB"), ("ring_pxn", "flat ring AllReduce, 64 MiB, PXN"), ("hier", "hierarchical AllReduce, 64 MiB"), ("hier_tree", "hierarchical AllReduce, tree across servers, 64 MiB"), ("hier_ch4", "hierarchical AllReduce, 4 channels, 64 MiB"), ("a2a", "AllToAll, 16 MiB per GPU")]
FABRICS = ["rail", "racks", "rail_only"]
TRANSPORTS = [("roce", "RoCEv2"), ("strack", "STrack"), ("nscc", "NSCC+REPS")]


def main():
    rows = {r["id"]: r for r in json.loads((HERE / "results" / "results.json").read_text())}
    out = ["| workload | fabric | " + " | ".join(f"{t} CCT µs (norm.)" for _, t in TRANSPORTS) + " | spine GiB (per transport) |",
           "|---|---|" + "---|" * len(TRANSPORTS) + "---|"]
    commits = set()
    for w, title in WORKLOADS:
        for f in FABRICS:
            got = [rows.get(f"{w}-{f}-{t}") for t, _ in TRANSPORTS]
            if not any(got):
                continue
            cells = [f"{r['cct_us']:.0f} ({r['normalized_cct']:.2f})" if r else "–" for r in got]
            spine = " / ".join(f"{r['spine_tx_bytes'] / 2**30:.2f}" if r else "–" for r in got)
            out.append(f"| {title} | {f} | " + " | ".join(cells) + f" | {spine} |")
            commits |= {r["commit"] for r in got if r}
    out += ["", "NSCC + REPS with an ACK per packet (AllToAll):", "", "| fabric | CCT µs (norm.) | retransmitted | timeouts |", "|---|---|---|---|"]
    for f in FABRICS:
        r = rows.get(f"a2a-{f}-nscc_ack1")
        if r:
            out.append(f"| {f} | {r['cct_us']:.0f} ({r['normalized_cct']:.2f}) | {r['retransmitted']} | {r['timeouts']} |")
            commits.add(r["commit"])
    out += ["", "AllToAll with RoCEv2 against the scale-up rate (Gb/s per GPU each way):", "", "| scale-up Gb/s | rail CCT µs (norm.) | rail_only CCT µs (norm.) | rail_only over rail |", "|---|---|---|---|"]
    for gbps in (3600, 1600, 800, 400):
        tag = "a2a" if gbps == 3600 else f"a2a_su{gbps}"
        a, b = rows.get(f"{tag}-rail-roce"), rows.get(f"{tag}-rail_only-roce")
        if a and b:
            out.append(f"| {gbps} | {a['cct_us']:.0f} ({a['normalized_cct']:.2f}) | {b['cct_us']:.0f} ({b['normalized_cct']:.2f}) | {100 * (b['cct_us'] / a['cct_us'] - 1):+.1f} % |")
            commits |= {a["commit"], b["commit"]}
    out += ["", "AllToAll on one plane of 400G and on two planes of 200G (the same 24 switches), healthy and with a spine down:", "",
            "| transport | 1 plane | 1 plane, spine0 down | 2 planes | 2 planes, plane 1's spine4 down |", "|---|---|---|---|---|"]
    for t, name in TRANSPORTS + [("nscc_ack1", "NSCC+REPS, ACK per packet")]:
        got = [rows.get(i) for i in (f"a2a-rail-{t}", f"a2a_down-rail-{t}", f"a2a-rail2p-{t}", f"a2a_down-rail2p-{t}")]
        if all(got):
            out.append(f"| {name} | " + " | ".join(f"{r['cct_us']:.0f} ({r['normalized_cct']:.2f})" for r in got) + " |")
            commits |= {r["commit"] for r in got}
    out += ["", "AllToAll on two planes of 200G, each connection striped half and half, or one queue pair whose packets take the NIC's next free port or the port their entropy selects (`nic_port_choice`), healthy and with plane 1's spine4 down:", "",
            "| transport | striped | striped, spine4 down | next free port | next free port, spine4 down | by entropy | by entropy, spine4 down |", "|---|---|---|---|---|---|---|"]
    for t, name in TRANSPORTS[:2] + [("roce_ooo", "RoCEv2, out-of-order receiver (rc_ooo)"), ("nscc_ack1", "NSCC+REPS, ACK per packet")]:
        got = [rows.get(i) for i in (f"a2a-rail2p-{t}", f"a2a_down-rail2p-{t}", f"a2a-rail2pp-{t}", f"a2a_down-rail2pp-{t}", f"a2a-rail2pe-{t}", f"a2a_down-rail2pe-{t}")]
        if all(got[2:4]):
            out.append(f"| {name} | " + " | ".join(f"{r['cct_us']:.0f} ({r['normalized_cct']:.2f})" if r else "–" for r in got) + " |")
            commits |= {r["commit"] for r in got if r}
    out += ["", "AllToAll on dual-ToR (two 200G ports per NIC on a leaf pair, the same 24 switches), healthy and with tor1 down:", "",
            "| transport | healthy | tor1 down |", "|---|---|---|"]
    for t, name in TRANSPORTS + [("nscc_ack1", "NSCC+REPS, ACK per packet")]:
        got = [rows.get(f"a2a-rail2t-{t}"), rows.get(f"a2a_down-rail2t-{t}")]
        if all(got):
            out.append(f"| {name} | " + " | ".join(f"{r['cct_us']:.0f} ({r['normalized_cct']:.2f})" for r in got) + " |")
            commits |= {r["commit"] for r in got}
    wall = sum(r["wall_s"] for r in rows.values())
    cpu = sum(r["cpu_s"] for r in rows.values())
    rss = max(r["peak_rss_mb"] for r in rows.values())
    out += ["", f"{len(rows)} runs at {', '.join(sorted(commits))}: {wall / 60:.1f} min of wall time, {cpu / 60:.1f} min of CPU, peak RSS at most {rss:.0f} MB."]
    text = "\n".join(out) + "\n"
    (HERE / "results" / "table.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
