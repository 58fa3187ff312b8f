"""Quantities at their bound are written at the bound: no -0.0, no -1e-10 chips.

Solvers return values that sit on a bound up to their tolerances: a build of
``-2.8e-14`` MW, ``-0.0`` chips, an inventory of ``-0.0187`` chips after CBC (the
difference of two cumulative sums near a million). In the result tables every
quantity column is non-negative by definition; :func:`tidy_tables` writes a value
that is below zero by no more than the tolerance as exactly ``0.0``. A value further
below zero is left as it is: it is a violation, and the independent checker
(:mod:`optimizer.plan.check`) reports it by name, so the status is never "optimal" for it.

Signed columns (shadow prices, reduced costs, differences) are not touched.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

__all__ = ["SIGNED_WORDS", "snap_arrays", "snap_column", "tidy_tables"]

#: A float column whose name contains one of these words may be negative.
SIGNED_WORDS = ("shadow_price", "dual", "reduced_cost", "delta", "diff", "swing", "change")


def _is_signed(column: str) -> bool:
    return any(w in column for w in SIGNED_WORDS)


def snap_column(values: np.ndarray, tolerance: float, scale: float = 0.0) -> np.ndarray:
    """Return ``values`` with ``[-tol, 0]`` written as ``0.0`` (``-0.0`` included).

    Parameters
    ----------
    values : ndarray of float
        One non-negative quantity column.
    tolerance : float
        Relative tolerance; the absolute one is ``tolerance * max(1, scale, max
        |values|)``, the scale at which a solver's relative feasibility tolerance works.
    scale : float
        Magnitude of the quantities the column is computed from (an inventory is a
        difference of cumulative productions and installs, so CBC's -0.004 chips
        scale with those, not with the inventory).

    Returns
    -------
    ndarray
        A copy; values below ``-tol`` are kept (they are violations).
    """
    out = np.array(values, dtype=float, copy=True)
    finite = np.isfinite(out)
    if not finite.any():
        return out
    tol = tolerance * max(1.0, scale, float(np.abs(out[finite]).max()))
    out[finite & (out <= 0.0) & (out >= -tol)] = 0.0  # also turns -0.0 into 0.0
    return out


def snap_arrays(columns: dict[str, np.ndarray], tolerance: float) -> None:
    """Snap the unsigned float columns of one table in place of their entries.

    Parameters
    ----------
    columns : dict of str to ndarray
        The columns of one table by name (any dtype); float columns whose name has
        no word of :data:`SIGNED_WORDS` and at least one value ``<= 0`` are replaced
        by :func:`snap_column` of themselves, at the scale of the largest finite
        ``|value|`` of the table's unsigned float columns.
    tolerance : float
        Relative tolerance (``SolveOptions.check_tolerance``).
    """
    values = {
        c: v
        for c, v in columns.items()
        if isinstance(v, np.ndarray) and v.dtype.kind == "f" and not _is_signed(c) and v.size
    }
    scale = 0.0  # the table's magnitude: the largest finite |quantity|
    for v in values.values():
        a = np.abs(v[np.isfinite(v)])
        scale = max(scale, float(a.max())) if a.size else scale
    for c, v in values.items():
        if ((v <= 0.0) & np.isfinite(v)).any():  # a column with no value <= 0 is kept
            columns[c] = snap_column(v, tolerance, scale)


def tidy_tables(tables: Mapping[str, pd.DataFrame], tolerance: float) -> dict[str, pd.DataFrame]:
    """Return the result tables with every quantity at zero written as ``0.0``.

    Parameters
    ----------
    tables : mapping of str to DataFrame
        :func:`optimizer.plan.results.make_tables` output.
    tolerance : float
        Relative tolerance (``SolveOptions.check_tolerance``).

    Returns
    -------
    dict of str to DataFrame
        New frames; unsigned float columns snapped with :func:`snap_column`, at the
        scale of the largest unsigned quantity of the same table (:func:`snap_arrays`).
    """
    out: dict[str, pd.DataFrame] = {}
    for name, df in tables.items():
        kinds = df.dtypes.items()
        floats = {str(c): df[c].to_numpy(dtype=float) for c, d in kinds if d.kind == "f"}
        snapped = dict(floats)
        snap_arrays(snapped, tolerance)
        changed = {c: v for c, v in snapped.items() if v is not floats[c]}
        if not changed or df.empty:
            out[name] = df
            continue
        df = df.copy(deep=False)  # copy-on-write: columns not snapped are shared
        for c, v in changed.items():
            df[c] = v
        out[name] = df
    return out
