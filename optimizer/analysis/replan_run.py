"""Rolling replanning over many truth paths: in this process or on Dask, with progress.

:func:`rolling_replan` draws the truth paths (:func:`optimizer.analysis.replan_setup.draw_truths`),
runs :func:`optimizer.analysis.replan.run_path` for each (one Dask task per path on a
local cluster of ``workers`` processes or on ``scheduler``; ``workers=0`` runs them here)
and gathers the regret table, the decisions as taken, the forecasts and the spread of
the regret over the paths (:class:`ReplanResult`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from optimizer.analysis.outcomes import outcome_percentiles
from optimizer.analysis.replan import PathOutcome, ReplanSetup, run_path
from optimizer.analysis.replan_setup import (
    LOCK_KINDS,
    RandomWalkRevision,
    draw_truths,
    replan_epochs,
    revealed_parameters,
)
from optimizer.output.progress import ProgressLike

__all__ = ["SPREAD_OUTCOMES", "ReplanResult", "rolling_replan"]

#: Per-path figures whose spread over the paths is reported.
SPREAD_OUTCOMES = (
    "regret_usd",
    "regret_share",
    "realised_cost_usd",
    "perfect_foresight_cost_usd",
    "served_share",
    "perfect_foresight_served_share",
)


@dataclass(frozen=True)
class ReplanResult:
    """Rolling replanning over truth paths.

    Attributes
    ----------
    paths : DataFrame
        One row per path (:class:`optimizer.analysis.replan.PathOutcome` ``summary``).
    spread : DataFrame
        ``outcome, p10, p50, p90, mean, n`` over the paths whose realised plan exists
        (:func:`optimizer.analysis.outcomes.outcome_percentiles`).
    decisions : DataFrame
        Decisions as taken, with a ``path`` column.
    forecasts : DataFrame
        Forecasts per epoch, with a ``path`` column.
    outcomes : tuple of PathOutcome
        Per path (with its realised and perfect-foresight plans).
    settings : Mapping[str, Any]
        ``paths, seed, every, revision, volatility, locks, epochs, seconds``.
    give_way : DataFrame
        The locks the truth could not honour, with a ``path`` column
        (:func:`optimizer.analysis.replan_folder.give_way_table`; empty when none).
    """

    paths: pd.DataFrame
    spread: pd.DataFrame
    decisions: pd.DataFrame
    forecasts: pd.DataFrame
    outcomes: tuple[PathOutcome, ...]
    settings: Mapping[str, Any] = field(default_factory=dict)
    give_way: pd.DataFrame = field(default_factory=pd.DataFrame)


def rolling_replan(
    ds: Any,
    paths: int = 20,
    *,
    seed: int = 0,
    every: int = 1,
    revision: Any = None,
    locks: Mapping[str, int] | None = None,
    options: Any = None,
    workers: int = 0,
    scheduler: str | None = None,
    progress: ProgressLike | None = None,
) -> ReplanResult:
    """Replan quarter by quarter along ``paths`` sampled truth paths; regret per path.

    Parameters
    ----------
    ds : Dataset
        The dataset (a scenario applied) the revealed groups perturb.
    paths : int
        Number of truth paths (>= 1).
    seed : int
        Seed of the truth draws (and of the default revision model).
    every : int
        Quarters between replans (1: quarterly; 2-4 are coarser and faster).
    revision : RandomWalkRevision or FileRevision, optional
        Forecast-revision model; default ``RandomWalkRevision(0.05, seed)``.
    locks : Mapping[str, int], optional
        Firm window per kind (:func:`optimizer.analysis.replan_setup.parse_locks`).
    options : SolveOptions, optional
    workers : int
        Local Dask worker processes; 0 runs every path in this process.
    scheduler : str, optional
        Address of an existing Dask scheduler (then ``workers`` is not used).
    progress : ProgressLike, optional
        Counts the paths (``path 3`` ...).

    Returns
    -------
    ReplanResult

    Raises
    ------
    optimizer.analysis.replan_setup.ReplanInputError
        For ``paths`` < 1, a negative seed or ``every`` < 1.
    OSError, TimeoutError
        When the Dask scheduler cannot be reached.
    """
    from optimizer.plan.options import SolveOptions

    t0 = time.perf_counter()
    params = revealed_parameters(ds)
    truths = draw_truths(params, paths, seed)
    epochs = replan_epochs(len(ds.periods), every)
    revision = revision if revision is not None else RandomWalkRevision(0.05, seed)
    setup = ReplanSetup(
        ds,
        params,
        revision,
        every,
        dict(locks or dict.fromkeys(LOCK_KINDS, 0)),
        options or SolveOptions(),
    )
    if workers > 0 or scheduler:
        outs = _on_dask(setup, truths, workers, scheduler, progress)
    else:
        outs = _here(setup, truths, progress)
    settings = {
        "paths": paths,
        "seed": seed,
        "every": every,
        "revision": getattr(revision, "name", "random-walk"),
        "volatility": getattr(revision, "volatility", None),
        "locks": dict(setup.locks),
        "epochs": len(epochs),
        "seconds": time.perf_counter() - t0,
    }
    return _gather(outs, settings)


def _here(
    setup: ReplanSetup, truths: Sequence[Mapping[str, float]], progress: ProgressLike | None
) -> list[PathOutcome]:
    out = []
    for k, truth in enumerate(truths):
        if progress is not None:
            progress.now(f"path {k}")
        o = run_path(setup, k, truth)
        out.append(o)
        if progress is not None:
            progress.advance(o.summary["status"] == "optimal")
    return out


def _on_dask(
    setup: ReplanSetup,
    truths: Sequence[Mapping[str, float]],
    workers: int,
    scheduler: str | None,
    progress: ProgressLike | None,
) -> list[PathOutcome]:
    """One task per path on a local cluster (or ``scheduler``), counted as they finish."""
    from distributed import as_completed

    from optimizer.analysis.dask_cluster import ClusterOptions, open_client

    cluster = ClusterOptions(workers=max(1, workers), scheduler=scheduler)
    with open_client(cluster) as client:
        futures = {
            client.submit(run_path, setup, k, dict(t), pure=False, key=f"replan-path-{k}"): k
            for k, t in enumerate(truths)
        }
        out: dict[int, PathOutcome] = {}
        if progress is not None:
            progress.now(f"{len(futures)} paths on Dask")
        for fut in as_completed(futures):
            o = fut.result()
            out[futures[fut]] = o
            if progress is not None:
                progress.advance(o.summary["status"] == "optimal", last=f"path {o.path}")
    return [out[k] for k in sorted(out)]


def _gather(outs: Sequence[PathOutcome], settings: Mapping[str, Any]) -> ReplanResult:
    """Join the paths' tables and the spread of their figures."""
    table = pd.DataFrame([o.summary for o in outs])
    spread = outcome_percentiles(table, SPREAD_OUTCOMES)
    dec = [o.decisions.assign(path=o.path) for o in outs if len(o.decisions)]
    fc = [o.forecasts.assign(path=o.path) for o in outs]
    gw = [o.give_way.assign(path=o.path) for o in outs if len(o.give_way)]
    return ReplanResult(
        table,
        spread,
        pd.concat(dec, ignore_index=True) if dec else pd.DataFrame(),
        pd.concat(fc, ignore_index=True) if fc else pd.DataFrame(),
        tuple(outs),
        dict(settings),
        pd.concat(gw, ignore_index=True) if gw else pd.DataFrame(),
    )
