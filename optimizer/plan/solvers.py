"""Which solvers can solve the plan, and the PuLP path that runs any of them.

Names
-----
``"highs"`` is the bulk path: the model's sparse arrays go to ``highspy`` in one
call (:mod:`optimizer.plan.solve`). Every other name is PuLP's own, as
``pulp.listSolvers(onlyAvailable=True)`` reports it on this machine (for example
``PULP_CBC_CMD``, ``GLPK_CMD``, ``SCIP_PY``, ``HiGHS``); the problem is then built
with readable names (:func:`optimizer.plan.pulp_io.build_pulp`) and solved through PuLP.
Every listed name selects exactly that solver: ``highs`` is the bulk path and
``HiGHS`` PuLP's highspy interface. ``"cbc"`` is an alias of ``PULP_CBC_CMD``; a
name in other letter case is accepted only when it matches one listed name
(``pulp_cbc_cmd``), and ``HIGHS`` (both HiGHS names) is refused with both named.
:func:`available_solvers` lists them with their version. A solver run as a program
(CBC, GLPK) is listed only when its binary starts (:func:`probe_binary`, once per
path and process): a binary PuLP finds but the system cannot execute is not offered.

Each PuLP solve runs in its own temporary folder (``capacity-pulp-*`` under the
system temp directory), given to the solver as ``tmpDir``: no file names are
shared between threads or processes, and the folder is removed when the solve
returns, fails or is interrupted (``finally``; on the main thread SIGTERM is turned
into ``SystemExit`` for the length of the solve, so the folder goes then too).

Interrupts and the wall clock
-----------------------------
A solver run as a program is watched (:func:`watch_solver`): at the time limit it
gets SIGINT (CBC then stops and writes its best point), and
:data:`STOP_GRACE_S` later it is killed if it still runs (CBC looks at SIGINT only
between its phases; measured on the default data in cluster mode: 224 s after the
signal). A Ctrl-C on the main thread during the solve is recorded by a handler,
passed on to the solver, and raised as ``KeyboardInterrupt`` when the solver has
stopped, whatever status the solver wrote: an interrupted solve is never reported
as a solver result.

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
so :func:`watch_solver` stops the process at the limit. A preprocessing cut off by
the limit reports "infeasible"; after the limit that verdict is no proof, and it is
reported as ``time_limit_no_solution``. See ``docs/solvers.md``.
"""

from __future__ import annotations

import contextlib
import functools
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pulp

from optimizer.plan.model import PlanningModel


class Options(Protocol):
    """What a solve needs of :class:`optimizer.plan.solve.SolveOptions`."""

    @property
    def solver(self) -> str: ...  # noqa: D102

    @property
    def time_limit_s(self) -> float | None: ...  # noqa: D102

    @property
    def threads(self) -> int | None: ...  # noqa: D102

    @property
    def mip_gap(self) -> float: ...  # noqa: D102


class Status:
    """Status values, equal to the members of :class:`optimizer.plan.solve.Status`.

    Kept as plain strings here so this module does not import :mod:`optimizer.plan.solve`
    (which imports it); ``optimizer.plan.solve.Status`` is a ``StrEnum`` with these values.
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
def _pulp_listed() -> tuple[str, ...]:
    """Names ``pulp.listSolvers(onlyAvailable=True)`` reports (cached per process)."""
    return tuple(str(n) for n in pulp.listSolvers(onlyAvailable=True))


def pulp_solver_names() -> tuple[str, ...]:
    """Names of the PuLP solvers usable here: PuLP's available ones whose binary starts.

    PuLP's ``HiGHS`` is its highspy interface: listed only while highspy imports.
    """
    names = [n for n in _pulp_listed() if binary_problem(n) is None]
    if highspy_problem() is not None:
        names = [n for n in names if n != "HiGHS"]
    return tuple(names)


def highspy_problem() -> str | None:
    """Why ``highspy`` cannot be used here (one line naming the fix), or None when it imports."""
    try:
        import highspy  # noqa: F401
    except ImportError as exc:
        return f"highspy cannot be imported ({exc}); install it with: pip install highspy"
    return None


def require_highspy(purpose: str) -> None:
    """Raise :class:`SolverUnavailableError` (one line) when highspy cannot be imported.

    Parameters
    ----------
    purpose : str
        What needs it, for the message (e.g. ``"the hedged plan"``).

    Raises
    ------
    SolverUnavailableError
        ``"<purpose> needs HiGHS: highspy cannot be imported (...); install it with:
        pip install highspy"``.
    """
    problem = highspy_problem()
    if problem is not None:
        raise SolverUnavailableError(f"{purpose} needs HiGHS: {problem}")


def solver_names() -> tuple[str, ...]:
    """``highs`` (bulk, when highspy imports) followed by PuLP's usable solver names."""
    bulk = (BULK_HIGHS,) if highspy_problem() is None else ()
    return bulk + pulp_solver_names()


