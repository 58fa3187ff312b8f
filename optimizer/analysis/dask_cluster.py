"""Dask for the batch: a locked-down local cluster, a secured client, and a bounded wait.

Local cluster
-------------
``capacity batch`` starts its own cluster of worker processes on this machine. Anyone
who can reach a Dask scheduler can run code in its workers, so the local cluster

* speaks TLS with a temporary certificate and key made for this run
  (``distributed.security.Security.temporary()``, which needs ``cryptography``): a
  process of another user (or any other process) without that in-memory certificate
  cannot join, submit work or read results. ``security="auto"`` (the default) uses TLS
  when ``cryptography`` is installed (it is a dependency of this package) and otherwise
  says so on stderr and runs on plain TCP; ``"tls"`` requires it (``--secure``),
  ``"none"`` turns it off (``--insecure``).
* serves no HTTP routes: Dask opens an HTTP listener on every scheduler and worker
  even with the dashboard off (by default on port 8787, with the Prometheus metrics,
  JSON state and a proxy); here it is bound to a random loopback port and every request
  gets 404.

External scheduler
------------------
``--scheduler ADDRESS`` connects to an existing cluster
(:mod:`optimizer.analysis.dask_remote`: the address, the TLS files, the connection).

Bounded wait
------------
:func:`wait_each` replaces ``as_completed``: it polls the futures, and stops with
:class:`ClusterLost` when the client is closed (the scheduler died), when the client
has been reconnecting for longer than ``reconnect_timeout_s``, or when no worker has
been connected for ``worker_timeout_s``. Each wait is announced on stderr, once, with
its deadline. The batch then marks every unfinished case failed and exits 1; a re-run
redoes exactly those.

A client that is *reconnecting* (``client.status == "connecting"``) has not lost its
scheduler: Dask drops and re-opens the client's connection when its event loop was
starved for a while (a loaded machine). The reconnect cancels every future the client
held (reason ``scheduler-connection-lost``); the wait then hands each such future to
``resubmit`` and waits for the new one, so a slow machine costs time, not cases. The
local cluster also gives its connections a longer kernel timeout
(``distributed.comm.timeouts.tcp``, :data:`LOCAL_TCP_TIMEOUT`), which makes such drops
rarer, and its event loop reports the tracebacks of Dask's own connection teardown
(``KeyError: 'Client-...'`` from ``Scheduler.add_client`` after a reconnect) at debug
level instead of on the terminal; its other errors are still printed.

Client statuses (``distributed.Client.status``): ``newly-created`` and ``connecting``
(transient: waited for), ``running``, and ``closing``/``closed``/``failed`` (gone:
:class:`ClusterLost`).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from capacity.limits import check_parallel
from optimizer.analysis.dask_remote import TlsFiles, connect

SecurityMode = Literal["auto", "tls", "none"]

_log = logging.getLogger(__name__)

NO_WORKER_TIMEOUT_S = 120.0
"""Default wait, in seconds, for a worker to (re)connect before unfinished cases fail."""

POLL_S = 1.0
"""How often, in seconds, the wait checks the scheduler and the workers."""

RECONNECT_TIMEOUT_S = 120.0
"""Default wait, in seconds, for a reconnecting client before unfinished cases fail."""

MAX_RESUBMITS = 20
"""Rounds of resubmission (one per reconnect) a single wait accepts before giving up."""

LOCAL_TCP_TIMEOUT = "300s"
"""Kernel timeout of the local cluster's connections (``distributed.comm.timeouts.tcp``).

Dask's default (30 s) closes a connection whose peer has not read for 30 s; a
starved event loop on a loaded machine is such a peer. A dead local process closes
its sockets at once, so the longer timeout does not delay noticing one.
"""

#: Client statuses that are on the way to "running" (waited for, with a bound).
TRANSIENT_STATUSES = frozenset({"connecting", "newly-created"})

#: Reasons of a cancelled future that mean "the client's connection was re-opened".
RECONNECT_REASONS = frozenset({"scheduler-connection-lost", "scheduler-restart"})

_CLUSTER_START_LOCK = threading.Lock()
"""Serialises the construction of local clusters within one process.

