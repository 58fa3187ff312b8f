"""The scenario-tree file of the multi-stage plan: stages, nodes, branch probabilities.

A tree file is YAML::

    stages: [2026Q1, 2027Q1]       # quarters at which a branch is revealed
    nodes:
      - node: high                 # a child of the root, revealed at 2026Q1
        parent: root
        probability: 0.5           # of this branch given its parent
        overrides:                 # applied on top of the parent's (scenario overrides)
          - {op: scale, table: demand, column: demand_h100e, from_period: 2026Q1, factor: 1.2}
      - node: high_late
        parent: high               # revealed at 2027Q1
        probability: 0.4
        overrides: [...]

``root`` is implicit. A node's stage is its depth (children of the root are stage 2,
revealed at ``stages[0]``); every leaf is at depth ``len(stages)``. Each leaf is one
scenario (its overrides: those of its ancestors, root first) with probability the
product of the branch probabilities on its path. The investment decisions of quarter
``t`` belong to the ancestor of the leaf at the depth of the stages ``<= t``: before
``stages[0]`` they are the root's, shared by every leaf (non-anticipativity).

The quarter ``end`` (after the horizon) is allowed as a stage: a tree with
``stages: [end]`` shares every quarter's investments, as the two-stage hedge does, and
only the operation follows the branch. Give each branch's overrides a ``from_period``
at or after its stage quarter so the data before the branch stays common.

Errors (:class:`TreeFileError`) name the file, the line and the value: branch
probabilities of a node that do not sum to 1, a stage quarter outside the horizon or
out of order, an unknown parent, a leaf at the wrong depth.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["END", "ScenarioTree", "TreeFileError", "TreeNode", "early_overrides", "read_tree"]

#: The stage quarter after the horizon (investments shared over the whole horizon).
END = "end"

#: Tolerance of a node's branch probabilities summing to 1.
PROBABILITY_TOL = 1e-9


class TreeFileError(ValueError):
    """A bad tree file: the message names the file, the line and the value."""


@dataclass(frozen=True)
class TreeNode:
    """One node of the tree (``root`` has depth 0, no parent, probability 1)."""

    name: str
    parent: str | None
    probability: float
    overrides: tuple[Mapping[str, Any], ...]
    depth: int
    line: int = 0


@dataclass(frozen=True)
class ScenarioTree:
    """A validated scenario tree.

    Attributes
    ----------
    stages : tuple of str
        Stage quarters (``end`` allowed last).
    nodes : Mapping[str, TreeNode]
        Every node by name, ``root`` included.
    source : str
        The file read (for messages).
    """

    stages: tuple[str, ...]
    nodes: Mapping[str, TreeNode]
    source: str = ""

    def children(self, name: str) -> list[TreeNode]:
        """Return the children of node ``name``, in file order."""
        return [n for n in self.nodes.values() if n.parent == name]

    def leaves(self) -> list[TreeNode]:
        """Return the leaves (nodes without children), in file order."""
        return [n for n in self.nodes.values() if not self.children(n.name)]

    def ancestors(self, name: str) -> list[TreeNode]:
        """Return the path from the root to ``name`` (both included)."""
        out = []
        node: TreeNode | None = self.nodes[name]
        while node is not None:
            out.append(node)
            node = self.nodes[node.parent] if node.parent else None
        return out[::-1]

    def leaf_probability(self, name: str) -> float:
        """Product of the branch probabilities from the root to ``name``."""
        p = 1.0
        for n in self.ancestors(name):
            p *= n.probability
        return p

    def stage_index(self, periods: Sequence[str]) -> list[int]:
        """Per quarter of ``periods``, the depth of the node owning its decisions."""
        pos = {q: i for i, q in enumerate(periods)}
        starts = [pos.get(q, len(periods)) for q in self.stages]
        return [sum(1 for s in starts if s <= t) for t in range(len(periods))]


def read_tree(path: str | Path, periods: Sequence[str]) -> ScenarioTree:
    """Read and check a tree file against a horizon.

    Parameters
    ----------
    path : path-like
        The YAML tree file.
    periods : sequence of str
        The dataset's quarters.

    Returns
    -------
    ScenarioTree

    Raises
    ------
    TreeFileError
        For anything wrong with the file (the message names file, line and value).
    """
    from capacity.safe_yaml import compose_yaml, load_yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        doc, root = load_yaml(text), compose_yaml(text)
    except (OSError, ValueError) as e:
        raise TreeFileError(f"{path}: cannot read the tree file: {e}") from e
    except Exception as e:  # noqa: BLE001 - yaml.YAMLError and its marks
        raise TreeFileError(f"{path}: not a YAML tree file: {e}") from e
    if not isinstance(doc, dict) or "stages" not in doc or "nodes" not in doc:
        raise TreeFileError(f"{path}, line 1: need the keys 'stages' and 'nodes'")
    _refuse_unknown_keys(f"{path}, line 1", doc, TREE_KEYS, "the tree file")
    lines = _lines(root)
    stages = _stages(path, doc["stages"], periods, lines.get("stages", []))
    nodes = _nodes(path, doc["nodes"], lines.get("nodes", []))
    tree = ScenarioTree(stages, nodes, str(path))
    _check_shape(path, tree)
    return tree


def early_overrides(tree: ScenarioTree) -> list[str]:
    """Return a warning for each branch override that applies before its branch is revealed.

    A node's overrides should start at its stage quarter or later (module docstring):
    one without ``from_period``, or with an earlier one, makes the branches' data differ
    in quarters they share, so the operation there sees the branch before it is
    revealed. Only overrides of tables with a ``period`` column are read (others take no
    ``from_period``: a chip's window shifted is no quarter's row). A tree whose stage is
    ``end`` (the two-stage hedge) shares every quarter's investments and has no such
    quarter. Periods compare as ``YYYYQn`` text.

    Returns
    -------
    list of str
        One line per early override, naming the file, the node's line, the override and
        the stage quarter; empty when none is early.
    """
    out = []
    for node in tree.nodes.values():
        if node.depth == 0 or tree.stages[node.depth - 1] == END:
            continue
        stage = tree.stages[node.depth - 1]
        for k, ov in enumerate(node.overrides):
            if not isinstance(ov, Mapping) or not _has_periods(ov.get("table")):
                continue
            start = ov.get("from_period")
            if start is not None and str(start) >= stage:
                continue
            first = "from the first quarter (no from_period)"
            when = f"from {start}" if start is not None else first
            out.append(
                f"{tree.source}, line {node.line}: node {node.name!r}, overrides[{k}] applies "
                f"{when}, before its branch is revealed at {stage}: the branches' data differ "
                f"in the quarters they share; give it from_period: {stage} or later"
            )
    return out


def _has_periods(table: Any) -> bool:
    """Tell whether an override's table has a ``period`` column (takes ``from_period``)."""
    from capacity.schema import SPECS

    spec = SPECS.get(str(table))
    return spec is not None and spec.has_column("period")