def resolve_solver(name: str) -> str:
    """Return the listed solver ``name`` selects, or raise with one line naming the choices.

    Parameters
    ----------
    name : str
        A name of :func:`solver_names` exactly (``highs`` is the bulk path, ``HiGHS``
        PuLP's interface), ``cbc`` (= ``PULP_CBC_CMD``), or a listed name in other
        letter case when exactly one listed name matches it.

    Returns
    -------
    str
        ``"highs"`` or PuLP's exact name.

    Raises
    ------
    SolverUnavailableError
        Unknown name, a name that matches several listed names but none exactly
        (``HIGHS``), a PuLP solver that is not usable here (missing or
        non-executable binary, missing Python package), or highspy not importable.
    """
    names = solver_names()
    wanted = _ALIASES.get(name, _ALIASES.get(name.lower(), name))
    if wanted in names:
        return wanted
    exact = wanted == BULK_HIGHS or wanted in pulp.listSolvers()
    folded = [] if exact else [n for n in names if n.lower() == wanted.lower()]
    if len(folded) == 1:
        return folded[0]
    listed = ", ".join(names) or "none"
    if len(folded) > 1:
        both = " and ".join(f"{n!r} ({_interface(n)})" for n in folded)
        raise SolverUnavailableError(
            f"solver {name!r} matches {both}; give one of them exactly (available: {listed})"
        )
    raise SolverUnavailableError(
        f"solver {name!r} is not available ({_why_unavailable(wanted)}); available: {listed}"
    )


def _interface(name: str) -> str:
    return "highspy, bulk" if name == BULK_HIGHS else f"PuLP {name}"


def _why_unavailable(wanted: str) -> str:
    """Why a name that matches no usable solver cannot be used, in one phrase."""
    if wanted.lower() == BULK_HIGHS:
        return highspy_problem() or "highspy cannot be used"
    known = {n.upper(): n for n in pulp.listSolvers()}
    pulp_name = known.get(wanted.upper())
    if pulp_name is None:
        return "PuLP does not know this solver"
    return binary_problem(pulp_name) or "PuLP knows it but it is not available on this machine"


def _binary_path(name: str) -> str | None:
    """Path of the program a command-line PuLP solver runs, None for in-process ones."""
    if name == "PULP_CBC_CMD":
        return _cbc_path()
    if not name.endswith("_CMD"):
        return None
    try:
        path = pulp.getSolver(name, msg=False).path
    except (pulp.PulpSolverError, TypeError, ValueError):
        return None
    return shutil.which(str(path)) or str(path)


def binary_problem(name: str) -> str | None:
    """Why a listed command-line PuLP solver cannot run here (one phrase), or None.

    Parameters
    ----------
    name : str
        PuLP solver name.

    Returns
    -------
    str or None
        ``"its program <path> does not start: <reason>"`` when the binary cannot be
        executed (:func:`probe_binary`), None when it starts or the solver runs in
        this process.
    """
    path = _binary_path(name)
    if path is None:
        return None
    problem = probe_binary(path)
    return None if problem is None else f"its program {path} does not start: {problem}"


@functools.cache
def probe_binary(path: str) -> str | None:
    """Run ``path -quit`` once (cached per path and process); the OS error text, or None.

    Parameters
    ----------
    path : str
        Solver executable.

    Returns
    -------
    str or None
        Why the program cannot be executed (exec format error, permission, missing
        library loader); None when it started, whatever it printed or returned.
    """
    try:
        subprocess.run([path, "-quit"], capture_output=True, input="", timeout=10)
    except subprocess.TimeoutExpired:
        return None  # it started
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


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


def process_started() -> float:
    """``time.monotonic()`` reading at which this process started (its imports included).

    Returns
    -------
    float
        Seconds on the monotonic clock; now when the start time cannot be read.
    """
    import psutil

    try:
        age = max(time.time() - psutil.Process().create_time(), 0.0)
    except (psutil.Error, OSError):
        age = 0.0
    return time.monotonic() - age


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
        limit with an incumbent, read by PuLP as optimal) gives ``time_limit_feasible``;
        :data:`SCIP_GAP_REACHED` (SCIP at the requested MIP gap) gives ``optimal``.

    Returns
    -------
    (str, bool)
        The status (a :class:`Status` value) and whether the values are a solution.
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


#: Seconds a solver program gets, after its time limit or an interrupt, to stop by
#: itself and write its best point before it is killed.
STOP_GRACE_S = 2.0


