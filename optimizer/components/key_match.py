"""Key matching and text reuse of the result tables, kept across the cases of a sweep.

A sweep solves one model structure many times; these helpers match rows by key once
per structure (:mod:`optimizer.lp.reuse_cache`) and reuse a text column when its cells
are the same, so a table builder says what it joins, not how the join is cached.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pandas.arrays import ArrowStringArray

from optimizer.components.table_columns import TEXT_DTYPE
from optimizer.lp.frames import column_values
from optimizer.lp.join import merge
from optimizer.lp.reuse_cache import cached

__all__ = ["gather", "reused_text", "row_of", "same_arrays", "zero_where_no_row"]


def row_of(
    cache: Any,
    key: tuple[Any, ...],
    frame: pd.DataFrame,
    rows: pd.DataFrame,
    keys: list[str],
) -> np.ndarray | None:
    """Position in ``rows`` of each ``frame`` row with the same ``keys`` (-1: none).

    What ``merge(frame, rows, keys, how="left")`` pairs, as an index array: computed
    once per model structure and reused while ``frame``'s key columns stay the same
    (compared cell by cell). None when ``rows`` repeats a key (a left merge would then
    repeat ``frame`` rows).
    """
    left = tuple(column_values(frame, k) for k in keys)
    right = tuple(column_values(rows, k) for k in keys)
    store: dict[str, Any] = cached(cache, ("row_of", key), dict)
    hit = store.get("keys")
    if hit is not None and same_arrays(hit, (*left, *right)):
        found: np.ndarray | None = store["where"]
        return found
    look = rows[keys].assign(_pos=np.arange(len(rows)))
    where: np.ndarray | None = None
    if not look.duplicated(keys).any():
        m = merge(frame[keys], look, keys, how="left")
        where = m["_pos"].fillna(-1).to_numpy(dtype=np.int64)
    store["keys"], store["where"] = (*left, *right), where
    return where


def same_arrays(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> bool:
    """Return True when two tuples of key columns hold the same cells (same dtypes).

    Two arrays over the same memory (same address, shape and strides: a cached key
    frame's column read again) are equal without a cell-by-cell comparison; the
    arrays of ``a`` are held by the cache, so their memory cannot have been reused.
    """
    return len(a) == len(b) and all(
        x is y
        or (
            x.dtype == y.dtype
            and x.shape == y.shape
            and (same_memory(x, y) or bool((x == y).all()))
        )
        for x, y in zip(a, b, strict=True)
    )


def same_memory(x: np.ndarray, y: np.ndarray) -> bool:
    """Return True when ``x`` and ``y`` view the same cells of the same buffer."""
    ax, ay = x.__array_interface__, y.__array_interface__
    return bool(ax["data"] == ay["data"] and ax["strides"] == ay["strides"])


def gather(
    cache: Any,
    key: tuple[Any, ...],
    frame: pd.DataFrame,
    source: pd.DataFrame,
    column: str,
    keys: list[str],
) -> np.ndarray:
    """``source[column]`` on ``frame``'s rows matched by ``keys`` (NaN where no row).

    Same as ``source.set_index(keys)[column].reindex(frame keys)`` for unique keys.
    """
    where = row_of(cache, key, frame, source, keys)
    if where is None:
        idx = pd.MultiIndex.from_frame(frame[keys])
        return source.set_index(keys)[column].reindex(idx).to_numpy(dtype=float)
    vals = source[column].to_numpy(dtype=float)
    if not len(vals):
        return np.full(len(frame), np.nan)
    return np.where(where >= 0, vals[np.maximum(where, 0)], np.nan)


def zero_where_no_row(merged: pd.DataFrame, price_col: str) -> pd.DataFrame:
    """Set ``price_col`` of a ``merge(..., indicator=True)`` to 0 where no row matched.

    Rows that matched keep their dual, NaN included: a dual the solver did not return
    stays null (``PlanResult.duals_note`` says why), never 0.
    """
    absent = (merged.pop("_merge") == "left_only").to_numpy()
    price = merged[price_col].to_numpy(dtype=float).copy()
    price[absent] = 0.0
    merged[price_col] = price
    return merged


#: The tables' text dtype is held by Arrow (pandas' default with pyarrow installed).
_ARROW_TEXT = getattr(TEXT_DTYPE, "storage", None) == "pyarrow"


def reused_text(
    v: np.ndarray, texts: dict[tuple[str, str], tuple[np.ndarray, Any]] | None, key: tuple[str, str]
) -> Any:
    """``v`` as the tables' text dtype, reused from ``texts[key]`` when the same cells.

    Only an all-``str`` array is kept (no missing cell), so a later array equal to it
    cell by cell holds the same strings (no other built-in type equals a ``str``).
    """
    hit = None if texts is None else texts.get(key)
    if hit is not None and same_arrays((hit[0],), (v,)):
        return hit[1]
    if v.dtype != object or pd.api.types.infer_dtype(v, skipna=True) != "string":
        return pd.array(v, dtype=TEXT_DTYPE)  # str() of numbers and other cells
    if _ARROW_TEXT:
        # str cells (missing: None or NaN): Arrow converts them in one call, as pandas would
        arrow = pa.array(v, type=pa.large_string(), from_pandas=True)
        made = ArrowStringArray(pa.chunked_array([arrow]), dtype=TEXT_DTYPE)
        missing = bool(arrow.null_count)
    else:  # text held as Python strings (capacity.text_storage)
        made = pd.array(v, dtype=TEXT_DTYPE)
        missing = bool(made.isna().any())
    if texts is not None and len(v) and not missing:
        texts[key] = (v, made)
    return made
