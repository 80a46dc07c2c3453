#!/usr/bin/env python3
"""fabricsim vs ASTRA-sim's analytical backend on the same Chakra execution traces (ETs).

Every ET set runs four times: ASTRA-sim congestion-unaware, ASTRA-sim congestion-aware (both
built outside this repository, see RESULTS.md), fabricsim NSCC (REPS, SACK, trimming) and
fabricsim RoCE-like (DCQCN, ECMP, go-back-N, PFC). One switch: N GPUs at 400 Gb/s, 1 µs per
link (fabricsim `leaf_spine` with one ToR; ASTRA-sim `Switch`, bandwidth 46.566... GB/s = 50e9
B/s because ASTRA-sim's GB is 2^30 B, latency 1000 ns per link: its Switch path is 2 links).

ET sets (files written by this script's own encoder of Chakra's et_def.proto, or copied):
  ar8_1MiB, ar16_1MiB    one AllReduce of comm_size 1 MiB on 8 / 16 ranks
  ag16_1MiB              one AllGather, comm_size 1 MiB (each rank's input) on 16 ranks
  a2a16_1MiB             one AllToAll, comm_size 1 MiB on 16 ranks
  step                   the repository's data/chakra/step.{0..3}.et with groups.json (4 ranks)
  c1_compute_bound       4 x [COMP 1000 us -> AllReduce 4 MiB] (COMP i+1 after COMP i), 16 ranks
  c2_network_bound       COMP 10 us -> AllReduce 256 MiB, 16 ranks
  c3_mix                 COMP 100 -> AllGather 16 MiB per rank -> COMP 100 -> AllToAll 16 MiB, 16 ranks

    experiments/astra-parity/run.py --astra-bin DIR [--fabricsim BIN] [--repo DIR] [--out DIR]
                                    [--only REGEX] [--sensitivity] [--force]

Rows go to results/results.json (one per set and simulator; a row already there with the same
scenario hash and the same binary is kept unless --force) and results/table.md. Outputs of the
runs (ETs, configs, logs, summary.json, ccts.csv) go under --out, which is not committed.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "results.json"
TABLE = HERE / "results" / "table.md"

MiB = 1 << 20
B_REF = 50e9  # B/s: 400 Gb/s, for the analytic reference
L_REF = 2e-6  # s: one GPU -> switch -> GPU path, 2 links of 1 µs
PEAK_FLOPS = 900e12  # FLOP/s: the system config's peak-perf, for the compute nodes' num_ops
ASTRA_BW_GBPS = 50e9 / 2**30  # 46.566128730773926: ASTRA-sim converts GB/s with 1 GB = 2^30 B
ASTRA_LINK_NS = 1000.0
SIMULATORS = ("astra_unaware", "astra_aware", "fabricsim_nscc", "fabricsim_dcqcn")
# --sensitivity: the knobs that explain the differences (RESULTS.md)
SENSITIVITY = {
    "astra_unaware_fastmem": "ASTRA unaware, local-mem-bw 1e9 GB/s (local reduction ~free)",
    "astra_unaware_bw50": "ASTRA unaware, bandwidth [50] (= 53.7e9 B/s)",
    "astra_aware_bw50": "ASTRA aware, bandwidth [50]",
    "astra_unaware_s4": "ASTRA unaware, 4 splits, 1 active chunk",
    "astra_unaware_s4a4": "ASTRA unaware, 4 splits, 4 active chunks",
    "astra_aware_s4a4": "ASTRA aware, 4 splits, 4 active chunks",
    "fabricsim_nscc_chunk1g": "fabricsim NSCC, chunk 1 GiB (no chunk pipelining)",
    "fabricsim_nscc_chunk1g_ack1": "fabricsim NSCC, chunk 1 GiB, ACK 1 B",
    "fabricsim_nscc_hdr1_ack1": "fabricsim NSCC, header 1 B, ACK 1 B",
}
# ASTRA-sim config variants: (system keys replaced, network bandwidth in its GB/s)
ASTRA_VARIANTS = {
    "": ({}, None),
    "fastmem": ({"local-mem-bw": 1000000000}, None),
    "bw50": ({}, 50.0),
    "s4": ({"preferred-dataset-splits": 4}, None),
    "s4a4": ({"preferred-dataset-splits": 4, "active-chunks-per-dimension": 4}, None),
}
# fabricsim variants: (transport, chunk, extra [transport] lines)
FS_VARIANTS = {
    "nscc": ("nscc", "512KiB", ""),
    "dcqcn": ("dcqcn", "512KiB", ""),
    "nscc_chunk1g": ("nscc", "1GiB", ""),
    "nscc_chunk1g_ack1": ("nscc", "1GiB", "ack_bytes = 1\n"),
    "nscc_hdr1_ack1": ("nscc", "512KiB", "header_bytes = 1\nack_bytes = 1\n"),
}

# ---------------------------------------------------------------------------------------------
# Chakra ET files: records of (varint length, protobuf message); a GlobalMetadata first
# (version: field 1), then one Node per operation. Field numbers from Chakra's et_def.proto:
#   Node: id 1 (uint64), name 2, type 3 (NodeType), ctrl_deps 4 and data_deps 5 (repeated
#         uint64, packed in proto3), start_time_micros 6, duration_micros 7, inputs 8,
#         outputs 9 (IOInfo), attr 10 (repeated AttributeProto)
#   AttributeProto: name 1, doc_string 2, one value of: double_val 3, int64_val 9,
#         uint64_val 13, bool_val 27, string_val 29 (and lists and other widths, unused here)
# proto3 leaves out a field at its default value, except a member of a oneof, which is written
# whenever it is set (so `bool_val: false` is on the wire).
# ---------------------------------------------------------------------------------------------
COMP_NODE, COMM_SEND_NODE, COMM_RECV_NODE, COMM_COLL_NODE = 4, 5, 6, 7
ALL_REDUCE, ALL_GATHER, ALL_TO_ALL, REDUCE_SCATTER = 0, 2, 6, 7
OP_NAMES = {ALL_REDUCE: "allreduce", ALL_GATHER: "allgather", ALL_TO_ALL: "alltoall", REDUCE_SCATTER: "reducescatter"}


def _varint(v: int) -> bytes:
    if v < 0:
        v += 1 << 64  # int64: two's complement, 10 bytes
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _len_field(field: int, payload: bytes) -> bytes:
    return _key(field, 2) + _varint(len(payload)) + payload


def _attr(name: str, value) -> bytes:
    """AttributeProto: a bool as bool_val, an int as int64_val (uint64_val above its range),
    a float as double_val, a str as string_val."""
    out = _len_field(1, name.encode())
    if isinstance(value, bool):
        out += _key(27, 0) + _varint(int(value))
    elif isinstance(value, int):
        out += _key(9, 0) + _varint(value) if value < 2**63 else _key(13, 0) + _varint(value)
    elif isinstance(value, float):
        out += _key(3, 1) + struct.pack("<d", value)
    elif isinstance(value, str):
        out += _len_field(29, value.encode())
    else:
        raise TypeError(f"attribute {name}: {value!r}")
    return out


def node(nid: int, name: str, kind: int, data_deps=(), ctrl_deps=(), duration_micros: int = 0, attrs=()) -> bytes:
    """One Node message; `attrs` is a sequence of (name, value)."""
    out = b""
    if nid:
        out += _key(1, 0) + _varint(nid)
    if name:
        out += _len_field(2, name.encode())
    out += _key(3, 0) + _varint(kind)
    for field, deps in ((4, ctrl_deps), (5, data_deps)):
        if deps:
            out += _len_field(field, b"".join(_varint(d) for d in deps))
    if duration_micros:
        out += _key(7, 0) + _varint(duration_micros)
    for a in attrs:
        out += _len_field(10, _attr(*a))
    return out


def write_et(path: Path, nodes: list[bytes], version: str = "0.0.4") -> None:
    records = [_len_field(1, version.encode())] + nodes
    path.write_bytes(b"".join(_varint(len(r)) + r for r in records))


def _read_varint(b: bytes, i: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        x = b[i]
        i += 1
        v |= (x & 0x7F) << shift
        shift += 7
        if not x & 0x80:
            return v, i


def _fields(b: bytes):
    """(field, wire, value) of a message: an int for wire types 0, 1, 5; bytes for 2."""
    i = 0
    while i < len(b):
        k, i = _read_varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = _read_varint(b, i)
        elif w == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif w == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        elif w == 2:
            n, i = _read_varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError(f"wire type {w}")
        yield f, w, v


def read_et(path: Path) -> list[dict]:
    """The nodes of an ET file: id, name, type, data_deps, duration_micros and the attributes
    this driver reads (integers, bools, strings)."""
    b, i, recs = path.read_bytes(), 0, []
    while i < len(b):
        n, i = _read_varint(b, i)
        recs.append(b[i:i + n])
        i += n
    nodes = []
    for rec in recs[1:]:
        nd = {"id": 0, "name": "", "type": 0, "data_deps": [], "ctrl_deps": [], "duration_micros": 0, "attr": {}}
        for f, w, v in _fields(rec):
            if f == 1:
                nd["id"] = v
            elif f == 2:
                nd["name"] = v.decode()
            elif f == 3:
                nd["type"] = v
            elif f in (4, 5):
                deps = nd["ctrl_deps" if f == 4 else "data_deps"]
                if w == 0:
                    deps.append(v)
                else:
                    j = 0
                    while j < len(v):
                        d, j = _read_varint(v, j)
                        deps.append(d)
            elif f == 7:
                nd["duration_micros"] = v
            elif f == 10:
                name, val = "", None
                for af, aw, av in _fields(v):
                    if af == 1:
                        name = av.decode()
                    elif af == 9:
                        val = av - (1 << 64) if av >= 1 << 63 else av
                    elif af == 13:
                        val = av
                    elif af == 27:
                        val = bool(av)
                    elif af == 29:
                        val = av.decode()
                nd["attr"][name] = val
        nodes.append(nd)
    return nodes


# ---------------------------------------------------------------------------------------------
# The ET sets
# ---------------------------------------------------------------------------------------------
def comp(nid: int, name: str, us: int, deps) -> bytes:
    """A compute node: duration_micros (what ASTRA-sim uses with roofline disabled, and what
    fabricsim uses first), and num_ops/tensor_size such that ASTRA-sim's roofline, if enabled
    (peak-perf 900 TFLOP/s, local-mem-bw 1600 GB/s), would be compute-bound at the same time."""
    return node(nid, name, COMP_NODE, deps, duration_micros=us,
                attrs=[("is_cpu_op", False), ("num_ops", round(us * PEAK_FLOPS / 1e6)), ("tensor_size", 1_000_000)])


def coll(nid: int, name: str, op: int, size: int, deps=()) -> bytes:
    """A collective over all ranks (no pg_name)."""
    return node(nid, name, COMM_COLL_NODE, deps, attrs=[("is_cpu_op", False), ("comm_type", op), ("comm_size", size)])


def single(name: str, op: int, size: int):
    return lambda rank: [coll(rank, name, op, size)]


def c1(rank):
    nodes, prev = [], []
    for i in range(4):
        c = 10 * i + 1
        nodes += [comp(c, f"compute{i}", 1000, prev), coll(c + 1, f"allreduce{i}", ALL_REDUCE, 4 * MiB, [c])]
        prev = [c]
    return nodes


def c2(rank):
    return [comp(1, "compute", 10, []), coll(2, "allreduce", ALL_REDUCE, 256 * MiB, [1])]


def c3(rank):
    return [comp(1, "compute0", 100, []), coll(2, "allgather", ALL_GATHER, 16 * MiB, [1]),
            comp(3, "compute1", 100, [2]), coll(4, "alltoall", ALL_TO_ALL, 16 * MiB, [3])]


# name -> (ranks, nodes of a rank, or None for the repository's step)
SETS = {
    "ar8_1MiB": (8, single("all_reduce_1MiB", ALL_REDUCE, MiB)),
    "ar16_1MiB": (16, single("all_reduce_1MiB", ALL_REDUCE, MiB)),
    "ag16_1MiB": (16, single("all_gather_1MiB", ALL_GATHER, MiB)),
    "a2a16_1MiB": (16, single("all_to_all_1MiB", ALL_TO_ALL, MiB)),
    "step": (4, None),
    "c1_compute_bound": (16, c1),
    "c2_network_bound": (16, c2),
    "c3_mix": (16, c3),
}


def make_set(name: str, out: Path, repo: Path) -> dict:
    """Writes (or copies) the set's ETs into out/<name>/et/ and describes it: ranks, ET prefix,
    groups file, the collectives and the analytic reference."""
    ranks, gen = SETS[name]
    d = out / name / "et"
    d.mkdir(parents=True, exist_ok=True)
    groups = None
    if gen is None:
        src = repo / "data" / "chakra"
        for r in range(ranks):
            shutil.copyfile(src / f"step.{r}.et", d / f"{name}.{r}.et")
        shutil.copyfile(src / "groups.json", d / "groups.json")
        groups = d / "groups.json"
    else:
        for r in range(ranks):
            write_et(d / f"{name}.{r}.et", gen(r))
    files = [d / f"{name}.{r}.et" for r in range(ranks)] + ([groups] if groups else [])
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + hashlib.sha256(f.read_bytes()).digest())
    desc = {"name": name, "ranks": ranks, "prefix": d / name, "groups": groups, "et_sha256": h.hexdigest()}
    desc["colls"], desc["ref_us"] = describe(desc)
    return desc


def analytic_us(op: str, n: int, size: int) -> float:
    """Ring AllReduce 2(n-1)/n S/B + 2(n-1) L; ring AllGather (n-1)/n S/B + (n-1) L with S the
    gathered buffer; direct AllToAll (n-1)/n S/B + L."""
    if op == "allreduce":
        return (2 * (n - 1) / n * size / B_REF + 2 * (n - 1) * L_REF) * 1e6
    if op in ("allgather", "reducescatter"):
        return ((n - 1) / n * size / B_REF + (n - 1) * L_REF) * 1e6
    if op == "alltoall":
        return ((n - 1) / n * size / B_REF + L_REF) * 1e6
    return float("nan")


def describe(desc: dict) -> tuple[list[dict], float]:
    """The collectives of the set (from rank 0's and every rank's ETs: name, op, comm_size,
    group size, bytes as both simulators read them: an AllGather's comm_size is each rank's
    input, so the gathered buffer is comm_size x ranks) and the analytic reference of the
    longest rank: its chain of compute, p2p (S/B + L) and collectives, assuming no overlap
    except where a compute does not wait for a collective (c1: the computes run back to back,
    the last AllReduce is exposed)."""
    groups = json.loads(desc["groups"].read_text()) if desc["groups"] else {}
    n = desc["ranks"]
    colls, ref = {}, 0.0
    for r in range(n):
        nodes = read_et(Path(f"{desc['prefix']}.{r}.et"))
        finish = {}
        for nd in nodes:  # nodes are in dependency order in these files
            start = max((finish[d] for d in nd["data_deps"] + nd["ctrl_deps"] if d in finish), default=0.0)
            a = nd["attr"]
            if nd["type"] == COMP_NODE:
                t = float(nd["duration_micros"])
            elif nd["type"] == COMM_COLL_NODE:
                op = OP_NAMES.get(a.get("comm_type"), str(a.get("comm_type")))
                pg = a.get("pg_name")
                members = len(groups[str(pg)]) if pg not in (None, "", "0") else n
                size = a["comm_size"] * (members if op == "allgather" else 1)
                colls.setdefault(nd["name"], {"name": nd["name"], "op": op, "ranks": members, "comm_size": a["comm_size"],
                                              "bytes": size, "analytic_us": round(analytic_us(op, members, size), 3)})
                t = analytic_us(op, members, size)
            elif nd["type"] in (COMM_SEND_NODE, COMM_RECV_NODE):
                t = (a["comm_size"] / B_REF + L_REF) * 1e6 if nd["type"] == COMM_RECV_NODE else 0.0
            else:
                t = 0.0
            finish[nd["id"]] = start + t
        ref = max(ref, max(finish.values()))
    return list(colls.values()), round(ref, 3)


# ---------------------------------------------------------------------------------------------
# ASTRA-sim
# ---------------------------------------------------------------------------------------------
SYSTEM = {
    "scheduling-policy": "LIFO",
    "endpoint-delay": 10,
    "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 1,
    "all-reduce-implementation": ["ring"],
    "all-gather-implementation": ["ring"],
    "reduce-scatter-implementation": ["ring"],
    "all-to-all-implementation": ["direct"],
    "collective-optimization": "localBWAware",
    "local-mem-bw": 1600,
    "boost-mode": 0,
    "roofline-enabled": 0,
    "peak-perf": 900,
    "trace-enabled": 1,
}


def write_configs(out: Path, ranks: int, variant: str = "") -> dict:
    """ASTRA-sim's network (per rank count), system and remote-memory configs."""
    d = out / "configs"
    d.mkdir(parents=True, exist_ok=True)
    system_keys, bw = ASTRA_VARIANTS[variant]
    suffix = f"_{variant}" if variant else ""
    net = d / f"network_switch{ranks}{'_bw50' if bw else ''}.yml"
    net.write_text(
        "topology: [ Switch ]\n"
        f"npus_count: [ {ranks} ]\n"
        + (f"bandwidth: [ {bw!r} ]  # GB/s with 1 GB = 2^30 B: 53.7e9 B/s\n" if bw else
           f"bandwidth: [ {ASTRA_BW_GBPS!r} ]  # GB/s with 1 GB = 2^30 B: 50e9 B/s = 400 Gb/s\n")
        + f"latency: [ {ASTRA_LINK_NS!r} ]  # ns per link; a Switch path is 2 links\n")
    system = d / f"system{suffix if system_keys else ''}.json"
    system.write_text(json.dumps({**SYSTEM, **system_keys}, indent=1) + "\n")
    mem = d / "remote_memory.json"
    mem.write_text(json.dumps({"memory-type": "NO_MEMORY_EXPANSION"}) + "\n")
    return {"network": net, "system": system, "remote_memory": mem}


