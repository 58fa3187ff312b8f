"""Power families: grid upgrades, on-site generation, PPAs, carbon.

Power becomes a decision when a dataset holds any of the optional tables
``grid_upgrades``, ``onsite_generation``, ``ppas`` or ``carbon_policy``
(:func:`~optimizer.components.power_inputs.power_modelled`); without them the model
is the grid-only model and its energy is priced at the site's grid price.

Decisions (all >= 0, per scenario; ``o`` codes a power source, named
``grid``, ``upgrade:<option>``, ``onsite:<technology>``, ``ppa:<contract>``)
-------------------------------------------------------------------------------
``grid_upgrade[s,o,d]`` MW of interconnection requested in decision period d,
energised from d + lead_o; ``onsite_build[s,o,d]`` MW of on-site generation
decided in d, online from d + lead_o; ``power_energy[s,o,p]`` MWh of the site's
facility energy bought from source o in period p. Decisions whose capacity would come
online after the horizon are not created. Bridge power (``bridge = yes``: bought, retired
with ``onsite_retire``, salvage back) is in :mod:`optimizer.components.power_bridge`;
its retired MW leave ``onsite[s,o,p]`` below.

Expressions: ``upgrades[s,p]`` = sum_{o, d + lead_o <= p} grid_upgrade[s,o,d];
``onsite[s,o,p]`` = initial_mw + sum_{d + lead_o <= p} onsite_build[s,o,d];
``facility_mwh[s,p]`` = sum_c IT MWh[c,s,p] * PUE(c,s) (the expression the grid-only
model prices, :func:`optimizer.components.scenario.energy_coefficients`).

Families (row ``family``; unit of the rhs)
------------------------------------------
* ``site_grid`` (extended, :mod:`optimizer.components.site`): facility MW <= grid_mw +
  upgrades + sum_o availability_o * onsite[s,o,p] + firm PPA MW x availability
  + flexible MW online (MW; :mod:`optimizer.components.power_flex`)
* ``power_energy_balance``: sum_o power_energy[s,o,p] == facility_mwh[s,p]   (MWh)
* ``grid_energy``: power_energy[s,grid,p] + sum_{non-firm ppa} power_energy <=
  (grid_mw + upgrades[s,p]) * hours[p] + sum (1 - c) * flexible MW * hours  (MWh)
  (c = the curtailment share while the flexible MW are inside their window, else 0)
  (grid-delivered energy needs grid capacity; rows only at sites with on-site or firm
  sources, elsewhere site_grid already implies it)
* ``onsite_energy``: power_energy[s,o,p] <= availability_o * onsite[s,o,p] * hours (MWh)
* ``onsite_cap``: initial_mw + sum_d onsite_build[s,o,d] <= max_mw           (MW)
* ``ppa_energy``: sum_s power_energy[s,o,p] <= mw_o(p) * availability_o * hours (MWh)
* ``grid_upgrade_rate``: grid_upgrade[s,o,d] <= max_mw_per_period           (MW)
* ``grid_upgrade_total``: sum_d grid_upgrade[s,o,d] <= max_mw_total          (MW)
* ``carbon_cap_period``: sum_{s,o} carbon_o * power_energy[s,o,p] <= cap_p   (t)
* ``carbon_cap_horizon``: sum_{s,o,p} carbon_o * power_energy[s,o,p] <= cap  (t)

Costs (discounted like every term): ``grid_upgrade`` cost_usd_per_mw /
lifetime_periods per MW per online period inside the horizon (straight-line rent as
for facilities); ``onsite_power`` capex / lifetime_periods + fixed cost * hours / 8760
per online MW and period (the initial MW's fixed cost a constant), plus (variable cost +
fuel price * heat rate) per MWh;
``energy`` grid MWh at the site price and PPA MWh at the contract price; ``carbon``
carbon price * t CO2 (grid at the site's ``carbon_t_per_mwh``).

A PPA is a right to buy up to its MW at its price (no take-or-pay). A firm
(behind-the-meter) PPA step adds its MW x availability to the site's facility power
in its periods. In a two-stage
stochastic model the power decisions are per scenario (not shared).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.power_bridge import add_bridge_columns, add_bridge_costs, retired_terms
from optimizer.components.power_flex import (
    add_flexible_columns,
    flexible_energy_terms,
    flexible_supply_terms,
)
from optimizer.components.power_inputs import GRID, PowerData, power_data, power_modelled
from optimizer.components.scenario import ScenarioColumns, ScenarioData, energy_coefficients
from optimizer.lp.builder import ModelBuilder, expand
from optimizer.lp.frames import column_values
from optimizer.lp.join import merge

POWER_KINDS = ("grid_upgrade", "onsite_build", "power_energy")
HOURS_PER_YEAR = 8760.0
_PUE = ("pue_air", "pue_liquid")


# ----------------------------------------------------------------------------- columns
def _decisions(options: pd.DataFrame, n_periods: int) -> pd.DataFrame:
    """Decision keys (s, o, t) whose capacity comes online inside the horizon."""
    if options.empty:
        return pd.DataFrame({c: pd.Series([], dtype=np.int64) for c in ("s", "o", "t")})
    count = np.maximum(n_periods - column_values(options, "lead"), 0)
    keys = expand(options[["s", "o"]], np.zeros(len(options), dtype=np.int64), count, "t")
    return keys.astype(np.int64)


def online(decisions: pd.DataFrame, lead: np.ndarray, n_periods: int) -> pd.DataFrame:
    """Pairs (s, o, t, col, t_var): decision column ``col`` is online in period t."""
    start = column_values(decisions, "t") + lead
    v = decisions.assign(t_var=column_values(decisions, "t"))
    return expand(v.drop(columns="t"), start, n_periods - start, "t")


def _energy_keys(columns: ScenarioColumns, pw: PowerData) -> pd.DataFrame:
    """Energy column keys (s, o, t): grid, on-site and PPA sources at loaded site-periods."""
    scenario = columns.scenario
    load = columns.fleet_keys[["s", "t"]].drop_duplicates().astype(np.int64)
    grid = load.assign(o=scenario.source_names.index(GRID))
    parts = [grid]
    if len(pw.onsite):
        gen = pw.onsite[column_values(pw.onsite, "storage") <= 0]  # a battery makes no energy
        on = merge(load, gen[["s", "o", "lead", "init"]], "s")
        parts.append(on[(on["t"] >= on["lead"]) | (on["init"] > 0)][["s", "t", "o"]])
    if len(pw.ppa):
        parts.append(merge(load, pw.ppa[["o", "s", "t"]], ["s", "t"]))
    keys = pd.concat(parts, ignore_index=True)[["s", "o", "t"]].astype(np.int64)
    return keys.drop_duplicates().sort_values(["s", "o", "t"]).reset_index(drop=True)


def _add_costs(builder: ModelBuilder, columns: ScenarioColumns, pw: PowerData) -> None:
    scenario = columns.scenario
    i, T, hours = scenario.index, scenario.n_periods, scenario.hours
    power = columns.power
    up = merge(power["grid_upgrade"], pw.upgrades, ["s", "o"])
    if len(up):
        on = online(up[["s", "o", "t", "col"]], column_values(up, "lead"), T)
        on = merge(on, pw.upgrades[["s", "o", "cost", "life", "lead"]], ["s", "o"])
        on = on[on["t"] < on["t_var"] + on["lead"] + on["life"]]
        rent = column_values(on, "cost") / column_values(on, "life")
        builder.add_cost(i, "grid_upgrade", on["col"], on["t"], rent)
    rented = pw.onsite[~column_values(pw.onsite, "bridge", dtype=bool)]
    gb = merge(power["onsite_build"], rented, ["s", "o"])
    if len(gb):
        on = online(gb[["s", "o", "t", "col"]], column_values(gb, "lead"), T)
        on = merge(on, pw.onsite[["s", "o", "capex", "life", "fixed", "lead"]], ["s", "o"])
        on = on[on["t"] < on["t_var"] + on["lead"] + on["life"]]
        t = column_values(on, "t")
        per_mw = column_values(on, "capex") / column_values(on, "life")
        per_mw = per_mw + column_values(on, "fixed") * hours[t] / HOURS_PER_YEAR
        builder.add_cost(i, "onsite_power", on["col"], t, per_mw)
    add_bridge_costs(builder, columns, pw)
    _add_initial_fixed(builder, columns, pw)
    en = power["power_energy"]
    usd, carbon, term = energy_unit_costs(scenario, pw, en)
    t = column_values(en, "t")
    for name in ("energy", "onsite_power"):
        m = term == name
        builder.add_cost(i, name, column_values(en, "col")[m], t[m], usd[m])
    builder.add_cost(i, "carbon", en["col"], t, carbon * pw.carbon_price[t])


def _add_initial_fixed(builder: ModelBuilder, columns: ScenarioColumns, pw: PowerData) -> None:
    """Add the fixed cost of the initial on-site MW in every period (constant onsite_power).

    ``initial_mw * fixed_cost_usd_per_mw_year * hours[p] / 8760``: the data's fixed cost
    is per MW online, and the initial MW stand from the start. A bridge's retirement
    saves its fixed cost from then on (:func:`add_bridge_costs`), so its cost is this
    constant less that saving. Before, the objective left this constant out while the
    power_sources table counted it.
    """
    init = pw.onsite[column_values(pw.onsite, "init", dtype=float) > 0]
    if init.empty:
        return
    scenario = columns.scenario
    n_t = scenario.n_periods
    t = np.tile(np.arange(n_t), len(init))
    per_mw_year = np.repeat(column_values(init, "init") * column_values(init, "fixed"), n_t)
    value = per_mw_year * scenario.hours[t] / HOURS_PER_YEAR
    builder.add_const(scenario.index, "onsite_power", t, value)


def energy_unit_costs(
    scenario: ScenarioData, pw: PowerData, keys: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """USD/MWh, t CO2/MWh and cost term of energy keys ``s, o, t``.

    Returns
    -------
    (ndarray, ndarray, ndarray)
        Price per MWh (grid: site price; PPA: contract price; on-site: variable cost +
        fuel x heat rate), carbon per MWh, and the cost term (``energy`` or
        ``onsite_power``), each of shape (len(keys),).
    """
    s = column_values(keys, "s")
    usd = scenario.site_attr(s, "energy_price_usd_per_mwh").astype(float)
    carbon = scenario.site_attr(s, "carbon_t_per_mwh").astype(float)
    term = np.full(len(keys), "energy", dtype=object)
    if len(pw.onsite):
        m = merge(keys[["s", "o"]], pw.onsite, ["s", "o"], how="left")
        hit = m["var_cost"].notna().to_numpy()
        usd = np.where(hit, column_values(m, "var_cost", dtype=float), usd)
        carbon = np.where(hit, column_values(m, "carbon", dtype=float), carbon)
        term = np.where(hit, "onsite_power", term)
    if len(pw.ppa):
        ppa = pw.ppa.drop_duplicates(["o", "s", "t"])
        m = merge(keys[["s", "o", "t"]], ppa, ["s", "o", "t"], how="left")
        hit = m["price"].notna().to_numpy()
        usd = np.where(hit, column_values(m, "price", dtype=float), usd)
        carbon = np.where(hit, column_values(m, "carbon", dtype=float), carbon)
    return usd, carbon, term


def define_grid_upgrade_rate(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Upgrade rate: grid_upgrade[s,o,d] <= max_mw_per_period; also creates the power columns.

    Runs in the column phase (after the fleet definition): ``columns.power`` gets the
    frames ``grid_upgrade``, ``onsite_build`` (s, o, t, col) and ``power_energy``
    (s, o, t, col); it stays empty when the dataset has no power table.
    """
    scenario = columns.scenario
    if not power_modelled(scenario.dataset):
        return
    pw = power_data(scenario)
    T = scenario.n_periods
    i = scenario.index
    up = _decisions(pw.upgrades, T)
    gb = _decisions(pw.onsite, T)
    en = _energy_keys(columns, pw)
    columns.power = {
        "grid_upgrade": up.assign(col=builder.add_vars("grid_upgrade", i, up)),
        "onsite_build": gb.assign(col=builder.add_vars("onsite_build", i, gb)),
        "power_energy": en.assign(col=builder.add_vars("power_energy", i, en)),
        "data": pw,
    }
    add_bridge_columns(builder, columns, pw)
    add_flexible_columns(builder, columns, pw)
    _add_costs(builder, columns, pw)
    cols = _requests(columns.power)
    if cols.empty:
        return
    keys = cols[["s", "o", "t"]].drop_duplicates().sort_values(["s", "o", "t"])
    keys = keys.reset_index(drop=True)
    limit = merge(keys, pw.upgrades, ["s", "o"], how="left")["per_period"].to_numpy()
    rows = builder.add_rows("grid_upgrade_rate", i, keys, "<=", limit)
    m = merge(cols, keys.assign(row=rows), ["s", "o", "t"])
    builder.add_terms(m["row"], m["col"], 1.0)


