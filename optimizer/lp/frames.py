"""Internal frames whose text keys stay NumPy object arrays.

Since pandas 3, a column built from Python strings is inferred as pandas' text
dtype (``str``, held by Arrow). That is what the result tables are: users and the
Parquet files see text columns. Inside one solve, though, the result-table builders
and the independent checker read their key columns back as NumPy arrays hundreds of
times (grouping, matching by key, masks), and each such read of an Arrow column
converts every cell to a Python object again; each construction converts the other
way. On the default dataset that round trip was about 40% of the per-case time of a
batch with model reuse (``python -m benchmarks.run``).

The dataset's tables already hold text as object columns
(:func:`capacity.validation.parse_table`). The helpers here keep derived frames the
same: :func:`frame` builds a frame from columns and :func:`rows_frame` from row
tuples, keeping an object or fixed-width unicode array as an object column instead of
letting pandas infer text; :func:`object_column` is one such column, for ``assign``.
Result tables are turned into the text dtype once, at the end
(``optimizer.plan.results._typed``).

A batch with model reuse makes the same few dozen tables for every case, so pandas'
per-call overhead counts: :func:`block_frame` builds a frame from arrays in one step
(a block per dtype, no inference), :func:`column_values` reads a column as an array
without making a Series, and :func:`indexed` keeps a data table indexed by name per
table object (a sweep's cases share the tables they do not change).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.internals import create_dataframe_from_blocks

__all__ = [
    "block_frame",
    "indexed",
    "column_array",
    "column_values",
    "frame",
    "object_column",
    "rows_frame",
]


def object_column(values: Any, index: pd.Index | None = None) -> Any:
    """Return ``values`` as a column pandas will not infer as text.

    Parameters
    ----------
    values : array-like, Series or scalar
        A column. An ndarray, list or object ``NumpyExtensionArray`` (``.array`` of
        an object column) whose cells are Python objects or fixed-width unicode
        becomes an object ``Series`` on ``index``; anything else (numbers,
        booleans, pandas Series, scalars) is returned as it is.
    index : Index, optional
        The frame's index (a RangeIndex of the length when None).

    Returns
    -------
    Series or the input unchanged
    """
    if isinstance(values, pd.arrays.NumpyExtensionArray):
        values = values.to_numpy()
    if isinstance(values, list):
        values = np.asarray(values, dtype=object) if values else np.zeros(0, dtype=object)
        if values.ndim != 1:
            return values
    if isinstance(values, np.ndarray) and values.dtype.kind in "OU" and values.ndim == 1:
        arr = values if values.dtype.kind == "O" else values.astype(object)
        return pd.Series(arr, index=index, dtype=object, copy=False)
    return values


def frame(columns: Mapping[str, Any], index: pd.Index | None = None) -> pd.DataFrame:
    """Build a DataFrame from columns, text kept as object columns.

    Parameters
    ----------
    columns : Mapping[str, array-like]
        Columns of equal length n (ndarray, list, Series); str scalars are repeated.
    index : Index, optional
        Row index (default: RangeIndex(n)).

    Returns
    -------
    DataFrame, shape (n, len(columns))
        The same frame as ``pd.DataFrame(columns, index=index)`` except that object
        and unicode arrays stay object columns.
    """
    sized = (v for v in columns.values() if hasattr(v, "__len__") and not isinstance(v, str))
    n = next((len(v) for v in sized), None)
    if index is None and n is not None:
        index = pd.RangeIndex(n)
    fast = _plain_columns(columns, n)
    if fast is not None and (index is None or index.equals(pd.RangeIndex(n or 0))):
        return block_frame(fast, n or 0, index)
    data: dict[str, Any] = {}
    for k, v in columns.items():
        if isinstance(v, str) and index is not None:
            v = np.full(len(index), v, dtype=object)
        data[k] = object_column(v, index)
    return pd.DataFrame(data, index=index)


def rows_frame(rows: Sequence[tuple[Any, ...]], dtypes: Mapping[str, Any]) -> pd.DataFrame:
    """Build a frame from row tuples, one dtype per column (``object`` for text).

    Parameters
    ----------
    rows : sequence of tuple
        One tuple per row, cells in the order of ``dtypes``.
    dtypes : Mapping[str, dtype]
        Column names and their NumPy dtypes; text columns stay object columns.

    Returns
    -------
    DataFrame, shape (len(rows), len(dtypes))
        With these dtypes also when ``rows`` is empty.
    """
    cells = list(zip(*rows, strict=True)) if rows else [()] * len(dtypes)
    return frame(
        {c: np.asarray(v, dtype=d) for (c, d), v in zip(dtypes.items(), cells, strict=True)}
    )


def matrix_entries(matrix: Any, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Read the entries ``matrix[rows[i], cols[i]]`` as a flat float array.

    Parameters
    ----------
    matrix : scipy.sparse matrix, shape (n_rows, n_cols)
    rows, cols : ndarray of int, shape (k,)
        Positions to read, paired element by element.

    Returns
    -------
    ndarray of float, shape (k,)
        The entries (0.0 where the matrix holds none). ``k = 0`` gives an empty
        array: scipy answers an empty fancy index with a sparse matrix, not an array,
        which ``np.asarray(..., dtype=float)`` cannot convert.
    """
    rows, cols = np.asarray(rows), np.asarray(cols)
    if rows.size == 0:
        return np.zeros(0)
    return np.asarray(matrix[rows, cols], dtype=float).ravel()


