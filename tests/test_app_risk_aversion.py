"""AppTest of the Risk page's risk-aversion tab: the CVaR frontier and a chance row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from capacity.dataset import load_dataset
from capacity.scenarios import apply_scenario
from optimizer.analysis.hedge_risk import extensive_frontier

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "ui" / "app.py")
TINY = ROOT / "tests" / "data" / "tiny_valid"


def test_frontier_and_chance_row_on_the_named_scenarios(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAPACITY_DATA", str(TINY))
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("app_pages/risk.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    at.text_input(key="ra_weights").set_value("0,1")
    at.run()
    at.button(key="ra_frontier_run").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    got = at.session_state["risk_results"]["risk_aversion_frontier"]["value"]
    ds = load_dataset(TINY)
    want = extensive_frontier([apply_scenario(ds, n) for n in ("neutral", "squeeze")], [0, 1], 0.5)
    np.testing.assert_allclose(
        got[["expected_cost_usd", "cvar_usd"]].to_numpy(),
        want[["expected_cost_usd", "cvar_usd"]].to_numpy(),
        rtol=1e-6,
    )
    assert at.get("plotly_chart")
    at.selectbox(key="ra_method").set_value("exact")
    at.run()
    at.button(key="ra_chance_run").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    res = at.session_state["risk_results"]["risk_aversion_chance"]["value"]
    assert res.in_sample >= 0.9 - 1e-9 and res.status == "optimal"
    assert any("achieved probability" in m.label for m in at.metric)


def test_a_bad_weight_is_a_message_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAPACITY_DATA", str(TINY))
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("app_pages/risk.py")
    at.run()
    at.text_input(key="ra_weights").set_value("0,-3")
    at.run()
    assert not at.exception
    assert any("-3 is not a risk weight" in e.value for e in at.error)
