#!/usr/bin/env python3
"""One table across the five reproductions: writes experiments/README.md from the verdict tables
of each paper's RESULTS.md, with the counts per paper.

Usage: experiments/verdicts.py          write experiments/README.md
       experiments/verdicts.py --check  exit 1 if experiments/README.md differs from what the
                                        RESULTS.md files give, or if a RESULTS.md cites a
                                        source that is not there (python/tests runs this)

Sources: every verdict row that ran names where its figures come from: a results file (the
target's own id, e.g. "T9 (E9)", or a backticked id such as `T10md`, for which
results/<id>.json exists, or a `results/...` path) or a test (a tests/*.rs path, a backticked
test name). Every backticked result id and every results/ path a RESULTS.md cites must exist.

A verdict table is the first Markdown table of a RESULTS.md whose first header cell names the
target ("Target", "target" or "T") and whose last header cell is the verdict ("Verdict",
"holds?", ...). Each row's verdict is read from its words: "yes", "holds", "match" count as
*holds*; "partly", "partial", "mostly" as *partly*; "no", "miss" as *miss*; "not run" as *not run*.
A cell that gives different words for different parts of the claim ("TIMELY: yes. DCQCN: no")
counts as *partly*. The engine column is the commit a row names ("rerun at 4849192"), else the
commits its source rows record, else "-" (the RESULTS.md's own engine paragraph, which every
RESULTS.md must have, then says which engine its rows come from).
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PAPERS = [
    ("strack", "STrack (RoCEv2 vs STrack on 8K-host fabrics)", "experiments/strack/sweep.sh"),
    ("smartt-reps", "SMaRTT-REPS", "experiments/smartt-reps/run.py"),
    ("lb-ai-training", "Load Balancing for AI Training Workloads", "experiments/lb-ai-training/run.py --seeds 10"),
    ("seqbalance", "SeqBalance", "experiments/seqbalance/run.py"),
    ("mcc", "MCC", "experiments/mcc/run.py --seeds 3"),
]
CLASSES = ["holds", "partly", "miss", "not run"]
WORDS = {"yes": "holds", "holds": "holds", "match": "holds", "partly": "partly", "partial": "partly", "mostly": "partly",
         "no": "miss", "miss": "miss", "not run": "not run"}
# A class word where a verdict states one: at the start of the cell or of a part of it (after
# ": ", ". ", "; ", or inside bold), so that prose ("no drop") does not count.
VERDICT_WORD = re.compile(r"(?:^|[:.;]\s+|\*\*\s*|\(|\b[A-Z]\d+\s)(not run|yes|holds|match|partly|partial|mostly|no|miss)\b", re.IGNORECASE)
COMMIT = re.compile(r"\b(?:rerun at|rerun by [^,;]* on the engine of|at commit|commit)\s+([0-9a-f]{7,12})\b")


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def verdict_table(text):
    """(header, rows) of the first verdict table of a RESULTS.md, rows as lists of cells."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("|") or i + 1 >= len(lines) or not lines[i + 1].startswith("|---"):
            continue
        head = cells(line)
        if head[0].lower() in ("target", "t") and re.search(r"verdict|holds", head[-1], re.IGNORECASE):
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append(cells(row))
            return head, rows
    return None, []


def classify(verdict):
    plain = verdict.replace("**", " ** ").strip()
    found = [WORDS[m.group(1).lower()] for m in VERDICT_WORD.finditer(plain)]
    if not found:
        return "?"
    kinds = set(found)
    return found[0] if len(kinds) == 1 else "partly"


