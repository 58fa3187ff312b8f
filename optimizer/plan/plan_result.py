"""The result of one plan (:class:`PlanResult`) and its assembly from a raw solution.

A scenario's result joins the solver's answer, the result tables
(:mod:`optimizer.plan.results`), the checker's verdict (:mod:`optimizer.plan.check`)
and the explanations of rows no decision can serve (:mod:`optimizer.plan.explain`).
Values are read only when the solver returned them; a status that promises a plan
without values becomes ``Status.error``, and so does any checker violation.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import pandas as pd

from optimizer.components.contracts import billing_dual_shift, canonical_unmet
from optimizer.components.placement_tables import fragmentation_message
from optimizer.components.plan_context import PlanContext
from optimizer.components.revenue import revenue_dual_shift
from optimizer.plan.calibration import calibration_table, empty_calibration
from optimizer.plan.check import check_frames, empty_violations
from optimizer.plan.explain import explain_missing
from optimizer.plan.model import PlanningModel
from optimizer.plan.options import RawSolution, SolveOptions, Status
from optimizer.plan.results import empty_tables, make_tables, plan_context, solution_frames


@dataclass(frozen=True)
class PlanResult:
    """Result of one solve (one scenario).

    Attributes
    ----------
    status : Status
    objective_usd : float or None
        Discounted total cost (equals ``tables["costs"].cost_usd.sum()``); None when
        no solution exists. In the margin mode it is cost - revenue (the minimised
        objective, = -``margin_usd``).
    tables : Mapping[str, DataFrame]
        Result tables, see :mod:`optimizer.plan.results` (empty frames with their
        columns when no solution exists).
    violations : DataFrame
        ``family, constraint, keys, lhs, rhs, violation`` from the checker.
    infeasibility : DataFrame or None
        Explanation rows (see :mod:`optimizer.plan.explain`) when infeasible.
    message : str
    solver : str
    dataset_hash, dataset_name : str
    tables_hash : str
        SHA-256 of the solved dataset's tables alone (its scenarios not counted).
    timings_s : Mapping[str, float]
        build, handover, solve, check, results (seconds).
    n_variables, n_constraints : int
    integer_units : bool
    duals_from : {"lp", "lp_with_integers_fixed"}
        Where the shadow prices come from: the LP itself, or (integer mode) the LP
        re-solved with the integer columns fixed at their values.
    periods : tuple of str
        The dataset's horizon quarters in order (known even when no solution
        exists and the result tables are empty).
    mip_bound_usd : float or None
        Integer mode: the solver's best bound on the objective (USD, constant
        included); None for an LP or when the solver reports none.
    mip_gap : float or None
        Integer mode: ``|objective - bound| / |objective|`` (share, 0.032 = 3.2%).
    duals_note : str
        Why the shadow prices are null (the solver returns no duals), else "".
    clusters : bool
        The training-cluster rule was exact (cluster binaries in the model).
    formulation : {"compact", "reference"}
        The formulation the model was built with (``SolveOptions.formulation``,
        except cluster mode: always the reference).
    objective : {"cost", "margin"}
        The objective mode (``SolveOptions.objective``).
    """

    status: Status
    objective_usd: float | None
    tables: Mapping[str, pd.DataFrame]
    violations: pd.DataFrame
    infeasibility: pd.DataFrame | None
    message: str
    solver: str
    dataset_hash: str
    dataset_name: str
    timings_s: Mapping[str, float]
    n_variables: int
    n_constraints: int
    integer_units: bool = False
    duals_from: Literal["lp", "lp_with_integers_fixed"] = "lp"
    periods: tuple[str, ...] = ()
    mip_bound_usd: float | None = None
    mip_gap: float | None = None
    duals_note: str = ""
    clusters: bool = False
    formulation: str = "reference"
    objective: str = "cost"
    tables_hash: str = ""

    @property
    def revenue_usd(self) -> float | None:
        """Discounted revenue of served demand in the margin mode (USD, >= 0).

        Minus the rows of cash kind ``revenue`` of the costs table (the ``revenue``
        term and the contract terms: take-or-pay billing and refunds, reservation fees
        and refunds, SLA credits); None in the cost mode or when no solution exists.
        """
        if self.objective_usd is None or self.objective != "margin":
            return None
        costs = self.tables["costs"]
        if "cash_kind" in costs:  # revenue and the contract terms (billing, refunds, credits)
            return -float(costs.loc[costs["cash_kind"] == "revenue", "cost_usd"].sum())
        return -float(costs.loc[costs["term"] == "revenue", "cost_usd"].sum())

    @property
    def cost_usd(self) -> float | None:
        """Discounted cost: every term but revenue (USD; penalties included)."""
        if self.objective_usd is None:
            return None
        return self.objective_usd + (self.revenue_usd or 0.0)

    @property
    def margin_usd(self) -> float | None:
        """Discounted margin = revenue - cost (USD) in the margin mode, which maximises it.

        None in the cost mode (no revenue in its objective) or without a solution.
        """
        if self.objective_usd is None or self.objective != "margin":
            return None
        return -self.objective_usd


def _unsolved(
    ds: Any,
    options: SolveOptions,
    status: Status,
    msg: str,
    timings: dict[str, float],
    model: PlanningModel | None = None,
) -> PlanResult:
    """Return a result without a solve (no values): ``status`` and ``msg`` say why."""
    return PlanResult(
        status,
        None,
        empty_tables(),
        empty_violations(),
        None,
        msg,
        options.solver,
        ds.hash,
        ds.name,
        timings,
        0 if model is None else model.n_variables,
        0 if model is None else model.n_constraints,
        options.integer_units,
        "lp",
        tuple(ds.periods),
        formulation=options.formulation if model is None else model.formulation,
        objective=options.objective,
        tables_hash=ds.tables_hash,
    )


def mip_gap(objective: float | None, bound: float | None) -> float | None:
    """Relative MIP gap ``|objective - bound| / |objective|`` (HiGHS's definition).

    Parameters
    ----------
    objective, bound : float or None
        Incumbent objective and best bound (USD).

    Returns
    -------
    float or None
        Share (0.032 = 3.2%); None when either is unknown; 0 when both are 0.
    """
    if objective is None or bound is None:
        return None
    diff = abs(objective - bound)
    return 0.0 if diff == 0 else diff / max(abs(objective), 1e-9)


def _duals(raw: RawSolution, model: PlanningModel) -> np.ndarray | None:
    """Row duals; NaN (null shadow prices) when the solver returned none (``dual_note``).

    In the margin mode a demand row's dual gains the revenue constant's derivative
    (:func:`~optimizer.components.revenue.revenue_dual_shift`), and the take-or-pay
    and demand rows the billing constant's
    (:func:`~optimizer.components.contracts.billing_dual_shift`), so every shadow price
    is the full d(objective)/d(rhs).
    """
    if raw.row_dual is None and raw.dual_note:
        return np.full(model.n_constraints, np.nan)
    if raw.row_dual is None or model.objective != "margin":
        return raw.row_dual
    shift = revenue_dual_shift(model) + billing_dual_shift(model)
    return np.asarray(raw.row_dual, dtype=float) + shift


def _without_values(status: Status, msg: str) -> tuple[Status, str]:
    """Return (error, message) for a status that promises a plan but has no values."""
    if status in (Status.optimal, Status.time_limit_feasible):
        return Status.error, msg + "; the solver reported a plan but returned no values"
    return status, msg


def _plan_tables(
    model: PlanningModel,
    raw: RawSolution,
    i: int,
    options: SolveOptions,
    context: PlanContext,
) -> dict[str, pd.DataFrame]:
    """Return the result tables of scenario ``i``, quantities snapped (no -0.0 chips)."""
    assert raw.x is not None  # called for a solve with values only
    # the context carries the row duals: make_tables reads them from it
    tables = make_tables(model, raw.x, None, i, tolerance=options.check_tolerance, context=context)
    tables["calibration"] = calibration_table(tables, model.datasets[i])
    return tables


@dataclass
class _Verdict:
    """What a scenario's result says beside its identity: status, message, tables, checks."""

    status: Status
    message: str
    tables: dict[str, pd.DataFrame]
    violations: pd.DataFrame
    objective_usd: float | None
    infeasibility: pd.DataFrame | None


def _scenario_result(
    model: PlanningModel,
    raw: RawSolution,
    i: int,
    options: SolveOptions,
    infeasible: pd.DataFrame | None,
    timings: dict[str, float],
) -> PlanResult:
    """Tables, checker verdict and explanations of scenario ``i`` of a solved model."""
    ds = model.datasets[i]
    msg = _head_message(model, raw, options)
    gaps = explain_missing(model, i)
    if len(gaps):
        msg += f"; {len(gaps)} demand/commitment row(s) have no decision that could serve them"
    if raw.x is None:
        verdict = _without_plan(raw, i, msg, infeasible, gaps, timings)
    else:  # unmet demand is the demand not served (a tie with a take-or-pay refund)
        raw = replace(raw, x=canonical_unmet(model, raw.x))
        verdict = _with_plan(model, raw, i, options, msg, gaps, timings)
    duals_from: Literal["lp", "lp_with_integers_fixed"] = (
        "lp_with_integers_fixed" if bool(model.variables["integer"].any()) else "lp"
    )
    return PlanResult(
        status=verdict.status,
        objective_usd=verdict.objective_usd,
        tables=verdict.tables,
        violations=verdict.violations,
        infeasibility=verdict.infeasibility,
        message=verdict.message,
        solver=options.solver,
        dataset_hash=ds.hash,
        tables_hash=ds.tables_hash,
        dataset_name=ds.name,
        timings_s=timings,
        n_variables=model.n_variables,
        n_constraints=model.n_constraints,
        integer_units=model.integer_units,
        duals_from=duals_from,
        periods=tuple(ds.periods),
        **_mip_fields(raw),
        clusters=model.clusters,
        formulation=model.formulation,
        objective=model.objective,
    )


def _without_plan(
    raw: RawSolution,
    i: int,
    msg: str,
    infeasible: pd.DataFrame | None,
    gaps: pd.DataFrame,
    timings: dict[str, float],
) -> _Verdict:
    """Scenario ``i`` without values: empty tables, the explanation rows, why in the message."""
    status, msg = _without_values(raw.status, msg)
    tables = {**empty_tables(), "calibration": empty_calibration()}
    timings.update(check=0.0, results=0.0)
    inf_i = None
    if infeasible is not None:
        inf_i = infeasible[infeasible["scenario"] == i].reset_index(drop=True)
        if len(inf_i):
            msg += "; " + "; ".join(inf_i["message"].head(5))
    if len(gaps):
        gp = gaps.assign(scenario=i)
        inf_i = gp if inf_i is None else pd.concat([inf_i, gp], ignore_index=True)
    return _Verdict(status, msg, tables, empty_violations(), None, inf_i)


def _with_plan(
    model: PlanningModel,
    raw: RawSolution,
    i: int,
    options: SolveOptions,
    msg: str,
    gaps: pd.DataFrame,
    timings: dict[str, float],
) -> _Verdict:
    """Scenario ``i`` with values: its tables, the checker's verdict and the plan's notes."""
    tables, viol = _checked_tables(model, raw, i, options, timings)
    obj = float(tables["costs"]["cost_usd"].sum())
    status = Status.error if len(viol) else raw.status
    msg += _plan_notes(model, raw, tables, viol, obj)
    inf_i = gaps.assign(scenario=i) if len(gaps) else None
    return _Verdict(status, msg, tables, viol, obj, inf_i)


def _checked_tables(
    model: PlanningModel,
    raw: RawSolution,
    i: int,
    options: SolveOptions,
    timings: dict[str, float],
) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Return the result tables and checker violations of scenario ``i``, timed."""
    assert raw.x is not None  # called for a solve with values only
    ds = model.datasets[i]
    t = time.perf_counter()
    frames = solution_frames(model, raw.x, i)
    # one plan context (fleet, capacity online, site loads, energy) for tables and checker
    context = plan_context(
        model, raw.x, _duals(raw, model), i, frames, tolerance=options.check_tolerance
    )
    tables = _plan_tables(model, raw, i, options, context)
    timings["results"] = time.perf_counter() - t
    t = time.perf_counter()
    viol = check_frames(ds, frames, options.check_tolerance, context=context)
    timings["check"] = time.perf_counter() - t
    return tables, viol


def _plan_notes(
    model: PlanningModel,
    raw: RawSolution,
    tables: dict[str, pd.DataFrame],
    viol: pd.DataFrame,
    obj: float,
) -> str:
    """Message tail of a plan: checker violations, MIP gap, cluster fragments, objective."""
    msg = ""
    if len(viol):
        first = "; ".join(
            f"{r.family} {r.keys}: lhs {r.lhs:.6g} vs rhs {r.rhs:.6g}"
            for r in viol.head(3).itertuples()
        )
        msg += f"; checker found {len(viol)} violated constraint(s): {first}"
    gap_share = mip_gap(raw.solver_objective, raw.mip_bound)
    if gap_share is not None:
        msg += f"; MIP gap {gap_share:.3%}"
    fragments = fragmentation_message(tables["training_clusters"], exact=model.clusters)
    if fragments:
        msg += "; " + fragments
    return msg + _objective_note(model, raw, obj)


def _objective_note(model: PlanningModel, raw: RawSolution, obj: float) -> str:
    """``"; solver objective ... differs from tables ..."`` beyond 1e-6 relative, else ""."""
    if raw.solver_objective is None or len(model.datasets) != 1:
        return ""
    if abs(raw.solver_objective - obj) <= 1e-6 * (1 + abs(obj)):
        return ""
    return f"; solver objective {raw.solver_objective:.6g} differs from tables {obj:.6g}"


def _head_message(model: PlanningModel, raw: RawSolution, options: SolveOptions) -> str:
    """``"<solver>: <solver message>"``, plus why a compact request built the reference."""
    msg = f"{options.solver}: {raw.message}"
    return msg + (f"; {model.formulation_note}" if model.formulation_note else "")


def _mip_fields(raw: RawSolution) -> dict[str, Any]:
    """MIP bound, relative gap and the duals note of a result (empty without a solution)."""
    if raw.x is None:
        return {}
    bound = raw.mip_bound
    gap = mip_gap(raw.solver_objective, bound)
    return {"mip_bound_usd": bound, "mip_gap": gap, "duals_note": raw.dual_note}
