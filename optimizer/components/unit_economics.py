"""The unit_economics table: delivered cost per H100e-hour by chip generation and workload.

Per (chip, workload, period), undiscounted, from the plan's fleet, assignment and
energy tables:

* ``served_h100e_hours`` = sum over sites and customers of assigned H100e (after the
  customer's derate) x the period's hours;
* ``chip_capex_usd`` = the chip's rent (``capex_usd_per_chip / lifetime_periods``, as
  the ``chip_capex`` cost term) x its whole fleet in the period, shared among its
  workloads by assigned chips (idle chips' rent is carried by the work they stand by for).
  The initial fleet pays rent here too: its capex is sunk in the objective, but a unit
  cost that called old chips free would not compare generations on one basis;
* ``energy_usd`` = IT MWh of the assigned chips (IT MW x the workload's power factor x
  hours) x the site's energy cost per IT MWh in the period (``energy_cost_usd /
  it_mwh`` of the energy table: PUE and price included);
* ``cost_usd_per_h100e_hour`` = (chip_capex_usd + energy_usd) / served_h100e_hours.

Site build capex (power and cooling halls), power decisions and penalties are not
attributed to chips here (the costs table holds them); so this is the chips' own delivered
cost, comparable across generations (Trainium2/3 against H100/B200/GB200) on one basis.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from optimizer.components.component import ResultTable
from optimizer.components.plan_context import PlanContext
from optimizer.components.table_columns import F64, PERIOD, STR, WORKLOAD, col

__all__ = ["UNIT_ECONOMICS", "unit_economics"]

_KEYS = ["chip", "workload", "period"]


def unit_economics(ctx: PlanContext) -> pd.DataFrame:
    """Build unit_economics: served H100e-hours, chip capex and energy per (chip, workload, period).

    Parameters
    ----------
    ctx : PlanContext
        One scenario's plan (its ``assignment``, ``fleet`` and ``energy`` tables).

    Returns
    -------
    DataFrame
        ``chip, workload, period, served_h100e_hours, chip_capex_usd, energy_usd,
        cost_usd, cost_usd_per_h100e_hour`` (USD undiscounted; one row per chip,
        workload and period with assigned chips).
    """
    a = ctx.table("assignment")
    a = a[a["chips"].to_numpy(dtype=float) > 0]
    if a.empty:
        return pd.DataFrame({c.name: pd.Series([], dtype=object) for c in UNIT_ECONOMICS.columns})
    hours = ctx.dataset.table("periods").set_index("period")["hours"]
    h = hours.reindex(a["period"]).to_numpy(dtype=float)
    pf = ctx.dataset.table("workloads").set_index("workload")["power_factor"]
    it_mwh = a["it_mw"].to_numpy(dtype=float) * pf.reindex(a["workload"]).to_numpy(dtype=float) * h
    en = ctx.table("energy").groupby(["site", "period"])[["energy_cost_usd", "it_mwh"]].sum()
    rate = (en["energy_cost_usd"] / en["it_mwh"].where(en["it_mwh"] > 0)).fillna(0.0)
    at = pd.MultiIndex.from_arrays([a["site"], a["period"]])
    usd_per_mwh = rate.reindex(at).fillna(0.0).to_numpy(dtype=float)
    work = pd.DataFrame(
        {
            "chip": a["chip"].to_numpy(),
            "workload": a["workload"].to_numpy(),
            "period": a["period"].to_numpy(),
            "chips": a["chips"].to_numpy(dtype=float),
            "served_h100e_hours": a["h100e"].to_numpy(dtype=float) * h,
            "energy_usd": it_mwh * usd_per_mwh,
        }
    )
    out = work.groupby(_KEYS, as_index=False, sort=True).sum()
    fleet = ctx.table("fleet").groupby(["chip", "period"])["fleet_chips"].sum()
    chips = ctx.chips
    rent = chips["capex_usd_per_chip"].astype(float) / chips["lifetime_periods"].astype(float)
    assigned = out.groupby(["chip", "period"])["chips"].transform("sum").to_numpy()
    cp = pd.MultiIndex.from_arrays([out["chip"], out["period"]])
    whole = fleet.reindex(cp).fillna(0.0).to_numpy(dtype=float)
    share = out["chips"].to_numpy() / assigned
    out["chip_capex_usd"] = rent.reindex(out["chip"]).to_numpy(dtype=float) * whole * share
    out["cost_usd"] = out["chip_capex_usd"] + out["energy_usd"]
    served = out["served_h100e_hours"].to_numpy()
    out["cost_usd_per_h100e_hour"] = np.where(
        served > 0, out["cost_usd"] / np.where(served > 0, served, 1.0), np.nan
    )
    return out[[c.name for c in UNIT_ECONOMICS.columns]]


#: The unit_economics result table.
UNIT_ECONOMICS = ResultTable(
    "unit_economics",
    (
        col("chip", STR, "", "Chip generation ID."),
        WORKLOAD,
        PERIOD,
        col(
            "served_h100e_hours",
            F64,
            "H100e·h",
            "Assigned H100e (after derate) x the period's hours.",
        ),
        col(
            "chip_capex_usd",
            F64,
            "USD",
            "Chip rent (capex / lifetime) of the generation's whole fleet (initial fleet "
            "included), shared by assigned chips; undiscounted.",
        ),
        col(
            "energy_usd",
            F64,
            "USD",
            "IT MWh of the assigned chips x the site's energy cost per IT MWh; undiscounted.",
        ),
        col("cost_usd", F64, "USD", "chip_capex_usd + energy_usd (site build capex excluded)."),
        col(
            "cost_usd_per_h100e_hour",
            F64,
            "USD/(H100e·h)",
            "Delivered cost per H100e-hour: cost_usd / served_h100e_hours.",
        ),
    ),
    build=unit_economics,
)
