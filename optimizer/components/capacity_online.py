"""Capacity online per site and period: the pipeline, builds after their lead time, retrofits.

The one plan-side computation of decided and online MW, shared by the ``build_out``
result table and the site checks (:class:`optimizer.components.plan_context.PlanContext`
``capacity``), and the pipeline per period the model's rows use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from capacity.schema import period_index
from optimizer.lp.frames import column_values
from optimizer.lp.frames import frame as object_frame
from optimizer.lp.grouping import group_sum, positions

__all__ = ["pipeline_by_period", "site_capacity_table"]


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
    v = column_values(frame, "value", dtype=float)
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
            "it_mw": column_values(pipe, "it_mw", dtype=float),
            "liquid_mw": column_values(pipe, "liquid_mw", dtype=float),
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
    init_it = column_values(sites, "initial_it_mw", dtype=float)[:, None]
    init_liq = column_values(sites, "initial_liquid_mw", dtype=float)[:, None]
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
