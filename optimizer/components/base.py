"""The checker's inputs: decision values of one scenario in domain keys, shared pieces.

The plan-side quantities several independent checks read (site capacity by period,
fleet load per site, the pipeline by period, chip/site work sums).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from capacity.schema import period_index
from optimizer.lp.frames import frame as object_frame
from optimizer.lp.grouping import (
    Groups,
    group_sum,
    positions,
    rows_at,
    sorted_codes,
    take,
)


def _with_demand_regions(frames: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Frames with a ``demand_regions`` column on assign and unmet ("" when absent).

    Frames built by hand (tests, other tools) may predate demand region groups; their
    demand is the one served anywhere.
    """
    out = dict(frames)
    for kind in ("assign", "unmet"):
        f = out.get(kind)
        if f is not None and "demand_regions" not in f:
            out[kind] = f.assign(demand_regions="")
    return out


class CheckInputs:
    """Decision values of one scenario in domain keys, with the pieces several checks share.

    Parameters
    ----------
    dataset : Dataset
        The scenario's dataset.
    frames : dict of DataFrame
        Decision values by kind (:func:`optimizer.plan.results.solution_frames`).
    fleet : DataFrame
        Fleet recomputed from installs and the initial fleet
        (:func:`optimizer.plan.results.fleet_values`).
    tolerance : float
        Relative tolerance of every check.
    """

    def __init__(
        self, dataset: Any, frames: dict[str, pd.DataFrame], fleet: pd.DataFrame, tolerance: float
    ) -> None:
        self.dataset = dataset
        self.frames = _with_demand_regions(frames)
        self.fleet = fleet
        self.tolerance = tolerance
        self.periods = list(dataset.periods)
        self.sites = dataset.table("sites").set_index("site")
        self.chips = dataset.table("chips").set_index("chip")

    @cached_property
    def site_periods(self) -> pd.DataFrame:
        """Every (site, period) pair, site-major."""
        sites = np.asarray(self.sites.index.astype(str), dtype=object)
        periods = np.asarray(self.periods, dtype=object)
        return object_frame(
            {"site": np.repeat(sites, len(periods)), "period": np.tile(periods, len(sites))}
        )

    @cached_property
    def capacity(self) -> pd.DataFrame:
        """Decided and online MW per (site, period) (:func:`site_capacity_table`)."""
        return site_capacity_table(self.dataset, self.frames)

    def _built(self, value: str, capacity: str) -> pd.DataFrame:
        f = self.capacity[["site", "period", value, capacity]]
        return f.rename(columns={value: "value", capacity: "capacity"})

    @cached_property
    def build(self) -> pd.DataFrame:
        """``site, period, value`` (MW decided), ``capacity`` (online IT MW) and ``decided``."""
        f = self._built("build_mw", "it_capacity_mw")
        return f.assign(decided=self.capacity["decided_capacity_mw"].to_numpy())

    @cached_property
    def liquid(self) -> pd.DataFrame:
        """``site, period, value`` (liquid MW decided), ``capacity`` (online liquid MW)."""
        return self._built("liquid_build_mw", "liquid_capacity_mw")

    @cached_property
    def site_load(self) -> pd.DataFrame:
        """Fleet load per (site, period): ``mw`` IT, ``liq_mw`` liquid-only, ``fac_mw`` grid.

        Sums per (site, period) as pandas' ``groupby`` gives them, on every pair (0 where
        no fleet).
        """
        fl, chips, sites = self.fleet, self.chips, self.sites
        c = positions(chips.index, fl["chip"])
        s = positions(sites.index, fl["site"])
        kw = take(chips["it_kw_per_chip"].to_numpy(dtype=float), c)
        liq = take(chips["cooling"].to_numpy(), c) == "liquid"
        pue = np.where(
            liq, take(sites["pue_liquid"].to_numpy(), s), take(sites["pue_air"].to_numpy(), s)
        )
        mw = fl["fleet_chips"].to_numpy(dtype=float) * kw / 1e3
        loads = {"mw": mw, "liq_mw": np.where(liq, mw, 0.0), "fac_mw": mw * pue}
        # the group of each fleet row is its (site, period) pair's row, site-major
        names, periods = pd.Index(sites.index.astype(str)), pd.Index(self.periods)
        si, ti = positions(names, fl["site"]), positions(periods, fl["period"])
        ok = (si >= 0) & (ti >= 0)  # a pair outside the table has no row to add to
        pair = si[ok] * len(periods) + ti[ok]
        out = self.site_periods.copy(deep=False)
        for k, v in loads.items():
            out[k] = group_sum(pair, v[ok], len(out))  # 0.0 where no fleet
        return out

    @cached_property
    def assigned(self) -> pd.DataFrame:
        """Non-zero assignments with the eligibility row (``derate``, ``regions``) merged."""
        asg = self.frames["assign"]
        el = self.dataset.table("eligibility")
        a = asg[asg["value"].abs().to_numpy() > self.tolerance].reset_index(drop=True)
        keys = ["customer", "chip"]
        if any(c in a and c not in keys for c in el.columns):  # the merge names both
            return a.merge(el, on=keys, how="left")
        # the eligibility row of each (customer, chip): a left merge on unique keys
        at = rows_at([a[k] for k in keys], [el[k] for k in keys])
        extra = {c: take(el[c].to_numpy(), at) for c in el.columns if c not in keys}
        return a.assign(**extra)


