"""A plan's ten-second summary: pure computation (:func:`summarize`) and rich rendering.

:func:`summarize` turns a plan result into a :class:`PlanSummary` of small frames and
numbers (no I/O, reusable by the app and by batch); :func:`render_summary` prints it
with rich. Money is the discounted objective's USD; compute is H100-equivalents
(H100e); energy is facility energy (IT energy x PUE).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from optimizer.components import REGISTRY

__all__ = [
    "OK_STATUSES",
    "PlanSummary",
    "commitments_title",
    "describe_limit",
    "missing_duals",
    "no_duals_text",
    "exit_code",
    "fmt_energy",
    "fmt_qty",
    "fmt_water",
    "fmt_usd",
    "render_summary",
    "summarize",
    "violation_rows",
]

OK_STATUSES = ("optimal", "time_limit_feasible")
"""Statuses with a usable plan (exit code 0)."""

#: Families listed as "binding limits": the registry's physical and supply limits
#: (``ConstraintFamily.limit``). Structural rows (liquid share of new build, chip
#: inventory, fleet assignment) price a MW of new capacity or one chip rather than a
#: limit, and demand and commitments have their own sections; all of them stay in
#: ``shadow_prices.parquet``.
LIMIT_FAMILIES = frozenset(f.name for f in REGISTRY if f.limit)

#: Domain words for each constraint family, from the registry
#: (``ConstraintFamily.summary_words``); ``{0}``, ``{1}`` ... are the parts of the row
#: key (``chip/site``), ``{key}`` the whole key.
FAMILY_WORDS: dict[str, str] = {f.name: f.summary_words for f in REGISTRY if f.summary_words}

_TOL = 1e-6


# ---------------------------------------------------------------------------------
# Formatting


def fmt_usd(x: float | None, digits: int = 1) -> str:
    """Format USD compactly: ``412.3e9 -> "$412.3B"``, ``-2.5e6 -> "-$2.5M"``.

    Returns "n/a" for None or NaN and "∞" / "-∞" for an infinite amount (e.g. an
    unbounded value of the stochastic solution).
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    sign = "-" if x < 0 else ""
    return f"{sign}${fmt_qty(abs(x), digits)}"


