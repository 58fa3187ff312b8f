"""Demand result tables: demand (compute wanted and served) and commitments (contracted IT MW)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from capacity.schema import period_index
from optimizer.components.cells import region_text
from optimizer.components.component import ResultTable
from optimizer.components.plan_context import PlanContext
from optimizer.components.table_columns import CUSTOMER, DUAL, F64, PERIOD, STR, WORKLOAD, col
from optimizer.lp.frames import column_values, object_column, rows_frame
from optimizer.lp.grouping import (
    positions,
    sums_at,
    take,
    value_at,
)

__all__ = ["DEMAND", "COMMITMENTS", "TABLES"]


def _demand(ctx: PlanContext) -> pd.DataFrame:
    """Build demand: demand, served and unmet H100e, served share and shadow price."""
    assignment = ctx.table("assignment")
    keys = ["customer", "workload", "period", "regions"]
    dm = ctx.dataset.table("demand")
    text = region_text(dm["regions"] if "regions" in dm else pd.Series("", index=dm.index))
    dm = dm.assign(regions=object_column(text, dm.index))[[*keys, "demand_h100e"]]
    dm = dm.reset_index(drop=True)
    target = [dm[k].to_numpy() for k in keys]
    by = ["customer", "workload", "period", "demand_regions"]
    served = sums_at(
        target, [assignment[k].to_numpy() for k in by], column_values(assignment, "h100e")
    )
    unmet = ctx.frames["unmet"]
    u = value_at(target, [unmet[k].to_numpy() for k in by], column_values(unmet, "value"))
    dmv = column_values(dm, "demand_h100e", dtype=float)
    # H100e held beyond the demand (a take-or-pay floor or a reservation above it) are
    # not served demand: the contracts table counts them (held_h100e)
    dm["served_h100e"] = np.minimum(served, dmv)
    dm["unmet_h100e"] = np.where(np.isnan(u), 0.0, u)
    dm["served_share"] = np.where(dmv > 0, dm["served_h100e"] / np.where(dmv > 0, dmv, 1.0), np.nan)
    return ctx.with_duals(dm, "demand")


def _commitment_periods(ctx: PlanContext) -> pd.DataFrame:
    """List each commitment row j per horizon period it covers.

    Columns: j, customer, family, period, min_it_mw. Made once per model structure
    and commitments table (a patched ``min_it_mw`` is another table).
    """
    com = ctx.commitments
    return ctx.reuse(
        ("commitment_periods", ctx.scenario),
        (com,),
        lambda: _make_commitment_periods(com.reset_index(drop=True), ctx.periods),
    ).copy(deep=False)


def _make_commitment_periods(com: pd.DataFrame, periods: list[str]) -> pd.DataFrame:
    """Compute :func:`_commitment_periods` (``com`` with a fresh 0..n-1 index)."""
    p0 = period_index(periods[0])
    rows = []
    for j, r in com.iterrows():
        t0 = max(period_index(str(r["from_period"])) - p0, 0)
        t1 = min(period_index(str(r["to_period"])) - p0, len(periods) - 1)
        for t in range(t0, t1 + 1):
            rows.append(
                (j, str(r["customer"]), str(r["family"]), periods[t], float(r["min_it_mw"]))
            )
    names = ("customer", "family", "period")
    return rows_frame(rows, {"j": np.int64, **dict.fromkeys(names, object), "min_it_mw": float})


def _commitments(ctx: PlanContext) -> pd.DataFrame:
    """Build commitments: committed, delivered and breached IT MW with the shadow price.

    Delivered MW per (customer, family, period) summed as pandas' ``groupby`` does
    (:func:`optimizer.lp.grouping.sums_at`).
    """
    assignment = ctx.table("assignment")
    cm = _commitment_periods(ctx)
    c = positions(ctx.chips.index, column_values(assignment, "chip"))
    family = take(ctx.chips["family"].astype(str).to_numpy(), c)
    target = [cm[k].to_numpy() for k in ("customer", "family", "period")]
    source = [column_values(assignment, "customer"), family, column_values(assignment, "period")]
    cm["delivered_it_mw"] = sums_at(target, source, column_values(assignment, "it_mw"))
    br = ctx.frames["breach"]
    got = value_at(
        [column_values(cm, "j"), column_values(cm, "period")],
        [column_values(br, "j"), column_values(br, "period")],
        column_values(br, "value"),
    )
    cm["breach_mw"] = np.where(np.isnan(got), 0.0, got)
    return ctx.with_duals(cm, "commitments")


DEMAND = ResultTable(
    "demand",
    (
        CUSTOMER,
        WORKLOAD,
        PERIOD,
        col(
            "regions",
            STR,
            "",
            "Site regions that may serve the demand, ';'-separated ('' = anywhere).",
        ),
        col("demand_h100e", F64, "H100e", "Compute wanted."),
        col(
            "served_h100e",
            F64,
            "H100e",
            "Compute delivered against the demand (at most the demand: H100e held beyond "
            "it for a contract are the contracts table's held_h100e).",
        ),
        col("unmet_h100e", F64, "H100e", "Compute not delivered (penalised)."),
        col("served_share", F64, "share", "served / demand (0-1; NaN when demand is 0)."),
        col(
            "shadow_price_usd_per_h100e",
            F64,
            "USD/H100e",
            DUAL + "per H100e of demand in the period.",
        ),
    ),
    build=_demand,
)

COMMITMENTS = ResultTable(
    "commitments",
    (
        CUSTOMER,
        col("family", STR, "", "Chip family of the commitment."),
        PERIOD,
        col("min_it_mw", F64, "MW", "Contracted minimum IT power."),
        col("delivered_it_mw", F64, "MW", "IT power delivered on the family."),
        col("breach_mw", F64, "MW", "Shortfall below the commitment (penalised)."),
        col("shadow_price_usd_per_mw", F64, "USD/MW", DUAL + "per MW of commitment."),
    ),
    build=_commitments,
)

#: The tables of this part of the plan.
TABLES: tuple[ResultTable, ...] = (
    DEMAND,
    COMMITMENTS,
)