def _site_values(
    sites: pd.Index, periods: pd.Index, frames: Mapping[str, pd.DataFrame], kind: str
) -> np.ndarray:
    """Decision ``kind`` (site, period, value) summed on every (site, period) pair.

    Returns an array of shape (n_sites, n_periods), site-major as ``sites`` and
    ``periods`` list them; 0 where no row (a group's sum as pandas' ``groupby`` gives it).
    """
    out = np.zeros((len(sites), len(periods)))
    frame = frames.get(kind)
    if frame is None or frame.empty:
        return out
    si = positions(sites, frame["site"])
    ti = positions(periods, frame["period"])
    v = frame["value"].to_numpy(dtype=float)
    ok = (si >= 0) & (ti >= 0)
    flat = si[ok] * len(periods) + ti[ok]
    if len(np.unique(flat)) == len(flat):
        # one row per (site, period): the sum of a group of one, without the groupby
        # (``+ 0.0``: a lone -0.0 sums to 0.0; a missing value sums to 0.0 too)
        vals = v[ok]
        out.ravel()[flat] = np.where(np.isnan(vals), 0.0, vals) + 0.0
        return out
    out.ravel()[:] = group_sum(flat, v[ok], out.size)
    return out


def pipeline_by_period(dataset: Any) -> pd.DataFrame:
    """Pipeline MW per (site, horizon position ``t``): ``it_mw``, ``liquid_mw``.

    Capacity online before the horizon counts from ``t = 0``; capacity online after
    the horizon keeps its position (>= T): it counts towards the campus maximum only.
    """
    try:
        pipe = dataset.table("site_pipeline")
    except KeyError:
        pipe = None
    if pipe is None or pipe.empty:
        return pd.DataFrame({"site": [], "t": [], "it_mw": [], "liquid_mw": []}).astype(
            {"t": np.int64}
        )
    p0 = period_index(dataset.periods[0])
    t = pipe["online_period"].astype(str).map(period_index).to_numpy(dtype=np.int64) - p0
    out = object_frame(
        {
            "site": np.array([str(s) for s in pipe["site"]], dtype=object),
            "t": np.maximum(t, 0),
            "it_mw": pipe["it_mw"].to_numpy(dtype=float),
            "liquid_mw": pipe["liquid_mw"].to_numpy(dtype=float),
        }
    )
    return out.groupby(["site", "t"], as_index=False)[["it_mw", "liquid_mw"]].sum()


