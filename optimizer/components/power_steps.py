"""PPA contract steps per horizon period: when each step of a power purchase agreement runs.

A PPA step is active in every horizon period from its ``from_period`` to its
``to_period`` (a blank ``to_period``: to the end of the horizon); :func:`ppa_steps`
works that out once for the power tables.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.cells import is_blank
from optimizer.lp.frames import rows_frame
from optimizer.lp.reuse_cache import cached_on_tables

__all__ = ["ppa_steps"]


def ppa_steps(ds: Any, periods: list[str]) -> pd.DataFrame:
    """Return one row per PPA step and horizon period it is active in.

    Parameters
    ----------
    ds : Dataset
    periods : list of str
        The horizon.

    Returns
    -------
    DataFrame
        ``step`` (row of the ``ppas`` table), ``source`` (``ppa:<contract>``), ``site``
        (the cell's text; blank: every site of the region), ``period``, ``mw``,
        ``availability``, ``firm`` (bool), ``price_usd_per_mwh``, ``carbon_t_per_mwh``;
        steps in table order, periods in horizon order. Made once while the ``ppas``
        table is the same object (:func:`optimizer.lp.reuse_cache.cached_on_tables`).
    """
    ppas = ds.table("ppas")
    return cached_on_tables(("ppa_steps", tuple(periods)), (ppas,), lambda: _steps(ppas, periods))


def _steps(ppas: pd.DataFrame, periods: list[str]) -> pd.DataFrame:
    """Compute :func:`ppa_steps` from the ``ppas`` table."""
    rows = []
    for j, (_, r) in enumerate(ppas.iterrows()):
        end = periods[-1] if is_blank(r["to_period"]) else str(r["to_period"])
        for p in periods:
            if str(r["from_period"]) <= p <= end:
                rows.append(
                    (
                        j,
                        "ppa:" + str(r["contract"]),
                        str(r["site"]),
                        p,
                        float(r["mw"]),
                        float(r["availability"]),
                        str(r["firm"]) == "yes",
                        float(r["price_usd_per_mwh"]),
                        float(r["carbon_t_per_mwh"]),
                    )
                )
    text = dict.fromkeys(("source", "site", "period"), object)
    numbers = dict.fromkeys(("mw", "availability"), float)
    prices = dict.fromkeys(("price_usd_per_mwh", "carbon_t_per_mwh"), float)
    return rows_frame(rows, {"step": np.int64, **text, **numbers, "firm": bool, **prices})
