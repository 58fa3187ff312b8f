"""Kahan (compensated) group sums and running sums, as pandas adds a group's values.

pandas adds the values of a group with Kahan summation, in row order;
:func:`group_sum` and :func:`group_cumsum` do the same, vectorised across groups (one
step per row position inside a group, on contiguous slices), so the sums equal
pandas' to the last bit where pandas takes that loop: with several groups, as the
result tables and checks group (``tests/test_grouping.py``). pandas 3.1 adds a lone
group (and, rarely, one of two) another way: measured on random one-group sums of 3-11
values, its sum differs from the Kahan sum in the last bit in about a third of them (from
a plain or Neumaier sum too), so there the two agree to one unit in the last place, not
to the bit. NaN values are skipped as pandas does (``skipna``); an empty or all-NaN
group sums to 0. :mod:`optimizer.lp.grouping` re-exports them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["group_cumsum", "group_sum", "positions_in_group"]


def positions_in_group(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return rows ordered by group (stable) and each such row's position in its group.

    Parameters
    ----------
    ids : ndarray of int, shape (n,)
        Group number of each row (>= 0).

    Returns
    -------
    (ndarray, ndarray)
        ``order`` (row numbers, grouped, row order kept inside a group) and ``pos``
        (position of ``order[i]`` inside its group, 0-based).
    """
    order = _stable_order(ids)
    sid = ids[order]
    n = len(sid)
    if not n:
        return order, np.zeros(0, dtype=np.int64)
    new = np.ones(n, dtype=bool)
    new[1:] = sid[1:] != sid[:-1]
    starts = np.flatnonzero(new)
    first = np.repeat(starts, np.diff(np.append(starts, n)))
    return order, np.arange(n) - first


def _stable_order(ids: np.ndarray) -> np.ndarray:
    """Stable argsort of group numbers (a radix sort when they fit in 16 bits)."""
    if len(ids) and 0 <= int(ids.min()) and int(ids.max()) < 2**16:
        ids = ids.astype(np.uint16)  # numpy sorts 16-bit integers by radix: O(n)
    out: np.ndarray = np.argsort(ids, kind="stable")
    return out


def _kahan(
    ids: np.ndarray, values: np.ndarray, n_groups: int, running: bool, vector: bool = True
) -> np.ndarray:
    """Kahan sums per group in row order (``running``: the running sum of every row).

    The non-NaN rows are laid out step by step: step ``j`` holds the ``j``-th row of
    every group with more than ``j`` rows, groups largest first, so each step is one
    contiguous slice and the groups still adding are a prefix of the accumulators
    (one vectorised Kahan step per row position, no gathers inside the loop) while more
    than :data:`_VECTOR_GROUPS` groups add, then row by row (:func:`_kahan_tail`);
    ``vector=False`` goes row by row throughout (a sum that overflowed to infinity,
    where the compensation must be reset per row as pandas does).
    """
    values = np.asarray(values, dtype=float)
    ids = np.asarray(ids, dtype=np.int64)
    out = np.full(len(values), np.nan) if running else np.zeros(n_groups)
    live = np.flatnonzero(~np.isnan(values))  # NaN rows add nothing (skipna)
    if not len(live):
        return out
    gid = ids[live]
    size = np.bincount(gid, minlength=n_groups)
    if not running and int(size.max()) <= 2:
        # one or two rows a group: Kahan's first two steps add without compensation,
        # so the sum is 0.0 + a + b in row order, what a weighted bincount adds
        out[:] = np.bincount(gid, weights=values[live], minlength=n_groups)
        return out
    by_size = np.argsort(-size, kind="stable")  # groups largest first
    rank = np.empty(n_groups, dtype=np.int64)
    rank[by_size] = np.arange(n_groups)
    active = n_groups - np.cumsum(np.bincount(size))[: int(size.max())]  # groups at step j
    order, pos = positions_in_group(gid)  # row order kept inside a group
    at = np.empty(len(gid), dtype=np.int64)  # place of each row: its step, its group rank
    at[order] = (np.cumsum(active) - active)[pos] + rank[gid[order]]
    rows = np.empty(len(gid), dtype=np.int64)
    rows[at] = live
    x = values[rows]
    total, comp = np.zeros(int(active[0])), np.zeros(int(active[0]))
    steps = np.empty(len(x)) if running else x
    counts = active.tolist()
    run = steps if running else None
    finite = bool(np.isfinite(x).all())  # then only an overflow makes a NaN compensation
    with np.errstate(over="ignore", invalid="ignore"):
        start, j = _kahan_steps(x, counts if vector else [], total, comp, run, finite)
    if finite and not np.isfinite(comp).all():  # an overflow to infinity: the slow way
        return _kahan(ids, values, n_groups, running, vector=False)
    if j < len(counts):  # the last steps, few groups still adding: one at a time
        _kahan_tail(x, start, counts[j:], total, comp, run)
    if running:
        out[rows] = steps
    else:
        out[by_size[: len(total)]] = total
    return out


