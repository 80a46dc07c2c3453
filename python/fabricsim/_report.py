"""One self-contained HTML page about a run, and the command ``fabricsim report RUN_DIR``
(``python -m fabricsim report``) that writes it.

The page: invariant violations (first, in red, when there are any), headline figures, a
summary table (every figure with its unit; hovering a name shows its meaning from the output
schema, the last column names its ``summary.json`` key), the fabric, the slowest flows, the
plots (:mod:`fabricsim._plot`) and the resolved scenario as TOML (JSON if it has no TOML form).

Self-contained: inline CSS, plots as SVG images in ``data:`` URLs (text drawn as paths, so no
fonts are needed), no JavaScript, nothing fetched: the page can be mailed or archived alone.
"""

from __future__ import annotations

import base64
import html
import io
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from . import _cli, _native, _plot
from ._fmt import number, size

if TYPE_CHECKING:
    from ._result import Result

#: summary.json key -> (unit, meaning), from the output schema.
_SUMMARY_SCHEMA: Dict[str, Tuple[str, str]] = {k: (u, m) for k, u, m in _native.summary_schema()}

#: What each plot shows, under it.
_CAPTIONS = {
    "fct_cdf": "Cumulative distribution of flow completion times (solid), against the ideal FCTs of the same flows "
    "(dashed): each flow alone on an idle fabric, a lower bound.",
    "slowdown_by_size": "Median and 99th-percentile slowdown (FCT / ideal FCT; 1 is ideal) per flow-size bucket, "
    "nearest-rank percentiles over the bucket's finished flows.",
    "cct": "Collective completion time, mean over iterations with min–max whiskers; the red line is the ideal CCT "
    "(bus-bandwidth bytes at the host rate plus latency: a lower bound); × gives CCT / ideal.",
    "window": "Samples of the traced connections (run.trace_interval_us): congestion window, bytes in flight and "
    "pacing rate, whichever the controller has.",
    "queues": "Samples of the traced ports (run.trace_ports), the deepest queues first: data queue depth (each drawn "
    "interval of a long trace shows its lowest and highest sample), and the transmit rate averaged over each drawn "
    "interval (bytes sent in it / its length).",
}

_CSS = """
:root { --fg: #111827; --muted: #6b7280; --line: #e5e7eb; --bg: #f9fafb; --accent: #2563eb;
        --bad: #b91c1c; --bad-bg: #fef2f2; --good: #047857; --good-bg: #ecfdf5; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
       font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1060px; margin: 0 auto; padding: 28px 28px 48px; }
header h1 { font-size: 26px; margin: 0 0 4px; }
header p { margin: 0; color: var(--muted); }
h2 { font-size: 19px; margin: 36px 0 12px; padding-bottom: 6px; border-bottom: 2px solid var(--line); }
h3 { font-size: 15px; margin: 18px 0 8px; }
nav { margin: 14px 0 0; font-size: 14px; }
nav a { color: var(--accent); margin-right: 14px; text-decoration: none; }
.status { margin: 18px 0 0; padding: 12px 16px; border-radius: 8px; border: 1px solid; }
.status.bad { background: var(--bad-bg); border-color: #fca5a5; color: var(--bad); }
.status.bad h2 { color: var(--bad); border: 0; margin: 0 0 6px; padding: 0; }
.status.good { background: var(--good-bg); border-color: #a7f3d0; color: var(--good); }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(170px, 1fr)); gap: 12px; margin: 18px 0 0; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.card .label { color: var(--muted); font-size: 13px; }
.card .value { font-size: 22px; font-weight: 600; }
.card .note { color: var(--muted); font-size: 13px; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); font-size: 14px; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #f3f4f6; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.group td { background: #f3f4f6; font-weight: 600; }
td.key code { color: var(--muted); font-size: 12.5px; }
table.figures td:first-child { width: 30%; }
table.figures td.key { width: 26%; }
abbr { text-decoration: underline dotted var(--muted); cursor: help; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
pre { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; overflow: auto;
      font-size: 12.5px; line-height: 1.45; max-height: 640px; }
figure { margin: 0 0 24px; background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px; }
figure img { display: block; width: 100%; height: auto; }
figcaption { color: var(--muted); font-size: 13.5px; margin-top: 6px; }
.muted { color: var(--muted); }
footer { margin-top: 36px; color: var(--muted); font-size: 13px; }
"""


