"""The summary's section frames, computed from a plan's result tables (pure; no I/O).

Demand served, chips by generation, commitments, costs, energy totals, the horizon's
periods, training-cluster runs and the calibration rows; a missing or malformed table
counts as empty.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "TOL",
    "as_frame",
    "calibration_frame",
    "chips_frame",
    "cluster_runs",
    "cluster_spans",
    "commitments_frame",
    "costs_frame",
    "energy_totals",
    "max_shortfall_mw",
    "periods_in",
    "served_frame",
    "table_or_empty",
]

#: Amounts at most this small count as zero (chips, breaches, shadow prices).
TOL = 1e-6


def table_or_empty(
    tables: Mapping[str, pd.DataFrame], name: str, columns: list[str]
) -> pd.DataFrame:
    """Return a result table, or an empty frame of ``columns`` when it is missing or lacks one.

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        The plan's result tables.
    name : str
        The table wanted.
    columns : list of str
        Columns the caller reads.

    Returns
    -------
    pandas.DataFrame
        The table as it is, or an empty frame with ``columns``.
    """
    df = tables.get(name)
    if df is None or not all(c in df.columns for c in columns):
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    return df


def as_frame(value: Any) -> pd.DataFrame | None:
    """Return rows as a frame: a frame as it is, records or dataclasses as rows, None as None.

    Parameters
    ----------
    value : pandas.DataFrame, sequence of mappings or dataclasses, or None
        E.g. a result's ``violations``.

    Returns
    -------
    pandas.DataFrame or None
        The rows, or None when ``value`` is None.
    """
    if value is None:
        return None
    if isinstance(value, pd.DataFrame):
        return value
    rows = [v if isinstance(v, Mapping) else vars(v) for v in value]
    return pd.DataFrame(rows)


def served_frame(tables: Mapping[str, pd.DataFrame]) -> tuple[pd.DataFrame, float, int]:
    """Return demand served per customer and workload, the overall share and the periods.

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        The plan's result tables (``demand`` is read).

    Returns
    -------
    tuple of (pandas.DataFrame, float, int)
        ``customer, workload, demand_h100e, served_h100e, unmet_h100e`` (averages per
        period, H100e) and ``served_share``; served / demand over everything (NaN
        without demand); the number of periods of the demand table.
    """
    cols = ["customer", "workload", "period", "demand_h100e", "served_h100e", "unmet_h100e"]
    d = table_or_empty(tables, "demand", cols)
    n_periods = int(d["period"].nunique()) if len(d) else 0
    out_cols = ["customer", "workload", "demand_h100e", "served_h100e", "unmet_h100e"]
    if d.empty:
        return pd.DataFrame(columns=[*out_cols, "served_share"]), math.nan, 0
    g = (
        d.groupby(["customer", "workload"], sort=True)[
            ["demand_h100e", "served_h100e", "unmet_h100e"]
        ]
        .sum()
        .reset_index()
    )
    share = g["served_h100e"] / g["demand_h100e"].where(g["demand_h100e"] > 0)
    for c in ("demand_h100e", "served_h100e", "unmet_h100e"):
        g[c] = g[c] / n_periods
    g["served_share"] = share.astype(float)
    total_d = float(d["demand_h100e"].sum())
    total = float(d["served_h100e"].sum()) / total_d if total_d > 0 else math.nan
    return g, total, n_periods


def chips_frame(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Return chips by generation: installed over the horizon, fleet at the last period.

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        The plan's result tables (``fleet`` is read).

    Returns
    -------
    pandas.DataFrame
        ``chip, installed_chips, fleet_chips_end, assigned_chips_end, it_mw_end,
        fleet_chips_max`` (the largest fleet of any period); chips never in the fleet
        left out (an initial fleet retired before the end stays, with its end at 0);
        largest end fleet first.
    """
    cols = ["chip", "period", "installed_chips", "fleet_chips", "assigned_chips", "it_mw"]
    f = table_or_empty(tables, "fleet", cols)
    out_cols = [
        "chip",
        "installed_chips",
        "fleet_chips_end",
        "assigned_chips_end",
        "it_mw_end",
        "fleet_chips_max",
    ]
    if f.empty:
        return pd.DataFrame(columns=out_cols)
    last = max(f["period"])
    inst = f.groupby("chip")["installed_chips"].sum()
    peak = f.groupby(["chip", "period"])["fleet_chips"].sum().groupby(level="chip").max()
    end = f[f["period"] == last].groupby("chip")[["fleet_chips", "assigned_chips", "it_mw"]].sum()
    g = pd.DataFrame({"installed_chips": inst, "fleet_chips_max": peak})
    g = g.join(end, how="outer").fillna(0.0)
    g = g.rename(
        columns={
            "fleet_chips": "fleet_chips_end",
            "assigned_chips": "assigned_chips_end",
            "it_mw": "it_mw_end",
        }
    )
    g = g.reset_index().rename(columns={"index": "chip"})
    keep = (g["installed_chips"] > TOL) | (g["fleet_chips_max"] > TOL)
    g = g[keep].sort_values(["fleet_chips_end", "chip"], ascending=[False, True])
    return g[out_cols].reset_index(drop=True)


