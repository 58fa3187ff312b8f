"""Each constraint family binds at exactly its hand-computed value.

Base data (tests/data/lp_base, lp_one): one site s1 (PUE air 1.5 / liquid 1.2, WUE air
2 / liquid 0.5 m3/MWh, 100 USD/MWh, build capex 6e6 USD/MW -> rent 1e5 USD/MW per
quarter over 60 quarters), one chip g1 (1 kW, 4,000 USD over 4 quarters -> rent 1,000
USD per quarter, 1 H100e, idle factor 0.5), one customer a (unmet penalty 5,000 USD
per H100e-quarter), training power factor 1.0, 2,000 h per quarter, no discounting.

Per chip-quarter: rent 1,000 + energy 2 MWh * 1.5 * 100 = 300 -> 1,300 USD when
serving, 1,000 + 150 when idle; so every chip that can serve demand is worth it.
Every objective below also carries the production tie-break of 0.001 USD per chip.
"""

from __future__ import annotations

import pytest

from capacity.dataset import load_dataset
from optimizer import SolveOptions, Status, build_model, solve
from tests.lp_helpers import LP_DATA, edit, with_commitment

DATA = LP_DATA
TIE = 1e-3


@pytest.fixture(scope="module")
def base():
    return load_dataset(DATA / "lp_base")


@pytest.fixture(scope="module")
def one():
    return load_dataset(DATA / "lp_one")


def run(ds):
    r = solve(ds, SolveOptions())
    assert r.status == Status.optimal, r.message
    assert r.violations.empty
    return r


def util(r, limit):
    su = r.tables["site_utilisation"]
    return su[su["limit"] == limit].set_index("period")


def test_base_optimum(base):
    # 500 chips installed in Q1 serve both quarters: 500 * 2 * 1,300 = 1,300,000
    r = run(base)
    assert r.objective_usd == pytest.approx(1_300_000 + 500 * TIE, rel=1e-9)
    fl = r.tables["fleet"].set_index("period")
    assert fl.loc["2026Q1", "installed_chips"] == pytest.approx(500)
    assert fl.loc["2026Q2", "fleet_chips"] == pytest.approx(500)
    assert r.tables["costs"]["cost_usd"].sum() == pytest.approx(r.objective_usd, rel=1e-12)


def test_site_it_power_binds(base):
    # 0.3 MW and no build: 300 chips, 200 H100e unmet each quarter.
    # 300 * 2,600 + 200 * 5,000 * 2 = 2,780,000
    ds = edit(base, "sites", initial_it_mw=0.3, max_build_mw_per_period=0.0)
    r = run(ds)
    u = util(r, "power")
    assert u["used"].tolist() == pytest.approx([0.3, 0.3])
    assert r.tables["demand"]["unmet_h100e"].tolist() == pytest.approx([200, 200])
    assert r.objective_usd == pytest.approx(2_780_000 + 300 * TIE, rel=1e-9)


def test_site_liquid_binds(base):
    # liquid-only chip, 0.2 MW of liquid halls, no build: 200 chips
    ds = edit(base, "sites", initial_liquid_mw=0.2, max_build_mw_per_period=0.0)
    ds = edit(ds, "chips", cooling="liquid")
    r = run(ds)
    assert util(r, "liquid")["used"].tolist() == pytest.approx([0.2, 0.2])
    assert r.tables["fleet"]["fleet_chips"].tolist() == pytest.approx([200, 200])


