"""The power tables of one scenario, coded: upgrade and on-site options, PPAs, carbon.

Power becomes a decision when a dataset holds any of the optional tables
:data:`POWER_TABLES` (:func:`power_modelled`); :func:`power_data` codes them for the
power families of :mod:`optimizer.components.power`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from capacity.schema import period_index
from optimizer.components.scenario import ScenarioData
from optimizer.lp.builder import expand
from optimizer.lp.frames import column_values

POWER_TABLES = ("grid_upgrades", "onsite_generation", "ppas", "carbon_policy")
GRID = "grid"
#: Source-name prefix of a PPA (:func:`source_names`): its energy is priced at the contract.
PPA_PREFIX = "ppa:"


def _table(ds: Any, name: str) -> pd.DataFrame:
    try:
        return ds.table(name)
    except KeyError:
        return pd.DataFrame()


def power_modelled(ds: Any) -> bool:
    """Tell whether the dataset holds a power table with rows (power is then a decision)."""
    return any(len(_table(ds, t)) for t in POWER_TABLES)


def source_names(ds: Any) -> tuple[str, ...]:
    """Power source names of a dataset: ``grid``, ``upgrade:``, ``onsite:``, ``ppa:`` IDs."""
    names: dict[str, None] = {GRID: None}
    for table, col, prefix in (
        ("grid_upgrades", "option", "upgrade:"),
        ("onsite_generation", "technology", "onsite:"),
        ("ppas", "contract", PPA_PREFIX),
    ):
        for v in _table(ds, table).get(col, pd.Series([], dtype=object)).astype(str):
            names.setdefault(prefix + v, None)
    return tuple(names)


@dataclass
class PowerData:
    """One scenario's power tables, coded (``s`` site, ``o`` source, ``t`` period)."""

    upgrades: pd.DataFrame  # s, o, cost, lead, per_period, total, life
    onsite: pd.DataFrame  # s, o, capex, fixed, var_cost, carbon, lead, avail, max_mw, init, life,
    #                       bridge (bool), salvage (USD/MW), storage (hours; > 0: a battery)
    ppa: pd.DataFrame  # o, s, t, firm, price, carbon, mwh_cap (per contract and period)
    carbon_price: np.ndarray  # (T,) USD/t
    period_caps: pd.DataFrame  # t, cap
    horizon_cap: float


def _coded(scenario: ScenarioData, names: pd.Series, prefix: str) -> np.ndarray:
    lookup = pd.Index(list(scenario.source_names))
    return lookup.get_indexer((prefix + names.astype(str)).to_numpy()).astype(np.int64)


def _site_codes(scenario: ScenarioData, names: pd.Series) -> np.ndarray:
    lookup = pd.Index(scenario.sites["site"].astype(str).to_numpy())
    codes = scenario.sites.index.to_numpy()
    pos = lookup.get_indexer(names.astype(str).to_numpy())
    return np.where(pos >= 0, codes[np.maximum(pos, 0)], -1).astype(np.int64)


def _positions(scenario: ScenarioData, labels: pd.Series) -> np.ndarray:

    p0 = period_index(scenario.dataset.periods[0])
    return np.array([period_index(str(x)) - p0 for x in labels], dtype=np.int64)


def _to_periods(ppas: pd.DataFrame, last: str) -> pd.Series:
    """Return each step's last period (the horizon's last where empty)."""
    text = ppas["to_period"].astype(str)
    return text.where(text.str.match(r"^\d{4}Q[1-4]$"), last)


def _ppa_periods(scenario: ScenarioData, ppas: pd.DataFrame) -> pd.DataFrame:
    """Contract steps expanded to (o, s, t) with the MWh each period allows."""
    cols = ["o", "s", "t", "firm", "price", "carbon", "mwh_cap"]
    if ppas.empty:
        return pd.DataFrame({c: pd.Series([], dtype=float) for c in cols}).astype(
            {"o": np.int64, "s": np.int64, "t": np.int64, "firm": bool}
        )
    T = scenario.n_periods
    st = pd.DataFrame(
        {
            "o": _coded(scenario, ppas["contract"], PPA_PREFIX),
            "t0": _positions(scenario, ppas["from_period"]),
            "t1": _positions(scenario, _to_periods(ppas, scenario.dataset.periods[-1])),
            "site": ppas["site"].astype(str).to_numpy(),
            "region": ppas["region"].astype(str).to_numpy(),
            "firm": (ppas["firm"].astype(str) == "yes").to_numpy(),
            "price": column_values(ppas, "price_usd_per_mwh", dtype=float),
            "carbon": column_values(ppas, "carbon_t_per_mwh", dtype=float),
            "mw": column_values(ppas, "mw", dtype=float)
            * column_values(ppas, "availability", dtype=float),
        }
    )
    t0 = np.maximum(column_values(st, "t0"), 0)
    t1 = np.minimum(column_values(st, "t1"), T - 1)
    per = expand(st, t0, t1 - t0 + 1, "t")
    per["mwh_cap"] = column_values(per, "mw") * scenario.hours[column_values(per, "t")]
    sites = pd.DataFrame(
        {
            "s": scenario.sites.index.to_numpy(dtype=np.int64),
            "site_name": scenario.sites["site"].astype(str).to_numpy(),
            "site_region": scenario.sites["region"].astype(str).to_numpy(),
        }
    )
    m = per.merge(sites, how="cross")
    named = m["site"].isin(["", "nan", "None"])
    ok = np.where(named, m["region"] == m["site_region"], m["site"] == m["site_name"])
    return m[ok][cols].reset_index(drop=True)