def _esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _get(summary: Dict[str, Any], key: str) -> Any:
    """The value at a dotted ``summary.json`` key, or None."""
    value: Any = summary
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _unit(key: str) -> str:
    """The unit of a summary key for printing: the schema's, without "stats"; no unit for
    counts, ids, text and bools."""
    unit = _SUMMARY_SCHEMA.get(key, ("", ""))[0].replace(" stats", "").replace("stats", "")
    return "" if unit in ("count", "id", "text", "bool", "ratio") else unit


def _with_unit(value: Any, unit: str) -> str:
    if unit == "bytes" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{number(value)} B" + (f" ({size(value)})" if value >= 1024 else "")
    text = number(value) if isinstance(value, (int, float)) or value in (None, "") else _esc(value)
    return f"{text} {unit}" if unit and text != "–" else text


def _stats(value: Dict[str, float], unit: str) -> str:
    parts = " · ".join(f"{q} {number(value[q])}" for q in ("p50", "p99", "max"))
    return f"{parts}{' ' + unit if unit else ''} <span class=muted>(mean {number(value['mean'])}, min {number(value['min'])})</span>"


class _Table:
    """The summary table: groups of rows (name with its meaning, value, summary.json key)."""

    def __init__(self, summary: Dict[str, Any]) -> None:
        self.summary = summary
        self.rows: List[str] = []

    def group(self, title: str) -> None:
        self.rows.append(f"<tr class=group><td colspan=3>{_esc(title)}</td></tr>")

    def row(self, label: str, key: str, value: Optional[str] = None, show_zero: bool = True) -> None:
        """A row for ``key``; ``value`` (HTML) instead of the key's own; skipped when the key is
        absent (or zero, unless ``show_zero``)."""
        raw = _get(self.summary, key)
        if raw is None and value is None:
            return
        if not show_zero and raw in (0, 0.0) and value is None:
            return
        if value is None:
            unit = _unit(key)
            value = _stats(raw, unit) if isinstance(raw, dict) and "p50" in raw else _with_unit(raw, unit)
        meaning = _SUMMARY_SCHEMA.get(key, ("", ""))[1]
        name = f"<abbr title='{_esc(meaning)}'>{_esc(label)}</abbr>" if meaning else _esc(label)
        self.rows.append(f"<tr><td>{name}</td><td>{value}</td><td class=key><code>{_esc(key)}</code></td></tr>")

    def html(self) -> str:
        head = "<tr><th>figure</th><th>value</th><th>summary.json key</th></tr>"
        return f"<table class=figures>{head}{''.join(self.rows)}</table>"


def _ratio(a: Optional[float], b: Optional[float]) -> str:
    return f"×{a / b:.3f}" if a and b else ""


