"""Joins of small frames on integer or text keys, as pandas merges them.

The model's builders match frames of coded keys (site code ``s``, period ``t``, chip
code ``c`` ...) a hundred times per build, each a ``DataFrame.merge`` of a few hundred
to a few thousand rows. pandas spends most of such a merge in its general machinery
(index building, dtype checks, the result's construction), not in matching. On the
bundled data a build made 110 merges at about 2 ms each, a third of the build.

:func:`merge` pairs the rows with the grouping module's
(:func:`optimizer.lp.grouping.inner_pairs`, :func:`~optimizer.lp.grouping.left_pairs`:
keys numbered on integer codes, the right rows sorted stably, the matches of each left
row counted) and builds the result in one step. Anything outside that case (float or
missing keys, key dtypes that differ, overlapping column names, how other than ``inner``
or ``left``, a missing match that would turn a flag column into objects, frames of more
than :data:`_MAX_ROWS` rows ...) goes to ``DataFrame.merge``. The rows, their order, the
columns and the dtypes are pandas' (``tests/test_join.py`` compares the two on random
frames): each left row in left order, with its matching right rows in right order; a
left row without a match once (``how="left"``, right columns missing: NaN, integer
columns then float64) or not at all (``how="inner"``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import infer_dtype

from optimizer.lp.frames import block_frame
from optimizer.lp.grouping import inner_pairs, left_pairs

__all__ = ["merge"]

#: The joins :func:`merge` does itself; any other goes to pandas.
_HOWS = ("inner", "left")

#: Rows (left + right) above which pandas' merge is the faster (its fixed cost of about
#: 1.5 ms is then repaid). Measured on two integer keys, pandas against here: 22,000 rows
#: 1.8 / 0.7 ms, 32,000 rows 2.2 / 2.0 ms, 52,000 rows 2.7 / 3.7 ms.
_MAX_ROWS = 30_000


def _numpy_columns(frame: pd.DataFrame) -> dict[str, Any] | None:
    """Return the frame's columns as arrays: NumPy, or pandas' text (``str``) arrays.

    None for a frame with any other column (categorical, nullable integers ...), a
    repeated or non-text column name, or a DataFrame subclass.
    """
    if type(frame) is not pd.DataFrame or not frame.columns.is_unique:
        return None
    out = {}
    for i, name in enumerate(frame.columns):
        values = frame._get_column_array(i)
        if not isinstance(name, str):
            return None
        if not isinstance(values, np.ndarray) and not isinstance(values.dtype, pd.StringDtype):
            return None
        out[name] = values
    return out


def _is_text(values: Any) -> bool:
    """Return True for an object column or pandas' text (``str``) column."""
    return isinstance(values.dtype, pd.StringDtype) or values.dtype.kind == "O"


def _take(values: Any, rows: np.ndarray, missing: np.ndarray | None) -> Any | None:
    """``values`` at ``rows``, missing where ``missing`` (None: pandas would make objects).

    As a merge fills a right column without a match: NaN, integers as float64, text
    arrays with their own missing value; a flag column would turn into objects, which
    is left to pandas.
    """
    if isinstance(values, np.ndarray):
        if missing is None:
            return values[rows]
        kind = values.dtype.kind
        if kind not in "iufO":
            return None
        held = values.astype(np.float64) if kind in "iu" else values
        out = held[np.maximum(rows, 0)] if len(held) else np.empty(len(rows), dtype=held.dtype)
        if out.dtype.kind == "O":
            out[missing] = np.nan
            return out
        return np.where(missing, np.nan, out)
    if missing is None:
        return values.take(rows)
    return values.take(np.where(missing, -1, rows), allow_fill=True)


