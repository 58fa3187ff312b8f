"""The net_revenue table: revenue, cost and margin per chip generation, site and period.

The shape of GenX's ``NetRevenue.csv`` (revenue, cost and profit per resource) with
this planner's keys: one row per (chip, site, period) with chips in service, all
discounted like the objective.

* ``revenue_usd`` = sum over the assignments of the chip at the site of H100e served x
  the billed share of the customer's workload in the period (billed H100e = demand -
  unmet, :data:`~optimizer.components.revenue.CUSTOMER_REVENUE`; H100e assigned
  beyond the demand earn nothing) x the price of the period (contract price when a
  contract applies, :mod:`optimizer.components.contract_inputs`) x the discount factor;
* ``chip_capex_usd`` = chip rent (``capex_usd_per_chip / lifetime_periods``) x the
  fleet at the site x the discount factor (the initial fleet pays rent too, as in
  :mod:`optimizer.components.unit_economics`);
* ``energy_usd`` = the site's energy cost (energy table) x the chip's share of the
  site's chip IT MWh (busy: assigned IT MW x the workload's power factor; idle chips at
  the chip's idle power factor) x the discount factor;
* ``margin_usd`` = revenue_usd - chip_capex_usd - energy_usd.

Site build capex, power decisions, contract billing and penalties are the site's or
the plan's, not a chip's: the costs table holds them, so the table's margin summed is
above the plan's margin by those terms. Group it by ``chip`` for the margin per chip
generation, by ``site`` or ``period`` for the other views.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from optimizer.components.component import ResultTable, TableColumn
from optimizer.components.contract_inputs import period_prices
from optimizer.components.plan_context import PlanContext
from optimizer.components.table_columns import CHIP, F64, PERIOD, SITE, col
from optimizer.lp.frames import column_values
from optimizer.lp.grouping import Groups, group_sum, positions, sums_at, take

__all__ = ["NET_REVENUE", "net_revenue"]

_KEYS = ["chip", "site", "period"]


def _billed_share(ctx: PlanContext, a: pd.DataFrame) -> np.ndarray:
    """Return billed / served H100e of each assignment row's (customer, workload, period), <= 1.

    Sums on integer codes (:mod:`optimizer.lp.grouping`), equal to pandas' sorted
    ``groupby`` sums bit for bit; 0 where the key serves nothing.
    """
    keys = ["customer", "workload", "period"]
    cr = ctx.table("customer_revenue")
    g = Groups([column_values(a, k) for k in keys])
    served = g.sum(column_values(a, "h100e", dtype=float))[g.ids]
    billed = sums_at(
        [column_values(a, k) for k in keys],
        [column_values(cr, k) for k in keys],
        cr["billed_h100e"],
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.minimum(billed / np.where(served > 0, served, np.nan), 1.0)
    return np.where(np.isnan(share), 0.0, share)


def _by_key(frame: pd.DataFrame, column: str, keys: np.ndarray) -> np.ndarray:
    """``frame.set_index(index)[column]`` at each of ``keys`` (NaN where absent)."""
    return take(frame[column].to_numpy(dtype=float), positions(frame.index, keys))


def _row_arrays(ctx: PlanContext, a: pd.DataFrame, fleet: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per assignment row and per fleet row: served, billed, revenue, busy and idle MWh."""
    periods = ctx.dataset.table("periods").set_index("period")
    pf = ctx.dataset.table("workloads").set_index("workload")
    chips = ctx.chips
    price = period_prices(ctx.dataset, a["customer"], a["workload"], a["period"])
    served = column_values(a, "h100e", dtype=float)
    billed = served * _billed_share(ctx, a)
    hours_a = _by_key(periods, "hours", column_values(a, "period"))
    busy = column_values(a, "it_mw", dtype=float) * _by_key(
        pf, "power_factor", column_values(a, "workload")
    )
    f_chip = column_values(fleet, "chip")
    idle_mw = (
        column_values(fleet, "idle_chips", dtype=float)
        * _by_key(chips, "it_kw_per_chip", f_chip)
        / 1e3
        * _by_key(chips, "idle_power_factor", f_chip)
    )
    return {
        "served": served,
        "billed": billed,
        "revenue": billed * price * _by_key(periods, "discount_factor", column_values(a, "period")),
        "busy_mwh": busy * hours_a,
        "idle_mwh": idle_mw * _by_key(periods, "hours", column_values(fleet, "period")),
    }


