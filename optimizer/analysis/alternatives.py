"""Near-optimal alternatives (modelling to generate alternatives, MGA) of one plan.

The optimum is one vertex of a cost surface that is often flat: many plans cost (nearly)
the same. :func:`near_optimal_ranges` solves the optimum ``C*`` (its objective, whatever
the objective vector of the model is), then adds one row, the cost cap,

    mga_cost_cap:  sum_j cost_j * x_j + const <= C* + slack * |C*|

(``cost_j`` the model's objective coefficients, ``const`` its constant; for a positive
cost objective the right-hand side is ``(1 + slack) C*``), gives each demand balance row
an upper bound, the service cap,

    demand_balance (ranged):  demand[r] <= served[r] + unmet[r] <= max(demand[r], a*[r])

(``a*[r]`` the row's activity at the optimum: its demand, or more where the optimum
served above demand, e.g. to meet a commitment; :func:`with_service_cap`), so that no
alternative counts service of demand that does not exist (maximising the Trainium share
inside a 10 % slack served 585 % of the demand before), and minimises and maximises
chosen plan quantities (:mod:`optimizer.analysis.alternatives_quantities`) inside it, plus
``N`` seeded random directions over those quantities. The built model is solved once per
alternative on one retained HiGHS instance
(:class:`optimizer.plan.highs_session.HighsSession`): only the objective (column costs)
and the cap row's bound change between alternatives, and the dual simplex restarts from
the previous optimal basis.

Result rows: the ranges table (:data:`RANGE_COLUMNS`: per quantity and slack, the least
and greatest value any plan within the cap reaches, and the value at the optimum) and
each alternative plan as a :class:`~optimizer.plan.plan_result.PlanResult` whose tables
are those of any plan (the costs table is the true cost, not the MGA objective).

Checker rows: every alternative is verified by the independent checker (a violation
makes its status ``error``), its demand table must serve no row above the service cap
(:func:`service_over_cap`), and its cost recomputed from the costs table must not
exceed the cap (:func:`optimizer.components.appended.check_mga_cost_cap`, the family's
registered check; :func:`cap_violation` gives the amount); the cap is never relaxed.
The family's record and row builder live in :mod:`optimizer.components.appended`
(``docs/families.md``).

Shadow prices of an alternative are the derivatives of the chosen quantity, not of cost,
so they are left out (null, with a note); the optimum keeps its own.

Wording when it cannot run: a base plan that is not optimal stops with
:class:`AlternativesError` naming its status; a negative slack, an unknown focus or a
negative number of directions is a ``ValueError`` naming the option and the value.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from optimizer.analysis.alternatives_quantities import (
    Quantity,
    default_quantities,
    quantity_value,
    random_directions,
    select_quantities,
)
from optimizer.components.appended import check_mga_cost_cap, define_mga_cost_cap
from optimizer.plan.highs_session import HighsSession
from optimizer.plan.model import PlanningModel, build_model
from optimizer.plan.options import RawSolution, SolveOptions, Status
from optimizer.plan.plan_result import PlanResult, _scenario_result
from optimizer.plan.risk import append_rows

__all__ = [
    "CAP_FAMILY",
    "RANGE_COLUMNS",
    "Alternative",
    "AlternativesError",
    "AlternativesResult",
    "cap_rhs",
    "cap_violation",
    "objective_vector",
    "near_optimal_ranges",
    "parse_slacks",
    "range_notes",
    "service_over_cap",
    "with_cost_cap",
    "with_service_cap",
]

#: Family name of the cost-cap row.
CAP_FAMILY = "mga_cost_cap"

#: Columns of the ranges table.
RANGE_COLUMNS = ("quantity", "unit", "slack", "min", "max", "at_optimum", "cost_cap_usd")

#: Relative tolerance of the cap check on an alternative's tabulated cost.
CAP_TOLERANCE = 1e-6

_NO_DUALS = "alternative plan: the objective is a plan quantity, so shadow prices are not costs"


class AlternativesError(RuntimeError):
    """The alternatives cannot be computed (the base plan is not optimal)."""


@dataclass(frozen=True)
class Alternative:
    """One near-optimal plan.

    Attributes
    ----------
    name : str
        ``"<sense>_<quantity>@<slack>"``, e.g. ``"max_build_mw:s1@0.05"``; a
        folder-safe version names its report scenario.
    slack : float
        Relative cost slack of the cap.
    quantity : str
        The quantity or direction optimised.
    sense : {"min", "max"}
    value : float
        The quantity's value in this plan (its unit).
    cost_usd : float
        The plan's cost from its costs table (USD, discounted).
    result : PlanResult
    """

    name: str
    slack: float
    quantity: str
    sense: str
    value: float
    cost_usd: float
    result: PlanResult


@dataclass(frozen=True)
class AlternativesResult:
    """What :func:`near_optimal_ranges` returns.

    Attributes
    ----------
    optimum : PlanResult
        The plan at ``C*`` (shadow prices included).
    optimum_usd : float
        ``C*``, the optimum's objective (USD).
    ranges : DataFrame
        :data:`RANGE_COLUMNS`, one row per (quantity, slack).
    alternatives : tuple of Alternative
        Every alternative plan, in solve order.
    elapsed_s : float
        Wall time of the whole run.
    notes : tuple of str
        :func:`range_notes` of the ranges (empty when every range holds the optimum
        and widens with the slack).
    """

    optimum: PlanResult
    optimum_usd: float
    ranges: pd.DataFrame
    alternatives: tuple[Alternative, ...]
    elapsed_s: float
    notes: tuple[str, ...] = ()


def parse_nonnegative(text: str | Sequence[float], option: str, noun: str) -> tuple[float, ...]:
    """Read comma-separated numbers (or a sequence); each a finite number >= 0.

    Returns the distinct values, sorted. ``noun`` names one value in the messages.

    Raises
    ------
    ValueError
        Naming ``option`` and the value that is not a number, or that is negative or
        infinite; or that no value was given.
    """
    items = text.split(",") if isinstance(text, str) else list(text)
    out = []
    for item in items:
        try:
            v = float(item)
        except ValueError:
            raise ValueError(f"{option}: {str(item).strip()!r} is not a number") from None
        if not np.isfinite(v) or v < 0:
            raise ValueError(f"{option}: {v:g} is not a {noun}")
        out.append(v)
    if not out:
        raise ValueError(f"{option}: no {noun.split(' (')[0]} given")
    return tuple(sorted(set(out)))


#: Largest relative cost slack (1e6 = costs a million times the optimum's): above it
#: ``(1 + slack) C*`` overflows to an infinite cap (1e308 did), which caps nothing.
MAX_SLACK = 1e6


def parse_slacks(text: str | Sequence[float], option: str = "--slack") -> tuple[float, ...]:
    """Read slacks (``"0.01,0.05"`` or numbers); each a finite number in [0, MAX_SLACK].

    Raises
    ------
    ValueError
        Naming ``option`` and the value that is not a slack.
    """
    out = parse_nonnegative(text, option, "slack (a share of cost >= 0)")
    for v in out:
        if v > MAX_SLACK:
            raise ValueError(
                f"{option}: {v:g} is not a slack (a share of cost, at most {MAX_SLACK:g})"
            )
    return out


#: Smallest relative slack the cap is given (about the solver's optimality tolerance). A cap
#: at C* exactly is met only to the solver's tolerance, and HiGHS ended the capped solve
#: "Unknown" (--slack 0 failed after the optimum was solved).
CAP_ROOM = 1e-9


def cap_rhs(optimum_usd: float, slack: float) -> float:
    """Cost cap ``C* + max(slack, 1e-9) |C*|`` (``(1 + slack) C*`` for a positive cost), USD.

    A slack of 0 asks for the optimal face: the plans as cheap as the optimum, within the
    solver's tolerance (:data:`CAP_ROOM`).
    """
    return optimum_usd + max(slack, CAP_ROOM) * abs(optimum_usd)


def with_cost_cap(model: PlanningModel) -> PlanningModel:
    """Return ``model`` with the cost-cap row appended (bound open: ``+inf``).

    The row's coefficients are the model's objective vector ``variables["cost"]``; its
    right-hand side is ``cap - objective_constant`` once set (:func:`_at`).
    """
    rows = define_mga_cost_cap(model.variables["cost"].to_numpy(dtype=float))
    return append_rows(model, *rows)


def with_service_cap(model: PlanningModel, x: np.ndarray) -> PlanningModel:
    """Return ``model`` with each demand balance row held at most ``max(demand, a*)``.

    Parameters
    ----------
    model : PlanningModel
        The capped model (its ``demand_balance`` rows are ``>=`` demand).
    x : ndarray, shape (n_variables,)
        The optimum's column values; ``a* = A[r] x`` is each row's activity there
        (H100e served plus unmet).

    Returns
    -------
    PlanningModel
        The same rows, with an ``upper`` column (``+inf`` off the demand rows) that
        :meth:`~optimizer.plan.model.PlanningModel.row_bounds` reads as the rows'
        upper bounds.
    """
    cons = model.constraints.copy()
    rows = np.flatnonzero(cons["family"].to_numpy() == "demand_balance")
    upper = np.full(len(cons), np.inf)
    if len(rows):
        activity = model.matrix[rows] @ np.asarray(x, dtype=float)
        upper[rows] = np.maximum(cons["rhs"].to_numpy(dtype=float)[rows], activity)
    cons["upper"] = upper
    return replace(model, constraints=cons)


def service_over_cap(
    demand: pd.DataFrame, optimum_demand: pd.DataFrame, tolerance: float = CAP_TOLERANCE
) -> pd.DataFrame:
    """Rows of an alternative's demand table served above the service cap.

    Parameters
    ----------
    demand, optimum_demand : DataFrame
        The alternative's and the optimum's ``demand`` result tables (``customer,
        workload, period, regions, demand_h100e, served_h100e``).
    tolerance : float
        Relative to ``1 + cap``.

    Returns
    -------
    DataFrame
        The alternative's rows whose ``served_h100e`` exceeds ``max(demand_h100e, the
        optimum's served_h100e)`` beyond the tolerance, with a ``cap_h100e`` column.
    """
    keys = ["customer", "workload", "period", "regions"]
    opt = optimum_demand[[*keys, "served_h100e"]].rename(columns={"served_h100e": "opt"})
    m = demand.merge(opt, on=keys, how="left")
    cap = np.maximum(m["demand_h100e"].to_numpy(float), m["opt"].fillna(0.0).to_numpy(float))
    over = m["served_h100e"].to_numpy(float) - cap > tolerance * (1.0 + cap)
    return m.loc[over, [*keys, "demand_h100e", "served_h100e"]].assign(cap_h100e=cap[over])


def _at(capped: PlanningModel, objective: np.ndarray, cap_usd: float) -> PlanningModel:
    """Return the capped model with ``objective`` as column costs and the cap row at ``cap_usd``."""
    var = capped.variables.copy()
    var["cost"] = objective
    cons = capped.constraints.copy()
    cons.loc[len(cons) - 1, "rhs"] = cap_usd - capped.objective_constant
    const = capped.const_terms.iloc[0:0]
    return replace(capped, variables=var, constraints=cons, const_terms=const)


def objective_vector(q: Quantity, n: int, sense: str) -> np.ndarray:
    """Column costs that minimise (``"min"``) or maximise ``q``, largest magnitude 1.

    A quantity such as a share has coefficients near 1e-8; HiGHS judges optimality with
    absolute tolerances (1e-7), so such an objective would stop early. Scaling by a
    positive number changes no optimal plan.
    """
    obj = q.dense(n) * (1.0 if sense == "min" else -1.0)
    top = float(np.abs(obj).max()) if n else 0.0
    return obj / top if top > 0 else obj


def range_notes(ranges: pd.DataFrame, rel: float = 1e-5) -> tuple[str, ...]:
    """Ranges that a known plan contradicts: a solver answer that is not the optimum.

    The optimum is within every cap, so each range must hold its ``at_optimum`` value,
    and a plan within a smaller slack is within a larger one, so ranges widen with the
    slack. A range that breaks either by more than ``rel * (1 + |value|)`` is named.

    Parameters
    ----------
    ranges : DataFrame
        :data:`RANGE_COLUMNS` rows.
    rel : float
        Relative tolerance.

    Returns
    -------
    tuple of str
        One sentence per broken range.
    """
    out = []
    for q, g in ranges.sort_values("slack", kind="stable").groupby("quantity", sort=False):
        lo_prev = hi_prev = None
        for r in g.itertuples():
            tol = rel * (1 + abs(r.at_optimum))
            if r.min > r.at_optimum + tol or r.max < r.at_optimum - tol:
                out.append(
                    f"{q} at slack {r.slack:g}: range {r.min:.6g}..{r.max:.6g} misses the "
                    f"optimum's {r.at_optimum:.6g} (the solver stopped short)"
                )
            if lo_prev is not None and (r.min > lo_prev + tol or r.max < hi_prev - tol):
                out.append(
                    f"{q} at slack {r.slack:g}: range {r.min:.6g}..{r.max:.6g} is narrower "
                    f"than at a smaller slack ({lo_prev:.6g}..{hi_prev:.6g})"
                )
            lo_prev, hi_prev = r.min, r.max
    return tuple(out)


def cap_violation(cost_usd: float, cap_usd: float) -> float:
    """How far a plan's tabulated cost exceeds the cap beyond tolerance (0 when within), USD."""
    over = cost_usd - cap_usd
    return max(0.0, over - CAP_TOLERANCE * (1.0 + abs(cap_usd)))


