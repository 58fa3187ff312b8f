"""One progress report for long commands: plain lines to a file, a bar on a terminal."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

import optimizer.output.progress as progress_mod
from optimizer.output.progress import Progress, clock

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"


class _Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def fake_time(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    c = _Clock(100.0)
    monkeypatch.setattr(progress_mod.time, "monotonic", c)
    return c


def test_plain_lines_say_count_current_elapsed_and_time_left(fake_time: _Clock) -> None:
    out = io.StringIO()
    with Progress("batch", 3, stream=out, every_s=0) as p:
        p.now("neutral")
        fake_time.t += 10  # the first case takes 10 s: 2 left at 10 s each
        p.advance(current="negative")
        fake_time.t += 20  # 30 s for 2: 15 s each, one left
        p.advance(ok=False, current="optimistic")
        fake_time.t += 15
        p.advance()
    assert out.getvalue().splitlines() == [
        "batch: 3 to do",
        "batch: 1/3 done, now negative, elapsed 0:00:10, about 0:00:20 left",
        "batch: 2/3 done (1 failed), now optimistic, elapsed 0:00:30, about 0:00:15 left",
        "batch: 3/3 done (1 failed), elapsed 0:00:45, finished",
    ]


def test_steps_of_unequal_length_show_no_time_left(fake_time: _Clock) -> None:
    """The extensive form's build (seconds) says nothing of its solve (minutes)."""
    out = io.StringIO()
    with Progress("extensive form", 2, stream=out, every_s=0, estimate=False) as p:
        p.now("build (3 scenarios)")
        fake_time.t += 4
        p.advance(current="solve (1,200 columns)")
        fake_time.t += 60
        p.advance()
    assert out.getvalue().splitlines() == [
        "extensive form: 2 to do",
        "extensive form: 1/2 done, now solve (1,200 columns), elapsed 0:00:04",
        "extensive form: 2/2 done, elapsed 0:01:04, finished",
    ]


def test_monte_carlo_draws_are_counted(fake_time: _Clock) -> None:
    from capacity.dataset import load_dataset
    from optimizer.analysis.monte_carlo import sample_scenarios

    out = io.StringIO()
    with Progress("sampling", 3, stream=out, every_s=0) as p:
        names, _, _ = sample_scenarios(load_dataset(TINY), 3, 0, base=None, progress=p)
    lines = out.getvalue().splitlines()
    assert names == ["mc_000", "mc_001", "mc_002"]
    assert lines[0] == "sampling: 3 to do" and lines[1].startswith("sampling: 1/3 done, now mc_001")
    assert lines[-1].startswith("sampling: 3/3 done, elapsed")


def test_parallel_items_show_the_last_one_and_lines_are_spaced(fake_time: _Clock) -> None:
    out = io.StringIO()
    with Progress("batch", 4, stream=out, every_s=60) as p:
        for name in ("a", "b", "c", "d"):
            fake_time.t += 5
            p.advance(last=name)
    lines = out.getvalue().splitlines()
    # the first and the last always print; the two between fall inside the 60 s spacing
    assert lines == [
        "batch: 4 to do",
        "batch: 1/4 done, last a, elapsed 0:00:05, about 0:00:15 left",
        "batch: 4/4 done, last d, elapsed 0:00:20, finished",
    ]


def test_disabled_or_empty_progress_prints_nothing() -> None:
    out = io.StringIO()
    with Progress("solve", 2, stream=out, enabled=False) as p:
        p.advance()
    with Progress("solve", 0, stream=out) as p:
        pass
    assert out.getvalue() == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_the_rich_bar_with_the_count() -> None:
    out = _Terminal()
    with Progress("batch", 2, stream=out) as p:
        assert p.interactive and p._bar is not None
        p.advance(last="a")
        p.advance(last="b")
    text = out.getvalue()
    assert "batch" in text and "2/2" in text
    assert "batch: 2 to do" not in text  # no plain lines on a terminal


def test_clock() -> None:
    assert clock(3725.2) == "1:02:05" and clock(-3) == "0:00:00"


def _capacity(*args: str) -> list[str]:
    return [str(Path(sys.executable).parent / "capacity"), *args]


def test_solve_of_several_scenarios_writes_progress_lines_to_a_file(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    with log.open("w") as f:
        code = subprocess.call(
            _capacity("solve", str(TINY), "--scenario", "all", "--no-report"),
            stdout=f,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=300,
        )
    text = log.read_text()
    assert code == 0, text
    lines = [ln for ln in text.splitlines() if ln.startswith("solve: ")]
    assert lines[0] == "solve: 2 to do"
    assert lines[1].startswith("solve: 1/2 done, now squeeze, elapsed ")
    assert lines[2].startswith("solve: 2/2 done, elapsed ") and lines[2].endswith(", finished")


@pytest.mark.slow
def test_a_batch_writes_progress_lines_to_a_file(tmp_path: Path) -> None:
    sweep = tmp_path / "s.yaml"
    sweep.write_text(f"data: {TINY}\nscenarios: [neutral, squeeze]\n")
    log = tmp_path / "out.log"
    with log.open("w") as f:
        code = subprocess.call(
            _capacity("batch", str(sweep), "-w", "1", "-o", str(tmp_path / "o")),
            stdout=f,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=600,
        )
    text = log.read_text()
    assert code == 0, text
    lines = [ln for ln in text.splitlines() if ln.startswith("batch: ")]
    assert lines[0] == "batch: 2 to do"
    assert lines[1].startswith("batch: 1/2 done, last ")
    assert lines[-1].startswith("batch: 2/2 done, last ") and lines[-1].endswith(", finished")


def test_an_early_end_prints_its_count_once_more(fake_time: _Clock) -> None:
    out = io.StringIO()
    with Progress("L-shaped iterations", 50, stream=out, every_s=60, limit=True) as p:
        for gap in ("1.00e-01", "5.00e-05"):
            fake_time.t += 30
            p.advance(last=f"gap {gap}")
    assert out.getvalue().splitlines() == [
        "L-shaped iterations: at most 50 to do",
        "L-shaped iterations: 1/50 done, last gap 1.00e-01, elapsed 0:00:30, at most 0:24:30 left",
        "L-shaped iterations: 2/50 done, last gap 5.00e-05, elapsed 0:01:00, ended",
    ]
