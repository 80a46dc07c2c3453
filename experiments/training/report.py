#!/usr/bin/env python3
"""The training experiment's row tables from results/results.json, one per model and rank order,
in the driver's order: step, compute and network ideals, exposed communication per group (the
iteration's critical path), the gradient collectives' CCTs over their ideals (summed), pause
frames, retransmissions, CPU, peak RSS and the row's commit. Writes results/table.md and prints
it; RESULTS.md quotes these tables.

    experiments/training/report.py
"""

import importlib.util
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("training_run", HERE / "run.py")
training_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(training_run)

SECTIONS = [
    ("gpt3-", "tpppdp", "GPT-3-like, Megatron-LM's default order (DP rings under one leaf on both fabrics)"),
    ("gpt3-tpppdp-", "", "GPT-3-like, Megatron-Core's tp-pp-dp order (DP rings across the spines)"),
    ("llama70-", "tpppdp", "Llama-2-70B-like, Megatron-LM's default order"),
    ("mixtral-tpppdp-", "", "Mixtral-like mixture of experts (ep 8), tp-pp-dp order"),
]


def ms(us: float) -> str:
    return f"{us / 1e3:.1f}"


def count(n: int) -> str:
    """`n` with thin groups of three digits, as the tables print counts (133 933)."""
    return f"{n:,}".replace(",", " ")


def line(r: dict) -> str:
    cp = r["critical_path"]
    exposed = [cp["tp_us"], cp["pp_us"], cp["dp_us"]] + ([cp["ep_us"]] if r["id"].startswith("mixtral") else [])
    dp = next(g for g in r["groups"] if g["group"] == "dp")
    ratio = dp["cct_sum_us"] / dp["ideal_sum_us"]
    pfc = r.get("pfc")
    pause = count(pfc["pause_frames"]) if pfc else "(no PFC)"
    return (f"| `{r['id']}` | {ms(r['time_us'])} | {ms(r['compute_ideal_us'])} | {ms(r['network_ideal_us'])} | "
            f"{' / '.join(ms(x) for x in exposed)} | {ratio:.3f} | {pause} | {count(r['retransmitted'])} | "
            f"{r['cpu_s']:.0f} | {r['peak_rss_mb']:.0f} | {r['commit'][:7]} |")


def tables(rows: list) -> str:
    by_id = {r["id"]: r for r in rows}
    order = [case_id for case_id, _ in training_run.cases()]
    out = []
    for prefix, exclude, title in SECTIONS:
        got = [by_id[i] for i in order if i in by_id and i.startswith(prefix) and not (exclude and exclude in i)]
        if not got:
            continue
        ep = " / EP" if prefix.startswith("mixtral") else ""
        out += [f"{title}:", "", f"| row | step (ms) | compute ideal (ms) | network ideal (ms) | exposed TP / PP / DP{ep} (ms) | DP CCT / ideal | pause frames | retransmitted | CPU (s) | peak RSS (MB) | commit |",
                "|---|---|---|---|---|---|---|---|---|---|---|"] + [line(r) for r in got] + [""]
    return "\n".join(out)


def main():
    text = tables(json.loads((HERE / "results" / "results.json").read_text()))
    (HERE / "results" / "table.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
