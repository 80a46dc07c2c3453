"""The book's Python tutorial (docs/src/tutorials/python-sweep.md) runs as written: its script
and its `fabricsim plot` / `report` commands, from a folder holding a copy of docs/tutorials/
(the paths a reader at the repository root types). The page must include the script it runs.
The other tutorials' commands are run by crates/fabricsim-cli/tests/tutorials.rs, which leaves
the Python-package commands of every page to this file."""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
TUTORIALS = REPO / "docs" / "src" / "tutorials"
PYTHON_COMMANDS = ("sweep", "plot", "report")


def sh_commands(page: str):
    """The command lines of a page's ```sh blocks, in order."""
    out, in_sh = [], False
    for line in page.splitlines():
        t = line.strip()
        if t.startswith("```"):
            in_sh = not in_sh and t[3:].strip() == "sh"
            continue
        if in_sh and t and not t.startswith("#"):
            out.append(t)
    return out


def python_lines(page: str):
    """The lines this file runs: `python3 ...` and the Python package's `fabricsim` commands."""
    lines = []
    for line in sh_commands(page):
        words = shlex.split(line, comments=True)
        if words[0] == "python3" or (words[0] == "fabricsim" and words[1] in PYTHON_COMMANDS):
            lines.append(words)
    return lines


def test_the_python_tutorial_runs_as_written(tmp_path):
    pytest.importorskip("matplotlib")
    page_path = TUTORIALS / "python-sweep.md"
    page = page_path.read_text()
    assert "{{#include ../../tutorials/sweep.py}}" in page, "the page shows the script it runs"
    lines = python_lines(page)
    assert lines[0] == ["python3", "docs/tutorials/sweep.py"], lines
    shutil.copytree(REPO / "docs" / "tutorials", tmp_path / "docs" / "tutorials")
    binary = Path(os.environ.get("FABRICSIM_BIN", REPO / "target" / "release" / "fabricsim"))
    env = dict(os.environ, FABRICSIM_PYTHON=sys.executable)
    for words in lines:
        if words[0] == "python3":
            cmd = [sys.executable, *words[1:]]
        else:
            if not binary.exists():
                pytest.skip(f"{binary} is not built (scripts/test_python.sh builds it)")
            cmd = [str(binary), *words[1:]]
        p = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, f"{' '.join(words)}\n{p.stdout}\n{p.stderr}"
    table = pd.read_csv(tmp_path / "out" / "tutorial-sweep" / "sweep.csv")
    assert len(table) == 9 and sorted(set(table["transport.lb"])) == ["ecmp", "reps", "spray"]
    assert sorted(set(table["seed"])) == [1, 2, 3]
    assert (tmp_path / "out" / "tutorial-sweep" / "p99_fct.png").stat().st_size > 0
    report = (tmp_path / "out" / "tutorial-reps" / "report.html").read_text()
    assert "data:image/svg+xml;base64," in report  # the plots, inline
    assert any((tmp_path / "out" / "tutorial-reps" / "plots").glob("*.png"))


def test_every_python_command_of_the_tutorials_is_run_here():
    """The Rust test skips these lines; only the Python page may hold them."""
    for page_path in sorted(TUTORIALS.glob("*.md")):
        if page_path.name != "python-sweep.md":
            assert python_lines(page_path.read_text()) == [], f"{page_path.name}: Python commands are run only for python-sweep.md"