def _requests(power: dict[str, Any]) -> pd.DataFrame:
    """Grid upgrade requests, normal and flexible: ``s, o, t, col`` (one request queue)."""
    parts = [power["grid_upgrade"][["s", "o", "t", "col"]]]
    flex = power.get("flexible_upgrade")
    if flex is not None and len(flex):
        parts.append(flex[["s", "o", "t", "col"]])
    return pd.concat(parts, ignore_index=True)


def _power(columns: ScenarioColumns) -> tuple[dict[str, Any], PowerData] | None:
    power = columns.power
    if not power:
        return None
    data = power["data"]
    assert isinstance(data, PowerData)
    return power, data


def define_grid_upgrade_total(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Upgrade total: sum_d grid_upgrade[s,o,d] <= max_mw_total (row at the last decision)."""
    got = _power(columns)
    if got is None:
        return
    power, pw = got
    cols = _requests(power)
    if cols.empty:
        return
    keys = cols.groupby(["s", "o"], as_index=False)["t"].max()
    keys = merge(keys, pw.upgrades[["s", "o", "total"]], ["s", "o"])
    rows = builder.add_rows(
        "grid_upgrade_total", columns.scenario.index, keys, "<=", column_values(keys, "total")
    )
    m = merge(cols, keys[["s", "o"]].assign(row=rows), ["s", "o"])
    builder.add_terms(m["row"], m["col"], 1.0)


def define_onsite_cap(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """On-site cap: initial_mw + sum_d onsite_build[s,o,d] <= max_mw (row at the last decision)."""
    got = _power(columns)
    if got is None or got[0]["onsite_build"].empty:
        return
    power, pw = got
    cols = power["onsite_build"]
    keys = cols.groupby(["s", "o"], as_index=False)["t"].max()
    keys = merge(keys, pw.onsite[["s", "o", "max_mw", "init"]], ["s", "o"])
    rhs = column_values(keys, "max_mw") - column_values(keys, "init")
    rows = builder.add_rows("onsite_cap", columns.scenario.index, keys, "<=", rhs)
    m = merge(cols, keys[["s", "o"]].assign(row=rows), ["s", "o"])
    builder.add_terms(m["row"], m["col"], 1.0)


def facility_terms(columns: ScenarioColumns) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Facility MWh per unit of fleet/assign column (``s, t, col, mwh``), constants ``s, t, mwh``.

    The constants are the initial fleet's facility MWh.
    """
    scenario = columns.scenario
    fleet_it, assign_it, initial_it = energy_coefficients(columns)
    parts = []
    for f in (fleet_it, assign_it):
        pue = scenario.cooling_split(column_values(f, "c"), column_values(f, "s"), *_PUE)
        parts.append(f[["s", "t", "col"]].assign(mwh=column_values(f, "it") * pue))
    pue = scenario.cooling_split(
        column_values(initial_it, "c"), column_values(initial_it, "s"), *_PUE
    )
    const = initial_it[["s", "t"]].assign(mwh=column_values(initial_it, "it") * pue)
    const = const.groupby(["s", "t"], as_index=False)["mwh"].sum()
    return pd.concat(parts, ignore_index=True), const


def define_power_energy_balance(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Energy by source: sum_o power_energy[s,o,p] == facility_mwh[s,p] (MWh)."""
    got = _power(columns)
    if got is None:
        return
    power, _ = got
    en = power["power_energy"]
    keys = en[["s", "t"]].drop_duplicates().sort_values(["s", "t"]).reset_index(drop=True)
    per_unit, const = facility_terms(columns)
    keys = merge(keys, const, ["s", "t"], how="left").fillna({"mwh": 0.0})
    rows = builder.add_rows(
        "power_energy_balance", columns.scenario.index, keys, "==", column_values(keys, "mwh")
    )
    row_of = keys[["s", "t"]].assign(row=rows)
    m = merge(en, row_of, ["s", "t"])
    builder.add_terms(m["row"], m["col"], 1.0)
    m = merge(per_unit, row_of, ["s", "t"])
    builder.add_terms(m["row"], m["col"], -column_values(m, "mwh"))


def _online_upgrades(power: dict[str, Any], pw: PowerData, n_periods: int) -> pd.DataFrame:
    up = merge(power["grid_upgrade"], pw.upgrades[["s", "o", "lead"]], ["s", "o"])
    if up.empty:
        return pd.DataFrame({c: pd.Series([], dtype=np.int64) for c in ("s", "o", "t", "col")})
    return online(up[["s", "o", "t", "col"]], column_values(up, "lead"), n_periods)


def _online_onsite(power: dict[str, Any], pw: PowerData, n_periods: int) -> pd.DataFrame:
    gb = merge(power["onsite_build"], pw.onsite[["s", "o", "lead"]], ["s", "o"])
    if gb.empty:
        return pd.DataFrame({c: pd.Series([], dtype=np.int64) for c in ("s", "o", "t", "col")})
    return online(gb[["s", "o", "t", "col"]], column_values(gb, "lead"), n_periods)


def site_supply(
    columns: ScenarioColumns, *, firm: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Facility-power supply beyond granted grid, for the site_grid rows.

    With ``firm`` flexible MW count only past their normal lead (the supply that is
    never curtailed, :mod:`optimizer.components.power_flex`).

    Returns
    -------
    (DataFrame, DataFrame)
        Constants ``s, t, mw`` (initial on-site MW x availability, firm PPA MW x
        availability) and terms ``s, t, col, mw`` (MW per unit of column: online
        upgrades 1, online on-site builds availability). Empty when power is not
        modelled.
    """
    empty = pd.DataFrame({"s": [], "t": [], "col": [], "mw": []}).astype(
        {"s": np.int64, "t": np.int64, "col": np.int64}
    )
    got = _power(columns)
    if got is None:
        return empty[["s", "t", "mw"]], empty
    power, pw = got
    scenario = columns.scenario
    T = scenario.n_periods
    parts = [_online_upgrades(power, pw, T)[["s", "t", "col"]].assign(mw=1.0)]
    on = merge(_online_onsite(power, pw, T), pw.onsite[["s", "o", "avail"]], ["s", "o"])
    parts.append(on[["s", "t", "col"]].assign(mw=column_values(on, "avail")))
    out = merge(retired_terms(power, T), pw.onsite[["s", "o", "avail"]], ["s", "o"])
    parts.append(out[["s", "t", "col"]].assign(mw=-column_values(out, "avail")))
    parts.append(flexible_supply_terms(power, T, firm=firm))
    terms = pd.concat(parts, ignore_index=True)
    consts = [empty[["s", "t", "mw"]]]
    init = pw.onsite[pw.onsite["init"] > 0] if len(pw.onsite) else pw.onsite
    if len(init):
        zero = np.zeros(len(init), dtype=np.int64)
        c = expand(init[["s", "init", "avail"]], zero, np.full(len(init), T), "t")
        consts.append(
            c.assign(mw=column_values(c, "init") * column_values(c, "avail"))[["s", "t", "mw"]]
        )
    if len(pw.ppa):
        firm_ppa = pw.ppa[pw.ppa["firm"]].drop_duplicates(["o", "s", "t"])
        mw = column_values(firm_ppa, "mwh_cap") / scenario.hours[column_values(firm_ppa, "t")]
        consts.append(firm_ppa[["s", "t"]].assign(mw=mw))
    const = pd.concat(consts, ignore_index=True).groupby(["s", "t"], as_index=False)["mw"].sum()
    return const, terms


def define_grid_energy(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Grid energy: grid + non-firm PPA MWh <= (grid_mw + upgrades[s,p]) * hours (MWh)."""
    got = _power(columns)
    if got is None:
        return
    power, pw = got
    scenario = columns.scenario
    en = power["power_energy"]
    firm_sites = set(pw.onsite["s"].tolist()) if len(pw.onsite) else set()
    if len(pw.ppa):
        firm_sites |= set(pw.ppa[pw.ppa["firm"]]["s"].tolist())
    flex = power.get("flexible_upgrade")
    if flex is not None and len(flex):
        firm_sites |= set(flex["s"].tolist())
    keys = en[en["s"].isin(sorted(firm_sites))][["s", "t"]].drop_duplicates()
    keys = merge(keys, scenario.grid, ["s", "t"], how="left").sort_values(["s", "t"])
    keys = keys[np.isfinite(column_values(keys, "grid_mw", dtype=float))].reset_index(drop=True)
    if keys.empty:
        return
    rhs = column_values(keys, "grid_mw", dtype=float) * scenario.hours[column_values(keys, "t")]
    rows = builder.add_rows("grid_energy", scenario.index, keys, "<=", rhs)
    row_of = keys[["s", "t"]].assign(row=rows)
    grid_o = scenario.source_names.index(GRID)
    through_grid = en[en["o"] == grid_o]
    if len(pw.ppa):
        nonfirm = pw.ppa[~pw.ppa["firm"]][["o", "s", "t"]].drop_duplicates()
        through_grid = pd.concat([through_grid, merge(en, nonfirm, ["s", "o", "t"])])
    m = merge(through_grid, row_of, ["s", "t"])
    builder.add_terms(m["row"], m["col"], 1.0)
    up = merge(_online_upgrades(power, pw, scenario.n_periods), row_of, ["s", "t"])
    builder.add_terms(up["row"], up["col"], -scenario.hours[column_values(up, "t")])
    fx = merge(flexible_energy_terms(power, scenario), row_of, ["s", "t"])
    builder.add_terms(fx["row"], fx["col"], -column_values(fx, "mwh"))


def define_onsite_energy(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """On-site energy: power_energy[s,o,p] <= availability * (initial + online builds) * hours."""
    got = _power(columns)
    if got is None or pw_empty(got[1].onsite):
        return
    power, pw = got
    scenario = columns.scenario
    keys = merge(power["power_energy"], pw.onsite[["s", "o", "avail", "init"]], ["s", "o"])
    if keys.empty:
        return
    keys = keys.sort_values(["s", "o", "t"]).reset_index(drop=True)
    h = scenario.hours[column_values(keys, "t")]
    rhs = column_values(keys, "avail") * column_values(keys, "init") * h
    rows = builder.add_rows("onsite_energy", scenario.index, keys, "<=", rhs)
    builder.add_terms(rows, keys["col"], 1.0)
    row_of = keys[["s", "o", "t", "avail"]].assign(row=rows)
    on = merge(_online_onsite(power, pw, scenario.n_periods), row_of, ["s", "o", "t"])
    coef = -column_values(on, "avail") * scenario.hours[column_values(on, "t")]
    builder.add_terms(on["row"], on["col"], coef)
    out = merge(retired_terms(power, scenario.n_periods), row_of, ["s", "o", "t"])
    builder.add_terms(
        out["row"],
        out["col"],
        column_values(out, "avail") * scenario.hours[column_values(out, "t")],
    )


def pw_empty(frame: pd.DataFrame) -> bool:
    """Tell whether a power frame has no rows."""
    return len(frame) == 0


def define_ppa_energy(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """PPA energy: sum_s power_energy[s,o,p] <= mw * availability * hours (MWh)."""
    got = _power(columns)
    if got is None or pw_empty(got[1].ppa):
        return
    power, pw = got
    caps = pw.ppa.groupby(["o", "t"], as_index=False)["mwh_cap"].max()
    used = merge(power["power_energy"], caps[["o", "t"]], ["o", "t"])
    keys = merge(caps, used[["o", "t"]].drop_duplicates(), ["o", "t"])
    keys = keys.sort_values(["o", "t"]).reset_index(drop=True)
    if keys.empty:
        return
    rows = builder.add_rows(
        "ppa_energy", columns.scenario.index, keys, "<=", column_values(keys, "mwh_cap")
    )
    m = merge(used, keys[["o", "t"]].assign(row=rows), ["o", "t"])
    builder.add_terms(m["row"], m["col"], 1.0)


def _carbon_per_mwh(columns: ScenarioColumns, pw: PowerData) -> pd.DataFrame:
    en = columns.power["power_energy"]
    _, carbon, _ = energy_unit_costs(columns.scenario, pw, en)
    return en.assign(carbon=carbon)


def define_carbon_cap_period(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Carbon cap per period: sum_{s,o} carbon_o * power_energy[s,o,p] <= cap_p (t CO2)."""
    got = _power(columns)
    if got is None or pw_empty(got[1].period_caps):
        return
    _, pw = got
    keys = pw.period_caps.sort_values("t").reset_index(drop=True)
    rows = builder.add_rows(
        "carbon_cap_period", columns.scenario.index, keys, "<=", column_values(keys, "cap")
    )
    m = merge(_carbon_per_mwh(columns, pw), keys[["t"]].assign(row=rows), "t")
    builder.add_terms(m["row"], m["col"], column_values(m, "carbon"))


def define_carbon_cap_horizon(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Carbon cap over the horizon: sum_{s,o,p} carbon_o * power_energy[s,o,p] <= cap (t CO2)."""
    got = _power(columns)
    if got is None or not np.isfinite(got[1].horizon_cap):
        return
    _, pw = got
    T = columns.scenario.n_periods
    keys = pd.DataFrame({"t": [T - 1]})
    rows = builder.add_rows(
        "carbon_cap_horizon", columns.scenario.index, keys, "<=", np.array([pw.horizon_cap])
    )
    m = _carbon_per_mwh(columns, pw)
    builder.add_terms(np.full(len(m), rows[0]), m["col"], column_values(m, "carbon"))