def sha_file(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def git(path: Path, *args) -> str:
    p = subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True)
    return p.stdout.rstrip() if p.returncode == 0 else ""


ASTRA_SUBMODULES = ("extern/graph_frontend/chakra", "extern/network_backend/analytical",
                    "extern/network_backend/analytical/extern/yaml-cpp", "extern/helper/fmt",
                    "extern/helper/spdlog", "extern/remote_memory_backend/analytical")


def astra_version(bin_dir: Path) -> str:
    """The ASTRA-sim build the binaries came from, read from its work tree
    (<src>/build/astra_analytical/build/bin): the superproject's commit; each submodule's commit
    (and the superproject's pin where they differ) with the files changed in it (the build
    patches, their diff's sha256); the yaml-cpp given to FetchContent."""
    src = bin_dir.resolve().parents[3]
    head = git(src, "rev-parse", "HEAD")
    if not head:
        return f"unknown (no git work tree at {src})"
    parts = [f"astra-sim {head[:12]}"]
    pins = dict(reversed(line.split()[2:4]) for line in git(src, "ls-tree", "-r", "HEAD").splitlines() if line.split()[1] == "commit")
    for sub in ASTRA_SUBMODULES:
        used = git(src / sub, "rev-parse", "HEAD")
        s = f"{sub} {used[:12] or '?'}"
        if sub in pins and pins[sub] != used:
            s += f" (pinned {pins[sub][:12]})"
        changed = [ln[3:] for ln in git(src / sub, "status", "--porcelain").splitlines() if ln[:2] == " M"]
        if changed:
            diff = git(src / sub, "diff", "--", *changed)
            s += f" + patch of {', '.join(changed)} (sha256 {hashlib.sha256(diff.encode()).hexdigest()[:12]})"
        parts.append(s)
    cache = bin_dir.resolve().parent / "CMakeCache.txt"
    m = re.search(r"^FETCHCONTENT_SOURCE_DIR_YAML-CPP:PATH=(.+)$", cache.read_text(), re.M) if cache.exists() else None
    if m:
        parts.append(f"FetchContent yaml-cpp {git(Path(m.group(1)), 'rev-parse', 'HEAD')[:12] or '?'}")
    return "; ".join(parts)