def site_capacity_table(dataset: Any, frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Decided and online capacity per (site, period), from decision values (MW).

    ``online_build_mw[s,p] = build[s, p - lead_s]``; ``it_capacity_mw`` = initial IT
    MW + pipeline online by p + cumulative online build; ``liquid_capacity_mw`` =
    initial liquid MW + pipeline liquid online by p + cumulative online liquid build
    + cumulative retrofit; ``decided_capacity_mw`` = initial IT MW + the whole
    pipeline + cumulative build decided (what ``site_max`` limits); ``air_pool_mw`` =
    air-cooled MW online that a retrofit may convert (initial air + pipeline air +
    online air build); ``retrofit_cum_mw`` = cumulative retrofit.

    Returns
    -------
    DataFrame
        One row per (site, period), site-major, period order: ``site, period,
        build_mw, liquid_build_mw, retrofit_mw, online_build_mw,
        online_liquid_build_mw, pipeline_mw, it_capacity_mw, liquid_capacity_mw,
        decided_capacity_mw, air_pool_mw, retrofit_cum_mw``.
    """
    periods = list(dataset.periods)
    n = len(periods)
    sites = dataset.table("sites").set_index("site")
    site_index, period_index_ = pd.Index(sites.index.astype(str)), pd.Index(periods)
    build = _site_values(site_index, period_index_, frames, "build")
    liquid = _site_values(site_index, period_index_, frames, "liquid")
    retrofit = _site_values(site_index, period_index_, frames, "retrofit")
    names = sites.index.astype(str).tolist()
    lead = (
        sites["lead_time_periods"].fillna(0).to_numpy(dtype=np.int64)
        if "lead_time_periods" in sites
        else np.zeros(len(names), dtype=np.int64)
    )
    online_b, online_l = np.zeros_like(build), np.zeros_like(liquid)
    for i, lag in enumerate(lead):
        if lag < n:
            online_b[i, lag:] = build[i, : n - lag]
            online_l[i, lag:] = liquid[i, : n - lag]
    pipe_it, pipe_liq = np.zeros_like(build), np.zeros_like(build)
    pipe_total = np.zeros(len(names))
    pipeline = pipeline_by_period(dataset)
    pos = {s: i for i, s in enumerate(names)}
    for r in pipeline.itertuples():
        i = pos[str(r.site)]
        pipe_total[i] += r.it_mw
        if r.t < n:
            pipe_it[i, r.t] += r.it_mw
            pipe_liq[i, r.t] += r.liquid_mw
    init_it = sites["initial_it_mw"].to_numpy(dtype=float)[:, None]
    init_liq = sites["initial_liquid_mw"].to_numpy(dtype=float)[:, None]
    cum = np.cumsum
    out = object_frame(
        {
            "site": np.repeat(names, n),
            "period": np.tile(periods, len(names)),
            "build_mw": build.ravel(),
            "liquid_build_mw": liquid.ravel(),
            "retrofit_mw": retrofit.ravel(),
            "online_build_mw": online_b.ravel(),
            "online_liquid_build_mw": online_l.ravel(),
            "pipeline_mw": pipe_it.ravel(),
            "it_capacity_mw": (init_it + cum(pipe_it, 1) + cum(online_b, 1)).ravel(),
            "liquid_capacity_mw": (
                init_liq + cum(pipe_liq, 1) + cum(online_l, 1) + cum(retrofit, 1)
            ).ravel(),
            "decided_capacity_mw": (init_it + pipe_total[:, None] + cum(build, 1)).ravel(),
            "air_pool_mw": (
                init_it - init_liq + cum(pipe_it - pipe_liq, 1) + cum(online_b - online_l, 1)
            ).ravel(),
            "retrofit_cum_mw": cum(retrofit, 1).ravel(),
        }
    )
    return out


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
        self.fleet_chips[fid] = fleet["fleet_chips"].to_numpy(dtype=float)
        value = assign["value"].to_numpy(dtype=float)
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
        out = object_frame({"site": g.key(0), "period": g.key(1)})
        for name, v in values.items():
            out[name] = g.sum(v)
        return out


def site_period_keys(frame: pd.DataFrame) -> Callable[[np.ndarray], np.ndarray]:
    """``"site,period"`` key text of the rows a mask selects (for :func:`violations`).

    The text is made only for the rows asked for (the violated ones).
    """
    site, period = frame["site"], frame["period"]

    def keys(bad: np.ndarray) -> np.ndarray:
        out: np.ndarray = (site[bad] + "," + period[bad]).astype(str).to_numpy()
        return out

    return keys
