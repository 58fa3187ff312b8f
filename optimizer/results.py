"""Tidy result tables of a solved plan, computed from decision values and the dataset.

Every table is long and tidy; text columns are ``str``, numbers ``float64`` (chips
too, as the LP is continuous), ``binding`` is bool. Tables always carry their columns,
even when empty. The tables are computed from the decision values mapped to domain
keys (:func:`solution_frames`) and the dataset, not from the LP rows; shadow prices
come from the row duals (sign convention: :mod:`optimizer.solve`).

Tables and columns (contract with the report writer)
----------------------------------------------------
* build_out: site, period, build_mw, liquid_build_mw, it_capacity_mw, liquid_capacity_mw
* fleet: chip, site, period, installed_chips, retired_chips, fleet_chips,
  assigned_chips, idle_chips, it_mw (nameplate IT MW of the fleet)
* production: chip, period, produced_chips, installed_chips, inventory_chips
  (produced but not yet installed, end of period)
* supply_utilisation: resource, period, used, capacity, utilisation,
  shadow_price_usd_per_unit
* assignment: chip, site, customer, workload, period, chips, h100e (after derate),
  it_mw (nameplate IT MW of the assigned chips); only non-zero rows
* demand: customer, workload, period, demand_h100e, served_h100e (sum of the
  assignment's h100e; may exceed demand when chips are assigned to meet a
  commitment), unmet_h100e, served_share (served / demand),
  shadow_price_usd_per_h100e
* site_utilisation: site, period, limit (power|liquid|grid|water), used, capacity,
  unit (MW|MW|MW|m3), utilisation, shadow_price_usd_per_unit
* commitments: customer, family, period, min_it_mw, delivered_it_mw, breach_mw,
  shadow_price_usd_per_mw
* costs: period, term (chip_capex|build_capex|energy|unmet_penalty|breach_penalty),
  cost_usd (discounted, as in the objective), undiscounted_cost_usd; the sum of
  cost_usd is the objective
* energy: site, period, it_mwh, facility_mwh, water_m3, energy_cost_usd
  (undiscounted), carbon_t
* shadow_prices: family, period, key, shadow_price, unit, slack, binding

Utilisation is used / capacity (NaN when the capacity is 0). ``slack`` is
rhs - lhs for ``<=`` rows and lhs - rhs for ``>=`` rows; ``binding`` is
slack <= 1e-6 * (1 + |rhs|).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from optimizer.model import COST_TERMS, DEFINITION_FAMILIES, FAMILIES, PlanningModel

TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "build_out": (
        "site",
        "period",
        "build_mw",
        "liquid_build_mw",
        "it_capacity_mw",
        "liquid_capacity_mw",
    ),
    "fleet": (
        "chip",
        "site",
        "period",
        "installed_chips",
        "retired_chips",
        "fleet_chips",
        "assigned_chips",
        "idle_chips",
        "it_mw",
    ),
    "production": ("chip", "period", "produced_chips", "installed_chips", "inventory_chips"),
    "supply_utilisation": (
        "resource",
        "period",
        "used",
        "capacity",
        "utilisation",
        "shadow_price_usd_per_unit",
    ),
    "assignment": ("chip", "site", "customer", "workload", "period", "chips", "h100e", "it_mw"),
    "demand": (
        "customer",
        "workload",
        "period",
        "demand_h100e",
        "served_h100e",
        "unmet_h100e",
        "served_share",
        "shadow_price_usd_per_h100e",
    ),
    "site_utilisation": (
        "site",
        "period",
        "limit",
        "used",
        "capacity",
        "unit",
        "utilisation",
        "shadow_price_usd_per_unit",
    ),
    "commitments": (
        "customer",
        "family",
        "period",
        "min_it_mw",
        "delivered_it_mw",
        "breach_mw",
        "shadow_price_usd_per_mw",
    ),
    "costs": ("period", "term", "cost_usd", "undiscounted_cost_usd"),
    "energy": (
        "site",
        "period",
        "it_mwh",
        "facility_mwh",
        "water_m3",
        "energy_cost_usd",
        "carbon_t",
    ),
    "shadow_prices": ("family", "period", "key", "shadow_price", "unit", "slack", "binding"),
}

TEXT_COLUMNS = {
    "site",
    "period",
    "chip",
    "resource",
    "customer",
    "workload",
    "limit",
    "unit",
    "family",
    "term",
    "key",
}

_ZERO = 1e-9


def _typed(name: str, df: pd.DataFrame) -> pd.DataFrame:
    cols = TABLE_COLUMNS[name]
    data: dict[str, Any] = {}
    for c in cols:
        v = df[c].to_numpy() if c in df else np.full(len(df), np.nan)
        if c in TEXT_COLUMNS:
            data[c] = pd.Series(v, dtype=object).astype(str).astype(str).to_numpy()
        elif c == "binding":
            data[c] = np.asarray(v, dtype=bool)
        else:
            data[c] = np.asarray(v, dtype=np.float64)
    # one construction instead of a column-by-column insert (same frame, faster)
    out = pd.DataFrame(data, index=range(len(df)), columns=list(cols))
    for c in cols:
        if c in TEXT_COLUMNS:
            out[c] = out[c].astype(str)
    return out


def empty_tables() -> dict[str, pd.DataFrame]:
    """Every result table with its columns and no rows."""
    return {n: _typed(n, pd.DataFrame()) for n in TABLE_COLUMNS}


# --------------------------------------------------------------------- domain values
def solution_frames(
    model: PlanningModel, x: np.ndarray, scenario: int = 0
) -> dict[str, pd.DataFrame]:
    """Decision values of one scenario mapped to domain keys.

    Parameters
    ----------
    model : PlanningModel
    x : ndarray, shape (n_variables,)
        Column values (column units; multiplied by ``scale`` here).
    scenario : int
        Scenario position.

    Returns
    -------
    dict of DataFrame
        ``build`` (site, period, value MW), ``liquid`` (site, period, MW),
        ``install`` (chip, site, period, chips), ``produce`` (chip, period, chips),
        ``assign`` (chip, site, customer, workload, period, chips), ``unmet``
        (customer, workload, period, H100e), ``breach`` (j, customer, family,
        from_period, period, MW).
    """
    var = model.variables
    val = np.asarray(x, dtype=float) * var["scale"].to_numpy()
    sc = var["scenario"].to_numpy()
    kind = var["kind"].to_numpy()
    per = np.asarray(model.periods, dtype=object)
    names = {k: np.asarray(v, dtype=object) for k, v in model.codes.items()}
    out: dict[str, pd.DataFrame] = {}
    spec = {
        "build": (("site", "s"),),
        "liquid": (("site", "s"),),
        "install": (("chip", "c"), ("site", "s")),
        "produce": (("chip", "c"),),
        "assign": (("chip", "c"), ("site", "s"), ("customer", "k"), ("workload", "w")),
        "unmet": (("customer", "k"), ("workload", "w")),
    }
    for k, cols in spec.items():
        sel = (kind == k) & ((sc == -1) | (sc == scenario))
        v = var.loc[sel]
        f = pd.DataFrame({name: names[code][v[code].to_numpy()] for name, code in cols})
        f["period"] = per[v["t"].to_numpy()]
        f["value"] = val[sel]
        out[k] = f
    sel = (kind == "breach") & (sc == scenario)
    v = var.loc[sel]
    com = model.commitments[scenario].reset_index(drop=True)
    j = v["j"].to_numpy()
    out["breach"] = pd.DataFrame(
        {
            "j": j,
            "customer": com["customer"].astype(str).to_numpy()[j],
            "family": com["family"].astype(str).to_numpy()[j],
            "from_period": com["from_period"].astype(str).to_numpy()[j],
            "period": per[v["t"].to_numpy()],
            "value": val[sel],
        }
    )
    return out


def fleet_values(ds: Any, frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Fleet by (chip, site, period) from installs and the initial fleet.

    Returns
    -------
    DataFrame
        chip, site, period, installed_chips, retired_chips, fleet_chips (chips alive
        in the period: initial fleet with install_period <= p < install_period +
        lifetime, plus installs of the last lifetime_periods periods).
    """
    periods = list(ds.periods)
    T = len(periods)
    pidx = {p: i for i, p in enumerate(periods)}
    from capacity.schema import period_index

    p0 = period_index(periods[0])
    life = ds.table("chips").set_index("chip")["lifetime_periods"]
    ins = frames["install"][["chip", "site", "period", "value"]]
    ins = ins[ins["value"] > 0]
    parts = []
    if len(ins):
        t = ins["period"].map(pidx).to_numpy(dtype=np.int64)
        L = life.reindex(ins["chip"]).to_numpy(dtype=np.int64)
        parts.append(
            pd.DataFrame(
                {
                    "chip": ins["chip"].to_numpy(),
                    "site": ins["site"].to_numpy(),
                    "t_in": t,
                    "t_out": t + L,
                    "chips": ins["value"].to_numpy(),
                    "new": True,
                }
            )
        )
    f0 = ds.table("initial_fleet")
    if len(f0):
        t = np.array(
            [period_index(p) - p0 for p in f0["install_period"].astype(str)], dtype=np.int64
        )
        L = life.reindex(f0["chip"]).to_numpy(dtype=np.int64)
        parts.append(
            pd.DataFrame(
                {
                    "chip": f0["chip"].astype(str).to_numpy(),
                    "site": f0["site"].astype(str).to_numpy(),
                    "t_in": t,
                    "t_out": t + L,
                    "chips": f0["chips"].to_numpy(dtype=float),
                    "new": False,
                }
            )
        )
    cols = ["chip", "site", "period", "installed_chips", "retired_chips", "fleet_chips"]
    if not parts:
        return pd.DataFrame(
            {c: pd.Series([], dtype=object if c in TEXT_COLUMNS else float) for c in cols}
        )
    cohorts = pd.concat(parts, ignore_index=True)
    cohorts = cohorts[cohorts["chips"] > 0]
    pairs = cohorts[["chip", "site"]].drop_duplicates().reset_index(drop=True)
    grid = pairs.merge(pd.DataFrame({"t": np.arange(T)}), how="cross")
    m = cohorts.merge(grid, on=["chip", "site"])
    tt = m["t"].to_numpy()
    alive = (m["t_in"].to_numpy() <= tt) & (tt < m["t_out"].to_numpy())
    m["fleet_chips"] = np.where(alive, m["chips"], 0.0)
    m["installed_chips"] = np.where(
        m["new"].to_numpy() & (m["t_in"].to_numpy() == tt), m["chips"], 0.0
    )
    m["retired_chips"] = np.where(m["t_out"].to_numpy() == tt, m["chips"], 0.0)
    g = m.groupby(["chip", "site", "t"], as_index=False)[
        ["installed_chips", "retired_chips", "fleet_chips"]
    ].sum()
    g["period"] = np.asarray(periods, dtype=object)[g["t"].to_numpy()]
    return g[cols]