def run_astra(flavour: str, st: dict, cfg: dict, bin_dir: Path, out: Path, version: str) -> dict:
    binary = bin_dir / f"AstraSim_Analytical_Congestion_{flavour.capitalize()}"
    d = out / st["name"] / f"astra_{flavour}" if not cfg.get("variant") else out / st["name"] / f"astra_{flavour}_{cfg['variant']}"
    shutil.rmtree(d, ignore_errors=True)
    (d / "log").mkdir(parents=True)
    cmd = ["nice", "-n", "10", str(binary), f"--workload-configuration={st['prefix']}",
           f"--system-configuration={cfg['system']}", f"--remote-memory-configuration={cfg['remote_memory']}",
           f"--network-configuration={cfg['network']}",
           f"--comm-group-configuration={st['groups'] if st['groups'] else 'empty'}",
           f"--logging-folder={d / 'log'}"]
    t0 = time.time()
    p = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=3600)
    wall = time.time() - t0
    (d / "stdout.txt").write_text(p.stdout)
    (d / "stderr.txt").write_text(p.stderr)
    fin = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"sys\[(\d+)\] finished, (\d+) cycles", p.stdout)}
    row = {"rc": p.returncode, "ranks_finished": len(fin), "wall_s": round(wall, 2)}
    if len(fin) == st["ranks"]:
        row["end_us"] = max(fin.values()) / 1e3  # a cycle is 1 ns
        row["end_us_min"] = min(fin.values()) / 1e3
    else:
        row["end_us"] = None
        errs = re.findall(r"what\(\):\s*(.*)", p.stderr) + [ln.split("] ", 3)[-1] for ln in p.stdout.splitlines() if "[critical]" in ln or "unreleased" in ln][:2]
        row["error"] = "; ".join(errs) or p.stderr[-300:]
    # Per collective, from trace-enabled's issue/callback lines (ticks in ns): duration = the
    # last rank's callback minus the last rank's issue (when every rank has reached it).
    ev = {}
    log = d / "log" / "log.log"
    if log.exists():
        for m in re.finditer(r"(issue|callback),sys->id=(\d+), tick=(\d+), node->id=\d+, node->name=([^,]+), node->type=7", log.read_text()):
            ev.setdefault(m.group(4), {"issue": {}, "callback": {}})[m.group(1)][int(m.group(2))] = int(m.group(3))
    colls = []
    for c in st["colls"]:
        e = ev.get(c["name"])
        if not e or not e["callback"]:
            colls.append({"name": c["name"], "dur_us": None})
            continue
        end, issued = max(e["callback"].values()) / 1e3, max(e["issue"].values()) / 1e3
        colls.append({"name": c["name"], "first_issue_us": min(e["issue"].values()) / 1e3, "last_issue_us": issued,
                      "end_us": end, "dur_us": end - issued})
    row["collectives"] = colls
    row["astra_sim"] = version
    row["binary"] = binary.name
    row["binary_sha256"] = sha_file(binary)
    row["configs_sha256"] = {k: sha_file(v) for k, v in cfg.items() if k != "variant"}
    if st["groups"]:
        row["configs_sha256"]["comm_group"] = sha_file(st["groups"])
    row["et_sha256"] = st["et_sha256"]
    row["command"] = " ".join(cmd[3:])
    return row


