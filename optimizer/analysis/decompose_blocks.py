"""The L-shaped method's scenario subproblems: blocks of scenario LPs, as Dask actors.

A block (one per worker) keeps one HiGHS instance per scenario, so each re-solve
continues from the scenario's own factored basis (``warm_start="live"``, about 20 MB
per scenario at the default size); past ``live_limit`` scenarios, or with
``warm_start="basis"``, it holds the LPs as arrays with their last optimal bases and
solves them in one shared instance. Local cluster by default, ``scheduler=ADDRESS``
for an existing one, ``workers=0`` for one in-process block.
"""

from __future__ import annotations

import contextlib
import math
import resource
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from optimizer.analysis.dask_cluster import ClusterOptions, open_client
from optimizer.analysis.decompose_cuts import Cut, induced_rows
from optimizer.plan.highs import _highs_lp, _highs_pass, highs_ok, new_highs
from optimizer.plan.model import FirstStageUniverse, build_stochastic_model

__all__ = ["WARM_STARTS", "BasisArrays", "ScenarioBlock", "ScenarioBlocks", "open_blocks"]

#: How a scenario subproblem's next solve starts (:class:`ScenarioBlock`).
WARM_STARTS = ("live", "basis", "cold")

#: A HiGHS basis as plain arrays (highspy's ``HighsBasis`` does not pickle): the
#: ``HighsBasisStatus`` codes of the columns and of the rows, int8.
BasisArrays = tuple[np.ndarray, np.ndarray]


def _basis_of(arrays: BasisArrays) -> Any:
    """Return the ``highspy.HighsBasis`` of status arrays (:data:`BasisArrays`)."""
    import highspy

    status = highspy.HighsBasisStatus
    basis = highspy.HighsBasis()
    basis.col_status = [status(int(v)) for v in arrays[0]]
    basis.row_status = [status(int(v)) for v in arrays[1]]
    basis.valid = True
    return basis


