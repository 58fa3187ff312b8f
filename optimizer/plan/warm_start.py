"""The cluster-mode MIP start: LP relaxation -> rounded clusters -> LP with them fixed."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from optimizer.lp.frames import column_values, matrix_entries
from optimizer.plan.deadline import start_deadline, until
from optimizer.plan.highs import _run_highs
from optimizer.plan.model import PlanningModel
from optimizer.plan.options import SolveOptions, Status

#: Share of a cluster's minimum size (MW and H100e) the LP relaxation must place at a
#: site in a period for the warm start to open the cluster there (tuning choice).
WARM_START_MIN_SHARE = 0.5


@dataclass(frozen=True)
class WarmStart:
    """A feasible point of a cluster-mode MIP built from its LP relaxation.

    Attributes
    ----------
    x : ndarray or None
        Every column's value (cluster columns 0/1); None when no start was found.
    objective_usd : float or None
        Its objective (USD, constant included): an upper bound on the MIP optimum.
    message : str
        What was done, for the result message.
    solve_s : float
        Time of the two LP solves (s).
    fixed_lp_s : float or None
        Time of the second one, the LP with the rounded clusters fixed (s): an
        estimate of the LP with every integer fixed that gives the MIP's shadow prices.
    """

    x: np.ndarray | None
    objective_usd: float | None
    message: str
    solve_s: float
    fixed_lp_s: float | None = None


def _fix_columns(model: PlanningModel, cols: np.ndarray, values: np.ndarray) -> PlanningModel:
    """Return the model with columns ``cols`` fixed at ``values`` and no integer column."""
    var = model.variables.copy()
    lb = column_values(var, "lb", dtype=float, copy=True)
    ub = column_values(var, "ub", dtype=float, copy=True)
    lb[cols], ub[cols] = values, values
    var["lb"], var["ub"], var["integer"] = lb, ub, False
    return replace(model, variables=var)


def _cluster_sizes(model: PlanningModel, x: np.ndarray, keys: pd.DataFrame) -> pd.DataFrame:
    """Per cluster column: training H100e ``th`` and whether each minimum is met at the share.

    Reads the training amounts back from the cluster rows: a row ``used - coef * y``
    (``cluster_link``: coef = big-M; ``cluster_min_*``: coef = the minimum) gives
    ``used = activity + coef * y``.
    """
    con = model.constraints
    act = model.matrix @ x
    out = keys.assign(th=0.0, big=True)
    on = ["scenario", "k", "s", "t"]
    for family in ("cluster_link", "cluster_min_h100e", "cluster_min_mw"):
        rows = np.flatnonzero((con["family"] == family).to_numpy())
        if not len(rows):
            continue
        fr = con.iloc[rows][on].assign(row=rows).merge(out.reset_index(), on=on)
        r, c = column_values(fr, "row"), column_values(fr, "col")
        coef = -matrix_entries(model.matrix, r, c)
        used = act[r] + coef * x[c]
        i = column_values(fr, "index")
        if family == "cluster_link":
            out.loc[i, "th"] = used
        else:
            big = out.loc[i, "big"].to_numpy() & (used >= WARM_START_MIN_SHARE * coef - 1e-9)
            out.loc[i, "big"] = big
    return out


def _durations(model: PlanningModel) -> dict[tuple[int, int, int], int]:
    """Minimum duration (periods) per coded ``(scenario, k, t)`` of the cluster rules."""
    from optimizer.components.placement import cluster_rules

    k_code = {name: i for i, name in enumerate(model.codes["k"])}
    t_code = {name: i for i, name in enumerate(model.periods)}
    out: dict[tuple[int, int, int], int] = {}
    for sc, ds in enumerate(model.datasets):
        for r in cluster_rules(ds, list(model.periods)).itertuples():
            key = (sc, k_code[str(r.customer)], t_code[str(r.period)])
            out[key] = int(r.min_duration_periods)
    return out


def _open_in_time_order(model: PlanningModel, sz: pd.DataFrame) -> np.ndarray:
    """Open clusters period by period: kept ones first, then the largest candidates.

    ``sz`` has one row per cluster column (``scenario, k, s, t``, ``open``: a
    candidate, ``th``: its training H100e in the relaxation, ``rhs``: ``max_sites``,
    NaN without a limit). A cluster that starts (a start column exists and it was not
    open in the previous period) stays open its minimum duration; the others fill the
    remaining ``max_sites`` slots by training H100e.
    """
    var = model.variables
    starts = var.loc[(var["kind"] == "cluster_start").to_numpy(), ["scenario", "k", "s", "t"]]
    has_start = set(map(tuple, starts.to_numpy(dtype=np.int64).tolist()))
    duration = _durations(model)
    y = np.zeros(len(sz))
    keep: dict[tuple[int, int, int], int] = {}  # (scenario, k, s) -> last period kept open
    opened: set[tuple[int, int, int, int]] = set()
    for (sc, k, t), grp in sz.groupby(["scenario", "k", "t"], sort=True):
        limit = float(grp["rhs"].iloc[0])
        kept = [keep.get((sc, k, s), -1) >= t for s in grp["s"]]
        forced = list(grp.index[kept])
        cand = grp[column_values(grp, "open") & ~np.asarray(kept, dtype=bool)]
        cand = cand.sort_values("th", ascending=False)
        room = len(cand) if np.isnan(limit) else max(int(limit) - len(forced), 0)
        for i in [*forced, *cand.index[:room]]:
            s = int(sz.at[i, "s"])
            y[i] = 1.0
            opened.add((sc, k, s, t))
            if (sc, k, s, t) in has_start and (sc, k, s, t - 1) not in opened:
                span = t + duration.get((sc, k, t), 1) - 1
                keep[(sc, k, s)] = max(keep.get((sc, k, s), -1), span)
    return y


def round_clusters(model: PlanningModel, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Derive 0/1 cluster values from an LP relaxation's values.

    A cluster opens where the relaxation places training at the site and at least
    ``WARM_START_MIN_SHARE`` of every minimum size; per customer and period only the
    ``max_sites`` largest (training H100e) stay open; a cluster that starts is then
    kept open its minimum duration.

    Parameters
    ----------
    model : PlanningModel
        Cluster-mode model.
    x : ndarray
        Column values of its LP relaxation, shape (n_variables,).

    Returns
    -------
    (ndarray, ndarray)
        Cluster column ids and their 0/1 values.
    """
    var = model.variables
    cols = np.flatnonzero((var["kind"] == "cluster").to_numpy())
    keys = var.iloc[cols][["scenario", "k", "s", "t"]].reset_index(drop=True).assign(col=cols)
    keys = keys.astype(np.int64)
    sz = _cluster_sizes(model, x, keys)
    sz["open"] = sz["big"] & (sz["th"] > 1e-6)
    con = model.constraints
    ms = con.loc[(con["family"] == "cluster_max_sites").to_numpy(), ["scenario", "k", "t", "rhs"]]
    sz = sz.merge(ms, on=["scenario", "k", "t"], how="left")
    y = _open_in_time_order(model, sz.reset_index(drop=True))
    return cols, y


