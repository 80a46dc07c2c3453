"""Sweeps: one base scenario run over a grid (and/or list) of overrides and a list of seeds, in
parallel on the local cores, resumable, gathered into one tidy table."""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple, Union

import pandas as pd

from ._scenario import Scenario, source

#: summary.json keys left out of a sweep's table: the wall-clock block (differs between
#: identical runs) and the resolved scenario (the swept values say what changed).
_SKIPPED = ("performance", "scenario")


def _load_spec(spec: Union[Mapping[str, Any], str, "os.PathLike[str]"]) -> Tuple[Dict[str, Any], Path]:
    """The spec as a dict, and the folder its relative scenario path resolves against."""
    if isinstance(spec, Mapping):
        return dict(spec), Path.cwd()
    path = Path(os.fspath(spec))
    try:
        import tomllib  # Python >= 3.11
    except ImportError:  # pragma: no cover - Python 3.9, 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            raise ImportError("reading a sweep file needs Python >= 3.11 or the tomli package; or pass the spec as a dict") from None
    with open(path, "rb") as f:
        return tomllib.load(f), path.parent


def points(spec: Mapping[str, Any]) -> List[Tuple[Dict[str, Any], int]]:
    """The sweep's points in order, as ``(overrides, seed)``: every combination of the ``grid``
    values (keys in the spec's order, the last varying fastest), each merged into every entry of
    ``points`` (default one empty entry), each with every seed of ``seeds`` (default ``[1]``)."""
    unknown = set(spec) - {"scenario", "grid", "points", "seeds"}
    if unknown:
        raise ValueError(f"sweep spec: unknown keys {sorted(unknown)}; allowed: scenario, grid, points, seeds")
    grid: Mapping[str, Any] = spec.get("grid", {})
    for key, values in grid.items():
        if not isinstance(values, (list, tuple)) or not values:
            raise ValueError(f"sweep spec: grid `{key}` must be a non-empty list of values")
    listed = spec.get("points", [{}])
    seeds = spec.get("seeds", [1])
    if not isinstance(seeds, (list, tuple)) or not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise ValueError("sweep spec: `seeds` must be a non-empty list of integers")
    out = []
    for combo in itertools.product(*grid.values()):
        for extra in listed:
            overrides = {**dict(zip(grid.keys(), combo)), **extra}
            out += [(overrides, seed) for seed in seeds]
    return out


