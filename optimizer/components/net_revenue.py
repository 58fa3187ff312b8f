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

__all__ = ["NET_REVENUE", "net_revenue"]

_KEYS = ["chip", "site", "period"]


def _billed_share(ctx: PlanContext, a: pd.DataFrame) -> np.ndarray:
    """Return billed / served H100e of each assignment row's (customer, workload, period), <= 1."""
    keys = ["customer", "workload", "period"]
    billed = ctx.table("customer_revenue").groupby(keys)["billed_h100e"].sum()
    served = a.groupby(keys)["h100e"].sum()
    share = (billed.reindex(served.index).fillna(0.0) / served.where(served > 0)).clip(upper=1.0)
    at = pd.MultiIndex.from_frame(a[keys])
    return share.reindex(at).fillna(0.0).to_numpy(dtype=float)


def _chip_mwh(ctx: PlanContext, a: pd.DataFrame, fleet: pd.DataFrame) -> pd.Series:
    """Return IT MWh per (chip, site, period): busy at the power factor, idle at idle."""
    hours = ctx.dataset.table("periods").set_index("period")["hours"]
    pf = ctx.dataset.table("workloads").set_index("workload")["power_factor"]
    busy = a["it_mw"] * pf.reindex(a["workload"]).to_numpy(dtype=float)
    busy = busy * hours.reindex(a["period"]).to_numpy(dtype=float)
    chips = ctx.chips
    idle_mw = (
        fleet["idle_chips"].to_numpy(dtype=float)
        * chips["it_kw_per_chip"].reindex(fleet["chip"]).to_numpy(dtype=float)
        / 1e3
        * chips["idle_power_factor"].reindex(fleet["chip"]).to_numpy(dtype=float)
    )
    idle = pd.Series(idle_mw * hours.reindex(fleet["period"]).to_numpy(dtype=float))
    parts = [
        pd.DataFrame({**{k: a[k].to_numpy() for k in _KEYS}, "mwh": busy.to_numpy()}),
        pd.DataFrame({**{k: fleet[k].to_numpy() for k in _KEYS}, "mwh": idle.to_numpy()}),
    ]
    return pd.concat(parts, ignore_index=True).groupby(_KEYS)["mwh"].sum()


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
        chip, site and period with chips in service or at work.
    """
    a = ctx.table("assignment")
    fleet = ctx.table("fleet")
    disc = ctx.dataset.table("periods").set_index("period")["discount_factor"]
    price = period_prices(ctx.dataset, a["customer"], a["workload"], a["period"])
    billed = a["h100e"].to_numpy(dtype=float) * _billed_share(ctx, a)
    d_a = disc.reindex(a["period"]).to_numpy(dtype=float)
    work = pd.DataFrame(
        {
            **{k: a[k].to_numpy() for k in _KEYS},
            "served_h100e": a["h100e"].to_numpy(dtype=float),
            "billed_h100e": billed,
            "revenue_usd": billed * price * d_a,
        }
    )
    out = work.groupby(_KEYS).sum()
    fl = fleet.groupby(_KEYS)["fleet_chips"].sum()
    index = out.index.union(fl[fl > 0].index)
    out = out.reindex(index).fillna(0.0)
    out["fleet_chips"] = fl.reindex(index).fillna(0.0)
    out = out.reset_index()
    d = disc.reindex(out["period"]).to_numpy(dtype=float)
    chips = ctx.chips
    rent = chips["capex_usd_per_chip"].astype(float) / chips["lifetime_periods"].astype(float)
    out["chip_capex_usd"] = rent.reindex(out["chip"]).to_numpy(dtype=float) * out["fleet_chips"] * d
    mwh = _chip_mwh(ctx, a, fleet)
    at = pd.MultiIndex.from_frame(out[_KEYS])
    own = mwh.reindex(at).fillna(0.0).to_numpy(dtype=float)
    site_mwh = mwh.groupby(level=["site", "period"]).sum()
    sp = pd.MultiIndex.from_frame(out[["site", "period"]])
    total = site_mwh.reindex(sp).fillna(0.0).to_numpy(dtype=float)
    cost = ctx.table("energy").groupby(["site", "period"])["energy_cost_usd"].sum()
    site_cost = cost.reindex(sp).fillna(0.0).to_numpy(dtype=float)
    out["energy_usd"] = np.where(total > 0, site_cost * own / np.where(total > 0, total, 1), 0) * d
    out["cost_usd"] = out["chip_capex_usd"] + out["energy_usd"]
    out["margin_usd"] = out["revenue_usd"] - out["cost_usd"]
    return out[[c.name for c in NET_REVENUE.columns]]


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
