"""The PuLP solve path: build the PuLP problem, run the solver under a watch, read the answer.

Duals and MIP bounds per solver (PuLP 3.3)
------------------------------------------
* ``PULP_CBC_CMD`` (CBC through PuLP's ``COIN_CMD`` with the bundled binary, the
  non-deprecated class): row duals; MIP best bound and gap read from CBC's log.
* ``HiGHS`` (PuLP's highspy interface): row duals; MIP bound and gap from its info.
* ``SCIP_PY``: no duals through PuLP (reported null, with that reason); MIP bound
  and gap from ``pyscipopt``.
* ``GLPK_CMD``: no duals and no MIP bound through PuLP (null, with that reason).
  glpsol's "INTEGER NON-OPTIMAL" (stopped by the time limit with an incumbent),
  which PuLP reads as optimal, is reported as ``time_limit_feasible``.

Time limits
-----------
CBC's limit (``-sec``, PuLP's default ``timeMode elapsed``: wall clock) is only
checked between CBC's phases and inside branch and bound: the root LP relaxation
and the preprocessing run to the end (measured, cluster mode with ``-sec 10``: 63 s),
so :func:`optimizer.plan.solver_watch.watch_solver` stops the process at the limit. A
preprocessing cut off by the limit reports "infeasible"; after the limit that verdict
is no proof, and it is reported as ``time_limit_no_solution``. See ``docs/solvers.md``.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pulp

from optimizer.plan.model import PlanningModel
from optimizer.plan.options import RawSolution, SolveOptions, Status
from optimizer.plan.pulp_status import _mip_bound, _status_of, cbc_solver
from optimizer.plan.solver_watch import STOP_GRACE_S, SolverWatch, solve_folder, watch_solver
from optimizer.plan.solvers import _NO_DUALS, _binary_path, resolve_solver

#: PuLP solvers whose command line takes a time limit in whole seconds only.
WHOLE_SECOND_LIMITS = frozenset({"GLPK_CMD"})


def _pulp_solver(name: str, options: SolveOptions, *, mip: bool, folder: str) -> pulp.LpSolver:
    # integrality is already relaxed in the problem when ``mip`` is False (SCIP_PY
    # warns on ``mip=False``), so only CBC gets the flag (it picks -initialSolve)
    kw: dict[str, Any] = {"msg": False}
    if options.time_limit_s is not None:
        kw["timeLimit"] = options.time_limit_s
        if name in WHOLE_SECOND_LIMITS:  # glpsol --tmlim 4.98: "Invalid time limit"
            kw["timeLimit"] = max(1, math.ceil(options.time_limit_s))
    if name == "PULP_CBC_CMD":
        return cbc_solver(options, mip=mip, log_path=str(Path(folder) / "cbc.log"))
    if options.threads is not None and name not in ("HiGHS", "PULP_CBC_CMD"):
        warnings.warn(  # GLPK_CMD, SCIP_PY ... ran as if it were not given
            f"{name} takes no thread count through PuLP: threads={options.threads} is not used",
            UserWarning,
            stacklevel=2,
        )
    if name in ("HiGHS", "SCIP_PY"):
        kw["gapRel"] = options.mip_gap
        if options.threads is not None and name == "HiGHS":
            kw["threads"] = options.threads
    solver = pulp.getSolver(name, **kw)
    return solver


def _read_duals(name: str, cons: list[pulp.LpConstraint]) -> tuple[np.ndarray | None, str]:
    pis = [c.pi for c in cons]
    if not cons:
        return np.zeros(0), ""
    if name in _NO_DUALS or all(p is None for p in pis):
        return None, _NO_DUALS.get(name, f"{name} returned no duals")
    return np.array([0.0 if p is None else float(p) for p in pis]), ""


def _timed_options(options: SolveOptions, stop_at: float | None) -> SolveOptions:
    """``options`` with the time limit cut to what remains before ``stop_at``."""
    if stop_at is None:
        return options
    left = max(stop_at - time.monotonic(), 0.01)
    return replace(options, time_limit_s=left)


def _after_limit(
    status: Status, message: str, watch: SolverWatch, ran_s: float, limit: float | None
) -> tuple[Status, str]:
    """Correct a status the time limit makes untrustworthy, and say why."""
    if limit is None:
        return status, message
    late = watch.stopped or ran_s >= limit
    if status == Status.infeasible and late:
        # CBC's preprocessing, cut off by the limit, says "infeasible"
        return Status.time_limit_no_solution, (
            f"{message}, after the time limit: no proof of infeasibility"
        )
    if status == Status.error and watch.stopped:
        return Status.time_limit_no_solution, f"{message} (stopped at the time limit)"
    return status, message


def run_pulp(model: PlanningModel, options: SolveOptions, *, lp_only: bool = False) -> RawSolution:
    """Solve a model through PuLP with ``options.solver`` (a PuLP name or ``cbc``).

    Parameters
    ----------
    model : PlanningModel
    options : SolveOptions
        ``time_limit_s`` is the wall clock of the whole call (s): building the PuLP
        problem counts, and a solver program still running at its end is stopped
        (:func:`watch_solver`).
    lp_only : bool
        Relax integrality.

    Returns
    -------
    RawSolution
        Values only when the solver has a solution; row duals (d objective / d rhs)
        where the solver returns them, else None with ``dual_note`` saying why;
        ``mip_bound`` where the solver reports it.

    Raises
    ------
    KeyboardInterrupt
        SIGINT reached the main thread during the solve (after the solver stopped
        and its folder was removed).
    SolverUnavailableError
        ``options.solver`` is not usable here.
    """
    from optimizer.plan.pulp_io import build_pulp

    name = resolve_solver(options.solver)
    limit = options.time_limit_s
    stop_at = None if limit is None else time.monotonic() + float(limit)
    t0 = time.perf_counter()
    b = build_pulp(model, names="readable", relax_integers=lp_only)
    t1 = time.perf_counter()
    is_mip = bool(model.variables["integer"].any()) and not lp_only
    bound = None
    program = _binary_path(name) is not None
    with solve_folder() as folder, watch_solver(folder, stop_at, signals=program) as watch:
        solver = _pulp_solver(name, _timed_options(options, stop_at), mip=is_mip, folder=folder)
        solver.tmpDir = folder
        failed = _solve_or_failure(b.prob, solver, name)
        t2 = time.perf_counter()
        if watch.interrupted:
            raise KeyboardInterrupt
        if failed is not None:
            status, message = Status.error, failed
            if watch.stopped:
                how = f"killed {STOP_GRACE_S:g} s after" if watch.killed else "stopped at"
                status = Status.time_limit_no_solution
                message = f"{name} {how} the time limit, without a feasible point to report"
            return RawSolution(status, None, None, None, message, t1 - t0, t2 - t1)
        status, has_sol, message = _status_of(
            name, b, solver, folder, is_mip=is_mip, limited=limit is not None
        )
        status, message = _after_limit(status, message, watch, t2 - t0, limit)
        if is_mip and has_sol:
            bound = _mip_bound(name, b.prob, folder)
    if status == Status.time_limit_no_solution:
        message += " (time limit; no feasible point to report)"
    x = dual = obj = None
    dual_note = ""
    if has_sol:
        x = np.array([v.varValue or 0.0 for v in b.variables], dtype=float)
        if not is_mip:
            dual, dual_note = _read_duals(name, b.constraints)
        obj = float(pulp.value(b.prob.objective))
    return RawSolution(
        status, x, dual, obj, message, t1 - t0, t2 - t1, mip_bound=bound, dual_note=dual_note
    )


def _solve_or_failure(prob: pulp.LpProblem, solver: Any, name: str) -> str | None:
    """Run the solver; None when it returned, else one line saying why it failed."""
    try:
        prob.solve(solver)
    except pulp.PulpSolverError as e:
        return f"{name} failed: {str(e).strip()}"
    except OSError as e:  # a binary that cannot be executed (after the probe)
        return f"{name} could not be run: {e.strerror or e}"
    return None
