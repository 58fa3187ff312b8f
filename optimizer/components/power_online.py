"""MW online per site, source and period from dated power decisions, summed on codes.

A power decision (an upgrade, an on-site build: ``site, source, period, value`` MW)
energises ``lead_periods`` after its period, at ``t_on``, and counts in every later
period (its rent only until ``t_on + lifetime_periods``). The power tables and checks sum
the decisions per (site, source, period); this module does it on integer codes
(:mod:`optimizer.lp.grouping`), giving exactly the frame pandas gave them (its cross and
left merges, then a sorted ``groupby(...).sum()``): the same rows in the same order and
the same dtypes; the sums are Kahan sums in the merged rows' order
(:mod:`optimizer.lp.kahan`), equal to pandas' or, where pandas adds a group another way,
within the last bit. ``tests/test_power_online.py`` holds the pandas reference.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.lp.frames import column_values
from optimizer.lp.grouping import Groups, group_sum, left_pairs

__all__ = ["online_per_decision", "online_per_option"]


def _periods_column(periods: list[str]) -> Any:
    """Return the periods as the column pandas makes of them (its text dtype)."""
    return pd.DataFrame({"p": periods})["p"].array


def _column(frame: pd.DataFrame, name: str, rows: np.ndarray) -> Any:
    """Column ``name`` of ``frame`` at ``rows``, in the column's own dtype."""
    return frame[name].array.take(rows)


def online_per_option(
    options: pd.DataFrame, dec: pd.DataFrame, t_on: np.ndarray, periods: list[str]
) -> pd.DataFrame:
    """MW online per option row and period: its decisions energised by then, summed.

    Parameters
    ----------
    options : DataFrame
        ``site, source`` of each option (one row per option).
    dec : DataFrame
        Decisions with ``site, source, value`` (MW), each of some option (at least one
        decision; an option may have none).
    t_on : ndarray of int, shape (len(dec),)
        Position in ``periods`` from which each decision counts.
    periods : list of str
        The horizon.

    Returns
    -------
    DataFrame
        ``site, source, period, t, mw``, one row per option and period, sorted by
        site, source, period and position: what
        ``options.merge(periods, how="cross").merge(dec, how="left")`` with ``mw`` =
        value where ``t >= t_on`` (else 0) gives, grouped and summed.
    """
    n_t = len(periods)
    li, ri = left_pairs(
        [options["site"], options["source"]], [dec["site"], dec["source"]]
    )  # each option's decisions in their order (-1: none)
    # the merged rows: option by option, period by period, the option's decisions
    pair = np.repeat(np.arange(len(li)), n_t)
    t = np.tile(np.arange(n_t), len(li))
    order = np.lexsort((t, li[pair]))  # stable: decisions keep their order
    pair, t = pair[order], t[order]
    o, d = li[pair], ri[pair]
    value = column_values(dec, "value", dtype=float)
    has = d >= 0
    dd = np.where(has, d, 0)
    start = np.asarray(t_on, dtype=float)
    mw = np.where(
        has & (t >= (start[dd] if len(start) else 0)), value[dd] if len(value) else 0, 0.0
    )
    site, source = _column(options, "site", o), _column(options, "source", o)
    per = _periods_column(periods).take(t)
    g = Groups([site, source, per, t])
    firsts = _first_rows(g.ids, g.n)
    return pd.DataFrame(
        {
            "site": site.take(firsts),
            "source": source.take(firsts),
            "period": per.take(firsts),
            "t": t[firsts].astype(np.int64),
            "mw": group_sum(g.ids, mw, g.n),
        }
    )


def online_per_decision(d: pd.DataFrame, t_on: np.ndarray, periods: list[str]) -> pd.DataFrame:
    """MW online and their rent per (site, source, period) from decisions priced by option.

    Parameters
    ----------
    d : DataFrame
        Decisions merged with their option: ``site, source, value`` (MW),
        ``rent_per_mw`` (USD/MW per period), ``lifetime_periods``.
    t_on : ndarray, shape (len(d),)
        Position in ``periods`` from which each decision counts.
    periods : list of str
        The horizon.

    Returns
    -------
    DataFrame
        ``site, source, period, mw, rent``: per (site, source, period) present, sorted,
        the MW energised by then and the rent of those within their lifetime: what
        ``d.merge(periods, how="cross")`` then a sorted ``groupby(...).sum()`` gives.
    """
    n_t = len(periods)
    row = np.repeat(np.arange(len(d)), n_t)  # decision by decision, period by period
    t = np.tile(np.arange(n_t), len(d))
    start = np.asarray(t_on, dtype=float)[row]
    life = column_values(d, "lifetime_periods", dtype=float)[row]
    value = column_values(d, "value", dtype=float)[row]
    rent = value * column_values(d, "rent_per_mw", dtype=float)[row]
    alive = t >= start
    site, source = _column(d, "site", row), _column(d, "source", row)
    per = _periods_column(periods).take(t)
    g = Groups([site, source, per])
    firsts = _first_rows(g.ids, g.n)
    return pd.DataFrame(
        {
            "site": site.take(firsts),
            "source": source.take(firsts),
            "period": per.take(firsts),
            "mw": group_sum(g.ids, np.where(alive, value, 0.0), g.n),
            "rent": group_sum(g.ids, np.where(alive & (t < start + life), rent, 0.0), g.n),
        }
    )


def _first_rows(ids: np.ndarray, n: int) -> np.ndarray:
    """Return the first row of each group (groups numbered 0 .. n - 1)."""
    first = np.full(n, len(ids), dtype=np.int64)
    np.minimum.at(first, ids, np.arange(len(ids)))
    return first
