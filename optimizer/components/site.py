"""Sites: build, liquid cooling, retrofit, grid, water; the site component.

Maths (index letters in :mod:`optimizer.lp.dimensions`, ``p`` the period):
``fleet[c,s,p]`` chips alive, ``it_capacity[s,p]`` = initial IT MW + pipeline online +
builds online (decided ``lead_time_periods`` earlier), ``liquid_capacity[s,p]`` =
initial liquid MW + pipeline liquid + liquid builds online + cumulative retrofit (see
:mod:`optimizer.components.construction`). Facility power is counted on the installed
fleet's nameplate IT MW split by cooling: liquid-only chips at ``pue_liquid``, air and
either chips at ``pue_air`` (an "either" chip may sit in an air hall); empty halls draw
nothing, so the grid limits what is installed, not what is built.

* ``site_it_power``: sum_c fleet*it_kw/1000 (+ retrofit downtime) <= it_capacity  (MW)
* ``site_liquid_share``: liquid[s,p] <= liquid_share_max * build[s,p]            (MW)
* ``site_liquid``: sum_{c liquid-only} fleet*it_kw/1000 <= liquid_capacity      (MW)
* ``site_grid``: sum_c fleet*it_kw/1000 * PUE(c,s) <= grid_mw[s,p] (+ the power
  component's upgrades, on-site and firm PPA MW)                                (MW)
* ``site_build_rate``: build[s,p] <= max_build_mw_per_period                    (MW)
* ``site_max``: initial + pipeline + cumulative build <= max_it_mw              (MW)
* ``site_water``: sum IT MWh(c,s,p) * WUE(c,s) <= water_permit_m3 (m3; WUE split by
  cooling like PUE, L/kWh == m3/MWh)
* ``site_retrofit_rate``, ``site_retrofit_pool``: :mod:`optimizer.components.construction`
* ``site_built``, ``site_liquid_built``: built-to-date columns the rows above read
  instead of running sums on large models (:mod:`optimizer.components.site_built`)

Cost terms (capex, a straight-line rent per period of use inside the horizon, no
salvage): ``build_capex`` build_capex_usd_per_mw / ``FACILITY_LIFE_PERIODS`` per MW
built, every period from its decision to the horizon end; ``retrofit_capex`` likewise
with retrofit_capex_usd_per_mw. Initial and pipeline capacity are sunk.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from optimizer.components.component import ColumnKind, Component, CostTerm
from optimizer.components.construction import FAMILIES as construction_families
from optimizer.components.construction import (
    downtime_terms,
    pipeline_online,
    pipeline_total,
    price_build_capex,
    price_retrofit_capex,
    retrofit_downtime_mw,
)
from optimizer.components.plan_context import PlanContext, site_period_keys
from optimizer.components.power import site_supply
from optimizer.components.power_check import extra_grid_mw
from optimizer.components.records import ConstraintFamily, ResultRows
from optimizer.components.scenario import ScenarioColumns, energy_coefficients
from optimizer.components.site_built import FAMILIES as built_families
from optimizer.components.site_built import running_terms
from optimizer.lp.builder import ModelBuilder, cumulative
from optimizer.lp.frames import column_values, indexed
from optimizer.lp.grouping import reindexed, take, value_at
from optimizer.lp.join import merge
from optimizer.lp.violations import violations

_PUE = ("pue_air", "pue_liquid")
_WUE = ("wue_l_per_kwh_air", "wue_l_per_kwh_liquid")


def _site_rows(
    fleet_keys: pd.DataFrame, mw_per_chip: np.ndarray
) -> tuple[pd.DataFrame, np.ndarray]:
    """Keys (s, t) of a fleet-load row per site and period, with the initial fleet's MW."""
    keys = fleet_keys.assign(mw0=fleet_keys["init"] * mw_per_chip)
    keys = keys.groupby(["s", "t"], as_index=False)["mw0"].sum()
    return keys, column_values(keys, "mw0")


