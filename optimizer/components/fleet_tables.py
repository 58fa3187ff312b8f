"""Fleet result tables: fleet (chips in service) and assignment (chips serving customers)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.component import ResultTable
from optimizer.components.migration_inputs import plan_factor
from optimizer.components.plan_context import PlanContext
from optimizer.components.table_columns import CHIP, CUSTOMER, F64, PERIOD, SITE, WORKLOAD, col
from optimizer.lp.frames import column_values
from optimizer.lp.frames import frame as object_frame
from optimizer.lp.grouping import (
    positions,
    sums_at,
    take,
    value_at,
)

__all__ = ["FLEET", "ASSIGNMENT", "TABLES"]

#: Chips below this are solver noise: no fleet or assignment row.
_ZERO = 1e-9


def _fleet(ctx: PlanContext) -> pd.DataFrame:
    """Build fleet: installs, retirements, fleet, assigned and idle chips, nameplate IT MW.

    Assigned chips per (chip, site, period) summed as pandas' ``groupby`` sums them
    (:func:`optimizer.lp.grouping.sums_at`).
    """
    fl = ctx.fleet.reset_index(drop=True)
    keys = ("chip", "site", "period")
    asg = ctx.frames["assign"]
    assigned = sums_at(
        [fl[k].to_numpy() for k in keys],
        [asg[k].to_numpy() for k in keys],
        column_values(asg, "value", dtype=float),
    )
    fleet = column_values(fl, "fleet_chips", dtype=float)
    kw = take(
        column_values(ctx.chips, "it_kw_per_chip", dtype=float),
        positions(ctx.chips.index, column_values(fl, "chip")),
    )
    out: dict[str, Any] = {c: fl[c].array for c in fl.columns}  # text stays text
    out["assigned_chips"] = assigned
    out["idle_chips"] = np.maximum(fleet - assigned, 0.0)
    out["it_mw"] = fleet * kw / 1e3
    counts = ("installed_chips", "retired_chips", "fleet_chips", "assigned_chips")
    keep = np.zeros(len(fl), dtype=bool)
    for c in counts:
        keep |= np.abs(np.asarray(out[c], dtype=float)) > _ZERO
    return object_frame({c: v[keep] for c, v in out.items()}, index=pd.RangeIndex(keep.sum()))


def _assignment(ctx: PlanContext) -> pd.DataFrame:
    """Build assignment: non-zero assignments with H100e (after derate) and nameplate IT MW.

    The derate is the eligibility row's of the (customer, chip) (a left merge on
    unique keys, by index arrays), times a margin plan's migration schedule.
    """
    chips = ctx.chips
    a = ctx.frames["assign"]
    nz = np.abs(column_values(a, "value", dtype=float)) > _ZERO
    out: dict[str, Any] = {c: a[c].array[nz] for c in a.columns if c != "value"}
    n = int(nz.sum())
    el = ctx.dataset.table("eligibility")
    derate = value_at(
        [np.asarray(out["customer"], dtype=object), np.asarray(out["chip"], dtype=object)],
        [column_values(el, "customer"), column_values(el, "chip")],
        column_values(el, "derate", dtype=float),
    )
    probe = {k: np.asarray(out[k], dtype=object) for k in ("customer", "chip", "period")}
    derate = derate * plan_factor(ctx.dataset, ctx.frames, object_frame(probe))
    count = column_values(a, "value", dtype=float)[nz]
    c = positions(chips.index, np.asarray(out["chip"], dtype=object))
    training = take(column_values(chips, "training_h100e", dtype=float), c)
    inference = take(column_values(chips, "inference_h100e", dtype=float), c)
    h = np.where(np.asarray(out["workload"], dtype=object) == "training", training, inference)
    out["chips"] = count
    out["derate"] = derate
    out["h100e"] = count * h * np.where(np.isnan(derate), 0.0, derate)
    out["it_mw"] = count * take(column_values(chips, "it_kw_per_chip", dtype=float), c) / 1e3
    return object_frame(out, index=pd.RangeIndex(n))


FLEET = ResultTable(
    "fleet",
    (
        CHIP,
        SITE,
        PERIOD,
        col("installed_chips", F64, "chips", "Accelerators installed in the period."),
        col("retired_chips", F64, "chips", "Accelerators reaching end of life in the period."),
        col("fleet_chips", F64, "chips", "Accelerators in service in the period."),
        col("assigned_chips", F64, "chips", "Accelerators serving a customer."),
        col("idle_chips", F64, "chips", "Accelerators in service serving no one."),
        col("it_mw", F64, "MW", "All-in IT power of the fleet (rated)."),
    ),
    build=_fleet,
)

ASSIGNMENT = ResultTable(
    "assignment",
    (
        CHIP,
        SITE,
        CUSTOMER,
        WORKLOAD,
        PERIOD,
        col("chips", F64, "chips", "Accelerators serving the customer's workload."),
        col("h100e", F64, "H100e", "Effective compute delivered (after derate)."),
        col("it_mw", F64, "MW", "All-in IT power of the assigned chips (rated)."),
    ),
    build=_assignment,
)

#: The tables of this part of the plan.
TABLES: tuple[ResultTable, ...] = (
    FLEET,
    ASSIGNMENT,
)
