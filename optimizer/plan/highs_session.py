"""A retained HiGHS instance that re-solves variants of one LP from the previous basis."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np

from optimizer.lp.frames import column_values, matrix_entries
from optimizer.plan.highs import (
    BATCH_SIMPLEX_OPTIONS,
    IPM_THRESHOLD_COLUMNS,
    HighsRefusedError,
    _configure_highs,
    _highs_lp,
    _highs_pass,
    _highs_run,
    _read_highs,
    foreign_start_options,
    highs_ok,
    new_highs,
)
from optimizer.plan.model import PlanningModel
from optimizer.plan.options import RawSolution, SolveOptions, Status
from optimizer.plan.raw_solve import run_solver


class HighsSession:
    """One retained ``highspy.Highs`` object that re-solves variants of one LP warm.

    Used by :mod:`optimizer.analysis.batch` for scenario sweeps: the first :meth:`run` passes
    the whole model to HiGHS (as :func:`run_solver` does) and solves it cold; each
    later :meth:`run` with a model of the same shape (same number of columns and
    rows, an LP, typically :func:`optimizer.analysis.batch.patch_model`'s output) pushes only
    the column costs, column bounds, row bounds, objective constant and matrix
    entries that differ from the model HiGHS holds (``changeColsCost``,
    ``changeColsBounds``, ``changeRowsBounds``, ``changeObjectiveOffset``,
    ``changeCoeff``) and re-runs the dual simplex from the previous optimal basis (an
    ``anchored`` session: from its first optimal basis).
    A model of the same shape that cannot be pushed (a case the patcher could not
    patch, rebuilt: a sampled scenario, say) is passed whole, and its run too starts
    from the previous optimal basis (up to ``IPM_THRESHOLD_COLUMNS`` columns), with
    the options of such a start (:func:`optimizer.plan.highs.foreign_start_options`:
    the dual simplex, scaled by largest value); it counts as warm.

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
    tuned : bool
        Solve every simplex run of the session (its cold solve and the warm runs from
        it, up to ``IPM_THRESHOLD_COLUMNS`` columns) with
        :data:`optimizer.plan.highs.BATCH_SIMPLEX_OPTIONS`: scaled by largest value, no cost
        perturbation (fewer than half the warm iterations of HiGHS's defaults on a
        batch sweep of the bundled data). A warm run is capped at the iterations of the
        session's cold solve, a cold one at :data:`COLD_ITERATIONS_PER_ROW` per row; a
        run stopped by its cap is solved again cold with the product's options
        (:func:`run_solver`), as any warm run that does not end optimal is. The batch sets
        it; the replanning paths keep HiGHS's defaults (their pinned figures).
    anchored : bool
        Start every run from the session's first optimal basis (its anchor: the batch
        solves the base model first), not from the last run's: a case's plan is then
        the same whatever cases the process solved before it. Chained from the last
        basis, a sweep of the bundled data solved in another order returned the same
        costs with other fleets, assignments and shadow prices (tied optima), so a
        batch's tables depended on which worker took which case, and so on the load.
        The batch sets it.

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

    def __init__(
        self, options: SolveOptions | None = None, *, tuned: bool = False, anchored: bool = False
    ) -> None:
        self.options = options or SolveOptions()
        self.tuned = tuned
        self.anchored = anchored
        self._cold_iterations: int | None = None
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
        ub = column_values(var, "ub", dtype=float)
        return {
            "cost": column_values(var, "cost", dtype=float),
            "col_lo": column_values(var, "lb", dtype=float),
            "col_hi": np.where(np.isfinite(ub), ub, inf),
            "row_lo": np.where(np.isfinite(lo), lo, -inf),
            "row_hi": np.where(np.isfinite(hi), hi, inf),
        }

    @property
    def has_start(self) -> bool:
        """Whether the session holds an optimal basis to start the next run from."""
        return self._basis is not None

    def can_start(self, model: PlanningModel) -> bool:
        """Whether a run of ``model`` passed whole would start from the last optimal basis.

        True when the session holds an optimal basis of an LP of ``model``'s shape
        (columns and rows) and ``model`` has at most
        :data:`optimizer.plan.highs.IPM_THRESHOLD_COLUMNS` columns: above it a cold
        solve is the interior point method's, and the dual simplex from another LP's
        basis is not measured there.
        """
        old = self.model
        return (
            old is not None
            and self._basis is not None
            and (old.n_variables, old.n_constraints) == (model.n_variables, model.n_constraints)
            and model.n_variables <= IPM_THRESHOLD_COLUMNS
        )

    def _load(self, model: PlanningModel) -> tuple[float, bool]:
        """Pass the whole model to a fresh HiGHS instance.

        When :meth:`can_start` (a case the patcher could not patch, of the last LP's
        shape), the new instance starts from the last optimal basis with
        :func:`optimizer.plan.highs.foreign_start_options`.

        Returns
        -------
        (float, bool)
            The hand-over time (s) and whether the run starts from that basis.
        """
        import highspy

        t0 = time.perf_counter()
        lp, _ = _highs_lp(model, lp_only=True)
        start = self._basis if self.can_start(model) else None
        h = new_highs()
        self.highs, self.model = None, None
        _configure_highs(h, self.options, is_mip=False, n=model.n_variables, basis=True)
        if start is not None:
            for name, value in foreign_start_options().items():
                highs_ok(h.setOptionValue(name, value), f"option {name}={value!r}")
        _highs_pass(h, lp)
        if start is not None and h.setBasis(start) == highspy.HighsStatus.kError:
            start = None  # a refused basis: the run starts cold
        self.highs, self.model = h, model
        self._arrays = self._bounds(model)
        self._offset = float(lp.offset_)
        self._basis = start
        return time.perf_counter() - t0, start is not None

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
            coeffs = (r, c, matrix_entries(model.matrix, r, c))
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

    def _start_from(self, basis: Any) -> None:
        """Set ``basis`` as the next run's start (an anchored session's first optimum).

        The solver's state of the last run is cleared first: with the basis set alone
        a case solved after others still returned another tied plan than solved first.
        """
        import highspy

        self.highs.clearSolver()  # no state of the last run (its edge weights) carries over
        if self.highs.setBasis(basis) == highspy.HighsStatus.kError:
            raise HighsRefusedError("HiGHS refused the session's anchor basis")

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

    #: Cap of a tuned cold solve's simplex iterations, per row of the LP (the bundled
    #: dataset's cold solve takes about 2 per row), and of a warm run's when no cold
    #: solve was counted (the session opened from another LP's basis).
    COLD_ITERATIONS_PER_ROW = 50

    def _tunes(self, model: PlanningModel) -> bool:
        """Whether the run takes :data:`BATCH_SIMPLEX_OPTIONS`: a tuned session's simplex LP."""
        return self.tuned and model.n_variables <= IPM_THRESHOLD_COLUMNS

    def _tune(self, warm: bool, n_rows: int) -> None:
        """Set :data:`optimizer.plan.highs.BATCH_SIMPLEX_OPTIONS` and the run's iteration cap.

        A warm run is capped at the last cold solve's simplex iterations (one that needs
        more is stopped and the case solved cold), a cold one at
        :data:`COLD_ITERATIONS_PER_ROW` per row; HiGHS counts each run's on its own.
        """
        per_row = self.COLD_ITERATIONS_PER_ROW * max(n_rows, 1)
        cap = self._cold_iterations if warm and self._cold_iterations else per_row
        for name, value in {**BATCH_SIMPLEX_OPTIONS, "simplex_iteration_limit": int(cap)}.items():
            highs_ok(self.highs.setOptionValue(name, value), f"option {name}={value!r}")

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
            if warm:
                if self.anchored and self._basis is not None:  # a fresh load has set it
                    self._start_from(self._basis)
                handover = time.perf_counter() - t0
            else:
                handover, warm = self._load(model)
            self._own_time_limit()
            tuned = self._tunes(model)
            if tuned:
                self._tune(warm, m)
            t1 = time.perf_counter()
            ms = _highs_run(self.highs)
        except HighsRefusedError:
            # a refused change or run: drop the session's state and solve cold, which
            # reports the refusal with its reason when the model itself is refused
            self.model, self.highs, self._basis = None, None, None
            self.n_cold += 1
            return run_solver(model, self.options), False
        t2 = time.perf_counter()
        if not warm and ms == highspy.HighsModelStatus.kOptimal:  # the warm runs' cap
            self._cold_iterations = int(self.highs.getInfo().simplex_iteration_count)
        raw = _read_highs(self.highs, ms, n, m, is_mip=False, handover_s=handover, solve_s=t2 - t1)
        if ms == highspy.HighsModelStatus.kOptimal:
            if not (self.anchored and self._basis is not None):
                self._basis = self.highs.getBasis()  # anchored: the first optimum's, kept
        elif self._basis is not None:
            # next case starts from the last optimum; a refused basis means a cold start
            if self.highs.setBasis(self._basis) == highspy.HighsStatus.kError:
                self._basis = None
        capped = tuned and ms == highspy.HighsModelStatus.kIterationLimit
        if (warm and (raw.status != Status.optimal or raw.x is None)) or capped:
            cold = run_solver(model, self.options)
            raw = replace(cold, solve_s=raw.solve_s + cold.solve_s)
            warm = False
        if warm:
            self.n_warm += 1
        else:
            self.n_cold += 1
        return raw, warm
