"""Plan quantities derived from the decisions: the fleet, chips at work, site loads and energy.

Each is written once here and read by the result tables and the independent checker
through :class:`optimizer.components.plan_context.PlanContext`: the fleet alive per
(chip, site, period) from installs and lifetimes, assigned chips at their workload's
power factor, IT / facility / liquid MW per site, IT MWh (assigned chips at the power
factor, idle chips at the idle factor), facility MWh (x PUE by cooling), water (x WUE),
and the grid energy cost and carbon of the facility energy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from capacity.schema import period_index
from optimizer.lp.frames import column_array, column_values, indexed
from optimizer.lp.frames import frame as object_frame
from optimizer.lp.grouping import Groups, group_sum, positions, sorted_codes, take

__all__ = ["ChipSiteWork", "fleet_values", "on_site_periods", "site_energy"]

_FLEET_KEYS = ("chip", "site", "period")


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
    pidx = {p: i for i, p in enumerate(periods)}
    p0 = period_index(periods[0])
    life = indexed(ds.table("chips"), "chip")["lifetime_periods"]
    ins = frames["install"]
    ins = ins[column_values(ins, "value", dtype=float) > 0]
    parts: list[dict[str, np.ndarray]] = []
    if len(ins):
        t = ins["period"].map(pidx).to_numpy(dtype=np.int64)
        L = life.reindex(ins["chip"]).to_numpy(dtype=np.int64)
        parts.append(
            {
                "chip": column_values(ins, "chip"),
                "site": column_values(ins, "site"),
                "t_in": t,
                "t_out": t + L,
                "chips": column_values(ins, "value", dtype=float),
                "new": np.ones(len(t), dtype=bool),
            }
        )
    f0 = ds.table("initial_fleet")
    if len(f0):
        t = np.array(
            [period_index(p) - p0 for p in f0["install_period"].astype(str)], dtype=np.int64
        )
        L = life.reindex(f0["chip"]).to_numpy(dtype=np.int64)
        parts.append(
            {
                "chip": f0["chip"].astype(str).to_numpy(),
                "site": f0["site"].astype(str).to_numpy(),
                "t_in": t,
                "t_out": t + L,
                "chips": column_values(f0, "chips", dtype=float),
                "new": np.zeros(len(t), dtype=bool),
            }
        )
    cols = [*_FLEET_KEYS, "installed_chips", "retired_chips", "fleet_chips"]
    if not parts:
        return pd.DataFrame(
            {c: pd.Series([], dtype=object if c in _FLEET_KEYS else float) for c in cols}
        )
    cohorts = {c: np.concatenate([p[c] for p in parts]) for c in parts[0]}
    return _cohort_fleet(cohorts, periods)


def _cohort_fleet(cohorts: dict[str, np.ndarray], periods: list[str]) -> pd.DataFrame:
    """Installed, retired and alive chips per (chip, site, period) from install cohorts.

    ``cohorts``: arrays ``chip, site, t_in, t_out, chips, new`` (one row per cohort).
    Every (chip, site) with a cohort gets every period, pairs in sorted order; the sums
    over the cohorts of a pair run in cohort order, as pandas' ``groupby`` sums them
    (:func:`optimizer.lp.grouping.group_sum`).
    """
    T = len(periods)
    keep = cohorts["chips"] > 0
    c = {k: v[keep] for k, v in cohorts.items()}
    pairs = Groups([c["chip"], c["site"]])
    tt = np.arange(T)[None, :]
    t_in, t_out = c["t_in"][:, None], c["t_out"][:, None]
    chips, new = c["chips"][:, None], c["new"][:, None]
    ids = (pairs.ids[:, None] * T + tt).ravel()  # cohort-major, period within
    n = pairs.n * T

    def total(v: np.ndarray) -> np.ndarray:
        return group_sum(ids, v.ravel(), n)

    return object_frame(
        {
            "chip": np.repeat(pairs.key(0), T),
            "site": np.repeat(pairs.key(1), T),
            "period": np.tile(np.asarray(periods, dtype=object), pairs.n),
            "installed_chips": total(np.where(new & (t_in == tt), chips, 0.0)),
            "retired_chips": total(np.where(t_out == tt, chips, 0.0)),
            "fleet_chips": total(np.where((t_in <= tt) & (tt < t_out), chips, 0.0)),
        }
    )


class ChipSiteWork:
    """Fleet and assigned chips per (chip, site, period), on integer group codes.

    The rows are the union of the fleet's and the assignment's (chip, site, period)
    keys in sorted order, as an outer ``merge`` of the fleet with the assignment's
    ``groupby`` sums lists them; sums are pandas' (:mod:`optimizer.lp.grouping`).

    Parameters
    ----------
    fleet : DataFrame
        ``chip, site, period, fleet_chips`` (one row per key).
    assign : DataFrame
        ``chip, site, workload, period, value`` (chips).
    power_factor : Series
        Power factor per workload.

    Attributes
    ----------
    chip, site, period : ndarray of object
        Keys of each row.
    fleet_chips, assigned, pfx : ndarray of float
        Fleet chips (0 where the fleet has no row), assigned chips, and assigned chips
        times their workload's power factor (0 where nothing is assigned).
    """

    def __init__(self, fleet: pd.DataFrame, assign: pd.DataFrame, power_factor: pd.Series) -> None:
        keys = ("chip", "site", "period")
        nf = len(fleet)
        coded = []
        for k in keys:
            (cf, ca), values = sorted_codes([fleet[k], assign[k]])
            coded.append((np.concatenate([cf, ca]), values))
        groups = self.groups = Groups([], coded=coded)
        fid, aid = groups.ids[:nf], groups.ids[nf:]
        self.chip, self.site, self.period = (groups.key(i) for i in range(3))
        self.fleet_chips = np.zeros(groups.n)
        self.fleet_chips[fid] = column_values(fleet, "fleet_chips", dtype=float)
        value = column_values(assign, "value", dtype=float)
        pf = take(
            power_factor.to_numpy(dtype=float), positions(power_factor.index, assign["workload"])
        )
        self.assigned = group_sum(aid, value, groups.n)
        self.pfx = group_sum(aid, value * pf, groups.n)
        self.has_fleet = np.zeros(groups.n, bool)
        self.has_fleet[fid] = True

    def by_site_period(self, values: dict[str, np.ndarray]) -> pd.DataFrame:
        """Return the sums of per-row ``values`` per (site, period) present, sorted."""
        g = Groups([], coded=[self.groups.coded(1), self.groups.coded(2)])
        out = {"site": g.key(0), "period": g.key(1)}
        out.update({name: g.sum(v) for name, v in values.items()})
        return object_frame(out)


def on_site_periods(sp: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (unique site, period keys) on every pair of ``sp``, 0 where absent.

    ``site_periods.merge(frame, how="left").fillna(0.0)``, by an index array (a NaN
    value of ``frame`` becomes 0 too, as with ``fillna``).
    """
    keys = ["site", "period"]
    n = len(sp)
    g = Groups([np.concatenate([column_values(sp, k), column_values(frame, k)]) for k in keys])
    pos = np.full(g.n, -1, dtype=np.int64)
    pos[g.ids[n:]] = np.arange(len(frame))
    where = pos[g.ids[:n]]
    out = {c: column_array(sp, c) for c in sp.columns}  # the pairs' columns, then the values
    for c in frame.columns:
        if c in keys:
            continue
        v = column_values(frame, c, dtype=float)
        got = np.where(where >= 0, v[np.maximum(where, 0)] if len(v) else 0.0, 0.0)
        out[c] = np.where(np.isnan(got), 0.0, got)
    return object_frame(out)


