"""Speed to power: the flexible-interconnection checks, the inference SLA family, results.

The maths of flexible interconnection is in :mod:`optimizer.components.power_flex`,
of bridge power in :mod:`optimizer.components.power_bridge`, of the equipment order
books in :mod:`optimizer.components.power_orders`. This module holds what the checker
recomputes from the decision frames (``flexible_upgrade``, ``onsite_build``,
``onsite_retire``: ``site, source, period, value``), the ``flexible_inference_sla``
family and the result tables ``flexible_interconnection`` and ``bridge_power``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.component import ColumnKind, Component, CostTerm, ResultTable
from optimizer.components.power import site_supply
from optimizer.components.power_bridge import online_mw, retired_mw
from optimizer.components.power_check import extra_grid_mw
from optimizer.components.power_flex import _online, flexible_mw
from optimizer.components.records import ConstraintFamily
from optimizer.components.scenario import ScenarioColumns
from optimizer.components.table_columns import F64, PERIOD, SITE, STR, col
from optimizer.lp.builder import ModelBuilder
from optimizer.lp.frames import column_values
from optimizer.lp.join import merge
from optimizer.lp.violations import violations

__all__ = ["COMPONENT", "campus_note"]

_PUE = ("pue_air", "pue_liquid")


def _inference_codes(names: tuple[str, ...]) -> list[int]:
    return [i for i, w in enumerate(names) if w == "inference"]


def define_flexible_inference_sla(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Inference SLA: sla x inference facility MW[s,p] <= firm supply MW[s,p] (window periods)."""
    power = columns.power
    flex = power.get("flexible_upgrade") if power else None
    if flex is None or flex.empty:
        return
    scenario = columns.scenario
    on = _online(flex, scenario.n_periods)
    keys = on[column_values(on, "window")].groupby(["s", "t"], as_index=False)["sla"].max()
    work = columns.site_work
    work = work[work["w"].isin(_inference_codes(scenario.workload_names))]
    if keys.empty or work.empty:
        return
    const, terms = site_supply(columns, firm=True)
    keys = merge(merge(keys, scenario.grid, ["s", "t"], how="left"), const, ["s", "t"], how="left")
    keys = keys.fillna({"mw": 0.0}).sort_values(["s", "t"]).reset_index(drop=True)
    rhs = keys["grid_mw"].fillna(np.inf).to_numpy(dtype=float) + column_values(keys, "mw")
    keys, rhs = keys[np.isfinite(rhs)], rhs[np.isfinite(rhs)]
    rows = builder.add_rows("flexible_inference_sla", scenario.index, keys, "<=", rhs)
    row_of = keys[["s", "t", "sla"]].assign(row=rows)
    w = merge(work, row_of, ["s", "t"])
    c, s = column_values(w, "c"), column_values(w, "s")
    mw = scenario.it_mw_per_chip(c) * scenario.cooling_split(c, s, *_PUE)
    builder.add_terms(w["row"], w["col"], mw * column_values(w, "sla"))
    sup = merge(terms, row_of, ["s", "t"])
    builder.add_terms(sup["row"], sup["col"], -column_values(sup, "mw"))


# ----------------------------------------------------------------------------- checker side
def _inference_facility_mw(inputs: Any) -> pd.DataFrame:
    """Inference chips at work x it_kw / 1000 x PUE per (site, period)."""
    a = inputs.frames["assign"]
    a = a[a["workload"] == "inference"]
    chips, sites = inputs.chips, inputs.sites
    kw = chips["it_kw_per_chip"].reindex(a["chip"]).to_numpy(dtype=float)
    liq = (chips["cooling"].reindex(a["chip"]) == "liquid").to_numpy()
    pue = np.where(
        liq, sites["pue_liquid"].reindex(a["site"]), sites["pue_air"].reindex(a["site"])
    ).astype(float)
    a = a.assign(mw=column_values(a, "value", dtype=float) * kw / 1e3 * pue)
    return a.groupby(["site", "period"], as_index=False)["mw"].sum()


def check_flexible_inference_sla(inputs: Any) -> pd.DataFrame:
    """SLA share x inference facility MW <= grid + firm extras (window flexible MW left out)."""
    fm = flexible_mw(inputs)
    if fm.empty or not fm["window"].any():
        return violations("flexible_inference_sla", pd.Series([], dtype=str), [], [], "<=", 0.0)
    win = fm[fm["window"].astype(bool)]
    keys = win.groupby(["site", "period"], as_index=False).agg(
        sla=("sla", "max"), window_mw=("mw", "sum")
    )
    grid = inputs.dataset.table("site_grid")[["site", "period", "grid_mw"]]
    extra = extra_grid_mw(inputs).rename(columns={"mw": "extra_mw"})
    m = merge(keys, grid, ["site", "period"], how="left")
    m = merge(m, extra, ["site", "period"], how="left")
    m = merge(m, _inference_facility_mw(inputs), ["site", "period"], how="left")
    m = m.fillna({"extra_mw": 0.0, "mw": 0.0})
    firm = m["grid_mw"] + m["extra_mw"] - m["window_mw"]
    return violations(
        "flexible_inference_sla",
        m["site"].astype(str) + "," + m["period"].astype(str),
        m["sla"] * m["mw"],
        firm,
        "<=",
        inputs.tolerance,
    )