def test_site_liquid_share_binds(base):
    # nothing built yet; liquid may be at most half of new build: 500 liquid chips need
    # 0.5 MW of liquid -> build 1.0 MW in Q1 (the build rate is 1 MW/quarter)
    ds = edit(base, "sites", initial_it_mw=0.0, liquid_share_max=0.5)
    ds = edit(ds, "chips", cooling="liquid")
    r = run(ds)
    bo = r.tables["build_out"].set_index("period")
    assert bo.loc["2026Q1", "build_mw"] == pytest.approx(1.0)
    assert bo.loc["2026Q1", "liquid_build_mw"] == pytest.approx(0.5)
    assert bo.loc["2026Q2", "liquid_capacity_mw"] == pytest.approx(0.5)
    # capex: 1 MW * 1e5 * 2 quarters; chips at PUE 1.2: 1,000 + 240 per quarter
    assert r.objective_usd == pytest.approx(200_000 + 500 * 2 * 1240 + 500 * TIE, rel=1e-9)


def test_site_grid_binds(base):
    # grid 0.6 MW facility at PUE 1.5 -> 0.4 MW IT -> 400 chips
    ds = edit(base, "site_grid", grid_mw=0.6)
    r = run(ds)
    assert util(r, "grid")["used"].tolist() == pytest.approx([0.6, 0.6])
    assert r.tables["fleet"]["fleet_chips"].tolist() == pytest.approx([400, 400])


def test_site_build_rate_binds(base):
    # no initial capacity, 0.2 MW/quarter: 200 chips in Q1, 400 in Q2
    ds = edit(base, "sites", initial_it_mw=0.0, max_build_mw_per_period=0.2)
    r = run(ds)
    bo = r.tables["build_out"]
    assert bo["build_mw"].tolist() == pytest.approx([0.2, 0.2])
    assert r.tables["fleet"]["fleet_chips"].tolist() == pytest.approx([200, 400])


def test_site_max_binds(base):
    # no initial capacity, campus maximum 0.3 MW: build 0.3 in Q1, 300 chips
    ds = edit(base, "sites", initial_it_mw=0.0, max_it_mw=0.3)
    r = run(ds)
    bo = r.tables["build_out"]
    assert bo["it_capacity_mw"].tolist() == pytest.approx([0.3, 0.3])
    assert bo["build_mw"].sum() == pytest.approx(0.3)
    # build 0.3 MW * 1e5 * 2 + 300 * 2,600 + 200 * 2 * 5,000
    assert r.objective_usd == pytest.approx(60_000 + 780_000 + 2_000_000 + 300 * TIE, rel=1e-9)


def test_site_water_binds(base):
    # a serving chip uses 2 MWh * 2 m3/MWh = 4 m3 per quarter; 1,200 m3 -> 300 chips
    ds = edit(base, "site_water", water_permit_m3=1200.0)
    r = run(ds)
    assert util(r, "water")["used"].tolist() == pytest.approx([1200, 1200])
    assert r.tables["energy"]["water_m3"].tolist() == pytest.approx([1200, 1200])
    assert r.tables["fleet"]["assigned_chips"].tolist() == pytest.approx([300, 300])


def test_supply_resource_binds(base):
    # 300 wafers in Q1, none in Q2 (1 wafer per chip): 300 chips in both quarters
    df = base.table("supply_resources").copy()
    df["capacity"] = [300.0, 0.0]
    r = run(base.replace(supply_resources=df))
    su = r.tables["supply_utilisation"]
    assert su["used"].tolist() == pytest.approx([300, 0])
    assert su["utilisation"].iloc[0] == pytest.approx(1.0)


def test_chip_inventory_carries_chips(base):
    # supply only in Q1; demand 100 then 500: produce 500 in Q1, install 100 then 400
    sup = base.table("supply_resources").copy()
    sup["capacity"] = [1000.0, 0.0]
    dem = base.table("demand").copy()
    dem["demand_h100e"] = [100.0, 500.0]
    r = run(base.replace(supply_resources=sup, demand=dem))
    pr = r.tables["production"].set_index("period")
    assert pr["produced_chips"].tolist() == pytest.approx([500, 0])
    assert pr["installed_chips"].tolist() == pytest.approx([100, 400])
    assert pr["inventory_chips"].tolist() == pytest.approx([400, 0])