class SolverWatch:
    """Stops the solver program of one PuLP solve at a wall-clock time or on request.

    The program is found among this process's children by its command line, which
    names the solve's own folder, so concurrent solves never stop each other's.

    Attributes
    ----------
    interrupted : bool
        SIGINT reached this process while the solve ran (main thread only).
    stopped : bool
        The time limit passed and the program was asked to stop (SIGINT).
    killed : bool
        The program still ran :data:`STOP_GRACE_S` after that and was killed.
    """

    def __init__(self, folder: str, stop_at: float | None) -> None:
        self.folder, self.stop_at = folder, stop_at
        self.interrupted = self.stopped = self.killed = False
        self._asked_at: float | None = None
        self.done = threading.Event()

    def _signal(self, sig: int) -> None:
        import psutil

        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error, OSError, ValueError):
                if any(self.folder in arg for arg in child.cmdline()):
                    child.kill() if sig == signal.SIGKILL else child.send_signal(sig)

    def ask_stop(self) -> None:
        """Send SIGINT to the program (once); the watch kills it after the grace."""
        if self._asked_at is None:
            self._asked_at = time.monotonic()
            self._signal(signal.SIGINT)

    def kill(self) -> None:
        """Kill the program now (a solve left by an exception)."""
        self._signal(signal.SIGKILL)

    def run(self) -> None:
        """Watch until :attr:`done` is set (the body of the watch thread)."""
        while not self.done.wait(0.1):
            now = time.monotonic()
            if self._asked_at is None and self.stop_at is not None and now >= self.stop_at:
                self.stopped = True
                self.ask_stop()
            if self._asked_at is not None and now >= self._asked_at + STOP_GRACE_S:
                self.killed = True
                self.kill()
                self._asked_at = now


def _on_main_thread_signals(watch: SolverWatch) -> Callable[[], None]:
    """Install the solve's SIGINT and SIGTERM handlers; return what restores the old ones.

    Only on the main thread, and only over Python's default handlers (an ignored
    SIGINT stays ignored): SIGINT marks the solve interrupted and stops the program;
    SIGTERM kills the program and raises ``SystemExit(143)``, so ``finally`` blocks
    remove the temporary folder.
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    old_int, old_term = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)

    def on_int(signum: int, frame: Any) -> None:
        watch.interrupted = True
        watch.ask_stop()

    def on_term(signum: int, frame: Any) -> None:
        watch.kill()
        raise SystemExit(128 + signum)

    if old_int is signal.default_int_handler:
        signal.signal(signal.SIGINT, on_int)
    if old_term == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, on_term)

    def restore() -> None:
        if old_int is signal.default_int_handler:
            signal.signal(signal.SIGINT, old_int)
        if old_term == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, old_term)

    return restore


@contextlib.contextmanager
def watch_solver(
    folder: str, stop_at: float | None, *, signals: bool = True
) -> Iterator[SolverWatch]:
    """Watch the solver program of a solve in ``folder`` until the block ends.

    Parameters
    ----------
    folder : str
        The solve's temporary folder (named on the program's command line).
    stop_at : float or None
        ``time.monotonic()`` reading at which the program is stopped (SIGINT, then
        killed :data:`STOP_GRACE_S` later); None: never for time.
    signals : bool
        Hold SIGINT and SIGTERM on the main thread meanwhile (a solver program); off
        for a solver inside this process, which Python's own Ctrl-C handling stops.

    Yields
    ------
    SolverWatch
        Says afterwards whether the solve was interrupted, stopped or killed. A
        program still running when the block ends (an exception) is killed.
    """
    watch = SolverWatch(folder, stop_at)
    thread = threading.Thread(target=watch.run, name="solver-watch", daemon=True)
    restore = _on_main_thread_signals(watch) if signals else (lambda: None)
    thread.start()
    try:
        yield watch
    finally:
        watch.done.set()
        restore()
        thread.join()
        watch.kill()


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


def _read_duals(name: str, cons: list[pulp.LpConstraint]) -> tuple[np.ndarray | None, str]:
    pis = [c.pi for c in cons]
    if not cons:
        return np.zeros(0), ""
    if name in _NO_DUALS or all(p is None for p in pis):
        return None, _NO_DUALS.get(name, f"{name} returned no duals")
    return np.array([0.0 if p is None else float(p) for p in pis]), ""


def _timed_options(options: Options, stop_at: float | None) -> Options:
    """``options`` with the time limit cut to what remains before ``stop_at``."""
    if stop_at is None:
        return options
    from dataclasses import replace

    left = max(stop_at - time.monotonic(), 0.01)
    return replace(options, time_limit_s=left)  # type: ignore[type-var]


def _status_of(
    name: str, b: Any, solver: Any, folder: str, *, is_mip: bool, limited: bool
) -> tuple[str, bool, str]:
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


def _after_limit(
    status: str, message: str, watch: SolverWatch, ran_s: float, limit: float | None
) -> tuple[str, str]:
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


def run_pulp(model: PlanningModel, options: Options, *, lp_only: bool = False) -> PulpOutcome:
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
    PulpOutcome
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
            return PulpOutcome(status, None, None, None, message, t1 - t0, t2 - t1)
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
    return PulpOutcome(
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