# ----------------------------------------------------------------------------- result tables
def _flexible_table(ctx: Any) -> pd.DataFrame:
    """Build flexible_interconnection: each flexible request with its gain and its cost."""
    fm = flexible_mw(ctx)
    cols = [c.name for c in FLEXIBLE.columns]
    if fm.empty:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in cols})
    g = fm.groupby(["site", "source", "decision_period"], as_index=False).agg(
        mw=("mw", "max"),
        curtailed_mwh=("curtailed_mwh", "sum"),
        checkpoint=("checkpoint_cost_usd_per_mwh", "max"),
        window_periods=("window", "sum"),
        online_period=("period", "min"),
    )
    g["quarters_gained"] = g["window_periods"].astype(float)
    g["curtailment_cost_usd"] = g["curtailed_mwh"] * g["checkpoint"]
    g["option"] = g["source"].str.split(":", n=1).str[1]
    price = ctx.dataset.table("grid_upgrades")[["site", "option", "cost_usd_per_mw"]]
    price = price.rename(columns={"cost_usd_per_mw": "capex_usd_per_mw"})
    g = merge(g, price, ["site", "option"], how="left")
    return g[cols].reset_index(drop=True)


def _bridge_table(ctx: Any) -> pd.DataFrame:
    """Build bridge_power: bridge MW built, retired and standing per site, source, period."""
    ds = ctx.dataset
    cols = [c.name for c in BRIDGE.columns]
    g = ds.table("onsite_generation")
    g = g[g["bridge"].astype(str) == "yes"].copy()
    if g.empty:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in cols})
    g["source"] = "onsite:" + g["technology"].astype(str)
    on = online_mw(ctx, "onsite_build", g)
    ret = retired_mw(ctx)
    m = merge(on, ret, ["site", "source", "period"], how="left").fillna({"retired_mw": 0.0})
    m = merge(m, g[["site", "source", "initial_mw", "storage_hours"]], ["site", "source"])
    m["built_mw"] = m["mw"] + m["initial_mw"]
    m["standing_mw"] = m["built_mw"] - m["retired_mw"]
    m = m[(m["built_mw"].abs() > 1e-6)]
    m["technology"] = m["source"].str.split(":", n=1).str[1]
    m = m.sort_values(["site", "technology", "t"])
    return m[cols].reset_index(drop=True)


def _grid_bound(ctx: Any) -> pd.DataFrame:
    """``site, period`` where the grid interconnect (``site_grid``) binds (dual < 0)."""
    empty = pd.DataFrame(
        {"site": pd.Series([], dtype=object), "period": pd.Series([], dtype=object)}
    )
    if ctx.duals is None:
        return empty
    fam = next(f for f in ctx.duals.routed("site_utilisation") if f.name == "site_grid")
    assert fam.result is not None
    d = ctx.duals.family(fam)
    if d.empty:
        return empty
    return d[d[fam.result.dual_column].to_numpy(dtype=float) < -1e-6][["site", "period"]]


def campus_note(row: Any) -> str:
    """One sentence on how a campus gets power: grid-bound quarters, bridge, flexible MW."""
    parts = []
    if row.grid_bound_quarters:
        n = row.grid_bound_quarters
        parts.append(  # "binds in 1 quarters" read so
            f"grid interconnect binds in {n:g} quarter{'' if n == 1 else 's'} "
            f"from {row.first_grid_bound_period}"
        )
    if row.bridge_mw > 1e-6:
        parts.append(f"bridged with up to {row.bridge_mw:,.0f} MW of bridge power")
    elif not row.bridge_options:
        parts.append("no bridge power option at this campus (no bridge row in onsite_generation)")
    elif row.grid_bound_quarters:
        parts.append(f"bridge options ({row.bridge_options}) cost more than what they would serve")
    if row.flexible_mw > 1e-6:
        parts.append(
            f"flexible interconnection: {row.flexible_mw:,.0f} MW up to "
            f"{row.quarters_gained:g} quarters earlier, {row.curtailed_mwh:,.0f} MWh curtailed"
        )
    return "; ".join(parts)


def _bridge_options(ds: Any) -> dict[str, str]:
    """Bridge technologies each site may place, sorted and joined by ", "."""
    g = ds.table("onsite_generation")
    g = g[g["bridge"].astype(str) == "yes"]
    options = g.groupby("site")["technology"].agg(lambda x: ", ".join(sorted(map(str, x))))
    return {str(k): str(v) for k, v in options.items()}


