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
