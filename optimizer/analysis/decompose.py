"""Hedged plan at scale: the two-stage plan by an L-shaped (Benders) decomposition on Dask.

The extensive form of :func:`optimizer.plan.stochastic.solve_stochastic` holds one copy of the
operating columns per scenario, so it grows with the number of scenarios. Here the
same two-stage LP is solved by a multi-cut L-shaped method whose scenario
subproblems are solved by Dask actors (one per worker; each keeps a HiGHS instance
per scenario and re-solves it warm, :mod:`optimizer.analysis.decompose_blocks`). Local
cluster by default, ``scheduler=ADDRESS`` for an existing one, ``workers=0`` for
in-process blocks. ``objective="margin"`` solves every LP as cost less revenue (the
figures are then minus the margins). This module is the driver.

Notation
--------
``x``: the first-stage columns (every column with ``scenario == -1``), in the same
positions in every scenario model and in the extensive form
(:func:`optimizer.plan.model.first_stage_universe`). Which decisions they are is the
``first_stage`` argument (:data:`optimizer.plan.model.FIRST_STAGE_SETS`): ``full`` shares
build, liquid, retrofit, install and produce (2,215 columns at the default size);
``capacity`` shares only the facility decisions build, liquid and retrofit (472
columns) and leaves chip production and installs to each scenario, so a plan commits
the halls and their power and cooling now and buys chips once the scenario is known.
The extensive form and :func:`optimizer.analysis.hedge.hedged_plan` take the same argument, so
both methods always solve the same problem. ``V_s(x)``: optimum of scenario ``s``
alone with its first stage fixed to ``x`` (its whole discounted cost, first-stage
capex included). The extensive form is ``RP = min_x sum_s p_s V_s(x)``.

The optimality cuts on each ``V_s`` and the induced rows are in
:mod:`optimizer.analysis.decompose_cuts`, the master LP that holds them in
:mod:`optimizer.analysis.decompose_master`.

Bounds and stopping
-------------------
Lower bound: the master optimum. Upper bound: the best ``sum_s p_s V_s(x_k)`` seen.
The run stops when ``(UB - LB) / |UB| <= tol`` (default 1e-6) or after ``max_iter``
iterations; the reported expected cost is the upper bound (a real plan's cost), so it
exceeds the extensive form's optimum by at most ``tol`` relative. When a master plan
is not operable in some scenario, the point is halved toward the best operable plan
until every scenario operates it.

Risk aversion (``risk=RiskSpec(alpha, L)``): the plan minimises
``rho(V) = sum_s p_s V_s + L * CVaR_alpha(V)``; the cuts are unchanged and the master's
objective is ``rho(theta)`` in Rockafellar-Uryasev form
(:mod:`optimizer.analysis.decompose_master`); the upper bound is ``rho`` of an evaluated
plan's scenario costs (computed by sorting, :func:`optimizer.plan.risk.risk_value`), and
WS and EEV are ``rho`` of the wait-and-see and EV-plan costs, as in
:func:`optimizer.analysis.hedge.hedged_plan`. :func:`hedge_frontier` sweeps ``L`` on one
master: every cut, and every evaluated plan (a candidate incumbent), stays valid.

VSS and EVPI come from the same solves: ``WS = sum_s p_s z_s``; the EV plan is the
mean-value problem's first stage (:func:`optimizer.analysis.hedge.mean_value_dataset`; the
heaviest scenario's plan when the mean is undefined); iteration 0 evaluates it in
every scenario, which gives ``EEV`` (inf when some scenario cannot operate it) and
the first cuts. It is also the first incumbent, and a good one: starting from the
wait-and-see cuts alone, the first master plan cost 6.2e11 USD at 100 scenarios of the
default size (WS 1.35e11, EEV 2.1e11) and its solves took longer than the EV plan's.
"""

from __future__ import annotations

