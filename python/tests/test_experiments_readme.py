"""experiments/README.md is generated from the verdict tables of the five RESULTS.md files
(`experiments/verdicts.py`): it must be current, and every verdict must read as a class."""
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_experiments_readme_is_generated_from_the_results():
    r = subprocess.run([sys.executable, os.path.join(REPO, "experiments", "verdicts.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_verdict_reads_as_the_class_its_words_give():
    sys.path.insert(0, os.path.join(REPO, "experiments"))
    try:
        import verdicts
    finally:
        sys.path.pop(0)
    assert verdicts.classify("yes") == "holds"
    assert verdicts.classify("**yes**. A plain cap does as well") == "holds"
    assert verdicts.classify("partly: the gap is 10×, not 6×") == "partly"
    assert verdicts.classify("TIMELY and ideal: **yes**. DCQCN: **no** (4 %)") == "partly"
    assert verdicts.classify("no at the spec's RTO") == "miss"
    assert verdicts.classify("miss (subflow TCP beats TCP)") == "miss"
    assert verdicts.classify("not run (mechanism unit-tested only)") == "not run"
    # Prose after a verdict does not count: "no drop" is not a "no".
    assert verdicts.classify("yes (the mechanism, with no drop)") == "holds"
    assert verdicts.classify("it went well") == "?"


def test_a_results_md_that_cites_what_is_not_there_is_caught(tmp_path, monkeypatch):
    sys.path.insert(0, os.path.join(REPO, "experiments"))
    try:
        import verdicts
    finally:
        sys.path.pop(0)
    (tmp_path / "p" / "results").mkdir(parents=True)
    (tmp_path / "p" / "results" / "T1.json").write_text("[]")
    monkeypatch.setattr(verdicts, "HERE", str(tmp_path))
    head, rows = ["target", "claim", "ours", "verdict"], [
        ["T1", "a", "b", "yes"],                                   # its own results file
        ["T2", "a", "from `T1`'s runs", "partly: x"],              # a cited one
        ["T3", "a", "a scenario test (tests/t3.rs)", "yes"],       # a test
        ["T4", "a", "nothing", "no"],                              # no source: caught
        ["T5", "a", "-", "not run (the session ended)"],                     # not run: needs none
    ]
    text = "see `T9` and results/T1.md"
    problems = verdicts.missing_sources("p", text, rows)
    assert any("row 'T4' names no source" in p for p in problems), problems
    assert any("`T9`" in p for p in problems) and any("results/T1.md" in p for p in problems), problems
    assert len(problems) == 3, problems


def test_the_training_results_quote_the_rows_as_report_py_writes_them():
    """experiments/training/RESULTS.md's row tables are `report.py`'s, from results.json: a row
    added or rerun without regenerating them fails here."""
    import importlib.util
    import json
    here = os.path.join(REPO, "experiments", "training")
    spec = importlib.util.spec_from_file_location("training_report", os.path.join(here, "report.py"))
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    with open(os.path.join(here, "results", "results.json")) as f:
        tables = report.tables(json.load(f))
    with open(os.path.join(here, "RESULTS.md")) as f:
        text = f.read()
    assert tables.strip() and tables.strip() in text
