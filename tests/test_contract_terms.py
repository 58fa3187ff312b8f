"""Contract terms on hand-sized data: take-or-pay, reservations, SLA tiers, escalators.

tests/data/lp_one: one quarter, customer ``a`` trains 500 H100e at 6,000 USD per
H100e-quarter; a serving chip (1 H100e, 1 kW) costs 1,300 USD a quarter (rent 1,000 +
energy 300), an idle one 1,150 (rent + 150 at the 0.5 idle factor). tests/data/lp_two
adds 2026Q2 with 300 H100e of demand (discount factor 1 in both quarters).
"""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from capacity.dataset import load_dataset
from capacity.validation import DataValidationError
from optimizer import SolveOptions, Status, solve
from tests.lp_helpers import LP_DATA, edit

MARGIN = SolveOptions(objective="margin")


def terms(**cells: object) -> pd.DataFrame:
    """One contract row of customer a's training from 2026Q1 (defaults: no term)."""
    row = {
        "customer": "a",
        "workload": "training",
        "from_period": "2026Q1",
        "to_period": "",
        "price_usd_per_h100e_period": float("nan"),
        "price_escalator_per_period": 0.0,
        "take_or_pay_h100e": 0.0,
        "reservation_h100e": 0.0,
        "reservation_fee_usd_per_h100e_period": 0.0,
        "sla_served_share": 0.0,
        "sla_credit_usd_per_h100e": 0.0,
    }
    row.update(cells)
    return pd.DataFrame([row])


@pytest.fixture(scope="module")
def one():
    return load_dataset(LP_DATA / "lp_one")


@pytest.fixture(scope="module")
def two():
    return load_dataset(LP_DATA / "lp_two")


def term(r, name: str) -> float:
    costs = r.tables["costs"]
    return float(costs.loc[costs["term"] == name, "cost_usd"].sum())


def quarter(r, period: str):
    c = r.tables["contracts"]
    return c[c["period"] == period].iloc[0]


def test_take_or_pay_floor_is_billed_when_unused(two):
    # floor 500 in both quarters; 2026Q2 asks 300: the customer pays 500 x 6,000 anyway.
    # Holding the 200 unused H100e costs 150 USD each (full draw above idle on chips
    # that are installed anyway), not holding them refunds 6,000: the plan holds them.
    r = solve(two.replace(contract_terms=terms(take_or_pay_h100e=500.0)), MARGIN)
    assert r.status == Status.optimal and not len(r.violations)
    q2 = quarter(r, "2026Q2")
    assert q2["take_or_pay_unused_h100e"] == pytest.approx(200.0)
    assert q2["held_h100e"] == pytest.approx(500.0)
    # the demand table serves the 300 asked (it said 500, a served share of 1.67)
    dm = r.tables["demand"].set_index("period")
    assert dm.loc["2026Q2", "served_h100e"] == pytest.approx(300.0)
    assert dm.loc["2026Q2", "served_share"] == pytest.approx(1.0)
    assert q2["take_or_pay_short_h100e"] == pytest.approx(0.0, abs=1e-6)
    assert q2["billed_usd"] == pytest.approx(500 * 6000.0)
    assert term(r, "take_or_pay_billing") == pytest.approx(-200 * 6000.0)
    assert term(r, "take_or_pay_refund") == pytest.approx(0.0, abs=1e-6)
    # margin by hand: each quarter bills 3.0M and costs 500 x 1,300
    assert r.revenue_usd == pytest.approx(6e6, rel=1e-9)
    assert r.margin_usd == pytest.approx(2 * (3e6 - 650_000.0), rel=1e-6)
    base = solve(two, MARGIN)  # without the contract: 3.53M (2026Q2 bills 300 only)
    assert base.margin_usd == pytest.approx(2.35e6 + 1.18e6, rel=1e-6)


def test_take_or_pay_floor_not_held_is_refunded(two):
    # 0.4 MW and no build: 400 chips. 2026Q1: 400 served + 100 unmet cover the floor;
    # 2026Q2: 400 held of the 500 floor, the 100 not held are refunded at 6,000.
    small = edit(two, "sites", initial_it_mw=0.4, max_build_mw_per_period=0.0)
    r = solve(small.replace(contract_terms=terms(take_or_pay_h100e=500.0)), MARGIN)
    assert r.status == Status.optimal and not len(r.violations)
    assert quarter(r, "2026Q1")["take_or_pay_short_h100e"] == pytest.approx(0.0, abs=1e-6)
    q2 = quarter(r, "2026Q2")
    # the 300 asked are served: none unmet (the solver could call 100 of the refund
    # unmet demand, at the same cost, and report 100 unmet of a demand served in full)
    dm = r.tables["demand"].set_index("period")
    assert dm.loc["2026Q2", "unmet_h100e"] == pytest.approx(0.0, abs=1e-6)
    assert q2["take_or_pay_short_h100e"] == pytest.approx(100.0)
    assert q2["credits_usd"] == pytest.approx(100 * 6000.0)
    assert term(r, "take_or_pay_refund") == pytest.approx(100 * 6000.0)
    # one more H100e of floor is one more H100e refunded (+6,000) and one more billed
    # (-6,000): d(objective)/d(floor) = 0. The raw row dual, 6,000, was reported.
    assert q2["shadow_price_take_or_pay_usd_per_h100e"] == pytest.approx(0.0, abs=1e-6)


