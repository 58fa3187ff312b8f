"""Benchmark of the planning LP: ours (two formulations), the highspy floor, a linopy peer.

Run from the repository root (``benchmarks/`` is a plain folder next to the
installed packages, not an installed package)::

    python -m benchmarks.run [--sizes default,medium,large,xl,xxl] [--out bench_out/RESULTS.md]
    capacity bench [--sizes ...] [--out ...]       # the same, through the CLI

For each size (:data:`benchmarks.generate.SIZES`) the parent process writes a
synthetic dataset as CSV to a temporary folder and runs up to four workers, one at a
time, each in a fresh subprocess so its peak memory is its own
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``: the whole process's peak resident set,
Python and native memory alike, imports included):

* ``compact``: our pipeline with the compact formulation (per-site busy chips and
  per-region service linked by region balances; skipped when this checkout has no
  ``formulation`` option): load (read CSV) -> validate (``Dataset.from_tables``
  checks) -> ``optimizer.solve`` (build, hand-over to highspy, solve, results tables,
  checker, timed by ``PlanResult.timings_s``) -> report write
  (``optimizer.output.report.write_report``).
* ``reference``: the same pipeline with the reference formulation (per-site,
  per-customer ``assign`` columns). It then exports the model's arrays (untimed) for
  the floor.
* ``floor``: the reference arrays (same column and row order) passed to ``highspy``
  directly; only ``Highs.run()`` is timed: the cost of solving this LP and nothing
  else.
* ``floor_compact``: the same on the compact model's arrays, the exact matrix, bounds
  and costs ``optimizer.solve`` hands to HiGHS (exported by the compact worker,
  untimed), so "ours vs floor" is measured on the LP we actually solve.
* ``linopy``: :mod:`benchmarks.linopy_peer` builds the reference LP from the same
  Dataset and solves it through linopy's direct highspy interface.

All use HiGHS with ``optimizer.plan.highs``'s options (:mod:`benchmarks.solver_options`)
and the same time limit. Sizes not in ``--peer-solve-sizes`` (xl by default: one
floor or linopy solve there costs up to the whole time limit) run the floor only when
the reference solved and build linopy's model without solving it. Sizes in
``--compact-only-sizes`` (xxl and xxl96 by default: their reference models hold several
million columns) run ours (compact) and the floor on its arrays only.

Same-problem checks: both formulations give the same objective to
:data:`FORMULATION_REL_TOL` (relative) on every size where both solve; ours
(reference), the floor and linopy agree to :data:`REL_TOL` and linopy creates exactly
the reference model's columns. End to end means from a validated Dataset in memory to
a checked solution: ours = the wall time of ``solve()`` (build + hand-over + solve +
results + check); linopy = build + solve (with its hand-over and solution copy-back;
it builds no result tables and runs no checker); floor = the solve alone. Load,
validate and report write are shown per stage. The 1-minute load average is recorded
before and after every worker (the machine is shared).

A batch section times ``optimizer.analysis.batch_case.solve_many`` over a 20-scenario sweep at
the default size with and without model reuse (``python -m benchmarks.reuse`` prints the
per-stage split of a reused case, on the wall and CPU clocks). The hedged-plan target
reads the JSON lines of ``python -m benchmarks.hedge`` (``--hedge``); without them it says
so and points at the hand-run rows. RESULTS.md text below the line :data:`KEEP_MARKER` (hand-written
readings) is kept when the file is rewritten.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from capacity.text_storage import use_python_text

use_python_text()  # every worker runs as the command line does (peers too: one pandas setting)

from benchmarks.solver_options import highs_options  # noqa: E402
from optimizer.plan.highs import highs_ok, highs_refusal_reason  # noqa: E402

#: Ours (reference), the floor and linopy must agree this closely (relative): same LP.
REL_TOL = 1e-6
#: Compact and reference formulations must agree this closely (relative): same problem.
FORMULATION_REL_TOL = 1e-7
ROOT = Path(__file__).resolve().parents[1]
#: RESULTS.md text below this line is hand-written and kept when the file is rewritten.
KEEP_MARKER = "<!-- hand-written below this line: kept by benchmarks.run -->"

#: Column kinds of the running-total definition families (``chip_installed``,
#: ``site_built``, ``site_liquid_built``), built only above a size threshold: the linopy
#: peer writes the running sums out in each row instead, so it has these columns fewer.
RUNNING_TOTAL_KINDS = ("installed", "built", "liquid_built")

#: Targets (printed, not asserted).
TARGET_LINOPY_RATIO = 0.07
TARGET_BUILD_SLOPE = 1.1
TARGET_PEAK_MB = 2048.0
TARGET_REUSE_SPEEDUP = 10.0
TARGET_XL_S = 60.0
TARGET_XXL_S = 600.0
TARGET_XXL_MB = 4096.0
#: The hedged plan over 100 sampled scenarios, end to end on 2 local Dask workers (s).
TARGET_HEDGE_S = 300.0
#: A reused batch case at most this many times the warm HiGHS solve alone.
TARGET_REUSE_OVER_WARM = 1.5


def formulations() -> tuple[str, ...]:
    """Formulations this checkout can build (``("reference",)`` before the compact one)."""
    try:
        from optimizer.plan.model import FORMULATIONS
    except ImportError:
        return ("reference",)
    return tuple(FORMULATIONS)


def solve_options(formulation: str, time_limit_s: float | None = None) -> Any:
    """``SolveOptions`` for HiGHS with the formulation set where the option exists."""
    from optimizer import SolveOptions

    kw: dict[str, Any] = {"solver": "highs", "time_limit_s": time_limit_s}
    if "formulation" in {f.name for f in dataclasses.fields(SolveOptions)}:
        kw["formulation"] = formulation
    elif formulation != "reference":
        raise ValueError(f"this checkout cannot solve the {formulation} formulation")
    return SolveOptions(**kw)


def build(ds: Any, formulation: str = "reference") -> Any:
    """``optimizer.plan.model.build_model`` of one formulation (reference by default)."""
    from optimizer.plan.model import build_model

    if len(formulations()) > 1:
        return build_model(ds, formulation=formulation)
    return build_model(ds)


def cpu_s() -> float:
    """User + system CPU seconds of this process so far (all its threads)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _warm_up(kind: str) -> None:
    """Run one tiny instance first so lazy imports and first-call costs are not timed."""
    from benchmarks.generate import generate

    ds = generate("small", periods=3)
    if kind in formulations():
        from optimizer import solve

        solve(ds, solve_options(kind))
    elif kind == "linopy":
        from benchmarks.linopy_peer import solve_linopy

        solve_linopy(ds)
    elif kind == "floor":
        floor_solve(export_arrays(build(ds)))


