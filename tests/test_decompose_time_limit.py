"""The decomposed hedge's time limit holds in every phase, not only between rounds.

Before, the limit was checked after each round only: at 1,000 scenarios the first
solves alone ran 1,712 s past a 1,500 s limit. Now no scenario solve starts after it:
the first solves stop with an error that says how far they got (no plan has a known
expected cost before they end), and a round it cuts short keeps its cuts and stops the
run with the best plan evaluated so far.
"""

from __future__ import annotations

import itertools
import time
import types
from typing import Any

import numpy as np
import pytest

from capacity.dataset import load_dataset
from optimizer.analysis import decompose, decompose_blocks, decompose_setup
from optimizer.analysis.decompose import _evaluate_operable, hedge_decomposed
from optimizer.analysis.decompose_blocks import ScenarioBlock
from optimizer.analysis.decompose_cuts import HedgeTimeLimitError, TimeLimit
from optimizer.analysis.decompose_dispatch import FirstSolves
from optimizer.analysis.decompose_master import MasterProblem
from optimizer.analysis.decompose_setup import RunState
from optimizer.analysis.monte_carlo import sample_scenarios
from optimizer.plan import deadline
from tests.test_cli_checks import _run, no_compute  # noqa: F401 - fixture
from tests.test_decompose_dispatch import _halves
from tests.test_risk import TINY


