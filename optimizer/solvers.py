"""Which solvers can solve the plan, and the PuLP path that runs any of them.

Names
-----
``"highs"`` is the bulk path: the model's sparse arrays go to ``highspy`` in one
call (:mod:`optimizer.solve`). Every other name is PuLP's own, as
``pulp.listSolvers(onlyAvailable=True)`` reports it on this machine (for example
``PULP_CBC_CMD``, ``GLPK_CMD``, ``SCIP_PY``, ``HiGHS``); the problem is then built
with readable names (:func:`optimizer.pulp_io.build_pulp`) and solved through PuLP.
``"cbc"`` is kept as an alias of ``PULP_CBC_CMD``; names match case-insensitively.
:func:`available_solvers` lists them with their version.

Each PuLP solve runs in its own temporary folder (``capacity-pulp-*`` under the
system temp directory), given to the solver as ``tmpDir``: no file names are
shared between threads or processes, and the folder is removed when the solve
returns, fails or is interrupted (``finally``).

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
and the preprocessing always run to the end. Measured on the default data with
``--integer-units`` and a 1 s limit: CBC reports 2.3 s wall clock in its own log,
and the whole PuLP solve (MPS file written, CBC run, solution read) takes 2.6 s,
returning "Stopped on time limit" without an incumbent. The limit therefore bounds
the search after the root, not the call; see ``docs/solvers.md``.
"""

from __future__ import annotations

import contextlib
import functools
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pulp

from optimizer.model import PlanningModel


class Options(Protocol):
    """What a solve needs of :class:`optimizer.solve.SolveOptions`."""

    @property
    def solver(self) -> str: ...  # noqa: D102

    @property
    def time_limit_s(self) -> float | None: ...  # noqa: D102

    @property
    def threads(self) -> int | None: ...  # noqa: D102

    @property
    def mip_gap(self) -> float: ...  # noqa: D102


class Status:
    """Status values, equal to the members of :class:`optimizer.solve.Status`.

    Kept as plain strings here so this module does not import :mod:`optimizer.solve`
    (which imports it); ``optimizer.solve.Status`` is a ``StrEnum`` with these values.
    """

    optimal = "optimal"
    infeasible = "infeasible"
    unbounded = "unbounded"
    time_limit_feasible = "time_limit_feasible"
    time_limit_no_solution = "time_limit_no_solution"
    error = "error"


@dataclass(frozen=True)
class PulpOutcome:
    """What a PuLP solver returned, in column/row order of the model.

    Attributes
    ----------
    status : str
        A :class:`Status` value.
    x : ndarray or None
        Column values, only when a solution exists.
    row_dual : ndarray or None
        Row duals (d objective / d rhs) where the solver returns them.
    solver_objective : float or None
        Objective of the solution (USD, constant included).
    message : str
    handover_s, solve_s : float
        Build of the PuLP problem, and the solver call (s).
    mip_bound : float or None
        MIP best bound where the solver reports one (USD).
    dual_note : str
        Why ``row_dual`` is None although a solution exists.
    """

    status: str
    x: np.ndarray | None
    row_dual: np.ndarray | None
    solver_objective: float | None
    message: str
    handover_s: float
    solve_s: float
    mip_bound: float | None = None
    dual_note: str = ""


BULK_HIGHS = "highs"
_ALIASES = {"cbc": "PULP_CBC_CMD"}
_NO_DUALS = {
    "GLPK_CMD": "GLPK_CMD returns no duals through PuLP",
    "SCIP_PY": "SCIP_PY returns no duals through PuLP",
}


class SolverUnavailableError(ValueError):
    """The requested solver is unknown or not usable here; the message is one line."""


@dataclass(frozen=True)
class SolverInfo:
    """One usable solver.

    Attributes
    ----------
    name : str
        Name accepted by ``--solver`` (PuLP's own, or ``highs``).
    interface : str
        ``"highspy (bulk)"`` or ``"PuLP <class>"``.
    version : str
        Solver version as the solver reports it ("unknown" when it does not).
    duals : bool
        Row duals are returned.
    """

    name: str
    interface: str
    version: str
    duals: bool


@functools.cache
def pulp_solver_names() -> tuple[str, ...]:
    """Names of the PuLP solvers available on this machine (cached per process)."""
    return tuple(str(n) for n in pulp.listSolvers(onlyAvailable=True))


