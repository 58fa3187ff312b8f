"""Hedged plan by the L-shaped decomposition: against the hand-computed newsvendor and
against the extensive form on sampled scenarios of the tiny dataset."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

from capacity.dataset import load_dataset
from optimizer.analysis.decompose import hedge_decomposed
from optimizer.analysis.decompose_cuts import induced_rows
from optimizer.analysis.hedge import extensive_form_objective, hedged_plan
from optimizer.analysis.monte_carlo import sample_scenarios
from optimizer.plan.model import build_stochastic_model, first_stage_universe
from tests.test_risk import CHIP, TINY, newsvendor


# The sampled-scenario tests share one set of draws and its reference solves (each is
# deterministic and read only); a test that changes a call's arguments solves its own.
@functools.cache
def _draws() -> tuple[list[str], list[Any], list[str]]:
    """Four seeded draws of the tiny data (seed 3): names, datasets, notes."""
    return sample_scenarios(load_dataset(TINY), 4, seed=3)


@functools.cache
def _extensive(first_stage: str = "full") -> tuple[float | None, str]:
    """The extensive form's optimum (USD) and status on :func:`_draws`, cost objective."""
    ef, status, _ = extensive_form_objective(_draws()[1], first_stage=first_stage)
    return ef, status


@functools.cache
def _hedged(first_stage: str = "full") -> Any:
    """:func:`hedged_plan` of :func:`_draws` (the extensive form, WS, EEV, VSS, EVPI)."""
    names, dsets, _ = _draws()
    return hedged_plan(scenarios=dict(zip(names, dsets, strict=True)), first_stage=first_stage)


@functools.cache
def _decomposed(first_stage: str = "full") -> Any:
    """The L-shaped hedged plan of :func:`_draws` (serial, tolerance 1e-6, live warm start)."""
    names, dsets, _ = _draws()
    return hedge_decomposed(dsets, names=names, workers=0, tol=1e-6, first_stage=first_stage)


@pytest.mark.parametrize("retain", [0, 1])
def test_newsvendor_by_hand(retain: int) -> None:
    # RP = 1000.001*100 + 0.5*1500*200; EEV (mean demand 200) = 200 CHIP + 0.5*1500*100;
    # WS = 0.5*(100 + 300) CHIP (see tests/test_risk.py).
    low, high = newsvendor(100), newsvendor(300)
    seen: list[float] = []
    p = hedge_decomposed(
        [low, high],
        [1, 1],
        ["low", "high"],
        workers=0,
        tol=1e-8,
        retain=retain,
        on_iteration=lambda r: seen.append(r["gap_rel"]),
    )
    assert p.converged and p.gap_rel <= 1e-8
    # the bounds bracket the optimum; the plan's cost is within the tolerance of it
    assert p.lower_bound_usd <= (100 * CHIP + 0.5 * 1500 * 200) * (1 + 1e-9)
    assert p.expected_cost_usd == pytest.approx(100 * CHIP + 0.5 * 1500 * 200, rel=1e-8)
    assert p.eev_usd == pytest.approx(200 * CHIP + 0.5 * 1500 * 100, rel=1e-9)
    assert p.wait_and_see_usd == pytest.approx(0.5 * 100 * CHIP + 0.5 * 300 * CHIP, rel=1e-9)
    assert p.vss_usd == pytest.approx(25000.1, abs=1e-8 * p.expected_cost_usd)
    assert p.evpi_usd == pytest.approx(49999.9, abs=1e-8 * p.expected_cost_usd)
    assert p.ev_problem == "mean_value"
    installs = p.first_stage[p.first_stage["kind"] == "install"]
    assert installs["value"].sum() == pytest.approx(100.0, abs=1e-3)
    assert seen and seen[-1] <= 1e-8
    ps = p.per_scenario.set_index("scenario")
    assert ps.loc["high", "hedged_cost_usd"] == pytest.approx(100 * CHIP + 1500 * 200, rel=1e-7)