def _text_key_dtype(lk: Any, rk: Any, how: str) -> Any | None:
    """Return the key column's dtype when object text on one side meets ``str`` on the other.

    pandas' merge matches such keys as text when every object value is a string
    (``infer_dtype`` says ``"string"``: no missing value, no number; or there is no
    row); its result's key column is then ``str`` or object depending on the text
    storage (pandas 3.1: ``str`` with pyarrow storage, object with python storage), so
    the dtype is asked of pandas once per pair of dtypes (:func:`_merged_key_dtype`).
    None otherwise (pandas joins).
    """
    for text, obj in ((lk, rk), (rk, lk)):
        if isinstance(text.dtype, pd.StringDtype) and isinstance(obj, np.ndarray):
            if obj.dtype.kind == "O" and (
                not len(obj) or infer_dtype(obj, skipna=False) == "string"
            ):
                return _merged_key_dtype(lk.dtype, rk.dtype, how, not len(lk), not len(rk))
    return None


@functools.cache
def _merged_key_dtype(left: Any, right: Any, how: str, left_empty: bool, right_empty: bool) -> Any:
    """Return the key dtype of pandas' merge of frames of these key dtypes (one row or none)."""
    frames = [
        pd.DataFrame({"k": pd.Series([] if empty else ["a"], dtype=d)})
        for d, empty in ((left, left_empty), (right, right_empty))
    ]
    return frames[0].merge(frames[1], how=how)["k"].dtype


def _joinable(
    left: pd.DataFrame, right: pd.DataFrame, keys: list[str], how: str
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], list[str]] | None:
    """Return both frames' columns and the right's non-key names, when joined here.

    None when pandas must: a join other than inner or left, more than
    :data:`_MAX_ROWS` rows, a column neither NumPy nor pandas' text, a key neither an
    integer nor a text column of the same dtype on both sides (or object text against
    ``str``, :func:`_text_key_dtype`: the left key column then takes the dtype pandas
    gives it), or a right column whose name is also a left one (pandas would
    add suffixes).
    """
    if how not in _HOWS or not keys or len(left) + len(right) > _MAX_ROWS:
        return None
    lcols, rcols = _numpy_columns(left), _numpy_columns(right)
    if lcols is None or rcols is None:
        return None
    for k in keys:
        if k not in lcols or k not in rcols:
            return None
        lk, rk = lcols[k], rcols[k]
        if lk.dtype != rk.dtype:
            dtype = _text_key_dtype(lk, rk, how)
            if dtype is None:
                return None
            if dtype != lk.dtype:  # the result's key column in pandas' dtype
                obj = dtype == np.dtype(object)
                made = np.asarray(lk, dtype=object) if obj else pd.array(lk, dtype=dtype)
                lcols = {**lcols, k: made}
        elif not (_is_text(lk) or lk.dtype.kind in "iu"):
            return None
    others = [c for c in rcols if c not in keys]
    if any(c in lcols for c in others):
        return None
    return lcols, rcols, others


def merge(
    left: pd.DataFrame, right: pd.DataFrame, on: str | Sequence[str], how: str = "inner"
) -> pd.DataFrame:
    """``left.merge(right, on=on, how=how)``, matched on integer codes where it can be.

    Parameters
    ----------
    left, right : DataFrame
        Frames with the key columns ``on``.
    on : str or sequence of str
        Key columns, in both frames.
    how : str
        ``"inner"`` or ``"left"`` are joined here; anything else by pandas.

    Returns
    -------
    DataFrame
        pandas' result: the left columns, then the right's other columns; one row per
        matching (left row, right row) pair in left order, then right order; a
        ``RangeIndex``.

    Raises
    ------
    KeyError
        When a key column is missing (as pandas raises).
    """
    keys = [on] if isinstance(on, str) else list(on)
    plan = _joinable(left, right, keys, how)
    if plan is None:
        return left.merge(right, on=keys, how=how)
    lcols, rcols, others = plan
    pairs = inner_pairs if how == "inner" else left_pairs
    try:
        li, ri = pairs([lcols[k] for k in keys], [rcols[k] for k in keys])
    except (ValueError, TypeError):  # a missing key, or text keys that do not sort
        return left.merge(right, on=keys, how=how)
    missing = ri < 0
    blank = missing if missing.any() else None
    out = {name: _take(values, li, None) for name, values in lcols.items()}
    for name in others:
        out[name] = _take(rcols[name], ri, blank)
        if out[name] is None:
            return left.merge(right, on=keys, how=how)
    return block_frame(out, len(li))
