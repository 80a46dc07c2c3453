"""fabricsim.sweep: points and names, parallel runs equal to single runs, resuming, spec files,
named scenarios with run folders, row functions and a results file, time limits and error rows,
the progress bar, errors, the Ray backend (a real local Ray instance) and ``fabricsim sweep``."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import fabricsim
from fabricsim._sweep import _plan, points

from conftest import REPO

GRID = {"workload.flow_bytes": ["16KiB", "48KiB"], "transport.lb": ["spray", "ecmp"]}


def spec(example):
    return {"scenario": str(example), "grid": GRID, "seeds": [1, 2]}


def small(example, seed=1):
    """The example scenario as TOML text with 16 KiB flows and the given seed."""
    text = example.read_text().replace('flow_bytes = "2MiB"', 'flow_bytes = "16KiB"').replace("seed = 1\n", f"seed = {seed}\n")
    assert 'flow_bytes = "16KiB"' in text and f"seed = {seed}\n" in text
    return text


def flows_row(summary, name, wall_s, run_dir):
    """A row function as the paper drivers write them: figures from the summary, nested, plus
    one read from an output file of the run folder."""
    with open(Path(run_dir) / "flows.csv") as f:
        lines = sum(1 for _ in f) - 1
    return {"wall_s": round(wall_s, 2), "run": name, "fct_us": summary["fct_us"], "flows_csv_rows": lines, "hops": [1, 2]}


def test_points_order_merge_and_names():
    p = points({"scenario": "x", "grid": {"a": [1, 2], "b": ["x"]}, "points": [{}, {"c": 3}], "seeds": [7, 8]})
    assert p[:3] == [({"a": 1, "b": "x"}, 7), ({"a": 1, "b": "x"}, 8), ({"a": 1, "b": "x", "c": 3}, 7)]
    assert len(p) == 8
    # Without seeds each scenario keeps its own seed.
    assert points({"scenario": "x", "grid": {"a": [1]}}) == [({"a": 1}, None)]
    with pytest.raises(ValueError, match="unknown keys"):
        points({"scenario": "x", "gird": {}})
    with pytest.raises(ValueError, match="seeds"):
        points({"scenario": "x", "seeds": []})
    plan = _plan({"scenarios": {"one": "seed = 1\n", "two": "seed = 2\n"}, "grid": {"a.b": ["x/y", 2]}, "seeds": [3]}, Path.cwd())
    assert [q.name for q in plan] == ["one,a.b=x/y,seed=3", "one,a.b=2,seed=3", "two,a.b=x/y,seed=3", "two,a.b=2,seed=3"]
    assert len({q.id for q in plan}) == 4
    with pytest.raises(ValueError, match="named twice"):
        _plan({"scenario": "seed = 1\n", "points": [{"a": 1}, {"a": 1}]}, Path.cwd())
    with pytest.raises(ValueError, match="either `scenario`"):
        _plan({"scenario": "seed = 1\n", "scenarios": {"a": "seed = 1\n"}}, Path.cwd())


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
    pd.testing.assert_frame_equal(table, serial, check_exact=True)
    on_disk = pd.read_csv(tmp_path / "s" / "sweep.csv")
    assert list(on_disk.columns) == list(table.columns) and len(on_disk) == 8
    assert table.attrs["sweep"] == {
        "points": 8, "ran": 8, "kept": 0, "failed": 0,
        "files": [str(tmp_path / "s" / "sweep.csv"), str(tmp_path / "s" / "sweep.parquet")],
    }
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "s" / "sweep.parquet"), table, check_exact=True)


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
    assert (again.attrs["sweep"]["ran"], again.attrs["sweep"]["kept"]) == (1, 7)


def test_spec_file_with_relative_scenario(example, tmp_path):
    (tmp_path / "base.toml").write_text(example.read_text())
    (tmp_path / "sweep.toml").write_text('scenario = "base.toml"\nseeds = [3]\n[grid]\n"workload.flow_bytes" = ["16KiB"]\n')
    table = fabricsim.sweep(tmp_path / "sweep.toml", jobs=1, progress=False)
    assert len(table) == 1 and table["seed"].item() == 3 and table["flows"].item() == 128


def test_named_scenarios_run_dirs_row_function_and_results_file(example, tmp_path):
    scenarios = {"a-spray": small(example, seed=4), "b-ecmp": small(example, seed=5).replace('lb = "spray"', 'lb = "ecmp"')}
    results = tmp_path / "results" / "T.json"
    # A good row of another run and an error row of this sweep are already in the results file.
    results.parent.mkdir()
    results.write_text(json.dumps([{"run": "b-ecmp", "error": "stopped", "wall_s": 1.0}, {"run": "old", "x": 1}]))
    kw = dict(jobs=2, progress=False, run_dirs=tmp_path / "runs", row=flows_row, results=results, errors="record")
    table = fabricsim.sweep({"scenarios": scenarios}, **kw)
    assert table["scenario"].tolist() == ["a-spray", "b-ecmp"] and table["run"].tolist() == ["a-spray", "b-ecmp"]
    assert list(table.columns[:3]) == ["scenario", "wall_s", "run"]
    assert "seed" not in table.columns and "hops" not in table.columns and "error" not in table.columns
    assert (table["flows_csv_rows"] == 128).all()
    for name in scenarios:
        assert (tmp_path / "runs" / name / "flows.csv").exists()
        assert json.loads((tmp_path / "runs" / name / "summary.json").read_text())["seed"] == {"a-spray": 4, "b-ecmp": 5}[name]
    rows = json.loads(results.read_text())
    # The sweep's rows in its order (the error row replaced), the foreign row after them.
    assert [r["run"] for r in rows] == ["a-spray", "b-ecmp", "old"]
    # Rows keep the row function's key order (`run` where it put it), then say where they come
    # from: the engine's commit and a hash of the resolved scenario (the two differ in seed).
    assert list(rows[0]) == ["wall_s", "run", "fct_us", "flows_csv_rows", "hops", "commit", "scenario_sha256"] and rows[0]["hops"] == [1, 2]
    assert rows[0]["commit"] == json.loads((tmp_path / "runs" / "a-spray" / "summary.json").read_text())["engine"]["commit"] != ""
    assert len(rows[0]["scenario_sha256"]) == 64 and rows[0]["scenario_sha256"] != rows[1]["scenario_sha256"]
    assert table["fct_us.p99"].tolist() == [r["fct_us"]["p99"] for r in rows[:2]]
    # Rows in the results file are finished points: nothing runs again, the table is the same.
    again = fabricsim.sweep({"scenarios": scenarios}, **kw)
    assert again.attrs["sweep"]["ran"] == 0
    pd.testing.assert_frame_equal(again, table, check_exact=True)
    # `only` picks points by name; the others are neither run nor in the table.
    rows[1]["error"] = "x"
    results.write_text(json.dumps(rows))
    picked = fabricsim.sweep({"scenarios": scenarios}, only="^a-", **kw)
    assert picked["scenario"].tolist() == ["a-spray"] and picked.attrs["sweep"]["ran"] == 0


def test_time_limit_and_error_rows(example, tmp_path):
    scenarios = {
        "quick": small(example),
        "long": example.read_text().replace('flow_bytes = "2MiB"', 'flow_bytes = "512MiB"'),
        "bad": small(example).replace('lb = "spray"', 'lb = "nosuchlb"'),
    }
    table = fabricsim.sweep({"scenarios": scenarios}, jobs=2, progress=False, timeout_s=0.5, errors="record", out=tmp_path)
    assert table["scenario"].tolist() == ["quick", "long", "bad"]
    assert pd.isna(table["error"][0]) and table["flows_finished"][0] == 128
    assert table["error"][1] == "TimeoutError: stopped after 0.5 s of wall time" and 0.5 <= table["wall_s"][1] < 5
    assert table["error"][2].startswith("ScenarioError: ") and "nosuchlb" in table["error"][2]
    assert table.attrs["sweep"]["failed"] == 2
    # Failed points are not kept: they run again.
    assert len(list((tmp_path / "points").glob("*.json"))) == 1
    with pytest.raises(TimeoutError):
        fabricsim.sweep({"scenarios": {"long": scenarios["long"]}}, jobs=1, progress=False, timeout_s=0.3)


def test_progress_bar_on_stderr(example, capsys):
    fabricsim.sweep({"scenario": str(example), "grid": {"workload.flow_bytes": ["16KiB", "32KiB"]}}, jobs=1,
                    describe=lambda r: f"p99 {r['fct_us.p99']}")
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "sweep: 2 points, 0 kept, 2 to run"
    assert err[1].startswith("  workload.flow_bytes=16KiB: p99 ")
    assert err[2].startswith("points 1/2 [##########..........]  elapsed 0:0") and " ETA 0:0" in err[2]
    assert err[4].startswith("points 2/2 [####################]")


def test_bad_point_raises_scenario_error(example):
    with pytest.raises(fabricsim.ScenarioError) as e:
        fabricsim.sweep({"scenario": str(example), "grid": {"transport.lb": ["nosuchlb"]}}, jobs=1, progress=False)
    assert e.value.key == "transport.lb"
    with pytest.raises(ValueError, match="backend"):
        fabricsim.sweep(spec(example), backend="slurm")
    with pytest.raises(FileNotFoundError, match="nosuch.toml"):
        fabricsim.sweep({"scenario": "nosuch.toml"})


def test_ray_missing_is_a_clear_error(example, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(ImportError, match="pip install ray"):
        fabricsim.sweep(spec(example), backend="ray")


def test_ray_backend_gives_the_local_table(example, tmp_path):
    """A real local Ray instance (2 CPUs): the identical table, resuming from the points it kept,
    and a bad point's ScenarioError (with its key) raised from a Ray task."""
    ray = pytest.importorskip("ray")
    local = fabricsim.sweep(spec(example), jobs=2, progress=False)
    ray.init(num_cpus=2, include_dashboard=False)
    try:
        on_ray = fabricsim.sweep(spec(example), backend="ray", out=tmp_path, progress=False)
        pd.testing.assert_frame_equal(on_ray, local, check_exact=True)
        assert on_ray.attrs["sweep"]["ran"] == 8
        next(iter((tmp_path / "points").glob("*.json"))).unlink()
        again = fabricsim.sweep(spec(example), backend="ray", jobs=1, out=tmp_path, progress=False)
        pd.testing.assert_frame_equal(again, local, check_exact=True)
        assert (again.attrs["sweep"]["ran"], again.attrs["sweep"]["kept"]) == (1, 7)
        with pytest.raises(fabricsim.ScenarioError) as e:
            fabricsim.sweep({"scenario": str(example), "grid": {"transport.lb": ["nosuchlb"]}}, backend="ray", progress=False)
        assert e.value.key == "transport.lb"
        assert ray.is_initialized()  # a Ray the caller started is left running
    finally:
        ray.shutdown()


