"""Contract terms per period: the contract_terms table expanded over the horizon.

A contract row of ``contract_terms`` (customer, workload, from_period..to_period)
applies in each horizon period of its window. Its price in period ``p`` is::

    price[k,w,p] = price0 * (1 + escalator) ** (index(p) - index(from_period))

with ``price0`` the row's ``price_usd_per_h100e_period`` or, when blank, the customers
table's price of the workload. Outside every contract window the customers table's
price applies unescalated (spot). The dataset's validation keeps windows of one
customer's workload from overlapping (:mod:`capacity.contract_checks`), so a period
has at most one contract row.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from capacity.schema import period_index
from optimizer.components.cells import is_blank
from optimizer.lp.frames import column_values

__all__ = ["TERM_COLUMNS", "contract_periods", "holds_beyond_demand", "period_prices"]

#: Terms carried per contract period (besides the escalated price).
TERM_COLUMNS = (
    "take_or_pay_h100e",
    "reservation_h100e",
    "reservation_fee_usd_per_h100e_period",
    "sla_served_share",
    "sla_credit_usd_per_h100e",
)

_PRICE = {
    "training": "price_training_usd_per_h100e_period",
    "inference": "price_inference_usd_per_h100e_period",
}

_COLUMNS = [
    "row",
    "customer",
    "workload",
    "from_period",
    "period",
    "t",
    "price_usd_per_h100e_period",
]


def _terms(dataset: Any) -> pd.DataFrame:
    """Return the dataset's contract_terms table (empty when absent)."""
    try:
        return dataset.table("contract_terms")
    except KeyError:
        return pd.DataFrame()


#: The last expansions of :func:`contract_periods`: (contract_terms, customers, periods)
#: -> frame. The tables are held, so an identity match is the same data (a sweep's
#: cases share the tables they do not change).
_EXPANDED: list[tuple[tuple[Any, Any, tuple[str, ...]], pd.DataFrame]] = []
_EXPANDED_MAX = 4


def contract_periods(dataset: Any) -> pd.DataFrame:
    """Expand each contract row over the horizon periods of its window.

    The expansion reads ``contract_terms``, ``customers`` and the periods only; it is
    kept for the last few such inputs (compared by identity, the tables held) and each
    call returns its own shallow copy, so the cases of a sweep that change other tables
    expand the contracts once.

    Parameters
    ----------
    dataset : Dataset
        With ``periods``, ``customers`` and (optionally) ``contract_terms``.

    Returns
    -------
    DataFrame
        One row per contract row and period inside both the window and the horizon:
        ``row`` (position in contract_terms), ``customer, workload, from_period,
        period``, ``t`` (period position), ``price_usd_per_h100e_period`` (escalated,
        USD per H100e-quarter) and the :data:`TERM_COLUMNS`.
    """
    terms, customers = _terms(dataset), dataset.table("customers")
    key = (terms, customers, tuple(dataset.periods))
    for k, made in _EXPANDED:
        if k[0] is key[0] and k[1] is key[1] and k[2] == key[2]:
            return made.copy(deep=False)
    made = _expand(terms, customers, list(key[2]))
    _EXPANDED.insert(0, (key, made))
    del _EXPANDED[_EXPANDED_MAX:]
    return made.copy(deep=False)


def _expand(terms: pd.DataFrame, customers: pd.DataFrame, periods: list[str]) -> pd.DataFrame:
    """Compute :func:`contract_periods` from its three inputs."""
    empty = pd.DataFrame({c: pd.Series([], dtype=object) for c in _COLUMNS + list(TERM_COLUMNS)})
    if not len(terms) or not periods:
        return empty
    p0, T = period_index(periods[0]), len(periods)
    customers = customers.set_index("customer")
    rows = []
    for j, r in enumerate(terms.itertuples(index=False)):
        start = period_index(str(r.from_period))
        end = T - 1 + p0 if is_blank(r.to_period) else period_index(str(r.to_period))
        base = r.price_usd_per_h100e_period
        if is_blank(base) or pd.isna(base):
            base = customers[_PRICE[str(r.workload)]].get(r.customer, np.nan)
        esc = float(r.price_escalator_per_period)
        for p in range(max(start, p0), min(end, p0 + T - 1) + 1):
            price = float(base) * (1.0 + esc) ** (p - start)
            terms_now = [float(getattr(r, c)) for c in TERM_COLUMNS]
            rows.append(
                [
                    j,
                    str(r.customer),
                    str(r.workload),
                    str(r.from_period),
                    periods[p - p0],
                    p - p0,
                    price,
                    *terms_now,
                ]
            )
    if not rows:
        return empty
    out = pd.DataFrame(rows, columns=_COLUMNS + list(TERM_COLUMNS))
    return out.astype({"row": np.int64, "t": np.int64})


def period_prices(dataset: Any, customer: Any, workload: Any, period: Any) -> np.ndarray:
    """Return the price of each (customer, workload, period): the contract's, else spot.

    Parameters
    ----------
    dataset : Dataset
    customer, workload, period : array-like, shape (n,)
        Customer IDs, workload names and period labels.

    Returns
    -------
    ndarray, shape (n,)
        USD per H100e-quarter, undiscounted (0 for an unknown customer or workload).
    """
    k = np.asarray(customer, dtype=object)
    w = np.asarray(workload, dtype=object)
    p = np.asarray(period, dtype=object)
    customers = dataset.table("customers").set_index("customer")
    out = np.zeros(len(k))
    for name, column in _PRICE.items():
        sel = w == name
        if sel.any() and column in customers:
            out[sel] = customers[column].reindex(k[sel]).fillna(0.0).to_numpy(dtype=float)
    cp = contract_periods(dataset)
    if len(cp) and len(k):
        index = pd.MultiIndex.from_frame(cp[["customer", "workload", "period"]])
        price = pd.Series(column_values(cp, "price_usd_per_h100e_period", dtype=float), index=index)
        got = price.reindex(pd.MultiIndex.from_arrays([k, w, p])).to_numpy(dtype=float)
        out = np.where(np.isnan(got), out, got)
    return out


def holds_beyond_demand(dataset: Any, customers: Any, periods: Any) -> np.ndarray:
    """Whether a customer may hold chips beyond its demand in a period, per pair.

    True where a commitment of the customer is active (its MW are held whatever the
    demand) or a contract row sets a take-or-pay floor or a reservation: the plan may
    then run more of the customer's H100e than it asks for. A bound on the customer's
    H100e at its demand (the cluster link's) does not hold there.

    Parameters
    ----------
    dataset : Dataset
    customers, periods : array-like of str, shape (n,)
        The pairs asked about.

    Returns
    -------
    ndarray of bool, shape (n,)
    """
    customers = np.asarray(customers, dtype=object)
    at = np.asarray([period_index(str(p)) for p in periods], dtype=np.int64)
    out = np.zeros(len(customers), dtype=bool)
    com = dataset.table("commitments")
    for r in com.itertuples(index=False):
        lo = period_index(str(r.from_period))
        hi = np.inf if is_blank(r.to_period) else period_index(str(r.to_period))
        out |= (customers == r.customer) & (at >= lo) & (at <= hi)
    cp = contract_periods(dataset)
    if len(cp):
        held = (column_values(cp, "take_or_pay_h100e", dtype=float) > 0) | (
            column_values(cp, "reservation_h100e", dtype=float) > 0
        )
        pairs = set(
            zip(column_values(cp, "customer")[held], column_values(cp, "period")[held], strict=True)
        )
        out |= np.array([(c, str(p)) in pairs for c, p in zip(customers, periods, strict=True)])
    return out
