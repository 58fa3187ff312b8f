"""The contracts result table: each contract period's terms, what the plan held and billed."""

from __future__ import annotations

import numpy as np
import pandas as pd

from optimizer.components.component import ResultTable, TableColumn
from optimizer.components.contracts import contract_quantities
from optimizer.components.plan_context import PlanContext
from optimizer.components.table_columns import CUSTOMER, DUAL, F64, PERIOD, STR, WORKLOAD, col
from optimizer.lp.frames import column_values, indexed

__all__ = ["CONTRACTS", "TABLES"]


def _contracts(ctx: PlanContext) -> pd.DataFrame:
    """Build contracts: one row per contract row and horizon period of its window.

    ``billed_usd`` = price x served + price x max(0, floor - demand) + fee x reserved;
    ``credits_usd`` = price x take-or-pay shortfall + fee x reservation shortfall +
    SLA credit x SLA shortfall; both discounted (the margin objective's contract terms;
    the billing constants count in the objective in the margin mode only).
    """
    cp = contract_quantities(ctx)
    disc = indexed(ctx.dataset.table("periods"), "period")["discount_factor"]
    d = disc.reindex(cp["period"]).to_numpy(dtype=float)
    demand = column_values(cp, "demand_h100e", dtype=float)
    served = np.maximum(demand - column_values(cp, "unmet_h100e", dtype=float), 0.0)
    price = column_values(cp, "price_usd_per_h100e_period", dtype=float)
    fee = column_values(cp, "reservation_fee_usd_per_h100e_period", dtype=float)
    unused = np.maximum(column_values(cp, "take_or_pay_h100e", dtype=float) - demand, 0.0)
    cp["served_h100e"] = served
    cp["served_share"] = np.where(demand > 0, served / np.where(demand > 0, demand, 1.0), np.nan)
    cp["take_or_pay_unused_h100e"] = unused
    billed = price * (served + unused) + fee * column_values(cp, "reservation_h100e", dtype=float)
    credits = (
        price * column_values(cp, "take_or_pay_short_h100e", dtype=float)
        + fee * column_values(cp, "reservation_short_h100e", dtype=float)
        + column_values(cp, "sla_credit_usd_per_h100e", dtype=float)
        * column_values(cp, "sla_short_h100e", dtype=float)
    )
    cp["billed_usd"] = billed * d
    cp["credits_usd"] = credits * d
    return ctx.with_duals(cp, "contracts")


def _h(name: str, description: str) -> TableColumn:
    """Return an H100e column."""
    return col(name, F64, "H100e", description)


CONTRACTS = ResultTable(
    "contracts",
    (
        CUSTOMER,
        WORKLOAD,
        col("from_period", STR, "quarter", "Start of the contract (its row's key)."),
        PERIOD,
        col(
            "price_usd_per_h100e_period",
            F64,
            "USD/(H100e·quarter)",
            "Contract price in the period, escalated from the start.",
        ),
        _h("demand_h100e", "Demand of the customer's workload in the period (all regions)."),
        _h("served_h100e", "Demand - unmet."),
        col("served_share", F64, "share", "served / demand (NaN when demand is 0)."),
        _h("held_h100e", "H100e assigned to the customer's workload (may exceed the demand)."),
        _h("take_or_pay_h100e", "Take-or-pay floor."),
        _h("take_or_pay_unused_h100e", "max(0, floor - demand): billed though not used."),
        _h("take_or_pay_short_h100e", "Floor not held (refunded at the price)."),
        _h("reservation_h100e", "Capacity reserved."),
        _h("reservation_short_h100e", "Reserved H100e not held (fee refunded)."),
        col("sla_served_share", F64, "share", "Service tier (0 = none)."),
        _h("sla_short_h100e", "H100e served below the tier (credited)."),
        col(
            "billed_usd",
            F64,
            "USD",
            "price x (served + unused floor) + fee x reserved, discounted.",
        ),
        col(
            "credits_usd",
            F64,
            "USD",
            "Refunds and SLA credits owed to the customer, discounted.",
        ),
        col(
            "shadow_price_take_or_pay_usd_per_h100e",
            F64,
            "USD/H100e",
            DUAL + "per H100e of take-or-pay floor.",
        ),
        col(
            "shadow_price_reservation_usd_per_h100e",
            F64,
            "USD/H100e",
            DUAL + "per H100e reserved.",
        ),
        col(
            "shadow_price_sla_usd_per_h100e",
            F64,
            "USD/H100e",
            DUAL + "per H100e of the service tier (tier x demand).",
        ),
    ),
    build=_contracts,
)

#: The tables of the contracts part of the plan.
TABLES: tuple[ResultTable, ...] = (CONTRACTS,)