class ScenarioBlock:
    """Scenario subproblems of one process (a Dask actor, or in-process).

    Warm starts (``warm_start``):

    ``live`` (the default)
        Each scenario keeps its own HiGHS instance for the whole run (up to
        ``live_limit`` of them; the block's other scenarios share one instance as in
        ``basis``). A new first-stage point only changes the fixed columns' bounds, and
        dual simplex continues from the instance's own factored basis: at the default
        size a re-solve at a nearby point took 0.007 s of CPU against 0.068 s for
        ``basis`` (``passModel`` 0.010 s, then the basis factored again; measured
        2026-12-02 on 6 sampled scenarios, same simplex iterations). The wait-and-see
        solve of a scenario stays in its instance, so its evaluation at the EV plan and
        at the first master plans starts from it.
    ``basis``
        One HiGHS instance for the block: each solve passes the scenario's LP
        (``passModel``, arrays of about 1 MB at the default size) and starts from the
        scenario's last optimal basis.
    ``cold``
        As ``basis`` without a starting basis (a reference for the other two).

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
    warm_start : {"live", "basis", "cold"}
        How a scenario's next solve starts (above).
    live_limit : int, optional
        Most scenarios of this block with their own instance (``live`` only; default
        all): a memory bound, about 20 MB per instance at the default size.
    objective : {"cost", "margin"}
        The scenario models' objective (:func:`optimizer.plan.model.build_stochastic_model`):
        discounted cost, or cost less revenue (minus the margin).

    Raises
    ------
    ValueError
        For an unknown ``warm_start``.
    """

    def __init__(
        self,
        datasets: Sequence[Any],
        indices: Sequence[int],
        universe: FirstStageUniverse,
        threads: int | None = None,
        warm_start: str = "live",
        live_limit: int | None = None,
        objective: str = "cost",
    ) -> None:
        if warm_start not in WARM_STARTS:
            raise ValueError(
                f"warm_start must be one of {', '.join(WARM_STARTS)}, got {warm_start!r}"
            )
        self.warm = warm_start
        self.live_limit = len(datasets) if live_limit is None else int(live_limit)
        self.live: dict[int, Any] = {}
        self.threads = threads
        self.indices = [int(i) for i in indices]
        self.lps: list[Any] = []
        self.bases: list[Any] = [None] * len(self.indices)
        self.n_first = 0
        self.first_stage = pd.DataFrame()
        self.induced: list[tuple[sp.csr_matrix, np.ndarray, np.ndarray]] = []
        for ds in datasets:
            model = build_stochastic_model([ds], [1.0], universe=universe, objective=objective)
            first = (model.variables["scenario"] == -1).to_numpy()
            self.n_first = int(first.sum())
            if not first[: self.n_first].all():
                raise RuntimeError("first-stage columns are not the leading columns")
            self.first_stage = model.variables.loc[first, ["kind", "s", "c", "t", "scale"]]
            self.induced.append(induced_rows(model, self.n_first))
            self.lps.append(_highs_lp(model, lp_only=True)[0])
        self.shapes = [(lp.num_col_, lp.num_row_) for lp in self.lps]
        self.h = self._new_solver()
        self.free_lo = np.zeros(self.n_first)
        self.free_hi = np.full(self.n_first, np.inf)

    def _new_solver(self) -> Any:
        """Return a silent HiGHS instance with the subproblems' options."""
        h = new_highs()
        highs_ok(h.setOptionValue("solver", "simplex"), "option solver='simplex'")
        # cuts are exact up to the reduced costs' dual tolerance
        highs_ok(h.setOptionValue("dual_feasibility_tolerance", 1e-9), "option dual tol")
        if self.threads is not None:
            highs_ok(h.setOptionValue("threads", int(self.threads)), "option threads")
        return h

    def _solver_for(self, k: int) -> tuple[Any, bool]:
        """HiGHS instance for scenario ``k`` and whether it holds the scenario's own state."""
        if self.warm != "live" or k >= self.live_limit:
            _highs_pass(self.h, self.lps[k])
            return self.h, False
        h = self.live.get(k)
        if h is None:
            h = self.live[k] = self._new_solver()
            _highs_pass(h, self.lps[k])
            return h, False
        return h, True

    def info(self) -> tuple[int, pd.DataFrame, list[tuple[sp.csr_matrix, np.ndarray, np.ndarray]]]:
        """Return ``(n_first, first-stage variable table, induced rows per scenario)``."""
        return self.n_first, self.first_stage, self.induced

    def _solve(self, k: int, point: np.ndarray | None, basis: Any = None) -> Cut:
        """Solve the block's scenario ``k`` at ``point`` (None: first stage free).

        Starts from ``basis`` when given; else a live instance continues from its own
        state, and a shared one from the scenario's last optimal basis (cold when it
        has none, or with ``warm_start="cold"``). Stores the new optimal basis. The
        cut carries the solve's CPU seconds and simplex iterations.
        """
        import highspy

        t0 = time.process_time()
        n, i = self.n_first, self.indices[k]
        h, own = self._solver_for(k)
        start = basis if basis is not None or own else self.bases[k]
        if self.warm != "cold" and start is not None and start.valid:
            highs_ok(h.setBasis(start), "to start from a stored basis")
        idx = np.arange(n, dtype=np.int32)
        if point is None:
            highs_ok(h.changeColsBounds(n, idx, self.free_lo, self.free_hi), "bounds")
        else:
            highs_ok(h.changeColsBounds(n, idx, point, point), "bounds")
        status, ms = h.run(), h.getModelStatus()
        iterations = int(h.getInfo().simplex_iteration_count)
        settled = (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kInfeasible)
        if status == highspy.HighsStatus.kError or ms not in settled:
            # a warm start that ends anywhere else (numerical trouble) is retried cold
            highs_ok(h.clearSolver(), "clearSolver")
            highs_ok(h.run(), "to solve a scenario subproblem")
            ms = h.getModelStatus()
            iterations += int(h.getInfo().simplex_iteration_count)
        if ms != highspy.HighsModelStatus.kOptimal:
            empty = np.zeros(n) if point is None else point
            cpu = time.process_time() - t0
            why = h.modelStatusToString(ms)
            return Cut(i, False, math.inf, np.zeros(n), empty, why, cpu, iterations)
        if self.warm != "cold":
            self.bases[k] = h.getBasis()
        sol = h.getSolution()
        x = np.asarray(sol.col_value[:n], dtype=float)
        grad = np.asarray(sol.col_dual[:n], dtype=float)
        value = float(h.getInfo().objective_function_value)
        at = x if point is None else point
        return Cut(i, True, value, grad, at, "optimal", time.process_time() - t0, iterations)

    def wait_and_see(self, start: BasisArrays | None = None) -> list[Cut]:
        """Solve every scenario alone (first stage free); one cut each at its optimum.

        Each scenario whose LP has the shape of ``start`` (a basis of the same model
        with other values, the mean-value problem's in
        :func:`optimizer.analysis.decompose_setup.start_run`) starts from it. Without
        ``start``, a scenario whose LP has the shape of the one solved before it starts
        from that one's optimal basis (sampled scenarios differ in values, rarely in
        shape): at 6 sampled scenarios this took 55.9k simplex iterations against 30.7k
        from the mean-value basis (2026-12-02). The EV plan, evaluated from each
        scenario's own wait-and-see basis, then took 18k simplex iterations at 8
        scenarios after 54k chained here (94k cold); the other order, the EV plan first
        (chained from scenario to scenario) and these from each EV basis, took 56k + 43k.
        """
        first = None
        if start is not None:
            first = ((len(start[0]), len(start[1])), _basis_of(start))
        out: list[Cut] = []
        prev: Any = None
        for k, shape in enumerate(self.shapes):
            warm = prev[1] if prev is not None and prev[0] == shape else None
            if first is not None and first[0] == shape:
                warm = first[1]
            out.append(self._solve(k, None, warm))
            prev = (shape, self.bases[k]) if out[-1].ok else None
        return out

    def basis_arrays(self, k: int) -> BasisArrays | None:
        """Return scenario ``k``'s last optimal basis as arrays (None without one)."""
        basis = self.bases[k]
        if basis is None or not basis.valid:
            return None
        cols = np.array([int(v) for v in basis.col_status], dtype=np.int8)
        return cols, np.array([int(v) for v in basis.row_status], dtype=np.int8)

    def evaluate(self, point: np.ndarray, only: Sequence[int] | None = None) -> list[Cut]:
        """Solve the scenarios with the first stage fixed to ``point``; one cut each.

        Each starts from its own last optimal basis. ``only``: run positions to solve
        (the block's others are skipped); all if None.
        """
        p = np.maximum(np.asarray(point, dtype=float), 0.0)
        keep = None if only is None else {int(i) for i in only}
        ks = [k for k, i in enumerate(self.indices) if keep is None or i in keep]
        return [self._solve(k, p) for k in ks]

    def wait_and_see_then(self, start: BasisArrays | None, point: np.ndarray) -> list[Cut]:
        """Solve the scenarios alone (:meth:`wait_and_see`), then at ``point`` (:meth:`evaluate`).

        One call for both, so a block starts its evaluations as soon as its own
        wait-and-see solves end instead of waiting for every block's.

        Returns
        -------
        list of Cut
            The wait-and-see cuts, then the cuts at ``point``, each in the block's
            scenario order (one of each per scenario).
        """
        return self.wait_and_see(start) + self.evaluate(point)

    def peak_rss_mb(self) -> float:
        """Peak resident memory of this process (MB, ``ru_maxrss``)."""
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class ScenarioBlocks:
    """The run's scenario blocks: Dask actors (results via ``.result()``) or local.

    Parameters
    ----------
    blocks : list
        :class:`ScenarioBlock` actors, or in-process blocks; or the futures of the
        actors being made, waited for at the first call (:attr:`blocks`), so the
        client can work meanwhile (the mean-value problem,
        :func:`optimizer.analysis.decompose_setup.start_run`).
    remote : bool
        True for actors (every call returns a future).
    """

    def __init__(self, blocks: list[Any], remote: bool, *, pending: bool = False) -> None:
        self._blocks, self.remote, self._pending = blocks, remote, pending
        #: over every gathered call: the solves' CPU seconds (all blocks), and the sum
        #: per call of the busiest block's (what the calls would take with no
        #: communication and no other load)
        self.solve_total_s = 0.0
        self.busy_total_s = 0.0

    @property
    def blocks(self) -> list[Any]:
        """The blocks (waits for the actors when they are still being made)."""
        if self._pending:
            self._blocks, self._pending = [f.result() for f in self._blocks], False
        return self._blocks

    def call(self, name: str, *args: Any) -> list[Any]:
        """Call method ``name`` on every block; return each block's answer in block order."""
        calls = [getattr(b, name)(*args) for b in self.blocks]
        return [c.result() for c in calls] if self.remote else calls

    def cuts(self, name: str, *args: Any) -> list[Cut]:
        """Call ``name`` on every block and wait; return all cuts in scenario order."""
        return self.submit(name, *args)()

    def submit(self, name: str, *args: Any) -> Callable[[], list[Cut]]:
        """Start ``name`` on every block (at once on actors); the result waits for it."""
        calls = [getattr(b, name)(*args) for b in self.blocks]

        def gather() -> list[Cut]:
            parts = [c.result() for c in calls] if self.remote else calls
            busy = [sum(c.solve_s for c in part) for part in parts]
            self.solve_total_s += float(sum(busy))
            self.busy_total_s += float(max(busy, default=0.0))
            return sorted((c for part in parts for c in part), key=lambda c: c.scenario)

        return gather


