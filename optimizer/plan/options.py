"""What a solve is asked and what a solver returns: options, statuses, raw solutions.

:class:`SolveOptions` holds the solver, its time limit and the plan's modes;
:class:`Status` is the outcome of a solve (the PuLP path returns these values
too); :class:`RawSolution` is a solver's answer in the model's column and row
order, before the checker and the tables (:mod:`optimizer.plan.plan_result`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from capacity.limits import check_parallel


class Status(StrEnum):
    """Outcome of a solve."""

    optimal = "optimal"
    infeasible = "infeasible"
    unbounded = "unbounded"
    time_limit_feasible = "time_limit_feasible"
    time_limit_no_solution = "time_limit_no_solution"
    error = "error"


@dataclass(frozen=True)
class SolveOptions:
    """Solver options.

    Parameters
    ----------
    solver : str
        ``"highs"`` (highspy, bulk hand-over) or any solver PuLP reports available
        here, by PuLP's name (``PULP_CBC_CMD``, ``GLPK_CMD``, ``SCIP_PY``, ``HiGHS``
        ...; ``"cbc"`` = ``PULP_CBC_CMD``): see :mod:`optimizer.plan.solvers`.
    time_limit_s : float, optional
        Wall-clock budget of the whole solve (s), from
        :func:`optimizer.plan.pipeline.solve`'s call (or the ``deadline`` given to
        it): the build, the cluster warm start (at most
        :data:`optimizer.plan.deadline.WARM_START_SHARE` of it), the LP or MIP, the LP
        with the integers fixed for shadow prices and the elastic re-solve of an
        infeasible model each get what remains; the checker and the tables come after
        (seconds). A solver program (CBC, GLPK) still running at the end is stopped.
    threads : int, optional
        Solver threads.
    integer_units : bool
        Install whole deployment units (MIP; implies ``clusters``).
    clusters : bool
        Exact training clusters (binary "site s hosts customer k's training in p"
        columns and the cluster families; a MIP). Without it (and without
        ``integer_units``) the cluster rule is reported, not enforced.
    mip_gap : float
        Relative MIP gap.
    mip_start : bool
        Cluster mode with HiGHS: hand the MIP a warm start built from its LP
        relaxation (:func:`optimizer.plan.warm_start.cluster_warm_start`) before the
        branch and bound.
    explain_infeasible : bool
        Run the elastic re-solve when the model is infeasible.
    check_tolerance : float
        Violation tolerance of the checker, relative to 1 + |rhs|.
    formulation : {"compact", "reference"}
        Operating columns of the LP: ``compact`` (per-site busy chips and per-region
        service linked by region balances; exact, fewer columns; the default) or
        ``reference`` (per-site, per-customer assign columns). Same optimal
        objective and the same report tables; cluster mode always uses the
        reference (:mod:`optimizer.components.region`).
    objective : {"cost", "margin"}
        What the plan optimises: ``cost`` (the default) minimises discounted cost,
        unserved demand priced by ``unmet_penalty_usd_per_h100e_period``; ``margin``
        maximises discounted revenue of served H100e at each customer's price per
        workload minus every cost term (breach penalties included), unserved demand
        earning nothing (:mod:`optimizer.components.revenue`). The LP stays a
        minimisation of ``cost - revenue``; ``PlanResult.margin_usd`` is its negative.
    """

    solver: str = "highs"
    time_limit_s: float | None = None
    threads: int | None = None
    integer_units: bool = False
    clusters: bool = False
    mip_gap: float = 1e-4
    mip_start: bool = True
    explain_infeasible: bool = True
    check_tolerance: float = 1e-6
    formulation: str = "compact"
    objective: str = "cost"

    def __post_init__(self) -> None:
        """Refuse numbers no solve can mean, naming the option (as the CLI does).

        Raises
        ------
        ValueError
            ``time_limit_s`` not a finite number of seconds above 0 (NaN was read as
            no limit, -1 as a limit already passed); ``threads`` outside 1 to
            :data:`capacity.limits.MAX_PARALLEL`;
            ``mip_gap`` negative or not finite; ``check_tolerance`` not finite and
            above 0 (NaN passed every plan as checked).
        TypeError
            A flag (``integer_units``, ``clusters``, ``mip_start``,
            ``explain_infeasible``) that is not a bool (``"no"`` was true), or a
            ``solver``, ``formulation`` or ``objective`` that is not a str.
        """
        if self.time_limit_s is not None and not _positive(self.time_limit_s):
            raise ValueError(
                f"time_limit_s: {self.time_limit_s!r} is not a time limit (finite seconds > 0, "
                "or None for none)"
            )
        for name in ("integer_units", "clusters", "mip_start", "explain_infeasible"):
            if not isinstance(getattr(self, name), bool | np.bool_):  # "no" was true: a MIP
                raise TypeError(f"{name}: {getattr(self, name)!r} is not True or False")
        for name in ("solver", "formulation", "objective"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name}: {getattr(self, name)!r} is not a name (a str)")
        if self.threads is not None:
            check_parallel(self.threads, "threads")
        if not (_finite(self.mip_gap) and self.mip_gap >= 0):
            raise ValueError(f"mip_gap: {self.mip_gap!r} is not a relative gap (finite, >= 0)")
        if not _positive(self.check_tolerance):
            raise ValueError(
                f"check_tolerance: {self.check_tolerance!r} is not a tolerance (finite, > 0)"
            )


def _finite(x: object) -> bool:
    """Return True for a real number that is neither NaN nor infinite."""
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _positive(x: object) -> bool:
    """Return True for a finite real number above 0."""
    return _finite(x) and float(x) > 0  # type: ignore[arg-type]


@dataclass(frozen=True)
class RawSolution:
    """What a solver returned, in column/row order of the model."""

    status: Status
    x: np.ndarray | None
    row_dual: np.ndarray | None
    solver_objective: float | None
    message: str
    handover_s: float
    solve_s: float
    mip_bound: float | None = None
    dual_note: str = ""