def near_optimal_ranges(
    ds: Any,
    slacks: Sequence[float] = (0.01, 0.05),
    *,
    directions: int = 0,
    focus: Sequence[str] = (),
    seed: int = 0,
    options: SolveOptions | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    extremes: bool = True,
) -> AlternativesResult:
    """Solve the optimum, then the least and greatest value of each quantity within cost slacks.

    Parameters
    ----------
    ds : Dataset
        Validated dataset (scenario applied).
    slacks : sequence of float
        Relative cost slacks (``0.05`` = plans costing at most 5 % above ``C*``); each >= 0.
    directions : int
        Number of seeded random directions (a random weighting of the selected
        quantities, each divided by its scale) minimised per slack, >= 0.
    focus : sequence of str
        Quantity groups (``fleet``, ``site_build``, ``onsite``, ``trainium_share_of_demand``) or
        quantity names to keep; empty = all defaults
        (:func:`~optimizer.analysis.alternatives_quantities.default_quantities`).
    seed : int
        Seed of the random directions.
    options : SolveOptions, optional
        HiGHS LP options (the default); integer or cluster modes are refused.
    progress : callable, optional
        Called as ``progress(name, i, total)`` before alternative ``i`` (from 0) of
        ``total`` is solved, and once more as ``progress("", total, total)`` when the
        last one is solved.
    extremes : bool
        False: only the random directions are solved (no per-quantity minimum and
        maximum, so the ranges table is empty); the Dask runner
        (:mod:`optimizer.analysis.alternatives_dask`) uses it.

    Returns
    -------
    AlternativesResult

    Raises
    ------
    ValueError
        A negative slack or number of directions, a focus naming no quantity, or
        options that are not a HiGHS LP.
    AlternativesError
        The base plan is not optimal (its status and message are named).
    """
    t0 = time.perf_counter()
    options = options or SolveOptions()
    if options.solver != "highs" or options.integer_units or options.clusters:
        raise ValueError("alternatives: only the HiGHS LP is supported (no --integer-units)")
    slacks = parse_slacks(slacks, "slack")
    if directions < 0:
        raise ValueError(f"directions: {directions} is not a number of directions (>= 0)")
    base = build_model(ds, formulation=options.formulation)
    model = with_cost_cap(base)
    quantities = select_quantities(default_quantities(base), focus)
    session = HighsSession(options)
    optimum, raw = _solve(session, model, base, options, keep_duals=True)
    if optimum.status != Status.optimal or raw.solver_objective is None or raw.x is None:
        raise AlternativesError(
            f"the base plan is not optimal (status {optimum.status.value}): {optimum.message}"
        )
    c_star = float(raw.solver_objective)
    model = with_service_cap(model, raw.x)
    _primal_from_here(session)
    at_opt = {q.name: quantity_value(q, raw.x) for q in quantities}
    goals = [(q, s) for q in quantities for s in ("min", "max")] if extremes else []
    goals += [(d, "min") for d in random_directions(quantities, directions, seed, raw.x)]
    rows: list[tuple[Any, ...]] = []
    alts: list[Alternative] = []
    total = len(slacks) * len(goals)
    for slack in slacks:
        cap = cap_rhs(c_star, slack)
        found: dict[str, list[float]] = {}
        for q, sense in goals:
            name = f"{sense}_{q.name}@{slack:g}"
            if progress is not None:
                progress(name, len(alts), total)
            alt = _alternative(session, (model, base), options, q, sense, slack, cap, name)
            _refuse_over_service(alt, optimum)
            alts.append(alt)
            found.setdefault(q.name, []).append(alt.value)
        rows += [
            (q.name, q.unit, slack, min(found[q.name]), max(found[q.name]), at_opt[q.name], cap)
            for q in quantities
            if q.name in found
        ]
    if progress is not None and total:
        progress("", total, total)  # the last alternative is solved
    ranges = _tidy_ranges(pd.DataFrame(rows, columns=list(RANGE_COLUMNS)))
    notes = range_notes(ranges)
    elapsed = time.perf_counter() - t0
    return AlternativesResult(optimum, c_star, ranges, tuple(alts), elapsed, notes)


