"""The planning LP of ``optimizer/plan/model.py`` written a second time, with linopy.

This is the benchmark's peer: the same decisions, constraint families, bounds and
objective terms, built from the same :class:`capacity.dataset.Dataset` in the
vectorised style linopy is made for (labelled xarray dimensions ``c`` chip, ``s``
site, ``k`` customer, ``w`` workload, ``t`` period index, ``r`` resource, ``j``
commitment row; masks skip the cells the reference model does not create). It
imports nothing from :mod:`optimizer`; it re-derives every index set and
coefficient from the tables, so an equal optimum is evidence that both codes state
the same LP (``benchmarks/run.py`` checks objective and column count).

Maths (see ``optimizer/plan/model.py`` for the full statement):

* fleet[c,s,t] columns (installs still alive) with fleet_definition rows
  fleet[t] - fleet[t-1] - install[t] + install[t-life_c] == 0; the initial fleet
  alive is a constant moved to the right-hand sides;
* fleet_definition, site_it_power, site_liquid, site_liquid_share, site_grid, site_build_rate,
  site_max, site_water, supply_resource, chip_inventory, fleet_assignment,
  demand_balance, commitment (chip_window has no rows: produce exists only in the
  sale window);
* objective: discounted chip capex rent over alive in-horizon periods, produce
  tie-break 1e-3 USD/chip, build capex rent over ``FACILITY_LIFE_PERIODS``, energy
  of idle fleet and of assignment (IT MWh x PUE x price), unmet and breach
  penalties, plus the constant energy of the initial fleet.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import linopy
import numpy as np
import pandas as pd
import xarray as xr
from linopy.config import LinopySemanticsWarning

from benchmarks.solver_options import highs_options
from capacity.schema import period_index

FACILITY_LIFE_PERIODS = 60  # same assumption as optimizer.plan.model
PRODUCE_TIE_BREAK_USD_PER_CHIP = 1e-3


@dataclass
class PeerResult:
    """Outcome of the linopy peer.

    Attributes
    ----------
    objective_usd : float
        Optimal objective including the initial-fleet energy constant (USD).
    status : str
        linopy termination condition.
    n_variables, n_constraints : int
        Non-masked columns and rows.
    timings_s : dict
        ``build`` (Dataset -> linopy Model) and ``solve`` (linopy's hand-over to
        highspy, the solve and the solution copy-back), seconds.
    """

    objective_usd: float
    status: str
    n_variables: int
    n_constraints: int
    timings_s: dict[str, float] = field(default_factory=dict)


def _pidx(labels: pd.Series, p0: int) -> np.ndarray:
    return np.array([period_index(str(p)) - p0 for p in labels], dtype=np.int64)


def _da(values: Any, coords: dict[str, Any]) -> xr.DataArray:
    return xr.DataArray(np.asarray(values), coords=coords, dims=list(coords))


def build_linopy(ds: Any) -> tuple[linopy.Model, float]:
    """Build the planning LP of a dataset with linopy (legacy absent-slot semantics).

    See :func:`_build_linopy`; linopy's notice that absent slots will propagate
    under its future ``v1`` semantics is silenced because every sum here relies on
    the legacy rule (a masked cell contributes nothing), which is also the rule of
    the reference model.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinopySemanticsWarning)
        return _build_linopy(ds)


