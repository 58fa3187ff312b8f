"""The supply chain: chip production limited by upstream resources (wafers, CoWoS, HBM).

Family ``supply_resource``: sum_c produce[c,p] * per_chip[c,r] <= capacity[r,p]
(resource unit). No columns or cost terms of its own (it limits ``produce``, a fleet
column).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from optimizer.components.component import Component
from optimizer.components.plan_context import PlanContext
from optimizer.components.records import ConstraintFamily, ResultRows
from optimizer.components.scenario import ScenarioColumns
from optimizer.lp.builder import ModelBuilder
from optimizer.lp.frames import column_values
from optimizer.lp.grouping import Groups, inner_pairs, value_at
from optimizer.lp.join import merge
from optimizer.lp.violations import violations


def define_supply_resource(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Supply resource: sum_c produce[c,p] * per_chip[c,r] <= capacity[r,p]."""
    scenario = columns.scenario
    produce = merge(columns.produce, scenario.bill_of_materials, "c")
    if produce.empty:
        return
    keys = merge(produce[["r", "t"]].drop_duplicates(), scenario.supply, ["r", "t"], how="left")
    keys = keys.sort_values(["r", "t"]).reset_index(drop=True)
    capacity = keys["capacity"].fillna(0.0).to_numpy()
    rows = builder.add_rows("supply_resource", scenario.index, keys, "<=", capacity)
    m = merge(produce, keys[["r", "t"]].assign(row=rows), ["r", "t"])
    builder.add_terms(m["row"], m["col"], column_values(m, "per_chip"))


def check_supply_resource(inputs: PlanContext) -> pd.DataFrame:
    """Resource use of the chips produced <= capacity (no row: capacity 0).

    Use per (resource, period) summed as pandas' ``groupby`` sums it
    (:mod:`optimizer.lp.grouping`).
    """
    ds = inputs.dataset
    bom = ds.table("chip_bill_of_materials")
    produce = inputs.frames["produce"]
    pi, bi = inner_pairs([column_values(produce, "chip")], [column_values(bom, "chip")])
    used = (
        column_values(produce, "value", dtype=float)[pi]
        * column_values(bom, "per_chip", dtype=float)[bi]
    )
    g = Groups([column_values(bom, "resource")[bi], column_values(produce, "period")[pi]])
    resource, period = g.key(0), g.key(1)
    su = ds.table("supply_resources")
    capacity = value_at(
        [resource, period],
        [column_values(su, "resource"), column_values(su, "period")],
        column_values(su, "capacity", dtype=float),
    )

    def keys(bad: np.ndarray) -> np.ndarray:
        out: np.ndarray = resource[bad].astype(object) + "," + period[bad].astype(object)
        return out

    capacity = np.where(np.isnan(capacity), 0.0, capacity)
    return violations("supply_resource", keys, g.sum(used), capacity, "<=", inputs.tolerance)


FAMILIES = (
    ConstraintFamily(
        "supply_resource",
        "resource unit",
        define_supply_resource,
        check_supply_resource,
        "resource {key} in {period} short by {amount} units",
        "units",
        ("r",),
        result=ResultRows("supply_utilisation", "shadow_price_usd_per_unit", ("r", "t")),
        summary_words="supply of {0}",
        limit=True,
    ),
)

COMPONENT = Component("supply", families=FAMILIES)
