"""Joins of small frames on integer codes or text keys, as pandas merges them.

The model's builders match frames of coded keys (site code ``s``, period ``t``, chip
code ``c`` ...) a hundred times per build, each a ``DataFrame.merge`` of a few hundred
to a few thousand rows. pandas spends most of such a merge in its general machinery
(index building, dtype checks, the result's construction), not in matching. On the
bundled data a build made 111 merges at about 2 ms each, a third of the build.

:func:`merge` matches integer keys (text keys numbered first) with NumPy: one code
per row, the right rows sorted stably, the matches of each left row counted; it builds
the result in one step. Anything outside that case (float or missing keys, key dtypes
that differ, overlapping column names, how other than ``inner`` or ``left``, a missing
match that would turn a flag column into objects, frames of more than
:data:`_MAX_ROWS` rows ...) goes to ``DataFrame.merge``. The rows, their order, the
columns and the dtypes are pandas' (``tests/test_join.py`` compares the two on random
frames): each left row in left order, with its matching right rows in right order; a
left row without a match once (``how="left"``, right columns missing: NaN, integer
columns then float64) or not at all (``how="inner"``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from optimizer.lp.frames import block_frame

__all__ = ["merge"]

#: The joins :func:`merge` does itself; any other goes to pandas.
_HOWS = ("inner", "left")

#: Rows (left + right) above which pandas' merge is the faster (its fixed cost of about
#: 1.5 ms is then repaid; measured at 200,000 + 5,000 rows: pandas 9.6 ms, here 15.6 ms).
_MAX_ROWS = 50_000


def _numpy_columns(frame: pd.DataFrame) -> dict[str, np.ndarray] | None:
    """Return the frame's columns as NumPy arrays (None: an extension column, a repeated name)."""
    if type(frame) is not pd.DataFrame or not frame.columns.is_unique:
        return None
    out = {}
    for i, name in enumerate(frame.columns):
        values = frame._get_column_array(i)
        if not isinstance(values, np.ndarray) or not isinstance(name, str):
            return None
        out[name] = values
    return out


def _joinable(
    left: pd.DataFrame, right: pd.DataFrame, keys: list[str], how: str
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], list[str]] | None:
    """Return both frames' columns and the right's non-key names, when joined here.

    None when pandas must: a join other than inner or left, more than
    :data:`_MAX_ROWS` rows, a column that is not a NumPy array, a key that is not an
    integer or object column of the same dtype on both sides, or a right column whose
    name is also a left one (pandas would add suffixes).
    """
    if how not in _HOWS or not keys or len(left) + len(right) > _MAX_ROWS:
        return None
    lcols, rcols = _numpy_columns(left), _numpy_columns(right)
    if lcols is None or rcols is None:
        return None
    for k in keys:
        if k not in lcols or k not in rcols:
            return None
        if lcols[k].dtype != rcols[k].dtype or lcols[k].dtype.kind not in "iuO":
            return None
    others = [c for c in rcols if c not in keys]
    if any(c in lcols for c in others):
        return None
    return lcols, rcols, others


def _row_codes(
    left: list[np.ndarray], right: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray] | None:
    """One int64 code per row of each side, equal exactly where every key is equal.

    Text (object) keys are numbered by ``pandas.factorize``, which tells values equal
    as a merge's hash table does; None when a key is missing (NaN or None), which
    pandas then matches.
    """
    nl = len(left[0])
    flat = np.zeros(nl + len(right[0]), dtype=np.int64)
    for lv, rv in zip(left, right, strict=True):
        both = np.concatenate([lv, rv])
        if both.dtype.kind == "O":
            both, _ = pd.factorize(both)
            if len(both) and int(both.min()) < 0:
                return None
        both = both.astype(np.int64, copy=False)
        lo = int(both.min()) if len(both) else 0
        span = int(both.max()) - lo + 1 if len(both) else 1
        if span > 4 * len(both) + 16:  # sparse values: number the distinct ones
            _, both = np.unique(both, return_inverse=True)
            lo, span = 0, int(both.max()) + 1 if len(both) else 1
        flat = flat * span + (both - lo)
        if int(flat.max(initial=0)) > 2**53:  # guard the mixed radix against overflow
            _, flat = np.unique(flat, return_inverse=True)
            flat = flat.astype(np.int64).ravel()
    return flat[:nl], flat[nl:]


def _pairs(lc: np.ndarray, rc: np.ndarray, how: str) -> tuple[np.ndarray, np.ndarray]:
    """Left and right row of each result row (right -1: no match, ``how="left"``)."""
    order = np.argsort(rc, kind="stable")
    size = int(max(lc.max(initial=-1), rc.max(initial=-1))) + 1
    if size <= 4 * (len(lc) + len(rc)) + 16:  # dense codes: counts by code, no search
        per_code = np.bincount(rc, minlength=size)
        count = per_code[lc]
        start = (np.cumsum(per_code) - per_code)[lc]
    else:
        sorted_rc = rc[order]
        start = np.searchsorted(sorted_rc, lc, side="left")
        count = np.searchsorted(sorted_rc, lc, side="right") - start
    if int(count.max(initial=0)) <= 1:  # at most one right row per left row
        hit = count > 0
        safe = np.minimum(start, max(len(order) - 1, 0))
        if how == "left":
            rows = order[safe] if len(order) else np.zeros(len(lc), dtype=np.int64)
            return np.arange(len(lc)), np.where(hit, rows, -1)
        kept = np.flatnonzero(hit)
        return kept, order[start[kept]]
    if how == "left":
        count_out = np.maximum(count, 1)
    else:
        count_out = count
    left_rows = np.repeat(np.arange(len(lc)), count_out)
    first = np.cumsum(count_out) - count_out
    step = np.arange(len(left_rows)) - np.repeat(first, count_out)
    at = np.repeat(start, count_out) + step
    matched = np.repeat(count > 0, count_out)
    right_rows = np.where(matched, order[np.minimum(at, max(len(order) - 1, 0))], -1)
    if not len(order):
        right_rows = np.full(len(left_rows), -1, dtype=np.int64)
    return left_rows, right_rows


def _missing_ok(values: np.ndarray) -> np.ndarray | None:
    """``values`` as pandas holds them with missing cells (None: not handled here)."""
    kind = values.dtype.kind
    if kind == "f":
        return values
    if kind in "iu":
        return values.astype(np.float64)
    if kind == "O":
        return values
    return None


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
    codes = _row_codes([lcols[k] for k in keys], [rcols[k] for k in keys])
    if codes is None:
        return left.merge(right, on=keys, how=how)
    li, ri = _pairs(*codes, how)
    out: dict[str, np.ndarray] = {name: values[li] for name, values in lcols.items()}
    missing = ri < 0
    any_missing = bool(missing.any())
    for name in others:
        values = rcols[name]
        if not any_missing:
            out[name] = values[ri]
            continue
        held = _missing_ok(values)
        if held is None:
            return left.merge(right, on=keys, how=how)
        col = held[np.maximum(ri, 0)] if len(held) else np.empty(len(ri), dtype=held.dtype)
        if col.dtype.kind == "O":
            col = col.astype(object, copy=True)
            col[missing] = np.nan
        else:
            col = np.where(missing, np.nan, col)
        out[name] = col
    return block_frame(out, len(li))
