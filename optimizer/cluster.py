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
``--scheduler ADDRESS`` connects to an existing cluster. Its security comes from the
usual Dask configuration (``distributed.comm.tls.*`` in a Dask config file or the
``DASK_DISTRIBUTED__COMM__TLS__...`` environment variables) or from
:class:`TlsFiles` (``--tls-ca-file``, ``--tls-cert``, ``--tls-key``).

Bounded wait
------------
:func:`wait_each` replaces ``as_completed``: it polls the futures, and stops with
:class:`ClusterLost` when the client is no longer connected (the scheduler died) or
when no worker has been connected for ``worker_timeout_s`` (announced on stderr as
soon as the last worker is gone, with the deadline). The batch then marks every
unfinished case failed and exits 1; a re-run redoes exactly those.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

SecurityMode = Literal["auto", "tls", "none"]

NO_WORKER_TIMEOUT_S = 120.0
"""Default wait, in seconds, for a worker to (re)connect before unfinished cases fail."""

POLL_S = 1.0
"""How often, in seconds, the wait checks the scheduler and the workers."""

#: Dask configuration of the local cluster (set while it runs).
LOCAL_CLUSTER_CONFIG: dict[str, Any] = {
    "distributed.scheduler.allowed-failures": 0,
    "distributed.scheduler.worker-saturation": 1.0,
    "distributed.worker.daemon": False,
    "distributed.scheduler.http.routes": [],
    "distributed.worker.http.routes": [],
}


class ClusterLost(RuntimeError):
    """The scheduler is gone, or no worker came back in time; ``str()`` says which."""


@dataclass(frozen=True)
class TlsFiles:
    """TLS files of a client of an external, secured Dask scheduler.

    Parameters
    ----------
    ca_file : str
        Certificate authority that signed the scheduler's certificate.
    cert, key : str, optional
        This client's certificate and private key (the key may be inside ``cert``).
    """

    ca_file: str
    cert: str | None = None
    key: str | None = None

    def security(self) -> Any:
        """Return the ``distributed.security.Security`` of these files (TLS required)."""
        from distributed.security import Security

        return Security(
            tls_ca_file=self.ca_file,
            tls_client_cert=self.cert,
            tls_client_key=self.key,
            require_encryption=True,
        )


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
    """

    workers: int = 2
    scheduler: str | None = None
    security: SecurityMode = "auto"
    tls: TlsFiles | None = None
    worker_timeout_s: float = NO_WORKER_TIMEOUT_S
    poll_s: float = POLL_S


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
        When the scheduler cannot be reached.
    RuntimeError
        For ``security="tls"`` without ``cryptography``.
    """
    import dask
    from distributed import Client, LocalCluster

    if options.scheduler:
        sec = options.tls.security() if options.tls is not None else None
        with (
            _quiet_dask_logs(),
            Client(options.scheduler, timeout="20s", security=sec) as client,
        ):
            yield client
        return
    sec = local_security(options.security)
    workers = options.workers
    with dask.config.set(LOCAL_CLUSTER_CONFIG):
        with _sigint_blocked():
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
            )
        try:
            with Client(cluster, security=sec) as client:
                yield client
        except KeyboardInterrupt:
            # Ctrl-C: the tasks cancelled by the shutdown are expected, no log tracebacks
            logging.getLogger("distributed").setLevel(logging.CRITICAL)
            raise
        finally:
            cluster.close()


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


@contextlib.contextmanager
def _quiet_dask_logs() -> Iterator[None]:
    """Silence the client's own Dask logs (tracebacks of a lost connection) for a while.

    The batch reports a lost scheduler itself, in one line per unfinished case.
    """
    logs = [logging.getLogger(n) for n in ("distributed", "distributed.client")]
    levels = [log.level for log in logs]
    for log in logs:  # Dask gives the client logger its own level and handler
        log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for log, level in zip(logs, levels, strict=True):
            log.setLevel(level)


def _n_workers(client: Any) -> int:
    info = client.scheduler_info() if client.status == "running" else {}
    return len(info.get("workers") or {})


def wait_each(
    client: Any,
    futures: Sequence[Any],
    on_done: Callable[[Any], None],
    options: ClusterOptions | None = None,
) -> None:
    """Call ``on_done(future)`` for each future as it finishes, with a bounded wait.

    Parameters
    ----------
    client : distributed.Client
    futures : sequence of Future
    on_done : callable
        Called in this thread once per finished (or errored) future.
    options : ClusterOptions, optional
        ``worker_timeout_s`` (how long to wait while no worker is connected) and
        ``poll_s`` (polling interval), in seconds.

    Raises
    ------
    ClusterLost
        When the client loses its scheduler, or no worker is connected for
        ``worker_timeout_s``; futures not yet passed to ``on_done`` are unfinished.
    """
    from distributed import wait

    opts = options or ClusterOptions()
    poll_s = opts.poll_s

    pending = set(futures)
    no_worker_since: float | None = None
    while pending:
        try:
            done, _ = wait(list(pending), timeout=poll_s, return_when="FIRST_COMPLETED")
        except TimeoutError:
            done = set()
        except Exception as exc:  # noqa: BLE001 - a closed client raises many kinds
            raise ClusterLost(f"lost the Dask scheduler ({type(exc).__name__}: {exc})") from exc
        for fut in [f for f in futures if f in done and f in pending]:
            pending.discard(fut)
            on_done(fut)
        if not pending:
            return
        no_worker_since = _check_cluster(client, no_worker_since, opts.worker_timeout_s)


def _check_cluster(client: Any, since: float | None, timeout_s: float) -> float | None:
    """Raise :class:`ClusterLost` when the scheduler is gone or workers stayed away too long.

    Returns the time the cluster has been without workers (None while it has some).
    """
    if client.status != "running":
        raise ClusterLost(f"lost the Dask scheduler (client {client.status})")
    try:
        n = _n_workers(client)
    except Exception as exc:  # noqa: BLE001 - scheduler unreachable
        raise ClusterLost(f"lost the Dask scheduler ({type(exc).__name__}: {exc})") from exc
    if n:
        return None
    now = time.monotonic()
    if since is None:
        print(
            f"warning: no Dask worker is connected; waiting up to {timeout_s:g} s for one "
            "before the unfinished cases are marked failed",
            file=sys.stderr,
        )
        return now
    if now - since > timeout_s:
        raise ClusterLost(f"no Dask worker connected for {timeout_s:g} s")
    return since
