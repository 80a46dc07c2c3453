#!/usr/bin/env python3
"""The GPT-3-like step on 8192 GPUs on the partitioned engine (issue 47's scale target): the
same model as run.py's `gpt3` on a 3-tier rail-optimized fabric of 1024 servers × 8 GPUs (16
scalable units of 64 servers, 64 spines per unit, 512 cores), tp 8 × pp 16 × dp 64 in
Megatron-LM's default order (a stage's 64 replicas fill one unit, so a DP ring stays under one
rail leaf and only the pipeline's messages cross between units), 4096 sequences (64
micro-batches per replica, as at 1024 GPUs), RoCEv2 (DCQCN, PFC, ECMP, go-back-N).

    experiments/training/scale.py [--fabricsim BIN] [--threads 1,8,16] [--end-us 212700]
                                  [--gpus 8192|2048] [--allreduce]
    experiments/training/scale.py --print     (the scenario, to run it by hand)

`--gpus 2048` is the same step on 16 units of 16 servers (dp 16, 1024 sequences: the same 64
micro-batches per replica), small enough for a 16-partition run on a machine of 24 GB, whose
critical path (CPU time) tells how 16 cores would do. `--allreduce` runs the step's gradient
AllReduces alone: one 64 MiB ring AllReduce (1 MiB chunks) per rail leaf, over its 64 GPUs
(128 rings of the step's DP groups at once; `--end-us 0` runs them to the end).

Runs the step to the simulated time `--end-us` (`run.end_time_us`) on each thread count and
appends a row per run to results/scale.json: wall seconds, events, data packets, the parallel
run's partition CPU seconds and critical path, peak RSS, the binary's commit and the scenario
with its sha256. (The whole step, ~1.7 × 10^11 events, takes hours even on 16 threads:
RESULTS.md.)
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import platform
import resource
import subprocess
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "scale.json"

_spec = importlib.util.spec_from_file_location("training_run", HERE / "run.py")
training = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(training)


def replaced(text: str, pairs) -> str:
    """`text` with each (old, new) of `pairs` replaced, every `old` required to be there."""
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    return text


def scenario() -> str:
    """run.py's GPT-3-like RoCEv2 scenario on `rail`, grown to 8192 GPUs in three tiers."""
    return replaced(training.scenario("gpt3", "rail", "roce"), [
        ('name = "training gpt3 rail roce"', 'name = "training gpt3 8192 GPUs, rail-optimized 3 tiers, RoCEv2"'),
        ('kind = "rail_optimized"\n', 'kind = "rail_optimized"\ntiers = 3\n'),
        ("spines = 8\n", ""),  # 3 tiers: 64 spines per unit, one per leaf uplink
        ("servers = 128\n", "servers = 1024\n"),
        ("global_batch = 512", "global_batch = 4096"),
        ("dp = 8,", "dp = 64,"),
    ])


def smaller(text: str) -> str:
    """The step on 2048 GPUs: 16 units of 16 servers, dp 16, 64 micro-batches per replica."""
    return replaced(text, [
        ("servers_per_su = 64\n", "servers_per_su = 16\n"),
        ("servers = 1024\n", "servers = 256\n"),
        ("global_batch = 4096", "global_batch = 1024"),
        ("dp = 64,", "dp = 16,"),
        ("8192 GPUs", "2048 GPUs"),
    ])


def allreduce(text: str) -> str:
    """The step's gradient AllReduces alone: a ring AllReduce over every rail leaf's GPUs."""
    head, _ = text.split("[workload]\n", 1)
    key = lambda name: int(head.split(f"\n{name} = ", 1)[1].split("\n", 1)[0])
    servers_per_su, gpus = key("servers_per_su"), key("gpus")
    leaves = key("servers") // servers_per_su * gpus
    head = head.replace('name = "training gpt3', 'name = "gradient AllReduces of gpt3')
    return head + (
        "[workload]\n"
        'kind = "collectives"\n'
        'chunk = "1MiB"\n'
        f'jobs = [ {{ count = {leaves}, ranks = {servers_per_su}, placement = "strided", stride = {gpus}, '
        'collectives = [ { op = "allreduce", algorithm = "ring", bytes = "64MiB" } ] } ]\n'
    )


def run(binary: str, text: str, threads: int, end_us: float):
    """Runs `text` to `end_us` on `threads`: (summary.json, wall and CPU seconds)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "gpt3-8192.toml"
        path.write_text(text)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.time()
        end = ["--set", f"run.end_time_us={end_us}"] if end_us else []
        p = subprocess.run([binary, "run", str(path), *end, "--threads", str(threads), "--out", f"{tmp}/out", "-q"], capture_output=True, text=True)
        wall = time.time() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            raise SystemExit(f"fabricsim failed ({p.returncode}):\n{p.stderr}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return json.loads((Path(tmp) / "out" / "summary.json").read_text()), wall, cpu


def machine() -> str:
    model = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines() if l.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else platform.processor()
    return f"{os.cpu_count()} cores, {model}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fabricsim", default=str(HERE.parent.parent / "target" / "release" / "fabricsim"))
    ap.add_argument("--threads", default="1,8,16")
    ap.add_argument("--end-us", type=float, default=212700.0)
    ap.add_argument("--gpus", type=int, choices=(8192, 2048), default=8192)
    ap.add_argument("--allreduce", action="store_true")
    ap.add_argument("--print", action="store_true")
    a = ap.parse_args()
    text = scenario()
    if a.gpus == 2048:
        text = smaller(text)
    if a.allreduce:
        text = allreduce(text)
    if a.print:
        print(text, end="")
        return
    rows = json.loads(RESULTS.read_text())["rows"] if RESULTS.exists() else []
    for n in (int(t) for t in a.threads.split(",")):
        what = "allreduce" if a.allreduce else "gpt3"
        case = f"{what}-{a.gpus}-to{a.end_us / 1e3:g}ms-t{n}" if a.end_us else f"{what}-{a.gpus}-t{n}"
        s, wall, cpu = run(a.fabricsim, text, n, a.end_us)
        p = s["performance"]
        row = {
            "id": case,
            "threads": n,
            "partitions": p["partitions"],
            "end_time_us": a.end_us,
            "wall_s": round(p["wall_seconds"], 2),
            "process_wall_s": round(wall, 2),
            "process_cpu_s": round(cpu, 2),
            "partition_cpu_s": p.get("partition_cpu_seconds"),
            "critical_path_s": p.get("critical_path_seconds"),
            "sync_windows": p.get("sync_windows"),
            "events": s["events"],
            "data_packets": s["packets"]["data_sent"],
            "peak_rss_mb": round(p["peak_rss_bytes"] / 2**20, 1),
            "machine": machine(),
            "commit": s["engine"]["commit"],
            "scenario_sha256": hashlib.sha256(text.encode()).hexdigest(),
            "scenario": text,
        }
        print(f"{case}: {row['wall_s']} s, {row['events']} events, critical path {row['critical_path_s']} s, {row['peak_rss_mb']} MB")
        rows.append(row)
        RESULTS.write_text(json.dumps({"rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
