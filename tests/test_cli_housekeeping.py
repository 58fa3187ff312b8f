"""Housekeeping: example output ignored by git, the benchmark's record kept, SIGTERM
stops a batch as Ctrl-C does, the app shows no Deploy button."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
import typer

from optimizer.cli.app import app_command
from optimizer.cli.bench import BENCH_OUT
from optimizer.cli.checks import Terminated, sigterm_as_interrupt
from optimizer.cli.commands import app

ROOT = Path(__file__).resolve().parents[1]


def _ignored() -> set[str]:
    lines = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    return {ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")}


def test_the_guide_example_output_folders_are_ignored_by_git() -> None:
    guide = (ROOT / "docs" / "guide" / "batch.md").read_text(encoding="utf-8")
    assert "--out batch_out" in guide
    assert "batch_out/" in _ignored()


def test_capacity_bench_writes_outside_the_tracked_results_by_default() -> None:
    bench = typer.main.get_command(app).commands["bench"]  # type: ignore[attr-defined]
    (out,) = [p for p in bench.params if p.name == "out"]
    assert Path(out.default) == BENCH_OUT
    assert BENCH_OUT != Path("benchmarks/RESULTS.md")
    assert f"{BENCH_OUT.parts[0]}/" in _ignored()
    run = (ROOT / "benchmarks" / "run.py").read_text(encoding="utf-8")
    assert '"bench_out" / "RESULTS.md"' in run  # python -m benchmarks.run agrees


def test_sigterm_inside_the_block_is_a_keyboard_interrupt_and_the_handler_is_restored() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Terminated) as caught, sigterm_as_interrupt():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises before this ends
    assert isinstance(caught.value, KeyboardInterrupt)
    assert signal.getsignal(signal.SIGTERM) is before


def test_sigterm_in_any_command_is_one_line_and_exit_143(capsys) -> None:
    """Every command runs with SIGTERM as an interrupt: one line, code 143 (not 130)."""
    from optimizer.cli.checks import INTERRUPTED, exit_on_interrupt

    with pytest.raises(typer.Exit) as ended, exit_on_interrupt(), sigterm_as_interrupt():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    assert ended.value.exit_code == 143
    assert capsys.readouterr().err.strip() == "terminated (SIGTERM); nothing was written."
    with pytest.raises(typer.Exit) as ended, exit_on_interrupt():
        raise KeyboardInterrupt
    assert ended.value.exit_code == 130
    assert capsys.readouterr().err.strip() == INTERRUPTED


@pytest.mark.slow
def test_sigterm_ends_a_solve_with_a_message_and_keeps_finished_scenarios(tmp_path: Path) -> None:
    """``capacity solve`` said nothing on SIGTERM (exit 143, no line, no clean-up)."""
    exe = str(Path(sys.executable).parent / "capacity")
    out = tmp_path / "o"
    argv = [exe, "solve", str(ROOT / "data"), "-s", "neutral", "-s", "negative", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 300
    # the manifest entry is the commit (the folder moves in just before it): wait for it
    while time.time() < deadline and not any(
        '"state": "complete"' in m.read_text() for m in out.glob("*/manifest.json")
    ):
        time.sleep(0.02)  # the first scenario is complete, the second is being solved
    p.send_signal(signal.SIGTERM)
    stdout, err = p.communicate(timeout=120)
    assert p.returncode == 143, stdout + err
    (run,) = out.iterdir()
    assert f"terminated (SIGTERM); the scenarios finished so far are in {run}" in " ".join(
        stdout.split()
    )
    assert "Traceback" not in stdout + err
    scenarios = json.loads((run / "manifest.json").read_text())["scenarios"]
    assert list(scenarios) == ["neutral"] and scenarios["neutral"]["state"] == "complete"
    assert sorted(p.name for p in run.iterdir() if p.is_dir()) == ["scenario=neutral"]


def test_an_interrupt_just_after_a_scenario_s_commit_names_its_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SIGTERM test above once found no run: the signal came just after the commit.

    The scenario stays on disk (``tests/test_report.py``), and the command's last line
    names the run that holds it instead of saying that no scenario had finished.
    """
    from typer.testing import CliRunner

    import optimizer.output.report as report

    real_update = report.update_manifest

    def update(run_dir: Path, **kw: object) -> dict[str, object]:
        out = real_update(run_dir, **kw)  # type: ignore[arg-type]
        if kw.get("entry", {}).get("state") == "complete":  # type: ignore[union-attr]
            raise KeyboardInterrupt
        return out

    monkeypatch.setattr(report, "update_manifest", update)
    out = tmp_path / "o"
    argv = ["solve", str(ROOT / "data"), "-s", "neutral", "-s", "negative", "--out", str(out)]
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 130, res.output
    (run,) = out.iterdir()
    assert f"the scenarios finished so far are in {run}" in " ".join(res.output.split())
    assert list(json.loads((run / "manifest.json").read_text())["scenarios"]) == ["neutral"]


