"""Solve a model with rows and columns appended after assembly, tabulated as the base model.

The CVaR rows (:mod:`optimizer.plan.risk`) and the chance rows
(:mod:`optimizer.plan.chance`) span scenarios, so they are appended to a built
(stochastic) model rather than defined per scenario. The extended model is solved;
its first ``n`` columns and ``m`` rows are the base model's, so the base model's
result tables, checker and shadow prices read the solution cut back to them (the
shadow prices are then those of the extended objective: with a risk weight, the
derivative of ``E + L * CVaR``). The appended columns' values are returned beside.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from optimizer.plan.options import SolveOptions
from optimizer.plan.plan_result import PlanResult, _scenario_result
from optimizer.plan.raw_solve import run_solver

__all__ = ["AppendedSolve", "solve_appended"]


@dataclass(frozen=True)
class AppendedSolve:
    """What :func:`solve_appended` returns.

    Attributes
    ----------
    results : list of PlanResult
        One per scenario, tabulated with the base model.
    extra : ndarray or None
        Values of the appended columns, in order (None without a solution).
    mip_gap : float or None
        Relative gap of the extended model when it has integer columns.
    """

    results: list[PlanResult]
    extra: np.ndarray | None
    mip_gap: float | None


def solve_appended(
    base: Any,
    extended: Any,
    options: SolveOptions,
    *,
    build_s: float = 0.0,
    deadline: float | None = None,
) -> AppendedSolve:
    """Solve ``extended`` and tabulate each scenario with ``base`` (module docstring).

    Parameters
    ----------
    base : PlanningModel
    extended : PlanningModel
        ``base`` with columns and rows appended after its own.
    options : SolveOptions
    build_s : float
        Build time to report (s).
    deadline : float, optional
        ``time.monotonic()`` reading by which the solve ends.

    Returns
    -------
    AppendedSolve
    """
    from optimizer.plan.plan_result import mip_gap

    raw = run_solver(extended, options, deadline=deadline)
    n, m = base.n_variables, base.n_constraints
    x = raw.x
    gap = mip_gap(raw.solver_objective, raw.mip_bound)
    cut = replace(
        raw,
        x=None if x is None else np.asarray(x)[:n],
        row_dual=None if raw.row_dual is None else np.asarray(raw.row_dual)[:m],
        # the solver's objective holds the appended terms: the tables' cost is compared
        # with it only for one scenario, so leave it out
        solver_objective=None,
    )
    timings = {"build": build_s, "handover": raw.handover_s, "solve": raw.solve_s}
    results = [
        _scenario_result(base, cut, i, options, None, dict(timings))
        for i in range(len(base.datasets))
    ]
    return AppendedSolve(results, None if x is None else np.asarray(x)[n:], gap)
