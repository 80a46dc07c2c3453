"""Plots of one run with matplotlib, and the command ``fabricsim plot RUN_DIR`` (``python -m
fabricsim plot``) that writes them to image files.

The plots (:data:`PLOTS`), each drawn only when the run has its data:

- ``fct_cdf``: distribution of the flow completion times, with the ideal FCTs (lower bounds on
  an idle fabric) of the same flows for comparison;
- ``slowdown_by_size``: p50 and p99 FCT slowdown (FCT / ideal FCT, ≥ 1) per flow-size bucket;
- ``cct``: collective completion time per job against its ideal (lower bound);
- ``window``: congestion window (or bytes in flight) and pacing rate of the traced connections
  (``run.trace_interval_us``);
- ``queues``: queue depth and transmit rate of the traced ports (``run.trace_ports``).

Flow figures count the flows the summary counts: the finished ones that started in the
stationary window when ``[results]`` sets one, else every finished flow.

Figures are :class:`matplotlib.figure.Figure` objects made without ``pyplot``, so plotting
neither needs a display nor changes the caller's matplotlib state.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from . import _cli
from ._fmt import size, size_range

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ._result import Result

#: The plot kinds, in the order :meth:`fabricsim.Result.plot` returns them.
PLOTS = ("fct_cdf", "slowdown_by_size", "cct", "window", "queues")

#: Traced connections or ports drawn at most in one plot (more lines are unreadable).
MAX_LINES = 8

#: The look of every figure: light grid, no top/right frame, readable sizes.
_STYLE = {
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 8.5,
    "legend.frameon": False,
    "font.size": 9.5,
}
#: The colour cycle (set in _style: a cycler needs matplotlib).
_COLOURS = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#4b5563"]
#: Saving: text as paths (an SVG needs no fonts) and fixed ids and no date (same run, same file).
_SAVE_STYLE = {"svg.fonttype": "path", "svg.hashsalt": "fabricsim"}


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise ImportError("fabricsim's plots need matplotlib: pip install matplotlib (or pip install 'fabricsim[plot]')") from None
    return matplotlib


@contextlib.contextmanager
def _style() -> Iterator[None]:
    mpl = _matplotlib()
    from cycler import cycler

    with mpl.rc_context({**_STYLE, "axes.prop_cycle": cycler(color=_COLOURS)}):
        yield


def _figure(rows: int = 1, height: float = 4.0) -> Tuple["Figure", List["Axes"]]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.0, height * rows if rows == 1 else 2.6 * rows + 0.6), layout="constrained")
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    return fig, list(axes)


def _nearest_rank(sorted_values: np.ndarray, q: float) -> float:
    """The ⌈q·n⌉-th smallest value, as summary.json's percentiles."""
    n = len(sorted_values)
    return float(sorted_values[min(max(int(np.ceil(q * n)), 1), n) - 1])


def counted_flows(result: "Result") -> Tuple[pd.DataFrame, str]:
    """The finished flows the summary's FCT figures count, and a phrase saying which."""
    flows = result.flows
    done = flows[flows["fct_us"].notna()]
    window = result.summary.get("stationary_window")
    if not window:
        return done, f"{len(done):,} finished flows"
    keep = done["start_us"] >= window["start_us"]
    if window.get("end_us") is not None:
        keep &= done["start_us"] < window["end_us"]
    return done[keep], f"{int(keep.sum()):,} finished flows started in the stationary window"


