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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["frame", "object_column", "rows_frame"]


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
