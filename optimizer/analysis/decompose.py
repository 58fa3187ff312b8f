"""Hedged plan at scale: the two-stage plan by an L-shaped (Benders) decomposition on Dask.

The extensive form of :func:`optimizer.plan.solve.solve_stochastic` holds one copy of the
operating columns per scenario, so it grows with the number of scenarios. Here the
same two-stage LP is solved by a multi-cut L-shaped method whose scenario
subproblems are solved by Dask actors (one per worker; each holds its scenarios' LPs
as arrays with their last optimal bases and re-solves them warm in one HiGHS
instance). Local cluster by default, ``scheduler=ADDRESS`` for an existing one,
``workers=0`` for in-process blocks.

Notation
--------
``x``: the first-stage columns (every column with ``scenario == -1``), in the same
positions in every scenario model and in the extensive form
(:func:`optimizer.plan.model.first_stage_universe`). Which decisions they are is the
``first_stage`` argument (:data:`optimizer.plan.model.FIRST_STAGE_SETS`): ``full`` shares
build, liquid, retrofit, install and produce (2,215 columns at the default size);
``capacity`` shares only the facility decisions build, liquid and retrofit (472
columns) and leaves chip production and installs to each scenario, so a plan commits
the halls and their power and cooling now and buys chips once the scenario is known.
The extensive form and :func:`optimizer.analysis.risk.hedged_plan` take the same argument, so
both methods always solve the same problem. ``V_s(x)``: optimum of scenario ``s``
alone with its first stage fixed to ``x`` (its whole discounted cost, first-stage
capex included). The extensive form is ``RP = min_x sum_s p_s V_s(x)``.

Cuts
----
Each ``V_s`` is convex and piecewise linear. Solving scenario ``s`` with ``x`` fixed to
``x_k`` (``lb == ub``) gives ``V_s(x_k)`` and the reduced costs ``g`` of the fixed
columns; the row and column duals stay dual feasible for every ``x`` (a fixed column's
bound dual is free), so by weak duality ``V_s(x) >= V_s(x_k) + g (x - x_k)`` for all
``x``: an optimality cut. The wait-and-see solves (``x`` free) give cuts the same way
at their own optimum ``x_s``, and ``V_s(x) >= z_s`` (its wait-and-see optimum) bounds
each ``theta_s`` from below.

Master
------
``min sum_s p_s theta_s`` over ``x >= 0`` and ``theta``, subject to the cuts and to the
*induced rows*: every scenario row that, once the fleet columns are replaced by the
installs that define them (``fleet_definition`` solved as a triangular system), holds
only first-stage columns, or whose operating columns can only tighten it (a ``<=``
row with non-negative operating coefficients, a ``>=`` row with non-positive ones:
setting the operating columns to 0 relaxes it). Identical rows are kept once, at the
tightest right-hand side. They keep the master's plans operable (grid, power,
supply, inventory). When a plan is still not operable in some scenario (a row the
induced set does not cover, or the tolerances), the point is halved toward the best
operable plan until every scenario operates it; no feasibility cuts are generated.
With the ``capacity`` first stage the fleet is recourse (installs are per scenario),
so only the facility rows are induced; unmet demand and commitment breach are priced
slacks there, and the halving above stays as the guard for whatever else a scenario
cannot operate.

The master is held twice in HiGHS, with the same rows and two objectives: one copy
gives the lower bound, the other the level projection below. Each copy only gains cut
rows and changes right-hand sides between iterations, so its last basis stays dual
feasible and dual simplex restarts warm (one copy switching objectives twice per
iteration spent about half of the run in the master at 10 scenarios).

Bounds and stopping
-------------------
Lower bound: the master optimum. Upper bound: the best ``sum_s p_s V_s(x_k)`` seen.
The run stops when ``(UB - LB) / |UB| <= tol`` (default 1e-6) or after ``max_iter``
iterations; the reported expected cost is the upper bound (a real plan's cost), so it
exceeds the extensive form's optimum by at most ``tol`` relative.

VSS and EVPI come from the same solves: ``WS = sum_s p_s z_s``; the EV plan is the
mean-value problem's first stage (:func:`optimizer.analysis.risk.mean_value_dataset`; the
heaviest scenario's plan when the mean is undefined); iteration 0 evaluates it in
every scenario, which gives ``EEV`` (inf when some scenario cannot operate it) and
the first cuts. It is also the first incumbent, and a good one: starting from the
wait-and-see cuts alone, the first master plan cost 6.2e11 USD at 100 scenarios of the
default size (WS 1.35e11, EEV 2.1e11) and its solves took longer than the EV plan's.

Blocks
------
A block (one per worker) holds its scenarios' LPs as arrays with their last optimal
bases and solves them in one HiGHS instance, so a worker's memory does not grow with
a live solver per scenario (about 20 MB each at the default size).
"""

from __future__ import annotations

