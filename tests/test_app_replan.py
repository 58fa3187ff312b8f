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
    # other settings: the 2-path result is not shown under them (it stayed, unmarked)
    at.number_input(key="replan_vol").set_value(0.5)
    at.run()
    assert not any("outcome" in d.value.columns for d in at.dataframe)
    assert any("changed since the last rolling replan" in i.value for i in at.info)
    at.number_input(key="replan_vol").set_value(0.0)
    at.run()
    assert any("outcome" in d.value.columns for d in at.dataframe)  # its own settings again


def _tree_view(plan) -> None:  # noqa: ANN001 - AppTest runs the source alone, without imports
    from ui.replan_view import _tree_results

    _tree_results(plan)


def test_the_tree_metrics_read_in_each_amounts_scale() -> None:
    """A small dataset's tree read "0.01 bn USD" and its value "0.000 bn USD"."""
    import pandas as pd

    from optimizer.analysis.tree import TreePlan

    leaves = pd.DataFrame({"leaf": ["a"], "cost_usd": [9.6e6]})
    nodes = pd.DataFrame(
        {"stage": [0], "node": ["root"], "kind": ["build"], "site": ["s"], "unit": ["MW"]}
    )
    plan = TreePlan("optimal", 9_612_345.0, 9_700_000.0, 87_655.0, leaves, nodes.assign(value=5.0))
    at = AppTest.from_function(_tree_view, args=(plan,), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = {m.label: m.value for m in at.metric}
    assert shown == {
        "tree plan, expected cost": "$9.61M",
        "two-stage hedge": "$9.70M",
        "value of the tree": "$87.66k",
    }


def test_the_replan_settings_are_kept_across_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """The replan's inputs lacked persist_state: back from another page, they were reset."""
    from tests.apptest_helpers import goto, open_app

    at = open_app(monkeypatch, HAND)
    goto(at, "risk")
    at.number_input(key="replan_paths").set_value(7)
    at.number_input(key="replan_vol").set_value(0.3)
    at.run()
    goto(at, "data")
    goto(at, "risk")
    assert at.number_input(key="replan_paths").value == 7
    assert at.number_input(key="replan_vol").value == pytest.approx(0.3)
