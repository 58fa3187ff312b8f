"""Issue 16: the batch when its Dask scheduler dies, and the local cluster's security."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from optimizer.analysis.batch import run_batch
from optimizer.analysis.batch_folder import BATCH_MANIFEST

TINY = Path(__file__).resolve().parents[1] / "tests" / "data" / "tiny_valid"

# 12 Monte Carlo cases on the tiny dataset: enough work to still be running when the
# scheduler is killed after the first case is written
MANY = f"""
data: {TINY}
monte_carlo:
  base: neutral
  samples: 12
  seed: 3
  parameters:
    - name: demand
      override: {{op: scale, table: demand, column: demand_h100e}}
      distribution: {{kind: uniform, low: 0.5, high: 1.5}}
"""


def _popen(args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _stop(p: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait(timeout=20)


@pytest.fixture
def scheduler_and_worker(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    env = dict(os.environ)
    sfile = tmp_path / "scheduler.json"
    sched = _popen(
        [
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--dashboard-address",
            "127.0.0.1:0",
            "--scheduler-file",
            str(sfile),
        ],
        env,
    )
    procs = [sched]
    try:
        deadline = time.time() + 60
        while not sfile.exists() and time.time() < deadline:
            time.sleep(0.2)
        address = json.loads(sfile.read_text())["address"]
        procs.append(
            _popen(
                ["distributed.cli.dask_worker", address, "--nworkers", "1", "--nthreads", "1"],
                env,
            )
        )
        yield address, sched
    finally:
        for p in reversed(procs):
            _stop(p)


def _states(out: Path) -> dict[str, dict[str, object]]:
    try:
        return json.loads((out / BATCH_MANIFEST).read_text()).get("scenarios", {})
    except (OSError, ValueError):
        return {}


@pytest.mark.slow
@pytest.mark.usefixtures("wall_clock_alone")  # its worker processes: not beside them
def test_batch_exits_1_when_its_scheduler_dies_and_a_rerun_resumes(
    tmp_path: Path, scheduler_and_worker: tuple[str, subprocess.Popen[bytes]]
) -> None:
    address, sched = scheduler_and_worker
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(MANY)
    out = tmp_path / "out"
    batch = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from optimizer.cli.commands import main; main()",
            "batch",
            str(sweep),
        ]
        + ["--scheduler", address]
        + ["--out", str(out), "--worker-timeout", "30"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 180
        while time.time() < deadline and not any(
            e.get("state") == "done" for e in _states(out).values()
        ):
            time.sleep(0.2)
        _stop(sched)  # the scheduler dies mid-batch
        t0 = time.time()
        output, _ = batch.communicate(timeout=90)
        waited = time.time() - t0
    finally:
        if batch.poll() is None:
            _stop(batch)
    text = output.decode()
    assert batch.returncode == 1, text
    assert "Traceback" not in text
    assert waited < 60, f"the batch took {waited:.0f} s to notice the lost scheduler"
    states = _states(out)
    done = [n for n, e in states.items() if e["state"] == "done"]
    failed = [n for n, e in states.items() if e["state"] == "failed"]
    assert done and failed and len(done) + len(failed) == 12
    assert all("lost the Dask scheduler" in str(states[n]["error"]) for n in failed)
    # a re-run (on a local cluster) redoes exactly the unfinished cases
    again = run_batch(sweep, out, workers=1, progress=False)
    assert (again.n_skipped, again.n_done, again.n_failed) == (len(done), len(failed), 0)


def test_wait_each_gives_up_when_no_worker_connects() -> None:
    from distributed import Client, LocalCluster

    from optimizer.analysis.dask_cluster import ClusterLost, ClusterOptions, wait_each

    with (
        LocalCluster(n_workers=0, processes=False, dashboard_address="127.0.0.1:0") as cluster,
        Client(cluster) as client,
    ):
        fut = client.submit(sum, [1, 2])
        t0 = time.monotonic()
        with pytest.raises(ClusterLost, match="no Dask worker connected for 1 s"):
            opts = ClusterOptions(worker_timeout_s=1, poll_s=0.2)
            wait_each(client, [fut], lambda f: None, opts)
        assert time.monotonic() - t0 < 10


def test_local_cluster_speaks_tls_and_serves_no_http_routes() -> None:
    import urllib.error
    import urllib.request

    from optimizer.analysis.dask_cluster import ClusterOptions, open_client

    with open_client(ClusterOptions(workers=1, security="tls")) as client:
        assert client.scheduler.address.startswith("tls://127.0.0.1:")
        assert client.submit(sum, [1, 2]).result(timeout=60) == 3
        port = client.scheduler_info()["services"]["dashboard"]
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10)
        assert e.value.code == 404
        # a process without the temporary certificate cannot use the scheduler
        from distributed import Client

        plain = client.scheduler.address.replace("tls://", "tcp://")
        with pytest.raises((OSError, TimeoutError)):
            Client(plain, timeout="3s")
        with pytest.raises(TypeError, match="TLS expects a `ssl_context`"):
            Client(client.scheduler.address, timeout="3s")


def test_tls_options_need_a_scheduler(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from optimizer.cli.commands import app

    ca = tmp_path / "ca.pem"
    ca.write_text("not read: the option is refused first\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["batch", "x.yaml", "--tls-ca-file", str(ca)])
    assert res.exit_code == 2
    assert "need --scheduler" in res.output
