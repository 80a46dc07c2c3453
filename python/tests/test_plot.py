"""Result.plot and ``fabricsim plot``: which plots a run gets, their labels and units, the
figures agreeing with the summary, image files, and the message without matplotlib."""

import subprocess
import sys

import numpy as np
import pytest

import fabricsim
from fabricsim import _plot
from test_load import PACED
from test_run import COLLECTIVES

pytest.importorskip("matplotlib")


def labels(fig):
    return [(ax.get_xlabel(), ax.get_ylabel()) for ax in fig.axes]


def test_each_plot_only_with_its_data(traced_dir):
    traced = fabricsim.load(traced_dir)
    assert list(traced.plot()) == ["fct_cdf", "slowdown_by_size", "window", "queues"]
    assert list(fabricsim.run(COLLECTIVES, progress=False).plot()) == ["fct_cdf", "slowdown_by_size", "cct"]
    with pytest.raises(ValueError, match="collective"):
        traced.plot("cct")
    with pytest.raises(ValueError, match="no plot 'nope'"):
        traced.plot("nope")


def test_axes_carry_units(traced_dir):
    figs = fabricsim.load(traced_dir).plot()
    figs["cct"] = fabricsim.run(COLLECTIVES, progress=False).plot("cct")
    figs["paced"] = fabricsim.run(PACED, progress=False).plot("window")
    want = {
        "fct_cdf": [("flow completion time (µs)", "fraction of flows")],
        "slowdown_by_size": [("flow size bucket (payload bytes)", "FCT slowdown (FCT / ideal FCT)")],
        "cct": [("×: mean CCT / mean ideal CCT", "collective completion time (µs)")],
        # Window controller: window and in-flight panels; the paced one: in flight and rate.
        "window": [("", "congestion window (KiB)"), ("time (µs)", "in flight (KiB)")],
        "paced": [("", "in flight (KiB)"), ("time (µs)", "pacing rate (Gb/s)")],
        "queues": [("", "data queue (KiB)"), ("time (µs)", "transmit rate (Gb/s)")],
    }
    for kind, fig in figs.items():
        assert labels(fig) == want[kind], kind
        assert fig.axes[0].get_title()


def test_flow_figures_count_what_the_summary_counts():
    """With a stationary window the plots count the flows the summary counts: the same
    nearest-rank p50/p99, and the size buckets are the summary's own."""
    r = fabricsim.run(PACED, progress=False)
    flows, which = _plot.counted_flows(r)
    assert "stationary window" in which and 0 < len(flows) < len(r.flows)
    fct = np.sort(flows["fct_us"].to_numpy())
    for q, key in ((0.5, "p50"), (0.99, "p99")):
        assert _plot._nearest_rank(fct, q) == pytest.approx(r.summary["fct_us"][key], abs=1e-9)
    rows, _ = _plot._buckets(r)
    assert [(n, p50, p99) for _, n, p50, p99 in rows] == [
        (b["count"], b["p50"], b["p99"]) for b in r.summary["slowdown_by_size"]]
    assert rows[0][0] == "≤ 1 kB" and rows[-1][0] == "> 100 kB"


def test_plot_command_writes_one_file_per_plot(traced_dir, tmp_path):
    def plot(*args):
        return subprocess.run([sys.executable, "-m", "fabricsim", "plot", str(traced_dir), *args],
                              capture_output=True, text=True, check=True).stdout.split()

    paths = plot("--out", str(tmp_path / "svg"), "--format", "svg")
    assert [p.rsplit("/", 1)[1] for p in paths] == ["fct_cdf.svg", "slowdown_by_size.svg", "window.svg", "queues.svg"]
    first = [open(p, "rb").read() for p in paths]
    assert all(b"<svg" in svg and b"<text" not in svg for svg in first)  # text as paths: no fonts needed
    # The same run gives the same files (no dates, fixed ids).
    assert [open(p, "rb").read() for p in plot("--out", str(tmp_path / "svg"), "--format", "svg")] == first
    (png,) = plot("--kind", "fct_cdf")
    assert png == str(traced_dir / "plots" / "fct_cdf.png") and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_plot_command_errors(tmp_path):
    done = subprocess.run([sys.executable, "-m", "fabricsim", "plot", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2 and "summary.json" in done.stderr


def test_without_matplotlib_the_message_says_how_to_install(traced_dir, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        fabricsim.load(traced_dir).plot()


def test_long_series_keep_their_extremes_and_cdf_tails():
    t = np.arange(100_000, dtype=float)
    y = np.sin(t / 500)
    y[54_321] = 9.0  # a one-sample spike
    y[10] = np.nan
    dt, dy = _plot._decimated(t, y)
    assert len(dt) <= 2 * _plot.SERIES_BINS and np.all(np.diff(dt) > 0)
    assert 54_321 in dt and np.nanmax(dy) == 9.0 and np.nanmin(dy) == np.nanmin(y)
    ranks = _plot._cdf_ranks(1_000_000)
    assert len(ranks) == _plot.CDF_POINTS and ranks[0] == 0 and np.all(np.diff(ranks) > 0)
    assert list(ranks[-_plot.CDF_POINTS // 2:]) == list(range(1_000_000 - _plot.CDF_POINTS // 2, 1_000_000))
