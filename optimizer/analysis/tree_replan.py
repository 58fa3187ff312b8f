"""The tree plan, the two-stage hedge and rolling replanning on one distribution: the tree's.

A scenario tree (:mod:`optimizer.analysis.tree_spec`) is a discrete distribution of
truths: its leaves, each with its probability. Three ways of planning are priced on it,
each leaf's cost weighted by the leaf's probability:

* the **two-stage hedge**: every investment shared by all the leaves;
* the **tree plan** (:func:`optimizer.analysis.tree.tree_plan`): investments shared
  only by the leaves under one node, decided again at each stage quarter;
* **rolling replanning** (:func:`optimizer.analysis.replan.run_dataset_path`): along
  each leaf as the truth, every ``every`` quarters the planner solves the whole horizon
  on the branch it has seen so far and locks what falls due. Its forecast at a replan
  in quarter ``tau`` is the data of the deepest node revealed by ``tau`` (the
  overrides of the branches taken so far; the branches not yet revealed at the base
  data, no override), its quarters up to ``tau`` the truth's. A deterministic planner
  that learns as the tree reveals, where the tree plan is a stochastic one that knows
  the branch probabilities.

Against **perfect foresight** (each leaf solved on its own, the wait-and-see cost
``WS = sum_l p_l PF_l``) each gap is the price of not knowing the leaf:

    two-stage hedge - WS  >=  tree plan - WS  >=  0       (the tree relaxes the hedge)
    replanning - WS = sum_l p_l regret_l  >=  0            (each leaf's regret >= 0)

The value of the tree is ``hedge - tree``. Replanning is not ordered against the two
(it fixes different decisions: it locks chip orders and power contracts as well, and
plans on a forecast, not on the probabilities), which is what the comparison shows.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from optimizer.analysis.tree_spec import ScenarioTree

__all__ = [
    "COMPARISON_COLUMNS",
    "TreeComparison",
    "compare_tree_replan",
    "comparison_table",
    "node_dataset",
    "replan_leaves",
]

#: Columns of the side-by-side table (one row per way of planning).
COMPARISON_COLUMNS = (
    "plan",
    "expected_cost_usd",
    "over_perfect_foresight_usd",
    "over_tree_usd",
)


@dataclass(frozen=True)
class TreeComparison:
    """The tree plan, the two-stage hedge and rolling replanning on the tree's leaves.

    Attributes
    ----------
    table : DataFrame
        :data:`COMPARISON_COLUMNS`, one row per plan (:func:`comparison_table`).
    leaves : DataFrame
        Per leaf: ``leaf, probability, tree_cost_usd, realised_cost_usd,
        perfect_foresight_cost_usd, regret_usd, locks_given_way, replans, seconds``.
    every : int
        Quarters between two replans.
    timings_s : Mapping[str, float]
        ``tree`` (tree and hedge) and ``replan`` (every leaf) wall seconds.
    """

    table: pd.DataFrame
    leaves: pd.DataFrame
    every: int
    timings_s: dict[str, float] = field(default_factory=dict)


def node_dataset(base: Any, tree: ScenarioTree, leaf: str, depth: int, name: str) -> Any:
    """Return ``base`` with the overrides of ``leaf``'s ancestors down to ``depth`` applied.

    Parameters
    ----------
    base : Dataset
    tree : ScenarioTree
    leaf : str
        A leaf of ``tree``.
    depth : int
        0: the root (its overrides only); the leaf's own depth gives the leaf's data.
    name : str
        Scenario name of the result.

    Returns
    -------
    Dataset
    """
    from capacity.scenarios import apply_overrides

    path = tree.ancestors(leaf)[: depth + 1]
    return apply_overrides(base, [o for n in path for o in n.overrides], scenario=name)


def replan_leaves(
    base: Any,
    tree: ScenarioTree,
    options: Any = None,
    *,
    every: int = 1,
    locks: Mapping[str, int] | None = None,
) -> pd.DataFrame:
    """Replan along each leaf of ``tree`` as the truth (module docstring); one row per leaf.

    Parameters
    ----------
    base : Dataset
        The dataset the branches' overrides apply to.
    tree : ScenarioTree
    options : SolveOptions, optional
    every : int
        Quarters between two replans (>= 1).
    locks : Mapping[str, int], optional
        Firm window per lockable kind (:func:`optimizer.analysis.replan_setup.parse_locks`).

    Returns
    -------
    DataFrame
        ``leaf, probability, realised_cost_usd, perfect_foresight_cost_usd, regret_usd,
        locks_given_way, replans, seconds`` (discounted USD).
    """
    from optimizer.analysis.replan import ReplanSetup, run_dataset_path
    from optimizer.analysis.replan_setup import LOCK_KINDS

    periods = list(base.periods)
    depth_of = tree.stage_index(periods)
    setup = ReplanSetup(base, (), None, every, dict(locks or dict.fromkeys(LOCK_KINDS, 0)), options)
    rows = []
    for i, leaf in enumerate(tree.leaves()):
        truth = node_dataset(base, tree, leaf.name, len(tree.ancestors(leaf.name)), leaf.name)

        def forecast(r: int, tau: int, leaf: str = leaf.name) -> Any:
            return node_dataset(base, tree, leaf, depth_of[tau], f"{leaf}_forecast_{r}")

        out = run_dataset_path(setup, i, truth, forecast)
        s = out.summary
        rows.append(
            {
                "leaf": leaf.name,
                "probability": tree.leaf_probability(leaf.name),
                **{k: s[k] for k in ("realised_cost_usd", "perfect_foresight_cost_usd")},
                "regret_usd": s["regret_usd"],
                "locks_given_way": int(s.get("locks_given_way", 0)),
                "replans": int(s["replans"]),
                "seconds": float(s["seconds"]),
            }
        )
    return pd.DataFrame(rows)


def comparison_table(
    tree_cost_usd: float, hedge_cost_usd: float | None, leaves: pd.DataFrame
) -> pd.DataFrame:
    """Return the side-by-side table: each plan's expected cost and its gaps.

    Parameters
    ----------
    tree_cost_usd : float
        The tree plan's expected cost (discounted USD).
    hedge_cost_usd : float or None
        The two-stage hedge's expected cost on the same leaves (None: row left out).
    leaves : DataFrame
        :func:`replan_leaves` rows (``probability``, ``realised_cost_usd``,
        ``perfect_foresight_cost_usd``).

    Returns
    -------
    DataFrame
        :data:`COMPARISON_COLUMNS`; rows ``perfect foresight``, ``tree plan``,
        ``two-stage hedge``, ``rolling replan`` (``over_perfect_foresight_usd`` of the
        rolling replan is its expected regret).
    """
    p = leaves["probability"].to_numpy(dtype=float)
    ws = float(p @ leaves["perfect_foresight_cost_usd"].to_numpy(dtype=float))
    realised = leaves["realised_cost_usd"].to_numpy(dtype=float)
    replan = float(p @ realised) if np.isfinite(realised).all() else math.inf
    plans = [("perfect foresight", ws), ("tree plan", tree_cost_usd)]
    if hedge_cost_usd is not None:
        plans.append(("two-stage hedge", float(hedge_cost_usd)))
    plans.append(("rolling replan", replan))
    return pd.DataFrame(
        {
            "plan": [n for n, _ in plans],
            "expected_cost_usd": [c for _, c in plans],
            "over_perfect_foresight_usd": [c - ws for _, c in plans],
            "over_tree_usd": [c - tree_cost_usd for _, c in plans],
        },
        columns=list(COMPARISON_COLUMNS),
    )


def compare_tree_replan(
    base: Any,
    tree: ScenarioTree,
    options: Any = None,
    *,
    plan: Any = None,
    first_stage: str | Sequence[str] = "capacity",
    every: int = 1,
) -> TreeComparison:
    """Price the tree plan, the two-stage hedge and rolling replanning on the tree's leaves.

    Parameters
    ----------
    base : Dataset
    tree : ScenarioTree
    options : SolveOptions, optional
    plan : TreePlan, optional
        The tree plan when already solved (with its two-stage comparison); solved here
        when None.
    first_stage : str or sequence of str
        Investment kinds of the tree and the hedge (``capacity`` or ``full``).
    every : int
        Quarters between two replans.

    Returns
    -------
    TreeComparison

    Raises
    ------
    RuntimeError
        When the tree's extensive form has no solution.
    """
    from optimizer.analysis.tree import tree_plan

    t0 = time.perf_counter()
    if plan is None:
        plan = tree_plan(base, tree, options, first_stage=first_stage)
    t1 = time.perf_counter()
    leaves = replan_leaves(base, tree, options, every=every)
    own = plan.leaves.set_index("leaf")["cost_usd"]
    leaves.insert(2, "tree_cost_usd", leaves["leaf"].map(own).to_numpy(dtype=float))
    table = comparison_table(plan.expected_cost_usd, plan.two_stage_cost_usd, leaves)
    return TreeComparison(
        table, leaves, every, {"tree": t1 - t0, "replan": time.perf_counter() - t1}
    )