def test_the_app_hides_streamlit_s_deploy_button() -> None:
    cmd = app_command(8501, "localhost", True)
    i = cmd.index("--client.toolbarMode")
    assert cmd[i + 1] in ("minimal", "viewer")
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["client"]["toolbarMode"] == cmd[i + 1]


@pytest.mark.slow
@pytest.mark.usefixtures("wall_clock_alone")  # its worker processes: not beside them
def test_sigterm_ends_a_batch_with_a_message_and_it_resumes(tmp_path: Path) -> None:
    sweep = tmp_path / "s.yaml"
    sweep.write_text(f"data: {ROOT / 'data'}\nscenarios: [neutral, negative, optimistic]\n")
    exe = str(Path(sys.executable).parent / "capacity")
    argv = [exe, "batch", str(sweep), "-w", "1", "-o", str(tmp_path / "o")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    man = tmp_path / "o" / "batch_manifest.json"
    deadline = time.time() + 300
    while time.time() < deadline and '"state": "done"' not in (
        man.read_text() if man.exists() else ""
    ):
        time.sleep(0.05)  # the first case is written, the others are being solved
    p.send_signal(signal.SIGTERM)  # the batch process only, as a service manager sends it
    out, err = p.communicate(timeout=180)
    assert p.returncode == 143, out + err
    assert "terminated (SIGTERM); re-run the same command to resume" in out
    assert "Traceback" not in out + err and "leaked semaphore" not in err
    done = [k for k, v in json.loads(man.read_text())["scenarios"].items() if v["state"] == "done"]
    assert done
    again = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    cases = json.loads(man.read_text())["scenarios"]
    assert all(v["state"] == "done" for v in cases.values()) and len(cases) == 3


def test_the_readme_and_the_solving_guide_list_every_command() -> None:
    """The two command tables name exactly the commands of the `capacity` app."""
    group = typer.main.get_command(app)
    names = set(group.commands)  # type: ignore[attr-defined]
    for path in (ROOT / "README.md", ROOT / "docs" / "guide" / "solving.md"):
        text = path.read_text(encoding="utf-8")
        listed = set(re.findall(r"^\| `capacity ([a-z][a-z-]*)", text, flags=re.M))
        assert listed == names, f"{path.name}: listed {sorted(listed)}, commands {sorted(names)}"


def test_sighup_is_an_interrupt_unless_it_is_ignored() -> None:
    """A batch whose terminal closed (SIGHUP) died without rewriting its summary; it now
    stops as SIGTERM does (exit 129). Under nohup (SIGHUP ignored) it keeps running."""
    from optimizer.cli.checks import SIGHUP_EXIT, HungUp, interrupt_ending

    before = signal.getsignal(signal.SIGHUP)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)  # as a terminal leaves it (not nohup's)
    with pytest.raises(HungUp) as caught, sigterm_as_interrupt():
        os.kill(os.getpid(), signal.SIGHUP)
        time.sleep(1)
    assert interrupt_ending(caught.value) == ("hung up (SIGHUP)", SIGHUP_EXIT)
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_DFL  # restored
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with sigterm_as_interrupt():
            os.kill(os.getpid(), signal.SIGHUP)  # ignored, as nohup asked
            time.sleep(0.2)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, before)