#: NumPy dtype kinds :func:`block_frame` stores as they are (bool, int, unsigned, float).
_PLAIN_KINDS = "biuf"


def _plain_columns(columns: Mapping[str, Any], n: int | None) -> dict[str, np.ndarray] | None:
    """Return the columns as 1-D arrays of length ``n`` when :func:`block_frame` holds them.

    Numbers and flags as they are, object and unicode arrays and ``str`` scalars as
    object arrays; None when any column is something else (a Series with its own
    index, a list, a datetime, a 2-D array), which :func:`frame` then builds as
    pandas does.
    """
    if n is None:
        return None
    out: dict[str, np.ndarray] = {}
    for k, v in columns.items():
        if isinstance(v, str):
            v = np.full(n, v, dtype=object)
        if not isinstance(v, np.ndarray) or v.ndim != 1 or len(v) != n:
            return None
        if v.dtype.kind == "U":
            v = v.astype(object)
        elif v.dtype.kind not in _PLAIN_KINDS + "O":
            return None
        out[k] = v
    return out


def block_frame(columns: Mapping[str, Any], n: int, index: pd.Index | None = None) -> pd.DataFrame:
    """Build a frame from 1-D columns of length ``n`` in one step, without inference.

    What ``pd.DataFrame(columns)`` holds for NumPy number, flag and object columns
    and pandas extension arrays (the tables' text dtype), with the columns of each
    NumPy dtype stacked into one block as pandas' constructor consolidates them, and
    no per-column dtype inference: about a fifth of the constructor's time for a
    table of a dozen columns, which a sweep of reused cases makes hundreds of times.

    Parameters
    ----------
    columns : Mapping[str, ndarray or ExtensionArray]
        Columns of length ``n``: 1-D NumPy arrays (kept at their dtype, copied) or
        pandas extension arrays (held as they are; they are immutable in the tables).
    n : int
        Rows.
    index : Index, optional
        Row index (default: ``RangeIndex(n)``).

    Returns
    -------
    DataFrame, shape (n, len(columns))
    """
    by_dtype: dict[Any, list[int]] = {}
    blocks: list[tuple[Any, np.ndarray]] = []
    values = list(columns.values())
    for i, v in enumerate(values):
        if isinstance(v, np.ndarray):
            by_dtype.setdefault(v.dtype, []).append(i)
        else:
            blocks.append((v, np.array([i], dtype=np.intp)))
    for dtype, at in by_dtype.items():
        stacked = np.empty((len(at), n), dtype=dtype)
        for row, i in enumerate(at):
            stacked[row] = values[i]
        blocks.append((stacked, np.asarray(at, dtype=np.intp)))
    return create_dataframe_from_blocks(
        blocks,
        index=pd.RangeIndex(n) if index is None else index,
        columns=_column_index(tuple(columns)),
    )


