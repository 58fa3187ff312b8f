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
from benchmarks.run import (
    FORMULATION_REL_TOL,
    KEEP_MARKER,
    REL_TOL,
    _hedge_rows,
    agreement,
    default_formulation,
    export_arrays,
    floor_solve,
    formulations_agree,
    kept_text,
    loglog_slope,
    merge_runs,
    targets,
)
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
        "reference": {"status": "optimal", "objective_usd": ours.objective_usd},
        "floor": {"status": floor["status"], "objective_usd": floor["objective_usd"]},
        "linopy": {"status": peer.status, "objective_usd": peer.objective_usd},
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
    # every (customer, chip) may be served in both regions: all service is pooled
    assert kinds["busy"] > 0 and kinds["serve"] == 0
    assert kinds["pool_serve"] == 2 * kinds["pool_draw"] > 0
    families = m_comp.constraints["family"]
    assert (families == "region_balance").any() and (families == "pool_balance").any()
    assert comp.n_variables == m_comp.n_variables < m_ref.n_variables == ref.n_variables
    if seed == 0:  # the counts of this instance (columns, rows)
        assert (m_ref.n_variables, m_ref.n_constraints) == (1441, 682)
        assert (m_comp.n_variables, m_comp.n_constraints) == (865, 778)


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
            "reference": {"status": "optimal", "objective_usd": ours.objective_usd},
            "floor": {"status": "Optimal", "objective_usd": a},
            "linopy": {"status": "optimal", "objective_usd": b},
        }
    )
    assert ok is False


def test_loglog_slope():
    assert loglog_slope([1e3, 1e4, 1e5], [2.0, 20.0, 200.0]) == pytest.approx(1.0)
    assert loglog_slope([1e3, 1e5], [1.0, 100.0**1.5]) == pytest.approx(1.5)
    assert math.isnan(loglog_slope([1.0], [1.0]))


def test_formulation_check_compares_only_what_solved():
    both = {
        "compact": {"status": "optimal", "objective_usd": 1e11 * (1 + 0.5 * FORMULATION_REL_TOL)},
        "reference": {"status": "optimal", "objective_usd": 1e11},
    }
    ok, diff = formulations_agree(both)
    assert ok is True
    assert diff == pytest.approx(0.5 * FORMULATION_REL_TOL)
    both["compact"]["objective_usd"] = 1e11 * (1 + 2 * FORMULATION_REL_TOL)
    assert formulations_agree(both)[0] is False
    # a time-limited run has no optimum: nothing to compare, not a disagreement
    both["reference"]["status"] = "time_limit_feasible"
    ok, diff = formulations_agree(both)
    assert ok is None
    assert math.isnan(diff)


def test_targets_use_the_product_formulation_and_say_when_hedge_was_not_rerun():
    def rec(size, n, build_s, e2e, peak):
        o = {
            "formulation": "reference",
            "status": "optimal",
            "objective_usd": 1.0,
            "n_variables": n,
            "n_constraints": 1,
            "stages": {"load": 0.5, "validate": 0.5, "build": build_s},
            "solve_wall_s": e2e,
            "peak_mb": peak,
        }
        return {"size": size, "reference": o, "compact": {**o, "formulation": "compact"}}

    recs = [rec("default", 1e4, 0.1, 1.0, 200.0), rec("large", 1e6, 10.0, 13.0, 1000.0)]
    recs[1]["linopy"] = {"status": "optimal", "build_s": 1.0, "solve_s": 13.0 / 0.07 - 1.0}
    recs.append(rec("xl", 1e7, 100.0, 59.5, 3000.0))
    batch = {"rebuild_s": 1.0, "reuse_s": 0.1, "warm_s": 0.07}
    got = {t: (v, n) for t, v, n in targets(recs, batch)}
    form = default_formulation()  # compact where this checkout has it
    # 13 / (13 / 0.07) = 0.07: at the target
    assert got[f"large: ours ({form}) / linopy end to end <= 0.07"] == (
        "PASS",
        "13.0 s / 185.7 s = 0.07",
    )
    # 1.0 / 0.1 = 10x: at the target; 0.1 / 0.07 = 1.43 <= 1.5
    assert got["batch: reuse >= 10x faster per scenario"] == ("PASS", "1.000 s / 0.100 s = 10.00x")
    assert got["batch: a reused case <= 1.5x the warm solve alone"] == (
        "PASS",
        "0.100 s / 0.070 s = 1.43x",
    )
    assert got["large: peak memory < 2 GB"][0] == "PASS"
    assert got[f"build time log-log slope <= 1.1 ({form}, default..xl)"][0] == "PASS"
    # xl end to end counts load + validate: 0.5 + 0.5 + 59.5 = 60.5 s > 60 s
    name, verdict = "xl: optimal in < 60 s end to end", got["xl: optimal in < 60 s end to end"]
    assert verdict[0] == "MISS" and verdict[1].startswith(f"optimal, 60.5 s ({form}"), name
    assert got["xxl: optimal in < 600 s end to end and peak memory < 4 GB"] == ("not run", "-")
    hedge = [t for t in got if t.startswith("hedged 100-scenario plan")]
    assert [got[t][0] for t in hedge] == ["MISS (not re-run)"]


def test_rewrite_keeps_hand_written_tail(tmp_path):
    f = tmp_path / "RESULTS.md"
    assert kept_text(f) == ""
    f.write_text(f"# old generated\n\n{KEEP_MARKER}\n\n## Hand notes\n")
    assert kept_text(f) == f"{KEEP_MARKER}\n\n## Hand notes\n"