def collect():
    papers = []
    for folder, title, command in PAPERS:
        text = open(os.path.join(HERE, folder, "RESULTS.md"), encoding="utf-8").read()
        head, rows = verdict_table(text)
        if head is None:
            raise SystemExit(f"{folder}/RESULTS.md: no verdict table (a table whose first header is Target and last Verdict)")
        out = []
        for r in rows:
            claim = r[1] if len(r) >= 4 else ""
            ours = " ".join(r[1:-1])
            c = COMMIT.search(ours + " " + r[-1])
            out.append({"target": r[0], "claim": claim, "verdict": r[-1], "class": classify(r[-1]),
                        "engine": c.group(1)[:7] if c else rows_engine(folder, r)})
        missing = missing_sources(folder, text, rows)
        if not ENGINE_PARAGRAPH.search(text):
            missing.append(f"{folder}/RESULTS.md: no engine paragraph (\"**Engine**\" ... naming the commit its rows come from)")
        papers.append({"folder": folder, "title": title, "command": command, "rows": out, "wall": wall_hours(folder), "missing": missing})
    return papers


# A target or result id: T9, RT3f8, E15, S2, A4, C1, T10md, T6s1 (not RT-0: its parts are tests).
RESULT_ID = re.compile(r"^(?:RT|T|E|S|A|C)\d+[A-Za-z0-9]*$")
BACKTICKED = re.compile(r"`([^`\s]+)`")
RESULTS_PATH = re.compile(r"(?:([a-z0-9-]+)/)?results/([A-Za-z0-9_.-]+\.(?:json|md|png|csv))")
# A test: a path under tests/, a Rust file, or a backticked function name of three words or more.
TEST = re.compile(r"tests?/\S+\.rs|\b\w+\.rs\b|`[a-z0-9]+(?:_[a-z0-9]+){2,}`")


# A RESULTS.md's statement of the engine its rows come from: a bold "Engine" lead and a commit
# in the same paragraph.
ENGINE_PARAGRAPH = re.compile(r"\*\*Engine[^*]*\*\*(?:(?!\n\n).)*?\b[0-9a-f]{7,12}\b", re.S)


def row_ids(r):
    """The result ids verdict row `r` names: its target's own ("T9 (E9)": T9, E9) and the
    backticked ones anywhere in it."""
    own = [t for t in re.findall(r"[A-Z]+\d+[A-Za-z0-9]*", r[0]) if RESULT_ID.match(t)]
    return own + [t for t in BACKTICKED.findall(" | ".join(r)) if RESULT_ID.match(t)]


def results_rows(path):
    """The rows of one results file (a list, or a table with "rows"); none if unreadable."""
    try:
        data = json.load(open(path))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return []
    data = data.get("rows", []) if isinstance(data, dict) else data
    return [d for d in data if isinstance(d, dict)]


def rows_engine(folder, r):
    """The commit(s) the source rows of verdict row `r` record (results/<id>.json of its own and
    its cited ids), "-" when they record none."""
    commits = set()
    for rid in row_ids(r):
        rows = results_rows(os.path.join(HERE, folder, "results", f"{rid}.json"))
        commits |= {d["commit"][:7] for d in rows if d.get("commit")}
    return ", ".join(sorted(commits)) if commits else "-"


def missing_sources(folder, text, rows):
    """What a RESULTS.md cites that is not there, and its ran verdict rows that name no source."""
    results = os.path.join(HERE, folder, "results")
    have = lambda rid: os.path.exists(os.path.join(results, f"{rid}.json"))
    problems = []
    for m in RESULTS_PATH.finditer(text):
        where = m.group(1) if m.group(1) in {f for f, _, _ in PAPERS} | {"ns3-parity", "htsim-parity"} else folder
        if not os.path.exists(os.path.join(HERE, where, "results", m.group(2))):
            problems.append(f"{folder}/RESULTS.md cites {where}/results/{m.group(2)}, which does not exist")
    for tok in set(BACKTICKED.findall(text)):
        if RESULT_ID.match(tok) and not have(tok):
            problems.append(f"{folder}/RESULTS.md cites `{tok}`: no results/{tok}.json")
    for r in rows:
        if classify(r[-1]) == "not run":
            continue
        row = " | ".join(r)
        if not (any(have(t) for t in row_ids(r)) or RESULTS_PATH.search(row) or TEST.search(row)):
            problems.append(f"{folder}/RESULTS.md: row {r[0]!r} names no source (a results id with its results/<id>.json, a results/ path or a test)")
    return problems