def _alternative(
    session: HighsSession,
    models: tuple[PlanningModel, PlanningModel],
    options: SolveOptions,
    q: Quantity,
    sense: str,
    slack: float,
    cap: float,
    name: str,
) -> Alternative:
    """Solve one alternative; raise when it is not optimal or its cost breaks the cap."""
    model, base = models
    capped = _at(model, objective_vector(q, model.n_variables, sense), cap)
    res, raw = _solve(session, capped, base, options)
    if res.status != Status.optimal or raw.x is None or res.objective_usd is None:
        raise AlternativesError(f"alternative {name}: status {res.status.value}: {res.message}")
    bad = check_mga_cost_cap(res.objective_usd, cap, CAP_TOLERANCE)
    if len(bad):
        raise AlternativesError(
            f"alternative {name}: cost {res.objective_usd:.6g} USD exceeds the cap "
            f"{cap:.6g} USD by {float(bad['violation'].iloc[0]):.6g} USD"
        )
    value = quantity_value(q, raw.x)
    return Alternative(name, slack, q.name, sense, value, res.objective_usd, res)


def _tidy_ranges(ranges: pd.DataFrame) -> pd.DataFrame:
    """Write each quantity's values at zero as ``0.0`` (no ``-0``, no ``-1e-12`` fleet).

    Per quantity, values in ``[-tol, 0]`` with ``tol = CAP_TOLERANCE x max(1, |largest|)``
    become ``0.0`` (:func:`optimizer.lp.tidy_numbers.snap_column`); the quantities are
    sums of columns that are never negative.
    """
    from optimizer.lp.tidy_numbers import snap_column

    out = ranges.copy()
    for idx in out.groupby("quantity", sort=False).groups.values():
        block = out.loc[idx, ["min", "max", "at_optimum"]].to_numpy(dtype=float)
        scale = float(np.nanmax(np.abs(block))) if block.size else 0.0
        snapped = snap_column(block.ravel(), CAP_TOLERANCE, scale).reshape(block.shape)
        out.loc[idx, ["min", "max", "at_optimum"]] = snapped
    return out