def astra_key(st: dict, cfg: dict, flavour: str) -> str:
    """The scenario hash of an ASTRA-sim row: the flavour, the config files and the ETs."""
    h = hashlib.sha256(flavour.encode())
    for k in sorted(k for k in cfg if k != "variant"):
        h.update(k.encode() + sha_file(cfg[k]).encode())
    h.update(st["et_sha256"].encode())
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------
# fabricsim
# ---------------------------------------------------------------------------------------------
def fabricsim_scenario(st: dict, variant: str) -> str:
    """The scenario: paths relative to its file (out/<set>/), the ETs' sha256 in a comment so
    that the scenario's hash covers them."""
    cc, chunk, extra = FS_VARIANTS[variant]
    if cc == "nscc":
        transport = f'cc = "nscc"\nlb = "reps"\nreliability = "sack"\n{extra}\n[switch]\ntrimming = true\n'
    else:  # RoCE-like
        transport = 'cc = "dcqcn"\nlb = "ecmp"\nreliability = "go_back_n"\n\n[switch]\ntrimming = false\n\n[switch.pfc]\nenabled = true\n'
    groups = f'groups = "et/{st["groups"].name}"\n' if st["groups"] else ""
    return f"""# ETs and groups: sha256 {st['et_sha256']}
name = "astra-parity {st['name']} {variant}"
seed = 1

[topology]
kind = "leaf_spine"
tors = 1
hosts_per_tor = {st['ranks']}
spines = 1
link_rate_gbps = 400
link_latency_ns = 1000
switch_latency_ns = 0

[transport]
{transport}
[workload]
kind = "chakra"
traces = "et/{st['name']}"
{groups}chunk = "{chunk}"
"""