def _dual_lookup(
    model: PlanningModel, row_dual: np.ndarray | None, scenario: int, family: str, keys: list[str]
) -> pd.DataFrame:
    """Rows of a family with their (conditional) dual, keyed by code columns."""
    con = model.constraints
    sel = ((con["family"] == family) & (con["scenario"] == scenario)).to_numpy()
    f = con.loc[sel, keys].copy()
    w = model.weights[scenario]
    d = np.zeros(int(sel.sum())) if row_dual is None else row_dual[sel] / (w if w > 0 else 1.0)
    d = d + 0.0  # turn -0.0 into 0.0
    f["dual"] = d
    return f


def _names(model: PlanningModel, code: str, v: pd.Series) -> np.ndarray:
    return np.asarray(model.codes[code], dtype=object)[v.to_numpy(dtype=np.int64)]


def make_tables(
    model: PlanningModel,
    x: np.ndarray,
    row_dual: np.ndarray | None,
    scenario: int = 0,
    *,
    frames: Mapping[str, pd.DataFrame] | None = None,
) -> dict[str, pd.DataFrame]:
    """Build every result table of one scenario.

    Parameters
    ----------
    model : PlanningModel
    x : ndarray, shape (n_variables,)
        Column values.
    row_dual : ndarray, shape (n_constraints,), or None
        d objective / d rhs per row (zeros used when None).
    scenario : int
    frames : Mapping[str, DataFrame], optional
        ``solution_frames(model, x, scenario)`` when the caller already has them
        (read only, not modified).

    Returns
    -------
    dict of DataFrame
        The tables listed in the module docstring.
    """
    ds = model.datasets[scenario]
    periods = list(model.periods)
    per = np.asarray(periods, dtype=object)
    T = len(periods)
    fr = solution_frames(model, x, scenario) if frames is None else frames
    sites = ds.table("sites")
    chips = ds.table("chips").set_index("chip")
    out: dict[str, pd.DataFrame] = {}

    # build_out
    grid_sp = sites[["site"]].merge(pd.DataFrame({"period": periods}), how="cross")
    bo = grid_sp.merge(
        fr["build"].rename(columns={"value": "build_mw"}), on=["site", "period"], how="left"
    )
    bo = bo.merge(
        fr["liquid"].rename(columns={"value": "liquid_build_mw"}), on=["site", "period"], how="left"
    )
    bo[["build_mw", "liquid_build_mw"]] = bo[["build_mw", "liquid_build_mw"]].fillna(0.0)
    bo["_t"] = bo["period"].map({p: i for i, p in enumerate(periods)})
    bo = bo.sort_values(["site", "_t"]).reset_index(drop=True)
    sidx = sites.set_index("site")
    bo["it_capacity_mw"] = (
        sidx["initial_it_mw"].reindex(bo["site"]).to_numpy()
        + bo.groupby("site")["build_mw"].cumsum().to_numpy()
    )
    bo["liquid_capacity_mw"] = (
        sidx["initial_liquid_mw"].reindex(bo["site"]).to_numpy()
        + bo.groupby("site")["liquid_build_mw"].cumsum().to_numpy()
    )
    out["build_out"] = bo

    # fleet
    fleet0 = fleet_values(ds, fr)  # also used by the energy table below
    fl = fleet0
    asg = fr["assign"]
    asg_cs = (
        asg.groupby(["chip", "site", "period"], as_index=False)["value"]
        .sum()
        .rename(columns={"value": "assigned_chips"})
    )
    fl = fl.merge(asg_cs, on=["chip", "site", "period"], how="left")
    fl["assigned_chips"] = fl["assigned_chips"].fillna(0.0)
    fl["idle_chips"] = np.maximum(fl["fleet_chips"] - fl["assigned_chips"], 0.0)
    kw = chips["it_kw_per_chip"].reindex(fl["chip"]).to_numpy(dtype=float)
    fl["it_mw"] = fl["fleet_chips"].to_numpy() * kw / 1e3
    keep = (
        fl[["installed_chips", "retired_chips", "fleet_chips", "assigned_chips"]].abs() > _ZERO
    ).any(axis=1)
    fl = fl[keep.to_numpy()].reset_index(drop=True)
    out["fleet"] = fl

    # production
    pr = fr["produce"].rename(columns={"value": "produced_chips"})
    ins_c = (
        fr["install"]
        .groupby(["chip", "period"], as_index=False)["value"]
        .sum()
        .rename(columns={"value": "installed_chips"})
    )
    pr = pr.merge(ins_c, on=["chip", "period"], how="outer")
    if len(pr):
        cp = pr[["chip"]].drop_duplicates().merge(pd.DataFrame({"period": periods}), how="cross")
        pr = cp.merge(pr, on=["chip", "period"], how="left")
    pr[["produced_chips", "installed_chips"]] = pr[["produced_chips", "installed_chips"]].fillna(
        0.0
    )
    pr["_t"] = pr["period"].map({p: i for i, p in enumerate(periods)})
    pr = pr.sort_values(["chip", "_t"]).reset_index(drop=True)
    pr["inventory_chips"] = (
        pr.groupby("chip")["produced_chips"].cumsum()
        - pr.groupby("chip")["installed_chips"].cumsum()
    ).to_numpy()
    out["production"] = pr

    # supply_utilisation
    bom = ds.table("chip_bill_of_materials")
    su = ds.table("supply_resources")[["resource", "period", "capacity"]]
    used = fr["produce"].merge(bom, on="chip")
    used = (
        used.assign(used=used["value"] * used["per_chip"])
        .groupby(["resource", "period"], as_index=False)["used"]
        .sum()
    )
    su = su.merge(used, on=["resource", "period"], how="left")
    su["used"] = su["used"].fillna(0.0)
    su["utilisation"] = np.where(
        su["capacity"] > 0, su["used"] / su["capacity"].where(su["capacity"] > 0, 1.0), np.nan
    )
    d = _dual_lookup(model, row_dual, scenario, "supply_resource", ["r", "t"])
    d = pd.DataFrame(
        {
            "resource": _names(model, "r", d["r"]),
            "period": per[d["t"].to_numpy()],
            "shadow_price_usd_per_unit": d["dual"].to_numpy(),
        }
    )
    su = su.merge(d, on=["resource", "period"], how="left")
    su["shadow_price_usd_per_unit"] = su["shadow_price_usd_per_unit"].fillna(0.0)
    out["supply_utilisation"] = su

    # assignment
    a = asg[asg["value"].abs() > _ZERO].rename(columns={"value": "chips"})
    el = ds.table("eligibility")[["customer", "chip", "derate"]]
    a = a.merge(el, on=["customer", "chip"], how="left")
    tr = chips["training_h100e"].reindex(a["chip"]).to_numpy(dtype=float)
    inf = chips["inference_h100e"].reindex(a["chip"]).to_numpy(dtype=float)
    h = np.where(a["workload"].to_numpy() == "training", tr, inf)
    a["h100e"] = a["chips"].to_numpy() * h * a["derate"].fillna(0.0).to_numpy()
    a["it_mw"] = (
        a["chips"].to_numpy()
        * chips["it_kw_per_chip"].reindex(a["chip"]).to_numpy(dtype=float)
        / 1e3
    )
    out["assignment"] = a

    # demand
    dm = ds.table("demand")[["customer", "workload", "period", "demand_h100e"]]
    served = (
        a.groupby(["customer", "workload", "period"], as_index=False)["h100e"]
        .sum()
        .rename(columns={"h100e": "served_h100e"})
    )
    dm = dm.merge(served, on=["customer", "workload", "period"], how="left")
    dm = dm.merge(
        fr["unmet"].rename(columns={"value": "unmet_h100e"}),
        on=["customer", "workload", "period"],
        how="left",
    )
    dm[["served_h100e", "unmet_h100e"]] = dm[["served_h100e", "unmet_h100e"]].fillna(0.0)
    dmv = dm["demand_h100e"].to_numpy(dtype=float)
    dm["served_share"] = np.where(dmv > 0, dm["served_h100e"] / np.where(dmv > 0, dmv, 1.0), np.nan)
    d = _dual_lookup(model, row_dual, scenario, "demand_balance", ["k", "w", "t"])
    d = pd.DataFrame(
        {
            "customer": _names(model, "k", d["k"]),
            "workload": _names(model, "w", d["w"]),
            "period": per[d["t"].to_numpy()],
            "shadow_price_usd_per_h100e": d["dual"].to_numpy(),
        }
    )
    dm = dm.merge(d, on=["customer", "workload", "period"], how="left")
    dm["shadow_price_usd_per_h100e"] = dm["shadow_price_usd_per_h100e"].fillna(0.0)
    out["demand"] = dm

    # energy (per chip, site, period first)
    hours = ds.table("periods").set_index("period")["hours"]
    wl = ds.table("workloads").set_index("workload")["power_factor"]
    a_pf = asg.assign(pfx=asg["value"] * wl.reindex(asg["workload"]).to_numpy(dtype=float))
    a_pf = a_pf.groupby(["chip", "site", "period"], as_index=False)["pfx"].sum()
    fe = fleet0.merge(asg_cs, on=["chip", "site", "period"], how="outer").merge(
        a_pf, on=["chip", "site", "period"], how="left"
    )
    fe[["fleet_chips", "assigned_chips", "pfx"]] = fe[
        ["fleet_chips", "assigned_chips", "pfx"]
    ].fillna(0.0)
    kw = chips["it_kw_per_chip"].reindex(fe["chip"]).to_numpy(dtype=float)
    idle = chips["idle_power_factor"].reindex(fe["chip"]).to_numpy(dtype=float)
    liq = chips["cooling"].reindex(fe["chip"]).to_numpy() == "liquid"
    hrs = hours.reindex(fe["period"]).to_numpy(dtype=float)
    fe["it_mwh"] = hrs / 1e3 * kw * (fe["pfx"] + idle * (fe["fleet_chips"] - fe["assigned_chips"]))
    pue = np.where(
        liq,
        sidx["pue_liquid"].reindex(fe["site"]).to_numpy(),
        sidx["pue_air"].reindex(fe["site"]).to_numpy(),
    )
    wue = np.where(
        liq,
        sidx["wue_l_per_kwh_liquid"].reindex(fe["site"]).to_numpy(),
        sidx["wue_l_per_kwh_air"].reindex(fe["site"]).to_numpy(),
    )
    fe["facility_mwh"] = fe["it_mwh"] * pue
    fe["water_m3"] = fe["it_mwh"] * wue
    fe["fac_mw"] = fe["fleet_chips"] * kw / 1e3 * pue
    fe["liq_mw"] = np.where(liq, fe["fleet_chips"] * kw / 1e3, 0.0)
    fe["it_mw"] = fe["fleet_chips"] * kw / 1e3
    es = fe.groupby(["site", "period"], as_index=False)[
        ["it_mwh", "facility_mwh", "water_m3", "fac_mw", "liq_mw", "it_mw"]
    ].sum()
    es = grid_sp.merge(es, on=["site", "period"], how="left").fillna(0.0)
    es["energy_cost_usd"] = (
        es["facility_mwh"] * sidx["energy_price_usd_per_mwh"].reindex(es["site"]).to_numpy()
    )
    es["carbon_t"] = es["facility_mwh"] * sidx["carbon_t_per_mwh"].reindex(es["site"]).to_numpy()
    out["energy"] = es

    # site_utilisation
    cap = bo.set_index(["site", "period"])
    es_i = es.set_index(["site", "period"])
    gr = ds.table("site_grid").set_index(["site", "period"])["grid_mw"]
    wa = ds.table("site_water").set_index(["site", "period"])["water_permit_m3"]
    idx = pd.MultiIndex.from_frame(grid_sp)
    parts = []
    for limit, fam, used_v, cap_v, unit in (
        ("power", "site_it_power", es_i["it_mw"], cap["it_capacity_mw"], "MW"),
        ("liquid", "site_liquid", es_i["liq_mw"], cap["liquid_capacity_mw"], "MW"),
        ("grid", "site_grid", es_i["fac_mw"], gr, "MW"),
        ("water", "site_water", es_i["water_m3"], wa, "m3"),
    ):
        f = grid_sp.copy()
        f["limit"] = limit
        f["used"] = used_v.reindex(idx).fillna(0.0).to_numpy()
        f["capacity"] = cap_v.reindex(idx).to_numpy(dtype=float)
        f["unit"] = unit
        d = _dual_lookup(model, row_dual, scenario, fam, ["s", "t"])
        d = pd.DataFrame(
            {
                "site": _names(model, "s", d["s"]),
                "period": per[d["t"].to_numpy()],
                "shadow_price_usd_per_unit": d["dual"].to_numpy(),
            }
        )
        f = f.merge(d, on=["site", "period"], how="left")
        parts.append(f)
    su2 = pd.concat(parts, ignore_index=True)
    su2["shadow_price_usd_per_unit"] = su2["shadow_price_usd_per_unit"].fillna(0.0)
    capv = su2["capacity"].to_numpy(dtype=float)
    su2["utilisation"] = np.where(capv > 0, su2["used"] / np.where(capv > 0, capv, 1.0), np.nan)
    out["site_utilisation"] = su2

    # commitments
    com = model.commitments[scenario].reset_index(drop=True)
    br = fr["breach"]
    if len(com):
        from capacity.schema import period_index

        p0 = period_index(periods[0])
        rows = []
        for j, r in com.iterrows():
            t0 = max(period_index(str(r["from_period"])) - p0, 0)
            t1 = min(period_index(str(r["to_period"])) - p0, T - 1)
            for t in range(t0, t1 + 1):
                rows.append(
                    (j, str(r["customer"]), str(r["family"]), periods[t], float(r["min_it_mw"]))
                )
        cm = pd.DataFrame(rows, columns=["j", "customer", "family", "period", "min_it_mw"])
    else:
        cm = pd.DataFrame(
            {
                "j": pd.Series([], dtype=np.int64),
                "customer": pd.Series([], dtype=object),
                "family": pd.Series([], dtype=object),
                "period": pd.Series([], dtype=object),
                "min_it_mw": pd.Series([], dtype=float),
            }
        )
    af = a.assign(family=chips["family"].reindex(a["chip"]).astype(str).to_numpy())
    dl = (
        af.groupby(["customer", "family", "period"], as_index=False)["it_mw"]
        .sum()
        .rename(columns={"it_mw": "delivered_it_mw"})
    )
    cm = cm.merge(dl, on=["customer", "family", "period"], how="left")
    cm["delivered_it_mw"] = cm["delivered_it_mw"].fillna(0.0)
    cm = cm.merge(
        br[["j", "period", "value"]].rename(columns={"value": "breach_mw"}),
        on=["j", "period"],
        how="left",
    )
    cm["breach_mw"] = cm["breach_mw"].fillna(0.0)
    d = _dual_lookup(model, row_dual, scenario, "commitment", ["j", "t"])
    d = pd.DataFrame(
        {
            "j": d["j"].to_numpy(),
            "period": per[d["t"].to_numpy()],
            "shadow_price_usd_per_mw": d["dual"].to_numpy(),
        }
    )
    cm = cm.merge(d, on=["j", "period"], how="left")
    cm["shadow_price_usd_per_mw"] = cm["shadow_price_usd_per_mw"].fillna(0.0)
    out["commitments"] = cm

    # costs
    out["costs"] = _costs(model, x, scenario)
    out["shadow_prices"] = _shadow_prices(model, x, row_dual, scenario)
    return {n: _typed(n, out[n]) for n in TABLE_COLUMNS}


