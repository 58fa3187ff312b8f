"""What a scenario subproblem tells the L-shaped master: cuts and the induced rows.

Cuts
----
Each ``V_s`` (scenario ``s`` alone with its first stage fixed to ``x``, see
:mod:`optimizer.analysis.decompose`) is convex and piecewise linear. Solving scenario
``s`` with ``x`` fixed to ``x_k`` (``lb == ub``) gives ``V_s(x_k)`` and the reduced
costs ``g`` of the fixed columns; the row and column duals stay dual feasible for every
``x`` (a fixed column's bound dual is free), so by weak duality
``V_s(x) >= V_s(x_k) + g (x - x_k)`` for all ``x``: an optimality cut. The
wait-and-see solves (``x`` free) give cuts the same way at their own optimum ``x_s``,
and ``V_s(x) >= z_s`` (its wait-and-see optimum) bounds each ``theta_s`` from below.

Induced rows
------------
Every scenario row that, once the fleet and installed-to-date columns are replaced by
the installs that define them (``fleet_definition`` and ``chip_installed`` solved as a
triangular system), holds only
first-stage columns, or whose operating columns can only tighten it (a ``<=`` row with
non-negative operating coefficients, a ``>=`` row with non-positive ones: setting the
operating columns to 0 relaxes it). The master keeps them so that its plans stay
operable (grid, power, supply, inventory). With the ``capacity`` first stage the fleet
is recourse (installs are per scenario), so only the facility rows are induced.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from optimizer.plan.deadline import time_left
from optimizer.plan.model import PlanningModel

__all__ = ["Cut", "HedgeTimeLimitError", "ScenarioInfeasibleError", "TimeLimit", "induced_rows"]

#: Columns defined by installs alone, and the equality rows that define them.
_DEFINED_KINDS = ("fleet", "installed", "built", "liquid_built")
_DEFINING_FAMILIES = ("fleet_definition", "chip_installed", "site_built", "site_liquid_built")


class ScenarioInfeasibleError(RuntimeError):
    """A scenario of the hedge has no plan even on its own (its first stage free).

    No shared first stage can operate it, so the hedged plan does not exist; the
    scenario's own solve (:func:`optimizer.plan.pipeline.solve`) explains which limits cannot hold.

    Parameters
    ----------
    scenario : str
        The scenario's name (``mc_000`` ...).
    position : int
        Its position in the run's datasets.
    status : str
        HiGHS's model status of its solve (``Infeasible`` ...).
    """

    def __init__(self, scenario: str, position: int, status: str) -> None:
        super().__init__(f"scenario {scenario} alone: {status}")
        self.scenario, self.position, self.status = scenario, position, status


class HedgeTimeLimitError(RuntimeError):
    """The hedge's time limit passed before any plan was evaluated in every scenario.

    Until the wait-and-see solves and the EV plan's evaluation are over there is no
    plan with a known expected cost to return.

    Parameters
    ----------
    limit_s : float
        The time limit (s).
    phase : str
        What was under way (``"the mean-value solve"`` ...).
    done, total : int
        Scenarios ``verb`` (their solves in ``phase`` over), and the run's scenarios.
    verb : str
        What was done to the ``done`` scenarios (``"solved"``, ``"evaluated"``).
    """

    def __init__(
        self, limit_s: float, phase: str, done: int, total: int, verb: str = "solved"
    ) -> None:
        super().__init__(
            f"the time limit of {limit_s:g} s passed during {phase}, with {done} of {total} "
            f"scenarios {verb}, before any plan was evaluated in every scenario; raise the "
            "time limit or draw fewer scenarios"
        )
        self.limit_s, self.phase, self.done, self.total = limit_s, phase, done, total


@dataclass(frozen=True)
class TimeLimit:
    """A run's time limit: ``limit_s`` seconds, up to the ``deadline``.

    Attributes
    ----------
    limit_s : float
        Seconds (``math.inf``: none).
    deadline : float or None
        ``time.monotonic()`` reading at which it passes
        (:func:`optimizer.plan.deadline.time_left`); None without a limit.
    """

    limit_s: float = math.inf
    deadline: float | None = None

    @classmethod
    def starting(cls, limit_s: float | None) -> TimeLimit:
        """Return the limit of ``limit_s`` seconds from now (None: no limit).

        Raises
        ------
        ValueError
            When ``limit_s`` is not a number of seconds above 0 (NaN, 0, negative).
        """
        if limit_s is None:
            return cls()
        s = float(limit_s)
        if not s > 0:
            raise ValueError(f"time_limit_s: {limit_s!r} is not a time limit: give seconds above 0")
        return cls(s, time.monotonic() + s)

    def passed(self) -> bool:
        """Whether the limit has passed."""
        return bool(time_left(self.deadline) <= 0)

    def until(self) -> float | None:
        """Return the limit as a ``time.time()`` value, for another process (None: no limit).

        A worker's clock is compared with it: on one machine, or on a cluster whose
        clocks agree to a second or so.
        """
        return None if self.deadline is None else time.time() + time_left(self.deadline)

    def error(self, phase: str, done: int, total: int, verb: str = "solved") -> HedgeTimeLimitError:
        """Return the :class:`HedgeTimeLimitError` of ``phase``."""
        return HedgeTimeLimitError(self.limit_s, phase, done, total, verb)


@dataclass(frozen=True)
class Cut:
    """One scenario's answer at a first-stage point: ``V_s(x) >= value + grad (x - point)``.

    Attributes
    ----------
    scenario : int
        Position of the scenario in the run.
    ok : bool
        False when the scenario has no optimum at ``point`` (then ``value`` is inf).
    value : float
        ``V_s(point)`` (USD, discounted, unweighted), or ``z_s`` for a wait-and-see cut.
    grad : ndarray
        Reduced costs of the first-stage columns (USD per column unit), shape (n_first,).
    point : ndarray
        The first-stage point (column units), shape (n_first,).
    message : str
        HiGHS's model status.
    solve_s : float
        CPU seconds of the solve in its worker (0 when not measured).
    simplex_iterations : int
        Simplex iterations of the solve.
    """

    scenario: int
    ok: bool
    value: float
    grad: np.ndarray
    point: np.ndarray
    message: str = ""
    solve_s: float = 0.0
    simplex_iterations: int = 0


def _fleet_map(model: PlanningModel, n_first: int) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Definition columns as an affine map of the first stage: ``fleet = M x + f0``.

    Returns ``(M, f0, fleet_columns)``; solves the ``fleet_definition`` and
    ``chip_installed`` rows (one per fleet or installed column, a triangular system
    per chip and site, per chip) with a sparse LU.
    """
    var, con, a = model.variables, model.constraints, model.matrix
    fleet_cols = np.flatnonzero(var["kind"].isin(_DEFINED_KINDS).to_numpy())
    fd_rows = np.flatnonzero(con["family"].isin(_DEFINING_FAMILIES).to_numpy())
    if len(fleet_cols) == 0:
        return sp.csr_matrix((0, n_first)), np.zeros(0), fleet_cols
    rows = a[fd_rows]
    other = np.ones(a.shape[1], dtype=bool)
    other[:n_first] = False
    other[fleet_cols] = False
    if rows[:, np.flatnonzero(other)].nnz:
        # installs are recourse (first stage without them): the fleet is operating too
        return sp.csr_matrix((0, n_first)), np.zeros(0), np.zeros(0, dtype=np.int64)
    d_f = rows[:, fleet_cols].tocsc()
    d_x = rows[:, :n_first].tocsc()
    lu = spla.splu(d_f)
    rhs = con["rhs"].to_numpy(dtype=float)[fd_rows]
    f0 = lu.solve(rhs)
    m_dense = -lu.solve(d_x.toarray()) if d_x.nnz else np.zeros((len(fleet_cols), n_first))
    m_dense[np.abs(m_dense) < 1e-12] = 0.0
    return sp.csr_matrix(m_dense), f0, fleet_cols