def _objective(ds, floor: float) -> float:
    r = solve(ds.replace(contract_terms=terms(take_or_pay_h100e=floor)), MARGIN)
    assert r.status == Status.optimal and not len(r.violations)
    return float(r.objective_usd)


def test_take_or_pay_and_demand_duals_above_the_floor_are_finite_differences(two):
    """2026Q1 asks 600 (above the floor), 2026Q2 300 (below it), floor 500, all held.

    One more H100e of floor costs its holding in 2026Q2 and bills 6,000 more; one more
    H100e of 2026Q2 demand earns 6,000 and bills 6,000 less unused (the same plan).
    The shadow prices said +holding and -6,000: the billing constant was left out."""
    demand = two.table("demand").copy()
    q1 = (demand["period"] == "2026Q1").to_numpy()
    demand.loc[q1, "demand_h100e"] = 600.0
    ds = two.replace(demand=demand)
    r = solve(ds.replace(contract_terms=terms(take_or_pay_h100e=500.0)), MARGIN)
    c = r.tables["contracts"].set_index("period")
    floor_fd = (_objective(ds, 501.0) - _objective(ds, 499.0)) / 2
    assert floor_fd < -1000.0  # billing 6,000 beats the holding cost
    shadow = c["shadow_price_take_or_pay_usd_per_h100e"]
    assert shadow.sum() == pytest.approx(floor_fd, rel=1e-6)
    assert shadow["2026Q1"] == pytest.approx(0.0, abs=1e-6)  # the floor is below demand
    objs = []
    for d in (1.0, -1.0):
        moved = demand.copy()
        q2 = (moved["period"] == "2026Q2").to_numpy()
        moved.loc[q2, "demand_h100e"] += d
        objs.append(_objective(ds.replace(demand=moved), 500.0))
    sp = r.tables["shadow_prices"]
    rows = sp[(sp["family"] == "demand_balance") & (sp["period"] == "2026Q2")]
    assert rows["shadow_price"].sum() == pytest.approx((objs[0] - objs[1]) / 2, abs=1e-3)
    assert rows["shadow_price"].sum() == pytest.approx(0.0, abs=1e-3)


@pytest.mark.parametrize(("fee", "held"), [(2000.0, 600.0), (500.0, 500.0)])
def test_reservation_dual_is_the_finite_difference(one, fee, held):
    """One more H100e reserved bills its fee and is held (a chip) or refunded (the fee
    back). The shadow price was the raw dual: the chip, or the refund, without the fee."""

    def objective(reserved: float) -> float:
        ct = terms(reservation_h100e=reserved, reservation_fee_usd_per_h100e_period=fee)
        r = solve(one.replace(contract_terms=ct), MARGIN)
        assert r.status == Status.optimal
        return float(r.objective_usd)

    ct = terms(reservation_h100e=600.0, reservation_fee_usd_per_h100e_period=fee)
    r = solve(one.replace(contract_terms=ct), MARGIN)
    assert quarter(r, "2026Q1")["held_h100e"] == pytest.approx(held)
    fd = (objective(601.0) - objective(599.0)) / 2
    # held: a chip held for the customer at full draw, 1,300, less the fee (a tie
    # breaker of 1e-3 per chip aside); refunded: the fee back less the fee
    assert fd == pytest.approx(1300.0 - fee if held == 600.0 else 0.0, abs=0.01)
    shadow = quarter(r, "2026Q1")["shadow_price_reservation_usd_per_h100e"]
    assert shadow == pytest.approx(fd, abs=1e-6)