def test_runs_of_parts_merge_by_size_and_keep_the_batch():
    m = {"nproc": "2", "load_1min": "0.50", "run_started_utc": "2026-12-01 02:00 UTC"}
    first = {
        "records": [{"size": "xl", "tag": "xl-a"}, {"size": "large", "tag": "large-a"}],
        "batch": None,
        "machine": m,
    }
    second = {
        "records": [{"size": "large", "tag": "large-b"}, {"size": "default", "tag": "d"}],
        "batch": {"n": 20, "rebuild_s": 1.0, "reuse_s": 0.2},
        "machine": {**m, "run_started_utc": "2026-12-01 04:00 UTC", "load_1min": "0.40"},
    }
    doc = merge_runs([first, second], ["/tmp/a.json", "/tmp/b.json"])
    # generate.SIZES order; the later file wins for a size in both
    assert [r["tag"] for r in doc["records"]] == ["d", "large-b", "xl-a"]
    assert doc["batch"] == second["batch"]
    assert doc["machine"]["runs"] == (
        "a.json: started 2026-12-01 02:00 UTC, load 0.50 at start, xl, large · "
        "b.json: started 2026-12-01 04:00 UTC, load 0.40 at start, large, default, batch"
    )
    with pytest.raises(ValueError, match="no benchmark record in x.json"):
        merge_runs([{"records": [], "batch": None, "machine": m}], ["x.json"])


def test_hedge_table_rows_come_from_the_json_lines():
    ls = {
        "method": "lshaped",
        "samples": 100,
        "converged": True,
        "iterations": 12,
        "objective_usd": 1.5e11,
        "lower_bound_usd": 1.49990e11,
        "gap_rel": 6.7e-5,
        "timings_s": {"setup": 10.0, "wait_and_see": 100.4, "ev": 20.0, "iterations": 70.0},
        "wall_s": 200.4,
        "peak_mb": 900.0,
        "load_before": 0.5,
        "load_after": 2.0,
        "wait_and_see_usd": 1.4e11,
        "eev_usd": 1.6e11,
        "vss_usd": 1.0e10,
        "evpi_usd": 1.0e10,
    }
    ef = {
        "method": "extensive",
        "samples": 100,
        "status": "time_limit_no_solution",
        "build_s": 80.0,
        "solve_s": 1800.2,
        "wall_s": 1880.2,
        "peak_mb": 2900.0,
        "load_before": 2.0,
        "load_after": 2.1,
    }
    rows = _hedge_rows([ls, ef])
    assert rows[-6] == (
        "| 100 | extensive | time_limit_no_solution | - | - | - | - | 1880 (build 80, solve 1800) "
        "| 2900 | 2.0 / 2.1 |"
    )
    assert rows[-5] == (
        "| 100 | lshaped | converged | 12 | 1.5000000e+11 | 1.4999000e+11 | 6.7e-05 | "
        "200 (setup 10, wait-and-see 100, ev 20, iterations 70) | 900 | 0.5 / 2.0 |"
    )
    assert rows[-1] == "| 100 | 1.4000000e+11 | 1.6000000e+11 | 1.0000000e+10 | 1.0000000e+10 |"
    verdict = {t: (v, n) for t, v, n in targets([], None, [ls, ef])}
    name = "hedged 100-scenario plan: converged in < 300 s, within the extensive form's memory"
    assert verdict[name] == (
        "PASS",
        "L-shaped converged 200 s, 900 MB; extensive time_limit_no_solution 1880 s, 2900 MB",
    )
    # 300.4 s is over the 300 s target; memory above the extensive form's fails too
    slow = targets([], None, [{**ls, "wall_s": 300.4}, ef])
    assert [v for t, v, _ in slow if t == name] == ["MISS"]
    big = targets([], None, [{**ls, "peak_mb": 2900.5}, ef])
    assert [v for t, v, _ in big if t == name] == ["MISS"]
    assert _hedge_rows(None) == []


def test_running_total_kinds_are_the_columns_the_thresholds_add(small, monkeypatch):
    """RUNNING_TOTAL_KINDS is held to the builder: the kinds that appear when both
    running-total thresholds are 0, and only those."""
    import optimizer.components.chips as chips_mod
    import optimizer.components.site_built as site_built_mod
    from benchmarks.run import RUNNING_TOTAL_KINDS, running_total_columns

    def kinds(m):
        return set(m.variables.loc[m.variables["kind"].notna(), "kind"].astype(str))

    plain = build_model(small, formulation="reference")
    assert running_total_columns(plain) == 0  # below both thresholds
    monkeypatch.setattr(chips_mod, "RECURSIVE_INVENTORY_MIN_TERMS", 0)
    monkeypatch.setattr(site_built_mod, "RECURSIVE_CAPACITY_MIN_TERMS", 0)
    forced = build_model(small, formulation="reference")
    added = forced.n_variables - plain.n_variables
    assert kinds(forced) - kinds(plain) == set(RUNNING_TOTAL_KINDS)
    assert running_total_columns(forced) == added > 0


def test_linopy_columns_are_the_reference_less_its_running_total_columns():
    from benchmarks.run import _same_problem_rows

    ref = {"status": "optimal", "objective_usd": 1.0, "n_variables": 100, "n_constraints": 9}
    ref["running_total_columns"] = 3
    li = {"status": "optimal", "objective_usd": 1.0, "n_variables": 97}
    rec = {"size": "medium", "reference": ref, "floor": {"objective_usd": 1.0}, "linopy": li}
    assert _same_problem_rows([rec])[-1].endswith("(97, same less 3 running-total columns) |")
    rec["linopy"] = {**li, "n_variables": 98}
    assert _same_problem_rows([rec])[-1].endswith("(98, DIFFERENT) |")
