"""Group sums on integer codes that give pandas' answers (bit for bit, but see the sums).

The checker and the result tables sum decision values by text keys (chip, site,
period ...). A pandas ``groupby`` or ``merge`` on frames of a few hundred rows costs
most of its time in building indexes and factorizing text, not in adding; done for
every case of a sweep, that overhead is what a reused model's case spends most of its
time on. Here the keys are factorized once per call (``pandas.factorize`` with
``sort=True``, so group numbers follow the lexicographic order of the keys, the order
a sorted ``groupby`` or an outer ``merge`` lists them in) and the sums are numpy.

The sums are Kahan sums in row order, as pandas adds with several groups
(:mod:`optimizer.lp.kahan`, re-exported here, says where pandas adds another way).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from optimizer.lp.kahan import group_cumsum, group_sum, positions_in_group

__all__ = [
    "Groups",
    "key_text",
    "as_target",
    "by_key",
    "group_cumsum",
    "group_sum",
    "inner_pairs",
    "left_pairs",
    "positions",
    "positions_in_group",
    "reindexed",
    "rows_at",
    "sorted_codes",
    "sums_at",
    "take",
    "value_at",
    "values_at",
]


def _local_codes(col: Any) -> tuple[np.ndarray, np.ndarray]:
    """Codes (first-seen order) and uniques of one key column; ValueError on a missing value.

    A pandas column is factorized on its own array (an Arrow text column by Arrow's
    dictionary encoding, without turning every row into a Python object first); a
    ``(codes, values)`` pair is taken as factorized already.
    """
    if isinstance(col, tuple):
        c = np.asarray(col[0], dtype=np.int64)
        distinct, u = pd.factorize(np.asarray(col[1]))  # values may repeat or be missing
        c = distinct[c] if len(c) else c
    else:
        if isinstance(col, pd.Series | pd.Index):
            col = col.array
        elif not isinstance(col, np.ndarray | pd.api.extensions.ExtensionArray):
            col = np.asarray(col)
        c, u = pd.factorize(col)
    if len(c) and int(c.min()) < 0:
        raise ValueError("Groups: a key column has a missing value")
    uniques = u if isinstance(u, np.ndarray) else np.asarray(u, dtype=object)
    return np.asarray(c, dtype=np.int64), uniques


#: Rows up to which the pieces of a key column are joined and factorized at once (for
#: short columns one ``factorize`` costs less than one per piece and a merge).
_JOIN_ROWS = 2000


def _array(part: Any) -> np.ndarray:
    """One piece of a key column as a numpy array (a Series by ``to_numpy``, the cheaper)."""
    if isinstance(part, tuple):
        return np.asarray(part[1])[np.asarray(part[0], dtype=np.int64)]
    if isinstance(part, pd.Series | pd.Index):
        out: np.ndarray = part.to_numpy()
        return out
    return np.asarray(part)


def _joined_codes(parts: Sequence[Any]) -> tuple[list[np.ndarray], np.ndarray]:
    """:func:`sorted_codes` by one ``factorize`` of the pieces joined (short columns)."""
    arrays = [_array(p) for p in parts]
    if not arrays:
        return [], np.zeros(0)
    joined = np.concatenate(arrays) if len(arrays) > 1 else arrays[0]
    codes, values = pd.factorize(joined, sort=True)
    if len(codes) and int(codes.min()) < 0:
        raise ValueError("Groups: a key column has a missing value")
    codes = np.asarray(codes, dtype=np.int64)
    return np.split(codes, np.cumsum([len(a) for a in arrays])[:-1]), np.asarray(values)


def sorted_codes(parts: Sequence[Any]) -> tuple[list[np.ndarray], np.ndarray]:
    """Codes of several pieces of one key column on one sorted vocabulary.

    What ``pandas.factorize(np.concatenate(parts), sort=True)`` gives, cut back into
    the pieces: each piece is factorized on its own and only the (few) distinct
    values are merged and sorted.

    Parameters
    ----------
    parts : sequence of array-like or (ndarray, ndarray)
        Pieces of a key column (numpy arrays, pandas Series or extension arrays),
        text or integers, no missing value (ValueError); or a piece factorized
        already, as (codes, values): the row's value is ``values[code]``.

    Returns
    -------
    (list of ndarray, ndarray)
        Codes of each piece (int64, the rank of the row's value) and the sorted
        distinct values.
    """
    if sum(len(p[0]) if isinstance(p, tuple) else len(p) for p in parts) <= _JOIN_ROWS:
        return _joined_codes(parts)
    local = [_local_codes(p) for p in parts]
    if len(local) == 1 and not len(local[0][1]):
        return [local[0][0]], local[0][1]
    every = np.concatenate([u for _, u in local]) if local else np.zeros(0)
    rank, values = pd.factorize(every, sort=True)
    out, start = [], 0
    for c, u in local:
        out.append(np.asarray(rank[start : start + len(u)], dtype=np.int64)[c])
        start += len(u)
    return out, np.asarray(values)


def _dense(flat: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(flat, return_inverse=True)`` of codes in ``0 .. size - 1``.

    Without sorting (a table of the codes present) when ``size`` is not much larger
    than the number of rows.
    """
    if size > max(8 * len(flat), 1 << 16):
        present, ids = np.unique(flat, return_inverse=True)
        return present, ids.astype(np.int64).ravel()
    seen = np.zeros(size, dtype=bool)
    seen[flat] = True
    number = np.cumsum(seen) - 1
    return np.flatnonzero(seen), number[flat].astype(np.int64)


class Groups:
    """Rows grouped by key columns, groups numbered in the lexicographic order of the keys.

    Parameters
    ----------
    columns : sequence of array-like
        Key columns of equal length (text or integers; no missing values).
    coded : sequence of (ndarray, array-like), optional
        Key columns already factorized: each a pair of codes and the sorted values
        they index (``pandas.factorize(..., sort=True)``); they come first.

    Attributes
    ----------
    ids : ndarray of int, shape (n,)
        Group number of each row; group ``i`` sorts before group ``i + 1`` (by the
        first column, then the second ...), the order of a sorted ``groupby``.
    n : int
        Number of groups.
    """

    def __init__(self, columns: Sequence[Any], *, coded: Sequence[Any] | None = None) -> None:
        codes, self._uniques = [], []
        if coded is not None:  # (sorted codes, sorted values) pairs, factorized already
            for c, u in coded:
                codes.append(np.asarray(c, dtype=np.int64))
                self._uniques.append(u)
        for col in columns:
            (c,), u = sorted_codes([col])
            codes.append(c)
            self._uniques.append(u)
        self._dims = [max(len(u), 1) for u in self._uniques]
        flat = np.zeros(len(codes[0]) if codes else 0, dtype=np.int64)
        for c, d in zip(codes, self._dims, strict=True):
            flat = flat * d + c
        self._flat, self.ids = _dense(flat, int(np.prod(self._dims, dtype=np.int64)))
        self.n = len(self._flat)
        self._codes = codes

    def code(self, i: int) -> np.ndarray:
        """Sorted code of key column ``i`` of each group (rank of its value)."""
        stride = int(np.prod(self._dims[i + 1 :], dtype=np.int64))
        out: np.ndarray = (self._flat // stride) % self._dims[i]
        return out

    def key(self, i: int) -> np.ndarray:
        """Value of key column ``i`` of each group (an object array for text)."""
        u = self._uniques[i]
        values = np.asarray(u, dtype=object) if not isinstance(u, np.ndarray) else u
        out: np.ndarray = values[self.code(i)]
        return out

    def positions(self, i: int, index: pd.Index) -> np.ndarray:
        """Position in ``index`` of each group's key column ``i`` (-1 where absent).

        What ``index.get_indexer(self.key(i))`` gives, looked up once per distinct value.
        """
        u = self._uniques[i]
        distinct = np.asarray(u, dtype=object) if not isinstance(u, np.ndarray) else u
        out: np.ndarray = (
            index.get_indexer(distinct)[self.code(i)]
            if len(distinct)
            else (np.full(self.n, -1, dtype=np.int64))
        )
        return out

    def coded(self, i: int) -> tuple[np.ndarray, Any]:
        """Key column ``i`` of each group as (sorted codes, sorted values), for ``coded=``."""
        return self.code(i), self._uniques[i]

    def sum(self, values: Any) -> np.ndarray:
        """Kahan sum of ``values`` per group (:func:`group_sum`)."""
        return group_sum(self.ids, values, self.n)


def _joint(target: Sequence[Any], source: Sequence[Any]) -> tuple[Groups, int]:
    """Return groups over the target rows followed by the source rows, and the target count."""
    if len(target) != len(source):
        raise ValueError("target and source need the same key columns")
    n = len(target[0]) if len(target) else 0
    coded = []
    for t, s in zip(target, source, strict=True):
        (ct, cs), values = sorted_codes([t, s])
        coded.append((np.concatenate([ct, cs]), values))
    return Groups([], coded=coded), n


def sums_at(target: Sequence[Any], source: Sequence[Any], values: Any) -> np.ndarray:
    """Sum of ``values`` of the source rows with each target row's key (0.0 where none).

    What ``target.merge(source.groupby(keys).sum(), how="left").fillna(0.0)`` gives for
    the summed column, in target order.

    Parameters
    ----------
    target, source : sequence of array-like
        The same key columns, of the target rows and of the source rows.
    values : array-like of float
        One value per source row.
    """
    if len(target) and not len(target[0]):  # no target row: nothing to match
        return np.zeros(0)
    g, n = _joint(target, source)
    total = group_sum(g.ids[n:], values, g.n)
    out = total[g.ids[:n]]
    return np.where(np.isnan(out), 0.0, out)


def value_at(target: Sequence[Any], source: Sequence[Any], values: Any) -> np.ndarray:
    """Value of the source row with each target row's key (NaN where none).

    What a left ``merge`` on unique source keys gives; raises ValueError when a key
    repeats in ``source`` (the merge would then repeat target rows).
    """
    return values_at(target, source, {"v": values})["v"]


def values_at(
    target: Sequence[Any], source: Sequence[Any], values: dict[str, Any]
) -> dict[str, np.ndarray]:
    """:func:`value_at` of several source columns (one key match for all)."""
    where = rows_at(target, source)
    found = where >= 0
    out = {}
    for name, v in values.items():
        a = np.asarray(v, dtype=float)
        out[name] = np.where(found, a[np.maximum(where, 0)] if len(a) else np.nan, np.nan)
    return out


def as_target(index: pd.Index, keys: Any) -> Any:
    """Keys to look up in ``index`` (``get_indexer``, ``reindex``), as the same matches.

    Text keys for an object index go in as an object ``Index``: given a bare array,
    pandas first infers its dtype (text: its string dtype) and converts, which costs
    more than the lookup of a few keys.
    """
    arr = np.asarray(keys)
    if index.dtype == object and arr.dtype == object:
        return pd.Index(arr, dtype=object)
    return arr


def _factorized_keys(keys: Any) -> tuple[Any, np.ndarray, Any]:
    """``keys`` as an array (a Series' or Index's own array), its codes and distinct keys."""
    if isinstance(keys, pd.Series | pd.Index):
        keys = keys.array
    elif not isinstance(keys, np.ndarray | pd.api.extensions.ExtensionArray):
        keys = np.asarray(keys)
    codes, distinct = pd.factorize(keys)
    return keys, codes, distinct


def positions(index: pd.Index, keys: Any) -> np.ndarray:
    """Position of each key in ``index`` (-1 where absent), as ``reindex`` matches them.

    The keys are factorized first and each distinct key looked up once.
    """
    keys, codes, distinct = _factorized_keys(keys)
    if len(codes) and int(codes.min()) < 0:  # a missing key: matched as reindex does
        found: np.ndarray = index.get_indexer(np.asarray(keys))
        return found
    at = index.get_indexer(as_target(index, distinct))
    out: np.ndarray = at[codes] if len(codes) else np.zeros(0, dtype=np.int64)
    return out


def by_key(values: pd.Series, keys: Any) -> tuple[pd.Series, np.ndarray]:
    """``values`` reindexed on the distinct ``keys``, and the number of each key.

    ``values.reindex(keys).to_numpy()`` is ``small.to_numpy()[codes]``, with ``small,
    codes = by_key(values, keys)``: each distinct key is looked up (and anything done
    to ``small``, done) once rather than once per row.

    Parameters
    ----------
    values : Series
        Indexed by key (unique).
    keys : array-like
        One key per row (a key missing from ``values`` gives NaN, as ``reindex`` does).

    Returns
    -------
    (Series, ndarray of int)
    """
    keys, codes, distinct = _factorized_keys(keys)
    if len(codes) and int(codes.min()) < 0:  # a missing key: every row looked up
        return values.reindex(np.asarray(keys)), np.arange(len(codes))
    return values.reindex(as_target(values.index, distinct)), np.asarray(codes, dtype=np.int64)


def reindexed(values: pd.Series, keys: Any, dtype: Any = None) -> np.ndarray:
    """``values.reindex(keys).to_numpy(dtype)``, each distinct key looked up once.

    See :func:`by_key`.
    """
    small, codes = by_key(values, keys)
    out: np.ndarray = small.to_numpy(dtype=dtype)[codes]
    return out


def take(values: Any, pos: np.ndarray) -> np.ndarray:
    """``values[pos]`` with NaN where ``pos`` is -1 (``reindex`` on positions)."""
    a = np.asarray(values)
    if not len(a):
        return np.full(len(pos), np.nan)
    got = a[np.maximum(pos, 0)]
    if (pos < 0).any():
        got = got.astype(float if got.dtype.kind in "fiub" else object)
        got[pos < 0] = np.nan
    return got


def _pair_codes(column: Sequence[Any]) -> np.ndarray:
    """Integer codes of one key column over the left rows then the right rows.

    Equal exactly where the keys are equal (not sorted): integers as they are, anything
    else numbered by ``pandas.factorize`` (text keys, object or pandas' ``str``
    arrays). ValueError on a missing key, as :class:`Groups` raises.
    """
    lv, rv = (_array(p) for p in column)
    if lv.dtype.kind in "iu" and rv.dtype.kind in "iu":
        out: np.ndarray = np.concatenate([lv, rv]).astype(np.int64, copy=False)
        return out
    codes, _ = pd.factorize(np.concatenate([lv, rv]))
    if len(codes) and int(codes.min()) < 0:
        raise ValueError("pairs: a key column has a missing value")
    return np.asarray(codes, dtype=np.int64)


def _row_codes(left: Sequence[Any], right: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """One int64 code per left row and per right row, equal where every key is equal."""
    if len(left) != len(right) or not len(left):
        raise ValueError("left and right need the same key columns")
    n = len(left[0])
    flat = np.zeros(n + len(right[0]), dtype=np.int64)
    for lv, rv in zip(left, right, strict=True):
        both = _pair_codes((lv, rv))
        lo = int(both.min()) if len(both) else 0
        span = int(both.max()) - lo + 1 if len(both) else 1
        if span > 4 * len(both) + 16:  # sparse values: number the distinct ones
            _, both = np.unique(both, return_inverse=True)
            lo, span = 0, int(both.max()) + 1 if len(both) else 1
        flat = flat * span + (np.ravel(both) - lo)
        if int(flat.max(initial=0)) > 2**53:  # keep the mixed radix from overflowing
            _, flat = np.unique(flat, return_inverse=True)
            flat = np.ravel(flat).astype(np.int64)
    return flat[:n], flat[n:]


def _pairs(left: Sequence[Any], right: Sequence[Any], keep: bool) -> tuple[np.ndarray, np.ndarray]:
    """Left and right row of each pair in a merge's order (``keep``: unmatched left rows, -1)."""
    lc, rc = _row_codes(left, right)
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
    rows = np.maximum(count, 1) if keep else count  # result rows per left row
    left_rows = np.repeat(np.arange(len(lc)), rows)
    step = np.arange(len(left_rows)) - np.repeat(np.cumsum(rows) - rows, rows)
    at = np.repeat(start, rows) + step
    if not len(order):
        return left_rows, np.full(len(left_rows), -1, dtype=np.int64)
    right_rows = order[np.minimum(at, len(order) - 1)]
    if keep:
        right_rows = np.where(np.repeat(count > 0, rows), right_rows, -1)
    return left_rows, right_rows


def inner_pairs(left: Sequence[Any], right: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Row pairs of an inner ``merge`` of left and right on the key columns, in its order.

    Parameters
    ----------
    left, right : sequence of array-like
        The same key columns (integers or text; no missing value: ValueError).

    Returns
    -------
    (ndarray, ndarray)
        Left and right row numbers of each pair: left rows in their order, and for
        each left row its matching right rows in their order.
    """
    return _pairs(left, right, keep=False)


def left_pairs(left: Sequence[Any], right: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Row pairs of a left ``merge`` of left and right on the key columns, in its order.

    :func:`inner_pairs`, with each left row that matches nothing kept once, in its place,
    paired with right row -1.
    """
    return _pairs(left, right, keep=True)


def rows_at(target: Sequence[Any], source: Sequence[Any]) -> np.ndarray:
    """Source row with each target row's key (-1 where none): a left merge's pairing.

    Raises ValueError when a key repeats in ``source`` (a left merge would then
    repeat target rows).
    """
    g, n = _joint(target, source)
    sid = g.ids[n:]
    if len(np.unique(sid)) != len(sid):
        raise ValueError("value_at: the source repeats a key")
    pos = np.full(g.n, -1, dtype=np.int64)
    pos[sid] = np.arange(len(sid))
    out: np.ndarray = pos[g.ids[:n]]
    return out


def key_text(groups: Groups, n_keys: int, prefix: str = "") -> Any:
    """Row-key text of the groups selected by a mask: ``prefix + k1/k2/...,last``.

    Returns a function of the boolean mask over the groups (what
    :func:`~optimizer.lp.violations.violations` takes as ``keys``), so text is made for
    violated groups only; the last key column (the period) follows a comma.
    """

    def text(bad: np.ndarray) -> np.ndarray:
        parts = [groups.key(i)[bad].astype(str).astype(object) for i in range(n_keys)]
        out = parts[0]
        for p in parts[1:-1]:
            out = out + "/" + p
        joined: np.ndarray = prefix + out + "," + parts[-1]
        return joined

    return text
