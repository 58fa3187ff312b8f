"""What the app shows: units, money format, tornado order, cached solves, default scenario."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from capacity.dataset import load_dataset
from optimizer import SolveOptions, solve
from tests.apptest_helpers import goto, open_app
from ui import charts
from ui.formats import fmt_usd, level_text, usd_billions
from ui.risk_view import tornado_figure

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"


def _column_config(df_element) -> dict:  # noqa: ANN001
    return json.loads(df_element.proto.columns)


# ----------------------------------------------------------------- pure formatting
def test_money_and_levels_are_formatted_by_meaning() -> None:
    assert fmt_usd(1.2372e11) == "$123.72B"
    assert fmt_usd(-4.51e7) == "-$45.10M"
    assert fmt_usd(float("nan")) == "n/a"
    assert fmt_usd(float("inf")) == "∞"
    assert level_text("scale", 1.0 / 0.97) == "×1.03"
    assert level_text("shift", 4) == "+4 quarters"
    assert level_text("shift", -1) == "-1 quarter"
    view, cfg = usd_billions(pd.DataFrame({"scenario": ["a"], "objective_usd": [1.2372e11]}))
    assert list(view.columns) == ["scenario", "objective_usd_bn"]
    assert view.loc[0, "objective_usd_bn"] == pytest.approx(123.72)
    assert cfg["objective_usd_bn"]["type_config"]["format"] == "$%,.2fB"


def test_tornado_puts_the_largest_swing_on_top_and_names_levels() -> None:
    rows = []
    for p, lo, hi, c_lo, c_hi in (
        ("grid_delay", -2, 4, -0.2e9, 40e9),  # swing 40.2B
        ("demand_anthropic", 0.7, 1.3, -22e9, 36e9),  # swing 58B, smaller max |change|
        ("migration_derate", 0.8, 1 / 0.97, 2e9, -1e9),
    ):
        for side, lev, ch in (("low", lo, c_lo), ("high", hi, c_hi)):
            rows.append(
                {
                    "parameter": p,
                    "side": side,
                    "level": float(lev),
                    "outcome": "total_cost_usd",
                    "base_value": 1e11,
                    "value": 1e11 + ch,
                    "change": ch,
                    "status": "optimal",
                }
            )
    fig = tornado_figure(pd.DataFrame(rows), ops={"grid_delay": "shift"})
    y = fig.layout.yaxis
    # plotly draws the first category at the bottom: the largest swing is last
    assert list(y.categoryarray) == ["migration_derate", "grid_delay", "demand_anthropic"]
    assert y.categoryorder == "array"
    assert list(y.ticktext) == [
        "migration_derate (×0.80 / ×1.03)",
        "grid_delay (-2 quarters / +4 quarters)",
        "demand_anthropic (×0.70 / ×1.30)",
    ]
    # drawn in USD billions
    high = next(t for t in fig.data if t.name == "high")
    assert dict(zip(high.y, high.x, strict=True))["demand_anthropic"] == pytest.approx(36.0)
    assert fig.layout.xaxis.ticksuffix == "B"
    # d3's currency format: the sign before the dollar (a "$" prefix read $-22B)
    assert fig.layout.xaxis.tickformat == "$,~g" and not fig.layout.xaxis.tickprefix


def test_shadow_price_heatmap_keeps_room_for_period_labels() -> None:
    periods = [f"{y}Q{q}" for y in range(2026, 2032) for q in range(1, 5)]
    sp = pd.DataFrame(
        {
            "family": ["site_power"] * len(periods),
            "period": periods,
            "shadow_price": [float(i) for i in range(len(periods))],
            "unit": ["USD/MW"] * len(periods),
        }
    )
    fig = charts.shadow_price_heatmap({"shadow_prices": sp}, periods)
    assert list(fig.data[0].x) == periods
    assert fig.data[0].texttemplate is None  # 24 quarters: values on hover, not 5 px text
    assert fig.layout.xaxis.tickangle == -45
    assert fig.layout.xaxis.automargin is True
    assert fig.layout.margin.b >= 80


def test_power_source_chart_stacks_one_site_by_source() -> None:
    ps = pd.DataFrame(
        {
            "site": ["a", "a", "a", "b", "b"],
            "period": ["2026Q2", "2026Q1", "2026Q2", "2026Q1", "2026Q2"],
            "source": ["grid", "grid", "onsite:gen", "grid", "grid"],
            "energy_mwh": [300.0, 100.0, 50.0, 0.0, 0.0],
        }
    )
    tables = {"power_sources": ps}
    assert charts.power_sites(tables) == ["a"]  # site b draws no energy
    fig = charts.power_sources(tables, ["2026Q1", "2026Q2"], "a")
    assert fig is not None and fig.layout.barmode == "stack"
    bars = {t.name: dict(zip(t.x, t.y, strict=True)) for t in fig.data}
    assert bars == {"grid": {"2026Q1": 100.0, "2026Q2": 300.0}, "onsite:gen": {"2026Q2": 50.0}}
    assert list(fig.layout.xaxis.categoryarray) == ["2026Q1", "2026Q2"]
    assert fig.layout.title.text == "Energy by power source at a"
    assert charts.power_sources(tables, None, "b") is None
    assert charts.power_sources({}, None) is None


# --------------------------------------------------------------------------- pages
def test_app_starts_on_neutral_and_falls_back_to_base(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    at = open_app(monkeypatch)
    assert at.session_state["scenario_name"] == "neutral"
    goto(at, "scenarios")
    assert at.radio(key="cmp_scenario_name").value == "neutral"
    no_neutral = tmp_path / "no_neutral"
    shutil.copytree(TINY, no_neutral)
    (no_neutral / "scenarios.yaml").write_text("scenarios: {}\n")
    at2 = open_app(monkeypatch, no_neutral)
    assert at2.session_state["scenario_name"] == "base"


def test_plan_demand_table_is_per_quarter_and_a_second_solve_says_cached(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ui.state import _solve_cached

    _solve_cached.clear()
    at = open_app(monkeypatch)
    goto(at, "plan")
    at.button(key="solve").click()
    at.run()
    first = at.session_state["plan"]
    assert first.scenario == "neutral" and not first.cached
    assert not any("cached" in str(s.value) for s in at.success)

    # demand table: tiny data has acme/training 1500 in 2026Q1 and acme/inference 800
    # in 2026Q2 over a 2-quarter horizon; both are served in full
    table = at.dataframe[0]
    got = table.value.set_index("workload")
    assert got.loc["training", "mean_demand_h100e"] == 750.0
    assert got.loc["training", "peak_demand_h100e"] == 1500.0
    assert got.loc["inference", "mean_served_h100e"] == 400.0
    assert got.loc["inference", "served_share"] == pytest.approx(1.0)
    cfg = _column_config(table)
    # short headers (the table fits 1400 px, see the browser test); the per-quarter unit
    # is in the caption and the header's help
    assert cfg["mean_demand_h100e"]["label"] == "mean demand [H100e]"
    assert cfg["mean_demand_h100e"]["help"] == "Mean demand, H100e per quarter."
    assert any(
        "2 quarters of the horizon, in H100e per quarter" in str(c.value) for c in at.caption
    )

    at.button(key="solve").click()
    at.run()
    second = at.session_state["plan"]
    assert second.cached and second.run_id != first.run_id
    assert second.seconds == first.seconds and second.solved_at == first.solved_at
    msg = f"(cached result, solved in {first.seconds:.1f} s at {first.solved_at[:5]})"
    assert any(msg in str(s.value) for s in at.success), [s.value for s in at.success]

    goto(at, "reports")
    runs = at.dataframe[0].value
    assert runs["cached"].tolist() == [True, False]  # newest first
    assert runs["solve_s"].tolist() == [round(first.seconds, 2)] * 2
    # the tiny plan costs $1.96M: shown in millions ("$1.96M"), never "$0.00B"
    assert 1e6 <= first.result.objective_usd < 1e9
    assert runs["cost_usd_mn"].iloc[0] == pytest.approx(first.result.objective_usd / 1e6)
    assert _column_config(at.dataframe[0])["cost_usd_mn"]["type_config"]["format"] == "$%,.2fM"
    assert at.metric[0].value == fmt_usd(first.result.objective_usd)


def test_risk_comparison_shows_a_small_cost_in_usd_millions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch)
    goto(at, "risk")
    at.multiselect(key="risk_scenarios").set_value(["neutral"])
    at.run()
    at.button(key="risk_compare_btn").click()
    at.run()
    assert not at.exception
    shown = at.dataframe[0]
    obj = solve(load_dataset(TINY), SolveOptions(solver="highs")).objective_usd
    assert shown.value.loc[0, "cost_usd_mn"] == pytest.approx(obj / 1e6, rel=1e-9)
    cfg = _column_config(shown)["cost_usd_mn"]
    assert cfg["type_config"]["format"] == "$%,.2fM" and cfg["label"] == "discounted cost [USD]"
    assert "objective_usd_mn" not in shown.value  # a cost plan: objective = cost, once


def test_training_cluster_timeline_reads_in_quarters() -> None:
    """The bars span calendar time, but the axis and the hover name the plan's quarters."""
    periods = ["2025Q3", "2025Q4", "2026Q1", "2026Q2", "2026Q3", "2027Q1"]
    t = pd.DataFrame(
        {
            "customer": ["a", "a", "a", "b"],
            "site": ["s", "s", "s", "s"],
            "period": ["2025Q4", "2026Q1", "2026Q2", "2027Q1"],
            "it_mw": [10.0, 20.0, 30.0, 5.0],
            "meets_minimum": [True, True, True, False],
        }
    )
    fig = charts.training_clusters_timeline({"training_clusters": t}, periods)
    assert fig is not None
    assert list(fig.layout.xaxis.ticktext) == ["2026Q1", "2027Q1"]
    assert [pd.Timestamp(v) for v in fig.layout.xaxis.tickvals] == [
        pd.Timestamp("2026-01-01"),
        pd.Timestamp("2027-01-01"),
    ]
    bar = next(d for d in fig.data if d.name == "meets minimum")
    # customdata columns follow hover_data: from, to, mean, peak, quarters
    assert list(bar.customdata[0][:2]) == ["2025Q4", "2026Q2"]
    assert bar.customdata[0][2] == pytest.approx(20.0)
    assert "start=" not in bar.hovertemplate and "from=" in bar.hovertemplate
    assert "quarters below the minimum=" in bar.hovertemplate


