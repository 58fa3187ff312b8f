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

from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.component import ResultTable
from optimizer.components.plan_context import PlanContext
from optimizer.components.table_columns import F64, PERIOD, STR, WORKLOAD, col
from optimizer.lp.frames import column_values, indexed
from optimizer.lp.grouping import Groups, positions, sums_at, take

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
    a = a[column_values(a, "chips", dtype=float) > 0]
    if a.empty:
        return pd.DataFrame({c.name: pd.Series([], dtype=object) for c in UNIT_ECONOMICS.columns})
    periods = ctx.dataset.table("periods").set_index("period")
    pf = indexed(ctx.dataset.table("workloads"), "workload")["power_factor"]
    h = _at(periods["hours"], a["period"])
    it_mwh = column_values(a, "it_mw", dtype=float) * _at(pf, a["workload"]) * h
    en = ctx.table("energy")
    site_keys = ([a["site"], a["period"]], [en["site"], en["period"]])
    cost, mwh = (sums_at(*site_keys, en[c]) for c in ("energy_cost_usd", "it_mwh"))
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = cost / np.where(mwh > 0, mwh, np.nan)
    usd_per_mwh = np.where(np.isnan(rate), 0.0, rate)
    g = Groups([column_values(a, k) for k in _KEYS])
    out: dict[str, np.ndarray] = {k: g.key(i) for i, k in enumerate(_KEYS)}
    chips_g = g.sum(column_values(a, "chips", dtype=float))
    out["served_h100e_hours"] = g.sum(column_values(a, "h100e", dtype=float) * h)
    out["energy_usd"] = g.sum(it_mwh * usd_per_mwh)
    fleet = ctx.table("fleet")
    whole = sums_at(
        [out["chip"], out["period"]], [fleet["chip"], fleet["period"]], fleet["fleet_chips"]
    )
    by_chip_period = Groups([], coded=[g.coded(0), g.coded(2)])
    assigned = by_chip_period.sum(chips_g)[by_chip_period.ids]
    chips = ctx.chips
    rent = chips["capex_usd_per_chip"].astype(float) / chips["lifetime_periods"].astype(float)
    out["chip_capex_usd"] = _at(rent, out["chip"]) * whole * (chips_g / assigned)
    out["cost_usd"] = out["chip_capex_usd"] + out["energy_usd"]
    served = out["served_h100e_hours"]
    out["cost_usd_per_h100e_hour"] = np.where(
        served > 0, out["cost_usd"] / np.where(served > 0, served, 1.0), np.nan
    )
    return pd.DataFrame({c.name: out[c.name] for c in UNIT_ECONOMICS.columns})


def _at(values: pd.Series, keys: Any) -> np.ndarray:
    """``values.reindex(keys)`` as floats (NaN where a key is absent)."""
    return take(values.to_numpy(dtype=float), positions(values.index, keys))


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
