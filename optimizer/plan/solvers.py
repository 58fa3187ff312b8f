"""Which solvers can solve the plan: their names, availability, versions and duals.

Names
-----
``"highs"`` is the bulk path: the model's sparse arrays go to ``highspy`` in one
call (:mod:`optimizer.plan.highs`). Every other name is PuLP's own, as
``pulp.listSolvers(onlyAvailable=True)`` reports it on this machine (for example
``PULP_CBC_CMD``, ``GLPK_CMD``, ``SCIP_PY``, ``HiGHS``); the problem is then built
with readable names (:func:`optimizer.plan.pulp_io.build_pulp`) and solved through PuLP
(:mod:`optimizer.plan.pulp_solve`).
Every listed name selects exactly that solver: ``highs`` is the bulk path and
``HiGHS`` PuLP's highspy interface. ``"cbc"`` is an alias of ``PULP_CBC_CMD``; a
name in other letter case is accepted only when it matches one listed name
(``pulp_cbc_cmd``), and ``HIGHS`` (both HiGHS names) is refused with both named.
:func:`available_solvers` lists them with their version. A solver run as a program
(CBC, GLPK) is listed only when its binary starts (:func:`probe_binary`, once per
path and process): a binary PuLP finds but the system cannot execute is not offered.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from dataclasses import dataclass

import pulp

BULK_HIGHS = "highs"


_ALIASES = {"cbc": "PULP_CBC_CMD"}


_NO_DUALS = {
    "GLPK_CMD": "GLPK_CMD returns no duals through PuLP",
    "SCIP_PY": "SCIP_PY returns no duals through PuLP",
}


#: The solver's own name, in its project's spelling, by the ``--solver`` name.
_PRODUCTS = {
    BULK_HIGHS: "HiGHS",
    "HiGHS": "HiGHS",
    "HiGHS_CMD": "HiGHS",
    "cbc": "CBC",
    "PULP_CBC_CMD": "CBC",
    "COIN_CMD": "CBC",
    "GLPK_CMD": "GLPK",
    "SCIP_PY": "SCIP",
    "SCIP_CMD": "SCIP",
}


def solver_label(name: str, version: str = "", duals: bool = True) -> str:
    """Return the one label people read for a solver: product, version, how it is called.

    The app's solver box, its settings line and ``capacity solvers`` use it, so the
    bulk path and PuLP's HiGHS never read as ``highs`` against ``HiGHS``.

    Parameters
    ----------
    name : str
        A ``--solver`` name (``highs``, ``HiGHS``, ``cbc``, ``PULP_CBC_CMD`` ...).
    version : str
        The solver's version ("" or "unknown": left out).
    duals : bool
        False adds ", no shadow prices".

    Examples
    --------
    >>> solver_label("highs", "1.11.0"), solver_label("HiGHS", "1.11.0")
    ('HiGHS 1.11.0 · bulk', 'HiGHS 1.11.0 · PuLP')
    >>> solver_label("GLPK_CMD", "5.0", duals=False)
    'GLPK 5.0 · PuLP, no shadow prices'
    >>> solver_label("SCIP_PY", "SCIP 10.0 (pyscipopt 6.3.0)")
    'SCIP 10.0 (pyscipopt 6.3.0) · PuLP'
    """
    product = _PRODUCTS.get(name, name)
    shown = f"{product} {version}" if version and version != "unknown" else product
    if version.startswith(product + " "):  # "SCIP 10.0 (pyscipopt 6.3.0)"
        shown = version
    how = "bulk" if name == BULK_HIGHS else "PuLP"
    return f"{shown} · {how}" + ("" if duals else ", no shadow prices")


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


def _cbc_path() -> str:
    from pulp.apis.coin_api import PULP_CBC_CMD

    return str(PULP_CBC_CMD.pulp_cbc_path)
