"""Progress of the app's long operations: a bar with "case k of N", elapsed and time left.

The tornado, the Monte Carlo, the hedged plan and the scenario comparison count their
solves on one progress report (:class:`optimizer.output.progress.Progress`, drawn by
``ui.progress_view.AppProgress`` as ``st.progress``); each case is named before it is
solved and counted after it.
"""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from capacity.dataset import load_dataset
from optimizer.analysis import hedge, monte_carlo, tornado
from tests.apptest_helpers import goto, open_app, rerun
from tests.conftest import TINY
from ui.progress_view import AppProgress
from ui.risk_view import monte_carlo_spec


class Recorder:
    """A ProgressLike that records the calls: ("now", name) and ("done", ok)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def now(self, current: str) -> None:
        self.calls.append(("now", current))

    def advance(self, ok: bool = True, *, last: str | None = None, current: str = "") -> None:
        self.calls.append(("done", ok))


def test_tornado_names_and_counts_each_solve() -> None:
    ds = load_dataset(TINY)
    params = [p for p in tornado.default_tornado_parameters(ds) if p.name == "cowos"]
    rec = Recorder()
    tornado.tornado(ds, None, params, progress=rec)
    assert [c for c in rec.calls if c[0] == "now"] == [
        ("now", "base"),
        ("now", "cowos low"),
        ("now", "cowos high"),
    ]
    assert [c for c in rec.calls if c[0] == "done"] == [("done", True)] * 3


def test_monte_carlo_and_hedge_count_their_solves() -> None:
    ds = load_dataset(TINY)
    params = tornado.default_tornado_parameters(ds)
    rec = Recorder()
    monte_carlo.monte_carlo(ds, monte_carlo_spec(params, ["cowos"], 3, 0), progress=rec)
    assert [n for k, n in rec.calls if k == "now"] == ["sample 0", "sample 1", "sample 2"]
    rec = Recorder()
    hedge.hedged_plan(ds, ["neutral", "squeeze"], ev="neutral", progress=rec)
    names = [n for k, n in rec.calls if k == "now"]
    assert len(names) == hedge.solve_count(2, "neutral") == 5
    assert names[:3] == ["two-stage plan", "neutral alone", "squeeze alone"]
    assert names[3:] == ["neutral with the EV plan", "squeeze with the EV plan"]


class FakeBar:
    def __init__(self) -> None:
        self.drawn: list[tuple[float, str]] = []

    def progress(self, value: float, text: str) -> FakeBar:
        self.drawn.append((value, text))
        return self


def test_app_progress_says_case_k_of_n_elapsed_and_time_left() -> None:
    slot = FakeBar()
    with AppProgress("Tornado", 3, slot) as bar:
        bar.now("base")
        bar.advance(True)
        bar.now("cowos low")
        bar.advance(False)
        bar.now("cowos high")
        bar.advance(True)
    values = [v for v, _ in slot.drawn]
    texts = [t for _, t in slot.drawn]
    assert values == sorted(values) and values[-1] == 1.0
    assert texts[1].startswith("Tornado: case 1 of 3 (base) · 0 done · elapsed 0:00:0")
    assert re.search(r"case 2 of 3 \(cowos low\) · 1 done · elapsed \S+ · about \S+ left", texts[3])
    assert texts[-1].startswith("Tornado: 3 of 3 cases done, 1 failed in 0:00:0")


def _progress_texts(at: AppTest) -> list[str]:
    return [el.proto.text for el in at.get("progress")]


def test_every_long_risk_operation_shows_a_bar_with_its_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch, TINY)
    goto(at, "risk")
    at.button(key="risk_compare_btn").click()
    rerun(at)
    assert any(
        re.match(r"Scenario comparison: (\d+) of \1 scenarios? done in ", t)
        for t in _progress_texts(at)
    )
    at.multiselect(key="tornado_params").set_value(["cowos"])
    at.button(key="tornado_run").click()
    rerun(at)
    assert "Tornado: 3 of 3 cases done" in " ".join(_progress_texts(at))
    at.multiselect(key="mc_params").set_value(["cowos"])
    at.number_input(key="mc_samples").set_value(2)
    at.button(key="mc_run").click()
    rerun(at)
    assert "Monte Carlo: 2 of 2 samples done" in " ".join(_progress_texts(at))
    at.button(key="hedge_run").click()
    rerun(at)
    n = hedge.solve_count(2, at.radio(key="hedge_ev").value)
    assert f"Hedged plan: {n} of {n} solves done" in " ".join(_progress_texts(at))


def test_the_plan_page_states_the_wait_from_the_click_beside_the_solve_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import streamlit as st

    st.cache_data.clear()  # a solve of the tiny data by an earlier test would be reused
    at = open_app(monkeypatch, TINY)
    goto(at, "plan")
    at.button(key="solve").click()
    rerun(at)
    caption = next(c.value for c in at.caption if str(c.value).startswith("Objective"))
    got = re.search(
        r"([\d.]+) s from the click to these numbers \(the solve took ([\d.]+) s", caption
    )
    assert got is not None, caption
    wait, solve = float(got.group(1)), float(got.group(2))
    assert wait >= solve > 0  # the wait holds the solve and the page around it
    rerun(at)  # a later draw repeats the same wait
    again = next(c.value for c in at.caption if str(c.value).startswith("Objective"))
    assert f"{wait:.1f} s from the click" in again
