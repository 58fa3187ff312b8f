"""The app's "Discard edits" really discards (issue 10): the editor shows the data as
loaded and the next edit does not bring the discarded value back."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from capacity.dataset import load_dataset
from tests.apptest_helpers import goto, open_app, rerun
from tests.conftest import TINY


def _edit_first_demand(at: AppTest) -> None:
    """On the Data page: the first demand row to 2500 H100e, as the browser sends it."""
    at.selectbox(key="data_table").set_value("demand")
    rerun(at)
    at.session_state[at.data_editor[0].key] = {
        "edited_rows": {0: {"demand_h100e": 2500.0}},
        "added_rows": [],
        "deleted_rows": [],
    }
    rerun(at)


def test_discard_edits_resets_the_editor_and_the_next_edit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = load_dataset(TINY)
    first = float(base.table("demand")["demand_h100e"].iloc[0])
    second = float(base.table("demand")["demand_h100e"].iloc[1])
    at = goto(open_app(monkeypatch), "data")
    _edit_first_demand(at)
    assert "demand" in at.session_state["drafts"]
    at.button(key="discard_edits").click()
    rerun(at)
    assert at.session_state["drafts"] == {}
    (editor,) = at.data_editor
    # a new widget (the browser's copy of the old one still holds 2500)
    assert editor.key != "editor_demand"
    assert float(editor.value["demand_h100e"].iloc[0]) == first
    # the next edit, in another row, starts from the data as loaded
    at.session_state[editor.key] = {
        "edited_rows": {1: {"demand_h100e": second + 1.0}},
        "added_rows": [],
        "deleted_rows": [],
    }
    rerun(at)
    draft = at.session_state["drafts"]["demand"]
    assert float(draft["demand_h100e"].iloc[0]) == first
    assert float(draft["demand_h100e"].iloc[1]) == second + 1.0


def test_the_page_icon_is_a_local_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Emoji and material-icon favicons are fetched from a CDN; offline the app has none."""
    import ast

    from tests.conftest import ROOT

    src = (ROOT / "ui" / "app.py").read_text(encoding="utf-8")
    calls = [
        n
        for n in ast.walk(ast.parse(src))
        if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "set_page_config"
    ]
    (call,) = calls
    icon = next(k.value for k in call.keywords if k.arg == "page_icon")
    assert not isinstance(icon, ast.Constant)  # not ":material/...:" or an emoji
    png = ROOT / "ui" / "page_icon.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rerun(open_app(monkeypatch))  # the app starts with it


def test_monte_carlo_and_hedged_tables_show_units_not_raw_numbers() -> None:
    import math

    import pandas as pd

    from ui.formats import percentiles_view, usd_billions

    pct = pd.DataFrame(
        {
            "outcome": ["total_cost_usd", "unmet_h100e", "trainium_share", "breach_mw"],
            "p10": [103.0e9, 10_000.4, 0.447, 0.0],
            "p50": [125401715792.9377, 261_000.0, 0.516, 12.5],
            "p90": [187.2e9, 4.17e6, 0.562, 590.0],
            "mean": [130.0e9, 1.0e6, math.nan, 100.0],
            "n": [50, 50, 49, 50],
        }
    )
    v = percentiles_view(pct).set_index("outcome")
    assert v.loc["total cost (discounted)", "P50"] == "$125.40B"
    assert v.loc["unmet demand [H100e-quarters]", "P90"] == "4,170,000"
    assert v.loc["Trainium share of served H100e", "P10"] == "44.7%"
    assert v.loc["Trainium share of served H100e", "mean"] == "n/a"
    assert "125401715792" not in v.to_string()
    per = pd.DataFrame({"scenario": ["a", "b"], "cost_usd": [125401715792.9377, math.inf]})
    view, cfg = usd_billions(per)
    assert view["cost_usd_bn"].tolist() == ["$125.40B", "∞"]  # never "Infinity"
    finite, _ = usd_billions(per.iloc[:1])
    assert finite["cost_usd_bn"].iloc[0] == pytest.approx(125.4017157929377)


