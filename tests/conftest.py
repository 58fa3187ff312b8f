"""Shared fixtures: paths to the bundled datasets and a writable copy of the tiny one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"
DEFAULT_DATA = ROOT / "data"
DEFAULT_PLAN_PAGE = ROOT / "docs" / "guide" / "default-plan.md"
"""The docs page that tells the default plan's story (figures pinned by tests)."""


@pytest.fixture
def tiny_dir(tmp_path: Path) -> Path:
    """A writable copy of tests/data/tiny_valid."""
    dst = tmp_path / "tiny"
    shutil.copytree(TINY, dst)
    return dst