def peak_rss_mb() -> float:
    """Peak resident set size of this process (MB), from ``ru_maxrss`` (KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# ----------------------------------------------------------------------------- floor
def export_arrays(model: Any) -> dict[str, np.ndarray]:
    """The LP of a ``PlanningModel`` as plain arrays (CSC matrix, bounds, costs).

    Parameters
    ----------
    model : optimizer.plan.model.PlanningModel

    Returns
    -------
    dict of str to ndarray
        ``start, index, value`` (CSC, column-wise), ``cost, col_lo, col_hi, row_lo,
        row_hi`` (``+-inf`` for open sides) and ``offset`` (objective constant, USD).
    """
    csc = model.matrix.tocsc()
    lo, hi = model.row_bounds()
    var = model.variables
    return {
        "start": csc.indptr.astype(np.int32),
        "index": csc.indices.astype(np.int32),
        "value": csc.data.astype(float),
        "cost": var["cost"].to_numpy(dtype=float),
        "col_lo": var["lb"].to_numpy(dtype=float),
        "col_hi": var["ub"].to_numpy(dtype=float),
        "row_lo": lo.astype(float),
        "row_hi": hi.astype(float),
        "offset": np.array([model.objective_constant]),
    }


def floor_solve(arrays: dict[str, np.ndarray], time_limit_s: float | None = None) -> dict[str, Any]:
    """Solve exported LP arrays with highspy directly; time ``Highs.run()`` only.

    Parameters
    ----------
    arrays : dict
        From :func:`export_arrays`.
    time_limit_s : float, optional
        HiGHS time limit (seconds).

    Returns
    -------
    dict
        ``objective_usd`` (offset included; nan when not optimal), ``status``,
        ``solve_s``, ``handover_s`` (HighsLp fill + passModel, not counted in the
        floor).
    """
    import highspy

    inf = highspy.kHighsInf
    t0 = time.perf_counter()
    lp = highspy.HighsLp()
    lp.num_col_ = len(arrays["cost"])
    lp.num_row_ = len(arrays["row_lo"])
    lp.col_cost_ = arrays["cost"]
    lp.col_lower_ = arrays["col_lo"]
    lp.col_upper_ = np.where(np.isfinite(arrays["col_hi"]), arrays["col_hi"], inf)
    lp.row_lower_ = np.where(np.isfinite(arrays["row_lo"]), arrays["row_lo"], -inf)
    lp.row_upper_ = np.where(np.isfinite(arrays["row_hi"]), arrays["row_hi"], inf)
    lp.offset_ = float(arrays["offset"][0])
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = arrays["start"]
    lp.a_matrix_.index_ = arrays["index"]
    lp.a_matrix_.value_ = arrays["value"]
    h = highspy.Highs()
    highs_ok(h.setOptionValue("output_flag", False), "option output_flag")
    for k, v in highs_options(lp.num_col_, time_limit_s).items():
        highs_ok(h.setOptionValue(k, v), f"option {k}")
    highs_ok(h.passModel(lp), "the model", highs_refusal_reason(lp))
    t1, c1 = time.perf_counter(), cpu_s()
    highs_ok(h.run(), "to solve the model")
    t2, c2 = time.perf_counter(), cpu_s()
    ok = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    obj = float(h.getInfo().objective_function_value) if ok else float("nan")
    return {
        "objective_usd": obj,
        "status": h.modelStatusToString(h.getModelStatus()),
        "solve_s": t2 - t1,
        "solve_cpu_s": c2 - c1,
        "handover_s": t1 - t0,
    }


# --------------------------------------------------------------------------- workers
def _load_split(data_dir: Path) -> tuple[Any, float, float]:
    """Read the CSV tables (load) then validate and type them (validate)."""
    from capacity.dataset import Dataset, read_table_file, validate_tables
    from capacity.schema import TABLES
    from capacity.validation import DataValidationError

    specs = TABLES.values() if isinstance(TABLES, dict) else TABLES
    t0 = time.perf_counter()
    raw = {}
    for spec in specs:
        p = data_dir / f"{spec.name}.csv"
        if p.exists():
            raw[spec.name] = read_table_file(p)
    t1 = time.perf_counter()
    typed, findings = validate_tables(raw, {s.name: f"{s.name}.csv" for s in specs})
    if any(f.severity == "error" for f in findings):
        raise DataValidationError(findings)
    ds = Dataset(typed, name=data_dir.name, warnings=tuple(findings))
    t2 = time.perf_counter()
    return ds, t1 - t0, t2 - t1


def worker_ours(
    data_dir: Path, work: Path, time_limit_s: float | None, formulation: str = "reference"
) -> dict[str, Any]:
    """Our pipeline on one dataset folder; the reference exports its LP arrays for the floor."""
    from optimizer import solve
    from optimizer.output.report import write_report

    _warm_up(formulation)
    base_mb = peak_rss_mb()
    t_start = time.perf_counter()
    ds, load_s, validate_s = _load_split(data_dir)
    t, c = time.perf_counter(), cpu_s()
    res = solve(ds, solve_options(formulation, time_limit_s))
    solve_wall = time.perf_counter() - t
    solve_cpu = cpu_s() - c
    t = time.perf_counter()
    write_report(res, work / f"report-{formulation}", scenario="bench", run_id="bench")
    report_s = time.perf_counter() - t
    total = time.perf_counter() - t_start
    peak = peak_rss_mb()
    out: dict[str, Any] = {
        "formulation": formulation,
        "status": str(getattr(res.status, "value", res.status)),
        "objective_usd": res.objective_usd,
        "n_variables": res.n_variables,
        "n_constraints": res.n_constraints,
        "stages": {
            "load": load_s,
            "validate": validate_s,
            **dict(res.timings_s),
            "report": report_s,
        },
        "solve_wall_s": solve_wall,
        "solve_cpu_s": solve_cpu,
        "pipeline_s": total,
        "peak_mb": peak,
        "import_mb": base_mb,
    }
    model = build(ds, formulation)
    out["nnz"] = int(model.matrix.nnz)
    out["running_total_columns"] = running_total_columns(model)
    np.savez(work / arrays_file(formulation), **export_arrays(model))
    return out


def running_total_columns(model: Any) -> int:
    """Columns of ``model`` in the running-total definition families (by column kind)."""
    return int(model.variables["kind"].isin(RUNNING_TOTAL_KINDS).sum())


def arrays_file(formulation: str) -> str:
    """File name of a formulation's exported LP arrays in the work folder."""
    return "lp.npz" if formulation == "reference" else f"lp-{formulation}.npz"


def worker_floor(work: Path, time_limit_s: float | None, name: str = "lp.npz") -> dict[str, Any]:
    """Solve the exported arrays ``work / name`` with highspy; time the solve only."""
    _warm_up("floor")
    with np.load(work / name) as z:
        arrays = {k: z[k] for k in z.files}
    out = floor_solve(arrays, time_limit_s)
    out["peak_mb"] = peak_rss_mb()
    return out


def worker_linopy(data_dir: Path, time_limit_s: float | None, solve_it: bool) -> dict[str, Any]:
    """Build (and solve) the linopy peer from the same dataset folder."""
    from benchmarks.linopy_peer import build_linopy, n_active, solve_linopy

    _warm_up("linopy")
    ds, _, _ = _load_split(data_dir)
    if not solve_it:
        t = time.perf_counter()
        m, _ = build_linopy(ds)
        b = time.perf_counter() - t
        t = time.perf_counter()
        m.to_highspy()
        handover = time.perf_counter() - t
        nv, nc = n_active(m)
        return {
            "build_s": b,
            "handover_s": handover,
            "solve_s": None,
            "objective_usd": None,
            "status": "not solved",
            "n_variables": nv,
            "n_constraints": nc,
            "peak_mb": peak_rss_mb(),
        }
    c = cpu_s()
    r = solve_linopy(ds, time_limit_s=time_limit_s)
    return {
        "cpu_s": cpu_s() - c,
        "build_s": r.timings_s["build"],
        "solve_s": r.timings_s["solve"],
        "objective_usd": r.objective_usd,
        "status": r.status,
        "n_variables": r.n_variables,
        "n_constraints": r.n_constraints,
        "peak_mb": peak_rss_mb(),
    }