def _build_linopy(ds: Any) -> tuple[linopy.Model, float]:
    """Build the planning LP of a dataset with linopy.

    Parameters
    ----------
    ds : Dataset
        Validated dataset (scenario applied).

    Returns
    -------
    (linopy.Model, float)
        The model and the objective constant (USD, discounted energy of the initial
        fleet), which linopy keeps outside the model.
    """
    per = ds.table("periods")
    T = len(per)
    p0 = period_index(str(per["period"].iloc[0]))
    hours = per["hours"].to_numpy(float)
    disc = per["discount_factor"].to_numpy(float)
    tt = np.arange(T)

    st = ds.table("sites")
    S = len(st)
    sid = st["site"].astype(str).tolist()
    sv = {c: st[c].to_numpy() for c in st.columns}
    ch = ds.table("chips")
    C = len(ch)
    cid = ch["chip"].astype(str).tolist()
    kw = ch["it_kw_per_chip"].to_numpy(float)
    life = ch["lifetime_periods"].to_numpy(np.int64)
    idle = ch["idle_power_factor"].to_numpy(float)
    liq_chip = (ch["cooling"].astype(str) == "liquid").to_numpy()
    t_first = _pidx(ch["first_period"], p0)
    t_last = _pidx(ch["last_period"], p0)
    fam_ids = list(dict.fromkeys(ch["family"].astype(str)))
    fam = np.array([fam_ids.index(f) for f in ch["family"].astype(str)])
    cu = ds.table("customers")
    kid = cu["customer"].astype(str).tolist()
    K = len(kid)
    wl = ds.table("workloads")
    dm = ds.table("demand")
    wid = list(dict.fromkeys([*wl["workload"].astype(str), *dm["workload"].astype(str)]))
    W = len(wid)
    pf = np.full(W, np.nan)
    pf[[wid.index(w) for w in wl["workload"].astype(str)]] = wl["power_factor"].to_numpy(float)
    h100e = np.stack(
        [
            ch["training_h100e"].to_numpy(float)
            if w == "training"
            else ch["inference_h100e"].to_numpy(float)
            for w in wid
        ],
        axis=1,
    )  # (C, W)

    # per (chip, site) PUE / WUE: liquid-only chips at the liquid value
    pue = np.where(liq_chip[:, None], sv["pue_liquid"][None, :], sv["pue_air"][None, :]).astype(
        float
    )
    wue = np.where(
        liq_chip[:, None], sv["wue_l_per_kwh_liquid"][None, :], sv["wue_l_per_kwh_air"][None, :]
    ).astype(float)
    price = sv["energy_price_usd_per_mwh"].astype(float)

    # demand D[k, w, t] (> 0 inside the horizon)
    D = np.zeros((K, W, T))
    dk = np.array([kid.index(x) for x in dm["customer"].astype(str)], dtype=np.int64)
    dw = np.array([wid.index(x) for x in dm["workload"].astype(str)], dtype=np.int64)
    dt = _pidx(dm["period"], p0)
    inside = (dt >= 0) & (dt < T)
    np.add.at(D, (dk[inside], dw[inside], dt[inside]), dm["demand_h100e"].to_numpy(float)[inside])
    Dpos = D > 0

    # eligibility derate E[k, c, s] (nan = not allowed)
    el = ds.table("eligibility")
    E = np.full((K, C, S), np.nan)
    region = st["region"].astype(str).to_numpy()
    for cust, chip, der, regs in el[["customer", "chip", "derate", "regions"]].itertuples(
        index=False
    ):
        toks = [x.strip() for x in str(regs).split(";")]
        ok = np.ones(S, bool) if "" in toks else np.isin(region, toks)
        k, c = kid.index(str(cust)), cid.index(str(chip))
        fill = ok & np.isnan(E[k, c])
        E[k, c, fill] = float(der)
    elig = ~np.isnan(E)

    # commitments: rows j with min_it_mw > 0 over from..to inside the horizon
    cm = ds.table("commitments")
    J = len(cm)
    jk = np.array([kid.index(x) for x in cm["customer"].astype(str)], dtype=np.int64)
    jf = np.array([fam_ids.index(x) for x in cm["family"].astype(str)], dtype=np.int64)
    j0 = _pidx(cm["from_period"], p0) if J else np.zeros(0, np.int64)
    j1 = _pidx(cm["to_period"], p0) if J else np.zeros(0, np.int64)
    jmin = cm["min_it_mw"].to_numpy(float)
    jpen = cm["breach_penalty_usd_per_mw"].to_numpy(float)
    Bm = (jmin[:, None] > 0) & (tt[None, :] >= j0[:, None]) & (tt[None, :] <= j1[:, None])  # (J,T)

    # relevant customers, buildable sites, usable (chip, site) pairs
    relevant = Dpos.any(axis=(1, 2))
    relevant[jk[Bm.any(axis=1)]] = True
    buildable = (sv["max_build_mw_per_period"] > 0) & (
        sv["max_it_mw"] > sv["initial_it_mw"] + 1e-12
    )
    liq_site = (sv["initial_liquid_mw"] > 0) | (buildable & (sv["liquid_share_max"] > 0))
    usable = elig[relevant].any(axis=0)  # (C, S)
    usable &= ~liq_chip[:, None] | liq_site[None, :]
    liquid_ok = buildable & (sv["liquid_share_max"] > 0)

    # produce window P[c, t]; installs from the chip's first producible period
    t0 = np.maximum(t_first, 0)
    t1 = np.minimum(t_last, T - 1)
    P = usable.any(axis=1)[:, None] & (tt[None, :] >= t0[:, None]) & (tt[None, :] <= t1[:, None])
    has_prod = P.any(axis=1)
    Imask = (usable & has_prod[:, None])[:, :, None] & (tt[None, None, :] >= t0[:, None, None])

    # initial fleet alive Init[c, s, t]
    f0 = ds.table("initial_fleet")
    Init = np.zeros((C, S, T))
    for chip, site, n, ip in f0[["chip", "site", "chips", "install_period"]].itertuples(
        index=False
    ):
        if n <= 0:
            continue
        c, s = cid.index(str(chip)), sid.index(str(site))
        ti = period_index(str(ip)) - p0
        a, b = max(ti, 0), min(ti + int(life[c]), T)
        Init[c, s, a:b] += float(n)

    # fleet columns: every period from the pair's first install period on
    FT = Imask
    FK = FT | (Init > 0)  # (C, S, T)

    # assignment mask A[c, s, k, w, t]
    wmin = int(np.nanargmin(np.where(np.isnan(pf), np.inf, pf)))
    com_need = np.zeros((K, len(fam_ids), T), bool)
    has_dem_kt = Dpos.any(axis=1)  # (K, T)
    for j in range(J):
        com_need[jk[j], jf[j]] |= Bm[j] & ~has_dem_kt[jk[j]]
    dem_part = elig.transpose(1, 2, 0)[:, :, :, None, None] & Dpos[None, None, :, :, :]
    com_part = np.zeros_like(dem_part)
    com_part[:, :, :, wmin, :] = (
        elig.transpose(1, 2, 0)[:, :, :, None]
        & com_need[:, fam, :].transpose(1, 0, 2)[:, None, :, :]
    )
    A = (dem_part | com_part) & FK[:, :, None, None, :]

    cst = {"c": cid, "s": sid, "t": tt}
    ix = {
        "c": pd.Index(cid, name="c"),
        "s": pd.Index(sid, name="s"),
        "k": pd.Index(kid, name="k"),
        "w": pd.Index(wid, name="w"),
        "t": pd.Index(tt, name="t"),
        "j": pd.Index(np.arange(J), name="j"),
    }
    jid = list(range(J))

    def var(name: str, dims: str, mask: np.ndarray) -> linopy.Variable:
        return m.add_variables(
            lower=0.0,
            coords=[ix[d] for d in dims],
            name=name,
            mask=_da(mask, {d: ix[d] for d in dims}),
        )

    m = linopy.Model()
    build = var("build", "st", np.repeat(buildable[:, None], T, 1))
    liquid = var("liquid", "st", np.repeat(liquid_ok[:, None], T, 1))
    install = var("install", "cst", Imask)
    fleet = var("fleet", "cst", FT)
    produce = var("produce", "ct", P)
    assign = var("assign", "cskwt", A)
    unmet = var("unmet", "kwt", Dpos)
    breach = var("breach", "jt", Bm) if J else None

    # fleet_definition: fleet[t] - fleet[t-1] - install[t] + install[t-life_c] == 0
    life_da = _da(life, {"c": cid})
    retire = None
    for L in sorted(set(life.tolist())):
        part = install.shift(t=int(L)).where(life_da == L)
        retire = part if retire is None else retire + part
    m.add_constraints(
        fleet - fleet.shift(t=1) - install + retire == 0,
        name="fleet_definition",
        mask=_da(FT, cst),
    )
    cumbuild = build.cumsum("t")
    cumliquid = liquid.cumsum("t")
    kw_da = _da(kw / 1e3, {"c": cid})
    any_fk = _da(FK.any(axis=0), {"s": sid, "t": tt})
    init_mw = _da((Init * (kw / 1e3)[:, None, None]).sum(axis=0), {"s": sid, "t": tt})

    # 1 site_it_power
    m.add_constraints(
        (kw_da * fleet).sum("c") - cumbuild <= _da(sv["initial_it_mw"], {"s": sid}) - init_mw,
        name="site_it_power",
        mask=any_fk,
    )
    # 2 site_liquid_share, site_liquid
    share = _da(sv["liquid_share_max"].astype(float), {"s": sid})
    m.add_constraints(
        liquid - share * build <= 0,
        name="site_liquid_share",
        mask=_da(np.repeat(liquid_ok[:, None], T, 1), {"s": sid, "t": tt}),
    )
    liq_da = _da(liq_chip, {"c": cid})
    fk_liq = _da((FK & liq_chip[:, None, None]).any(axis=0), {"s": sid, "t": tt})
    if bool(liq_chip.any()):
        init_liq = _da(
            (Init * (kw / 1e3 * liq_chip)[:, None, None]).sum(axis=0), {"s": sid, "t": tt}
        )
        m.add_constraints(
            (kw_da * fleet).where(liq_da).sum("c") - cumliquid
            <= _da(sv["initial_liquid_mw"].astype(float), {"s": sid}) - init_liq,
            name="site_liquid",
            mask=fk_liq,
        )
    # 3 site_grid
    g = ds.table("site_grid")
    grid = np.full((S, T), np.nan)
    gt = _pidx(g["period"], p0)
    gi = (gt >= 0) & (gt < T)
    grid[np.array([sid.index(x) for x in g["site"].astype(str)])[gi], gt[gi]] = g[
        "grid_mw"
    ].to_numpy(float)[gi]
    fac = (kw / 1e3)[:, None] * pue  # (C, S)
    init_fac = (Init * fac[:, :, None]).sum(axis=0)
    m.add_constraints(
        (_da(fac, {"c": cid, "s": sid}) * fleet).sum("c")
        <= _da(np.nan_to_num(grid - init_fac, nan=0.0), {"s": sid, "t": tt}),
        name="site_grid",
        mask=any_fk & _da(~np.isnan(grid), {"s": sid, "t": tt}),
    )
    # 4 site_build_rate, site_max
    bmask = _da(np.repeat(buildable[:, None], T, 1), {"s": sid, "t": tt})
    m.add_constraints(
        build <= _da(sv["max_build_mw_per_period"].astype(float), {"s": sid}),
        name="site_build_rate",
        mask=bmask,
    )
    m.add_constraints(
        cumbuild <= _da((sv["max_it_mw"] - sv["initial_it_mw"]).astype(float), {"s": sid}),
        name="site_max",
        mask=bmask,
    )
    # 5 site_water: IT MWh * WUE
    wt = ds.table("site_water")
    permit = np.full((S, T), np.nan)
    wtt = _pidx(wt["period"], p0)
    wi = (wtt >= 0) & (wtt < T)
    permit[np.array([sid.index(x) for x in wt["site"].astype(str)])[wi], wtt[wi]] = wt[
        "water_permit_m3"
    ].to_numpy(float)[wi]
    idle_mwh = hours[None, None, :] / 1e3 * (kw * idle)[:, None, None] * wue[:, :, None]  # (C,S,T)
    init_m3 = (Init * idle_mwh).sum(axis=0)
    extra = (
        hours[None, None, None, :]
        / 1e3
        * kw[:, None, None, None]
        * (pf[None, None, :, None] - idle[:, None, None, None])
        * wue[:, :, None, None]
    )  # (C, S, W, T)
    m.add_constraints(
        (_da(idle_mwh, cst) * fleet).sum("c")
        + (_da(extra, {"c": cid, "s": sid, "w": wid, "t": tt}) * assign).sum(["c", "k", "w"])
        <= _da(np.nan_to_num(permit - init_m3, nan=0.0), {"s": sid, "t": tt}),
        name="site_water",
        mask=any_fk & _da(~np.isnan(permit), {"s": sid, "t": tt}),
    )
    # 6 supply_resource
    bm = ds.table("chip_bill_of_materials")
    su = ds.table("supply_resources")
    rid = list(dict.fromkeys([*su["resource"].astype(str), *bm["resource"].astype(str)]))
    R = len(rid)
    bom = np.zeros((C, R))
    for chip, res, pc in bm[["chip", "resource", "per_chip"]].itertuples(index=False):
        if pc > 0:
            bom[cid.index(str(chip)), rid.index(str(res))] = float(pc)
    cap = np.zeros((R, T))
    stt = _pidx(su["period"], p0)
    si = (stt >= 0) & (stt < T)
    cap[np.array([rid.index(x) for x in su["resource"].astype(str)])[si], stt[si]] = su[
        "capacity"
    ].to_numpy(float)[si]
    smask = ((bom > 0)[:, :, None] & P[:, None, :]).any(axis=0)  # (R, T)
    bom_da = _da(bom, {"c": cid, "r": rid})
    m.add_constraints(
        (bom_da * produce).where(bom_da > 0).sum("c") <= _da(cap, {"r": rid, "t": tt}),
        name="supply_resource",
        mask=_da(smask, {"r": rid, "t": tt}),
    )
    # 7 chip_inventory: cumulative installs <= cumulative production
    first_inst = np.where(Imask.any(axis=(1, 2)), t0, T)
    inv_mask = tt[None, :] >= first_inst[:, None]
    m.add_constraints(
        install.sum("s").cumsum("t") - produce.cumsum("t") <= 0,
        name="chip_inventory",
        mask=_da(inv_mask, {"c": cid, "t": tt}),
    )
    # 9 fleet_assignment
    m.add_constraints(
        assign.sum(["k", "w"]) - fleet <= _da(Init, cst),
        name="fleet_assignment",
        mask=_da(A.any(axis=(2, 3)), cst),
    )
    # 10 demand_balance
    coef = np.nan_to_num(E).transpose(1, 2, 0)[:, :, :, None] * h100e[:, None, None, :]  # (C,S,K,W)
    m.add_constraints(
        (_da(coef, {"c": cid, "s": sid, "k": kid, "w": wid}) * assign).sum(["c", "s"]) + unmet
        >= _da(D, {"k": kid, "w": wid, "t": tt}),
        name="demand_balance",
        mask=_da(Dpos, {"k": kid, "w": wid, "t": tt}),
    )
    # 11 commitment: IT MW on the family + breach >= min_it_mw
    if J and Bm.any():
        amw = (kw_da * assign).sum(["s", "w"])  # (c, k, t)
        sel = amw.sel(k=xr.DataArray([kid[x] for x in jk], dims="j", coords={"j": jid}))
        in_f = _da(fam[:, None] == jf[None, :], {"c": cid, "j": jid})
        m.add_constraints(
            sel.where(in_f).sum("c") + breach >= _da(jmin, {"j": jid}),
            name="commitment",
            mask=_da(Bm, {"j": jid, "t": tt}),
        )

    # objective
    cd = np.concatenate([[0.0], np.cumsum(disc)])  # cd[b] - cd[a] = sum disc[a:b]
    # fleet columns carry the per-period capex rent and idle energy
    fleet_cost = (ch["capex_usd_per_chip"].to_numpy(float) / life)[:, None, None] * disc[
        None, None, :
    ] + (
        (kw * idle / 1e3)[:, None, None]
        * pue[:, :, None]
        * price[None, :, None]
        * (hours * disc)[None, None, :]
    )
    end_b = np.minimum(tt + FACILITY_LIFE_PERIODS, T)
    bcost = (sv["build_capex_usd_per_mw"].astype(float) / FACILITY_LIFE_PERIODS)[:, None] * (
        cd[end_b] - cd[tt]
    )[None, :]
    a_cost = (
        (hours * disc)[None, None, None, :]
        / 1e3
        * kw[:, None, None, None]
        * (pf[None, None, :, None] - idle[:, None, None, None])
        * (pue * price[None, :])[:, :, None, None]
    )  # (C, S, W, T)
    pen = (
        cu["unmet_penalty_usd_per_h100e_period"].to_numpy(float)[:, None, None]
        * disc[None, None, :]
    )
    obj = (
        (_da(fleet_cost, cst) * fleet).sum()
        + (
            _da(PRODUCE_TIE_BREAK_USD_PER_CHIP * np.tile(disc, (C, 1)), {"c": cid, "t": tt})
            * produce
        ).sum()
        + (_da(bcost, {"s": sid, "t": tt}) * build).sum()
        + (_da(a_cost, {"c": cid, "s": sid, "w": wid, "t": tt}) * assign).sum()
        + (_da(np.broadcast_to(pen, (K, W, T)), {"k": kid, "w": wid, "t": tt}) * unmet).sum()
    )
    if breach is not None:
        obj = obj + (_da(jpen[:, None] * disc[None, :], {"j": jid, "t": tt}) * breach).sum()
    m.add_objective(obj)
    const = float(
        (
            Init
            * (hours * disc)[None, None, :]
            / 1e3
            * (kw * idle)[:, None, None]
            * (pue * price[None, :])[:, :, None]
        ).sum()
    )
    return m, const


