"""Power: the independent checks and records of the power families, and the component.

Every check recomputes its limit from the decision frames (``grid_upgrade``,
``onsite_build``, ``power_energy``: ``site, source, period, value``) and the dataset
with plain pandas, never from the LP rows. The maths of the families and of their
cost terms (``grid_upgrade``, ``onsite_power``, ``carbon`` and ``energy`` by source)
is in :mod:`optimizer.components.power`; without power tables the ``energy`` term is
the grid-only one, :func:`price_grid_energy`: facility MWh x the site's
``energy_price_usd_per_mwh`` (IT MWh[c,s,p] = hours/1000 x (sum_{k,w} assign x it_kw x
power_factor[w] + (fleet - sum assign) x it_kw x idle_power_factor); facility MWh =
IT MWh x PUE(c,s); the initial fleet's energy is a constant).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.component import ColumnKind, Component, CostTerm
from optimizer.components.plan_context import PlanContext, once_per_plan
from optimizer.components.power import (
    define_carbon_cap_horizon,
    define_carbon_cap_period,
    define_grid_energy,
    define_grid_upgrade_rate,
    define_grid_upgrade_total,
    define_onsite_cap,
    define_onsite_energy,
    define_power_energy_balance,
    define_ppa_energy,
)
from optimizer.components.power_bridge import online_mw, retired_mw
from optimizer.components.power_flex import flexible_mw
from optimizer.components.power_inputs import GRID, power_modelled
from optimizer.components.records import ConstraintFamily
from optimizer.components.scenario import ScenarioColumns, ScenarioData, energy_coefficients
from optimizer.lp.builder import ModelBuilder
from optimizer.lp.frames import column_values, indexed
from optimizer.lp.join import merge
from optimizer.lp.reuse_cache import cached_on_tables
from optimizer.lp.violations import violations

_EMPTY = pd.DataFrame(
    {
        "site": pd.Series([], dtype=object),
        "source": pd.Series([], dtype=object),
        "period": pd.Series([], dtype=object),
        "value": pd.Series([], dtype=float),
    }
)


def _frame(inputs: PlanContext, kind: str) -> pd.DataFrame:
    f = inputs.frames.get(kind)
    return _EMPTY.copy() if f is None else f


def _none() -> pd.DataFrame:
    return violations("power", pd.Series([], dtype=str), [], [], "<=", 0.0)


def _upgrades(ds: Any) -> pd.DataFrame:
    """Return grid_upgrades with its ``source`` (made once while the same table)."""
    table = ds.table("grid_upgrades")
    return cached_on_tables(
        ("check_upgrades",), (table,), lambda: _sourced(table, "upgrade:", "option")
    )


def _onsite(ds: Any) -> pd.DataFrame:
    """Return onsite_generation with its ``source`` (made once while the same table)."""
    table = ds.table("onsite_generation")
    return cached_on_tables(
        ("check_onsite",), (table,), lambda: _sourced(table, "onsite:", "technology")
    )


def _sourced(table: pd.DataFrame, prefix: str, column: str) -> pd.DataFrame:
    out = table.copy()
    out["source"] = prefix + out[column].astype(str)
    return out


def _facility_mwh(inputs: PlanContext) -> pd.DataFrame:
    """Facility MWh per (site, period) recomputed from the fleet and the assignments."""
    ds, chips, sites, fleet = inputs.dataset, inputs.chips, inputs.sites, inputs.fleet
    assign = inputs.frames["assign"]
    power_factor = indexed(ds.table("workloads"), "workload")["power_factor"]
    hours = indexed(ds.table("periods"), "period")["hours"]
    pf = power_factor.reindex(assign["workload"]).to_numpy(dtype=float)
    ax = assign.assign(pfx=assign["value"] * pf)
    ax = ax.groupby(["chip", "site", "period"], as_index=False)[["value", "pfx"]].sum()
    e = fleet.merge(ax, on=["chip", "site", "period"], how="outer").fillna(
        {"fleet_chips": 0.0, "value": 0.0, "pfx": 0.0}
    )
    kw = chips["it_kw_per_chip"].reindex(e["chip"]).to_numpy(dtype=float)
    idle = chips["idle_power_factor"].reindex(e["chip"]).to_numpy(dtype=float)
    liq = (chips["cooling"].reindex(e["chip"]) == "liquid").to_numpy()
    pue = np.where(
        liq, sites["pue_liquid"].reindex(e["site"]), sites["pue_air"].reindex(e["site"])
    ).astype(float)
    h = hours.reindex(e["period"]).to_numpy(dtype=float)
    e["mwh"] = h / 1e3 * kw * (e["pfx"] + idle * (e["fleet_chips"] - e["value"])) * pue
    return e.groupby(["site", "period"], as_index=False)["mwh"].sum()


def _ppa_periods(inputs: PlanContext) -> pd.DataFrame:
    """Contract steps per period: ``source, site, period, firm, mwh_cap`` (sites allowed).

    Made from the ``ppas``, ``periods`` and ``sites`` tables alone: once while they are
    the same objects (three checks read it; a sweep's cases share it).
    """
    ds = inputs.dataset
    tables = (ds.table("ppas"), ds.table("periods"), ds.table("sites"))
    periods = list(inputs.periods)
    key = ("ppa_periods", tuple(periods))
    return cached_on_tables(key, tables, lambda: _make_ppa_periods(*tables, periods))


def _make_ppa_periods(
    ppas: pd.DataFrame, periods_table: pd.DataFrame, sites: pd.DataFrame, periods: list[str]
) -> pd.DataFrame:
    """Compute :func:`_ppa_periods` from its three tables."""
    hours = indexed(periods_table, "period")["hours"]
    rows = []
    for _, r in ppas.iterrows():
        start = str(r["from_period"])
        end = (
            str(r["to_period"])
            if str(r["to_period"]) not in ("", "nan", "None", "NaT")
            else periods[-1]
        )
        inside = [p for p in periods if start <= p <= end]
        if str(r["site"]) not in ("", "nan", "None", "NaT"):
            allowed = [str(r["site"])]
        else:
            allowed = sites.loc[sites["region"].astype(str) == str(r["region"]), "site"].tolist()
        for p in inside:
            for s in allowed:
                rows.append(
                    (
                        "ppa:" + str(r["contract"]),
                        str(s),
                        p,
                        str(r["firm"]) == "yes",
                        float(r["mw"]) * float(r["availability"]) * float(hours[p]),
                    )
                )
    return pd.DataFrame(rows, columns=["source", "site", "period", "firm", "mwh_cap"])


def _requests(inputs: PlanContext) -> pd.DataFrame:
    """Grid upgrade requests, normal and flexible (one request queue per option)."""
    return pd.concat(
        [_frame(inputs, "grid_upgrade"), _frame(inputs, "flexible_upgrade")], ignore_index=True
    )


def check_grid_upgrade_rate(inputs: PlanContext) -> pd.DataFrame:
    """MW requested per option and decision period (normal + flexible) <= max_mw_per_period."""
    if not power_modelled(inputs.dataset):
        return _none()
    dec = _requests(inputs).groupby(["site", "source", "period"], as_index=False)["value"].sum()
    dec = merge(dec, _upgrades(inputs.dataset), ["site", "source"])
    keys = dec["site"] + "/" + dec["source"] + "," + dec["period"]
    return violations(
        "grid_upgrade_rate", keys, dec["value"], dec["max_mw_per_period"], "<=", inputs.tolerance
    )


def check_grid_upgrade_total(inputs: PlanContext) -> pd.DataFrame:
    """MW requested per option over the horizon <= max_mw_total."""
    if not power_modelled(inputs.dataset):
        return _none()
    dec = _requests(inputs).groupby(["site", "source"], as_index=False)["value"].sum()
    dec = merge(dec, _upgrades(inputs.dataset), ["site", "source"])
    return violations(
        "grid_upgrade_total",
        dec["site"] + "/" + dec["source"],
        dec["value"],
        dec["max_mw_total"],
        "<=",
        inputs.tolerance,
    )


def check_onsite_cap(inputs: PlanContext) -> pd.DataFrame:
    """Check initial + built on-site MW per site and technology <= max_mw."""
    if not power_modelled(inputs.dataset):
        return _none()
    dec = _frame(inputs, "onsite_build").groupby(["site", "source"], as_index=False)["value"].sum()
    g = merge(_onsite(inputs.dataset), dec, ["site", "source"], how="left").fillna({"value": 0.0})
    return violations(
        "onsite_cap",
        g["site"] + "/" + g["source"],
        g["initial_mw"] + g["value"],
        g["max_mw"],
        "<=",
        inputs.tolerance,
    )


def check_power_energy_balance(inputs: PlanContext) -> pd.DataFrame:
    """Energy bought from every source per site and period == facility MWh (both ways)."""
    if not power_modelled(inputs.dataset):
        return _none()
    fac = _facility_mwh(inputs)
    got = _frame(inputs, "power_energy").groupby(["site", "period"], as_index=False)["value"].sum()
    m = fac.merge(got, on=["site", "period"], how="outer").fillna({"mwh": 0.0, "value": 0.0})
    keys = m["site"] + "," + m["period"]
    tol = inputs.tolerance
    short = violations("power_energy_balance", keys, m["value"], m["mwh"], ">=", tol)
    spill = violations("power_energy_balance", keys, m["value"], m["mwh"], "<=", tol)
    return pd.concat([short, spill], ignore_index=True)


def _grid_mw(inputs: PlanContext) -> pd.DataFrame:
    grid = inputs.dataset.table("site_grid")[["site", "period", "grid_mw"]]
    up = online_mw(inputs, "grid_upgrade", _upgrades(inputs.dataset))
    fx = flexible_mw(inputs)
    fx = fx[["site", "period"]].assign(mw=column_values(fx, "energy_mw", dtype=float))
    up = pd.concat([up[["site", "period", "mw"]], fx], ignore_index=True)
    up = up.groupby(["site", "period"], as_index=False)["mw"].sum()
    m = merge(grid, up, ["site", "period"], how="left").fillna({"mw": 0.0})
    m["grid_mw"] = m["grid_mw"] + m["mw"]
    return m[["site", "period", "grid_mw"]]


def check_grid_energy(inputs: PlanContext) -> pd.DataFrame:
    """Grid + non-firm PPA MWh <= (granted grid + online upgrades) MW x hours."""
    if not power_modelled(inputs.dataset):
        return _none()
    en = _frame(inputs, "power_energy")
    ppa = _ppa_periods(inputs)
    nonfirm = set(ppa.loc[~ppa["firm"], "source"]) if len(ppa) else set()
    firm_rows = ppa.loc[ppa["firm"], ["source", "site", "period"]] if len(ppa) else ppa
    through = en[(en["source"] == GRID) | en["source"].isin(nonfirm)]
    through = through.merge(firm_rows, on=["source", "site", "period"], how="left", indicator=True)
    through = through[through["_merge"] == "left_only"]
    used = through.groupby(["site", "period"], as_index=False)["value"].sum()
    cap = merge(_grid_mw(inputs), used, ["site", "period"])
    hours = indexed(inputs.dataset.table("periods"), "period")["hours"]
    cap["mwh"] = cap["grid_mw"] * hours.reindex(cap["period"]).to_numpy(dtype=float)
    return violations(
        "grid_energy",
        cap["site"] + "," + cap["period"],
        cap["value"],
        cap["mwh"],
        "<=",
        inputs.tolerance,
    )


def standing_mw(inputs: PlanContext, g: pd.DataFrame) -> pd.DataFrame:
    """Built MW standing per (site, source, period): online builds less bridge MW retired."""
    on = online_mw(inputs, "onsite_build", g)
    ret = retired_mw(inputs)
    if ret.empty:
        return on
    on = merge(on, ret, ["site", "source", "period"], how="left").fillna({"retired_mw": 0.0})
    return on.assign(mw=on["mw"] - on["retired_mw"]).drop(columns="retired_mw")


def check_onsite_energy(inputs: PlanContext) -> pd.DataFrame:
    """On-site MWh <= availability x (initial + online built MW - retired MW) x hours."""
    if not power_modelled(inputs.dataset):
        return _none()
    g = _onsite(inputs.dataset)
    on = merge(standing_mw(inputs, g), g, ["site", "source"])
    hours = indexed(inputs.dataset.table("periods"), "period")["hours"]
    on["cap"] = (
        on["availability"]
        * (on["initial_mw"] + on["mw"])
        * hours.reindex(on["period"]).to_numpy(dtype=float)
    )
    m = merge(_frame(inputs, "power_energy"), on, ["site", "source", "period"])
    keys = m["site"] + "/" + m["source"] + "," + m["period"]
    return violations("onsite_energy", keys, m["value"], m["cap"], "<=", inputs.tolerance)


def check_ppa_energy(inputs: PlanContext) -> pd.DataFrame:
    """MWh taken per contract and period (all sites) <= MW x availability x hours."""
    if not power_modelled(inputs.dataset):
        return _none()
    ppa = _ppa_periods(inputs)
    en = _frame(inputs, "power_energy")
    en = en[en["source"].str.startswith("ppa:")]
    used = en.groupby(["source", "period"], as_index=False)["value"].sum()
    cap = ppa.groupby(["source", "period"], as_index=False)["mwh_cap"].max()
    m = merge(used, cap, ["source", "period"], how="left").fillna({"mwh_cap": 0.0})
    keys = m["source"] + "," + m["period"]
    return violations("ppa_energy", keys, m["value"], m["mwh_cap"], "<=", inputs.tolerance)


def carbon_by_source(inputs: PlanContext) -> pd.DataFrame:
    """``site, source, period, value, carbon_t`` recomputed from the tables."""
    ds = inputs.dataset
    en = _frame(inputs, "power_energy").copy()
    grid_c = indexed(ds.table("sites"), "site")["carbon_t_per_mwh"]
    per = grid_c.reindex(en["site"]).to_numpy(dtype=float)
    g = _onsite(ds).set_index(["site", "source"])["carbon_t_per_mwh"]
    on = g.reindex(pd.MultiIndex.from_frame(en[["site", "source"]])).to_numpy(dtype=float)
    ppa = ds.table("ppas")
    pc = dict(zip("ppa:" + ppa["contract"].astype(str), ppa["carbon_t_per_mwh"], strict=True))
    pp = en["source"].map(pc).to_numpy(dtype=float)
    per = np.where(np.isfinite(on), on, np.where(np.isfinite(pp), pp, per))
    return en.assign(carbon_t=column_values(en, "value", dtype=float) * per)


def _caps(inputs: PlanContext) -> pd.DataFrame:
    cp = inputs.dataset.table("carbon_policy")
    return cp.assign(blank=cp["period"].astype(str).isin(["", "nan", "None"]))


def check_carbon_cap_period(inputs: PlanContext) -> pd.DataFrame:
    """CO2 per period <= that period's cap."""
    if not power_modelled(inputs.dataset):
        return _none()
    cp = _caps(inputs)
    cp = cp[~cp["blank"] & np.isfinite(column_values(cp, "carbon_cap_t", dtype=float))]
    by = carbon_by_source(inputs).groupby("period", as_index=False)["carbon_t"].sum()
    m = merge(cp, by, "period", how="left").fillna({"carbon_t": 0.0})
    return violations(
        "carbon_cap_period", m["period"], m["carbon_t"], m["carbon_cap_t"], "<=", inputs.tolerance
    )


def check_carbon_cap_horizon(inputs: PlanContext) -> pd.DataFrame:
    """CO2 over the horizon <= the horizon cap."""
    if not power_modelled(inputs.dataset):
        return _none()
    cp = _caps(inputs)
    cp = cp[cp["blank"] & np.isfinite(column_values(cp, "carbon_cap_t", dtype=float))]
    if cp.empty:
        return _none()
    total = float(carbon_by_source(inputs)["carbon_t"].sum())
    return violations(
        "carbon_cap_horizon",
        pd.Series(["horizon"]),
        [total],
        [float(cp["carbon_cap_t"].iloc[0])],
        "<=",
        inputs.tolerance,
    )


def extra_grid_mw(inputs: PlanContext) -> pd.DataFrame:
    """Facility MW beyond the granted grid per (site, period): upgrades, firm on-site, firm PPAs.

    Used by the site_grid check and the site_utilisation table (once per plan); zero
    rows when power is not modelled.
    """
    return once_per_plan(inputs, "extra_grid_mw", lambda: _extra_grid_mw(inputs))


def _extra_grid_mw(inputs: PlanContext) -> pd.DataFrame:
    """Compute :func:`extra_grid_mw`."""
    if not power_modelled(inputs.dataset):
        return pd.DataFrame(
            {
                "site": pd.Series([], dtype=object),
                "period": pd.Series([], dtype=object),
                "mw": pd.Series([], dtype=float),
            }
        )
    ds = inputs.dataset
    up = online_mw(inputs, "grid_upgrade", _upgrades(ds))[["site", "period", "mw"]]
    g = _onsite(ds)
    on = merge(standing_mw(inputs, g), g, ["site", "source"])
    on["mw"] = on["availability"] * (on["initial_mw"] + on["mw"])
    fx = flexible_mw(inputs)
    fx = fx[["site", "period"]].assign(mw=column_values(fx, "mw", dtype=float))
    parts = [up, on[["site", "period", "mw"]], fx]
    ppa = _ppa_periods(inputs)
    if len(ppa):
        firm = ppa[ppa["firm"]].drop_duplicates(["source", "site", "period"])
        hours = indexed(ds.table("periods"), "period")["hours"]
        h = hours.reindex(firm["period"]).to_numpy(dtype=float)
        firm = firm.assign(mw=firm["mwh_cap"] / h)
        parts.append(firm[["site", "period", "mw"]])
    return (
        pd.concat(parts, ignore_index=True).groupby(["site", "period"], as_index=False)["mw"].sum()
    )


_SITE_SOURCE = ("s", "o")

FAMILIES: tuple[ConstraintFamily, ...] = (
    ConstraintFamily(
        "grid_upgrade_rate",
        "MW",
        define_grid_upgrade_rate,
        check_grid_upgrade_rate,
        "grid upgrade {key} requested in {period} exceeds its per-request limit by {amount} MW",
        "MW",
        _SITE_SOURCE,
        builds_columns=True,
        summary_words="grid upgrade request limit for {1} at {0}",
        limit=True,
    ),
    ConstraintFamily(
        "grid_upgrade_total",
        "MW",
        define_grid_upgrade_total,
        check_grid_upgrade_total,
        "grid upgrade {key} (requests up to {period}) needs {amount} MW more than its total limit",
        "MW",
        _SITE_SOURCE,
        summary_words="grid upgrade total for {1} at {0}",
        limit=True,
    ),
    ConstraintFamily(
        "onsite_cap",
        "MW",
        define_onsite_cap,
        check_onsite_cap,
        "on-site generation {key} (built up to {period}) needs {amount} MW more than its site cap",
        "MW",
        _SITE_SOURCE,
        summary_words="{1} permit cap at {0}",
        limit=True,
    ),
    ConstraintFamily(
        "power_energy_balance",
        "MWh",
        define_power_energy_balance,
        check_power_energy_balance,
        "site {key} energy supply in {period} short by {amount} MWh",
        "MWh",
        ("s",),
        summary_words="facility energy at {0}",
    ),
    ConstraintFamily(
        "grid_energy",
        "MWh",
        define_grid_energy,
        check_grid_energy,
        "site {key} grid energy (grid capacity x hours) in {period} short by {amount} MWh",
        "MWh",
        ("s",),
        summary_words="grid energy (interconnect x hours) at {0}",
        limit=True,
    ),
    ConstraintFamily(
        "onsite_energy",
        "MWh",
        define_onsite_energy,
        check_onsite_energy,
        "on-site generation {key} in {period} short by {amount} MWh",
        "MWh",
        _SITE_SOURCE,
        summary_words="on-site {1} energy at {0}",
        limit=True,
    ),
    ConstraintFamily(
        "ppa_energy",
        "MWh",
        define_ppa_energy,
        check_ppa_energy,
        "power purchase agreement {key} in {period} short by {amount} MWh",
        "MWh",
        ("o",),
        summary_words="contract {0}",
        limit=True,
    ),
    ConstraintFamily(
        "carbon_cap_period",
        "t",
        define_carbon_cap_period,
        check_carbon_cap_period,
        "carbon cap{key} in {period} exceeded by {amount} t CO2",
        "t",
        (),
        summary_words="carbon cap",
        limit=True,
        policy=True,
    ),
    ConstraintFamily(
        "carbon_cap_horizon",
        "t",
        define_carbon_cap_horizon,
        check_carbon_cap_horizon,
        "carbon cap over the horizon{key} (to {period}) exceeded by {amount} t CO2",
        "t",
        (),
        summary_words="carbon cap over the horizon",
        limit=True,
        policy=True,
    ),
)


def _energy_usd(scenario: ScenarioData, per_unit: pd.DataFrame) -> np.ndarray:
    """USD per unit of an energy term: IT MWh x PUE(c,s) x the site's energy price."""
    c, s = column_values(per_unit, "c"), column_values(per_unit, "s")
    pue = scenario.cooling_split(c, s, "pue_air", "pue_liquid")
    price = scenario.site_attr(s, "energy_price_usd_per_mwh").astype(float)
    return np.asarray(column_values(per_unit, "it") * pue * price)


def price_grid_energy(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Energy (grid-only model): facility MWh x energy_price_usd_per_mwh, initial fleet a constant.

    With power tables the power families price energy by source instead.
    """
    if columns.power:
        return
    scenario = columns.scenario
    fleet_it, assign_it, initial_it = energy_coefficients(columns)
    for per_unit in (fleet_it, assign_it):
        usd = _energy_usd(scenario, per_unit)
        builder.add_cost(scenario.index, "energy", per_unit["col"], per_unit["t"], usd)
    if len(initial_it):
        builder.add_const(
            scenario.index, "energy", initial_it["t"], _energy_usd(scenario, initial_it)
        )


COMPONENT = Component(
    "power",
    columns=(
        ColumnKind("grid_upgrade", "s/o/t", "MW", "interconnection requested in period t"),
        ColumnKind("onsite_build", "s/o/t", "MW", "on-site generation decided in period t"),
        ColumnKind("power_energy", "s/o/t", "MWh", "facility energy bought from a source"),
    ),
    families=FAMILIES,
    costs=(
        CostTerm(
            "energy",
            "opex",
            price_grid_energy,
            "facility MWh x the site's energy price (by source with power tables)",
        ),
        CostTerm(
            "grid_upgrade",
            "capex",
            None,
            "cost_usd_per_mw / lifetime_periods per MW online (priced by the power families)",
        ),
        CostTerm(
            "onsite_power",
            "opex",
            None,
            "capex / lifetime_periods + fixed cost per online MW, variable and fuel cost "
            "per MWh (priced by the power families)",
        ),
        CostTerm(
            "carbon",
            "opex",
            None,
            "carbon price x t CO2 of the energy bought (priced by the power families)",
        ),
    ),
)
