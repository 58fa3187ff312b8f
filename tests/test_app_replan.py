"""AppTest of the Risk page's rolling-replan view: it runs and shows the paths' regret."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "ui" / "app.py")
HAND = ROOT / "tests" / "data" / "replan_hand"


def test_replan_tab_runs_and_shows_zero_regret_at_zero_volatility(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CAPACITY_DATA", str(HAND))
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("app_pages/risk.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    at.number_input(key="replan_paths").set_value(2)
    at.number_input(key="replan_vol").set_value(0.0)
    at.button(key="replan_run").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    res = at.session_state["replan_results"]["paths"][1]
    assert len(res.paths) == 2
    assert res.paths["regret_usd"].abs().max() < 1e-6 * 5e6
    assert any("replans per path" in c.value for c in at.caption)
    # the spread reads in each row's unit, as the CLI prints it (it showed regret_usd
    # 11,300,000,000 and shares as 0.0782)
    spread = next(d.value for d in at.dataframe if "outcome" in d.value.columns)
    rows = spread.set_index("outcome")
    assert rows.loc["regret (discounted)", "P50"].startswith("$")
    assert rows.loc["served share of H100e demand", "P50"].endswith("%")
