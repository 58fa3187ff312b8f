"""Independent checker: recompute every constraint from the returned decision values.

The checker never looks at the LP rows or PuLP constraint objects. It maps the
solution's columns to domain keys (:func:`optimizer.plan.results.solution_frames`),
recomputes each family's left- and right-hand side from the dataset with pandas and
numpy (each family's ``check``, registered in :data:`optimizer.components.REGISTRY`;
sums by key on integer group codes, :mod:`optimizer.lp.grouping`),
and reports every row violated by more than ``tolerance * (1 + scale)`` (scale: the
row's ``|rhs|``, at least 1e-3 of the family's largest side, see
:func:`optimizer.lp.violations.violations`), plus
negative decisions (``bounds``) and assignments a customer is not eligible for
(``eligibility``), and chips serving a regional demand outside its regions
(``demand_regions``). :func:`optimizer.plan.pipeline.solve` turns any violation into
``Status.error``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.components import REGISTRY
from optimizer.components.demand import check_demand_regions
from optimizer.components.plan_context import PlanContext
from optimizer.lp.frames import column_values
from optimizer.lp.grouping import Groups, by_key
from optimizer.lp.violations import VIOLATION_COLUMNS, flagged, violations
from optimizer.plan.model import PlanningModel
from optimizer.plan.results import solution_frames

__all__ = ["VIOLATION_COLUMNS", "check_frames", "check_solution", "empty_violations"]


def empty_violations() -> pd.DataFrame:
    """Return the violations table with its columns and no rows (a fresh copy)."""
    return _EMPTY.copy()


#: The violations table with no rows, made once (handed out as copies only).
_EMPTY = pd.DataFrame(
    {
        c: pd.Series([], dtype=str if c in ("family", "constraint", "keys") else float)
        for c in VIOLATION_COLUMNS
    }
)


def _check_bounds(inputs: PlanContext) -> list[pd.DataFrame]:
    """Every decision value >= 0 (within the tolerance)."""
    out = []
    tol = inputs.tolerance
    for f in inputs.frames.values():
        below = column_values(f, "value", dtype=float) < -tol
        if not below.any():  # the usual answer, without building an empty frame
            continue
        bad = f[below]
        keys = bad.drop(columns=["value"]).astype(str).agg("/".join, axis=1)
        out.append(violations("bounds", keys, -bad["value"], np.zeros(len(bad)), "<=", tol))
    return out


def _check_eligibility(inputs: PlanContext) -> pd.DataFrame:
    """Chips assigned only to eligible customers, at sites in the allowed regions."""
    a = inputs.assigned
    small, at = by_key(inputs.sites["region"], a["site"])
    region = small.astype(str).to_numpy()[at]
    rg_all = column_values(a, "regions")
    # each (regions text, site region) pair tested once
    text = np.array([rg if isinstance(rg, str) else "\0" for rg in rg_all], dtype=object)
    pairs = Groups([text, region])
    first = np.unique(pairs.ids, return_index=True)[1]
    ok_pair = np.array(
        [
            isinstance(rg, str) and (rg.strip() == "" or reg in [x.strip() for x in rg.split(";")])
            for rg, reg in zip(rg_all[first], region[first], strict=True)
        ],
        dtype=bool,
    )
    allowed = ok_pair[pairs.ids] & a["derate"].notna().to_numpy()
    return flagged(
        "eligibility",
        a,
        ~allowed,
        "value",
        lambda b: b["chip"] + "/" + b["site"] + "/" + b["customer"] + "," + b["period"],
        inputs.tolerance,
    )


def check_frames(
    ds: Any,
    fr: dict[str, pd.DataFrame],
    tolerance: float = 1e-6,
    *,
    fleet: pd.DataFrame | None = None,
    capacity: pd.DataFrame | None = None,
    context: PlanContext | None = None,
) -> pd.DataFrame:
    """Check domain decision values of one scenario against the dataset.

    Runs the bounds check, every registered family's ``check``
    (:data:`optimizer.components.REGISTRY`, in registry order) and the eligibility
    check.

    Parameters
    ----------
    ds : Dataset
        The scenario's dataset.
    fr : dict of DataFrame
        Decision values by kind, as returned by
        :func:`optimizer.plan.results.solution_frames`.
    tolerance : float
        Relative tolerance (violation > tolerance * (1 + scale) is reported; see
        :func:`optimizer.lp.violations.violations`).
    fleet : DataFrame, optional
        ``fleet_values(ds, fr)`` (:func:`optimizer.components.quantities.fleet_values`)
        when the caller already has it (the result tables of
        the same solve); computed from ``fr`` when None.
    capacity : DataFrame, optional
        ``site_capacity_table(ds, fr)``
        (:func:`optimizer.components.capacity_online.site_capacity_table`)
        when the caller already has it; computed from ``fr`` when None.

    context : PlanContext, optional
        The plan context of ``fr`` when the caller already has it (the result tables of
        the same solve, :func:`optimizer.plan.results.plan_context`): its derived
        quantities are reused and its tolerance set to ``tolerance``; ``fleet`` and
        ``capacity`` are then not used.

    Returns
    -------
    DataFrame
        ``family, constraint, keys, lhs, rhs, violation`` (empty when feasible).
    """
    if context is None:
        inputs = PlanContext(ds, fr, fleet, tolerance, capacity=capacity)
    else:
        inputs, inputs.tolerance = context, tolerance
    out = _check_bounds(inputs)
    out.extend(family.check(inputs) for family in REGISTRY if family.check is not None)
    out.append(_check_eligibility(inputs))
    out.append(check_demand_regions(inputs))
    out = [o for o in out if len(o)]
    if not out:
        return empty_violations()
    v = pd.concat(out, ignore_index=True)
    return v.astype(
        {
            "family": str,
            "constraint": str,
            "keys": str,
            "lhs": float,
            "rhs": float,
            "violation": float,
        }
    )


def check_solution(
    model: PlanningModel, x: np.ndarray, scenario: int = 0, tolerance: float = 1e-6
) -> pd.DataFrame:
    """Check a column vector of ``model`` for one scenario (see :func:`check_frames`).

    Parameters
    ----------
    model : PlanningModel
    x : ndarray, shape (n_variables,)
        Column values.
    scenario : int
    tolerance : float

    Returns
    -------
    DataFrame
        Violations (empty when feasible).
    """
    fr = solution_frames(model, x, scenario)
    return check_frames(model.datasets[scenario], fr, tolerance)