def _campus_table(ctx: Any) -> pd.DataFrame:
    """Build speed_to_power: per campus, grid-bound quarters, bridge and flexible MW, a note.

    The bridge options read the dataset only: kept while ``onsite_generation`` is the
    same table (:meth:`PlanContext.reuse`). Per site the rows are picked on numpy arrays.
    """
    ds = ctx.dataset
    cols = [c.name for c in CAMPUS.columns]
    onsite = ds.table("onsite_generation")
    options = ctx.reuse(("bridge_options",), (onsite,), lambda: _bridge_options(ds))
    bound = _grid_bound(ctx)
    br, fx = ctx.table("bridge_power"), ctx.table("flexible_interconnection")  # built once
    b_site, b_period = (
        column_values(bound, "site", dtype=object),
        column_values(bound, "period", dtype=object),
    )
    r_site, r_mw = (
        column_values(br, "site", dtype=object),
        column_values(br, "standing_mw", dtype=float),
    )
    f_site = column_values(fx, "site", dtype=object)
    f_mw, f_gain, f_curt = (
        fx[c].to_numpy(dtype=float) for c in ("mw", "quarters_gained", "curtailed_mwh")
    )
    sites = sorted(set(b_site) | set(r_site) | set(f_site))
    pos = {p: i for i, p in enumerate(ctx.periods)}
    rows = []
    for site in sites:
        b = b_period[b_site == site].tolist()
        at_r, at_f = r_site == site, f_site == site
        rows.append(
            {
                "site": site,
                "grid_bound_quarters": float(len(b)),
                "first_grid_bound_period": min(b, key=pos.__getitem__) if b else "",
                "bridge_options": options.get(site, ""),
                "bridge_mw": float(np.nanmax(r_mw[at_r])) if at_r.any() else 0.0,
                "flexible_mw": float(np.nansum(f_mw[at_f])),
                "quarters_gained": float(np.nanmax(f_gain[at_f])) if at_f.any() else 0.0,
                "curtailed_mwh": float(np.nansum(f_curt[at_f])),
            }
        )
    out = pd.DataFrame(rows, columns=cols[:-1])
    if out.empty:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in cols})
    out["note"] = [campus_note(r) for r in out.itertuples()]
    return out[cols]


FLEXIBLE = ResultTable(
    "flexible_interconnection",
    (
        SITE,
        col("option", STR, "", "Grid upgrade option taken under the flexible offer."),
        col("decision_period", STR, "quarter", "Period the flexible MW were requested."),
        col("online_period", STR, "quarter", "First period the MW are energised (curtailable)."),
        col("mw", F64, "MW", "MW requested under the flexible offer."),
        col(
            "capex_usd_per_mw",
            F64,
            "USD/MW",
            "The upgrade option's cost per MW (grid_upgrades), paid when requested.",
        ),
        col("quarters_gained", F64, "quarters", "Quarters energised before the normal lead."),
        col("curtailed_mwh", F64, "MWh", "Energy curtailed over the window: c x MW x hours."),
        col("curtailment_cost_usd", F64, "USD", "Checkpoint cost of the curtailed MWh."),
    ),
    build=_flexible_table,
)

BRIDGE = ResultTable(
    "bridge_power",
    (
        SITE,
        col("technology", STR, "", "Bridge technology (fuel cell, mobile turbine, battery)."),
        PERIOD,
        col("built_mw", F64, "MW", "Bridge MW built and online by the period (with initial)."),
        col("retired_mw", F64, "MW", "Bridge MW retired up to the period (salvaged)."),
        col("standing_mw", F64, "MW", "Bridge MW standing in the period."),
        col("storage_hours", F64, "hours", "Battery duration (0 for a generator)."),
    ),
    build=_bridge_table,
)

CAMPUS = ResultTable(
    "speed_to_power",
    (
        SITE,
        col("grid_bound_quarters", F64, "quarters", "Quarters the grid interconnect binds."),
        col("first_grid_bound_period", STR, "quarter", 'First quarter it binds ("" if never).'),
        col("bridge_options", STR, "", 'Bridge technologies the campus may place ("": none).'),
        col("bridge_mw", F64, "MW", "Most bridge MW standing in any quarter."),
        col("flexible_mw", F64, "MW", "MW taken under flexible interconnection offers."),
        col("quarters_gained", F64, "quarters", "Most quarters a flexible request gained."),
        col("curtailed_mwh", F64, "MWh", "Energy curtailed under flexible interconnection."),
        col("note", STR, "", "How the campus gets power, in words."),
    ),
    build=_campus_table,
)

FAMILIES = (
    ConstraintFamily(
        "flexible_inference_sla",
        "MW",
        define_flexible_inference_sla,
        check_flexible_inference_sla,
        "site {key} firm power in {period} short of the inference SLA by {amount} MW "
        "(flexible MW may be curtailed; inference may not)",
        "MW",
        ("s",),
        summary_words="inference SLA on firm power at {0}",
        limit=True,
    ),
)

COMPONENT = Component(
    "speed_to_power",
    columns=(
        ColumnKind(
            "flexible_upgrade",
            "s/o/t",
            "MW",
            "interconnection requested in period t under a flexible (curtailable) offer",
        ),
    ),
    families=FAMILIES,
    costs=(
        CostTerm(
            "curtailment",
            "opex",
            None,
            "checkpoint_cost_usd_per_mwh x curtailed MWh of flexible interconnection "
            "(priced by the power families)",
        ),
    ),
    tables=(CAMPUS, FLEXIBLE, BRIDGE),
)
