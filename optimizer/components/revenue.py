"""Revenue: what served demand earns at each customer's price, for the margin objective.

In the ``margin`` objective mode (``SolveOptions(objective="margin")``) the plan
maximises discounted margin = revenue - cost. The LP stays a minimisation: the
``revenue`` cost term adds minus the revenue of served H100e, so the objective is
``cost - revenue = -margin`` and the costs table's ``revenue`` rows are negative.

Served H100e of a demand row is demand - unmet (the demand balance is ``>=``: H100e
served beyond the demand earn nothing), so with ``price[k,w]`` the customer's
``price_training_usd_per_h100e_period`` or ``price_inference_usd_per_h100e_period``::

    revenue[k,w,g,p] = price[k,w] * (demand[k,w,g,p] - unmet[k,w,g,p])        (USD)

added as the constant ``-price * demand`` and the coefficient ``+price`` on
``unmet`` (lost revenue), both discounted like every term. In margin mode the
``unmet_penalty`` term is not added (unserved demand earns nothing instead of paying
a penalty weight); commitment breach penalties stay (a contract penalty).

Revenue is capped by the demand, so margin is bounded: a site without a cap cannot
make the margin unbounded. In the ``cost`` mode the term adds nothing and results
are unchanged.

Shadow prices keep the one convention of :mod:`optimizer.plan.pipeline`:
``shadow_price = d(objective)/d(rhs)``; in margin mode the objective is -margin, so
the marginal margin of a limit is ``-shadow_price`` (USD of margin per unit of the
limit; >= 0 for a binding ``<=`` limit). A demand row's derivative includes the revenue
constant (:func:`revenue_dual_shift`): one more H100e of unserved demand changes
nothing, one more H100e served earns its price less its cost.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.component import Component, CostTerm, ResultTable
from optimizer.components.contract_inputs import period_prices
from optimizer.components.net_revenue import NET_REVENUE
from optimizer.components.plan_context import PlanContext
from optimizer.components.scenario import ScenarioColumns, ScenarioData
from optimizer.components.table_columns import CUSTOMER, F64, PERIOD, STR, WORKLOAD, col
from optimizer.components.unit_economics import UNIT_ECONOMICS
from optimizer.lp.builder import ModelBuilder
from optimizer.lp.frames import column_values, indexed

__all__ = [
    "COMPONENT",
    "CUSTOMER_REVENUE",
    "PRICE_COLUMNS",
    "customer_prices",
    "define_revenue",
    "revenue_dual_shift",
]

#: Customer price column of each workload (USD per H100e per quarter).
PRICE_COLUMNS = {
    "training": "price_training_usd_per_h100e_period",
    "inference": "price_inference_usd_per_h100e_period",
}


def customer_prices(customers: pd.DataFrame, customer: object, workload: object) -> np.ndarray:
    """Return each row's price per H100e-quarter for its customer and workload.

    Parameters
    ----------
    customers : DataFrame
        The customers table, indexed by the key ``customer`` is given in (customer
        ID or code ``k``), with the :data:`PRICE_COLUMNS`.
    customer, workload : array-like, shape (n,)
        Customer keys and workload names of the rows.

    Returns
    -------
    ndarray, shape (n,)
        USD per H100e per quarter (undiscounted); NaN for an unknown customer.
    """
    k = np.asarray(customer)
    w = np.asarray(workload, dtype=object)
    out = np.full(len(k), np.nan)
    for name, column in PRICE_COLUMNS.items():
        sel = w == name
        if sel.any():
            out[sel] = customers[column].reindex(k[sel]).to_numpy(dtype=float)
    return out


def _row_prices(scenario: ScenarioData, rows: pd.DataFrame) -> np.ndarray:
    """Price per H100e-quarter of coded rows ``k, w, t``: the contract's, else the spot price."""
    names = np.asarray(scenario.workload_names, dtype=object)[column_values(rows, "w")]
    customers = scenario.customers["customer"].reindex(column_values(rows, "k")).to_numpy()
    periods = np.asarray(scenario.dataset.periods, dtype=object)[column_values(rows, "t")]
    return period_prices(scenario.dataset, customers, names, periods)


