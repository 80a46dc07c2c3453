"""The results of one run as pandas (or polars) DataFrames and a summary dict, whether they come
straight from the simulator (:func:`fabricsim.run`) or from a results folder on disk
(:func:`load`, which reads the files ``fabricsim run`` writes).

Both sources hand over the same typed columns (:class:`Column`); the pandas and the polars
frames are built from those, so the two sources give equal frames.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Optional, Union

import numpy as np
import pandas as pd

from . import _native

if TYPE_CHECKING:  # the optional dependencies, for type hints only
    import polars
    from matplotlib.figure import Figure

#: The tables of a run (attributes of :class:`Result`), each mirroring one CSV file.
TABLES = ("flows", "ccts", "messages", "trace", "port_trace")

_SCHEMA: Dict[str, Dict[str, Any]] = _native.schema()

PathLike = Union[str, "os.PathLike[str]"]


class Column(NamedTuple):
    """One column of a table, as both frame builders take it."""

    name: str
    kind: str
    """``int``, ``optint`` (integers with missing values), ``float`` (NaN missing), ``bool``
    or ``text``."""
    values: np.ndarray
    """int64, float64, bool or object (str) values; for ``optint`` 0 where missing."""
    missing: Optional[np.ndarray] = None
    """``optint`` only: True where the value is missing."""


def _native_column(name: str, kind: str, data: Any, mask: Optional[bytes]) -> Column:
    """A column from the buffers the native module hands over (see ``NativeResults.table``)."""
    if kind in ("int", "optint"):
        values = np.frombuffer(data, dtype="<i8")
    elif kind == "float":
        values = np.frombuffer(data, dtype="<f8")
    elif kind == "bool":
        values = np.frombuffer(data, dtype=np.uint8).astype(bool)
    elif kind == "text":
        values = np.array(data, dtype=object)
    else:
        raise AssertionError(f"unknown column kind {kind!r}")
    missing = np.frombuffer(mask, dtype=np.uint8).astype(bool) if kind == "optint" else None
    return Column(name, kind, values, missing)


def _pandas(columns: List[Column]) -> pd.DataFrame:
    def series(c: Column) -> Any:
        if c.kind == "optint":
            return pd.arrays.IntegerArray(c.values.copy(), c.missing.copy())
        return c.values

    return pd.DataFrame({c.name: series(c) for c in columns})


def _polars(columns: List[Column]) -> "polars.DataFrame":
    try:
        import polars as pl
    except ImportError:
        raise ImportError("Result.to_polars needs polars: pip install polars") from None

    def series(c: Column) -> "pl.Series":
        if c.kind in ("int", "optint"):
            s = pl.Series(c.name, c.values, dtype=pl.Int64)
            # polars marks missing values as null, whatever the type.
            return s if c.missing is None else s.set(pl.Series(c.missing), None)
        if c.kind == "float":
            return pl.Series(c.name, c.values, dtype=pl.Float64, nan_to_null=True)
        if c.kind == "bool":
            return pl.Series(c.name, c.values, dtype=pl.Boolean)
        return pl.Series(c.name, c.values.tolist(), dtype=pl.String)

    return pl.DataFrame([series(c) for c in columns])


class _NativeSource:
    """A run's tables and summary straight from the simulator's memory."""

    def __init__(self, native: _native.NativeResults) -> None:
        self.native = native

    def columns(self, name: str) -> List[Column]:
        return [_native_column(*col) for col in self.native.table(name)]

    def summary_json(self) -> str:
        return self.native.summary_json()

    def resolved_scenario(self) -> Optional[str]:
        return self.native.resolved_scenario()

    def save(self, dir: Path) -> None:
        self.native.save(os.fspath(dir))


#: Column kinds by the schema's unit; the one exception: a window-less controller leaves
#: ``trace.cwnd_bytes`` empty, so it is the one integer column with missing values.
_KIND_OF_UNIT = {"id": "int", "bytes": "int", "packets": "int", "count": "int", "µs": "float",
                 "ratio": "float", "Gb/s": "float", "text": "text", "bool": "bool"}
_OPTINT = {("trace", "cwnd_bytes")}


def kind_of(table: str, column: str, unit: str) -> str:
    """The kind of a table's column (see :class:`Column`), from its schema unit."""
    return "optint" if (table, column) in _OPTINT else _KIND_OF_UNIT[unit]


#: The read_csv dtype of each kind (bools are written 0 / 1; text is read as written).
_CSV_DTYPE = {"int": "int64", "optint": "Int64", "float": "float64", "bool": "int8", "text": object}

#: The numpy dtype of each kind's values.
_NUMPY_DTYPE = {"int": np.int64, "optint": np.int64, "float": np.float64, "bool": bool, "text": object}


