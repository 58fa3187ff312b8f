"""Benchmark of model reuse in a batch: the per-stage split of a reused case.

Run from the repository root::

    python -m benchmarks.reuse [--n 20] [--size default] [--out FILE.json]

The sweep is :func:`benchmarks.run.sweep_overrides` (demand, supply capacity and energy
prices scaled; every case patchable) on :func:`benchmarks.generate.generate` at
``--size``. Three passes, each after one untimed warm-up case:

* ``rebuild``: :func:`optimizer.analysis.batch_case.solve_many` with ``reuse=False``
  (build, hand-over and cold solve per case);
* ``reuse``: the same with ``reuse=True`` (patched model, retained HiGHS session, warm
  dual simplex), then each case's tables written as ``capacity batch`` writes them
  (:func:`optimizer.output.report.write_scenario_folder`, stage ``report``);
* ``warm alone``: :func:`benchmarks.run._warm_start_floor` (patch + push + ``Highs.run``
  on one retained ``Highs`` object from the base's optimal basis, as the batch starts
  every case; no tables, no checker), and the same chained from the previous case's
  basis (what the batch's order-free plans cost).

Per stage it prints the mean wall seconds of ``PlanResult.timings_s`` (``build`` is the
patch for a reused case, ``handover`` the push of changed data, ``solve`` the HiGHS run,
``results`` the result tables, ``check`` the independent checker) and ``other``, the rest
of the case's wall time (applying the overrides to the dataset, the message, the
collector). The machine is shared, so the reuse pass is repeated with the stage clocks
reading the process's CPU time (``time.process_time``: the seconds this process
computed, which a busy machine does not stretch); both splits are printed with the
1-minute load average before and after each pass. Speed-ups are rebuild / reuse per
case, on wall and on CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

#: Modules whose stage clocks (``time.perf_counter``) the CPU pass reads from the CPU.
_TIMED_MODULES = (
    "optimizer.analysis.batch_case",
    "optimizer.plan.pipeline",
    "optimizer.plan.plan_result",
    "optimizer.plan.highs_session",
)


@contextmanager
def cpu_clocks() -> Iterator[None]:
    """Make the pipeline's stage timings read ``time.process_time`` while inside."""
    import importlib

    mods = [importlib.import_module(m) for m in _TIMED_MODULES]
    shim = types.SimpleNamespace(**{k: getattr(time, k) for k in dir(time) if not k[0] == "_"})
    shim.perf_counter = time.process_time
    saved = [m.time for m in mods]
    for m in mods:
        m.time = shim
    try:
        yield
    finally:
        for m, t in zip(mods, saved, strict=True):
            m.time = t


def _stages(results: list[Any], per_case_s: float) -> dict[str, float]:
    """Mean seconds per stage of ``timings_s`` plus ``other`` (per case, the rest)."""
    keys = sorted({k for r in results for k in r.timings_s if k != "warm_start"})
    out = {k: float(np.mean([r.timings_s.get(k, 0.0) for r in results])) for k in keys}
    out["other"] = per_case_s - sum(out.values())
    return out


def _report_s(results: list[Any], clock: Any) -> float:
    """Mean seconds to write each result's tables as a batch case's folder."""
    from optimizer.output.report import file_metadata, write_scenario_folder

    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, r in enumerate(results):
            t = clock()
            meta = file_metadata(r, scenario=f"case{i}", run_id="bench")
            write_scenario_folder(r, Path(tmp) / f"scenario=case{i}", meta)
            times.append(clock() - t)
    return float(np.mean(times))


