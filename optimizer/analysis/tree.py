"""The multi-stage plan over a scenario tree: extensive form with non-anticipativity per node.

Model: one scenario per leaf of the tree (:mod:`optimizer.analysis.tree_spec`), every
decision copied per leaf (:func:`optimizer.plan.model.build_stochastic_model` with no
shared first stage), objective the probability-weighted cost. Non-anticipativity: for
each investment kind of the first-stage definition (``capacity``: build, liquid,
retrofit; ``full``: also install and produce) and each quarter ``t``, the columns of
the leaves under one node of the stage that owns ``t`` are equal::

    x[kind, key, t, leaf] = x[kind, key, t, first leaf of node(leaf, t)]

(one equality row per other leaf). Operation is recourse per leaf, as in the two-stage
hedge. A key that exists in one leaf's model and not in another's (a site that can
build in one branch only) is not tied.

Why the extensive form: the trees this is for have a handful of stages and tens of
leaves, and one leaf's model has about 12,000 columns at the default size, so the
extensive form stays within what HiGHS solves in one go; a nested decomposition would
pay a master per node per iteration for no gain at that size. Not done: a nested
L-shaped or progressive-hedging decomposition on Dask for trees of hundreds of leaves.

The *value of the tree* is the two-stage hedge's expected cost on the same leaves and
weights (every investment shared: ``stages: [end]``) minus the tree's: what learning
at the stage quarters and deciding again is worth (>= 0).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from optimizer.analysis.tree_spec import ScenarioTree
from optimizer.components.registry import active
from optimizer.plan.columns import first_stage_kinds

__all__ = ["TreePlan", "leaf_datasets", "solve_tree", "tree_plan"]

_KEY_CODES = ("s", "c", "o", "t")


@dataclass(frozen=True)
class TreePlan:
    """The multi-stage plan.

    Attributes
    ----------
    status : str
    expected_cost_usd : float
        Optimum of the tree's extensive form (probability-weighted, discounted USD).
    two_stage_cost_usd : float or None
        The two-stage hedge on the same leaves (every investment shared).
    value_of_tree_usd : float or None
        ``two_stage_cost_usd - expected_cost_usd``.
    leaves : DataFrame
        ``leaf, probability, path`` (nodes from the root, ``/``-joined), ``cost_usd``
        (the leaf's own discounted cost in the tree plan).
    node_plan : DataFrame
        Investments per node: ``node, stage, kind, site, chip, period, value, unit``
        (``value`` in ``unit``, MW or chips; non-zero only).
    timings_s : Mapping[str, float]
    """

    status: str
    expected_cost_usd: float
    two_stage_cost_usd: float | None
    value_of_tree_usd: float | None
    leaves: pd.DataFrame
    node_plan: pd.DataFrame
    timings_s: dict[str, float] = field(default_factory=dict)


def leaf_datasets(base: Any, tree: ScenarioTree) -> tuple[list[str], list[Any], list[float]]:
    """Per leaf: name, dataset (ancestors' overrides applied, root first), probability.

    Raises
    ------
    capacity.validation.DataValidationError
        When a branch's overrides do not apply or make the data invalid.
    """
    from capacity.scenarios import apply_overrides

    names, dsets, probs = [], [], []
    for leaf in tree.leaves():
        ovs = [o for n in tree.ancestors(leaf.name) for o in n.overrides]
        names.append(leaf.name)
        dsets.append(apply_overrides(base, ovs, scenario=leaf.name))
        probs.append(tree.leaf_probability(leaf.name))
    return names, dsets, probs


def _owner_nodes(tree: ScenarioTree, leaves: Sequence[str], periods: Sequence[str]) -> np.ndarray:
    """Array (leaf, quarter) -> index of the owning node in ``list(tree.nodes)``."""
    order = {n: i for i, n in enumerate(tree.nodes)}
    depth = tree.stage_index(periods)
    out = np.empty((len(leaves), len(periods)), dtype=np.int64)
    for i, leaf in enumerate(leaves):
        path = tree.ancestors(leaf)
        out[i] = [order[path[d].name] for d in depth]
    return out


def nonanticipativity(model: Any, owner: np.ndarray, kinds: Sequence[str]) -> Any:
    """Return ``model`` with the equality rows tying each node's investment columns.

    Parameters
    ----------
    model : PlanningModel
        Built over the leaves with no shared first stage.
    owner : ndarray, shape (leaves, periods)
        Node index owning each leaf's decisions of each quarter.
    kinds : sequence of str
        The investment kinds tied.
    """
    var = model.variables
    sel = var[var["kind"].isin(kinds)][["kind", "scenario", *_KEY_CODES]]
    sel = sel.rename_axis("col").reset_index()
    sel["node"] = owner[sel["scenario"].to_numpy(), sel["t"].to_numpy()]
    first = sel.groupby(["kind", *_KEY_CODES, "node"], sort=False)["col"].transform("first")
    tie = sel[sel["col"].to_numpy() != first.to_numpy()]
    n = len(tie)
    if n == 0:
        return model
    rows = np.repeat(np.arange(n), 2)
    cols = np.column_stack([tie["col"].to_numpy(), first[tie.index].to_numpy()]).ravel()
    vals = np.tile([1.0, -1.0], n)
    add = sp.csr_matrix((vals, (rows, cols)), shape=(n, model.n_variables))
    con = pd.DataFrame(
        {c: -1 for c in model.constraints.columns if c not in ("family", "sense", "rhs")},
        index=range(n),
    )
    con["family"], con["sense"], con["rhs"] = "nonanticipativity", "==", 0.0
    con = con[list(model.constraints.columns)]
    cons = pd.concat([model.constraints, con], ignore_index=True)
    return replace(model, constraints=cons, matrix=sp.vstack([model.matrix, add]).tocsr())


def solve_tree(
    datasets: Sequence[Any],
    weights: Sequence[float],
    tree: ScenarioTree,
    leaves: Sequence[str],
    options: Any = None,
    first_stage: str | Sequence[str] = "capacity",
) -> tuple[Any, Any]:
    """Build and solve the tree's extensive form; return (model, RawSolution)."""
    from optimizer.plan.model import build_stochastic_model
    from optimizer.plan.options import SolveOptions
    from optimizer.plan.raw_solve import run_solver

    options = options or SolveOptions()
    model = build_stochastic_model(
        datasets,
        list(weights),
        formulation=options.formulation,
        first_stage=(),
        objective=options.objective,
    )
    owner = _owner_nodes(tree, leaves, datasets[0].periods)
    model = nonanticipativity(model, owner, first_stage_kinds(first_stage))
    return model, run_solver(model, options, lp_only=True)


def tree_plan(
    base: Any,
    tree: ScenarioTree,
    options: Any = None,
    *,
    first_stage: str | Sequence[str] = "capacity",
    compare: bool = True,
) -> TreePlan:
    """Solve the multi-stage plan of ``tree`` and its value over the two-stage hedge.

    Parameters
    ----------
    base : Dataset
        The dataset the branches' overrides apply to.
    tree : ScenarioTree
    options : SolveOptions, optional
    first_stage : str or sequence of str
        The investment kinds under non-anticipativity (``capacity``, default, or
        ``full``; :data:`optimizer.plan.columns.FIRST_STAGE_SETS`).
    compare : bool
        Also solve the two-stage hedge on the same leaves (its cost and the value
        of the tree).

    Returns
    -------
    TreePlan

    Raises
    ------
    RuntimeError
        When the tree's extensive form has no solution.
    """
    from optimizer.analysis.hedge import extensive_form_objective

    t0 = time.perf_counter()
    names, dsets, probs = leaf_datasets(base, tree)
    model, raw = solve_tree(dsets, probs, tree, names, options, first_stage)
    if raw.x is None or raw.solver_objective is None:
        raise RuntimeError(f"the tree plan has no solution: {raw.status.value}: {raw.message}")
    t1 = time.perf_counter()
    two = None
    if compare:
        two, _, _ = extensive_form_objective(dsets, probs, options, first_stage=first_stage)
    cost = float(raw.solver_objective)
    x = np.asarray(raw.x)
    return TreePlan(
        status=raw.status.value,
        expected_cost_usd=cost,
        two_stage_cost_usd=None if two is None else float(two),
        value_of_tree_usd=None if two is None else float(two) - cost,
        leaves=_leaf_table(tree, names, probs, model, x),
        node_plan=_node_plan(tree, names, model, x, first_stage_kinds(first_stage)),
        timings_s={"tree": t1 - t0, "two_stage": time.perf_counter() - t1},
    )


def _leaf_table(
    tree: ScenarioTree, names: Sequence[str], probs: Sequence[float], model: Any, x: np.ndarray
) -> pd.DataFrame:
    """Per leaf: probability, path, own discounted cost (columns' cost / weight)."""
    from optimizer.plan.coding import discount_factors

    var = model.variables
    w = np.asarray(model.weights)
    sc = var["scenario"].to_numpy()
    contrib = var["cost"].to_numpy(dtype=float) * x
    ct = model.const_terms
    df = discount_factors(model.datasets[0])
    rows = []
    for i, n in enumerate(names):
        const = 0.0
        if len(ct):
            m = ct["scenario"].to_numpy() == i
            const = float((ct["value"].to_numpy()[m] * df[ct["t"].to_numpy()[m]]).sum())
        own = float(contrib[sc == i].sum()) / w[i] if w[i] > 0 else float("nan")
        rows.append(
            {
                "leaf": n,
                "probability": float(probs[i]),
                "path": "/".join(a.name for a in tree.ancestors(n)),
                "cost_usd": own + const,
            }
        )
    return pd.DataFrame(rows)


def _node_plan(
    tree: ScenarioTree, names: Sequence[str], model: Any, x: np.ndarray, kinds: Sequence[str]
) -> pd.DataFrame:
    """Investments per owning node (one row per node, kind, key and quarter), with units."""
    periods = list(model.periods)
    owner = _owner_nodes(tree, names, periods)
    node_names = list(tree.nodes)
    var = model.variables
    sel = var[var["kind"].isin(kinds)].rename_axis("col").reset_index()
    sel["value"] = x[sel["col"].to_numpy()] * sel["scale"].to_numpy()
    sel["node"] = [node_names[j] for j in owner[sel["scenario"].to_numpy(), sel["t"].to_numpy()]]
    g = sel.groupby(["node", "kind", *_KEY_CODES], as_index=False, sort=False)["value"].first()
    g = g[np.abs(g["value"].to_numpy()) > 1e-9]
    codes = model.codes

    def ids(col: str) -> list[str]:
        return [codes[col][int(i)] if int(i) >= 0 else "" for i in g[col]]

    out = pd.DataFrame(
        {
            "node": g["node"].to_numpy(),
            "stage": [tree.nodes[n].depth + 1 for n in g["node"]],
            "kind": g["kind"].to_numpy(),
            "site": ids("s"),
            "chip": ids("c"),
            "period": [periods[int(t)] for t in g["t"]],
            "value": g["value"].to_numpy(dtype=float),
            # the value's unit (MW, chips): the kinds mix them
            "unit": [active().kind_units.get(str(k), "") for k in g["kind"]],
        }
    )
    return out.sort_values(["stage", "node", "kind", "period"], kind="stable").reset_index(
        drop=True
    )