import contextlib
import math
import resource
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from optimizer.analysis.dask_cluster import ClusterOptions, open_client
from optimizer.analysis.risk import (
    default_tornado_parameters,
    mean_value_dataset,
    uniform_monte_carlo,
)
from optimizer.analysis.sweep import MonteCarloSpec
from optimizer.plan.highs import _highs_lp, _highs_pass, highs_ok, new_highs
from optimizer.plan.model import (
    FirstStageUniverse,
    PlanningModel,
    build_stochastic_model,
    first_stage_universe,
)
from optimizer.plan.options import SolveOptions

__all__ = [
    "Cut",
    "DecomposedPlan",
    "ScenarioBlock",
    "ScenarioInfeasibleError",
    "extensive_form_objective",
    "hedge_decomposed",
    "sample_scenarios",
]

#: Default relative gap (UB - LB) / |UB| at which the L-shaped method stops.
DEFAULT_TOLERANCE = 1e-6


# ------------------------------------------------------------------------- scenarios
def sample_scenarios(
    ds: Any, samples: int, seed: int = 0, *, base: str | None = "neutral"
) -> tuple[list[str], list[Any], list[str]]:
    """Draw ``samples`` Monte Carlo scenarios from the default tornado parameters.

    Every group of :func:`optimizer.analysis.risk.default_tornado_parameters` is drawn
    uniformly in its [low, high] range (independently, one
    ``numpy.random.default_rng(seed)``, see :class:`optimizer.analysis.sweep.MonteCarloSpec`), on
    top of the named scenario ``base`` when the dataset has it.

    Parameters
    ----------
    ds : Dataset
        The validated base dataset.
    samples : int
        Number of draws (>= 1).
    seed : int
        Seed of the draws (>= 0).
    base : str or None
        Scenario the draws start from; None or ``"base"``: the bare tables. The
        default ``"neutral"`` on a dataset that defines no scenario is the bare tables.

    Returns
    -------
    (names, datasets, notes)
        ``mc_<k>`` names and validated datasets of the valid draws (equal weights are
        implied), and one note per draw whose overrides made the data invalid.

    Raises
    ------
    ValueError
        For ``samples`` < 1 or a negative ``seed``.
    capacity.scenarios.UnknownScenarioError
        When ``base`` names no scenario of the dataset (with a "did you mean" hint).
    """
    from capacity.scenarios import apply_overrides, apply_scenario
    from capacity.validation import DataValidationError

    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    bare = not base or (base == "neutral" and not ds.scenarios)
    start = ds if bare else apply_scenario(ds, base)
    params = default_tornado_parameters(start)
    spec = MonteCarloSpec.model_validate(uniform_monte_carlo(params, samples, seed))
    draws = spec.draw()
    names, dsets, notes = [], [], []
    for k in range(samples):
        ovs = [o for p in spec.parameters for o in p.fill(float(draws[p.name][k]))]
        try:
            dsets.append(apply_overrides(start, ovs, scenario=f"mc_{k:03d}"))
            names.append(f"mc_{k:03d}")
        except DataValidationError as e:
            notes.append(f"mc_{k:03d} skipped: {e.findings[0].message}")
    return names, dsets, notes


# ---------------------------------------------------------------------- subproblems
class ScenarioInfeasibleError(RuntimeError):
    """A scenario of the hedge has no plan even on its own (its first stage free).

    No shared first stage can operate it, so the hedged plan does not exist; the
    scenario's own solve (:func:`optimizer.plan.solve`) explains which limits cannot hold.

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
    """

    scenario: int
    ok: bool
    value: float
    grad: np.ndarray
    point: np.ndarray
    message: str = ""


