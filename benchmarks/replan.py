"""Benchmark of rolling replanning: wall time and peak memory per replanning step.

Run from the repository root::

    python -m benchmarks.replan [--paths 20] [--every 1,2,4] [--workers 2] [--out FILE.json]
    python -m benchmarks.replan --tree examples/tree_2026_2027.yaml

With ``--tree`` it times instead the tree plan, the two-stage hedge on its leaves and
quarterly replanning along each leaf
(:func:`optimizer.analysis.tree_replan.compare_tree_replan`, one process) and prints
their times, the expected costs side by side and the peak memory.

For each ``--every`` (quarters between replans) it runs
:func:`optimizer.analysis.replan_run.rolling_replan` on the default dataset (scenario
``neutral``, seed 0, random-walk revisions of volatility 0.05) with the paths on a local
Dask cluster of ``--workers`` single-threaded processes, and prints one JSON line:
wall time, seconds per path (median of the paths' own times, which include the
perfect-foresight and realised solves), warm starts, paths whose realised plan exists,
the regret spread, the client's peak memory (``ru_maxrss``) and the largest peak memory
of a worker process (``process_peak_mb`` of the paths). The 1-minute load average
is recorded before and after (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from typing import Any


def _worker_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run(paths: int, every: int, workers: int) -> dict[str, Any]:
    """Run one replanning configuration; return its figures."""
    from capacity.dataset import load_dataset
    from capacity.scenarios import apply_scenario
    from optimizer.analysis import replan_run

    ds = apply_scenario(load_dataset("data"), "neutral")
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    res = replan_run.rolling_replan(ds, paths, seed=0, every=every, workers=workers)
    wall = time.perf_counter() - t0
    p = res.paths
    spread = res.spread.set_index("outcome")
    return {
        "paths": paths,
        "every": every,
        "workers": workers,
        "wall_s": round(wall, 1),
        "median_path_s": round(float(p["seconds"].median()), 1),
        "replans_per_path": int(res.settings["epochs"]),
        "warm_starts": int(p["warm_starts"].sum()),
        "paths_with_plan": int((p["status"] == "optimal").sum()),
        "paths_with_locks_given_way": int((p["locks_given_way"] > 0).sum()),
        "replans_given_way": int(p["replans_given_way"].sum()),
        "regret_p50_usd_bn": round(float(spread.loc["regret_usd", "p50"]) / 1e9, 2),
        "regret_p90_usd_bn": round(float(spread.loc["regret_usd", "p90"]) / 1e9, 2),
        "client_peak_mb": round(_worker_peak_mb(), 0),
        "worker_peak_mb": round(float(p["process_peak_mb"].max()), 0),
        "load_before": round(load0, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }


def run_tree(tree_file: str) -> dict[str, Any]:
    """Time the tree, the hedge and replanning on the tree's leaves; return the figures."""
    from capacity.dataset import load_dataset
    from capacity.scenarios import apply_scenario
    from optimizer.analysis.tree_replan import compare_tree_replan
    from optimizer.analysis.tree_spec import read_tree

    ds = apply_scenario(load_dataset("data"), "neutral")
    tree = read_tree(tree_file, ds.periods)
    load0 = os.getloadavg()[0]
    c = compare_tree_replan(ds, tree)
    costs = c.table.set_index("plan")["expected_cost_usd"]
    return {
        "tree": tree_file,
        "leaves": len(c.leaves),
        "tree_and_hedge_s": round(c.timings_s["tree"], 1),
        "replan_leaves_s": round(c.timings_s["replan"], 1),
        **{f"{k.replace(' ', '_')}_usd_bn": round(float(v) / 1e9, 3) for k, v in costs.items()},
        "locks_given_way": int(c.leaves["locks_given_way"].sum()),
        "peak_mb": round(_worker_peak_mb(), 0),
        "load_before": round(load0, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    """Parse the options, run each configuration, print and save JSON lines."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--paths", type=int, default=20)
    ap.add_argument("--every", default="1,2,4")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=None)
    ap.add_argument("--tree", default=None, help="time the tree against replanning instead")
    a = ap.parse_args()
    if a.tree:
        print(json.dumps(run_tree(a.tree)), flush=True)
        return
    rows = []
    for every in (int(x) for x in a.every.split(",")):
        row = run(a.paths, every, a.workers)
        print(json.dumps(row), flush=True)
        rows.append(row)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