import contextlib
import math
import resource
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from optimizer.analysis.decompose_blocks import ScenarioBlocks, open_blocks
from optimizer.analysis.decompose_cuts import Cut, TimeLimit
from optimizer.analysis.decompose_master import MasterProblem
from optimizer.analysis.decompose_result import DecomposedPlan, first_stage_table
from optimizer.analysis.decompose_setup import RunState as _State
from optimizer.analysis.decompose_setup import StartedRun as _Run
from optimizer.analysis.decompose_setup import check_inputs, mean_value_data, start_run
from optimizer.plan.coding import dataset_codes
from optimizer.plan.columns import first_stage_kinds
from optimizer.plan.model import FirstStageUniverse
from optimizer.plan.risk import RiskSpec, risk_summary, risk_value

__all__ = ["DEFAULT_TOLERANCE", "hedge_decomposed", "hedge_frontier"]

#: Default relative gap (UB - LB) / |UB| at which the L-shaped method stops.
DEFAULT_TOLERANCE = 1e-6

#: Default master optima at which a cut may stay slack before it is pooled.
DEFAULT_CUT_AGE = 5


class _Round(NamedTuple):
    """What :func:`_evaluate_operable` found in a round."""

    point: np.ndarray | None
    cuts: list[Cut]
    point_cuts: list[Cut]
    halvings: int
    short: bool = False


#: Columns of the iterations table that count (whole numbers; missing in round 0).
COUNT_COLUMNS = ("iteration", "cuts", "master_rows", "simplex_iterations", "halvings")


def counted(iterations: pd.DataFrame) -> pd.DataFrame:
    """Return the iterations table with its counts as whole numbers (``Int64``).

    They were floats (``iterations.csv`` read ``0.0, 1.0 ...`` and ``cuts`` ``10.0``);
    a count a round has no value for (round 0's master rows) stays missing.
    """
    out = iterations.copy()
    for c in COUNT_COLUMNS:
        if c in out:
            out[c] = out[c].round().astype("Int64")
    return out


def _evaluate_operable(
    blocks: ScenarioBlocks, state: _State, x: np.ndarray, it: int, until: float | None = None
) -> _Round:
    """Evaluate ``x``; when some scenario cannot operate it, halve toward the incumbent.

    Each scenario's operable first stages form a convex set that holds the incumbent,
    so a halved point stays operable wherever the previous one was: after a halving
    only the scenarios that failed are solved, and the others only once those pass
    (a run at 100 scenarios spent 37 s on six full rounds of halvings). Every cut of
    an evaluated point is valid and kept.

    ``until`` (a ``time.time()`` value) is the run's time limit: the blocks start no
    scenario after it, and a round it cuts short returns no point (its cuts are kept).

    Returns
    -------
    _Round
        ``point`` is operable in every scenario (None when 30 halvings found none, or
        when the time limit cut the round short: then ``short``), ``cuts`` every cut of
        the round, ``point_cuts`` the point's cut in every scenario in run order (empty
        when ``point`` is None), ``halvings`` the halvings made.
    """
    n = len(state.names)
    kept: list[Cut] = []
    at_x: dict[int, Cut] = {}
    todo: list[int] | None = None  # None: every scenario
    halvings = 0
    while True:
        cuts = blocks.cuts("evaluate", x, todo, until)
        kept += [c for c in cuts if c.ok]
        if len(cuts) < (n if todo is None else len(todo)):
            return _Round(None, kept, [], halvings, short=True)
        bad = [c for c in cuts if not c.ok]
        if not bad:
            at_x.update((c.scenario, c) for c in cuts)
            if len(at_x) == n:
                return _Round(x, kept, [at_x[k] for k in range(n)], halvings)
            todo = [k for k in range(n) if k not in at_x]
            continue
        if state.best_x is None:
            who = ", ".join(f"{state.names[c.scenario]} ({c.message})" for c in bad[:3])
            raise RuntimeError(f"iteration {it}: no operable plan yet; {who}")
        if halvings == 30:
            # no point on the segment was operable everywhere: no upper bound this round
            return _Round(None, kept, [], halvings)
        halvings += 1
        x = state.best_x + 0.5 * (x - state.best_x)
        at_x, todo = {}, sorted(c.scenario for c in bad)


