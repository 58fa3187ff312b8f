"""plan.statistics: each statistic equals the report table it summarises.

The tiny dataset (tests/data/tiny_valid): one site dc-1 (region NO), two quarters,
chips h100 (nvidia, 40,000 USD, 1,000 in the initial fleet) and trn2 (trainium,
15,000 USD), one customer acme asking 1,500 H100e of training in 2026Q1 and 800 of
inference in 2026Q2. The optimum installs trn2 only: 961.54 chips in 2026Q1 and
149.57 more in 2026Q2 (1,111.11 in service), so the chip capex in cash is
1,111.11 x 15,000 = 16,666,666.67 USD.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import capacity_planner as cp
from optimizer.notebook import STATISTICS, Plan, Statistics
from optimizer.notebook.keys import REPORT_KEYS
from tests.conftest import ROOT, TINY

TRN2_CHIPS = 1000 / 0.9  # 1,111.11 trn2 in service in 2026Q2 (1 MW of Trainium at 0.9 kW)


@pytest.fixture(scope="module")
def plan() -> Plan:
    return cp.solve(TINY)


def test_the_fixture_plan_is_the_hand_checked_optimum(plan: Plan) -> None:
    assert plan.status == "optimal"
    fleet = plan.tables["fleet"].set_index(["chip", "period"])["fleet_chips"]
    assert fleet[("trn2", "2026Q2")] == pytest.approx(TRN2_CHIPS, rel=1e-9)
    assert fleet[("h100", "2026Q2")] == pytest.approx(1000.0)


def test_capex_by_family_and_year_is_the_installs_times_the_unit_capex(plan: Plan) -> None:
    capex = plan.statistics.capex(groupby=["year", "family"])
    assert list(capex.columns) == ["year", "family", "capex_usd"]
    by_family = capex.set_index("family")["capex_usd"]
    assert by_family["trainium"] == pytest.approx(TRN2_CHIPS * 15_000.0, rel=1e-9)
    assert by_family["nvidia"] == 0.0  # the h100 fleet is initial: sunk, no cash
    assert set(capex["year"]) == {2026}
    assert capex.attrs["units"] == {"capex_usd": "USD"}


def test_capex_by_period_and_term_equals_the_cash_of_the_costs_table(plan: Plan) -> None:
    costs = plan.tables["costs"]
    want = costs[costs["cash_kind"] == "capex"].set_index(["period", "term"])["cash_usd"]
    got = plan.statistics.capex().set_index(["period", "term"])["capex_usd"]
    pd.testing.assert_series_equal(
        got.sort_index(), want.sort_index().rename("capex_usd"), check_exact=False, rtol=1e-12
    )


def test_costs_sum_to_the_objective_and_cash_to_the_costs_table(plan: Plan) -> None:
    assert plan.statistics.costs(groupby=[])["cost_usd"].iloc[0] == pytest.approx(
        plan.objective_usd, rel=1e-12
    )
    cash = plan.statistics.cash(groupby="cash_kind").set_index("cash_kind")["cash_usd"]
    assert cash["capex"] == pytest.approx(TRN2_CHIPS * 15_000.0, rel=1e-9)
    # energy billed: facility MWh x 50 USD/MWh, 5,407.02 + 3,107.98 MWh
    assert cash["opex"] == pytest.approx((5407.02 + 3107.9776) * 50.0, rel=1e-9)
    opex = plan.statistics.opex(groupby="term").set_index("term")["opex_usd"]
    assert opex["energy"] == pytest.approx(cash["opex"], rel=1e-12)


def test_energy_carbon_and_water_equal_the_energy_table(plan: Plan) -> None:
    e = plan.tables["energy"].set_index(["site", "period"])
    energy = plan.statistics.energy(groupby=["site", "period"]).set_index(["site", "period"])
    carbon = plan.statistics.carbon(groupby=["site", "period"]).set_index(["site", "period"])
    water = plan.statistics.water(groupby=["site", "period"]).set_index(["site", "period"])
    np.testing.assert_allclose(energy["energy_mwh"], e["facility_mwh"], rtol=1e-12)
    np.testing.assert_allclose(carbon["carbon_t"], e["carbon_t"], rtol=1e-12)
    np.testing.assert_allclose(water["water_m3"], e["water_m3"], rtol=1e-12)
    # a flow: the year is the sum of its quarters (grid energy at 0.02 t/MWh)
    year = plan.statistics.carbon(groupby=["year", "region"])
    assert year["region"].tolist() == ["NO"]
    assert year["carbon_t"].iloc[0] == pytest.approx((5407.02 + 3107.9776) * 0.02, rel=1e-9)


def test_fleet_is_a_stock_the_year_is_its_last_quarter(plan: Plan) -> None:
    quarters = plan.statistics.fleet(groupby=["period", "vendor"])
    assert len(quarters) == 4
    year = plan.statistics.fleet(groupby=["year", "vendor"]).set_index("vendor")
    assert year.loc["aws", "fleet_chips"] == pytest.approx(TRN2_CHIPS, rel=1e-9)
    assert year.loc["nvidia", "fleet_chips"] == pytest.approx(1000.0)
    assert year.loc["aws", "it_mw"] == pytest.approx(1.0, rel=1e-9)  # 1,111.11 x 0.9 kW


def test_h100e_in_service_is_the_served_demand(plan: Plan) -> None:
    h = plan.statistics.h100e(groupby=["period", "workload"]).set_index("period")["h100e"]
    d = plan.statistics.demand(groupby="period").set_index("period")
    np.testing.assert_allclose(h, d["served_h100e"], rtol=1e-9)
    assert d["served_h100e"].tolist() == pytest.approx([1500.0, 800.0])
    assert d["unmet_h100e"].tolist() == [0.0, 0.0]


def test_utilisation_keeps_units_apart_and_equals_the_site_table(plan: Plan) -> None:
    u = plan.statistics.utilisation(groupby=["site", "period", "limit"])
    assert list(u.columns) == ["site", "period", "limit", "unit", "utilisation", "used", "capacity"]
    site = plan.tables["site_utilisation"].set_index(["site", "period", "limit"])
    mine = u[u["site"] == "dc-1"].set_index(["site", "period", "limit"])
    np.testing.assert_allclose(mine["utilisation"], site.loc[mine.index, "utilisation"], rtol=1e-9)
    cowos = u[u["limit"] == "cowos_wafers"]
    assert cowos["site"].tolist() == ["n/a", "n/a"]
    assert cowos["utilisation"].iloc[0] == pytest.approx(cowos["used"].iloc[0] / 1000.0)
    # all site limits of a quarter: MW and m3 stay apart, grouped by unit
    mixed = plan.statistics.utilisation(groupby="period")
    assert set(mixed["unit"]) == {"MW", "m3", "cowos_wafers"}


def test_shadow_prices_are_the_largest_magnitude_per_family(plan: Plan) -> None:
    s = plan.statistics.shadow_prices().set_index(["family", "period"])
    dem = plan.tables["demand"].set_index("period")["shadow_price_usd_per_h100e"]
    got = s.loc[("demand_balance", "2026Q1"), "shadow_price_abs_max"]
    assert got == pytest.approx(abs(dem["2026Q1"]), rel=1e-12)
    assert s.loc[("demand_balance", "2026Q1"), "unit"] == "USD/H100e"


def test_calibration_is_the_calibration_table(plan: Plan) -> None:
    pd.testing.assert_frame_equal(plan.statistics.calibration(), plan.tables["calibration"])


def test_a_key_the_statistic_lacks_is_refused_with_its_keys(plan: Plan) -> None:
    with pytest.raises(ValueError, match=r"cannot group by \['customer'\].*keys are"):
        plan.statistics.energy(groupby=["customer"])


def test_where_keeps_rows_before_grouping(plan: Plan) -> None:
    q1 = plan.statistics.energy(groupby=[], where={"period": "2026Q1"})
    assert q1["energy_mwh"].iloc[0] == pytest.approx(5407.02)


def test_every_statistic_has_a_method_and_a_spec() -> None:
    methods = {n for n in dir(Statistics) if not n.startswith("_")} - {"names"}
    assert methods == {*STATISTICS, "shadow_prices", "calibration"}


def test_the_python_guide_lists_every_statistic_and_key() -> None:
    section = (ROOT / "docs" / "guide" / "python.md").read_text(encoding="utf-8")
    listed = section.split("`plan.statistics` has", 1)[1].split("; each sums", 1)[0]
    assert set(re.findall(r"`(\w+)`", listed)) - {"n/a", "unit"} == {
        *STATISTICS,
        "shadow_prices",
        "calibration",
    }
    keys = section.split("`groupby=` takes `", 1)[1].split("`", 1)[0]
    assert keys.split(", ") == [*REPORT_KEYS, "year"]


def test_every_statistic_is_labelled_with_units(plan: Plan) -> None:
    for name in STATISTICS:
        frame = plan.statistics(name)
        units = frame.attrs["units"]
        assert list(units) == list(STATISTICS[name].units)
        assert set(units) <= set(frame.columns)
        assert frame.attrs["statistic"] == name


def test_revenue_is_price_times_served_and_the_margin_objectives_term() -> None:
    """Margin objective on the tiny data: acme pays 5,000 USD per H100e-quarter of
    training (1,500 in 2026Q1, discount 1.0) and 6,000 of inference (800 in 2026Q2,
    discount 0.98); both are served in full, so revenue = 7,500,000 + 4,704,000."""
    plan = cp.solve(TINY, options=cp.SolveOptions(objective="margin"))
    assert plan.status == "optimal"
    by_row = plan.statistics.revenue(groupby=["customer", "workload", "period"])
    got = by_row.set_index("workload")
    assert got.loc["training", "undiscounted_revenue_usd"] == pytest.approx(1500 * 5000.0)
    assert got.loc["inference", "undiscounted_revenue_usd"] == pytest.approx(800 * 6000.0)
    assert got.loc["inference", "revenue_usd"] == pytest.approx(800 * 6000.0 * 0.98)
    assert by_row["unserved_revenue_usd"].sum() == pytest.approx(0.0, abs=1e-6)
    total = plan.statistics.revenue(groupby=[])["revenue_usd"].iloc[0]
    assert total == pytest.approx(1500 * 5000.0 + 800 * 6000.0 * 0.98, rel=1e-9)
    term = plan.statistics.costs(groupby="term").set_index("term")["cost_usd"]["revenue"]
    assert term == pytest.approx(-total, rel=1e-9)
    assert plan.result.revenue_usd == pytest.approx(total, rel=1e-9)


def test_capex_without_the_data_names_both_readers_and_the_cash_statistic(plan: Plan) -> None:
    """read_run(folder).statistics.capex(...) without data said to use read_report."""
    bare = Plan(plan.tables, name="bare")  # the tables alone, as read without data=
    with pytest.raises(ValueError) as ei:
        bare.statistics.capex(groupby="period")
    text = str(ei.value)
    assert "read_run(path, data=DATA_DIR)" in text and "read_report(path, data=DATA_DIR)" in text
    cash = bare.statistics.cash(groupby=["period", "cash_kind"])
    want = plan.statistics.capex(groupby="period")["capex_usd"].sum()
    got = cash.loc[cash["cash_kind"] == "capex", "cash_usd"].sum()
    assert got == pytest.approx(want, rel=1e-9)
