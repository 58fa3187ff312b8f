"""Construction timing and air-to-liquid retrofit.

Maths (``L_s`` = ``sites.lead_time_periods``, ``pipe[s,p]`` = pipeline IT MW coming
online in p, ``pipe_liq`` its liquid part, ``retrofit[s,p]`` air MW converted to
liquid in p):

* online IT capacity ``it_capacity[s,p] = initial_it_mw_s + sum_{p'<=p} pipe[s,p']
  + sum_{p' <= p - L_s} build[s,p']`` (a build decided in p is usable from p + L_s;
  decisions that would come online after the horizon get no column);
* online liquid capacity ``liquid_capacity[s,p] = initial_liquid_mw_s + sum_{p'<=p}
  pipe_liq[s,p'] + sum_{p' <= p - L_s} liquid[s,p'] + sum_{p'<=p} retrofit[s,p']``;
* ``site_max`` limits what is *decided*: ``initial + sum_p pipe + sum_{p'<=p} build
  <= max_it_mw`` (the pipeline counts from the start, under construction or not);
* ``site_retrofit_rate``: ``retrofit[s,p] <= retrofit_mw_per_period_s``            (MW)
* ``site_retrofit_pool``: ``sum_{p'<=p} retrofit[s,p'] <= initial air MW_s + sum_{p'<=p}
  (pipe - pipe_liq)[s,p'] + sum_{p' <= p - L_s} (build - liquid)[s,p']``            (MW):
  only air-cooled halls already online can be converted;
* downtime: in its retrofit period a converted MW is out of service for
  ``retrofit_downtime_share_s`` of the quarter, so ``site_it_power`` counts
  ``retrofit_downtime_share_s * retrofit[s,p]`` as used.

Cost: a retrofit costs ``retrofit_capex_usd_per_mw`` charged like a build (straight-line
rent over ``FACILITY_LIFE_PERIODS`` inside the horizon) in the objective and in full
in its period in the cash view. The pipeline's capex is sunk (decided before the
horizon).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from optimizer.components.plan_context import PlanContext, site_period_keys
from optimizer.components.records import ConstraintFamily
from optimizer.components.scenario import ScenarioColumns, ScenarioData
from optimizer.components.site_built import running_terms
from optimizer.lp.builder import ModelBuilder, cumulative, expand
from optimizer.lp.frames import column_values
from optimizer.lp.grouping import reindexed
from optimizer.lp.join import merge
from optimizer.lp.violations import violations


def pipeline_online(scenario: ScenarioData, keys: pd.DataFrame, column: str) -> np.ndarray:
    """Pipeline MW (``it_mw`` or ``liquid_mw``) online by each (s, t) of ``keys``."""
    pipe = scenario.pipeline
    if pipe.empty or keys.empty:
        return np.zeros(len(keys))
    pipe = pipe[pipe["t"] < scenario.n_periods]
    start = column_values(pipe, "t")
    grid = expand(pipe[["s", column]], start, scenario.n_periods - start, "t")
    total = grid.groupby(["s", "t"])[column].sum()
    index = pd.MultiIndex.from_frame(keys[["s", "t"]].astype(np.int64))
    return total.reindex(index).fillna(0.0).to_numpy(dtype=float)


def pipeline_total(scenario: ScenarioData, s: np.ndarray) -> np.ndarray:
    """Whole pipeline IT MW per site code (whatever its online period)."""
    total = scenario.pipeline.groupby("s")["it_mw"].sum()
    return total.reindex(s).fillna(0.0).to_numpy(dtype=float)


def retrofit_downtime_mw(ctx: PlanContext) -> np.ndarray:
    """Return the IT MW out of service for retrofits per ``ctx.site_load`` row, shape (n,).

    ``retrofit_downtime_share_s * retrofit[s,p]``: what ``site_it_power`` counts as used
    beside the fleet's IT load (0 at a site without the column or a retrofit).
    """
    load, cap = ctx.site_load, ctx.capacity
    if "retrofit_downtime_share" not in ctx.sites or not len(cap):
        return np.zeros(len(load))
    share = reindexed(ctx.sites["retrofit_downtime_share"], cap["site"], float)
    down = column_values(cap, "retrofit_mw", dtype=float) * share
    same = len(cap) == len(load) and all(
        bool((column_values(cap, c) == column_values(load, c)).all()) for c in ("site", "period")
    )
    if same:
        return np.asarray(down, dtype=float)
    by = pd.Series(down, index=pd.MultiIndex.from_frame(cap[["site", "period"]]))
    on = pd.MultiIndex.from_frame(load[["site", "period"]])
    return by.reindex(on).fillna(0.0).to_numpy(dtype=float)


def downtime_terms(columns: ScenarioColumns, row_of: pd.DataFrame) -> pd.DataFrame:
    """Retrofit columns merged on site_it_power rows (s, t, row) with their downtime share."""
    retrofit = columns.retrofit
    if retrofit.empty:
        return retrofit.assign(row=[], share=[])
    share = columns.scenario.site_attr(column_values(retrofit, "s"), "retrofit_downtime_share")
    m = merge(retrofit.assign(share=np.asarray(share, dtype=float)), row_of, ["s", "t"])
    return m[m["share"] > 0]


# ----------------------------------------------------------------------------- define
def define_site_retrofit_rate(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Retrofit rate: retrofit[s,p] <= retrofit_mw_per_period_s."""
    scenario, retrofit = columns.scenario, columns.retrofit
    if retrofit.empty:
        return
    limit = scenario.site_attr(column_values(retrofit, "s"), "retrofit_mw_per_period")
    rows = builder.add_rows("site_retrofit_rate", scenario.index, retrofit, "<=", limit)
    builder.add_terms(rows, retrofit["col"], 1.0)