def n_active(m: linopy.Model) -> tuple[int, int]:
    """Number of non-masked variables and constraints of a linopy model."""
    nv = sum(int((m.variables[v].labels.values >= 0).sum()) for v in m.variables)
    nc = sum(int((m.constraints[c].labels.values >= 0).sum()) for c in m.constraints)
    return nv, nc


def solve_linopy(ds: Any, *, time_limit_s: float | None = None) -> PeerResult:
    """Build and solve the peer LP with HiGHS through linopy's direct highspy API.

    Parameters
    ----------
    ds : Dataset
        Validated dataset.
    time_limit_s : float, optional
        HiGHS time limit.

    Returns
    -------
    PeerResult
        Objective (USD, constant included) and timings.
    """
    t0 = time.perf_counter()
    m, const = build_linopy(ds)
    build_s = time.perf_counter() - t0
    nv, _ = n_active(m)  # untimed: only to pick the same HiGHS options as ours
    opts: dict[str, Any] = {"output_flag": False, **highs_options(nv, time_limit_s)}
    t1 = time.perf_counter()
    status, cond = m.solve(solver_name="highs", io_api="direct", progress=False, **opts)
    t2 = time.perf_counter()
    nv, nc = n_active(m)  # outside the timed span
    obj = float(m.objective.value) + const if status == "ok" else float("nan")
    return PeerResult(obj, str(cond), nv, nc, {"build": build_s, "solve": t2 - t1})
