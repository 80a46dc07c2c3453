"""The results of one run as pandas DataFrames and a summary dict."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, Optional, Union

import numpy as np
import pandas as pd

from . import _native

#: The tables of a run (attributes of :class:`Result`), each mirroring one CSV file.
TABLES = ("flows", "ccts", "messages", "trace", "port_trace")

_SCHEMA: Dict[str, Dict[str, Any]] = _native.schema()


def _column(kind: str, data: Any, mask: Optional[bytes]) -> Any:
    if kind == "int":
        return np.frombuffer(data, dtype="<i8")
    if kind == "optint":
        missing = np.frombuffer(mask, dtype=np.uint8).astype(bool)
        return pd.arrays.IntegerArray(np.frombuffer(data, dtype="<i8").copy(), missing)
    if kind == "float":
        return np.frombuffer(data, dtype="<f8")
    if kind == "bool":
        return np.frombuffer(data, dtype=np.uint8).astype(bool)
    if kind == "text":
        return np.array(data, dtype=object)
    raise AssertionError(f"unknown column kind {kind!r}")


class Result:
    """The results of one :func:`fabricsim.run`.

    Tables (pandas DataFrames, built from columns handed over by the simulator, never from CSV
    text), with the columns of the CSV file of the same name, in its order:

    - ``flows``: one row per flow (``flows.csv``),
    - ``ccts``: one row per collective instance (``ccts.csv``; empty for flow workloads),
    - ``messages``: one row per message (``messages.csv``; empty unless ``run.message_log``),
    - ``trace``: connection samples (``trace.csv``; empty unless ``run.trace_interval_us``),
    - ``port_trace``: port samples (``port_trace.csv``; empty unless ``run.trace_ports``).

    Times are in µs. An empty CSV cell is a missing value (NaN, or ``<NA>`` in the nullable
    integer column ``trace.cwnd_bytes``); ``port_trace.paused`` is boolean. ``slowdown``,
    ``normalized_cct`` and ``pacing_gbps`` keep full precision where the CSV rounds them.
    Each frame's ``attrs`` hold ``file``, ``units`` and ``meanings`` (per column); see also
    :meth:`columns_info`.

    ``summary`` is ``summary.json`` as a dict; ``save(dir)`` writes the files ``fabricsim
    run`` writes; ``out`` is the folder given to ``run(out=...)``, if any.
    """

    def __init__(self, native: _native.NativeResults, out: Optional[Path] = None) -> None:
        self._native = native
        self._frames: Dict[str, pd.DataFrame] = {}
        self._summary: Optional[Dict[str, Any]] = None
        self.out = out

    def _table(self, name: str) -> pd.DataFrame:
        if name not in self._frames:
            cols = {col: _column(kind, data, mask) for col, kind, data, mask in self._native.table(name)}
            frame = pd.DataFrame(cols)
            schema = _SCHEMA[name]
            frame.attrs["file"] = schema["file"]
            frame.attrs["units"] = {c: u for c, u, _ in schema["columns"] if c in cols}
            frame.attrs["meanings"] = {c: m for c, _, m in schema["columns"] if c in cols}
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
    def summary(self) -> Dict[str, Any]:
        """``summary.json`` as a dict (its keys: ``fabricsim list --outputs``)."""
        if self._summary is None:
            self._summary = json.loads(self._native.summary_json())
        return self._summary

    def save(self, dir: Union[str, "os.PathLike[str]"]) -> Path:
        """Writes the result files into ``dir`` (created if needed) as ``fabricsim run --out dir``
        does, under the same rules: a folder holding result files fabricsim did not write is
        refused (:class:`fabricsim.ScenarioError`), the files of the run that wrote it before
        are replaced. Returns the folder."""
        self._native.save(os.fspath(dir))
        return Path(dir)

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
