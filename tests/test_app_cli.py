"""``capacity app`` as a process: SIGTERM to the pid it started stops the Streamlit server."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _capacity_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("capacity")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("capacity")
    if found:
        return [found]
    return [sys.executable, "-c", "from optimizer.cli.commands import app; app()"]


def test_capacity_app_runs_the_checkouts_streamlit_script() -> None:
    from optimizer.cli.app import app_command

    cmd = app_command(8501, "localhost", True)
    assert cmd[1:4] == ["-m", "streamlit", "run"]
    assert Path(cmd[4]) == ROOT / "ui" / "app.py"


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_sigterm_to_capacity_app_closes_the_port(tmp_path: Path) -> None:
    port = _free_port()
    log = (tmp_path / "app.log").open("w")
    cmd = [*_capacity_cmd(), "app", "--port", str(port), "--address", "127.0.0.1"]
    proc = subprocess.Popen(
        [*cmd, "--data", str(TINY)], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/_stcore/health", timeout=1
                ) as r:
                    if r.read() == b"ok":
                        break
            except OSError:
                pass
            assert proc.poll() is None, (tmp_path / "app.log").read_text()
            assert time.monotonic() < deadline, "the app did not answer /_stcore/health"
            time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while _port_open(port) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _port_open(port), "the Streamlit server outlived the capacity app process"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    assert f"http://127.0.0.1:{port}" in (tmp_path / "app.log").read_text()
