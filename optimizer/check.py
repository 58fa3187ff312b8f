"""Independent checker: recompute every constraint from the returned decision values.

The checker never looks at the LP rows or PuLP constraint objects. It maps the
solution's columns to domain keys (:func:`optimizer.results.solution_frames`),
recomputes each family's left- and right-hand side from the dataset with plain
pandas, and reports every row violated by more than ``tolerance * (1 + |rhs|)``,
plus negative decisions (``bounds``) and assignments a customer is not eligible for
(``eligibility``). :func:`optimizer.solve.solve` turns any violation into
``Status.error``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from capacity.schema import period_index
from optimizer.model import PlanningModel
from optimizer.results import fleet_values, solution_frames

VIOLATION_COLUMNS = ("family", "constraint", "keys", "lhs", "rhs", "violation")


def empty_violations() -> pd.DataFrame:
    """Return the violations table with its columns and no rows."""
    return pd.DataFrame(
        {
            c: pd.Series([], dtype=str if c in ("family", "constraint", "keys") else float)
            for c in VIOLATION_COLUMNS
        }
    )


def _rows(family: str, keys: pd.Series, lhs: Any, rhs: Any, sense: str, tol: float) -> pd.DataFrame:
    lhs = np.asarray(lhs, dtype=float)
    rhs = np.asarray(rhs, dtype=float)
    viol = lhs - rhs if sense == "<=" else rhs - lhs
    bad = viol > tol * (1.0 + np.abs(rhs))
    k = keys.astype(str).to_numpy()[bad]
    return pd.DataFrame(
        {
            "family": family,
            "constraint": [f"{family}[{x}]" for x in k],
            "keys": k,
            "lhs": lhs[bad],
            "rhs": rhs[bad],
            "violation": viol[bad],
        }
    )


def _cum(df: pd.DataFrame, by: list[str], col: str, periods: list[str]) -> pd.Series:
    order = {p: i for i, p in enumerate(periods)}
    d = df.assign(_t=df["period"].map(order)).sort_values([*by, "_t"])
    return d.groupby(by)[col].cumsum().reindex(df.index)


def check_frames(ds: Any, fr: dict[str, pd.DataFrame], tolerance: float = 1e-6) -> pd.DataFrame:
    """Check domain decision values of one scenario against the dataset.

    Parameters
    ----------
    ds : Dataset
        The scenario's dataset.
    fr : dict of DataFrame
        Decision values by kind, as returned by
        :func:`optimizer.results.solution_frames`.
    tolerance : float
        Relative tolerance (violation > tolerance * (1 + |rhs|) is reported).

    Returns
    -------
    DataFrame
        ``family, constraint, keys, lhs, rhs, violation`` (empty when feasible).
    """
    tol = tolerance
    periods = list(ds.periods)
    p0 = period_index(periods[0])
    sites = ds.table("sites").set_index("site")
    chips = ds.table("chips").set_index("chip")
    out = []
    # bounds
    for f in fr.values():
        bad = f[f["value"] < -tol]
        if len(bad):
            keys = bad.drop(columns=["value"]).astype(str).agg("/".join, axis=1)
            out.append(_rows("bounds", keys, -bad["value"], np.zeros(len(bad)), "<=", tol))
    sp = sites.reset_index()[["site"]].merge(pd.DataFrame({"period": periods}), how="cross")
    b = sp.merge(fr["build"], on=["site", "period"], how="left").fillna({"value": 0.0})
    lq = sp.merge(fr["liquid"], on=["site", "period"], how="left").fillna({"value": 0.0})
    b["cum"] = _cum(b, ["site"], "value", periods)
    lq["cum"] = _cum(lq, ["site"], "value", periods)
    cap = sites["initial_it_mw"].reindex(b["site"]).to_numpy() + b["cum"].to_numpy()
    lcap = sites["initial_liquid_mw"].reindex(lq["site"]).to_numpy() + lq["cum"].to_numpy()
    key = b["site"] + "," + b["period"]
    out.append(
        _rows(
            "site_build_rate",
            key,
            b["value"],
            sites["max_build_mw_per_period"].reindex(b["site"]),
            "<=",
            tol,
        )
    )
    out.append(_rows("site_max", key, cap, sites["max_it_mw"].reindex(b["site"]), "<=", tol))
    out.append(
        _rows(
            "site_liquid_share",
            key,
            lq["value"],
            b["value"].to_numpy() * sites["liquid_share_max"].reindex(b["site"]).to_numpy(),
            "<=",
            tol,
        )
    )
    # fleet by chip/site/period
    fl = fleet_values(ds, fr)
    asg = fr["assign"]
    a_cs = asg.groupby(["chip", "site", "period"], as_index=False)["value"].sum()
    fa = a_cs.merge(fl, on=["chip", "site", "period"], how="left").fillna({"fleet_chips": 0.0})
    out.append(
        _rows(
            "fleet_assignment",
            fa["chip"] + "/" + fa["site"] + "," + fa["period"],
            fa["value"],
            fa["fleet_chips"],
            "<=",
            tol,
        )
    )
    kw = chips["it_kw_per_chip"].reindex(fl["chip"]).to_numpy(dtype=float)
    liq = (chips["cooling"].reindex(fl["chip"]) == "liquid").to_numpy()
    pue = np.where(
        liq, sites["pue_liquid"].reindex(fl["site"]), sites["pue_air"].reindex(fl["site"])
    )
    f2 = fl.assign(mw=fl["fleet_chips"] * kw / 1e3)
    f2["liq_mw"] = np.where(liq, f2["mw"], 0.0)
    f2["fac_mw"] = f2["mw"] * pue
    g = f2.groupby(["site", "period"], as_index=False)[["mw", "liq_mw", "fac_mw"]].sum()
    g = sp.merge(g, on=["site", "period"], how="left").fillna(0.0)
    key = g["site"] + "," + g["period"]
    capm = pd.Series(cap, index=pd.MultiIndex.from_frame(b[["site", "period"]]))
    lcapm = pd.Series(lcap, index=pd.MultiIndex.from_frame(lq[["site", "period"]]))
    gi = pd.MultiIndex.from_frame(g[["site", "period"]])
    out.append(_rows("site_it_power", key, g["mw"], capm.reindex(gi), "<=", tol))
    out.append(_rows("site_liquid", key, g["liq_mw"], lcapm.reindex(gi), "<=", tol))
    grid = ds.table("site_grid").set_index(["site", "period"])["grid_mw"].reindex(gi)
    out.append(_rows("site_grid", key, g["fac_mw"], grid, "<=", tol))
    # water: IT MWh by cooling * WUE
    wl = ds.table("workloads").set_index("workload")["power_factor"]
    hours = ds.table("periods").set_index("period")["hours"]
    ax = asg.assign(pfx=asg["value"] * wl.reindex(asg["workload"]).to_numpy(dtype=float))
    ax = ax.groupby(["chip", "site", "period"], as_index=False)[["value", "pfx"]].sum()
    e = fl.merge(ax, on=["chip", "site", "period"], how="outer").fillna(
        {"fleet_chips": 0.0, "value": 0.0, "pfx": 0.0}
    )
    kw = chips["it_kw_per_chip"].reindex(e["chip"]).to_numpy(dtype=float)
    idle = chips["idle_power_factor"].reindex(e["chip"]).to_numpy(dtype=float)
    liq = (chips["cooling"].reindex(e["chip"]) == "liquid").to_numpy()
    it = (
        hours.reindex(e["period"]).to_numpy()
        / 1e3
        * kw
        * (e["pfx"].to_numpy() + idle * (e["fleet_chips"].to_numpy() - e["value"].to_numpy()))
    )
    wue = np.where(
        liq,
        sites["wue_l_per_kwh_liquid"].reindex(e["site"]),
        sites["wue_l_per_kwh_air"].reindex(e["site"]),
    )
    e["m3"] = it * wue
    w = e.groupby(["site", "period"], as_index=False)["m3"].sum()
    permit = ds.table("site_water").set_index(["site", "period"])["water_permit_m3"]
    out.append(
        _rows(
            "site_water",
            w["site"] + "," + w["period"],
            w["m3"],
            permit.reindex(pd.MultiIndex.from_frame(w[["site", "period"]])),
            "<=",
            tol,
        )
    )
    # supply
    bom = ds.table("chip_bill_of_materials")
    u = fr["produce"].merge(bom, on="chip")
    u = (
        u.assign(used=u["value"] * u["per_chip"])
        .groupby(["resource", "period"], as_index=False)["used"]
        .sum()
    )
    capr = ds.table("supply_resources").set_index(["resource", "period"])["capacity"]
    capu = capr.reindex(pd.MultiIndex.from_frame(u[["resource", "period"]])).fillna(0.0)
    out.append(
        _rows("supply_resource", u["resource"] + "," + u["period"], u["used"], capu, "<=", tol)
    )
    # chip window and inventory
    pr = fr["produce"]
    t = (
        pr["period"].map(period_index).to_numpy(dtype=np.int64)
        if len(pr)
        else np.zeros(0, dtype=np.int64)
    )
    t0 = chips["first_period"].reindex(pr["chip"]).astype(str).map(period_index).to_numpy()
    t1 = chips["last_period"].reindex(pr["chip"]).astype(str).map(period_index).to_numpy()
    outside = pr[(t < t0) | (t > t1)]
    out.append(
        _rows(
            "chip_window",
            outside["chip"] + "," + outside["period"],
            outside["value"],
            np.zeros(len(outside)),
            "<=",
            tol,
        )
    )
    cp = pd.DataFrame({"chip": chips.index.astype(str)}).merge(
        pd.DataFrame({"period": periods}), how="cross"
    )
    ins = fr["install"].groupby(["chip", "period"], as_index=False)["value"].sum()
    cp = cp.merge(ins.rename(columns={"value": "ins"}), on=["chip", "period"], how="left")
    cp = cp.merge(pr.rename(columns={"value": "prod"}), on=["chip", "period"], how="left").fillna(
        {"ins": 0.0, "prod": 0.0}
    )
    cp["ci"] = _cum(cp, ["chip"], "ins", periods)
    cp["cpd"] = _cum(cp, ["chip"], "prod", periods)
    out.append(
        _rows("chip_inventory", cp["chip"] + "," + cp["period"], cp["ci"], cp["cpd"], "<=", tol)
    )
    # eligibility and demand
    el = ds.table("eligibility")
    a = asg[asg["value"].abs() > tol].merge(el, on=["customer", "chip"], how="left")
    region = sites["region"].reindex(a["site"]).astype(str).to_numpy()
    allowed = (
        np.array(
            [
                (
                    isinstance(rg, str)
                    and (rg.strip() == "" or reg in [x.strip() for x in rg.split(";")])
                )
                for rg, reg in zip(a["regions"].to_numpy(), region, strict=True)
            ],
            dtype=bool,
        )
        & a["derate"].notna().to_numpy()
    )
    bad = a[~allowed]
    out.append(
        _rows(
            "eligibility",
            bad["chip"] + "/" + bad["site"] + "/" + bad["customer"] + "," + bad["period"],
            bad["value"],
            np.zeros(len(bad)),
            "<=",
            tol,
        )
    )
    tr = chips["training_h100e"].reindex(a["chip"]).to_numpy(dtype=float)
    inf = chips["inference_h100e"].reindex(a["chip"]).to_numpy(dtype=float)
    a["h"] = (
        a["value"].to_numpy()
        * np.where(a["workload"] == "training", tr, inf)
        * a["derate"].fillna(0.0).to_numpy()
    )
    served = a.groupby(["customer", "workload", "period"], as_index=False)["h"].sum()
    dm = ds.table("demand")
    dm = dm[dm["demand_h100e"] > 0].merge(served, on=["customer", "workload", "period"], how="left")
    dm = dm.merge(
        fr["unmet"].rename(columns={"value": "unmet"}),
        on=["customer", "workload", "period"],
        how="left",
    )
    dm = dm.fillna({"h": 0.0, "unmet": 0.0})
    out.append(
        _rows(
            "demand_balance",
            dm["customer"] + "/" + dm["workload"] + "," + dm["period"],
            dm["h"] + dm["unmet"],
            dm["demand_h100e"],
            ">=",
            tol,
        )
    )
    # commitments
    com = ds.table("commitments").reset_index(drop=True)
    if len(com):
        a["family"] = chips["family"].reindex(a["chip"]).astype(str).to_numpy()
        a["mw"] = (
            a["value"].to_numpy()
            * chips["it_kw_per_chip"].reindex(a["chip"]).to_numpy(dtype=float)
            / 1e3
        )
        dl = a.groupby(["customer", "family", "period"])["mw"].sum()
        br = fr["breach"].set_index(["j", "period"])["value"]
        rows = []
        for j, r in com.iterrows():
            lo = max(period_index(str(r["from_period"])), p0)
            hi = min(period_index(str(r["to_period"])), p0 + len(periods) - 1)
            for pi in range(lo, hi + 1):
                p = periods[pi - p0]
                lhs = dl.get((str(r["customer"]), str(r["family"]), p), 0.0) + br.get((j, p), 0.0)
                rows.append(
                    (
                        f"{r['customer']}/{r['family']}/{r['from_period']},{p}",
                        lhs,
                        float(r["min_it_mw"]),
                    )
                )
        if rows:
            cf = pd.DataFrame(rows, columns=["k", "lhs", "rhs"])
            out.append(_rows("commitment", cf["k"], cf["lhs"], cf["rhs"], ">=", tol))
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