@pytest.mark.parametrize(("tier", "credit_h100e"), [(0.8, 0.0), (0.9, 50.0), (0.7, 0.0)])
def test_sla_credit_appears_exactly_at_the_tier(one, tier, credit_h100e):
    # 0.4 MW: 400 of 500 H100e served, a served share of exactly 0.8
    small = edit(one, "sites", initial_it_mw=0.4, max_build_mw_per_period=0.0)
    ds = small.replace(contract_terms=terms(sla_served_share=tier, sla_credit_usd_per_h100e=900.0))
    r = solve(ds, MARGIN)
    assert r.status == Status.optimal and not len(r.violations)
    row = quarter(r, "2026Q1")
    assert row["served_share"] == pytest.approx(0.8)
    assert row["sla_short_h100e"] == pytest.approx(credit_h100e, abs=1e-6)
    assert term(r, "sla_credit") == pytest.approx(900.0 * credit_h100e, abs=1e-6)
    assert row["credits_usd"] == pytest.approx(900.0 * credit_h100e, abs=1e-6)


def test_sla_dual_equals_the_finite_difference(one):
    small = edit(one, "sites", initial_it_mw=0.4, max_build_mw_per_period=0.0)

    def run(tier):
        ds = small.replace(
            contract_terms=terms(sla_served_share=tier, sla_credit_usd_per_h100e=900)
        )
        return solve(ds, MARGIN)

    r0, r1 = run(0.9), run(0.902)  # tier x demand up by 1 H100e
    assert r0.margin_usd - r1.margin_usd == pytest.approx(900.0, rel=1e-6)
    row = quarter(r0, "2026Q1")
    assert row["shadow_price_sla_usd_per_h100e"] == pytest.approx(900.0, rel=1e-6)


@pytest.mark.parametrize(("fee", "held"), [(500.0, 500.0), (2000.0, 600.0)])
def test_reservation_is_held_only_when_its_fee_beats_the_chip(one, fee, held):
    # 600 H100e reserved, 500 asked: the 100 extra chips cost 1,300 each when held.
    ds = one.replace(
        contract_terms=terms(reservation_h100e=600.0, reservation_fee_usd_per_h100e_period=fee)
    )
    r = solve(ds, MARGIN)
    assert r.status == Status.optimal and not len(r.violations)
    row = quarter(r, "2026Q1")
    assert row["held_h100e"] == pytest.approx(held)
    assert row["reservation_short_h100e"] == pytest.approx(600.0 - held, abs=1e-6)
    assert term(r, "reservation_fee") == pytest.approx(-600 * fee)
    assert term(r, "reservation_refund") == pytest.approx((600.0 - held) * fee, abs=1e-6)
    assert r.margin_usd == pytest.approx(
        500 * 4700.0 + 600 * fee - (600.0 - held) * fee - (held - 500.0) * 1300.0, rel=1e-6
    )


def test_price_escalates_per_quarter_inside_the_contract(two):
    ds = two.replace(contract_terms=terms(price_escalator_per_period=0.1))
    r = solve(ds, MARGIN)
    rev = r.tables["customer_revenue"].set_index("period")["price_usd_per_h100e_period"]
    assert rev.to_dict() == pytest.approx({"2026Q1": 6000.0, "2026Q2": 6600.0})
    assert term(r, "revenue") == pytest.approx(-(500 * 6000.0 + 300 * 6600.0))


def test_contract_start_and_end_bound_the_contract_price(two):
    # a contract price of 7,000 from 2026Q2: 2026Q1 keeps the customers table's 6,000
    late = terms(from_period="2026Q2", price_usd_per_h100e_period=7000.0)
    r = solve(two.replace(contract_terms=late), MARGIN)
    rev = r.tables["customer_revenue"].set_index("period")["price_usd_per_h100e_period"]
    assert rev.to_dict() == pytest.approx({"2026Q1": 6000.0, "2026Q2": 7000.0})
    assert r.tables["contracts"]["period"].tolist() == ["2026Q2"]
    # a contract that ended in 2026Q1 leaves 2026Q2 at the spot price
    early = terms(to_period="2026Q1", price_usd_per_h100e_period=7000.0)
    rev = solve(two.replace(contract_terms=early), MARGIN).tables["customer_revenue"]
    assert rev.set_index("period")["price_usd_per_h100e_period"].to_dict() == pytest.approx(
        {"2026Q1": 7000.0, "2026Q2": 6000.0}
    )


def test_cost_mode_keeps_its_penalty_plan_without_contract_rows(one):
    small = edit(one, "sites", initial_it_mw=0.4, max_build_mw_per_period=0.0)
    ds = small.replace(contract_terms=terms(sla_served_share=0.9, sla_credit_usd_per_h100e=900))
    r = solve(ds, SolveOptions())
    plain = solve(small, SolveOptions())
    assert r.objective_usd == pytest.approx(plain.objective_usd, rel=1e-12)
    assert term(r, "sla_credit") == term(r, "take_or_pay_billing") == 0.0
    # the contracts table still reports the terms against the cost mode's plan
    row = quarter(r, "2026Q1")
    assert row["served_share"] == pytest.approx(0.8)
    assert row["sla_short_h100e"] == 0.0