def _kahan_steps(
    x: np.ndarray,
    counts: list[int],
    total: np.ndarray,
    comp: np.ndarray,
    steps: np.ndarray | None,
    finite: bool,
) -> tuple[int, int]:
    """Run the vectorised Kahan steps of :func:`_kahan` while over _VECTOR_GROUPS groups add.

    ``finite``: no value is infinite, so the NaN reset of the compensation is skipped (an
    overflow is caught by the caller). Returns the next row and the next step.
    """
    y, t = np.empty(len(total)), np.empty(len(total))
    start, j = 0, 0
    while j < len(counts) and counts[j] > _VECTOR_GROUPS:
        k = counts[j]
        yk, tk, ck, sk = y[:k], t[:k], comp[:k], total[:k]
        np.subtract(x[start : start + k], ck, out=yk)
        np.add(sk, yk, out=tk)
        np.subtract(tk, sk, out=ck)
        np.subtract(ck, yk, out=ck)
        if not finite:
            ck[np.isnan(ck)] = 0.0  # an infinite value: no compensation
        sk[:] = tk
        if steps is not None:
            steps[start : start + k] = tk
        start += k
        j += 1
    return start, j


#: Groups still adding above which a Kahan step is one vectorised numpy step; at or
#: below it the steps go row by row on Python floats (IEEE doubles, the same
#: operations in the same order, so the same bits), which costs less than the numpy
#: calls' overhead when a few long groups are left (a 292-row group of 9,092 rows
#: in 432 groups: 292 numpy steps of 1-4 groups each).
_VECTOR_GROUPS = 20


def _kahan_tail(
    x: np.ndarray,
    start: int,
    counts: list[int],
    total: np.ndarray,
    comp: np.ndarray,
    steps: np.ndarray | None,
) -> None:
    """Run the Kahan steps of :func:`_kahan` from ``start`` on, on Python floats.

    ``counts[i]`` groups add at step ``i`` (a prefix of the accumulators); ``total`` and
    ``comp`` are updated in place, and ``steps`` (running sums) filled when given.
    """
    n = int(counts[0])
    tot, cmp = total[:n].tolist(), comp[:n].tolist()
    xs = x[start:].tolist()
    sums: list[float] = []
    at = 0
    for k in counts:
        for g in range(k):
            y = xs[at + g] - cmp[g]
            t = tot[g] + y
            c = t - tot[g] - y
            cmp[g] = 0.0 if c != c else c  # NaN (an infinite value): no compensation
            tot[g] = t
            if steps is not None:
                sums.append(t)
        at += k
    total[:n], comp[:n] = tot, cmp
    if steps is not None:
        steps[start:] = sums


def group_sum(ids: np.ndarray, values: Any, n_groups: int) -> np.ndarray:
    """Sum ``values`` per group as ``pandas`` ``groupby(...).sum()`` does (Kahan, skipna).

    Parameters
    ----------
    ids : ndarray of int, shape (n,)
        Group number of each row, in ``0 .. n_groups - 1``.
    values : array-like of float, shape (n,)
    n_groups : int

    Returns
    -------
    ndarray, shape (n_groups,)
        The sum of each group (0.0 for a group with no non-NaN value).
    """
    return _kahan(ids, values, n_groups, running=False)


def group_cumsum(ids: np.ndarray, values: Any) -> np.ndarray:
    """Return the running sum per group in row order, as ``groupby(...).cumsum()``.

    NaN rows stay NaN and add nothing; the sums are Kahan sums as in pandas.
    """
    ids = np.asarray(ids, dtype=np.int64)
    n = int(ids.max()) + 1 if len(ids) else 0
    return _kahan(ids, values, n, running=True)