Two threads starting clusters at once (two batches from one notebook, the app and a
script) both import Dask's dashboard modules, and a concurrent first import was seen
to fail (``module 'distributed.dashboard' has no attribute 'scheduler'``). Held only
while ``LocalCluster`` starts; running clusters do not hold it.
"""


class _SharedWindow:
    """A process-global setting applied while at least one run needs it.

    ``dask.config.set`` and logger levels belong to the process, so two overlapping
    runs (threads) that each set and restore them would leave the second run with the
    first's restored defaults, or leave the setting on after both ended. Here the first
    run to enter applies the setting and the last to leave undoes it.

    Parameters
    ----------
    apply : callable
        Applies the setting; returns the callable that undoes it.
    """

    def __init__(self, apply: Callable[[], Callable[[], None]]) -> None:
        self._apply = apply
        self._lock = threading.Lock()
        self._depth = 0
        self._undo: Callable[[], None] | None = None

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                self._undo = self._apply()
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0 and self._undo is not None:
                    self._undo()
                    self._undo = None


WORKER_PRELOAD = "optimizer.analysis.dask_worker_preload"
"""Module every local-cluster worker preloads (it ignores SIGINT in the worker)."""

#: Dask configuration of the local cluster (set while any local cluster runs).
LOCAL_CLUSTER_CONFIG: dict[str, Any] = {
    "distributed.scheduler.allowed-failures": 0,
    "distributed.scheduler.worker-saturation": 1.0,
    "distributed.worker.daemon": False,
    "distributed.scheduler.http.routes": [],
    "distributed.worker.http.routes": [],
    "distributed.comm.timeouts.tcp": LOCAL_TCP_TIMEOUT,
}


class ClusterLost(RuntimeError):
    """The scheduler is gone, or no worker came back in time; ``str()`` says which."""


@dataclass(frozen=True)
class ClusterOptions:
    """Where and how the batch runs on Dask.

    Parameters
    ----------
    workers : int
        Worker processes of the local cluster (one thread each).
    scheduler : str, optional
        Address of an existing scheduler (``tcp://`` or ``tls://host:port``); None
        starts a local cluster.
    security : {"auto", "tls", "none"}
        TLS of the local cluster (see the module docstring).
    tls : TlsFiles, optional
        Client TLS files for ``scheduler`` (default: the Dask configuration).
    worker_timeout_s : float
        How long to wait, in seconds, while no worker is connected.
    poll_s : float
        How often, in seconds, the wait checks the scheduler and the workers.
    reconnect_timeout_s : float
        How long to wait, in seconds, for a client that is reconnecting to its
        scheduler (``client.status == "connecting"``) before the unfinished cases
        fail; also the local cluster's client connection timeout.
    """

    workers: int = 2
    scheduler: str | None = None
    security: SecurityMode = "auto"
    tls: TlsFiles | None = None
    worker_timeout_s: float = NO_WORKER_TIMEOUT_S
    poll_s: float = POLL_S
    reconnect_timeout_s: float = RECONNECT_TIMEOUT_S


def local_security(mode: SecurityMode) -> Any:
    """Return the ``Security`` of a local cluster (None for plain TCP).

    Raises
    ------
    RuntimeError
        For ``mode="tls"`` without the ``cryptography`` package.
    """
    if mode == "none":
        return None
    try:
        import cryptography  # noqa: F401 - needed by Security.temporary()
    except ImportError:
        if mode == "tls":
            raise RuntimeError(
                "--secure needs the 'cryptography' package for a temporary TLS certificate: "
                "pip install cryptography"
            ) from None
        print(
            "warning: 'cryptography' is not installed: the local Dask cluster runs without "
            "TLS, so other local processes could connect to it (pip install cryptography)",
            file=sys.stderr,
        )
        return None
    from distributed.security import Security

    return Security.temporary()


@contextlib.contextmanager
def open_client(options: ClusterOptions) -> Iterator[Any]:
    """Yield a ``distributed.Client``: to ``options.scheduler``, or to a new local cluster.

    Raises
    ------
    OSError, TimeoutError
        When the scheduler cannot be reached (or lacks TLS files: :func:`connect`).
    ValueError
        For a ``scheduler`` that is not an address, or local ``workers`` outside 1 to
        :data:`capacity.limits.MAX_PARALLEL`.
    RuntimeError
        For ``security="tls"`` without ``cryptography``.
    """
    from distributed import Client, LocalCluster

    if options.scheduler:
        with _quiet_dask_logs(), connect(options.scheduler, options.tls) as client:
            _quiet_teardown_tracebacks(client)
            yield client
        return
    sec = local_security(options.security)
    workers = check_parallel(options.workers, "workers")  # -w 1000: a thousand processes
    with _local_cluster_config():
        with _CLUSTER_START_LOCK, _sigint_blocked():
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",
                worker_dashboard_address="127.0.0.1:0",
                security=sec,
                # The workers log only critical messages: a task's error reaches the
                # batch through its future (and the case's manifest entry), while a TLS
                # connection torn down by Ctrl-C or by the end of the run made workers
                # print SSL tracebacks on a loaded machine.
                silence_logs=logging.CRITICAL,
                # each worker process ignores Ctrl-C: this process handles it and closes them
                preload=[WORKER_PRELOAD],
            )
        try:
            # timeout: how long Dask itself keeps re-opening a dropped connection
            with Client(cluster, security=sec, timeout=options.reconnect_timeout_s) as client:
                _quiet_teardown_tracebacks(client)
                yield client
        except KeyboardInterrupt:
            # Ctrl-C: the tasks cancelled by the shutdown are expected, no log tracebacks
            logging.getLogger("distributed").setLevel(logging.CRITICAL)
            raise
        finally:
            cluster.close()


def _set_local_cluster_config() -> Callable[[], None]:
    """Set :data:`LOCAL_CLUSTER_CONFIG`; return the undo."""
    import dask

    ctx = dask.config.set(LOCAL_CLUSTER_CONFIG)
    return lambda: ctx.__exit__(None, None, None)


_local_cluster_config = _SharedWindow(_set_local_cluster_config)
"""Context manager: the local cluster's configuration while any local cluster runs."""


@contextlib.contextmanager
def _sigint_blocked() -> Iterator[None]:
    """Block SIGINT while the local cluster starts, so its processes never see Ctrl-C.

    A blocked signal mask is inherited by the threads and processes started meanwhile
    (Dask's event loop, the worker processes) and kept across ``exec``: Ctrl-C then
    reaches only the batch process, which stops the cluster and says how to resume,
    instead of every worker printing a KeyboardInterrupt traceback. A Ctrl-C typed
    during the start stays pending and is delivered when the block is lifted.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _silence_client_logs() -> Callable[[], None]:
    """Silence the client's own Dask logs; return the undo.

    The batch reports a lost scheduler itself, in one line per unfinished case.
    """
    logs = [logging.getLogger(n) for n in ("distributed", "distributed.client")]
    levels = [log.level for log in logs]
    for log in logs:  # Dask gives the client logger its own level and handler
        log.setLevel(logging.CRITICAL)

    def undo() -> None:
        for log, level in zip(logs, levels, strict=True):
            log.setLevel(level)

    return undo


_quiet_dask_logs = _SharedWindow(_silence_client_logs)
"""Context manager: the client's Dask logs silenced while any external run needs it."""


def _is_teardown_noise(context: Mapping[str, Any]) -> bool:
    """Return True for an unretrieved error of Dask's own connection handling.

    ``Server._handle_comm`` (one task per connection) re-raises what a handler raised
    once the connection is closed; after a client reconnect, ``Scheduler.add_client``
    of the old connection fails with ``KeyError: 'Client-...'`` (its entry was taken
    by the new connection), and a torn-down connection raises ``OSError``. Nobody
    awaits that task, so asyncio would print "Task exception was never retrieved"
    with the traceback. Nothing else counts as noise.
    """
    exc = context.get("exception")
    task = context.get("future")
    get_coro = getattr(task, "get_coro", None)
    coro = get_coro() if callable(get_coro) else None
    name = str(getattr(coro, "__qualname__", ""))
    if not name.endswith("._handle_comm"):
        return False
    if isinstance(exc, KeyError):
        return bool(exc.args) and str(exc.args[0]).startswith("Client-")
    return isinstance(exc, OSError)


def _quiet_teardown_tracebacks(client: Any) -> None:
    """Log Dask's connection-teardown errors on the client's loop at debug level only.

    The loop (shared with the local cluster's scheduler) gets an asyncio exception
    handler: :func:`_is_teardown_noise` errors go to this module's logger at debug
    level, everything else to asyncio's default handler (printed as before).
    """
    loop = getattr(client.loop, "asyncio_loop", None)
    if loop is None:
        return

    def handler(lp: Any, context: dict[str, Any]) -> None:
        if _is_teardown_noise(context):
            exc = context.get("exception")
            _log.debug("Dask connection teardown: %s", context.get("message"), exc_info=exc)
            return
        lp.default_exception_handler(context)

    loop.set_exception_handler(handler)


def _n_workers(client: Any) -> int:
    """Return how many workers the scheduler has (its total, not the cached worker list).

    The client refreshes its cached ``scheduler_info()`` every few seconds without the
    per-worker entries (only the totals); on a loaded machine that refresh can land
    just after this call's own, so ``len(info["workers"])`` may read 0 while workers
    are connected. ``n_workers`` is in both.
    """
    info = client.scheduler_info()
    total = info.get("n_workers")
    if isinstance(total, int):
        return total
    return len(info.get("workers") or {})


def _cancel_reason(fut: Any) -> str | None:
    """Return why Dask cancelled a future (``FutureCancelledError.reason``); None if not."""
    if not fut.cancelled():
        return None
    exc = getattr(getattr(fut, "_state", None), "exception", None)
    return str(getattr(exc, "reason", "unknown"))


def wait_each(
    client: Any,
    futures: Sequence[Any],
    on_done: Callable[[Any], None],
    options: ClusterOptions | None = None,
    resubmit: Callable[[Any], Any] | None = None,
) -> None:
    """Call ``on_done(future)`` for each future as it finishes, with bounded waits.

    Parameters
    ----------
    client : distributed.Client
    futures : sequence of Future
    on_done : callable
        Called in this thread once per finished (or errored) future, in the order
        of ``futures`` among those that finish in the same poll.
    options : ClusterOptions, optional
        ``worker_timeout_s`` (how long to wait while no worker is connected),
        ``reconnect_timeout_s`` (how long to wait while the client reconnects) and
        ``poll_s`` (polling interval), all in seconds.
    resubmit : callable, optional
        ``resubmit(future) -> new future``: called, once the client runs again, for
        each future that a reconnect of the client cancelled (see the module
        docstring); ``on_done`` then gets the new future. None: such futures go to
        ``on_done`` as they are (cancelled).

    Raises
    ------
    ClusterLost
        When the client is closed (the scheduler is gone), reconnects for longer than
        ``reconnect_timeout_s`` or more than :data:`MAX_RESUBMITS` times, or no
        worker is connected for ``worker_timeout_s``; futures not yet passed to
        ``on_done`` are unfinished.
    """
    watch = _Watch(client, options or ClusterOptions())
    pending = list(futures)
    rounds = 0
    while pending:
        done = watch.finished(pending)
        again = []
        for fut in done:
            if resubmit is not None and _cancel_reason(fut) in RECONNECT_REASONS:
                again.append(fut)
            else:
                on_done(fut)
        pending = [f for f in pending if f not in done]
        if again:
            rounds += 1
            if rounds > MAX_RESUBMITS:
                raise ClusterLost(
                    f"lost the Dask scheduler (the client reconnected {MAX_RESUBMITS} times)"
                )
            watch.until_running()
            print(
                "warning: the Dask client re-opened its connection to the scheduler "
                f"(a loaded machine); resubmitting {len(again)} unfinished task(s)",
                file=sys.stderr,
            )
            assert resubmit is not None
            pending += [resubmit(f) for f in again]
        if pending:
            watch.check()


class _Watch:
    """The bounded waits of :func:`wait_each`: a reconnecting client, a cluster without workers.

    Each wait starts with one warning line on stderr (with its bound) and ends when
    the client runs again (workers are back); :meth:`check` raises
    :class:`ClusterLost` when the bound passes or the client is closed.
    """

    def __init__(self, client: Any, options: ClusterOptions) -> None:
        self.client = client
        self.options = options
        self.connecting_since: float | None = None
        self.no_worker_since: float | None = None

    def finished(self, pending: Sequence[Any]) -> list[Any]:
        """Wait up to ``poll_s`` for a future to finish; return the finished ones, in order.

        A future cancelled by a reconnect counts as finished (``distributed.wait``
        raises for it, this does not).
        """
        from distributed import wait

        try:
            wait(list(pending), timeout=self.options.poll_s, return_when="FIRST_COMPLETED")
        except TimeoutError:
            pass
        except Exception as exc:  # noqa: BLE001 - cancelled futures, a closed client ...
            if not any(f.cancelled() for f in pending) and self.client.status == "running":
                msg = f"lost the Dask scheduler ({type(exc).__name__}: {exc})"
                raise ClusterLost(msg) from exc
        return [f for f in pending if f.done()]

    def until_running(self) -> None:
        """Return once the client runs (connected again); :class:`ClusterLost` on the bounds."""
        while not self.check():
            time.sleep(self.options.poll_s)

    def check(self) -> bool:
        """Raise :class:`ClusterLost` when a bound passed; return True when the client runs."""
        status = self.client.status
        if status in TRANSIENT_STATUSES:
            bound = self.options.reconnect_timeout_s
            self.connecting_since = _waited(
                self.connecting_since,
                bound,
                f"warning: the Dask client is reconnecting to its scheduler; waiting up to "
                f"{bound:g} s before the unfinished cases are marked failed",
                f"lost the Dask scheduler (client still {status} after {bound:g} s)",
            )
            return False
        if status != "running":
            raise ClusterLost(f"lost the Dask scheduler (client {status})")
        self.connecting_since = None
        try:
            n = _n_workers(self.client)
        except Exception as exc:  # noqa: BLE001 - scheduler unreachable
            if self.client.status in TRANSIENT_STATUSES:
                return False  # it started reconnecting meanwhile: the next check waits
            raise ClusterLost(f"lost the Dask scheduler ({type(exc).__name__}: {exc})") from exc
        if n:
            self.no_worker_since = None
            return True
        bound = self.options.worker_timeout_s
        self.no_worker_since = _waited(
            self.no_worker_since,
            bound,
            f"warning: no Dask worker is connected; waiting up to {bound:g} s for one "
            "before the unfinished cases are marked failed",
            f"no Dask worker connected for {bound:g} s",
        )
        return True


def _waited(since: float | None, bound_s: float, start: str, lost: str) -> float:
    """One step of a bounded wait: announce its start, raise ``ClusterLost(lost)`` past it.

    Returns the time the wait started (``time.monotonic()``).
    """
    now = time.monotonic()
    if since is None:
        print(start, file=sys.stderr)
        return now
    if now - since > bound_s:
        raise ClusterLost(lost)
    return since
