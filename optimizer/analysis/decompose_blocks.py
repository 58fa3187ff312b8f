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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from optimizer.analysis.dask_cluster import ClusterOptions, open_client
from optimizer.analysis.decompose_cuts import Cut, induced_rows
from optimizer.plan.highs import (
    _highs_lp,
    _highs_pass,
    foreign_start_options,
    highs_ok,
    new_highs,
)
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
    universe : FirstStageUniverse, optional
        Codes and first-stage keys of the whole run (same columns everywhere); with
        it every scenario is built at once, without it each is built by
        :meth:`build` or :meth:`first_solves` once :meth:`set_universe` has set it.
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
    codes : mapping, optional
        The run's codes: the datasets are coded here, once, and their first-stage keys
        of ``kinds`` made (:meth:`stage_keys`), so the run's universe is the union of
        the blocks' keys, made where the datasets are.
    kinds : sequence of str
        The first-stage kinds (with ``codes``).

    Raises
    ------
    ValueError
        For an unknown ``warm_start``.
    """

    def __init__(
        self,
        datasets: Sequence[Any],
        indices: Sequence[int],
        universe: FirstStageUniverse | None = None,
        threads: int | None = None,
        warm_start: str = "live",
        live_limit: int | None = None,
        objective: str = "cost",
        *,
        codes: Mapping[str, tuple[str, ...]] | None = None,
        kinds: Sequence[str] = (),
    ) -> None:
        if warm_start not in WARM_STARTS:
            raise ValueError(
                f"warm_start must be one of {', '.join(WARM_STARTS)}, got {warm_start!r}"
            )
        self.warm = warm_start
        self.live_limit = math.inf if live_limit is None else int(live_limit)
        self.live: dict[int, Any] = {}
        self.threads = threads
        self.objective = objective
        self.universe = universe
        #: the datasets this block may build, by run position
        self.datasets = {int(i): ds for i, ds in zip(indices, datasets, strict=True)}
        #: per built scenario (its slot): run position, LP, last basis, shape, induced rows
        self.indices: list[int] = []
        self.lps: list[Any] = []
        self.bases: list[Any] = []
        self.shapes: list[tuple[int, int]] = []
        self.induced: list[tuple[sp.csr_matrix, np.ndarray, np.ndarray]] = []
        #: False for a slot given to another block (:meth:`release`)
        self.held: list[bool] = []
        self.n_first = 0
        self.first_stage = pd.DataFrame()
        self.coded: dict[int, Any] = {}
        self.keys: dict[str, pd.DataFrame] = {}
        self._start: tuple[bytes, Any] | None = None
        self._prev: tuple[tuple[int, int], Any] | None = None
        self._builder: ThreadPoolExecutor | None = None
        if codes is not None:
            self._code(codes, kinds)
        if universe is not None:
            self.build(self.datasets)
        self.h = self._new_solver()

    def _code(self, codes: Mapping[str, tuple[str, ...]], kinds: Sequence[str]) -> None:
        """Code the block's datasets and make their first-stage keys (:attr:`keys`).

        The coded scenarios are kept for the builds (:func:`build_stochastic_model`'s
        ``coded``), so each dataset is coded once.
        """
        from optimizer.plan.coding import scenario_data
        from optimizer.plan.columns import first_stage_keys

        self.coded = {i: scenario_data(0, ds, codes) for i, ds in self.datasets.items()}
        self.keys = first_stage_keys(list(self.coded.values()), kinds)

    def stage_keys(self) -> dict[str, pd.DataFrame]:
        """Return the first-stage keys of the block's datasets (made at construction)."""
        return self.keys

    def set_universe(self, universe: FirstStageUniverse) -> None:
        """Set the run's first-stage universe, which every build uses."""
        self.universe = universe

    def build(
        self, positions: Iterable[int], datasets: Mapping[int, Any] | None = None
    ) -> list[int]:
        """Build the scenario models of run ``positions`` not built yet; return the positions.

        Parameters
        ----------
        positions : iterable of int
            Run positions; the datasets are the block's own or from ``datasets``.
        datasets : mapping of int to Dataset, optional
            Datasets of positions given to this block later (another block's).

        Raises
        ------
        RuntimeError
            Without a universe (:meth:`set_universe`), or when the first-stage
            columns are not the model's leading columns.
        """
        if self.universe is None:
            raise RuntimeError("a scenario block builds only once the universe is set")
        if datasets:
            self.datasets.update((int(i), ds) for i, ds in datasets.items())
        built = {i for i, held in zip(self.indices, self.held, strict=True) if held}
        for i in (int(v) for v in positions):
            if i in built:
                continue
            # built in a thread of its own: see :meth:`_build_one`
            if self._builder is None:
                self._builder = ThreadPoolExecutor(1, thread_name_prefix="scenario-build")
            lp, induced, first_stage = self._builder.submit(self._build_one, i).result()
            self.n_first, self.first_stage = len(first_stage), first_stage
            self.induced.append(induced)
            self.indices.append(i)
            self.lps.append(lp)
            self.bases.append(None)
            self.shapes.append((lp.num_col_, lp.num_row_))
            self.held.append(True)
            built.add(i)
        return sorted(built)

    def _build_one(self, i: int) -> tuple[Any, Any, pd.DataFrame]:
        """Return run position ``i``'s LP, induced rows and first-stage variable table.

        Runs in the block's build thread, so the allocations of the build (pandas frames
        and their garbage) sit in another malloc arena than the HiGHS instances, which
        the solving thread makes: built in the solving thread, between solves, the
        L-shaped rounds' re-solves took 0.108 s of CPU each at 100 scenarios against
        0.101 s when every model was built before the first solve (2026-12-05, same
        simplex iterations).
        """
        coded = self.coded.pop(i, None)
        model = build_stochastic_model(
            [self.datasets[i]],
            [1.0],
            universe=self.universe,
            objective=self.objective,
            coded=None if coded is None else [coded],
        )
        first = (model.variables["scenario"] == -1).to_numpy()
        n_first = int(first.sum())
        if not first[:n_first].all():
            raise RuntimeError("first-stage columns are not the leading columns")
        table = model.variables.loc[first, ["kind", "s", "c", "t", "scale"]]
        return _highs_lp(model, lp_only=True)[0], induced_rows(model, n_first), table

    def release(self, positions: Iterable[int]) -> None:
        """Give up the scenarios of run ``positions`` (another block solves them now)."""
        drop = {int(i) for i in positions}
        for i in drop:  # taken before this block built them
            self.coded.pop(i, None)
            self.datasets.pop(i, None)
        for k, i in enumerate(self.indices):
            if i in drop and self.held[k]:
                self.held[k], self.lps[k], self.bases[k] = False, None, None
                self.live.pop(k, None)

    def _slots(self, only: Iterable[int] | None = None) -> list[int]:
        """Slots of the held scenarios (of run positions ``only`` when given), in build order."""
        keep = None if only is None else {int(i) for i in only}
        return [
            k for k, i in enumerate(self.indices) if self.held[k] and (keep is None or i in keep)
        ]

    def _new_solver(self) -> Any:
        """Return a silent HiGHS instance with the subproblems' options."""
        h = new_highs()
        # each subproblem starts from another LP's basis (the mean-value problem's, then
        # its own wait-and-see one at a fixed first stage): the options of such a start
        for name, value in foreign_start_options().items():
            highs_ok(h.setOptionValue(name, value), f"option {name}={value!r}")
        # cuts are exact up to the reduced costs' dual tolerance
        highs_ok(h.setOptionValue("dual_feasibility_tolerance", 1e-9), "option dual tol")
        if self.threads is not None:
            highs_ok(h.setOptionValue("threads", int(self.threads)), "option threads")
        return h

    def _solver_for(self, k: int) -> tuple[Any, bool]:
        """HiGHS instance for slot ``k`` and whether it holds the scenario's own state."""
        if self.warm != "live" or (k not in self.live and len(self.live) >= self.live_limit):
            _highs_pass(self.h, self.lps[k])
            return self.h, False
        h = self.live.get(k)
        if h is None:
            h = self.live[k] = self._new_solver()
            _highs_pass(h, self.lps[k])
            return h, False
        return h, True

    def info(
        self,
    ) -> tuple[int, pd.DataFrame, dict[int, tuple[sp.csr_matrix, np.ndarray, np.ndarray]]]:
        """Return ``(n_first, first-stage variable table, induced rows by run position)``.

        The induced rows are those of the scenarios the block holds.
        """
        held = {self.indices[k]: self.induced[k] for k in self._slots()}
        return self.n_first, self.first_stage, held

    def _solve(self, k: int, point: np.ndarray | None, basis: Any = None) -> Cut:
        """Solve the block's scenario ``k`` at ``point`` (None: first stage free).

        Starts from ``basis`` when given; else a live instance continues from its own
        state, and a shared one from the scenario's last optimal basis (cold when it
        has none, or with ``warm_start="cold"``). Stores the new optimal basis. The
        cut carries the solve's CPU seconds and simplex iterations.

        Raises
        ------
        ValueError
            When ``point`` is not one value per first-stage column.
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
            free_hi = np.full(n, np.inf)
            highs_ok(h.changeColsBounds(n, idx, np.zeros(n), free_hi), "bounds")
        else:  # highspy reads n values of the buffer: a shorter one read stray memory
            point = np.ascontiguousarray(point, dtype=float)
            if point.shape != (n,):
                raise ValueError(f"first-stage point of shape {point.shape}, not ({n},)")
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
        """Solve every held scenario alone (first stage free); one cut each at its optimum.

        Each scenario whose LP has the shape of ``start`` (a basis of the same model
        with other values, the mean-value problem's in
        :func:`optimizer.analysis.decompose_setup.start_run`) starts from it. Without
        ``start``, a scenario whose LP has the shape of the one this block solved before
        it starts from that one's optimal basis (sampled scenarios differ in values,
        rarely in shape): at 6 sampled scenarios this took 55.9k simplex iterations
        against 30.7k from the mean-value basis (2026-12-02). The EV plan, evaluated
        from each scenario's own wait-and-see basis, then took 18k simplex iterations
        at 8 scenarios after 54k chained here (94k cold); the other order, the EV plan
        first (chained from scenario to scenario) and these from each EV basis, took
        56k + 43k.
        """
        return [self._wait_and_see(k, start) for k in self._slots()]

    def _wait_and_see(self, k: int, start: BasisArrays | None) -> Cut:
        """Solve slot ``k`` alone, from ``start`` or chained (:meth:`wait_and_see`)."""
        first = None
        if start is not None:
            tag = start[0].tobytes() + start[1].tobytes()
            if self._start is None or self._start[0] != tag:
                self._start = (tag, _basis_of(start))
            first = ((len(start[0]), len(start[1])), self._start[1])
        shape, prev = self.shapes[k], self._prev
        warm = prev[1] if prev is not None and prev[0] == shape else None
        if first is not None and first[0] == shape:
            warm = first[1]
        cut = self._solve(k, None, warm)
        self._prev = (shape, self.bases[k]) if cut.ok else None
        return cut

    def basis_arrays(self, k: int) -> BasisArrays | None:
        """Return scenario ``k``'s last optimal basis as arrays (None without one)."""
        basis = self.bases[k]
        if basis is None or not basis.valid:
            return None
        cols = np.array([int(v) for v in basis.col_status], dtype=np.int8)
        return cols, np.array([int(v) for v in basis.row_status], dtype=np.int8)

    def evaluate(
        self, point: np.ndarray, only: Sequence[int] | None = None, until: float | None = None
    ) -> list[Cut]:
        """Solve the held scenarios with the first stage fixed to ``point``; one cut each.

        Each starts from its own last optimal basis. ``only``: run positions to solve
        (the block's others are skipped); all if None. ``until``: a ``time.time()``
        value after which no further scenario is started (its cuts are then missing:
        the caller sees the round was cut short by its time limit).
        """
        p = np.maximum(np.asarray(point, dtype=float), 0.0)
        out = []
        for k in self._slots(only):
            if until is not None and time.time() >= until:
                break
            out.append(self._solve(k, p))
        return out

    def first_solves(
        self,
        positions: Sequence[int],
        start: BasisArrays | None,
        point: np.ndarray | None,
        datasets: Mapping[int, Any] | None = None,
    ) -> tuple[list[Cut], list[Cut]]:
        """Build, solve alone and evaluate at ``point`` the scenarios of run ``positions``.

        One call per scenario or few, so the run can hand scenarios to whichever block
        is free (:class:`optimizer.analysis.decompose_dispatch.FirstSolves`): each is
        built here when it is not yet (``datasets`` has those of other blocks), solved
        alone (:meth:`wait_and_see`, from ``start`` or chained), then, without waiting
        for the other blocks, at ``point`` from its own wait-and-see basis (skipped when
        ``point`` is None).

        Returns
        -------
        (list of Cut, list of Cut)
            The wait-and-see cuts and the cuts at ``point`` (empty without one), in
            the order of ``positions``.
        """
        self.build(positions, datasets)
        where = {i: k for k, i in enumerate(self.indices) if self.held[k]}
        slots = [where[int(i)] for i in positions]
        ws = [self._wait_and_see(k, start) for k in slots]
        if point is None:
            return ws, []
        p = np.maximum(np.asarray(point, dtype=float), 0.0)
        return ws, [self._solve(k, p) for k in slots]

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
        client can work meanwhile.
    remote : bool
        True for actors (every call returns a future).
    parts : list of list of int, optional
        The run positions each block was given (default: none known).
    """

    def __init__(
        self,
        blocks: list[Any],
        remote: bool,
        *,
        pending: bool = False,
        parts: list[list[int]] | None = None,
    ) -> None:
        self._blocks, self.remote, self._pending = blocks, remote, pending
        self.parts = parts or [[] for _ in blocks]
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

    def one(self, k: int, name: str, *args: Any) -> Any:
        """Call method ``name`` on block ``k`` and wait for its answer."""
        out = getattr(self.blocks[k], name)(*args)
        return out.result() if self.remote else out

    def universe(
        self, codes: Mapping[str, tuple[str, ...]], kinds: Sequence[str]
    ) -> FirstStageUniverse:
        """Join the blocks' first-stage keys into the run's universe and give it to them.

        Each block made its keys where its datasets are (``codes`` and ``kinds`` at
        construction); the union equals :func:`optimizer.plan.model.first_stage_universe`
        over all the datasets.
        """
        from optimizer.plan.columns import union_stage_keys

        keys = union_stage_keys(self.call("stage_keys"), kinds)
        universe = FirstStageUniverse(codes, keys, tuple(kinds))
        self.call("set_universe", universe)
        return universe

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
    codes: Mapping[str, tuple[str, ...]],
    kinds: Sequence[str],
    workers: int,
    scheduler: str | None,
    threads: int | None,
    warm_start: str = "live",
    live_limit: int | None = None,
    objective: str = "cost",
) -> Iterator[ScenarioBlocks]:
    """Start one block per worker (Dask actors), or one in-process block (workers=0).

    Each block codes its share of the datasets and makes their first-stage keys as it
    starts; :meth:`ScenarioBlocks.universe` joins them. The models are built later
    (:meth:`ScenarioBlock.first_solves`).

    Parameters
    ----------
    datasets : sequence of Dataset
        The run's scenarios, split evenly over the blocks to start with (a block that
        runs out takes another's, :mod:`optimizer.analysis.decompose_dispatch`).
    codes : mapping
        The run's codes (:func:`optimizer.plan.coding.dataset_codes` of ``datasets``).
    kinds : sequence of str
        The first-stage kinds.
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
    opts = (None, threads, warm_start, live_limit, objective)
    named: dict[str, Any] = {"codes": codes, "kinds": tuple(kinds)}
    if workers == 0 and scheduler is None:
        every = list(range(len(datasets)))
        block = ScenarioBlock(datasets, every, *opts, **named)
        yield ScenarioBlocks([block], False, parts=[every])
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
                *opts,
                **named,
                actor=True,
                workers=[w],
                pure=False,
            )
            for part, w in zip(parts, names, strict=False)
        ]
        yield ScenarioBlocks(futures, True, pending=True, parts=[p.tolist() for p in parts])