def _refuse_over_service(alt: Alternative, optimum: PlanResult) -> None:
    """Raise when the alternative's demand table serves a row above the service cap."""
    over = service_over_cap(alt.result.tables["demand"], optimum.tables["demand"])
    if len(over):
        r = over.iloc[0]
        raise AlternativesError(
            f"alternative {alt.name}: {len(over)} demand row(s) served above the service cap, "
            f"e.g. {r['customer']} {r['workload']} {r['period']}: {r['served_h100e']:.6g} "
            f"H100e served against a cap of {r['cap_h100e']:.6g}"
        )


#: HiGHS ``simplex_strategy`` of the primal simplex.
PRIMAL_SIMPLEX = 4

#: HiGHS ``dual_feasibility_tolerance`` of the capped solves (its default is 1e-7).
ALTERNATIVE_DUAL_TOLERANCE = 1e-9


def _primal_from_here(session: HighsSession) -> None:
    """Let the session's later runs use the primal simplex, to a tighter optimality.

    An alternative changes the objective and loosens (or keeps) the cap, so the previous
    optimal basis stays primal feasible: the primal simplex continues from it, where the
    dual simplex (HiGHS's default) must first repair a dual-infeasible basis. Measured on
    the default data (onsite and Trainium share at 1 %, 4 alternatives): 0.4-2.4 s per
    warm solve against 8-39 s with the dual simplex, same values.

    At HiGHS's default dual tolerance the capped solves stopped short by about 2e-4:
    the minimum of build_mw:norway at a 1 % slack read 137.671 MW in a chain of warm
    solves, 137.654 on two Dask workers and 137.651 alone, each plan at the cap. At 1e-9
    all three read 137.642, in the same time (18.7 s against 18.6 s for site_build).
    """
    from optimizer.plan.highs import highs_ok

    if session.highs is not None:
        highs_ok(
            session.highs.setOptionValue("simplex_strategy", PRIMAL_SIMPLEX),
            "option simplex_strategy=primal",
        )
        highs_ok(
            session.highs.setOptionValue("dual_feasibility_tolerance", ALTERNATIVE_DUAL_TOLERANCE),
            "option dual_feasibility_tolerance",
        )


def _solve(
    session: HighsSession,
    model: PlanningModel,
    base: PlanningModel,
    options: SolveOptions,
    keep_duals: bool = False,
) -> tuple[PlanResult, RawSolution]:
    """Run the session on the capped ``model``; tabulate and check the plan on ``base``.

    ``base`` is the model without the cap row (same columns), so the result tables,
    the checker and the shadow prices see the planning families only.
    """
    raw, warm = session.run(model)
    timings = {"handover": raw.handover_s, "solve": raw.solve_s, "warm_start": float(warm)}
    tab_raw = raw
    if raw.row_dual is not None:
        tab_raw = replace(raw, row_dual=raw.row_dual[: base.n_constraints])
    if not keep_duals and raw.x is not None:
        tab_raw = replace(raw, row_dual=None, solver_objective=None, dual_note=_NO_DUALS)
    return _scenario_result(base, tab_raw, 0, options, None, timings), raw
