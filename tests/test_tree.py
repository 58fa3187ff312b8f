"""The multi-stage plan: a two-stage tree is the hedge, the toy newsvendor, bad tree files."""

from __future__ import annotations

from pathlib import Path

import pytest

from capacity.dataset import load_dataset
from optimizer.analysis.hedge import hedged_plan
from optimizer.analysis.tree import tree_plan
from optimizer.analysis.tree_spec import TreeFileError, read_tree

HAND = Path(__file__).parent / "data" / "replan_hand"
TINY = Path(__file__).parent / "data" / "report_tiny"


def _write(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "tree.yaml"
    f.write_text(text, encoding="utf-8")
    return f


def test_three_stage_newsvendor_hand_optimum() -> None:
    """Build rent 1e5 per MW-quarter from the decision on, chips 1e5 per chip-quarter,
    penalty 1e6 per H100e-quarter, lead one quarter. Each node builds up to the largest
    demand below it (the chance of exceeding, 1/2, beats the critical ratio 2/9):
    root 10 MW in Q1 (Q2 demand 10 or 4), 'high' 10 MW more in Q2 (Q3 demand 20 or 12),
    'low' nothing (8 or 4 fit in 10). Expected cost:
    root 3 x 10 x 1e5 + 0.5 x 2 x 10 x 1e5 + chips 0.25 x (30 + 22 + 12 + 8) x 1e5
    = 3e6 + 1e6 + 1.8e6 = 5.8e6 USD.
    """
    ds = load_dataset(HAND)
    plan = tree_plan(ds, read_tree(HAND / "tree3.yaml", ds.periods))
    assert plan.expected_cost_usd == pytest.approx(5.8e6, rel=1e-7)
    np_ = plan.node_plan
    built = np_[np_["kind"] == "build"].set_index("node")["value"]
    assert built.to_dict() == pytest.approx({"root": 10.0, "high": 10.0})
    assert list(np_.loc[np_["node"] == "root", "period"]) == ["2026Q1"]
    # two-stage on the same leaves: one build for every leaf up to 20 MW, 10 in Q1 (Q2
    # demand) and 10 in Q2: 3e6 + 2e6 + 1.8e6 chips = 6.8e6; the tree is worth 1e6
    assert plan.two_stage_cost_usd == pytest.approx(6.8e6, rel=1e-7)
    assert plan.value_of_tree_usd == pytest.approx(1.0e6, rel=1e-6)
    assert plan.leaves["probability"].sum() == pytest.approx(1.0)


def _two_stage_tree(ds: object, names: list[str], weights: list[float]) -> str:
    import yaml

    nodes = [
        {
            "node": n,
            "parent": "root",
            "probability": w,
            "overrides": [o.model_dump(exclude_none=True) for o in ds.scenarios[n].overrides],  # type: ignore[attr-defined]
        }
        for n, w in zip(names, weights, strict=True)
    ]
    return yaml.safe_dump({"stages": ["end"], "nodes": nodes})


@pytest.mark.parametrize("first_stage", ["capacity", "full"])
def test_two_stage_tree_equals_the_hedge(tmp_path: Path, first_stage: str) -> None:
    ds = load_dataset(TINY)
    names = list(ds.scenarios)  # neutral, tight (half the wafers)
    assert len(names) == 2
    weights = [0.3, 0.7]
    f = _write(tmp_path, _two_stage_tree(ds, names, weights))
    tree = read_tree(f, ds.periods)
    plan = tree_plan(ds, tree, first_stage=first_stage, compare=False)
    hedge = hedged_plan(ds, names, weights, first_stage=first_stage)
    assert plan.expected_cost_usd == pytest.approx(hedge.expected_cost_usd, rel=1e-7)


# ------------------------------------------------------------------------ bad input
HEAD = "stages: [2026Q2, 2026Q3]\nnodes:\n"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "  - {node: a, parent: root, probability: 0.5}\n"
            "  - {node: b, parent: root, probability: 0.4}\n"
            "  - {node: a1, parent: a, probability: 1}\n"
            "  - {node: b1, parent: b, probability: 1}\n",
            r"line 3: branch probabilities of node 'root' sum to 0.9 \(0.5 \+ 0.4\), not 1",
        ),
        (
            "  - {node: a, parent: root, probability: 1}\n"
            "  - {node: a1, parent: zz, probability: 1}\n",
            r"line 4: parent 'zz' of 'a1' is no earlier node",
        ),
        (
            "  - {node: a, parent: root, probability: 1}\n",
            r"line 3: leaf 'a' is at stage 2; every leaf must be at stage 3",
        ),
        (  # a typo'd key was ignored: the branch was solved without its overrides
            "  - {node: a, parent: root, probability: 1, overides: []}\n"
            "  - {node: a1, parent: a, probability: 1}\n",
            r"line 3: unknown key 'overides' of node 'a'. Did you mean 'overrides'\?",
        ),
    ],
)
def test_bad_tree_names_file_line_value(tmp_path: Path, body: str, message: str) -> None:
    ds = load_dataset(HAND)
    f = _write(tmp_path, HEAD + body)
    with pytest.raises(TreeFileError, match=str(f).replace("\\", "\\\\") + ", " + message):
        read_tree(f, ds.periods)