def _empty(name: str, kind: str) -> Column:
    return Column(name, kind, np.array([], dtype=_NUMPY_DTYPE[kind]), np.array([], dtype=bool) if kind == "optint" else None)


#: Columns a run writes only when it has them: flows.csv's (``Results::has_flow_column``), ccts.csv's group (training steps).
_OPTIONAL_COLUMNS = {"flows": ("reroutes", "subflows", "fair_ideal_fct_us", "fair_slowdown"), "ccts": ("group",)}

_PS_PER_US = 1_000_000

#: Correctly rounded float parsing, so that a time printed with 6 decimals reads back as the
#: simulator's own ps / 10^6: pandas before 3 needs to be asked (3 does it by default and
#: deprecates the argument).
_EXACT_FLOATS: Dict[str, Any] = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


def _ps(us: np.ndarray) -> np.ndarray:
    """Picoseconds from µs printed with 6 decimals (exact: times stay below 2^50 ps)."""
    return np.rint(us * _PS_PER_US)


class _FolderSource:
    """A run's tables and summary read from the files of a results folder."""

    def __init__(self, dir: Path) -> None:
        self.dir = dir
        summary = dir / "summary.json"
        if not summary.is_file():
            raise FileNotFoundError(f"{dir}: no summary.json, so not a fabricsim results folder")
        self.summary_text = summary.read_text(encoding="utf-8")

    def columns(self, name: str) -> List[Column]:
        schema = _SCHEMA[name]
        units = {c: u for c, u, _ in schema["columns"]}
        path = self.dir / schema["file"]
        if not path.is_file():
            # Not written (no collectives, no tracing, ...): empty, with the schema's columns.
            skip = _OPTIONAL_COLUMNS.get(name, ())
            return [_empty(c, kind_of(name, c, u)) for c, u in units.items() if c not in skip]
        header = pd.read_csv(path, nrows=0).columns.tolist()
        unknown = [c for c in header if c not in units]
        if unknown:
            raise ValueError(f"{path}: columns {unknown} are not in the schema of {schema['file']}")
        kinds = {c: kind_of(name, c, units[c]) for c in header}
        frame = pd.read_csv(
            path,
            dtype={c: _CSV_DTYPE[k] for c, k in kinds.items()},
            # Only an empty cell is missing, and only in numeric columns; text stays as written.
            keep_default_na=False,
            na_values={c: [""] for c, k in kinds.items() if k in ("float", "optint")},
            **_EXACT_FLOATS,
        )
        columns = []
        for c, k in kinds.items():
            s = frame[c]
            if k == "optint":
                columns.append(Column(c, k, s.to_numpy("int64", na_value=0), s.isna().to_numpy()))
            else:
                columns.append(Column(c, k, s.to_numpy().astype(_NUMPY_DTYPE[k])))
        return self._unrounded(name, columns)

    @staticmethod
    def _unrounded(name: str, columns: List[Column]) -> List[Column]:
        """The ratios the CSV rounds to 6 decimals, recomputed from the exact times as the
        simulator computes them (ps / ps), so that a loaded run equals the one in memory."""
        ratios = {
            "flows": [("slowdown", "fct_us", "ideal_fct_us"), ("fair_slowdown", "fct_us", "fair_ideal_fct_us")],
            "ccts": [("normalized_cct", "cct_us", "ideal_cct_us")],
        }
        for ratio, num, den in ratios.get(name, []):
            by_name = {c.name: c for c in columns}
            if not {ratio, num, den} <= by_name.keys():
                continue
            # ccts: the simulator divides by max(ideal, 1 ps); an ideal FCT is never 0.
            exact = _ps(by_name[num].values) / np.maximum(_ps(by_name[den].values), 1)
            columns = [c._replace(values=exact) if c.name == ratio else c for c in columns]
        return columns

    def summary_json(self) -> str:
        return self.summary_text

    def resolved_scenario(self) -> Optional[str]:
        path = self.dir / "resolved_scenario.toml"
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def save(self, dir: Path) -> None:
        if dir.resolve() == self.dir.resolve():
            return
        if dir.exists() and any(dir.iterdir()):
            raise _native.ScenarioError(f"out: `{dir}` is not empty; a loaded run is copied only into a new or empty folder")
        manifest = json.loads((self.dir / "manifest.json").read_text(encoding="utf-8"))
        dir.mkdir(parents=True, exist_ok=True)
        for name in [*manifest["files"], "manifest.json"]:
            shutil.copyfile(self.dir / name, dir / name)


