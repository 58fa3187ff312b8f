"""read_report / read_run give plans with the same statistics; compare and collections."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import capacity_planner as cp
from optimizer.notebook import STATISTICS, PlanCollection
from optimizer.output.atomic import ReportError
from optimizer.output.report import write_report
from tests.conftest import TINY


@pytest.fixture(scope="module")
def plans() -> PlanCollection:
    """The tiny data's neutral plan and a plan with its demand scaled by 1.2 ("squeeze")."""
    neutral = cp.load(TINY, "neutral")
    demand = neutral.table("demand")
    squeeze = neutral.replace(
        scenario="squeeze", demand=demand.assign(demand_h100e=demand["demand_h100e"] * 1.2)
    )
    return PlanCollection({"neutral": cp.solve(neutral), "squeeze": cp.solve(squeeze)})


def test_solve_scenarios_solves_each_named_scenario() -> None:
    both = cp.solve_scenarios(TINY, ["neutral", "squeeze"])
    assert list(both) == ["neutral", "squeeze"]
    assert [p.name for p in both.values()] == ["neutral", "squeeze"]
    assert all(p.status == "optimal" for p in both.values())


@pytest.fixture(scope="module")
def run_dir(plans: PlanCollection, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reports")
    run = write_report(plans["neutral"].result, out, scenario="neutral", run_id="r1")
    write_report(plans["squeeze"].result, out, scenario="squeeze", run_id="r1")
    return run


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(
        a.reset_index(drop=True), b.reset_index(drop=True), check_dtype=False, rtol=1e-12
    )


def test_a_report_read_back_has_the_same_statistics(plans: PlanCollection, run_dir: Path) -> None:
    fresh = plans["neutral"]
    back = cp.read_report(run_dir / "scenario=neutral", data=TINY)
    assert back.name == "neutral" and back.status == "optimal"
    assert back.objective_usd == pytest.approx(fresh.objective_usd, rel=1e-12)
    for name in STATISTICS:
        _same(back.statistics(name), fresh.statistics(name))
    _same(
        back.statistics.capex(groupby=["year", "family", "region"]),
        fresh.statistics.capex(groupby=["year", "family", "region"]),
    )
    _same(back.statistics.shadow_prices(), fresh.statistics.shadow_prices())


def test_without_the_data_a_derived_key_names_what_is_missing(run_dir: Path) -> None:
    back = cp.read_report(run_dir / "scenario=squeeze")
    assert back.statistics.energy(groupby=[])["energy_mwh"].iloc[0] > 0  # table keys work
    with pytest.raises(ValueError, match=r"grouping by 'family' needs the dataset's chips"):
        back.statistics.fleet(groupby=["family"])
    with pytest.raises(ValueError, match="read_report\\(path, data=DATA_DIR\\)"):
        back.statistics.capex()


def test_a_run_folder_is_a_collection_and_read_report_refuses_it(run_dir: Path) -> None:
    with pytest.raises(ReportError, match="holds 2 scenarios \\(neutral, squeeze\\): use read_run"):
        cp.read_report(run_dir)
    back = cp.read_run(run_dir, data=TINY)
    assert list(back) == ["neutral", "squeeze"]


def test_a_run_folder_with_run_level_tables_is_still_a_run(run_dir: Path, tmp_path: Path) -> None:
    """An alternatives run folder holds alternatives_ranges.parquet beside its scenario
    folders: read_report read it as one scenario's folder, an empty Plan."""
    import shutil

    import pandas as pd

    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    pd.DataFrame({"quantity": ["fleet"], "min": [1.0]}).to_parquet(run / "ranges.parquet")
    with pytest.raises(ReportError, match="holds 2 scenarios \\(neutral, squeeze\\): use read_run"):
        cp.read_report(run)


def test_collection_statistics_group_by_scenario(plans: PlanCollection, run_dir: Path) -> None:
    for collection in (plans, cp.read_run(run_dir, data=TINY)):
        capex = collection.statistics.capex(groupby="scenario").set_index("scenario")
        for name in ("neutral", "squeeze"):
            total = plans[name].statistics.capex(groupby=[])["capex_usd"].iloc[0]
            assert capex.loc[name, "capex_usd"] == pytest.approx(total, rel=1e-12)
        both = collection.statistics.costs(groupby=[])["cost_usd"].iloc[0]
        assert both == pytest.approx(
            plans["neutral"].objective_usd + plans["squeeze"].objective_usd, rel=1e-12
        )
    default = plans.statistics.demand()
    assert list(default.columns[:3]) == ["scenario", "period", "customer"]
    fig = plans.plot.capex(groupby=["scenario"], kind="bar")
    assert len(fig.data) == 1 and list(fig.data[0].x) == ["neutral", "squeeze"]
    only = plans.statistics.capex(groupby=[], where={"scenario": "squeeze"})
    assert only["capex_usd"].iloc[0] == pytest.approx(fig.data[0].y[1], rel=1e-12)


def test_compare_puts_two_plans_side_by_side(plans: PlanCollection) -> None:
    a, b = plans["neutral"], plans["squeeze"]
    assert b.objective_usd > a.objective_usd * 1.05  # 20% more demand costs more
    diff = a.compare(b, "costs", groupby="term").set_index("term")
    assert list(diff.columns) == ["cost_usd_neutral", "cost_usd_squeeze", "cost_usd_change"]
    assert diff["cost_usd_neutral"].sum() == pytest.approx(a.objective_usd, rel=1e-12)
    assert diff["cost_usd_change"].sum() == pytest.approx(
        b.objective_usd - a.objective_usd, rel=1e-9
    )