def test_stage_quarter_outside_horizon(tmp_path: Path) -> None:
    ds = load_dataset(HAND)
    f = _write(
        tmp_path,
        "stages:\n  - 2026Q2\n  - 2031Q1\nnodes:\n  - {node: a, parent: root, probability: 1}\n",
    )
    with pytest.raises(
        TreeFileError, match=r"line 3: stage quarter '2031Q1' is outside the horizon"
    ):
        read_tree(f, ds.periods)


def test_cli_tree_bad_file_exits_2(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from optimizer.cli.commands import app

    f = _write(tmp_path, "stages: [2029Q1]\nnodes:\n  - {node: a, parent: root, probability: 1}\n")
    r = CliRunner().invoke(app, ["hedge", str(HAND), "--tree", str(f)])
    assert r.exit_code == 2, r.output
    # the line wraps where the temporary folder's path length puts it
    assert "outside the horizon" in " ".join(r.output.split())


def test_a_branch_override_before_its_stage_is_warned(tmp_path: Path) -> None:
    """An override on node strong from 2025Q1 under a 2026Q1 stage was solved without a
    word: the branches' data then differ in the quarters they share."""
    from typer.testing import CliRunner

    from optimizer.analysis.tree_spec import early_overrides
    from optimizer.cli.commands import app

    ds = load_dataset(HAND)
    assert early_overrides(read_tree(HAND / "tree3.yaml", ds.periods)) == []
    ov = "{op: scale, table: demand, column: demand_h100e, factor: 1.2, source: 'assumption: t'}"
    f = _write(
        tmp_path,
        "stages: [2026Q2]\nnodes:\n"
        f"  - node: strong\n    parent: root\n    probability: 0.5\n    overrides:\n"
        f"      - {ov[:-1]}, from_period: 2026Q1}}\n"
        f"      - {ov}\n"
        f"      - {ov[:-1]}, from_period: 2026Q2}}\n"
        "      - {op: shift, table: chips, column: first_period, periods: 3, "
        "source: 'assumption: t'}\n"  # no period column: takes no from_period, not warned
        "  - node: weak\n    parent: root\n    probability: 0.5\n    overrides: []\n",
    )
    found = early_overrides(read_tree(f, ds.periods))
    assert [line.split(": ", 1)[1] for line in found] == [
        "node 'strong', overrides[0] applies from 2026Q1, before its branch is revealed at "
        "2026Q2: the branches' data differ in the quarters they share; give it from_period: "
        "2026Q2 or later",
        "node 'strong', overrides[1] applies from the first quarter (no from_period), before "
        "its branch is revealed at 2026Q2: the branches' data differ in the quarters they "
        "share; give it from_period: 2026Q2 or later",
    ]
    assert all(line.startswith(f"{f}, line 3") for line in found)
    res = CliRunner().invoke(app, ["hedge", str(HAND), "--tree", str(f)])
    text = " ".join(res.output.split())
    assert text.count("warning:") == 2 and "overrides[1] applies from the first quarter" in text