#: Keys a tree file and each of its nodes may hold (any other was ignored: a node's
#: ``overides`` typo solved its branch without overrides).
TREE_KEYS = ("stages", "nodes")
NODE_KEYS = ("node", "parent", "probability", "overrides", "description")


def _refuse_unknown_keys(
    where: str, item: Mapping[str, Any], known: Sequence[str], of: str
) -> None:
    """Raise TreeFileError naming a key of ``item`` not in ``known`` (with a suggestion)."""
    from capacity.validation import suggest

    for key in item:
        if str(key) not in known:
            raise TreeFileError(
                f"{where}: unknown key {str(key)!r} of {of}."
                + suggest(str(key), known)
                + f" The keys are {', '.join(known)}."
            )


def _lines(root: Any) -> dict[str, list[int]]:
    """1-based line of each item of the ``stages`` and ``nodes`` sequences."""
    out: dict[str, list[int]] = {}
    for k, v in getattr(root, "value", []) or []:
        items = v.value if isinstance(getattr(v, "value", None), list) else []
        out[str(k.value)] = [int(i.start_mark.line) + 1 for i in items]
    return out


def _line(lines: Sequence[int], i: int) -> int:
    return lines[i] if i < len(lines) else 1


def _stages(path: Path, raw: Any, periods: Sequence[str], lines: Sequence[int]) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw:
        raise TreeFileError(f"{path}: 'stages' must be a list of quarters")
    pos = {q: i for i, q in enumerate(periods)}
    pos[END] = len(periods)
    last = 0
    for i, q in enumerate(raw):
        q = str(q)
        where = f"{path}, line {_line(lines, i)}"
        if q not in pos:
            raise TreeFileError(
                f"{where}: stage quarter {q!r} is outside the horizon "
                f"{periods[0]}..{periods[-1]} (or 'end')"
            )
        if pos[q] < 1 or pos[q] <= last:
            raise TreeFileError(
                f"{where}: stage quarter {q!r} must come after {periods[0]} and after the "
                "stage before it"
            )
        last = pos[q]
    return tuple(str(q) for q in raw)


def _nodes(path: Path, raw: Any, lines: Sequence[int]) -> dict[str, TreeNode]:
    if not isinstance(raw, list) or not raw:
        raise TreeFileError(f"{path}: 'nodes' must be a list of nodes")
    nodes = {"root": TreeNode("root", None, 1.0, (), 0, 1)}
    for i, item in enumerate(raw):
        where = f"{path}, line {_line(lines, i)}"
        if not isinstance(item, dict) or not item.get("node") or not item.get("parent"):
            raise TreeFileError(f"{where}: a node needs 'node', 'parent' and 'probability'")
        name, parent = str(item["node"]), str(item["parent"])
        _refuse_unknown_keys(where, item, NODE_KEYS, f"node {name!r}")
        if name in nodes:
            raise TreeFileError(f"{where}: node {name!r} is defined twice")
        if parent not in nodes:
            raise TreeFileError(f"{where}: parent {parent!r} of {name!r} is no earlier node")
        try:
            p = float(item.get("probability", ""))
        except ValueError:
            p = -1.0
        if not (0.0 <= p <= 1.0):
            raise TreeFileError(
                f"{where}: probability {item.get('probability')!r} of {name!r} is not in [0, 1]"
            )
        ovs = item.get("overrides") or []
        if not isinstance(ovs, list):
            raise TreeFileError(f"{where}: overrides of {name!r} must be a list")
        depth = nodes[parent].depth + 1
        nodes[name] = TreeNode(name, parent, p, tuple(ovs), depth, _line(lines, i))
    return nodes


def _check_shape(path: Path, tree: ScenarioTree) -> None:
    """Branch probabilities sum to 1 per node; every leaf at the last stage's depth."""
    for node in tree.nodes.values():
        kids = tree.children(node.name)
        if not kids:
            if node.depth != len(tree.stages):
                raise TreeFileError(
                    f"{path}, line {node.line}: leaf {node.name!r} is at stage {node.depth + 1}"
                    f"; every leaf must be at stage {len(tree.stages) + 1} "
                    f"({len(tree.stages)} stage quarters)"
                )
            continue
        total = sum(k.probability for k in kids)
        if abs(total - 1.0) > PROBABILITY_TOL:
            probs = " + ".join(f"{k.probability:g}" for k in kids)
            raise TreeFileError(
                f"{path}, line {kids[0].line}: branch probabilities of node {node.name!r} "
                f"sum to {total:g} ({probs}), not 1"
            )
