"""A slow machine costs time, never results: the batch's wait on Dask.

See optimizer.analysis.dask_cluster.

A client that is reconnecting to its scheduler (``status == "connecting"``) is waited
for, with a bound announced on stderr, and the futures the reconnect cancelled are
submitted again; only a client that is closed (or stays away past the bound) fails
the unfinished work. Dask's own teardown tracebacks never reach the terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from optimizer.analysis.dask_cluster import (
    ClusterLost,
    ClusterOptions,
    _is_teardown_noise,
    _quiet_teardown_tracebacks,
    _Watch,
    wait_each,
)

TINY = Path(__file__).resolve().parents[1] / "tests" / "data" / "tiny_valid"


def _slow_square(i: int, delay_s: float = 0.3) -> int:
    time.sleep(delay_s)
    return i * i


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """An in-process cluster: one worker thread, so tasks stay queued for a while."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0"
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c


class _ScriptedStatus:
    """A client whose ``status`` follows a script (then the real one); the rest is real."""

    def __init__(self, real: Any, script: list[str], then: str | None = None) -> None:
        self._real = real
        self._script = list(script)
        self._then = then
        self.reads = 0

    @property
    def status(self) -> str:
        self.reads += 1
        if self._script:
            return self._script.pop(0)
        return self._then if self._then is not None else str(self._real.status)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def _drop_connection(client: Any) -> None:
    """Close the client's report stream from its side: Dask then reconnects for real."""
    comm = client.scheduler_comm.comm
    client.loop.add_callback(comm.abort)


def test_a_real_reconnect_resubmits_the_cancelled_futures(
    client: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Drop the client's connection after the first result: Dask reconnects and cancels
    every pending future ('scheduler-connection-lost'). Before the fix the wait raised
    ClusterLost ('client connecting', or the FuturesCancelledError of distributed.wait)
    and every unfinished case failed; now each one is resubmitted and finishes."""
    which: dict[Any, int] = {}

    def submit(i: int) -> Any:
        fut = client.submit(_slow_square, i, pure=False)
        which[fut] = i
        return fut

    resubmitted: list[int] = []

    def resubmit(old: Any) -> Any:
        resubmitted.append(which[old])
        return submit(which.pop(old))

    got: dict[int, int] = {}

    def on_done(fut: Any) -> None:
        got[which[fut]] = fut.result()
        if len(got) == 1:
            _drop_connection(client)

    futures = [submit(i) for i in range(6)]
    wait_each(client, futures, on_done, ClusterOptions(poll_s=0.1), resubmit)
    assert got == {i: i * i for i in range(6)}
    assert resubmitted, "the connection drop did not cancel anything: no reconnect was tested"
    assert client.status == "running"
    err = capsys.readouterr().err
    assert "resubmitting" in err and "Traceback" not in err


def test_connecting_for_a_few_polls_is_waited_for(
    client: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Status 'connecting' for three polls, then 'running': every future finishes, and
    the wait is announced once, with its bound. Before the fix: ClusterLost at once."""
    futures = [client.submit(_slow_square, i, 0.4, pure=False) for i in range(4)]
    fake = _ScriptedStatus(client, ["running", "connecting", "connecting", "connecting"])
    got: list[int] = []
    opts = ClusterOptions(poll_s=0.05, reconnect_timeout_s=30)
    wait_each(fake, futures, lambda f: got.append(f.result()), opts)
    assert sorted(got) == [0, 1, 4, 9]
    assert fake.reads > 4  # the script was played to its end
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln]
    assert lines == [
        "warning: the Dask client is reconnecting to its scheduler; waiting up to 30 s "
        "before the unfinished cases are marked failed"
    ]


def test_a_closed_client_fails_the_unfinished_futures_at_once(client: Any) -> None:
    futures = [client.submit(_slow_square, i, 0.5, pure=False) for i in range(3)]
    fake = _ScriptedStatus(client, [], then="closed")
    done: list[Any] = []
    t0 = time.monotonic()
    with pytest.raises(ClusterLost, match=r"^lost the Dask scheduler \(client closed\)$"):
        wait_each(fake, futures, done.append, ClusterOptions(poll_s=0.05))
    assert time.monotonic() - t0 < 5
    assert len(done) < 3
    for f in futures:
        f.cancel()


def test_a_client_that_never_comes_back_fails_after_the_bound(client: Any) -> None:
    fut = client.submit(_slow_square, 1, 5.0, pure=False)
    fake = _ScriptedStatus(client, [], then="connecting")
    t0 = time.monotonic()
    with pytest.raises(ClusterLost, match=r"client still connecting after 0\.5 s"):
        wait_each(fake, [fut], lambda f: None, ClusterOptions(poll_s=0.05, reconnect_timeout_s=0.5))
    assert 0.5 <= time.monotonic() - t0 < 5
    fut.cancel()