def net_revenue(ctx: PlanContext) -> pd.DataFrame:
    """Build net_revenue: revenue, chip capex, energy and margin per (chip, site, period).

    Parameters
    ----------
    ctx : PlanContext
        One scenario's plan (its assignment, fleet, energy and customer_revenue tables).

    Returns
    -------
    DataFrame
        ``chip, site, period, fleet_chips, served_h100e, billed_h100e, revenue_usd,
        chip_capex_usd, energy_usd, cost_usd, margin_usd`` (USD discounted), one row per
        chip, site and period with chips in service or at work, sorted by the keys.
        Sums are Kahan sums in row order on integer codes
        (:mod:`optimizer.lp.grouping`): the values of pandas' sorted ``groupby``.
    """
    a, fleet = ctx.table("assignment"), ctx.table("fleet")
    na = len(a)
    g = Groups([np.concatenate([a[k].to_numpy(), fleet[k].to_numpy()]) for k in _KEYS])
    ids_a, ids_f = g.ids[:na], g.ids[na:]
    v = _row_arrays(ctx, a, fleet)
    fl = group_sum(ids_f, column_values(fleet, "fleet_chips", dtype=float), g.n)
    keep = np.flatnonzero((np.bincount(ids_a, minlength=g.n) > 0) | (fl > 0))
    out = {k: g.key(i)[keep] for i, k in enumerate(_KEYS)}
    out["fleet_chips"] = fl[keep]
    for name, column in (
        ("served", "served_h100e"),
        ("billed", "billed_h100e"),
        ("revenue", "revenue_usd"),
    ):
        out[column] = group_sum(ids_a, v[name], g.n)[keep]
    periods = ctx.dataset.table("periods").set_index("period")
    d = _by_key(periods, "discount_factor", out["period"])
    chips = ctx.chips
    rent = chips["capex_usd_per_chip"].astype(float) / chips["lifetime_periods"].astype(float)
    out["chip_capex_usd"] = take(rent.to_numpy(), positions(rent.index, out["chip"]))
    out["chip_capex_usd"] = out["chip_capex_usd"] * out["fleet_chips"] * d
    # chip MWh per (chip, site, period), busy rows then idle rows; the site's total over chips
    mwh = group_sum(g.ids, np.concatenate([v["busy_mwh"], v["idle_mwh"]]), g.n)
    sp = Groups([], coded=[g.coded(1), g.coded(2)])
    total = sp.sum(mwh)[sp.ids][keep]
    energy = ctx.table("energy")
    site_cost = sums_at(
        [out["site"], out["period"]],
        [energy["site"], energy["period"]],
        energy["energy_cost_usd"],
    )
    own = mwh[keep]
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, site_cost * own / np.where(total > 0, total, 1), 0)
    out["energy_usd"] = share * d
    out["cost_usd"] = out["chip_capex_usd"] + out["energy_usd"]
    out["margin_usd"] = out["revenue_usd"] - out["cost_usd"]
    return pd.DataFrame({c.name: out[c.name] for c in NET_REVENUE.columns})


def _usd(name: str, description: str) -> TableColumn:
    """Return a discounted USD column."""
    return col(name, F64, "USD", description + " Discounted.")


#: The net_revenue result table.
NET_REVENUE = ResultTable(
    "net_revenue",
    (
        CHIP,
        SITE,
        PERIOD,
        col("fleet_chips", F64, "chips", "Chips of the generation in service at the site."),
        col("served_h100e", F64, "H100e", "H100e the chips serve (after derate)."),
        col("billed_h100e", F64, "H100e", "Served H100e that earn the price (within demand)."),
        _usd("revenue_usd", "billed_h100e x the period's price."),
        _usd("chip_capex_usd", "Chip rent (capex / lifetime) x fleet_chips."),
        _usd("energy_usd", "The chips' share of the site's energy cost."),
        _usd("cost_usd", "chip_capex_usd + energy_usd."),
        _usd("margin_usd", "revenue_usd - cost_usd."),
    ),
    build=net_revenue,
)
