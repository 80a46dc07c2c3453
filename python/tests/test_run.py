"""fabricsim.run end to end: frames against the CSV files the same run writes, scenario forms,
errors, the results folder, determinism, Ctrl-C and the GIL."""

import json
import _thread
import csv
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import fabricsim

#: Small flows and every optional table on: traced connections and ToR ports, the message log.
SMALL = {
    "workload.flow_bytes": "64KiB",
    "run.message_log": True,
    "run.trace_interval_us": 0.5,
    "run.trace_conns": [0, 1, 2],
    "run.trace_ports": ["tor_up"],
}

#: A dict scenario: two 4-rank ring AllReduces on a small leaf-spine (ccts.csv has rows).
COLLECTIVES = {
    "name": "dict collectives",
    "topology": {"kind": "leaf_spine", "tors": 2, "hosts_per_tor": 4, "spines": 2, "link_rate_gbps": 100},
    "workload": {
        "kind": "collectives",
        "jobs": [{"ranks": 4, "iterations": 2, "collectives": [{"op": "allreduce", "algorithm": "ring", "bytes": "128KiB"}]}],
    },
}

#: Columns the CSV writer rounds (to 6 decimals; pacing to 3): compared within half a unit.
ROUNDED = {"slowdown": 5e-7, "fair_slowdown": 5e-7, "normalized_cct": 5e-7, "pacing_gbps": 5e-4}


def csv_header(path: Path) -> list:
    with open(path, newline="") as f:
        return next(csv.reader(f))


