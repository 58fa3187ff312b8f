"""AppTest of the Risk page's near-optimal ranges tab, and its range chart."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from capacity.dataset import load_dataset
from optimizer.analysis.alternatives import near_optimal_ranges
from ui.alternatives_view import ranges_figure

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "ui" / "app.py")
TINY = ROOT / "tests" / "data" / "tiny_valid"


def test_ranges_tab_shows_the_ranges_of_a_direct_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAPACITY_DATA", str(TINY))
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("app_pages/risk.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    at.text_input(key="alt_slacks").set_value("0,0.05")
    at.run()
    at.button(key="alt_run").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    got = at.session_state["risk_results"]["alternatives"]["value"]
    want = near_optimal_ranges(load_dataset(TINY), [0.0, 0.05]).ranges
    assert list(got["quantity"]) == list(want["quantity"])
    np.testing.assert_allclose(
        got[["min", "max"]].to_numpy(), want[["min", "max"]].to_numpy(), rtol=1e-6, atol=1e-6
    )
    # a range at 5 % holds the one at 0
    for q, g in got.groupby("quantity"):
        lo, hi = g.sort_values("slack")[["min", "max"]].to_numpy()
        assert hi[0] <= lo[0] + 1e-6 and hi[1] >= lo[1] - 1e-6, q
    assert at.get("plotly_chart")
    # the bar counted every alternative: a minimum and a maximum per row of the ranges
    texts = [el.proto.text for el in at.get("progress")]
    n = 2 * len(want)
    assert any(t.startswith(f"Alternatives: {n} of {n} cases done") for t in texts), texts


def test_a_bad_slack_is_a_message_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAPACITY_DATA", str(TINY))
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("app_pages/risk.py")
    at.run()
    at.text_input(key="alt_slacks").set_value("0.01,-1")
    at.run()
    assert not at.exception
    assert any("-1 is not a slack" in e.value for e in at.error)


def test_range_chart_draws_each_slack_from_min_to_max() -> None:
    import pandas as pd

    ranges = pd.DataFrame(
        {
            "quantity": ["build_mw:a", "build_mw:a"],
            "unit": ["mw", "mw"],
            "slack": [0.0, 0.05],
            "min": [0.0, 0.0],
            "max": [50.0, 100.0],
            "at_optimum": [25.0, 25.0],
            "cost_cap_usd": [1.0, 1.05],
        }
    )
    fig = ranges_figure(ranges)
    assert fig is not None
    bars = [t for t in fig.data if t.type == "bar"]
    assert [list(b.base) for b in bars] == [[0.0], [0.0]]
    assert [list(b.x) for b in bars] == [[50.0], [100.0]]  # % of the largest value, 100 MW
    (opt,) = [t for t in fig.data if t.type == "scatter"]
    assert list(opt.x) == [25.0]
    assert ranges_figure(ranges.iloc[0:0]) is None


def test_the_ranges_table_reads_as_the_command_line_does() -> None:
    """It showed 6245610 where the CLI prints 6,245,607 (six significant digits)."""
    import pandas as pd

    from ui.formats import ranges_view

    ranges = pd.DataFrame(
        {
            "quantity": ["fleet_h100e:nvidia", "trainium_share_of_demand"],
            "unit": ["H100e", "share"],
            "slack": [0.01, 0.01],
            "min": [6245607.4, 0.41],
            "max": [9396498.2, 0.5],
            "at_optimum": [7794393.7, float("nan")],
            "cost_cap_usd": [146056000000.0, 146056000000.0],
        }
    )
    view, cfg = ranges_view(ranges)
    assert view["min"].tolist() == ["6,245,607", "41.0%"]
    assert view["at_optimum"].tolist() == ["7,794,394", "–"]
    assert view["cost_cap_usd"].tolist() == ["$146.06B", "$146.06B"]
    assert ranges["min"].tolist() == [6245607.4, 0.41]  # the stored table is untouched
