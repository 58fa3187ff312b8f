"""Supply-chain result tables: production (chips made, in inventory), supply_utilisation."""

from __future__ import annotations

import numpy as np
import pandas as pd

from optimizer.components.component import ResultTable
from optimizer.components.plan_context import PlanContext
from optimizer.components.table_columns import CHIP, DUAL, F64, PERIOD, STR, col
from optimizer.lp.frames import column_values
from optimizer.lp.frames import frame as object_frame
from optimizer.lp.grouping import (
    Groups,
    group_cumsum,
    group_sum,
    inner_pairs,
    sums_at,
    value_at,
)

__all__ = ["PRODUCTION", "SUPPLY_UTILISATION", "TABLES"]


def _production(ctx: PlanContext) -> pd.DataFrame:
    """Build production: chips produced, installed and in inventory per chip and period.

    Every chip that is produced or installed gets every period (chips in sorted order);
    inventory = opening + running produced - running installed, the running sums as
    pandas' ``groupby(...).cumsum()`` computes them.
    """
    fr, periods = ctx.frames, ctx.periods
    T = len(periods)
    produce, install = fr["produce"], fr["install"]
    chips = Groups(
        [np.concatenate([column_values(produce, "chip"), column_values(install, "chip")])]
    )
    names = chips.key(0)
    pos = pd.Index(periods)

    def per_chip_period(frame: pd.DataFrame, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = pos.get_indexer(column_values(frame, "period"))
        return ids[t >= 0] * T + t[t >= 0], column_values(frame, "value", dtype=float)[t >= 0]

    ids, v = per_chip_period(install, chips.ids[len(produce) :])
    installed = group_sum(ids, v, chips.n * T)
    ids, v = per_chip_period(produce, chips.ids[: len(produce)])
    produced = value_at([np.arange(chips.n * T)], [ids], v)
    produced = np.where(np.isnan(produced), 0.0, produced)
    pr = object_frame(
        {
            "chip": np.repeat(names, T),
            "period": np.tile(np.asarray(periods, dtype=object), chips.n),
            "produced_chips": produced,
            "installed_chips": installed,
        }
    )
    opening = (
        ctx.chips["opening_inventory_chips"].reindex(pr["chip"]).fillna(0.0).to_numpy(dtype=float)
        if "opening_inventory_chips" in ctx.chips
        else 0.0
    )
    by_chip = np.repeat(np.arange(chips.n), T)
    pr["inventory_chips"] = (
        opening + group_cumsum(by_chip, produced) - group_cumsum(by_chip, installed)
    )
    return pr


def _supply_utilisation(ctx: PlanContext) -> pd.DataFrame:
    """Build supply_utilisation: resource use, capacity, utilisation and shadow price.

    Use per (resource, period) summed as pandas' ``groupby`` sums it
    (:mod:`optimizer.lp.grouping`).
    """
    bom = ctx.dataset.table("chip_bill_of_materials")
    su = ctx.dataset.table("supply_resources")[["resource", "period", "capacity", "unit"]]
    su = su.reset_index(drop=True)
    produce = ctx.frames["produce"]
    pi, bi = inner_pairs([column_values(produce, "chip")], [column_values(bom, "chip")])
    used = (
        column_values(produce, "value", dtype=float)[pi]
        * column_values(bom, "per_chip", dtype=float)[bi]
    )
    su["used"] = sums_at(
        [column_values(su, "resource"), column_values(su, "period")],
        [column_values(bom, "resource")[bi], column_values(produce, "period")[pi]],
        used,
    )
    su["utilisation"] = np.where(
        su["capacity"] > 0, su["used"] / su["capacity"].where(su["capacity"] > 0, 1.0), np.nan
    )
    return ctx.with_duals(su, "supply_utilisation")


PRODUCTION = ResultTable(
    "production",
    (
        CHIP,
        PERIOD,
        col("produced_chips", F64, "chips", "Accelerators produced in the period."),
        col("installed_chips", F64, "chips", "Accelerators installed in the period."),
        col("inventory_chips", F64, "chips", "Produced but not yet installed, end of period."),
    ),
    build=_production,
)

SUPPLY_UTILISATION = ResultTable(
    "supply_utilisation",
    (
        col("resource", STR, "", "Supply resource ID."),
        PERIOD,
        col("unit", STR, "", "The resource's unit (wafers, stacks), from supply_resources."),
        col("used", F64, "resource unit", "Units of the resource consumed."),
        col("capacity", F64, "resource unit", "Units of the resource available."),
        col("utilisation", F64, "share", "used / capacity (0-1; NaN when capacity is 0)."),
        col(
            "shadow_price_usd_per_unit",
            F64,
            "USD per resource unit",
            DUAL + "per unit of the resource.",
        ),
    ),
    build=_supply_utilisation,
)

#: The tables of this part of the plan.
TABLES: tuple[ResultTable, ...] = (
    PRODUCTION,
    SUPPLY_UTILISATION,
)
