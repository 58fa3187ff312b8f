"""Solve the planning LP with HiGHS (default) or CBC and return an honest result.

Pipeline of :func:`solve`: build (:mod:`optimizer.plan.model`) -> hand the model to the
solver -> solve -> read values only when a solution exists -> independent check
(:mod:`optimizer.plan.check`) -> tidy tables (:mod:`optimizer.plan.results`); when the model is
infeasible, an elastic re-solve explains it (:mod:`optimizer.plan.explain`).

Layers: :mod:`optimizer.components` -> :mod:`optimizer.plan.model` -> :mod:`optimizer.plan.results`
-> :mod:`optimizer.plan.check` / :mod:`optimizer.plan.explain` -> this module; each imports only
modules to its left. The elastic re-solve of the explanation gets its LP solver passed
in (:func:`_elastic_solver`), so :mod:`optimizer.plan.explain` never imports this module.

Solvers
-------
* ``"highs"``: the model's sparse arrays are passed to ``highspy`` in bulk
  (``Highs.passModel`` with a column-wise matrix). PuLP's own ``pulp.HiGHS`` adds
  rows and columns one at a time through Python, which is far slower on large
  models, so it is not used on this path. LPs above ``IPM_THRESHOLD_COLUMNS``
  columns use HiGHS's interior point method (the dual simplex stalls on large
  degenerate instances); smaller ones the dual simplex. Crossover to a basic
  solution runs only when the interior point result is imprecise
  (``run_crossover="choose"``, :func:`lp_algorithm_options`): at the extra-large
  benchmark size crossover and its simplex clean-up cost 275 s on top of a 444 s
  interior point solve (``benchmarks/RESULTS.md``); a :class:`HighsSession`, whose
  warm starts need a basis, always runs it.
* any PuLP solver (``PULP_CBC_CMD``, ``GLPK_CMD``, ``SCIP_PY``, ``HiGHS`` ...; ``"cbc"``
  is ``PULP_CBC_CMD``; ``HiGHS`` is PuLP's highspy interface, never the bulk path, and
  ``PlanResult.solver`` names the one that ran): the model is built as a PuLP
  ``LpProblem`` with readable names (:func:`optimizer.plan.pulp_io.build_pulp`) and solved
  in its own temporary folder (:func:`optimizer.plan.solvers.run_pulp`).

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
In a stochastic model the per-scenario results report each row's dual divided by
the scenario's weight (the price conditional on that scenario).

Status honesty
--------------
A solution is read only when the solver says one exists (stale values are never
used). After every solve the checker recomputes every constraint from the returned
values; if any is violated beyond ``check_tolerance`` (relative to 1 + |rhs|) the
status becomes ``Status.error`` with a message naming the first violations.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal

import numpy as np
import pandas as pd

from optimizer.components.capacity_online import site_capacity_table
from optimizer.components.placement_tables import fragmentation_message
from optimizer.components.quantities import fleet_values
from optimizer.plan.calibration import calibration_table, empty_calibration
from optimizer.plan.check import check_frames, empty_violations
from optimizer.plan.explain import explain_infeasible, explain_missing
from optimizer.plan.fixing import fix_first_stage
from optimizer.plan.model import PlanningModel, build_model, build_stochastic_model
from optimizer.plan.results import empty_tables, make_tables, solution_frames, warm_structure


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
        Wall-clock budget of the whole solve (s), from :func:`solve`'s call (or the
        ``deadline`` given to it): the build, the cluster warm start (at most
        :data:`WARM_START_SHARE` of it), the LP or MIP, the LP with the integers fixed
        for shadow prices and the elastic re-solve of an infeasible model each get
        what remains; the checker and the tables come after (seconds). A solver
        program (CBC, GLPK) still running at the end is stopped.
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
        relaxation (:func:`cluster_warm_start`) before the branch and bound.
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


@dataclass(frozen=True)
class PlanResult:
    """Result of one solve (one scenario).

    Attributes
    ----------
    status : Status
    objective_usd : float or None
        Discounted total cost (equals ``tables["costs"].cost_usd.sum()``); None when
        no solution exists.
    tables : Mapping[str, DataFrame]
        Result tables, see :mod:`optimizer.plan.results` (empty frames with their
        columns when no solution exists).
    violations : DataFrame
        ``family, constraint, keys, lhs, rhs, violation`` from the checker.
    infeasibility : DataFrame or None
        Explanation rows (see :mod:`optimizer.plan.explain`) when infeasible.
    message : str
    solver : str
    dataset_hash, dataset_name : str
    timings_s : Mapping[str, float]
        build, handover, solve, check, results (seconds).
    n_variables, n_constraints : int
    integer_units : bool
    duals_from : {"lp", "lp_with_integers_fixed"}
        Where the shadow prices come from: the LP itself, or (integer mode) the LP
        re-solved with the integer columns fixed at their values.
    periods : tuple of str
        The dataset's horizon quarters in order (known even when no solution
        exists and the result tables are empty).
    mip_bound_usd : float or None
        Integer mode: the solver's best bound on the objective (USD, constant
        included); None for an LP or when the solver reports none.
    mip_gap : float or None
        Integer mode: ``|objective - bound| / |objective|`` (share, 0.032 = 3.2%).
    duals_note : str
        Why the shadow prices are null (the solver returns no duals), else "".
    clusters : bool
        The training-cluster rule was exact (cluster binaries in the model).
    formulation : {"compact", "reference"}
        The formulation the model was built with (``SolveOptions.formulation``,
        except cluster mode: always the reference).
    """

    status: Status
    objective_usd: float | None
    tables: Mapping[str, pd.DataFrame]
    violations: pd.DataFrame
    infeasibility: pd.DataFrame | None
    message: str
    solver: str
    dataset_hash: str
    dataset_name: str
    timings_s: Mapping[str, float]
    n_variables: int
    n_constraints: int
    integer_units: bool = False
    duals_from: Literal["lp", "lp_with_integers_fixed"] = "lp"
    periods: tuple[str, ...] = ()
    mip_bound_usd: float | None = None
    mip_gap: float | None = None
    duals_note: str = ""
    clusters: bool = False
    formulation: str = "reference"


@dataclass(frozen=True)
class StochasticResult:
    """Result of a two-stage stochastic solve.

    Attributes
    ----------
    status : Status
    expected_objective_usd : float or None
        Probability-weighted objective.
    weights : tuple of float
    scenarios : tuple of PlanResult
        One per scenario dataset: shared first-stage values, that scenario's
        operation, its own (unweighted) costs and conditional shadow prices.
    message : str
    timings_s : Mapping[str, float]
    """

    status: Status
    expected_objective_usd: float | None
    weights: tuple[float, ...]
    scenarios: tuple[PlanResult, ...]
    message: str
    timings_s: Mapping[str, float] = field(default_factory=dict)


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


# ------------------------------------------------------------------------------ HiGHS
#: LPs with more columns than this are solved by HiGHS's interior point method with
#: crossover instead of the dual simplex (see the module docstring). Measured on this
#: 2-core machine under load: the compact generated medium model (42k columns) solves in
#: 14 s by IPM against 45 s by the dual simplex (the reference, 80k columns: 27 s by
#: IPM); at the default sizes (11-14k columns) both take 1-4 s, so those keep the simplex.
IPM_THRESHOLD_COLUMNS = 20_000


_HIGHS_BANNER_SHOWN = False


def new_highs() -> Any:
    """Return a silent ``highspy.Highs`` instance (``output_flag`` off).

    HiGHS prints a copyright banner from C on the first construction in a process,
    before any option can be set; that one construction runs with file descriptor 1
    pointed at ``/dev/null`` so the CLI's summary stays clean.
    """
    import highspy

    global _HIGHS_BANNER_SHOWN
    if _HIGHS_BANNER_SHOWN:
        h = highspy.Highs()
    else:
        sys.stdout.flush()
        saved = os.dup(1)
        try:
            with open(os.devnull, "w") as null:
                os.dup2(null.fileno(), 1)
                h = highspy.Highs()
                ctypes.CDLL(None).fflush(None)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        _HIGHS_BANNER_SHOWN = True
    highs_ok(h.setOptionValue("output_flag", False), "option output_flag=False")
    return h


def _highs_lp(model: PlanningModel, *, lp_only: bool = False) -> tuple[Any, bool]:
    """Return the model as a ``highspy.HighsLp`` (column-wise matrix) and whether it is a MIP."""
    import highspy

    var = model.variables
    n, m = model.n_variables, model.n_constraints
    csc = model.matrix.tocsc()
    lo, hi = model.row_bounds()
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = m
    lp.col_cost_ = var["cost"].to_numpy(dtype=float)
    lp.col_lower_ = var["lb"].to_numpy(dtype=float)
    lp.col_upper_ = np.where(np.isfinite(var["ub"]), var["ub"], highspy.kHighsInf).astype(float)
    lp.row_lower_ = np.where(np.isfinite(lo), lo, -highspy.kHighsInf).astype(float)
    lp.row_upper_ = np.where(np.isfinite(hi), hi, highspy.kHighsInf).astype(float)
    lp.offset_ = model.objective_constant
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = csc.indptr.astype(np.int32)
    lp.a_matrix_.index_ = csc.indices.astype(np.int32)
    lp.a_matrix_.value_ = csc.data.astype(float)
    is_mip = bool(var["integer"].any()) and not lp_only
    if is_mip:
        lp.integrality_ = [
            highspy.HighsVarType.kInteger if b else highspy.HighsVarType.kContinuous
            for b in var["integer"].to_numpy()
        ]
    return lp, is_mip


def lp_algorithm_options(n_columns: int, *, basis: bool = False) -> dict[str, str]:
    """HiGHS's LP algorithm options for an LP of ``n_columns`` columns.

    Parameters
    ----------
    n_columns : int
        Columns of the LP.
    basis : bool
        The caller needs an optimal basis (warm starts): crossover always runs.

    Returns
    -------
    dict of str to str
        Empty up to :data:`IPM_THRESHOLD_COLUMNS` (HiGHS's default, the dual simplex);
        above it ``solver="ipm"`` and ``run_crossover`` ``"choose"`` (crossover only
        when the interior point result is imprecise), or ``"on"`` with ``basis``.
        Measured (benchmarks/RESULTS.md, extra-large, compact formulation): the
        interior point solve ends optimal at 444 s and crossover plus its simplex
        clean-up take another 275 s; the optimal objective is the same either way
        (interior point gap below 1e-8 relative).
    """
    if n_columns <= IPM_THRESHOLD_COLUMNS:
        return {}
    return {"solver": "ipm", "run_crossover": "on" if basis else "choose"}


def _configure_highs(
    h: Any, options: SolveOptions, *, is_mip: bool, n: int, basis: bool = False
) -> None:
    """Set time limit, threads, MIP gap and the LP algorithm (see the module docstring)."""
    values: list[tuple[str, Any]] = [("mip_rel_gap", float(options.mip_gap))]
    if options.time_limit_s is not None:
        values.append(("time_limit", float(options.time_limit_s)))
    if options.threads is not None:
        values.append(("threads", int(options.threads)))
    if not is_mip:
        values += list(lp_algorithm_options(n, basis=basis).items())
    for name, value in values:
        highs_ok(h.setOptionValue(name, value), f"option {name}={value!r}")


class HighsRefusedError(RuntimeError):
    """HiGHS returned an error status from a call (the model or an option was refused)."""


def highs_ok(status: Any, call: str, reason: str = "") -> None:
    """Raise :class:`HighsRefusedError` when a highspy call returned ``HighsStatus.kError``.

    Every highspy call that returns a ``HighsStatus`` goes through this check, so a
    refused model is never read as an (empty) optimal one. ``kWarning`` is accepted.
    """
    import highspy

    if status == highspy.HighsStatus.kError:
        raise HighsRefusedError(f"HiGHS refused {call}" + (f": {reason}" if reason else ""))


def highs_refusal_reason(lp: Any) -> str:
    """Say, in the model's words, why HiGHS may refuse a ``HighsLp``; "" when nothing is found.

    Checks what HiGHS rejects in ``passModel``: a NaN anywhere, a cost of +-inf
    (|value| >= 1e20, HiGHS's infinity), a lower bound of +inf or an upper bound of
    -inf, a lower bound above its upper bound, and matrix entries of 1e15 or more
    (HiGHS's ``large_matrix_value``).
    """
    inf = 1e20  # HiGHS's default ``infinite_bound`` and ``infinite_cost``
    problems: list[str] = []

    def scan(name: str, values: Any, bad: Any) -> None:
        arr = np.asarray(values, dtype=float)
        idx = np.flatnonzero(bad(arr)) if len(arr) else np.zeros(0, dtype=int)
        if len(idx):
            problems.append(f"{len(idx)} {name} (first: index {idx[0]}, value {arr[idx[0]]:.6g})")

    scan("NaN or infinite costs", lp.col_cost_, lambda a: ~(np.abs(a) < inf))
    bounds = (("column", lp.col_lower_, lp.col_upper_), ("row", lp.row_lower_, lp.row_upper_))
    for what, lo, hi in bounds:
        scan(f"{what} lower bounds of +inf or NaN", lo, lambda a: ~(a < inf))
        scan(f"{what} upper bounds of -inf or NaN", hi, lambda a: ~(a > -inf))
        lo_a, hi_a = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        scan(f"{what}s whose lower bound exceeds the upper", lo_a - hi_a, lambda a: a > 0)
    scan("matrix entries of 1e15 or more", lp.a_matrix_.value_, lambda a: ~(np.abs(a) < 1e15))
    return "; ".join(problems)


def _highs_pass(h: Any, lp: Any) -> None:
    """``passModel`` with its status checked; a refusal names what HiGHS cannot take."""
    highs_ok(h.passModel(lp), "the model", highs_refusal_reason(lp))


def _highs_run(h: Any) -> Any:
    """Run HiGHS; re-run without presolve when presolve cannot tell infeasible from unbounded.

    Raises
    ------
    HighsRefusedError
        When ``run`` returns an error status.
    """
    import highspy

    highs_ok(h.run(), "to solve the model")
    ms = h.getModelStatus()
    if ms == highspy.HighsModelStatus.kUnboundedOrInfeasible:
        highs_ok(h.setOptionValue("presolve", "off"), "option presolve=off")
        highs_ok(h.run(), "to solve the model without presolve")
        ms = h.getModelStatus()
        highs_ok(h.setOptionValue("presolve", "choose"), "option presolve=choose")
    return ms


def _refused(exc: HighsRefusedError, handover_s: float, solve_s: float) -> RawSolution:
    """Return a :class:`RawSolution` with ``Status.error`` and HiGHS's refusal as its message."""
    return RawSolution(Status.error, None, None, None, str(exc), handover_s, solve_s)


def _read_highs(
    h: Any, ms: Any, n: int, m: int, *, is_mip: bool, handover_s: float, solve_s: float
) -> RawSolution:
    """Map HiGHS's model status to a :class:`Status` and read values only when they exist."""
    import highspy

    info = h.getInfo()
    has_sol = int(info.primal_solution_status) == 2
    S = highspy.HighsModelStatus
    if ms == S.kOptimal:
        # "optimal" without a primal solution is not a plan (seen after warm starts)
        status = Status.optimal if has_sol else Status.error
    elif ms == S.kInfeasible:
        status, has_sol = Status.infeasible, False
    elif ms in (S.kUnbounded, S.kUnboundedOrInfeasible):
        status, has_sol = Status.unbounded, False
    elif ms == S.kTimeLimit:
        status = Status.time_limit_feasible if has_sol else Status.time_limit_no_solution
    elif ms == S.kModelEmpty and n == 0:
        status, has_sol = Status.optimal, True
    else:  # includes an "empty" model when columns were passed: HiGHS dropped it
        status = Status.error
    x = dual = None
    obj = None
    if has_sol:
        sol = h.getSolution()
        x = np.asarray(sol.col_value, dtype=float) if n else np.zeros(0)
        if sol.dual_valid and not is_mip:
            dual = np.asarray(sol.row_dual, dtype=float) if m else np.zeros(0)
        obj = float(info.objective_function_value)
    bound = float(info.mip_dual_bound) if is_mip and has_sol else None
    msg = h.modelStatusToString(ms)
    if ms == S.kOptimal and not has_sol:
        msg += " model status without a primal solution"
    return RawSolution(status, x, dual, obj, msg, handover_s, solve_s, mip_bound=bound)


def _run_highs(
    model: PlanningModel,
    options: SolveOptions,
    *,
    lp_only: bool = False,
    start: np.ndarray | None = None,
) -> RawSolution:
    t0 = time.perf_counter()
    n, m = model.n_variables, model.n_constraints
    lp, is_mip = _highs_lp(model, lp_only=lp_only)
    h = new_highs()
    try:
        _configure_highs(h, options, is_mip=is_mip, n=n)
        _highs_pass(h, lp)
        if start is not None:
            _highs_set_start(h, start)
    except HighsRefusedError as exc:
        return _refused(exc, time.perf_counter() - t0, 0.0)
    t1 = time.perf_counter()
    try:
        ms = _highs_run(h)
    except HighsRefusedError as exc:
        return _refused(exc, t1 - t0, time.perf_counter() - t1)
    t2 = time.perf_counter()
    return _read_highs(h, ms, n, m, is_mip=is_mip, handover_s=t1 - t0, solve_s=t2 - t1)


def _highs_set_start(h: Any, x: np.ndarray) -> None:
    """Hand HiGHS a full primal solution (every column) as the MIP start (``setSolution``)."""
    import highspy

    sol = highspy.HighsSolution()
    sol.col_value = np.asarray(x, dtype=float).tolist()
    sol.value_valid = True
    highs_ok(h.setSolution(sol), "the MIP start (setSolution)")


class HighsSession:
    """One retained ``highspy.Highs`` object that re-solves variants of one LP warm.

    Used by :mod:`optimizer.analysis.batch` for scenario sweeps: the first :meth:`run` passes
    the whole model to HiGHS (as :func:`run_solver` does) and solves it cold; each
    later :meth:`run` with a model of the same shape (same number of columns and
    rows, an LP, typically :func:`optimizer.analysis.batch.patch_model`'s output) pushes only
    the column costs, column bounds, row bounds, objective constant and matrix
    entries that differ from the model HiGHS holds (``changeColsCost``,
    ``changeColsBounds``, ``changeRowsBounds``, ``changeObjectiveOffset``,
    ``changeCoeff``) and re-runs the dual simplex from the previous optimal basis.

    Status honesty: a warm run that does not end optimal is repeated cold on a
    fresh HiGHS instance (:func:`run_solver`), so infeasible / unbounded / time
    limit statuses are exactly those of a cold solve; the session then restores
    its last optimal basis for the next case. A warm start may land on a different
    optimal vertex than a cold solve when the optimum is not unique (same objective,
    other tied plan); on a unique optimum both are equal to solver tolerance.

    Parameters
    ----------
    options : SolveOptions
        Solver options of every run (``solver`` must be ``"highs"``; an integer
        model is always solved cold through :func:`run_solver`).

    Attributes
    ----------
    model : PlanningModel or None
        The model whose data HiGHS currently holds.
    n_warm, n_cold : int
        Runs started from the previous basis, and cold solves (first load,
        incompatible shape, or the re-solve of a non-optimal warm run).
    """

    #: Above this share of changed matrix entries (and more than
    #: ``MIN_COEFF_CHANGES`` of them) the model is passed again: a fresh hand-over
    #: is then cheaper than many ``changeCoeff`` calls.
    MAX_COEFF_CHANGES = 0.05
    MIN_COEFF_CHANGES = 1000

    def __init__(self, options: SolveOptions | None = None) -> None:
        self.options = options or SolveOptions()
        if self.options.solver != "highs":
            raise ValueError("HighsSession needs options.solver == 'highs'")
        self.model: PlanningModel | None = None
        self.highs: Any = None
        self.n_warm = 0
        self.n_cold = 0
        self._arrays: dict[str, np.ndarray] = {}
        self._offset = 0.0
        self._basis: Any = None

    @staticmethod
    def _bounds(model: PlanningModel) -> dict[str, np.ndarray]:
        import highspy

        inf = highspy.kHighsInf
        var = model.variables
        lo, hi = model.row_bounds()
        ub = var["ub"].to_numpy(dtype=float)
        return {
            "cost": var["cost"].to_numpy(dtype=float),
            "col_lo": var["lb"].to_numpy(dtype=float),
            "col_hi": np.where(np.isfinite(ub), ub, inf),
            "row_lo": np.where(np.isfinite(lo), lo, -inf),
            "row_hi": np.where(np.isfinite(hi), hi, inf),
        }

    def _load(self, model: PlanningModel) -> float:
        """Pass the whole model to a fresh HiGHS instance; return the hand-over time."""
        t0 = time.perf_counter()
        lp, _ = _highs_lp(model, lp_only=True)
        h = new_highs()
        self.highs, self.model = None, None
        _configure_highs(h, self.options, is_mip=False, n=model.n_variables, basis=True)
        _highs_pass(h, lp)
        self.highs, self.model = h, model
        self._arrays = self._bounds(model)
        self._offset = float(lp.offset_)
        self._basis = None
        return time.perf_counter() - t0

    def _push(self, model: PlanningModel) -> bool:
        """Change the data HiGHS holds into ``model``'s; False when a reload is needed."""
        old = self.model
        if (
            old is None
            or model.n_variables != old.n_variables
            or model.n_constraints != old.n_constraints
        ):
            return False
        h = self.highs
        coeffs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        if model.matrix is not old.matrix:
            diff = (model.matrix - old.matrix).tocoo()
            nz = diff.data != 0
            limit = max(self.MAX_COEFF_CHANGES * old.matrix.nnz, self.MIN_COEFF_CHANGES)
            if nz.sum() > limit:
                return False
            r, c = diff.row[nz], diff.col[nz]
            coeffs = (r, c, np.asarray(model.matrix[r, c], dtype=float).ravel())
        new = self._bounds(model)
        cur = self._arrays
        i = np.flatnonzero(new["cost"] != cur["cost"]).astype(np.int32)
        if len(i):
            highs_ok(h.changeColsCost(len(i), i, new["cost"][i]), "changeColsCost")
        i = np.flatnonzero(
            (new["col_lo"] != cur["col_lo"]) | (new["col_hi"] != cur["col_hi"])
        ).astype(np.int32)
        if len(i):
            highs_ok(
                h.changeColsBounds(len(i), i, new["col_lo"][i], new["col_hi"][i]),
                "changeColsBounds",
            )
        i = np.flatnonzero(
            (new["row_lo"] != cur["row_lo"]) | (new["row_hi"] != cur["row_hi"])
        ).astype(np.int32)
        if len(i):
            highs_ok(
                h.changeRowsBounds(len(i), i, new["row_lo"][i], new["row_hi"][i]),
                "changeRowsBounds",
            )
        offset = float(model.objective_constant)
        if offset != self._offset:
            highs_ok(h.changeObjectiveOffset(offset), "changeObjectiveOffset")
        if coeffs is not None:
            for r, c, v in zip(*coeffs, strict=True):
                highs_ok(h.changeCoeff(int(r), int(c), float(v)), "changeCoeff")
        if model.n_variables > IPM_THRESHOLD_COLUMNS:
            # warm starts need the simplex
            highs_ok(h.setOptionValue("solver", "simplex"), "option solver='simplex'")
        self.model, self._arrays, self._offset = model, new, offset
        return True

    def _own_time_limit(self) -> None:
        """Give the next run its own time limit.

        HiGHS compares ``time_limit`` with the run clock of the ``Highs`` object,
        which keeps counting over every ``run()`` of the session (measured: after a
        few warm cases each new run stopped at once with "Time limit reached"). The
        limit is therefore set to the clock's current reading plus the per-case limit.
        """
        if self.options.time_limit_s is not None:
            elapsed = float(self.highs.getRunTime())
            self.highs.setOptionValue("time_limit", elapsed + float(self.options.time_limit_s))

    def run(self, model: PlanningModel) -> tuple[RawSolution, bool]:
        """Solve ``model``, from the previous basis when the session holds a compatible LP.

        Parameters
        ----------
        model : PlanningModel
            Deterministic or stochastic LP; integer models go to :func:`run_solver`.

        Returns
        -------
        (RawSolution, bool)
            The solution (values read only when one exists; ``handover_s`` is the
            time spent pushing changes, ``solve_s`` the HiGHS run) and True when
            it came from a warm-started run.
        """
        import highspy

        if bool(model.variables["integer"].any()):
            self.n_cold += 1
            return run_solver(model, self.options), False
        n, m = model.n_variables, model.n_constraints
        t0 = time.perf_counter()
        try:
            warm = self._push(model)
            handover = time.perf_counter() - t0 if warm else self._load(model)
            self._own_time_limit()
            t1 = time.perf_counter()
            ms = _highs_run(self.highs)
        except HighsRefusedError:
            # a refused change or run: drop the session's state and solve cold, which
            # reports the refusal with its reason when the model itself is refused
            self.model, self.highs, self._basis = None, None, None
            self.n_cold += 1
            return run_solver(model, self.options), False
        t2 = time.perf_counter()
        raw = _read_highs(self.highs, ms, n, m, is_mip=False, handover_s=handover, solve_s=t2 - t1)
        if ms == highspy.HighsModelStatus.kOptimal:
            self._basis = self.highs.getBasis()
        elif self._basis is not None:
            # next case starts from the last optimum; a refused basis means a cold start
            if self.highs.setBasis(self._basis) == highspy.HighsStatus.kError:
                self._basis = None
        if warm and (raw.status != Status.optimal or raw.x is None):
            cold = run_solver(model, self.options)
            raw = replace(cold, solve_s=raw.solve_s + cold.solve_s)
            warm = False
        if warm:
            self.n_warm += 1
        else:
            self.n_cold += 1
        return raw, warm


def _run_pulp(model: PlanningModel, options: SolveOptions, *, lp_only: bool = False) -> RawSolution:
    from optimizer.plan.solvers import run_pulp

    o = run_pulp(model, options, lp_only=lp_only)
    return RawSolution(
        Status(o.status),
        o.x,
        o.row_dual,
        o.solver_objective,
        o.message,
        o.handover_s,
        o.solve_s,
        mip_bound=o.mip_bound,
        dual_note=o.dual_note,
    )


# ------------------------------------------------------------------------ MIP start
#: Share of a cluster's minimum size (MW and H100e) the LP relaxation must place at a
#: site in a period for the warm start to open the cluster there (tuning choice).
WARM_START_MIN_SHARE = 0.5


@dataclass(frozen=True)
class WarmStart:
    """A feasible point of a cluster-mode MIP built from its LP relaxation.

    Attributes
    ----------
    x : ndarray or None
        Every column's value (cluster columns 0/1); None when no start was found.
    objective_usd : float or None
        Its objective (USD, constant included): an upper bound on the MIP optimum.
    message : str
        What was done, for the result message.
    solve_s : float
        Time of the two LP solves (s).
    fixed_lp_s : float or None
        Time of the second one, the LP with the rounded clusters fixed (s): an
        estimate of the LP with every integer fixed that gives the MIP's shadow prices.
    """

    x: np.ndarray | None
    objective_usd: float | None
    message: str
    solve_s: float
    fixed_lp_s: float | None = None


def _fix_columns(model: PlanningModel, cols: np.ndarray, values: np.ndarray) -> PlanningModel:
    """Return the model with columns ``cols`` fixed at ``values`` and no integer column."""
    var = model.variables.copy()
    lb = var["lb"].to_numpy(dtype=float, copy=True)
    ub = var["ub"].to_numpy(dtype=float, copy=True)
    lb[cols], ub[cols] = values, values
    var["lb"], var["ub"], var["integer"] = lb, ub, False
    return replace(model, variables=var)


def _cluster_sizes(model: PlanningModel, x: np.ndarray, keys: pd.DataFrame) -> pd.DataFrame:
    """Per cluster column: training H100e ``th`` and whether each minimum is met at the share.

    Reads the training amounts back from the cluster rows: a row ``used - coef * y``
    (``cluster_link``: coef = big-M; ``cluster_min_*``: coef = the minimum) gives
    ``used = activity + coef * y``.
    """
    con = model.constraints
    act = model.matrix @ x
    out = keys.assign(th=0.0, big=True)
    on = ["scenario", "k", "s", "t"]
    for family in ("cluster_link", "cluster_min_h100e", "cluster_min_mw"):
        rows = np.flatnonzero((con["family"] == family).to_numpy())
        if not len(rows):
            continue
        fr = con.iloc[rows][on].assign(row=rows).merge(out.reset_index(), on=on)
        r, c = fr["row"].to_numpy(), fr["col"].to_numpy()
        coef = -np.asarray(model.matrix[r, c], dtype=float).ravel()
        used = act[r] + coef * x[c]
        i = fr["index"].to_numpy()
        if family == "cluster_link":
            out.loc[i, "th"] = used
        else:
            big = out.loc[i, "big"].to_numpy() & (used >= WARM_START_MIN_SHARE * coef - 1e-9)
            out.loc[i, "big"] = big
    return out


def _durations(model: PlanningModel) -> dict[tuple[int, int, int], int]:
    """Minimum duration (periods) per coded ``(scenario, k, t)`` of the cluster rules."""
    from optimizer.components.placement import cluster_rules

    k_code = {name: i for i, name in enumerate(model.codes["k"])}
    t_code = {name: i for i, name in enumerate(model.periods)}
    out: dict[tuple[int, int, int], int] = {}
    for sc, ds in enumerate(model.datasets):
        for r in cluster_rules(ds, list(model.periods)).itertuples():
            key = (sc, k_code[str(r.customer)], t_code[str(r.period)])
            out[key] = int(r.min_duration_periods)
    return out


def _open_in_time_order(model: PlanningModel, sz: pd.DataFrame) -> np.ndarray:
    """Open clusters period by period: kept ones first, then the largest candidates.

    ``sz`` has one row per cluster column (``scenario, k, s, t``, ``open``: a
    candidate, ``th``: its training H100e in the relaxation, ``rhs``: ``max_sites``,
    NaN without a limit). A cluster that starts (a start column exists and it was not
    open in the previous period) stays open its minimum duration; the others fill the
    remaining ``max_sites`` slots by training H100e.
    """
    var = model.variables
    starts = var.loc[(var["kind"] == "cluster_start").to_numpy(), ["scenario", "k", "s", "t"]]
    has_start = set(map(tuple, starts.to_numpy(dtype=np.int64).tolist()))
    duration = _durations(model)
    y = np.zeros(len(sz))
    keep: dict[tuple[int, int, int], int] = {}  # (scenario, k, s) -> last period kept open
    opened: set[tuple[int, int, int, int]] = set()
    for (sc, k, t), grp in sz.groupby(["scenario", "k", "t"], sort=True):
        limit = float(grp["rhs"].iloc[0])
        kept = [keep.get((sc, k, s), -1) >= t for s in grp["s"]]
        forced = list(grp.index[kept])
        cand = grp[grp["open"].to_numpy() & ~np.asarray(kept, dtype=bool)]
        cand = cand.sort_values("th", ascending=False)
        room = len(cand) if np.isnan(limit) else max(int(limit) - len(forced), 0)
        for i in [*forced, *cand.index[:room]]:
            s = int(sz.at[i, "s"])
            y[i] = 1.0
            opened.add((sc, k, s, t))
            if (sc, k, s, t) in has_start and (sc, k, s, t - 1) not in opened:
                span = t + duration.get((sc, k, t), 1) - 1
                keep[(sc, k, s)] = max(keep.get((sc, k, s), -1), span)
    return y


def round_clusters(model: PlanningModel, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Derive 0/1 cluster values from an LP relaxation's values.

    A cluster opens where the relaxation places training at the site and at least
    ``WARM_START_MIN_SHARE`` of every minimum size; per customer and period only the
    ``max_sites`` largest (training H100e) stay open; a cluster that starts is then
    kept open its minimum duration.

    Parameters
    ----------
    model : PlanningModel
        Cluster-mode model.
    x : ndarray
        Column values of its LP relaxation, shape (n_variables,).

    Returns
    -------
    (ndarray, ndarray)
        Cluster column ids and their 0/1 values.
    """
    var = model.variables
    cols = np.flatnonzero((var["kind"] == "cluster").to_numpy())
    keys = var.iloc[cols][["scenario", "k", "s", "t"]].reset_index(drop=True).assign(col=cols)
    keys = keys.astype(np.int64)
    sz = _cluster_sizes(model, x, keys)
    sz["open"] = sz["big"] & (sz["th"] > 1e-6)
    con = model.constraints
    ms = con.loc[(con["family"] == "cluster_max_sites").to_numpy(), ["scenario", "k", "t", "rhs"]]
    sz = sz.merge(ms, on=["scenario", "k", "t"], how="left")
    y = _open_in_time_order(model, sz.reset_index(drop=True))
    return cols, y


def cluster_warm_start(
    model: PlanningModel, options: SolveOptions, *, deadline: float | None = None
) -> WarmStart:
    """Build a MIP start: LP relaxation -> rounded clusters -> LP with them fixed.

    Solves the LP relaxation, derives the cluster binaries (:func:`round_clusters`)
    and solves the LP with them fixed. Unmet demand is a priced slack, so that LP is
    feasible whenever the rounded clusters keep the cluster rows (their minimum at an
    open site fits its capacity, ``max_sites``, the minimum duration); its status is
    checked and no start is returned when it is not optimal.

    Parameters
    ----------
    model : PlanningModel
        Model whose only integer columns are ``cluster`` columns.
    options : SolveOptions
    deadline : float, optional
        ``time.monotonic()`` reading by which both LPs must end (each gets what remains
        of it as its HiGHS time limit); None: ``options.time_limit_s`` from now.

    Returns
    -------
    WarmStart
        No start (``x`` None, the message says why) when an LP does not end optimal,
        for example when it stopped at the deadline.
    """
    t0 = time.perf_counter()
    deadline = start_deadline(options) if deadline is None else deadline
    relaxed = _run_highs(model, until(options, deadline), lp_only=True)
    if relaxed.status != Status.optimal or relaxed.x is None:
        msg = f"no warm start (LP relaxation: {relaxed.message})"
        return WarmStart(None, None, msg, time.perf_counter() - t0)
    cols, y = round_clusters(model, relaxed.x)
    t1 = time.perf_counter()
    fixed = _run_highs(_fix_columns(model, cols, y), until(options, deadline), lp_only=True)
    fixed_s = time.perf_counter() - t1
    if fixed.status != Status.optimal or fixed.x is None or fixed.solver_objective is None:
        msg = f"no warm start (LP with rounded clusters: {fixed.message})"
        return WarmStart(None, None, msg, time.perf_counter() - t0, fixed_s)
    x = fixed.x.copy()
    x[cols] = y
    obj = fixed.solver_objective
    msg = (
        f"warm start from the LP relaxation (${relaxed.solver_objective or 0.0:,.0f}): "
        f"{int(y.sum())} of {len(y)} clusters open, objective ${obj:,.0f}"
    )
    return WarmStart(x, obj, msg, time.perf_counter() - t0, fixed_s)


# ------------------------------------------------------------------------- deadline
#: Share of the time left after the build that the cluster warm start may use (its
#: two LPs); the MIP gets the rest.
WARM_START_SHARE = 0.5
#: Share of the time left at the MIP's start kept for the LP with the integers fixed
#: (shadow prices), at least; with a warm start, at least 1.5 times its fixed LP.
DUALS_RESERVE_SHARE = 0.1
#: Shortest time limit handed to a solver (s): a stage reached at or after the deadline
#: still gets a call that stops at once and reports the time limit honestly.
MIN_STAGE_S = 0.01


def start_deadline(options: SolveOptions) -> float | None:
    """``time.monotonic()`` reading at which ``options.time_limit_s`` from now runs out.

    Parameters
    ----------
    options : SolveOptions

    Returns
    -------
    float or None
        Seconds on the monotonic clock; None without a time limit.
    """
    if options.time_limit_s is None:
        return None
    return time.monotonic() + float(options.time_limit_s)


def until(options: SolveOptions, deadline: float | None, reserve_s: float = 0.0) -> SolveOptions:
    """Options whose time limit is what remains before ``deadline`` (less ``reserve_s``).

    Parameters
    ----------
    options : SolveOptions
    deadline : float or None
        ``time.monotonic()`` reading; None leaves ``options`` as they are.
    reserve_s : float
        Seconds kept back for the stages after this one.

    Returns
    -------
    SolveOptions
        ``time_limit_s`` = remaining seconds, at least :data:`MIN_STAGE_S`.
    """
    if deadline is None:
        return options
    left = deadline - reserve_s - time.monotonic()
    return replace(options, time_limit_s=max(left, MIN_STAGE_S))


def time_left(deadline: float | None) -> float:
    """Seconds before ``deadline`` (``time.monotonic()``); infinite without one."""
    return np.inf if deadline is None else deadline - time.monotonic()


def _duals_reserve(deadline: float | None, warm: WarmStart | None) -> float:
    """Seconds the MIP leaves for the LP with the integers fixed (:data:`DUALS_RESERVE_SHARE`)."""
    left = time_left(deadline)
    if not np.isfinite(left):
        return 0.0
    reserve = DUALS_RESERVE_SHARE * max(left, 0.0)
    if warm is not None and warm.fixed_lp_s is not None:
        reserve = max(reserve, 1.5 * warm.fixed_lp_s)
    return min(reserve, 0.5 * max(left, 0.0))


def _fixed_integer_duals(
    model: PlanningModel,
    raw: RawSolution,
    options: SolveOptions,
    deadline: float | None,
    run: Callable[..., RawSolution],
) -> RawSolution:
    """Return the incumbent, integers rounded, with the duals of the LP with them fixed."""
    assert raw.x is not None
    ints = model.variables["integer"].to_numpy()
    x = raw.x.copy()
    x[ints] = np.round(raw.x[ints])
    if time_left(deadline) <= MIN_STAGE_S:
        note = "the time limit ran out before the LP with the integers fixed could run"
        return replace(raw, x=x, row_dual=None, dual_note=note)
    fixed = _fix_columns(model, np.flatnonzero(ints), x[ints])
    lp = run(fixed, until(options, deadline), lp_only=True)
    note = lp.dual_note
    if lp.x is None:
        note = f"the LP with the integers fixed ended {lp.message!r}"
        if lp.status == Status.time_limit_no_solution:
            note += " at the time limit of the whole solve"
    return replace(
        raw,
        x=x,
        row_dual=lp.row_dual,
        dual_note=note,
        solve_s=raw.solve_s + lp.solve_s,
        handover_s=raw.handover_s + lp.handover_s,
    )


def run_solver(
    model: PlanningModel,
    options: SolveOptions,
    *,
    lp_only: bool = False,
    deadline: float | None = None,
) -> RawSolution:
    """Solve a built model with the chosen solver; in integer mode fix integers for duals.

    Parameters
    ----------
    model : PlanningModel
    options : SolveOptions
    lp_only : bool
        Relax integrality.
    deadline : float, optional
        ``time.monotonic()`` reading by which every solver call here ends: the
        cluster warm start (at most :data:`WARM_START_SHARE` of the time left), the
        LP or MIP (which leaves :func:`_duals_reserve` for the next step), and the LP
        with the integers fixed. None: ``options.time_limit_s`` from now.

    Returns
    -------
    RawSolution
        Values (column units) and row duals (d objective / d rhs) when they exist.
        In integer mode the values are the MIP's incumbent (integer columns
        rounded) and the duals those of the LP with the integers fixed at it.

    Raises
    ------
    optimizer.plan.solvers.SolverUnavailableError
        ``options.solver`` is unknown or not usable on this machine.
    """
    from optimizer.plan.solvers import resolve_solver

    deadline = start_deadline(options) if deadline is None else deadline
    bulk = resolve_solver(options.solver) == "highs"
    run = _run_highs if bulk else _run_pulp
    is_mip = bool(model.variables["integer"].any()) and not lp_only
    ints = model.variables["integer"].to_numpy()
    clusters_only = bool((model.variables["kind"].to_numpy()[ints] == "cluster").all())
    if is_mip and bulk and options.mip_start and clusters_only:
        left = time_left(deadline)
        warm_by = None if deadline is None else time.monotonic() + WARM_START_SHARE * left
        warm = cluster_warm_start(model, options, deadline=warm_by)
        reserve = _duals_reserve(deadline, warm)
        raw = _run_highs(model, until(options, deadline, reserve), start=warm.x)
        raw = replace(
            raw,
            message=f"{raw.message}; {warm.message}",
            solve_s=raw.solve_s + warm.solve_s,
        )
    else:
        reserve = _duals_reserve(deadline, None) if is_mip else 0.0
        raw = run(model, until(options, deadline, reserve), lp_only=lp_only)
    if is_mip and raw.x is not None:
        raw = _fixed_integer_duals(model, raw, options, deadline, run)
    return raw


# ------------------------------------------------------------------------------ solve
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


def _unsolved(
    ds: Any,
    options: SolveOptions,
    status: Status,
    msg: str,
    timings: dict[str, float],
    model: PlanningModel | None = None,
) -> PlanResult:
    """Return a result without a solve (no values): ``status`` and ``msg`` say why."""
    return PlanResult(
        status,
        None,
        empty_tables(),
        empty_violations(),
        None,
        msg,
        options.solver,
        ds.hash,
        ds.name,
        timings,
        0 if model is None else model.n_variables,
        0 if model is None else model.n_constraints,
        options.integer_units,
        "lp",
        tuple(ds.periods),
        formulation=options.formulation if model is None else model.formulation,
    )


def solve_stochastic(
    datasets: Sequence[Any],
    weights: Sequence[float],
    options: SolveOptions | None = None,
    first_stage: str | Sequence[str] = "full",
) -> StochasticResult:
    """Solve the two-stage stochastic plan over weighted scenario datasets.

    Parameters
    ----------
    datasets : sequence of Dataset
        Scenarios over one horizon.
    weights : sequence of float
        Probabilities summing to 1.
    options : SolveOptions, optional
    first_stage : str or sequence of str
        The decisions shared by the scenarios: ``full`` (default) or ``capacity``
        (see :data:`optimizer.plan.model.FIRST_STAGE_SETS`).

    Returns
    -------
    StochasticResult
        Expected objective and one PlanResult per scenario (shared first stage).
    """
    options = options or SolveOptions()
    deadline = start_deadline(options)
    t0 = time.perf_counter()
    model = build_stochastic_model(
        datasets,
        weights,
        integer_units=options.integer_units,
        clusters=options.clusters,
        formulation=options.formulation,
        first_stage=first_stage,
    )
    build_s = time.perf_counter() - t0
    res = solve_model(model, options, build_s=build_s, deadline=deadline)
    exp = None
    objectives = [r.objective_usd for r in res]
    if all(o is not None for o in objectives):
        exp = float(
            sum(w * float(o or 0.0) for w, o in zip(model.weights, objectives, strict=True))
        )
    worst = res[0].status
    for r in res:
        if r.status != Status.optimal:
            worst = r.status
    return StochasticResult(
        worst, exp, model.weights, tuple(res), res[0].message, dict(res[0].timings_s)
    )


def mip_gap(objective: float | None, bound: float | None) -> float | None:
    """Relative MIP gap ``|objective - bound| / |objective|`` (HiGHS's definition).

    Parameters
    ----------
    objective, bound : float or None
        Incumbent objective and best bound (USD).

    Returns
    -------
    float or None
        Share (0.032 = 3.2%); None when either is unknown; 0 when both are 0.
    """
    if objective is None or bound is None:
        return None
    diff = abs(objective - bound)
    return 0.0 if diff == 0 else diff / max(abs(objective), 1e-9)


def _duals(raw: RawSolution, model: PlanningModel) -> np.ndarray | None:
    """Row duals; NaN (null shadow prices) when the solver returned none (``dual_note``)."""
    if raw.row_dual is None and raw.dual_note:
        return np.full(model.n_constraints, np.nan)
    return raw.row_dual


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


def _without_values(status: Status, msg: str) -> tuple[Status, str]:
    """Return (error, message) for a status that promises a plan but has no values."""
    if status in (Status.optimal, Status.time_limit_feasible):
        return Status.error, msg + "; the solver reported a plan but returned no values"
    return status, msg


def _plan_tables(
    model: PlanningModel,
    raw: RawSolution,
    i: int,
    options: SolveOptions,
    frames: dict[str, pd.DataFrame],
    fleet: pd.DataFrame,
    cap: pd.DataFrame,
) -> dict[str, pd.DataFrame]:
    """Return the result tables of scenario ``i``, quantities snapped (no -0.0 chips)."""
    assert raw.x is not None  # called for a solve with values only
    tables = make_tables(
        model,
        raw.x,
        _duals(raw, model),
        i,
        frames=frames,
        fleet=fleet,
        capacity=cap,
        tolerance=options.check_tolerance,
    )
    tables["calibration"] = calibration_table(tables, model.datasets[i])
    return tables


def _scenario_result(
    model: PlanningModel,
    raw: RawSolution,
    i: int,
    options: SolveOptions,
    infeasible: pd.DataFrame | None,
    timings: dict[str, float],
) -> PlanResult:
    """Tables, checker verdict and explanations of scenario ``i`` of a solved model."""
    ds = model.datasets[i]
    status, msg = raw.status, _head_message(model, raw, options)
    gaps = explain_missing(model, i)
    if len(gaps):
        msg += f"; {len(gaps)} demand/commitment row(s) have no decision that could serve them"
    if raw.x is None:
        status, msg = _without_values(status, msg)
        tables = {**empty_tables(), "calibration": empty_calibration()}
        viol, obj = empty_violations(), None
        timings.update(check=0.0, results=0.0)
        inf_i = None
        if infeasible is not None:
            inf_i = infeasible[infeasible["scenario"] == i].reset_index(drop=True)
            if len(inf_i):
                msg += "; " + "; ".join(inf_i["message"].head(5))
        if len(gaps):
            gp = gaps.assign(scenario=i)
            inf_i = gp if inf_i is None else pd.concat([inf_i, gp], ignore_index=True)
    else:
        t = time.perf_counter()
        frames = solution_frames(model, raw.x, i)
        # fleet and site capacity from the decision values: shared by tables and checker
        fleet, cap = fleet_values(ds, frames), site_capacity_table(ds, frames)
        tables = _plan_tables(model, raw, i, options, frames, fleet, cap)
        timings["results"] = time.perf_counter() - t
        t = time.perf_counter()
        viol = check_frames(ds, frames, options.check_tolerance, fleet=fleet, capacity=cap)
        timings["check"] = time.perf_counter() - t
        obj = float(tables["costs"]["cost_usd"].sum())
        inf_i = gaps.assign(scenario=i) if len(gaps) else None
        if len(viol):
            status = Status.error
            first = "; ".join(
                f"{r.family} {r.keys}: lhs {r.lhs:.6g} vs rhs {r.rhs:.6g}"
                for r in viol.head(3).itertuples()
            )
            msg += f"; checker found {len(viol)} violated constraint(s): {first}"
        gap_share = mip_gap(raw.solver_objective, raw.mip_bound)
        if gap_share is not None:
            msg += f"; MIP gap {gap_share:.3%}"
        fragments = fragmentation_message(tables["training_clusters"], exact=model.clusters)
        if fragments:
            msg += "; " + fragments
        msg += _objective_note(model, raw, obj)
    duals_from: Literal["lp", "lp_with_integers_fixed"] = (
        "lp_with_integers_fixed" if bool(model.variables["integer"].any()) else "lp"
    )
    return PlanResult(
        status=status,
        objective_usd=obj,
        tables=tables,
        violations=viol,
        infeasibility=inf_i,
        message=msg,
        solver=options.solver,
        dataset_hash=ds.hash,
        dataset_name=ds.name,
        timings_s=timings,
        n_variables=model.n_variables,
        n_constraints=model.n_constraints,
        integer_units=model.integer_units,
        duals_from=duals_from,
        periods=tuple(ds.periods),
        **_mip_fields(raw),
        clusters=model.clusters,
        formulation=model.formulation,
    )


def _objective_note(model: PlanningModel, raw: RawSolution, obj: float) -> str:
    """``"; solver objective ... differs from tables ..."`` beyond 1e-6 relative, else ""."""
    if raw.solver_objective is None or len(model.datasets) != 1:
        return ""
    if abs(raw.solver_objective - obj) <= 1e-6 * (1 + abs(obj)):
        return ""
    return f"; solver objective {raw.solver_objective:.6g} differs from tables {obj:.6g}"


def _head_message(model: PlanningModel, raw: RawSolution, options: SolveOptions) -> str:
    """``"<solver>: <solver message>"``, plus why a compact request built the reference."""
    msg = f"{options.solver}: {raw.message}"
    return msg + (f"; {model.formulation_note}" if model.formulation_note else "")


def _mip_fields(raw: RawSolution) -> dict[str, Any]:
    """MIP bound, relative gap and the duals note of a result (empty without a solution)."""
    if raw.x is None:
        return {}
    bound = raw.mip_bound
    gap = mip_gap(raw.solver_objective, bound)
    return {"mip_bound_usd": bound, "mip_gap": gap, "duals_note": raw.dual_note}
