"""Ctrl-C ends every ``capacity`` command with one line and exit code 130, never a traceback.

The command group runs each command inside one handler
(:func:`optimizer.cli.checks.exit_on_interrupt`); the console script's launcher
(:mod:`capacity_cli`) covers the seconds spent importing the model stack before any
command runs.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import tomllib
import types
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import capacity.dataset
import capacity_cli
import optimizer.plan.pulp_io
import optimizer.plan.solvers
from optimizer.cli.checks import INTERRUPTED
from optimizer.cli.commands import app

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"


def _interrupt(*_a: Any, **_k: Any) -> Any:
    raise KeyboardInterrupt


@pytest.mark.parametrize(
    ("args", "target"),
    [
        (["validate", str(TINY)], (capacity.dataset, "validate_directory")),
        (["diff", str(TINY), "base", "neutral"], (capacity.dataset, "load_dataset")),
        (["export-lp", str(TINY), "--lp", "{tmp}/m.lp"], (capacity.dataset, "load_dataset")),
        (["solvers"], (optimizer.plan.solvers, "available_solvers")),
    ],
)
def test_ctrl_c_in_a_command_is_one_line_and_exit_130(
    args: list[str], target: tuple[Any, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(*target, _interrupt)
    res = CliRunner().invoke(app, [a.replace("{tmp}", str(tmp_path)) for a in args])
    assert res.exit_code == 130
    assert res.output.strip() == INTERRUPTED
    assert "Traceback" not in res.output


def test_ctrl_c_while_writing_the_lp_leaves_no_half_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def half_then_interrupt(_model: Any, *, lp: Path, mps: Path | None = None) -> None:
        Path(lp).write_text("\\* half an LP")
        raise KeyboardInterrupt

    monkeypatch.setattr(optimizer.plan.pulp_io, "write_problem", half_then_interrupt)
    target = tmp_path / "model.lp"
    res = CliRunner().invoke(app, ["export-lp", str(TINY), "--lp", str(target)])
    assert res.exit_code == 130
    assert res.output.strip() == INTERRUPTED
    assert sorted(tmp_path.iterdir()) == []  # neither model.lp nor its temporary file


def test_export_lp_writes_the_file_under_its_own_name(tmp_path: Path) -> None:
    target = tmp_path / "model.lp"
    res = CliRunner().invoke(app, ["export-lp", str(TINY), "--lp", str(target)])
    assert res.exit_code == 0, res.output
    assert [p.name for p in tmp_path.iterdir()] == ["model.lp"]
    assert "objective_constant" in target.read_text()


class _ImportInterrupted(types.ModuleType):
    """A module whose every attribute lookup is interrupted (Ctrl-C during its import)."""

    def __getattr__(self, name: str) -> Any:
        raise KeyboardInterrupt


def test_launcher_turns_ctrl_c_during_the_imports_into_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(
        sys.modules, "optimizer.cli.commands", _ImportInterrupted("optimizer.cli.commands")
    )
    with pytest.raises(SystemExit) as exc:
        capacity_cli.main()
    assert exc.value.code == 130
    assert capsys.readouterr().err == capacity_cli.STARTING_INTERRUPTED + "\n"


def test_console_script_is_the_launcher() -> None:
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert doc["project"]["scripts"]["capacity"] == "capacity_cli:main"


def test_ctrl_c_while_typer_builds_the_command_line_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C after the imports but before click runs (typer reading the signatures).

    Seen once under load in the test below: the interrupt escaped with a traceback from
    ``typing.get_origin`` and exit code -2.
    """
    import typer.main

    from optimizer.cli import commands
    from optimizer.cli.checks import INTERRUPTED

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(typer.main, "get_command", interrupted)
    monkeypatch.setattr(sys, "argv", ["capacity", "validate", str(TINY)])
    with pytest.raises(SystemExit) as exc:
        commands.main()
    assert exc.value.code == 130
    assert capsys.readouterr().err.strip() == INTERRUPTED


def test_sigint_soon_after_start_is_exit_130_without_traceback() -> None:
    """A real Ctrl-C 0.3 s after start: still importing, or already in the command."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import capacity_cli; capacity_cli.main()", "validate", str(TINY)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in out + err
    assert "interrupted" in err


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--no-report"], "interrupted; no report is written with --no-report; re-run"),
        (["--out", "{tmp}/r"], "interrupted; no scenario had finished, so no report was written"),
    ],
)
def test_ctrl_c_during_solve_says_where_the_report_is(
    extra: list[str], words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import optimizer

    monkeypatch.setattr(optimizer, "solve", _interrupt)  # the solve of the first scenario
    args = ["solve", str(TINY), *[a.replace("{tmp}", str(tmp_path)) for a in extra]]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 130 and "Traceback" not in res.output
    assert words in " ".join(res.output.split())
    assert "are none" not in res.output and not (tmp_path / "r").exists()


def test_a_reader_that_stops_early_ends_the_output_not_the_run(tmp_path: Path) -> None:
    """``capacity solve DATA -s all | head -1``: exit 1, no word and no report before.

    The pipe's reader reads one line and goes; the solve goes on with its output to
    the null device, writes every scenario's report and exits 0.
    """
    import json

    out = tmp_path / "out"
    cmd = [sys.executable, "-c", "from capacity_cli import main; main()"]
    proc = subprocess.Popen(
        [*cmd, "solve", str(TINY), "-s", "all", "-o", str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes, like head -1
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err
    (manifest,) = out.glob("*/manifest.json")
    scenarios = json.loads(manifest.read_text())["scenarios"]
    from capacity import load_dataset

    assert sorted(scenarios) == sorted(load_dataset(TINY).scenarios)  # -s all: every one
    assert {s["state"] for s in scenarios.values()} == {"complete"}


def test_ctrl_c_while_the_arguments_are_parsed_still_prints_the_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """typer turns an interrupt outside the command (argument parsing) into a silent 130;
    a real Ctrl-C 0.3 s after start once landed there and printed nothing."""
    from optimizer.cli import commands

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(commands._Commands, "make_context", interrupted)
    monkeypatch.setattr(sys, "argv", ["capacity", "validate", str(TINY)])
    with pytest.raises(SystemExit) as exc:
        commands.main()
    assert exc.value.code == 130
    assert capsys.readouterr().err == commands.INTERRUPTED + "\n"


def test_ctrl_c_inside_a_command_prints_its_line_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from capacity import dataset
    from optimizer.cli import commands

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(dataset, "validate_directory", interrupted)
    monkeypatch.setattr(sys, "argv", ["capacity", "validate", str(TINY)])
    with pytest.raises(SystemExit) as exc:
        commands.main()
    assert exc.value.code == 130
    assert capsys.readouterr().err == commands.INTERRUPTED + "\n"
