"""Run the chosen solver on a built model: bulk HiGHS or PuLP, MIP start, fixed-integer duals.

* ``"highs"``: the bulk path (:mod:`optimizer.plan.highs`); in cluster mode the MIP
  gets a warm start from its LP relaxation (:mod:`optimizer.plan.warm_start`).
* any PuLP solver (``PULP_CBC_CMD``, ``GLPK_CMD``, ``SCIP_PY``, ``HiGHS`` ...; ``"cbc"``
  is ``PULP_CBC_CMD``; ``HiGHS`` is PuLP's highspy interface, never the bulk path, and
  ``PlanResult.solver`` names the one that ran): the model is built as a PuLP
  ``LpProblem`` with readable names (:func:`optimizer.plan.pulp_io.build_pulp`) and solved
  in its own temporary folder (:func:`optimizer.plan.pulp_solve.run_pulp`).

In integer mode the plan is the MIP's incumbent (integer columns rounded) and the
row duals come from the LP re-solved with the integer columns fixed at it; every
solver call gets what remains of the solve's deadline (:mod:`optimizer.plan.deadline`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from optimizer.lp.frames import column_values
from optimizer.plan.deadline import (
    DUALS_RESERVE_SHARE,
    MIN_STAGE_S,
    WARM_START_SHARE,
    start_deadline,
    time_left,
    until,
)
from optimizer.plan.highs import _run_highs
from optimizer.plan.model import PlanningModel
from optimizer.plan.options import RawSolution, SolveOptions, Status
from optimizer.plan.warm_start import WarmStart, _fix_columns, cluster_warm_start


def _run_pulp(model: PlanningModel, options: SolveOptions, *, lp_only: bool = False) -> RawSolution:
    from optimizer.plan.pulp_solve import run_pulp

    return run_pulp(model, options, lp_only=lp_only)


def _duals_reserve(deadline: float | None, warm: WarmStart | None) -> float:
    """Seconds the MIP leaves for the LP with the integers fixed (:data:`DUALS_RESERVE_SHARE`)."""
    left = time_left(deadline)
    if not np.isfinite(left):
        return 0.0
    reserve = DUALS_RESERVE_SHARE * max(left, 0.0)
    if warm is not None and warm.fixed_lp_s is not None:
        reserve = max(reserve, 1.5 * warm.fixed_lp_s)
    return min(reserve, 0.5 * max(left, 0.0))


def _fixed_integer_duals(
    model: PlanningModel,
    raw: RawSolution,
    options: SolveOptions,
    deadline: float | None,
    run: Callable[..., RawSolution],
) -> RawSolution:
    """Return the incumbent, integers rounded, with the duals of the LP with them fixed."""
    assert raw.x is not None
    ints = column_values(model.variables, "integer")
    x = raw.x.copy()
    x[ints] = np.round(raw.x[ints])
    if time_left(deadline) <= MIN_STAGE_S:
        note = "the time limit ran out before the LP with the integers fixed could run"
        return replace(raw, x=x, row_dual=None, dual_note=note)
    fixed = _fix_columns(model, np.flatnonzero(ints), x[ints])
    lp = run(fixed, until(options, deadline), lp_only=True)
    note = lp.dual_note
    if lp.x is None:
        note = f"the LP with the integers fixed ended {lp.message!r}"
        if lp.status == Status.time_limit_no_solution:
            note += " at the time limit of the whole solve"
    return replace(
        raw,
        x=x,
        row_dual=lp.row_dual,
        dual_note=note,
        solve_s=raw.solve_s + lp.solve_s,
        handover_s=raw.handover_s + lp.handover_s,
    )


def run_solver(
    model: PlanningModel,
    options: SolveOptions,
    *,
    lp_only: bool = False,
    deadline: float | None = None,
) -> RawSolution:
    """Solve a built model with the chosen solver; in integer mode fix integers for duals.

    Parameters
    ----------
    model : PlanningModel
    options : SolveOptions
    lp_only : bool
        Relax integrality.
    deadline : float, optional
        ``time.monotonic()`` reading by which every solver call here ends: the
        cluster warm start (at most :data:`WARM_START_SHARE` of the time left), the
        LP or MIP (which leaves :func:`_duals_reserve` for the next step), and the LP
        with the integers fixed. None: ``options.time_limit_s`` from now.

    Returns
    -------
    RawSolution
        Values (column units) and row duals (d objective / d rhs) when they exist.
        In integer mode the values are the MIP's incumbent (integer columns
        rounded) and the duals those of the LP with the integers fixed at it.

    Raises
    ------
    optimizer.plan.solvers.SolverUnavailableError
        ``options.solver`` is unknown or not usable on this machine.
    """
    from optimizer.plan.solvers import resolve_solver

    deadline = start_deadline(options) if deadline is None else deadline
    bulk = resolve_solver(options.solver) == "highs"
    run = _run_highs if bulk else _run_pulp
    is_mip = bool(model.variables["integer"].any()) and not lp_only
    ints = column_values(model.variables, "integer")
    clusters_only = bool((column_values(model.variables, "kind")[ints] == "cluster").all())
    if is_mip and bulk and options.mip_start and clusters_only:
        left = time_left(deadline)
        warm_by = None if deadline is None else time.monotonic() + WARM_START_SHARE * left
        warm = cluster_warm_start(model, options, deadline=warm_by)
        reserve = _duals_reserve(deadline, warm)
        raw = _run_highs(model, until(options, deadline, reserve), start=warm.x)
        raw = replace(
            raw,
            message=f"{raw.message}; {warm.message}",
            solve_s=raw.solve_s + warm.solve_s,
        )
    else:
        reserve = _duals_reserve(deadline, None) if is_mip else 0.0
        raw = run(model, until(options, deadline, reserve), lp_only=lp_only)
    if is_mip and raw.x is not None:
        raw = _fixed_integer_duals(model, raw, options, deadline, run)
    return raw
