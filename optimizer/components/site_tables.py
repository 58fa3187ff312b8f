"""Site result tables: build_out (capacity decided, online), site_utilisation, energy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.component import ResultTable
from optimizer.components.construction import retrofit_downtime_mw
from optimizer.components.key_match import gather
from optimizer.components.plan_context import PlanContext
from optimizer.components.power_check import extra_grid_mw
from optimizer.components.power_tables import extra_facility_mw, source_energy
from optimizer.components.table_columns import DUAL, F64, PER_UNIT, PERIOD, SITE, STR, col
from optimizer.lp.frames import column_values, indexed
from optimizer.lp.frames import frame as object_frame
from optimizer.lp.grouping import value_at

__all__ = ["BUILD_OUT", "SITE_UTILISATION", "ENERGY", "TABLES"]


#: Columns of a site limit's block in site_utilisation.
_BLOCK = ("limit", "used", "capacity", "unit", "shadow_price_usd_per_unit")


def _build_out(ctx: PlanContext) -> pd.DataFrame:
    """Build build_out: MW decided, coming online and online capacity per site and period."""
    cap = ctx.capacity.copy(deep=False)
    cap["online_mw"] = cap["online_build_mw"] + cap["pipeline_mw"]
    return cap


def _energy(ctx: PlanContext) -> pd.DataFrame:
    """Build energy per site and period: IT and facility MWh, water, cost and carbon.

    When power is a decision the cost and carbon are the sums over the power sources'
    MWh at each source's price per MWh (:func:`~optimizer.components.power_tables.
    source_energy`): the cost of the energy, without the rent and fixed cost of the
    capacity that power_sources adds (the energy cost read 51,111 where the energy
    term was 50,000, a flexible upgrade's rent counted in).
    """
    es = ctx.site_energy.copy(deep=False)
    if extra_facility_mw(ctx).empty:
        return es
    by = source_energy(ctx).groupby(["site", "period"])[["cost_usd", "carbon_t"]].sum()
    key = pd.MultiIndex.from_frame(es[["site", "period"]])
    es["energy_cost_usd"] = by["cost_usd"].reindex(key).fillna(0.0).to_numpy()
    es["carbon_t"] = by["carbon_t"].reindex(key).fillna(0.0).to_numpy()
    return es


def _site_utilisation(ctx: PlanContext) -> pd.DataFrame:
    """Build site_utilisation: one block per site limit family routed here in the registry.

    ``used`` comes from the site loads and energy (:attr:`PlanContext.site_energy`),
    ``capacity`` from the build-out capacities or the dataset's grid / water limits (the
    family's ``ResultRows.used`` / ``ResultRows.capacity`` name the columns), plus power
    beyond the grant in the grid limit. Each block is every (site, period) pair in
    ``site_periods`` order.
    """
    sp, keys = ctx.site_periods, ["site", "period"]
    sources = {
        "build_out": ctx.table("build_out"),
        "site_grid": ctx.dataset.table("site_grid"),
        "site_water": ctx.dataset.table("site_water"),
    }
    blocks: list[dict[str, Any]] = []
    families = [] if ctx.duals is None else ctx.duals.routed("site_utilisation")
    for family in families:
        result = family.result
        used = gather(ctx.cache, ("su_used", family.name), sp, ctx.site_energy, result.used, keys)
        src = next((n for n, df in sources.items() if result.capacity in df), None)
        if src is None:
            raise KeyError(result.capacity)
        used = np.where(np.isnan(used), 0.0, used)
        if family.name == "site_it_power":  # retrofit downtime is used as the row counts it
            used = used + retrofit_downtime_mw(ctx)
        block: dict[str, Any] = {
            "limit": result.limit,
            "used": used,
            "capacity": gather(
                ctx.cache, ("su_capacity", family.name), sp, sources[src], result.capacity, keys
            ),
            "unit": family.unit,
        }
        assert ctx.duals is not None
        block = ctx.duals.attach(sp, block, family)
        if family.name == "site_grid" and "frame" not in block:
            block[result.dual_column] = block[result.dual_column] + _grid_energy_per_mw(ctx, sp)
        blocks.append(block)
    out = _stack_site_blocks(sp, blocks)
    extra = _extra_grid_mw(ctx, out)
    if extra is not None:
        out["capacity"] = column_values(out, "capacity", dtype=float) + extra
    capv = column_values(out, "capacity", dtype=float)
    out["utilisation"] = np.where(capv > 0, out["used"] / np.where(capv > 0, capv, 1.0), np.nan)
    return out


def _grid_energy_per_mw(ctx: PlanContext, sp: pd.DataFrame) -> np.ndarray:
    """USD per MW of ``grid_mw`` through the grid-energy row of each (site, period) of ``sp``.

    ``grid_mw`` is the right-hand side of two rows where power is a decision:
    ``site_grid`` (MW) and ``grid_energy`` (grid_mw x hours MWh). One more MW of grid
    is worth both rows' duals, the second times the period's hours; a grid row of
    site_utilisation showed the first alone (0 where the energy row bound).
    """
    assert ctx.duals is not None
    d = ctx.duals.site_period("grid_energy")
    if d.empty:
        return np.zeros(len(sp))
    keys = [column_values(sp, "site"), column_values(sp, "period")]
    dual = value_at(keys, [column_values(d, "site"), column_values(d, "period")], d["dual"])
    hours = indexed(ctx.dataset.table("periods"), "period")["hours"]
    h = hours.reindex(sp["period"]).to_numpy(dtype=float)
    return np.nan_to_num(dual) * h


def _extra_grid_mw(ctx: PlanContext, su: pd.DataFrame) -> np.ndarray | None:
    """Power beyond the grant on each grid row of ``su`` (None when power is not a decision).

    Energised upgrades, firm on-site and bridge MW, flexible-interconnection MW and firm
    PPA MW: the same quantity the site_grid row and its check add to the grant
    (:func:`optimizer.components.power_check.extra_grid_mw`), so a grid row's capacity is
    the limit the plan was held to.
    """
    if extra_facility_mw(ctx).empty:
        return None
    extra = extra_grid_mw(ctx)
    grid = (su["limit"] == "grid").to_numpy()
    add = extra.set_index(["site", "period"])["mw"]
    key = pd.MultiIndex.from_frame(su.loc[grid, ["site", "period"]])
    extra_mw = np.zeros(len(su))
    extra_mw[grid] = add.reindex(key).fillna(0.0).to_numpy(dtype=float)
    return extra_mw


def _stack_site_blocks(sp: pd.DataFrame, blocks: list[dict[str, Any]]) -> pd.DataFrame:
    """Blocks of columns on ``sp``'s (site, period) rows, one under the other."""
    if any("frame" in b for b in blocks):
        frames = [b["frame"] if "frame" in b else sp.assign(**b) for b in blocks]
        return pd.concat(frames, ignore_index=True)
    n, k = len(sp), len(blocks)
    rows = np.tile(np.arange(n), k)
    out: dict[str, Any] = {c: sp[c].array.take(rows) for c in sp.columns}
    for c in _BLOCK:
        parts = [np.broadcast_to(np.asarray(b[c]), (n,)) for b in blocks]
        out[c] = np.concatenate(parts) if parts else np.zeros(0)
    return object_frame(out, index=pd.RangeIndex(n * k))


BUILD_OUT = ResultTable(
    "build_out",
    (
        SITE,
        PERIOD,
        col("build_mw", F64, "MW", "New IT capacity decided in the period (online lead later)."),
        col("liquid_build_mw", F64, "MW", "Part of the decided capacity fitted for liquid."),
        col("retrofit_mw", F64, "MW", "Air-cooled IT MW converted to liquid in the period."),
        col("pipeline_mw", F64, "MW", "Pipeline capacity (under way before the horizon) online."),
        col("online_mw", F64, "MW", "IT capacity coming online in the period (pipeline + builds)."),
        col("it_capacity_mw", F64, "MW", "IT capacity online (usable) in the period."),
        col("liquid_capacity_mw", F64, "MW", "Liquid-cooled IT capacity online in the period."),
        col(
            "decided_capacity_mw",
            F64,
            "MW",
            "IT capacity decided so far: initial + whole pipeline + cumulative build_mw.",
        ),
    ),
    build=_build_out,
)

SITE_UTILISATION = ResultTable(
    "site_utilisation",
    (
        SITE,
        PERIOD,
        col("limit", STR, "", "Limit (power | liquid | grid | water)."),
        col("used", F64, "column 'unit'", "Amount of the limit used."),
        col("capacity", F64, "column 'unit'", "Amount available."),
        col("unit", STR, "", "Unit of used and capacity (MW, m3 ...)."),
        col("utilisation", F64, "share", "used / capacity (0-1; NaN when capacity is 0)."),
        col(
            "shadow_price_usd_per_unit",
            F64,
            PER_UNIT,
            DUAL + "per unit of the limit (grid: the MW row's plus the grid-energy row's x "
            "hours, the value of one more MW of grid_mw).",
        ),
    ),
    build=_site_utilisation,
)

ENERGY = ResultTable(
    "energy",
    (
        SITE,
        PERIOD,
        col("it_mwh", F64, "MWh", "IT energy."),
        col("facility_mwh", F64, "MWh", "Facility energy (IT energy x PUE)."),
        col("water_m3", F64, "m3", "Water drawn (IT MWh x WUE)."),
        col("energy_cost_usd", F64, "USD", "Undiscounted cost of facility energy."),
        col("carbon_t", F64, "t CO2", "Emissions of facility energy."),
    ),
    build=_energy,
)

#: The tables of this part of the plan.
TABLES: tuple[ResultTable, ...] = (
    BUILD_OUT,
    SITE_UTILISATION,
    ENERGY,
)
