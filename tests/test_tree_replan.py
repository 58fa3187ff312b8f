"""The tree plan, the two-stage hedge and rolling replanning priced on the tree's leaves."""

from __future__ import annotations

from pathlib import Path

import pytest

from capacity.dataset import load_dataset
from optimizer.analysis.tree_replan import compare_tree_replan, node_dataset
from optimizer.analysis.tree_spec import read_tree

HAND = Path(__file__).parent / "data" / "replan_hand"


@pytest.fixture(scope="module")
def compared() -> object:
    ds = load_dataset(HAND)
    return compare_tree_replan(ds, read_tree(HAND / "tree3.yaml", ds.periods))


def test_forecast_is_the_deepest_revealed_node() -> None:
    ds = load_dataset(HAND)
    tree = read_tree(HAND / "tree3.yaml", ds.periods)
    d = {
        depth: node_dataset(ds, tree, "low_8", depth, "x").table("demand")["demand_h100e"].tolist()
        for depth in (0, 1, 2)
    }
    assert d == {0: [10.0, 10.0], 1: [4.0, 4.0], 2: [4.0, 8.0]}


def test_hand_comparison(compared: object) -> None:
    """Leaves high_20, high_12, low_8, low_4 (Q2/Q3 demand 10/20, 10/12, 4/8, 4/4), 1/4 each.

    Build rent 1e5 per MW-quarter from the decision quarter, chips 1e5 per chip-quarter,
    unmet 1e6 per H100e-quarter, lead one quarter, horizon Q1-Q3.

    Perfect foresight per leaf: 8.0, 5.6, 3.2, 2.0 M; WS = 4.7 M.
    Replanner: in Q1 it sees the base (10, 10) and builds 10 MW (locked); in Q2 the
    branch (high: 10, 10; low: 4, 4) and installs 10 or 4 chips (locked), builds
    nothing; in Q3 the leaf, too late to build. Realised: high_20 3 + 2 + 10 x 1 unmet
    = 15 M; high_12 3 + 2 + 2 unmet = 7 M; low_8 3 + 0.8 + 0.4 = 4.2 M; low_4 3 + 0.8 =
    3.8 M; expected 7.5 M, regret 2.8 M. Tree 5.8 M, two-stage hedge 6.8 M
    (tests/test_tree.py).
    """
    c = compared
    lv = c.leaves.set_index("leaf")  # type: ignore[attr-defined]
    assert lv["perfect_foresight_cost_usd"].to_dict() == pytest.approx(
        {"high_20": 8.0e6, "high_12": 5.6e6, "low_8": 3.2e6, "low_4": 2.0e6}, rel=1e-7
    )
    assert lv["realised_cost_usd"].to_dict() == pytest.approx(
        {"high_20": 15.0e6, "high_12": 7.0e6, "low_8": 4.2e6, "low_4": 3.8e6}, rel=1e-7
    )
    assert (lv["regret_usd"] >= -1e-6).all()
    t = c.table.set_index("plan")  # type: ignore[attr-defined]
    assert t["expected_cost_usd"].to_dict() == pytest.approx(
        {
            "perfect foresight": 4.7e6,
            "tree plan": 5.8e6,
            "two-stage hedge": 6.8e6,
            "rolling replan": 7.5e6,
        },
        rel=1e-7,
    )
    assert t.loc["rolling replan", "over_perfect_foresight_usd"] == pytest.approx(2.8e6, rel=1e-6)
    assert t.loc["two-stage hedge", "over_tree_usd"] == pytest.approx(1.0e6, rel=1e-6)
    # the tree's own leaf costs weigh up to its expected cost
    p = lv["probability"].to_numpy()
    assert float(p @ lv["tree_cost_usd"].to_numpy()) == pytest.approx(5.8e6, rel=1e-7)


def test_cli_prints_and_writes_the_side_by_side_table(tmp_path: Path) -> None:
    import pandas as pd
    from typer.testing import CliRunner

    from optimizer.cli.commands import app

    args = ["hedge", str(HAND), "--tree", str(HAND / "tree3.yaml"), "--replan-leaves"]
    r = CliRunner().invoke(app, [*args, "--out", str(tmp_path)], terminal_width=200)
    assert r.exit_code == 0, r.output
    assert "rolling replan" in r.output and "7,500,000" in r.output
    (run,) = tmp_path.glob("tree-*")
    table = pd.read_parquet(run / "comparison.parquet").set_index("plan")
    assert table.loc["rolling replan", "over_perfect_foresight_usd"] == pytest.approx(2.8e6)
    assert len(pd.read_parquet(run / "leaves_replan.parquet")) == 4
    # every file names its table, run and code; tree.json lists every node, so a node
    # without a node_plan partition decided nothing (the files had no metadata)
    import json

    from optimizer.output.parquet_tables import read_metadata

    for f in [run / "comparison.parquet", run / "leaves.parquet", *run.glob("node_plan/*/*")]:
        meta = read_metadata(f)
        assert meta["run_id"] == run.name and meta["package_version"], f
        assert meta["table"] == ("node_plan" if f.name == "plan.parquet" else f.stem)
    doc = json.loads((run / "tree.json").read_text())
    assert len(doc["nodes"]) == 7 and doc["nodes"][0] == "root"
    held = sorted(p.name.removeprefix("node=") for p in (run / "node_plan").iterdir())
    assert doc["nodes_with_decisions"] == held and set(held) < set(doc["nodes"])


def test_replan_leaves_without_a_tree_is_a_usage_error() -> None:
    from typer.testing import CliRunner

    from optimizer.cli.commands import app

    r = CliRunner().invoke(app, ["hedge", str(HAND), "--replan-leaves"])
    assert r.exit_code == 2 and "--replan-leaves" in r.output and "needs --tree" in r.output