def test_scenario_models_share_the_extensive_forms_first_stage_columns() -> None:
    ds = load_dataset(TINY)
    _, dsets, _ = sample_scenarios(ds, 3, seed=2)
    ef = build_stochastic_model(dsets, [1 / 3] * 3)
    u = first_stage_universe(dsets)
    n_first = int((ef.variables["scenario"] == -1).sum())
    cols = ["kind", "s", "c", "t"]
    for d in dsets:
        m = build_stochastic_model([d], [1.0], universe=u)
        first = m.variables.iloc[:n_first]
        assert (first["scenario"] == -1).all()
        assert first[cols].astype(str).equals(ef.variables.iloc[:n_first][cols].astype(str))
        a, lo, hi = induced_rows(m, n_first)
        assert a.shape[1] == n_first and len(lo) == len(hi) == a.shape[0] > 0


def test_decomposition_matches_the_extensive_form_on_sampled_scenarios() -> None:
    names, dsets, notes = _draws()
    assert len(dsets) + len(notes) == 4
    p = _decomposed()
    ef, status = _extensive()
    assert status == "optimal" and ef is not None
    assert p.converged
    assert p.lower_bound_usd <= ef * (1 + 1e-9)
    assert p.expected_cost_usd == pytest.approx(ef, rel=1e-6)
    # VSS and EVPI agree with hedge.hedged_plan (extensive form, mean-value EV problem)
    ref = _hedged()
    assert p.wait_and_see_usd == pytest.approx(ref.wait_and_see_usd, rel=1e-6)
    assert p.eev_usd == pytest.approx(ref.eev_usd, rel=1e-6)
    assert p.vss_usd == pytest.approx(ref.vss_usd, rel=1e-5, abs=1e-6 * abs(ef))
    assert p.evpi_usd == pytest.approx(ref.evpi_usd, rel=1e-5, abs=1e-6 * abs(ef))
    assert np.isfinite(p.iterations["lower_bound_usd"]).all()


def test_blocks_run_as_dask_actors_on_a_local_cluster() -> None:
    low, high = newsvendor(100), newsvendor(300)
    p = hedge_decomposed([low, high], [1, 1], ["low", "high"], workers=1, tol=1e-8)
    assert p.expected_cost_usd == pytest.approx(100 * CHIP + 0.5 * 1500 * 200, rel=1e-8)
    assert p.peak_mb["workers"] > 0