def fmt_qty(x: float | None, digits: int = 1) -> str:
    """Format a quantity with a k/M/B/T suffix: ``1234567 -> "1.2M"``; small ones plain."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    a = abs(x)
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return f"{x / div:.{digits}f}{suffix}"
    if a == 0:
        return "0"
    return f"{x:.{digits}f}" if a < 10 else f"{x:.0f}"


def fmt_energy(mwh: float) -> str:
    """Format energy from MWh: ``2.589e8 -> "258.90 TWh"``, ``1200 -> "1.20 GWh"``."""
    if abs(mwh) >= 1e6:
        return f"{mwh / 1e6:,.2f} TWh"
    if abs(mwh) >= 1e3:
        return f"{mwh / 1e3:,.2f} GWh"
    return f"{mwh:,.1f} MWh"


def fmt_water(m3: float) -> str:
    """Format water from m3: ``1.05e8 -> "104.94 million m3"``, ``2500 -> "2,500 m3"``."""
    if abs(m3) >= 1e6:
        return f"{m3 / 1e6:,.2f} million m3"
    return f"{m3:,.0f} m3"


def _pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{100 * x:.1f}%"


def describe_limit(family: str, key: str) -> str:
    """Describe a constraint row in domain words.

    Examples
    --------
    >>> describe_limit("site_grid", "new_carlisle")
    'grid interconnect at new_carlisle'
    >>> describe_limit("fleet_assignment", "h100/new_carlisle")
    'fleet of h100 at new_carlisle'
    >>> describe_limit("supply_resource", "cowos_wafers")
    'supply of cowos_wafers'
    """
    parts = [k for k in str(key).replace("|", "/").split("/") if k] or ["-"]
    text_key = "/".join(parts)
    template = FAMILY_WORDS.get(family)
    if template is not None:
        try:
            return template.format(*parts, key=text_key)
        except IndexError:
            pass
    return f"{family.replace('_', ' ')} {text_key}".strip()


def _singular(unit: str) -> str:
    """'wafers' -> 'wafer', 'stacks' -> 'stack'; units like 'MW' or 'm3' unchanged."""
    if len(unit) > 3 and unit.isalpha() and unit.islower() and unit.endswith("s"):
        return unit[:-1]
    return unit


def _status_text(status: Any) -> str:
    return str(getattr(status, "value", status))


# ---------------------------------------------------------------------------------
# The summary


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
        Top binding limits (families of :data:`LIMIT_FAMILIES`): family, key, limit
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
        assigned_chips_end, it_mw_end (last period).
    commitments : pandas.DataFrame
        customer, family, periods (with a commitment), breached_periods,
        max_breach_mw, min_it_mw (largest), met (bool).
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
        Why shadow prices are null (:func:`missing_duals`: the solver returns no
        duals), else "". When set, ``binding`` is empty because the binding limits are
        not known, not because none binds.
    training_clusters : pandas.DataFrame
        Runs of each ruled customer's training per site
        (:func:`cluster_spans` of the ``training_clusters`` table, customers with a cluster
        rule only).
    clusters_enforced : bool
        The cluster rule was exact (``--clusters`` / ``--integer-units``).
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


def _table(tables: Mapping[str, pd.DataFrame], name: str, columns: list[str]) -> pd.DataFrame:
    df = tables.get(name)
    if df is None or not all(c in df.columns for c in columns):
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    return df


def _served(tables: Mapping[str, pd.DataFrame]) -> tuple[pd.DataFrame, float, int]:
    cols = ["customer", "workload", "period", "demand_h100e", "served_h100e", "unmet_h100e"]
    d = _table(tables, "demand", cols)
    n_periods = int(d["period"].nunique()) if len(d) else 0
    out_cols = ["customer", "workload", "demand_h100e", "served_h100e", "unmet_h100e"]
    if d.empty:
        return pd.DataFrame(columns=[*out_cols, "served_share"]), math.nan, 0
    g = (
        d.groupby(["customer", "workload"], sort=True)[
            ["demand_h100e", "served_h100e", "unmet_h100e"]
        ]
        .sum()
        .reset_index()
    )
    share = g["served_h100e"] / g["demand_h100e"].where(g["demand_h100e"] > 0)
    for c in ("demand_h100e", "served_h100e", "unmet_h100e"):
        g[c] = g[c] / n_periods
    g["served_share"] = share.astype(float)
    total_d = float(d["demand_h100e"].sum())
    total = float(d["served_h100e"].sum()) / total_d if total_d > 0 else math.nan
    return g, total, n_periods


def _binding(tables: Mapping[str, pd.DataFrame], top: int) -> pd.DataFrame:
    cols = ["family", "period", "key", "shadow_price", "unit", "slack", "binding"]
    out_cols = [
        "family",
        "key",
        "limit",
        "unit",
        "periods",
        "first_period",
        "shadow_price",
        "shadow_price_sum",
    ]
    sp = _table(tables, "shadow_prices", cols)
    if sp.empty:
        return pd.DataFrame(columns=out_cols)
    price = pd.to_numeric(sp["shadow_price"], errors="coerce").fillna(0.0)
    mask = (
        sp["binding"].astype(bool)
        & (price.abs() > _TOL)
        & sp["family"].astype(str).isin(LIMIT_FAMILIES)
    )
    b = sp.loc[mask, ["family", "key", "unit", "period"]].copy()
    if b.empty:
        return pd.DataFrame(columns=out_cols)
    # signed as in the reports: d(objective)/d(limit), <= 0 for a binding limit
    b["price"] = price[mask]
    b["abs_price"] = b["price"].abs()
    b = b.sort_values("abs_price", ascending=False, kind="stable")
    g = (
        b.groupby(["family", "key", "unit"], sort=False)
        .agg(
            periods=("period", "nunique"),
            first_period=("period", "min"),
            shadow_price=("price", "first"),
            shadow_price_sum=("price", "sum"),
            peak=("abs_price", "first"),
        )
        .reset_index()
    )
    g = g.sort_values(["peak", "family", "key"], ascending=[False, True, True])
    g = g.head(top).reset_index(drop=True)
    g["limit"] = [describe_limit(f, k) for f, k in zip(g["family"], g["key"], strict=True)]
    g["periods"] = g["periods"].astype(int)
    return g[out_cols]


def missing_duals(result: Any) -> str:
    """Say why a plan has no shadow prices; "" when the solver returned its duals.

    The one signal every reader of duals uses (summary, Monte Carlo binding shares,
    the app): ``PlanResult.duals_note`` (set by the solve when the solver returns no
    duals), else a ``shadow_prices`` table whose every price is null (a result read
    back without its note).

    Parameters
    ----------
    result : PlanResult
        Any object with ``duals_note`` and ``tables`` (missing ones count as empty).

    Returns
    -------
    str
        The reason, e.g. ``"SCIP_PY returns no duals through PuLP"``; "" when duals
        were received (or the plan has no rows to price).
    """
    note = str(getattr(result, "duals_note", "") or "")
    if note:
        return note
    sp = (getattr(result, "tables", None) or {}).get("shadow_prices")
    if isinstance(sp, pd.DataFrame) and len(sp) and "shadow_price" in sp.columns:
        if bool(pd.to_numeric(sp["shadow_price"], errors="coerce").isna().all()):
            return "the solver returned no duals"
    return ""


def no_duals_text(solver: str, why: str = "") -> str:
    """Say that shadow prices are not available, and which solvers give them.

    Parameters
    ----------
    solver : str
        The solver of the plan (``SCIP_PY``).
    why : str
        The reason (:func:`missing_duals`).

    Returns
    -------
    str
        E.g. ``"shadow prices are not available from SCIP_PY (SCIP_PY returns no duals
        through PuLP); solve with highs, PULP_CBC_CMD or HiGHS for them"``: the
        suggested names are the available solvers that return duals
        (:func:`optimizer.plan.solvers.dual_solver_names`). When the solver itself returns
        duals (they were lost for another reason) only the reason is given.
    """
    from optimizer.plan.solvers import dual_solver_names, returns_duals

    name = solver or "this solver"
    reason = f" ({why})" if why else ""
    if solver and returns_duals(solver):
        return f"shadow prices are not available for this plan{reason}"
    others = [n for n in dual_solver_names() if n.lower() != name.lower()]
    if not others:
        return f"shadow prices are not available from {name}{reason}"
    names = others[0] if len(others) == 1 else ", ".join(others[:-1]) + " or " + others[-1]
    return f"shadow prices are not available from {name}{reason}; solve with {names} for them"


def degenerate_limits(tables: Mapping[str, pd.DataFrame]) -> int:
    """Count plant and supply limits used to the full with a zero shadow price.

    Such rows make the plan degenerate: the duals are not unique, so another solver
    (or a warm start) can return the same plan with another set of priced, "binding"
    limits. Rows of :data:`LIMIT_FAMILIES` with ``binding`` true and
    ``|shadow_price| <= 1e-6`` are counted.
    """
    sp = _table(tables, "shadow_prices", ["family", "shadow_price", "binding"])
    if sp.empty:
        return 0
    price = pd.to_numeric(sp["shadow_price"], errors="coerce")
    mask = (
        sp["binding"].astype(bool)
        & sp["family"].astype(str).isin(LIMIT_FAMILIES)
        & (price.abs() <= _TOL)
    )
    return int(mask.sum())


def _dual_notes(s: PlanSummary) -> list[str]:
    """Return the notes under the binding limits: degenerate duals, duals of a fixed MIP."""
    if s.duals_note:
        return []  # no shadow prices: the binding line already says so
    notes = [degenerate_note(s.degenerate_limits)] if s.degenerate_limits else []
    if s.duals_from == "lp_with_integers_fixed":
        notes.append(fixed_integers_note(s.integer_units))
    return notes


def fixed_integers_note(integer_units: bool) -> str:
    """Return the note on shadow prices of a MIP, naming the integers of the mode that ran.

    Parameters
    ----------
    integer_units : bool
        ``--integer-units`` (whole-unit installs and cluster choices are integers);
        False: cluster mode, where only the training-cluster choices are.
    """
    held = (
        "the whole-unit installs and the training-cluster choices of the MIP are"
        if integer_units
        else "the training-cluster choices of the MIP (which sites host each customer's "
        "training in each period) are"
    )
    return (
        f"Shadow prices come from the LP with the integers fixed: {held} held at their "
        "values and the LP is re-solved for duals."
    )


def degenerate_note(n: int) -> str:
    """Return the summary's note on degenerate duals (see :func:`degenerate_limits`)."""
    return (
        f"Note: {n} limit(s) are used to the full with a zero shadow price, so the "
        "shadow prices are not unique: HiGHS and CBC (or a warm start) can return this "
        "same plan with a different list of binding limits."
    )


