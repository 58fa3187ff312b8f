"""The L-shaped master LP: the first stage, one ``theta`` per scenario, cuts, level rows.

``min sum_s p_s theta_s`` over ``x >= 0`` and ``theta``, subject to the cuts and to the
induced rows of every scenario (:mod:`optimizer.analysis.decompose_cuts`); identical
rows are kept once, at the tightest right-hand side. They keep the master's plans
operable (grid, power, supply, inventory). When a plan is still not operable in some
scenario (a row the induced set does not cover, or the tolerances), the driver halves
the point toward the best operable plan (:mod:`optimizer.analysis.decompose`); no
feasibility cuts are generated. With the ``capacity`` first stage unmet demand and
commitment breach are priced slacks, and the halving stays as the guard for whatever
else a scenario cannot operate.

The master is held twice in HiGHS, with the same rows and two objectives: one copy
gives the lower bound, the other the level projection. Each copy only gains cut
rows and changes right-hand sides between iterations, so its last basis stays dual
feasible and dual simplex restarts warm (one copy switching objectives twice per
iteration spent about half of the run in the master at 10 scenarios).

Cut management (``cut_age``): a cut whose row has had slack (relative 1e-7 of its
right-hand side) at ``cut_age`` master optima in a row, and at the level projections
between them, leaves both copies and goes to a pool (a cut that shapes the level set
near the next plan stays). After every master solve the pooled cuts are checked at
the optimum ``(x, theta)``; any that is violated or tight is put back and the master
solved again; after a projection, any that its point violates. So the optimum is
feasible for every cut ever generated, the lower bound equals that of the master
with all cuts, the projection is onto the level set of all cuts (projecting onto the
active ones alone zig-zagged for 200 rounds on 4 scenarios of the tiny data at
``cut_age=1``), and no cut tight at the final optimum is out of the master.

Risk aversion (:meth:`MasterProblem.set_risk`, ``E + L * CVaR_alpha``): the cuts do not
change. Each cut bounds one scenario's whole cost ``V_s`` from below, and
``rho(V) = sum_s p_s V_s + L * CVaR_alpha(V)`` is convex and non-decreasing in every
``V_s``, so the multi-cut master stays a valid outer model once its objective is
``rho(theta)``, written in the Rockafellar-Uryasev form with one free column ``eta``
and one column ``v_s >= 0`` per scenario:

    min  sum_s p_s theta_s + L * eta + L/(1 - alpha) * sum_s p_s v_s
    s.t. v_s - theta_s + eta >= 0   (one row per scenario)      + cuts, induced rows

and the level row bounds the same ``rho(theta)``. Because the cuts do not depend on
``L``, a frontier over ``L`` keeps one master and all its cuts and only changes the
objective (:func:`optimizer.analysis.decompose.hedge_frontier`). A single-cut master
(one ``theta`` for the expectation) could not carry the CVaR: it needs each scenario's
cost. Scenarios held exactly in the master (``retain``) are refused with a risk weight.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from optimizer.analysis.decompose_cuts import Cut
from optimizer.plan.highs import highs_ok, new_highs
from optimizer.plan.model import PlanningModel

__all__ = ["CutPool", "MasterProblem"]


class _Both:
    """Apply each HiGHS call to both master LPs; return an error status if any, else the first."""

    def __init__(self, *lps: Any) -> None:
        self.lps = lps

    def __getattr__(self, name: str) -> Callable[..., Any]:
        import highspy

        def call(*args: Any) -> Any:
            out = [getattr(h, name)(*args) for h in self.lps]
            return next((o for o in out if o == highspy.HighsStatus.kError), out[0])

        return call


class MasterProblem:
    """The L-shaped master LP: first stage ``x`` and one ``theta`` per scenario.

    Parameters
    ----------
    n_first : int
        Number of first-stage columns.
    weights : ndarray
        Scenario probabilities, shape (n_scenarios,).
    floors : ndarray
        Each scenario's wait-and-see optimum (USD), the lower bound of its ``theta``.
    induced : sequence of (A, lo, hi)
        Induced rows of every scenario (:func:`optimizer.analysis.decompose_cuts.induced_rows`).
    cut_age : int, optional
        Master optima at which a cut may have slack before it is pooled (module
        docstring); None keeps every cut.
    """

    def __init__(
        self,
        n_first: int,
        weights: np.ndarray,
        floors: np.ndarray,
        induced: Sequence[tuple[sp.csr_matrix, np.ndarray, np.ndarray]],
        cut_age: int | None = None,
    ) -> None:
        import highspy

        self.n, self.k = n_first, len(weights)
        # theta in units of 1e-6 of the mean scenario cost: cut coefficients (reduced
        # costs down to the 1e-3 USD production tie-break) stay above HiGHS's
        # small_matrix_value (set to 1e-12 here), which would drop them silently
        self.scale = max(float(np.abs(floors).mean()) * 1e-6, 1.0)
        # two copies of the master LP that differ only in their objective: ``hl`` for
        # the lower bound (sum p theta), ``hp`` for the level projection (distance).
        # Between iterations each only gains rows (cuts) and changes right-hand sides,
        # so its last optimal basis stays dual feasible and dual simplex restarts warm.
        self.hl, self.hp = new_highs(), new_highs()
        self.h = h = _Both(self.hl, self.hp)
        self.proj_cost: np.ndarray | None = None
        # tighter than the subproblems' 1e-7, so a master plan is operable there and the
        # lower bound is not lifted by the optimality tolerance
        for name in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
            highs_ok(h.setOptionValue(name, 1e-9), f"master {name}")
        highs_ok(h.setOptionValue("small_matrix_value", 1e-12), "master small_matrix_value")
        inf = highspy.kHighsInf
        cost = np.concatenate([np.zeros(self.n), weights])
        lo = np.concatenate([np.zeros(self.n), floors / self.scale])
        hi = np.full(self.n + self.k, inf)
        highs_ok(h.addCols(len(cost), cost, lo, hi, 0, [], [], []), "master columns")
        a, rlo, rhi = _dedupe_rows(induced)
        if a.shape[0]:
            a = a.tocsr()
            a.resize((a.shape[0], self.n + self.k))
            highs_ok(
                h.addRows(
                    a.shape[0],
                    np.where(np.isfinite(rlo), rlo, -inf),
                    np.where(np.isfinite(rhi), rhi, inf),
                    a.nnz,
                    a.indptr[:-1].astype(np.int32),
                    a.indices.astype(np.int32),
                    a.data,
                ),
                "master induced rows",
            )
        self.n_induced = int(a.shape[0])
        self.weights = weights.astype(float).copy()
        self._add_level_rows()
        self._add_risk_columns()
        self.n_cuts = 0
        self.cuts = CutPool(self.n, cut_age)
        #: ``(x, theta)`` of the last master optimum (theta scaled), for inspection
        self.optimum: tuple[np.ndarray, np.ndarray] | None = None
        self.retained: set[int] = set()
        self.r_cost = np.zeros(self.n)
        self.r_offset = 0.0

    def retain(self, model: PlanningModel, scenarios: Sequence[int]) -> None:
        """Hold ``scenarios`` exactly in the master (partial Benders decomposition).

        ``model`` is their extensive form over the run's universe (first-stage columns
        first); its operating columns and rows join the master, its cost (times the
        scenarios' total probability) joins the objective and the level row, and their
        ``theta`` columns are fixed at 0 (no cuts are added for them).
        """
        import highspy

        inf = highspy.kHighsInf
        share = float(self.weights[list(scenarios)].sum())
        n_op = model.n_variables - self.n
        base = self.h.getNumCol()
        var = model.variables
        ub = var["ub"].to_numpy(dtype=float)[self.n :]
        lo_col = var["lb"].to_numpy(dtype=float)[self.n :]
        hi_col = np.where(np.isfinite(ub), ub, inf)
        highs_ok(self.h.addCols(n_op, np.zeros(n_op), lo_col, hi_col, 0, [], [], []), "ops")
        a = model.matrix.tocsr()
        cols = np.where(a.indices < self.n, a.indices, base + a.indices - self.n)
        lo, hi = model.row_bounds()
        highs_ok(
            self.h.addRows(
                a.shape[0],
                np.where(np.isfinite(lo), lo, -inf),
                np.where(np.isfinite(hi), hi, inf),
                a.nnz,
                a.indptr[:-1].astype(np.int32),
                cols.astype(np.int32),
                a.data,
            ),
            "retained rows",
        )
        cost = share * var["cost"].to_numpy(dtype=float) / self.scale
        self.r_cost = cost
        self.r_offset = share * float(model.objective_constant)
        for i in scenarios:
            self.retained.add(int(i))
            self.weights[i] = 0.0
            highs_ok(self.h.changeColBounds(self.n + int(i), 0.0, 0.0), "theta")
            highs_ok(self.h.changeCoeff(self.level_row, self.n + int(i), 0.0), "level")
        cols_all = np.concatenate([np.arange(self.n), base + np.arange(n_op)])
        for c, v in zip(cols_all, cost, strict=True):
            if v != 0.0:
                highs_ok(self.h.changeCoeff(self.level_row, int(c), float(v)), "level")
        self.r_base = base
        self._set_objective(None)

    def _add_level_rows(self) -> None:
        """Distance columns ``u >= |x - x_best|`` and the level row ``sum p theta <= L``."""
        import highspy

        inf, n, k = highspy.kHighsInf, self.n, self.k
        highs_ok(self.h.addCols(n, np.zeros(n), np.zeros(n), np.full(n, inf), 0, [], [], []), "u")
        u = self.n + self.k + np.arange(n)
        x = np.arange(n)
        # rows 2j: u_j - x_j >= -xb_j ; rows 2j+1: u_j + x_j >= xb_j
        index = np.column_stack([u, x, u, x]).reshape(-1, 2).ravel().astype(np.int32)
        value = np.tile([1.0, -1.0, 1.0, 1.0], n)
        starts = np.arange(0, 4 * n, 2, dtype=np.int32)
        lo = np.full(2 * n, -inf)
        highs_ok(self.h.addRows(2 * n, lo, np.full(2 * n, inf), 4 * n, starts, index, value), "|x|")
        self.first_level_row = self.h.getNumRow()
        theta = (self.n + np.arange(k)).astype(np.int32)
        highs_ok(
            self.h.addRows(
                1,
                np.array([-inf]),
                np.array([inf]),
                k,
                np.array([0], np.int32),
                theta,
                self.weights,
            ),
            "level row",
        )
        self.level_row = self.first_level_row

    def _add_risk_columns(self) -> None:
        """``eta`` (free) and ``v_s >= 0`` with ``v_s - theta_s + eta >= 0``; cost 0 until set."""
        import highspy

        inf, k = highspy.kHighsInf, self.k
        self.risk_base = self.h.getNumCol()
        lo = np.concatenate([[-inf], np.zeros(k)])
        highs_ok(
            self.h.addCols(k + 1, np.zeros(k + 1), lo, np.full(k + 1, inf), 0, [], [], []), "v"
        )
        eta, v, theta = self.risk_base, self.risk_base + 1 + np.arange(k), self.n + np.arange(k)
        index = np.column_stack([v, theta, np.full(k, eta)]).ravel().astype(np.int32)
        value = np.tile([1.0, -1.0, 1.0], k)
        starts = np.arange(0, 3 * k, 3, dtype=np.int32)
        highs_ok(
            self.h.addRows(k, np.zeros(k), np.full(k, inf), 3 * k, starts, index, value), "cvar"
        )
        self.risk_cost = np.zeros(k + 1)

    def set_risk(self, weight: float, alpha: float) -> None:
        """Minimise ``sum p theta + weight * CVaR_alpha(theta)`` (module docstring).

        Raises
        ------
        ValueError
            With a weight > 0 when scenarios are retained in the master.
        """
        if weight > 0 and self.retained:
            raise ValueError("--retain: scenarios held in the master cannot carry a risk weight")
        self.risk_cost = np.concatenate([[weight], weight * self.weights / (1.0 - alpha)])
        cols = (self.risk_base + np.arange(self.k + 1)).astype(np.int32)
        for c, v in zip(cols, self.risk_cost, strict=True):
            highs_ok(self.h.changeCoeff(self.level_row, int(c), float(v)), "level")
        self._set_objective(None)

    def _set_objective(self, project: tuple[np.ndarray, np.ndarray] | None) -> None:
        """Set ``hl``'s objective (``project`` None) or ``hp``'s (distance weights)."""
        n, k = self.n, self.k
        n_all = self.hl.getNumCol()
        cols = np.arange(n_all, dtype=np.int32)
        cost = np.zeros(n_all)
        if project is None:
            cost[n : n + k] = self.weights
            cost[self.risk_base : self.risk_base + k + 1] = self.risk_cost
            if self.retained:
                cost[:n] = self.r_cost[:n]
                cost[self.r_base :] = self.r_cost[n:]
            highs_ok(self.hl.changeColsCost(len(cols), cols, cost), "master objective")
            return
        cost[n + k : 2 * n + k] = project[1]
        if self.proj_cost is None or not np.array_equal(cost, self.proj_cost):
            highs_ok(self.hp.changeColsCost(len(cols), cols, cost), "projection objective")
            self.proj_cost = cost

    def project(self, x_best: np.ndarray, inv_range: np.ndarray, level: float) -> np.ndarray:
        """Return the level-set point nearest ``x_best`` (scaled 1-norm).

        The level set is ``sum p theta <= level`` (USD) within the master's rows and
        cuts; the distance is ``sum_j |x_j - x_best_j| * inv_range_j``.
        """
        import highspy

        inf, n = highspy.kHighsInf, self.n
        rows = (self.first_level_row - 2 * n + np.arange(2 * n)).astype(np.int32)
        lo = np.column_stack([-x_best, x_best]).ravel()
        hp = self.hp
        highs_ok(hp.changeRowsBounds(2 * n, rows, lo, np.full(2 * n, inf)), "|x| rows")
        lv = np.array([self.level_row], dtype=np.int32)
        top = np.array([(level - self.r_offset) / self.scale])
        highs_ok(hp.changeRowsBounds(1, lv, np.array([-inf]), top), "level")
        self._set_objective((x_best, inv_range))
        while True:
            ms = self._run(hp)
            if ms != highspy.HighsModelStatus.kOptimal:
                raise RuntimeError(f"level projection: {hp.modelStatusToString(ms)}")
            sol = hp.getSolution()
            col = np.asarray(sol.col_value, dtype=float)
            # the level set is that of every cut: pooled ones the point violates come back
            back = self.cuts.tight_pooled(col[:n], col[n : n + self.k], violated_only=True)
            if not len(back):
                break
            self._add_rows(back)
        self.cuts.renew(np.asarray(sol.row_value, dtype=float))
        return np.asarray(sol.col_value, dtype=float)[:n]

    @staticmethod
    def _run(h: Any) -> Any:
        """Run HiGHS; unless optimal (or on an error status), retry cold, then at 1e-7."""
        import highspy

        ok = highspy.HighsModelStatus.kOptimal
        tries = ((False, 1e-9), (True, 1e-9), (True, 1e-7))
        for cold, tol in tries:
            if cold:
                highs_ok(h.clearSolver(), "clearSolver")
            for name in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
                highs_ok(h.setOptionValue(name, tol), name)
            status = h.run()
            if status != highspy.HighsStatus.kError and h.getModelStatus() == ok:
                break
        for name in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
            highs_ok(h.setOptionValue(name, 1e-9), name)
        return h.getModelStatus()

    def add_cuts(self, cuts: Sequence[Cut]) -> None:
        """Add ``theta_s - g x / S >= (V - g x_k) / S`` for every cut with a value."""
        good = [c for c in cuts if c.ok and c.scenario not in self.retained]
        if not good:
            return
        if self.cuts.base < 0:
            self.cuts.base = self.h.getNumRow()
        self._add_rows(self.cuts.add(good, self.scale))
        self.n_cuts += len(good)

    def _add_rows(self, ids: np.ndarray) -> None:
        """Add the pooled cuts ``ids`` as rows of both copies (at the end, in order)."""
        import highspy

        pool = self.cuts
        starts: list[int] = []
        index: list[int] = []
        value: list[float] = []
        lower: list[float] = []
        for j in ids:
            g = pool.grad[j]
            nz = np.flatnonzero(g)
            starts.append(len(index))
            index.extend([self.n + int(pool.scenario[j]), *nz.tolist()])
            value.extend([1.0, *(-g[nz]).tolist()])
            lower.append(float(pool.rhs[j]))
        upper = np.full(len(ids), highspy.kHighsInf)
        highs_ok(
            self.h.addRows(
                len(ids),
                np.asarray(lower),
                upper,
                len(index),
                np.asarray(starts, dtype=np.int32),
                np.asarray(index, dtype=np.int32),
                np.asarray(value),
            ),
            "master cuts",
        )

    def solve(self, box: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[float, np.ndarray]:
        """Solve the master, within ``box`` (x bounds) when given; return (USD, x)."""
        import highspy

        while True:
            ms = self._run(self.hl)
            if ms != highspy.HighsModelStatus.kOptimal:
                raise RuntimeError(f"master problem: {self.hl.modelStatusToString(ms)}")
            sol = self.hl.getSolution()
            x = np.asarray(sol.col_value, dtype=float)
            back = self.cuts.tight_pooled(x[: self.n], x[self.n : self.n + self.k])
            if not len(back):
                break
            self._add_rows(back)
        # read before any row is deleted: a change of the model clears HiGHS's info
        lb = float(self.hl.getInfo().objective_function_value) * self.scale + self.r_offset
        self.optimum = (x[: self.n].copy(), x[self.n : self.n + self.k].copy())
        drop = self.cuts.age(np.asarray(sol.row_value, dtype=float))
        if len(drop):
            highs_ok(self.h.deleteRows(len(drop), drop.astype(np.int32)), "pooled cuts")
        return lb, x[: self.n]


def _dedupe_rows(
    parts: Sequence[tuple[sp.csr_matrix, np.ndarray, np.ndarray]],
) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Stack row sets, keeping each distinct row once at its tightest bounds."""
    best: dict[bytes, list[Any]] = {}
    for a, lo, hi in parts:
        a = a.tocsr()
        for r in range(a.shape[0]):
            s, e = a.indptr[r], a.indptr[r + 1]
            key = a.indices[s:e].tobytes() + np.round(a.data[s:e], 12).tobytes()
            key += b"<" if np.isinf(lo[r]) else b">"
            got = best.get(key)
            if got is None:
                best[key] = [a.indices[s:e], a.data[s:e], lo[r], hi[r]]
            else:
                got[2], got[3] = max(got[2], lo[r]), min(got[3], hi[r])
    if not best:
        n = parts[0][0].shape[1] if parts else 0
        return sp.csr_matrix((0, n)), np.zeros(0), np.zeros(0)
    rows = list(best.values())
    indptr = np.cumsum([0, *(len(r[0]) for r in rows)])
    n = parts[0][0].shape[1]
    a = sp.csr_matrix(
        (np.concatenate([r[1] for r in rows]), np.concatenate([r[0] for r in rows]), indptr),
        shape=(len(rows), n),
    )
    return a, np.array([r[2] for r in rows]), np.array([r[3] for r in rows])


class CutPool:
    """Every cut of a run, which of them are rows of the master, and their ages.

    Cuts are stored scaled as in the master (``theta_s - grad x >= rhs``, ``theta`` in
    units of the master's ``scale``). The master's cut rows are the pool entries
    ``active`` in that order, from row ``base`` on.

    Parameters
    ----------
    n_first : int
        First-stage columns.
    max_age : int, optional
        Consecutive master optima with slack after which a cut leaves the master
        (None: never).
    """

    #: relative slack under which a cut counts as tight (kept, or put back)
    TIGHT = 1e-7

    def __init__(self, n_first: int, max_age: int | None) -> None:
        self.n, self.max_age, self.base = n_first, max_age, -1
        self.grad = np.zeros((0, n_first))
        self.rhs = np.zeros(0)
        self.scenario = np.zeros(0, dtype=np.int64)
        self.active: list[int] = []
        self.ages = np.zeros(0, dtype=np.int64)
        self.pooled: set[int] = set()
        self.dropped = 0

    def add(self, cuts: Sequence[Cut], scale: float) -> np.ndarray:
        """Store ``cuts`` as active rows; return their pool ids."""
        first = len(self.rhs)
        grad = np.vstack([c.grad for c in cuts]) / scale
        rhs = np.array([(c.value - float(c.grad @ c.point)) / scale for c in cuts])
        self.grad = np.vstack([self.grad, grad])
        self.rhs = np.concatenate([self.rhs, rhs])
        self.scenario = np.concatenate([self.scenario, [c.scenario for c in cuts]])
        self.ages = np.concatenate([self.ages, np.zeros(len(cuts), dtype=np.int64)])
        ids = np.arange(first, first + len(cuts))
        self.active.extend(ids.tolist())
        return ids

    def slack(self, x: np.ndarray, theta: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """Relative slack of cuts ``ids`` at ``(x, theta)`` (negative: violated)."""
        lhs = theta[self.scenario[ids]] - self.grad[ids] @ x
        return (lhs - self.rhs[ids]) / np.maximum(np.abs(self.rhs[ids]), 1.0)

    def tight_pooled(
        self, x: np.ndarray, theta: np.ndarray, violated_only: bool = False
    ) -> np.ndarray:
        """Pooled cuts violated (or tight) at ``(x, theta)``, made active again; their ids."""
        if not self.pooled:
            return np.zeros(0, dtype=np.int64)
        ids = np.array(sorted(self.pooled))
        back = ids[self.slack(x, theta, ids) <= (-self.TIGHT if violated_only else self.TIGHT)]
        self.pooled.difference_update(back.tolist())
        self.ages[back] = 0
        self.active.extend(back.tolist())
        return back

    def _tight(self, row_value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Active cut ids and whether each row is tight at ``row_value``."""
        ids = np.asarray(self.active, dtype=np.int64)
        act = row_value[self.base : self.base + len(ids)]
        rel = (act - self.rhs[ids]) / np.maximum(np.abs(self.rhs[ids]), 1.0)
        return ids, rel <= self.TIGHT

    def renew(self, row_value: np.ndarray) -> None:
        """Reset the age of the active cuts tight at a level projection's point."""
        if self.active:
            ids, tight = self._tight(row_value)
            self.ages[ids[tight]] = 0

    def age(self, row_value: np.ndarray) -> np.ndarray:
        """Age the active cuts at a master optimum; pool the old ones; their row numbers.

        ``row_value`` holds the master's row activities (scaled); returns the rows to
        delete (ascending) after which ``active`` already lists the remaining cuts.
        """
        if self.max_age is None or not self.active:
            return np.zeros(0, dtype=np.int64)
        ids, tight = self._tight(row_value)
        self.ages[ids] = np.where(tight, 0, self.ages[ids] + 1)
        old = self.ages[ids] >= self.max_age
        if not old.any():
            return np.zeros(0, dtype=np.int64)
        self.pooled.update(ids[old].tolist())
        self.active = ids[~old].tolist()
        self.dropped += int(old.sum())
        return self.base + np.flatnonzero(old)