def _bad(tmp_path, **cells):
    d = tmp_path / "ds"
    shutil.copytree(LP_DATA / "lp_one", d)
    terms(**cells).to_csv(d / "contract_terms.csv", index=False)
    with pytest.raises(DataValidationError) as exc:
        load_dataset(d)
    return exc.value.errors


@pytest.mark.parametrize(
    ("cells", "column", "words"),
    [
        ({"price_usd_per_h100e_period": -1.0}, "price_usd_per_h100e_period", ""),
        ({"take_or_pay_h100e": 600.0}, "take_or_pay_h100e", "above the demand"),
        ({"sla_served_share": 1.2}, "sla_served_share", ""),
        ({"sla_served_share": -0.1}, "sla_served_share", ""),
        ({"to_period": "2025Q4"}, "to_period", "before it begins"),
    ],
)
def test_bad_contract_terms_name_file_row_and_column(tmp_path, cells, column, words):
    errs = _bad(tmp_path, **cells)
    assert [(f.file, f.row, f.column) for f in errs] == [("contract_terms.csv", 2, column)]
    assert words in errs[0].message


def test_overlapping_contracts_are_refused(tmp_path):
    d = tmp_path / "ds"
    shutil.copytree(LP_DATA / "lp_two", d)
    rows = pd.concat([terms(), terms(from_period="2026Q2")])
    rows.to_csv(d / "contract_terms.csv", index=False)
    with pytest.raises(DataValidationError) as exc:
        load_dataset(d)
    (f,) = exc.value.errors
    assert (f.file, f.row, f.column) == ("contract_terms.csv", 3, "from_period")
    assert "overlaps the contract of row 2" in f.message


#: lp_two with 5,000 chips standing (no build, no production), demand 1,000 then 500,
#: and energy at 10,000 USD/MWh: serving never pays (a tester's case).
_DEAR = {
    "chips.csv": "chip,display_name,vendor,family,it_kw_per_chip,cooling,first_period,"
    "last_period,lifetime_periods,capex_usd_per_chip,training_h100e,inference_h100e,hbm_gb,"
    "unit_name,chips_per_unit,idle_power_factor\n"
    "g1,G1,v,nv,1.0,air,2025Q1,2025Q4,20,4000,1.0,1.0,80,server,8,0\n",
    "demand.csv": "customer,workload,period,demand_h100e\n"
    "a,training,2026Q1,1000\na,training,2026Q2,500\n",
    "initial_fleet.csv": "chip,site,chips,install_period\ng1,s1,5000,2025Q1\n",
    "periods.csv": "period,hours,discount_factor\n2026Q1,1000,1.0\n2026Q2,1000,1.0\n",
    "sites.csv": "site,display_name,region,initial_it_mw,initial_liquid_mw,max_it_mw,"
    "max_build_mw_per_period,liquid_share_max,pue_air,pue_liquid,wue_l_per_kwh_air,"
    "wue_l_per_kwh_liquid,build_capex_usd_per_mw,energy_price_usd_per_mwh,carbon_t_per_mwh\n"
    "s1,S1,r1,10,0,10,0,0,1.0,1.0,0,0,1000000,10000,0\n",
}


def test_unmet_demand_never_exceeds_the_demand_under_a_floor(tmp_path):
    """Floor 800; 2026Q2 asks 500 and serving never pays: its 500 are unmet and the 300
    of the floor not held are refunded. Unmet beyond demand cost exactly the refund it
    saved, and the solver reported 800 unmet of 500 asked, the floor covered
    (take_or_pay_short 0) and a positive revenue term of 1.8M."""
    shutil.copytree(LP_DATA / "lp_two", tmp_path / "d")
    for name, text in _DEAR.items():
        (tmp_path / "d" / name).write_text(text)
    ds = load_dataset(tmp_path / "d")
    r = solve(ds.replace(contract_terms=terms(take_or_pay_h100e=800.0)), MARGIN)
    assert r.status == Status.optimal and not len(r.violations)
    dm = r.tables["demand"].set_index("period")
    assert dm["unmet_h100e"].tolist() == pytest.approx([1000.0, 500.0])
    q2 = quarter(r, "2026Q2")
    assert q2["take_or_pay_short_h100e"] == pytest.approx(300.0)
    assert q2["credits_usd"] == pytest.approx(300 * 6000.0)
    assert term(r, "take_or_pay_refund") == pytest.approx(300 * 6000.0)
    assert term(r, "take_or_pay_billing") == pytest.approx(-300 * 6000.0)
    assert term(r, "revenue") == pytest.approx(0.0, abs=1e-6)