def sweep_overrides(n: int = 20) -> list[list[dict[str, Any]]]:
    """``n`` value-only scenarios: demand, supply and energy price scaled.

    Each case scales all demand by a factor in 0.8-1.2, all supply capacity by
    1.1-0.9 and energy prices by 0.9-1.1 (assumption: a sensitivity sweep); none
    changes which cells are non-zero, so every case is patchable by model reuse.
    """
    out = []
    for i in range(n):
        x = i / max(n - 1, 1)
        src = "assumption: benchmark sweep"
        out.append(
            [
                {
                    "op": "scale",
                    "table": "demand",
                    "column": "demand_h100e",
                    "factor": 0.8 + 0.4 * x,
                    "source": src,
                },
                {
                    "op": "scale",
                    "table": "supply_resources",
                    "column": "capacity",
                    "factor": 1.1 - 0.2 * x,
                    "source": src,
                },
                {
                    "op": "scale",
                    "table": "sites",
                    "column": "energy_price_usd_per_mwh",
                    "factor": 0.9 + 0.2 * x,
                    "source": src,
                },
            ]
        )
    return out


def worker_batch(size: str, n: int) -> dict[str, Any]:
    """Per-scenario time of an ``n``-case sweep, rebuilding vs reusing the model."""
    from benchmarks.generate import generate
    from optimizer import SolveOptions

    base = generate(size)
    items = sweep_overrides(n)
    try:
        from optimizer.analysis.batch_case import solve_many
    except ImportError:
        solve_many = None
    opts = SolveOptions(solver="highs")
    out: dict[str, Any] = {"size": size, "n": n, "reuse_available": solve_many is not None}
    if solve_many is None:
        from capacity.scenarios import apply_overrides
        from optimizer import solve

        t = time.perf_counter()
        res = [solve(apply_overrides(base, it), opts) for it in items]
        out["rebuild_s"] = (time.perf_counter() - t) / n
        out["reuse_s"] = None
        return out
    solve_many(base, items[:1], opts, reuse=True)  # warm the per-process base model cache
    runs = {}
    for reuse in (False, True):
        t = time.perf_counter()
        res = solve_many(base, items, opts, reuse=reuse)
        runs[reuse] = (time.perf_counter() - t) / n, res
    out.update(_warm_start_floor(base, items, [r.objective_usd for r in runs[False][1]]))
    out["rebuild_s"], r0 = runs[False]
    out["reuse_s"], r1 = runs[True]
    out["max_rel_diff"] = max(
        abs(a.objective_usd - b.objective_usd) / max(1.0, abs(a.objective_usd))
        for a, b in zip(r0, r1, strict=True)
    )
    st = [dict(r.timings_s) for r in r0], [dict(r.timings_s) for r in r1]
    for tag, lst in zip(("rebuild", "reuse"), st, strict=True):
        keys = sorted({k for d in lst for k in d})
        out[f"{tag}_stages"] = {k: float(np.mean([d.get(k, 0.0) for d in lst])) for k in keys}
    return out


def _warm_start_floor(base: Any, items: list[Any], ref: list[float]) -> dict[str, Any]:
    """What a solver-level warm start could give: one retained ``Highs`` object.

    The base model is passed to HiGHS once and solved; each case's patched costs and
    row bounds (:func:`optimizer.analysis.batch_patch.patch_model`) are then changed in
    place (``changeColsCost``, ``changeRowsBounds``) and HiGHS re-solves from the base's
    optimal basis, its state of the last run cleared, as the batch's anchored session
    starts every case (:class:`optimizer.plan.highs_session.HighsSession`, ``anchored``).
    Timed per case: patch + change + run (no result tables, no checker). Then the same
    from the previous case's basis (``warm_chained_s``: what the batch's order-free plans
    cost against chaining each case from the one before it).
    """
    from optimizer.plan.model import build_model

    model = build_model(base)
    out = {}
    for name, chained in (("warm", False), ("warm_chained", True)):
        got = _warm_pass(model, base, items, ref, chained)
        if got is None:
            return {"warm_s": None, "warm_note": "a case was not patchable"}
        out[f"{name}_s"], out[f"{name}_max_rel_diff"] = got
    return out


def _warm_pass(
    model: Any, base: Any, items: list[Any], ref: list[float], chained: bool
) -> tuple[float, float] | None:
    """Mean seconds per case and worst relative objective difference of one warm pass."""
    import highspy

    from capacity.scenarios import apply_overrides
    from optimizer.analysis.batch_patch import patch_model

    arr = export_arrays(model)
    h = highspy.Highs()
    highs_ok(h.setOptionValue("output_flag", False), "option output_flag")
    lp = highspy.HighsLp()
    inf = highspy.kHighsInf
    lp.num_col_, lp.num_row_ = len(arr["cost"]), len(arr["row_lo"])
    lp.col_cost_, lp.col_lower_ = arr["cost"], arr["col_lo"]
    lp.col_upper_ = np.where(np.isfinite(arr["col_hi"]), arr["col_hi"], inf)
    lp.row_lower_ = np.where(np.isfinite(arr["row_lo"]), arr["row_lo"], -inf)
    lp.row_upper_ = np.where(np.isfinite(arr["row_hi"]), arr["row_hi"], inf)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_ = arr["start"], arr["index"]
    lp.a_matrix_.value_ = arr["value"]
    highs_ok(h.passModel(lp), "the model", highs_refusal_reason(lp))
    highs_ok(h.run(), "to solve the model")
    anchor = h.getBasis()
    n, m = lp.num_col_, lp.num_row_
    cols, rows = np.arange(n, dtype=np.int32), np.arange(m, dtype=np.int32)
    times, diffs = [], []
    for it, want in zip(items, ref, strict=True):
        ds = apply_overrides(base, it)
        t = time.perf_counter()
        pm = patch_model(model, base, ds)
        if pm is None:
            return None
        lo, hi = pm.row_bounds()
        highs_ok(h.changeColsCost(n, cols, pm.variables["cost"].to_numpy(float)), "costs")
        lo, hi = np.where(np.isfinite(lo), lo, -inf), np.where(np.isfinite(hi), hi, inf)
        highs_ok(h.changeRowsBounds(m, rows, lo, hi), "row bounds")
        if not chained:
            h.clearSolver()
            highs_ok(h.setBasis(anchor), "the base's basis")
        highs_ok(h.run(), "to re-solve the model")
        times.append(time.perf_counter() - t)
        obj = h.getInfo().objective_function_value + pm.objective_constant
        diffs.append(abs(obj - want) / max(1.0, abs(want)))
    return float(np.mean(times)), float(max(diffs))


def _worker_main(argv: Sequence[str]) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", required=True)
    ap.add_argument("--data")
    ap.add_argument("--work")
    ap.add_argument("--size")
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--no-solve", action="store_true")
    ap.add_argument("--formulation", default="reference")
    ap.add_argument("--arrays", default="lp.npz")
    a = ap.parse_args(argv)
    if a.worker == "ours":
        out = worker_ours(Path(a.data), Path(a.work), a.time_limit, a.formulation)
    elif a.worker == "export":  # reference model arrays only, for a stand-alone floor run
        ds, _, _ = _load_split(Path(a.data))
        np.savez(Path(a.work) / "lp.npz", **export_arrays(build(ds)))
        out = {"exported": str(Path(a.work) / "lp.npz")}
    elif a.worker == "floor":
        out = worker_floor(Path(a.work), a.time_limit, a.arrays)
    elif a.worker == "linopy":
        out = worker_linopy(Path(a.data), a.time_limit, not a.no_solve)
    elif a.worker == "batch":
        out = worker_batch(a.size, a.n)
    else:
        raise SystemExit(f"unknown worker {a.worker}")
    print("BENCH-JSON " + json.dumps(out, default=float))