# ----------------------------------------------------------------------------- define
def define_site_it_power(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Site IT power: sum_c fleet*it_kw/1000 + down_s*retrofit[s,p] <= it_capacity[s,p].

    ``it_capacity`` = initial + pipeline online + builds decided L_s periods earlier
    (:mod:`optimizer.components.construction`); the builds' running sum is the column
    ``built[s, p - L_s]`` where :func:`~optimizer.components.site_built.define_site_built`
    built it.
    """
    scenario, fleet_keys = columns.scenario, columns.fleet_keys
    if fleet_keys.empty:
        return
    mw = scenario.it_mw_per_chip(column_values(fleet_keys, "c"))
    keys, mw0 = _site_rows(fleet_keys, mw)
    rhs = scenario.site_attr(column_values(keys, "s"), "initial_it_mw") - mw0
    rhs = rhs + pipeline_online(scenario, keys, "it_mw")
    rows = builder.add_rows("site_it_power", scenario.index, keys, "<=", rhs)
    row_of = keys[["s", "t"]].assign(row=rows)
    fleet = merge(columns.fleet_columns, row_of, ["s", "t"])
    builder.add_terms(
        fleet["row"], fleet["col"], scenario.it_mw_per_chip(column_values(fleet, "c"))
    )
    built = running_terms(columns.build, columns.built, row_of, scenario, online=True)
    builder.add_terms(built["row"], built["col"], -1.0)
    down = downtime_terms(columns, row_of)
    builder.add_terms(down["row"], down["col"], column_values(down, "share", dtype=float))


def define_site_liquid_share(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Liquid share of new build: liquid[s,p] <= liquid_share_max_s * build[s,p]."""
    scenario = columns.scenario
    if not len(columns.liquid):
        return
    liquid = columns.liquid.merge(
        columns.build[["s", "t", "col"]], on=["s", "t"], suffixes=("", "_b")
    )
    rows = builder.add_rows(
        "site_liquid_share", scenario.index, liquid, "<=", np.zeros(len(liquid))
    )
    builder.add_terms(rows, liquid["col"], 1.0)
    share = scenario.site_attr(column_values(liquid, "s"), "liquid_share_max")
    builder.add_terms(rows, liquid["col_b"], -share)


def define_site_liquid(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Liquid cooling: sum_{c liquid-only} fleet * it_kw / 1000 <= liquid_capacity[s,p].

    ``liquid_capacity`` = initial liquid + pipeline liquid online + liquid builds
    decided L_s periods earlier + cumulative retrofit; the liquid builds' running sum
    is ``liquid_built[s, p - L_s]`` where
    :func:`~optimizer.components.site_built.define_site_liquid_built` built it.
    """
    scenario = columns.scenario
    fleet_keys = columns.fleet_keys
    fleet_keys = fleet_keys[
        scenario.chip_attr(column_values(fleet_keys, "c"), "cooling") == "liquid"
    ]
    if fleet_keys.empty:
        return
    mw = scenario.it_mw_per_chip(column_values(fleet_keys, "c"))
    keys, mw0 = _site_rows(fleet_keys, mw)
    rhs = scenario.site_attr(column_values(keys, "s"), "initial_liquid_mw") - mw0
    rhs = rhs + pipeline_online(scenario, keys, "liquid_mw")
    rows = builder.add_rows("site_liquid", scenario.index, keys, "<=", rhs)
    row_of = keys[["s", "t"]].assign(row=rows)
    fleet = columns.fleet_columns
    liquid_only = scenario.chip_attr(column_values(fleet, "c"), "cooling") == "liquid"
    fleet = merge(fleet[liquid_only], row_of, ["s", "t"])
    builder.add_terms(
        fleet["row"], fleet["col"], scenario.it_mw_per_chip(column_values(fleet, "c"))
    )
    built = running_terms(columns.liquid, columns.liquid_built, row_of, scenario, online=True)
    builder.add_terms(built["row"], built["col"], -1.0)
    converted = merge(cumulative(columns.retrofit, scenario.n_periods), row_of, ["s", "t"])
    builder.add_terms(converted["row"], converted["col"], -1.0)


def define_site_grid(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Site grid: sum_c fleet*it_kw/1000 * PUE(c,s) <= grid_mw[s,p] (liquid chips: pue_liquid)."""
    scenario, fleet_keys = columns.scenario, columns.fleet_keys
    if fleet_keys.empty:
        return

    def facility_mw(frame: pd.DataFrame) -> np.ndarray:
        c, s = column_values(frame, "c"), column_values(frame, "s")
        return scenario.it_mw_per_chip(c) * scenario.cooling_split(c, s, *_PUE)

    keys, mw0 = _site_rows(fleet_keys, facility_mw(fleet_keys))
    keys = merge(keys, scenario.grid, ["s", "t"], how="left")
    supply_const, supply_terms = site_supply(columns)  # the power decisions
    keys = merge(keys, supply_const, ["s", "t"], how="left").fillna({"mw": 0.0})
    rhs = (
        keys["grid_mw"].fillna(np.inf).to_numpy()
        - column_values(keys, "mw0")
        + column_values(keys, "mw")
    )
    keep = np.isfinite(rhs)
    keys, rhs = keys[keep], rhs[keep]
    rows = builder.add_rows("site_grid", scenario.index, keys, "<=", rhs)
    row_of = keys[["s", "t"]].assign(row=rows)
    fleet = merge(columns.fleet_columns, row_of, ["s", "t"])
    builder.add_terms(fleet["row"], fleet["col"], facility_mw(fleet))
    extra = merge(supply_terms, row_of, ["s", "t"])
    builder.add_terms(extra["row"], extra["col"], -column_values(extra, "mw"))


def define_site_build_rate(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Build rate: build[s,p] <= max_build_mw_per_period_s."""
    scenario, build = columns.scenario, columns.build
    if build.empty:
        return
    limit = scenario.site_attr(column_values(build, "s"), "max_build_mw_per_period")
    rows = builder.add_rows("site_build_rate", scenario.index, build, "<=", limit)
    builder.add_terms(rows, build["col"], 1.0)


def define_site_max(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Site size: cum build decided[s,p] <= max_it_mw_s - initial_it_mw_s - pipeline_s.

    The running sum of the builds is the column ``built[s,p]`` where
    :func:`~optimizer.components.site_built.define_site_built` built it.
    """
    scenario, build = columns.scenario, columns.build
    if build.empty:
        return
    s = column_values(build, "s")
    room = scenario.site_attr(s, "max_it_mw") - scenario.site_attr(s, "initial_it_mw")
    room = room - pipeline_total(scenario, s)
    rows = builder.add_rows("site_max", scenario.index, build[["s", "t"]], "<=", room)
    row_of = build[["s", "t"]].assign(row=rows)
    built = running_terms(build, columns.built, row_of, scenario, online=False)
    builder.add_terms(built["row"], built["col"], 1.0)


def define_site_water(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Site water: sum IT MWh(c,s,p) * WUE(c,s) <= water_permit_m3[s,p] (WUE split by cooling)."""
    scenario = columns.scenario
    if columns.fleet_keys.empty:
        return
    fleet_it, assign_it, initial_it = energy_coefficients(columns)
    initial_m3 = initial_it.assign(
        m3=initial_it["it"]
        * scenario.cooling_split(
            column_values(initial_it, "c"), column_values(initial_it, "s"), *_WUE
        )
    )
    keys = columns.fleet_keys[["s", "t"]].drop_duplicates()
    keys = merge(
        keys, initial_m3.groupby(["s", "t"], as_index=False)["m3"].sum(), ["s", "t"], how="left"
    )
    keys = merge(keys, scenario.water, ["s", "t"], how="left").sort_values(["s", "t"])
    rhs = keys["permit"].fillna(np.inf).to_numpy() - keys["m3"].fillna(0.0).to_numpy()
    keep = np.isfinite(rhs)
    keys, rhs = keys[keep], rhs[keep]
    rows = builder.add_rows("site_water", scenario.index, keys, "<=", rhs)
    row_of = keys[["s", "t"]].assign(row=rows)
    for per_unit in (fleet_it, assign_it):
        m = merge(per_unit, row_of, ["s", "t"])
        wue = scenario.cooling_split(column_values(m, "c"), column_values(m, "s"), *_WUE)
        builder.add_terms(m["row"], m["col"], column_values(m, "it") * wue)


# ------------------------------------------------------------------------------ check
def _by_site_period(values: pd.Series, frame: pd.DataFrame, on: pd.DataFrame) -> pd.Series:
    """``values`` (aligned with ``frame``'s site, period) reindexed on ``on``'s pairs."""
    vals = values.to_numpy() if isinstance(values, pd.Series) else np.asarray(values)
    if len(frame) == len(on) and all(
        bool((frame[c].to_numpy() == on[c].to_numpy()).all()) for c in ("site", "period")
    ):
        return pd.Series(vals)  # the same pairs in the same order: nothing to move
    indexed = pd.Series(
        values.to_numpy() if isinstance(values, pd.Series) else values,
        index=pd.MultiIndex.from_frame(frame[["site", "period"]]),
    )
    return indexed.reindex(pd.MultiIndex.from_frame(on[["site", "period"]]))


def check_site_it_power(inputs: PlanContext) -> pd.DataFrame:
    """Fleet IT MW + retrofit downtime per site and period <= online IT capacity."""
    load = inputs.site_load
    capacity = _by_site_period(inputs.build["capacity"], inputs.build, load)
    used = column_values(load, "mw") + retrofit_downtime_mw(inputs)
    return violations(
        "site_it_power", site_period_keys(load), used, capacity, "<=", inputs.tolerance
    )


def check_site_liquid_share(inputs: PlanContext) -> pd.DataFrame:
    """Liquid MW built <= liquid_share_max * MW built, per site and period."""
    build, liquid = inputs.build, inputs.liquid
    share = reindexed(inputs.sites["liquid_share_max"], build["site"])
    return violations(
        "site_liquid_share",
        site_period_keys(build),
        liquid["value"],
        column_values(build, "value") * share,
        "<=",
        inputs.tolerance,
    )


def check_site_liquid(inputs: PlanContext) -> pd.DataFrame:
    """Liquid-only fleet IT MW <= initial liquid MW + cumulative liquid build."""
    load = inputs.site_load
    capacity = _by_site_period(inputs.liquid["capacity"], inputs.liquid, load)
    return violations(
        "site_liquid", site_period_keys(load), load["liq_mw"], capacity, "<=", inputs.tolerance
    )


def check_site_grid(inputs: PlanContext) -> pd.DataFrame:
    """Fleet facility MW (IT MW * PUE by cooling) <= grid_mw (no row: no limit)."""
    load = inputs.site_load
    table = inputs.dataset.table("site_grid")
    keys = [column_values(load, "site"), column_values(load, "period")]
    grid = value_at(
        keys,
        [column_values(table, "site"), column_values(table, "period")],
        column_values(table, "grid_mw", dtype=float),
    )
    extra = extra_grid_mw(inputs)
    grid = grid + 0.0  # as adding no extra MW does (-0.0 reads 0.0)
    if len(extra):
        add = value_at(
            keys,
            [column_values(extra, "site"), column_values(extra, "period")],
            column_values(extra, "mw", dtype=float),
        )
        grid = grid + np.where(np.isnan(add), 0.0, add)
    return violations(
        "site_grid", site_period_keys(load), load["fac_mw"], grid, "<=", inputs.tolerance
    )


def check_site_build_rate(inputs: PlanContext) -> pd.DataFrame:
    """MW built per period <= max_build_mw_per_period."""
    build = inputs.build
    limit = reindexed(inputs.sites["max_build_mw_per_period"], build["site"])
    return violations(
        "site_build_rate", site_period_keys(build), build["value"], limit, "<=", inputs.tolerance
    )


def check_site_max(inputs: PlanContext) -> pd.DataFrame:
    """Check decided IT capacity (initial + whole pipeline + cumulative build) <= max_it_mw."""
    build = inputs.build
    limit = reindexed(inputs.sites["max_it_mw"], build["site"])
    return violations(
        "site_max", site_period_keys(build), build["decided"], limit, "<=", inputs.tolerance
    )


def check_site_water(inputs: PlanContext) -> pd.DataFrame:
    """Check water m3 <= water_permit_m3 (no row: no limit).

    Water m3 = IT MWh (assigned chips at the workload's power factor, idle chips at
    the idle factor) * WUE by cooling.
    """
    ds, chips, sites = inputs.dataset, inputs.chips, inputs.sites
    table = ds.table("site_water")
    if table.empty:  # no permit: no row to check
        return violations("site_water", pd.Series([], dtype=str), [], [], "<=", inputs.tolerance)
    hours = indexed(ds.table("periods"), "period")["hours"]
    e = inputs.work  # fleet and assigned chips per (chip, site, period), as the tables read
    c, s = e.groups.positions(0, chips.index), e.groups.positions(1, sites.index)
    kw = take(column_values(chips, "it_kw_per_chip", dtype=float), c)
    idle = take(column_values(chips, "idle_power_factor", dtype=float), c)
    liq = take(column_values(chips, "cooling"), c) == "liquid"
    idle_chips = e.fleet_chips - e.assigned
    h = take(hours.to_numpy(dtype=float), e.groups.positions(2, hours.index))
    it_mwh = h / 1e3 * kw * (e.pfx + idle * idle_chips)
    wue = np.where(
        liq,
        take(column_values(sites, "wue_l_per_kwh_liquid", dtype=float), s),
        take(column_values(sites, "wue_l_per_kwh_air", dtype=float), s),
    )
    w = e.by_site_period({"m3": it_mwh * wue})
    permit = value_at(
        [w["site"], w["period"]],
        [table["site"], table["period"]],
        column_values(table, "water_permit_m3", dtype=float),
    )
    return violations("site_water", site_period_keys(w), w["m3"], permit, "<=", inputs.tolerance)


# --------------------------------------------------------------------------- registry
_SITE = ("s",)


def _site_limit(limit: str, used: str, capacity: str) -> ResultRows:
    return ResultRows(
        "site_utilisation", "shadow_price_usd_per_unit", ("s", "t"), limit, used, capacity
    )


FAMILIES = (
    ConstraintFamily(
        "site_it_power",
        "MW",
        define_site_it_power,
        check_site_it_power,
        "site {key} IT power capacity in {period} short by {amount} MW",
        "MW",
        _SITE,
        result=_site_limit("power", "it_mw", "it_capacity_mw"),
        summary_words="IT power capacity at {0}",
        limit=True,
    ),
    ConstraintFamily(
        "site_liquid_share",
        "MW",
        define_site_liquid_share,
        check_site_liquid_share,
        "site {key} liquid share of new build in {period} short by {amount} MW",
        "MW",
        _SITE,
        summary_words="liquid share of new build at {0}",
    ),
    ConstraintFamily(
        "site_liquid",
        "MW",
        define_site_liquid,
        check_site_liquid,
        "site {key} liquid-cooled capacity in {period} short by {amount} MW",
        "MW",
        _SITE,
        result=_site_limit("liquid", "liq_mw", "liquid_capacity_mw"),
        summary_words="liquid-cooled capacity at {0}",
        limit=True,
    ),
    ConstraintFamily(
        "site_grid",
        "MW",
        define_site_grid,
        check_site_grid,
        "site {key} grid in {period} short by {amount} MW",
        "MW",
        _SITE,
        result=_site_limit("grid", "fac_mw", "grid_mw"),
        summary_words="grid interconnect at {0}",
        limit=True,
    ),
    ConstraintFamily(
        "site_build_rate",
        "MW",
        define_site_build_rate,
        check_site_build_rate,
        "site {key} build rate in {period} short by {amount} MW",
        "MW",
        _SITE,
        summary_words="construction rate at {0}",
        limit=True,
    ),
    ConstraintFamily(
        "site_max",
        "MW",
        define_site_max,
        check_site_max,
        "site {key} maximum IT capacity in {period} short by {amount} MW",
        "MW",
        _SITE,
        summary_words="campus maximum IT MW at {0}",
        limit=True,
    ),
    ConstraintFamily(
        "site_water",
        "m3",
        define_site_water,
        check_site_water,
        "site {key} water permit in {period} short by {amount} m3",
        "m3",
        _SITE,
        result=_site_limit("water", "water_m3", "water_permit_m3"),
        summary_words="water permit at {0}",
        limit=True,
    ),
)


COMPONENT = Component(
    "site",
    columns=(
        ColumnKind("build", "s/t", "MW", "new IT capacity decided in period t"),
        ColumnKind("liquid", "s/t", "MW", "part of the build fitted for liquid cooling"),
        ColumnKind("retrofit", "s/t", "MW", "air-cooled MW converted to liquid in period t"),
        ColumnKind("built", "s/t", "MW", "IT MW decided up to period t (site_built)"),
        ColumnKind(
            "liquid_built",
            "s/t",
            "MW",
            "liquid-fitted IT MW decided up to period t (site_liquid_built)",
        ),
    ),
    families=built_families + FAMILIES + construction_families,
    costs=(
        CostTerm(
            "build_capex",
            "capex",
            price_build_capex,
            "build_capex_usd_per_mw / FACILITY_LIFE_PERIODS per MW built, every period "
            "from its decision to the horizon end",
        ),
        CostTerm(
            "retrofit_capex",
            "capex",
            price_retrofit_capex,
            "retrofit_capex_usd_per_mw / FACILITY_LIFE_PERIODS per MW converted, charged "
            "like a build",
        ),
    ),
)
