"""Migration to a new chip family on hand-sized data: the porting cost and the derate schedule.

tests/data/lp_one: one quarter, customer ``a`` trains 500 H100e at 6,000 USD per
H100e-quarter; a serving chip (1 H100e, 1 kW, family ``nv``) costs 1,300 USD a quarter
(rent 1,000 + energy 300), so serving one H100e earns 4,700. tests/data/lp_two adds
2026Q2 with 300 H100e (margin 3.53M without migration); tests/data/lp_four has four
quarters of 500 H100e each (discount factor 1 everywhere).
"""

from __future__ import annotations

import pandas as pd
import pytest

from capacity.dataset import load_dataset
from capacity.validation import DataValidationError
from optimizer import SolveOptions, Status, solve
from optimizer.components.migration_inputs import remaining_share
from optimizer.plan.check import check_frames
from optimizer.plan.model import build_model
from optimizer.plan.raw_solve import run_solver
from optimizer.plan.results import solution_frames
from tests.lp_helpers import LP_DATA, edit

MARGIN = SolveOptions(objective="margin")


def migration(**cells: object) -> pd.DataFrame:
    """One migration row of customer a onto family nv from 2026Q1 (defaults: free, no derate)."""
    row = {
        "customer": "a",
        "family": "nv",
        "from_period": "2026Q1",
        "migration_cost_usd": 0.0,
        "derate_initial": 0.0,
        "recovery_periods": 0,
    }
    row.update(cells)
    return pd.DataFrame([row])


def term(r, name: str) -> float:
    costs = r.tables["costs"]
    return float(costs.loc[costs["term"] == name, "cost_usd"].sum())


def test_migration_cost_is_paid_exactly_once(tmp_path):
    two = load_dataset(LP_DATA / "lp_two")
    r = solve(two.replace(migration=migration(migration_cost_usd=100_000.0)), MARGIN)
    assert r.status == Status.optimal and not len(r.violations)
    # the family holds the peak (500 in 2026Q1): the whole cost, once, in 2026Q1
    assert term(r, "migration_cost") == pytest.approx(100_000.0, rel=1e-9)
    m = r.tables["migration"].set_index("period")
    assert m.loc["2026Q1", "port_share"] == pytest.approx(1.0, rel=1e-9)
    assert m.loc["2026Q2", "port_share"] == pytest.approx(0.0, abs=1e-9)
    assert m.loc["2026Q2", "ported_share"] == pytest.approx(1.0, rel=1e-9)
    assert m.loc["2026Q1", "migration_cost_usd"] == pytest.approx(100_000.0, rel=1e-9)
    assert m["migration_cost_usd"].sum() == pytest.approx(100_000.0, rel=1e-9)
    assert m.loc["2026Q2", "held_h100e"] == pytest.approx(300.0, rel=1e-9)
    # one more H100e held in 2026Q1 needs 1/500 more of the port: 100,000 / 500 USD;
    # 2026Q2 holds 300 of the 500 moved, so its row has slack
    assert m.loc["2026Q1", "shadow_price_usd_per_h100e"] == pytest.approx(200.0, rel=1e-6)
    assert m.loc["2026Q2", "shadow_price_usd_per_h100e"] == pytest.approx(0.0, abs=1e-6)
    assert r.margin_usd == pytest.approx(2.35e6 + 1.18e6 - 100_000.0, rel=1e-6)


@pytest.mark.parametrize(("cost", "served"), [(2.30e6, 500.0), (2.40e6, 0.0)])
def test_a_port_dearer_than_what_it_earns_is_not_made(cost, served):
    # one quarter: serving the 500 H100e earns 500 x 4,700 = 2.35M; a port dearer
    # than that leaves the family unused (the customer is cheaper left unserved)
    one = load_dataset(LP_DATA / "lp_one")
    r = solve(one.replace(migration=migration(migration_cost_usd=cost)), MARGIN)
    assert r.status == Status.optimal and not len(r.violations)
    d = r.tables["demand"]
    assert float(d["served_h100e"].sum()) == pytest.approx(served, abs=1e-6)
    assert r.margin_usd == pytest.approx(max(2.35e6 - cost, 0.0), abs=1.0)  # solver tolerance


def test_the_cost_objective_ignores_migration():
    one = load_dataset(LP_DATA / "lp_one")
    base = solve(one)
    r = solve(one.replace(migration=migration(migration_cost_usd=9e9, derate_initial=0.5)))
    assert r.objective_usd == pytest.approx(base.objective_usd, rel=1e-9)
    assert term(r, "migration_cost") == 0.0
    assert r.tables["migration"].empty


def test_the_derate_recovers_on_the_stated_schedule():
    # 0.4 MW, no build: 400 chips serve 400 x m H100e, m = 1 - 0.5 x max(0, 1 - a/2)
    four = load_dataset(LP_DATA / "lp_four")
    small = edit(four, "sites", initial_it_mw=0.4, max_build_mw_per_period=0.0)
    ds = small.replace(migration=migration(derate_initial=0.5, recovery_periods=2))
    r = solve(ds, MARGIN)
    assert r.status == Status.optimal and not len(r.violations)
    served = r.tables["demand"].set_index("period")["served_h100e"]
    assert served.to_dict() == pytest.approx(
        {"2026Q1": 200.0, "2026Q2": 300.0, "2026Q3": 400.0, "2026Q4": 400.0}, rel=1e-9
    )
    m = r.tables["migration"].set_index("period")["derate_factor"]
    assert m.to_dict() == pytest.approx(
        {"2026Q1": 0.5, "2026Q2": 0.75, "2026Q3": 1.0, "2026Q4": 1.0}, rel=1e-12
    )
    a = r.tables["assignment"].groupby("period")[["h100e", "chips"]].sum()
    assert (a["h100e"] / a["chips"]).to_dict() == pytest.approx(m.to_dict(), rel=1e-9)