def _summary_table(s: Dict[str, Any]) -> str:
    t = _Table(s)
    all_done = s.get("flows_finished") == s.get("flows")
    some_done = bool(s.get("flows_finished"))
    t.group("Flows")
    t.row("flows finished", "flows_finished", f"{number(s.get('flows_finished'))} of {number(s.get('flows'))}")
    if s.get("interrupted"):
        t.row("interrupted", "interrupted", f"yes, at simulated {s.get('interrupted_at_us') or 0:.3f} µs: every figure is of the partial run")
    if s.get("stopped_at_end_time"):
        t.row("stopped at end time", "stopped_at_end_time", "yes: the run stopped at <code>run.end_time_us</code> with flows unfinished")
    t.row("stalled since", "stalled_since_us")
    ideal = s.get("ideal_completion_time_us")
    completion = s.get("completion_time_us") if all_done else None
    t.row("completion time", "completion_time_us",
          f"{_with_unit(completion, 'µs')} <span class=muted>({_ratio(completion, ideal)} the ideal)</span>"
          if completion is not None else "– (not every flow finished)")
    t.row("ideal completion time (lower bound)", "ideal_completion_time_us")
    if s.get("stationary_window"):
        w = s["stationary_window"]
        end = "no end" if w.get("end_us") is None else f"{number(w['end_us'])} µs"
        t.row("stationary window", "stationary_window.start_us",
              f"starts {number(w['start_us'])} µs to {end}: {number(w['flows_finished'])} of {number(w['flows'])} flows finished")
    if some_done:
        t.row("FCT", "fct_us")
        t.row("slowdown (FCT / ideal FCT)", "slowdown")
        if s.get("fair_slowdown"):
            t.row("fair-share slowdown (FCT / fair-share ideal FCT)", "fair_slowdown")
    if s.get("collectives"):
        c = s["collectives"]
        t.group("Collectives")
        t.row("instances finished", "collectives.finished", f"{number(c['finished'])} of {number(c['instances'])} ({number(c['jobs'])} jobs)")
        if c.get("finished"):
            t.row("CCT", "collectives.cct_us")
            t.row("normalized CCT (CCT / ideal CCT)", "collectives.normalized_cct")
    t.group("Packets and loss")
    sent = _get(s, "packets.data_sent")
    t.row("data packets sent", "packets.data_sent")
    for label, key in (("retransmitted", "packets.retransmitted"), ("dropped (data)", "packets.dropped"),
                       ("trimmed", "packets.trimmed"), ("ECN-marked", "packets.ecn_marked")):
        n = _get(s, key)
        if n:
            t.row(label, key, f"{number(n)} packets <span class=muted>({100 * n / sent:.3g} % of sent)</span>" if sent else None)
    t.row("control packets dropped", "packets.control_dropped", show_zero=False)
    t.row("timeouts", "packets.timeouts", show_zero=False)
    t.row("data loss rate", "loss.data_loss_rate", show_zero=False)
    t.row("ACK round-trip time", "ack_rtt_us")
    t.group("Queues")
    t.row("deepest switch queue", "max_queue_bytes")
    t.row("buffer per port", "buffer_bytes",
          "– (PFC: each switch's shared buffer bounds its ports)" if s.get("buffer_bytes") is None and s.get("pfc") else None)
    if s.get("pfc"):
        t.group("PFC")
        for label, key in (("pause frames", "pfc.pause_frames"), ("ports paused", "pfc.ports_paused"),
                           ("paused time, all ports", "pfc.paused_time_us"), ("longest-paused port", "pfc.max_paused_port"),
                           ("its paused time", "pfc.max_port_paused_us"), ("deepest switch buffer", "pfc.max_switch_buffer_bytes"),
                           ("headroom overflow drops", "pfc.headroom_overflow_drops")):
            t.row(label, key, show_zero=key != "pfc.max_paused_port")
    t.group("Simulation")
    t.row("events", "events")
    t.row("wall time", "performance.wall_seconds")
    t.row("events per second", "performance.events_per_second", f"{number(_get(s, 'performance.events_per_second'), 0)} events/s")
    t.row("peak memory", "performance.peak_rss_bytes")
    return t.html()


def _cards(s: Dict[str, Any]) -> str:
    done, flows = s.get("flows_finished") or 0, s.get("flows") or 0
    share = f" ({100 * done / flows:.3g} %)" if flows else ""
    cards: List[Tuple[str, str, str]] = [("flows finished", number(done), f"of {number(flows)}{share}")]
    if s.get("flows_finished") == s.get("flows") and s.get("flows"):
        completion, ideal = s.get("completion_time_us"), s.get("ideal_completion_time_us")
        cards.append(("completion time", f"{number(completion, 1)} µs", f"{_ratio(completion, ideal)} the ideal (a lower bound)"))
    if s.get("flows_finished"):
        cards.append(("FCT p99", f"{number(s['fct_us']['p99'], 1)} µs", f"p50 {number(s['fct_us']['p50'], 1)} µs"))
        cards.append(("slowdown p99", f"{s['slowdown']['p99']:.2f}", f"p50 {s['slowdown']['p50']:.2f} (FCT / ideal FCT)"))
    c = s.get("collectives")
    if c and c.get("finished"):
        cards.append(("CCT p99", f"{number(c['cct_us']['p99'], 1)} µs", f"normalized p99 {c['normalized_cct']['p99']:.2f} (CCT / ideal)"))
    body = "".join(
        f"<div class=card><div class=label>{_esc(a)}</div><div class=value>{_esc(b)}</div><div class=note>{_esc(n)}</div></div>"
        for a, b, n in cards)
    return f"<div class=cards>{body}</div>"


