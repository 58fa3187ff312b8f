"""The HiGHS bulk seam: the model's sparse arrays handed to ``highspy`` in one call.

The model's arrays are passed to ``highspy`` in bulk (``Highs.passModel`` with a
column-wise matrix). PuLP's own ``pulp.HiGHS`` adds rows and columns one at a time
through Python, which is far slower on large models, so it is not used on this
path. LPs above ``IPM_THRESHOLD_COLUMNS`` columns use HiGHS's interior point method
(the dual simplex stalls on large degenerate instances); smaller ones the dual
simplex. Crossover to a basic solution runs only when the interior point result is
imprecise (``run_crossover="choose"``, :func:`lp_algorithm_options`): at the
extra-large benchmark size crossover and its simplex clean-up cost 275 s on top of
a 444 s interior point solve (``benchmarks/RESULTS.md``); a
:class:`optimizer.plan.highs_session.HighsSession`, whose warm starts need a basis,
always runs it.

Every highspy call that returns a status goes through :func:`highs_ok`, so a refused
model is never read as an (empty) optimal one; a solution is read only when HiGHS
says one exists (:func:`_read_highs`).
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
from typing import Any

import numpy as np

from optimizer.lp.frames import column_values
from optimizer.plan.model import PlanningModel
from optimizer.plan.options import RawSolution, SolveOptions, Status

#: LPs with more columns than this are solved by HiGHS's interior point method with
#: crossover instead of the dual simplex (see the module docstring). Measured on this
#: 2-core machine under load: the compact generated medium model (42k columns) solves in
#: 14 s by IPM against 45 s by the dual simplex (the reference, 80k columns: 27 s by
#: IPM); at the default sizes (11-14k columns) both take 1-4 s, so those keep the simplex.
IPM_THRESHOLD_COLUMNS = 20_000


#: HiGHS ``simplex_scale_strategy`` of a dual simplex run that starts from the optimal
#: basis of another LP of the same shape (a sampled scenario from the mean-value
#: problem's, a case the batch could not patch from the case before): 4, each row and
#: column scaled by its largest value, instead of HiGHS's default, equilibration (2).
#: From such a start the dual simplex took half the iterations to the same optima: at
#: 100 sampled scenarios of the default dataset, the hedge's wait-and-see solves 276k
#: simplex iterations against 616k and its EV evaluations 112k against 222k
#: (benchmarks/RESULTS.md, tenth pass). A cold solve gains nothing (the default
#: dataset's LP: 0.51 s against 0.43 s), so cold solves keep HiGHS's default.
FOREIGN_BASIS_SCALE_STRATEGY = 4

#: HiGHS options of every simplex run of a batch's retained instance
#: (:class:`optimizer.plan.highs_session.HighsSession` with ``tuned=True``): its cold
#: solve and the warm runs that restart from its last optimal basis after a case's
#: costs, bounds and right-hand sides changed. Scaled by largest value (as
#: :data:`FOREIGN_BASIS_SCALE_STRATEGY`) and without HiGHS's cost perturbation, which on
#: such a start perturbs a nearly optimal basis and then cleans the perturbation up
#: again; the cold solve takes them too, as a scaling change between runs costs the
#: retained instance most of the gain. Measured on 10-case sweeps (demand, supply
#: capacity and energy prices scaled; ``benchmarks.run.sweep_overrides``), mean simplex
#: iterations and CPU s of a warm run: the bundled dataset 1,445 and 0.50 s with HiGHS's
#: defaults, 1,025 and 0.31 s scaled by largest value, 817 and 0.35 s without
#: perturbation, 439 and 0.19 s with both; the generated default size 379 and 0.085 s,
#: 227 and 0.060 s with both (benchmarks/RESULTS.md, eleventh pass). The same optima.
#: Without perturbation the dual simplex has less protection from stalling on a
#: degenerate LP, so the session caps each run's iterations
#: (:meth:`optimizer.plan.highs_session.HighsSession.run`) and solves a capped case
#: cold, as any warm run that does not end optimal is.
BATCH_SIMPLEX_OPTIONS: dict[str, Any] = {
    "simplex_scale_strategy": FOREIGN_BASIS_SCALE_STRATEGY,
    "dual_simplex_cost_perturbation_multiplier": 0.0,
}

_HIGHS_BANNER_SHOWN = False


def foreign_start_options() -> dict[str, Any]:
    """HiGHS options of a run that starts from another LP's optimal basis.

    Returns
    -------
    dict of str to Any
        The dual simplex (a basis start needs the simplex, whatever the LP's size) and
        :data:`FOREIGN_BASIS_SCALE_STRATEGY`.
    """
    return {"solver": "simplex", "simplex_scale_strategy": FOREIGN_BASIS_SCALE_STRATEGY}


def new_highs() -> Any:
    """Return a silent ``highspy.Highs`` instance (``output_flag`` off).

    HiGHS prints a copyright banner from C on the first construction in a process,
    before any option can be set; that one construction runs with file descriptor 1
    pointed at ``/dev/null`` so the CLI's summary stays clean.
    """
    import highspy

    global _HIGHS_BANNER_SHOWN
    if _HIGHS_BANNER_SHOWN:
        h = highspy.Highs()
    else:
        sys.stdout.flush()
        saved = os.dup(1)
        try:
            with open(os.devnull, "w") as null:
                os.dup2(null.fileno(), 1)
                h = highspy.Highs()
                ctypes.CDLL(None).fflush(None)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        _HIGHS_BANNER_SHOWN = True
    highs_ok(h.setOptionValue("output_flag", False), "option output_flag=False")
    return h


def _highs_lp(model: PlanningModel, *, lp_only: bool = False) -> tuple[Any, bool]:
    """Return the model as a ``highspy.HighsLp`` (column-wise matrix) and whether it is a MIP."""
    import highspy

    var = model.variables
    n, m = model.n_variables, model.n_constraints
    csc = model.matrix.tocsc()
    lo, hi = model.row_bounds()
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = m
    lp.col_cost_ = column_values(var, "cost", dtype=float)
    lp.col_lower_ = column_values(var, "lb", dtype=float)
    lp.col_upper_ = np.where(np.isfinite(var["ub"]), var["ub"], highspy.kHighsInf).astype(float)
    lp.row_lower_ = np.where(np.isfinite(lo), lo, -highspy.kHighsInf).astype(float)
    lp.row_upper_ = np.where(np.isfinite(hi), hi, highspy.kHighsInf).astype(float)
    lp.offset_ = model.objective_constant
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = csc.indptr.astype(np.int32)
    lp.a_matrix_.index_ = csc.indices.astype(np.int32)
    lp.a_matrix_.value_ = csc.data.astype(float)
    is_mip = bool(var["integer"].any()) and not lp_only
    if is_mip:
        lp.integrality_ = [
            highspy.HighsVarType.kInteger if b else highspy.HighsVarType.kContinuous
            for b in column_values(var, "integer")
        ]
    return lp, is_mip


def lp_algorithm_options(n_columns: int, *, basis: bool = False) -> dict[str, str]:
    """HiGHS's LP algorithm options for an LP of ``n_columns`` columns.

    Parameters
    ----------
    n_columns : int
        Columns of the LP.
    basis : bool
        The caller needs an optimal basis (warm starts): crossover always runs.

    Returns
    -------
    dict of str to str
        Empty up to :data:`IPM_THRESHOLD_COLUMNS` (HiGHS's default, the dual simplex);
        above it ``solver="ipx"`` and ``run_crossover`` ``"choose"`` (crossover only
        when the interior point result is imprecise), or ``"on"`` with ``basis``.
        Measured (benchmarks/RESULTS.md, extra-large, compact formulation): the
        interior point solve ends optimal at 444 s and crossover plus its simplex
        clean-up take another 275 s; the optimal objective is the same either way
        (interior point gap below 1e-8 relative).

    Notes
    -----
    The interior point method is named, ``"ipx"``, not ``"ipm"``: a HiGHS built with
    HiPO (the ``highspy-extras`` package) reads ``"ipm"`` as HiPO, which took 82-117 s
    on the large benchmark instance against IPX's 16 s (benchmarks/RESULTS.md, row 49).
    """
    if n_columns <= IPM_THRESHOLD_COLUMNS:
        return {}
    return {"solver": "ipx", "run_crossover": "on" if basis else "choose"}


def _configure_highs(
    h: Any, options: SolveOptions, *, is_mip: bool, n: int, basis: bool = False
) -> None:
    """Set time limit, threads, MIP gap and the LP algorithm (see the module docstring)."""
    values: list[tuple[str, Any]] = [("mip_rel_gap", float(options.mip_gap))]
    if options.time_limit_s is not None:
        values.append(("time_limit", float(options.time_limit_s)))
    if options.threads is not None:
        values.append(("threads", int(options.threads)))
    if not is_mip:
        values += list(lp_algorithm_options(n, basis=basis).items())
    for name, value in values:
        highs_ok(h.setOptionValue(name, value), f"option {name}={value!r}")


class HighsRefusedError(RuntimeError):
    """HiGHS returned an error status from a call (the model or an option was refused)."""


def highs_ok(status: Any, call: str, reason: str = "") -> None:
    """Raise :class:`HighsRefusedError` when a highspy call returned ``HighsStatus.kError``.

    Every highspy call that returns a ``HighsStatus`` goes through this check, so a
    refused model is never read as an (empty) optimal one. ``kWarning`` is accepted.
    """
    import highspy

    if status == highspy.HighsStatus.kError:
        raise HighsRefusedError(f"HiGHS refused {call}" + (f": {reason}" if reason else ""))


def highs_refusal_reason(lp: Any) -> str:
    """Say, in the model's words, why HiGHS may refuse a ``HighsLp``; "" when nothing is found.

    Checks what HiGHS rejects in ``passModel``: a NaN anywhere, a cost of +-inf
    (|value| >= 1e20, HiGHS's infinity), a lower bound of +inf or an upper bound of
    -inf, a lower bound above its upper bound, and matrix entries of 1e15 or more
    (HiGHS's ``large_matrix_value``).
    """
    inf = 1e20  # HiGHS's default ``infinite_bound`` and ``infinite_cost``
    problems: list[str] = []

    def scan(name: str, values: Any, bad: Any) -> None:
        arr = np.asarray(values, dtype=float)
        idx = np.flatnonzero(bad(arr)) if len(arr) else np.zeros(0, dtype=int)
        if len(idx):
            problems.append(f"{len(idx)} {name} (first: index {idx[0]}, value {arr[idx[0]]:.6g})")

    scan("NaN or infinite costs", lp.col_cost_, lambda a: ~(np.abs(a) < inf))
    bounds = (("column", lp.col_lower_, lp.col_upper_), ("row", lp.row_lower_, lp.row_upper_))
    for what, lo, hi in bounds:
        scan(f"{what} lower bounds of +inf or NaN", lo, lambda a: ~(a < inf))
        scan(f"{what} upper bounds of -inf or NaN", hi, lambda a: ~(a > -inf))
        lo_a, hi_a = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        scan(f"{what}s whose lower bound exceeds the upper", lo_a - hi_a, lambda a: a > 0)
    scan("matrix entries of 1e15 or more", lp.a_matrix_.value_, lambda a: ~(np.abs(a) < 1e15))
    return "; ".join(problems)


def _highs_pass(h: Any, lp: Any) -> None:
    """``passModel`` with its status checked; a refusal names what HiGHS cannot take."""
    highs_ok(h.passModel(lp), "the model", highs_refusal_reason(lp))


def _highs_run(h: Any) -> Any:
    """Run HiGHS; re-run without presolve when presolve cannot tell infeasible from unbounded.

    Raises
    ------
    HighsRefusedError
        When ``run`` returns an error status.
    """
    import highspy

    highs_ok(h.run(), "to solve the model")
    ms = h.getModelStatus()
    if ms == highspy.HighsModelStatus.kUnboundedOrInfeasible:
        highs_ok(h.setOptionValue("presolve", "off"), "option presolve=off")
        highs_ok(h.run(), "to solve the model without presolve")
        ms = h.getModelStatus()
        highs_ok(h.setOptionValue("presolve", "choose"), "option presolve=choose")
    return ms


def _refused(exc: HighsRefusedError, handover_s: float, solve_s: float) -> RawSolution:
    """Return a :class:`RawSolution` with ``Status.error`` and HiGHS's refusal as its message."""
    return RawSolution(Status.error, None, None, None, str(exc), handover_s, solve_s)


def _read_highs(
    h: Any, ms: Any, n: int, m: int, *, is_mip: bool, handover_s: float, solve_s: float
) -> RawSolution:
    """Map HiGHS's model status to a :class:`Status` and read values only when they exist."""
    import highspy

    info = h.getInfo()
    has_sol = int(info.primal_solution_status) == 2
    S = highspy.HighsModelStatus
    if ms == S.kOptimal:
        # "optimal" without a primal solution is not a plan (seen after warm starts)
        status = Status.optimal if has_sol else Status.error
    elif ms == S.kInfeasible:
        status, has_sol = Status.infeasible, False
    elif ms in (S.kUnbounded, S.kUnboundedOrInfeasible):
        status, has_sol = Status.unbounded, False
    elif ms == S.kTimeLimit:
        status = Status.time_limit_feasible if has_sol else Status.time_limit_no_solution
    elif ms == S.kModelEmpty and n == 0:
        status, has_sol = Status.optimal, True
    else:  # includes an "empty" model when columns were passed: HiGHS dropped it
        status = Status.error
    x = dual = None
    obj = None
    if has_sol:
        sol = h.getSolution()
        x = np.asarray(sol.col_value, dtype=float) if n else np.zeros(0)
        if sol.dual_valid and not is_mip:
            dual = np.asarray(sol.row_dual, dtype=float) if m else np.zeros(0)
        obj = float(info.objective_function_value)
    bound = float(info.mip_dual_bound) if is_mip and has_sol else None
    msg = h.modelStatusToString(ms)
    if ms == S.kOptimal and not has_sol:
        msg += " model status without a primal solution"
    return RawSolution(status, x, dual, obj, msg, handover_s, solve_s, mip_bound=bound)


def _run_highs(
    model: PlanningModel,
    options: SolveOptions,
    *,
    lp_only: bool = False,
    start: np.ndarray | None = None,
) -> RawSolution:
    t0 = time.perf_counter()
    n, m = model.n_variables, model.n_constraints
    lp, is_mip = _highs_lp(model, lp_only=lp_only)
    h = new_highs()
    try:
        _configure_highs(h, options, is_mip=is_mip, n=n)
        _highs_pass(h, lp)
        if start is not None:
            _highs_set_start(h, start)
    except HighsRefusedError as exc:
        return _refused(exc, time.perf_counter() - t0, 0.0)
    t1 = time.perf_counter()
    try:
        ms = _highs_run(h)
    except HighsRefusedError as exc:
        return _refused(exc, t1 - t0, time.perf_counter() - t1)
    t2 = time.perf_counter()
    return _read_highs(h, ms, n, m, is_mip=is_mip, handover_s=t1 - t0, solve_s=t2 - t1)


def _highs_set_start(h: Any, x: np.ndarray) -> None:
    """Hand HiGHS a full primal solution (every column) as the MIP start (``setSolution``)."""
    import highspy

    sol = highspy.HighsSolution()
    sol.col_value = np.asarray(x, dtype=float).tolist()
    sol.value_valid = True
    highs_ok(h.setSolution(sol), "the MIP start (setSolution)")