def test_blocks_find_their_workers_when_the_cached_worker_list_is_empty(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The client's periodic refresh caches scheduler_info() without per-worker entries;
    on a loaded machine the blocks read that cache, found no worker and failed
    ("number sections must be larger than 0"). They ask the scheduler instead."""
    import contextlib

    from optimizer.analysis import decompose_blocks

    real_open = decompose_blocks.open_client

    class StaleInfo:
        def __init__(self, client: object) -> None:
            self._client = client

        def scheduler_info(self, *a: object, **k: object) -> dict[str, object]:
            return {"n_workers": 1, "workers": {}}  # what the periodic refresh caches

        def __getattr__(self, name: str) -> object:
            return getattr(self._client, name)

    @contextlib.contextmanager
    def stale(options: object):  # type: ignore[no-untyped-def]
        with real_open(options) as client:
            yield StaleInfo(client)

    monkeypatch.setattr(decompose_blocks, "open_client", stale)
    low, high = newsvendor(100), newsvendor(300)
    p = hedge_decomposed([low, high], [1, 1], ["low", "high"], workers=1, tol=1e-8)
    assert p.expected_cost_usd == pytest.approx(100 * CHIP + 0.5 * 1500 * 200, rel=1e-8)


def test_bad_weights_are_refused() -> None:
    with pytest.raises(ValueError, match="weight"):
        hedge_decomposed([newsvendor(100)], [-1.0], workers=0)


def test_cli_hedge_matches_its_reference() -> None:
    from typer.testing import CliRunner

    from optimizer.cli.commands import app

    res = CliRunner().invoke(
        app, ["hedge", str(TINY), "--samples", "2", "--workers", "0", "--reference"]
    )
    assert res.exit_code == 0, res.output
    assert "VSS = EEV - RP" in res.output and "converged" in res.output
    assert "relative diff" in res.output


def test_time_limit_in_the_first_round_returns_the_ev_plan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The limit passes at round 1's master solve: no scenario is solved in the round,
    # and the plan is the EV plan, the only one evaluated in every scenario.
    from tests.test_decompose_time_limit import limit_passes_at_master_solve

    low, high = newsvendor(100), newsvendor(300)
    limit_passes_at_master_solve(monkeypatch, 1)
    p = hedge_decomposed([low, high], [1, 1], ["low", "high"], workers=0, time_limit_s=60.0)
    assert len(p.iterations) == 2  # iteration 0 (EV plan) and the round cut short
    assert not p.converged and p.gap_rel > 1e-8
    # the reported cost is a real plan's: at or above the optimum, and the EV plan's
    assert 100 * CHIP + 0.5 * 1500 * 200 <= p.expected_cost_usd * (1 + 1e-12)
    assert p.expected_cost_usd == p.eev_usd


def test_capacity_first_stage_leaves_the_newsvendors_chips_to_recourse() -> None:
    # The newsvendor site cannot build (max_build_mw_per_period = 0): with the capacity
    # first stage nothing is shared, so the hedged plan buys each scenario's own chips:
    # RP = WS = 0.5 (100 + 300) CHIP, EVPI = VSS = 0 (full first stage: RP = 100 CHIP +
    # 0.5 * 1500 * 200, test_newsvendor_by_hand).
    low, high = newsvendor(100), newsvendor(300)
    ws = 0.5 * 100 * CHIP + 0.5 * 300 * CHIP
    p = hedge_decomposed(
        [low, high], [1, 1], ["low", "high"], workers=0, tol=1e-8, first_stage="capacity"
    )
    assert p.converged
    assert p.expected_cost_usd == pytest.approx(ws, rel=1e-9)
    assert p.wait_and_see_usd == pytest.approx(ws, rel=1e-9)
    assert p.evpi_usd == pytest.approx(0.0, abs=1e-9 * ws)
    assert p.vss_usd == pytest.approx(0.0, abs=1e-9 * ws)
    assert p.first_stage.empty
    ref = hedged_plan(scenarios={"low": low, "high": high}, first_stage="capacity")
    assert ref.expected_cost_usd == pytest.approx(ws, rel=1e-9)
    assert ref.eev_usd == pytest.approx(ws, rel=1e-9)
    assert set(ref.first_stage) == {"build_out"}
    ef, status, _ = extensive_form_objective([low, high], first_stage="capacity")
    assert status == "optimal" and ef == pytest.approx(ws, rel=1e-9)


def test_capacity_first_stage_matches_its_extensive_form_on_sampled_scenarios() -> None:
    names, dsets, _ = _draws()
    u = first_stage_universe(dsets, "capacity")
    assert set(u.first_stage) == {"build", "liquid", "retrofit"} and len(u.keys["build"]) > 0
    m = build_stochastic_model(dsets, [0.25] * 4, first_stage="capacity")
    shared = m.variables.loc[m.variables["scenario"] == -1, "kind"].astype(str)
    assert set(shared) <= {"build", "liquid", "retrofit"}
    p = _decomposed("capacity")
    ef, status = _extensive("capacity")
    assert status == "optimal" and ef is not None and p.converged
    assert p.lower_bound_usd <= ef * (1 + 1e-9)
    assert p.expected_cost_usd == pytest.approx(ef, rel=1e-6)
    ref = _hedged("capacity")
    assert ref.expected_cost_usd == pytest.approx(ef, rel=1e-7)
    assert p.eev_usd == pytest.approx(ref.eev_usd, rel=1e-6)
    # chips as recourse: never dearer than sharing them, never below perfect foresight
    full, _ = _extensive()
    assert full is not None
    assert p.wait_and_see_usd * (1 - 1e-9) <= ef <= full * (1 + 1e-9)


def test_a_round_whose_halvings_all_fail_gives_no_upper_bound() -> None:
    # Scenario b never operates any point: after 30 halvings the round has no point
    # evaluated in every scenario, so it must not offer one (it once offered the
    # incumbent with the last 2 cuts, both scenario a's, as its per-scenario values).
    # After the first full round only b, the failing scenario, is solved again.
    import math

    from optimizer.analysis.decompose import _evaluate_operable, _State
    from optimizer.analysis.decompose_cuts import Cut

    asked: list[tuple[float, list[int] | None]] = []

    class NeverOperable:
        def cuts(
            self, name: str, x: np.ndarray, only: list[int] | None = None, until: Any = None
        ) -> list[Cut]:
            assert name == "evaluate"
            asked.append((float(x[0]), only))
            out = [
                Cut(0, True, 5.0, np.zeros(1), x),
                Cut(1, False, math.inf, np.zeros(1), x, "infeasible"),
            ]
            return [c for c in out if only is None or c.scenario in only]

    state = _State(("a", "b"), np.array([0.5, 0.5]), best_ub=10.0, best_x=np.zeros(1))
    got = _evaluate_operable(NeverOperable(), state, np.ones(1), 1)  # type: ignore[arg-type]
    point, cuts, point_cuts, halvings, short = got
    assert point is None and point_cuts == [] and halvings == 30 and not short
    assert len(cuts) == 1 and cuts[0].scenario == 0 and cuts[0].point[0] == 1.0
    # one full round, then b alone at 1/2, 1/4, ..., 2^-30 (toward the incumbent at 0)
    assert asked[0] == (1.0, None) and len(asked) == 31
    assert all(only == [1] for _, only in asked[1:])
    assert asked[-1][0] == pytest.approx(2.0**-30)


def test_halving_solves_the_failing_scenarios_first_then_the_rest_once() -> None:
    # Scenario b operates x <= 1 only, a everything: from x = 3 the round solves both
    # at 3, b at 1.5 and 0.75, then a at 0.75, and offers 0.75 with both cuts there.
    from optimizer.analysis.decompose import _evaluate_operable, _State
    from optimizer.analysis.decompose_cuts import Cut

    asked: list[tuple[float, list[int] | None]] = []

    class BOperatesBelowOne:
        def cuts(
            self, name: str, x: np.ndarray, only: list[int] | None = None, until: Any = None
        ) -> list[Cut]:
            asked.append((float(x[0]), only))
            b_ok = bool(x[0] <= 1.0)
            out = [
                Cut(0, True, 10.0 + x[0], np.ones(1), x),
                Cut(1, b_ok, 20.0 + x[0] if b_ok else np.inf, np.ones(1), x),
            ]
            return [c for c in out if only is None or c.scenario in only]

    state = _State(("a", "b"), np.array([0.5, 0.5]), best_ub=15.0, best_x=np.zeros(1))
    point, cuts, point_cuts, halvings, _ = _evaluate_operable(
        BOperatesBelowOne(),  # type: ignore[arg-type]
        state,
        np.array([3.0]),
        1,
    )
    assert point is not None and point[0] == pytest.approx(0.75) and halvings == 2
    assert asked == [(3.0, None), (1.5, [1]), (0.75, [1]), (0.75, [0])]
    assert [(c.scenario, c.value) for c in point_cuts] == [(0, 10.75), (1, 20.75)]
    # every operable evaluation is a valid cut: a at 3, b at 0.75, a at 0.75
    assert sorted((c.scenario, float(c.point[0])) for c in cuts) == [(0, 0.75), (0, 3.0), (1, 0.75)]


@pytest.mark.parametrize("warm_start", ["basis", "live"])
def test_one_highs_instance_switching_scenarios_gives_each_scenarios_own_optimum(
    warm_start: str,
) -> None:
    # A block re-solves its scenarios in one HiGHS instance from stored bases (basis),
    # or each in its own retained instance (live): every value must be that scenario's
    # own optimum at the point, as a fresh cold solve of the scenario model with the
    # first stage fixed gives it.
    from optimizer.analysis.decompose_blocks import ScenarioBlock
    from optimizer.plan.options import SolveOptions
    from optimizer.plan.raw_solve import run_solver

    ds = load_dataset(TINY)
    _, dsets, _ = sample_scenarios(ds, 3, seed=5)
    u = first_stage_universe(dsets, "capacity")
    block = ScenarioBlock(dsets, [0, 1, 2], u, warm_start=warm_start)
    ws = block.wait_and_see()
    assert len(block.live) == (3 if warm_start == "live" else 0)
    assert all(c.ok for c in ws)
    points = [ws[2].point, 0.5 * (ws[0].point + ws[1].point), ws[0].point]
    for x in points:
        cuts = block.evaluate(x)
        for d, c in zip(dsets, cuts, strict=True):
            m = build_stochastic_model([d], [1.0], universe=u)
            m.variables.loc[: block.n_first - 1, "lb"] = x
            m.variables.loc[: block.n_first - 1, "ub"] = x
            raw = run_solver(m, SolveOptions(), lp_only=True)
            assert raw.status.value == "optimal" and c.ok
            assert c.value == pytest.approx(raw.solver_objective, rel=1e-9)
    # the wait-and-see optimum is each scenario's optimum with the first stage free
    for d, c in zip(dsets, ws, strict=True):
        raw = run_solver(build_stochastic_model([d], [1.0], universe=u), SolveOptions())
        assert c.value == pytest.approx(raw.solver_objective, rel=1e-9)


@pytest.fixture(scope="module")
def four_draws() -> tuple[list[str], list[Any], float, Any]:
    """Four seeded draws of the tiny data, their extensive form's optimum and hedged plan.

    Solved once for the three warm starts below (the references do not depend on it).
    """
    names, dsets, _ = _draws()
    ef, status = _extensive("capacity")
    assert status == "optimal" and ef is not None
    return names, dsets, ef, _hedged("capacity")


@pytest.mark.parametrize("warm_start", ["live", "basis", "cold"])
def test_every_warm_start_reaches_the_extensive_forms_optimum(
    warm_start: str, four_draws: tuple[list[str], list[Any], float, Any]
) -> None:
    # Each scenario keeps its own HiGHS instance (live), shares one from its stored basis
    # (basis) or starts cold: the same plan cost within the tolerance, the same WS and
    # EEV (each an LP optimum), and a lower bound under the extensive form's optimum.
    names, dsets, ef, ref = four_draws
    p = (
        _decomposed("capacity")  # live is the default
        if warm_start == "live"
        else hedge_decomposed(
            dsets, names=names, workers=0, tol=1e-6, first_stage="capacity", warm_start=warm_start
        )
    )
    assert p.converged
    assert p.lower_bound_usd <= ef * (1 + 1e-9)
    assert p.expected_cost_usd == pytest.approx(ef, rel=1e-6)
    assert p.wait_and_see_usd == pytest.approx(ref.wait_and_see_usd, rel=1e-9)
    assert p.eev_usd == pytest.approx(ref.eev_usd, rel=1e-9)
    rounds = p.iterations[p.iterations["iteration"] >= 1]
    assert (rounds["solve_cpu_s"] > 0).all() and (rounds["simplex_iterations"] >= 0).all()


def test_an_unknown_warm_start_is_refused() -> None:
    with pytest.raises(ValueError, match="warm_start must be one of live, basis, cold"):
        hedge_decomposed([newsvendor(100)], workers=0, warm_start="hot")


def test_the_cut_pool_drops_slack_cuts_and_brings_back_violated_ones() -> None:
    # One scenario, one first-stage column. Cut a: theta - 2 x >= 0 (V = 4 at x = 2,
    # slope 2); cut b: theta + 2 x >= 8 (V = 4 at x = 2, slope -2). Rows from 10 on.
    from optimizer.analysis.decompose_cuts import Cut
    from optimizer.analysis.decompose_master import CutPool

    pool = CutPool(1, max_age=2)
    pool.base = 10
    x2 = np.array([2.0])
    ids = pool.add(
        [Cut(0, True, 4.0, np.array([2.0]), x2), Cut(0, True, 4.0, np.array([-2.0]), x2)], 1.0
    )
    assert ids.tolist() == [0, 1] and pool.rhs.tolist() == [0.0, 8.0]
    rows = np.zeros(12)
    rows[10:] = [0.0, 8.0]  # at x = 2, theta = 4 both rows are tight
    assert pool.age(rows).size == 0 and pool.ages.tolist() == [0, 0]
    rows[10:] = [0.0, 12.0]  # at x = 3, theta = 6: b has slack 4
    assert pool.age(rows).size == 0 and pool.ages.tolist() == [0, 1]
    dropped = pool.age(rows)  # the second optimum in a row with slack: b leaves (row 11)
    assert dropped.tolist() == [11] and pool.active == [0] and pool.pooled == {1}
    # at x = 3, theta = 6.5, b has slack 6.5 + 6 - 8 = 4.5: it stays in the pool
    assert pool.tight_pooled(np.array([3.0]), np.array([6.5])).size == 0
    # at x = 1, theta = 2, b reads 2 + 2 = 4 < 8: violated, it comes back with age 0
    back = pool.tight_pooled(np.array([1.0]), np.array([2.0]))
    assert back.tolist() == [1] and pool.active == [0, 1] and not pool.pooled
    assert pool.ages.tolist() == [0, 0]
    # tight (slack 0 at x = 2, theta = 4) comes back too, unless only violated ones are asked
    pool.pooled, pool.active = {1}, [0]
    assert pool.tight_pooled(x2, np.array([4.0]), violated_only=True).size == 0
    assert pool.tight_pooled(x2, np.array([4.0])).tolist() == [1]


def test_cut_management_keeps_every_cut_binding_at_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With cuts pooled after one slack optimum (the most aggressive setting) the run
    # drops cuts, reaches the same optimum as with every cut kept, and at the final
    # master optimum every cut ever generated that is tight there is a row of the master.
    from optimizer.analysis import decompose_setup
    from optimizer.analysis.decompose_master import CutPool, MasterProblem

    made: list[MasterProblem] = []

    def keep(*a: object) -> MasterProblem:
        made.append(MasterProblem(*a))  # type: ignore[arg-type]
        return made[-1]

    monkeypatch.setattr(decompose_setup, "MasterProblem", keep)
    names, dsets, _ = _draws()
    kw = {"names": names, "workers": 0, "tol": 1e-6}
    every = hedge_decomposed(dsets, cut_age=None, **kw)
    pooled = hedge_decomposed(dsets, cut_age=1, **kw)
    assert pooled.converged and every.converged
    assert pooled.expected_cost_usd == pytest.approx(every.expected_cost_usd, rel=1e-6)
    master = made[-1]
    pool = master.cuts
    assert pool.dropped > 0 and made[0].cuts.dropped == 0
    assert master.optimum is not None
    x, theta = master.optimum
    everything = np.arange(len(pool.rhs))
    slack = pool.slack(x, theta, everything)
    assert (slack >= -1e-7).all()  # the final optimum satisfies every cut ever made
    binding = set(everything[slack <= 1e-9].tolist())
    assert binding and binding <= set(pool.active)
    assert all(slack[i] > CutPool.TIGHT for i in pool.pooled)


@pytest.mark.parametrize("first_stage", ["capacity", "full"])
def test_margin_objective_decomposes_to_the_extensive_forms_optimum(first_stage: str) -> None:
    # The margin mode minimises cost - revenue: the decomposition and the extensive form
    # of the same margin LP agree within the tolerance, the lower bound stays below it,
    # and the value is not the cost mode's (revenue enters: the figures are negative).
    from optimizer.plan.options import SolveOptions

    names, dsets, _ = _draws()
    ef, status, _ = extensive_form_objective(
        dsets, options=SolveOptions(objective="margin"), first_stage=first_stage
    )
    assert status == "optimal" and ef is not None and ef < 0
    p = hedge_decomposed(
        dsets, names=names, workers=0, tol=1e-6, first_stage=first_stage, objective="margin"
    )
    assert p.converged
    assert p.expected_cost_usd == pytest.approx(ef, rel=1e-6)
    assert p.lower_bound_usd <= ef + 1e-9 * abs(ef)
    assert p.wait_and_see_usd <= p.expected_cost_usd <= p.eev_usd
    cost, _ = _extensive(first_stage)
    assert cost is not None and cost > 0