def _legend(fig: "Figure", ax: "Axes", columns: int = 3) -> None:
    """The legend of ``ax`` below the plot, where it cannot hide data."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(columns, len(labels)))


def _room_for_three(ax: "Axes", bars: int) -> None:
    """One or two bar groups would be drawn very wide: keep the room of three, centred."""
    if bars < 3:
        ax.set_xlim((-1.5, 1.5) if bars == 1 else (-1.0, 2.0))


def _log_if_wide(ax: "Axes", values: np.ndarray, axis: str = "x") -> None:
    """Log scale when the values span more than 30×, so that both ends stay readable."""
    positive = values[values > 0]
    if len(positive) and positive.max() > 30 * positive.min():
        from matplotlib.ticker import FuncFormatter

        (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
        # Plain numbers (1, 10, 1,000) rather than powers of ten.
        (ax.xaxis if axis == "x" else ax.yaxis).set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.10g}"))


#: Points drawn at most per CDF, and bins per time series (two points each): enough for the
#: eye, and a report with a million flows or samples stays a few MB.
CDF_POINTS = 4000
SERIES_BINS = 1000


def _cdf_ranks(n: int) -> np.ndarray:
    """The ranks (0-based) a CDF of ``n`` sorted values draws: all of them, or evenly spread
    ones plus every one of the highest (the tail, where the interest is), half and half."""
    if n <= CDF_POINTS:
        return np.arange(n)
    tail = n - CDF_POINTS // 2
    return np.r_[np.linspace(0, tail, CDF_POINTS // 2, endpoint=False).astype(int), np.arange(tail, n)]


def _decimated(t: np.ndarray, y: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """A long time series cut to :data:`SERIES_BINS` bins of consecutive samples, each drawn by
    its lowest and highest sample in time order, so that no peak (a queue spike) is lost."""
    if len(t) <= 2 * SERIES_BINS:
        return t, y
    keep = []
    for bin in np.array_split(np.arange(len(t)), SERIES_BINS):
        values = y[bin]
        if np.isnan(values).all():
            keep.append(bin[0])
            continue
        keep += sorted({bin[int(np.nanargmin(values))], bin[int(np.nanargmax(values))]})
    return t[keep], y[keep]


def _fct_cdf(result: "Result") -> "Figure":
    flows, which = counted_flows(result)
    fig, (ax,) = _figure()
    fct = np.sort(flows["fct_us"].to_numpy(float))
    ideal = np.sort(flows["ideal_fct_us"].to_numpy(float))
    y = np.arange(1, len(fct) + 1) / len(fct)
    p50, p99 = _nearest_rank(fct, 0.5), _nearest_rank(fct, 0.99)
    ranks = _cdf_ranks(len(fct))
    ax.step(np.r_[fct[0], fct[ranks]], np.r_[0, y[ranks]], where="post", lw=1.8, label=f"FCT (p50 {p50:,.1f} µs, p99 {p99:,.1f} µs)")
    ax.step(np.r_[ideal[0], ideal[ranks]], np.r_[0, y[ranks]], where="post", lw=1.2, ls="--", color="#6b7280",
            label="ideal FCT of the same flows (idle fabric, lower bound)")
    _log_if_wide(ax, np.r_[fct, ideal])
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("flow completion time (µs)")
    ax.set_ylabel("fraction of flows")
    ax.set_title(f"FCT distribution: {which}")
    _legend(fig, ax)
    return fig


def _buckets(result: "Result") -> Tuple[List[Tuple[str, int, Optional[float], Optional[float]]], str]:
    """Per flow-size bucket: label, finished flows, p50 and p99 slowdown. The summary's
    ``slowdown_by_size`` when ``[results] size_buckets`` made one; else one bucket per flow
    size when there are at most 8 sizes, else decades of bytes."""
    flows, which = counted_flows(result)
    given = result.summary.get("slowdown_by_size")
    if given:
        rows = []
        for b in given:
            lo, hi = b["bytes_above"], b["bytes_at_most"]
            label = f"> {size(lo)}" if hi is None else size_range(lo, hi) if lo else f"≤ {size(hi)}"
            rows.append((label, b["count"], b["p50"], b["p99"]))
        return rows, which
    sizes = flows["bytes"].to_numpy()
    distinct = np.unique(sizes)
    if len(distinct) <= 8:
        groups = [(size(s), sizes == s) for s in distinct]
    else:
        edges = 10.0 ** np.arange(np.floor(np.log10(max(sizes.min(), 1))), np.ceil(np.log10(sizes.max())) + 1)
        groups = [(size_range(lo, hi), (sizes > lo) & (sizes <= hi)) for lo, hi in zip(edges[:-1], edges[1:])]
        # The smallest flows sit on the lowest edge itself.
        groups[0] = (groups[0][0], groups[0][1] | (sizes == edges[0]))
    slowdown = flows["slowdown"].to_numpy(float)
    rows = []
    for label, members in groups:
        s = np.sort(slowdown[members])
        rows.append((label, len(s), _nearest_rank(s, 0.5) if len(s) else None, _nearest_rank(s, 0.99) if len(s) else None))
    return rows, which


def _slowdown_by_size(result: "Result") -> "Figure":
    rows, which = _buckets(result)
    fig, (ax,) = _figure()
    x = np.arange(len(rows))
    width = 0.38
    for i, (name, q) in enumerate((("p50", 2), ("p99", 3))):
        heights = [np.nan if r[q] is None else r[q] for r in rows]
        bars = ax.bar(x + (i - 0.5) * width, heights, width, label=f"{name} slowdown", color=_COLOURS[i])
        ax.bar_label(bars, labels=["" if np.isnan(h) else f"{h:.2f}" for h in heights], fontsize=7.5, padding=2)
    ax.axhline(1.0, color="#111827", lw=0.9, ls=":", label="ideal (slowdown 1)")
    ax.set_xticks(x, [f"{r[0]}\n{r[1]:,} flows" for r in rows])
    values = np.array([v for r in rows for v in r[2:] if v is not None], dtype=float)
    _log_if_wide(ax, np.r_[values, 1.0], axis="y")
    if ax.get_yscale() == "linear":
        ax.set_ylim(0, max(values.max(initial=1.0), 1.0) * 1.15)
    ax.set_xlabel("flow size bucket (payload bytes)")
    ax.set_ylabel("FCT slowdown (FCT / ideal FCT)")
    _room_for_three(ax, len(rows))
    ax.set_title(f"Slowdown by flow size: {which}")
    _legend(fig, ax)
    return fig


#: Bars at most in the CCT plot: one per job and collective, else one per job.
MAX_BARS = 24


def _cct(result: "Result") -> "Figure":
    ccts = result.ccts
    done = ccts[ccts["cct_us"].notna()]
    # One bar per collective of each job's sequence (its iterations averaged), so that an
    # AllReduce is not averaged with an AlltoAll; one per job when that makes too many bars.
    keys = ["job", "step"] if len(done.groupby(["job", "step"])) <= MAX_BARS else ["job"]
    bars = done.groupby(keys).agg(
        mean=("cct_us", "mean"), lo=("cct_us", "min"), hi=("cct_us", "max"), ideal=("ideal_cct_us", "mean"),
        n=("cct_us", "size"), op=("op", "first"), algorithm=("algorithm", "first"), bytes=("bytes", "first"))
    total = ccts.groupby(keys).size()
    fig, (ax,) = _figure()
    x = np.arange(len(bars))
    ax.bar(x, bars["mean"], 0.6, color=_COLOURS[0], label="CCT (mean over iterations; whiskers: min – max)",
           yerr=[bars["mean"] - bars["lo"], bars["hi"] - bars["mean"]], capsize=4, ecolor="#374151")
    ax.hlines(bars["ideal"], x - 0.34, x + 0.34, colors=_COLOURS[1], lw=2.2, zorder=3, label="ideal CCT (lower bound)")
    labels = []
    for xi, (key, row) in zip(x, bars.iterrows()):
        ax.annotate(f"×{row['mean'] / row['ideal']:.2f}", (xi, row["hi"]), textcoords="offset points", xytext=(0, 6),
                    ha="center", fontsize=8)
        what = f"\n{row['op']} {row['algorithm']}\n{size(row['bytes'])}" if keys == ["job", "step"] else ""
        job = key[0] if isinstance(key, tuple) else key
        labels.append(f"job {job}{what}\n{int(row['n']):,} of {int(total[key]):,} done")
    ax.set_xticks(x, labels, fontsize=8 if len(bars) > 6 else None)
    _room_for_three(ax, len(bars))
    ax.set_ylim(0, bars["hi"].max() * 1.18)
    ax.set_ylabel("collective completion time (µs)")
    ax.set_xlabel("×: mean CCT / mean ideal CCT")
    per = "job and collective" if keys == ["job", "step"] else "job"
    ax.set_title(f"CCT per {per}: {len(done):,} of {len(ccts):,} collective instances finished")
    _legend(fig, ax)
    return fig


def _limited(frame: pd.DataFrame, key: str, order: pd.Series) -> Tuple[List[Any], str]:
    """The ``key`` values to draw (at most :data:`MAX_LINES`, first by ``order``, descending)
    and a phrase saying how many of how many."""
    keys = list(order.sort_values(ascending=False, kind="stable").index[:MAX_LINES])
    total = frame[key].nunique()
    return sorted(keys), (f"{len(keys)} of {total}" if total > len(keys) else f"{total}")


def _window(result: "Result") -> "Figure":
    trace = result.trace
    has_cwnd = bool(trace["cwnd_bytes"].notna().any())
    has_rate = bool(trace["pacing_gbps"].notna().any())
    # Panels: window (window controllers), bytes in flight (always), pacing rate (rate senders).
    panels = [("cwnd_bytes", "congestion window (KiB)", 1 / 1024)] if has_cwnd else []
    panels.append(("in_flight_bytes", "in flight (KiB)", 1 / 1024))
    if has_rate:
        panels.append(("pacing_gbps", "pacing rate (Gb/s)", 1.0))
    flows, count = _limited(trace, "flow", trace.groupby("flow")["in_flight_bytes"].max())
    fig, axes = _figure(len(panels))
    for flow in flows:
        rows = trace[trace["flow"] == flow]
        t = rows["time_us"].to_numpy(float)
        for ax, (column, _, scale) in zip(axes, panels):
            ax.plot(*_decimated(t, rows[column].astype("Float64").to_numpy(float, na_value=np.nan) * scale), lw=1.1,
                    label=f"connection {flow}")
    for ax, (_, label, _) in zip(axes, panels):
        ax.set_ylabel(label)
    names = {"cwnd_bytes": "window", "in_flight_bytes": "bytes in flight", "pacing_gbps": "pacing rate"}
    axes[0].set_title(f"Traced connections ({count}): " + ", ".join(names[c] for c, _, _ in panels))
    axes[-1].set_xlabel("time (µs)")
    _legend(fig, axes[0], 4)
    return fig


def _queues(result: "Result") -> "Figure":
    trace = result.port_trace
    ports, count = _limited(trace, "port", trace.groupby("port")["queue_bytes"].max())
    fig, (depth, rate) = _figure(2)
    for port in ports:
        rows = trace[trace["port"] == port].sort_values("time_us", kind="stable")
        t = rows["time_us"].to_numpy(float)
        label = rows["link"].iloc[0] or f"port {port}"
        depth.plot(*_decimated(t, rows["queue_bytes"].to_numpy(float) / 1024), lw=1.1, label=label)
        # The mean rate over each drawn interval: bytes sent in it / its length, bytes / µs ×
        # 8 / 1000 = Gb/s. Averaged, not sampled: a packet is counted whole when it starts, so
        # a single sample interval shorter than a few packet times reads above the line rate.
        edges = np.unique(np.linspace(0, len(t) - 1, min(len(t), SERIES_BINS + 1)).astype(int))
        dt = np.diff(t[edges])
        sent = np.diff(rows["tx_bytes"].to_numpy(float)[edges])
        with np.errstate(divide="ignore", invalid="ignore"):
            gbps = np.where(dt > 0, sent * 8 / dt / 1000, np.nan)
        if len(gbps):
            rate.stairs(gbps, t[edges], lw=1.1)
    depth.set_ylabel("data queue (KiB)")
    depth.set_title(f"Traced ports ({count}, deepest queues first): queue and transmit rate")
    _legend(fig, depth, 4)
    rate.set_ylabel("transmit rate (Gb/s)")
    rate.set_xlabel("time (µs)")
    return fig


#: kind -> (drawing function, whether the run has its data, what records the data)
_KINDS: Dict[str, Tuple[Callable[["Result"], "Figure"], Callable[["Result"], bool], str]] = {
    "fct_cdf": (_fct_cdf, lambda r: bool(counted_flows(r)[0].shape[0]), "finished flows"),
    "slowdown_by_size": (_slowdown_by_size, lambda r: bool(counted_flows(r)[0].shape[0]), "finished flows"),
    "cct": (_cct, lambda r: bool(r.ccts["cct_us"].notna().any()), "a collective workload with finished instances"),
    "window": (_window, lambda r: not r.trace.empty, "connection traces (run.trace_interval_us with traced connections)"),
    "queues": (_queues, lambda r: not r.port_trace.empty, "port traces (run.trace_ports)"),
}


def available(result: "Result") -> List[str]:
    """The plot kinds whose data ``result`` has, in :data:`PLOTS` order."""
    return [k for k in PLOTS if _KINDS[k][1](result)]


def figure(result: "Result", kind: str) -> "Figure":
    """The figure ``kind`` (one of :data:`PLOTS`) of ``result``."""
    if kind not in _KINDS:
        raise ValueError(f"no plot {kind!r}; the plots: {', '.join(PLOTS)}")
    draw, has_data, needs = _KINDS[kind]
    if not has_data(result):
        raise ValueError(f"no data for the plot {kind!r}: it needs {needs}")
    with _style():
        return draw(result)


def figures(result: "Result", kinds: Optional[Sequence[str]] = None) -> Dict[str, "Figure"]:
    """``{kind: Figure}`` for ``kinds`` (default: every plot whose data the run has)."""
    return {k: figure(result, k) for k in (available(result) if kinds is None else kinds)}


def save(fig: "Figure", path: Union[Path, BinaryIO], format: str) -> None:
    """Writes ``fig`` to ``path`` (a file name or a binary file) as ``png`` (150 dpi) or ``svg`` (text as paths: no fonts needed),
    the same run giving the same bytes."""
    mpl = _matplotlib()
    metadata = {"Date": None} if format == "svg" else {"Software": None}
    with mpl.rc_context(_SAVE_STYLE):
        fig.savefig(path, format=format, dpi=150, metadata=metadata)


def main(argv: Sequence[str]) -> int:
    """``fabricsim plot RUN_DIR [--out DIR] [--format png|svg] [--kind KIND ...]``."""
    parser = _cli.parser("plot", "Plot a run's results: one image file per plot whose data the run has; prints their "
                         "paths. Needs matplotlib.", "folder for the images (default RUN_DIR/plots)")
    parser.add_argument("--format", choices=("png", "svg"), default="png", help="image format (default png)")
    parser.add_argument("--kind", action="append", choices=PLOTS, help="only this plot (repeatable; default: all with data)")
    args = parser.parse_args(list(argv))
    result = _cli.load(args.run_dir)
    if result is None:
        return 2
    try:
        figs = figures(result, args.kind)
    except (ImportError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not figs:
        print(f"error: {args.run_dir}: nothing to plot (no finished flows, collectives or traces)", file=sys.stderr)
        return 1
    out = args.out or args.run_dir / "plots"
    out.mkdir(parents=True, exist_ok=True)
    for kind, fig in figs.items():
        path = out / f"{kind}.{args.format}"
        save(fig, path, args.format)
        print(path)
    return 0