def commitments_frame(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Return each commitment (customer, family) with its breached periods and largest breach.

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        The plan's result tables (``commitments`` is read; rows with no floor dropped).

    Returns
    -------
    pandas.DataFrame
        ``customer, family, periods, breached_periods, max_breach_mw, min_it_mw, met,
        worst_period, worst_floor_mw``: ``min_it_mw`` is the highest floor of the
        horizon, ``worst_period`` the quarter of the largest breach and
        ``worst_floor_mw`` the floor in force then (a ramping floor: OpenAI's 352 MW
        breach in 2028Q1 is of the 1,500 MW floor of that quarter, not of the 2,000 MW
        it reaches later).
    """
    cols = ["customer", "family", "period", "min_it_mw", "breach_mw"]
    c = table_or_empty(tables, "commitments", cols)
    out_cols = [
        "customer",
        "family",
        "periods",
        "breached_periods",
        "max_breach_mw",
        "min_it_mw",
        "first_floor_mw",
        "met",
        "worst_period",
        "worst_floor_mw",
    ]
    if c.empty:
        return pd.DataFrame(columns=out_cols)
    c = c[c["min_it_mw"] > 0].copy()
    if c.empty:
        return pd.DataFrame(columns=out_cols)
    c["breached"] = c["breach_mw"] > TOL * c["min_it_mw"].clip(lower=1.0)
    g = (
        c.groupby(["customer", "family"], sort=True)
        .agg(
            periods=("period", "nunique"),
            breached_periods=("breached", "sum"),
            max_breach_mw=("breach_mw", "max"),
            min_it_mw=("min_it_mw", "max"),
            first_floor_mw=("min_it_mw", "min"),
        )
        .reset_index()
    )
    g["breached_periods"] = g["breached_periods"].astype(int)
    g["met"] = g["breached_periods"] == 0
    # the row of each commitment's largest breach (the first such quarter on a tie)
    worst = c.sort_values(["customer", "family", "breach_mw"], ascending=[True, True, False])
    worst = worst.drop_duplicates(["customer", "family"])[
        ["customer", "family", "period", "min_it_mw"]
    ].rename(columns={"period": "worst_period", "min_it_mw": "worst_floor_mw"})
    g = g.merge(worst, on=["customer", "family"], how="left")
    return g[out_cols]


def costs_frame(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Return the cost terms summed over the horizon.

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        The plan's result tables (``costs`` is read).

    Returns
    -------
    pandas.DataFrame
        ``term, cost_usd, undiscounted_cost_usd, cash_usd, cash_kind`` (cash 0 and
        kind ``none`` when the table has no cash columns), in the table's term order.
    """
    cols = ["term", "cost_usd", "undiscounted_cost_usd"]
    c = table_or_empty(tables, "costs", cols)
    if c.empty:
        return pd.DataFrame(columns=[*cols, "cash_usd", "cash_kind"])
    if "cash_usd" not in c:
        c = c.assign(cash_usd=0.0)
    if "cash_kind" not in c:
        c = c.assign(cash_kind="none")
    out = c.groupby("term", sort=False)[[*cols[1:], "cash_usd"]].sum().reset_index()
    kind = c.drop_duplicates("term").set_index("term")["cash_kind"].astype(str)
    return out.assign(cash_kind=out["term"].map(kind).to_numpy())


def energy_totals(tables: Mapping[str, pd.DataFrame]) -> tuple[float, float, float, float]:
    """Return facility TWh, IT TWh, million m3 of water and million t CO2 over the horizon.

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        The plan's result tables (``energy`` is read).

    Returns
    -------
    tuple of float
        ``(facility_twh, it_twh, water_million_m3, carbon_mt)``; zeros without energy.
    """
    e = table_or_empty(tables, "energy", ["it_mwh", "facility_mwh", "water_m3", "carbon_t"])
    return (
        float(e["facility_mwh"].sum()) / 1e6 if len(e) else 0.0,
        float(e["it_mwh"].sum()) / 1e6 if len(e) else 0.0,
        float(e["water_m3"].sum()) / 1e6 if len(e) else 0.0,
        float(e["carbon_t"].sum()) / 1e6 if len(e) else 0.0,
    )


def periods_in(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """Sorted periods found in the demand, build-out and fleet tables."""
    return sorted(
        {
            str(p)
            for name in ("demand", "build_out", "fleet")
            if name in tables and "period" in tables[name].columns
            for p in tables[name]["period"]
        }
    )


def max_shortfall_mw(commitments: pd.DataFrame) -> float:
    """Largest breach of a commitment that is not met (MW; 0 when all are met)."""
    if len(commitments) and not bool(commitments["met"].all()):
        return float(pd.to_numeric(commitments["max_breach_mw"]).max())
    return 0.0


def cluster_runs(tables: Mapping[str, pd.DataFrame], horizon: Sequence[str]) -> pd.DataFrame:
    """Cluster runs of customers with a rule (min size or max sites), else empty."""
    tc = as_frame(tables.get("training_clusters"))
    if tc is None or tc.empty:
        return pd.DataFrame()
    ruled = (tc["min_cluster_mw"] > 0) | (tc["min_cluster_h100e"] > 0) | (tc["max_sites"] > 0)
    return cluster_spans(tc[ruled.to_numpy()], list(horizon))


def cluster_spans(table: pd.DataFrame, periods: list[str] | tuple[str, ...]) -> pd.DataFrame:
    """Find the runs of consecutive periods in which a site hosts a customer's training.

    Parameters
    ----------
    table : DataFrame
        The ``training_clusters`` result table.
    periods : sequence of str
        Horizon quarters in order.

    Returns
    -------
    DataFrame
        ``customer, site, first_period, last_period, periods`` (run length, quarters),
        ``mean_it_mw`` and ``max_it_mw`` (MW over the run), ``meets_minimum`` (True
        when every period of the run meets the rule), ``periods_below`` (how many of
        its quarters do not: a 24-quarter run with one small first quarter is 1 of
        24); sorted by customer, first period.
    """
    cols = [
        "customer",
        "site",
        "first_period",
        "last_period",
        "periods",
        "mean_it_mw",
        "max_it_mw",
        "meets_minimum",
        "periods_below",
    ]
    if table.empty:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in cols})
    order = {p: i for i, p in enumerate(periods)}
    t = table.assign(_t=table["period"].map(order)).sort_values(["customer", "site", "_t"])
    new_run = (t.groupby(["customer", "site"])["_t"].diff() != 1).to_numpy()
    t["_run"] = np.cumsum(new_run)
    t["_below"] = ~t["meets_minimum"].astype(bool)
    g = t.groupby(["customer", "site", "_run"], as_index=False).agg(
        first=("_t", "min"),
        last=("_t", "max"),
        periods=("_t", "count"),
        mean_it_mw=("it_mw", "mean"),
        max_it_mw=("it_mw", "max"),
        meets_minimum=("meets_minimum", "all"),
        periods_below=("_below", "sum"),
    )
    g["periods_below"] = g["periods_below"].astype(int)
    per = np.asarray(list(periods), dtype=object)
    g["first_period"] = per[g["first"].to_numpy(dtype=np.int64)]
    g["last_period"] = per[g["last"].to_numpy(dtype=np.int64)]
    g = g.sort_values(["customer", "first", "site"]).reset_index(drop=True)
    return g[cols]


def calibration_frame(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Return the calibration table (empty frame without a public record).

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        The plan's result tables.

    Returns
    -------
    pandas.DataFrame
        The ``calibration`` rows as they are.
    """
    cal = as_frame(tables.get("calibration"))
    return pd.DataFrame() if cal is None else cal
