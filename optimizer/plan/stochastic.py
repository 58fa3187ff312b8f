"""The two-stage stochastic solve: one model over weighted scenarios, a shared first stage."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from optimizer.plan.appended import solve_appended
from optimizer.plan.deadline import start_deadline
from optimizer.plan.model import PlanningModel, build_stochastic_model
from optimizer.plan.options import SolveOptions, Status
from optimizer.plan.pipeline import solve_model
from optimizer.plan.plan_result import PlanResult


@dataclass(frozen=True)
class StochasticResult:
    """Result of a two-stage stochastic solve.

    Attributes
    ----------
    status : Status
    expected_objective_usd : float or None
        Probability-weighted objective.
    weights : tuple of float
    scenarios : tuple of PlanResult
        One per scenario dataset: shared first-stage values, that scenario's
        operation, its own (unweighted) costs and conditional shadow prices.
    message : str
    timings_s : Mapping[str, float]
    extra : ndarray or None
        Values of the columns ``extend`` appended (None without ``extend``).
    mip_gap : float or None
        Relative gap of an extended model with integer columns (chance rows, exact).
    """

    status: Status
    expected_objective_usd: float | None
    weights: tuple[float, ...]
    scenarios: tuple[PlanResult, ...]
    message: str
    timings_s: Mapping[str, float] = field(default_factory=dict)
    extra: Any = None
    mip_gap: float | None = None


def solve_stochastic(
    datasets: Sequence[Any],
    weights: Sequence[float],
    options: SolveOptions | None = None,
    first_stage: str | Sequence[str] = "full",
    extend: Callable[[PlanningModel], PlanningModel] | None = None,
) -> StochasticResult:
    """Solve the two-stage stochastic plan over weighted scenario datasets.

    Parameters
    ----------
    datasets : sequence of Dataset
        Scenarios over one horizon.
    weights : sequence of float
        Probabilities summing to 1.
    options : SolveOptions, optional
    first_stage : str or sequence of str
        The decisions shared by the scenarios: ``full`` (default) or ``capacity``
        (see :data:`optimizer.plan.model.FIRST_STAGE_SETS`).
    extend : callable, optional
        ``extend(model) -> model`` appending rows and columns that span scenarios (the
        CVaR rows of :func:`optimizer.plan.risk.with_cvar`, the chance rows of
        :mod:`optimizer.plan.chance`); solved by
        :func:`optimizer.plan.appended.solve_appended`. ``expected_objective_usd``
        stays the expected cost; ``extra`` holds the appended columns' values.

    Returns
    -------
    StochasticResult
        Expected objective and one PlanResult per scenario (shared first stage).
    """
    options = options or SolveOptions()
    deadline = start_deadline(options)
    t0 = time.perf_counter()
    model = build_stochastic_model(
        datasets,
        weights,
        integer_units=options.integer_units,
        clusters=options.clusters,
        formulation=options.formulation,
        objective=options.objective,
        first_stage=first_stage,
    )
    extended = extend(model) if extend is not None else model
    build_s = time.perf_counter() - t0
    extra = None
    mip_gap = None
    if extended is model:
        res = solve_model(model, options, build_s=build_s, deadline=deadline)
    else:
        solved = solve_appended(model, extended, options, build_s=build_s, deadline=deadline)
        res, extra, mip_gap = solved.results, solved.extra, solved.mip_gap
    exp = None
    objectives = [r.objective_usd for r in res]
    if all(o is not None for o in objectives):
        exp = float(
            sum(w * float(o or 0.0) for w, o in zip(model.weights, objectives, strict=True))
        )
    worst = res[0].status
    for r in res:
        if r.status != Status.optimal:
            worst = r.status
    return StochasticResult(
        worst,
        exp,
        model.weights,
        tuple(res),
        res[0].message,
        dict(res[0].timings_s),
        extra,
        mip_gap,
    )
