"""Rolling replanning along one truth path: solve, lock what is due, advance, reveal, replan.

At each replan epoch ``tau`` (every ``every`` quarters, :func:`replan_epochs`) the
planner knows the outcomes of the quarters up to and including ``tau`` (the truth
path's data there) and holds a forecast for the later quarters (the revision model of
:mod:`optimizer.analysis.replan_setup`). It solves the whole horizon on that data with
every decision already locked fixed, then locks the decisions of :data:`LOCK_KINDS`
whose quarter ``t`` is due before the next epoch (``t < tau + every + window[kind]``:
construction started, chips ordered, contracts signed). After the last epoch every
such decision is locked; the *realised* plan is the truth path's plan with all of them
fixed (operation, unmet demand and breaches optimised on the truth, quarter by quarter
being the same as all at once because operation does not link quarters) and the
*perfect-foresight* plan is the truth path solved with nothing fixed. ``regret =
realised cost - perfect-foresight cost >= 0`` (discounted USD).

Speed: the path's models are the base model with patched data
(:func:`optimizer.analysis.batch_patch.patch_model`; a rebuild when the change is not
patchable) and locked column bounds, solved on one retained HiGHS instance from the
previous epoch's basis (:class:`optimizer.plan.highs_session.HighsSession`); the
epochs read only the solution vector, and the full result tables are made for the
realised and perfect-foresight plans only.

Locks that give way. A decision locked on a forecast (a chip order sized on forecast
wafer, CoWoS or HBM supply; an install or a hall on a forecast grid date) can exceed
what the revealed data allow. A planner is then never "infeasible": the supplier
delivers short, the hall waits unpowered. When the model with every lock fixed has no
solution, each locked value ``v_i`` (chips or MW) becomes an upper bound and the truth
delivers as much of the locks as it can:

    maximise   sum_i d_i
    subject to every row of the model, 0 <= d_i <= v_i (locked decisions),
               every other column free in its own bounds, no cost

``d_i`` is what is delivered and ``v_i - d_i`` the shortfall (``delivered_short``, in
the decision's unit: chips for ``produce`` and ``install``, MW for the rest). The plan
is then solved for cost with the delivered values fixed. The realised plan gives way
on the truth (the shortfall reported per lock, :class:`PathOutcome` ``give_way``, and
per quarter, ``shortfall``); a replan whose forecast cannot honour the locks solves on
what that forecast can deliver, the locks themselves staying as taken (only the truth
decides what is finally delivered).

When every lock fits the data nothing gives way (the fixed model is solved as it is).
When some do not, a lock that competes for nothing the data are short of is not cut
either: were it below ``v_i`` with room to rise, the optimum would raise it, so every
optimum delivers it in full (a lock delivered within the solver's band,
:data:`LOCK_BAND_ABS`, of its value is held at its value exactly). Locks that compete
for the same short supply (two chips on one wafer supply) share the shortfall as the
solver finds it; the total given up is the least possible.

Cost: the shortfall is not billed (the supplier bills what it delivers, construction
that cannot go ahead is not paid) and carries no penalty of its own. What it costs is
what it does to the plan: demand served later or not at all (at the customer's unmet
penalty), capacity bought later, which the realised plan prices on the truth and the
regret includes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from optimizer.analysis.replan_folder import give_way_table, shortfall_by_quarter
from optimizer.analysis.replan_setup import (
    KIND_UNITS,
    LOCK_KINDS,
    level_dataset,
    levelled,
    replan_epochs,
    revealed_dataset,
)
from optimizer.analysis.tornado import TornadoParameter
from optimizer.components.registry import active

__all__ = [
    "PathOutcome",
    "ReplanSetup",
    "level_dataset",
    "revealed_dataset",
    "run_dataset_path",
    "run_path",
]

#: A locked value ``v`` (>= 0) is held in ``[v - band, v + band]`` with
#: ``band = LOCK_BAND_REL * v + LOCK_BAND_ABS``: the solver's own feasibility
#: tolerance (1e-7), so values read back from one solve (say -5e-8 chips) never make
#: the next one infeasible by rounding alone. Locked decisions move by no more; a lock
#: of nothing is held at 0 (given 1e-7 of room, the optimum built 1e-7 MW).
LOCK_BAND_REL = 1e-9
LOCK_BAND_ABS = 1e-7

#: A decision of at most this much (chips or MW) is the solver's noise, not a decision:
#: it is locked as 0 and left out of the decisions table.
DECISION_FLOOR = 1e-6

#: Code columns that key a decision column (kind plus these), ``-1`` where not used.
_KEY_CODES = ("s", "c", "o", "t")


@dataclass(frozen=True)
class ReplanSetup:
    """What every path of one replanning run shares.

    Attributes
    ----------
    base : Dataset
        The dataset the groups' overrides apply to.
    parameters : tuple of TornadoParameter
        The revealed groups.
    revision : RandomWalkRevision or FileRevision
        The forecast-revision model.
    every : int
        Quarters between two replans (1: quarterly).
    locks : Mapping[str, int]
        Firm window (quarters ahead) per lockable kind.
    options : SolveOptions
    """

    base: Any
    parameters: tuple[TornadoParameter, ...]
    revision: Any
    every: int = 1
    locks: Mapping[str, int] = field(default_factory=lambda: dict.fromkeys(LOCK_KINDS, 0))
    options: Any = None


@dataclass(frozen=True)
class PathOutcome:
    """One path's replanning outcome.

    Attributes
    ----------
    path : int
    summary : dict
        ``path``, the truth levels (``truth_<group>``), ``status`` (of the realised
        plan), ``realised_cost_usd``, ``perfect_foresight_cost_usd``, ``regret_usd``,
        ``regret_share`` (regret / perfect-foresight cost), ``served_share`` and
        ``perfect_foresight_served_share`` (served / asked H100e), ``replans``,
        ``replans_without_plan`` (replans whose forecast had no plan even with the locks
        given way: the last plan's decisions fell due), ``warm_starts``, ``seconds``.
    decisions : DataFrame
        Decisions as they were taken: ``decided_in`` (the epoch's quarter), ``kind``,
        ``site``, ``chip``, ``option``, ``period``, ``value`` (MW or chips; non-zero only).
    forecasts : DataFrame
        ``epoch``, ``quarter``, ``parameter``, ``forecast``, ``truth``.
    realised, perfect_foresight : PlanResult or None
        The two full plans (None when not kept).
    give_way : DataFrame
        The locks the truth could not honour
        (:func:`optimizer.analysis.replan_folder.give_way_table`; empty when none).
    shortfall : DataFrame
        Per quarter, ``delivered_short_<kind>_<unit>``
        (:func:`optimizer.analysis.replan_folder.shortfall_by_quarter`; the shortfall's
        cost is not a column of its own: it is in the regret).
    """

    path: int
    summary: dict[str, Any]
    decisions: pd.DataFrame
    forecasts: pd.DataFrame
    realised: Any = None
    perfect_foresight: Any = None
    give_way: pd.DataFrame = field(default_factory=pd.DataFrame)
    shortfall: pd.DataFrame = field(default_factory=pd.DataFrame)


class _PathModels:
    """The path's models: the base model patched per dataset, locked, solved warm."""

    def __init__(self, setup: ReplanSetup) -> None:
        from optimizer.plan.highs_session import HighsSession
        from optimizer.plan.options import SolveOptions

        self.setup = setup
        self.options = setup.options or SolveOptions()
        self.base_model = _base_model(setup.base, self.options)
        self.session = HighsSession(self.options) if self.options.solver == "highs" else None
        self.warm = 0

    def model(self, ds: Any) -> Any:
        """Return the LP of ``ds``: the base model patched, else rebuilt."""
        from optimizer.analysis.batch_patch import patch_model
        from optimizer.plan.model import build_model

        m = patch_model(self.base_model, self.setup.base, ds)
        if m is None:
            m = build_model(
                ds, formulation=self.options.formulation, objective=self.options.objective
            )
        return m

    def solve_raw(self, model: Any) -> Any:
        """Solve for the solution vector only (warm on the retained session)."""
        from optimizer.plan.raw_solve import run_solver

        if self.session is None:
            return run_solver(model, self.options)
        raw, warm = self.session.run(model)
        self.warm += int(warm)
        return raw

    def held(self, model: Any, locked: pd.DataFrame) -> tuple[Any, Any, pd.DataFrame | None]:
        """Solve ``model`` with the locks fixed, given way when the data cannot honour them.

        Returns ``(fixed model, raw solution, give-way table or None when every lock
        was held)``; the model is the fully locked one (and the solution empty) when
        even giving way finds no solution.
        """
        fixed = _fix(model, locked)
        raw = self.solve_raw(fixed)
        if locked.empty or raw.x is not None:
            return fixed, raw, None
        held = _deliverable(model, locked, self.options)
        if held is None:
            return fixed, raw, None
        fixed = _fix(model, held)
        return fixed, self.solve_raw(fixed), held

    def realised(self, model: Any, locked: pd.DataFrame) -> tuple[Any, pd.DataFrame | None]:
        """Solve the realised plan in full: the locks fixed, given way when the truth must.

        One full solve when every lock holds (no extra raw solve, and no explanation of
        an infeasible first try: giving way is the answer to it); returns the plan and
        the give-way table (None when every lock was held).
        """
        quiet = replace(self.options, explain_infeasible=False)
        res = self.solve_full(_fix(model, locked), quiet if len(locked) else None)
        if res.objective_usd is not None or locked.empty:
            return res, None
        held = _deliverable(model, locked, self.options)
        if held is None:
            return res, None
        return self.solve_full(_fix(model, held)), held

    def solve_full(self, model: Any, options: Any = None) -> Any:
        """Solve with the full result tables and the independent check."""
        from optimizer.plan.pipeline import solve_model

        return solve_model(model, options or self.options, session=self.session)[0]


_BASE_MODELS: dict[tuple[str, str, str], Any] = {}


def _base_model(base: Any, options: Any) -> Any:
    """Return the base dataset's model, built once per process (paths on one worker share it)."""
    from optimizer.plan.model import build_model

    key = (base.hash, options.formulation, options.objective)
    if key not in _BASE_MODELS:
        _BASE_MODELS.clear()
        _BASE_MODELS[key] = build_model(
            base, formulation=options.formulation, objective=options.objective
        )
    return _BASE_MODELS[key]


def _lockable(model: Any) -> pd.DataFrame:
    """Columns of lockable kinds with their keys (``col``, ``kind``, codes)."""
    var = model.variables
    sel = var[var["kind"].isin(LOCK_KINDS)]
    return sel[["kind", *_KEY_CODES, "scale"]].rename_axis("col").reset_index()


def _fix(model: Any, locked: pd.DataFrame) -> Any:
    """Return ``model`` with the locked decisions' columns fixed at their values."""
    if locked.empty:
        return model
    cols = _lockable(model).merge(locked, on=["kind", *_KEY_CODES], how="inner")
    var = model.variables.copy()
    lb = var["lb"].to_numpy(dtype=float, copy=True)
    ub = var["ub"].to_numpy(dtype=float, copy=True)
    idx = cols["col"].to_numpy(dtype=np.int64)
    vals = np.maximum(cols["value"].to_numpy(dtype=float), 0.0) / cols["scale"].to_numpy(
        dtype=float
    )
    band = _band(vals)
    lb[idx], ub[idx] = np.maximum(vals - band, 0.0), vals + band
    var["lb"], var["ub"] = lb, ub
    return replace(model, variables=var)


def _band(vals: np.ndarray) -> np.ndarray:
    """Tolerance a locked column value is held to (:data:`LOCK_BAND_REL`, :data:`LOCK_BAND_ABS`).

    Zero for a lock of nothing (``vals <= 0``): such a column is held at exactly 0.
    """
    v = np.asarray(vals, dtype=float)
    return np.where(v > 0.0, LOCK_BAND_REL * v + LOCK_BAND_ABS, 0.0)


def _deliverable(model: Any, locked: pd.DataFrame, options: Any) -> pd.DataFrame | None:
    """Return ``locked`` with what the model's data can deliver of each lock.

    Parameters
    ----------
    model : PlanningModel
        The model the locks are applied to (their columns still free).
    locked : DataFrame
        ``kind, s, c, o, t, value`` (domain units), one row per lock.
    options : SolveOptions

    Returns
    -------
    DataFrame or None
        ``locked`` with ``value`` the delivered value, ``locked_value`` the lock,
        ``delivered_short`` (>= 0; exactly 0 for a lock held in full); None when even
        a full give-way leaves the model without a solution.
    """
    from optimizer.plan.raw_solve import run_solver

    keys = ["kind", "s", "c", "o", "t"]
    cols = _lockable(model).merge(locked.reset_index(drop=True).reset_index(), on=keys)
    idx = cols["col"].to_numpy(dtype=np.int64)
    scale = cols["scale"].to_numpy(dtype=float)
    v = np.maximum(cols["value"].to_numpy(dtype=float), 0.0) / scale
    var = model.variables.copy()
    lb = var["lb"].to_numpy(dtype=float, copy=True)
    ub = var["ub"].to_numpy(dtype=float, copy=True)
    lb[idx], ub[idx] = 0.0, v
    weight = np.zeros(len(var))
    weight[idx] = -scale  # one per chip or MW delivered
    var["lb"], var["ub"], var["cost"] = lb, ub, weight
    raw = run_solver(replace(model, variables=var), options)
    if raw.x is None:
        return None
    got = np.clip(np.asarray(raw.x, dtype=float)[idx], 0.0, v)
    held = got >= v - _band(v)
    d = np.where(held, v, got)
    out = locked.reset_index(drop=True).copy()
    out["locked_value"] = out["value"].astype(float)
    pos = cols["index"].to_numpy(dtype=np.int64)
    short = np.zeros(len(out))
    short[pos] = (v - d) * scale
    out["value"] = out["locked_value"] - short
    out["delivered_short"] = short
    return out


def _due(
    model: Any, x: np.ndarray, until: Mapping[str, int], already: pd.DataFrame
) -> pd.DataFrame:
    """Decisions newly due: lockable columns with ``t < until[kind]`` not yet locked.

    A value within :data:`DECISION_FLOOR` of 0 is due as 0 (held at exactly 0, :func:`_band`).
    """
    lk = _lockable(model)
    limit = lk["kind"].map(until).to_numpy(dtype=np.int64)
    lk = lk[lk["t"].to_numpy() < limit]
    value = x[lk["col"].to_numpy()] * lk["scale"].to_numpy()
    lk = lk.assign(value=np.where(np.abs(value) <= DECISION_FLOOR, 0.0, value))
    lk = lk[["kind", *_KEY_CODES, "value"]]
    if not already.empty:
        m = lk.merge(already[["kind", *_KEY_CODES]], how="left", indicator=True)
        lk = lk[(m["_merge"] == "left_only").to_numpy()]
    return lk.reset_index(drop=True)


def run_path(setup: ReplanSetup, path: int, truth: Mapping[str, float]) -> PathOutcome:
    """Replan along one truth path and compare with perfect foresight.

    Parameters
    ----------
    setup : ReplanSetup
    path : int
        The path's number (names its datasets; seeds its forecast revisions).
    truth : Mapping[str, float]
        Level of every group of ``setup.parameters`` on this path.

    Returns
    -------
    PathOutcome

    Raises
    ------
    optimizer.analysis.replan_setup.ReplanInputError
        When a truth or forecast level makes the data invalid: the message names the
        path, the quarter, the levels drawn and the data's finding (a traceback of
        ``DataValidationError`` ended the command, naming neither).
    """
    base, params = setup.base, setup.parameters
    periods = tuple(base.periods)
    epochs = replan_epochs(len(periods), setup.every)
    levels = [truth[p.name] for p in params]
    truth_ds = levelled(base, params, levels, f"path_{path:03d}", f"path {path}'s truth")
    fc = setup.revision.forecasts(params, truth, periods, epochs, path)

    def forecast(r: int, tau: int) -> Any:
        what = f"path {path}'s forecast made in {periods[tau]}"
        return levelled(base, params, list(fc[r]), f"path_{path:03d}_forecast_{r}", what)

    out = run_dataset_path(setup, path, truth_ds, forecast)
    summary = {"path": path, **{f"truth_{p.name}": float(truth[p.name]) for p in params}}
    summary.update({k: v for k, v in out.summary.items() if k != "path"})
    forecasts = _forecast_table(fc, epochs, periods, params, truth)
    return replace(out, summary=summary, forecasts=forecasts)


def run_dataset_path(
    setup: ReplanSetup,
    path: int,
    truth_ds: Any,
    forecast: Callable[[int, int], Any],
) -> PathOutcome:
    """Replan along a truth given as a dataset, with the forecasts given as datasets.

    The loop of :func:`run_path` for a truth that is not a set of group levels (a leaf
    of a scenario tree, :mod:`optimizer.analysis.tree_replan`).

    Parameters
    ----------
    setup : ReplanSetup
        ``base`` is the dataset the path's models patch; ``parameters`` and
        ``revision`` are not read.
    path : int
        The path's number (names its datasets).
    truth_ds : Dataset
        The truth: its quarters up to each epoch are revealed.
    forecast : callable
        ``forecast(r, tau)``: the dataset forecast at epoch ``r`` (quarter index
        ``tau``); its quarters after ``tau`` are what the replan plans on.

    Returns
    -------
    PathOutcome
        ``forecasts`` empty (a dataset forecast has no levels to tabulate).
    """
    t0 = time.perf_counter()
    periods = tuple(setup.base.periods)
    epochs = replan_epochs(len(periods), setup.every)
    pm = _PathModels(setup)
    locked = pd.DataFrame(columns=["kind", *_KEY_CODES, "value", "decided_in"])
    drift, gave_way_replans, without_plan = 0.0, 0, 0
    last: tuple[Any, np.ndarray] | None = None  # the last replan that found a plan
    for r, tau in enumerate(epochs):
        ds = revealed_dataset(truth_ds, forecast(r, tau), tau + 1, f"path_{path:03d}_epoch_{r}")
        model, raw, epoch_held = pm.held(pm.model(ds), locked)
        until = {k: tau + setup.every + int(setup.locks.get(k, 0)) for k in LOCK_KINDS}
        if raw.x is None:
            # no plan on this forecast, even with the locks given way: what falls due is
            # the last plan's (nothing ordered before the first), and the next replan,
            # which sees more of the truth, goes on (the loop stopped here, and every
            # later decision was fixed at 0)
            without_plan += 1
            src = last if last is not None else (model, np.zeros(model.n_variables))
            due = _due(src[0], src[1], until, locked).assign(decided_in=periods[tau])
        else:
            x = np.asarray(raw.x)
            gave_way_replans += int(epoch_held is not None)
            drift = max(drift, _lock_drift(model, x, _as_held(locked, epoch_held)))
            due = _due(model, x, until, locked).assign(decided_in=periods[tau])
            last = (model, x)
        locked = pd.concat([locked, due], ignore_index=True) if len(locked) else due
    realised, held = pm.realised(_fix_unlocked_to_zero(pm.model(truth_ds), locked), locked)
    pf = pm.solve_full(pm.model(truth_ds))
    gw = give_way_table(held, pm.base_model.codes, periods)
    summary = _summary(path, {}, (), realised, pf, truth_ds, len(epochs), pm.warm)
    summary.update(_give_way_summary(gw, gave_way_replans))
    summary["seconds"] = time.perf_counter() - t0
    summary["process_peak_mb"] = _peak_mb()
    summary["max_lock_drift"] = drift
    summary["replans_without_plan"] = without_plan
    return PathOutcome(
        path,
        summary,
        _decision_table(locked, pm.base_model, periods),
        pd.DataFrame(columns=["epoch", "quarter", "parameter", "forecast", "truth"]),
        realised,
        pf,
        gw,
        shortfall_by_quarter(gw, periods),
    )


def _as_held(locked: pd.DataFrame, held: pd.DataFrame | None) -> pd.DataFrame:
    """Return the values a replan held its locks at: as taken, or as delivered (given way)."""
    return locked if held is None else held[[*locked.columns]]


def _give_way_summary(gw: pd.DataFrame, replans: int) -> dict[str, Any]:
    """Give-way figures of a path's row.

    ``locks_given_way`` (locks the truth could not honour in full),
    ``replans_given_way`` (replans whose data could not honour the locks) and
    ``delivered_short_<kind>_<unit>`` (total shortfall per kind, chips or MW).
    """
    out: dict[str, Any] = {"locks_given_way": len(gw), "replans_given_way": replans}
    kinds = gw["kind"].astype(str) if len(gw) else pd.Series(dtype=str)
    for kind, unit in KIND_UNITS.items():
        short = gw["delivered_short"][kinds == kind].sum() if len(gw) else 0.0
        out[f"delivered_short_{kind}_{unit}"] = float(short)
    return out


def _lock_drift(model: Any, x: np.ndarray, locked: pd.DataFrame) -> float:
    """Largest change of an already locked decision in a later replan's solution (MW, chips)."""
    if locked.empty:
        return 0.0
    cols = _lockable(model).merge(locked, on=["kind", *_KEY_CODES], how="inner")
    now = x[cols["col"].to_numpy(dtype=np.int64)] * cols["scale"].to_numpy(dtype=float)
    return float(np.abs(now - cols["value"].to_numpy(dtype=float)).max(initial=0.0))


def _peak_mb() -> float:
    """Peak resident memory of this process so far (MB; ``ru_maxrss``, Linux kB)."""
    import resource

    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024.0


def _fix_unlocked_to_zero(model: Any, locked: pd.DataFrame) -> Any:
    """Fix every lockable column at 0 (the locked ones are then fixed at their values)."""
    lk = _lockable(model)
    zero = lk[["kind", *_KEY_CODES]].assign(value=0.0)
    return _fix(model, zero)


def _served_share(res: Any) -> float:
    dem = (getattr(res, "tables", None) or {}).get("demand")
    if dem is None or not len(dem) or "demand_h100e" not in dem:
        return math.nan
    asked = float(dem["demand_h100e"].sum())
    return 1.0 - float(dem["unmet_h100e"].sum()) / asked if asked > 0 else math.nan


def _summary(
    path: int,
    truth: Mapping[str, float],
    params: Sequence[TornadoParameter],
    realised: Any,
    pf: Any,
    truth_ds: Any,
    replans: int,
    warm: int,
) -> dict[str, Any]:
    """Return the path's row of the regret table (see :class:`PathOutcome`)."""
    from optimizer.analysis.outcomes import plan_status

    rc = math.inf if realised.objective_usd is None else float(realised.objective_usd)
    pc = math.nan if pf.objective_usd is None else float(pf.objective_usd)
    regret = rc - pc
    return {
        "path": path,
        **{f"truth_{p.name}": float(truth[p.name]) for p in params},
        "status": plan_status(realised),
        "realised_cost_usd": rc,
        "perfect_foresight_cost_usd": pc,
        "regret_usd": regret,
        "regret_share": regret / pc if pc and math.isfinite(pc) else math.nan,
        "served_share": _served_share(realised),
        "perfect_foresight_served_share": _served_share(pf),
        "replans": replans,
        "warm_starts": warm,
    }


def _decision_table(locked: pd.DataFrame, model: Any, periods: Sequence[str]) -> pd.DataFrame:
    """Locked decisions with names and units, less the solver's noise (:data:`DECISION_FLOOR`)."""
    cols = ["decided_in", "kind", "site", "chip", "option", "period", "value", "unit"]
    if locked.empty:
        return pd.DataFrame(columns=cols)
    d = locked[np.abs(locked["value"].to_numpy(dtype=float)) > DECISION_FLOOR].copy()
    codes = model.codes

    def names(col: str, dim: str) -> list[str]:
        ids = codes.get(dim, ())
        return [ids[int(i)] if int(i) >= 0 else "" for i in d[col]]

    d["site"], d["chip"], d["option"] = names("s", "s"), names("c", "c"), names("o", "o")
    d["period"] = [periods[int(t)] for t in d["t"]]
    d["value"] = d["value"].astype(float)
    units = active().kind_units  # the model's own unit of each kind (MW, chips)
    return d.assign(unit=d["kind"].astype(str).map(units))[cols].reset_index(drop=True)


def _forecast_table(
    fc: np.ndarray,
    epochs: Sequence[int],
    periods: Sequence[str],
    params: Sequence[TornadoParameter],
    truth: Mapping[str, float],
) -> pd.DataFrame:
    rows = [
        {
            "epoch": r,
            "quarter": periods[tau],
            "parameter": p.name,
            "forecast": float(fc[r, j]),
            "truth": float(truth[p.name]),
        }
        for r, tau in enumerate(epochs)
        for j, p in enumerate(params)
    ]
    return pd.DataFrame(rows, columns=["epoch", "quarter", "parameter", "forecast", "truth"])
