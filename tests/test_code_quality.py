"""The code base stays typed (mypy strict on capacity/ and optimizer/) and lint-clean."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_mypy_strict_passes_on_capacity_and_optimizer() -> None:
    res = _run("mypy")  # files and strictness come from [tool.mypy] in pyproject.toml
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Success: no issues found" in res.stdout


def test_ruff_lint_and_format_are_clean() -> None:
    lint = _run("ruff", "check", ".")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = _run("ruff", "format", "--check", ".")
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
