"""Shadow prices equal finite-difference changes of the objective; HiGHS and CBC agree.

One-quarter data (tests/data/lp_one): a serving chip costs 1,300 USD (rent 1,000 +
energy 300) and saves 5,000 USD of unmet penalty, so each extra chip of room is worth
-3,700 USD. Expected prices (d objective / d rhs):

* site_it_power at 0.3 MW: 1,000 chips/MW -> -3.7e6 USD/MW            (<= row)
* site_grid at 0.6 MW facility, PUE 1.5: 666.7 chips/MW -> -2.4667e6  (<= row)
* site_water at 1,200 m3: 0.25 chip/m3 -> -925 USD/m3                 (<= row)
* supply_resource at 300 wafers: 1 chip/wafer -> -3,700 USD/wafer     (<= row)
* demand_balance, room to spare: +1,300 USD/H100e                     (>= row)
* commitment 0.6 MW at 2e6 USD/MW: 1,000 extra chips/MW -> +1.3e6     (>= row)
"""

from __future__ import annotations

import pytest

from capacity.dataset import load_dataset
from optimizer import SolveOptions, Status, solve
from tests.lp_helpers import LP_DATA, edit, with_commitment

DATA = LP_DATA


@pytest.fixture(scope="module")
def one():
    return load_dataset(DATA / "lp_one")


# (name, family, key, dataset builder taking the rhs value, rhs, step, expected price)
CASES = [
    (
        "power",
        "site_it_power",
        "s1",
        lambda ds, v: edit(ds, "sites", initial_it_mw=v, max_build_mw_per_period=0.0),
        0.3,
        0.01,
        -3.7e6,
    ),
    (
        "grid",
        "site_grid",
        "s1",
        lambda ds, v: edit(ds, "site_grid", grid_mw=v),
        0.6,
        0.01,
        -3700 * 1000 / 1.5,
    ),
    (
        "water",
        "site_water",
        "s1",
        lambda ds, v: edit(ds, "site_water", water_permit_m3=v),
        1200.0,
        1.0,
        -925.0,
    ),
    (
        "supply",
        "supply_resource",
        "wafers",
        lambda ds, v: edit(ds, "supply_resources", capacity=v),
        300.0,
        1.0,
        -3700.0,
    ),
    (
        "demand",
        "demand_balance",
        "a/training",
        lambda ds, v: edit(ds, "demand", demand_h100e=v),
        500.0,
        1.0,
        1300.0,
    ),
    ("commitment", "commitment", "a/nv/2026Q1", with_commitment, 0.6, 0.01, 1.3e6),
]


def price(r, family, key):
    sp = r.tables["shadow_prices"]
    row = sp[(sp["family"] == family) & (sp["key"] == key)]
    assert len(row) == 1
    return float(row["shadow_price"].iloc[0])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_dual_equals_finite_difference(one, case):
    _, family, key, make, rhs, step, expected = case
    ds0, ds1 = make(one, rhs), make(one, rhs + step)
    results = {}
    for solver in ("highs", "cbc"):
        r0 = solve(ds0, SolveOptions(solver=solver))
        r1 = solve(ds1, SolveOptions(solver=solver))
        assert r0.status == r1.status == Status.optimal
        fd = (r1.objective_usd - r0.objective_usd) / step
        sp = price(r0, family, key)
        assert sp == pytest.approx(expected, rel=1e-6)
        assert fd == pytest.approx(sp, rel=1e-5)
        results[solver] = (r0.objective_usd, sp)
    assert results["highs"][0] == pytest.approx(results["cbc"][0], rel=1e-9)
    assert results["highs"][1] == pytest.approx(results["cbc"][1], rel=1e-6)


def test_demand_price_is_penalty_when_short(one):
    # with only 0.3 MW, the marginal H100e is unmet: price = 5,000 USD/H100e
    ds = edit(one, "sites", initial_it_mw=0.3, max_build_mw_per_period=0.0)
    for solver in ("highs", "cbc"):
        r = solve(ds, SolveOptions(solver=solver))
        assert price(r, "demand_balance", "a/training") == pytest.approx(5000.0, rel=1e-9)
        d = r.tables["demand"]
        assert d["shadow_price_usd_per_h100e"].tolist() == pytest.approx([5000.0])
