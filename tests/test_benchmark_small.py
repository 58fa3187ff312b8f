"""Small run of the benchmark: ours, the highspy floor and the linopy peer state one LP.

The three objectives must agree to 1e-6 (relative) and the peer must create exactly
the columns and rows of the reference model; the compact formulation (the default)
must give the reference's objective to 1e-7 (relative) with no more columns; times
are not asserted.
"""

from __future__ import annotations

import math

import pytest

from benchmarks.generate import SIZES, generate
from benchmarks.linopy_peer import solve_linopy
from benchmarks.run import REL_TOL, agreement, export_arrays, floor_solve, loglog_slope
from capacity.scenarios import apply_overrides
from optimizer import SolveOptions, Status, build_model, solve


@pytest.fixture(scope="module")
def small():
    return generate("small")


@pytest.fixture(scope="module")
def ours(small):
    return solve(small, SolveOptions(solver="highs", formulation="reference"))


def test_generator_is_valid_and_deterministic(small):
    again = generate("small")
    assert again.hash == small.hash
    assert generate("small", seed=1).hash != small.hash
    s = SIZES["small"]
    assert len(small.periods) == s.periods
    assert len(small.table("sites")) == s.sites
    assert len(small.table("chips")) == s.chips
    assert len(small.table("customers")) == s.customers


def test_three_ways_same_objective(small, ours):
    assert ours.status == Status.optimal
    model = build_model(small, formulation="reference")
    floor = floor_solve(export_arrays(model))
    peer = solve_linopy(small)
    assert floor["status"] == "Optimal"
    assert peer.status == "optimal"
    rec = {
        "ours": {"objective_usd": ours.objective_usd},
        "floor": {"objective_usd": floor["objective_usd"]},
        "linopy": {"objective_usd": peer.objective_usd},
    }
    ok, diff = agreement(rec)
    assert ok, diff
    assert peer.objective_usd == pytest.approx(ours.objective_usd, rel=REL_TOL)
    assert floor["objective_usd"] == pytest.approx(ours.objective_usd, rel=REL_TOL)
    # the peer re-derives every index set: same columns and rows as the reference
    assert peer.n_variables == ours.n_variables == model.n_variables
    assert peer.n_constraints == ours.n_constraints


def test_formulations_agree_at_small_size(small, ours):
    comp = solve(small, SolveOptions(formulation="compact"))
    assert ours.status == comp.status == Status.optimal
    assert comp.formulation == "compact" and ours.formulation == "reference"
    assert comp.objective_usd == pytest.approx(ours.objective_usd, rel=1e-7)
    assert len(comp.violations) == 0
    # at small size every (chip, region, workload, period) has one site or one service:
    # no group is worth a region balance, so the compact model keeps the assign columns
    assert comp.n_variables == ours.n_variables == 365
    assert comp.n_constraints == ours.n_constraints == 287


@pytest.mark.parametrize("seed", [0, 1])
def test_formulations_agree_on_a_small_instance_with_crowded_regions(seed):
    # 8 sites in 2 regions, 4 customers: most groups have several sites and services
    ds = generate("small", sites=8, customers=4, regions=2, seed=seed)
    ref = solve(ds, SolveOptions(formulation="reference"))
    comp = solve(ds, SolveOptions(formulation="compact"))
    assert ref.status == comp.status == Status.optimal
    assert comp.objective_usd == pytest.approx(ref.objective_usd, rel=1e-7)
    assert len(comp.violations) == 0 and len(ref.violations) == 0
    m_ref = build_model(ds, formulation="reference")
    m_comp = build_model(ds, formulation="compact")
    kinds = m_comp.variables["kind"].value_counts()
    assert kinds["busy"] > 0 and kinds["serve"] > 0
    assert (m_comp.constraints["family"] == "region_balance").any()
    assert comp.n_variables == m_comp.n_variables < m_ref.n_variables == ref.n_variables
    if seed == 0:  # the counts of this instance (columns, rows)
        assert (m_ref.n_variables, m_ref.n_constraints) == (1441, 682)
        assert (m_comp.n_variables, m_comp.n_constraints) == (929, 746)


def test_peer_tracks_data_changes(small, ours):
    # +10% demand must raise both objectives by the same amount (so the agreement
    # check above is not vacuous: the peer reads the data, not a constant)
    more = apply_overrides(
        small,
        [
            {
                "op": "scale",
                "table": "demand",
                "column": "demand_h100e",
                "factor": 1.1,
                "source": "test",
            }
        ],
    )
    a = solve(more, SolveOptions(solver="highs")).objective_usd
    b = solve_linopy(more).objective_usd
    assert a > ours.objective_usd * (1 + 1e-3)
    assert b == pytest.approx(a, rel=REL_TOL)
    ok, _ = agreement(
        {
            "ours": {"objective_usd": ours.objective_usd},
            "floor": {"objective_usd": a},
            "linopy": {"objective_usd": b},
        }
    )
    assert ok is False


def test_loglog_slope():
    assert loglog_slope([1e3, 1e4, 1e5], [2.0, 20.0, 200.0]) == pytest.approx(1.0)
    assert loglog_slope([1e3, 1e5], [1.0, 100.0**1.5]) == pytest.approx(1.5)
    assert math.isnan(loglog_slope([1.0], [1.0]))