def _ticking(module: Any, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``module``'s ``time.<name>()`` read 0, 1, 2 ... (one tick a call)."""
    shim = types.SimpleNamespace(**{k: getattr(time, k) for k in dir(time) if k[0] != "_"})
    setattr(shim, name, itertools.count().__next__)
    monkeypatch.setattr(module, "time", shim)


def test_the_first_solves_start_no_scenario_after_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The limit's clock reads 0, 1, 2 ... at each check: a limit of 2 s lets exactly
    # two scenarios start (checks at 0 and 1), the third check (2) finds it passed.
    _, dsets, _ = sample_scenarios(load_dataset(TINY), 4, seed=3)
    blocks, universe = _halves(dsets, "capacity")
    _ticking(deadline, "monotonic", monkeypatch)
    dispatch = FirstSolves(blocks, dsets, TimeLimit(2.0, 2.0))  # passes at the reading 2
    # one value per first-stage column: np.zeros(1) made highspy read past the buffer,
    # and the stray values failed the started solves ("HiGHS refused bounds") at times
    point = np.zeros(sum(len(keys) for keys in universe.keys.values()))
    try:
        with pytest.raises(HedgeTimeLimitError) as got:
            dispatch.run(None, point)
    finally:
        dispatch.close()
    e = got.value
    assert (e.done, e.total, e.limit_s) == (2, 4, 2.0)
    assert e.phase == "the wait-and-see solves and the EV plan's evaluation"
    assert sorted(dispatch.ws) == [0, 1]  # block 0's own two, in order
    assert "with 2 of 4 scenarios solved" in str(e) and "raise the time limit" in str(e)


def test_a_block_starts_no_evaluation_after_until(monkeypatch: pytest.MonkeyPatch) -> None:
    _, dsets, _ = sample_scenarios(load_dataset(TINY), 3, seed=4)
    block = ScenarioBlock(dsets, range(3), _halves(dsets, "capacity")[1])
    x = block.wait_and_see()[0].point
    every = block.evaluate(x)
    assert [c.scenario for c in every] == [0, 1, 2]
    assert block.evaluate(x, None, time.time() - 1.0) == []
    later = block.evaluate(x, None, time.time() + 3600.0)
    assert [c.value for c in later] == pytest.approx([c.value for c in every], rel=1e-9)
    _ticking(decompose_blocks, "time", monkeypatch)  # the worker's clock: 0, 1, 2 ...
    assert [c.scenario for c in block.evaluate(x, None, 1.0)] == [0]  # 0 < 1, then 1 >= 1


def _switched_limit(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Make every ``TimeLimit`` read the returned switch: passed (and ``until`` a second
    ago) once ``switch[0]`` is set, not passed (no ``until``) before."""
    switch = [False]
    monkeypatch.setattr(TimeLimit, "passed", lambda self: switch[0])
    monkeypatch.setattr(TimeLimit, "until", lambda self: time.time() - 1.0 if switch[0] else None)
    return switch


def limit_passes_at_master_solve(monkeypatch: pytest.MonkeyPatch, k: int) -> None:
    """Make every run's time limit pass at the ``k``-th master solve (1-based).

    Until then ``TimeLimit`` reads as not passed and gives the workers no ``until``;
    from then on it has passed and its ``until`` is a second ago, so the round that
    master solve starts hands the blocks a limit already passed.
    """
    passed = _switched_limit(monkeypatch)
    real = MasterProblem.solve
    calls = itertools.count(1)

    def solve(self: MasterProblem) -> Any:
        if next(calls) >= k:
            passed[0] = True
        return real(self)

    monkeypatch.setattr(MasterProblem, "solve", solve)


def test_a_round_cut_short_returns_no_point() -> None:
    _, dsets, _ = sample_scenarios(load_dataset(TINY), 2, seed=5)
    blocks, _ = _halves(dsets, "capacity")
    ws = FirstSolves(blocks, dsets).run(None, None)[0]
    state = RunState(("a", "b"), np.array([0.5, 0.5]))
    got = _evaluate_operable(blocks, state, ws[0].point, 1, time.time() - 1.0)
    assert (got.point, got.cuts, got.point_cuts, got.halvings) == (None, [], [], 0)
    assert got.short


def test_the_run_stops_with_the_best_plan_when_the_limit_cuts_a_round_short(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The limit passes at round 2's master solve: round 2 adds its row with the upper
    # bound of round 1 and the run ends there, NOT converged, with a note.
    _, dsets, _ = sample_scenarios(load_dataset(TINY), 3, seed=6)
    limit_passes_at_master_solve(monkeypatch, 2)
    p = hedge_decomposed(dsets, workers=0, tol=1e-12, time_limit_s=3600.0)
    rows = p.iterations
    assert list(rows["iteration"]) == [0.0, 1.0, 2.0]
    assert rows["upper_bound_usd"].iloc[2] == rows["upper_bound_usd"].iloc[1]
    assert rows["simplex_iterations"].iloc[2] == 0  # no scenario solved in round 2
    assert p.expected_cost_usd == rows["upper_bound_usd"].iloc[1]
    assert not p.converged
    assert p.notes[-1] == (
        "stopped at the time limit of 3600 s in L-shaped round 2: the plan is the best "
        "evaluated so far"
    )


def test_a_short_round_before_any_operable_plan_is_a_time_limit_error() -> None:
    # The EV plan could not be operated everywhere (no incumbent) and the limit cuts
    # round 1 short: there is no plan, and the error says so rather than "no operable
    # first stage".
    master = types.SimpleNamespace(
        solve=lambda: (1.0, np.zeros(1)), add_cuts=lambda cuts: None, n_cuts=0
    )
    blocks = types.SimpleNamespace(cuts=lambda *a: [], solve_total_s=0.0, busy_total_s=0.0)
    state = RunState(("a", "b"), np.array([0.5, 0.5]))
    limit = TimeLimit(5.0, time.monotonic() - 1.0)  # passed a second ago
    words = "during L-shaped round 1, with 0 of 2 scenarios evaluated"
    with pytest.raises(HedgeTimeLimitError, match=words):
        decompose._iterate(blocks, master, state, np.ones(1), 1e-9, 10, print, limit)  # type: ignore[arg-type]


def test_the_ev_plan_evaluated_after_chained_starts_stops_at_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With chained wait-and-see starts the EV plan is evaluated in a call of its own;
    # a limit that passes after the wait-and-see solves stops it before any scenario.
    _, dsets, _ = sample_scenarios(load_dataset(TINY), 3, seed=8)
    monkeypatch.setattr(decompose_setup, "wait_and_see_start", "chain")
    passed = _switched_limit(monkeypatch)
    real = FirstSolves.run

    def run(self: FirstSolves, *a: Any) -> Any:
        out = real(self, *a)
        passed[0] = True
        return out

    monkeypatch.setattr(FirstSolves, "run", run)
    with pytest.raises(HedgeTimeLimitError) as got:
        hedge_decomposed(dsets, workers=0, time_limit_s=3600.0)
    e = got.value
    assert (e.phase, e.done, e.total) == ("the EV plan's evaluation", 0, 3)
    assert "with 0 of 3 scenarios evaluated" in str(e)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan")])
def test_a_time_limit_that_is_not_positive_seconds_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="is not a time limit: give seconds above 0"):
        hedge_decomposed([load_dataset(TINY)], workers=0, time_limit_s=bad)


def test_the_hedge_prints_its_notes() -> None:
    from rich.console import Console

    from optimizer.cli.hedge import _print_hedge

    plan = types.SimpleNamespace(
        expected_cost_usd=2e9,
        lower_bound_usd=1e9,
        wait_and_see_usd=1e9,
        eev_usd=3e9,
        ev_problem="mean_value",
        vss_usd=1e9,
        evpi_usd=1e9,
        gap_rel=0.5,
        converged=False,
        iterations=[0, 1],
        timings_s={"total": 1.0},
        notes=("stopped at the time limit",),
    )
    console = Console(record=True, width=200)
    assert _print_hedge(console, plan, 1e-4) is False
    assert "note: stopped at the time limit" in console.export_text()


def test_a_limit_that_passes_in_the_mean_value_solve_says_so() -> None:
    _, dsets, _ = sample_scenarios(load_dataset(TINY), 2, seed=7)
    with pytest.raises(HedgeTimeLimitError, match="during the mean-value solve, with 0 of 2"):
        hedge_decomposed(dsets, workers=0, time_limit_s=1e-9)


def test_the_cli_time_limit_error_is_one_message() -> None:
    res, text = _run(["hedge", str(TINY), "-n", "2", "-w", "0", "--time-limit", "0.001"])
    assert res.exit_code == 1, text
    assert "error: no hedged plan was found: the time limit of 0.001 s passed during the " in text
    assert "mean-value solve, with 0 of 2 scenarios solved" in text
    assert "Traceback" not in text


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--time-limit", "0"], "Invalid value for '--time-limit': 0 is not a time limit"),
        (
            ["--time-limit", "nan"],
            "nan is not a time limit: give a finite number of seconds above 0",
        ),
        (["--time-limit", "5", "--method", "extensive"], "--time-limit bounds the L-shaped run"),
    ],
)
def test_the_cli_refuses_a_bad_time_limit_before_any_solve(
    args: list[str],
    words: str,
    no_compute: None,  # noqa: F811
) -> None:
    res, text = _run(["hedge", str(TINY), *args])
    assert res.exit_code == 2, text
    assert words in text, text


def test_a_point_of_another_length_is_refused_before_highs_reads_it() -> None:
    """highspy reads one value per first-stage column from the buffer it is given."""
    _, dsets, _ = sample_scenarios(load_dataset(TINY), 2, seed=3)
    block = ScenarioBlock(dsets, range(2), _halves(dsets, "capacity")[1])
    x = block.wait_and_see()[0].point
    with pytest.raises(
        ValueError, match=f"first-stage point of shape \\(1,\\), not \\({len(x)},\\)"
    ):
        block.evaluate(np.zeros(1))
    assert len(block.evaluate(x)) == 2  # the right length still evaluates every scenario