def run_fabricsim(binary: Path, st: dict, variant: str, text: str, out: Path) -> dict:
    d = out / st["name"]
    scen = d / f"fabricsim_{variant}.toml"
    scen.write_text(text)
    res = d / f"fabricsim_{variant}"
    shutil.rmtree(res, ignore_errors=True)
    t0 = time.time()
    p = subprocess.run(["nice", "-n", "10", str(binary), "run", str(scen), "--out", str(res), "-q"], capture_output=True, text=True)
    wall = time.time() - t0
    (d / f"fabricsim_{variant}.log").write_text(p.stdout + p.stderr)
    if p.returncode != 0:
        return {"rc": p.returncode, "end_us": None, "error": p.stderr[-400:], "wall_s": round(wall, 2)}
    s = json.loads((res / "summary.json").read_text())
    it = s["training"]["iterations"][0]
    # ccts.csv has a row per group instance: keep one per (op, ranks, bytes, start, end).
    seen, insts = set(), []
    with open(res / "ccts.csv") as f:
        for r in csv.DictReader(f):
            k = (r["op"], r["ranks"], r["bytes"], r["start_us"], r["end_us"])
            if k not in seen:
                seen.add(k)
                insts.append({"op": r["op"], "ranks": int(r["ranks"]), "bytes": int(r["bytes"]), "start_us": float(r["start_us"]),
                              "end_us": float(r["end_us"]), "cct_us": float(r["cct_us"]), "ideal_us": float(r["ideal_cct_us"])})
    insts.sort(key=lambda c: c["start_us"])
    # The set's collectives in order, each matched to the next instance of its op and group size.
    colls, used = [], set()
    for c in st["colls"]:
        j = next((j for j, g in enumerate(insts) if j not in used and g["op"] == c["op"] and g["ranks"] == c["ranks"]), None)
        if j is None:
            colls.append({"name": c["name"], "cct_us": None})
            continue
        used.add(j)
        colls.append({"name": c["name"], **insts[j]})
    pk = s.get("packets", {})
    return {
        "rc": 0,
        "end_us": it["time_us"],
        "compute_ideal_us": it.get("compute_ideal_us"),
        "network_ideal_us": it.get("network_ideal_us"),
        "collectives": colls,
        "packets": {k: pk.get(k) for k in ("data_sent", "retransmitted", "dropped", "trimmed", "ecn_marked", "cnps", "timeouts")},
        "pfc": s.get("pfc"),
        "max_queue_bytes": s.get("max_queue_bytes"),
        "wall_s": round(wall, 2),
        # The commit the binary was built from (summary.json's engine), not the checkout's.
        "commit": s["engine"]["commit"],
        "binary_sha256": sha_file(binary),
        "scenario_sha256": hashlib.sha256(text.encode()).hexdigest(),
        "scenario": text,
    }


