"""A plan's ten-second summary: the :class:`PlanSummary` of small frames and numbers.

:func:`summarize` turns a plan result into a :class:`PlanSummary` (pure computation, no
I/O, reusable by the app and by batch); :mod:`optimizer.output.summary_render` prints it
with rich. Money is the discounted objective's USD; compute is H100-equivalents
(H100e); energy is facility energy (IT energy x PUE).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from optimizer.output.binding_limits import binding_frame, degenerate_limits, missing_duals
from optimizer.output.summary_frames import (
    as_frame,
    calibration_frame,
    chips_frame,
    cluster_runs,
    commitments_frame,
    costs_frame,
    energy_totals,
    max_shortfall_mw,
    periods_in,
    served_frame,
)

__all__ = ["OK_STATUSES", "PlanSummary", "exit_code", "status_line", "summarize"]

OK_STATUSES = ("optimal", "time_limit_feasible")
"""Statuses with a usable plan (exit code 0)."""


def _status_text(status: Any) -> str:
    return str(getattr(status, "value", status))


@dataclass(frozen=True)
class PlanSummary:
    """Headline numbers of a plan; every frame is small (tens of rows).

    Attributes
    ----------
    scenario : str or None
        Scenario name, when known.
    status : str
        Solve status (``optimal``, ``infeasible`` ...).
    ok : bool
        True for a usable plan (optimal, or feasible at the time limit).
    objective_usd : float or None
        Discounted objective, USD.
    solver, message, dataset_name, dataset_hash : str
        From the result.
    first_period, last_period : str
        Horizon of the dataset (``result.periods``); taken from the result tables
        when the result does not carry it ("" when neither is known).
    n_periods : int
        Quarters in that horizon.
    served : pandas.DataFrame
        customer, workload, demand_h100e, served_h100e, unmet_h100e (each the
        average per period over the horizon, H100e), served_share (served / demand
        summed over the horizon; NaN when there is no demand).
    served_share : float
        Served / demand over all customers, workloads and periods.
    binding : pandas.DataFrame
        Top binding limits (families of
        :data:`optimizer.output.binding_limits.LIMIT_FAMILIES`): family, key, limit
        (domain words), unit (of the price, e.g. ``USD/MW``), periods (number
        binding), first_period, shadow_price (the shadow price of largest magnitude
        over those periods, signed as in ``shadow_prices.parquet``:
        d(objective)/d(limit) in discounted USD per unit, <= 0 for a binding limit),
        shadow_price_sum (sum over the binding periods: the cost change of +1 unit
        in each of them); sorted by magnitude.
    facility_twh, it_twh : float
        Energy over the horizon, TWh.
    water_million_m3 : float
        Water over the horizon, million m3.
    carbon_mt : float
        Emissions over the horizon, million t CO2.
    chips : pandas.DataFrame
        chip, installed_chips (over the horizon), fleet_chips_end,
        assigned_chips_end, it_mw_end (last period), fleet_chips_max (largest fleet).
    commitments : pandas.DataFrame
        customer, family, periods (with a commitment), breached_periods,
        max_breach_mw, min_it_mw (largest), met (bool), worst_period (the quarter of
        the largest breach), worst_floor_mw (the floor then).
    max_shortfall_mw : float
        Largest commitment breach over all commitments and periods, MW (0 when all
        are met). With ``--integer-units`` whole deployment units rarely hit a MW
        floor exactly, so small shortfalls are expected.
    costs : pandas.DataFrame
        term, cost_usd (discounted), undiscounted_cost_usd: sums over the horizon.
    n_violations : int
        Rows of the independent checker's violations.
    violations : pandas.DataFrame or None
        The violations, if any.
    infeasibility : pandas.DataFrame or None
        Which limits had to give (elastic re-solve), if infeasible.
    timings_s : Mapping[str, float]
        Seconds per step of the solve.
    integer_units : bool
        Whole deployment units (MIP).
    duals_from : str
        ``"lp"`` or ``"lp_with_integers_fixed"``: where the shadow prices come from.
    calibration : pandas.DataFrame
        The plan held against the public record (columns of
        :data:`optimizer.plan.calibration.CALIBRATION_COLUMNS`); empty without a record.
    mip_bound_usd : float or None
        Integer mode: the solver's best bound on the objective (USD).
    mip_gap : float or None
        Integer mode: relative gap ``|objective - bound| / |objective|`` (share).
    duals_note : str
        Why shadow prices are null
        (:func:`optimizer.output.binding_limits.missing_duals`: the solver returns no
        duals), else "". When set, ``binding`` is empty because the binding limits are
        not known, not because none binds.
    training_clusters : pandas.DataFrame
        Runs of each ruled customer's training per site
        (:func:`optimizer.output.summary_frames.cluster_spans` of the
        ``training_clusters`` table, customers with a cluster rule only).
    clusters_enforced : bool
        The cluster rule was exact (``--clusters`` / ``--integer-units``).
    objective : {"cost", "margin"}
        The plan's objective mode (``SolveOptions.objective``).
    margin_usd, revenue_usd, cost_usd : float or None
        Margin mode: discounted margin = revenue - cost, revenue of served demand and
        cost (every term but revenue), USD; None in the cost mode or without a plan.
    power_notes : tuple of str
        ``site: note`` per campus of the ``speed_to_power`` table: quarters its grid
        binds, bridge power placed or why none (no bridge option), flexible MW taken.
    """

    scenario: str | None
    status: str
    ok: bool
    objective_usd: float | None
    solver: str
    message: str
    dataset_name: str
    dataset_hash: str
    first_period: str
    last_period: str
    n_periods: int
    served: pd.DataFrame
    served_share: float
    binding: pd.DataFrame
    facility_twh: float
    it_twh: float
    water_million_m3: float
    carbon_mt: float
    chips: pd.DataFrame
    commitments: pd.DataFrame
    costs: pd.DataFrame
    n_violations: int
    violations: pd.DataFrame | None = None
    infeasibility: pd.DataFrame | None = None
    timings_s: Mapping[str, float] = field(default_factory=dict)
    max_shortfall_mw: float = 0.0
    integer_units: bool = False
    duals_from: str = "lp"
    calibration: pd.DataFrame = field(default_factory=pd.DataFrame)
    mip_bound_usd: float | None = None
    mip_gap: float | None = None
    duals_note: str = ""
    training_clusters: pd.DataFrame = field(default_factory=pd.DataFrame)
    clusters_enforced: bool = False
    degenerate_limits: int = 0
    objective: str = "cost"
    margin_usd: float | None = None
    revenue_usd: float | None = None
    cost_usd: float | None = None
    #: One line per campus on how it gets power (the ``speed_to_power`` table's notes).
    power_notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """Return the summary as plain Python (frames as lists of records)."""
        out: dict[str, Any] = {}
        for k, v in self.__dict__.items():
            if isinstance(v, pd.DataFrame):
                out[k] = v.to_dict(orient="records")
            elif isinstance(v, Mapping):
                out[k] = dict(v)
            else:
                out[k] = v
        return out


def summarize(
    result: Any,
    *,
    scenario: str | None = None,
    top: int = 10,
    periods: Sequence[str] | None = None,
) -> PlanSummary:
    """Compute the headline summary of a plan result (pure; no I/O).

    Parameters
    ----------
    result : PlanResult
        Any object with the PlanResult attributes (``status``, ``objective_usd``,
        ``tables`` ...). Missing tables count as empty.
    scenario : str, optional
        Scenario name to carry in the summary.
    top : int
        Number of binding limits to keep.
    periods : sequence of str, optional
        The dataset's horizon quarters; default ``result.periods``, else the periods
        found in the result tables (empty when there is no solution).

    Returns
    -------
    PlanSummary
        See its attributes for units. Served share is computed from the ``demand``
        table as sum(served_h100e) / sum(demand_h100e) over the periods; binding
        limits come from ``shadow_prices`` rows with ``binding`` true and a non-zero
        shadow price, excluding the demand and commitment families (shown in their
        own sections), grouped over periods and ranked by the largest absolute
        shadow price.
    """
    tables: Mapping[str, pd.DataFrame] = getattr(result, "tables", None) or {}
    status = _status_text(result.status)
    served, share, _ = served_frame(tables)
    horizon = [str(p) for p in (periods or getattr(result, "periods", None) or ())]
    horizon = horizon or periods_in(tables)
    commitments = commitments_frame(tables)
    facility, it, water, carbon = energy_totals(tables)
    violations = as_frame(getattr(result, "violations", None))
    infeas = as_frame(getattr(result, "infeasibility", None))
    obj = getattr(result, "objective_usd", None)
    no_duals = missing_duals(result)
    return PlanSummary(
        scenario=scenario,
        status=status,
        ok=status in OK_STATUSES,
        objective_usd=None if obj is None else float(obj),
        solver=str(getattr(result, "solver", "") or ""),
        message=str(getattr(result, "message", "") or ""),
        dataset_name=str(getattr(result, "dataset_name", "") or ""),
        dataset_hash=str(getattr(result, "dataset_hash", "") or ""),
        first_period=horizon[0] if horizon else "",
        last_period=horizon[-1] if horizon else "",
        n_periods=len(horizon),
        served=served,
        served_share=share,
        binding=binding_frame({} if no_duals else tables, top),
        facility_twh=facility,
        it_twh=it,
        water_million_m3=water,
        carbon_mt=carbon,
        chips=chips_frame(tables),
        commitments=commitments,
        costs=costs_frame(tables),
        n_violations=0 if violations is None else len(violations),
        violations=violations if violations is not None and len(violations) else None,
        infeasibility=infeas if infeas is not None and len(infeas) else None,
        timings_s={str(k): float(v) for k, v in (getattr(result, "timings_s", None) or {}).items()},
        max_shortfall_mw=max_shortfall_mw(commitments),
        integer_units=bool(getattr(result, "integer_units", False)),
        duals_from=_status_text(getattr(result, "duals_from", None) or "lp"),
        calibration=calibration_frame(tables),
        mip_bound_usd=getattr(result, "mip_bound_usd", None),
        mip_gap=getattr(result, "mip_gap", None),
        duals_note=no_duals,
        power_notes=_power_notes(tables),
        training_clusters=cluster_runs(tables, horizon),
        clusters_enforced=bool(getattr(result, "clusters", False)),
        degenerate_limits=0 if no_duals else degenerate_limits(tables),
        **_margin_fields(result),
    )


def _margin_fields(result: Any) -> dict[str, Any]:
    """``objective`` and, in the margin mode, ``margin_usd``, ``revenue_usd``, ``cost_usd``."""
    mode = str(getattr(result, "objective", "cost") or "cost")
    out: dict[str, Any] = {"objective": mode}
    if mode == "margin" and getattr(result, "objective_usd", None) is not None:
        for name in ("margin_usd", "revenue_usd", "cost_usd"):
            value = getattr(result, name, None)
            out[name] = None if value is None else float(value)
    return out


def status_line(s: PlanSummary) -> str:
    """Status in words, with the MIP gap when known: ``"time limit: feasible, gap 3.2%"``."""
    pct = None if s.mip_gap is None else 100 * s.mip_gap
    gap = "" if pct is None else f", gap {pct:.1f}%" if pct >= 0.1 else f", gap {pct:.2g}%"
    if s.status == "time_limit_feasible":
        return f"time limit: feasible{gap}"
    return f"{s.status}{gap}" if s.integer_units else s.status


def exit_code(summary: PlanSummary) -> int:
    """Return the CLI exit code: 0 for a usable plan without violations, else 1."""
    return 0 if summary.ok and summary.n_violations == 0 else 1


def _power_notes(tables: Mapping[str, Any]) -> tuple[str, ...]:
    """``site: note`` per campus of the ``speed_to_power`` table (none: no lines)."""
    t = tables.get("speed_to_power")
    if t is None or len(t) == 0:
        return ()
    return tuple(f"{r.site}: {r.note}" for r in t.itertuples() if str(r.note))