def test_chip_window_has_no_variables_outside(base):
    # sale starts 2026Q2: no produce column in Q1, Q1 demand fully unmet
    ds = edit(base, "chips", first_period="2026Q2")
    m = build_model(ds)
    prod = m.variables[m.variables["kind"] == "produce"]
    assert prod["t"].tolist() == [1]
    r = run(ds)
    assert r.tables["demand"]["unmet_h100e"].tolist() == pytest.approx([500, 0])
    # Q2 only: 500 * (1,000 + 300) + Q1 unmet 500 * 5,000
    assert r.objective_usd == pytest.approx(650_000 + 2_500_000 + 500 * TIE, rel=1e-9)


def test_fleet_assignment_and_idle_energy(base):
    # demand 500 then 200: 500 chips stay installed, 300 idle in Q2
    dem = base.table("demand").copy()
    dem["demand_h100e"] = [500.0, 200.0]
    r = run(base.replace(demand=dem))
    fl = r.tables["fleet"].set_index("period")
    assert fl.loc["2026Q2", "assigned_chips"] == pytest.approx(200)
    assert fl.loc["2026Q2", "idle_chips"] == pytest.approx(300)
    # Q2 IT energy: 2 MWh * 200 + 1 MWh * 300 = 700 MWh; facility 1,050 MWh
    en = r.tables["energy"].set_index("period")
    assert en.loc["2026Q2", "it_mwh"] == pytest.approx(700)
    assert en.loc["2026Q2", "facility_mwh"] == pytest.approx(1050)


def test_demand_balance_penalty_cheaper(base):
    # penalty 1,000 < 1,300 per chip-quarter: nothing served, 2 * 500 * 1,000
    ds = edit(base, "customers", unmet_penalty_usd_per_h100e_period=1000.0)
    r = run(ds)
    d = r.tables["demand"]
    assert d["unmet_h100e"].tolist() == pytest.approx([500, 500])
    assert d["served_h100e"].tolist() == pytest.approx([0, 0])
    assert r.objective_usd == pytest.approx(1_000_000, rel=1e-9)


def commitment(ds, mw, penalty):
    return with_commitment(ds, mw, penalty)


def test_commitment_binds(one):
    # 0.6 MW committed (600 chips) at 2e6 USD/MW short: serve 600 chips, 100 above demand
    r = run(commitment(one, 0.6, 2e6))
    c = r.tables["commitments"]
    assert c["delivered_it_mw"].tolist() == pytest.approx([0.6])
    assert c["breach_mw"].tolist() == pytest.approx([0.0])
    # the 100 above demand count in the commitment's MW, not as served demand
    assert r.tables["demand"]["served_h100e"].tolist() == pytest.approx([500])
    assert r.tables["demand"]["served_share"].tolist() == pytest.approx([1.0])
    assert r.objective_usd == pytest.approx(600 * 1300 + 600 * TIE, rel=1e-9)


def test_commitment_breach_cheaper(one):
    # breach at 1e6 USD/MW is cheaper than 1.3e6 USD/MW of extra chips: 0.1 MW short
    r = run(commitment(one, 0.6, 1e6))
    c = r.tables["commitments"]
    assert c["breach_mw"].tolist() == pytest.approx([0.1])
    assert r.objective_usd == pytest.approx(500 * 1300 + 100_000 + 500 * TIE, rel=1e-9)


def test_discounting(base):
    # discount 0.5 in Q2: Q2 costs count half
    per = base.table("periods").copy()
    per["discount_factor"] = [1.0, 0.5]
    r = run(base.replace(periods=per))
    co = r.tables["costs"]
    q2 = co[co["period"] == "2026Q2"]
    assert q2["cost_usd"].sum() == pytest.approx(0.5 * q2["undiscounted_cost_usd"].sum())
    assert co["cost_usd"].sum() == pytest.approx(r.objective_usd, rel=1e-12)
    assert r.objective_usd == pytest.approx(650_000 * 1.5 + 500 * TIE, rel=1e-9)
