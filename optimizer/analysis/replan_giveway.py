"""Locks that give way: what the truth can deliver of decisions locked on a forecast.

A decision locked on a forecast (a chip order sized on forecast wafer, CoWoS or HBM
supply; an install or a hall on a forecast grid date) can exceed what the revealed data
allow. A planner is then never "infeasible": the supplier delivers short, the hall waits
unpowered. When the model with every lock fixed has no solution, each locked value
``v_i`` (chips or MW) becomes an upper bound and the truth delivers as much of the
locks as it can:

    maximise   sum_i d_i
    subject to every row of the model, 0 <= d_i <= v_i (locked decisions),
               every other column free in its own bounds, no cost

``d_i`` is what is delivered and ``v_i - d_i`` the shortfall (``delivered_short``, in
the decision's unit: chips for ``produce`` and ``install``, MW for the rest). The plan
is then solved for cost with the delivered values fixed.

A lock the truth can honour is never cut: raising its ``d_i`` to ``v_i`` touches no row
that binds, so every optimum delivers it in full (a lock delivered within the solver's
band, :data:`optimizer.analysis.replan.LOCK_BAND_ABS`, of its value is held at its value
exactly). Locks that compete for the same short supply (two chips on one wafer supply)
share the shortfall as the solver finds it; the total given up is the least possible.

Cost: the shortfall is not billed (the supplier bills what it delivers, construction
that cannot go ahead is not paid) and carries no penalty of its own. What it costs is
what it does to the plan: demand served later or not at all (at the customer's unmet
penalty), capacity bought later, which the realised plan prices on the truth and the
regret includes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["KIND_UNITS", "deliverable", "give_way_table", "shortfall_by_quarter"]

#: Unit of each lockable decision kind (column suffix of ``delivered_short_<kind>_<unit>``).
KIND_UNITS = {
    "build": "mw",
    "liquid": "mw",
    "retrofit": "mw",
    "produce": "chips",
    "install": "chips",
    "grid_upgrade": "mw",
    "onsite_build": "mw",
}


def deliverable(
    model: Any, locked: pd.DataFrame, lockable: pd.DataFrame, options: Any, band: Any
) -> pd.DataFrame | None:
    """Return ``locked`` with what the model's data can deliver of each lock.

    Parameters
    ----------
    model : PlanningModel
        The model the locks are applied to (their columns still free).
    locked : DataFrame
        ``kind, s, c, o, t, value`` (domain units), one row per lock.
    lockable : DataFrame
        The model's lockable columns: ``col, kind, s, c, o, t, scale``.
    options : SolveOptions
    band : callable
        ``band(v)``: the tolerance a lock of column value ``v`` is held to.

    Returns
    -------
    DataFrame or None
        ``locked`` with ``value`` the delivered value, ``locked_value`` the lock,
        ``delivered_short`` (>= 0; exactly 0 for a lock held in full); None when even
        a full give-way leaves the model without a solution.
    """
    from optimizer.plan.raw_solve import run_solver

    keys = ["kind", "s", "c", "o", "t"]
    cols = lockable.merge(locked.reset_index(drop=True).reset_index(), on=keys, how="inner")
    idx = cols["col"].to_numpy(dtype=np.int64)
    scale = cols["scale"].to_numpy(dtype=float)
    v = np.maximum(cols["value"].to_numpy(dtype=float), 0.0) / scale
    var = model.variables.copy()
    lb = var["lb"].to_numpy(dtype=float, copy=True)
    ub = var["ub"].to_numpy(dtype=float, copy=True)
    lb[idx], ub[idx] = 0.0, v
    weight = np.zeros(len(var))
    weight[idx] = -scale  # one per chip or MW delivered
    var["lb"], var["ub"], var["cost"] = lb, ub, weight
    raw = run_solver(replace(model, variables=var), options)
    if raw.x is None:
        return None
    got = np.clip(np.asarray(raw.x, dtype=float)[idx], 0.0, v)
    held = got >= v - band(v)
    d = np.where(held, v, got)
    out = locked.reset_index(drop=True).copy()
    out["locked_value"] = out["value"].astype(float)
    pos = cols["index"].to_numpy(dtype=np.int64)
    short = np.zeros(len(out))
    short[pos] = (v - d) * scale
    out["value"] = out["locked_value"] - short
    out["delivered_short"] = short
    return out


def give_way_table(held: pd.DataFrame | None, codes: Any, periods: Sequence[str]) -> pd.DataFrame:
    """Locks that gave way, with domain names (one row each).

    Returns
    -------
    DataFrame
        ``decided_in, kind, site, chip, option, period, unit, locked_value,
        delivered_value, delivered_short`` (chips or MW, as ``unit`` says).
    """
    cols = [
        "decided_in",
        "kind",
        "site",
        "chip",
        "option",
        "period",
        "unit",
        "locked_value",
        "delivered_value",
        "delivered_short",
    ]
    if held is None or held.empty:
        return pd.DataFrame(columns=cols)
    d = held[held["delivered_short"].to_numpy(dtype=float) > 0].copy()

    def names(dim: str) -> list[str]:
        ids = codes.get(dim, ())
        return [ids[int(i)] if int(i) >= 0 else "" for i in d[dim]]

    d["site"], d["chip"], d["option"] = names("s"), names("c"), names("o")
    d["period"] = [periods[int(t)] for t in d["t"]]
    d["unit"] = d["kind"].astype(str).map(KIND_UNITS)
    d["delivered_value"] = d["value"].astype(float)
    return d[cols].reset_index(drop=True)


def shortfall_by_quarter(give_way: pd.DataFrame, periods: Sequence[str]) -> pd.DataFrame:
    """Shortfall per quarter: ``period`` and ``delivered_short_<kind>_<unit>``.

    Every quarter of the horizon and every lockable kind has its row and column (zero
    where nothing gave way).
    """
    out = pd.DataFrame({"period": list(periods)})
    for kind, unit in KIND_UNITS.items():
        g = give_way[give_way["kind"].astype(str) == kind]
        per = g.groupby("period")["delivered_short"].sum()
        out[f"delivered_short_{kind}_{unit}"] = out["period"].map(per).fillna(0.0).astype(float)
    return out
