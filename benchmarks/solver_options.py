"""HiGHS options shared by every benchmark contender (ours, the floor, the linopy peer).

Kept apart from :mod:`benchmarks.run` so the linopy peer can use them without
importing the runner that imports it.
"""

from __future__ import annotations

from typing import Any


def highs_options(n_columns: int, time_limit_s: float | None = None) -> dict[str, Any]:
    """The HiGHS options ``optimizer.plan.highs`` sets for an LP of ``n_columns`` columns.

    Mirrors ``optimizer.plan.highs._configure_highs`` (``lp_algorithm_options``: interior
    point above ``IPM_THRESHOLD_COLUMNS``, crossover only when its result is
    imprecise; HiGHS defaults, the dual simplex, below); the floor and the linopy
    peer use the same options so all of them run the same algorithm.
    """
    try:
        from optimizer.plan.highs import lp_algorithm_options
    except ImportError:  # older solve.py: HiGHS defaults throughout
        opts: dict[str, Any] = {}
    else:
        opts = dict(lp_algorithm_options(n_columns))
    if time_limit_s is not None:
        opts["time_limit"] = float(time_limit_s)
    return opts