EXAMPLE_SWEEP = REPO / "scenarios" / "sweep_example.toml"


def sweep_command(cmd, tmp_path, *args):
    env = dict(os.environ, FABRICSIM_PYTHON=sys.executable)
    env.pop("RAY_ADDRESS", None)  # a new local Ray instance, whatever this process ran before
    return subprocess.run(cmd + ["sweep", str(EXAMPLE_SWEEP), *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)


def test_cli_binary_and_python_m_with_ray(tmp_path):
    """`fabricsim sweep FILE` through the CLI binary (local backend, default out/<file stem>),
    resumed, and through `python -m fabricsim sweep` on a Ray instance it starts itself: the
    same sweep.csv."""
    binary = Path(os.environ.get("FABRICSIM_BIN", REPO / "target" / "release" / "fabricsim"))
    if not binary.exists():
        pytest.skip(f"{binary} is not built (scripts/test_python.sh builds it)")
    p = sweep_command([str(binary)], tmp_path, "--jobs", "2")
    assert p.returncode == 0, p.stderr
    table = tmp_path / "out" / "sweep_example" / "sweep.csv"
    assert p.stdout.splitlines() == ["8 points: 8 run, 0 kept", f"table: {Path('out/sweep_example/sweep.csv')}, {Path('out/sweep_example/sweep.parquet')}"]
    assert "points 8/8 [####################]" in p.stderr
    frame = pd.read_csv(table)
    assert len(frame) == 8 and list(frame.columns[:3]) == ["transport.lb", "workload.flow_bytes", "seed"]
    p = sweep_command([str(binary)], tmp_path, "--quiet")
    assert p.returncode == 0 and p.stdout.startswith("8 points: 0 run, 8 kept") and p.stderr == ""
    pytest.importorskip("ray")
    p = sweep_command([sys.executable, "-m", "fabricsim"], tmp_path, "--backend", "ray", "--jobs", "2", "--out", "on_ray", "--quiet")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("8 points: 8 run, 0 kept")
    assert (tmp_path / "on_ray" / "sweep.csv").read_text() == table.read_text()
    p = sweep_command([str(binary)], tmp_path, "--backend", "nosuch")
    assert p.returncode == 2 and "invalid choice" in p.stderr