def _costs(model: PlanningModel, x: np.ndarray, scenario: int) -> pd.DataFrame:
    ds = model.datasets[scenario]
    disc = ds.table("periods")["discount_factor"].to_numpy(dtype=float)
    ct = model.cost_terms
    ct = ct[ct["scenario"] == scenario]
    v = ct["coef"].to_numpy(dtype=float) * np.asarray(x)[ct["col"].to_numpy(dtype=np.int64)]
    f = pd.DataFrame({"t": ct["t"].to_numpy(dtype=np.int64), "term": ct["term"].to_numpy(), "u": v})
    k = model.const_terms
    k = k[k["scenario"] == scenario]
    f = pd.concat(
        [
            f,
            pd.DataFrame(
                {
                    "t": k["t"].to_numpy(dtype=np.int64),
                    "term": k["term"].to_numpy(),
                    "u": k["value"].to_numpy(dtype=float),
                }
            ),
        ],
        ignore_index=True,
    )
    g = f.groupby(["t", "term"])["u"].sum()
    T = len(model.periods)
    full = pd.MultiIndex.from_product([range(T), list(COST_TERMS)], names=["t", "term"])
    g = g.reindex(full, fill_value=0.0).reset_index()
    g["period"] = np.asarray(model.periods, dtype=object)[g["t"].to_numpy()]
    g["undiscounted_cost_usd"] = g["u"]
    g["cost_usd"] = g["u"] * disc[g["t"].to_numpy()]
    return g


