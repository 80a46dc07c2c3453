"""fabricsim.sweep: points, parallel runs equal to single runs, resuming, spec files, errors."""

import json

import pandas as pd
import pytest

import fabricsim
from fabricsim._sweep import points

GRID = {"workload.flow_bytes": ["16KiB", "48KiB"], "transport.lb": ["spray", "ecmp"]}


def spec(example):
    return {"scenario": str(example), "grid": GRID, "seeds": [1, 2]}


def test_points_order_and_merge():
    p = points({"scenario": "x", "grid": {"a": [1, 2], "b": ["x"]}, "points": [{}, {"c": 3}], "seeds": [7, 8]})
    assert p[:3] == [({"a": 1, "b": "x"}, 7), ({"a": 1, "b": "x"}, 8), ({"a": 1, "b": "x", "c": 3}, 7)]
    assert len(p) == 8
    with pytest.raises(ValueError, match="unknown keys"):
        points({"scenario": "x", "gird": {}})
    with pytest.raises(ValueError, match="seeds"):
        points({"scenario": "x", "seeds": []})


def test_parallel_sweep_equals_single_runs_and_one_worker(example, tmp_path):
    table = fabricsim.sweep(spec(example), jobs=2, out=tmp_path / "s", progress=False)
    assert len(table) == 8
    assert list(table.columns[:3]) == ["workload.flow_bytes", "transport.lb", "seed"]
    assert table["transport.lb"].tolist() == ["spray", "spray", "ecmp", "ecmp"] * 2
    assert (table["invariant_violations"] == 0).all() and (table["flows_finished"] == 128).all()
    one = fabricsim.run(example, overrides={"workload.flow_bytes": "48KiB", "transport.lb": "ecmp"}, seed=2, progress=False)
    row = table.iloc[7]
    assert row["completion_time_us"] == one.summary["completion_time_us"]
    assert row["fct_us.p99"] == one.summary["fct_us"]["p99"]
    assert row["packets.data_sent"] == one.summary["packets"]["data_sent"]
    serial = fabricsim.sweep(spec(example), jobs=1, progress=False)
    pd.testing.assert_frame_equal(table, serial)
    on_disk = pd.read_csv(tmp_path / "s" / "sweep.csv")
    assert list(on_disk.columns) == list(table.columns) and len(on_disk) == 8


def test_resume_keeps_finished_points(example, tmp_path):
    out = tmp_path / "s"
    first = fabricsim.sweep(spec(example), jobs=2, out=out, progress=False)
    files = sorted((out / "points").glob("*.json"))
    assert len(files) == 8
    # A kept point is not run again (its file is trusted); a lost one is.
    kept = json.loads(files[0].read_text())
    kept["completion_time_us"] = -1.0
    files[0].write_text(json.dumps(kept))
    files[1].unlink()
    again = fabricsim.sweep(spec(example), jobs=2, out=out, progress=False)
    assert (again["completion_time_us"] == -1.0).sum() == 1
    changed = again["completion_time_us"] != first["completion_time_us"]
    assert changed.sum() == 1
    assert files[1].exists()


def test_spec_file_with_relative_scenario(example, tmp_path):
    (tmp_path / "base.toml").write_text(example.read_text())
    (tmp_path / "sweep.toml").write_text('scenario = "base.toml"\nseeds = [3]\n[grid]\n"workload.flow_bytes" = ["16KiB"]\n')
    table = fabricsim.sweep(tmp_path / "sweep.toml", jobs=1, progress=False)
    assert len(table) == 1 and table["seed"].item() == 3 and table["flows"].item() == 128


def test_bad_point_raises_scenario_error(example):
    with pytest.raises(fabricsim.ScenarioError) as e:
        fabricsim.sweep({"scenario": str(example), "grid": {"transport.lb": ["nosuchlb"]}}, jobs=1, progress=False)
    assert e.value.key == "transport.lb"
    with pytest.raises(ValueError, match="backend"):
        fabricsim.sweep(spec(example), backend="ray")
