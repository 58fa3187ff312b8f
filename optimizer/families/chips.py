"""Chip families: inventory (installs never exceed production) and the sale window."""

from __future__ import annotations

import numpy as np
import pandas as pd

from capacity.schema import period_index
from optimizer.families.base import (
    CheckInputs,
    ConstraintFamily,
    ModelBuilder,
    ScenarioColumns,
    cumulative,
    cumulative_by,
    expand,
    violations,
)


def define_chip_inventory(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Chip inventory: sum_{s, p'<=p} install[c,s,p'] - sum_{p'<=p} produce[c,p'] <= 0."""
    scenario, install = columns.scenario, columns.install
    if install.empty:
        return
    n_periods = scenario.n_periods
    first = install.groupby("c", as_index=False)["t"].min()
    keys = expand(first[["c"]], first["t"].to_numpy(), n_periods - first["t"].to_numpy(), "t")
    rows = builder.add_rows("chip_inventory", scenario.index, keys, "<=", np.zeros(len(keys)))
    row_of = keys.assign(row=rows)
    installed = cumulative(install, n_periods).merge(row_of, on=["c", "t"])
    builder.add_terms(installed["row"], installed["col"], 1.0)
    produced = cumulative(columns.produce, n_periods).merge(row_of, on=["c", "t"])
    builder.add_terms(produced["row"], produced["col"], -1.0)


def define_chip_window(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Chip window: produce[c,p] <= 0 outside the sale window (rows only for shared columns)."""
    scenario, produce = columns.scenario, columns.produce
    if produce.empty:
        return
    t_first = scenario.chip_attr(produce["c"].to_numpy(), "t_first")
    t_last = scenario.chip_attr(produce["c"].to_numpy(), "t_last")
    t = produce["t"].to_numpy()
    outside = produce[~((t >= t_first) & (t <= t_last))]
    if outside.empty:
        return
    rows = builder.add_rows("chip_window", scenario.index, outside, "<=", np.zeros(len(outside)))
    builder.add_terms(rows, outside["col"], 1.0)


def check_chip_inventory(inputs: CheckInputs) -> pd.DataFrame:
    """Cumulative installs of each chip <= cumulative production."""
    periods, produce = inputs.periods, inputs.frames["produce"]
    cp = pd.DataFrame({"chip": inputs.chips.index.astype(str)}).merge(
        pd.DataFrame({"period": periods}), how="cross"
    )
    installs = inputs.frames["install"].groupby(["chip", "period"], as_index=False)["value"].sum()
    cp = cp.merge(installs.rename(columns={"value": "ins"}), on=["chip", "period"], how="left")
    cp = cp.merge(
        produce.rename(columns={"value": "prod"}), on=["chip", "period"], how="left"
    ).fillna({"ins": 0.0, "prod": 0.0})
    installed = cumulative_by(cp, ["chip"], "ins", periods)
    produced = cumulative_by(cp, ["chip"], "prod", periods)
    keys = cp["chip"] + "," + cp["period"]
    return violations("chip_inventory", keys, installed, produced, "<=", inputs.tolerance)


def check_chip_window(inputs: CheckInputs) -> pd.DataFrame:
    """No production outside the chip's sale window (first_period..last_period)."""
    produce, chips = inputs.frames["produce"], inputs.chips
    t = (
        produce["period"].map(period_index).to_numpy(dtype=np.int64)
        if len(produce)
        else np.zeros(0, dtype=np.int64)
    )
    t_first = chips["first_period"].reindex(produce["chip"]).astype(str).map(period_index)
    t_last = chips["last_period"].reindex(produce["chip"]).astype(str).map(period_index)
    outside = produce[(t < t_first.to_numpy()) | (t > t_last.to_numpy())]
    keys = outside["chip"] + "," + outside["period"]
    zeros = np.zeros(len(outside))
    return violations("chip_window", keys, outside["value"], zeros, "<=", inputs.tolerance)


FAMILIES = (
    ConstraintFamily(
        "chip_inventory",
        "chips",
        define_chip_inventory,
        check_chip_inventory,
        "chip {key} production up to {period} short by {amount} chips",
        "chips",
        ("c",),
    ),
    ConstraintFamily(
        "chip_window",
        "chips",
        define_chip_window,
        check_chip_window,
        "chip {key} produced outside its sale window in {period}: {amount} chips",
        "chips",
        ("c",),
    ),
)
