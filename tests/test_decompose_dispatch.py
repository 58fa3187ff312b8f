"""The decomposed hedge's start: keys made by the blocks, scenarios handed to a free block.

The universe joined from the blocks' keys must be the one made over all the datasets at
once, a model built from the keys' coded scenarios must be the model built without
them, and a scenario solved by a block it was not given must give the cut it gives
where it was given, and stay with that block for the rounds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from capacity.dataset import load_dataset
from optimizer.analysis.decompose_blocks import ScenarioBlock, ScenarioBlocks
from optimizer.analysis.decompose_dispatch import FirstSolves
from optimizer.analysis.monte_carlo import sample_scenarios
from optimizer.plan.coding import dataset_codes, scenario_data
from optimizer.plan.columns import first_stage_kinds
from optimizer.plan.model import build_stochastic_model, first_stage_universe
from tests.test_risk import TINY


def _halves(dsets: list[Any], first_stage: str) -> tuple[ScenarioBlocks, Any]:
    """Two in-process blocks over the halves of ``dsets``, holding the joined universe."""
    codes, kinds = dataset_codes(dsets), first_stage_kinds(first_stage)
    cut = len(dsets) // 2
    parts = [list(range(cut)), list(range(cut, len(dsets)))]
    blocks = [
        ScenarioBlock([dsets[i] for i in part], part, codes=codes, kinds=kinds) for part in parts
    ]
    many = ScenarioBlocks(blocks, False, parts=parts)
    return many, many.universe(codes, kinds)


@pytest.mark.parametrize("first_stage", ["full", "capacity"])
def test_the_universe_joined_from_the_blocks_keys_is_the_one_made_at_once(
    first_stage: str,
) -> None:
    _, dsets, _ = sample_scenarios(load_dataset("data"), 5, seed=1)
    _, joined = _halves(dsets, first_stage)
    whole = first_stage_universe(dsets, first_stage)
    assert joined.codes == whole.codes and joined.first_stage == whole.first_stage
    assert set(joined.keys) == set(whole.keys)
    for kind, keys in whole.keys.items():
        assert len(keys) > 0
        assert keys.equals(joined.keys[kind]), kind


def test_a_model_built_from_coded_scenarios_is_the_model_built_without() -> None:
    _, dsets, _ = sample_scenarios(load_dataset(TINY), 2, seed=2)
    u = first_stage_universe(dsets, "capacity")
    coded = [scenario_data(0, dsets[1], u.codes)]
    a = build_stochastic_model([dsets[1]], [1.0], universe=u, coded=coded)
    b = build_stochastic_model([dsets[1]], [1.0], universe=u)
    assert a.matrix.shape == b.matrix.shape and (a.matrix != b.matrix).nnz == 0
    assert a.cost_terms.equals(b.cost_terms) and a.const_terms.equals(b.const_terms)
    assert a.variables.equals(b.variables) and a.constraints.equals(b.constraints)
    with pytest.raises(ValueError, match="coded scenarios must code the datasets in order"):
        build_stochastic_model([dsets[0]], [1.0], universe=u, coded=coded)


def test_a_scenario_taken_by_a_free_block_gives_its_own_cuts_and_stays_there() -> None:
    # In-process blocks are served by one loop: block 0 solves its own scenarios, then
    # takes block 1's from the end of its list. Every cut is the one a block holding
    # all scenarios gives, block 1 releases what was taken, and the rounds' evaluations
    # then run where each scenario was solved.
    _, dsets, _ = sample_scenarios(load_dataset(TINY), 4, seed=3)
    blocks, universe = _halves(dsets, "capacity")
    reference = ScenarioBlock(dsets, range(4), universe)
    ws_ref = reference.wait_and_see()
    x = ws_ref[0].point
    ev_ref = reference.evaluate(x)
    blocks.blocks[1].build([2])  # built there before it was taken: released after
    dispatch = FirstSolves(blocks, dsets)
    try:
        ws, ev = dispatch.run(None, x)
    finally:
        dispatch.close()
    assert [c.scenario for c in ws] == [0, 1, 2, 3] == [c.scenario for c in ev]
    for got, want in zip(ws + ev, ws_ref + ev_ref, strict=True):
        assert got.ok and got.value == pytest.approx(want.value, rel=1e-9)
        np.testing.assert_allclose(got.grad, want.grad, rtol=1e-7, atol=1e-6)
    assert dispatch.taken == [[], [3, 2]]  # from the end of block 1's list
    assert sorted(blocks.blocks[0].info()[2]) == [0, 1, 2, 3]
    assert blocks.blocks[1].info()[2] == {}
    again = blocks.cuts("evaluate", x)
    assert [c.scenario for c in again] == [0, 1, 2, 3]
    for got, want in zip(again, ev_ref, strict=True):
        assert got.value == pytest.approx(want.value, rel=1e-9)
        assert got.simplex_iterations == 0  # each from its own basis at x
    assert blocks.solve_total_s > 0 and blocks.busy_total_s == blocks.solve_total_s
