"""A batch's retained HiGHS runs its simplex solves with BATCH_SIMPLEX_OPTIONS, capped.

``optimizer.plan.highs.BATCH_SIMPLEX_OPTIONS`` (scaled by largest value, no cost
perturbation) on every simplex run of a batch session, its cold solve included: the
warm runs of a sweep of the bundled data reach the same optima as cold solves in well
under half the iterations of HiGHS's defaults. A warm run is capped at the session's
cold iterations, and one stopped by its cap is solved cold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from capacity.dataset import load_dataset
from capacity.scenarios import apply_overrides
from optimizer.analysis import batch_case
from optimizer.analysis.batch_case import solve_many
from optimizer.analysis.batch_patch import patch_model
from optimizer.plan.highs import BATCH_SIMPLEX_OPTIONS
from optimizer.plan.highs_session import HighsSession
from optimizer.plan.model import build_model
from optimizer.plan.options import SolveOptions, Status
from optimizer.plan.raw_solve import run_solver

SRC = "assumption: test sweep"
TINY = Path(__file__).resolve().parent / "data" / "tiny_valid"

#: Value-only cases (each patchable) of a sweep of the bundled data.
CASES: list[list[dict[str, Any]]] = [
    [
        {"op": "scale", "table": "demand", "column": "demand_h100e", "factor": f, "source": SRC},
        {
            "op": "scale",
            "table": "supply_resources",
            "column": "capacity",
            "factor": 2.0 - f,
            "source": SRC,
        },
        {
            "op": "scale",
            "table": "sites",
            "column": "energy_price_usd_per_mwh",
            "factor": f,
            "source": SRC,
        },
    ]
    for f in (0.85, 0.9, 1.1)
]


@pytest.fixture(scope="module")
def sweep() -> tuple[Any, Any, list[Any]]:
    """The bundled data, its model and the patched model of each case."""
    ds = load_dataset("data")
    base = build_model(ds)
    patched = [patch_model(base, ds, apply_overrides(ds, items)) for items in CASES]
    assert all(p is not None for p in patched)
    return ds, base, patched


def _run(base: Any, patched: list[Any], tuned: bool) -> tuple[HighsSession, int, list[Any]]:
    """A session's cold solve of the base, then each patched case: (session, cold its, runs)."""
    s = HighsSession(SolveOptions(), tuned=tuned)
    raw, warm = s.run(base)
    assert not warm and raw.status == Status.optimal
    cold = int(s.highs.getInfo().simplex_iteration_count)
    runs = []
    for model in patched:
        raw, warm = s.run(model)
        assert warm and raw.status == Status.optimal
        runs.append((raw, int(s.highs.getInfo().simplex_iteration_count)))
    return s, cold, runs


def test_tuned_warm_runs_reach_the_cold_optima_in_fewer_iterations(sweep: Any) -> None:
    ds, base, patched = sweep
    tuned, tuned_cold, tuned_runs = _run(base, patched, tuned=True)
    plain, _, plain_runs = _run(base, patched, tuned=False)
    for (raw, _), (other, _) in zip(tuned_runs, plain_runs, strict=True):
        assert raw.solver_objective == pytest.approx(other.solver_objective, rel=1e-9)
    cold = run_solver(patched[-1], SolveOptions())  # and a cold solve of its own
    assert tuned_runs[-1][0].solver_objective == pytest.approx(cold.solver_objective, rel=1e-9)
    tuned_its = sum(i for _, i in tuned_runs)
    plain_its = sum(i for _, i in plain_runs)
    assert tuned_its < 0.6 * plain_its  # measured: 0.3x on a sweep like this one
    for name, value in BATCH_SIMPLEX_OPTIONS.items():
        assert tuned.highs.getOptionValue(name)[1] == value
    # each warm run capped at the session's cold solve's iterations
    assert tuned.highs.getOptionValue("simplex_iteration_limit")[1] == tuned_cold
    assert plain.highs.getOptionValue("simplex_scale_strategy")[1] == 2  # HiGHS's default
    assert plain.highs.getOptionValue("dual_simplex_cost_perturbation_multiplier")[1] == 1.0
    assert (tuned.n_warm, tuned.n_cold) == (3, 1)


def test_a_warm_run_stopped_by_its_cap_is_solved_cold(sweep: Any) -> None:
    ds, base, patched = sweep
    s = HighsSession(SolveOptions(), tuned=True)
    assert not s.run(base)[1]
    s._cold_iterations = 3  # no case of the sweep is 3 simplex iterations from the last
    raw, warm = s.run(patched[0])
    assert not warm and raw.status == Status.optimal
    cold = run_solver(patched[0], SolveOptions())
    assert raw.solver_objective == pytest.approx(cold.solver_objective, rel=1e-9)
    assert (s.n_warm, s.n_cold) == (0, 2)


def test_the_batch_session_is_tuned() -> None:
    batch_case._SESSION_CACHE.clear()
    ds = load_dataset(TINY)
    (result,) = solve_many(ds, CASES[:1], SolveOptions(), reuse=True)
    assert result.status == "optimal"
    session = next(iter(batch_case._SESSION_CACHE.values()))
    assert session.tuned