def row_keys(model: PlanningModel, con: pd.DataFrame, scenario: int = 0) -> np.ndarray:
    """Domain key text of constraint rows (e.g. "new_carlisle", "openai/training")."""
    fam = con["family"].astype(str).to_numpy()
    out = np.full(len(con), "", dtype=object)
    nm = {k: np.asarray(v + ("",), dtype=object) for k, v in model.codes.items()}
    s = nm["s"][con["s"].to_numpy()]
    c = nm["c"][con["c"].to_numpy()]
    k = nm["k"][con["k"].to_numpy()]
    w = nm["w"][con["w"].to_numpy()]
    r = nm["r"][con["r"].to_numpy()]
    site_fams = np.isin(
        fam,
        [
            "site_it_power",
            "site_liquid",
            "site_liquid_share",
            "site_grid",
            "site_build_rate",
            "site_max",
            "site_water",
        ],
    )
    out[site_fams] = s[site_fams]
    m = fam == "supply_resource"
    out[m] = r[m]
    m = np.isin(fam, ["chip_inventory", "chip_window"])
    out[m] = c[m]
    m = fam == "fleet_assignment"
    out[m] = c[m] + "/" + s[m]
    m = fam == "demand_balance"
    out[m] = k[m] + "/" + w[m]
    m = fam == "commitment"
    if m.any():
        com = model.commitments[scenario].reset_index(drop=True)
        txt = (
            com["customer"].astype(str)
            + "/"
            + com["family"].astype(str)
            + "/"
            + com["from_period"].astype(str)
        ).to_numpy(dtype=object)
        out[m] = txt[con["j"].to_numpy()[m]]
    return out