def _records_table(rows: List[Dict[str, Any]], columns: Sequence[Tuple[str, str, str]]) -> str:
    """A table of ``rows`` with ``columns`` (key, header, unit)."""
    head = "".join(f"<th>{_esc(h)}{f' ({u})' if u else ''}</th>" for _, h, u in columns)
    def cell(v: Any) -> str:
        return number(v) if isinstance(v, (int, float)) or v in (None, "") else _esc(v)

    body = "".join("<tr>" + "".join(f"<td>{cell(r.get(k))}</td>" for k, _, _ in columns) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


#: The parts of a training step's critical path (summary.json ``training.iterations[].critical_path``).
_PATH_PARTS = (("compute_us", "compute"), ("tp_us", "TP"), ("pp_us", "PP"), ("dp_us", "DP"), ("ep_us", "EP"),
               ("other_us", "other"), ("wait_us", "wait"))


def _training(s: Dict[str, Any]) -> str:
    """A training step's iterations (time, ideals, critical path) and its bytes and collectives
    per group kind; nothing for other workloads."""
    t = s.get("training")
    if not t:
        return ""
    rows = []
    for it in t.get("iterations") or []:
        row = {k: it.get(k) for k in ("iteration", "time_us", "compute_ideal_us", "network_ideal_us", "slowdown")}
        path = it.get("critical_path") or {}
        row.update({k: path.get(k) for k, _ in _PATH_PARTS})
        rows.append(row)
    columns = [("iteration", "iteration", ""), ("time_us", "time", "µs"), ("compute_ideal_us", "compute ideal", "µs"),
               ("network_ideal_us", "network ideal", "µs"), ("slowdown", "time / network ideal", "")]
    columns += [(k, label, "µs") for k, label in _PATH_PARTS]
    intro = ("<p>Each iteration's time (from the previous one's end) against two lower bounds computed on the step's "
             "own graph: the compute ideal (an infinitely fast network: the compute critical path, pipeline bubbles "
             "included) and the network ideal (every collective at its ideal CCT, every pipeline message at its NIC "
             "rate). Then its critical path, walked back from the last GPU's end through the input that readied each "
             "task last: compute, each group kind's exposed communication, and waits; the parts add up to the "
             "time.</p>")
    groups = [("group", "group", ""), ("bytes", "bytes", "B"), ("collectives", "collectives", ""),
              ("cct_sum_us", "CCTs summed", "µs"), ("ideal_sum_us", "ideal CCTs summed", "µs")]
    return (intro + _records_table(rows, columns) + "<h3>Per group kind</h3>"
            + "<p>Payload bytes sent, collective instances, and their CCTs summed against their ideals.</p>"
            + _records_table(t.get("groups") or [], groups))


def _fabric(s: Dict[str, Any]) -> str:
    t = _Table(s)
    t.row("fabric", "fabric")
    t.row("hosts", "hosts")
    t.row("switches", "switches")
    t.row("base round-trip time (longest path, idle)", "base_rtt_us")
    t.row("bandwidth-delay product", "bdp_bytes")
    if s.get("failed_links"):
        links = s["failed_links"]
        t.row("failed links", "failed_links", _esc(", ".join(links) if isinstance(links, list) else links))
    parts = [t.html()]
    if s.get("queue_profiles"):
        parts.append("<h3>Queue profiles</h3>" + _records_table(s["queue_profiles"], [
            ("ports", "ports", ""), ("port_count", "count", ""), ("buffer_bytes", "buffer", "bytes"),
            ("ecn", "ECN", ""), ("kmin_bytes", "Kmin", "bytes"), ("kmax_bytes", "Kmax", "bytes"),
            ("pmax", "Pmax", ""), ("trimming", "trimming", "")]))
    if s.get("queues_by_tier"):
        parts.append("<h3>Queues by tier</h3>" + _records_table(s["queues_by_tier"], [
            ("class", "class", ""), ("ports", "ports", ""), ("max_bytes", "deepest", "bytes"),
            ("mean_bytes", "mean", "bytes"), ("drops", "drops", "packets"), ("trims", "trims", "packets")]))
    if s.get("rails"):
        columns = [
            ("rail", "rail", ""), ("gpus", "GPUs", ""), ("gpu_tx_bytes", "GPUs sent", "bytes"),
            ("gpu_tx_utilisation", "GPU links used", ""), ("uplink_tx_bytes", "up to the spines", "bytes"),
            ("uplink_tx_utilisation", "uplinks used", "")]
        # Servers with a scale-up domain: what the rail's GPUs sent through it.
        if "scale_up_tx_bytes" in s["rails"][0]:
            columns += [("scale_up_tx_bytes", "into the scale-up domain", "bytes"), ("scale_up_tx_utilisation", "scale-up links used", "")]
        parts.append("<h3>Rails</h3>" + _records_table(s["rails"], columns))
    return "".join(parts)


def _slowest_flows(result: "Result", n: int = 10) -> str:
    flows, which = _plot.counted_flows(result)
    if flows.empty:
        return ""
    worst = flows.sort_values(["slowdown", "flow"], ascending=[False, True], kind="stable").head(n)
    units = result.flows.attrs["units"]
    columns = [c for c in ("flow", "src", "dst", "bytes", "start_us", "fct_us", "ideal_fct_us", "slowdown", "retransmits", "trims", "drops") if c in worst]
    head = "".join(
        f"<th class=num><abbr title='{_esc(result.flows.attrs['meanings'][c])}'>{_esc(c)}</abbr>"
        + (f" ({_esc(units[c])})" if units[c] in ("µs", "bytes", "packets") else "") + "</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td class=num>{number(row[c])}</td>" for c in columns) + "</tr>"
                   for row in worst.to_dict("records"))
    return f"<p class=muted>The {len(worst)} highest slowdowns among the {which}.</p><table><tr>{head}</tr>{body}</table>"


