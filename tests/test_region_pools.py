"""Region pools (pool_serve + pool_draw + pool_balance) on a hand-sized case.

Two regions of two sites each and four customers who may be served anywhere: per
region the assign columns are a product (2 sites x 4 customers), so the compact
formulation has busy and serve columns; the serve columns are again a product
(4 customers x 2 regions) and become 4 pool_serve + 2 pool_draw columns and one
pool_balance row (:mod:`optimizer.components.pool`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from optimizer import SolveOptions, Status, build_model, solve
from optimizer.components.pool import pool_keys, spread_pool_service
from optimizer.plan.check import check_frames, check_solution
from optimizer.plan.raw_solve import run_solver
from optimizer.plan.results import solution_frames
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data"


def _two_regions():
    """Sites s1 (400 chips) and s2 (200) in r1, s3 (250) and s4 (150) in r2; four customers.

    Every chip is an initial chip (no production, no build); customers a, b, c, d each
    want 300 H100e of training in 2026Q1 (1 H100e per chip, derate 1) with unmet
    penalties 5,000, 3,000, 2,000 and 1,000 USD per H100e, eligible in every region.
    A busy chip costs 0.5 kW above idle x 2,000 h x PUE 1.5 x 100 USD/MWh = 150 USD,
    less than any penalty, so all 1,000 chips work: a, b and c are served in full, d
    gets 100 and 200 H100e are unmet. Objective: idle energy 1,000 x 150 = 150,000 +
    busy energy 150,000 + unmet 200 x 1,000 = 500,000 USD.
    """
    from capacity import load_dataset

    one = load_dataset(DATA / "lp_one")
    site = one.table("sites").iloc[0]
    chips = {"s1": ("r1", 400), "s2": ("r1", 200), "s3": ("r2", 250), "s4": ("r2", 150)}
    sites = pd.DataFrame(
        [
            {
                **site.to_dict(),
                "site": s,
                "display_name": s.upper(),
                "region": r,
                "initial_it_mw": n / 1000,
                "max_it_mw": n / 1000,
                "max_build_mw_per_period": 0.0,
            }
            for s, (r, n) in chips.items()
        ]
    )
    grid = pd.concat([one.table("site_grid").assign(site=s) for s in chips], ignore_index=True)
    water = pd.concat([one.table("site_water").assign(site=s) for s in chips], ignore_index=True)
    fleet = pd.DataFrame(
        {
            "chip": "g1",
            "site": list(chips),
            "chips": [float(n) for _, n in chips.values()],
            "install_period": "2025Q4",
        }
    )
    base = one.table("customers")
    penalties = {"a": 5000.0, "b": 3000.0, "c": 2000.0, "d": 1000.0}
    customers = pd.concat(
        [
            base.assign(customer=k, unmet_penalty_usd_per_h100e_period=p)
            for k, p in penalties.items()
        ],
        ignore_index=True,
    )
    demand = pd.concat(
        [one.table("demand").assign(customer=k, demand_h100e=300.0) for k in penalties],
        ignore_index=True,
    )
    eligibility = pd.concat(
        [one.table("eligibility").assign(customer=k) for k in penalties], ignore_index=True
    )
    return one.replace(
        sites=sites,
        site_grid=grid,
        site_water=water,
        initial_fleet=fleet,
        customers=customers,
        demand=demand,
        eligibility=eligibility,
        supply_resources=one.table("supply_resources").assign(capacity=0.0),
    )


def test_pool_columns_and_the_hand_optimum() -> None:
    ds = _two_regions()
    m = build_model(ds)
    kinds = m.variables["kind"].astype(str).value_counts()
    # 4 busy (one per site), 4 pool_serve, 2 pool_draw; no serve or assign columns left
    assert kinds.get("busy") == 4 and kinds.get("pool_serve") == 4
    assert kinds.get("pool_draw") == 2 and "serve" not in kinds and "assign" not in kinds
    fam = m.constraints["family"].astype(str)
    assert (fam == "pool_balance").sum() == 1 and (fam == "region_balance").sum() == 2
    assert m.codes["q"] == ("r1;r2",)
    ref = solve(ds, SolveOptions(formulation="reference"))
    comp = solve(ds)
    assert ref.status == comp.status == Status.optimal
    assert comp.objective_usd == pytest.approx(500_000, rel=1e-9)
    assert ref.objective_usd == pytest.approx(500_000, rel=1e-9)
    assert len(comp.violations) == 0
    # the report's assignment: every site's chips at work, each customer's service whole
    a = comp.tables["assignment"]
    assert a.groupby("site")["chips"].sum().to_dict() == pytest.approx(
        {"s1": 400.0, "s2": 200.0, "s3": 250.0, "s4": 150.0}
    )
    assert a.groupby("customer")["chips"].sum().to_dict() == pytest.approx(
        {"a": 300.0, "b": 300.0, "c": 300.0, "d": 100.0}
    )


def test_pool_balance_shadow_price_equals_the_finite_difference() -> None:
    ds = _two_regions()
    m = build_model(ds)
    sp = solve(ds).tables["shadow_prices"]
    pb = sp[sp["family"] == "pool_balance"]
    assert pb["key"].tolist() == ["g1/r1;r2/training"]
    assert pb["unit"].iloc[0] == "USD/chips"
    # one chip drawn into the pool that serves nobody: d loses one H100e, +1,000 USD
    assert pb["shadow_price"].iloc[0] == pytest.approx(1000.0, rel=1e-9)
    row = int(np.flatnonzero(m.constraints["family"].astype(str).to_numpy() == "pool_balance")[0])
    base = run_solver(m, SolveOptions())
    con = m.constraints.copy()
    con.loc[row, "rhs"] = 1.0
    moved = run_solver(replace(m, constraints=con), SolveOptions())
    assert moved.solver_objective - base.solver_objective == pytest.approx(1000.0, rel=1e-9)


def test_the_pool_split_has_both_margins_and_the_checker_verifies_them() -> None:
    ds = _two_regions()
    m = build_model(ds)
    raw = run_solver(m, SolveOptions())
    frames = solution_frames(m, raw.x)
    serve, ps, pdw = frames["serve"], frames["pool_serve"], frames["pool_draw"]
    # the draw of each region is its busy chips; the split gives each region its share
    assert pdw.set_index("region")["value"].to_dict() == pytest.approx({"r1": 600.0, "r2": 400.0})
    pooled = serve[serve["pool"] == "r1;r2"]
    by_pair = pooled.groupby("customer")["value"].sum()
    assert by_pair.to_dict() == pytest.approx(ps.set_index("customer")["value"].to_dict())
    assert pooled.groupby("region")["value"].sum().to_dict() == pytest.approx(
        {"r1": 600.0, "r2": 400.0}
    )
    a_r1 = pooled[(pooled["customer"] == "a") & (pooled["region"] == "r1")]["value"].sum()
    assert a_r1 == pytest.approx(300.0 * 600.0 / 1000.0)
    assert check_frames(ds, frames).empty
    # move 50 chips of a from r2 to r1 in the split: the per-region margin breaks in both
    bad = serve.copy()
    is_a = (bad["customer"] == "a").to_numpy()
    bad.loc[is_a & (bad["region"] == "r1").to_numpy(), "value"] += 50.0
    bad.loc[is_a & (bad["region"] == "r2").to_numpy(), "value"] -= 50.0
    v = check_frames(ds, {**frames, "serve": bad})
    pb = v[v["family"] == "pool_balance"]
    assert sorted(pb["keys"]) == [
        "split g1/r1/r1;r2/training,2026Q1",
        "split g1/r2/r1;r2/training,2026Q1",
    ]
    assert pb["violation"].tolist() == pytest.approx([50.0, 50.0])


def test_checker_catches_a_pool_serving_more_than_it_draws() -> None:
    ds = _two_regions()
    m = build_model(ds)
    raw = run_solver(m, SolveOptions())
    assert check_solution(m, raw.x).empty
    kind = m.variables["kind"].to_numpy()
    x = raw.x.copy()
    x[int(np.flatnonzero(kind == "pool_serve")[-1])] += 100.0  # d served 100 more
    v = check_solution(m, x)
    pb = v[(v["family"] == "pool_balance") & ~v["keys"].str.startswith("split")]
    assert pb["keys"].tolist() == ["g1/r1;r2/training,2026Q1"]
    assert pb["violation"].iloc[0] == pytest.approx(100.0)


def test_pool_keys_pool_only_where_it_saves_columns() -> None:
    # chip 0, workload 0, period 0; regions 0..2. Pairs k0..k4 on {0, 1} (5 x 2 = 10 >
    # 5 + 2 + 1: pooled), k5 and k6 on {0, 1, 2} (2 x 3 = 6, not > 6: kept), k7 on {2}.
    rows = [(k, e) for k in range(5) for e in (0, 1)] + [(k, e) for k in (5, 6) for e in (0, 1, 2)]
    rows.append((7, 2))
    serve = pd.DataFrame(
        {
            "c": 0,
            "e": [e for _, e in rows],
            "k": [k for k, _ in rows],
            "w": 0,
            "g": 0,
            "t": 0,
            "derate": 1.0,
        }
    )
    pools: dict[str, int] = {}
    kept, ps, pdw = pool_keys(serve, ("east", "west", "north"), pools)
    assert pools == {"east;west": 0}
    assert sorted(ps["k"]) == [0, 1, 2, 3, 4] and set(ps["q"]) == {0}
    assert pdw[["e", "q"]].to_numpy().tolist() == [[0, 0], [1, 0]]
    assert sorted(set(kept["k"])) == [5, 6, 7] and len(kept) == 7
    # a derate that differs between the regions of a pair keeps that pair's columns
    # (4 pairs left on {0, 1}: 8 > 7, still pooled)
    serve.loc[(serve["k"] == 0) & (serve["e"] == 1), "derate"] = 0.9
    pools = {}
    kept, ps, _ = pool_keys(serve, ("east", "west", "north"), pools)
    assert sorted(ps["k"]) == [1, 2, 3, 4] and sorted(set(kept["k"])) == [0, 5, 6, 7]


def test_spread_of_a_pool_that_draws_nothing_serves_nothing() -> None:
    ps = pd.DataFrame(
        {
            "chip": ["g"],
            "pool": ["r1;r2"],
            "customer": ["a"],
            "workload": ["training"],
            "demand_regions": [""],
            "period": ["2026Q1"],
            "value": [0.0],
        }
    )
    pdw = pd.DataFrame(
        {
            "chip": ["g", "g"],
            "region": ["r1", "r2"],
            "pool": ["r1;r2", "r1;r2"],
            "workload": ["training"] * 2,
            "period": ["2026Q1"] * 2,
            "value": [0.0, 0.0],
        }
    )
    assert spread_pool_service(ps, pdw).empty
    out = spread_pool_service(ps.assign(value=10.0), pdw.assign(value=[3.0, 1.0]))
    assert out.set_index("region")["value"].to_dict() == pytest.approx({"r1": 7.5, "r2": 2.5})


@pytest.mark.parametrize("which", ["hand", "default"])
def test_the_results_spread_is_the_reference_spread_bit_for_bit(which: str) -> None:
    from capacity import load_dataset
    from tests.conftest import DEFAULT_DATA

    ds = _two_regions() if which == "hand" else load_dataset(DEFAULT_DATA)
    m = build_model(ds)
    frames = solution_frames(m, run_solver(m, SolveOptions()).x)
    reference = spread_pool_service(frames["pool_serve"], frames["pool_draw"])
    serve = frames["serve"]
    fast = serve[serve["pool"].to_numpy() != ""].reset_index(drop=True)
    assert len(reference) > 0 and len(fast) == len(reference)
    for column in reference.columns:
        assert fast[column].tolist() == reference[column].tolist(), column