def _upgrade_options(scenario: ScenarioData) -> pd.DataFrame:
    """Grid upgrade options: ``s, o, cost, lead, per_period, total, life``."""
    up = _table(scenario.dataset, "grid_upgrades")
    upgrades = pd.DataFrame(
        {
            "s": _site_codes(scenario, up.get("site", pd.Series([], dtype=object))),
            "o": _coded(scenario, up.get("option", pd.Series([], dtype=object)), "upgrade:"),
        }
    )
    if len(up):
        upgrades["cost"] = column_values(up, "cost_usd_per_mw", dtype=float)
        upgrades["lead"] = column_values(up, "lead_periods", dtype=np.int64)
        upgrades["per_period"] = column_values(up, "max_mw_per_period", dtype=float)
        upgrades["total"] = column_values(up, "max_mw_total", dtype=float)
        upgrades["life"] = column_values(up, "lifetime_periods", dtype=np.int64)
    return _with_columns(upgrades, ("cost", "lead", "per_period", "total", "life"))


def _onsite_options(scenario: ScenarioData) -> pd.DataFrame:
    """On-site generation options: ``s, o, capex, fixed, var_cost, carbon, lead, ...``."""
    g = _table(scenario.dataset, "onsite_generation")
    onsite = pd.DataFrame(
        {
            "s": _site_codes(scenario, g.get("site", pd.Series([], dtype=object))),
            "o": _coded(scenario, g.get("technology", pd.Series([], dtype=object)), "onsite:"),
        }
    )
    if len(g):
        onsite["capex"] = column_values(g, "capex_usd_per_mw", dtype=float)
        onsite["fixed"] = column_values(g, "fixed_cost_usd_per_mw_year", dtype=float)
        onsite["var_cost"] = column_values(g, "variable_cost_usd_per_mwh", dtype=float) + g[
            "fuel_price_usd_per_mmbtu"
        ].to_numpy(dtype=float) * column_values(g, "heat_rate_mmbtu_per_mwh", dtype=float)
        onsite["carbon"] = column_values(g, "carbon_t_per_mwh", dtype=float)
        onsite["lead"] = column_values(g, "lead_periods", dtype=np.int64)
        onsite["avail"] = column_values(g, "availability", dtype=float)
        onsite["max_mw"] = column_values(g, "max_mw", dtype=float)
        onsite["init"] = column_values(g, "initial_mw", dtype=float)
        onsite["life"] = column_values(g, "lifetime_periods", dtype=np.int64)
        onsite["bridge"] = _column(g, "bridge", "no").astype(str).eq("yes").to_numpy()
        onsite["salvage"] = _column(g, "salvage_usd_per_mw", 0.0).to_numpy(dtype=float)
        onsite["storage"] = _column(g, "storage_hours", 0.0).to_numpy(dtype=float)
    names = ("capex", "fixed", "var_cost", "carbon", "lead", "avail", "max_mw", "init", "life")
    onsite = _with_columns(onsite, (*names, "salvage", "storage"))
    if "bridge" not in onsite:
        onsite["bridge"] = pd.Series([], dtype=bool)
    return onsite


def _column(frame: pd.DataFrame, name: str, default: Any) -> pd.Series:
    """Column ``name`` of ``frame``, or ``default`` on every row when the table lacks it."""
    if name in frame:
        return frame[name]
    return pd.Series([default] * len(frame), index=frame.index)


def _with_columns(frame: pd.DataFrame, names: tuple[str, ...]) -> pd.DataFrame:
    """Add the empty columns an option table without rows lacks (ints: lead, life)."""
    for name in names:
        if name not in frame:
            dtype = np.int64 if name in ("lead", "life") else float
            frame[name] = pd.Series([], dtype=dtype)
    return frame


def _carbon_policy(scenario: ScenarioData) -> tuple[np.ndarray, pd.DataFrame, float]:
    """Carbon price per period, caps per period (``t, cap``) and the horizon cap."""
    cp = _table(scenario.dataset, "carbon_policy")
    T = scenario.n_periods
    price = np.zeros(T)
    caps = pd.DataFrame({"t": pd.Series([], dtype=np.int64), "cap": pd.Series([], dtype=float)})
    horizon_cap = float("nan")
    if len(cp):
        blank = cp["period"].astype(str).isin(["", "nan", "None"]).to_numpy()
        for _, row in cp[blank].iterrows():
            price[:] = float(row["carbon_price_usd_per_t"])
            horizon_cap = float(row["carbon_cap_t"])
        rows = cp[~blank]
        t = _positions(scenario, rows["period"])
        inside = (t >= 0) & (t < T)
        price[t[inside]] = column_values(rows, "carbon_price_usd_per_t", dtype=float)[inside]
        cap = column_values(rows, "carbon_cap_t", dtype=float)[inside]
        caps = pd.DataFrame({"t": t[inside], "cap": cap})
        caps = caps[np.isfinite(column_values(caps, "cap"))].reset_index(drop=True)
    return price, caps, horizon_cap


def power_data(scenario: ScenarioData) -> PowerData:
    """Code the power tables of one scenario (see the module docstring)."""
    upgrades, onsite = _upgrade_options(scenario), _onsite_options(scenario)
    price, caps, horizon_cap = _carbon_policy(scenario)
    ppa = _ppa_periods(scenario, _table(scenario.dataset, "ppas"))
    return PowerData(upgrades, onsite, ppa, price, caps, horizon_cap)