# ---------------------------------------------------------------------------------------------
# Table
# ---------------------------------------------------------------------------------------------
def fmt(x, nd=2):
    return "—" if x is None else f"{x:.{nd}f}"


def ratio(a, b):
    return f"{a / b:.3f}" if a is not None and b else "—"


def old_allgather_reading(row: dict, st_colls: dict) -> bool:
    """fabricsim before the comm_size fix read an AllGather's comm_size as the gathered buffer."""
    for c in row.get("collectives", []):
        sc = st_colls.get(c["name"])
        if sc and sc["op"] == "allgather" and c.get("bytes") is not None and c["bytes"] != sc["bytes"]:
            return True
    return False


def table(rows: list[dict], sets: dict) -> str:
    by = {(r["set"], r["simulator"]): r for r in rows}
    notes = []
    out = ["## End time (µs)", "",
           "ASTRA-sim: the last rank's `sys[i] finished` (the first rank's in brackets where they differ); "
           "fabricsim: `training.iterations[0].time_us`. Analytic: B = 50e9 B/s, 2 µs per path, the longest rank's chain "
           "(ring AllReduce 2(N−1)/N·S/B + 2(N−1)·L, ring AllGather (N−1)/N·S/B + (N−1)·L on the gathered S, "
           "direct AllToAll (N−1)/N·S/B + L, p2p S/B + L).", "",
           "| set | N | ASTRA unaware | ASTRA aware | fabricsim NSCC | fabricsim DCQCN | NSCC / unaware | NSCC / aware | analytic |",
           "|---|---|---|---|---|---|---|---|---|"]
    for name, st in sets.items():
        g = {s: by.get((name, s), {}) for s in SIMULATORS}
        cells = []
        for s in ("astra_unaware", "astra_aware"):
            r = g[s]
            if not r:
                cells.append("—")
            elif r.get("end_us") is None:
                cells.append("FAILED")
            else:
                lo = r.get("end_us_min")
                cells.append(fmt(r["end_us"]) + (f" [{lo:.2f}]" if lo is not None and r["end_us"] - lo > 0.005 else ""))
        mark = ""
        colls = {c["name"]: c for c in st["colls"]}
        if g["fabricsim_nscc"] and old_allgather_reading(g["fabricsim_nscc"], colls):
            mark = " ¹"
            if "¹" not in "".join(notes):
                notes.append("¹ fabricsim binary reading an AllGather's comm_size as the gathered buffer (before the fix): it moved 1/N of ASTRA-sim's bytes; needs the new binary.")
        fn, fd = g["fabricsim_nscc"].get("end_us"), g["fabricsim_dcqcn"].get("end_us")
        u, a = g["astra_unaware"].get("end_us"), g["astra_aware"].get("end_us")
        out.append(f"| {name} | {st['ranks']} | {cells[0]} | {cells[1]} | {fmt(fn)}{mark} | {fmt(fd)}{mark} | {ratio(fn, u)} | {ratio(fn, a)} | {st['ref_us']:.2f} |")
    out += [""] + notes + ["", "## Per collective (µs)", "",
                           "ASTRA-sim: the last rank's callback minus the last rank's issue; fabricsim: CCT (ccts.csv, from when every member reached it). "
                           "Bytes: the reduced or gathered buffer (an AllGather's comm_size × N).", "",
                           "| set | collective | op | N | bytes | analytic | ASTRA unaware | ASTRA aware | fabricsim NSCC | fabricsim DCQCN | fabricsim ideal | NSCC / unaware | NSCC / aware |",
                           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, st in sets.items():
        for i, c in enumerate(st["colls"]):
            def get(sim, key):
                r = by.get((name, sim), {})
                cs = r.get("collectives") or []
                return cs[i].get(key) if i < len(cs) else None
            u, a = get("astra_unaware", "dur_us"), get("astra_aware", "dur_us")
            fn, fd = get("fabricsim_nscc", "cct_us"), get("fabricsim_dcqcn", "cct_us")
            fb = get("fabricsim_nscc", "bytes")
            mark = " ¹" if fb is not None and fb != c["bytes"] else ""
            out.append(f"| {name} | {c['name']} | {c['op']} | {c['ranks']} | {c['bytes']} | {c['analytic_us']:.2f} | {fmt(u)} | {fmt(a)} | "
                       f"{fmt(fn)}{mark} | {fmt(fd)}{mark} | {fmt(get('fabricsim_nscc', 'ideal_us'))} | {ratio(fn, u)} | {ratio(fn, a)} |")
    sens = [s for s in SENSITIVITY if any(r["simulator"] == s for r in rows)]
    if sens:
        out += ["", "## Sensitivity: end time (µs)", ""] + [f"- `{s}`: {SENSITIVITY[s]}" for s in sens]
        out += ["", "| set | " + " | ".join(f"`{s}`" for s in sens) + " |",
                "|---|" + "---|" * len(sens)]
        for name in sets:
            out.append(f"| {name} | " + " | ".join(fmt(by.get((name, s), {}).get("end_us")) for s in sens) + " |")
        out += ["", "Per collective (µs, same reading as above):", "", "| set | collective | " + " | ".join(f"`{s}`" for s in sens) + " |",
                "|---|---|" + "---|" * len(sens)]
        for name, st in sets.items():
            for i, c in enumerate(st["colls"]):
                vals = []
                for s in sens:
                    cs = by.get((name, s), {}).get("collectives") or []
                    vals.append(fmt(cs[i].get("dur_us", cs[i].get("cct_us")) if i < len(cs) else None))
                out.append(f"| {name} | {c['name']} | " + " | ".join(vals) + " |")
    fails = [r for r in rows if r["simulator"].startswith("astra") and r.get("end_us") is None and r["set"] in sets]
    if fails:
        out += ["", "## Runs that did not finish", ""]
        out += [f"- {r['set']} / {r['simulator']}: rc {r['rc']}, {r['ranks_finished']} ranks finished: {r.get('error')}" for r in fails]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--astra-bin", default=os.environ.get("ASTRA_BIN"),
                    help="folder with AstraSim_Analytical_Congestion_{Unaware,Aware} (or ASTRA_BIN)")
    ap.add_argument("--repo", default=str(HERE.parent.parent), help="the fabricsim repository (data/chakra/ and the default binary)")
    ap.add_argument("--fabricsim", help="fabricsim binary (default <repo>/target/release/fabricsim)")
    ap.add_argument("--out", default=str(HERE / "out"), help="ETs, configs and every run's output")
    ap.add_argument("--only", help="run only the rows whose id <set>/<simulator> matches this regular expression")
    ap.add_argument("--sensitivity", action="store_true", help="also the sensitivity runs (" + ", ".join(SENSITIVITY) + ")")
    ap.add_argument("--force", action="store_true", help="rerun rows even if results.json has them with the same scenario and binary")
    args = ap.parse_args()
    repo = Path(args.repo).resolve()
    fabricsim = Path(args.fabricsim or repo / "target" / "release" / "fabricsim").resolve()
    out = Path(args.out).resolve()
    if not args.astra_bin:
        sys.exit("--astra-bin (or ASTRA_BIN) is required: the folder of ASTRA-sim's analytical binaries")
    bin_dir = Path(args.astra_bin).resolve()
    for b in [bin_dir / f"AstraSim_Analytical_Congestion_{f}" for f in ("Unaware", "Aware")] + [fabricsim]:
        if not os.access(b, os.X_OK):
            sys.exit(f"not an executable: {b}")

    sets = {name: make_set(name, out, repo) for name in SETS}
    configs = {(n, v): {**write_configs(out, n, v), "variant": v} for n in sorted({st["ranks"] for st in sets.values()}) for v in ASTRA_VARIANTS}
    version = astra_version(bin_dir)
    fs_sha = sha_file(fabricsim)
    astra_sha = {f: sha_file(bin_dir / f"AstraSim_Analytical_Congestion_{f.capitalize()}") for f in ("unaware", "aware")}

    rows = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    for name, st in sets.items():
        for sim in SIMULATORS + (tuple(SENSITIVITY) if args.sensitivity else ()):
            rid = f"{name}/{sim}"
            if args.only and not re.search(args.only, rid):
                continue
            if sim.startswith("astra"):
                parts = sim.split("_", 2)  # astra_<flavour>[_<config variant>]
                flavour, v = parts[1], parts[2] if len(parts) > 2 else ""
                cfg = configs[(st["ranks"], v)]
                key, bsha = astra_key(st, cfg, flavour), astra_sha[flavour]
            else:
                variant = sim.split("_", 1)[1]
                text = fabricsim_scenario(st, variant)
                key, bsha = hashlib.sha256(text.encode()).hexdigest(), fs_sha
            old = next((r for r in rows if r["id"] == rid), None)
            if old and not args.force and old.get("scenario_sha256") == key and old.get("binary_sha256") == bsha:
                continue
            if sim.startswith("astra"):
                row = run_astra(flavour, st, cfg, bin_dir, out, version)
                row["scenario_sha256"] = key
            else:
                row = run_fabricsim(fabricsim, st, variant, text, out)
            row = {"id": rid, "set": name, "simulator": sim, "ranks": st["ranks"], "analytic_us": st["ref_us"], **row}
            rows = [r for r in rows if r["id"] != rid] + [row]
            RESULTS.parent.mkdir(exist_ok=True)
            RESULTS.write_text(json.dumps(rows, indent=1) + "\n")
            end = row.get("end_us")
            print(f"{rid:36s} end {fmt(end):>10s} us  {row.get('wall_s', 0):6.1f} s" + ("" if end is not None else f"  FAILED: {row.get('error', '')[:200]}"), flush=True)
    TABLE.write_text(table(rows, sets))
    print(f"wrote {TABLE.relative_to(HERE)}")


if __name__ == "__main__":
    main()
