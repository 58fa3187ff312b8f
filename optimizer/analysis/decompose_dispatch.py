"""The decomposed hedge's first solves, each scenario handed to whichever block is free.

A scenario's first solves (its model's build, its wait-and-see solve, its evaluation at
the EV plan) took 1.5 to 6 s of CPU at the default size, and which ones take long is
not known beforehand. Handed out in fixed halves, one of two workers carried 5.7% more
than half of them at 100 sampled scenarios: 172.6 of 176.0 s against 163.3 s for an
even split (2026-12-04, ``benchmarks/RESULTS.md``). Here each block takes its own
scenarios one at a time and, when it has none left, the last one not started of the
block with most left, which then releases it: the blocks end within about one
scenario's solves of each other. Each scenario stays with the block that solved it (its
live HiGHS instance, :mod:`optimizer.analysis.decompose_blocks`) for the L-shaped rounds.

While this process solves the mean-value problem, whose optimal basis the wait-and-see
solves start from (:mod:`optimizer.analysis.decompose_setup`), each block builds its next
scenarios, one call each, until the start is known.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from typing import Any

import numpy as np

from optimizer.analysis.decompose_blocks import BasisArrays, ScenarioBlocks
from optimizer.analysis.decompose_cuts import Cut, TimeLimit

__all__ = ["FirstSolves"]


class FirstSolves:
    """Hand each scenario's first solves to whichever block is free (module docstring).

    Made as soon as the blocks hold the run's universe: on actors, one thread per
    block starts building that block's scenarios in order. :meth:`run` gives the start
    and the point and waits for every scenario; :meth:`close` stops the threads (call
    it in a ``finally``).

    Parameters
    ----------
    blocks : ScenarioBlocks
        The run's blocks with their ``parts`` (the run positions each was given).
    datasets : sequence of Dataset
        The run's scenarios (a block that takes another's scenario gets its dataset).
    limit : TimeLimit, optional
        The run's time limit: once it has passed no scenario is started and
        :meth:`run` raises :class:`~optimizer.analysis.decompose_cuts.HedgeTimeLimitError`
        (the calls under way, one scenario each, end first).
    """

    def __init__(
        self, blocks: ScenarioBlocks, datasets: Sequence[Any], limit: TimeLimit | None = None
    ) -> None:
        self.blocks, self.datasets = blocks, datasets
        self.limit = limit or TimeLimit()
        self.timed_out = False
        blocks.blocks  # noqa: B018 - wait for the actors here, not in the threads
        self.queues = [deque(int(i) for i in part) for part in blocks.parts]
        self.lock = threading.Lock()
        self.go = threading.Event()
        self.stop = False
        self.start: BasisArrays | None = None
        self.point: np.ndarray | None = None
        self.ws: dict[int, Cut] = {}
        self.ev: dict[int, Cut] = {}
        #: per block: the CPU seconds of its solves, the positions taken from it
        self.cpu = [0.0] * len(self.queues)
        self.taken: list[list[int]] = [[] for _ in self.queues]
        self.errors: list[BaseException] = []
        self.threads = []
        if blocks.remote:
            for b in range(len(self.queues)):
                t = threading.Thread(target=self._work, args=(b,), daemon=True)
                t.start()
                self.threads.append(t)

    def _prebuild(self, b: int) -> None:
        """Build block ``b``'s next scenarios, one call each, until the start is known."""
        done = 0
        while not self.go.is_set():
            with self.lock:
                if self.stop or done >= len(self.queues[b]):
                    return
                pos = self.queues[b][done]
            self.blocks.one(b, "build", [pos])
            done += 1

    def _take(self, b: int) -> tuple[int, int] | None:
        """Return block ``b``'s next ``(position, block it was given to)``; None when done."""
        with self.lock:
            if self.stop:
                return None
            if self.limit.passed():
                self.timed_out = True
                return None
            if self.queues[b]:
                return self.queues[b].popleft(), b
            other = max(range(len(self.queues)), key=lambda j: len(self.queues[j]))
            if not self.queues[other]:
                return None
            return self.queues[other].pop(), other

    def _work(self, b: int) -> None:
        """Block ``b``'s loop: build until the start is known, then solve until none are left."""
        try:
            self._prebuild(b)
            self.go.wait()
            while (got := self._take(b)) is not None:
                pos, owner = got
                extra = None if owner == b else {pos: self.datasets[pos]}
                ws, ev = self.blocks.one(b, "first_solves", [pos], self.start, self.point, extra)
                with self.lock:
                    self.ws.update((c.scenario, c) for c in ws)
                    self.ev.update((c.scenario, c) for c in ev)
                    self.cpu[b] += float(sum(c.solve_s for c in ws + ev))
                    if owner != b:
                        self.taken[owner].append(pos)
        except BaseException as e:  # handed to run(), which raises it
            with self.lock:
                self.errors.append(e)
                self.stop = True

    def run(
        self, start: BasisArrays | None, point: np.ndarray | None
    ) -> tuple[list[Cut], list[Cut]]:
        """Solve every scenario alone from ``start``, then at ``point``; wait for all.

        Parameters
        ----------
        start : BasisArrays or None
            The basis the wait-and-see solves start from (None: each block chains from
            its previous solve).
        point : ndarray or None
            The first stage to evaluate each scenario at after its wait-and-see solve,
            shape (n_first,); None for none.

        Returns
        -------
        (list of Cut, list of Cut)
            The wait-and-see cuts and the cuts at ``point`` (empty without one), in run
            order. The blocks' ``solve_total_s`` and ``busy_total_s`` gain the solves'
            CPU and the busiest block's.

        Raises
        ------
        HedgeTimeLimitError
            When the time limit passed before every scenario was solved.
        Exception
            The first error a block's call raised.
        """
        self.start, self.point = start, point
        self.go.set()
        if not self.threads:
            self._work(0)
        for t in self.threads:
            t.join()
        if self.errors:
            raise self.errors[0]
        n = len(self.datasets)
        done = len(self.ev) if point is not None else len(self.ws)
        if self.timed_out and done < n:
            phase = "the wait-and-see solves"
            if point is not None:
                phase += " and the EV plan's evaluation"
            raise self.limit.error(phase, done, n)
        for b, gone in enumerate(self.taken):
            if gone:
                self.blocks.one(b, "release", gone)
        self.blocks.solve_total_s += float(sum(self.cpu))
        self.blocks.busy_total_s += float(max(self.cpu, default=0.0))
        ev = [self.ev[i] for i in range(n)] if point is not None else []
        return [self.ws[i] for i in range(n)], ev

    def close(self) -> None:
        """Stop the threads (after :meth:`run`, or when the run failed before it)."""
        with self.lock:
            self.stop = True
        self.go.set()
        for t in self.threads:
            t.join()
