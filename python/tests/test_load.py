"""fabricsim.load reads a results folder into the frames fabricsim.run gives (dtypes, column
order, attrs, values); Result.to_polars builds the same tables as polars frames."""

import json

import numpy as np
import pandas as pd
import pytest

import fabricsim
from fabricsim import _native
from fabricsim._result import kind_of
from test_run import COLLECTIVES, SMALL

#: A rate-based controller (DCQCN): pacing rates in trace.csv, no window (cwnd_bytes missing).
PACED = {
    "topology": {"kind": "leaf_spine", "tors": 2, "hosts_per_tor": 4, "spines": 2, "link_rate_gbps": 100},
    "transport": {"cc": {"name": "dcqcn"}, "lb": "ecmp"},
    "workload": {"kind": "open_loop", "cdf": "alistorage2019", "load": 0.5, "flows": 200},
    "results": {"size_buckets": [1000, "10KB", "100KB"], "window_start_us": 5},
    "run": {"trace_interval_us": 1.0, "trace_conns": [0, 1, 2, 3], "trace_ports": ["tor_up"]},
}


def assert_same_result(ran: fabricsim.Result, loaded: fabricsim.Result) -> None:
    for name in fabricsim.TABLES:
        a, b = getattr(ran, name), getattr(loaded, name)
        assert a.attrs == b.attrs, name
        # pacing_gbps is the one column the CSV rounds and the simulator's times cannot restore
        # (3 decimals: 1 Mb/s); every other value is exact, the ratios included.
        exact = [c for c in a.columns if c != "pacing_gbps"]
        pd.testing.assert_frame_equal(a[exact], b[exact], check_exact=True, obj=name)
        if "pacing_gbps" in a:
            pd.testing.assert_series_equal(a["pacing_gbps"], b["pacing_gbps"], check_exact=False, rtol=0, atol=5e-4)
    assert loaded.summary == ran.summary


@pytest.mark.parametrize("scenario, overrides", [("example", SMALL), (COLLECTIVES, None), (PACED, None)], ids=["traced", "collectives", "paced"])
def test_load_gives_the_frames_run_gives(scenario, overrides, example, tmp_path):
    ran = fabricsim.run(example if scenario == "example" else scenario, overrides=overrides, progress=False)
    loaded = fabricsim.load(ran.save(tmp_path / "run"))
    assert_same_result(ran, loaded)
    assert loaded.out == tmp_path / "run" and not loaded.flows.empty


def test_paced_run_has_rates_and_missing_windows(tmp_path):
    loaded = fabricsim.load(fabricsim.run(PACED, progress=False).save(tmp_path / "run"))
    assert loaded.trace["cwnd_bytes"].isna().all() and str(loaded.trace["cwnd_bytes"].dtype) == "Int64"
    assert loaded.trace["pacing_gbps"].notna().any()
    assert loaded.port_trace["paused"].dtype == bool
    # (`group` only for training steps.)
    assert loaded.ccts.empty and list(loaded.ccts.columns) == [c for c in fabricsim.Result.columns_info("ccts")["column"] if c != "group"]


def test_column_kinds_follow_the_schema_units(traced_dir):
    """The rule load uses for each column's type (from its unit) is the type the simulator
    hands over, for every column of every table."""
    native = fabricsim.run(COLLECTIVES, progress=False)._source.native
    traced = fabricsim.run(PACED, overrides={"run.message_log": True}, progress=False)._source.native
    schema = _native.schema()
    seen = set()
    for results in (native, traced):
        for table in fabricsim.TABLES:
            units = {c: u for c, u, _ in schema[table]["columns"]}
            for column, kind, _, _ in results.table(table):
                assert kind_of(table, column, units[column]) == kind, f"{table}.{column}"
                seen.add((table, column))
    missing = {(t, c) for t in fabricsim.TABLES for c, _, _ in schema[t]["columns"]} - seen
    assert missing <= {("flows", "reroutes"), ("flows", "subflows"), ("flows", "fair_ideal_fct_us"), ("flows", "fair_slowdown"), ("ccts", "group")}


def test_load_refuses_a_folder_without_summary(tmp_path):
    with pytest.raises(FileNotFoundError, match="summary.json"):
        fabricsim.load(tmp_path)


def test_a_loaded_result_saves_a_copy(traced_dir, tmp_path):
    loaded = fabricsim.load(traced_dir)
    copy = loaded.save(tmp_path / "copy")
    manifest = json.loads((traced_dir / "manifest.json").read_text())
    assert sorted(p.name for p in copy.iterdir()) == sorted(manifest["files"] + ["manifest.json"])
    assert_same_result(loaded, fabricsim.load(copy))
    assert loaded.save(traced_dir) == traced_dir  # its own folder: nothing to do
    with pytest.raises(fabricsim.ScenarioError, match="not empty"):
        loaded.save(copy)


def test_to_polars_matches_pandas(traced_dir):
    pl = pytest.importorskip("polars")
    for result in (fabricsim.run(PACED, progress=False), fabricsim.load(traced_dir)):
        for name in fabricsim.TABLES:
            frame, polars_frame = getattr(result, name), result.to_polars(name)
            assert isinstance(polars_frame, pl.DataFrame)
            assert polars_frame.columns == list(frame.columns) and polars_frame.height == len(frame)
            for column in frame.columns:
                got = polars_frame[column]
                want = frame[column]
                # Missing values: NaN / <NA> in pandas, null in polars.
                assert got.null_count() == int(want.isna().sum()), f"{name}.{column}"
                if pd.api.types.is_numeric_dtype(want) and not pd.api.types.is_bool_dtype(want):
                    np.testing.assert_array_equal(got.to_numpy().astype(float), want.astype("Float64").to_numpy(float, na_value=np.nan), err_msg=f"{name}.{column}")
                else:
                    assert got.to_list() == want.tolist(), f"{name}.{column}"
    with pytest.raises(ValueError, match="no table 'nope'"):
        result.to_polars("nope")


def test_to_polars_without_polars_says_how_to_install(traced_dir, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "polars", None)
    with pytest.raises(ImportError, match="pip install polars"):
        fabricsim.load(traced_dir).to_polars("flows")
