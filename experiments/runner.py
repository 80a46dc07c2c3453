"""Shared driver of the paper reproductions (`experiments/<paper>/run.py`).

A target is a list of runs, each a run id and a scenario written out as TOML. `sweep` runs the
ones missing from `results/<target>.json` with a private copy of the release binary (so that
rebuilding during a long sweep cannot mix versions) and rewrites that file after every run, so
an interrupted sweep keeps what it did and a rerun only does what is missing. Each paper's
driver decides which summary fields make a results row.

Common options: `--jobs N` runs in parallel, `--only REGEX` keeps the run ids that match,
`--timeout-s S` stops a run after S seconds of wall time (recorded as an error row).
"""
import argparse
import concurrent.futures as cf
import fcntl
import json
import os
import re
import shutil
import subprocess
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def arguments(description, jobs=1):
    """The command-line options every driver shares; callers may add their own first."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("targets", nargs="*")
    ap.add_argument("--jobs", type=int, default=jobs)
    ap.add_argument("--quick", action="store_true", help="small fabrics and sizes, a smoke test")
    ap.add_argument("--only", default=None, help="run only the run ids matching this regular expression")
    ap.add_argument("--timeout-s", type=float, default=None, help="stop a run after this much wall time")
    return ap


def private_binary(out_dir):
    """Builds the release binary and copies it to `out_dir`; returns the copy's path."""
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"fabricsim-{os.getpid()}")
    shutil.copy2(os.path.join(ROOT, "target", "release", "fabricsim"), path)
    return path


def run_scenario(binary, run_dir, toml, timeout_s=None):
    """Runs one scenario into `run_dir`. Returns (summary dict or None, wall seconds, error text
    or None); a run that broke an invariant (exit code 1) still has its summary."""
    os.makedirs(run_dir, exist_ok=True)
    path = os.path.join(run_dir, "scenario.toml")
    with open(path, "w") as f:
        f.write(toml)
    t0 = time.time()
    try:
        p = subprocess.run([binary, "run", path, "--out", run_dir, "--quiet"], capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None, time.time() - t0, f"stopped after {timeout_s} s of wall time"
    wall = time.time() - t0
    if p.returncode not in (0, 1):
        return None, wall, p.stderr.strip()[-500:]
    with open(os.path.join(run_dir, "summary.json")) as f:
        return json.load(f), wall, None


def _merge_rows(res_path, done, order):
    """Writes `done` to `res_path` together with the good rows another sweep of the same target
    (with a disjoint `--only`) wrote meanwhile; a lock file keeps two writers from interleaving,
    and the rename means a reader never sees half a file."""
    with open(res_path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(res_path):
            with open(res_path) as f:
                for r in json.load(f):
                    if "error" not in r and (r["run"] not in done or "error" in done[r["run"]]):
                        done[r["run"]] = r
        rows = sorted(done.values(), key=lambda x: order.get(x["run"], len(order)))
        tmp = res_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(rows, f, indent=1)
        os.replace(tmp, res_path)


def sweep(name, runs, results_dir, run_one, jobs=1, only=None, describe=None):
    """Runs target `name`: `runs` is [(run id, payload)], `run_one(run id, payload)` returns a
    results row (a dict with "run" and "wall_s", or "error"). Rows already in
    `results_dir/<name>.json` without an error are kept and not rerun. Two sweeps of one target
    may run at once if their `--only` patterns pick different runs."""
    os.makedirs(results_dir, exist_ok=True)
    res_path = os.path.join(results_dir, f"{name}.json")
    done = {}
    if os.path.exists(res_path):
        with open(res_path) as f:
            done = {r["run"]: r for r in json.load(f) if "error" not in r}
    todo = [(rid, x) for rid, x in runs if rid not in done]
    if only:
        todo = [(rid, x) for rid, x in todo if re.search(only, rid)]
    print(f"{name}: {len(runs)} runs, {len(todo)} to do", flush=True)
    order = {rid: i for i, (rid, _) in enumerate(runs)}
    with cf.ThreadPoolExecutor(max_workers=jobs) as ex:
        futs = [ex.submit(run_one, rid, x) for rid, x in todo]
        for fu in cf.as_completed(futs):
            r = fu.result()
            done[r["run"]] = r
            what = r.get("error") or (describe(r) if describe else r.get("completion_us"))
            print(f"  {name}/{r['run']}: {what} ({round(r['wall_s'], 2)} s)", flush=True)
            _merge_rows(res_path, done, order)


def drive(args, targets, out_dir, results_dir, row, describe=None, prepare=None):
    """The body of a driver's `main`: builds the private binary, then sweeps each chosen target
    (`args.targets`, or all of `targets`: name -> [(run id, TOML)]). `row(summary, run id, wall, run dir)`
    makes a results row; `prepare(target, run id, run dir)` may write extra input files first.
    `--quick` results go to `out_dir/quick-results`, leaving the committed ones alone."""
    binary = private_binary(out_dir)
    results = results_dir if not args.quick else os.path.join(out_dir, "quick-results")
    for name in args.targets or list(targets):
        def run_one(rid, toml, name=name):
            d = os.path.join(out_dir, name, rid)
            if prepare:
                os.makedirs(d, exist_ok=True)
                prepare(name, rid, d)
            s, wall, err = run_scenario(binary, d, toml, args.timeout_s)
            return {"run": rid, "error": err, "wall_s": wall} if err else row(s, rid, wall, d)

        sweep(name, targets[name], results, run_one, args.jobs, args.only, describe)
    os.remove(binary)
