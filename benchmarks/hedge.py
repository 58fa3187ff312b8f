"""Benchmark of the hedged plan: L-shaped decomposition on Dask vs the extensive form.

Run from the repository root::

    python -m benchmarks.hedge [--samples 10,30,100] [--time-limit 600[,600,1800]]
        [--methods lshaped,extensive] [--out FILE.json] [--first-stage capacity|full]
        [--ws-start mean_value|chain] [--live-limit K]

``--time-limit`` is one value for every N or one per entry of ``--samples``.

For each number of scenarios N the scenarios are drawn by
:func:`optimizer.analysis.monte_carlo.sample_scenarios` (default dataset ``data``, base
``neutral``, seed 0: every default tornado parameter uniform in its range), and both
methods solve the same two-stage problem (``--first-stage``: ``capacity``, the default,
shares build, liquid and retrofit; ``full`` also shares installs and production, see
:data:`optimizer.plan.model.FIRST_STAGE_SETS`). Each method runs in a fresh subprocess, so
its peak memory is its own:

* ``extensive``: :func:`optimizer.analysis.hedge.extensive_form_objective` (build the
  extensive form, solve it with :mod:`optimizer.plan.highs`'s HiGHS options: dual simplex up
  to 50,000 columns, interior point + crossover above) under the HiGHS time limit;
  peak memory is the subprocess's ``ru_maxrss``.
* ``lshaped``: :func:`optimizer.analysis.decompose.hedge_decomposed` on a local Dask cluster of
  2 single-threaded workers (``tol`` relative gap, stopped at the time limit); it also
  computes WS, EEV, VSS and EVPI, which the extensive-form figure does not include.
  Peak memory is the client's ``ru_maxrss`` plus the sum of the workers'.

The 1-minute load average is recorded before and after every run (the machine is
shared). Results are printed as JSON lines and written to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any


def _load() -> float:
    return float(os.getloadavg()[0])


def _datasets(n: int, seed: int) -> tuple[list[str], list[Any]]:
    from capacity.dataset import load_dataset
    from optimizer.analysis.monte_carlo import sample_scenarios

    names, dsets, _ = sample_scenarios(load_dataset("data"), n, seed)
    return names, dsets


def worker(
    method: str,
    n: int,
    seed: int,
    time_limit_s: float,
    tol: float,
    first_stage: str = "capacity",
    scheduler: str | None = None,
    warm_start: str = "live",
    ws_start: str = "mean_value",
    live_limit: int | None = None,
) -> dict[str, Any]:
    """Run one method on N scenarios in this process; return its figures.

    ``ws_start`` sets where the wait-and-see solves start
    (:data:`optimizer.analysis.decompose_setup.WAIT_AND_SEE_STARTS`); ``live_limit``
    bounds the scenarios with their own HiGHS instance per worker (about 20 MB each at
    the default size; None: all of them).
    """
    from optimizer.analysis import decompose_setup
    from optimizer.analysis.decompose import hedge_decomposed
    from optimizer.analysis.hedge import extensive_form_objective
    from optimizer.plan.options import SolveOptions

    decompose_setup.wait_and_see_start = ws_start
    names, dsets = _datasets(n, seed)
    out: dict[str, Any] = {"method": method, "samples": n, "first_stage": first_stage}
    cpu0 = time.process_time()
    out.update(time_limit_s=time_limit_s, tol=tol, seed=seed)
    out["load_before"] = _load()
    t0 = time.perf_counter()
    p: Any = None
    if method == "extensive":
        obj, status, tm = extensive_form_objective(
            dsets, options=SolveOptions(time_limit_s=time_limit_s), first_stage=first_stage
        )
        out.update(objective_usd=obj, status=status, **{f"{k}_s": v for k, v in tm.items()})
        out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    else:
        from optimizer.analysis.decompose_cuts import HedgeTimeLimitError

        out.update(ws_start=ws_start, warm_start=warm_start, live_limit=live_limit)
        out["scheduler"] = "external" if scheduler else "local"

        try:
            p = hedge_decomposed(
                dsets,
                names=names,
                workers=2,
                scheduler=scheduler,
                warm_start=warm_start,
                live_limit=live_limit,
                tol=tol,
                time_limit_s=time_limit_s,
                max_iter=100_000,
                first_stage=first_stage,
            )
        except HedgeTimeLimitError as e:  # no plan: the first solves outlasted the limit
            out.update(status="time_limit_no_solution", converged=False, message=str(e))
    if p is not None:
        out.update(
            objective_usd=p.expected_cost_usd,
            lower_bound_usd=p.lower_bound_usd,
            gap_rel=p.gap_rel,
            converged=p.converged,
            iterations=len(p.iterations) - 1,
            wait_and_see_usd=p.wait_and_see_usd,
            eev_usd=p.eev_usd,
            vss_usd=p.vss_usd,
            evpi_usd=p.evpi_usd,
            timings_s=dict(p.timings_s),
            work=dict(p.work),
            peak_mb=p.peak_mb["client"] + p.peak_mb["workers"],
            peak_mb_parts=dict(p.peak_mb),
            **_round_figures(p.iterations, n),
        )
    out["wall_s"] = time.perf_counter() - t0
    out["client_cpu_s"] = time.process_time() - cpu0
    out["load_after"] = _load()
    return out


def comm_probe(workers: int = 2, scheduler: str | None = None) -> dict[str, Any]:
    """Round-trip time of a Dask call that brings back ``k`` cuts' worth of floats.

    A cut is 2 x 472 floats at the default size with the capacity first stage (its
    gradient and its point, 7.6 kB). Each size is fetched 5 times from a worker
    (``client.submit(numpy.zeros, (k, 944)).result()``); the median is kept. The
    slope over ``k`` is the per-cut transfer, the intercept the per-call latency.
    """
    import numpy as np

    from optimizer.analysis.dask_cluster import ClusterOptions, open_client

    out: dict[str, Any] = {"method": "comm_probe", "load_before": _load()}
    with open_client(ClusterOptions(workers=workers, scheduler=scheduler)) as client:
        client.submit(np.zeros, 1, pure=False).result()
        for k in (1, 50, 500, 5000):
            times = []
            for _ in range(5):
                t0 = time.perf_counter()
                client.submit(np.zeros, (k, 944), pure=False).result()
                times.append(time.perf_counter() - t0)
            out[f"roundtrip_s_{k}_cuts"] = float(np.median(times))
    out["per_cut_s"] = (out["roundtrip_s_5000_cuts"] - out["roundtrip_s_1_cuts"]) / 4999
    out["latency_s"] = out["roundtrip_s_1_cuts"]
    out["load_after"] = _load()
    return out


def _round_figures(it: Any, n: int) -> dict[str, float]:
    """Per-subproblem and communication figures of the iteration rounds (rows >= 1).

    ``solve_s_per_subproblem``: the rounds' solve CPU (worker side) per scenario solve;
    ``comm_s_per_round``: a round's wall time less its busiest worker's solve CPU
    (Dask round trip, serialisation of the cuts, waiting for a core on a loaded
    machine); ``master_s_per_round``: the master LP and the level projection.
    """
    r = it[it["iteration"] >= 1]
    if r.empty:
        return {}
    solves = float(len(r)) * n  # halvings add a few solves more
    return {
        "rounds": float(len(r)),
        "solve_cpu_s": float(r["solve_cpu_s"].sum()),
        "solve_s_per_subproblem": float(r["solve_cpu_s"].sum()) / max(solves, 1.0),
        "comm_s_per_round": float((r["subproblems_s"] - r["busiest_block_s"]).mean()),
        "master_s_per_round": float(r["master_s"].mean()),
        "subproblems_s_per_round": float(r["subproblems_s"].mean()),
        "simplex_iterations_per_subproblem": float(r["simplex_iterations"].sum())
        / max(solves, 1.0),
        "master_rows_last": float(r["master_rows"].iloc[-1]),
        "cuts_total": float(r["cuts"].iloc[-1]),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run every (N, method) in a subprocess; print and write the JSON lines."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", default="10,30,100")
    ap.add_argument("--methods", default="lshaped,extensive")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", default="600", help="s; one value, or one per N")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--first-stage", default="capacity", choices=["capacity", "full"])
    ap.add_argument("--out", default="benchmarks/hedge_results.jsonl")
    ap.add_argument("--worker", nargs=2, metavar=("METHOD", "N"))
    ap.add_argument("--scheduler", default=None, help="address of an external Dask scheduler")
    ap.add_argument("--warm-start", default="live", choices=["live", "basis", "cold"])
    ap.add_argument("--ws-start", default="mean_value", choices=["mean_value", "chain"])
    ap.add_argument(
        "--live-limit",
        type=int,
        default=None,
        help="most scenarios with their own HiGHS instance per worker (default: all)",
    )
    ap.add_argument("--comm", action="store_true", help="only the Dask round-trip probe")
    a = ap.parse_args(argv)
    if a.comm:
        print(json.dumps(comm_probe(scheduler=a.scheduler)), flush=True)
        os._exit(0)
    samples = [int(x) for x in a.samples.split(",")]
    limits = [float(x) for x in str(a.time_limit).split(",")]
    if len(limits) not in (1, len(samples)):
        ap.error(f"--time-limit: give one value or {len(samples)}, got {a.time_limit}")
    if a.worker:
        res = worker(
            a.worker[0],
            int(a.worker[1]),
            a.seed,
            limits[0],
            a.tol,
            a.first_stage,
            a.scheduler,
            a.warm_start,
            a.ws_start,
            a.live_limit,
        )
        print(json.dumps(res), flush=True)
        # the figures are out: skip interpreter teardown (a Dask run's exit handlers have
        # been seen to hang for minutes after the cluster was closed)
        os._exit(0)
    lines = []
    for k, n in enumerate(samples):
        limit = limits[k] if len(limits) > 1 else limits[0]
        for method in a.methods.split(","):
            cmd = [sys.executable, "-m", "benchmarks.hedge", "--worker", method, str(n)]
            cmd += ["--seed", str(a.seed), "--time-limit", str(limit), "--tol", str(a.tol)]
            cmd += ["--first-stage", a.first_stage, "--warm-start", a.warm_start]
            cmd += ["--ws-start", a.ws_start]
            if a.live_limit is not None:
                cmd += ["--live-limit", str(a.live_limit)]
            if a.scheduler:
                cmd += ["--scheduler", a.scheduler]
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=limit * 2 + 300)
                last = (p.stdout.strip().splitlines() or [""])[-1]
                rec = json.loads(last) if last.startswith("{") else {"error": p.stderr[-500:]}
            except subprocess.TimeoutExpired:
                rec = {"error": "timeout"}
            rec.setdefault("method", method)
            rec.setdefault("samples", n)
            print(json.dumps(rec), flush=True)
            lines.append(json.dumps(rec))
            with open(a.out, "a", encoding="utf-8") as f:
                f.write(lines[-1] + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