@contextlib.contextmanager
def open_blocks(
    datasets: Sequence[Any],
    universe: FirstStageUniverse,
    workers: int,
    scheduler: str | None,
    threads: int | None,
    warm_start: str = "live",
    live_limit: int | None = None,
    objective: str = "cost",
) -> Iterator[ScenarioBlocks]:
    """Start one block per worker (Dask actors), or one in-process block (workers=0).

    Parameters
    ----------
    datasets : sequence of Dataset
        The run's scenarios, split evenly over the blocks.
    universe : FirstStageUniverse
        Codes and first-stage keys of the whole run.
    workers : int
        Worker processes of a local Dask cluster; 0 (without ``scheduler``) runs one
        block in this process.
    scheduler : str or None
        Address of an existing Dask scheduler (one block per worker there).
    threads : int or None
        HiGHS threads per subproblem solve.
    warm_start : {"live", "basis", "cold"}
        How each scenario's next solve starts (:class:`ScenarioBlock`).
    live_limit : int, optional
        Most scenarios with their own HiGHS instance per block (default all).
    objective : {"cost", "margin"}
        The scenario models' objective.

    Yields
    ------
    ScenarioBlocks
        The blocks, the actors still being made (the first call waits for them); the
        cluster (when started here) closes on exit.
    """
    opts = (threads, warm_start, live_limit, objective)
    if workers == 0 and scheduler is None:
        yield ScenarioBlocks(
            [ScenarioBlock(datasets, range(len(datasets)), universe, *opts)], False
        )
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
                *opts,
                actor=True,
                workers=[w],
                pure=False,
            )
            for part, w in zip(parts, names, strict=False)
        ]
        yield ScenarioBlocks(futures, True, pending=True)