def _chips(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    cols = ["chip", "period", "installed_chips", "fleet_chips", "assigned_chips", "it_mw"]
    f = _table(tables, "fleet", cols)
    out_cols = [
        "chip",
        "installed_chips",
        "fleet_chips_end",
        "assigned_chips_end",
        "it_mw_end",
    ]
    if f.empty:
        return pd.DataFrame(columns=out_cols)
    last = max(f["period"])
    inst = f.groupby("chip")["installed_chips"].sum()
    end = f[f["period"] == last].groupby("chip")[["fleet_chips", "assigned_chips", "it_mw"]].sum()
    g = pd.DataFrame({"installed_chips": inst}).join(end, how="outer").fillna(0.0)
    g = g.rename(
        columns={
            "fleet_chips": "fleet_chips_end",
            "assigned_chips": "assigned_chips_end",
            "it_mw": "it_mw_end",
        }
    )
    g = g.reset_index().rename(columns={"index": "chip"})
    keep = (g["installed_chips"] > _TOL) | (g["fleet_chips_end"] > _TOL)
    g = g[keep].sort_values(["fleet_chips_end", "chip"], ascending=[False, True])
    return g[out_cols].reset_index(drop=True)


def _commitments(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    cols = ["customer", "family", "period", "min_it_mw", "breach_mw"]
    c = _table(tables, "commitments", cols)
    out_cols = [
        "customer",
        "family",
        "periods",
        "breached_periods",
        "max_breach_mw",
        "min_it_mw",
        "met",
    ]
    if c.empty:
        return pd.DataFrame(columns=out_cols)
    c = c[c["min_it_mw"] > 0].copy()
    if c.empty:
        return pd.DataFrame(columns=out_cols)
    c["breached"] = c["breach_mw"] > _TOL * c["min_it_mw"].clip(lower=1.0)
    g = (
        c.groupby(["customer", "family"], sort=True)
        .agg(
            periods=("period", "nunique"),
            breached_periods=("breached", "sum"),
            max_breach_mw=("breach_mw", "max"),
            min_it_mw=("min_it_mw", "max"),
        )
        .reset_index()
    )
    g["breached_periods"] = g["breached_periods"].astype(int)
    g["met"] = g["breached_periods"] == 0
    return g[out_cols]


def _costs(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    cols = ["term", "cost_usd", "undiscounted_cost_usd"]
    c = _table(tables, "costs", cols)
    if c.empty:
        return pd.DataFrame(columns=[*cols, "cash_usd"])
    if "cash_usd" not in c:
        c = c.assign(cash_usd=0.0)
    return c.groupby("term", sort=False)[[*cols[1:], "cash_usd"]].sum().reset_index()


def _energy_totals(tables: Mapping[str, pd.DataFrame]) -> tuple[float, float, float, float]:
    e = _table(tables, "energy", ["it_mwh", "facility_mwh", "water_m3", "carbon_t"])
    return (
        float(e["facility_mwh"].sum()) / 1e6 if len(e) else 0.0,
        float(e["it_mwh"].sum()) / 1e6 if len(e) else 0.0,
        float(e["water_m3"].sum()) / 1e6 if len(e) else 0.0,
        float(e["carbon_t"].sum()) / 1e6 if len(e) else 0.0,
    )


def _as_frame(value: Any) -> pd.DataFrame | None:
    if value is None:
        return None
    if isinstance(value, pd.DataFrame):
        return value
    rows = [v if isinstance(v, Mapping) else vars(v) for v in value]
    return pd.DataFrame(rows)


def _periods_in(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """Sorted periods found in the demand, build-out and fleet tables."""
    return sorted(
        {
            str(p)
            for name in ("demand", "build_out", "fleet")
            if name in tables and "period" in tables[name].columns
            for p in tables[name]["period"]
        }
    )


def _max_shortfall_mw(commitments: pd.DataFrame) -> float:
    """Largest breach of a commitment that is not met (MW; 0 when all are met)."""
    if len(commitments) and not bool(commitments["met"].all()):
        return float(pd.to_numeric(commitments["max_breach_mw"]).max())
    return 0.0


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
    served, share, _ = _served(tables)
    horizon = [str(p) for p in (periods or getattr(result, "periods", None) or ())]
    horizon = horizon or _periods_in(tables)
    commitments = _commitments(tables)
    facility, it, water, carbon = _energy_totals(tables)
    violations = _as_frame(getattr(result, "violations", None))
    infeas = _as_frame(getattr(result, "infeasibility", None))
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
        binding=_binding({} if no_duals else tables, top),
        facility_twh=facility,
        it_twh=it,
        water_million_m3=water,
        carbon_mt=carbon,
        chips=_chips(tables),
        commitments=commitments,
        costs=_costs(tables),
        n_violations=0 if violations is None else len(violations),
        violations=violations if violations is not None and len(violations) else None,
        infeasibility=infeas if infeas is not None and len(infeas) else None,
        timings_s={str(k): float(v) for k, v in (getattr(result, "timings_s", None) or {}).items()},
        max_shortfall_mw=_max_shortfall_mw(commitments),
        integer_units=bool(getattr(result, "integer_units", False)),
        duals_from=_status_text(getattr(result, "duals_from", None) or "lp"),
        calibration=_calibration_frame(tables),
        mip_bound_usd=getattr(result, "mip_bound_usd", None),
        mip_gap=getattr(result, "mip_gap", None),
        duals_note=no_duals,
        training_clusters=_cluster_runs(tables, horizon),
        clusters_enforced=bool(getattr(result, "clusters", False)),
        degenerate_limits=0 if no_duals else degenerate_limits(tables),
    )


def _cluster_runs(tables: Mapping[str, pd.DataFrame], horizon: Sequence[str]) -> pd.DataFrame:
    """Cluster runs of customers with a rule (min size or max sites), else empty."""
    tc = _as_frame(tables.get("training_clusters"))
    if tc is None or tc.empty:
        return pd.DataFrame()
    ruled = (tc["min_cluster_mw"] > 0) | (tc["min_cluster_h100e"] > 0) | (tc["max_sites"] > 0)
    return cluster_spans(tc[ruled.to_numpy()], list(horizon))


def cluster_spans(table: pd.DataFrame, periods: list[str] | tuple[str, ...]) -> pd.DataFrame:
    """Find the runs of consecutive periods in which a site hosts a customer's training.

    Parameters
    ----------
    table : DataFrame
        The ``training_clusters`` result table.
    periods : sequence of str
        Horizon quarters in order.

    Returns
    -------
    DataFrame
        ``customer, site, first_period, last_period, periods`` (run length, quarters),
        ``mean_it_mw`` and ``max_it_mw`` (MW over the run), ``meets_minimum`` (True
        when every period of the run meets the rule); sorted by customer, first period.
    """
    cols = [
        "customer",
        "site",
        "first_period",
        "last_period",
        "periods",
        "mean_it_mw",
        "max_it_mw",
        "meets_minimum",
    ]
    if table.empty:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in cols})
    order = {p: i for i, p in enumerate(periods)}
    t = table.assign(_t=table["period"].map(order)).sort_values(["customer", "site", "_t"])
    new_run = (t.groupby(["customer", "site"])["_t"].diff() != 1).to_numpy()
    t["_run"] = np.cumsum(new_run)
    g = t.groupby(["customer", "site", "_run"], as_index=False).agg(
        first=("_t", "min"),
        last=("_t", "max"),
        periods=("_t", "count"),
        mean_it_mw=("it_mw", "mean"),
        max_it_mw=("it_mw", "max"),
        meets_minimum=("meets_minimum", "all"),
    )
    per = np.asarray(list(periods), dtype=object)
    g["first_period"] = per[g["first"].to_numpy(dtype=np.int64)]
    g["last_period"] = per[g["last"].to_numpy(dtype=np.int64)]
    g = g.sort_values(["customer", "first", "site"]).reset_index(drop=True)
    return g[cols]


def clusters_text(s: PlanSummary) -> list[str]:
    """Lines on the training clusters: runs per customer, or the LP-mode fragmentation.

    E.g. ``"Training clusters (exact, MIP gap 1.2%): openai: west_texas 2025Q4-2030Q4
    (mean 812 MW), ..."``; in LP mode the rule is not enforced and the lines say how
    many site-periods are below the minimum. Empty when no customer has a rule.
    """
    runs = s.training_clusters
    if runs is None or runs.empty:
        return []
    if s.clusters_enforced:
        gap = "" if s.mip_gap is None else f", MIP gap {s.mip_gap:.2%}"
        head = f"Training clusters (exact rule{gap}):"
    else:
        bad = runs[~runs["meets_minimum"].astype(bool)]
        head = (
            "Training clusters (LP mode: rule reported, not enforced; "
            f"{len(bad)} run(s) below the minimum size; solve with --clusters):"
        )
    lines = [head]
    for customer, g in runs.groupby("customer", sort=True):
        parts = [
            f"{r.site} {r.first_period}-{r.last_period} ({fmt_qty(float(r.mean_it_mw))} MW"
            + ("" if r.meets_minimum else ", below minimum")
            + ")"
            for r in g.itertuples(index=False)
        ]
        lines.append(f"  {customer}: " + ", ".join(parts))
    return lines


def _calibration_frame(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    cal = _as_frame(tables.get("calibration"))
    return pd.DataFrame() if cal is None else cal


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


# ---------------------------------------------------------------------------------
# Rendering

_STATUS_STYLE = {
    "optimal": "bold green",
    "time_limit_feasible": "bold yellow",
}


def _solver_notes(s: PlanSummary, con: Console) -> None:
    """Print the MIP best bound, when the solver reports one."""
    if s.mip_bound_usd is not None:
        con.print(f"MIP best bound: {fmt_usd(s.mip_bound_usd)}")


def render_summary(summary: PlanSummary, console: Console | None = None) -> None:
    """Print a summary with rich, readable in ten seconds.

    Sections: status and objective, costs by term, demand served per customer and
    workload, binding limits ranked by shadow price, energy and water, chips by
    generation, commitments; for a plan without a usable solution, the reason and the
    elastic re-solve's explanation rows instead.

    Parameters
    ----------
    summary : PlanSummary
        From :func:`summarize`.
    console : rich.console.Console, optional
        Where to print (default: a new console on stdout).
    """
    con = console or Console()
    s = summary
    style = _STATUS_STYLE.get(s.status, "bold red")
    title = f"Plan {s.scenario!r}" if s.scenario else "Plan"
    horizon = f"{s.first_period}-{s.last_period}" if s.first_period else "no periods"
    con.print(
        f"[bold]{title}[/bold] on {s.dataset_name or 'dataset'} ({horizon}, "
        f"{s.n_periods} quarters), solver {s.solver or '?'}"
        + (f", {sum(s.timings_s.values()):.1f} s" if s.timings_s else "")
    )
    objective = fmt_usd(s.objective_usd)
    if s.n_violations:
        objective = "n/a — the solution failed the independent check"
    con.print(
        f"Status: [{style}]{status_line(s)}[/{style}]   "
        f"Objective (discounted): [bold]{objective}[/bold]"
    )
    _solver_notes(s, con)
    if s.status == "time_limit_feasible":
        con.print("[yellow]Warning: time limit reached; the plan is feasible, not proven optimal.")
    if s.status == "time_limit_no_solution":
        con.print("[red]The time limit was reached before any feasible plan was found.")
    if s.message and not s.ok:
        con.print(f"[red]{s.message}")
    if s.n_violations:
        con.print(
            f"[bold red]{s.n_violations} constraint violation(s) found by the independent "
            "check: the plan is not trusted."
        )
        if s.violations is not None:
            con.print(_violations_table(s.violations))
            con.print(_violations_by_family(s.violations))
    if s.infeasibility is not None:
        con.print(_infeasibility_table(s.infeasibility))
    if not s.ok:
        return
    if not s.costs.empty:
        parts = ", ".join(
            f"{t.replace('_', ' ')} {fmt_usd(v)}"
            for t, v in zip(s.costs["term"], s.costs["cost_usd"], strict=True)
        )
        con.print(f"Costs (discounted; capex as in-horizon rent, the objective): {parts}")
        con.print(_cash_line(s.costs, s.facility_twh, s.n_periods))
    con.print(_served_table(s))
    if s.duals_note:
        con.print(f"[yellow]Binding limits: unknown, {no_duals_text(s.solver, s.duals_note)}.")
    elif s.binding.empty:
        con.print("Binding limits: no plant or supply limit binds with a non-zero shadow price")
    else:
        con.print(_binding_table(s))
    for note in _dual_notes(s):
        con.print(note)
    con.print(
        f"Energy: [bold]{fmt_energy(s.facility_twh * 1e6)}[/bold] facility "
        f"({fmt_energy(s.it_twh * 1e6)} IT)   Water: [bold]{fmt_water(s.water_million_m3 * 1e6)}"
        f"[/bold]   Carbon: {fmt_qty(s.carbon_mt * 1e6)} t CO2   (over the horizon)"
    )
    con.print(_chips_table(s))
    if s.commitments.empty:
        con.print("Commitments: none in this dataset")
    else:
        con.print(_commitments_table(s))
    _print_clusters_and_calibration(con, s)


def _print_clusters_and_calibration(con: Console, s: PlanSummary) -> None:
    """Print the training-cluster lines, then the calibration section."""
    for line in clusters_text(s):
        con.print(line)
    _print_calibration(con, s.calibration)


def _cash_line(costs: pd.DataFrame, facility_twh: float, n_periods: int) -> str:
    """Cash view line: undiscounted capex when spent and opex, plus the plan's energy a year."""
    if "cash_usd" not in costs:
        return ""
    cash = costs.set_index("term")["cash_usd"]

    def term(name: str) -> float:
        return float(cash.get(name, 0.0))

    capex = term("chip_capex") + term("build_capex") + term("retrofit_capex")
    years = n_periods / 4 if n_periods else 0.0
    per_year = (
        f"; the plan's computed facility energy {facility_twh / years:,.1f} TWh a year"
        if years
        else ""
    )
    return (
        f"Cash (undiscounted, when spent): capex {fmt_usd(capex)} (chips at full price when "
        f"installed {fmt_usd(term('chip_capex'))}, buildings when decided "
        f"{fmt_usd(term('build_capex'))}, retrofits {fmt_usd(term('retrofit_capex'))}), opex "
        f"energy {fmt_usd(term('energy'))}{per_year}"
    )


def calibration_headline(cal: pd.DataFrame) -> str:
    """One line: how many scored public-record rows the plan matches.

    E.g. ``"Calibration: 14 of 16 scored rows inside their band (3 more not matchable
    yet)"``; "" when the dataset has no public record.
    """
    if cal is None or cal.empty or "matchable" not in cal.columns:
        return ""
    scored = cal[cal["matchable"].astype(bool)]
    inside = int(scored["inside_band"].astype(bool).sum())
    rest = len(cal) - len(scored)
    extra = f" ({rest} more not matchable yet)" if rest else ""
    return f"Calibration: {inside} of {len(scored)} scored rows inside their band{extra}"


def _cal_num(x: float) -> str:
    v = float(x)
    return fmt_qty(v, 2) if math.isnan(v) or abs(v) >= 1000 else f"{v:.3g}"


def _print_calibration(con: Console, cal: pd.DataFrame) -> None:
    from optimizer.plan.calibration import worst_rows

    line = calibration_headline(cal)
    if not line:
        return
    con.print(line)
    worst = worst_rows(cal, 3)
    worst = worst[~worst["inside_band"].astype(bool)]
    if worst.empty:
        return
    t = Table(title="Furthest outside their band (worst three)", title_justify="left")
    for c in ("metric", "scope", "period", "record (low-high)", "plan", "unit"):
        t.add_column(c, justify="right" if c in ("plan", "record (low-high)") else "left")
    for r in worst.itertuples(index=False):
        t.add_row(
            str(r.metric),
            str(r.scope),
            str(r.period),
            f"{_cal_num(r.record_value)} ({_cal_num(r.record_low)}-{_cal_num(r.record_high)})",
            _cal_num(r.plan_value),
            str(r.unit),
        )
    con.print(t)


def _served_table(s: PlanSummary) -> Table:
    t = Table(
        title=f"Demand served over the horizon: {_pct(s.served_share)} of H100e demand",
        title_justify="left",
    )
    t.add_column("customer")
    t.add_column("workload")
    t.add_column("demand (H100e, avg/quarter)", justify="right")
    t.add_column("served (H100e, avg/quarter)", justify="right")
    t.add_column("served share", justify="right")
    for r in s.served.itertuples(index=False):
        share = float(r.served_share)
        colour = "green" if share >= 1 - 1e-6 else ("yellow" if share >= 0.9 else "red")
        t.add_row(
            str(r.customer),
            str(r.workload),
            fmt_qty(float(r.demand_h100e)),
            fmt_qty(float(r.served_h100e)),
            f"[{colour}]{_pct(share)}[/{colour}]",
        )
    return t


def _price(value: float, unit: str) -> str:
    """``(534137.2, "USD/MW") -> "$534.1k/MW"``; ``"USD/wafers"`` -> ``"/wafer"``."""
    per = unit[4:] if unit.startswith("USD/") else unit
    return f"{fmt_usd(value)}/{_singular(per)}"


def _binding_table(s: PlanSummary) -> Table:
    t = Table(
        title=f"Binding limits, by |shadow price| (top {len(s.binding)}; shadow price = "
        "d(discounted cost)/d(limit) in USD per unit, as in the reports: negative when "
        "one more unit of the limit lowers the cost)",
        title_justify="left",
    )
    t.add_column("#", justify="right")
    t.add_column("limit")
    t.add_column("binding quarters", justify="right")
    t.add_column("from")
    t.add_column("shadow price, d(cost)/d(limit) (peak quarter)", justify="right")
    t.add_column("cost change, +1 unit in every binding quarter", justify="right")
    for i, r in enumerate(s.binding.itertuples(index=False), start=1):
        t.add_row(
            str(i),
            str(r.limit),
            str(r.periods),
            str(r.first_period),
            _price(float(r.shadow_price), str(r.unit)),
            fmt_usd(float(r.shadow_price_sum)),
        )
    return t


def _chips_table(s: PlanSummary) -> Table:
    t = Table(title=f"Chips by generation (fleet at end of {s.last_period})", title_justify="left")
    t.add_column("chip")
    t.add_column("installed over horizon (chips)", justify="right")
    t.add_column("fleet at end (chips)", justify="right")
    t.add_column("assigned at end (chips)", justify="right")
    t.add_column("IT at end (MW)", justify="right")
    for r in s.chips.itertuples(index=False):
        t.add_row(
            str(r.chip),
            fmt_qty(float(r.installed_chips)),
            fmt_qty(float(r.fleet_chips_end)),
            fmt_qty(float(r.assigned_chips_end)),
            f"{float(r.it_mw_end):,.0f}",
        )
    return t


#: A commitment breach of at most this share of its MW floor reads as "met except
#: a small shortfall" (whole deployment units cannot hit a MW floor exactly).
SMALL_SHORTFALL_SHARE = 0.01


def _mw(x: float) -> str:
    """``1234.5 -> "1,234"``, ``12.34 -> "12.3"``, ``0.1234 -> "0.12"`` (MW)."""
    a = abs(x)
    if a >= 100:
        return f"{x:,.0f}"
    if a >= 1:
        return f"{x:,.1f}"
    return f"{x:.2g}"


def _small_shortfall(max_breach_mw: float, min_it_mw: float) -> bool:
    return max_breach_mw <= SMALL_SHORTFALL_SHARE * max(min_it_mw, 1.0)


def commitments_title(s: PlanSummary) -> str:
    """Return the title of the commitments section, naming the largest shortfall.

    ``"Commitments: all 2 met in every period"``; when the breached ones fall short
    only by small amounts (at most :data:`SMALL_SHORTFALL_SHARE` of their MW floor,
    e.g. whole deployment units in ``--integer-units`` mode) ``"Commitments: all 2
    met to within 0.2 MW (0.01% of the floor)"``; otherwise ``"Commitments: 1 of 2
    met in every period; largest shortfall 120 MW of a 2,000 MW floor (6.0% short)"``.
    """
    c = s.commitments
    n = len(c)
    met = int(c["met"].sum()) if n else 0
    if met == n:
        return f"Commitments: all {n} met in every period"
    unmet = c[~c["met"].astype(bool)]
    breach = pd.to_numeric(unmet["max_breach_mw"]).astype(float)
    floor = pd.to_numeric(unmet["min_it_mw"]).astype(float).clip(lower=1.0)
    pct = 100 * float((breach / floor).max())
    share = f"{pct:.0f}% of the floor" if pct >= 10 else f"{pct:.2g}% of the floor"
    short = _mw(s.max_shortfall_mw)
    if all(_small_shortfall(b, m) for b, m in zip(breach, floor, strict=True)):
        title = f"Commitments: all {n} met to within {short} MW ({share})"
        if s.integer_units:
            title += ": whole deployment units cannot hit a MW floor exactly"
        return title
    worst = int(np.argmax(breach.to_numpy()))  # the largest shortfall, with its own floor
    of = _mw(float(pd.to_numeric(unmet["min_it_mw"]).astype(float).iloc[worst]))
    gap = 100 * float(breach.iloc[worst] / floor.iloc[worst])
    gap_text = f"{gap:.0f}%" if gap >= 10 else f"{gap:.2g}%"
    return (
        f"Commitments: {met} of {n} met in every period; largest shortfall {short} MW "
        f"of a {of} MW floor ({gap_text} short)"
    )


def _commitments_table(s: PlanSummary) -> Table:
    t = Table(title=commitments_title(s), title_justify="left")
    t.add_column("customer")
    t.add_column("family")
    t.add_column("min IT (MW)", justify="right")
    t.add_column("result")
    for r in s.commitments.itertuples(index=False):
        if r.met:
            result = f"[green]met in all {r.periods} periods[/green]"
        else:
            colour = (
                "yellow" if _small_shortfall(float(r.max_breach_mw), float(r.min_it_mw)) else "red"
            )
            result = (
                f"[{colour}]breached in {r.breached_periods} of {r.periods} periods "
                f"(up to {_mw(float(r.max_breach_mw))} MW short)[/{colour}]"
            )
        t.add_row(str(r.customer), str(r.family), f"{float(r.min_it_mw):,.0f}", result)
    return t


def _infeasibility_table(df: pd.DataFrame) -> Table:
    t = Table(title="Infeasible: limits that had to give (elastic re-solve)", title_justify="left")
    if "message" in df.columns:
        t.add_column("what had to give")
        for m in df["message"]:
            t.add_row(str(m))
        return t
    return _frame_table(df, "Infeasible: limits that had to give")


_PERIOD = re.compile(r"^\d{4}Q[1-4]$")


def _num(x: Any) -> str:
    """Round a checker number for reading: ``655.5801399 -> "655.6"``, ``0.01234 -> "0.0123"``."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(v):
        return "n/a"
    if abs(v) >= 1 or v == 0:
        return f"{v:,.1f}"
    return f"{v:.3g}"


def violation_rows(df: pd.DataFrame, top: int = 10) -> pd.DataFrame:
    """Return the ``top`` largest checker violations in domain words, rounded.

    Parameters
    ----------
    df : pandas.DataFrame
        ``family, constraint, keys, lhs, rhs, violation`` (:mod:`optimizer.plan.check`;
        keys such as ``"new_carlisle,2025Q4"``).
    top : int
        Rows to keep, largest ``violation`` first.

    Returns
    -------
    pandas.DataFrame
        Columns ``constraint`` (e.g. "IT power capacity at new_carlisle"), ``period``,
        ``value`` (the row's left-hand side), ``limit`` (right-hand side) and
        ``violated_by``, all strings.
    """
    d = df.copy()
    if "violation" in d.columns:
        d["_v"] = pd.to_numeric(d["violation"], errors="coerce").fillna(0.0)
        d = d.sort_values("_v", ascending=False, kind="stable")
    rows = []
    for r in d.head(top).to_dict(orient="records"):
        parts = [p for p in re.split(r"[,/|]", str(r.get("keys", ""))) if p]
        period = ",".join(p for p in parts if _PERIOD.match(p))
        key = "/".join(p for p in parts if not _PERIOD.match(p))
        rows.append(
            {
                "constraint": describe_limit(str(r.get("family", "")), key),
                "period": period,
                "value": _num(r.get("lhs")),
                "limit": _num(r.get("rhs")),
                "violated_by": _num(r.get("violation")),
            }
        )
    return pd.DataFrame(rows, columns=["constraint", "period", "value", "limit", "violated_by"])


def _violations_table(df: pd.DataFrame, top: int = 10) -> Table:
    rows = violation_rows(df, top)
    t = Table(
        title=f"Violations: the {len(rows)} largest of {len(df)} (row value vs its limit)",
        title_justify="left",
    )
    t.add_column("#", justify="right")
    t.add_column("constraint")
    t.add_column("period")
    t.add_column("value", justify="right")
    t.add_column("limit", justify="right")
    t.add_column("violated by", justify="right")
    for i, r in enumerate(rows.itertuples(index=False), start=1):
        t.add_row(str(i), r.constraint, r.period, r.value, r.limit, r.violated_by)
    return t


def _violations_by_family(df: pd.DataFrame) -> str:
    if "family" not in df.columns or df.empty:
        return ""
    counts = df["family"].astype(str).value_counts()
    return "Violations by family: " + ", ".join(
        f"{f.replace('_', ' ')} {n}" for f, n in counts.items()
    )


def _frame_table(df: pd.DataFrame, title: str) -> Table:
    t = Table(title=title, title_justify="left")
    for c in df.columns:
        t.add_column(str(c), overflow="fold")
    for row in df.itertuples(index=False):
        t.add_row(*[str(v) for v in row])
    return t
