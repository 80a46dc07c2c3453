"""Tutorial "A Python sweep, a plot and the HTML report".

Sweeps the flaky-link scenario over three host path selections and three seeds (nine runs, in
parallel), prints the mean and spread of each selection's p99 FCT, draws them as a bar chart,
and writes the HTML report of one run. Run it from the repository root:

    python3 docs/tutorials/sweep.py
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # draw to files, no window
import matplotlib.pyplot as plt

import fabricsim

scenario = Path(__file__).resolve().parent / "flaky_link.toml"

# One row per (path selection, seed): the swept keys, the seed and every figure of summary.json,
# flattened ("fct_us.p99", "packets.retransmitted", ...). Finished points are kept in
# out/tutorial-sweep/points/, so running the script again only runs what is missing.
table = fabricsim.sweep(
    {
        "scenario": str(scenario),
        "grid": {"transport.lb": ["ecmp", "spray", "reps"]},
        "seeds": [1, 2, 3],
    },
    jobs=2,
    out="out/tutorial-sweep",
    progress=False,
)
p99 = table.groupby("transport.lb")["fct_us.p99"].agg(["mean", "min", "max"])
print(p99.round(1))

# The mean p99 FCT per path selection, with the range over the seeds as error bars.
fig, ax = plt.subplots(figsize=(5, 3.5))
ax.bar(p99.index, p99["mean"], yerr=[p99["mean"] - p99["min"], p99["max"] - p99["mean"]], capsize=4)
ax.set_xlabel("transport.lb")
ax.set_ylabel("p99 FCT (µs), 3 seeds")
ax.set_title("1 MiB cross-pod permutation, flaky pod-core links")
fig.tight_layout()
fig.savefig("out/tutorial-sweep/p99_fct.png", dpi=120)

# One run with its frames in memory, its files in a folder, and one HTML page about it.
r = fabricsim.run(scenario, overrides={"transport.lb": "reps"}, out="out/tutorial-reps", progress=False)
print("reps, seed 1: p99 FCT", round(r.summary["fct_us"]["p99"], 1), "us;", int(r.flows["timeouts"].gt(0).sum()), "flows waited for a timeout")
r.report("out/tutorial-reps/report.html")
print("wrote out/tutorial-sweep/sweep.csv, out/tutorial-sweep/p99_fct.png and out/tutorial-reps/report.html")
