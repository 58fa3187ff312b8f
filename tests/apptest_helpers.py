"""Shared helpers for the Streamlit AppTest suites: open the app, change page, rerun."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT, TINY

APP = str(ROOT / "ui" / "app.py")


def rerun(at: AppTest) -> AppTest:
    """Run the script again and fail on any exception the page raised."""
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_app(monkeypatch: pytest.MonkeyPatch, data: Path = TINY) -> AppTest:
    """Open the app on ``data`` (the tiny dataset by default)."""
    monkeypatch.setenv("CAPACITY_DATA", str(data))
    return rerun(AppTest.from_file(APP, default_timeout=120))


def goto(at: AppTest, page: str) -> AppTest:
    """Switch to ``ui/app_pages/<page>.py`` and run it."""
    at.switch_page(f"app_pages/{page}.py")
    return rerun(at)