def _spawn(args: list[str], timeout_s: float) -> dict[str, Any]:
    """Run a worker in a fresh interpreter; return its JSON or an error record."""
    cmd = [sys.executable, "-m", "benchmarks.run", *args]
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    t, load0 = time.perf_counter(), os.getloadavg()[0]
    try:
        p = subprocess.run(
            cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s
        )
    except subprocess.TimeoutExpired:
        out = {"error": f"killed after {timeout_s:.0f} s wall"}
    else:
        out = {"error": (p.stderr or p.stdout)[-2000:]}
        for line in p.stdout.splitlines():
            if line.startswith("BENCH-JSON "):
                out = json.loads(line[len("BENCH-JSON ") :])
    out["wall_s"] = time.perf_counter() - t
    out["load_before"], out["load_after"] = load0, os.getloadavg()[0]
    return out


# ----------------------------------------------------------------------------- parent
def default_formulation() -> str:
    """The product's formulation: compact where this checkout has it, else the reference."""
    return "compact" if "compact" in formulations() else "reference"


def _ours_args(data: Path, work: Path, time_limit_s: float, formulation: str) -> list[str]:
    return [
        "--worker",
        "ours",
        "--data",
        str(data),
        "--work",
        str(work),
        "--time-limit",
        str(time_limit_s),
        "--formulation",
        formulation,
    ]


def bench_size(
    name: str,
    time_limit_s: float,
    wall_cap_s: float,
    log: Any = print,
    solve_peers: bool = True,
    reference_time_limit_s: float | None = None,
    compact_only: bool = False,
) -> dict[str, Any]:
    """Run the workers on one named size, one at a time; return their records.

    ``solve_peers`` False: the floor runs only when the reference solved and linopy
    builds its model (and hands it to highspy) without solving it.
    ``reference_time_limit_s``: HiGHS time limit of ours (reference) when it differs
    from ``time_limit_s`` (a short one keeps its build figures without the solve).
    ``compact_only``: ours (compact) and the floor on its arrays only.
    """
    from benchmarks.generate import generate

    work = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
    try:
        ds = generate(name)
        data = work / "data"
        ds.write(data)
        rec: dict[str, Any] = {"size": name, "dataset": ds.name}
        forms = sorted(formulations())  # compact first: the product's default
        if compact_only and "compact" in forms:
            forms = ["compact"]
        for form in forms:
            log(f"[{name}] ours ({form}) ...")
            tl = time_limit_s
            if form == "reference" and reference_time_limit_s is not None:
                tl = reference_time_limit_s
            rec[form] = _spawn(_ours_args(data, work, tl, form), wall_cap_s)
            rec[form]["time_limit_s"] = tl
            log(f"[{name}] ours ({form}): {_brief(rec[form])}")
            floor_key = "floor" if form == "reference" else f"floor_{form}"
            solved = rec[form].get("status") == "optimal"
            if (solve_peers or solved) and (work / arrays_file(form)).exists():
                log(f"[{name}] {floor_key} ...")
                args = ["--worker", "floor", "--work", str(work), "--arrays", arrays_file(form)]
                rec[floor_key] = _spawn([*args, "--time-limit", str(time_limit_s)], wall_cap_s)
                log(f"[{name}] {floor_key}: {_brief(rec[floor_key])}")
        if compact_only:
            return rec
        log(f"[{name}] linopy ...")
        args = ["--worker", "linopy", "--data", str(data), "--time-limit", str(time_limit_s)]
        if not solve_peers:
            args.append("--no-solve")
        rec["linopy"] = _spawn(args, wall_cap_s)
        log(f"[{name}] linopy: {_brief(rec['linopy'])}")
        return rec
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _brief(r: dict[str, Any]) -> str:
    if "error" in r:
        return "ERROR " + r["error"].strip().splitlines()[-1][:200]
    keys = (
        "status",
        "objective_usd",
        "n_variables",
        "solve_wall_s",
        "solve_s",
        "build_s",
        "peak_mb",
        "load_after",
    )
    return ", ".join(
        f"{k}={r[k]:.6g}" if isinstance(r.get(k), float) else f"{k}={r.get(k)}"
        for k in keys
        if k in r
    )


def ours_e2e(o: dict[str, Any]) -> float:
    """Ours end to end: validated Dataset -> checked solution (the ``solve()`` wall)."""
    return float(o["solve_wall_s"])


def _objective(r: dict[str, Any] | None) -> float | None:
    """A worker's objective when it reached an optimum, else None."""
    if not r or "error" in r or r.get("status") not in ("optimal", "Optimal"):
        return None
    v = r.get("objective_usd")
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def agreement(
    rec: dict[str, Any],
    keys: Sequence[str] = ("reference", "floor", "linopy"),
    tol: float = REL_TOL,
) -> tuple[bool | None, float]:
    """Whether the optimal objectives of ``keys`` agree within ``tol`` (relative).

    Returns ``(None, nan)`` when any of them has no optimum (nothing to compare).
    The default compares ours (reference), the floor and linopy (:data:`REL_TOL`);
    :func:`formulations_agree` compares the two formulations.
    """
    vals = [_objective(rec.get(k)) for k in keys]
    if any(v is None for v in vals):
        return None, float("nan")
    ref = abs(vals[0] or 0.0) or 1.0
    diff = max(abs((v or 0.0) - (vals[0] or 0.0)) for v in vals) / ref
    return diff <= tol, diff


def formulations_agree(rec: dict[str, Any]) -> tuple[bool | None, float]:
    """Compact vs reference objective within :data:`FORMULATION_REL_TOL` (None: not both)."""
    return agreement(rec, ("compact", "reference"), FORMULATION_REL_TOL)


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """Least-squares slope of log(y) on log(x) (nan with fewer than two points)."""
    if len(x) < 2:
        return float("nan")
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


