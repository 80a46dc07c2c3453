#!/usr/bin/env python3
"""The parallel speed-up of ``fabricsim.sweep`` (issue 22): one sweep of 32 points, each the
bundled 128-host example (a permutation on a k = 8 fat tree) with 32 MiB flows (a second or
two per point), run with jobs = 1 and jobs = 2 in turn (interleaved, so that a change in the
machine's load falls on both), REPEATS times; prints each wall time, the medians and their
ratio, and checks that both give the identical table. Then the same sweep on a local Ray
instance of 2 CPUs: its wall time (Ray's start left out) and that its table is identical too.

    target/py-venv/bin/python scripts/sweep_speedup.py [--repeats N] [--flow-bytes SIZE] [--no-ray]

Needs an interpreter with the fabricsim package (``pip install ./python``; ``ray`` for the Ray
part) and at least 2 free cores: other work on the machine lowers the figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import pandas as pd

import fabricsim

EXAMPLE = Path(__file__).resolve().parents[1] / "scenarios" / "example.toml"


def spec(flow_bytes: str) -> dict:
    """32 points: two host path selections × 16 seeds, flows of `flow_bytes`."""
    return {
        "scenario": str(EXAMPLE),
        "grid": {"transport.lb": ["spray", "ecmp"], "workload.flow_bytes": [flow_bytes]},
        "seeds": list(range(1, 17)),
    }


def timed(label: str, **kw) -> tuple:
    start = time.monotonic()
    table = fabricsim.sweep(progress=False, **kw)
    wall = time.monotonic() - start
    print(f"  {label}: {wall:.2f} s", flush=True)
    return wall, table


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--flow-bytes", default="32MiB")
    ap.add_argument("--no-ray", action="store_true", help="skip the Ray part")
    a = ap.parse_args()
    s = spec(a.flow_bytes)
    print(f"sweep: 32 points of {EXAMPLE.name} (128 hosts) with {a.flow_bytes} flows; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}")
    walls: dict = {1: [], 2: []}
    tables: dict = {}
    for r in range(a.repeats):
        for jobs in (1, 2):
            wall, tables[jobs] = timed(f"round {r + 1}, jobs={jobs}", spec=s, jobs=jobs)
            walls[jobs].append(wall)
    pd.testing.assert_frame_equal(tables[1], tables[2], check_exact=True)
    one, two = statistics.median(walls[1]), statistics.median(walls[2])
    print(f"median wall: jobs=1 {one:.2f} s, jobs=2 {two:.2f} s; speed-up {one / two:.2f}x (tables identical); load average now {os.getloadavg()[0]:.2f}")
    if a.no_ray:
        return 0
    import ray

    ray.init(num_cpus=2, include_dashboard=False)
    try:
        wall, on_ray = timed("ray, 2 CPUs", spec=s, backend="ray")
    finally:
        ray.shutdown()
    same = on_ray.equals(tables[1])
    pd.testing.assert_frame_equal(on_ray, tables[1], check_exact=True)
    print(f"ray (2 CPUs): {wall:.2f} s; table identical to the local one: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