def cluster_warm_start(
    model: PlanningModel, options: SolveOptions, *, deadline: float | None = None
) -> WarmStart:
    """Build a MIP start: LP relaxation -> rounded clusters -> LP with them fixed.

    Solves the LP relaxation, derives the cluster binaries (:func:`round_clusters`)
    and solves the LP with them fixed. Unmet demand is a priced slack, so that LP is
    feasible whenever the rounded clusters keep the cluster rows (their minimum at an
    open site fits its capacity, ``max_sites``, the minimum duration); its status is
    checked and no start is returned when it is not optimal.

    Parameters
    ----------
    model : PlanningModel
        Model whose only integer columns are ``cluster`` columns.
    options : SolveOptions
    deadline : float, optional
        ``time.monotonic()`` reading by which both LPs must end (each gets what remains
        of it as its HiGHS time limit); None: ``options.time_limit_s`` from now.

    Returns
    -------
    WarmStart
        No start (``x`` None, the message says why) when an LP does not end optimal,
        for example when it stopped at the deadline.
    """
    t0 = time.perf_counter()
    deadline = start_deadline(options) if deadline is None else deadline
    relaxed = _run_highs(model, until(options, deadline), lp_only=True)
    if relaxed.status != Status.optimal or relaxed.x is None:
        msg = f"no warm start (LP relaxation: {relaxed.message})"
        return WarmStart(None, None, msg, time.perf_counter() - t0)
    cols, y = round_clusters(model, relaxed.x)
    t1 = time.perf_counter()
    fixed = _run_highs(_fix_columns(model, cols, y), until(options, deadline), lp_only=True)
    fixed_s = time.perf_counter() - t1
    if fixed.status != Status.optimal or fixed.x is None or fixed.solver_objective is None:
        msg = f"no warm start (LP with rounded clusters: {fixed.message})"
        return WarmStart(None, None, msg, time.perf_counter() - t0, fixed_s)
    x = fixed.x.copy()
    x[cols] = y
    obj = fixed.solver_objective
    msg = (
        f"warm start from the LP relaxation (${relaxed.solver_objective or 0.0:,.0f}): "
        f"{int(y.sum())} of {len(y)} clusters open, objective ${obj:,.0f}"
    )
    return WarmStart(x, obj, msg, time.perf_counter() - t0, fixed_s)