def test_the_worker_count_is_the_schedulers_total_not_the_cached_list(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The client's periodic refresh caches scheduler_info() without per-worker entries;
    reading len(info['workers']) then said "no Dask worker is connected" with two."""

    class Stub:
        status = "running"

        def scheduler_info(self) -> dict[str, Any]:
            return {"n_workers": 2, "workers": {}}

    assert _Watch(Stub(), ClusterOptions()).check() is True
    assert capsys.readouterr().err == ""


class Server:
    """Named like Dask's ``distributed.core.Server`` (its per-connection task)."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    async def _handle_comm(self) -> None:
        raise self.exc


def _unretrieved(exc: BaseException) -> tuple[asyncio.AbstractEventLoop, dict[str, Any]]:
    """Return a loop and the context asyncio builds for an unretrieved task exception."""
    loop = asyncio.new_event_loop()
    task = loop.create_task(Server(exc)._handle_comm())
    with contextlib.suppress(BaseException):
        loop.run_until_complete(task)
    context = {"message": "Task exception was never retrieved", "exception": exc, "future": task}
    return loop, context


def test_dask_teardown_tracebacks_are_kept_off_the_terminal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The reported 'Task exception was never retrieved ... KeyError: Client-...' from
    Scheduler.add_client goes to debug; any other unretrieved error is still printed."""

    class Stub:
        def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
            self.loop = type("IOLoop", (), {"asyncio_loop": loop})()

    caplog.set_level(logging.DEBUG)
    noise_loop, noise = _unretrieved(KeyError("Client-2f1c0a"))
    assert _is_teardown_noise(noise)
    _quiet_teardown_tracebacks(Stub(noise_loop))
    noise_loop.call_exception_handler(noise)
    assert [r for r in caplog.records if r.name == "asyncio" and r.levelno >= logging.INFO] == []
    assert any("Dask connection teardown" in r.getMessage() for r in caplog.records)

    for exc in (KeyError("total"), ValueError("a real bug")):
        loop, real = _unretrieved(exc)
        assert not _is_teardown_noise(real)
        _quiet_teardown_tracebacks(Stub(loop))
        caplog.clear()
        loop.call_exception_handler(real)
        errors = [r for r in caplog.records if r.name == "asyncio" and r.levelno == logging.ERROR]
        assert len(errors) == 1 and "never retrieved" in errors[0].getMessage()
        loop.close()
    noise_loop.close()
    # not Dask's connection task: never treated as noise
    other = {"exception": KeyError("Client-1"), "future": None, "message": "x"}
    assert not _is_teardown_noise(other)


# 8 Monte Carlo cases on the tiny dataset: still running when the connection drops
MC_SWEEP = f"""
data: {TINY}
monte_carlo:
  base: neutral
  samples: 8
  seed: 5
  parameters:
    - name: demand
      override: {{op: scale, table: demand, column: demand_h100e}}
      distribution: {{kind: uniform, low: 0.6, high: 1.4}}
"""


@pytest.mark.slow
def test_a_batch_whose_client_reconnects_solves_every_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reported failure, end to end: the batch's client loses its connection after
    the first case (as under load) and reconnects. Before the fix every unfinished case
    failed "lost the Dask scheduler (client connecting)"; now each is solved, with the
    objective of a serial solve."""

    from capacity.dataset import load_dataset
    from optimizer.analysis import batch, batch_dask, batch_folder
    from optimizer.analysis.sweep_cases import cases_dataset, expand_sweep
    from optimizer.analysis.sweep_read import load_sweep
    from optimizer.plan.pipeline import solve

    clients: list[Any] = []
    real_open = batch_dask.open_client

    @contextlib.contextmanager
    def capturing(options: ClusterOptions) -> Iterator[Any]:
        with real_open(options) as c:
            clients.append(c)
            yield c

    monkeypatch.setattr(batch_dask, "open_client", capturing)
    dropped: list[str] = []

    def on_case(cr: Any) -> None:
        if not dropped:
            dropped.append(cr.name)
            _drop_connection(clients[0])

    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(MC_SWEEP)
    out = tmp_path / "out"
    r = batch.run_batch(sweep, out, workers=2, progress=False, on_case=on_case)
    assert dropped and (r.n_done, r.n_failed, r.n_skipped) == (8, 0, 0)
    spec = load_sweep(sweep)
    base = load_dataset(spec.data)
    man = batch_folder.read_batch_manifest(out)["scenarios"]
    for c in expand_sweep(spec, list(base.scenarios)):
        e = man[c.name]
        assert (e["state"], e["status"]) == ("done", "optimal"), (c.name, e.get("error"))
        want = solve(cases_dataset(base, c)).objective_usd
        assert e["objective_usd"] == pytest.approx(want, rel=1e-6)
    err = capsys.readouterr().err
    assert "resubmitting" in err  # the drop did cancel unfinished cases
    assert "Traceback" not in err and "never retrieved" not in err
