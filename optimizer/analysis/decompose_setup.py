"""Start of a decomposed hedge: inputs, the EV plan, wait-and-see and EEV, the first master.

Order of the first solves (:func:`start_run`): this process solves the mean-value
problem first, while the workers build their first scenario models; its optimal basis
then starts every scenario's wait-and-see solve (the sampled scenarios share the
mean-value LP's shape and differ in values), and each scenario's EV-plan evaluation
continues from its own wait-and-see basis, in the same call to the worker. Each scenario
goes to whichever worker is free (:mod:`optimizer.analysis.decompose_dispatch`). The EV
plan's evaluation is iteration 0 of the L-shaped method: its cuts are the master's first
optimality cuts and its expected cost (EEV) the first upper bound, so no scenario is
solved twice at the EV plan. Measured on 6 sampled scenarios of the default data
(capacity first stage, process CPU, one process, load 4-7, 2026-12-02): the wait-and-see
solves took 30.7k simplex iterations (8.7 s) from the mean-value basis against 55.9k
(14.2 s) chained from scenario to scenario, the mean-value solve itself 12.2k (2.3 s);
the EV evaluations 12.6k either way. Evaluating the EV plan first from the mean-value
basis and then the wait-and-see solves from those bases took 34.9k + 31.5k (dual
simplex) or 34.9k + 224k (primal simplex), so that order is not used.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from optimizer.analysis.decompose_blocks import BasisArrays, ScenarioBlock, ScenarioBlocks
from optimizer.analysis.decompose_cuts import Cut, ScenarioInfeasibleError, TimeLimit
from optimizer.analysis.decompose_dispatch import FirstSolves
from optimizer.analysis.decompose_master import MasterProblem
from optimizer.analysis.hedge import mean_value_dataset
from optimizer.plan.model import FirstStageUniverse, build_stochastic_model
from optimizer.plan.risk import RiskSpec, risk_value

__all__ = [
    "WAIT_AND_SEE_STARTS",
    "RunState",
    "StartedRun",
    "check_inputs",
    "mean_value_data",
    "mean_value_start",
    "representatives",
    "start_run",
]


#: Where the wait-and-see solves start: the mean-value problem's optimal basis (the
#: default), or ``chain`` (each scenario from the one solved before it on its worker;
#: the reference the module docstring measures against).
WAIT_AND_SEE_STARTS = ("mean_value", "chain")

#: The start :func:`start_run` uses (one of :data:`WAIT_AND_SEE_STARTS`).
wait_and_see_start = "mean_value"


@dataclass
class RunState:
    """Mutable bookkeeping of one run: the incumbent plan and every plan evaluated.

    Attributes
    ----------
    names : tuple of str
        Scenario names in run order.
    w : ndarray
        Scenario probabilities, shape (n_scenarios,), summing to 1.
    best_ub : float
        ``rho`` (the expected cost without risk; USD) of the best plan so far.
    best_x, best_values : ndarray or None
        That plan's first stage (column units, shape (n_first,)) and its scenario
        costs (USD, shape (n_scenarios,)).
    rows : list of dict
        The iteration table's rows.
    risk : RiskSpec or None
        The risk measure of ``best_ub``.
    seen : list of (ndarray, ndarray)
        Every operable plan evaluated and its scenario costs.
    """

    names: tuple[str, ...]
    w: np.ndarray
    best_ub: float = math.inf
    best_x: np.ndarray | None = None
    best_values: np.ndarray | None = None
    rows: list[dict[str, float]] = field(default_factory=list)
    risk: RiskSpec | None = None
    seen: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)

    def offer(self, x: np.ndarray, cuts: Sequence[Cut]) -> float:
        """Record the plan's ``rho`` (expected cost without risk); keep the best so far.

        Returns
        -------
        float
            ``rho`` of the plan's scenario costs (USD); inf when a scenario cannot
            operate it.
        """
        values = np.array([c.value for c in cuts])
        ub = risk_value(values, self.w, self.risk) if all(c.ok for c in cuts) else math.inf
        if math.isfinite(ub):
            self.seen.append((x, values))
        if ub < self.best_ub:
            self.best_ub, self.best_x, self.best_values = ub, x, values
        return ub

    def rescore(self, risk: RiskSpec | None) -> None:
        """Switch the risk measure; the incumbent is the best plan seen under it."""
        self.risk, self.best_ub, self.best_x, self.best_values = risk, math.inf, None, None
        self.rows = []
        for x, values in self.seen:
            ub = risk_value(values, self.w, risk)
            if ub < self.best_ub:
                self.best_ub, self.best_x, self.best_values = ub, x, values


@dataclass
class StartedRun:
    """A started run: master, bookkeeping, wait-and-see and EV cuts, timings and work.

    Attributes
    ----------
    master : MasterProblem
        Holding the wait-and-see and EV-plan cuts.
    state : RunState
        With the EV plan as the first incumbent.
    ws, ev_cuts : list of Cut
        The wait-and-see cuts and the EV plan's cuts, in scenario order.
    eev : float
        Expected cost of the EV plan (USD; inf when some scenario cannot operate it).
    ev_name : str
        ``"mean_value"`` or the scenario whose plan served as the EV plan.
    table : DataFrame
        The first-stage variables (``kind, s, c, t, scale``).
    inv_range : ndarray
        Inverse spread of the first-stage points seen (1 / column unit), the level
        projection's scaling.
    timings : dict
        Wall seconds: ``setup`` (a perf_counter stamp until the caller subtracts the
        start; up to the universe: the cluster started, the datasets coded and the
        first-stage keys made on the workers), ``mean_value`` (solved while the workers
        build their first scenario models, so inside ``wait_and_see`` on a cluster),
        ``wait_and_see`` (from the end of ``setup``: the builds, the mean-value problem
        and the wait-and-see solves), ``ev``. When each scenario's call runs both its
        wait-and-see solve and the EV plan's evaluation (the ``mean_value`` start),
        ``wait_and_see`` holds both and ``ev`` is only the client's wait after it
        (about 0).
    work : dict
        ``<phase>_cpu_s`` (process CPU s: the client's for ``mean_value``, summed over
        the workers' solves for ``wait_and_see`` and ``ev``),
        ``<phase>_simplex_iterations``, and the busiest worker's CPU:
        ``<phase>_busiest_cpu_s`` for the EV plan's separate evaluation,
        ``wait_and_see_ev_busiest_cpu_s`` when each scenario's call ran both, and
        ``wait_and_see_busiest_cpu_s`` when the wait-and-see solves ran alone.
    """

    master: MasterProblem
    state: RunState
    ws: list[Cut]
    ev_cuts: list[Cut]
    eev: float
    ev_name: str
    table: pd.DataFrame
    inv_range: np.ndarray
    timings: dict[str, float]
    work: dict[str, float] = field(default_factory=dict)


def mean_value_start(
    datasets: Sequence[Any],
    w: np.ndarray,
    universe: FirstStageUniverse,
    notes: list[str],
    objective: str = "cost",
    data: tuple[Any | None, str] | None = None,
) -> tuple[Cut, BasisArrays | None] | None:
    """Solve the mean-value problem; its cut (first stage free) and optimal basis.

    Parameters
    ----------
    datasets : sequence of Dataset
        The run's scenarios.
    w : ndarray
        Their probabilities, shape (n_scenarios,).
    universe : FirstStageUniverse
        Codes and first-stage keys of the run.
    notes : list of str
        Gains a note when the mean-value problem is undefined or has no optimum.
    objective : {"cost", "margin"}
        The scenario models' objective.
    data : (Dataset or None, str), optional
        :func:`mean_value_data` of the run, when made already.

    Returns
    -------
    (Cut, BasisArrays or None) or None
        The solve's cut (``point`` is the EV plan, ``value`` the EV optimum in USD)
        and its basis as arrays; None (with a note) when there is no mean-value plan.
    """
    mv, why = mean_value_data(datasets, w) if data is None else data
    if mv is not None:
        block = ScenarioBlock([mv], [0], universe, objective=objective)
        cut = block.wait_and_see()[0]
        if cut.ok:
            return cut, block.basis_arrays(0)
        notes.append(f"mean-value problem has no optimum ({cut.message}); used the heaviest")
    else:
        notes.append(f"mean-value problem undefined ({why}); used the heaviest scenario's plan")
    return None


def mean_value_data(datasets: Sequence[Any], w: np.ndarray) -> tuple[Any | None, str]:
    """Return the mean-value dataset of the run, or None and why it is undefined.

    Parameters
    ----------
    datasets : sequence of Dataset
        The run's scenarios.
    w : ndarray
        Their probabilities, shape (n_scenarios,).

    Returns
    -------
    (Dataset or None, str)
        The dataset (:func:`optimizer.analysis.hedge.mean_value_dataset`) and the reason
        there would be none: ``rows differ`` or ``data invalid: <first finding>``.
    """
    from capacity.validation import DataValidationError

    try:
        return mean_value_dataset(datasets, [float(v) for v in w]), "rows differ"
    except DataValidationError as e:
        return None, f"data invalid: {e.findings[0].message}"


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


def _phase(blocks: ScenarioBlocks, name: str, *args: Any) -> tuple[list[Cut], dict[str, float]]:
    """Run ``name`` on every block; its cuts and its work (``<name>_cpu_s`` ...)."""
    cpu0, busy0 = blocks.solve_total_s, blocks.busy_total_s
    cuts = blocks.cuts(name, *args)
    key = "ev" if name == "evaluate" else name
    return cuts, {
        f"{key}_cpu_s": blocks.solve_total_s - cpu0,
        f"{key}_busiest_cpu_s": blocks.busy_total_s - busy0,
        f"{key}_simplex_iterations": float(sum(c.simplex_iterations for c in cuts)),
    }


def _first_solves(
    dispatch: FirstSolves, start: BasisArrays | None, x_ev: np.ndarray | None
) -> tuple[list[Cut], list[Cut], dict[str, float]]:
    """Wait-and-see solves from ``start``, then at ``x_ev`` (when given), scenario by scenario.

    Returns the wait-and-see cuts, the cuts at ``x_ev`` (both in scenario order) and the
    work: the CPU and simplex iterations of each phase, and the busiest worker's CPU
    over both (``wait_and_see_ev_busiest_cpu_s``; ``wait_and_see_busiest_cpu_s``
    without ``x_ev``).
    """
    busy0 = dispatch.blocks.busy_total_s
    ws, ev = dispatch.run(start, x_ev)
    key = "wait_and_see" if x_ev is None else "wait_and_see_ev"
    work = {f"{key}_busiest_cpu_s": dispatch.blocks.busy_total_s - busy0}
    for name, cuts in (("wait_and_see", ws), ("ev", ev)):
        if cuts:
            work[f"{name}_cpu_s"] = float(sum(c.solve_s for c in cuts))
            work[f"{name}_simplex_iterations"] = float(sum(c.simplex_iterations for c in cuts))
    return ws, ev, work


def _scenario_solves(
    dispatch: FirstSolves,
    mv: tuple[Cut, BasisArrays | None] | None,
    w: np.ndarray,
    labels: tuple[str, ...],
    work: dict[str, float],
    limit: TimeLimit,
) -> tuple[list[Cut], list[Cut], np.ndarray, str, float]:
    """Run the wait-and-see solves and the EV plan's evaluation; ``work`` gains their figures.

    With a mean-value plan and the ``mean_value`` start, each scenario's evaluation at
    the EV plan follows its wait-and-see solve in the same call (:func:`_first_solves`);
    otherwise the wait-and-see solves chain from scenario to scenario on each block and
    the EV plan (the heaviest scenario's when there is no mean-value plan) is evaluated
    in a second call to every block.

    Returns
    -------
    (ws, ev_cuts, x_ev, ev_name, t_ws)
        The cuts, the EV plan, its name, and the ``perf_counter`` at which the
        wait-and-see solves were known to be over.

    Raises
    ------
    ScenarioInfeasibleError
        When a scenario alone has no optimum.
    HedgeTimeLimitError
        When ``limit`` passes before the EV plan is evaluated in every scenario.
    """
    both = mv is not None and wait_and_see_start == "mean_value"
    if mv is not None and both:
        ws, ev_cuts, more = _first_solves(dispatch, mv[1], mv[0].point)
    else:
        ws, _, more = _first_solves(dispatch, None, None)
    work.update(more)
    for c in ws:
        if not c.ok:
            raise ScenarioInfeasibleError(labels[c.scenario], c.scenario, c.message)
    t_ws = time.perf_counter()
    heaviest = int(np.argmax(w))
    x_ev, ev_name = (
        (mv[0].point, "mean_value") if mv is not None else (ws[heaviest].point, labels[heaviest])
    )
    if not both:
        ev_cuts, more = _phase(dispatch.blocks, "evaluate", x_ev, None, limit.until())
        work.update(more)
        if len(ev_cuts) < len(ws):
            raise limit.error("the EV plan's evaluation", len(ev_cuts), len(ws), "evaluated")
    return ws, ev_cuts, x_ev, ev_name, t_ws


def start_run(
    blocks: ScenarioBlocks,
    datasets: Sequence[Any],
    w: np.ndarray,
    labels: tuple[str, ...],
    universe: FirstStageUniverse,
    notes: list[str],
    retain: int,
    cut_age: int | None,
    objective: str = "cost",
    mean_value: tuple[Any | None, str] | None = None,
    limit: TimeLimit | None = None,
) -> StartedRun:
    """Solve the mean-value problem, the scenarios alone and at the EV plan; build the master.

    Parameters
    ----------
    blocks : ScenarioBlocks
        The run's scenario blocks.
    datasets, w, labels, universe :
        The run's scenarios, probabilities, names and first-stage universe.
    notes : list of str
        Gains the run's notes (EV plan not operable somewhere, no mean-value plan).
    retain : int
        Scenarios held exactly in the master (0: none).
    cut_age : int or None
        The master's cut pool age (:class:`MasterProblem`).
    objective : {"cost", "margin"}
        The scenario models' objective.
    mean_value : (Dataset or None, str), optional
        :func:`mean_value_data` of the run, when made already (while the blocks start).
    limit : TimeLimit, optional
        The run's time limit, checked after the mean-value solve and before each
        scenario's first solves.

    Returns
    -------
    StartedRun

    Raises
    ------
    ScenarioInfeasibleError
        When a scenario alone has no optimum.
    HedgeTimeLimitError
        When the time limit passes before the EV plan is evaluated in every scenario.
    """
    t_setup = time.perf_counter()
    limit = limit or TimeLimit()
    # the blocks build their scenarios while the mean-value problem is solved here
    dispatch = FirstSolves(blocks, datasets, limit)
    try:
        c0 = time.process_time()
        mv = mean_value_start(datasets, w, universe, notes, objective, mean_value)
        if limit.passed():
            raise limit.error("the mean-value solve", 0, len(datasets))
        work = {"mean_value_cpu_s": time.process_time() - c0}
        work["mean_value_simplex_iterations"] = float(mv[0].simplex_iterations if mv else 0)
        t_mv = time.perf_counter()
        ws, ev_cuts, x_ev, ev_name, t_ws = _scenario_solves(dispatch, mv, w, labels, work, limit)
    finally:
        dispatch.close()
    t_ev = time.perf_counter()
    info = blocks.call("info")
    n_first, table = max(((i[0], i[1]) for i in info), key=lambda i: i[0])
    held = {pos: rows for part in info for pos, rows in part[2].items()}
    induced = [held[i] for i in range(len(datasets))]
    floors = np.array([c.value for c in ws])
    master = MasterProblem(n_first, w, floors, induced, cut_age)
    if retain > 0:
        keep = representatives(floors, retain)
        model = build_stochastic_model(
            [datasets[i] for i in keep],
            list(w[keep] / w[keep].sum()),
            universe=universe,
            objective=objective,
        )
        master.retain(model, keep.tolist())
    master.add_cuts(ws)
    state = RunState(labels, w)
    eev = state.offer(x_ev, ev_cuts)
    for c in ev_cuts:
        if not c.ok:
            notes.append(f"the {ev_name} plan cannot be operated in {labels[c.scenario]}")
    master.add_cuts(ev_cuts)
    points = np.vstack([c.point for c in ws] + [x_ev])
    spread = points.max(axis=0) - points.min(axis=0)
    inv_range = 1.0 / (spread + 1e-3 * max(float(spread.max(initial=0.0)), 1.0))
    timings = {"setup": t_setup, "mean_value": t_mv - t_setup, "wait_and_see": t_ws - t_setup}
    timings["ev"] = t_ev - t_ws
    return StartedRun(master, state, ws, ev_cuts, eev, ev_name, table, inv_range, timings, work)
