"""The margin objective: revenue at customer prices minus cost, on hand-sized data.

One-quarter data (tests/data/lp_one): a serving chip (1 H100e) costs 1,300 USD (rent
1,000 + energy 300); customer ``a`` pays 6,000 USD per H100e-quarter of training and
its unmet penalty is 5,000. In margin mode each served H100e earns 6,000 - 1,300 =
4,700 USD, so one more unit of a binding limit is worth (marginal margin,
d margin / d rhs; the shadow_prices table keeps d(objective)/d(rhs) with the
objective cost - revenue = -margin, so shadow_price = -marginal margin):

* site_it_power at 0.3 MW: 1,000 chips/MW -> +4.7e6 USD/MW
* site_grid at 0.6 MW facility, PUE 1.5: 666.7 chips/MW -> +3.1333e6 USD/MW
* site_water at 1,200 m3: 0.25 chip/m3 -> +1,175 USD/m3
* supply_resource at 300 wafers: 1 chip/wafer -> +4,700 USD/wafer
* demand_balance, room to spare: one more H100e served -> +4,700 USD/H100e
* commitment 0.6 MW (0.1 MW above the demand's 0.5 MW) at 2e6 USD/MW: the extra
  1,000 chips/MW earn nothing and cost 1,300 each -> -1.3e6 USD/MW
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from capacity.dataset import load_dataset
from optimizer import SolveOptions, Status, solve
from tests.lp_helpers import LP_DATA, edit, with_commitment

MARGIN = SolveOptions(objective="margin")


@pytest.fixture(scope="module")
def one():
    return load_dataset(LP_DATA / "lp_one")


def served(r):
    return float(r.tables["demand"]["served_h100e"].sum())


def test_margin_is_revenue_minus_cost_by_hand(one):
    r = solve(one, MARGIN)
    assert r.status == Status.optimal
    assert r.objective == "margin"
    assert served(r) == pytest.approx(500.0)
    assert r.revenue_usd == pytest.approx(500 * 6000.0, rel=1e-9)
    assert r.cost_usd == pytest.approx(500 * 1300.0, rel=1e-6)
    assert r.margin_usd == pytest.approx(500 * 4700.0, rel=1e-6)
    assert r.margin_usd == pytest.approx(r.revenue_usd - r.cost_usd, rel=1e-12)
    costs = r.tables["costs"]
    rev = costs[costs["term"] == "revenue"]
    assert rev["cash_kind"].tolist() == ["revenue"]
    assert rev["cash_usd"].sum() == pytest.approx(-3e6, rel=1e-9)
    # no unmet penalty in margin mode
    assert costs.loc[costs["term"] == "unmet_penalty", "cost_usd"].sum() == 0.0


def test_cost_mode_has_no_revenue_and_keeps_its_objective(one):
    r = solve(one, SolveOptions())
    assert r.objective == "cost"
    assert r.revenue_usd is None and r.margin_usd is None
    assert r.cost_usd == r.objective_usd == pytest.approx(500 * 1300.0, rel=1e-6)
    costs = r.tables["costs"]
    assert (costs.loc[costs["term"] == "revenue", "cost_usd"] == 0.0).all()


def test_price_below_marginal_cost_is_served_only_in_cost_mode(one):
    # 1,000 USD per H100e-quarter < the 1,300 a serving chip costs; penalty 5,000
    cheap = edit(one, "customers", price_training_usd_per_h100e_period=1000.0)
    cost = solve(cheap, SolveOptions())
    margin = solve(cheap, MARGIN)
    assert cost.status == margin.status == Status.optimal
    assert served(cost) == pytest.approx(500.0)
    assert served(margin) == pytest.approx(0.0, abs=1e-6)
    assert margin.tables["demand"]["unmet_h100e"].sum() == pytest.approx(500.0)
    assert margin.margin_usd == pytest.approx(0.0, abs=1e-3)
    # just above the marginal cost it is served again
    dear = edit(one, "customers", price_training_usd_per_h100e_period=1301.0)
    assert served(solve(dear, MARGIN)) == pytest.approx(500.0)


def test_uncapped_site_margin_is_bounded_by_demand(one):
    # no limit on build, grid, water or supply: revenue stops at the demand
    big = edit(one, "sites", max_it_mw=1e9, max_build_mw_per_period=1e9)
    big = edit(big, "site_grid", grid_mw=1e9)
    big = edit(big, "supply_resources", capacity=1e12)
    r = solve(big, MARGIN)
    assert r.status == Status.optimal
    assert served(r) == pytest.approx(500.0)
    assert r.margin_usd == pytest.approx(500 * 4700.0, rel=1e-6)


# (name, family, key, dataset builder taking the rhs value, rhs, step, marginal margin)
CASES = [
    (
        "power",
        "site_it_power",
        "s1",
        lambda ds, v: edit(ds, "sites", initial_it_mw=v, max_build_mw_per_period=0.0),
        0.3,
        0.01,
        4.7e6,
    ),
    (
        "grid",
        "site_grid",
        "s1",
        lambda ds, v: edit(ds, "site_grid", grid_mw=v),
        0.6,
        0.01,
        4700 * 1000 / 1.5,
    ),
    (
        "water",
        "site_water",
        "s1",
        lambda ds, v: edit(ds, "site_water", water_permit_m3=v),
        1200.0,
        1.0,
        1175.0,
    ),
    (
        "supply",
        "supply_resource",
        "wafers",
        lambda ds, v: edit(ds, "supply_resources", capacity=v),
        300.0,
        1.0,
        4700.0,
    ),
    (
        "demand",
        "demand_balance",
        "a/training",
        lambda ds, v: edit(ds, "demand", demand_h100e=v),
        500.0,
        1.0,
        4700.0,
    ),
    ("commitment", "commitment", "a/nv/2026Q1", with_commitment, 0.6, 0.01, -1.3e6),
]


def row(r, family, key):
    sp = r.tables["shadow_prices"]
    out = sp[(sp["family"] == family) & (sp["key"] == key)]
    assert len(out) == 1
    return out.iloc[0]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_marginal_margin_equals_finite_difference(one, case):
    _, family, key, make, rhs, step, expected = case
    for solver in ("highs", "cbc"):
        options = SolveOptions(solver=solver, objective="margin")
        r0, r1 = solve(make(one, rhs), options), solve(make(one, rhs + step), options)
        assert r0.status == r1.status == Status.optimal
        fd = (r1.margin_usd - r0.margin_usd) / step
        # one convention: shadow_price = d(objective)/d(rhs), objective = -margin
        assert row(r0, family, key)["shadow_price"] == pytest.approx(-expected, rel=1e-6)
        assert fd == pytest.approx(expected, rel=1e-5)


def test_unserved_demand_is_worth_nothing_more(one):
    # with only 0.3 MW the marginal H100e of demand is unserved: margin unchanged
    ds = edit(one, "sites", initial_it_mw=0.3, max_build_mw_per_period=0.0)
    r = solve(ds, MARGIN)
    assert row(r, "demand_balance", "a/training")["shadow_price"] == pytest.approx(0.0, abs=1e-6)
    assert r.tables["demand"]["shadow_price_usd_per_h100e"].tolist() == pytest.approx(
        [0.0], abs=1e-6
    )


def test_unknown_objective_is_refused(one):
    with pytest.raises(ValueError, match="objective must be one of"):
        solve(one, SolveOptions(objective="profit"))


def test_customer_revenue_table_sums_to_the_revenue_term(one):
    r = solve(one, MARGIN)
    rev = r.tables["customer_revenue"]
    assert rev[["customer", "workload", "period"]].values.tolist() == [["a", "training", "2026Q1"]]
    assert rev["price_usd_per_h100e_period"].tolist() == [6000.0]
    assert rev["billed_h100e"].tolist() == pytest.approx([500.0])
    assert rev["revenue_usd"].sum() == pytest.approx(r.revenue_usd, rel=1e-12)
    assert rev["unserved_revenue_usd"].tolist() == pytest.approx([0.0], abs=1e-6)


def test_customer_revenue_counts_what_a_cheap_customer_leaves_unearned(one):
    cheap = edit(one, "customers", price_training_usd_per_h100e_period=1000.0)
    margin = solve(cheap, MARGIN).tables["customer_revenue"]
    assert margin["revenue_usd"].tolist() == pytest.approx([0.0], abs=1e-3)
    assert margin["unserved_revenue_usd"].tolist() == pytest.approx([500 * 1000.0])
    # the cost mode reports the same table at the same prices: it serves, so it bills
    cost = solve(cheap, SolveOptions()).tables["customer_revenue"]
    assert cost["revenue_usd"].tolist() == pytest.approx([500 * 1000.0])


def test_customer_revenue_reaches_the_parquet_report(one, tmp_path):
    import pyarrow.parquet as pq

    from optimizer.output.report import write_report

    r = solve(one, MARGIN)
    path = write_report(r, tmp_path, scenario="base", run_id="run1")
    files = list(Path(path).rglob("customer_revenue.parquet"))
    assert len(files) == 1
    table = pq.read_table(files[0])
    assert table.column("revenue_usd").to_pylist() == pytest.approx([3e6])
    assert table.schema.field("revenue_usd").metadata[b"unit"] == b"USD"
    meta = table.schema.metadata
    assert meta[b"objective_mode"] == b"margin"
    assert float(meta[b"margin_usd"]) == pytest.approx(r.margin_usd, rel=1e-12)


def test_margin_sweep_cases_match_fresh_solves(one):
    # a sweep in margin mode (the in-process batch path) never reuses a base model
    # across a price or demand change: each case equals its own fresh solve
    from optimizer.analysis.batch_case import solve_many
    from optimizer.analysis.batch_patch import patch_model
    from optimizer.plan.model import build_model

    price = {"op": "scale", "table": "customers", "column": "price_training_usd_per_h100e_period"}
    demand = {"op": "scale", "table": "demand", "column": "demand_h100e", "factor": 1.5}
    items = [[{**price, "factor": 0.2}], [demand], []]
    got = solve_many(one, items, MARGIN, reuse=True)
    cheap = edit(one, "customers", price_training_usd_per_h100e_period=1200.0)
    more = edit(one, "demand", demand_h100e=750.0)
    for res, ds in zip(got, (cheap, more, one), strict=True):
        assert res.objective == "margin"
        assert res.margin_usd == pytest.approx(solve(ds, MARGIN).margin_usd, rel=1e-9, abs=1e-3)
    assert got[0].margin_usd == pytest.approx(0.0, abs=1e-3)  # 1,200 < 1,300: not served
    assert got[1].margin_usd == pytest.approx(750 * 4700.0, rel=1e-6)
    base = build_model(one, objective="margin")
    assert patch_model(base, one, more) is None
    assert patch_model(build_model(one), one, more) is not None  # the cost mode patches


@pytest.mark.parametrize("data", ["lp_base", "tiny_valid"])
def test_both_formulations_reach_the_same_margin(data):
    ds = load_dataset(LP_DATA / data)
    compact = solve(ds, SolveOptions(objective="margin", formulation="compact"))
    reference = solve(ds, SolveOptions(objective="margin", formulation="reference"))
    assert compact.status == reference.status == Status.optimal
    assert len(compact.violations) == len(reference.violations) == 0
    assert compact.margin_usd == pytest.approx(reference.margin_usd, rel=1e-7)
    assert compact.margin_usd == pytest.approx(compact.revenue_usd - compact.cost_usd, rel=1e-12)
    # margin mode earns at least what the cost mode's plan earns at the same prices
    cost_plan = solve(ds, SolveOptions())
    cost_plan_margin = (
        cost_plan.tables["customer_revenue"]["revenue_usd"].sum()
        - cost_plan.tables["costs"]
        .query("term not in ['unmet_penalty', 'revenue']")["cost_usd"]
        .sum()
    )
    assert compact.margin_usd >= cost_plan_margin - 1e-6 * abs(cost_plan_margin)


def test_unit_economics_by_hand(one):
    # 500 chips of g1 (1 H100e each) train for 2,000 h: rent 1,000 USD per chip-quarter,
    # energy 0.5 MW x 2,000 h = 1,000 IT MWh at 150 USD per IT MWh (PUE 1.5 x 100 USD)
    ue = solve(one, SolveOptions()).tables["unit_economics"]
    assert ue[["chip", "workload", "period"]].values.tolist() == [["g1", "training", "2026Q1"]]
    row = ue.iloc[0]
    assert row["served_h100e_hours"] == pytest.approx(500 * 2000.0)
    assert row["chip_capex_usd"] == pytest.approx(500 * 1000.0, rel=1e-9)
    assert row["energy_usd"] == pytest.approx(150_000.0, rel=1e-9)
    assert row["cost_usd_per_h100e_hour"] == pytest.approx(1300.0 / 2000.0, rel=1e-9)


def test_margin_mode_breaches_when_cheaper_than_idle_chips(one):
    # a commitment of 0.6 MW (100 chips above the demand's 500) keeps chips busy for
    # nothing in the cost mode's plan; the margin mode's plan breaches instead when the
    # breach is cheaper than the 130,000 USD those chips cost, serving 500 chips only
    com = pd.DataFrame(
        {
            "customer": ["a"],
            "family": ["nv"],
            "from_period": ["2026Q1"],
            "to_period": ["2026Q1"],
            "min_it_mw": [0.6],
            "breach_penalty_usd_per_mw": [1e5],
        }
    )
    r = solve(one.replace(commitments=com), MARGIN)
    assert r.tables["commitments"]["breach_mw"].tolist() == pytest.approx([0.1])
    ue = r.tables["unit_economics"]
    assert ue["served_h100e_hours"].tolist() == pytest.approx([1e6])
    assert ue["cost_usd_per_h100e_hour"].tolist() == pytest.approx([0.65], rel=1e-9)


def test_two_stage_plan_in_margin_mode_by_hand(one):
    # demand 500 or 300 H100e with equal weight; installs are shared. Installing 500
    # chips earns 500 x 4,700 in the first scenario; in the second 300 x 4,700, less the
    # rent of 200 idle chips (200 x 1,000) and their idle draw (200 x 1 kW x 0.5 idle
    # factor x 2,000 h = 200 MWh IT x PUE 1.5 x 100 USD/MWh = 30,000 USD). Installing
    # 300 would earn 300 x 4,700 in both, less.
    from optimizer.plan.stochastic import solve_stochastic

    low = edit(one, "demand", demand_h100e=300.0)
    sto = solve_stochastic([one, low], [0.5, 0.5], MARGIN)
    expected_margin = 0.5 * 500 * 4700 + 0.5 * (300 * 4700 - 200 * 1000 - 30_000)
    assert -sto.expected_objective_usd == pytest.approx(expected_margin, rel=1e-6)