def define_site_retrofit_pool(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Retrofit pool: cum retrofit[s,p] - cum online (build - liquid) <= initial air + pipe air."""
    scenario, retrofit = columns.scenario, columns.retrofit
    if retrofit.empty:
        return
    keys = retrofit[["s", "t"]]
    s = column_values(keys, "s")
    initial_air = scenario.site_attr(s, "initial_it_mw") - scenario.site_attr(
        s, "initial_liquid_mw"
    )
    pipe_air = pipeline_online(scenario, keys, "it_mw") - pipeline_online(
        scenario, keys, "liquid_mw"
    )
    rows = builder.add_rows(
        "site_retrofit_pool", scenario.index, keys, "<=", initial_air.astype(float) + pipe_air
    )
    row_of = keys.assign(row=rows)
    done = merge(cumulative(retrofit, scenario.n_periods), row_of, ["s", "t"])
    builder.add_terms(done["row"], done["col"], 1.0)
    for frame, totals, sign in (
        (columns.build, columns.built, -1.0),
        (columns.liquid, columns.liquid_built, 1.0),
    ):
        online = running_terms(frame, totals, row_of, scenario, online=True)
        builder.add_terms(online["row"], online["col"], sign)


# ------------------------------------------------------------------------------ check
def check_site_retrofit_rate(inputs: PlanContext) -> pd.DataFrame:
    """Air MW converted per period <= retrofit_mw_per_period."""
    cap = inputs.capacity
    limit = (
        reindexed(inputs.sites["retrofit_mw_per_period"], cap["site"], float)
        if "retrofit_mw_per_period" in inputs.sites
        else np.zeros(len(cap))
    )
    return violations(
        "site_retrofit_rate",
        site_period_keys(cap),
        cap["retrofit_mw"],
        limit,
        "<=",
        inputs.tolerance,
    )


def check_site_retrofit_pool(inputs: PlanContext) -> pd.DataFrame:
    """Cumulative retrofit <= air-cooled MW online (initial air + pipeline air + air builds)."""
    cap = inputs.capacity
    return violations(
        "site_retrofit_pool",
        site_period_keys(cap),
        cap["retrofit_cum_mw"],
        cap["air_pool_mw"],
        "<=",
        inputs.tolerance,
    )


FAMILIES = (
    ConstraintFamily(
        "site_retrofit_rate",
        "MW",
        define_site_retrofit_rate,
        check_site_retrofit_rate,
        "site {key} air-to-liquid retrofit rate in {period} short by {amount} MW",
        "MW",
        ("s",),
        summary_words="air-to-liquid retrofit rate at {0}",
        limit=True,
    ),
    ConstraintFamily(
        "site_retrofit_pool",
        "MW",
        define_site_retrofit_pool,
        check_site_retrofit_pool,
        "site {key} air-cooled MW left to retrofit by {period} short by {amount} MW",
        "MW",
        ("s",),
        summary_words="air-cooled MW left to retrofit at {0}",
        limit=True,
    ),
)


# ------------------------------------------------------------------------- cost terms
#: Assumed facility life in quarters (15 years) for annualising build capex. Data-center
#: shells, power and cooling plant are commonly depreciated over 15-20 years (e.g.
#: Equinix 10-40-year building lives, hyperscaler 15-year facility assumptions);
#: 15 years is an assumption at the conservative end.
FACILITY_LIFE_PERIODS = 60


def _rent_periods(frame: pd.DataFrame, scenario: ScenarioData) -> pd.DataFrame:
    """Pairs (s, col, t): every period from the decision to the horizon end (at most a life)."""
    count = np.minimum(FACILITY_LIFE_PERIODS, scenario.n_periods - column_values(frame, "t"))
    return expand(frame[["s", "col"]], column_values(frame, "t"), count, "t")


def price_build_capex(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """build_capex: build_capex_usd_per_mw / FACILITY_LIFE_PERIODS per MW built, per period."""
    scenario, build = columns.scenario, columns.build
    if len(build):
        e = _rent_periods(build, scenario)
        capex = scenario.site_attr(column_values(e, "s"), "build_capex_usd_per_mw")
        rent = capex / FACILITY_LIFE_PERIODS
        builder.add_cost(scenario.index, "build_capex", e["col"], e["t"], rent.astype(float))


def price_retrofit_capex(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """retrofit_capex: retrofit_capex_usd_per_mw / FACILITY_LIFE_PERIODS per MW, per period."""
    scenario, retrofit = columns.scenario, columns.retrofit
    if len(retrofit):
        e = _rent_periods(retrofit, scenario)
        capex = scenario.site_attr(column_values(e, "s"), "retrofit_capex_usd_per_mw")
        rent = capex.astype(float) / FACILITY_LIFE_PERIODS
        builder.add_cost(scenario.index, "retrofit_capex", e["col"], e["t"], rent)