def _pass(base: Any, items: list[Any], reuse: bool, cpu: bool) -> dict[str, Any]:
    """One timed sweep: per-case seconds, per-stage split, the results and the load."""
    from optimizer import SolveOptions
    from optimizer.analysis.batch_case import solve_many

    opts = SolveOptions(solver="highs")
    clock = time.process_time if cpu else time.perf_counter
    load0 = os.getloadavg()[0]
    if cpu:
        with cpu_clocks():
            t = clock()
            res = solve_many(base, items, opts, reuse=reuse)
            per_case = (clock() - t) / len(items)
    else:
        t = clock()
        res = solve_many(base, items, opts, reuse=reuse)
        per_case = (clock() - t) / len(items)
    stages = _stages(res, per_case)
    if reuse:
        stages["report"] = _report_s(res, clock)
    return {
        "per_case_s": per_case,
        "stages": stages,
        "results": res,
        "load_before": round(load0, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }


def run(size: str = "default", n: int = 20) -> dict[str, Any]:
    """Run the three passes; return the figures (JSON-ready).

    Parameters
    ----------
    size : str
        A name of :data:`benchmarks.generate.SIZES`.
    n : int
        Cases in the sweep.

    Returns
    -------
    dict
        ``rebuild``, ``reuse`` and ``reuse_cpu`` passes (``per_case_s``, ``stages``,
        loads), ``warm_s`` (warm solve alone, wall s per case), the
        worst relative objective difference rebuild vs reuse, and the speed-ups.
    """
    from benchmarks.generate import generate
    from benchmarks.run import _warm_start_floor, sweep_overrides
    from optimizer import SolveOptions
    from optimizer.analysis.batch_case import solve_many

    base = generate(size)
    items = sweep_overrides(n)
    solve_many(base, items[:1], SolveOptions(solver="highs"), reuse=True)  # cache the base
    out: dict[str, Any] = {"size": size, "n": n}
    passes = {
        "rebuild": _pass(base, items, reuse=False, cpu=False),
        "reuse": _pass(base, items, reuse=True, cpu=False),
        "reuse_cpu": _pass(base, items, reuse=True, cpu=True),
    }
    ref = [r.objective_usd for r in passes["rebuild"]["results"]]
    got = [r.objective_usd for r in passes["reuse"]["results"]]
    out["max_rel_diff"] = max(abs(a - b) / max(1.0, abs(a)) for a, b in zip(ref, got, strict=True))
    load0 = os.getloadavg()[0]
    out.update(_warm_start_floor(base, items, ref))
    out["warm_load"] = [round(load0, 2), round(os.getloadavg()[0], 2)]
    for k, p in passes.items():
        p.pop("results")
        out[k] = p
    reuse_s = out["reuse"]["per_case_s"] + out["reuse"]["stages"]["report"]
    out["speedup_wall"] = out["rebuild"]["per_case_s"] / out["reuse"]["per_case_s"]
    out["speedup_wall_with_report"] = out["rebuild"]["per_case_s"] / reuse_s
    out["reuse_over_warm_wall"] = out["reuse"]["per_case_s"] / out["warm_s"]
    return out


def render(r: dict[str, Any]) -> str:
    """Return the figures as Markdown: one row per pass, its stages in seconds."""
    names = ["build", "handover", "solve", "results", "check", "other", "report"]
    lines = [
        "| pass | per case s | " + " | ".join(names) + " | load before / after |",
        "| --- | ---: | " + " | ".join("---:" for _ in names) + " | --- |",
    ]
    for k in ("rebuild", "reuse", "reuse_cpu"):
        p = r[k]
        st = p["stages"]
        cells = " | ".join(f"{st[s]:.3f}" if s in st else "-" for s in names)
        label = {"reuse_cpu": "reuse (CPU s)"}.get(k, k + " (wall s)")
        lines.append(
            f"| {label} | {p['per_case_s']:.3f} | {cells} | "
            f"{p['load_before']} / {p['load_after']} |"
        )
    lines.append(
        f"| warm solve alone (wall s) | {r['warm_s']:.3f} | | | | | | | | "
        f"{r['warm_load'][0]} / {r['warm_load'][1]} |"
    )
    if r.get("warm_chained_s") is not None:
        lines.append(
            f"| warm solve alone, chained (wall s) | {r['warm_chained_s']:.3f} | | | | | | | | "
            f"{r['warm_load'][0]} / {r['warm_load'][1]} |"
        )
    lines.append(
        f"\nrebuild / reuse = {r['speedup_wall']:.2f}x (wall); "
        f"{r['speedup_wall_with_report']:.2f}x with the report writing; reuse / warm solve "
        f"alone = {r['reuse_over_warm_wall']:.2f}; objectives agree to {r['max_rel_diff']:.1e}."
    )
    return "\n".join(lines)


def main() -> None:
    """Parse the options, run, print the table and the JSON line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--size", default="default")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    from capacity.text_storage import use_python_text

    use_python_text()  # as `capacity batch` runs (capacity.text_storage)
    r = run(a.size, a.n)
    print(render(r))
    print("REUSE-JSON " + json.dumps(r, default=float), flush=True)
    if a.out:
        Path(a.out).write_text(json.dumps(r, indent=1, default=float))


if __name__ == "__main__":
    main()
