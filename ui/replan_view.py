"""Risk page: rolling replanning (regret over truth paths) and the multi-stage scenario tree.

Thin views over :func:`optimizer.analysis.replan_run.rolling_replan` and
:func:`optimizer.analysis.tree.tree_plan`; the regret chart is
:func:`optimizer.analysis.replan_folder.replan_figure`, the one the command line writes.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

import streamlit as st

from optimizer.output.formatting import fmt_usd
from ui.formats import percentiles_view, show_table
from ui.progress_view import AppProgress

__all__ = ["render_replan_sections"]

_KEY = "replan_results"


def render_replan_sections(ds: Any, choice: Any = None) -> None:
    """Draw the two tabs (rolling replan, scenario tree) for dataset ``ds``.

    ``choice`` is the Plan page's :class:`ui.state.SolveChoice`: every solve here uses
    its options, and a result is shown only while the data, the tab's settings and the
    choice are those it was made with (a result of other settings stayed on screen).
    """
    st.session_state.setdefault(_KEY, {})
    paths_tab, tree_tab = st.tabs(["Rolling replan", "Scenario tree"])
    with paths_tab:
        _replan_tab(ds, choice)
    with tree_tab:
        _tree_tab(ds, choice)


def _stale_note(entry: Any, key: Any, what: str, button: str) -> bool:
    """Show why a kept result is not shown; True when ``entry`` is the result of ``key``."""
    if entry is None:
        return False
    if entry[0] == key:
        return True
    st.info(
        f"The data, the settings above or the Plan page's solver settings changed since the "
        f"last {what}: press **{button}** again."
    )
    return False


def _replan_tab(ds: Any, choice: Any = None) -> None:
    from optimizer.analysis.replan_setup import RandomWalkRevision, ReplanInputError

    st.caption(
        "Each path draws supply, grid dates and demand in their Monte Carlo ranges; the "
        "plan is re-solved every few quarters on a forecast that moves as a random walk "
        "ending on the truth, with the decisions already due locked. Regret = realised "
        "cost - perfect-foresight cost on the same path."
    )
    c1, c2, c3, c4 = st.columns(4)
    kept = {"persist_state": "session"}  # as the page's other inputs: kept across pages
    paths = int(c1.number_input("paths", 1, 200, 3, key="replan_paths", **kept))
    every = int(
        c2.selectbox("replan every (quarters)", [1, 2, 3, 4], 3, key="replan_every", **kept)
    )
    vol = float(c3.number_input("volatility", 0.0, 1.0, 0.05, 0.01, key="replan_vol", **kept))
    seed = int(c4.number_input("seed", min_value=0, value=0, key="replan_seed", **kept))
    slot = st.empty()
    key = (ds.hash, paths, every, vol, seed, choice)
    if st.button("Run the rolling replan", key="replan_run"):
        from optimizer.analysis.replan_run import rolling_replan

        bar = AppProgress("Rolling replan", paths, slot, unit="path")
        try:
            with bar:
                res = rolling_replan(
                    ds,
                    paths,
                    seed=seed,
                    every=every,
                    revision=RandomWalkRevision(vol, seed),
                    options=None if choice is None else choice.options(),
                    progress=bar,
                )
        except ReplanInputError as e:
            st.error(str(e))
            return
        st.session_state[_KEY] = {**st.session_state[_KEY], "paths": (key, res)}
    entry = st.session_state[_KEY].get("paths")
    if _stale_note(entry, key, "rolling replan", "Run the rolling replan"):
        _replan_results(entry[1])


def _replan_results(res: Any) -> None:
    from optimizer.analysis.replan_folder import replan_figure

    cols = [
        "path",
        "status",
        "realised_cost_usd",
        "perfect_foresight_cost_usd",
        "regret_usd",
        "regret_share",
        "served_share",
        "perfect_foresight_served_share",
        "locks_given_way",
    ]
    money = {
        c: st.column_config.NumberColumn(f"{c.removesuffix('_usd')} [USD]", format="%,.0f")
        for c in cols
        if c.endswith("_usd")
    }
    show_table(res.paths[cols], money, key="replan_paths_table")
    show_table(percentiles_view(res.spread), {}, key="replan_spread_table")
    if len(res.give_way):
        st.caption(
            "Locks the truth could not honour (an order delivered short, an install "
            "waiting for power): locked vs delivered. Their cost is in the regret."
        )
        show_table(res.give_way, {}, key="replan_give_way_table")
    st.plotly_chart(replan_figure(res.paths), key="replan_chart", width="stretch")
    st.caption(
        f"{res.settings['epochs']} replans per path every {res.settings['every']} quarter(s), "
        f"{res.settings['seconds']:.0f} s."
    )


def _tree_tab(ds: Any, choice: Any = None) -> None:
    from optimizer.analysis.tree_spec import TreeFileError, early_overrides, read_tree

    st.caption(
        "A tree file (YAML): stage quarters, and nodes with a parent, a branch probability "
        "and overrides. Investments of the quarters before a stage are shared by every "
        "branch below; the plan is one extensive form."
    )
    up = st.file_uploader("Tree file", type=["yaml", "yml"], key="tree_file")
    if up is None:
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / Path(up.name).name
        path.write_bytes(up.getvalue())
        try:
            tree = read_tree(path, ds.periods)
        except TreeFileError as e:
            st.error(str(e).replace(str(path), up.name))
            return
        for line in early_overrides(tree):  # the branches' data differ before they part
            st.warning(line.replace(str(path), up.name))
    replan = st.checkbox(
        "Also replan quarterly along each leaf (tree, hedge and replanning side by side)",
        key="tree_replan_leaves",
        persist_state="session",
    )
    # the file's content, not its name: another tree.yaml showed the last one's result
    key = (ds.hash, hashlib.sha256(up.getvalue()).hexdigest(), replan, choice)
    if st.button("Solve the tree", key="tree_run"):
        _solve_tree(ds, tree, up.name, key, replan, choice)
    entry = st.session_state[_KEY].get("tree")
    if _stale_note(entry, key, "solve of the tree", "Solve the tree"):
        _tree_results(entry[1], entry[2] if len(entry) > 2 else None)


def _solve_tree(
    ds: Any, tree: Any, name: str, key: Any, replan: bool = False, choice: Any = None
) -> None:
    from capacity.validation import DataValidationError
    from optimizer.analysis.tree import tree_plan
    from optimizer.analysis.tree_replan import compare_tree_replan

    comparison = None
    try:
        options = None if choice is None else choice.options()
        with st.spinner("Solving the tree's extensive form ..."):
            plan = tree_plan(ds, tree, options=options)
        if replan:
            with st.spinner("Replanning quarterly along each leaf ..."):
                comparison = compare_tree_replan(ds, tree, options, plan=plan)
    except DataValidationError as e:
        st.error(f"{name}: a branch's overrides: " + "; ".join(f.message for f in e.findings[:3]))
        return
    except RuntimeError as e:
        st.error(str(e))
        return
    entry = (key, plan, comparison)
    st.session_state[_KEY] = {**st.session_state[_KEY], "tree": entry}


def _tree_results(plan: Any, comparison: Any = None) -> None:
    a, b, c = st.columns(3)
    # in each amount's own scale: a small dataset's tree read "0.01 bn USD" in fixed billions
    a.metric("tree plan, expected cost", fmt_usd(plan.expected_cost_usd, 2))
    if plan.two_stage_cost_usd is not None:
        b.metric("two-stage hedge", fmt_usd(plan.two_stage_cost_usd, 2))
        c.metric("value of the tree", fmt_usd(plan.value_of_tree_usd, 2))
    show_table(plan.leaves, {}, key="tree_leaves_table")
    by = ["stage", "node", "kind", "site", "unit"]
    built = plan.node_plan.groupby(by, as_index=False)["value"].sum()
    show_table(built, {}, key="tree_node_plan_table")
    if comparison is not None:
        st.markdown("**The tree's leaves planned three ways** (expected discounted cost)")
        show_table(comparison.table, {}, key="tree_comparison_table")
        show_table(comparison.leaves, {}, key="tree_replan_leaves_table")
