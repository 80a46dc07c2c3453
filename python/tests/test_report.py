"""The HTML report (Result.report, ``fabricsim report``): its content, the resolved scenario as
TOML that reruns to the same run, and the page in a real headless browser (Debian's chromium):
it loads without console errors, fetches nothing, and shows every plot."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import browser
import fabricsim
from test_run import COLLECTIVES

#: Set by scripts/test_python.sh where it can install chromium: then a missing browser fails
#: the browser test instead of skipping it.
REQUIRE_BROWSER = os.environ.get("FABRICSIM_REQUIRE_BROWSER") == "1"
#: Where the browser test leaves its screenshot (default: the test's temporary folder).
SCREENSHOT = os.environ.get("FABRICSIM_REPORT_SCREENSHOT")


def test_resolved_scenario_reruns_the_same_run_from_memory_and_from_a_folder(tmp_path):
    r = fabricsim.run(COLLECTIVES, progress=False)
    text = r.resolved_scenario
    assert '[[workload.jobs]]' in text and "null" not in text
    again = fabricsim.run(text, progress=False)
    assert again.summary["scenario"] == r.summary["scenario"]
    pd.testing.assert_frame_equal(again.ccts, r.ccts)
    saved = r.save(tmp_path / "run")
    assert fabricsim.load(saved).resolved_scenario == text
    assert (saved / "resolved_scenario.toml").read_text(encoding="utf-8") == text


def report_of(run_dir: Path, tmp_path: Path, *args: str) -> Path:
    done = subprocess.run([sys.executable, "-m", "fabricsim", "report", str(run_dir), *args],
                          capture_output=True, text=True, check=True)
    return Path(done.stdout.strip())


def test_report_command_writes_one_self_contained_page(traced_dir, tmp_path):
    pytest.importorskip("matplotlib")
    path = report_of(traced_dir, tmp_path)
    assert path == traced_dir / "report.html"
    page = path.read_text(encoding="utf-8")
    # Self-contained: no script, and nothing referenced by URL but data: images and anchors.
    assert "<script" not in page and "http://" not in page.replace("http://www.w3.org", "")
    assert page.count("src='data:image/svg+xml;base64,") == 4
    s = json.loads((traced_dir / "summary.json").read_text())
    for needed in (s["name"], s["fabric"], "Every invariant held", "fct_us", "µs", "[topology]", "Slowest flows"):
        assert needed in page, needed
    other = report_of(traced_dir, tmp_path, "--out", str(tmp_path / "elsewhere" / "r.html"))
    assert other == tmp_path / "elsewhere" / "r.html" and other.read_text(encoding="utf-8") == page


def test_violations_come_first_and_red(traced_dir, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(traced_dir, broken)
    summary = json.loads((broken / "summary.json").read_text())
    summary["invariant_violations"] = ["flow 3 finished below its ideal <FCT>"]
    (broken / "summary.json").write_text(json.dumps(summary))
    page = fabricsim.load(broken).report(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "class='status bad' id=violations><h2>1 invariant violation" in page
    assert "flow 3 finished below its ideal &lt;FCT&gt;" in page
    assert page.index("id=violations") < page.index("id=summary")


def test_report_of_a_stopped_pfc_run(tmp_path):
    """Unfinished flows, PFC and several queue profiles: no completion time, no FCT plots, the
    PFC rows, and nulls shown as dashes, never as Python's None."""
    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "seqbalance" / "websearch_3tier.toml"
    r = fabricsim.run(scenario, overrides={"run.end_time_us": 5}, progress=False)
    assert r.summary["flows_finished"] < r.summary["flows"]
    page = r.report(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "– (not every flow finished)" in page and "pfc.pause_frames" in page
    assert "each switch's shared buffer bounds its ports" in page and "<h3>Queue profiles</h3>" in page
    assert "None" not in page and "id='plot-fct_cdf'" not in page


def test_report_without_matplotlib_still_has_the_figures(traced_dir, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    page = fabricsim.load(traced_dir).report(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "pip install matplotlib" in page and "<img" not in page and "fct_us" in page
    with pytest.raises(ValueError, match="give a path"):
        fabricsim.run(COLLECTIVES, progress=False).report()


def test_report_in_a_headless_browser(traced_dir, tmp_path):
    pytest.importorskip("matplotlib")
    executable = browser.find()
    if executable is None:
        if REQUIRE_BROWSER:
            pytest.fail("no chromium, though scripts/test_python.sh should have installed it")
        pytest.skip("no chromium (apt-get install chromium)")
    page = fabricsim.load(traced_dir).report(tmp_path / "report.html")
    with browser.Browser(executable) as b:
        b.open(page.resolve().as_uri())
        images = b.evaluate("""Promise.all(Array.from(document.images).map(i => i.decode().then(() => {
            const r = i.getBoundingClientRect();
            return {alt: i.alt, natural: [i.naturalWidth, i.naturalHeight], shown: [r.width, r.height]};
        })))""")
        headings = b.evaluate("Array.from(document.querySelectorAll('h2')).map(h => h.textContent)")
        b.screenshot(Path(SCREENSHOT) if SCREENSHOT else tmp_path / "report.png")
        errors, urls = b.errors(), b.requested_urls()
    assert errors == []
    # Nothing fetched: the page itself, then its inline images.
    assert urls[0] == page.resolve().as_uri() and all(u.startswith("data:image/svg+xml") for u in urls[1:])
    assert [i["alt"] for i in images] == ["fct_cdf", "slowdown_by_size", "window", "queues"]
    for i in images:
        assert min(i["natural"]) > 100 and i["shown"][0] > 600 and i["shown"][1] > 200, i
    assert headings == ["Summary", "Fabric", "Plots", "Slowest flows", "Resolved scenario"]


def test_the_browser_check_sees_errors(tmp_path):
    """The browser test above is not vacuous: an exception, a console error and a failed load
    are all caught."""
    executable = browser.find()
    if executable is None:
        pytest.skip("no chromium")
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><img src='missing.png'><script>console.error('boom'); nosuchfunction();</script>")
    with browser.Browser(executable) as b:
        b.open(bad.resolve().as_uri())
        errors = b.errors()
    assert any("boom" in e for e in errors) and any("nosuchfunction" in e for e in errors)
    assert any("missing.png" in e or "ERR_FILE_NOT_FOUND" in e for e in errors), errors


def test_the_title_says_what_ran_not_what_the_scenario_was_named(example):
    # The example is named "... spray, fixed window"; overrides make it an ECMP run with
    # TCP-like recovery: the report's title says so, and the name still shows, as a name.
    from fabricsim._report import html_page
    from test_run import SMALL

    r = fabricsim.run(example, overrides={**SMALL, "transport.lb": "ecmp", "transport.reliability": "tcp"}, progress=False)
    page = html_page(r)
    h1 = page.split("<h1>", 1)[1].split("</h1>", 1)[0]
    assert "path selection ecmp" in h1 and "loss recovery tcp" in h1 and "congestion control fixed" in h1, h1
    assert "spray" not in h1
    assert "scenario “example: 128-host permutation, spray, fixed window”" in page


def test_a_run_with_a_timeline_links_it_for_perfetto(example, tmp_path):
    from fabricsim._report import html_page
    from test_run import SMALL

    out = tmp_path / "run"
    r = fabricsim.run(example, overrides={**SMALL, "run.timeline": True}, progress=False, out=out)
    events = json.loads((out / "timeline.json").read_text())["traceEvents"]
    assert sum(e["ph"] == "b" and e["cat"] == "flow" for e in events) == len(r.flows)
    page = html_page(r)
    assert f"href='{(out / 'timeline.json').resolve().as_uri()}'" in page and "Perfetto" in page
    # Without one, no link.
    assert "timeline.json" not in html_page(fabricsim.run(example, overrides=SMALL, progress=False, out=tmp_path / "plain"))


def test_report_of_a_rail_optimized_run_names_its_rails(tmp_path):
    """A fabric of servers: the report's fabric section has the per-rail table of summary.json's
    `rails`, every rail with the bytes its GPUs sent (a permutation touches every rail)."""
    scenario = """
    [topology]
    kind = "rail_optimized"
    servers = 4
    servers_per_su = 2
    [topology.server]
    gpus = 2
    [workload]
    kind = "permutation"
    flow_bytes = "256KiB"
    """
    r = fabricsim.run(scenario, progress=False)
    rails = r.summary["rails"]
    assert [x["rail"] for x in rails] == [0, 1] and all(x["gpus"] == 4 and x["gpu_tx_bytes"] > 0 for x in rails)
    page = r.report(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<h3>Rails</h3>" in page and "up to the spines" in page


def test_report_of_servers_with_a_scale_up_domain_shows_its_use(tmp_path):
    """With `[topology.server] scale_up_gbps`, an AllReduce inside one server goes through its
    scale-up switch: summary.json's rails carry `scale_up_tx_bytes`, the GPUs' NICs send nothing,
    and the report's Rails table gains the scale-up columns."""
    scenario = """
    [topology]
    kind = "rail_optimized"
    servers = 2
    servers_per_su = 2
    [topology.server]
    gpus = 4
    scale_up_gbps = 3600
    [workload]
    kind = "collectives"
    [[workload.jobs]]
    ranks = 4
    collectives = [{ op = "allreduce", algorithm = "ring", bytes = "1MiB" }]
    """
    r = fabricsim.run(scenario, progress=False)
    rails = r.summary["rails"]
    assert all(x["gpu_tx_bytes"] == 0 and x["scale_up_tx_bytes"] > 0 for x in rails)
    page = r.report(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "into the scale-up domain" in page and "scale-up links used" in page


#: A small training step (the registry's example shape) on the 16-host fat tree.
TRAINING = """
seed = 1
[topology]
k = 4
[workload]
kind = "training"
model = { layers = 4, hidden = 256, heads = 8, seq = 128, vocab = 1024, global_batch = 8 }
parallelism = { tp = 2, pp = 2, dp = 2 }
"""


def test_report_of_a_training_step_shows_its_iterations_and_groups(tmp_path):
    from fabricsim._fmt import number

    r = fabricsim.run(TRAINING, progress=False)
    page = r.report(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<section id=training><h2>Training step</h2>" in page
    it = r.summary["training"]["iterations"][0]
    path = it["critical_path"]
    for figure in (it["time_us"], it["compute_ideal_us"], it["network_ideal_us"], path["compute_us"], path["tp_us"]):
        assert f"<td>{number(figure)}</td>" in page, figure
    for g in r.summary["training"]["groups"]:
        assert f"<td>{g['group']}</td><td>{number(g['bytes'])}</td>" in page
    # A run without a step has no such section.
    other = fabricsim.run(COLLECTIVES, progress=False).report(tmp_path / "c.html").read_text(encoding="utf-8")
    assert "id=training" not in other