def _shadow_prices(
    model: PlanningModel, x: np.ndarray, row_dual: np.ndarray | None, scenario: int
) -> pd.DataFrame:
    con = model.constraints
    sel = ((con["scenario"] == scenario) & ~con["family"].isin(DEFINITION_FAMILIES)).to_numpy()
    c = con.loc[sel]
    lhs = model.matrix[np.flatnonzero(sel)] @ np.asarray(x)
    rhs = c["rhs"].to_numpy(dtype=float)
    le = (c["sense"] == "<=").to_numpy()
    slack = np.where(le, rhs - lhs, lhs - rhs)
    w = model.weights[scenario]
    dual = np.zeros(len(c)) if row_dual is None else row_dual[sel] / (w if w > 0 else 1.0)
    dual = dual + 0.0  # turn -0.0 into 0.0
    fam = c["family"].astype(str).to_numpy()
    units = (
        np.array([FAMILIES[f] for f in fam], dtype=object)
        if len(fam)
        else np.zeros(0, dtype=object)
    )
    if (fam == "supply_resource").any():
        su = model.datasets[scenario].table("supply_resources")
        ru = dict(zip(su["resource"].astype(str), su["unit"].astype(str), strict=True))
        rn = np.asarray(model.codes["r"], dtype=object)[c["r"].to_numpy()[fam == "supply_resource"]]
        units[fam == "supply_resource"] = [ru.get(x_, "unit") for x_ in rn]
    return pd.DataFrame(
        {
            "family": fam,
            "period": np.asarray(model.periods, dtype=object)[c["t"].to_numpy()],
            "key": row_keys(model, c, scenario),
            "shadow_price": dual,
            "unit": "USD/" + pd.Series(units, dtype=object).astype(str).to_numpy(),
            "slack": slack,
            "binding": slack <= 1e-6 * (1 + np.abs(rhs)),
        }
    )