class Result:
    """The results of one :func:`fabricsim.run`, or of a results folder read by
    :func:`fabricsim.load`.

    Tables (pandas DataFrames, built from typed columns handed over by the simulator, never
    from CSV text; :func:`fabricsim.load` reads the CSV files into the same columns), with the
    columns of the CSV file of the same name, in its order:

    - ``flows``: one row per flow (``flows.csv``),
    - ``ccts``: one row per collective instance (``ccts.csv``; empty for flow workloads),
    - ``messages``: one row per message (``messages.csv``; empty unless ``run.message_log``),
    - ``trace``: connection samples (``trace.csv``; empty unless ``run.trace_interval_us``),
    - ``port_trace``: port samples (``port_trace.csv``; empty unless ``run.trace_ports``).

    Times are in µs. An empty CSV cell is a missing value (NaN, or ``<NA>`` in the nullable
    integer column ``trace.cwnd_bytes``); ``port_trace.paused`` is boolean. ``slowdown``,
    ``fair_slowdown``, ``normalized_cct`` and ``pacing_gbps`` keep full precision where the CSV rounds them.
    Each frame's ``attrs`` hold ``file``, ``units`` and ``meanings`` (per column); see also
    :meth:`columns_info`. :meth:`to_polars` gives a table as a polars DataFrame.

    ``summary`` is ``summary.json`` as a dict; ``save(dir)`` writes the files ``fabricsim
    run`` writes; ``out`` is the folder given to ``run(out=...)`` or to ``load``, if any.
    :meth:`plot` draws the run (matplotlib) and :meth:`report` writes an HTML page about it.
    """

    def __init__(self, native: Union[_native.NativeResults, _FolderSource], out: Optional[Path] = None) -> None:
        self._source = _NativeSource(native) if isinstance(native, _native.NativeResults) else native
        self._frames: Dict[str, pd.DataFrame] = {}
        self._summary: Optional[Dict[str, Any]] = None
        self.out = out

    def _columns(self, name: str) -> List[Column]:
        if name not in _SCHEMA:
            raise ValueError(f"no table {name!r}; the tables: {', '.join(TABLES)}")
        return self._source.columns(name)

    def _table(self, name: str) -> pd.DataFrame:
        if name not in self._frames:
            frame = _pandas(self._columns(name))
            schema = _SCHEMA[name]
            frame.attrs["file"] = schema["file"]
            frame.attrs["units"] = {c: u for c, u, _ in schema["columns"] if c in frame.columns}
            frame.attrs["meanings"] = {c: m for c, _, m in schema["columns"] if c in frame.columns}
            self._frames[name] = frame
        return self._frames[name]

    @property
    def flows(self) -> pd.DataFrame:
        """One row per flow, as ``flows.csv``."""
        return self._table("flows")

    @property
    def ccts(self) -> pd.DataFrame:
        """One row per collective instance, as ``ccts.csv``."""
        return self._table("ccts")

    @property
    def messages(self) -> pd.DataFrame:
        """One row per message, as ``messages.csv`` (with ``run.message_log = true``)."""
        return self._table("messages")

    @property
    def trace(self) -> pd.DataFrame:
        """Connection samples, as ``trace.csv`` (with ``run.trace_interval_us``)."""
        return self._table("trace")

    @property
    def port_trace(self) -> pd.DataFrame:
        """Port samples, as ``port_trace.csv`` (with ``run.trace_ports``)."""
        return self._table("port_trace")

    @property
    def iterations(self) -> pd.DataFrame:
        """A training step's iterations (``workload.kind = "training"`` or ``"chakra"``), one
        row each, from ``summary.json``'s ``training.iterations``: ``time_us`` against
        ``compute_ideal_us`` and ``network_ideal_us``, ``slowdown``, and the critical path's
        parts (``compute_us``, ``tp_us``, ``pp_us``, ``dp_us``, ``ep_us``, ``other_us``,
        ``wait_us``: each group's exposed communication; they add up to ``time_us``). Empty
        for other workloads. The step's collectives, with the group each serves, are
        :attr:`ccts`."""
        rows = []
        for it in (self.summary.get("training") or {}).get("iterations", []):
            row = {k: v for k, v in it.items() if k != "critical_path"}
            row.update(it.get("critical_path") or {})
            rows.append(row)
        cols = ["iteration", "time_us", "compute_ideal_us", "network_ideal_us", "slowdown", "compute_us", "tp_us", "pp_us", "dp_us", "ep_us", "other_us", "wait_us"]
        return pd.DataFrame(rows, columns=cols)

    def to_polars(self, table: str) -> "polars.DataFrame":
        """The table ``table`` (one of :data:`TABLES`) as a polars DataFrame, built from the
        same typed columns as the pandas frame (no CSV, no pandas in between). Same columns in
        the same order; missing values are nulls (in every type, where pandas has NaN). Units
        and meanings: :meth:`columns_info`. Needs ``pip install polars``."""
        return _polars(self._columns(table))

    @property
    def summary(self) -> Dict[str, Any]:
        """``summary.json`` as a dict (its keys: ``fabricsim list --outputs``)."""
        if self._summary is None:
            self._summary = json.loads(self._source.summary_json())
        return self._summary

    @property
    def resolved_scenario(self) -> Optional[str]:
        """``resolved_scenario.toml``: the resolved scenario as TOML (defaults filled in,
        overrides and seed applied; ``files_dir`` when it read files). ``fabricsim.run`` on it,
        or ``fabricsim run`` on the saved folder, repeats the run. ``None`` for a loaded folder
        that has no such file (written by an older fabricsim)."""
        return self._source.resolved_scenario()

    def save(self, dir: PathLike) -> Path:
        """Writes the result files into ``dir`` (created if needed) as ``fabricsim run --out dir``
        does, under the same rules: a folder holding result files fabricsim did not write is
        refused (:class:`fabricsim.ScenarioError`), the files of the run that wrote it before
        are replaced. A loaded result copies its folder's files instead, into a new or empty
        folder only. Returns the folder."""
        self._source.save(Path(dir))
        return Path(dir)

    def plot(self, kind: Optional[str] = None) -> Union["Figure", Dict[str, "Figure"]]:
        """Draws the run with matplotlib (``pip install matplotlib``).

        Args:
            kind: one of :data:`fabricsim.PLOTS` — ``fct_cdf`` (FCT distribution),
                ``slowdown_by_size`` (p50/p99 FCT slowdown per flow-size bucket), ``cct`` (CCT
                per job, against its ideal), ``window`` (congestion window and pacing rate of
                the traced connections), ``queues`` (queue and transmit rate of the traced
                ports). ``None``: every plot whose data the run has.

        Returns:
            The figure of ``kind``; for ``None`` a dict ``{kind: Figure}`` in that order.

        Raises:
            ValueError: an unknown kind, or one whose data the run lacks (says which setting
                records it).
            ImportError: matplotlib is not installed.
        """
        from . import _plot

        return _plot.figures(self) if kind is None else _plot.figure(self, kind)

    def report(self, path: Optional[PathLike] = None) -> Path:
        """Writes one self-contained HTML page about the run (summary table with units, the
        fabric, the plots, invariant violations, the resolved scenario) and returns its path.
        ``path`` defaults to ``report.html`` in :attr:`out` (the results folder). Needs
        matplotlib for the plots."""
        from . import _report

        if path is None:
            if self.out is None:
                raise ValueError("Result.report: give a path (this result has no results folder)")
            path = Path(self.out) / "report.html"
        return _report.write(self, Path(path))

    @staticmethod
    def columns_info(table: Optional[str] = None) -> pd.DataFrame:
        """Unit and meaning of every column of ``table`` (one of :data:`TABLES`), or of every
        table: a DataFrame with ``table``, ``column``, ``unit``, ``meaning``, ``file``."""
        names = TABLES if table is None else (table,)
        rows = []
        for name in names:
            if name not in _SCHEMA:
                raise ValueError(f"no table {name!r}; the tables: {', '.join(TABLES)}")
            schema = _SCHEMA[name]
            rows += [(name, c, u, m, schema["file"]) for c, u, m in schema["columns"]]
        return pd.DataFrame(rows, columns=["table", "column", "unit", "meaning", "file"])

    def __repr__(self) -> str:
        s = self.summary
        done = f"{s.get('flows_finished')} of {s.get('flows')} flows finished"
        completion = s.get("completion_time_us")
        tail = f", completion {completion:.3f} µs" if isinstance(completion, (int, float)) else ""
        return f"<fabricsim.Result {s.get('name')!r}: {done}{tail}>"


def load(run_dir: PathLike) -> Result:
    """Reads a results folder written by ``fabricsim run --out DIR`` (or by
    :meth:`Result.save`, or ``fabricsim.run(out=DIR)``) into a :class:`Result`.

    The frames have the dtypes, column order and ``attrs`` that :func:`fabricsim.run` gives;
    files a run did not write (``ccts.csv`` of a flow workload, untraced runs' traces) are empty
    frames with the schema's columns. ``flows.slowdown`` and ``ccts.normalized_cct`` are
    recomputed from the exact times, as the simulator computes them; ``trace.pacing_gbps``
    keeps the CSV's 3 decimals (1 Mb/s). The tables are read when first used.

    Raises:
        FileNotFoundError: ``run_dir`` has no ``summary.json``.
    """
    dir = Path(os.fspath(run_dir))
    return Result(_FolderSource(dir), dir)
