"""Inputs of a decomposed hedge: weights and names, the EV plan, retained scenarios."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from optimizer.analysis.decompose_blocks import ScenarioBlock
from optimizer.analysis.hedge import mean_value_dataset
from optimizer.plan.model import FirstStageUniverse

__all__ = ["check_inputs", "mean_value_point", "representatives"]


def mean_value_point(
    datasets: Sequence[Any],
    w: np.ndarray,
    universe: FirstStageUniverse,
    notes: list[str],
    objective: str = "cost",
) -> np.ndarray | None:
    """First stage of the mean-value problem; None (with a note) when it has none."""
    from capacity.validation import DataValidationError

    try:
        mv, why = mean_value_dataset(datasets, [float(v) for v in w]), "rows differ"
    except DataValidationError as e:
        mv, why = None, f"data invalid: {e.findings[0].message}"
    if mv is not None:
        cut = ScenarioBlock([mv], [0], universe, objective=objective).wait_and_see()[0]
        if cut.ok:
            return cut.point
        notes.append(f"mean-value problem has no optimum ({cut.message}); used the heaviest")
    else:
        notes.append(f"mean-value problem undefined ({why}); used the heaviest scenario's plan")
    return None


def check_inputs(
    datasets: Sequence[Any], weights: Sequence[float] | None, names: Sequence[str] | None
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Normalised weights and scenario names; ValueError for bad ones."""
    n = len(datasets)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if n == 0 or len(w) != n or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"need datasets and one non-negative weight each, got {list(w)}")
    labels = tuple(
        names or (str(getattr(d, "scenario", "") or f"s{k}") for k, d in enumerate(datasets))
    )
    if len(labels) != n:
        raise ValueError(f"need {n} names, got {len(labels)}")
    return w / w.sum(), labels


def representatives(costs: np.ndarray, count: int) -> np.ndarray:
    """Positions of ``count`` scenarios at evenly spaced quantiles of ``costs``."""
    order = np.argsort(costs, kind="stable")
    picks = ((np.arange(count) + 0.5) * len(costs) / count).astype(int)
    return np.unique(order[np.minimum(picks, len(costs) - 1)])
