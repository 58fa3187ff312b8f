"""The chance-constrained hedged plan: a floor met with a required probability, checked.

:func:`chance_plan` solves the two-stage extensive form with the chance rows of
:mod:`optimizer.plan.chance` (exact MIP or the CVaR approximation) and reports the
achieved probability twice, from the result tables (never from the LP):

* in sample: the weighted share of the plan's own scenarios that met every floor;
* out of sample: the plan's first stage fixed in a fresh set of scenarios (other
  draws), each operated alone at least cost (:func:`optimizer.plan.pipeline.solve` with
  ``fixed_first_stage``); a fresh scenario the plan cannot operate counts as missed.
  The operation is chosen at least cost, so a floor is met out of sample only where
  meeting it is cheaper than its breach penalty.

The exact method's in-sample probability must reach the one asked (the checker row:
``status="error"`` with a note otherwise); the approximation's may exceed it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from optimizer.plan.chance import (
    ChanceSpec,
    achieved_probability,
    chance_wording,
    check_chance,
    met_by_scenario,
    with_chance,
)

__all__ = ["ChancePlan", "chance_plan"]

#: Shared-decision tables of a plan that fix a first stage.
_SHARED = ("build_out", "fleet", "production")


@dataclass(frozen=True)
class ChancePlan:
    """A chance-constrained hedged plan and its achieved probabilities.

    Attributes
    ----------
    spec : ChanceSpec
    status : str
        Status of the extensive-form solve (``error`` when the exact method's in-sample
        probability is below the one asked).
    expected_cost_usd : float or None
        Probability-weighted discounted cost (USD).
    mip_gap : float or None
        Relative MIP gap of the exact method (None for the LP approximation).
    in_sample : float
        Achieved probability over the plan's scenarios.
    out_of_sample : float or None
        Achieved probability over the fresh scenarios (None when none were given).
    per_scenario : DataFrame
        ``scenario, sample, weight, met, cost_usd`` (``sample``: ``in`` or ``out``).
    first_stage : Mapping[str, DataFrame]
        The plan's shared decisions (``build_out``, ``fleet``, ``production``).
    notes : tuple of str
    elapsed_s : float
    """

    spec: ChanceSpec
    status: str
    expected_cost_usd: float | None
    mip_gap: float | None
    in_sample: float
    out_of_sample: float | None
    per_scenario: pd.DataFrame
    first_stage: Any
    notes: tuple[str, ...] = field(default_factory=tuple)
    elapsed_s: float = 0.0


def chance_plan(
    datasets: Sequence[Any],
    spec: ChanceSpec,
    weights: Sequence[float] | None = None,
    names: Sequence[str] | None = None,
    *,
    fresh: Sequence[Any] = (),
    fresh_names: Sequence[str] | None = None,
    options: Any = None,
    first_stage: str | Sequence[str] = "full",
) -> ChancePlan:
    """Solve the hedged plan with ``spec``'s chance rows; report achieved probabilities.

    Parameters
    ----------
    datasets : sequence of Dataset
        The plan's scenarios (one horizon).
    spec : ChanceSpec
        Family, customer, probability and method.
    weights : sequence of float, optional
        Probabilities (default equal).
    names : sequence of str, optional
        Scenario names (default ``s<k>``).
    fresh : sequence of Dataset
        Out-of-sample scenarios (equal weights); empty: no out-of-sample figure.
    fresh_names : sequence of str, optional
    options : SolveOptions, optional
        ``time_limit_s`` bounds the MIP (its gap is then reported as found).
    first_stage : str or sequence of str
        ``full`` or ``capacity``.

    Returns
    -------
    ChancePlan

    Raises
    ------
    ValueError
        When the customer is unknown or has no floor of the family.
    """
    import time

    from optimizer.plan.columns import first_stage_kinds
    from optimizer.plan.options import SolveOptions
    from optimizer.plan.stochastic import solve_stochastic

    t0 = time.perf_counter()
    options = options or SolveOptions()
    n = len(datasets)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    w = w / w.sum()
    labels = list(names or [f"s{k}" for k in range(n)])
    kinds = first_stage_kinds(first_stage)
    sto = solve_stochastic(
        datasets, list(w), options, first_stage=kinds, extend=partial(with_chance, spec=spec)
    )
    notes: list[str] = []
    if sto.expected_objective_usd is None:
        return _no_plan(spec, sto)
    met = met_by_scenario(sto.scenarios, spec)
    p_in = achieved_probability(met, w)
    status = sto.status.value
    bad = check_chance(spec, met, w, sto.extra)
    if len(bad):
        status = "error"
        notes += [
            f"checker: {r.family} {r.keys}: {r.lhs:.6g} against {r.rhs:.6g}"
            for r in bad.itertuples()
        ]
    first = {t: sto.scenarios[0].tables.get(t, pd.DataFrame()) for t in _SHARED}
    rows = _rows(labels, "in", w, met, sto.scenarios)
    p_out = None
    if len(fresh):
        out_rows, p_out = _out_of_sample(fresh, fresh_names, spec, sto.scenarios[0], options, kinds)
        rows += out_rows
    return ChancePlan(
        spec=spec,
        status=status,
        expected_cost_usd=float(sto.expected_objective_usd),
        mip_gap=sto.mip_gap,
        in_sample=p_in,
        out_of_sample=p_out,
        per_scenario=pd.DataFrame(rows),
        first_stage=first,
        notes=tuple(notes),
        elapsed_s=time.perf_counter() - t0,
    )


def _no_plan(spec: ChanceSpec, sto: Any) -> ChancePlan:
    """Return the chance-constrained plan that has no solution, with the wording why."""
    empty = pd.DataFrame(columns=["scenario", "sample", "weight", "met", "cost_usd"])
    note = chance_wording(spec) + f" ({sto.message})"
    return ChancePlan(spec, sto.status.value, None, sto.mip_gap, 0.0, None, empty, {}, (note,))


def _out_of_sample(
    fresh: Sequence[Any],
    names: Sequence[str] | None,
    spec: ChanceSpec,
    plan: Any,
    options: Any,
    kinds: Sequence[str],
) -> tuple[list[dict[str, Any]], float]:
    """Operate ``plan``'s first stage in each fresh scenario; rows and achieved probability."""
    from optimizer.plan.pipeline import solve

    results = [solve(d, options, fixed_first_stage=plan, first_stage=kinds) for d in fresh]
    met = met_by_scenario(results, spec)
    labels = list(names or [f"fresh{k}" for k in range(len(fresh))])
    w = np.full(len(fresh), 1.0 / len(fresh))
    return _rows(labels, "out", w, met, results), achieved_probability(met, w)


def _rows(
    labels: Sequence[str], sample: str, w: np.ndarray, met: np.ndarray, results: Sequence[Any]
) -> list[dict[str, Any]]:
    """``scenario, sample, weight, met, cost_usd`` per scenario."""
    return [
        {
            "scenario": n,
            "sample": sample,
            "weight": float(wi),
            "met": bool(m),
            "cost_usd": r.objective_usd,
        }
        for n, wi, m, r in zip(labels, w, met, results, strict=True)
    ]