def _release_free_memory() -> None:
    """Return freed heap pages to the OS (glibc ``malloc_trim``; a no-op elsewhere).

    Each master copy grows its matrices with every round of cuts, and the freed old
    copies stay in the heap: a master with 3,500 dense 472-column cuts (100 scenarios,
    35 rounds) held 992 MB resident without this, 688 MB with it (2026-12-01).
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name is None:
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(name).malloc_trim(0)


def _iterate(
    blocks: ScenarioBlocks,
    master: MasterProblem,
    state: _State,
    inv_range: np.ndarray,
    tol: float,
    max_iter: int,
    on_iteration: Callable[[Mapping[str, float]], None],
    limit: TimeLimit,
    kappa: float = 0.3,
) -> float:
    """Run master / subproblem rounds until the gap is at most ``tol``; return the LB.

    Level stabilisation (a level bundle method with a scaled 1-norm, so every step is
    an LP): the master gives the lower bound ``LB``; the next plan is the point of
    the master's level set ``sum_s p_s theta_s <= LB + kappa (UB - LB)`` nearest the
    best plan so far. Its cuts either cut the level set or improve the best plan.

    The run stops after the round in which ``limit`` passes; a round it cuts short
    (no scenario is started after it) adds its cuts and its row (the master's lower
    bound, the upper bound as it was).
    """
    lb = -math.inf
    for it in range(1, max_iter + 1):
        t0 = time.perf_counter()
        new_lb, x = master.solve()
        lb = max(lb, new_lb)
        if state.best_x is not None and math.isfinite(state.best_ub):
            level = lb + kappa * (state.best_ub - lb)
            x = master.project(state.best_x, inv_range, level)
        t1 = time.perf_counter()
        cpu0, busy0 = blocks.solve_total_s, blocks.busy_total_s
        got = _evaluate_operable(blocks, state, x, it, limit.until())
        if got.point is not None:
            state.offer(got.point, got.point_cuts)
        cuts = got.cuts
        master.add_cuts(cuts)
        if got.short and state.best_x is None:  # no plan was operable everywhere yet
            raise limit.error(f"L-shaped round {it}", len(cuts), len(state.names), "evaluated")
        _release_free_memory()
        gap = (state.best_ub - lb) / max(abs(state.best_ub), 1.0)
        row = {
            "iteration": float(it),
            "lower_bound_usd": lb,
            "upper_bound_usd": state.best_ub,
            "gap_rel": gap,
            "cuts": float(master.n_cuts),
            "master_rows": float(len(master.cuts.active)),
            "master_s": t1 - t0,
            "subproblems_s": time.perf_counter() - t1,
            "solve_cpu_s": blocks.solve_total_s - cpu0,
            "busiest_block_s": blocks.busy_total_s - busy0,
            "simplex_iterations": float(sum(c.simplex_iterations for c in cuts)),
            "halvings": float(got.halvings),
        }
        state.rows.append(row)
        on_iteration(row)
        if gap <= tol or got.short or limit.passed():
            break
    return lb


def hedge_decomposed(
    datasets: Sequence[Any],
    weights: Sequence[float] | None = None,
    names: Sequence[str] | None = None,
    *,
    workers: int = 2,
    scheduler: str | None = None,
    tol: float = DEFAULT_TOLERANCE,
    max_iter: int = 200,
    threads: int | None = None,
    retain: int = 0,
    time_limit_s: float | None = None,
    progress: bool = False,
    on_iteration: Callable[[Mapping[str, float]], None] | None = None,
    first_stage: str | Sequence[str] = "full",
    risk: RiskSpec | None = None,
    warm_start: str = "live",
    live_limit: int | None = None,
    cut_age: int | None = DEFAULT_CUT_AGE,
    objective: str = "cost",
) -> DecomposedPlan:
    """Solve the hedged two-stage plan by the L-shaped method, subproblems on Dask.

    Parameters
    ----------
    datasets : sequence of Dataset
        Scenario datasets over one horizon (validated, scenario applied).
    weights : sequence of float, optional
        Probabilities (default equal); normalised to sum 1.
    names : sequence of str, optional
        Scenario names (default ``ds.scenario`` or ``s<k>``).
    workers : int
        Worker processes of the local Dask cluster, one scenario block each; 0 runs a
        single block in this process (no Dask). Ignored with ``scheduler``.
    scheduler : str, optional
        Address of an existing Dask scheduler (one block per worker there).
    tol : float
        Relative gap ``(UB - LB) / |UB|`` at which to stop (default 1e-6).
    max_iter : int
        Iteration limit (the plan is still returned, with ``converged=False``).
    threads : int, optional
        HiGHS threads per subproblem solve.
    retain : int
        Scenarios held exactly in the master (partial Benders: their operating
        columns and rows join it), picked at evenly spaced quantiles of the
        wait-and-see costs; 0 for the pure L-shaped master.
    time_limit_s : float, optional
        Wall-clock seconds from this call (> 0). Once they have passed no scenario's
        solves are started, on this process or on a worker: a run ends after the calls
        under way (a scenario's build and two solves during the first solves, one
        solve in a round) and the current master solve. What it does not cut: the
        blocks' start-up, the mean-value solve and the model of ``retain``'s scenarios
        (the limit is checked after each). When it passes before a plan has been
        evaluated in every scenario there is no plan to return: HedgeTimeLimitError.
        Otherwise the run returns the best plan evaluated so far, with
        ``converged=False`` when the gap is above ``tol`` and a note; a round it cuts
        short keeps its cuts and its row (the master's lower bound, the upper bound as
        it was). With several risk weights (:func:`hedge_frontier`), each weight after
        the limit gets one master solve, its lower bound, and the plans already
        evaluated.
    progress : bool
        Show a rich progress bar with the bounds.
    on_iteration : callable, optional
        Called with each row of ``iterations``.
    first_stage : str or sequence of str
        The shared decisions: ``full`` (build, liquid, install, produce, retrofit;
        the default) or ``capacity`` (build, liquid, retrofit; chips are recourse),
        see :data:`optimizer.plan.model.FIRST_STAGE_SETS`.
    risk : RiskSpec, optional
        Minimise ``E + L * CVaR_alpha`` of the scenario costs (module docstring).
    warm_start : {"live", "basis", "cold"}
        How a scenario subproblem's next solve starts
        (:class:`optimizer.analysis.decompose_blocks.ScenarioBlock`): its own retained
        HiGHS instance (the default), its last basis in a shared instance, or cold.
        The answer is the same; the time is not.
    live_limit : int, optional
        Most scenarios per worker with their own HiGHS instance (default all; about
        20 MB each at the default size).
    cut_age : int, optional
        Master optima at which a cut may stay slack before it leaves the master for
        the pool (:mod:`optimizer.analysis.decompose_master`); None keeps every cut.
    objective : {"cost", "margin"}
        ``margin`` minimises cost less revenue at the customers' prices (module
        docstring): every USD figure of the result (``expected_cost_usd``, the bounds,
        WS, EEV) is then that difference, minus the expected margin.

    Returns
    -------
    DecomposedPlan

    Raises
    ------
    ValueError
        For bad weights or names, or ``retain`` with a risk weight.
    ScenarioInfeasibleError
        When a scenario alone has no optimum (a RuntimeError).
    HedgeTimeLimitError
        When ``time_limit_s`` passes before any plan was evaluated in every scenario
        (a RuntimeError naming the phase and the scenarios solved).
    ValueError
        When ``time_limit_s`` is not a number of seconds above 0.
    RuntimeError
        When a master plan cannot be operated.
    """
    return _run_risks(
        datasets,
        weights,
        names,
        [risk],
        workers=workers,
        scheduler=scheduler,
        tol=tol,
        max_iter=max_iter,
        threads=threads,
        retain=retain,
        time_limit_s=time_limit_s,
        progress=progress,
        on_iteration=on_iteration,
        first_stage=first_stage,
        warm_start=warm_start,
        live_limit=live_limit,
        cut_age=cut_age,
        objective=objective,
    )[0]


def hedge_frontier(
    datasets: Sequence[Any],
    risk_weights: Sequence[float],
    alpha: float = 0.9,
    weights: Sequence[float] | None = None,
    names: Sequence[str] | None = None,
    **kw: Any,
) -> list[DecomposedPlan]:
    """Solve the risk-averse hedged plan for each risk weight ``L``, on one master.

    The scenario subproblems' cuts and every evaluated plan carry over from one ``L`` to
    the next (module docstring), so later points start from a rich outer model.

    Parameters
    ----------
    datasets : sequence of Dataset
    risk_weights : sequence of float
        The weights ``L >= 0`` of ``CVaR_alpha``, solved in this order.
    alpha : float
        CVaR level in [0, 1).
    weights, names :
        As :func:`hedge_decomposed`.
    **kw :
        The other keyword arguments of :func:`hedge_decomposed` (``retain`` must be 0).

    Returns
    -------
    list of DecomposedPlan
        One per weight, in order; each ``risk`` holds the expected cost and the CVaR.

    Raises
    ------
    ValueError
        For an alpha outside [0, 1) or a negative weight (naming ``--alpha`` or
        ``--weight``), and as :func:`hedge_decomposed`.
    """
    risks = [RiskSpec(alpha, float(v)) for v in risk_weights]
    return _run_risks(datasets, weights, names, risks, **kw)


def _run_risks(
    datasets: Sequence[Any],
    weights: Sequence[float] | None,
    names: Sequence[str] | None,
    risks: Sequence[RiskSpec | None],
    *,
    workers: int = 2,
    scheduler: str | None = None,
    tol: float = DEFAULT_TOLERANCE,
    max_iter: int = 200,
    threads: int | None = None,
    retain: int = 0,
    time_limit_s: float | None = None,
    progress: bool = False,
    on_iteration: Callable[[Mapping[str, float]], None] | None = None,
    first_stage: str | Sequence[str] = "full",
    warm_start: str = "live",
    live_limit: int | None = None,
    cut_age: int | None = DEFAULT_CUT_AGE,
    objective: str = "cost",
) -> list[DecomposedPlan]:
    """Run the L-shaped method once per risk measure on one set of blocks and one master."""
    if retain and any(r is not None and r.weight > 0 for r in risks):
        raise ValueError("--retain: scenarios held in the master cannot carry a risk weight")
    t_start = time.perf_counter()
    limit = TimeLimit.starting(time_limit_s)
    w, labels = check_inputs(datasets, weights, names)
    notes: list[str] = []
    kinds = first_stage_kinds(first_stage)
    codes = dataset_codes(datasets)
    out = []
    opened = open_blocks(
        datasets, codes, kinds, workers, scheduler, threads, warm_start, live_limit, objective
    )
    with opened as blocks:
        # the mean-value dataset here while the blocks code their datasets and make
        # their first-stage keys
        mean_value = mean_value_data(datasets, w)
        universe = blocks.universe(codes, kinds)
        keep = min(retain, len(datasets))
        setup = (keep, cut_age, objective, mean_value, limit)
        run = start_run(blocks, datasets, w, labels, universe, notes, *setup)
        run.timings["setup"] = run.timings["setup"] - t_start
        for risk in risks:
            t_ev = time.perf_counter()
            _set_risk(run, risk)
            lb = _solve_with_progress(blocks, run, tol, max_iter, progress, on_iteration, limit)
            run.timings["iterations"] = time.perf_counter() - t_ev
            own = notes + _time_limit_notes(limit, run.state, lb, tol)  # this plan's alone
            worker_mb = float(sum(blocks.call("peak_rss_mb"))) if blocks.remote else 0.0
            out.append(_result(run, lb, tol, universe, datasets, own, worker_mb, t_start))
    return out


def _time_limit_notes(limit: TimeLimit, state: _State, lb: float, tol: float) -> list[str]:
    """Return the note of a run stopped at its time limit with the gap above ``tol`` (or none)."""
    if not limit.passed() or state.best_ub - lb <= tol * max(abs(state.best_ub), 1.0):
        return []
    last = int(state.rows[-1]["iteration"]) if state.rows else 0
    return [
        f"stopped at the time limit of {limit.limit_s:g} s in L-shaped round {last}: the plan "
        "is the best evaluated so far"
    ]


def _set_risk(run: _Run, risk: RiskSpec | None) -> None:
    """Give the master and the bookkeeping ``risk``; iteration 0 row under it."""
    weight, alpha = (0.0, 0.9) if risk is None else (risk.weight, risk.alpha)
    run.master.set_risk(weight, alpha)
    state = run.state
    state.rescore(risk)
    floors = np.array([c.value for c in run.ws])
    row0 = {"iteration": 0.0, "lower_bound_usd": risk_value(floors, state.w, risk)}
    row0["upper_bound_usd"] = state.best_ub
    state.rows.append({**row0, "gap_rel": math.nan, "cuts": float(run.master.n_cuts)})


def _solve_with_progress(
    blocks: ScenarioBlocks,
    run: _Run,
    tol: float,
    max_iter: int,
    progress: bool,
    on_iteration: Callable[[Mapping[str, float]], None] | None,
    limit: TimeLimit,
) -> float:
    """Iterate with a progress report: iterations, the last gap and upper bound, times.

    A rich bar on a terminal, plain lines to a file or pipe
    (:class:`optimizer.output.progress.Progress`); the time left is at ``max_iter``
    iterations, an upper bound (the run stops at ``tol``).
    """
    from optimizer.output.formatting import fmt_usd
    from optimizer.output.progress import Progress

    with Progress("L-shaped iterations", max_iter, enabled=progress, limit=True) as bar:

        def report(row: Mapping[str, float]) -> None:
            gap, ub = row["gap_rel"], row["upper_bound_usd"]
            bar.advance(last=f"gap {gap:.2e} upper bound {fmt_usd(ub)}")
            if on_iteration is not None:
                on_iteration(row)

        return _iterate(blocks, run.master, run.state, run.inv_range, tol, max_iter, report, limit)


def _result(
    run: _Run,
    lb: float,
    tol: float,
    universe: FirstStageUniverse,
    datasets: Sequence[Any],
    notes: list[str],
    worker_mb: float,
    t_start: float,
) -> DecomposedPlan:
    """Assemble the :class:`DecomposedPlan` of a finished run."""
    state = run.state
    if state.best_x is None or state.best_values is None:
        raise RuntimeError("no operable first stage was found")
    rp = state.best_ub
    ws_usd = risk_value([c.value for c in run.ws], state.w, state.risk)
    ev_values = [c.value if c.ok else math.inf for c in run.ev_cuts]
    eev = risk_value(ev_values, state.w, state.risk)
    gap = (rp - lb) / max(abs(rp), 1.0)
    per = pd.DataFrame(
        {
            "scenario": list(state.names),
            "weight": state.w,
            "hedged_cost_usd": state.best_values,
            "ev_fixed_cost_usd": [c.value for c in run.ev_cuts],
            "wait_and_see_cost_usd": [c.value for c in run.ws],
        }
    )
    timings = dict(run.timings, total=time.perf_counter() - t_start)
    client_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return DecomposedPlan(
        scenarios=state.names,
        weights=tuple(float(v) for v in state.w),
        expected_cost_usd=rp,
        lower_bound_usd=lb,
        gap_rel=gap,
        converged=gap <= tol,
        wait_and_see_usd=ws_usd,
        eev_usd=eev,
        vss_usd=eev - rp,
        evpi_usd=rp - ws_usd,
        ev_problem=run.ev_name,
        iterations=counted(pd.DataFrame(state.rows)),
        per_scenario=per,
        first_stage=first_stage_table(run.table, universe, datasets[0].periods, state.best_x),
        timings_s=timings,
        work=dict(run.work),
        peak_mb={"client": client_mb, "workers": worker_mb},
        notes=tuple(notes),
        risk=risk_summary(state.best_values, state.w, state.risk),
    )
