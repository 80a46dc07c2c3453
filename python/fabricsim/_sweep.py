"""Sweeps: ``fabricsim.sweep`` and ``fabricsim sweep FILE``.

A sweep is one base scenario (or several named ones) run over a grid and/or list of overrides
and a list of seeds. Its points run in parallel on the local cores (a process pool) or as tasks
on a Ray cluster; finished points are kept (``out/points/<id>.json`` and/or a results JSON file
of rows) and skipped when the sweep runs again; the points are gathered into one tidy table, one
row per point. A progress bar over points goes to stderr.

The paper drivers (``experiments/*/run.py``) use the parts beyond the plain grid: named
scenarios, a folder per point for its output files, a row function reading them, a wall-time
limit per point, error rows instead of exceptions, and the results JSON file they commit.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import itertools
import json
import logging
import os
import pickle
import re
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import pandas as pd

from ._scenario import Scenario, source

PathLike = Union[str, "os.PathLike[str]"]

#: A row function: ``row(summary, name, wall_s, run_dir)`` returns a point's figures (run in the
#: worker, after the simulation; ``run_dir`` is the point's output folder, or None).
RowFn = Callable[[Dict[str, Any], str, float, Optional[Path]], Mapping[str, Any]]

BACKENDS = ("local", "ray")

#: The spec's keys.
_SPEC_KEYS = ("scenario", "scenarios", "grid", "points", "seeds")

#: summary.json keys left out of the default figures: the wall-clock block (differs between
#: identical runs) and the resolved scenario (the swept values say what changed).
_SKIPPED = ("performance", "scenario")

#: Characters a point's run folder may be named with as they are.
_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._,=+-]*")


def _load_spec(spec: Union[Mapping[str, Any], PathLike]) -> Tuple[Dict[str, Any], Path]:
    """The spec as a dict, and the folder its relative scenario paths resolve against."""
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


def points(spec: Mapping[str, Any]) -> List[Tuple[Dict[str, Any], Optional[int]]]:
    """The override sets of a spec in order, as ``(overrides, seed)``: every combination of the
    ``grid`` values (keys in the spec's order, the last varying fastest), each merged into every
    entry of ``points`` (default one empty entry), each with every seed of ``seeds`` (without
    ``seeds``, one entry with seed None: the scenario's own seed). With ``scenarios`` every named
    scenario runs each of them."""
    unknown = set(spec) - set(_SPEC_KEYS)
    if unknown:
        raise ValueError(f"sweep spec: unknown keys {sorted(unknown)}; allowed: {', '.join(_SPEC_KEYS)}")
    grid: Mapping[str, Any] = spec.get("grid", {})
    if not isinstance(grid, Mapping):
        raise ValueError("sweep spec: `grid` must be a table {key.path: [values, ...]}")
    for key, values in grid.items():
        if not isinstance(values, (list, tuple)) or not values:
            raise ValueError(f"sweep spec: grid `{key}` must be a non-empty list of values")
    listed = spec.get("points", [{}])
    if not isinstance(listed, (list, tuple)) or not listed or not all(isinstance(p, Mapping) for p in listed):
        raise ValueError("sweep spec: `points` must be a non-empty list of tables {key.path: value}")
    seeds: Sequence[Optional[int]] = spec.get("seeds", [None])
    if "seeds" in spec and (
        not isinstance(seeds, (list, tuple)) or not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds)
    ):
        raise ValueError("sweep spec: `seeds` must be a non-empty list of integers")
    out = []
    for combo in itertools.product(*grid.values()):
        for extra in listed:
            overrides = {**dict(zip(grid.keys(), combo)), **extra}
            out += [(overrides, seed) for seed in seeds]
    return out


class _Base(NamedTuple):
    """One base scenario of a sweep."""

    name: Optional[str]  # its name in `scenarios`; None for the one `scenario`
    scenario: str  # TOML text, or an absolute file path
    is_path: bool
    text: str  # what identifies it in point ids: the text, or the file's contents


class _Point(NamedTuple):
    """One point: a base scenario, its overrides and seed."""

    name: str
    base: _Base
    overrides: Dict[str, Any]
    seed: Optional[int]
    id: str


class _Task(NamedTuple):
    """What a worker needs to run one point (pickled to it)."""

    name: str
    scenario: str
    is_path: bool
    overrides: Dict[str, Any]
    seed: Optional[int]
    run_dir: Optional[str]
    row: Optional[RowFn]
    timeout_s: Optional[float]


def _bases(spec: Mapping[str, Any], folder: Path) -> List[_Base]:
    """The spec's base scenarios; file paths resolved against `folder` and checked."""
    if ("scenario" in spec) == ("scenarios" in spec):
        raise ValueError("sweep spec: give either `scenario` (one base scenario) or `scenarios` (a table of named ones)")
    named = spec["scenarios"] if "scenarios" in spec else {None: spec["scenario"]}
    if not isinstance(named, Mapping):
        raise ValueError("sweep spec: `scenarios` must be a table {name: scenario}")
    out = []
    for name, scenario in named.items():
        text, is_path = source(scenario)
        ident = text
        if is_path:
            path = (folder / text).resolve()
            if not path.is_file():
                raise FileNotFoundError(f"sweep spec: scenario file {path} not found")
            text, ident = str(path), path.read_text()
        out.append(_Base(None if name is None else str(name), text, is_path, ident))
    return out


def _value_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _point_name(base: _Base, overrides: Mapping[str, Any], seed: Optional[int]) -> str:
    """A point's name: the base scenario's name, then ``key=value`` per override and ``seed=N``,
    joined by commas (``base`` for a sweep of one scenario without overrides or seeds)."""
    parts = [] if base.name is None else [base.name]
    parts += [f"{k}={_value_text(v)}" for k, v in overrides.items()]
    if seed is not None:
        parts.append(f"seed={seed}")
    return ",".join(parts) or "base"


def _point_id(base: str, overrides: Mapping[str, Any], seed: Optional[int]) -> str:
    """A point's file name: a hash of the base scenario (its text), the overrides and the seed,
    so that a changed scenario is never answered by an old run's figures."""
    text = json.dumps({"scenario": base, "overrides": overrides, "seed": seed}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _plan(spec: Mapping[str, Any], folder: Path) -> List[_Point]:
    """Every point of the spec, in order; names are unique."""
    sets = points(spec)
    out = []
    for base in _bases(spec, folder):
        for overrides, seed in sets:
            out.append(_Point(_point_name(base, overrides, seed), base, overrides, seed, _point_id(base.text, overrides, seed)))
    seen: Dict[str, int] = {}
    for p in out:
        seen[p.name] = seen.get(p.name, 0) + 1
    twice = [n for n, c in seen.items() if c > 1]
    if twice:
        raise ValueError(f"sweep spec: points named twice (the same scenario, overrides and seed): {twice[:3]}")
    return out


def _folder_name(point: _Point) -> str:
    """A point's run folder: its name where that is a plain file name, else the name with other
    characters replaced and the point's id added (so that two names never share a folder)."""
    if _SAFE_NAME.fullmatch(point.name):
        return point.name
    return re.sub(r"[^A-Za-z0-9._,=+-]", "_", point.name).lstrip(".")[:100] + "-" + point.id


def _flatten(d: Mapping[str, Any], prefix: str = "") -> Iterator[Tuple[str, Any]]:
    """Scalar leaves of nested dicts as dotted keys (lists are left out)."""
    for k, v in d.items():
        if isinstance(v, Mapping):
            yield from _flatten(v, f"{prefix}{k}.")
        elif not isinstance(v, (list, tuple)):
            yield f"{prefix}{k}", v


def _metrics(summary: Mapping[str, Any]) -> Dict[str, Any]:
    """A point's default figures: the summary's scalars flattened to dotted names, without the
    wall-clock and resolved-scenario blocks, and the number of invariant violations."""
    out = dict(_flatten({k: v for k, v in summary.items() if k not in _SKIPPED}))
    out["invariant_violations"] = len(summary.get("invariant_violations") or [])
    return out


def _provenance(summary: Mapping[str, Any]) -> Dict[str, Any]:
    """Where a row comes from, added to every row whatever makes its figures: ``commit``, the
    project commit of the engine that ran it (``summary.json``'s ``engine.commit``), and
    ``scenario_sha256``, a hash of the resolved scenario it ran (its JSON with sorted keys)."""
    scenario = json.dumps(summary.get("scenario"), sort_keys=True, separators=(",", ":"))
    return {
        "commit": (summary.get("engine") or {}).get("commit", "unknown"),
        "scenario_sha256": hashlib.sha256(scenario.encode()).hexdigest(),
    }


class _OutOfTime(Exception):
    """Raised by a point's progress hook when its wall-time limit has passed."""


def _reset_peak_rss() -> None:
    """Resets this process's peak resident memory (Linux), so that ``performance.peak_rss_bytes``
    is the point's peak rather than the largest of all points this worker ran before."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _run_point(task: _Task) -> Tuple[Dict[str, Any], float]:
    """Runs one point (in a worker process or Ray task): its figures and wall seconds. An
    exception carries the wall seconds as ``_sweep_wall_s``; running out of time raises
    ``TimeoutError``. A run that broke an invariant still gives its figures."""
    from . import SimulationError, run

    start = time.monotonic()
    progress: Any = False
    if task.timeout_s is not None:
        deadline = start + task.timeout_s

        def progress(_: Any) -> None:
            if time.monotonic() > deadline:
                raise _OutOfTime

    _reset_peak_rss()
    scenario: Scenario = Path(task.scenario) if task.is_path else task.scenario
    try:
        try:
            result = run(scenario, overrides=task.overrides, seed=task.seed, progress=progress, out=task.run_dir)
        except SimulationError as e:
            result = getattr(e, "result", None)
            if result is None:
                raise
        wall = time.monotonic() - start
        run_dir = None if task.run_dir is None else Path(task.run_dir)
        figures = _metrics(result.summary) if task.row is None else dict(task.row(result.summary, task.name, wall, run_dir))
        figures.update(_provenance(result.summary))
        return figures, wall
    except _OutOfTime:
        err: Exception = TimeoutError(f"stopped after {task.timeout_s} s of wall time")
    except Exception as e:
        err = e
    try:
        pickle.dumps(err)
    except Exception:
        err = RuntimeError(f"{type(err).__name__}: {err}")
    err._sweep_wall_s = time.monotonic() - start  # type: ignore[attr-defined]
    raise err


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class _Bar:
    """The progress bar over points, on stderr: points done / all, elapsed time and an ETA from
    the points finished so far. On a terminal it is redrawn in place about every second; into a
    file or pipe (a log) it writes one line per finished point instead."""

    def __init__(self, total: int, kept: int, enabled: bool) -> None:
        self.total, self.kept, self.done = total, kept, kept
        self.enabled = enabled
        self.tty = enabled and sys.stderr.isatty()
        self.start = self.began = time.monotonic()
        self.width = 0

    def begin(self) -> None:
        """The points start running now: the ETA leaves out the time spent before (starting Ray)."""
        self.began = time.monotonic()

    def text(self) -> str:
        now = time.monotonic()
        ran, left = self.done - self.kept, self.total - self.done
        eta = _clock((now - self.began) / ran * left) if ran else "?"
        elapsed = now - self.start
        filled = 20 * self.done // max(self.total, 1)
        return f"points {self.done}/{self.total} [{'#' * filled}{'.' * (20 - filled)}]  elapsed {_clock(elapsed)}  ETA {eta}"

    def _draw(self) -> None:
        line = self.text()
        sys.stderr.write("\r" + line + " " * max(0, self.width - len(line)))
        sys.stderr.flush()
        self.width = len(line)

    def tick(self) -> None:
        """Redraws the bar (a terminal only), so that the elapsed time moves between points."""
        if self.tty:
            self._draw()

    def advance(self, note: Optional[str] = None) -> None:
        """One more point done; `note` is a line about it, written above the bar."""
        self.done += 1
        if not self.enabled:
            return
        if self.tty:
            sys.stderr.write("\r" + " " * self.width + "\r")
            self.width = 0
        if note:
            sys.stderr.write(note + "\n")
        if self.tty:
            self._draw()
        else:
            sys.stderr.write(self.text() + "\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.tty and self.width:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _read_rows(path: Path) -> List[Dict[str, Any]]:
    """The rows of a results JSON file (none if it does not exist)."""
    if not path.exists():
        return []
    with open(path) as f:
        rows = json.load(f)
    if not isinstance(rows, list):
        raise ValueError(f"{path}: a results file holds a JSON list of rows")
    return [r for r in rows if isinstance(r, dict) and "run" in r]


def _write_rows(path: Path, rows: Dict[str, Dict[str, Any]], order: Mapping[str, int]) -> None:
    """Writes `rows` (point name -> row) to the results file `path`, together with the good rows
    another sweep writing the same file (with a disjoint ``only``) added meanwhile: a lock file
    keeps two writers apart, and the rename means a reader never sees half a file. Rows go in
    the sweep's order; rows of runs the sweep does not name stay, after them."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: one writer at a time is the caller's care
        fcntl = None  # type: ignore[assignment]
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        for r in _read_rows(path):
            mine = rows.get(r["run"])
            if "error" not in r and (mine is None or "error" in mine):
                rows[r["run"]] = r
        ordered = sorted(rows.values(), key=lambda r: order.get(r["run"], len(order)))
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "w") as f:
            json.dump(ordered, f, indent=1)
        os.replace(tmp, path)


def _as_row(name: str, figures: Mapping[str, Any]) -> Dict[str, Any]:
    """A point's figures as a results row: ``run`` (its name) first, or where the figures
    already have it (a row function that writes its own key order)."""
    return {**figures, "run": name} if "run" in figures else {"run": name, **figures}


class _Store:
    """Where finished points are kept: ``out/points/<id>.json`` (a point's figures) and/or a
    results file (a JSON list of rows, each with its point's name as ``run``). A point found in
    either is not run again; a row with an ``error`` does not count."""

    def __init__(self, out: Optional[Path], results: Optional[Path], plan: List[_Point]) -> None:
        self.dir = None if out is None else out / "points"
        self.results = results
        self.order = {p.name: i for i, p in enumerate(plan)}
        self.rows: Dict[str, Dict[str, Any]] = {}
        if self.dir is not None:
            self.dir.mkdir(parents=True, exist_ok=True)
        if results is not None:
            results.parent.mkdir(parents=True, exist_ok=True)
            self.rows = {r["run"]: r for r in _read_rows(results) if "error" not in r}

    def kept(self, p: _Point) -> Optional[Dict[str, Any]]:
        """A finished point's figures (a results row, with ``run``, when there is a results file)."""
        if p.name in self.rows:
            return self.rows[p.name]
        f = None if self.dir is None else self.dir / f"{p.id}.json"
        if f is not None and f.exists():
            figures = json.loads(f.read_text())
            return figures if self.results is None else _as_row(p.name, figures)
        return None

    def save(self, p: _Point, figures: Dict[str, Any], error: bool) -> Dict[str, Any]:
        """Keeps a point that ran (an error only in the results file, where a rerun replaces
        it); returns what its table row holds."""
        if self.dir is not None and not error:
            tmp = self.dir / f"{p.id}.json.tmp"
            tmp.write_text(json.dumps(figures))
            tmp.replace(self.dir / f"{p.id}.json")
        if self.results is None:
            return figures
        row = _as_row(p.name, figures)
        self.rows[p.name] = row
        _write_rows(self.results, self.rows, self.order)
        return row


#: A backend's report of one point: (index into the tasks, (figures, wall s) or None, exception
#: or None); it returns True when the exception must stop the sweep.
_Handler = Callable[[int, Optional[Tuple[Dict[str, Any], float]], Optional[BaseException]], bool]


def _run_local(tasks: List[Tuple[int, _Task]], jobs: int, handle: _Handler, bar: _Bar) -> None:
    """Runs the tasks on a pool of `jobs` processes. After a stopping error the points not yet
    started are cancelled, the running ones finish (and are kept), then the error is raised."""
    with cf.ProcessPoolExecutor(max_workers=min(jobs, len(tasks))) as pool:
        pending = {pool.submit(_run_point, t): i for i, t in tasks}
        failure: Optional[BaseException] = None
        try:
            while pending:
                finished, _ = cf.wait(pending, timeout=1.0, return_when=cf.FIRST_COMPLETED)
                bar.tick()
                # In plan order: a set's order is arbitrary, and points that finish within one
                # wait would print their lines in a different order from run to run.
                for fut in sorted(finished, key=pending.__getitem__):
                    i = pending.pop(fut)
                    if fut.cancelled():
                        continue
                    exc = fut.exception()
                    if handle(i, None if exc else fut.result(), exc) and failure is None:
                        failure = exc
                        for f in pending:
                            f.cancel()
        except BaseException:
            for f in pending:
                f.cancel()
            raise
    if failure is not None:
        raise failure


def _ray_module() -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError('backend="ray" needs Ray, which is not installed: pip install ray') from None
    return ray


def _run_ray(tasks: List[Tuple[int, _Task]], jobs: Optional[int], address: Optional[str], handle: _Handler, bar: _Bar) -> None:
    """Runs each task as a Ray task (one CPU each) on the Ray this process has initialised, else
    on ``ray.init(address=address)``: a new local instance when `address` is None, shut down
    again at the end. Tasks are handed out as CPUs free up (at most `jobs`, else the cluster's
    CPUs, at a time), so that a stopping error, as on the local pool, cancels the points not yet
    started and lets the running ones finish (and be kept) before it is raised."""
    ray = _ray_module()
    started = not ray.is_initialized()
    if started:
        local = address is None
        ray.init(address=address, num_cpus=jobs if local else None, include_dashboard=False if local else None, logging_level=logging.WARNING)
    try:
        remote = ray.remote(num_cpus=1)(_run_point)
        bar.begin()
        limit = jobs or max(1, int(ray.cluster_resources().get("CPU", 1)))
        queue = list(tasks)
        inflight: Dict[Any, int] = {}
        failure: Optional[BaseException] = None
        try:
            while queue or inflight:
                while queue and len(inflight) < limit:
                    i, t = queue.pop(0)
                    inflight[remote.remote(t)] = i
                ready, _ = ray.wait(list(inflight), num_returns=1, timeout=1.0)
                bar.tick()
                for ref in ready:
                    i = inflight.pop(ref)
                    try:
                        value, exc = ray.get(ref), None
                    except ray.exceptions.RayTaskError as e:
                        # The task's own exception (ScenarioError with its .key, TimeoutError, ...).
                        value, exc = None, e.cause if isinstance(e.cause, BaseException) else e
                    except ray.exceptions.RayError as e:
                        value, exc = None, e
                    if handle(i, value, exc) and failure is None:
                        failure = exc
                        queue.clear()
        except BaseException:
            for ref in inflight:
                ray.cancel(ref)
            raise
        if failure is not None:
            raise failure
    finally:
        if started:
            ray.shutdown()


def _write_table(table: pd.DataFrame, folder: Path) -> List[Path]:
    """Writes ``sweep.csv`` and, with pyarrow installed, ``sweep.parquet``; returns the files."""
    files = [folder / "sweep.csv"]
    table.to_csv(files[0], index=False)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return files
    frame = table
    # Parquet wants one type per column: a column mixing types (a figure that is text in some
    # rows and a number in others) is written as text there; the CSV has it as it is.
    for col in table.columns:
        kinds = {type(v) for v in table[col].dropna()}
        if len(kinds) > 1 and table[col].dtype == object:
            frame = frame if frame is not table else table.copy()
            frame[col] = table[col].map(lambda v: v if v is None or (isinstance(v, float) and v != v) else str(v))
    frame.to_parquet(folder / "sweep.parquet", index=False)
    return files + [folder / "sweep.parquet"]


def sweep(
    spec: Union[Mapping[str, Any], PathLike],
    backend: str = "local",
    jobs: Optional[int] = None,
    out: Optional[PathLike] = None,
    progress: bool = True,
    *,
    address: Optional[str] = None,
    only: Optional[str] = None,
    timeout_s: Optional[float] = None,
    errors: str = "raise",
    run_dirs: Union[None, bool, PathLike] = None,
    row: Optional[RowFn] = None,
    describe: Optional[Callable[[Mapping[str, Any]], str]] = None,
    results: Optional[PathLike] = None,
) -> pd.DataFrame:
    """Runs a sweep in parallel and returns one row per point.

    Args:
        spec: a dict or a TOML file with ``scenario`` (a scenario file, relative to the sweep
            file, or a scenario dict / TOML text) or ``scenarios`` (a table ``{name: scenario}``
            of named base scenarios, each swept alike), ``grid`` (``{key.path: [values, ...]}``:
            every combination is a point), ``points`` (a list of override dicts, each merged
            into every grid combination) and ``seeds`` (a list; without it each scenario's own
            seed)::

                {"scenario": "scenarios/example.toml",
                 "grid": {"workload.flow_bytes": ["64KiB", "256KiB"], "transport.lb": ["spray", "ecmp"]},
                 "seeds": [1, 2]}

            Each point has a name: the scenario's name in ``scenarios``, then ``key=value`` per
            override and ``seed=N``, joined by commas (``base`` when there is nothing to say).
        backend: ``"local"``: a pool of processes on this machine; ``"ray"``: one Ray task per
            point (needs ``pip install ray``), on the Ray this process initialised, else on
            ``ray.init(address=address)`` (a new local instance when ``address`` is None, shut
            down at the end). Both give the identical table. On a cluster of several machines
            every node needs the ``fabricsim`` package, and scenario files and ``run_dirs`` must
            be at the same paths on all of them (a shared file system).
        jobs: points run at once (default: every core, ``os.cpu_count()``; on Ray every CPU of
            the cluster). A local Ray instance this call starts gets ``jobs`` CPUs.
        out: a folder that makes the sweep resumable: each finished point is kept in
            ``out/points/<id>.json`` (``id``: a hash of the scenario, overrides and seed) and
            skipped when the sweep runs again; the table is written to ``out/sweep.csv`` (and
            ``out/sweep.parquet`` when pyarrow is installed). Delete ``points/`` after changing
            ``row``.
        progress: a progress bar over points on stderr (points done / all, elapsed, ETA).
        address: the Ray cluster to connect to (``"auto"``, ``"ray://host:10001"``, ...).
        only: a regular expression: run only the points whose name it matches (``re.search``);
            the table holds those and the points kept from earlier runs.
        timeout_s: stop a point after this much wall time (it then fails with ``TimeoutError``).
        errors: ``"raise"``: the first failing point stops the sweep (points not yet started are
            cancelled; the running ones finish and are kept) and its exception is raised;
            ``"record"``: a failing point becomes a row with ``error`` (the message) and
            ``wall_s``, is not kept, and runs again next time.
        run_dirs: keep each point's output files (as ``fabricsim run --out`` writes them) in
            ``run_dirs/<point name>/``; ``True`` means ``out/runs``. A name that is not a plain
            file name gets its unsafe characters replaced and the point's id appended.
        row: ``row(summary, name, wall_s, run_dir) -> dict``, run in the worker after each point
            to make its figures instead of the default (the flattened summary); ``run_dir`` is
            its folder under ``run_dirs`` (None without), where it may read the output files.
            Nested dicts become dotted columns of the table; lists stay out of the table (they
            are kept in ``points/`` and ``results``). It must be picklable (a module-level
            function, or a ``functools.partial`` of one).
        describe: ``describe(figures) -> str``, a line printed about each finished point, above
            the progress bar.
        results: a JSON file of rows (a list), kept up to date as points finish: each row is a
            point's figures with its name as ``run`` (first, unless the figures have ``run``).
            Rows there without ``error`` count as finished points. Two sweeps may write one file
            at once if their ``only`` picks different points (a lock file keeps them apart; each
            keeps the other's rows).

    Returns:
        A DataFrame in the spec's order: ``scenario`` (the base's name, with ``scenarios``), the
        swept keys, ``seed``, then the figures: by default the run's summary flattened to
        dotted names (``completion_time_us``, ``fct_us.p99``, ``packets.dropped``, ...; the
        wall-clock ``performance`` block and the resolved ``scenario`` left out, so identical
        sweeps give identical tables) and ``invariant_violations`` (a count). ``attrs["sweep"]``
        says how many points there were, ran, were kept and failed, and which files were written.

    Raises:
        ScenarioError: a point's scenario is bad (with ``errors="raise"``).
        TimeoutError: a point ran out of ``timeout_s`` (with ``errors="raise"``).
        ValueError: the spec or an argument is malformed.
        ImportError: ``backend="ray"`` without Ray installed.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend {backend!r}: allowed: {', '.join(repr(b) for b in BACKENDS)}")
    if errors not in ("raise", "record"):
        raise ValueError(f"errors {errors!r}: allowed: 'raise', 'record'")
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    if backend == "ray":
        _ray_module()
    spec_dict, folder = _load_spec(spec)
    plan = _plan(spec_dict, folder)
    out_dir = None if out is None else Path(os.fspath(out))
    if run_dirs is True:
        if out_dir is None:
            raise ValueError("run_dirs=True keeps the runs in out/runs: give `out` too (or a folder as run_dirs)")
        runs_dir: Optional[Path] = out_dir / "runs"
    else:
        runs_dir = None if run_dirs is None or run_dirs is False else Path(os.fspath(run_dirs))
    store = _Store(out_dir, None if results is None else Path(os.fspath(results)), plan)
    pattern = None if only is None else re.compile(only)

    figures: Dict[int, Dict[str, Any]] = {}
    todo: List[Tuple[int, _Task]] = []
    for i, p in enumerate(plan):
        kept = store.kept(p)
        if kept is not None:
            figures[i] = kept
        elif pattern is None or pattern.search(p.name):
            run_dir = None if runs_dir is None else str((runs_dir / _folder_name(p)).resolve())
            todo.append((i, _Task(p.name, p.base.scenario, p.base.is_path, p.overrides, p.seed, run_dir, row, timeout_s)))
    kept_count = len(figures)
    failed = 0
    if progress:
        sys.stderr.write(f"sweep: {len(plan)} points, {kept_count} kept, {len(todo)} to run\n")
    bar = _Bar(kept_count + len(todo), kept_count, progress)

    def handle(i: int, value: Optional[Tuple[Dict[str, Any], float]], exc: Optional[BaseException]) -> bool:
        nonlocal failed
        p = plan[i]
        if exc is not None:
            if errors == "raise" or not isinstance(exc, Exception):
                bar.advance(f"  {p.name}: {type(exc).__name__}: {exc}")
                return True
            failed += 1
            wall = float(getattr(exc, "_sweep_wall_s", 0.0))
            figures[i] = store.save(p, {"error": f"{type(exc).__name__}: {exc}", "wall_s": round(wall, 2)}, error=True)
            bar.advance(f"  {p.name}: {figures[i]['error']} ({wall:.2f} s)")
            return False
        assert value is not None
        figures[i] = store.save(p, value[0], error=False)
        bar.advance(None if describe is None else f"  {p.name}: {describe(figures[i])} ({value[1]:.2f} s)")
        return False

    try:
        if todo and backend == "local":
            _run_local(todo, jobs or os.cpu_count() or 1, handle, bar)
        elif todo:
            _run_ray(todo, jobs, address, handle, bar)
    finally:
        bar.close()

    table = _table(plan, figures, spec_dict)
    files: List[Path] = []
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        files = _write_table(table, out_dir)
    table.attrs["sweep"] = {
        "points": len(plan),
        "ran": len(todo) - failed,
        "kept": kept_count,
        "failed": failed,
        "files": [str(f) for f in files],
    }
    return table


def _table(plan: List[_Point], figures: Mapping[int, Mapping[str, Any]], spec: Mapping[str, Any]) -> pd.DataFrame:
    """One row per point that has figures, in the spec's order: the base's name (``scenario``,
    with ``scenarios``), the swept keys, ``seed`` (the given one, else the figures' own), then
    the figures flattened."""
    keys = list(spec.get("grid", {}))
    for p in plan:
        keys += [k for k in p.overrides if k not in keys]
    named = "scenarios" in spec
    rows = []
    for i, p in enumerate(plan):
        if i not in figures:
            continue
        flat = dict(_flatten(figures[i]))
        r: Dict[str, Any] = {"scenario": p.base.name} if named else {}
        r.update({k: p.overrides.get(k) for k in keys})
        r["seed"] = p.seed if p.seed is not None else flat.get("seed")
        r.update({k: v for k, v in flat.items() if k not in r})
        rows.append(r)
    table = pd.DataFrame(rows)
    if "seed" in table.columns and table["seed"].isna().all():
        table = table.drop(columns="seed")
    return table


def add_sweep_arguments(parser: argparse.ArgumentParser, jobs: Optional[int] = None) -> None:
    """Adds the options ``fabricsim sweep`` shares with scripts that run sweeps (the paper
    drivers): ``--backend``, ``--jobs`` (default `jobs`, None: every core), ``--address``,
    ``--only``, ``--timeout-s`` and ``--quiet``; :func:`sweep_options` turns them into keyword
    arguments of :func:`sweep`."""
    parser.add_argument("--backend", choices=BACKENDS, default="local", help="local processes (default) or Ray tasks")
    parser.add_argument("--jobs", type=int, default=jobs, help=f"points at once (default: {jobs or 'every core / every Ray CPU'})")
    parser.add_argument("--address", default=None, help="Ray cluster address (default: a new local Ray instance)")
    parser.add_argument("--only", default=None, help="run only the points whose name matches this regular expression")
    parser.add_argument("--timeout-s", type=float, default=None, help="stop a point after this much wall time")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def sweep_options(args: argparse.Namespace) -> Dict[str, Any]:
    """The keyword arguments of :func:`sweep` that :func:`add_sweep_arguments`' options give."""
    return {
        "backend": args.backend,
        "jobs": args.jobs,
        "address": args.address,
        "only": args.only,
        "timeout_s": args.timeout_s,
        "progress": not args.quiet,
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``fabricsim sweep FILE``: runs a sweep file and writes its table; returns the exit code."""
    ap = argparse.ArgumentParser(
        prog="fabricsim sweep",
        description="Run a sweep file (TOML: `scenario` or a [scenarios] table, a [grid] table of "
        "key.path = [values], optional `points = [{...}]` and `seeds = [...]`) in parallel, "
        "resumably, and write one row per point to OUT/sweep.csv (and sweep.parquet with pyarrow). "
        "A point that runs out of --timeout-s becomes a row with `error`.",
    )
    ap.add_argument("file", help="the sweep file; its relative scenario paths resolve against its folder")
    ap.add_argument("--out", default=None, help="results folder (default out/<file stem>); finished points in OUT/points are kept")
    ap.add_argument("--keep-runs", action="store_true", help="keep each point's output files in OUT/runs/<point name>/")
    add_sweep_arguments(ap)
    a = ap.parse_args(argv)
    out = Path(a.out) if a.out else Path("out") / Path(a.file).stem
    from ._native import SimulationError

    try:
        table = sweep(
            a.file,
            out=out,
            errors="record" if a.timeout_s is not None else "raise",
            run_dirs=True if a.keep_runs else None,
            **sweep_options(a),
        )
    except (ValueError, OSError, ImportError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except SimulationError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"interrupted; finished points are kept in {out / 'points'}", file=sys.stderr)
        return 130
    s = table.attrs["sweep"]
    failed = f", {s['failed']} failed (rows with `error`)" if s["failed"] else ""
    print(f"{s['points']} points: {s['ran']} run, {s['kept']} kept{failed}")
    print(f"table: {', '.join(s['files'])}")
    return 1 if s["failed"] else 0