def _fleet_map(model: PlanningModel, n_first: int) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Fleet columns as an affine map of the first stage: ``fleet = M x + f0``.

    Returns ``(M, f0, fleet_columns)``; solves the ``fleet_definition`` rows (one per
    fleet column, a triangular system per chip and site) with a sparse LU.
    """
    var, con, a = model.variables, model.constraints, model.matrix
    fleet_cols = np.flatnonzero((var["kind"] == "fleet").to_numpy())
    fd_rows = np.flatnonzero((con["family"] == "fleet_definition").to_numpy())
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
    keep = (con["family"] != "fleet_definition").to_numpy() & (sense != "==")
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


class ScenarioBlock:
    """Scenario subproblems of one process (a Dask actor, or in-process).

    The block holds each scenario's LP as a ``highspy.HighsLp`` (arrays, about 1 MB at
    the default size) with its last optimal basis, and solves them one after another in
    a single HiGHS instance (``passModel``, ``setBasis``, ``run``): a live, solved HiGHS
    instance per scenario took about 20 MB at the default size, 1 GB per worker at 100
    scenarios, for no gain in time (dual simplex restarts from the stored basis either
    way; measured 2026-12-01, same iteration counts).

    Parameters
    ----------
    datasets : sequence of Dataset
        The block's scenarios.
    indices : sequence of int
        Their positions in the run.
    universe : FirstStageUniverse
        Codes and first-stage keys of the whole run (same columns everywhere).
    threads : int, optional
        HiGHS threads per solve.
    """

    def __init__(
        self,
        datasets: Sequence[Any],
        indices: Sequence[int],
        universe: FirstStageUniverse,
        threads: int | None = None,
    ) -> None:
        self.indices = [int(i) for i in indices]
        self.lps: list[Any] = []
        self.bases: list[Any] = [None] * len(self.indices)
        self.n_first = 0
        self.first_stage = pd.DataFrame()
        self.induced: list[tuple[sp.csr_matrix, np.ndarray, np.ndarray]] = []
        for ds in datasets:
            model = build_stochastic_model([ds], [1.0], universe=universe)
            first = (model.variables["scenario"] == -1).to_numpy()
            self.n_first = int(first.sum())
            if not first[: self.n_first].all():
                raise RuntimeError("first-stage columns are not the leading columns")
            self.first_stage = model.variables.loc[first, ["kind", "s", "c", "t", "scale"]]
            self.induced.append(induced_rows(model, self.n_first))
            self.lps.append(_highs_lp(model, lp_only=True)[0])
        self.h = h = new_highs()
        highs_ok(h.setOptionValue("solver", "simplex"), "option solver='simplex'")
        # cuts are exact up to the reduced costs' dual tolerance
        highs_ok(h.setOptionValue("dual_feasibility_tolerance", 1e-9), "option dual tol")
        if threads is not None:
            highs_ok(h.setOptionValue("threads", int(threads)), "option threads")
        self.free_lo = np.zeros(self.n_first)
        self.free_hi = np.full(self.n_first, np.inf)

    def info(self) -> tuple[int, pd.DataFrame, list[tuple[sp.csr_matrix, np.ndarray, np.ndarray]]]:
        """Return ``(n_first, first-stage variable table, induced rows per scenario)``."""
        return self.n_first, self.first_stage, self.induced

    def _solve(self, k: int, point: np.ndarray | None, basis: Any = None) -> Cut:
        """Solve the block's scenario ``k`` at ``point`` (None: first stage free).

        Starts from ``basis`` when given, else from the scenario's last optimal basis
        (cold when it has none); stores the new optimal basis.
        """
        import highspy

        h, n, i = self.h, self.n_first, self.indices[k]
        _highs_pass(h, self.lps[k])
        start = basis if basis is not None else self.bases[k]
        if start is not None and start.valid:
            highs_ok(h.setBasis(start), "to start from a stored basis")
        idx = np.arange(n, dtype=np.int32)
        if point is None:
            highs_ok(h.changeColsBounds(n, idx, self.free_lo, self.free_hi), "bounds")
        else:
            highs_ok(h.changeColsBounds(n, idx, point, point), "bounds")
        status, ms = h.run(), h.getModelStatus()
        settled = (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kInfeasible)
        if status == highspy.HighsStatus.kError or ms not in settled:
            # a warm start that ends anywhere else (numerical trouble) is retried cold
            highs_ok(h.clearSolver(), "clearSolver")
            highs_ok(h.run(), "to solve a scenario subproblem")
            ms = h.getModelStatus()
        if ms != highspy.HighsModelStatus.kOptimal:
            empty = np.zeros(n) if point is None else point
            return Cut(i, False, math.inf, np.zeros(n), empty, h.modelStatusToString(ms))
        self.bases[k] = h.getBasis()
        sol = h.getSolution()
        x = np.asarray(sol.col_value[:n], dtype=float)
        grad = np.asarray(sol.col_dual[:n], dtype=float)
        value = float(h.getInfo().objective_function_value)
        return Cut(i, True, value, grad, x if point is None else point, "optimal")

    def wait_and_see(self) -> list[Cut]:
        """Solve every scenario alone (first stage free); one cut each at its optimum.

        A scenario whose LP has the shape of the one solved before it starts from that
        one's optimal basis (sampled scenarios differ in values, rarely in shape). Then
        the EV plan, evaluated from each scenario's own wait-and-see basis, took 18k
        simplex iterations at 8 scenarios, after 54k here (94k cold); the other order,
        the EV plan first (chained from scenario to scenario) and these from each EV
        basis, took 56k + 43k.
        """
        out: list[Cut] = []
        prev: Any = None
        for k, lp in enumerate(self.lps):
            shape = (lp.num_col_, lp.num_row_)
            warm = prev[1] if prev is not None and prev[0] == shape else None
            out.append(self._solve(k, None, warm))
            prev = (shape, self.bases[k]) if out[-1].ok else None
        return out

    def evaluate(self, point: np.ndarray, only: Sequence[int] | None = None) -> list[Cut]:
        """Solve the scenarios with the first stage fixed to ``point``; one cut each.

        Each starts from its own last optimal basis. ``only``: run positions to solve
        (the block's others are skipped); all if None.
        """
        p = np.maximum(np.asarray(point, dtype=float), 0.0)
        keep = None if only is None else {int(i) for i in only}
        ks = [k for k, i in enumerate(self.indices) if keep is None or i in keep]
        return [self._solve(k, p) for k in ks]

    def peak_rss_mb(self) -> float:
        """Peak resident memory of this process (MB, ``ru_maxrss``)."""
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# --------------------------------------------------------------------------- workers
class _Blocks:
    """The run's scenario blocks: Dask actors (results via ``.result()``) or local."""

    def __init__(self, blocks: list[Any], remote: bool) -> None:
        self.blocks, self.remote = blocks, remote

    def call(self, name: str, *args: Any) -> list[Any]:
        calls = [getattr(b, name)(*args) for b in self.blocks]
        return [c.result() for c in calls] if self.remote else calls

    def cuts(self, name: str, *args: Any) -> list[Cut]:
        return self.submit(name, *args)()

    def submit(self, name: str, *args: Any) -> Callable[[], list[Cut]]:
        """Start ``name`` on every block (at once on actors); the result waits for it."""
        calls = [getattr(b, name)(*args) for b in self.blocks]

        def gather() -> list[Cut]:
            parts = [c.result() for c in calls] if self.remote else calls
            return sorted((c for part in parts for c in part), key=lambda c: c.scenario)

        return gather


@contextlib.contextmanager
def _open_blocks(
    datasets: Sequence[Any],
    universe: FirstStageUniverse,
    workers: int,
    scheduler: str | None,
    threads: int | None,
) -> Iterator[_Blocks]:
    """Start one block per worker (Dask actors), or one in-process block (workers=0)."""
    if workers == 0 and scheduler is None:
        yield _Blocks([ScenarioBlock(datasets, range(len(datasets)), universe, threads)], False)
        return
    with open_client(ClusterOptions(workers=max(workers, 1), scheduler=scheduler)) as client:
        # a fresh query: the client's cached scheduler_info() may lack the workers
        names = list(client.nthreads())
        parts = np.array_split(np.arange(len(datasets)), min(len(names), len(datasets)))
        futures = [
            client.submit(
                ScenarioBlock,
                [datasets[i] for i in part],
                part.tolist(),
                universe,
                threads,
                actor=True,
                workers=[w],
                pure=False,
            )
            for part, w in zip(parts, names, strict=False)
        ]
        yield _Blocks([f.result() for f in futures], True)


# ---------------------------------------------------------------------------- master
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


class _Master:
    """The L-shaped master LP: first stage ``x`` and one ``theta`` per scenario."""

    def __init__(
        self,
        n_first: int,
        weights: np.ndarray,
        floors: np.ndarray,
        induced: Sequence[tuple[sp.csr_matrix, np.ndarray, np.ndarray]],
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
        self.n_cuts = 0
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

    def _set_objective(self, project: tuple[np.ndarray, np.ndarray] | None) -> None:
        """Set ``hl``'s objective (``project`` None) or ``hp``'s (distance weights)."""
        n, k = self.n, self.k
        n_all = self.hl.getNumCol()
        cols = np.arange(n_all, dtype=np.int32)
        cost = np.zeros(n_all)
        if project is None:
            cost[n : n + k] = self.weights
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
        ms = self._run(hp)
        if ms != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"level projection: {hp.modelStatusToString(ms)}")
        return np.asarray(hp.getSolution().col_value, dtype=float)[:n]

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
        import highspy

        good = [c for c in cuts if c.ok and c.scenario not in self.retained]
        if not good:
            return
        starts: list[int] = []
        index: list[int] = []
        value: list[float] = []
        lower: list[float] = []
        for c in good:
            nz = np.flatnonzero(c.grad)
            starts.append(len(index))
            index.extend([self.n + c.scenario, *nz.tolist()])
            value.extend([1.0, *(-c.grad[nz] / self.scale).tolist()])
            lower.append((c.value - float(c.grad @ c.point)) / self.scale)
        upper = np.full(len(good), highspy.kHighsInf)
        highs_ok(
            self.h.addRows(
                len(good),
                np.asarray(lower),
                upper,
                len(index),
                np.asarray(starts, dtype=np.int32),
                np.asarray(index, dtype=np.int32),
                np.asarray(value),
            ),
            "master cuts",
        )
        self.n_cuts += len(good)

    def solve(self, box: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[float, np.ndarray]:
        """Solve the master, within ``box`` (x bounds) when given; return (USD, x)."""
        import highspy

        ms = self._run(self.hl)
        if ms != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"master problem: {self.hl.modelStatusToString(ms)}")
        x = np.asarray(self.hl.getSolution().col_value, dtype=float)
        lb = float(self.hl.getInfo().objective_function_value) * self.scale + self.r_offset
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


# ---------------------------------------------------------------------------- driver
@dataclass(frozen=True)
class DecomposedPlan:
    """The hedged plan found by the L-shaped method, with its bounds, VSS and EVPI.

    Attributes
    ----------
    scenarios : tuple of str
    weights : tuple of float
    expected_cost_usd : float
        RP: the best plan's expected cost (the upper bound; USD, discounted).
    lower_bound_usd : float
        The last master optimum (a lower bound on RP).
    gap_rel : float
        ``(UB - LB) / |UB|``.
    converged : bool
        ``gap_rel <= tol`` within ``max_iter`` iterations.
    wait_and_see_usd, eev_usd, vss_usd, evpi_usd : float
        WS, EEV (inf when the EV plan cannot be operated in some scenario),
        ``EEV - RP`` and ``RP - WS``.
    ev_problem : str
        ``"mean_value"`` or the name of the scenario whose plan served as EV plan.
    iterations : DataFrame
        ``iteration, lower_bound_usd, upper_bound_usd, gap_rel, cuts, master_s,
        subproblems_s, halvings``; iteration 0 is the EV plan's evaluation.
    per_scenario : DataFrame
        ``scenario, weight, hedged_cost_usd, ev_fixed_cost_usd, wait_and_see_cost_usd``.
    first_stage : DataFrame
        ``kind, site, chip, period, value`` (MW for build/liquid, chips otherwise) of
        the hedged plan's non-zero first-stage decisions.
    timings_s : Mapping[str, float]
        ``setup`` (universe, blocks, induced rows), ``wait_and_see`` (the scenarios
        alone on the workers, and meanwhile the mean-value problem in this process),
        ``ev`` (the EV plan evaluated in every scenario), ``iterations``, ``total``.
    peak_mb : Mapping[str, float]
        ``client`` and ``workers`` (sum over the block processes) ``ru_maxrss``.
    notes : tuple of str
    """

    scenarios: tuple[str, ...]
    weights: tuple[float, ...]
    expected_cost_usd: float
    lower_bound_usd: float
    gap_rel: float
    converged: bool
    wait_and_see_usd: float
    eev_usd: float
    vss_usd: float
    evpi_usd: float
    ev_problem: str
    iterations: pd.DataFrame
    per_scenario: pd.DataFrame
    first_stage: pd.DataFrame
    timings_s: Mapping[str, float]
    peak_mb: Mapping[str, float]
    notes: tuple[str, ...] = field(default_factory=tuple)


@dataclass
class _State:
    """Mutable bookkeeping of one run."""

    names: tuple[str, ...]
    w: np.ndarray
    best_ub: float = math.inf
    best_x: np.ndarray | None = None
    best_values: np.ndarray | None = None
    rows: list[dict[str, float]] = field(default_factory=list)

    def offer(self, x: np.ndarray, cuts: Sequence[Cut]) -> float:
        """Record the plan's expected cost; keep it when it is the best so far."""
        values = np.array([c.value for c in cuts])
        ub = float(self.w @ values) if all(c.ok for c in cuts) else math.inf
        if ub < self.best_ub:
            self.best_ub, self.best_x, self.best_values = ub, x, values
        return ub


def _mean_value_point(
    datasets: Sequence[Any], w: np.ndarray, universe: FirstStageUniverse, notes: list[str]
) -> np.ndarray | None:
    """First stage of the mean-value problem; None (with a note) when it has none."""
    from capacity.validation import DataValidationError

    try:
        mv, why = mean_value_dataset(datasets, [float(v) for v in w]), "rows differ"
    except DataValidationError as e:
        mv, why = None, f"data invalid: {e.findings[0].message}"
    if mv is not None:
        cut = ScenarioBlock([mv], [0], universe).wait_and_see()[0]
        if cut.ok:
            return cut.point
        notes.append(f"mean-value problem has no optimum ({cut.message}); used the heaviest")
    else:
        notes.append(f"mean-value problem undefined ({why}); used the heaviest scenario's plan")
    return None


def _first_stage_table(
    table: pd.DataFrame, universe: FirstStageUniverse, periods: Sequence[str], x: np.ndarray
) -> pd.DataFrame:
    """Decode first-stage columns into ``kind, site, chip, period, value`` (non-zero)."""
    out = table.assign(value=x * table["scale"].to_numpy())
    out = out[np.abs(out["value"]) > 1e-9]

    def decode(codes: np.ndarray, ids: Sequence[str]) -> list[str]:
        return [ids[int(c)] if c >= 0 else "" for c in codes]

    return pd.DataFrame(
        {
            "kind": out["kind"].astype(str).to_numpy(),
            "site": decode(out["s"].to_numpy(), universe.codes["s"]),
            "chip": decode(out["c"].to_numpy(), universe.codes["c"]),
            "period": decode(out["t"].to_numpy(), periods),
            "value": out["value"].to_numpy(dtype=float),
        }
    )


def _progress(enabled: bool) -> Any:
    """Return a rich progress bar (or a silent stand-in) for the iterations."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    if not enabled:
        return contextlib.nullcontext(None)
    return Progress(
        TextColumn("[bold]L-shaped[/bold] {task.description}"),
        BarColumn(),
        TextColumn("iter {task.completed:.0f}/{task.total:.0f}"),
        TimeElapsedColumn(),
        transient=False,
    )


def _evaluate_operable(
    blocks: _Blocks, state: _State, x: np.ndarray, it: int
) -> tuple[np.ndarray | None, list[Cut], list[Cut], int]:
    """Evaluate ``x``; when some scenario cannot operate it, halve toward the incumbent.

    Each scenario's operable first stages form a convex set that holds the incumbent,
    so a halved point stays operable wherever the previous one was: after a halving
    only the scenarios that failed are solved, and the others only once those pass
    (a run at 100 scenarios spent 37 s on six full rounds of halvings). Every cut of
    an evaluated point is valid and kept.

    Returns
    -------
    (point, cuts, point_cuts, halvings)
        ``point`` is operable in every scenario (None when 30 halvings found none),
        ``cuts`` every cut of the round, ``point_cuts`` the point's cut in every
        scenario in run order (empty when ``point`` is None).
    """
    n = len(state.names)
    kept: list[Cut] = []
    at_x: dict[int, Cut] = {}
    todo: list[int] | None = None  # None: every scenario
    halvings = 0
    while True:
        cuts = blocks.cuts("evaluate", x) if todo is None else blocks.cuts("evaluate", x, todo)
        kept += [c for c in cuts if c.ok]
        bad = [c for c in cuts if not c.ok]
        if not bad:
            at_x.update((c.scenario, c) for c in cuts)
            if len(at_x) == n:
                return x, kept, [at_x[k] for k in range(n)], halvings
            todo = [k for k in range(n) if k not in at_x]
            continue
        if state.best_x is None:
            who = ", ".join(f"{state.names[c.scenario]} ({c.message})" for c in bad[:3])
            raise RuntimeError(f"iteration {it}: no operable plan yet; {who}")
        if halvings == 30:
            # no point on the segment was operable everywhere: no upper bound this round
            return None, kept, [], halvings
        halvings += 1
        x = state.best_x + 0.5 * (x - state.best_x)
        at_x, todo = {}, sorted(c.scenario for c in bad)


def _release_free_memory() -> None:
    """Return freed heap pages to the OS (glibc ``malloc_trim``; a no-op elsewhere).

    Each master copy grows its matrices with every round of cuts, and the freed old
    copies stay in the heap: a master with 3,500 dense 472-column cuts (100 scenarios,
    35 rounds) held 992 MB resident without this, 688 MB with it (2026-12-01).
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name is None:
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(name).malloc_trim(0)


def _iterate(
    blocks: _Blocks,
    master: _Master,
    state: _State,
    inv_range: np.ndarray,
    tol: float,
    max_iter: int,
    on_iteration: Callable[[Mapping[str, float]], None],
    deadline: float = math.inf,
    kappa: float = 0.3,
) -> float:
    """Run master / subproblem rounds until the gap is at most ``tol``; return the LB.

    Level stabilisation (a level bundle method with a scaled 1-norm, so every step is
    an LP): the master gives the lower bound ``LB``; the next plan is the point of
    the master's level set ``sum_s p_s theta_s <= LB + kappa (UB - LB)`` nearest the
    best plan so far. Its cuts either cut the level set or improve the best plan.
    """
    lb = -math.inf
    for it in range(1, max_iter + 1):
        t0 = time.perf_counter()
        new_lb, x = master.solve()
        lb = max(lb, new_lb)
        if state.best_x is not None and math.isfinite(state.best_ub):
            level = lb + kappa * (state.best_ub - lb)
            x = master.project(state.best_x, inv_range, level)
        t1 = time.perf_counter()
        point, cuts, point_cuts, halvings = _evaluate_operable(blocks, state, x, it)
        if point is not None:
            state.offer(point, point_cuts)
        master.add_cuts(cuts)
        _release_free_memory()
        gap = (state.best_ub - lb) / max(abs(state.best_ub), 1.0)
        row = {
            "iteration": float(it),
            "lower_bound_usd": lb,
            "upper_bound_usd": state.best_ub,
            "gap_rel": gap,
            "cuts": float(master.n_cuts),
            "master_s": t1 - t0,
            "subproblems_s": time.perf_counter() - t1,
            "halvings": float(halvings),
        }
        state.rows.append(row)
        on_iteration(row)
        if gap <= tol or time.perf_counter() >= deadline:
            break
    return lb


def hedge_decomposed(
    datasets: Sequence[Any],
    weights: Sequence[float] | None = None,
    names: Sequence[str] | None = None,
    *,
    workers: int = 2,
    scheduler: str | None = None,
    tol: float = DEFAULT_TOLERANCE,
    max_iter: int = 200,
    threads: int | None = None,
    retain: int = 0,
    time_limit_s: float | None = None,
    progress: bool = False,
    on_iteration: Callable[[Mapping[str, float]], None] | None = None,
    first_stage: str | Sequence[str] = "full",
) -> DecomposedPlan:
    """Solve the hedged two-stage plan by the L-shaped method, subproblems on Dask.

    Parameters
    ----------
    datasets : sequence of Dataset
        Scenario datasets over one horizon (validated, scenario applied).
    weights : sequence of float, optional
        Probabilities (default equal); normalised to sum 1.
    names : sequence of str, optional
        Scenario names (default ``ds.scenario`` or ``s<k>``).
    workers : int
        Worker processes of the local Dask cluster, one scenario block each; 0 runs a
        single block in this process (no Dask). Ignored with ``scheduler``.
    scheduler : str, optional
        Address of an existing Dask scheduler (one block per worker there).
    tol : float
        Relative gap ``(UB - LB) / |UB|`` at which to stop (default 1e-6).
    max_iter : int
        Iteration limit (the plan is still returned, with ``converged=False``).
    threads : int, optional
        HiGHS threads per subproblem solve.
    retain : int
        Scenarios held exactly in the master (partial Benders: their operating
        columns and rows join it), picked at evenly spaced quantiles of the
        wait-and-see costs; 0 for the pure L-shaped master.
    time_limit_s : float, optional
        Stop iterating once this much wall time (s) has passed since the call (the
        best plan so far is returned, with ``converged=False`` when the gap is above
        ``tol``).
    progress : bool
        Show a rich progress bar with the bounds.
    on_iteration : callable, optional
        Called with each row of ``iterations``.
    first_stage : str or sequence of str
        The shared decisions: ``full`` (build, liquid, install, produce, retrofit;
        the default) or ``capacity`` (build, liquid, retrofit; chips are recourse),
        see :data:`optimizer.plan.model.FIRST_STAGE_SETS`.

    Returns
    -------
    DecomposedPlan

    Raises
    ------
    ValueError
        For bad weights or names.
    ScenarioInfeasibleError
        When a scenario alone has no optimum (a RuntimeError).
    RuntimeError
        When a master plan cannot be operated.
    """
    t_start = time.perf_counter()
    w, labels = _check_inputs(datasets, weights, names)
    notes: list[str] = []
    universe = first_stage_universe(datasets, first_stage)
    with _open_blocks(datasets, universe, workers, scheduler, threads) as blocks:
        run = _start(blocks, datasets, w, labels, universe, notes, min(retain, len(datasets)))
        run.timings["setup"] = run.timings["setup"] - t_start
        t_ev = time.perf_counter()
        deadline = math.inf if time_limit_s is None else t_start + time_limit_s
        lb = _solve_with_progress(blocks, run, tol, max_iter, progress, on_iteration, deadline)
        run.timings["iterations"] = time.perf_counter() - t_ev
        worker_mb = float(sum(blocks.call("peak_rss_mb"))) if blocks.remote else 0.0
    return _result(run, lb, tol, universe, datasets, notes, worker_mb, t_start)


def _check_inputs(
    datasets: Sequence[Any], weights: Sequence[float] | None, names: Sequence[str] | None
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Normalised weights and scenario names; ValueError for bad ones."""
    n = len(datasets)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if n == 0 or len(w) != n or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"need datasets and one non-negative weight each, got {list(w)}")
    labels = tuple(
        names or (str(getattr(d, "scenario", "") or f"s{k}") for k, d in enumerate(datasets))
    )
    if len(labels) != n:
        raise ValueError(f"need {n} names, got {len(labels)}")
    return w / w.sum(), labels


@dataclass
class _Run:
    """A started run: master, bookkeeping, wait-and-see and EV cuts, timings."""

    master: _Master
    state: _State
    ws: list[Cut]
    ev_cuts: list[Cut]
    eev: float
    ev_name: str
    table: pd.DataFrame
    inv_range: np.ndarray
    timings: dict[str, float]


def _start(
    blocks: _Blocks,
    datasets: Sequence[Any],
    w: np.ndarray,
    labels: tuple[str, ...],
    universe: FirstStageUniverse,
    notes: list[str],
    retain: int,
) -> _Run:
    """Wait-and-see solves, the EV plan's evaluation (EEV) and the first master."""
    info = blocks.call("info")
    n_first, table = info[0][0], info[0][1]
    induced = [r for part in info for r in part[2]]
    t_setup = time.perf_counter()
    # the workers solve the scenarios alone while this process solves the mean value
    pending = blocks.submit("wait_and_see")
    x_mv = _mean_value_point(datasets, w, universe, notes)
    ws = pending()
    for c in ws:
        if not c.ok:
            raise ScenarioInfeasibleError(labels[c.scenario], c.scenario, c.message)
    t_ws = time.perf_counter()
    floors = np.array([c.value for c in ws])
    heaviest = int(np.argmax(w))
    x_ev, ev_name = (
        (x_mv, "mean_value") if x_mv is not None else (ws[heaviest].point, labels[heaviest])
    )
    master = _Master(n_first, w, floors, induced)
    if retain > 0:
        keep = _representatives(floors, retain)
        model = build_stochastic_model(
            [datasets[i] for i in keep], list(w[keep] / w[keep].sum()), universe=universe
        )
        master.retain(model, keep.tolist())
    master.add_cuts(ws)
    ev_cuts = blocks.cuts("evaluate", x_ev)
    state = _State(labels, w)
    eev = state.offer(x_ev, ev_cuts)
    for c in ev_cuts:
        if not c.ok:
            notes.append(f"the {ev_name} plan cannot be operated in {labels[c.scenario]}")
    master.add_cuts(ev_cuts)
    row0 = {"iteration": 0.0, "lower_bound_usd": float(w @ floors), "upper_bound_usd": eev}
    state.rows.append({**row0, "gap_rel": math.nan, "cuts": float(master.n_cuts)})
    points = np.vstack([c.point for c in ws] + [x_ev])
    spread = points.max(axis=0) - points.min(axis=0)
    inv_range = 1.0 / (spread + 1e-3 * max(float(spread.max(initial=0.0)), 1.0))
    timings = {"setup": t_setup, "wait_and_see": t_ws - t_setup, "ev": time.perf_counter() - t_ws}
    return _Run(master, state, ws, ev_cuts, eev, ev_name, table, inv_range, timings)


def _representatives(costs: np.ndarray, count: int) -> np.ndarray:
    """Positions of ``count`` scenarios at evenly spaced quantiles of ``costs``."""
    order = np.argsort(costs, kind="stable")
    picks = ((np.arange(count) + 0.5) * len(costs) / count).astype(int)
    return np.unique(order[np.minimum(picks, len(costs) - 1)])


def _solve_with_progress(
    blocks: _Blocks,
    run: _Run,
    tol: float,
    max_iter: int,
    progress: bool,
    on_iteration: Callable[[Mapping[str, float]], None] | None,
    deadline: float = math.inf,
) -> float:
    """Iterate with a progress bar showing the gap and the upper bound."""
    with _progress(progress) as bar:
        task = bar.add_task("", total=max_iter) if bar is not None else None

        def report(row: Mapping[str, float]) -> None:
            if bar is not None:
                desc = f"gap {row['gap_rel']:.2e}  UB {row['upper_bound_usd']:.6e} USD"
                bar.update(task, advance=1, description=desc)
            if on_iteration is not None:
                on_iteration(row)

        return _iterate(
            blocks, run.master, run.state, run.inv_range, tol, max_iter, report, deadline
        )


def _result(
    run: _Run,
    lb: float,
    tol: float,
    universe: FirstStageUniverse,
    datasets: Sequence[Any],
    notes: list[str],
    worker_mb: float,
    t_start: float,
) -> DecomposedPlan:
    """Assemble the :class:`DecomposedPlan` of a finished run."""
    state = run.state
    if state.best_x is None or state.best_values is None:
        raise RuntimeError("no operable first stage was found")
    rp = state.best_ub
    ws_usd = float(state.w @ np.array([c.value for c in run.ws]))
    gap = (rp - lb) / max(abs(rp), 1.0)
    per = pd.DataFrame(
        {
            "scenario": list(state.names),
            "weight": state.w,
            "hedged_cost_usd": state.best_values,
            "ev_fixed_cost_usd": [c.value for c in run.ev_cuts],
            "wait_and_see_cost_usd": [c.value for c in run.ws],
        }
    )
    timings = dict(run.timings, total=time.perf_counter() - t_start)
    client_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return DecomposedPlan(
        scenarios=state.names,
        weights=tuple(float(v) for v in state.w),
        expected_cost_usd=rp,
        lower_bound_usd=lb,
        gap_rel=gap,
        converged=gap <= tol,
        wait_and_see_usd=ws_usd,
        eev_usd=run.eev,
        vss_usd=run.eev - rp,
        evpi_usd=rp - ws_usd,
        ev_problem=run.ev_name,
        iterations=pd.DataFrame(state.rows),
        per_scenario=per,
        first_stage=_first_stage_table(run.table, universe, datasets[0].periods, state.best_x),
        timings_s=timings,
        peak_mb={"client": client_mb, "workers": worker_mb},
        notes=tuple(notes),
    )


def extensive_form_objective(
    datasets: Sequence[Any],
    weights: Sequence[float] | None = None,
    options: Any = None,
    first_stage: str | Sequence[str] = "full",
) -> tuple[float | None, str, dict[str, float]]:
    """Build and solve the extensive form only (the reference; no result tables).

    ``first_stage`` is the shared decisions' definition, as in :func:`hedge_decomposed`.

    Returns
    -------
    (objective USD or None, status, timings)
        Timings ``build`` and ``solve`` (s); the solver options are
        :mod:`optimizer.plan.solve`'s (dual simplex, interior point above 50,000 columns).
    """
    from optimizer.plan.raw_solve import run_solver

    n = len(datasets)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    w = w / w.sum()
    options = options or SolveOptions()
    t0 = time.perf_counter()
    model = build_stochastic_model(
        datasets, list(w), formulation=options.formulation, first_stage=first_stage
    )
    t1 = time.perf_counter()
    raw = run_solver(model, options, lp_only=True)
    t2 = time.perf_counter()
    return raw.solver_objective, raw.status.value, {"build": t1 - t0, "solve": t2 - t1}
