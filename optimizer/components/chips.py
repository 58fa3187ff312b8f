"""Chip families: inventory (installs never exceed production) and the sale window."""

from __future__ import annotations

import numpy as np
import pandas as pd

from capacity.schema import period_index
from optimizer.components.plan_context import PlanContext
from optimizer.components.records import ConstraintFamily
from optimizer.components.scenario import ScenarioColumns
from optimizer.lp.builder import ModelBuilder, cumulative, expand
from optimizer.lp.frames import column_values
from optimizer.lp.grouping import (
    by_key,
    group_cumsum,
    group_sum,
    positions,
    reindexed,
    value_at,
)
from optimizer.lp.join import merge
from optimizer.lp.violations import flagged, violations

#: Running-sum terms (installs x later periods) above which chip inventory reads
#: installed-to-date columns (:func:`define_chip_installed`). Below it the rows keep
#: their running sums: the dual simplex solves those small LPs in a second or two
#: either way, and the default plan keeps its vertex. The default data have about
#: 20,000 such terms; the generated large size 196,000 (40% of its matrix), where
#: the recursion cut the interior point method's CPU time (``benchmarks/RESULTS.md``).
RECURSIVE_INVENTORY_MIN_TERMS = 50_000


def _no_installed() -> pd.DataFrame:
    return pd.DataFrame({k: pd.Series([], dtype=np.int64) for k in ("c", "t", "col")})