def machine_info() -> dict[str, str]:
    """Cores, memory and package versions of this machine."""
    from importlib.metadata import version

    import highspy  # noqa: F401
    import linopy
    import pandas
    import pulp
    import scipy
    import xarray

    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(("MemTotal", "MemAvailable")):
                mem += line.split(":")[0] + " " + line.split(":")[1].strip() + "; "
    except OSError:
        pass
    return {
        "nproc": str(os.cpu_count()),
        "memory": mem.strip("; "),
        "cpu": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pandas.__version__,
        "scipy": scipy.__version__,
        "highspy": version("highspy"),
        "linopy": linopy.__version__,
        "xarray": xarray.__version__,
        "pulp": pulp.__version__,
        "load_1min": f"{os.getloadavg()[0]:.2f}",
        "run_started_utc": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def _fmt(x: Any, nd: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def _ours(rec: dict[str, Any]) -> dict[str, Any]:
    """The product's record of a size: its default formulation (compact where it exists)."""
    return rec.get(default_formulation()) or rec.get("reference") or {"error": "not run"}


def _large_targets(lg: dict[str, Any]) -> list[tuple[str, str, str]]:
    o, li = _ours(lg), lg.get("linopy", {})
    if "error" in o:
        name = f"large: ours / linopy end to end <= {TARGET_LINOPY_RATIO}"
        return [(name, "MISS", "ours did not run")]
    out = []
    e2e = ours_e2e(o)
    if li.get("solve_s") is not None:
        lt = li["build_s"] + li["solve_s"]
        cpu = ""
        if o.get("solve_cpu_s") and li.get("cpu_s"):
            r = o["solve_cpu_s"] / li["cpu_s"]
            cpu = f" (CPU {o['solve_cpu_s']:.1f} s / {li['cpu_s']:.1f} s = {r:.2f})"
        if li.get("status") != "optimal":
            cpu += f"; linopy ended {li.get('status')}: its time is a lower bound"
        out.append(
            (
                f"large: ours ({o.get('formulation', '?')}) / linopy end to end <= "
                f"{TARGET_LINOPY_RATIO}",
                _verdict(e2e / lt <= TARGET_LINOPY_RATIO and o["status"] == "optimal"),
                f"{e2e:.1f} s / {lt:.1f} s = {e2e / lt:.2f}{cpu}",
            )
        )
    out.append(
        (
            "large: peak memory < 2 GB",
            _verdict(o["peak_mb"] < TARGET_PEAK_MB),
            f"{o['peak_mb']:.0f} MB (ru_maxrss, {o.get('formulation', '?')})",
        )
    )
    return out


def _xl_target(
    xl: dict[str, Any] | None,
    size: str = "xl",
    limit_s: float = TARGET_XL_S,
    limit_mb: float | None = None,
) -> tuple[str, str, str]:
    """Optimal within ``limit_s`` end to end (load + validate + ``solve()``), and memory."""
    mem = f" and peak memory < {limit_mb / 1024:.0f} GB" if limit_mb else ""
    name = f"{size}: optimal in < {limit_s:.0f} s end to end{mem}"
    if xl is None:
        return (name, "not run", "-")
    o = _ours(xl)
    if "error" in o:
        return (name, "MISS", f"error: {o['error'].strip()[-100:]}")
    e2e = o["stages"].get("load", 0.0) + o["stages"].get("validate", 0.0) + ours_e2e(o)
    ok = o["status"] == "optimal" and e2e < limit_s
    ok = ok and (limit_mb is None or o["peak_mb"] < limit_mb)
    cpu = f", CPU {o['solve_cpu_s']:.0f} s" if o.get("solve_cpu_s") else ""
    peak = f", {o['peak_mb']:.0f} MB" if limit_mb else ""
    load = f", load {o.get('load_before', math.nan):.1f}/{o.get('load_after', math.nan):.1f}"
    return (
        name,
        _verdict(ok),
        f"{o['status']}, {e2e:.1f} s ({o.get('formulation', '?')}{cpu}{peak}{load})",
    )


def _hedge_target(hedge: list[dict[str, Any]] | None) -> tuple[str, str, str]:
    """Hedge at N = 100: converged in < :data:`TARGET_HEDGE_S`, within the extensive form's memory.

    "Within its memory": the decomposition's peak (client plus workers) is at most the
    extensive form's at the same N, as each run measured it (an extensive form stopped at
    its time limit reports the peak reached until then).
    """
    name = (
        f"hedged 100-scenario plan: converged in < {TARGET_HEDGE_S:.0f} s, "
        "within the extensive form's memory"
    )
    if not hedge:
        return (
            name,
            "MISS (not re-run)",
            "not re-run by this command: see the hand-run section 'Hedged plan' below",
        )
    by = {r.get("method"): r for r in hedge if r.get("samples") == 100}
    ls, ef = by.get("lshaped", {}), by.get("extensive", {})
    if not ls or "error" in ls:
        return (name, "MISS", "L-shaped at N=100 did not run")
    fast = bool(ls.get("converged")) and ls["wall_s"] < TARGET_HEDGE_S
    smaller = ls.get("peak_mb", math.inf) <= ef.get("peak_mb", 0.0)
    return (
        name,
        _verdict(fast and smaller),
        f"L-shaped {'converged' if ls.get('converged') else 'not converged'} "
        f"{ls['wall_s']:.0f} s, {ls['peak_mb']:.0f} MB; extensive {ef.get('status', '-')} "
        f"{ef.get('wall_s', math.nan):.0f} s, {ef.get('peak_mb', math.nan):.0f} MB",
    )


def targets(
    recs: list[dict[str, Any]],
    batch: dict[str, Any] | None,
    hedge: list[dict[str, Any]] | None = None,
) -> list[tuple[str, str, str]]:
    """PASS/MISS per benchmark target: (target, verdict, numbers)."""
    out: list[tuple[str, str, str]] = []
    by = {r["size"]: r for r in recs}
    if "large" in by:
        out += _large_targets(by["large"])
    pts = [
        (_ours(r)["n_variables"], _ours(r)["stages"]["build"])
        for r in recs
        if "error" not in _ours(r) and r["size"] != "small"
    ]
    if len(pts) >= 2:
        s = loglog_slope([p[0] for p in pts], [p[1] for p in pts])
        out.append(
            (
                f"build time log-log slope <= {TARGET_BUILD_SLOPE} ({default_formulation()}, "
                f"{recs[0]['size']}..{recs[-1]['size']})",
                _verdict(s <= TARGET_BUILD_SLOPE),
                f"slope {s:.2f} over {len(pts)} sizes",
            )
        )
    if batch and "error" not in batch and batch.get("reuse_s"):
        sp = batch["rebuild_s"] / batch["reuse_s"]
        out.append(
            (
                f"batch: reuse >= {TARGET_REUSE_SPEEDUP:.0f}x faster per scenario",
                _verdict(sp >= TARGET_REUSE_SPEEDUP),
                f"{batch['rebuild_s']:.3f} s / {batch['reuse_s']:.3f} s = {sp:.2f}x",
            )
        )
        if batch.get("warm_s"):
            over = batch["reuse_s"] / batch["warm_s"]
            out.append(
                (
                    f"batch: a reused case <= {TARGET_REUSE_OVER_WARM:g}x the warm solve alone",
                    _verdict(over <= TARGET_REUSE_OVER_WARM),
                    f"{batch['reuse_s']:.3f} s / {batch['warm_s']:.3f} s = {over:.2f}x",
                )
            )
    elif batch is not None:
        out.append(
            (
                f"batch: reuse >= {TARGET_REUSE_SPEEDUP:.0f}x faster per scenario",
                "MISS",
                "no reuse figure",
            )
        )
    out.append(_xl_target(by.get("xl")))
    out.append(_xl_target(by.get("xxl"), "xxl", TARGET_XXL_S, TARGET_XXL_MB))
    out.append(_hedge_target(hedge))
    return out


def _same_problem_rows(recs: list[dict[str, Any]]) -> list[str]:
    L = [
        "## Same problem",
        "",
        f"Formulations: compact and reference objectives must agree to {FORMULATION_REL_TOL:g} "
        f"(relative) where both solve. Peers: ours (reference), the floor and linopy to "
        f"{REL_TOL:g}, and linopy must create the reference model's columns less its "
        "running-total definition columns (built above a size threshold; linopy writes those "
        "sums out in each row).",
        "",
        "| size | compact cols / rows / nnz | reference cols / rows / nnz | compact USD "
        "| reference USD | floor USD | linopy USD | compact vs reference | same problem "
        "| peers max diff | same LP (linopy cols) |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |",
    ]
    for r in recs:
        c, ref = r.get("compact", {}), r.get("reference", {})
        fl, li = r.get("floor", {}), r.get("linopy", {})

        def dims(o: dict[str, Any]) -> str:
            if not o or "error" in o:
                return "-"
            return f"{o['n_variables']:,} / {o['n_constraints']:,} / {o.get('nnz', 0):,}"

        fok, fd = formulations_agree(r)
        pok, pd_ = agreement(r)
        extra = int(ref.get("running_total_columns", 0))
        same_cols = li.get("n_variables") == (ref.get("n_variables") or 0) - extra
        same = ", same" + (f" less {extra:,} running-total columns" if extra else "")
        L.append(
            f"| {r['size']} | {dims(c)} | {dims(ref)} | {_fmt(_objective(c), 1)} | "
            f"{_fmt(_objective(ref), 1)} | {_fmt(_objective(fl), 1)} | "
            f"{_fmt(_objective(li), 1)} | {'-' if fok is None else f'{fd:.1e}'} | "
            f"{'n/a' if fok is None else ('yes' if fok else 'NO')} | "
            f"{'-' if pok is None else f'{pd_:.1e}'} | "
            f"{'n/a' if pok is None else ('yes' if pok else 'NO')} "
            f"({li.get('n_variables', '-')}"
            f"{'' if li.get('n_variables') is None else (same if same_cols else ', DIFFERENT')}) |"
        )
    return L


def _side_by_side_rows(recs: list[dict[str, Any]]) -> list[str]:
    L = [
        "## Side by side: end to end (s), peak memory (MB), load",
        "",
        "Ours = `solve()` wall (build + hand-over + HiGHS + results + check) on a validated "
        "Dataset; floor = `Highs.run()` alone on the reference arrays; linopy = build + "
        "solve. Status is shown where it is not optimal. CPU s = user + system CPU of the "
        "worker over the same span (`getrusage`; HiGHS's solvers run on one thread here), "
        "less sensitive to other jobs than wall time. Load = 1-minute load average "
        "before / after the worker (2 cores).",
        "",
        "| size | ours compact | ours reference | floor (reference) | linopy (reference) "
        "| compact / linopy | compact / floor | reference / linopy "
        "| CPU s compact / reference / floor / linopy | CPU compact / linopy "
        "| peak MB compact / reference / floor / linopy | load per worker |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- | --- |",
    ]
    for r in recs:
        c, ref = r.get("compact", {}), r.get("reference", {})
        fl, li = r.get("floor", {}), r.get("linopy", {})

        def e2e(o: dict[str, Any]) -> float | None:
            return None if not o or "error" in o else ours_e2e(o)

        def cell(o: dict[str, Any], t: float | None) -> str:
            if not o:
                return "-"
            if "error" in o:
                return "error"
            st = o.get("status", "")
            return _fmt(t) + ("" if st in ("optimal", "Optimal") else f" ({st})")

        lt = (li["build_s"] + li["solve_s"]) if li.get("solve_s") is not None else None
        if li.get("handover_s") is not None and lt is None:
            lin = f"not solved (build {li['build_s']:.2f} + to_highspy {li['handover_s']:.2f})"
        else:
            lin = cell(li, lt)
        ce, re_, fs = e2e(c), e2e(ref), fl.get("solve_s")

        def ratio(x: float | None, y: float | None) -> str:
            return _fmt(x / y) if x and y else "-"

        loads = " · ".join(
            f"{k} {r[k]['load_before']:.1f}/{r[k]['load_after']:.1f}"
            for k in ("compact", "reference", "floor", "linopy")
            if k in r and "load_before" in r[k]
        )
        L.append(
            f"| {r['size']} | {cell(c, ce)} | {cell(ref, re_)} | {cell(fl, fs)} | {lin} | "
            f"{ratio(ce, lt)} | {ratio(ce, fs)} | {ratio(re_, lt)} | "
            f"{_fmt(c.get('solve_cpu_s'), 1)} / {_fmt(ref.get('solve_cpu_s'), 1)} / "
            f"{_fmt(fl.get('solve_cpu_s'), 1)} / {_fmt(li.get('cpu_s'), 1)} | "
            f"{ratio(c.get('solve_cpu_s'), li.get('cpu_s'))} | "
            f"{_fmt(c.get('peak_mb'), 0)} / {_fmt(ref.get('peak_mb'), 0)} / "
            f"{_fmt(fl.get('peak_mb'), 0)} / {_fmt(li.get('peak_mb'), 0)} | {loads} |"
        )
    return L


def _floor_compact_rows(recs: list[dict[str, Any]]) -> list[str]:
    """Ours (compact) against HiGHS alone on the very arrays ours hands to it."""
    L = [
        "## Ours vs the highspy floor on the compact arrays",
        "",
        "Floor = `Highs.run()` alone on the compact model's exported arrays (same matrix, "
        "bounds, costs and HiGHS options as ours). Ours HiGHS = the `solve` stage of ours; "
        "overhead = `solve()` wall / floor. CPU s as above. Load = 1-minute load before / "
        "after the floor worker (2 cores, shared).",
        "",
        "| size | ours solve() wall | ours HiGHS | floor (compact) | ours / floor | "
        "ours HiGHS / floor | CPU s ours / floor | objective ours vs floor | peak MB ours / "
        "floor | load |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- | --- |",
    ]
    for r in recs:
        c, fl = r.get("compact", {}), r.get("floor_compact", {})
        if not c or "error" in c or not fl:
            continue
        if "error" in fl:
            L.append(
                f"| {r['size']} | {c['solve_wall_s']:.2f} | - | error | - | - | - | - | - | - |"
            )
            continue
        ok, d = agreement(r, ("compact", "floor_compact"), FORMULATION_REL_TOL)
        fs, hs = fl.get("solve_s"), c["stages"].get("solve")
        st = "" if fl.get("status") == "Optimal" else f" ({fl.get('status')})"
        L.append(
            f"| {r['size']} | {c['solve_wall_s']:.2f} | {_fmt(hs)} | {_fmt(fs)}{st} | "
            f"{_fmt(c['solve_wall_s'] / fs if fs else None)} | "
            f"{_fmt(hs / fs if fs and hs else None)} | "
            f"{_fmt(c.get('solve_cpu_s'), 1)} / {_fmt(fl.get('solve_cpu_s'), 1)} | "
            f"{'-' if ok is None else f'{d:.1e}'} | {c['peak_mb']:.0f} / "
            f"{_fmt(fl.get('peak_mb'), 0)} | {fl['load_before']:.1f}/{fl['load_after']:.1f} |"
        )
    return L


def _stage_rows(recs: list[dict[str, Any]]) -> list[str]:
    L = [
        "## Per-stage time (s) and peak memory, ours",
        "",
        "| size | formulation | columns | load | validate | build | hand-over | solve | results "
        "| check | report write | solve() wall | CPU s | peak MB |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
        "| ---: | ---: |",
    ]
    keys = ("load", "validate", "build", "handover", "solve", "results", "check", "report")
    for r in recs:
        for form in ("compact", "reference"):
            o = r.get(form)
            if not o or "error" in o:
                continue
            s = o["stages"]
            L.append(
                f"| {r['size']} | {form} | {o['n_variables']:,} | "
                + " | ".join(_fmt(s.get(k), 3) for k in keys)
                + f" | {o['solve_wall_s']:.2f} | {_fmt(o.get('solve_cpu_s'), 1)} "
                f"| {o['peak_mb']:.0f} |"
            )
    L += [
        "",
        "Peak memory is `ru_maxrss` of the worker process (whole process: interpreter,",
        "imports, pandas, the HiGHS copy of the LP), each worker in a fresh subprocess.",
    ]
    return L


def _growth_rows(recs: list[dict[str, Any]]) -> list[str]:
    form = default_formulation()
    L = [
        f"## Cost growth, ours ({form})",
        "",
        "| size | columns | build s | solve() wall s | build us/column |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    pts = []
    for r in recs:
        o = r.get(form)
        if not o or "error" in o:
            continue
        b = o["stages"]["build"]
        L.append(
            f"| {r['size']} | {o['n_variables']:,} | {b:.3f} | {o['solve_wall_s']:.2f} | "
            f"{1e6 * b / o['n_variables']:.2f} |"
        )
        if r["size"] != "small":
            pts.append((o["n_variables"], b, o["solve_wall_s"], o["status"] == "optimal"))
    if len(pts) >= 2:
        opt = [p for p in pts if p[3]]
        L += [
            "",
            "Log-log slope vs columns (sizes other than small): build "
            f"{loglog_slope([p[0] for p in pts], [p[1] for p in pts]):.2f}; end to end "
            f"{loglog_slope([p[0] for p in opt], [p[2] for p in opt]):.2f} "
            "(optimal sizes only).",
        ]
    return L


def _batch_rows(batch: dict[str, Any] | None) -> list[str]:
    L = [f"## Batch: {(batch or {}).get('n', 20)}-scenario sweep at the default size", ""]
    if batch is None:
        return L + ["Not run."]
    if "error" in batch:
        return L + [f"Error: {batch['error'][-300:]}"]
    L += ["| mode | per-scenario s | stages (mean s) |", "| --- | ---: | --- |"]
    for tag in ("rebuild", "reuse"):
        st = batch.get(f"{tag}_stages", {})
        L.append(
            f"| {tag} | {_fmt(batch.get(f'{tag}_s'), 3)} | "
            + ", ".join(f"{k} {x:.3f}" for k, x in st.items())
            + " |"
        )
    if batch.get("warm_s") is not None:
        L.append(
            f"| solver warm start alone | {batch['warm_s']:.3f} | "
            "patch_model + changeColsCost/changeRowsBounds + Highs.run on one retained "
            f"Highs object; objectives match rebuild to {batch['warm_max_rel_diff']:.1e} |"
        )
    if batch.get("max_rel_diff") is not None:
        L.append(
            f"\nObjectives rebuild vs reuse agree to {batch['max_rel_diff']:.1e} "
            f"(relative, worst case). Load before / after: {_fmt(batch.get('load_before'))} / "
            f"{_fmt(batch.get('load_after'))}."
        )
    return L


def render(
    recs: list[dict[str, Any]],
    batch: dict[str, Any] | None,
    info: dict[str, str],
    verdicts: list[tuple[str, str, str]],
    notes: list[str],
    hedge: list[dict[str, Any]] | None = None,
) -> str:
    """The generated part of RESULTS.md (hand-written text below :data:`KEEP_MARKER` is kept)."""
    L = [
        "# Benchmark results",
        "",
        "Generated by `python -m benchmarks.run` on "
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} "
        f"(sizes {', '.join(r['size'] for r in recs)}"
        f"{', batch' if batch else ''}; run started {info.get('run_started_utc', '?')}).",
        "Method: see the docstring of `benchmarks/run.py`; instances from "
        "`benchmarks/generate.py`; HiGHS options from `benchmarks/solver_options.py` "
        "(= `optimizer.plan.highs`'s).",
        "",
        "## Targets",
        "",
        "| target | verdict | numbers |",
        "| --- | --- | --- |",
    ]
    L += [f"| {t} | {v} | {n} |" for t, v, n in verdicts]
    L += ["", "## Machine", "", "| item | value |", "| --- | --- |"]
    L += [f"| {k} | {v} |" for k, v in info.items()]
    L += [
        "",
        _load_sentence(recs, batch),
        "",
    ]
    parts = (_same_problem_rows, _side_by_side_rows, _floor_compact_rows, _stage_rows, _growth_rows)
    for part in parts:
        L += part(recs) + [""]
    L += _batch_rows(batch)
    L += _hedge_rows(hedge)
    if notes:
        L += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    return "\n".join(L) + "\n"


def _hedge_phases(r: dict[str, Any]) -> str:
    t = r.get("timings_s") or {}
    if r.get("method") == "extensive":
        return f"build {_fmt(r.get('build_s'), 0)}, solve {_fmt(r.get('solve_s'), 0)}"
    names = ("setup", "mean_value", "wait_and_see", "ev", "iterations", "eev")
    return ", ".join(f"{k.replace('_', '-')} {t[k]:.0f}" for k in names if k in t)


def _hedge_rows(hedge: list[dict[str, Any]] | None) -> list[str]:
    """The hedged-plan table from ``python -m benchmarks.hedge`` JSON lines (none: nothing)."""
    if not hedge:
        return []
    L = [
        "",
        "## Hedged plan: L-shaped decomposition on Dask vs extensive form",
        "",
        "From `python -m benchmarks.hedge` (method in its docstring): default dataset, base "
        "`neutral`, seed 0, capacity first stage; each method in a fresh subprocess; L-shaped "
        "on a local Dask cluster of 2 workers, its peak memory = client + workers.",
        "",
        "| N | method | status | iterations | UB (plan cost) USD | LB USD | gap | wall s "
        "(phases) | peak MB | load before / after |",
        "| ---: | --- | --- | ---: | ---: | ---: | ---: | --- | ---: | --- |",
    ]
    for r in sorted(hedge, key=lambda r: (r.get("samples", 0), r.get("method", ""))):
        if "error" in r:
            L.append(
                f"| {r.get('samples')} | {r.get('method')} | error | - | - | - | - | - | - | - |"
            )
            continue
        lshaped = r.get("method") == "lshaped"
        status = (
            ("converged" if r.get("converged") else r.get("status", "not converged"))
            if lshaped
            else str(r.get("status", "-"))
        )
        ub, lb = r.get("objective_usd"), r.get("lower_bound_usd")
        L.append(
            f"| {r['samples']} | {r['method']} | {status} | {r.get('iterations', '-')} | "
            f"{_fmt_e(ub)} | {_fmt_e(lb)} | {_fmt_e(r.get('gap_rel'), 1)} | "
            f"{_fmt(r.get('wall_s'), 0)} ({_hedge_phases(r)}) | {_fmt(r.get('peak_mb'), 0)} | "
            f"{_fmt(r.get('load_before'), 1)} / {_fmt(r.get('load_after'), 1)} |"
        )
    vals = [r for r in hedge if r.get("method") == "lshaped" and r.get("vss_usd") is not None]
    if vals:
        L += [
            "",
            "| N | WS USD | EEV USD | VSS USD | EVPI USD |",
            "| ---: | ---: | ---: | ---: | ---: |",
        ]
        L += [
            f"| {r['samples']} | {_fmt_e(r.get('wait_and_see_usd'))} | {_fmt_e(r.get('eev_usd'))} "
            f"| {_fmt_e(r.get('vss_usd'))} | {_fmt_e(r.get('evpi_usd'))} |"
            for r in sorted(vals, key=lambda r: r["samples"])
        ]
    return L


def _fmt_e(v: Any, digits: int = 7) -> str:
    return "-" if v is None or not isinstance(v, int | float) else f"{v:.{digits}e}"


def _load_sentence(recs: list[dict[str, Any]], batch: dict[str, Any] | None) -> str:
    """How busy the machine was: the highest 1-minute load seen before or after a worker."""
    loads = [
        float(w[k])
        for r in recs
        for w in r.values()
        if isinstance(w, dict)
        for k in ("load_before", "load_after")
        if isinstance(w.get(k), int | float)
    ]
    if batch:
        loads += [
            float(batch[k]) for k in ("load_before", "load_after") if batch.get(k) is not None
        ]
    top = max(loads, default=float("nan"))
    if top <= 2.5:
        return (
            f"Highest 1-minute load seen before or after a worker: {top:.2f} on 2 cores (one "
            "worker at a time, HiGHS on one thread): wall time is close to CPU time."
        )
    return (
        f"Highest 1-minute load seen before or after a worker: {top:.2f} on 2 cores: the "
        "machine was shared during the run, so wall times are noisy; CPU seconds are in the "
        "side-by-side and per-stage tables."
    )


def merge_runs(docs: Sequence[dict[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    """One document from several ``--json`` files of runs on this machine.

    Records are taken by size in :data:`benchmarks.generate.SIZES` order (a size in two
    files: the later file wins); the batch section from the last file that has one; the
    machine table from the first file, with each run's start time and contents added.

    Raises
    ------
    ValueError
        When no file holds a record or a batch section.
    """
    from benchmarks.generate import SIZES

    by_size: dict[str, dict[str, Any]] = {}
    batch = None
    info = dict(docs[0]["machine"]) if docs else {}
    runs = []
    for name, d in zip(names, docs, strict=True):
        for r in d["records"]:
            by_size[r["size"]] = r
        batch = d.get("batch") or batch
        what = [r["size"] for r in d["records"]] + (["batch"] if d.get("batch") else [])
        runs.append(
            f"{Path(name).name}: started {d['machine'].get('run_started_utc', '?')}, "
            f"load {d['machine'].get('load_1min', '?')} at start, {', '.join(what) or 'nothing'}"
        )
    if not by_size and batch is None:
        raise ValueError(f"no benchmark record in {', '.join(names)}")
    order = list(SIZES)
    recs = sorted(by_size.values(), key=lambda r: order.index(r["size"]))
    if len(docs) > 1:
        info["runs"] = " · ".join(runs)
        info["run_started_utc"] = docs[0]["machine"].get("run_started_utc", "?")
    return {"records": recs, "batch": batch, "machine": info}


def kept_text(path: Path) -> str:
    """The hand-written tail of an existing RESULTS.md (from :data:`KEEP_MARKER` on), or ""."""
    if not path.exists():
        return ""
    text = path.read_text()
    i = text.find(KEEP_MARKER)
    return "" if i < 0 else text[i:]


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: run the benchmark and write RESULTS.md; exit 0 (targets are not asserted)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--worker" in argv:
        _worker_main(argv)
        return 0
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.run", description=__doc__.split("\n")[0]
    )
    ap.add_argument(
        "--sizes", default="default,medium,large,xl,xxl", help="comma-separated names of SIZES"
    )
    # the tracked benchmarks/RESULTS.md is rewritten only when given as --out
    ap.add_argument("--out", default=str(ROOT / "bench_out" / "RESULTS.md"))
    ap.add_argument("--json", default=None, help="also write the raw records here")
    ap.add_argument(
        "--time-limit", type=float, default=900.0, help="HiGHS time limit per solve (s)"
    )
    ap.add_argument("--xl-time-limit", type=float, default=600.0, help="HiGHS time limit at xl (s)")
    ap.add_argument(
        "--peer-solve-sizes",
        default="small,default,medium,large",
        help="sizes where the floor and linopy always solve (elsewhere: see the docstring)",
    )
    ap.add_argument(
        "--xl-reference-time-limit",
        type=float,
        default=None,
        help="HiGHS time limit of ours (reference) at xl (default: --xl-time-limit)",
    )
    ap.add_argument(
        "--compact-only-sizes",
        default="xxl,xxl96",
        help="sizes where only ours (compact) and the floor on its arrays run",
    )
    ap.add_argument("--batch", type=int, default=20, help="sweep size (0 = skip)")
    ap.add_argument("--hedge", default=None, help="JSON lines of python -m benchmarks.hedge")
    ap.add_argument(
        "--from-json",
        default=None,
        help="re-render RESULTS.md from --json files (comma-separated: runs of parts, merged)",
    )
    a = ap.parse_args(argv)
    hedge = _read_hedge(a.hedge)
    if a.from_json:
        names = [x.strip() for x in a.from_json.split(",") if x.strip()]
        doc = merge_runs([json.loads(Path(x).read_text()) for x in names], names)
        a.json = None
        for t, v, n in _write(a, doc["records"], doc["batch"], doc["machine"], hedge):
            print(f"{v:4s}  {t}: {n}")
        return 0
    sizes = [s.strip() for s in a.sizes.split(",") if s.strip()]
    peers = {s.strip() for s in a.peer_solve_sizes.split(",")}
    compact_only = {s.strip() for s in a.compact_only_sizes.split(",")}
    recs: list[dict[str, Any]] = []
    info = machine_info()
    batch = None
    if a.batch:
        print(f"[batch] {a.batch} scenarios at default size ...", flush=True)
        batch = _spawn(["--worker", "batch", "--size", "default", "--n", str(a.batch)], 1800)
        print(f"[batch] {batch}", flush=True)
    for s in sizes:
        tl = a.xl_time_limit if s == "xl" else a.time_limit
        ref_tl = a.xl_reference_time_limit if s == "xl" else None
        cap = tl * 1.5 + 300
        recs.append(bench_size(s, tl, cap, _log, s in peers, ref_tl, s in compact_only))
        _write(a, recs, batch, info, hedge)  # partial results survive an interrupted run
    verdicts = _write(a, recs, batch, info, hedge)
    print()
    for t, v, n in verdicts:
        print(f"{v:4s}  {t}: {n}")
    print(f"\nwrote {a.out}")
    return 0


def _log(msg: str) -> None:
    print(f"{datetime.now(UTC).strftime('%H:%M:%S')} {msg}", flush=True)


def _read_hedge(path: str | None) -> list[dict[str, Any]] | None:
    if not path:
        return None
    return [json.loads(x) for x in Path(path).read_text().splitlines() if x.startswith("{")]


def _notes(recs: list[dict[str, Any]]) -> list[str]:
    notes = []
    for r in recs:
        ok, d = agreement(r)
        if ok is False:
            notes.append(
                f"{r['size']}: ours (reference), floor and linopy differ by {d:.2e} "
                "(relative): NOT the same LP, ratios are void."
            )
        ok, d = formulations_agree(r)
        if ok is False:
            notes.append(
                f"{r['size']}: compact and reference objectives differ by {d:.2e} (relative) "
                f"> {FORMULATION_REL_TOL:g}: NOT the same problem."
            )
        for form in ("compact", "reference"):
            o = r.get(form, {})
            if o and "error" not in o and o.get("status") != "optimal":
                notes.append(
                    f"{r['size']}: ours ({form}) ended with status {o['status']} "
                    f"(HiGHS time limit {_fmt(o.get('time_limit_s'), 0)} s); its solve figures "
                    "are lower bounds."
                )
            if o and "error" in o:
                notes.append(f"{r['size']}: ours ({form}) failed: {o['error'].strip()[-200:]}")
    return notes


def _write(
    a: argparse.Namespace,
    recs: list[dict[str, Any]],
    batch: dict[str, Any] | None,
    info: dict[str, str],
    hedge: list[dict[str, Any]] | None = None,
) -> list[tuple[str, str, str]]:
    verdicts = targets(recs, batch, hedge)
    text = render(recs, batch, info, verdicts, _notes(recs), hedge)
    kept = kept_text(Path(a.out))
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(text + ("\n" + kept if kept else ""))
    if a.json:
        Path(a.json).write_text(
            json.dumps({"records": recs, "batch": batch, "machine": info}, indent=1, default=float)
        )
    return verdicts


if __name__ == "__main__":
    raise SystemExit(main())
