"""Flexible interconnection: grid MW energised earlier for curtailable hours.

A utility can connect a large load before its network upgrade is finished if the site
accepts being cut in a share of hours (Duke University, 2025: 76-126 GW of US headroom at
0.25-1 % curtailment). A ``flexible_interconnection`` row offers this on a grid upgrade
option: MW requested in decision period d are energised at d + flexible_lead instead of
d + lead, and until d + lead they may be curtailed in ``curtailment_share`` (c) of the
hours; from d + lead they are firm. The plan decides per site and option how many MW to
take this way (``flexible_upgrade[s,o,d]``) besides the normal request.

The quarterly approximation
---------------------------
A period is not resolved into hours. In the window d + flexible_lead <= p < d + lead:

* the flexible MW add 1 MW each to the site's facility power (``site_grid``: in the
  hours that are not curtailed the whole MW is there, and a period's peak is what
  ``site_grid`` bounds);
* the energy the grid delivers through them is at most (1 - c) x MW x hours
  (``grid_energy``): the curtailed MWh, c x MW x hours, are never delivered, so the
  plan serves less load on average (the assignments that draw the energy shrink);
* the curtailed load is training paused at a checkpoint: each curtailed MWh costs
  ``checkpoint_cost_usd_per_mwh`` (term ``curtailment``);
* inference is not curtailed below its SLA share (family
  ``flexible_inference_sla``, per site and period): a x inference facility MW[s,p]
  <= the site's firm supply (granted grid, firm upgrades, on-site and bridge
  availability x MW, firm PPAs, flexible MW past their normal lead), where a =
  ``inference_sla_share`` and inference facility MW = sum of inference chips at work
  x it_kw / 1000 x PUE. Flexible MW inside their window are not firm.

Rent (``grid_upgrade`` term) is cost_usd_per_mw / lifetime_periods per MW and period
from d + flexible_lead, as for a normal request; flexible MW share the option's
request limits (``grid_upgrade_rate``, ``grid_upgrade_total``) and draw on the
equipment order books at their flexible online period. The offer is taken exactly
when the value of the earlier quarters' MW (served demand, avoided bridge) exceeds
the checkpoint cost of the curtailed MWh plus the earlier rent.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.plan_context import once_per_plan
from optimizer.components.power_inputs import PowerData
from optimizer.components.scenario import ScenarioColumns, ScenarioData
from optimizer.lp.builder import ModelBuilder, expand
from optimizer.lp.frames import column_values, indexed
from optimizer.lp.join import merge

__all__ = [
    "add_flexible_columns",
    "flexible_mw",
    "flexible_energy_terms",
    "flexible_options",
    "flexible_supply_terms",
]


def _empty(*names: str) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series([], dtype=np.int64) for c in names})


def flexible_options(scenario: ScenarioData, pw: PowerData) -> pd.DataFrame:
    """Coded offers: ``s, o, flex_lead, lead, share, checkpoint, sla, cost, life``."""
    try:
        fx = scenario.dataset.table("flexible_interconnection")
    except KeyError:
        fx = pd.DataFrame()
    cols = ("s", "o", "flex_lead", "lead", "share", "checkpoint", "sla", "cost", "life")
    if fx.empty or pw.upgrades.empty:
        return _empty(*cols)
    sites = pd.Index(scenario.sites["site"].astype(str).to_numpy())
    names = pd.Index(list(scenario.source_names))
    coded = pd.DataFrame(
        {
            "s": scenario.sites.index.to_numpy()[sites.get_indexer(fx["site"].astype(str))],
            "o": names.get_indexer(("upgrade:" + fx["option"].astype(str)).to_numpy()),
            "flex_lead": column_values(fx, "flexible_lead_periods", dtype=np.int64),
            "share": column_values(fx, "curtailment_share", dtype=float),
            "checkpoint": column_values(fx, "checkpoint_cost_usd_per_mwh", dtype=float),
            "sla": column_values(fx, "inference_sla_share", dtype=float),
        }
    )
    return merge(coded, pw.upgrades[["s", "o", "lead", "cost", "life"]], ["s", "o"])


def add_flexible_columns(
    builder: ModelBuilder, columns: ScenarioColumns, pw: PowerData
) -> pd.DataFrame:
    """Add ``flexible_upgrade[s,o,d]`` for decisions energised inside the horizon.

    The frame (``s, o, t, col, flex_lead, lead, share, checkpoint, sla, cost, life``)
    goes to ``columns.power["flexible_upgrade"]``.
    """
    scenario = columns.scenario
    T = scenario.n_periods
    fx = flexible_options(scenario, pw)
    if fx.empty:
        keys = _empty("s", "o", "t")
    else:
        count = np.maximum(T - column_values(fx, "flex_lead"), 0)
        keys = expand(fx[["s", "o"]], np.zeros(len(fx), dtype=np.int64), count, "t")
        keys = keys.astype(np.int64)
    cols = builder.add_vars("flexible_upgrade", scenario.index, keys)
    frame = merge(keys.assign(col=cols), fx, ["s", "o"]) if len(fx) else keys.assign(col=cols)
    columns.power["flexible_upgrade"] = frame
    _add_costs(builder, columns, frame)
    return frame


def _online(frame: pd.DataFrame, n_periods: int) -> pd.DataFrame:
    """Pairs (s, o, t, col, window) of flexible MW energised in t; window: still curtailable."""
    if frame.empty:
        return _empty("s", "o", "t", "col").assign(window=pd.Series([], dtype=bool))
    start = column_values(frame, "t") + column_values(frame, "flex_lead")
    keep = frame.assign(t_var=column_values(frame, "t"), firm_from=frame["t"] + frame["lead"])
    on = expand(keep.drop(columns="t"), start, n_periods - start, "t")
    return on.assign(window=(on["t"] < on["firm_from"]).to_numpy())


def _add_costs(builder: ModelBuilder, columns: ScenarioColumns, frame: pd.DataFrame) -> None:
    """Rent per online period inside the life; checkpoint cost per curtailed MWh."""
    scenario = columns.scenario
    if frame.empty:
        return
    i, T, hours = scenario.index, scenario.n_periods, scenario.hours
    on = _online(frame, T)
    life = on["t"] < on["t_var"] + on["flex_lead"] + on["life"]
    rent = on[life]
    builder.add_cost(i, "grid_upgrade", rent["col"], rent["t"], rent["cost"] / rent["life"])
    w = on[column_values(on, "window")]
    curtailed = column_values(w, "share") * hours[column_values(w, "t")]
    builder.add_cost(i, "curtailment", w["col"], w["t"], curtailed * column_values(w, "checkpoint"))


def flexible_supply_terms(power: dict[str, Any], n_periods: int, *, firm: bool) -> pd.DataFrame:
    """Facility MW per flexible column and period: ``s, t, col, mw`` (1 MW per MW online).

    With ``firm`` only the periods past the normal lead (the firm supply of the
    inference SLA).
    """
    frame = power.get("flexible_upgrade")
    if frame is None or frame.empty:
        return pd.DataFrame({"s": [], "t": [], "col": [], "mw": []}).astype(
            {"s": np.int64, "t": np.int64, "col": np.int64}
        )
    on = _online(frame, n_periods)
    if firm:
        on = on[~column_values(on, "window")]
    return on[["s", "t", "col"]].assign(mw=1.0)


def flexible_energy_terms(power: dict[str, Any], scenario: ScenarioData) -> pd.DataFrame:
    """Grid MWh per flexible column and period: ``s, t, col, mwh`` ((1 - c) x hours in window)."""
    frame = power.get("flexible_upgrade")
    if frame is None or frame.empty:
        return pd.DataFrame({"s": [], "t": [], "col": [], "mwh": []}).astype(
            {"s": np.int64, "t": np.int64, "col": np.int64}
        )
    on = _online(frame, scenario.n_periods)
    h = scenario.hours[column_values(on, "t")]
    share = np.where(column_values(on, "window"), column_values(on, "share"), 0.0)
    return on[["s", "t", "col"]].assign(mwh=(1.0 - share) * h)


# ----------------------------------------------------------------------------- checker side
def _offers(ds: Any) -> pd.DataFrame:
    fx = ds.table("flexible_interconnection").copy()
    fx["source"] = "upgrade:" + fx["option"].astype(str)
    up = ds.table("grid_upgrades").copy()
    up["source"] = "upgrade:" + up["option"].astype(str)
    cols = ["site", "source", "lead_periods", "cost_usd_per_mw", "lifetime_periods"]
    return merge(fx, up[cols], ["site", "source"])


def flexible_mw(inputs: Any) -> pd.DataFrame:
    """Flexible MW per (site, source, decision, period) recomputed from the decisions.

    Returns
    -------
    DataFrame
        ``site, source, decision_period, period, mw, window`` (bool: still curtailable),
        ``energy_mw`` (MW the grid delivers on average: (1 - c) x MW in the window,
        MW after), ``curtailed_mwh`` (c x MW x hours in the window), ``sla``,
        ``checkpoint_cost_usd_per_mwh``; periods from the flexible online period on. Once per plan.
    """
    return once_per_plan(inputs, "flexible_mw", lambda: _flexible_mw(inputs))


def _flexible_mw(inputs: Any) -> pd.DataFrame:
    """Compute :func:`flexible_mw`."""
    periods = list(inputs.periods)
    f = inputs.frames.get("flexible_upgrade")
    names = ["site", "source", "decision_period", "period", "mw", "window", "energy_mw"]
    if f is None or f.empty:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in names})
    d = merge(f[f["value"].abs() > 0], _offers(inputs.dataset), ["site", "source"])
    pos = {p: i for i, p in enumerate(periods)}
    t0 = d["period"].map(pos).to_numpy(dtype=np.int64)
    d = d.assign(t_on=t0 + d["flexible_lead_periods"], t_firm=t0 + d["lead_periods"])
    d = d.rename(columns={"period": "decision_period"})
    grid = pd.DataFrame({"period": periods, "t": np.arange(len(periods))})
    m = d.merge(grid, how="cross")
    m = m[m["t"] >= m["t_on"]].copy()
    hours = indexed(inputs.dataset.table("periods"), "period")["hours"]
    m["mw"] = m["value"]
    m["window"] = (m["t"] < m["t_firm"]).to_numpy()
    share = np.where(m["window"], m["curtailment_share"], 0.0)
    m["energy_mw"] = m["mw"] * (1.0 - share)
    m["curtailed_mwh"] = m["mw"] * share * hours.reindex(m["period"]).to_numpy(dtype=float)
    m["sla"] = m["inference_sla_share"]
    keep = [*names, "curtailed_mwh", "sla", "checkpoint_cost_usd_per_mwh"]
    return m[keep].reset_index(drop=True)
