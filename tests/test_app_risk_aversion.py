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
    # the app's formatter: headers with units (it showed expected_cost_usd 1960463.5233)
    labels = _labels(at, "expected_cost_usd")
    assert "expected cost [USD]" in labels and "cvar [USD]" in labels, labels
    at.selectbox(key="ra_method").set_value("exact")
    at.run()
    at.button(key="ra_chance_run").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    res = at.session_state["risk_results"]["risk_aversion_chance"]["value"]
    assert res.in_sample >= 0.9 - 1e-9 and res.status == "optimal"
    assert any("achieved probability" in m.label for m in at.metric)
    assert "cost [USD]" in _labels(at, "cost_usd")


def _labels(at: AppTest, column: str) -> list[str]:
    """Header labels of the first dataframe element with ``column`` (its column config)."""
    import json

    for df in at.dataframe:
        cfg = json.loads(df.proto.columns or "{}")
        if any(k == column or k.startswith(column + "_") for k in cfg):  # _mn: in millions
            return [str(c.get("label", "")) for c in cfg.values()]
    raise AssertionError(f"no table with {column!r}")


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