def solver_names() -> tuple[str, ...]:
    """``highs`` (bulk) followed by PuLP's available solver names."""
    import importlib.util

    bulk = (BULK_HIGHS,) if importlib.util.find_spec("highspy") is not None else ()
    return bulk + pulp_solver_names()


def resolve_solver(name: str) -> str:
    """Return the canonical solver name, or raise with one line naming what is available.

    Parameters
    ----------
    name : str
        ``highs``, ``cbc`` or a PuLP solver name (case-insensitive).

    Returns
    -------
    str
        ``"highs"`` or PuLP's exact name.

    Raises
    ------
    SolverUnavailableError
        Unknown name, a PuLP solver that is not available here (missing or
        non-executable binary, missing Python package), or highspy not importable.
    """
    wanted = _ALIASES.get(name.lower(), name)
    names = solver_names()
    for n in names:
        if n.lower() == wanted.lower():
            return n
    listed = ", ".join(names) or "none"
    if wanted.lower() == BULK_HIGHS:
        why = "highspy cannot be imported"
    elif wanted.upper() in {s.upper() for s in pulp.listSolvers()}:
        why = "PuLP knows it but it is not available on this machine"
    else:
        why = "PuLP does not know this solver"
    raise SolverUnavailableError(f"solver {name!r} is not available ({why}); available: {listed}")


def _run_version(cmd: list[str], pattern: str) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10, input="").stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    m = re.search(pattern, out)
    return m.group(1) if m else "unknown"


