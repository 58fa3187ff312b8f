"""Supply family: chip production limited by upstream resources (wafers, CoWoS, HBM)."""

from __future__ import annotations

import pandas as pd

from optimizer.families.base import (
    CheckInputs,
    ConstraintFamily,
    ModelBuilder,
    ResultRows,
    ScenarioColumns,
    violations,
)


def define_supply_resource(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Supply resource: sum_c produce[c,p] * per_chip[c,r] <= capacity[r,p]."""
    scenario = columns.scenario
    produce = columns.produce.merge(scenario.bill_of_materials, on="c")
    if produce.empty:
        return
    keys = produce[["r", "t"]].drop_duplicates().merge(scenario.supply, on=["r", "t"], how="left")
    keys = keys.sort_values(["r", "t"]).reset_index(drop=True)
    capacity = keys["capacity"].fillna(0.0).to_numpy()
    rows = builder.add_rows("supply_resource", scenario.index, keys, "<=", capacity)
    m = produce.merge(keys[["r", "t"]].assign(row=rows), on=["r", "t"])
    builder.add_terms(m["row"], m["col"], m["per_chip"].to_numpy())


def check_supply_resource(inputs: CheckInputs) -> pd.DataFrame:
    """Resource use of the chips produced <= capacity (no row: capacity 0)."""
    ds = inputs.dataset
    bom = ds.table("chip_bill_of_materials")
    u = inputs.frames["produce"].merge(bom, on="chip")
    u = (
        u.assign(used=u["value"] * u["per_chip"])
        .groupby(["resource", "period"], as_index=False)["used"]
        .sum()
    )
    capacity = ds.table("supply_resources").set_index(["resource", "period"])["capacity"]
    capacity = capacity.reindex(pd.MultiIndex.from_frame(u[["resource", "period"]])).fillna(0.0)
    keys = u["resource"] + "," + u["period"]
    return violations("supply_resource", keys, u["used"], capacity, "<=", inputs.tolerance)


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
