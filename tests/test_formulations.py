"""The compact formulation (busy + serve + region_balance) against the reference (assign).

Both formulations state the same LP up to an exact change of variables
(:mod:`optimizer.components.region`): the optimal objective must agree to 1e-7 relative
on every dataset, the compact plan's split back to per-site, per-customer assignments
must pass the independent checker, and the compact model must be smaller where
regions hold several sites and customers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from benchmarks.generate import generate
from capacity import apply_scenario, load_dataset
from optimizer import SolveOptions, Status, build_model, solve
from optimizer.components.region import split_region_service
from optimizer.plan.check import check_frames, check_solution
from optimizer.plan.raw_solve import run_solver
from optimizer.plan.results import solution_frames
from tests.conftest import DEFAULT_DATA, ROOT, TINY

DATA = ROOT / "tests" / "data"
REL = 1e-7


def _both(ds, **options):
    ref = solve(ds, SolveOptions(formulation="reference", **options))
    comp = solve(ds, SolveOptions(formulation="compact", **options))
    return ref, comp


@pytest.mark.parametrize("name", ["lp_one", "lp_base", "lp_clusters", "report_tiny", "tiny"])
def test_same_objective_on_the_test_datasets(name: str) -> None:
    path = TINY if name == "tiny" else DATA / name
    ds = load_dataset(path)
    for scenario in ds.scenarios or ["base"]:
        sds = apply_scenario(ds, scenario) if ds.scenarios else ds
        ref, comp = _both(sds)
        assert ref.status == comp.status, (name, scenario)
        if ref.objective_usd is None:
            continue
        assert comp.objective_usd == pytest.approx(ref.objective_usd, rel=REL), (name, scenario)
        assert len(comp.violations) == 0 and comp.formulation == "compact"
        assert comp.n_variables <= ref.n_variables


@pytest.mark.parametrize("scenario", ["neutral", "optimistic", "negative"])
def test_same_objective_on_the_default_data_and_fewer_columns(
    scenario: str, default_plan: Callable[..., tuple[Any, Any]]
) -> None:
    ds, comp = default_plan(scenario)  # compact is the default formulation
    ref = solve(ds, SolveOptions(formulation="reference"))
    assert comp.formulation == "compact"
    assert ref.status == comp.status == Status.optimal
    assert comp.objective_usd == pytest.approx(ref.objective_usd, rel=REL)
    assert len(comp.violations) == 0 and len(ref.violations) == 0
    assert comp.n_variables < ref.n_variables
    if scenario == "neutral":  # the counts of this dataset (columns, rows)
        assert (ref.n_variables, ref.n_constraints) == (15716, 6842)
        # 672 serve columns pooled into 336 pool_serve + 168 pool_draw and 84 pool rows
        assert (comp.n_variables, comp.n_constraints) == (13078, 7764)
    # the report tables derived from the plan agree where the optimum is unique
    for table, column in (("costs", "cost_usd"), ("demand", "demand_h100e")):
        assert comp.tables[table][column].sum() == pytest.approx(
            ref.tables[table][column].sum(), rel=REL
        )


@pytest.mark.slow
def test_same_objective_on_the_generated_medium_instance() -> None:
    ds = generate("medium")
    m_ref = build_model(ds, formulation="reference")
    m_comp = build_model(ds, formulation="compact")
    assert (m_ref.n_variables, m_comp.n_variables) == (80618, 29380)
    assert (m_ref.n_constraints, m_comp.n_constraints) == (15192, 18594)
    ref, comp = _both(ds)
    assert ref.status == comp.status == Status.optimal
    assert comp.objective_usd == pytest.approx(ref.objective_usd, rel=REL)
    assert len(comp.violations) == 0


def test_fewer_columns_at_the_generated_sizes() -> None:
    # (reference, compact) columns; building large takes a few seconds, no solve. Large
    # holds 2,600 built-to-date columns (1,440 built, 1,160 liquid_built: above
    # RECURSIVE_CAPACITY_MIN_TERMS running-sum terms); the smaller sizes none.
    expected = {"default": (12620, 9006), "medium": (80618, 29380), "large": (440749, 78131)}
    for size, (n_ref, n_comp) in expected.items():
        ds = generate(size)
        assert build_model(ds, formulation="reference").n_variables == n_ref, size
        assert build_model(ds, formulation="compact").n_variables == n_comp, size


# --------------------------------------------------------------- a hand-sized region
def _crowded_region():
    """Two sites of one region with 600 and 400 installed chips, three customers.

    Every chip is an initial chip (no production, no build); customers a, b, c each
    want 400 H100e of training in 2026Q1 (1 H100e per chip, derate 1) with unmet
    penalties 5,000, 3,000 and 1,000 USD per H100e. A busy chip costs 0.5 kW above
    idle x 2,000 h x PUE 1.5 x 100 USD/MWh = 150 USD, so all 1,000 chips work: a and
    b are served in full, c gets 200 and 200 H100e are unmet. Objective: idle energy
    of the fleet 1,000 x 0.5 kW x 2,000 h x 1.5 x 100 USD/MWh = 150,000 + busy energy
    150,000 + unmet 200 x 1,000 = 500,000 USD.
    """
    one = load_dataset(DATA / "lp_one")
    sites = one.table("sites")
    sites = pd.concat(
        [
            sites.assign(initial_it_mw=0.6, max_build_mw_per_period=0.0, max_it_mw=0.6),
            sites.assign(
                site="s2",
                display_name="Site Two",
                initial_it_mw=0.4,
                max_build_mw_per_period=0.0,
                max_it_mw=0.4,
            ),
        ],
        ignore_index=True,
    )
    grid = pd.concat([one.table("site_grid"), one.table("site_grid").assign(site="s2")])
    water = pd.concat([one.table("site_water"), one.table("site_water").assign(site="s2")])
    fleet = pd.DataFrame(
        {
            "chip": ["g1", "g1"],
            "site": ["s1", "s2"],
            "chips": [600.0, 400.0],
            "install_period": ["2025Q4", "2025Q4"],
        }
    )
    base = one.table("customers")
    customers = pd.concat(
        [
            base.assign(customer=k, unmet_penalty_usd_per_h100e_period=p)
            for k, p in (("a", 5000.0), ("b", 3000.0), ("c", 1000.0))
        ],
        ignore_index=True,
    )
    demand = pd.concat(
        [one.table("demand").assign(customer=k, demand_h100e=400.0) for k in "abc"],
        ignore_index=True,
    )
    eligibility = pd.concat(
        [one.table("eligibility").assign(customer=k) for k in "abc"], ignore_index=True
    )
    supply = one.table("supply_resources").assign(capacity=0.0)
    return one.replace(
        sites=sites,
        site_grid=grid,
        site_water=water,
        initial_fleet=fleet,
        customers=customers,
        demand=demand,
        eligibility=eligibility,
        supply_resources=supply,
    )


def test_region_balance_binds_in_a_hand_sized_region() -> None:
    ds = _crowded_region()
    m_ref = build_model(ds, formulation="reference")
    m_comp = build_model(ds, formulation="compact")
    # 2 sites x 3 customers = 6 assign columns; 2 busy + 3 serve + 1 region balance row
    kinds = m_comp.variables["kind"].astype(str).value_counts()
    assert (m_ref.variables["kind"] == "assign").sum() == 6
    assert kinds.get("busy") == 2 and kinds.get("serve") == 3 and "assign" not in kinds
    assert (m_comp.constraints["family"] == "region_balance").sum() == 1
    assert m_comp.n_variables == m_ref.n_variables - 1
    ref, comp = _both(ds)
    assert ref.objective_usd == pytest.approx(500_000, rel=1e-9)
    assert comp.objective_usd == pytest.approx(500_000, rel=1e-9)
    assert comp.status == Status.optimal and len(comp.violations) == 0
    # the split: sites largest first (s1 600, s2 400), services largest first (a, b
    # tie in customer order, then c), cut where they overlap
    a = comp.tables["assignment"].set_index(["site", "customer"])["chips"].sort_index()
    assert a.to_dict() == pytest.approx(
        {("s1", "a"): 400.0, ("s1", "b"): 200.0, ("s2", "b"): 200.0, ("s2", "c"): 200.0}
    )
    # d objective / d rhs of the balance: one chip served without a busy chip serves c
    # (1,000 USD of unmet penalty) and draws nothing: -1,000 USD per chip
    sp = comp.tables["shadow_prices"]
    rb = sp[sp["family"] == "region_balance"]
    assert rb["key"].tolist() == ["g1/r1/training"]
    assert rb["shadow_price"].iloc[0] == pytest.approx(-1000.0, rel=1e-9)
    assert rb["unit"].iloc[0] == "USD/chips"
    # one more chip in a site's fleet: serves c (-1,000) and draws 150 USD: -850
    fa = sp[sp["family"] == "fleet_assignment"].set_index("key")["shadow_price"]
    assert fa.to_dict() == pytest.approx({"g1/s1": -850.0, "g1/s2": -850.0})


def test_the_split_has_both_margins_and_the_checker_verifies_them() -> None:
    ds = _crowded_region()
    m = build_model(ds)
    raw = run_solver(m, SolveOptions())
    frames = solution_frames(m, raw.x)
    a = frames["assign"]
    busy = frames["busy"].set_index(["chip", "site", "workload", "period"])["value"]
    by_site = a.groupby(["chip", "site", "workload", "period"])["value"].sum()
    assert by_site.to_dict() == pytest.approx(busy.to_dict())
    keys = ["chip", "customer", "workload", "demand_regions", "period"]
    serve = frames["serve"].set_index(keys)["value"]
    assert a.groupby(keys)["value"].sum().to_dict() == pytest.approx(serve.to_dict())
    assert check_frames(ds, frames).empty
    # a split that moves 50 chips of b from s2 to s1 breaks the per-site margin: the
    # checker names both sites (and the fleet at s1 is then over by 50 chips)
    bad = a.copy()
    bad.loc[(bad["site"] == "s2") & (bad["customer"] == "b"), "value"] -= 50.0
    bad.loc[(bad["site"] == "s1") & (bad["customer"] == "b"), "value"] += 50.0
    v = check_frames(ds, {**frames, "assign": bad})
    rb = v[v["family"] == "region_balance"]
    assert sorted(rb["keys"]) == ["split g1/s1/training,2026Q1", "split g1/s2/training,2026Q1"]
    assert rb["violation"].tolist() == pytest.approx([50.0, 50.0])
    assert v.loc[v["family"] == "fleet_assignment", "keys"].tolist() == ["g1/s1,2026Q1"]


def test_checker_catches_corruption_of_the_compact_columns() -> None:
    ds = _crowded_region()
    m = build_model(ds)
    assert m.formulation == "compact"
    raw = run_solver(m, SolveOptions())
    assert check_solution(m, raw.x).empty
    kind = m.variables["kind"].to_numpy()
    # 100 busy chips too many at s1 (fleet 600): over the fleet, more than the region serves
    x = raw.x.copy()
    x[int(np.flatnonzero(kind == "busy")[0])] += 100.0
    v = check_solution(m, x)
    assert set(v["family"]) == {"fleet_assignment", "region_balance"}
    fa = v[v["family"] == "fleet_assignment"].iloc[0]
    assert fa["keys"] == "g1/s1,2026Q1" and fa["violation"] == pytest.approx(100.0)
    # 100 chips served that no site has busy: the region balance says so
    y = raw.x.copy()
    y[int(np.flatnonzero(kind == "serve")[0])] += 100.0
    v = check_solution(m, y)
    assert "region_balance" in set(v["family"]) and "fleet_assignment" not in set(v["family"])
    rb = v[v["family"] == "region_balance"]
    assert rb["violation"].max() == pytest.approx(100.0)


def test_split_of_unequal_totals_keeps_the_site_margin() -> None:
    # a service total 1e-9 above the busy total (solver tolerance) is scaled down
    busy = pd.DataFrame(
        {
            "chip": ["g", "g"],
            "site": ["x", "y"],
            "workload": ["training"] * 2,
            "period": ["2026Q1"] * 2,
            "value": [3.0, 1.0],
        }
    )
    serve = pd.DataFrame(
        {
            "chip": ["g", "g"],
            "region": ["r", "r"],
            "customer": ["a", "b"],
            "workload": ["training"] * 2,
            "demand_regions": ["", ""],
            "period": ["2026Q1"] * 2,
            "value": [2.0, 2.0 + 4e-9],
        }
    )
    out = split_region_service(busy, serve, pd.Series({"x": "r", "y": "r"}))
    got = out.set_index(["site", "customer"])["value"].to_dict()
    # largest first: b (scaled to 2.000000002) before a, then cut at the site ends
    assert got == pytest.approx({("x", "b"): 2.0, ("x", "a"): 1.0, ("y", "a"): 1.0}, rel=1e-8)
    by_site = out.groupby("site")["value"].sum()
    assert by_site.to_dict() == pytest.approx({"x": 3.0, "y": 1.0}, rel=1e-15)


def test_cluster_mode_keeps_the_reference_and_says_so() -> None:
    ds = load_dataset(DATA / "lp_clusters")
    sds = apply_scenario(ds, ds.scenarios[0]) if ds.scenarios else ds
    m = build_model(sds, clusters=True)
    assert m.formulation == "reference" and (m.variables["kind"] == "serve").sum() == 0
    r = solve(sds, SolveOptions(clusters=True, time_limit_s=60))
    assert r.formulation == "reference"
    assert "reference formulation: exact training clusters" in r.message


def test_unknown_formulation_is_refused() -> None:
    with pytest.raises(ValueError, match="formulation must be one of"):
        build_model(load_dataset(DATA / "lp_one"), formulation="dense")


def test_the_model_guide_quotes_the_default_data_sizes() -> None:
    """docs/guide/model.md states both formulations' column counts on the default data."""
    import re

    text = (ROOT / "docs" / "guide" / "model.md").read_text(encoding="utf-8")
    m = re.search(r"default data ([\d,]+) -> ([\d,]+) columns", text)
    assert m is not None
    ds = load_dataset(DEFAULT_DATA)
    ref = build_model(ds, formulation="reference").n_variables
    comp = build_model(ds, formulation="compact").n_variables
    assert (m.group(1), m.group(2)) == (f"{ref:,}", f"{comp:,}")
