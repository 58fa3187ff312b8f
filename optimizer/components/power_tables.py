"""Power result tables: power_sources (energy per source) and power_decisions.

Computed from the decision frames (``grid_upgrade``, ``onsite_build``, ``power_energy``:
``site, source, period, value``) and the dataset, like every result table; the dual of
each power row is in ``shadow_prices``. Without power as a decision the plan buys all
facility energy from the grid and power_sources holds one grid row per site-period.
Bridge power (``bridge = yes``) counts its standing MW (built less retired) and its fixed
cost here; its capex and salvage are in the ``costs`` table (term ``onsite_power``) in
the quarters they are paid and received. PPA rows of power_decisions: one per contract
and site taken, decided and online in the first period with energy, mw = the largest
average MW taken.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.component import ResultTable
from optimizer.components.plan_context import PlanContext
from optimizer.components.power import HOURS_PER_YEAR
from optimizer.components.power_bridge import retired_mw
from optimizer.components.power_inputs import power_modelled
from optimizer.components.power_online import online_per_decision
from optimizer.components.power_steps import ppa_steps
from optimizer.components.table_columns import F64, PERIOD, SITE, STR, col, column_names
from optimizer.lp.frames import column_values, indexed
from optimizer.lp.join import merge
from optimizer.lp.reuse_cache import cached_on_tables

__all__ = [
    "POWER_DECISIONS",
    "POWER_SOURCES",
    "TABLES",
    "extra_facility_mw",
    "source_energy",
    "upgrade_requests",
]

_ZERO = 1e-6


def _frame(frames: Mapping[str, pd.DataFrame], kind: str) -> pd.DataFrame:
    f = frames.get(kind)
    if f is None:
        return pd.DataFrame(
            {
                "site": pd.Series([], dtype=object),
                "source": pd.Series([], dtype=object),
                "period": pd.Series([], dtype=object),
                "value": pd.Series([], dtype=float),
            }
        )
    return f


def _online(dec: pd.DataFrame, options: pd.DataFrame, periods: list[str]) -> pd.DataFrame:
    """Online MW per (site, source, period), with the rent-bearing decisions' columns."""
    pos = {p: i for i, p in enumerate(periods)}
    d = merge(dec[dec["value"].abs() > _ZERO], options, ["site", "source"])
    if d.empty:
        return pd.DataFrame(
            {
                "site": pd.Series([], dtype=object),
                "source": pd.Series([], dtype=object),
                "period": pd.Series([], dtype=object),
                "mw": pd.Series([], dtype=float),
                "rent": pd.Series([], dtype=float),
            }
        )
    t_on = (d["period"].map(pos) + d["lead_periods"]).to_numpy(dtype=float)
    return online_per_decision(d, t_on, list(periods))  # summed on codes


