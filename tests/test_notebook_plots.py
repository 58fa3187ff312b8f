"""plan.plot: every statistic draws as area, bar, line and heatmap with the expected traces."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import capacity_planner as cp
from optimizer.notebook import STATISTICS, Plan
from optimizer.notebook.plots import KINDS
from tests.conftest import TINY


@pytest.fixture(scope="module")
def plan() -> Plan:
    return cp.solve(TINY)


def _expected_groups(plan: Plan, name: str) -> list[str]:
    """The colour groups of the statistic's default frame with a non-zero first value."""
    frame = plan.statistics(name)
    value = next(iter(frame.attrs["units"]))
    keys = [c for c in frame.columns if c not in frame.attrs["units"] and c != "period"]
    # one name per distinct key value in the row (a supply limit's unit is its resource)
    label = frame[keys].astype(str).agg(lambda r: " · ".join(dict.fromkeys(r)), axis=1)
    nonzero = frame.groupby(label)[value].apply(lambda v: bool((v.abs() > 0).any()))
    return sorted(nonzero[nonzero].index)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", [*STATISTICS, "shadow_prices"])
def test_every_statistic_draws_one_trace_per_group(plan: Plan, name: str, kind: str) -> None:
    fig = getattr(plan.plot, name)(kind=kind)
    assert isinstance(fig, go.Figure)
    frame = plan.statistics(name)
    value = next(iter(frame.attrs["units"]))
    if kind == "heatmap":
        assert [t.type for t in fig.data] == ["heatmap"]
        z = np.asarray(fig.data[0].z, dtype=float)
        assert np.nansum(z) == pytest.approx(frame[value].astype(float).sum(), rel=1e-9, abs=1e-9)
        assert list(fig.data[0].x) == sorted(frame["period"].unique())
        return
    assert sorted(t.name for t in fig.data) == _expected_groups(plan, name)
    drawn = sum(np.nansum(np.asarray(t.y, dtype=float)) for t in fig.data)
    assert drawn == pytest.approx(frame[value].astype(float).sum(), rel=1e-9, abs=1e-9)
    from optimizer.notebook.plots import _label

    assert fig.layout.title.text.endswith(": " + _label(frame, value))


def test_capex_by_family_per_year_draws_the_family_bars(plan: Plan) -> None:
    fig = plan.plot.capex(groupby=["year", "family"], kind="bar")
    bars = {t.name: dict(zip(t.x, t.y, strict=True)) for t in fig.data}
    assert bars == {"trainium": {"2026": pytest.approx(1000 / 0.9 * 15_000.0, rel=1e-9)}}
    assert fig.layout.barmode == "stack"
    assert fig.layout.yaxis.title.text == "capex [USD]"


def test_another_value_column_and_an_unknown_kind(plan: Plan) -> None:
    fig = plan.plot.fleet(["period", "chip"], "line", value="it_mw")
    assert {t.name for t in fig.data} == {"h100", "trn2"}
    assert fig.layout.title.text == "fleet: IT [MW]"
    with pytest.raises(ValueError, match="kind 'pie' is not one of"):
        plan.plot.fleet(kind="pie")
    with pytest.raises(AttributeError, match="no statistic 'nonsense'"):
        _ = plan.plot.nonsense


@pytest.mark.slow
def test_every_statistic_draws_on_the_default_data(default_plan: Any) -> None:
    ds, result = default_plan("neutral")  # the session's solve of cp.solve(DEFAULT_DATA, ...)
    plan = Plan.from_result(result, ds, name="neutral")
    for name in [*STATISTICS, "shadow_prices"]:
        for kind in KINDS:
            fig = getattr(plan.plot, name)(kind=kind)
            assert len(fig.data) >= 1, (name, kind)
    fig = plan.plot.capex(groupby=["year", "family"], kind="bar")
    assert {t.name for t in fig.data} == {"n/a", "nvidia", "trainium"}  # n/a: buildings
    costs = plan.tables["costs"]
    cash_capex = costs.loc[costs["cash_kind"] == "capex", "cash_usd"].sum()
    drawn = sum(np.nansum(np.asarray(t.y, dtype=float)) for t in fig.data)
    assert drawn == pytest.approx(cash_capex, rel=1e-9)
    # every (period, term) of the costs table's cash capex, grid upgrades split by site
    want = costs[costs["cash_kind"] == "capex"].set_index(["period", "term"])["cash_usd"]
    got = plan.statistics.capex().set_index(["period", "term"])["capex_usd"]
    np.testing.assert_allclose(got.sort_index(), want.sort_index(), rtol=1e-12, atol=1e-3)
    decisions = plan.tables["power_decisions"]
    up = decisions[decisions["kind"] == "grid_upgrade"]
    flex = plan.tables["flexible_interconnection"]  # requested MW paid like normal ones
    paid = pd.concat(
        [
            (up["mw"] * up["capex_usd_per_mw"]).groupby(up["site"]).sum(),
            (flex["mw"] * flex["capex_usd_per_mw"]).groupby(flex["site"]).sum(),
        ]
    )
    assert len(flex) and paid.sum() == pytest.approx(
        costs.loc[costs["term"] == "grid_upgrade", "cash_usd"].sum(), rel=1e-12
    )
    by_site = plan.statistics.capex(["site"], where={"term": "grid_upgrade"}).set_index("site")
    for site, cash in paid.groupby(level=0).sum().items():
        assert by_site.loc[site, "capex_usd"] == pytest.approx(cash, rel=1e-12)


