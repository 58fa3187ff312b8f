"""The migration derate schedule: a customer's performance on a new chip family by quarter.

A ``migration`` row (customer k, family f) with initial derate ``d0``, recovery
quarters ``N`` and start quarter ``p0`` scales the effective H100e of every chip of the
family serving the customer in period p by

    m[k,f,p] = 1 - d0 x r(p - p0),   r(a) = 1 for a < 0,  max(0, 1 - a / N) for a >= 0

(``r = 0`` from the start when ``N = 0``): the customer runs at ``1 - d0`` of the
eligibility derate until the port starts and recovers linearly to the eligibility
derate over N quarters. Pairs without a row keep ``m = 1``. The schedule is applied in
the margin objective only (:mod:`optimizer.components.migration`); a solved plan shows
it applied by its ``migration_port`` columns (:func:`plan_rows`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from optimizer.lp.frames import column_values
from optimizer.lp.grouping import positions, rows_at, take

__all__ = [
    "coded_factor",
    "derate_factor",
    "peak_demand",
    "plan_factor",
    "plan_rows",
    "quarter_ordinal",
    "remaining_share",
    "rows_in_effect",
]


def quarter_ordinal(periods: Any) -> np.ndarray:
    """Quarter ordinals (``year * 4 + quarter - 1``) of ``YYYYQn`` texts, shape (n,)."""
    text = pd.Series(np.asarray(periods, dtype=object), dtype=object).astype(str)
    return (text.str[:4].astype(int) * 4 + text.str[-1].astype(int) - 1).to_numpy(np.int64)


def remaining_share(age: np.ndarray, recovery_periods: np.ndarray) -> np.ndarray:
    """Share of the initial derate still lost ``age`` quarters after the port starts.

    ``1`` before the start (``age < 0``), ``max(0, 1 - age / N)`` from it, ``0`` from
    the start when ``N = 0``. Arrays of one shape; returns floats of that shape.
    """
    age = np.asarray(age, dtype=float)
    n = np.asarray(recovery_periods, dtype=float)
    linear = np.clip(1.0 - age / np.where(n > 0, n, 1.0), 0.0, 1.0)
    return np.where(age < 0, 1.0, np.where(n > 0, linear, 0.0))


def derate_factor(
    dataset: Any, customer: Any, chip: Any, period: Any, rows: pd.DataFrame | None = None
) -> np.ndarray:
    """Return ``m[k,f,p]`` for each (customer, chip, period) (1 where no migration row).

    Parameters
    ----------
    dataset : Dataset
        Its ``migration`` and ``chips`` tables.
    customer, chip, period : array-like of str, shape (n,)
    rows : DataFrame, optional
        The migration rows in effect (default: every row of the table).

    Returns
    -------
    ndarray, shape (n,)
        The factor on the eligibility derate, in (0, 1].
    """
    n = len(customer)
    mig = dataset.table("migration") if rows is None else rows
    if not len(mig) or not n:
        return np.ones(n)
    chips = dataset.table("chips")
    at = positions(pd.Index(chips["chip"].astype(str)), np.asarray(chip, dtype=object))
    family = np.asarray(chips["family"].astype(str).to_numpy(), dtype=object)[np.maximum(at, 0)]
    row = rows_at(
        [np.asarray(customer, dtype=object), family],
        [mig["customer"].astype(str).to_numpy(), mig["family"].astype(str).to_numpy()],
    )
    start = take(quarter_ordinal(mig["from_period"]).astype(float), row)
    d0 = take(column_values(mig, "derate_initial", dtype=float), row)
    n_rec = take(column_values(mig, "recovery_periods", dtype=float), row)
    age = quarter_ordinal(period) - np.nan_to_num(start)
    m = 1.0 - np.nan_to_num(d0) * remaining_share(age, np.nan_to_num(n_rec))
    return np.where(row < 0, 1.0, m)


def coded_factor(scenario: Any, k: np.ndarray, c: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Return ``m[k,f,p]`` for code arrays of one scenario (customer, chip, period position).

    Computed on the distinct (k, c, t) triples (the assign keys repeat them per site,
    workload and region group).
    """
    rows = rows_in_effect(scenario)
    if not len(rows) or not len(k):
        return np.ones(len(k))
    keys = pd.DataFrame({"k": k, "c": c, "t": t})
    u = keys.drop_duplicates().reset_index(drop=True)
    names = np.asarray(scenario.dataset.periods, dtype=object)
    factor = derate_factor(
        scenario.dataset,
        scenario.customers["customer"].reindex(u["k"]).to_numpy(dtype=object),
        scenario.chips["chip"].reindex(u["c"]).to_numpy(dtype=object),
        names[column_values(u, "t")],
        rows,
    )
    at = rows_at([keys[x].to_numpy() for x in "kct"], [u[x].to_numpy() for x in "kct"])
    return factor[at]


def peak_demand(scenario: Any) -> pd.Series:
    """Return ref[k], each customer's largest quarterly demand (H100e), by customer code.

    All workloads and region groups summed; customers with demand only.
    """
    dm = scenario.demand
    return dm.groupby(["k", "t"])["demand_h100e"].sum().groupby(level="k").max()


def rows_in_effect(scenario: Any) -> pd.DataFrame:
    """Migration rows whose customer has demand in the horizon and whose family has a chip.

    Only these rows build migration columns and derate the plan; a customer with no
    demand has no reference volume to port.
    """
    mig = scenario.dataset.table("migration")
    if not len(mig):
        return mig
    code = pd.Series(scenario.customers.index, index=scenario.customers["customer"].astype(str))
    k = code.reindex(mig["customer"].astype(str)).to_numpy()
    has = pd.Series(k).isin(peak_demand(scenario).index).to_numpy()
    fam = mig["family"].astype(str).isin(set(scenario.chips["family"].astype(str))).to_numpy()
    return mig[has & fam].reset_index(drop=True)


def plan_rows(dataset: Any, frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Migration rows in effect in a solved plan: those with ``migration_port`` columns.

    Empty for a cost-objective plan (no migration columns), so its results keep the
    eligibility derate.
    """
    mig = dataset.table("migration")
    port = frames.get("migration_port")
    if port is None or not len(port) or not len(mig):
        return mig.iloc[:0]
    pairs = port[["customer", "family"]].astype(str).drop_duplicates()
    keys = mig[["customer", "family"]].astype(str)
    on = rows_at([keys[c].to_numpy() for c in keys], [pairs[c].to_numpy() for c in pairs]) >= 0
    return mig[on].reset_index(drop=True)


def plan_factor(dataset: Any, frames: Mapping[str, pd.DataFrame], a: pd.DataFrame) -> np.ndarray:
    """``m[k,f,p]`` of each row of ``a`` (``customer, chip, period``) in a solved plan."""
    rows = plan_rows(dataset, frames)
    if not len(rows) or not len(a):
        return np.ones(len(a))
    return derate_factor(
        dataset,
        column_values(a, "customer", dtype=object),
        column_values(a, "chip", dtype=object),
        column_values(a, "period", dtype=object),
        rows,
    )
