"""The figures docs/guide/replanning.md quotes, recomputed on the default data (slow).

On failure the message prints the fresh figures, so the page can be refreshed after
another branch changes the data.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guide" / "replanning.md"


def _quoted(pattern: str) -> float:
    m = re.search(pattern, PAGE.read_text(encoding="utf-8"))
    assert m, pattern
    return float(m.group(1).replace(",", ""))


@pytest.mark.long
def test_tree_figures_of_the_page() -> None:
    from capacity.dataset import load_dataset
    from capacity.scenarios import apply_scenario
    from optimizer.analysis.tree import tree_plan
    from optimizer.analysis.tree_spec import read_tree

    ds = apply_scenario(load_dataset(ROOT / "data"), "neutral")
    plan = tree_plan(ds, read_tree(ROOT / "examples" / "tree_2026_2027.yaml", ds.periods))
    fresh = (
        f"tree {plan.expected_cost_usd:,.0f}, two-stage {plan.two_stage_cost_usd:,.0f}, "
        f"value {plan.value_of_tree_usd:,.0f}"
    )
    assert plan.expected_cost_usd == pytest.approx(
        _quoted(r"tree plan \(expected cost\): ([\d,]+) USD"), rel=1e-6
    ), fresh
    assert plan.value_of_tree_usd == pytest.approx(
        _quoted(r"value of the tree: ([\d,]+) USD"), rel=1e-4
    ), fresh


@pytest.mark.long
def test_replan_figures_of_the_page() -> None:
    from capacity.dataset import load_dataset
    from capacity.scenarios import apply_scenario
    from optimizer.analysis.replan_run import rolling_replan

    ds = apply_scenario(load_dataset(ROOT / "data"), "neutral")
    res = rolling_replan(ds, 20, seed=0, every=1, workers=2)
    s = res.spread.set_index("outcome")
    p50, p90 = s.loc["regret_usd", "p50"] / 1e9, s.loc["regret_usd", "p90"] / 1e9
    ok = int((res.paths["status"] == "optimal").sum())
    gave = int((res.paths["locks_given_way"] > 0).sum())
    fresh = (
        f"paths with a plan {ok} of 20 ({gave} with locks given way), "
        f"regret p50 {p50:.2f} bn, p90 {p90:.2f} bn"
    )
    assert ok == int(_quoted(r"paths with a realised plan\s+(\d+) of 20")), fresh
    assert gave == int(_quoted(r"of 20 \((\d+) with locks given way\)")), fresh
    assert p50 == pytest.approx(_quoted(r"regret, p50\s+([\d.]+) bn"), abs=0.01), fresh
    assert p90 == pytest.approx(_quoted(r"regret, p90\s+([\d.]+) bn"), abs=0.01), fresh


@pytest.mark.long
def test_replan_every_2_figures_of_the_page() -> None:
    """The 5-path ``--every 2`` run the page quotes: every path has a realised plan."""
    from capacity.dataset import load_dataset
    from capacity.scenarios import apply_scenario
    from optimizer.analysis.replan_run import rolling_replan

    ds = apply_scenario(load_dataset(ROOT / "data"), "neutral")
    res = rolling_replan(ds, 5, seed=0, every=2, workers=2)
    s = res.spread.set_index("outcome")
    p50, p90 = s.loc["regret_usd", "p50"] / 1e9, s.loc["regret_usd", "p90"] / 1e9
    ok = int((res.paths["status"] == "optimal").sum())
    gave = int((res.paths["locks_given_way"] > 0).sum())
    fresh = (
        f"every 2: paths with a plan {ok} of 5, with locks given way {gave}, "
        f"regret p50 {p50:.2f} bn, p90 {p90:.2f} bn"
    )
    assert ok == int(_quoted(r"every 2, paths with a realised plan\s+(\d+) of 5")), fresh
    assert gave == int(_quoted(r"every 2, paths with locks given way\s+(\d+) of 5")), fresh
    assert p50 == pytest.approx(_quoted(r"every 2, regret, p50\s+([\d.]+) bn"), abs=0.01), fresh
    assert p90 == pytest.approx(_quoted(r"every 2, regret, p90\s+([\d.]+) bn"), abs=0.01), fresh


@pytest.mark.long
def test_tree_against_replanning_figures_of_the_page() -> None:
    """The side-by-side table of the tree, the hedge and replanning on the tree's leaves."""
    from capacity.dataset import load_dataset
    from capacity.scenarios import apply_scenario
    from optimizer.analysis.tree_replan import compare_tree_replan
    from optimizer.analysis.tree_spec import read_tree

    ds = apply_scenario(load_dataset(ROOT / "data"), "neutral")
    tree = read_tree(ROOT / "examples" / "tree_2026_2027.yaml", ds.periods)
    c = compare_tree_replan(ds, tree).table.set_index("plan")
    fresh = ", ".join(f"{p} {v:,.0f}" for p, v in c["expected_cost_usd"].items())
    for plan in ("perfect foresight", "rolling replan"):
        quoted = _quoted(rf"(?s)On the default data, the tree.*?\| {plan} \| ([\d,]+) \|")
        assert c.loc[plan, "expected_cost_usd"] == pytest.approx(quoted, rel=1e-5), fresh