def _plots(result: "Result") -> str:
    """The plots as figures with SVG images, or a note saying why there are none."""
    try:
        figs = _plot.figures(result)
    except ImportError as e:
        return f"<p class='status bad'>No plots: {_esc(e)}</p>"
    if not figs:
        return "<p class=muted>Nothing to plot: no finished flows, collectives or traces.</p>"
    parts = []
    for kind, fig in figs.items():
        buf = io.BytesIO()
        _plot.save(fig, buf, "svg")
        data = base64.b64encode(buf.getvalue()).decode("ascii")
        parts.append(f"<figure id='plot-{kind}'><img alt='{_esc(kind)}' src='data:image/svg+xml;base64,{data}'>"
                     f"<figcaption>{_esc(_CAPTIONS[kind])}</figcaption></figure>")
    return "".join(parts)


def _scenario(result: "Result") -> str:
    text = result.resolved_scenario
    if text is not None:
        form = "resolved_scenario.toml: every key with its value, defaults filled in; `fabricsim run` on the results folder reruns it"
    elif isinstance(result.summary.get("scenario"), dict):
        text, form = json.dumps(result.summary["scenario"], indent=2, ensure_ascii=False), "summary.json's scenario (JSON; this folder has no resolved_scenario.toml)"
    else:
        return "<p class=muted>The run holds no resolved scenario.</p>"
    return f"<p class=muted>{_esc(form)}.</p><pre id=scenario-text>{_esc(text)}</pre>"


def _selected(scenario: dict, *path: str) -> "str | None":
    """The scheme a resolved scenario selects at ``path`` (a name, or a table's name / kind)."""
    v = scenario
    for p in path:
        if not isinstance(v, dict) or p not in v:
            return None
        v = v[p]
    if isinstance(v, dict):
        v = v.get("name") or v.get("kind")
    return v if isinstance(v, str) else None


