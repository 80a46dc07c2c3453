"""fabricsim: a packet-level, deterministic, discrete-event simulator of the networks inside
AI/ML training clusters (fat trees and leaf-spines, ECN, trimming, PFC, per-connection
congestion control and path selection), driven from Python.

Start with :func:`run`::

    import fabricsim
    r = fabricsim.run("scenarios/example.toml", overrides={"workload.flow_bytes": "256KiB"})
    r.flows            # DataFrame, one row per flow (flows.csv's columns)
    r.summary["fct_us"]["p99"]
    r.save("out/example")

:func:`sweep` runs a grid of overrides and seeds in parallel (local cores or a Ray cluster),
resumably, and returns one row per point; ``fabricsim sweep FILE`` runs a sweep file.
:func:`load` reads a results folder of ``fabricsim run``; :meth:`Result.plot` and
:meth:`Result.report` draw a run (matplotlib) and write an HTML page about it.

Scenario keys and schemes: the repository's book (``docs/``, its reference chapters) and
``fabricsim list --params``; output
columns with units and meanings: :meth:`Result.columns_info`.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, NamedTuple, Optional, Union

from . import _native
from ._native import ScenarioError, SimulationError
from ._plot import PLOTS
from ._result import TABLES, Result, load
from ._scenario import Overrides, Scenario, override_list, source
from ._sweep import add_sweep_arguments, sweep, sweep_options

__version__: str = _native.__version__
__all__ = ["run", "sweep", "add_sweep_arguments", "sweep_options", "load", "Result", "Progress", "ScenarioError", "SimulationError", "TABLES", "PLOTS", "__version__"]


class Progress(NamedTuple):
    """Progress of a running simulation, handed to a ``progress`` callable about every 0.1 s."""

    fraction: float
    """Fraction of all payload bytes acknowledged (0 to 1)."""
    simulated_us: float
    """Simulated time, µs."""
    events: int
    """Events processed so far."""
    messages_done: int
    """Messages completed (a flow is one message)."""
    messages: int
    """All messages of the workload."""


class _Bar:
    """The progress line ``fabricsim run`` shows, on ``sys.stderr``, for runs past one second."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.shown = False

    def __call__(self, p: Progress) -> None:
        elapsed = time.monotonic() - self.start
        if elapsed < 1.0:
            return
        self.shown = True
        rate = p.events / elapsed / 1e6
        sys.stderr.write(f"\r{100 * p.fraction:5.1f} %  simulated {p.simulated_us:,.1f} µs  {p.events / 1e6:,.1f} M events ({rate:.1f} M/s)  ")
        sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


def run(
    scenario: Scenario,
    overrides: Overrides = None,
    seed: Optional[int] = None,
    progress: Union[bool, Callable[[Progress], Any]] = True,
    out: Union[None, str, "os.PathLike[str]"] = None,
    threads: int = 1,
) -> Result:
    """Simulates one scenario and returns its :class:`Result`.

    Args:
        scenario: a scenario file (``str`` or ``Path``: a ``.toml`` file, or an htsim ``.cm``
            connection matrix), TOML text (any string with a newline or ``=``), or a dict nested
            as the TOML file is, e.g. ``{"topology": {"kind": "fat_tree", "k": 4},
            "workload": {"kind": "permutation", "flow_bytes": "64KiB"}}``. Every key has a
            default; unknown keys are errors. Relative file names in the scenario resolve
            against the file's folder (the current folder for text and dicts).
        overrides: changes applied on top, as ``fabricsim run --set``: a dict
            ``{"topology.k": 16, "transport.lb": "ecmp"}`` or a list of ``"key.path=value"``
            strings (values parsed as TOML, else taken as text).
        seed: the master seed (same as the override ``seed=N``); the same scenario and seed
            give identical results.
        progress: ``True`` shows a progress line on stderr for runs longer than a second;
            ``False`` shows nothing; a callable gets a :class:`Progress` about every 0.1 s
            (an exception it raises stops the run and propagates).
        out: a results folder, checked, cleared of the previous run's files and claimed
            *before* simulating (an unusable folder fails at once), then written as
            ``fabricsim run --out`` writes it. Without it nothing is written; call
            :meth:`Result.save` later if you like.
        threads: cores to use (``fabricsim run --threads``): the fabric is cut into up to
            this many partitions run in parallel, with results identical to a serial run's;
            ``summary["performance"]`` says how many ran (``partitions``) or why the run
            stayed serial (``serial_reason``). A value below 1 raises :class:`ScenarioError`.

    Returns:
        A :class:`Result`: ``flows``, ``ccts``, ``messages``, ``trace``, ``port_trace`` as
        pandas DataFrames (the CSV files' columns), ``summary`` as a dict, ``save(dir)``.

    Raises:
        ScenarioError: bad input (a ``ValueError``): ``.key`` names the scenario key (or
            ``"out"``) and the message the allowed values.
        SimulationError: the run broke one of its own invariants (``.result`` holds the
            results, already written to ``out`` if given), or an internal failure.
        KeyboardInterrupt: Ctrl-C; the run stops within a fraction of a second, and its
            partial results are written to ``out`` if given (``summary["interrupted"]``).

    The simulation runs without holding the GIL, so other Python threads keep running; use
    processes to run several simulations at once on several cores, or ``threads`` to spread
    one over them.
    """
    text, is_path = source(scenario)
    sets = override_list(overrides, seed)
    bar: Optional[_Bar] = None
    if progress is True:
        bar = _Bar()
        callback: Optional[Callable[[Progress], Any]] = bar
    elif progress is False or progress is None:
        callback = None
    else:
        callback = progress
    hook = None if callback is None else (lambda *p: callback(Progress(*p)))
    out_path = None if out is None else Path(os.fspath(out))
    try:
        native = _native.run(text, is_path, sets, None if out_path is None else str(out_path), hook, threads)
    finally:
        if bar is not None:
            bar.close()
    result = Result(native, out_path)
    violations = result.summary.get("invariant_violations") or []
    if violations:
        err = SimulationError("invariant violated:\n  " + "\n  ".join(violations))
        err.result = result  # type: ignore[attr-defined]
        raise err
    return result
