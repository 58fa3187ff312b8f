"""Violated rows of an independent check, in one frame shape for every family."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "FAMILY_SCALE_SHARE",
    "VIOLATION_COLUMNS",
    "equal_violations",
    "flagged",
    "violations",
]

VIOLATION_COLUMNS = ("family", "constraint", "keys", "lhs", "rhs", "violation")


#: Share of a family's largest |lhs| or |rhs| below which a row's own rhs is not
#: taken as its scale: a solver's feasibility tolerance is relative to the scaled
#: problem, so a row with rhs 0 in a family of million-chip rows may come back a few
#: micro-chips off (HiGHS after a warm start: 2e-6 chips) without being violated.
FAMILY_SCALE_SHARE = 1e-3


def violations(
    family: str, keys: pd.Series, lhs: Any, rhs: Any, sense: str, tolerance: float
) -> pd.DataFrame:
    """Rows of ``family`` violated by more than ``tolerance * (1 + scale)``.

    ``scale`` is the row's ``|rhs|``, but at least :data:`FAMILY_SCALE_SHARE` times
    the family's largest ``|lhs|`` or ``|rhs|``: with the default tolerance of 1e-6 a
    fleet-assignment row of rhs 0 in a family whose largest row is 1M chips may be
    off by 1e-3 chips, while a 1 MW limit in a family of MW-sized rows is held to
    about 1e-6 MW.

    Parameters
    ----------
    family : str
        Family name (or ``bounds`` / ``eligibility``).
    keys : Series of str, or callable
        Row keys, e.g. ``"new_carlisle,2027Q2"``; or a function of the boolean mask of
        violated rows returning their keys only (text is made for violated rows only).
    lhs, rhs : array-like
        Left- and right-hand side per row, in the family's unit.
    sense : {"<=", ">="}
    tolerance : float

    Returns
    -------
    DataFrame
        ``family, constraint, keys, lhs, rhs, violation`` of the violated rows.
    """
    lhs = np.asarray(lhs, dtype=float)
    rhs = np.asarray(rhs, dtype=float)
    excess = lhs - rhs if sense == "<=" else rhs - lhs
    magnitude = np.concatenate([np.abs(lhs), np.abs(rhs)])
    magnitude = magnitude[np.isfinite(magnitude)]
    family_scale = FAMILY_SCALE_SHARE * float(magnitude.max()) if len(magnitude) else 0.0
    bad = excess > tolerance * (1.0 + np.maximum(np.abs(rhs), family_scale))
    if not bad.any():  # the usual answer: the family's empty frame, made once
        if family not in _NO_VIOLATIONS:
            _NO_VIOLATIONS[family] = _violation_rows(family, keys, lhs, rhs, excess, bad)
        return _NO_VIOLATIONS[family].copy(deep=False)  # copy-on-write: never changed
    return _violation_rows(family, keys, lhs, rhs, excess, bad)


def equal_violations(
    family: str, keys: Any, lhs: np.ndarray, rhs: np.ndarray, tolerance: float
) -> list[pd.DataFrame]:
    """Rows of an equality family violated either way (:func:`violations` for both senses)."""
    return [
        violations(family, keys, lhs, rhs, "<=", tolerance),
        violations(family, keys, lhs, rhs, ">=", tolerance),
    ]


def flagged(
    family: str,
    frame: pd.DataFrame,
    mask: np.ndarray,
    value: str,
    text: Callable[[pd.DataFrame], pd.Series],
    tolerance: float,
) -> pd.DataFrame:
    """Violations of the rows of ``frame`` that ``mask`` flags: column ``value`` <= 0.

    Parameters
    ----------
    family : str
    frame : DataFrame
    mask : ndarray of bool, shape (len(frame),)
        Rows that may not carry a value (an ineligible pair, a chip outside its window).
    value : str
        Column holding the row's value (its lhs; the rhs is 0).
    text : callable
        Key text of some rows of ``frame`` (a Series of str); called on the violated
        rows only, so nothing is concatenated when every row is clean.
    tolerance : float

    Returns
    -------
    DataFrame
        As :func:`violations`.
    """
    bad = frame[mask] if mask.any() else frame.iloc[:0]  # the usual answer: no row

    def keys(over: np.ndarray) -> np.ndarray:
        out: np.ndarray = text(bad[over]).astype(str).to_numpy()
        return out

    return violations(family, keys, bad[value], np.zeros(len(bad)), "<=", tolerance)


#: The empty violations frame of each family (copied out, never handed out itself).
_NO_VIOLATIONS: dict[str, pd.DataFrame] = {}


def _violation_rows(
    family: str,
    keys: Any,
    lhs: np.ndarray,
    rhs: np.ndarray,
    excess: np.ndarray,
    bad: np.ndarray,
) -> pd.DataFrame:
    """Return the violations frame of the rows marked ``bad``."""
    if callable(keys):
        k = np.asarray(keys(bad), dtype=object)
    else:
        k = pd.Series(keys)[bad].astype(str).to_numpy()  # text of the violated rows only
    return pd.DataFrame(
        {
            "family": family,
            "constraint": [f"{family}[{x}]" for x in k],
            "keys": k,
            "lhs": lhs[bad],
            "rhs": rhs[bad],
            "violation": excess[bad],
        }
    )