def site_energy(ds: Any, work: ChipSiteWork, site_periods: pd.DataFrame) -> pd.DataFrame:
    """Return loads and energy per (site, period) on every pair of ``site_periods`` (0: none).

    Parameters
    ----------
    ds : Dataset
    work : ChipSiteWork
        Fleet and assigned chips per (chip, site, period).
    site_periods : DataFrame
        ``site, period``: every pair, site-major.

    Returns
    -------
    DataFrame
        ``site, period, it_mwh, facility_mwh, water_m3, fac_mw`` (facility MW of the
        fleet, the grid's load), ``liq_mw`` (IT MW of liquid-cooled chips), ``it_mw``
        (nameplate IT MW of the fleet), ``energy_cost_usd`` and ``carbon_t`` (the
        facility energy at the site's grid price and carbon intensity).
    """
    chips = ds.table("chips").set_index("chip")
    sites = ds.table("sites").set_index("site")
    hours = indexed(ds.table("periods"), "period")["hours"]
    c, s = positions(chips.index, work.chip), positions(sites.index, work.site)
    kw = take(column_values(chips, "it_kw_per_chip", dtype=float), c)
    idle = take(column_values(chips, "idle_power_factor", dtype=float), c)
    liq = take(column_values(chips, "cooling"), c) == "liquid"
    hrs = take(hours.to_numpy(dtype=float), positions(hours.index, work.period))
    it_mwh = hrs / 1e3 * kw * (work.pfx + idle * (work.fleet_chips - work.assigned))

    def by_cooling(air: str, liquid: str) -> np.ndarray:
        return np.where(liq, take(sites[liquid].to_numpy(), s), take(sites[air].to_numpy(), s))

    pue = by_cooling("pue_air", "pue_liquid")
    mw = work.fleet_chips * kw / 1e3
    es = work.by_site_period(
        {
            "it_mwh": it_mwh,
            "facility_mwh": it_mwh * pue,
            "water_m3": it_mwh * by_cooling("wue_l_per_kwh_air", "wue_l_per_kwh_liquid"),
            "fac_mw": mw * pue,
            "liq_mw": np.where(liq, mw, 0.0),
            "it_mw": mw,
        }
    )
    es = on_site_periods(site_periods, es)
    s = positions(sites.index, column_values(es, "site"))
    fac = column_values(es, "facility_mwh")
    es["energy_cost_usd"] = fac * take(column_values(sites, "energy_price_usd_per_mwh"), s)
    es["carbon_t"] = fac * take(column_values(sites, "carbon_t_per_mwh"), s)
    return es