def test_the_derate_holds_until_the_port_starts():
    # from 2026Q3: the initial derate until then, recovered in one quarter after it
    four = load_dataset(LP_DATA / "lp_four")
    small = edit(four, "sites", initial_it_mw=0.4, max_build_mw_per_period=0.0)
    row = migration(from_period="2026Q3", derate_initial=0.2, recovery_periods=1)
    r = solve(small.replace(migration=row), MARGIN)
    served = r.tables["demand"].set_index("period")["served_h100e"]
    assert served.to_list() == pytest.approx([320.0, 320.0, 320.0, 400.0], rel=1e-9)


def test_remaining_share_by_hand():
    got = remaining_share([-1, 0, 1, 2, 3, 0, 5], [4, 4, 4, 4, 4, 0, 0])
    assert list(got) == pytest.approx([1.0, 1.0, 0.75, 0.5, 0.25, 0.0, 0.0])


def test_the_checker_finds_a_port_short_of_what_the_family_holds():
    two = load_dataset(LP_DATA / "lp_two")
    ds = two.replace(migration=migration(migration_cost_usd=100_000.0))
    model = build_model(ds, objective="margin")
    fr = solution_frames(model, run_solver(model, MARGIN).x, 0)
    assert "migration" not in set(check_frames(ds, fr)["family"])
    port = fr["migration_port"].copy()
    port["value"] = port["value"] * 0.5  # half the share moved: 250 H100e for 500 held
    bad = check_frames(ds, {**fr, "migration_port": port})
    rows = bad[bad["family"] == "migration"]
    # 2026Q1 holds 500 and 2026Q2 300 H100e against 250 ported
    assert rows["keys"].tolist() == ["a/nv,2026Q1", "a/nv,2026Q2"]
    assert rows["violation"].tolist() == pytest.approx([250.0, 50.0], rel=1e-6)


@pytest.mark.parametrize(
    ("cell", "value", "needle"),
    [
        ("migration_cost_usd", "-5", "migration_cost_usd"),
        ("derate_initial", "1", "derate_initial"),
        ("derate_initial", "-0.1", "derate_initial"),
        ("recovery_periods", "-2", "recovery_periods"),
        ("family", "tpu", "family"),
    ],
)
def test_bad_migration_rows_name_file_row_column_and_value(tmp_path, cell, value, needle):
    import shutil

    data = tmp_path / "d"
    shutil.copytree(LP_DATA / "lp_two", data)
    row = {
        "customer": "a",
        "family": "nv",
        "from_period": "2026Q1",
        "migration_cost_usd": "100",
        "derate_initial": "0.2",
        "recovery_periods": "2",
    }
    row[cell] = value
    pd.DataFrame([row]).to_csv(data / "migration.csv", index=False)
    with pytest.raises(DataValidationError) as err:
        load_dataset(data)
    text = str(err.value)
    assert "migration.csv" in text and needle in text and value in text
    assert "2" in text  # the row as a spreadsheet shows it


def test_exact_clusters_count_the_h100e_after_the_migration_derate():
    """The cluster link holds the customer's training H100e at a site to its demand, in
    H100e after the migration factor m; the checker counted them before it (666.7 chips
    as 666.7 H100e against 500) and called the optimum an error."""
    four = load_dataset(LP_DATA / "lp_four")
    ds = edit(four, "sites", initial_it_mw=1.0, max_build_mw_per_period=0.0)
    rule = pd.DataFrame(
        [
            {
                "customer": "a",
                "from_period": "2026Q1",
                "to_period": "",
                "min_cluster_mw": 0.0,
                "min_cluster_h100e": 0.0,
                "max_sites": 0,
                "switch_cost_usd": 0.0,
                "min_duration_periods": 1,
            }
        ]
    )
    ds = ds.replace(migration=migration(derate_initial=0.5, recovery_periods=2))
    opts = SolveOptions(objective="margin", clusters=True)
    r = solve(ds.replace(training_clusters=rule), opts)
    assert r.status == Status.optimal and not len(r.violations), r.violations
    # the 1 MW grid at PUE 1.5 runs 666.7 chips: 333.3 H100e at m = 0.5 in 2026Q1,
    # then 500 (666.7 x 0.75, capped at the demand) and 500
    served = r.tables["demand"].set_index("period")["served_h100e"]
    assert served.tolist() == pytest.approx([1000 / 1.5 * 0.5, 500.0, 500.0, 500.0], rel=1e-9)
    h = r.tables["training_clusters"].set_index("period")["h100e"]
    assert h["2026Q1"] == pytest.approx(1000 / 1.5 * 0.5, rel=1e-9)
