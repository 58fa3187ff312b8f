"""Near-optimal alternatives on Dask: the quantities split over workers.

Each task is :func:`optimizer.analysis.alternatives.near_optimal_ranges` on one worker for
a share of the selected quantities (every slack): the worker builds the model, solves the
optimum once and then its quantities' alternatives warm, as in one process. The random
directions are one more task (their weights are scaled by the quantities' values at that
worker's optimum, so they stay together). The ranges are merged in the order of the
one-process run; the optimum returned is the first task's (every task's ``C*`` agrees to
solver tolerance). On two cores the one-process run is as fast; a cluster with more
workers divides the time by about their number, less one optimum per worker.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import pandas as pd

from optimizer.analysis.alternatives import (
    AlternativesResult,
    near_optimal_ranges,
    parse_slacks,
    range_notes,
)
from optimizer.analysis.alternatives_quantities import default_quantities, select_quantities
from optimizer.analysis.dask_cluster import ClusterOptions, open_client
from optimizer.plan.model import build_model
from optimizer.plan.options import SolveOptions

__all__ = ["ranges_on_dask"]


def _task(
    ds: Any, slacks: tuple[float, ...], focus: list[str], directions: int, seed: int, options: Any
) -> AlternativesResult:
    """One worker's share (top-level and pickle-friendly)."""
    return near_optimal_ranges(
        ds,
        slacks,
        focus=focus,
        directions=directions,
        seed=seed,
        options=options,
        extremes=directions == 0,
    )


def ranges_on_dask(
    ds: Any,
    slacks: Sequence[float],
    cluster: ClusterOptions,
    *,
    directions: int = 0,
    focus: Sequence[str] = (),
    seed: int = 0,
    options: SolveOptions | None = None,
) -> AlternativesResult:
    """Run :func:`near_optimal_ranges` with the quantities split over Dask workers.

    Parameters
    ----------
    ds : Dataset
    slacks, directions, focus, seed, options
        As :func:`~optimizer.analysis.alternatives.near_optimal_ranges`.
    cluster : ClusterOptions
        ``workers`` local processes, or ``scheduler`` (an existing cluster).

    Returns
    -------
    AlternativesResult
        Ranges in the one-process order; alternatives of every task.

    Raises
    ------
    ValueError, AlternativesError
        As the one-process run (raised by the task that met them).
    OSError, TimeoutError
        When the scheduler cannot be reached.
    """
    t0 = time.perf_counter()
    options = options or SolveOptions()
    slacks = parse_slacks(slacks, "slack")
    if directions < 0:
        raise ValueError(f"directions: {directions} is not a number of directions (>= 0)")
    names = [q.name for q in select_quantities(default_quantities(build_model(ds)), focus)]
    if not names:
        raise ValueError("focus: no quantity to vary in this dataset")
    with open_client(cluster) as client:
        n = max(1, len(client.scheduler_info().get("workers", {})) or cluster.workers)
        chunks = [names[i::n] for i in range(n) if names[i::n]]
        futures = [
            client.submit(_task, ds, slacks, c, 0, seed, options, pure=False) for c in chunks
        ]
        if directions:
            futures.append(
                client.submit(_task, ds, slacks, names, directions, seed, options, pure=False)
            )
        parts: list[AlternativesResult] = client.gather(futures)
    ranges = pd.concat([p.ranges for p in parts if len(p.ranges)], ignore_index=True)
    order = {q: i for i, q in enumerate(names)}
    ranges = ranges.sort_values(
        ["slack", "quantity"], key=lambda c: c.map(order) if c.name == "quantity" else c
    ).reset_index(drop=True)
    alts = tuple(a for p in parts for a in p.alternatives)
    first = parts[0]
    return AlternativesResult(
        first.optimum,
        first.optimum_usd,
        ranges,
        alts,
        time.perf_counter() - t0,
        range_notes(ranges),
    )