def _point_id(base: str, overrides: Mapping[str, Any], seed: int) -> str:
    """A point's file name: a hash of the base scenario (its text), the overrides and the seed,
    so that a changed scenario is never answered by an old run's figures."""
    text = json.dumps({"scenario": base, "overrides": overrides, "seed": seed}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _flatten(d: Mapping[str, Any], prefix: str = "") -> Iterator[Tuple[str, Any]]:
    """Scalar leaves of a summary as dotted keys (lists are left out)."""
    for k, v in d.items():
        if not prefix and k in _SKIPPED:
            continue
        if isinstance(v, Mapping):
            yield from _flatten(v, f"{prefix}{k}.")
        elif not isinstance(v, list):
            yield f"{prefix}{k}", v


def _run_point(text: str, is_path: bool, overrides: Dict[str, Any], seed: int) -> Dict[str, Any]:
    """Runs one point (in a worker process) and returns its metrics: the summary's scalars and
    the number of invariant violations."""
    from . import SimulationError, run

    try:
        summary = run(text if not is_path else Path(text), overrides=overrides, seed=seed, progress=False).summary
    except SimulationError as e:
        result = getattr(e, "result", None)
        if result is None:
            raise
        summary = result.summary
    metrics = dict(_flatten(summary))
    metrics["invariant_violations"] = len(summary.get("invariant_violations") or [])
    return metrics


def sweep(
    spec: Union[Mapping[str, Any], str, "os.PathLike[str]"],
    backend: str = "local",
    jobs: Optional[int] = None,
    out: Union[None, str, "os.PathLike[str]"] = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Runs a sweep in parallel and returns one row per point.

    Args:
        spec: a dict or a TOML file with ``scenario`` (a scenario file, relative to the sweep
            file, or a scenario dict / TOML text), ``grid`` (``{key.path: [values, ...]}``:
            every combination is a point), ``points`` (a list of override dicts, each merged
            into every grid combination) and ``seeds`` (a list; default ``[1]``)::

                {"scenario": "scenarios/example.toml",
                 "grid": {"workload.flow_bytes": ["64KiB", "256KiB"], "transport.lb": ["spray", "ecmp"]},
                 "seeds": [1, 2]}

        backend: ``"local"``: a pool of processes on this machine (the only backend so far).
        jobs: worker processes (default: every core, ``os.cpu_count()``).
        out: a folder that makes the sweep resumable: each finished point is kept in
            ``out/points/<id>.json`` and skipped when the sweep runs again; the table is
            written to ``out/sweep.csv`` (and ``out/sweep.parquet`` when pyarrow is installed).
        progress: show ``points done/all`` on stderr.

    Returns:
        A DataFrame in the spec's order: the swept keys, ``seed``, then the run's summary
        figures flattened to dotted names (``fct_us.p99``, ``packets.dropped``, ...; the
        wall-clock ``performance`` block and the resolved ``scenario`` left out, so identical
        sweeps give identical tables) and ``invariant_violations`` (a count).

    Raises:
        ScenarioError: a point's scenario is bad (the first one met).
        ValueError: the spec is malformed.
    """
    if backend != "local":
        raise ValueError(f"backend {backend!r}: only \"local\" is available")
    spec_dict, base = _load_spec(spec)
    if "scenario" not in spec_dict:
        raise ValueError("sweep spec: `scenario` is missing")
    scenario: Scenario = spec_dict["scenario"]
    text, is_path = source(scenario)
    if is_path:
        text = str((base / text).resolve())
    todo = points(spec_dict)
    base_text = Path(text).read_text() if is_path and Path(text).is_file() else text
    ids = [_point_id(base_text, o, s) for o, s in todo]
    kept: Dict[str, Dict[str, Any]] = {}
    point_dir = None if out is None else Path(os.fspath(out)) / "points"
    if point_dir is not None:
        point_dir.mkdir(parents=True, exist_ok=True)
        for pid in ids:
            f = point_dir / f"{pid}.json"
            if f.exists():
                kept[pid] = json.loads(f.read_text())
    missing = [i for i, pid in enumerate(ids) if pid not in kept]
    done = len(ids) - len(missing)

    def show() -> None:
        if progress:
            sys.stderr.write(f"\rpoints {done}/{len(ids)}")
            sys.stderr.flush()

    show()
    workers = jobs or os.cpu_count() or 1
    with cf.ProcessPoolExecutor(max_workers=min(workers, max(1, len(missing)))) as pool:
        futures = {pool.submit(_run_point, text, is_path, todo[i][0], todo[i][1]): i for i in missing}
        try:
            for fut in cf.as_completed(futures):
                i = futures[fut]
                metrics = fut.result()
                kept[ids[i]] = metrics
                if point_dir is not None:
                    tmp = point_dir / f"{ids[i]}.json.tmp"
                    tmp.write_text(json.dumps(metrics))
                    tmp.replace(point_dir / f"{ids[i]}.json")
                done += 1
                show()
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    if progress:
        sys.stderr.write("\n")
    keys = list(spec_dict.get("grid", {}))
    for o, _ in todo:
        keys += [k for k in o if k not in keys]
    rows = [{**{k: o.get(k) for k in keys}, "seed": s, **kept[pid]} for (o, s), pid in zip(todo, ids)]
    table = pd.DataFrame(rows)
    if out is not None:
        folder = Path(os.fspath(out))
        table.to_csv(folder / "sweep.csv", index=False)
        try:
            table.to_parquet(folder / "sweep.parquet", index=False)
        except ImportError:
            pass
    return table