def define_revenue(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Revenue (margin mode): -price[k,w] * (demand[k,w,g,p] - unmet[k,w,g,p]).

    Nothing in the cost mode. Constant ``-price * demand`` per demand row and
    coefficient ``+price`` on its unmet column, both undiscounted (the objective
    discounts them).
    """
    if builder.objective != "margin":
        return
    scenario, unmet = columns.scenario, columns.unmet
    if unmet.empty:
        return
    price = _row_prices(scenario, unmet)
    t = column_values(unmet, "t")
    builder.add_cost(scenario.index, "revenue", unmet["col"], t, price)
    demand = column_values(unmet, "demand_h100e", dtype=float)
    builder.add_const(scenario.index, "revenue", t, -price * demand)


def _customer_revenue(ctx: PlanContext) -> pd.DataFrame:
    """Build customer_revenue: each demand row's billed H100e at its price, discounted.

    Billed H100e = demand - unmet (what the margin objective's revenue term counts; H100e
    served beyond the demand earn nothing). Reported in both modes; in the margin mode
    ``revenue_usd`` sums to minus the costs table's ``revenue`` rows.
    """
    dm = ctx.table("demand")
    keys = ["customer", "workload", "period", "regions"]
    out = dm[keys].copy()
    price = period_prices(
        ctx.dataset,
        column_values(dm, "customer"),
        column_values(dm, "workload"),
        column_values(dm, "period"),
    )
    periods = indexed(ctx.dataset.table("periods"), "period")["discount_factor"]
    disc = periods.reindex(dm["period"]).to_numpy(dtype=float)
    demand = column_values(dm, "demand_h100e", dtype=float)
    unmet = column_values(dm, "unmet_h100e", dtype=float)
    billed = np.maximum(demand - unmet, 0.0)
    out["price_usd_per_h100e_period"] = price
    out["billed_h100e"] = billed
    out["undiscounted_revenue_usd"] = billed * price
    out["revenue_usd"] = billed * price * disc
    out["unserved_revenue_usd"] = unmet * price * disc
    return out


#: The customer_revenue result table (one row per demand row).
CUSTOMER_REVENUE = ResultTable(
    "customer_revenue",
    (
        CUSTOMER,
        WORKLOAD,
        PERIOD,
        col("regions", STR, "", "Site regions of the demand row, ';'-separated ('' = anywhere)."),
        col(
            "price_usd_per_h100e_period",
            F64,
            "USD/(H100e·quarter)",
            "The customer's price for the workload (customers table).",
        ),
        col("billed_h100e", F64, "H100e", "Demand - unmet: the H100e that earn the price."),
        col("undiscounted_revenue_usd", F64, "USD", "billed_h100e x price, undiscounted."),
        col(
            "revenue_usd",
            F64,
            "USD",
            "billed_h100e x price x discount factor (the margin objective's revenue).",
        ),
        col(
            "unserved_revenue_usd",
            F64,
            "USD",
            "unmet H100e x price x discount factor: revenue the plan leaves unearned.",
        ),
    ),
    build=_customer_revenue,
)


COMPONENT = Component(
    "revenue",
    costs=(
        CostTerm(
            "revenue",
            "revenue",
            define_revenue,
            "margin mode: -(demand - unmet) H100e x the customer's price_<workload>"
            "_usd_per_h100e_period (negative: revenue lowers cost - revenue)",
        ),
    ),
    tables=(CUSTOMER_REVENUE, UNIT_ECONOMICS, NET_REVENUE),
)


def revenue_dual_shift(model: Any) -> np.ndarray:
    """Return what the revenue constant adds to each row's d(objective)/d(rhs).

    In the margin mode the objective holds the constant ``-price * demand`` per demand
    row, which a solver's row dual does not see: one more H100e of demand also adds
    ``-weight * discount[t] * price[k,w]`` to the objective. This is that change per
    row (0 on every row but the demand balances; all 0 in the cost mode), so that
    ``row_dual + shift`` is the objective's full derivative.

    Parameters
    ----------
    model : PlanningModel
        The built model (its ``objective``, ``constraints``, ``codes``, ``datasets``,
        ``weights``).

    Returns
    -------
    ndarray, shape (n_constraints,)
        USD (discounted, weighted) per H100e of demand.
    """
    con = model.constraints
    shift = np.zeros(len(con))
    if model.objective != "margin":
        return shift
    demand = (con["family"] == "demand_balance").to_numpy()
    if not demand.any():
        return shift
    rows = con.loc[demand]
    customers = np.asarray(model.codes["k"], dtype=object)[column_values(rows, "k")]
    workloads = np.asarray(model.codes["w"], dtype=object)[column_values(rows, "w")]
    out = np.zeros(len(rows))
    scenario = column_values(rows, "scenario")
    t = column_values(rows, "t")
    for i, ds in enumerate(model.datasets):
        sel = scenario == i
        labels = np.asarray(ds.periods, dtype=object)[t[sel]]
        price = period_prices(ds, customers[sel], workloads[sel], labels)
        disc = ds.table("periods")["discount_factor"].to_numpy(dtype=float)[t[sel]]
        out[sel] = -model.weights[i] * disc * price
    shift[demand] = out
    return shift