def define_chip_installed(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Installed-to-date columns: installed[c,p] - installed[c,p-1] - sum_s install[c,s,p] == 0.

    ``installed[c,p]`` (chips) is every install of chip c at any site in periods up to
    p, from the chip's first install period to the end of the horizon. The recursion
    holds each install in one row; :func:`define_chip_inventory` then reads one column
    per period instead of every earlier install, which keeps the chip inventory rows
    sparse. Built only when the running sums would hold more than
    :data:`RECURSIVE_INVENTORY_MIN_TERMS` terms. Sets ``columns.installed`` (c, t,
    col; empty when not built).
    """
    scenario, install = columns.scenario, columns.install
    columns.installed = _no_installed()
    n_periods = scenario.n_periods
    if int((n_periods - column_values(install, "t")).sum()) <= RECURSIVE_INVENTORY_MIN_TERMS:
        return
    first = install.groupby("c", as_index=False)["t"].min()
    keys = expand(
        first[["c"]], column_values(first, "t"), n_periods - column_values(first, "t"), "t"
    )
    keys = keys.astype(np.int64)
    keys["col"] = builder.add_vars("installed", scenario.index, keys)
    rows = builder.add_rows("chip_installed", scenario.index, keys, "==", np.zeros(len(keys)))
    builder.add_terms(rows, keys["col"], 1.0)
    row_of = keys[["c", "t"]].assign(row=rows)
    previous = merge(keys.assign(t=keys["t"] + 1), row_of, ["c", "t"])
    builder.add_terms(previous["row"], previous["col"], -1.0)
    m = merge(install, row_of, ["c", "t"])
    builder.add_terms(m["row"], m["col"], -1.0)
    columns.installed = keys[["c", "t", "col"]]


def define_chip_inventory(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Chip inventory: sum_{s,p'<=p} install[c,s,p'] - sum_{p'<=p-lag_c} produce[c,p'] <= open_c.

    The installs' running sum is the column ``installed[c,p]`` where
    :func:`define_chip_installed` built it. Chips produced in p are delivered
    (installable) from p + ``delivery_lag_periods``; ``opening_inventory_chips``
    (produced before the horizon, in transit) are installable from the first period.
    """
    scenario, install, installed = columns.scenario, columns.install, columns.installed
    if install.empty:
        return
    n_periods = scenario.n_periods
    first = install.groupby("c", as_index=False)["t"].min()
    keys = expand(
        first[["c"]], column_values(first, "t"), n_periods - column_values(first, "t"), "t"
    )
    c = column_values(keys, "c")
    opening = (
        scenario.chip_attr(c, "opening_inventory_chips").astype(float)
        if "opening_inventory_chips" in scenario.chips
        else np.zeros(len(keys))
    )
    rows = builder.add_rows("chip_inventory", scenario.index, keys, "<=", np.nan_to_num(opening))
    row_of = keys.assign(row=rows)
    if installed.empty:
        installed = cumulative(install, n_periods)
    installed = merge(installed, row_of, ["c", "t"])
    builder.add_terms(installed["row"], installed["col"], 1.0)
    produce = columns.produce
    delivered = produce.assign(t=produce["t"] + scenario.delivery_lag(column_values(produce, "c")))
    delivered = delivered[delivered["t"] < n_periods]
    produced = merge(cumulative(delivered, n_periods), row_of, ["c", "t"])
    builder.add_terms(produced["row"], produced["col"], -1.0)


def define_chip_window(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Chip window: produce[c,p] <= 0 outside first..last - lag_c (rows only for shared columns)."""
    scenario, produce = columns.scenario, columns.produce
    if produce.empty:
        return
    lag = scenario.delivery_lag(column_values(produce, "c"))
    t_first = scenario.chip_attr(column_values(produce, "c"), "t_first") - lag
    t_last = scenario.chip_attr(column_values(produce, "c"), "t_last") - lag
    t = column_values(produce, "t")
    outside = produce[~((t >= t_first) & (t <= t_last))]
    if outside.empty:
        return
    rows = builder.add_rows("chip_window", scenario.index, outside, "<=", np.zeros(len(outside)))
    builder.add_terms(rows, outside["col"], 1.0)


def _column(chips: pd.DataFrame, name: str, default: float) -> pd.Series:
    """Chip column ``name`` (``default`` when absent or empty)."""
    if name not in chips:
        return pd.Series(default, index=chips.index, dtype=float)
    return chips[name].fillna(default).astype(float)


def check_chip_inventory(inputs: PlanContext) -> pd.DataFrame:
    """Cumulative installs <= opening inventory + production delivered (produced lag earlier).

    One row per (chip of the chips table, period); sums and running sums as pandas'
    ``groupby`` gives them (:mod:`optimizer.lp.grouping`).
    """
    periods, produce = inputs.periods, inputs.frames["produce"]
    install = inputs.frames["install"]
    names = inputs.chips.index.astype(str)
    C, T = len(names), len(periods)

    def flat(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        c = positions(names, frame["chip"])
        t = positions(pd.Index(periods), frame["period"])
        ok = (c >= 0) & (t >= 0)
        return c[ok] * T + t[ok], column_values(frame, "value", dtype=float)[ok]

    ids, v = flat(install)
    ins = group_sum(ids, v, C * T)
    ids, v = flat(produce)
    made = value_at([np.arange(C * T)], [ids], v).reshape(C, T)
    made = np.where(np.isnan(made), 0.0, made)
    lag = _column(inputs.chips, "delivery_lag_periods", 0).to_numpy().astype(np.int64)
    src = np.arange(T)[None, :] - lag[:, None]  # produced lag periods earlier: delivered
    ok = (src >= 0) & (src < T)
    prod = np.where(ok, np.take_along_axis(made, np.clip(src, 0, max(T - 1, 0)), axis=1), 0.0)
    by_chip = np.repeat(np.arange(C), T)
    installed = group_cumsum(by_chip, ins)
    opening = np.repeat(_column(inputs.chips, "opening_inventory_chips", 0.0).to_numpy(), T)
    produced = group_cumsum(by_chip, prod.ravel()) + opening

    def keys(bad: np.ndarray) -> np.ndarray:
        chip = np.repeat(np.asarray(names, dtype=object), T)[bad]
        period = np.tile(np.asarray(periods, dtype=object), C)[bad]
        out: np.ndarray = chip + "," + period
        return out

    return violations("chip_inventory", keys, installed, produced, "<=", inputs.tolerance)


def check_chip_window(inputs: PlanContext) -> pd.DataFrame:
    """No production outside the sale window moved ahead by the delivery lag."""
    produce, chips = inputs.frames["produce"], inputs.chips
    t = (
        produce["period"].map(period_index).to_numpy(dtype=np.int64)
        if len(produce)
        else np.zeros(0, dtype=np.int64)
    )
    lag = reindexed(_column(chips, "delivery_lag_periods", 0), produce["chip"])
    first, at = by_key(chips["first_period"], produce["chip"])  # each chip once
    last = by_key(chips["last_period"], produce["chip"])[0]
    t_first = first.astype(str).map(period_index).to_numpy(dtype=np.int64)[at]
    t_last = last.astype(str).map(period_index).to_numpy(dtype=np.int64)[at]
    t_first, t_last = t_first - lag.astype(np.int64), t_last - lag.astype(np.int64)
    outside = (t < t_first) | (t > t_last)
    return flagged(
        "chip_window",
        produce,
        outside,
        "value",
        lambda b: b["chip"] + "," + b["period"],
        inputs.tolerance,
    )


FAMILIES = (
    ConstraintFamily(
        "chip_installed",
        "chips",
        define_chip_installed,
        # No check of its own: check_chip_inventory recomputes the running sum of
        # installs from the install frame, which is this definition.
        None,
        "",
        "chips",
        (),
        definition=True,
        builds_columns=True,
    ),
    ConstraintFamily(
        "chip_inventory",
        "chips",
        define_chip_inventory,
        check_chip_inventory,
        "chip {key} production up to {period} short by {amount} chips",
        "chips",
        ("c",),
        summary_words="inventory of {0} chips",
    ),
    ConstraintFamily(
        "chip_window",
        "chips",
        define_chip_window,
        check_chip_window,
        "chip {key} produced outside its sale window in {period}: {amount} chips",
        "chips",
        ("c",),
        summary_words="sale window of {0}",
        limit=True,
    ),
)