def test_a_cluster_run_short_in_some_quarters_is_drawn_apart_from_one_never_at_size() -> None:
    """A run with one small quarter read like one that never reaches the minimum."""
    periods = ["2025Q1", "2025Q2", "2025Q3", "2025Q4"]
    t = pd.DataFrame(
        {
            "customer": ["a", "a", "a", "b", "c"],
            "site": ["s", "s", "s", "s", "s"],
            "period": ["2025Q1", "2025Q2", "2025Q3", "2025Q1", "2025Q4"],
            "it_mw": [10.0, 200.0, 300.0, 5.0, 150.0],
            "meets_minimum": [False, True, True, False, True],
        }
    )
    fig = charts.training_clusters_timeline({"training_clusters": t}, periods)
    assert fig is not None
    names = {d.name: list(d.y) for d in fig.data}
    assert names == {
        "below minimum in some quarters": ["a · s"],
        "below minimum in every quarter": ["b · s"],
        "meets minimum": ["c · s"],
    }
    # a customer without a minimum size "meets" nothing (bedrock read "meets minimum")
    t = t.assign(min_cluster_mw=[100.0] * 4 + [0.0], min_cluster_h100e=0.0)
    fig = charts.training_clusters_timeline({"training_clusters": t}, periods)
    assert fig is not None
    names = {d.name: list(d.y) for d in fig.data}
    assert names["no minimum size"] == ["c · s"] and "meets minimum" not in names


def test_the_money_tables_read_in_billions_or_millions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Money expander showed 16,186,706,293 where the guide promises $16.19B."""
    at = open_app(monkeypatch)
    goto(at, "plan")
    at.button(key="solve").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    money = next(d for d in at.dataframe if "term" in d.value.columns)
    cfg = _column_config(money)
    cost = next(c for c in money.value.columns if c.startswith("discounted_cost_usd"))
    assert cfg[cost]["label"] == "discounted cost [USD]"
    assert cfg[cost]["type_config"]["format"].startswith("$%,.2f")
    cash = next(c for c in money.value.columns if c.startswith("cash_usd"))
    assert cfg[cash]["label"] == "cash, undiscounted [USD]"
    costs = at.session_state["plan"].result.tables["costs"]
    div = {"_bn": 1e9, "_mn": 1e6}.get(cost[len("discounted_cost_usd") :], 1.0)
    assert money.value[cost].sum() * div == pytest.approx(costs["cost_usd"].sum())
    year = next(d for d in at.dataframe if "year" in d.value.columns)
    assert all(
        c == "year" or _column_config(year)[c]["label"].endswith("[USD]")
        for c in year.value.columns
    )
