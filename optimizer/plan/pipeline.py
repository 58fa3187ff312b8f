"""The pipe of one plan: build -> solve -> check -> tables -> :class:`PlanResult`.

Pipeline of :func:`solve`: build (:mod:`optimizer.plan.model`) -> hand the model to the
solver (:func:`optimizer.plan.raw_solve.run_solver`, or a retained
:class:`~optimizer.plan.highs_session.HighsSession`) -> read values only when a solution
exists -> independent check (:mod:`optimizer.plan.check`) -> tidy tables
(:mod:`optimizer.plan.results`), joined by :mod:`optimizer.plan.plan_result`; when the
model is infeasible, an elastic re-solve explains it (:mod:`optimizer.plan.explain`).
The elastic re-solve of the explanation gets its LP solver passed in
(:func:`_elastic_solver`), so :mod:`optimizer.plan.explain` never imports the solve.

Solvers
-------
``"highs"`` hands the model to ``highspy`` in bulk (:mod:`optimizer.plan.highs`); any
other name is a PuLP solver (:mod:`optimizer.plan.solvers`,
:mod:`optimizer.plan.pulp_solve`).

Dual sign convention (one convention for both solvers)
------------------------------------------------------
``shadow_price = d(objective) / d(rhs)`` in USD (discounted, as in the objective)
per unit of the row's right-hand side: USD per MW for site_it_power, site_liquid,
site_grid, site_build_rate, site_max and commitment rows; USD per m3 for site_water;
USD per resource unit for supply_resource; USD per chip for chip_inventory,
chip_window and fleet_assignment; USD per H100e for demand_balance. In this
minimisation a binding ``<=`` limit therefore has a shadow price <= 0 (one more MW
of grid lowers the cost) and a binding ``>=`` row (demand, commitment) a price >= 0.
HiGHS row duals and CBC's ``pi`` already follow this convention for a minimisation
(checked against finite-difference re-solves in ``tests/test_model_duals.py``).
In integer mode the plan is the MIP's incumbent (optimal, or the best found at the
time limit) and the duals come from the LP re-solved with the integer columns fixed
at the incumbent's values (``PlanResult.duals_from == "lp_with_integers_fixed"``);
``PlanResult.mip_bound_usd`` and ``mip_gap`` carry the solver's best bound and the
relative gap ``|objective - bound| / |objective|`` where the solver reports a bound.
A solver that returns no duals (GLPK, SCIP through PuLP) gives null shadow prices
and ``PlanResult.duals_note`` says why.
In a stochastic model (:mod:`optimizer.plan.stochastic`) the per-scenario results
report each row's dual divided by the scenario's weight (the price conditional on
that scenario).

Status honesty
--------------
A solution is read only when the solver says one exists (stale values are never
used). After every solve the checker recomputes every constraint from the returned
values; if any is violated beyond ``check_tolerance`` (relative to 1 + |rhs|) the
status becomes ``Status.error`` with a message naming the first violations.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from optimizer.plan.deadline import MIN_STAGE_S, start_deadline, time_left, until
from optimizer.plan.explain import explain_infeasible, explain_missing
from optimizer.plan.fixing import fix_first_stage
from optimizer.plan.highs_session import HighsSession
from optimizer.plan.model import PlanningModel, build_model
from optimizer.plan.options import SolveOptions, Status
from optimizer.plan.plan_result import PlanResult, _scenario_result, _unsolved
from optimizer.plan.raw_solve import run_solver
from optimizer.plan.results import warm_structure


def solve(
    ds: Any,
    options: SolveOptions | None = None,
    *,
    fixed_first_stage: Mapping[str, pd.DataFrame] | Any | None = None,
    first_stage: str | Sequence[str] = "full",
    deadline: float | None = None,
) -> PlanResult:
    """Build, solve, check and tabulate the plan of one dataset.

    Parameters
    ----------
    ds : Dataset
        Validated dataset (scenario applied).
    options : SolveOptions, optional
        Defaults: HiGHS, LP, no time limit.
    fixed_first_stage : Mapping[str, DataFrame] or PlanResult, optional
        A plan whose first-stage decisions (``build_out.build_mw`` and
        ``liquid_build_mw``, ``fleet.installed_chips``, ``production.produced_chips``)
        are imposed; only the operation is optimised (for VSS / EVPI). A plan value
        with no column in this dataset's model makes the result infeasible.
    first_stage : str or sequence of str
        Which of the plan's decisions ``fixed_first_stage`` imposes: ``full`` (all of
        the above, default) or ``capacity`` (build, liquid and retrofit only), see
        :data:`optimizer.plan.model.FIRST_STAGE_SETS`.
    deadline : float, optional
        ``time.monotonic()`` reading by which the solve ends (the CLI starts the
        clock at the command's start); default ``options.time_limit_s`` from this
        call. The build, the warm start, the LP or MIP, the LP with the integers
        fixed (shadow prices) and the elastic re-solve (explanation) all fit in it;
        the checker and the tables come after (seconds).

    Returns
    -------
    PlanResult
    """
    options = options or SolveOptions()
    deadline = start_deadline(options) if deadline is None else deadline
    if time_left(deadline) <= 0:
        msg = f"{options.solver}: the time limit ran out before the model was built"
        return _unsolved(ds, options, Status.time_limit_no_solution, msg, {"build": 0.0})
    t0 = time.perf_counter()
    model = build_model(
        ds,
        integer_units=options.integer_units,
        clusters=options.clusters,
        formulation=options.formulation,
        objective=options.objective,
    )
    if fixed_first_stage is not None:
        model = fix_first_stage(model, fixed_first_stage, first_stage)
    build_s = time.perf_counter() - t0
    if len(model.unmatched_fixed):
        u = model.unmatched_fixed
        msg = "fixed plan cannot be applied: " + "; ".join(
            f"{r.kind} {r.key} in {r.period} = {r.value:g} has no decision in this dataset"
            for r in u.head(5).itertuples()
        )
        return _unsolved(ds, options, Status.infeasible, msg, {"build": build_s}, model)
    results = solve_model(model, options, build_s=build_s, deadline=deadline)
    return results[0]


def solve_model(
    model: PlanningModel,
    options: SolveOptions,
    *,
    build_s: float = 0.0,
    session: HighsSession | None = None,
    deadline: float | None = None,
) -> list[PlanResult]:
    """Solve a built model; return one PlanResult per scenario.

    Parameters
    ----------
    model : PlanningModel
    options : SolveOptions
    build_s : float
        Build time to report.
    session : HighsSession, optional
        Retained HiGHS instance: the model is solved from the session's previous
        basis when it has the same shape (see :class:`HighsSession`); the timings
        then gain ``warm_start`` (1.0 when warm-started, else 0.0). Ignored unless
        ``options.solver == "highs"``.
    deadline : float, optional
        ``time.monotonic()`` reading by which the solve and the elastic re-solve
        that explains an infeasible model end (:func:`solve` starts it before the
        build); None: ``options.time_limit_s`` from now.

    Returns
    -------
    list of PlanResult
    """
    from optimizer.plan.solvers import resolve_solver

    warm: bool | None = None
    deadline = start_deadline(options) if deadline is None else deadline
    # the report names the solver that ran, by its listed name ("cbc" -> PULP_CBC_CMD)
    options = replace(options, solver=resolve_solver(options.solver))
    if time_left(deadline) <= 0:  # a solver given no time may still finish a tiny LP
        msg = f"{options.solver}: the time limit ran out before the solver started"
        timings = {"build": build_s, "solve": 0.0}
        return [
            _unsolved(ds, options, Status.time_limit_no_solution, msg, timings, model)
            for ds in model.datasets
        ]
    if session is not None and options.solver == "highs":
        raw, warm = session.run(model)
    else:
        with _structure_alongside(model):
            raw = run_solver(model, options, deadline=deadline)
    infeasible = None
    if raw.status == Status.infeasible and options.explain_infeasible:
        infeasible, note = _explain(model, options, deadline)
        raw = replace(raw, message=raw.message + note)
    out = []
    for i in range(len(model.datasets)):
        timings = {"build": build_s, "handover": raw.handover_s, "solve": raw.solve_s}
        if warm is not None:
            timings["warm_start"] = float(warm)
        out.append(_scenario_result(model, raw, i, options, infeasible, timings))
    return out


#: Columns from which :func:`_structure_alongside` works beside the solver (below it
#: a solve takes well under a second and a thread would only add its start-up).
ALONGSIDE_COLUMNS = 20_000


@contextmanager
def _structure_alongside(model: PlanningModel) -> Iterator[None]:
    """Do the solution-independent work of the results on a second thread meanwhile.

    :func:`optimizer.plan.results.warm_structure` and :func:`explain_missing` depend on the
    model, not on its solution; HiGHS releases the GIL while it solves, so on a
    machine with two cores or more they run beside it (large: about 0.3 s of a
    33 s solve). The thread is joined before the block's result is used; its
    exceptions are dropped (the same work runs again after the solve and raises there).
    """
    if model.n_variables < ALONGSIDE_COLUMNS or (os.cpu_count() or 1) < 2:
        yield
        return

    def work() -> None:
        try:
            warm_structure(model)
            for i in range(len(model.datasets)):
                explain_missing(model, i)
        except Exception:  # noqa: BLE001 - redone after the solve, which reports it
            return

    thread = threading.Thread(target=work, name="results-structure", daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join()


def _elastic_solver(
    options: SolveOptions, deadline: float | None = None
) -> Callable[[PlanningModel], np.ndarray | None]:
    """LP solve of the elastic model for :func:`optimizer.plan.explain.explain_infeasible`.

    Each solve gets what remains before ``deadline`` (``time.monotonic()``; none
    without it) as its time limit.
    """
    lp_options = replace(options, time_limit_s=None, integer_units=False)

    def solve_lp(elastic: PlanningModel) -> np.ndarray | None:
        return run_solver(elastic, until(lp_options, deadline), lp_only=True).x

    return solve_lp


def _explain(
    model: PlanningModel, options: SolveOptions, deadline: float | None
) -> tuple[pd.DataFrame | None, str]:
    """Explanation rows of an infeasible model and a note when the time limit cut it off."""
    cut = "; no explanation: the time limit ran out before the elastic re-solve ended"
    if time_left(deadline) <= MIN_STAGE_S:
        return None, cut
    rows = explain_infeasible(model, _elastic_solver(options, deadline))
    if not len(rows) and time_left(deadline) <= MIN_STAGE_S:
        return rows, cut
    return rows, ""