@lru_cache(maxsize=1024)
def _column_index(names: tuple[str, ...]) -> pd.Index:
    """Return the column labels ``names`` as pandas infers them (made once per names)."""
    return pd.Index(list(names))


def column_array(df: pd.DataFrame, name: str) -> Any:
    """Return column ``name`` of ``df`` as its array (NumPy or extension), no Series made.

    The same values as ``df[name].array`` / ``df[name].to_numpy()`` for a frame with
    unique column names.
    """
    if type(df) is not pd.DataFrame:  # a subclass reads through its own ``[]``
        return df[name].array
    return df._get_column_array(df.columns.get_loc(name))


def column_values(frame: Any, name: str, dtype: Any = None, copy: bool = False) -> np.ndarray:
    """``frame[name].to_numpy(dtype, copy=copy)``, without making the Series first.

    The result tables and the checker read a few hundred columns per plan; making a
    Series to read each costs more than the read itself. For a NumPy column of a
    frame the values are converted as :meth:`pandas.Series.to_numpy` does (a view of
    the frame's own values is read-only, as pandas hands it out); any other column
    (an extension array, a repeated name) or object (a mapping, a DataFrame subclass
    that reads through its own ``[]``) goes through ``to_numpy``.

    Parameters
    ----------
    frame : DataFrame or mapping
        The table.
    name : str
        The column.
    dtype : dtype, optional
        The dtype of the result.
    copy : bool
        Return a copy even when no conversion was needed.

    Returns
    -------
    ndarray, shape (len(frame),)

    Raises
    ------
    KeyError
        When ``frame`` has no column ``name``.
    """
    if type(frame) is pd.DataFrame:  # a subclass reads through its own ``[]``
        at = frame.columns.get_loc(name)
        if isinstance(at, int):
            values = frame._get_column_array(at)
            if isinstance(values, np.ndarray):
                result = np.asarray(values, dtype=dtype)
                if result is values or np.shares_memory(values[:2], result[:2]):
                    if copy:
                        return result.copy()
                    result = result.view()
                    result.flags.writeable = False
                return result
    out: np.ndarray = frame[name].to_numpy(dtype=dtype, copy=copy)
    return out


#: Indexed copies of data tables: by ``id`` of the table, a weak reference to it (the
#: entry goes when the table does) and the copies by key column (see :func:`indexed`).
_INDEXED: dict[int, tuple[weakref.ref[pd.DataFrame], dict[str, pd.DataFrame]]] = {}


def indexed(table: pd.DataFrame, key: str) -> pd.DataFrame:
    """``table.set_index(key)``, made once per table object and key, for reading only.

    The plan's tables and checks look data up by name (the hours of a period, the
    power factor of a workload) many times per plan, and a sweep's cases share every
    table they do not change; making the index (text inferred and converted) costs
    more than the lookups. The frame is shared: read it, never change it (a column
    taken from it is a copy-on-write view, free to change).

    Parameters
    ----------
    table : DataFrame
        A data table (not changed after it is made, as a dataset's tables are).
    key : str
        The column to index by.

    Returns
    -------
    DataFrame
        The same frame as ``table.set_index(key)``.
    """
    hit = _INDEXED.get(id(table))
    if hit is None or hit[0]() is not table:
        hit = (weakref.ref(table, _forget), {})
        _INDEXED[id(table)] = hit
    by_key = hit[1]
    if key not in by_key:
        by_key[key] = table.set_index(key)
    return by_key[key]


def _forget(ref: weakref.ref[pd.DataFrame]) -> None:
    """Drop the entry of a table that is gone (its weak reference's callback)."""
    for i, (r, _) in list(_INDEXED.items()):
        if r is ref:
            del _INDEXED[i]