def solver_version(name: str) -> str:
    """Version string of a solver ("unknown" when it cannot be read)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        if name in (BULK_HIGHS, "HiGHS"):
            return version("highspy")
        if name == "SCIP_PY":
            import pyscipopt

            return f"SCIP {pyscipopt.Model().version()} (pyscipopt {version('pyscipopt')})"
    except (ImportError, PackageNotFoundError):
        return "unknown"
    if name in ("PULP_CBC_CMD", "COIN_CMD"):
        path = _cbc_path() if name == "PULP_CBC_CMD" else pulp.COIN_CMD().path
        return _run_version([path, "-quit"], r"Version:\s*(\S+)")
    if name == "GLPK_CMD":
        return _run_version([pulp.GLPK_CMD().path, "--version"], r"Solver\s+(\S+)")
    return "unknown"


def returns_duals(name: str) -> bool:
    """Tell whether the solver (any case; ``cbc`` too) returns row duals (shadow prices)."""
    return name.upper() not in {n.upper() for n in _NO_DUALS}


def dual_solver_names() -> tuple[str, ...]:
    """Available solvers that return shadow prices (the ``duals`` column of the list)."""
    return tuple(n for n in solver_names() if returns_duals(n))


def available_solvers() -> list[SolverInfo]:
    """Every solver ``--solver`` accepts on this machine, with its version.

    Returns
    -------
    list of SolverInfo
        ``highs`` first (when highspy imports), then PuLP's available solvers in
        PuLP's order.
    """
    out = []
    for n in solver_names():
        iface = "highspy (bulk)" if n == BULK_HIGHS else f"PuLP {n}"
        out.append(SolverInfo(n, iface, solver_version(n), returns_duals(n)))
    return out


# -------------------------------------------------------------------------------- CBC
def _cbc_path() -> str:
    from pulp.apis.coin_api import PULP_CBC_CMD

    return str(PULP_CBC_CMD.pulp_cbc_path)


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


def cbc_solver(options: Options, *, mip: bool = True, log_path: str | None = None) -> pulp.LpSolver:
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
) -> tuple[str, bool]:
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
    (str, bool)
        The status (a :class:`Status` value), and True only when the values are a
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


# ----------------------------------------------------------------------- other solvers
def generic_status(
    lp_status: int, sol_status: int, *, is_mip: bool, time_limited: bool, note: str = ""
) -> tuple[str, bool]:
    """Map PuLP's ``status`` / ``sol_status`` of a non-CBC solver to a :class:`Status`.

    Parameters
    ----------
    lp_status, sol_status : int
        ``prob.status`` and ``prob.sol_status``.
    is_mip, time_limited : bool
        Integer columns were solved; a time limit was given.
    note : str
        Solver-specific status text; ``"INTEGER NON-OPTIMAL"`` (glpsol stopped by its
        limit with an incumbent, read by PuLP as optimal) gives ``time_limit_feasible``.

    Returns
    -------
    (str, bool)
        The status (a :class:`Status` value) and whether the values are a solution.
    """
    if "NON-OPTIMAL" in note.upper() and is_mip:
        return Status.time_limit_feasible, True
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


def _pulp_solver(name: str, options: Options, *, mip: bool, folder: str) -> pulp.LpSolver:
    # integrality is already relaxed in the problem when ``mip`` is False (SCIP_PY
    # warns on ``mip=False``), so only CBC gets the flag (it picks -initialSolve)
    kw: dict[str, Any] = {"msg": False}
    if options.time_limit_s is not None:
        kw["timeLimit"] = options.time_limit_s
    if name == "PULP_CBC_CMD":
        return cbc_solver(options, mip=mip, log_path=str(Path(folder) / "cbc.log"))
    if name in ("HiGHS", "SCIP_PY"):
        kw["gapRel"] = options.mip_gap
        if options.threads is not None and name == "HiGHS":
            kw["threads"] = options.threads
    solver = pulp.getSolver(name, **kw)
    return solver


@contextlib.contextmanager
def solve_folder() -> Iterator[str]:
    """Yield a fresh temporary folder for one solve; remove it on success, error or interrupt."""
    folder = tempfile.mkdtemp(prefix="capacity-pulp-")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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


def _glpk_note(folder: str) -> str:
    for out in Path(folder).glob("*.out"):
        m = re.search(r"^Status:\s*(.+)$", out.read_text(), flags=re.MULTILINE)
        if m:
            return m.group(1).strip()
    return ""


def _read_duals(name: str, cons: list[pulp.LpConstraint]) -> tuple[np.ndarray | None, str]:
    pis = [c.pi for c in cons]
    if not cons:
        return np.zeros(0), ""
    if name in _NO_DUALS or all(p is None for p in pis):
        return None, _NO_DUALS.get(name, f"{name} returned no duals")
    return np.array([0.0 if p is None else float(p) for p in pis]), ""


def run_pulp(model: PlanningModel, options: Options, *, lp_only: bool = False) -> PulpOutcome:
    """Solve a model through PuLP with ``options.solver`` (a PuLP name or ``cbc``).

    Parameters
    ----------
    model : PlanningModel
    options : SolveOptions
    lp_only : bool
        Relax integrality.

    Returns
    -------
    PulpOutcome
        Values only when the solver has a solution; row duals (d objective / d rhs)
        where the solver returns them, else None with ``dual_note`` saying why;
        ``mip_bound`` where the solver reports it.
    """
    from optimizer.pulp_io import build_pulp

    name = resolve_solver(options.solver)
    t0 = time.perf_counter()
    b = build_pulp(model, names="readable", relax_integers=lp_only)
    t1 = time.perf_counter()
    is_mip = bool(model.variables["integer"].any()) and not lp_only
    limited = options.time_limit_s is not None
    note = bound = None
    with solve_folder() as folder:
        solver = _pulp_solver(name, options, mip=is_mip, folder=folder)
        solver.tmpDir = folder
        try:
            b.prob.solve(solver)
        except pulp.PulpSolverError as e:
            msg = f"{name} failed: {str(e).strip()}"
            return PulpOutcome(Status.error, None, None, None, msg, t1 - t0, 0.0)
        t2 = time.perf_counter()
        if name == "PULP_CBC_CMD":
            line = str(getattr(solver, "status_line", ""))
            status, has_sol = cbc_status(
                int(b.prob.status),
                int(b.prob.sol_status),
                line,
                is_mip=is_mip,
                time_limited=limited,
            )
            message = line.split(" - objective")[0] if line else pulp.LpStatus[b.prob.status]
        else:
            note = _glpk_note(folder) if name == "GLPK_CMD" else ""
            status, has_sol = generic_status(
                int(b.prob.status),
                int(b.prob.sol_status),
                is_mip=is_mip,
                time_limited=limited,
                note=note,
            )
            message = note or pulp.LpStatus[b.prob.status]
        if is_mip and has_sol:
            bound = _mip_bound(name, b.prob, folder)
    if status == Status.time_limit_no_solution:
        message += f" (time limit {options.time_limit_s:g} s; no feasible point to report)"
    x = dual = obj = None
    dual_note = ""
    if has_sol:
        x = np.array([v.varValue or 0.0 for v in b.variables], dtype=float)
        if not is_mip:
            dual, dual_note = _read_duals(name, b.constraints)
        obj = float(pulp.value(b.prob.objective))
    return PulpOutcome(
        status, x, dual, obj, message, t1 - t0, t2 - t1, mip_bound=bound, dual_note=dual_note
    )