def _options(ds: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Upgrade and on-site options with their source and rent (made once while the same tables)."""
    tables = (ds.table("grid_upgrades"), ds.table("onsite_generation"))
    up, g = cached_on_tables(("table_options",), tables, lambda: _make_options(*tables))
    return up.copy(deep=False), g.copy(deep=False)


def _make_options(
    upgrades: pd.DataFrame, onsite: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    up = upgrades.copy()
    up["source"] = "upgrade:" + up["option"].astype(str)
    up["rent_per_mw"] = up["cost_usd_per_mw"] / up["lifetime_periods"]
    g = onsite.copy()
    g["source"] = "onsite:" + g["technology"].astype(str)
    g["rent_per_mw"] = g["capex_usd_per_mw"] / g["lifetime_periods"]
    if "bridge" in g:  # bridge power is bought and salvaged, not rented (costs: onsite_power)
        g.loc[g["bridge"].astype(str) == "yes", "rent_per_mw"] = 0.0
    g["energy_usd_per_mwh"] = (
        g["variable_cost_usd_per_mwh"]
        + g["fuel_price_usd_per_mmbtu"] * g["heat_rate_mmbtu_per_mwh"]
    )
    return up, g


def _flexible_options(ds: Any, up: pd.DataFrame) -> pd.DataFrame:
    """Return the upgrade options taken as flexible interconnection, at their flexible lead.

    Flexible MW are rented like the option's normal MW (``cost_usd_per_mw /
    lifetime_periods``) from their flexible online period (``flexible_lead_periods``
    after the request), as :mod:`optimizer.components.power_flex` prices them.
    """
    fx = ds.table("flexible_interconnection")[["site", "option", "flexible_lead_periods"]]
    m = merge(up, fx, ["site", "option"])
    return m.assign(lead_periods=m["flexible_lead_periods"]).drop(columns="flexible_lead_periods")


def upgrade_requests(decisions: pd.DataFrame | None, flexible: pd.DataFrame | None) -> pd.DataFrame:
    """Every grid-upgrade request of a plan, normal and flexible, with its price.

    Parameters
    ----------
    decisions : DataFrame or None
        The ``power_decisions`` table (its ``grid_upgrade`` rows are taken).
    flexible : DataFrame or None
        The ``flexible_interconnection`` table (MW requested under the flexible
        offer, priced by the same ``grid_upgrades`` row and paid the same way).

    Returns
    -------
    DataFrame
        ``site, decision_period, mw, capex_usd_per_mw`` [-, quarter, MW, USD/MW], one
        row per request: the cash paid in ``decision_period`` is ``mw x
        capex_usd_per_mw``.
    """
    cols = ["site", "decision_period", "mw", "capex_usd_per_mw"]
    parts = []
    if decisions is not None and len(decisions):
        parts.append(decisions.loc[decisions["kind"] == "grid_upgrade", cols])
    if flexible is not None and len(flexible) and "capex_usd_per_mw" in flexible.columns:
        parts.append(flexible[cols])
    if not parts:
        return pd.DataFrame(
            {c: pd.Series([], dtype=float if c in cols[2:] else object) for c in cols}
        )
    return pd.concat(parts, ignore_index=True)


def _unit_prices(ds: Any, en: pd.DataFrame, onsite: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    sites = ds.table("sites").set_index("site")
    price = sites["energy_price_usd_per_mwh"].reindex(en["site"]).to_numpy(dtype=float)
    carbon = sites["carbon_t_per_mwh"].reindex(en["site"]).to_numpy(dtype=float)
    key = pd.MultiIndex.from_frame(en[["site", "source"]])
    g = onsite.set_index(["site", "source"])
    op = g["energy_usd_per_mwh"].reindex(key).to_numpy(dtype=float)
    oc = g["carbon_t_per_mwh"].reindex(key).to_numpy(dtype=float)
    step = ppa_steps(ds, list(ds.periods)).drop_duplicates(["source", "period"], keep="last")
    at = pd.MultiIndex.from_frame(en[["source", "period"]])
    by = step.set_index(["source", "period"])
    pp = by["price_usd_per_mwh"].reindex(at).to_numpy(dtype=float)
    pc = by["carbon_t_per_mwh"].reindex(at).to_numpy(dtype=float)
    price = np.where(np.isfinite(op), op, np.where(np.isfinite(pp), pp, price))
    carbon = np.where(np.isfinite(oc), oc, np.where(np.isfinite(pc), pc, carbon))
    return price, carbon


def _ppa_mw(ds: Any, periods: list[str]) -> pd.DataFrame:
    """Contracted MW per (PPA source, period) of every active step."""
    steps = ppa_steps(ds, periods)
    return steps[["source", "period", "mw"]].rename(columns={"mw": "contract_mw"})


def _initial_only(g: pd.DataFrame, on: pd.DataFrame, periods: list[str]) -> pd.DataFrame:
    """Rows (0 MW built, no rent) of every period of the sources with initial MW alone."""
    has = set(zip(column_values(on, "site"), column_values(on, "source"), strict=True))
    init = g[column_values(g, "initial_mw", dtype=float) > 0]
    pairs = [
        (s, o)
        for s, o in zip(column_values(init, "site"), column_values(init, "source"), strict=True)
        if (s, o) not in has
    ]
    n = len(periods)
    return pd.DataFrame(
        {
            "site": pd.Series([s for s, _ in pairs for _ in range(n)], dtype=object),
            "source": pd.Series([o for _, o in pairs for _ in range(n)], dtype=object),
            "period": pd.Series(periods * len(pairs), dtype=object),
            "mw": np.zeros(n * len(pairs)),
            "rent": np.zeros(n * len(pairs)),
        }
    )


def _onsite_capacity(ctx: PlanContext, g: pd.DataFrame, hours: pd.Series) -> pd.DataFrame:
    """On-site MW standing per (site, source, period) and its rent plus fixed cost.

    Every period of a source with a decision or with initial MW (a source standing
    from the start with no build had no row: 0 MW while it ran).
    """
    periods = list(ctx.dataset.periods)
    on = _online(_frame(ctx.frames, "onsite_build"), g, periods)
    on = pd.concat([on, _initial_only(g, on, periods)], ignore_index=True)
    on = merge(
        on, g[["site", "source", "initial_mw", "fixed_cost_usd_per_mw_year"]], ["site", "source"]
    )
    ret = retired_mw(ctx)
    on = merge(on, ret, ["site", "source", "period"], how="left").fillna({"retired_mw": 0.0})
    on["capacity_mw"] = on["mw"] + on["initial_mw"] - on["retired_mw"]
    h = hours.reindex(on["period"]).to_numpy(dtype=float)
    on["extra_cost"] = (
        on["rent"] + on["capacity_mw"] * on["fixed_cost_usd_per_mw_year"] * h / HOURS_PER_YEAR
    )
    return on


def source_energy(ctx: PlanContext) -> pd.DataFrame:
    """MWh of each power source per site and period, their cost and carbon (power modelled).

    ``site, source, period, energy_mwh, cost_usd, carbon_t``: the MWh times the source's
    price per MWh (grid at the site's price, a PPA at its contract, on-site plant at its
    variable and fuel cost) and carbon; no capacity rent or fixed cost (power_sources
    adds those). Made once per plan.
    """

    def make() -> pd.DataFrame:
        en = _frame(ctx.frames, "power_energy")
        en = en[en["value"].abs() > _ZERO].copy()
        price, carbon = _unit_prices(ctx.dataset, en, _options(ctx.dataset)[1])
        en["energy_mwh"] = en["value"]
        en["cost_usd"] = en["value"] * price
        en["carbon_t"] = en["value"] * carbon
        return en

    out: pd.DataFrame = ctx.once(("source_energy",), make)
    return out


def _power_sources(ctx: PlanContext) -> pd.DataFrame:
    """Build power_sources: capacity, energy, cost and carbon per site, period and source.

    Without power as a decision all facility energy comes from the grid
    (:attr:`PlanContext.site_energy`).
    """
    ds, frames, energy = ctx.dataset, ctx.frames, ctx.site_energy
    periods = list(ds.periods)
    grid = ds.table("site_grid")[["site", "period", "grid_mw"]]
    if not power_modelled(ds):
        f = energy[["site", "period", "facility_mwh", "energy_cost_usd", "carbon_t"]]
        f = merge(f, grid, ["site", "period"], how="left")
        return pd.DataFrame(
            {
                "site": f["site"],
                "period": f["period"],
                "source": "grid",
                "capacity_mw": f["grid_mw"].fillna(0.0),
                "energy_mwh": f["facility_mwh"],
                "cost_usd": f["energy_cost_usd"],
                "carbon_t": f["carbon_t"],
            }
        )
    up, g = _options(ds)
    en = source_energy(ctx)
    hours = indexed(ds.table("periods"), "period")["hours"]
    ups = pd.concat(
        [
            _online(_frame(frames, "grid_upgrade"), up, periods),
            _online(_frame(frames, "flexible_upgrade"), _flexible_options(ds, up), periods),
        ],
        ignore_index=True,
    )
    ups = ups.groupby(["site", "period"], as_index=False)[["mw", "rent"]].sum()
    gr = merge(grid, ups, ["site", "period"], how="left").fillna({"mw": 0.0, "rent": 0.0})
    gr = gr.assign(source="grid", capacity_mw=gr["grid_mw"] + gr["mw"], extra_cost=gr["rent"])
    on = _onsite_capacity(ctx, g, hours)
    pm = merge(_ppa_mw(ds, periods), en[["site", "source", "period"]], ["source", "period"])
    pm = pm.rename(columns={"contract_mw": "capacity_mw"}).assign(extra_cost=0.0)
    cap = pd.concat(
        [
            gr[["site", "period", "source", "capacity_mw", "extra_cost"]],
            on[["site", "period", "source", "capacity_mw", "extra_cost"]],
            pm[["site", "period", "source", "capacity_mw", "extra_cost"]],
        ],
        ignore_index=True,
    )
    m = cap.merge(
        en[["site", "period", "source", "energy_mwh", "cost_usd", "carbon_t"]],
        on=["site", "period", "source"],
        how="outer",
    )
    m = m.fillna({"capacity_mw": 0.0, "extra_cost": 0.0, "energy_mwh": 0.0, "cost_usd": 0.0})
    m = m.fillna({"carbon_t": 0.0})
    m["cost_usd"] = m["cost_usd"] + m["extra_cost"]
    keep = (m["source"] == "grid") | (m["capacity_mw"].abs() > _ZERO) | (m["energy_mwh"] > _ZERO)
    pos = {p: i for i, p in enumerate(periods)}
    m = m[keep].assign(_t=m["period"].map(pos)).sort_values(["site", "source", "_t"])
    return m[list(_SOURCES)].reset_index(drop=True)


def _power_decisions(ctx: PlanContext) -> pd.DataFrame:
    """Build power_decisions: each upgrade, on-site build and PPA taken, with its prices."""
    ds, frames = ctx.dataset, ctx.frames
    if not power_modelled(ds):
        return pd.DataFrame({c: [] for c in _DECISIONS})
    periods = list(ds.periods)
    pos = {p: i for i, p in enumerate(periods)}
    up, g = _options(ds)
    grid_price = indexed(ds.table("sites"), "site")["energy_price_usd_per_mwh"]
    parts = []
    for kind, frame, opts in (("grid_upgrade", "grid_upgrade", up), ("onsite", "onsite_build", g)):
        d = _frame(frames, frame)
        d = merge(d[d["value"] > _ZERO], opts, ["site", "source"])
        if d.empty:
            continue
        t_on = d["period"].map(pos).to_numpy() + column_values(d, "lead_periods")
        capex = d["cost_usd_per_mw"] if kind == "grid_upgrade" else d["capex_usd_per_mw"]
        parts.append(
            pd.DataFrame(
                {
                    "site": d["site"],
                    "kind": kind,
                    "option": d["source"].str.split(":", n=1).str[1],
                    "decision_period": d["period"],
                    "online_period": [periods[t] if t < len(periods) else "" for t in t_on],
                    "mw": d["value"],
                    "capex_usd_per_mw": capex.to_numpy(dtype=float),
                    "energy_usd_per_mwh": (
                        np.nan if kind == "grid_upgrade" else d["energy_usd_per_mwh"]
                    ),
                    "grid_price_usd_per_mwh": grid_price.reindex(d["site"]).to_numpy(),
                    "carbon_t_per_mwh": (
                        np.nan if kind == "grid_upgrade" else d["carbon_t_per_mwh"]
                    ),
                }
            )
        )
    parts.append(_ppa_decisions(ds, frames, grid_price, pos))
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return out.reindex(columns=list(_DECISIONS)).reset_index(drop=True)


def _ppa_decisions(
    ds: Any, frames: Mapping[str, pd.DataFrame], grid_price: pd.Series, pos: dict[str, int]
) -> pd.DataFrame:
    en = _frame(frames, "power_energy")
    en = en[en["source"].str.startswith("ppa:") & (en["value"] > _ZERO)].copy()
    if en.empty:
        return pd.DataFrame({c: [] for c in _DECISIONS})
    hours = indexed(ds.table("periods"), "period")["hours"]
    en["mw"] = en["value"] / hours.reindex(en["period"]).to_numpy(dtype=float)
    en["_t"] = en["period"].map(pos)
    price, carbon = _unit_prices(ds, en, _options(ds)[1])
    en["price"], en["carbon"] = price, carbon
    first = en.sort_values("_t").groupby(["site", "source"], as_index=False).first()
    peak = en.groupby(["site", "source"], as_index=False)["mw"].max()
    f = merge(first.drop(columns="mw"), peak, ["site", "source"])
    return pd.DataFrame(
        {
            "site": f["site"],
            "kind": "ppa",
            "option": f["source"].str.split(":", n=1).str[1],
            "decision_period": f["period"],
            "online_period": f["period"],
            "mw": f["mw"],
            "capex_usd_per_mw": 0.0,
            "energy_usd_per_mwh": f["price"],
            "grid_price_usd_per_mwh": grid_price.reindex(f["site"]).to_numpy(),
            "carbon_t_per_mwh": f["carbon"],
        }
    )


def extra_facility_mw(ctx: PlanContext) -> pd.DataFrame:
    """Return the facility MW beyond the granted grid per (site, period), for site_utilisation.

    Energised upgrades, on-site nameplate x availability and firm PPA average MW (once
    per context; empty when power is not a decision).

    Parameters
    ----------
    ctx : PlanContext

    Returns
    -------
    DataFrame
        ``site, period, extra_mw``.
    """
    out: pd.DataFrame = ctx.once("extra_facility_mw", lambda: _extra_mw(ctx.dataset, _sources(ctx)))
    return out


def _sources(ctx: PlanContext) -> pd.DataFrame:
    return ctx.table("power_sources")


def _extra_mw(ds: Any, sources: pd.DataFrame) -> pd.DataFrame:
    """Compute :func:`extra_facility_mw` from the power_sources table."""
    if not power_modelled(ds) or sources.empty:
        return pd.DataFrame(
            {
                "site": pd.Series([], dtype=object),
                "period": pd.Series([], dtype=object),
                "extra_mw": pd.Series([], dtype=float),
            }
        )
    grid = ds.table("site_grid").set_index(["site", "period"])["grid_mw"]
    g = sources[sources["source"] == "grid"]
    key = pd.MultiIndex.from_frame(g[["site", "period"]])
    parts = [
        g.assign(
            extra_mw=column_values(g, "capacity_mw") - grid.reindex(key).fillna(0.0).to_numpy()
        )
    ]
    _, onsite = _options(ds)
    on = merge(sources, onsite[["site", "source", "availability"]], ["site", "source"])
    parts.append(on.assign(extra_mw=on["capacity_mw"] * on["availability"]))
    firm = ppa_steps(ds, list(ds.periods))
    firm = firm[column_values(firm, "firm")]
    if len(firm):
        mw = column_values(firm, "mw") * column_values(firm, "availability")
        parts.append(pd.DataFrame({"site": firm["site"], "period": firm["period"], "extra_mw": mw}))
    out = pd.concat([p[["site", "period", "extra_mw"]] for p in parts], ignore_index=True)
    return out.groupby(["site", "period"], as_index=False)["extra_mw"].sum()


POWER_SOURCES = ResultTable(
    "power_sources",
    (
        SITE,
        PERIOD,
        col("source", STR, "", "Power source: grid, onsite:<technology> or ppa:<contract>."),
        col(
            "capacity_mw",
            F64,
            "MW",
            "Grid: granted + energised upgrades (flexible MW from their early online "
            "period); on-site: nameplate online; PPA: contracted.",
        ),
        col("energy_mwh", F64, "MWh", "Facility energy bought from the source."),
        col(
            "cost_usd",
            F64,
            "USD",
            "Undiscounted cost: energy at its price plus upgrade rent (grid: normal and "
            "flexible MW) or capex rent and fixed cost (on-site). Bridge power's purchase "
            "and salvage are not here: costs.onsite_power holds them.",
        ),
        col("carbon_t", F64, "t CO2", "Emissions of the energy."),
    ),
    build=_power_sources,
)

POWER_DECISIONS = ResultTable(
    "power_decisions",
    (
        SITE,
        col("kind", STR, "", "grid_upgrade | onsite | ppa."),
        col("option", STR, "", "Upgrade option, technology or contract ID."),
        col("decision_period", STR, "quarter", "Quarter the request, order or contract is made."),
        col("online_period", STR, "quarter", "First quarter the MW are available."),
        col("mw", F64, "MW", "MW requested or built; PPA: largest average MW taken."),
        col("capex_usd_per_mw", F64, "USD/MW", "Upgrade cost or on-site capex per MW."),
        col(
            "energy_usd_per_mwh",
            F64,
            "USD/MWh",
            "Energy cost of the source (fuel + O&M, or PPA price).",
        ),
        col("grid_price_usd_per_mwh", F64, "USD/MWh", "The site's grid price, for comparison."),
        col("carbon_t_per_mwh", F64, "t CO2/MWh", "Emissions per MWh of the source."),
    ),
    build=_power_decisions,
)

_SOURCES = column_names(POWER_SOURCES)
_DECISIONS = column_names(POWER_DECISIONS)

#: The tables of this part of the plan.
TABLES: tuple[ResultTable, ...] = (POWER_SOURCES, POWER_DECISIONS)