def _what_ran(s: dict) -> str:
    """What the run simulated, from its resolved scenario (not from its name, which overrides
    do not change): workload, congestion control, path selection, loss recovery, switch path
    selection."""
    sc = s.get("scenario") if isinstance(s.get("scenario"), dict) else {}
    parts = [
        ("workload", _selected(sc, "workload", "kind")),
        ("congestion control", _selected(sc, "transport", "cc")),
        ("path selection", _selected(sc, "transport", "lb")),
        ("loss recovery", _selected(sc, "transport", "reliability")),
        ("switches", _selected(sc, "switch", "lb") or ("ecmp" if sc else None)),
    ]
    return ", ".join(f"{label} {value}" for label, value in parts if value)


def html_page(result: "Result") -> str:
    """The report on ``result`` as HTML text (see the module comment)."""
    s = result.summary
    ran = _what_ran(s)
    # The title says what ran; the scenario's own name (which overrides leave as written) follows.
    name = ran or s.get("name") or "fabricsim run"
    violations = s.get("invariant_violations") or []
    if violations:
        items = "".join(f"<li>{_esc(v)}</li>" for v in violations)
        status = (f"<section class='status bad' id=violations><h2>{len(violations)} invariant violation"
                  f"{'s' if len(violations) > 1 else ''}: these results are not sound</h2><ul>{items}</ul></section>")
    else:
        status = "<p class='status good' id=violations>Every invariant held (bytes conserved, queues within their buffers, nothing finished below its ideal).</p>"
    plots = _plots(result)
    folder = f" · results <code>{_esc(result.out)}</code>" if result.out is not None else ""
    timeline = Path(result.out) / "timeline.json" if result.out is not None else None
    if timeline is not None and timeline.exists():
        # An absolute link, so that the page reads the same wherever it is written.
        folder += (f" · <a href='{_esc(timeline.resolve().as_uri())}'>timeline.json</a> "
                   "(open it in Perfetto, ui.perfetto.dev: flows per host, collectives per job, traced queues)")
    sections = [
        ("summary", "Summary", _cards(s) + "<h3>Figures</h3>" + _summary_table(s)),
        ("training", "Training step", _training(s)),
        ("fabric", "Fabric", _fabric(s)),
        ("plots", "Plots", plots),
        ("flows", "Slowest flows", _slowest_flows(result)),
        ("scenario", "Resolved scenario", _scenario(result)),
    ]
    sections = [x for x in sections if x[2]]
    nav = "".join(f"<a href='#{i}'>{_esc(t)}</a>" for i, t, _ in sections)
    body = "".join(f"<section id={i}><h2>{_esc(t)}</h2>{content}</section>" for i, t, content in sections)
    from . import __version__

    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width, initial-scale=1'>"
        f"<title>{_esc(name)} · fabricsim report</title><style>{_CSS}</style></head><body><main>"
        f"<header><h1>{_esc(name)}</h1><p>{_esc(s.get('fabric', ''))} · seed {_esc(s.get('seed'))}"
        f"{' · scenario “' + _esc(s.get('name')) + '”' if ran and s.get('name') else ''}{folder}</p>"
        f"<nav>{nav}</nav></header>{status}{body}"
        f"<footer>Written by fabricsim {_esc(__version__)}. Times in µs; an ideal is a lower bound (the same work on an idle "
        "fabric); percentiles are nearest-rank. Hover a figure's name for its exact meaning.</footer>"
        "</main></body></html>\n"
    )


def write(result: "Result", path: Path) -> Path:
    """Writes the report on ``result`` to ``path`` (its folder created if needed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html_page(result), encoding="utf-8")
    return path


def main(argv: Sequence[str]) -> int:
    """``fabricsim report RUN_DIR [--out FILE]``."""
    parser = _cli.parser("report", "Write one self-contained HTML page about a run: summary with units, fabric, plots "
                         "(needs matplotlib), invariant violations, the resolved scenario.",
                         "the HTML file (default RUN_DIR/report.html)")
    args = parser.parse_args(list(argv))
    result = _cli.load(args.run_dir)
    if result is None:
        return 2
    try:
        _plot._matplotlib()
    except ImportError as e:
        print(f"warning: the report has no plots: {e}", file=sys.stderr)
    print(write(result, args.out or args.run_dir / "report.html"))
    return 0
