"""Cross-table rules of the contract terms and the migration rows.

Contract terms: windows, overlaps and the take-or-pay floor. Migration: a derate
below 1 and a family some chip belongs to.

Column bounds (a negative price, a tier outside 0-1) are the schema's
(:data:`capacity.tables_demand.CONTRACT_TERMS`); the rules here read other rows and
tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from capacity.schema import PERIOD_RE, period_index, period_ordinals
from capacity.validation import Finding

__all__ = ["check_contracts", "check_migration"]

_END = 10**9


def _window(row: Any) -> tuple[int, int] | None:
    """Return the (first, last) quarter ordinals of a contract row (None: unreadable)."""
    start, end = str(row.from_period), str(row.to_period)
    if not PERIOD_RE.match(start):
        return None
    return period_index(start), period_index(end) if PERIOD_RE.match(end) else _END


def _demand_totals(demand: pd.DataFrame) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
    """Total demand (H100e, all region rows summed) per (customer, workload) and quarter.

    Returns
    -------
    dict
        ``(customer, workload) -> (ordinals, totals)``: float64 arrays of one entry per
        quarter with demand; a row with a malformed period (NaN ordinal, reported by the
        schema check) is left out, as it matches no contract window.
    """
    at = period_ordinals(demand["period"])
    keep = ~np.isnan(at)
    sums = (
        pd.DataFrame(
            {
                "customer": demand["customer"].astype(str).to_numpy(dtype=object)[keep],
                "workload": demand["workload"].astype(str).to_numpy(dtype=object)[keep],
                "at": at[keep],
                "h100e": demand["demand_h100e"].to_numpy(dtype="float64")[keep],
            }
        )
        .groupby(["customer", "workload", "at"], sort=False)["h100e"]
        .sum()
    )
    out: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    for (c, w, a), v in sums.items():
        ords, totals = out.setdefault((str(c), str(w)), ([], []))
        ords.append(float(a))
        totals.append(float(v))
    return {k: (np.asarray(o), np.asarray(t)) for k, (o, t) in out.items()}


def _peak_demand(
    totals: Mapping[tuple[str, str], tuple[np.ndarray, np.ndarray]],
    customer: str,
    workload: str,
    lo: int,
    hi: int,
) -> float:
    """Largest total demand (H100e) of a customer's workload in quarters lo..hi (0: none)."""
    if (customer, workload) not in totals:
        return 0.0
    at, h100e = totals[customer, workload]
    inside = h100e[(at >= lo) & (at <= hi)]
    return float(inside.max()) if len(inside) else 0.0


def check_contracts(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Check contract rows: windows, overlaps and take-or-pay floors.

    A contract must not end before it begins, two windows of one customer's workload
    must not overlap, and a take-or-pay floor must not exceed the largest demand of
    its window.

    A floor above every quarter's demand of the contract is billed for compute the
    customer never asks for: a data error, named at the row's ``take_or_pay_h100e``
    cell with the demand it exceeds.

    Returns
    -------
    list of Finding
        Errors naming file, row, column and value.
    """
    terms = tables.get("contract_terms")
    if terms is None or not len(terms):
        return []
    file, totals = files["contract_terms"], _demand_totals(tables["demand"])
    out: list[Finding] = []
    seen: dict[tuple[str, str], list[tuple[int, int, int]]] = {}
    for i, row in enumerate(terms.itertuples(index=False)):
        span = _window(row)
        if span is None:
            continue
        lo, hi = span
        key = (str(row.customer), str(row.workload))
        if hi < lo:
            msg = f"contract ends ({row.to_period}) before it begins ({row.from_period})"
            out.append(Finding("error", file, i + 2, "to_period", str(row.to_period), msg))
            continue
        for j, a, b in seen.get(key, []):
            if lo <= b and a <= hi:
                msg = f"contract overlaps the contract of row {j} for {key[0]!r} {key[1]}"
                out.append(Finding("error", file, i + 2, "from_period", str(row.from_period), msg))
        seen.setdefault(key, []).append((i + 2, lo, hi))
        floor = float(row.take_or_pay_h100e)
        peak = _peak_demand(totals, *key, lo, hi)
        if floor > peak * (1 + 1e-9):
            msg = (
                f"take-or-pay floor {floor:g} H100e is above the demand of {key[0]!r} "
                f"{key[1]} in every quarter of the contract (largest {peak:g} H100e)"
            )
            out.append(Finding("error", file, i + 2, "take_or_pay_h100e", f"{floor:g}", msg))
    return out


def check_migration(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Check migration rows: a derate in [0, 1) and a chip family that exists.

    The column bounds (a negative cost, a derate above 1, negative quarters) are the
    schema's (:data:`capacity.tables_demand.MIGRATION`); a derate of exactly 1 would
    leave the family's chips serving nothing at the start, and a family no chip
    belongs to names nothing.

    Returns
    -------
    list of Finding
        Errors naming file, row, column and value.
    """
    rows = tables.get("migration")
    if rows is None or not len(rows):
        return []
    file = files["migration"]
    families = set(tables["chips"]["family"].astype(str))
    out: list[Finding] = []
    for i, row in enumerate(rows.itertuples(index=False)):
        d = float(row.derate_initial)
        if d >= 1.0:
            msg = f"derate_initial {d:g} must be below 1 (the share of performance lost)"
            out.append(Finding("error", file, i + 2, "derate_initial", f"{d:g}", msg))
        if str(row.family) not in families:
            msg = f"family {row.family!r} is the family of no chip ({', '.join(sorted(families))})"
            out.append(Finding("error", file, i + 2, "family", str(row.family), msg))
    return out