def assert_frame_matches_csv(frame: pd.DataFrame, path: Path) -> None:
    """Same header, same rows, same values: text as written, numbers as Python parses the CSV
    cells (exactly; the rounded columns within the CSV's rounding), empty cells missing."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert list(frame.columns) == rows[0]
    cells = rows[1:]
    assert len(frame) == len(cells) > 0
    for j, col in enumerate(frame.columns):
        got = frame[col]
        want = [r[j] for r in cells]
        if pd.api.types.is_bool_dtype(got) or not pd.api.types.is_numeric_dtype(got):
            as_text = [str(int(x)) if isinstance(x, (bool, np.bool_)) else str(x) for x in got.tolist()]
            assert as_text == want, col
            continue
        g = got.astype("Float64").to_numpy(float, na_value=np.nan)
        e = np.array([float(w) if w else np.nan for w in want])
        if col in ROUNDED:
            assert np.array_equal(np.isnan(g), np.isnan(e)), col
            np.testing.assert_allclose(g, e, rtol=0, atol=ROUNDED[col], err_msg=col)
        else:
            # Exact: times are t / 10^6 µs on both sides, integers are integers.
            assert np.array_equal(g, e, equal_nan=True), col


def test_example_frames_equal_the_csv_files(example, tmp_path):
    r = fabricsim.run(example, overrides=SMALL, progress=False)
    saved = r.save(tmp_path / "out")
    written = {p.name for p in saved.iterdir()}
    assert {"flows.csv", "summary.json", "manifest.json", "trace.csv", "port_trace.csv", "messages.csv"} <= written
    assert len(r.flows) == 128 and r.summary["flows_finished"] == 128
    for name in ("flows", "messages", "trace", "port_trace"):
        assert_frame_matches_csv(getattr(r, name), saved / f"{name}.csv")
    # No collectives here: no ccts.csv, and an empty frame with the schema's columns.
    assert "ccts.csv" not in written and r.ccts.empty
    # (`group` only for training steps.)
    assert list(r.ccts.columns) == [c for c in fabricsim.Result.columns_info("ccts")["column"] if c != "group"]
    assert r.port_trace["paused"].dtype == bool
    assert r.summary["name"] == "example: 128-host permutation, spray, fixed window"


def test_dict_scenario_and_ccts(tmp_path):
    r = fabricsim.run(COLLECTIVES, progress=False, out=tmp_path / "coll")
    assert r.summary["name"] == "dict collectives" and r.summary["hosts"] == 8
    assert len(r.ccts) == 2 and (r.ccts["normalized_cct"] >= 1).all()
    assert_frame_matches_csv(r.ccts, tmp_path / "coll" / "ccts.csv")
    assert_frame_matches_csv(r.flows, tmp_path / "coll" / "flows.csv")
    assert r.out == tmp_path / "coll"


def test_toml_text_and_list_overrides():
    text = '[topology]\nkind = "leaf_spine"\ntors = 2\nhosts_per_tor = 2\nspines = 1\n[workload]\nkind = "permutation"\n'
    r = fabricsim.run(text, overrides=["workload.flow_bytes=32KiB", "transport.lb=ecmp"], seed=9, progress=False)
    assert r.summary["seed"] == 9
    assert (r.flows["bytes"] == 32 * 1024).all() and len(r.flows) == 4


def test_units_and_meanings_come_with_the_frames(example):
    r = fabricsim.run(example, overrides={"workload.flow_bytes": "16KiB"}, progress=False)
    assert r.flows.attrs["file"] == "flows.csv"
    assert r.flows.attrs["units"]["fct_us"] == "µs" and r.flows.attrs["units"]["bytes"] == "bytes"
    assert set(r.flows.attrs["meanings"]) == set(r.flows.columns)
    info = fabricsim.Result.columns_info()
    assert set(info["table"]) == set(fabricsim.TABLES)
    assert info[(info.table == "trace") & (info.column == "pacing_gbps")]["unit"].item() == "Gb/s"
    with pytest.raises(ValueError, match="no table 'nope'"):
        fabricsim.Result.columns_info("nope")


def test_unknown_key_raises_scenario_error_naming_it(example):
    with pytest.raises(fabricsim.ScenarioError) as e:
        fabricsim.run(example, overrides={"topology.kk": 3}, progress=False)
    assert isinstance(e.value, ValueError)
    assert "kk" in str(e.value) and e.value.key.startswith("topology")


def test_bad_value_names_key_and_allowed_values(example):
    with pytest.raises(fabricsim.ScenarioError) as e:
        fabricsim.run(example, overrides={"transport.lb": "nosuchlb"}, progress=False)
    assert e.value.key == "transport.lb"
    assert "nosuchlb" in str(e.value) and "ecmp" in str(e.value) and "reps" in str(e.value)


def test_bad_toml_and_missing_file(tmp_path):
    with pytest.raises(fabricsim.ScenarioError) as e:
        fabricsim.run("[topology\nk = 4\n", progress=False)
    assert e.value.key is None
    with pytest.raises(fabricsim.ScenarioError, match="nope.toml"):
        fabricsim.run(tmp_path / "nope.toml", progress=False)
    with pytest.raises(TypeError):
        fabricsim.run(42)  # type: ignore[arg-type]


def test_unusable_out_dir_fails_before_simulating(example, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    calls = []
    with pytest.raises(fabricsim.ScenarioError) as e:
        # 1 GiB flows would simulate for minutes, calling `progress` every 0.1 s: the folder is
        # refused before the simulation starts, so it is never called.
        fabricsim.run(example, overrides={"workload.flow_bytes": "1GiB"}, progress=lambda *a: calls.append(a), out=blocker / "sub")
    assert calls == []
    assert e.value.key == "out" and "a_file" in str(e.value)


def test_folder_with_foreign_results_is_refused(example, tmp_path):
    (tmp_path / "flows.csv").write_text("mine\n")
    with pytest.raises(fabricsim.ScenarioError, match="out") as e:
        fabricsim.run(example, overrides={"workload.flow_bytes": "16KiB"}, progress=False, out=tmp_path)
    assert e.value.key == "out" and (tmp_path / "flows.csv").read_text() == "mine\n"
    r = fabricsim.run(example, overrides={"workload.flow_bytes": "16KiB"}, progress=False)
    with pytest.raises(fabricsim.ScenarioError):
        r.save(tmp_path)


def test_same_seed_same_frames_other_seed_differs(example):
    runs = [fabricsim.run(example, overrides=SMALL, seed=s, progress=False) for s in (5, 5, 6)]
    for name in fabricsim.TABLES:
        pd.testing.assert_frame_equal(getattr(runs[0], name), getattr(runs[1], name))
    strip = lambda s: {k: v for k, v in s.items() if k != "performance"}
    assert strip(runs[0].summary) == strip(runs[1].summary)
    assert not runs[0].flows["dst"].equals(runs[2].flows["dst"])


def test_threads_spread_one_run_with_identical_frames(example):
    # (Tracing keeps a run serial: SMALL's traces are left out.)
    small = {"workload.flow_bytes": "64KiB", "run.message_log": True}
    serial = fabricsim.run(example, overrides=small, progress=False)
    parallel = fabricsim.run(example, overrides=small, progress=False, threads=2)
    for name in fabricsim.TABLES:
        pd.testing.assert_frame_equal(getattr(serial, name), getattr(parallel, name))
    strip = lambda s: {k: v for k, v in s.items() if k != "performance"}
    assert strip(serial.summary) == strip(parallel.summary)
    assert (serial.summary["performance"]["partitions"], parallel.summary["performance"]["partitions"]) == (1, 2)
    with pytest.raises(fabricsim.ScenarioError) as e:
        fabricsim.run(example, overrides=small, progress=False, threads=0)
    assert e.value.key == "threads"


def test_ctrl_c_stops_the_run_and_the_gil_is_free(example):
    """Ctrl-C stops a run that would simulate for minutes at the next poll, and between polls
    the simulation holds no GIL. Counted in polls and ticks, never in seconds, so that a busy
    machine cannot fail it."""
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    polls = []  # how many ticks the other thread had made at each progress poll

    def progress(*_):
        polls.append(len(ticks))
        if len(polls) == 3:
            _thread.interrupt_main()  # what Ctrl-C does

    # A shell that starts this in the background (CI launchers, `cmd &`) leaves SIGINT ignored,
    # and then Python installs no KeyboardInterrupt handler and interrupt_main does nothing:
    # put Python's default handler in place, as an interactive session has it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    ticker = threading.Thread(target=tick)
    ticker.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            fabricsim.run(example, overrides={"workload.flow_bytes": "1GiB"}, progress=progress)
    finally:
        stop.set()
        ticker.join()
        signal.signal(signal.SIGINT, previous)
    # Stopped at the poll that saw the interrupt (or the next), not by finishing.
    assert 3 <= len(polls) <= 4, polls
    # The other thread kept running between polls, 0.1 s apart: with the GIL held through the
    # simulation it could tick only while a poll runs Python, about once per poll.
    assert all(b - a >= 5 for a, b in zip(polls, polls[1:])), polls


def test_progress_callable_gets_progress_and_can_stop(example, tmp_path):
    seen = []

    def progress(p):
        seen.append(p)
        if len(seen) == 3:
            raise RuntimeError("enough")

    out = tmp_path / "stopped"
    with pytest.raises(RuntimeError, match="enough"):
        fabricsim.run(example, overrides={"workload.flow_bytes": "1GiB"}, progress=progress, out=out)
    assert len(seen) == 3 and isinstance(seen[0], fabricsim.Progress)
    assert 0 <= seen[0].fraction <= seen[2].fraction < 1 and seen[2].events > seen[0].events > 0
    assert seen[0].messages == 128
    # The stopped run's partial results are in `out`, marked as such; no flow finished.
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["interrupted_at_us"] > 0
    assert summary["flows_finished"] == 0 and summary["invariant_violations"] == []
    assert len((out / "flows.csv").read_text().splitlines()) == 1 + 128


def test_help_tells_enough_to_start():
    doc = fabricsim.run.__doc__
    for needed in ("scenario", "overrides", "seed", "progress", "out", "ScenarioError", "DataFrame", "save"):
        assert needed in doc


def test_a_training_step_gives_its_collectives_with_their_group_and_its_iteration_figures():
    """A training step: the step's collectives as a frame with the group each serves, the
    iteration's time beside its ideals and critical path in the summary."""
    r = fabricsim.run(
        {
            "topology": {"kind": "leaf_spine", "tors": 2, "hosts_per_tor": 4, "spines": 2, "link_rate_gbps": 100},
            "workload": {
                "kind": "training",
                "model": {"layers": 2, "hidden": 128, "heads": 4, "seq": 32, "vocab": 256, "global_batch": 4},
                "parallelism": {"tp": 2, "pp": 2, "dp": 2},
            },
        },
        progress=False,
    )
    assert set(r.ccts["group"]) == {"tp", "dp"}
    frame = r.iterations
    assert len(frame) == 1 and abs(frame[["compute_us", "tp_us", "pp_us", "dp_us", "ep_us", "other_us", "wait_us"]].sum(axis=1)[0] - frame["time_us"][0]) < 1e-3
    assert fabricsim.run(COLLECTIVES, progress=False).iterations.empty
    it = r.summary["training"]["iterations"][0]
    path = it["critical_path"]
    parts = sum(path[k] for k in ("compute_us", "tp_us", "pp_us", "dp_us", "ep_us", "wait_us"))
    assert it["time_us"] >= it["network_ideal_us"] >= it["compute_ideal_us"] > 0
    assert abs(parts - it["time_us"]) < 1e-3