def test_a_plan_without_values_has_empty_statistics_and_says_why_it_draws_nothing() -> None:
    from optimizer import empty_tables

    empty = Plan(empty_tables(), name="x", status="infeasible")
    for name in STATISTICS:
        frame = empty.statistics(name)
        assert len(frame) == 0 and list(frame.attrs["units"]) == list(STATISTICS[name].units)
    with pytest.raises(ValueError, match="statistics.capex has no rows to draw"):
        empty.plot.capex(kind="bar")


def test_plot_methods_are_named_and_documented(plan: Plan) -> None:
    draw_capex = plan.plot.capex
    assert draw_capex.__name__ == "capex" and "statistics.capex" in (draw_capex.__doc__ or "")
    assert set(STATISTICS) <= set(dir(plan.plot))


def test_a_share_reads_as_a_percentage(plan: Plan) -> None:
    lines = plan.plot.utilisation(kind="line")
    assert lines.layout.yaxis.tickformat == ".0%"
    heat = plan.plot.utilisation(kind="heatmap")
    assert heat.data[0].colorbar.tickformat == ".0%"
    assert plan.plot.energy(kind="line").layout.yaxis.tickformat is None  # MWh: as is


def test_calibration_is_a_table_not_a_chart(plan: Plan) -> None:
    assert "calibration" not in dir(plan.plot)
    with pytest.raises(AttributeError, match="no statistic 'calibration'"):
        _ = plan.plot.calibration


def test_a_key_repeated_in_a_row_is_named_once_in_the_legend(plan: Plan) -> None:
    """A supply limit's unit is its resource: its line reads 'cowos_wafers', not
    'cowos_wafers · cowos_wafers'; a site limit keeps its unit ('grid · MW')."""
    names = {t.name for t in plan.plot.utilisation(kind="line").data}
    assert "cowos_wafers" in names and "cowos_wafers · cowos_wafers" not in names
    assert "grid · MW" in names


def test_a_share_is_labelled_in_percent_as_its_ticks_read() -> None:
    """'utilisation [share]' sat beside ticks of 20%, 40% ..."""
    import pandas as pd

    from optimizer.notebook.plots import _label

    frame = pd.DataFrame({"utilisation": [0.5], "it_mw": [1.0]})
    frame.attrs["units"] = {"utilisation": "share", "it_mw": "MW"}
    assert _label(frame, "utilisation") == "utilisation [%]"
    assert _label(frame, "it_mw") == "IT [MW]"  # it read "it_mw [MW]"
    frame.attrs["units"] = {"energy_mwh": "MWh", "served_share": "share", "cost": "USD"}
    assert _label(frame, "energy_mwh") == "energy [MWh]"
    assert _label(frame, "served_share") == "served share [%]"
    assert _label(frame, "cost") == "cost [USD]"


def test_a_total_draws_as_a_heatmap_and_a_key_is_no_value() -> None:
    """A total's heatmap was [[nan]] (its row and x columns were one); value='period'
    drew the quarters as the value."""
    import capacity_planner as cp
    from tests.conftest import TINY

    p = cp.solve(TINY)
    total = float(p.statistics.capex(groupby=[])["capex_usd"].iloc[0])
    z = p.plot.capex(groupby=[], kind="heatmap").data[0].z
    assert [[float(v) for v in row] for row in z] == [[pytest.approx(total)]]
    with pytest.raises(ValueError, match="value 'period' is not a value column"):
        p.plot.capex(value="period")


def test_calibration_is_not_drawn_and_says_where_to_read_it() -> None:
    """plot.statistic('calibration') said "value None is not a value column of []"."""
    import capacity_planner as cp
    from tests.conftest import TINY

    with pytest.raises(ValueError, match="calibration is a table of record against plan"):
        cp.solve(TINY).plot.statistic("calibration")