def test_shadow_price_heatmap_has_one_unit_per_row() -> None:
    import pandas as pd

    from ui import charts

    sp = pd.DataFrame(
        {
            "family": ["supply_resource"] * 4 + ["site_grid"] * 2,
            "period": ["2026Q1", "2026Q2"] * 3,
            "shadow_price": [-393e3, -100e3, -8e3, -4e3, -14.9e6, 0.0],
            "unit": ["USD/wafers"] * 2 + ["USD/stacks"] * 2 + ["USD/MW"] * 2,
        }
    )
    fig = charts.shadow_price_heatmap({"shadow_prices": sp}, ["2026Q1", "2026Q2"])
    h = fig.data[0]
    rows = list(h.y)
    assert sorted(rows) == [
        "site_grid [USD/MW]",
        "supply_resource [USD/stacks]",
        "supply_resource [USD/wafers]",
    ]
    z = {r: list(v) for r, v in zip(rows, h.z, strict=True)}
    assert z["supply_resource [USD/stacks]"] == [1.0, 0.5]  # its own scale, not the wafers'
    assert z["supply_resource [USD/wafers]"] == pytest.approx([1.0, 100e3 / 393e3])
    text = {r: list(v) for r, v in zip(rows, h.text, strict=True)}
    assert text["supply_resource [USD/wafers]"] == ["393k", "100k"]
    assert text["site_grid [USD/MW]"] == ["14.9M", ""]
    assert h.texttemplate == "%{text}"
    assert charts._price_text(1.67e-05) == "<0.01"  # a tie-break's trace, not 1.67e-05


def _load_other_dataset_script() -> None:
    import shutil
    import tempfile
    from pathlib import Path

    import streamlit as st

    from capacity.dataset import load_dataset
    from tests.conftest import TINY
    from ui.state import set_dataset

    ss = st.session_state
    if "step" not in ss:
        ss["step"] = 1
        ss["flash"] = []
        ss["scenario_name"] = "neutral"
        set_dataset(load_dataset(TINY))
        ss["cmp_grid_delay"] = 2
        ss["cmp_grid_sites"] = ["dc-1"]
        ss["cmp_scenario_name"] = "neutral"
        ss["overrides"] = [
            {
                "op": "shift",
                "table": "site_grid",
                "column": "grid_mw",
                "periods": 2,
                "where": {"site": ["dc-1"]},
                "source": "app",
            }
        ]
    else:
        other = Path(tempfile.mkdtemp()) / "other"
        shutil.copytree(TINY, other)
        for name in (
            "sites.csv",
            "site_grid.csv",
            "site_water.csv",
            "initial_fleet.csv",
            "scenarios.yaml",
        ):
            p = other / name
            p.write_text(p.read_text().replace("dc-1", "dc-9"))
        set_dataset(load_dataset(other))


def test_a_new_dataset_resets_the_scenario_composer() -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_load_other_dataset_script, default_timeout=60)
    at.run()
    assert at.session_state["cmp_grid_sites"] == ["dc-1"]
    at.run()  # load data whose only site is dc-9
    assert not at.exception
    assert at.session_state["overrides"] == []  # no "+custom" naming dc-1
    assert "cmp_grid_sites" not in at.session_state and "cmp_grid_delay" not in at.session_state
    assert at.session_state["cmp_scenario_name"] == "neutral"  # still defined: kept
    assert any("composer was reset" in t for _, t in at.session_state["flash"])


def test_discard_edits_keeps_the_composed_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    """Discard edits also reset the composer ("New data: the scenario composer was reset"):
    the scenario went from squeeze+custom to squeeze, its CoWoS x1.3 lost, though the data
    were the data it was composed on."""
    at = goto(open_app(monkeypatch), "scenarios")
    at.radio(key="cmp_scenario_name").set_value("squeeze")
    at.number_input(key="cmp_supply_cowos_wafers").set_value(1.3)
    rerun(at)
    want = at.session_state["overrides"]
    assert at.session_state["scenario_name"] == "squeeze" and len(want) == 1
    goto(at, "data")
    _edit_first_demand(at)
    at.button(key="discard_edits").click()
    rerun(at)
    assert at.session_state["drafts"] == {}
    assert at.session_state["scenario_name"] == "squeeze"
    assert at.session_state["overrides"] == want
    assert not [m for m in at.info if "composer was reset" in m.value]
    goto(at, "scenarios")
    assert at.number_input(key="cmp_supply_cowos_wafers").value == pytest.approx(1.3)
    assert at.session_state["overrides"] == want
