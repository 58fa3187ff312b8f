"""The row and column builder: columns, rows, matrix terms and cost terms, as frames.

Domain-free: a column is a ``kind`` with integer codes in the index letters of
:mod:`optimizer.lp.dimensions`, a row a ``family`` with the same codes. Also the two
array helpers the define functions expand key frames with.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.lp.dimensions import ROW_CODE_COLUMNS, VARIABLE_CODE_COLUMNS
from optimizer.lp.frames import column_values, frame

__all__ = ["ModelBuilder", "cumulative", "expand"]


def expand(frame: pd.DataFrame, start: np.ndarray, count: np.ndarray, column: str) -> pd.DataFrame:
    """Repeat each row ``count`` times and add ``column`` = start, start+1, ...

    Parameters
    ----------
    frame : DataFrame
        Rows to repeat (n rows).
    start, count : ndarray, shape (n,)
        First value and number of repeats per row (negative counts read as 0).
    column : str
        Name of the added counter column.
    """
    count = np.maximum(count, 0).astype(np.int64)
    repeat = np.repeat(np.arange(len(frame)), count)
    out = frame.iloc[repeat].reset_index(drop=True)
    firsts = np.repeat(np.cumsum(count) - count, count)
    out[column] = np.repeat(start, count) + (np.arange(len(repeat)) - firsts)
    return out


def cumulative(columns: pd.DataFrame, n_periods: int) -> pd.DataFrame:
    """Pairs (keys..., t, col) where ``col`` is a variable of a period t' <= t."""
    v = columns.rename(columns={"t": "t_var"})
    return expand(v, column_values(v, "t_var"), n_periods - column_values(v, "t_var"), "t")


def _full(n: int, value: int) -> np.ndarray:
    """``value`` repeated ``n`` times as int64."""
    return np.full(n, value, dtype=np.int64)


def _codes(keys: pd.DataFrame, name: str, n: int) -> np.ndarray:
    """Code column ``name`` of ``keys`` as int64, or -1 where ``keys`` has none."""
    return keys[name].to_numpy(dtype=np.int64) if name in keys else _full(n, -1)


class ModelBuilder:
    """Accumulates columns, rows, matrix terms and cost terms of the LP."""

    def __init__(self) -> None:
        self.var_frames: list[pd.DataFrame] = []
        self.n_cols = 0
        self.row_frames: list[pd.DataFrame] = []
        self.n_rows = 0
        self.terms: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.costs: list[pd.DataFrame] = []
        self.consts: list[pd.DataFrame] = []
        #: Region pool name -> code ``q`` (:func:`optimizer.components.pool.pool_keys`).
        self.pools: dict[str, int] = {}
        #: Objective mode (``cost`` or ``margin``) the cost terms are defined for.
        self.objective = "cost"

    def add_vars(self, kind: str, scenario: int, keys: pd.DataFrame) -> np.ndarray:
        """Add one column per row of ``keys`` (code columns); return column ids."""
        n = len(keys)
        cols = np.arange(self.n_cols, self.n_cols + n, dtype=np.int64)
        data: dict[str, Any] = {"col": cols, "kind": kind, "scenario": _full(n, scenario)}
        for name in VARIABLE_CODE_COLUMNS:
            data[name] = _codes(keys, name, n)
        self.var_frames.append(frame(data))
        self.n_cols += n
        return cols

    def add_rows(
        self, family: str, scenario: int, keys: pd.DataFrame, sense: str, rhs: np.ndarray
    ) -> np.ndarray:
        """Add one row of ``family`` per row of ``keys``; return row ids."""
        n = len(keys)
        rows = np.arange(self.n_rows, self.n_rows + n, dtype=np.int64)
        data: dict[str, Any] = {"row": rows, "family": family, "scenario": _full(n, scenario)}
        for name in ROW_CODE_COLUMNS:
            data[name] = _codes(keys, name, n)
        data["sense"] = sense
        data["rhs"] = np.broadcast_to(np.asarray(rhs, dtype=float), (n,))
        self.row_frames.append(frame(data))
        self.n_rows += n
        return rows

    def add_terms(self, row: Any, col: Any, coef: Any) -> None:
        """Add matrix coefficients (duplicates are summed)."""
        r = np.asarray(row, dtype=np.int64)
        c = np.asarray(col, dtype=np.int64)
        v = np.broadcast_to(np.asarray(coef, dtype=float), r.shape).copy()
        if len(r):
            self.terms.append((r, c, v))

    def add_cost(self, scenario: int, term: str, col: Any, t: Any, coef: Any) -> None:
        """Add undiscounted cost coefficients of ``term`` in period ``t``."""
        col = np.asarray(col, dtype=np.int64)
        if not len(col):
            return
        n = len(col)
        data = {
            "col": col,
            "scenario": _full(n, scenario),
            "term": term,
            "t": np.broadcast_to(np.asarray(t, dtype=np.int64), col.shape),
            "coef": np.broadcast_to(np.asarray(coef, dtype=float), col.shape),
        }
        self.costs.append(frame(data))

    def add_const(self, scenario: int, term: str, t: Any, value: Any) -> None:
        """Add an undiscounted constant cost."""
        t = np.asarray(t, dtype=np.int64)
        if not len(t):
            return
        f = pd.DataFrame({"scenario": scenario, "term": term, "t": t})
        f["value"] = np.asarray(value, dtype=float)
        self.consts.append(f)
