"""Calibration: the public-record table, the metric formulas and the report table.

The hand-solvable ``lp_one`` dataset (one site, one quarter 2026Q1, 500 H100e of
training demand for customer ``a`` on chip ``g1`` of family ``nv``, 1 kW per chip,
power factor 1, 2,000 h, air PUE 1.5, air WUE 2.0 L/kWh, 1 MW of initial capacity)
installs exactly 500 chips, so every metric has a value worked out by hand.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from capacity import load_dataset
from capacity.dataset import Dataset
from capacity.validation import DataValidationError
from optimizer import Status, solve
from optimizer.output.parquet_tables import RESULT_SCHEMAS
from optimizer.output.report import write_report
from optimizer.output.summary import summarize
from optimizer.output.summary_text import calibration_headline
from optimizer.plan.calibration import (
    CALIBRATION_COLUMNS,
    METRICS,
    calibration_table,
    parse_scope,
    worst_rows,
)
from tests.conftest import DEFAULT_DATA
from tests.lp_helpers import LP_DATA

URL = "https://example.org/report"


def _record(rows: list[dict[str, object]]) -> pd.DataFrame:
    base = {
        "source": URL,
        "note": "",
        "plan_share": 1.0,
        "matchable": "yes",
        "reason": "",
        "tests": "what the row tests",
    }
    return pd.DataFrame([{**base, **r} for r in rows])


def _row(metric: str, scope: str, value: float, unit: str, lo: float, hi: float, **kw: object):
    return {
        "metric": metric,
        "scope": scope,
        "period": kw.pop("period", "2026Q1"),
        "value": value,
        "unit": unit,
        "low": lo,
        "high": hi,
        **kw,
    }


@pytest.fixture(scope="module")
def one() -> Dataset:
    return load_dataset(LP_DATA / "lp_one")


@pytest.fixture(scope="module")
def one_result(one: Dataset):
    res = solve(one)
    assert res.status == Status.optimal
    return res


def test_hand_values_of_every_metric(one: Dataset, one_result) -> None:
    rec = _record(
        [
            _row("chips_in_service", "chip:g1", 500, "chips", 400, 600),
            _row("chips_in_service", "family:nv/site:s1", 500, "chips", 400, 600),
            _row("chips_serving", "customer:a/workload:training", 500, "chips", 500, 500),
            _row("fleet_h100e", "fleet", 500, "H100e", 0, 1000),
            _row("site_it_capacity_mw", "site:s1", 1, "MW", 1, 1),
            _row("it_mw_in_use", "vendor:v", 0.5, "MW", 0.4, 0.6),
            _row("served_share_on_family", "customer:a/family:nv", 1, "share", 0.9, 1),
            _row("cowos_wafers_per_month", "fleet", 0, "wafers/month", 0, 0),
            # 500 chips of 1 kW serving customer a: 0.5 MW; all 500 installed in the
            # eight quarters to 2026Q1 and all of them sold (assigned share 1)
            _row("it_mw_serving", "customer:a/family:nv", 0.5, "MW", 0.5, 0.5),
            _row("chips_installed_two_years", "chip:g1", 500, "chips", 500, 500),
            _row("assigned_share", "fleet", 1, "share", 1, 1),
            # a value may list alternatives joined by '|' (every name must exist: the
            # validation rejects a scope naming what the data do not hold)
            _row("chips_serving", "customer:a/workload:training|inference", 500, "chips", 500, 500),
            # 500 chips but the record says 1,000: outside, ratio 0.5
            _row("chips_in_service", "fleet", 1000, "chips", 900, 1100),
        ]
    )
    cal = calibration_table(one_result.tables, one.replace(public_record=rec))
    assert list(cal.columns) == list(CALIBRATION_COLUMNS)
    assert cal["plan_value"].tolist() == pytest.approx(
        [500, 500, 500, 500, 1, 0.5, 1, 0, 0.5, 500, 1, 500, 500]
    )
    assert cal["inside_band"].tolist() == [True] * 12 + [False]
    assert cal["matchable"].all()
    assert cal["ratio"].iloc[-1] == pytest.approx(0.5)
    assert pd.isna(cal["ratio"].iloc[7])  # a zero record has no ratio
    assert (cal["reason"] == "").all()


def test_plan_share_divides_the_metric(one: Dataset, one_result) -> None:
    # the planner holds 10% of a 5,000-chip world figure: 500 / 0.1 = 5,000
    rec = _record([_row("chips_in_service", "fleet", 5000, "chips", 5000, 5000, plan_share=0.1)])
    cal = calibration_table(one_result.tables, one.replace(public_record=rec))
    assert cal["plan_value"].iloc[0] == pytest.approx(5000)
    assert bool(cal["inside_band"].iloc[0])


def test_rows_the_model_cannot_match_say_why(one: Dataset, one_result) -> None:
    rec = _record(
        [
            _row("chips_in_service", "family:nv", 1, "chips", 0, 2, period="2025Q1"),
            _row("fleet_pue_year", "fleet", 1.5, "ratio", 1, 2),
            _row("chips_in_service", "customer:a", 1, "chips", 0, 2),
            _row("chips_in_service", "chip:g1", 500, "chips", 0, 600, matchable="no", reason="x"),
        ]
    )
    cal = calibration_table(one_result.tables, one.replace(public_record=rec))
    assert not cal["matchable"].any()
    reasons = cal["reason"].tolist()
    assert "outside the plan's horizon" in reasons[0]
    assert "starts before the plan's horizon" in reasons[1]
    assert "takes no customer filter" in reasons[2]
    assert reasons[3] == "x"
    # a row marked not matchable still shows the plan's value
    assert cal["plan_value"].iloc[3] == pytest.approx(500)
    # a scope the grammar cannot read never reaches the table: it is a validation
    # error naming the row and column (it was an unscored row before)
    bad = _record([_row("chips_in_service", "planet:earth", 1, "chips", 0, 2)])
    with pytest.raises(DataValidationError) as exc:
        one.replace(public_record=bad)
    (f,) = exc.value.errors
    assert (f.row, f.column, f.value) == (2, "scope", "planet:earth")
    assert "scope filter 'planet' is unknown" in f.message


def test_an_input_check_is_shown_but_never_scored(one: Dataset, one_result) -> None:
    rec = _record(
        [
            _row("cowos_wafers_per_month", "fleet", 0, "wafers/month", 0, 0, kind="input_check"),
            _row("chips_in_service", "fleet", 500, "chips", 500, 500, kind="plan"),
        ]
    )
    cal = calibration_table(one_result.tables, one.replace(public_record=rec))
    assert cal["kind"].tolist() == ["input_check", "plan"]
    assert cal["matchable"].tolist() == [False, True]
    assert cal["inside_band"].tolist() == [True, True]
    assert cal["reason"].iloc[0] == "input check, not scored: what the row tests"
    assert cal["tests"].tolist() == ["what the row tests"] * 2
    assert calibration_headline(cal) == (
        "Calibration: 1 of 1 scored rows inside their band (1 input check)"
    )


def test_annual_metrics_over_four_quarters(default_plan) -> None:  # noqa: ANN001
    ds, res = default_plan("neutral")  # the neutral scenario is the base data
    e = res.tables["energy"]
    year = e[e["period"].isin(["2025Q1", "2025Q2", "2025Q3", "2025Q4"])]
    rec = _record(
        [
            _row("fleet_pue_year", "fleet", 1.2, "ratio", 1, 2, period="2025Q4"),
            _row("fleet_wue_year", "fleet", 0.2, "L/kWh", 0, 5, period="2025Q4"),
            _row("it_mw_added_year", "site:west_texas", 1, "MW", 0, 1e6, period="2025Q4"),
            _row(
                "supply_used_share_year", "resource:hbm_stacks", 1, "share", 0, 1, period="2025Q4"
            ),
        ]
    )
    cal = calibration_table(res.tables, ds.replace(public_record=rec))
    su = res.tables["supply_utilisation"]
    hbm = su[(su["resource"] == "hbm_stacks") & su["period"].str.startswith("2025")]
    assert cal["plan_value"].iloc[3] == pytest.approx(hbm["used"].sum() / hbm["capacity"].sum())
    assert cal["plan_value"].iloc[0] == pytest.approx(
        year["facility_mwh"].sum() / year["it_mwh"].sum()
    )
    assert cal["plan_value"].iloc[1] == pytest.approx(year["water_m3"].sum() / year["it_mwh"].sum())
    bo = res.tables["build_out"]
    built = bo[(bo["site"] == "west_texas") & bo["period"].str.startswith("2025")]["build_mw"]
    assert cal["plan_value"].iloc[2] == pytest.approx(built.sum())


def test_parse_scope() -> None:
    assert parse_scope("fleet") == {}
    assert parse_scope("customer:anthropic/chip:trainium2") == {
        "customer": "anthropic",
        "chip": "trainium2",
    }
    with pytest.raises(ValueError, match="not name:value"):
        parse_scope("anthropic")


@pytest.mark.parametrize(
    ("change", "column", "message"),
    [
        ({"source": "assumption: a guess"}, "source", "public address"),
        ({"low": 2.0}, "low", "band low..high must hold the value 1"),
        ({"matchable": "no"}, "reason", "must say why"),
        (
            {"metric": "chips_in_servce"},
            "metric",
            "unknown metric. Did you mean 'chips_in_service'?",
        ),
        ({"unit": "MW"}, "unit", "metric chips_in_service is measured in 'chips'"),
        ({"source": "data/chips.csv"}, "source", "public address"),
    ],
)
def test_bad_public_record_rows_are_errors(
    one: Dataset, change: dict[str, object], column: str, message: str
) -> None:
    rec = _record([{**_row("chips_in_service", "fleet", 1, "chips", 0, 2), **change}])
    with pytest.raises(DataValidationError) as err:
        one.replace(public_record=rec.astype(str))
    found = [f for f in err.value.findings if f.file == "public_record.csv"]
    assert found and found[0].row == 2 and found[0].column == column
    assert message in found[0].message


def test_the_record_metrics_are_the_calibration_metrics() -> None:
    """capacity validates metric names and units against the formulas of the plan."""
    from capacity.tables_record import RECORD_METRICS

    assert RECORD_METRICS == {name: m.unit for name, m in METRICS.items()}


def test_default_public_record_is_complete() -> None:
    ds = load_dataset(DEFAULT_DATA)
    rec = ds.table("public_record")
    assert len(rec) >= 15
    assert set(rec["metric"]) <= set(METRICS)
    assert (rec["tests"].str.len() > 20).all()  # every row says what it tests
    # a row that restates an input is marked so, and the zero rows are such rows
    zero = rec[rec["value"].astype(float) == 0]
    assert (zero["kind"] == "input_check").all()
    for r in rec.itertuples():
        assert r.unit == METRICS[r.metric].unit, r
        assert str(r.source).startswith("https://"), r
        assert "github.com" not in str(r.source)
    # weighted to the recent past: 2025 and early 2026
    recent = rec["period"].astype(str).str[:4].isin(["2025", "2026"])
    assert recent.mean() >= 0.8


def test_report_and_summary_carry_calibration(one: Dataset, tmp_path: Path) -> None:
    rec = _record(
        [
            _row("chips_in_service", "fleet", 500, "chips", 450, 550),
            _row("chips_serving", "fleet", 2000, "chips", 1500, 2500),
            _row("fleet_h100e", "fleet", 400, "H100e", 300, 450, matchable="no", reason="later"),
        ]
    )
    res = solve(one.replace(public_record=rec))
    cal = res.tables["calibration"]
    assert cal["inside_band"].tolist() == [True, False, False]
    s = summarize(res, scenario="base")
    assert calibration_headline(s.calibration) == (
        "Calibration: 1 of 2 scored rows inside their band (1 more not matchable yet)"
    )
    assert worst_rows(s.calibration, 3)["metric"].tolist() == ["chips_serving", "chips_in_service"]
    run = write_report(res, tmp_path, scenario="base", run_id="r1")
    table = pq.read_table(run / "scenario=base" / "calibration.parquet")
    assert table.schema.equals(RESULT_SCHEMAS["calibration"], check_metadata=False)
    assert table.num_rows == 3