def induced_rows(
    model: PlanningModel, n_first: int
) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Rows of one scenario model that every operable first stage satisfies.

    Parameters
    ----------
    model : PlanningModel
        One scenario's model (first-stage columns first, ``n_first`` of them).
    n_first : int

    Returns
    -------
    (A, lo, hi)
        Sparse rows over the first-stage columns (shape (m, n_first)) with lower and
        upper bounds (``-inf``/``inf`` for the open side); see the module docstring.
    """
    con, a = model.constraints, model.matrix.tocsr()
    m_map, f0, fleet_cols = _fleet_map(model, n_first)
    is_oper = np.ones(model.n_variables, dtype=bool)
    is_oper[:n_first] = False
    is_oper[fleet_cols] = False
    sense = con["sense"].to_numpy()
    keep = ~con["family"].isin(_DEFINING_FAMILIES).to_numpy() & (sense != "==")
    a_y = a[:, np.flatnonzero(is_oper)]
    y_min = np.asarray(a_y.min(axis=1).toarray()).ravel() if a_y.shape[1] else np.zeros(len(con))
    y_max = np.asarray(a_y.max(axis=1).toarray()).ravel() if a_y.shape[1] else np.zeros(len(con))
    keep &= np.where(sense == "<=", y_min >= 0, y_max <= 0)
    rows = np.flatnonzero(keep)
    a_f = a[rows][:, fleet_cols]
    a_x = (a[rows][:, :n_first] + a_f @ m_map).tocsr()
    a_x.data[np.abs(a_x.data) < 1e-12] = 0.0
    a_x.eliminate_zeros()
    rhs = con["rhs"].to_numpy(dtype=float)[rows] - a_f @ f0
    nonempty = np.diff(a_x.indptr) > 0
    s = sense[rows][nonempty]
    rhs = rhs[nonempty]
    lo = np.where(s == ">=", rhs, -np.inf)
    hi = np.where(s == "<=", rhs, np.inf)
    return a_x[nonempty], lo, hi
