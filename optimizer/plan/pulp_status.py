"""A PuLP solver's outcome as a :class:`~optimizer.plan.options.Status`: CBC, GLPK, SCIP, HiGHS.

PuLP's own ``status`` / ``sol_status`` are not enough to tell a plan from a stopped
run: CBC's first solution-file line (:class:`CbcCmd`, :func:`cbc_status`), glpsol's
status line and SCIP's own status (:func:`generic_status`) decide instead. The MIP
best bound comes from CBC's log, highspy's info or ``pyscipopt`` (:func:`_mip_bound`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pulp

from optimizer.plan.options import SolveOptions, Status
from optimizer.plan.solvers import _cbc_path


class CbcCmd(pulp.COIN_CMD):  # type: ignore[misc]
    """PuLP's ``COIN_CMD`` that also keeps the first line of CBC's solution file.

    PuLP maps every ``"Stopped ... - objective value X"`` line to
    ``LpStatusOptimal`` / ``LpSolutionIntegerFeasible``, which is right for a MIP
    stopped with an incumbent but wrong for an LP (``-initialSolve``) stopped by the
    time limit: the simplex point is then primal infeasible. :func:`cbc_status`
    decides from this line instead.
    """

    status_line: str = ""

    def get_status(self, filename: str) -> tuple[int, int]:
        """Read CBC's status as PuLP does, keeping the solution file's first line."""
        with open(filename) as f:
            self.status_line = f.readline().strip()
        status, sol_status = super().get_status(filename)
        return int(status), int(sol_status)


def cbc_solver(
    options: SolveOptions, *, mip: bool = True, log_path: str | None = None
) -> pulp.LpSolver:
    """CBC bundled with PuLP, through the non-deprecated ``COIN_CMD`` class.

    The returned solver has a ``status_line`` attribute (first line of CBC's
    solution file, e.g. ``"Stopped on time - objective value 1.2e9"``) after a solve.
    With ``log_path`` CBC's output goes to that file (read for the MIP bound).
    """
    return CbcCmd(
        path=_cbc_path(),
        mip=mip,
        msg=False,
        timeLimit=options.time_limit_s,
        threads=options.threads,
        gapRel=options.mip_gap,
        logPath=log_path,
    )


def cbc_status(
    lp_status: int, sol_status: int, status_line: str, *, is_mip: bool, time_limited: bool
) -> tuple[Status, bool]:
    """Map CBC's outcome to a :class:`Status` and whether a solution may be read.

    Parameters
    ----------
    lp_status, sol_status : int
        ``prob.status`` and ``prob.sol_status`` as set by PuLP.
    status_line : str
        First line of CBC's solution file: ``"Optimal - objective value X"``,
        ``"Infeasible - ..."``, ``"Unbounded - ..."``, ``"Stopped on time - objective
        value X"`` (a MIP incumbent, or an LP simplex point that is not feasible),
        ``"Stopped on time (no integer solution - continuous used) - ..."`` (a MIP
        without incumbent), ``"Stopped on iterations ..."`` (CBC's LP code reports a
        time limit this way too), ``"Status unknown"``, ``"Stopped on difficulties"``.
    is_mip : bool
        Solved with integer columns (``-solve``) rather than as an LP.
    time_limited : bool
        A time limit was given.

    Returns
    -------
    (Status, bool)
        The status, and True only when the values are a
        solution (optimal, or a MIP incumbent at the time limit). A stopped LP never
        has one.
    """
    line = status_line.lower()
    if line.startswith("optimal") and lp_status == pulp.LpStatusOptimal:
        return Status.optimal, True
    if line.startswith("infeasible") or line.startswith("integer infeasible"):
        return Status.infeasible, False
    if lp_status == pulp.LpStatusInfeasible or sol_status == pulp.LpSolutionInfeasible:
        return Status.infeasible, False
    if line.startswith("unbounded") or lp_status == pulp.LpStatusUnbounded:
        return Status.unbounded, False
    if line.startswith("stopped on time") or line.startswith("stopped on iterations"):
        incumbent = (
            is_mip
            and "no integer solution" not in line
            and sol_status == pulp.LpSolutionIntegerFeasible
        )
        if incumbent:
            return Status.time_limit_feasible, True
        if time_limited:
            return Status.time_limit_no_solution, False
    return Status.error, False


def cbc_log_bound(log_text: str) -> float | None:
    """Best bound of a CBC MIP from its log ("Lower bound:" line), None when absent."""
    m = re.findall(r"^Lower bound:\s*(\S+)", log_text, flags=re.MULTILINE)
    if not m:
        m = re.findall(r"best possible (\S+?)\)", log_text)
    try:
        return float(m[-1]) if m else None
    except ValueError:
        return None


def generic_status(
    lp_status: int, sol_status: int, *, is_mip: bool, time_limited: bool, note: str = ""
) -> tuple[Status, bool]:
    """Map PuLP's ``status`` / ``sol_status`` of a non-CBC solver to a :class:`Status`.

    Parameters
    ----------
    lp_status, sol_status : int
        ``prob.status`` and ``prob.sol_status``.
    is_mip, time_limited : bool
        Integer columns were solved; a time limit was given.
    note : str
        Solver-specific status text; ``"INTEGER NON-OPTIMAL"`` (glpsol stopped by its
        limit with an incumbent, read by PuLP as optimal) gives ``time_limit_feasible``;
        :data:`SCIP_GAP_REACHED` (SCIP at the requested MIP gap) gives ``optimal``.

    Returns
    -------
    (Status, bool)
        The status and whether the values are a solution.
    """
    if "NON-OPTIMAL" in note.upper() and is_mip:
        return Status.time_limit_feasible, True
    if note == SCIP_GAP_REACHED and is_mip and sol_status == pulp.LpSolutionIntegerFeasible:
        return Status.optimal, True  # stopped at the requested MIP gap, as HiGHS and CBC do
    if lp_status == pulp.LpStatusOptimal:
        if sol_status == pulp.LpSolutionIntegerFeasible and is_mip:
            return Status.time_limit_feasible, True
        if sol_status in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
            return Status.optimal, True
    if lp_status == pulp.LpStatusInfeasible or sol_status == pulp.LpSolutionInfeasible:
        return Status.infeasible, False
    if lp_status == pulp.LpStatusUnbounded or sol_status == pulp.LpSolutionUnbounded:
        return Status.unbounded, False
    if time_limited:
        return Status.time_limit_no_solution, False
    return Status.error, False


#: Note of a SCIP_PY MIP that stopped because it reached the requested relative gap
#: (SCIP status ``gaplimit``), which PuLP reports as merely integer feasible.
SCIP_GAP_REACHED = "SCIP stopped at the requested MIP gap"


def _scip_note(name: str, prob: Any) -> str:
    """:data:`SCIP_GAP_REACHED` when SCIP_PY ended with status ``gaplimit``, else ''."""
    model = getattr(prob, "solverModel", None)
    if name != "SCIP_PY" or model is None:
        return ""
    try:
        return SCIP_GAP_REACHED if model.getStatus() == "gaplimit" else ""
    except (AttributeError, ValueError):
        return ""


def _glpk_note(folder: str) -> str:
    for out in Path(folder).glob("*.out"):
        m = re.search(r"^Status:\s*(.+)$", out.read_text(), flags=re.MULTILINE)
        if m:
            return m.group(1).strip()
    return ""


def _status_of(
    name: str, b: Any, solver: Any, folder: str, *, is_mip: bool, limited: bool
) -> tuple[Status, bool, str]:
    """Return the solve's :class:`Status`, whether values may be read, and its message."""
    if name == "PULP_CBC_CMD":
        line = str(getattr(solver, "status_line", ""))
        status, has_sol = cbc_status(
            int(b.prob.status), int(b.prob.sol_status), line, is_mip=is_mip, time_limited=limited
        )
        return (
            status,
            has_sol,
            line.split(" - objective")[0] if line else pulp.LpStatus[b.prob.status],
        )
    note = _glpk_note(folder) if name == "GLPK_CMD" else _scip_note(name, b.prob)
    status, has_sol = generic_status(
        int(b.prob.status), int(b.prob.sol_status), is_mip=is_mip, time_limited=limited, note=note
    )
    message = note or pulp.LpStatus[b.prob.status]
    if status == Status.time_limit_feasible and not note:
        # PuLP calls an incumbent at the time limit "Optimal" (sol_status: integer feasible)
        message = "stopped at the time limit with a feasible plan, not proven optimal"
    return status, has_sol, message


def _mip_bound(name: str, prob: pulp.LpProblem, folder: str) -> float | None:
    """Best bound (objective units, constant included) where the solver reports one."""
    raw: float | None = None
    model = getattr(prob, "solverModel", None)
    try:
        if name == "PULP_CBC_CMD":
            log = Path(folder) / "cbc.log"
            raw = cbc_log_bound(log.read_text()) if log.exists() else None
        elif name == "HiGHS" and model is not None:
            raw = float(model.getInfo().mip_dual_bound)
            return raw  # highspy's bound already includes the offset PuLP passes
        elif name == "SCIP_PY" and model is not None:
            raw = float(model.getDualbound())
    except (OSError, ValueError, AttributeError):
        return None
    if raw is None or not np.isfinite(raw):
        return None
    return raw + float(prob.objective.constant or 0.0)
