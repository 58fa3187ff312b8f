"""Solving a batch's cases on Dask: submit, bounded wait, one lone retry of a lost case.

By default the cases go to a ``distributed.LocalCluster`` of ``N`` single-threaded
worker processes on this machine; with ``scheduler=ADDRESS`` the same tasks go to an
existing cluster (:func:`optimizer.analysis.dask_cluster.open_client`). Each finished
case is recorded at once (:class:`optimizer.analysis.batch_record.BatchRecorder`).

A case that fails (solver error, exception, a worker killed:
``KilledWorker``/``CommClosedError``) is recorded with ``state: "failed"`` and its
error, and the batch goes on. The local cluster is started with
``distributed.scheduler.allowed-failures = 0``: a task whose worker dies is not
retried by the scheduler. A dying worker also fails the tasks queued on it, so the
client retries each lost case (``KilledWorker``, ``CommClosedError``) once, alone,
after the main pass; only a case that loses its worker twice is marked failed
(``retried: true`` in its entry). Start an external scheduler with
``DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=0`` for the same behaviour.
"""

from __future__ import annotations

import dataclasses
import itertools
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from optimizer.analysis.batch_case import CaseResult, run_case
from optimizer.analysis.batch_progress import BatchProgress
from optimizer.analysis.batch_record import BatchRecorder
from optimizer.analysis.dask_cluster import ClusterLost, ClusterOptions, open_client, wait_each
from optimizer.analysis.sweep_cases import SweepCase

__all__ = ["on_cluster", "solve_on_dask"]

#: Dask errors that mean "the worker running the task died", not "the task failed".
_LOST_WORKER_ERRORS = frozenset({"KilledWorker", "CommClosedError", "FutureCancelledError"})


def on_cluster(
    cluster: ClusterOptions | None, workers: int, scheduler: str | None
) -> ClusterOptions:
    """Return ``cluster`` (default options) with the batch's workers and scheduler."""
    return dataclasses.replace(cluster or ClusterOptions(), workers=workers, scheduler=scheduler)


def _outcome(fut: Any, case: SweepCase, key: str) -> tuple[CaseResult, bool]:
    """Return the case result, and True when the task was lost with its worker."""
    try:
        return fut.result(), False
    except Exception as exc:  # noqa: BLE001 - KilledWorker, CommClosedError ...
        lost = type(exc).__name__ in _LOST_WORKER_ERRORS
        err = f"{type(exc).__name__}: {exc}"
        return CaseResult(case.name, key, "failed", None, None, error=err), lost
    finally:
        fut.release()


class _DaskRun:
    """The cases of one batch on one client: submitted, recorded as they finish, lost kept."""

    def __init__(
        self,
        client: Any,
        run: BatchRecorder,
        task: tuple[Any, Any, bool],
        bar: BatchProgress,
    ) -> None:
        # The base dataset travels with each task (not scattered): scattered data
        # dies with the last worker holding it, and a restarted worker would lack it.
        self.client, self.run, self.task, self.bar = client, run, task, bar
        self.tag = uuid.uuid4().hex[:8]
        self.serial = itertools.count()
        self.futures: dict[Any, SweepCase] = {}
        self.finished: set[str] = set()
        self.lost: list[tuple[SweepCase, CaseResult]] = []

    def submit(self, c: SweepCase, attempt: int) -> Any:
        """Submit one case (``task`` is base dataset, options, reuse)."""
        base, options, reuse = self.task
        fut = self.client.submit(
            run_case,
            base,
            c,
            options,
            reuse,
            self.run.keys[c.name],
            key=f"case-{c.name}-{self.tag}-{attempt}-{next(self.serial)}",
            pure=False,
            retries=0,
        )
        self.futures[fut] = c
        return fut

    def resubmit(self, old: Any) -> Any:
        """Submit a case again whose future a reconnect of the client cancelled."""
        return self.submit(self.futures.pop(old), 0)

    def on_done(self, case: SweepCase, first: CaseResult | None) -> Callable[[Any], None]:
        """Return the callback of a finished task (``first``: its lost first attempt)."""

        def done(fut: Any) -> None:
            cr, was_lost = _outcome(fut, case, self.run.keys[case.name])
            if was_lost and first is None:
                self.lost.append((case, cr))  # retried alone after the main pass
                return
            if was_lost and first is not None:
                cr.error = f"{cr.error} (lost its worker twice; first: {first.error})"
            self.finished.add(case.name)
            self.run.record(case, cr, self.bar, retried=first is not None)

        return done

    def first_done(self, fut: Any) -> None:
        """Handle a finished task of the main pass."""
        self.on_done(self.futures[fut], None)(fut)

    def fail_unfinished(self, todo: Sequence[SweepCase], exc: ClusterLost) -> None:
        """Record every case not finished when the cluster was lost as failed."""
        for case in todo:
            if case.name not in self.finished:
                err = f"{exc}; not finished (re-run the command to redo it)"
                key = self.run.keys[case.name]
                cr = CaseResult(case.name, key, "failed", None, None, error=err)
                self.run.record(case, cr, self.bar, retried=False)


def solve_on_dask(
    run: BatchRecorder,
    base: Any,
    todo: Sequence[SweepCase],
    options: Any,
    reuse: bool,
    cluster: ClusterOptions,
    progress: bool,
) -> None:
    """Solve the cases on a Dask cluster, recording each as it finishes.

    The wait is bounded (:func:`optimizer.analysis.dask_cluster.wait_each`): a client that
    reconnects to its scheduler is waited for and the cases the reconnect cancelled
    are submitted again; when the scheduler is gone, or no worker comes back in time,
    every unfinished case is recorded failed at once, so the batch exits 1 and a
    re-run redoes exactly those cases.
    """
    with open_client(cluster) as client, BatchProgress(len(todo), progress) as bar:
        dr = _DaskRun(client, run, (base, options, reuse), bar)
        first_pass = [dr.submit(c, 0) for c in todo]
        try:
            wait_each(client, first_pass, dr.first_done, cluster, dr.resubmit)
            # A dying worker also fails the tasks queued on it; retry each lost case
            # once, alone, so only a case that kills its worker twice is marked failed.
            for case, first in dr.lost:
                wait_each(
                    client, [dr.submit(case, 1)], dr.on_done(case, first), cluster, dr.resubmit
                )
        except ClusterLost as exc:
            dr.fail_unfinished(todo, exc)
