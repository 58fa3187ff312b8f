"""HiGHS options shared by every benchmark contender (ours, the floor, the linopy peer).

Kept apart from :mod:`benchmarks.run` so the linopy peer can use them without
importing the runner that imports it.
"""

from __future__ import annotations

from typing import Any


def highs_options(n_columns: int, time_limit_s: float | None = None) -> dict[str, Any]:
    """The HiGHS options ``optimizer.solve`` sets for an LP of ``n_columns`` columns.

    Mirrors ``optimizer.solve._run_highs``: interior point with crossover above
    ``IPM_THRESHOLD_COLUMNS``, HiGHS defaults (dual simplex) below; the floor and
    the linopy peer use the same options so all three run the same algorithm.
    """
    try:
        from optimizer.solve import IPM_THRESHOLD_COLUMNS
    except ImportError:  # older solve.py: HiGHS defaults throughout
        IPM_THRESHOLD_COLUMNS = None
    opts: dict[str, Any] = {}
    if IPM_THRESHOLD_COLUMNS is not None and n_columns > IPM_THRESHOLD_COLUMNS:
        opts.update(solver="ipm", run_crossover="on")
    if time_limit_s is not None:
        opts["time_limit"] = float(time_limit_s)
    return opts