def wall_hours(folder):
    """Sum of the recorded wall times of the rows in results/*.json, in hours (runs that shared
    the machine's two cores count in full)."""
    total, rows = 0.0, 0
    d = os.path.join(HERE, folder, "results")
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if not name.endswith(".json"):
            continue
        for r in results_rows(os.path.join(d, name)):
            if isinstance(r.get("wall_s"), (int, float)):
                total += r["wall_s"]
                rows += 1
    return total / 3600, rows


def short(s, n):
    s = s.replace("**", "").replace("|", "/")
    return s if len(s) <= n else s[: n - 1].rstrip() + "…"


def render(papers):
    out = ["# Reproductions: every target, one table", "",
           "Generated by `experiments/verdicts.py` from the verdict tables of each paper's",
           "`RESULTS.md` (`python/tests` checks that it is current). A verdict counts as *holds*",
           "only when every part of the paper's claim holds; *partly* names a part that does not in",
           "its RESULTS.md row; *miss* is a claim that does not reproduce; *not run* says why there.",
           "The parity experiments (`htsim-parity`, `ns3-parity`) compare simulators, not claims,",
           "and have their own case tables; the AI-fabrics study (`ai-fabrics`) compares fabrics and",
           "sets its figures beside the rail-only proposal's claims in its own RESULTS.md.", "",
           "| paper | targets | holds | partly | miss | not run | rerun everything | recorded wall time |",
           "|---|---|---|---|---|---|---|---|"]
    totals = {k: 0 for k in CLASSES}
    for p in papers:
        n = {k: sum(r["class"] == k for r in p["rows"]) for k in CLASSES}
        for k in CLASSES:
            totals[k] += n[k]
        hours, runs = p["wall"]
        wall = (f"{hours:.1f} h" if hours >= 1 else f"{hours * 60:.0f} min") + f" over {runs} runs" if runs else "-"
        out.append(f"| [{p['title']}]({p['folder']}/RESULTS.md) | {len(p['rows'])} | {n['holds']} | {n['partly']} | {n['miss']} | {n['not run']} | `{p['command']}` | {wall} |")
    out.append(f"| **all** | {sum(len(p['rows']) for p in papers)} | {totals['holds']} | {totals['partly']} | {totals['miss']} | {totals['not run']} | | |")
    out += ["", "Wall times are the sums of the `wall_s` each results row records (two runs shared a",
            "2-core machine, so the elapsed time is about half); rows from before that field count 0.",
            "The engine column names the commit a row says it was run at, else the commits its source",
            "rows record; \"-\": rows from before rows recorded one, see that RESULTS.md's engine paragraph.", ""]
    for p in papers:
        out += [f"## {p['title']}", "", "| target | claim | verdict | reading | engine |", "|---|---|---|---|---|"]
        for r in p["rows"]:
            out.append(f"| {short(r['target'], 40)} | {short(r['claim'], 110)} | {r['class']} | {short(r['verdict'], 140)} | {r['engine']} |")
        out.append("")
    return "\n".join(out)


def main():
    papers = collect()
    unread = [(p["folder"], r["target"]) for p in papers for r in p["rows"] if r["class"] == "?"]
    if unread:
        raise SystemExit(f"verdicts without a class word: {unread}")
    missing = [m for p in papers for m in p["missing"]]
    if missing:
        raise SystemExit("sources missing:\n" + "\n".join(missing))
    text = render(papers)
    path = os.path.join(HERE, "README.md")
    if "--check" in sys.argv[1:]:
        current = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        if current != text:
            print("experiments/README.md is out of date: run experiments/verdicts.py", file=sys.stderr)
            return 1
        return 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
