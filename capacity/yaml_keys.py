"""Mapping keys of a YAML document: duplicates refused, merge keys (``<<``) applied.

PyYAML's loaders keep the *last* of two equal keys without a word, so a second
``negative:`` scenario or an axis's ``levels:`` written twice silently replaces the
first. :func:`check_and_merge` walks a composed node tree (``yaml.BaseLoader``) once:

* two equal keys in one mapping raise :class:`DuplicateKeyError`, naming the key and
  both lines;
* a merge key ``<<: *anchor`` (or ``<<: [*a, *b]``) copies the anchored mapping's
  entries into the mapping, as YAML 1.1 specifies: keys written in the mapping itself
  win, and among several merged mappings the first one listed wins. The base loader
  does not do this (it would report "unknown key '<<'");
* every scalar is put in Unicode normal form C, as the tables' cells are, so an ID
  typed with a decomposed accent matches the same ID typed precomposed.
"""

from __future__ import annotations

import unicodedata

import yaml

__all__ = ["DuplicateKeyError", "check_and_merge"]

MERGE_KEY = "<<"


class DuplicateKeyError(yaml.YAMLError):  # type: ignore[misc]
    """Two equal keys in one YAML mapping.

    A :class:`yaml.YAMLError`, so every reader that reports bad YAML at its line
    reports this one too (``problem_mark.line`` is the 0-based line of the second key).
    """

    def __init__(self, key: str, first_line: int, second_line: int) -> None:
        super().__init__(
            f"duplicate key {key!r} at line {second_line} (first at line {first_line}); "
            "each key may appear once, the later one would silently replace the earlier"
        )
        self.key = key
        self.lines = (first_line, second_line)
        self.problem_mark = yaml.Mark("", 0, second_line - 1, 0, None, None)


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _merged_entries(value: yaml.Node) -> list[tuple[yaml.Node, yaml.Node]]:
    """Entries a ``<<`` value contributes (a mapping, or a sequence of mappings)."""
    sources = value.value if isinstance(value, yaml.SequenceNode) else [value]
    out: list[tuple[yaml.Node, yaml.Node]] = []
    for src in sources:
        if not isinstance(src, yaml.MappingNode):
            raise yaml.constructor.ConstructorError(
                None,
                None,
                "a merge key '<<' needs a mapping or a list of mappings (e.g. '<<: *defaults')",
                src.start_mark,
            )
        out.extend(src.value)
    return out


def _check_mapping(node: yaml.MappingNode) -> None:
    seen: dict[str, int] = {}
    own: list[tuple[yaml.Node, yaml.Node]] = []
    merged: list[tuple[yaml.Node, yaml.Node]] = []
    for key, value in node.value:
        name = key.value if isinstance(key, yaml.ScalarNode) else None
        if name == MERGE_KEY and key.style is None:
            merged.extend(_merged_entries(value))
            continue
        if name is not None:
            if name in seen:
                raise DuplicateKeyError(name, seen[name], _line(key))
            seen[name] = _line(key)
        own.append((key, value))
    if merged:
        extra: list[tuple[yaml.Node, yaml.Node]] = []
        for key, value in merged:
            name = key.value if isinstance(key, yaml.ScalarNode) else None
            if name is None or name not in seen:
                extra.append((key, value))
                if name is not None:
                    seen[name] = _line(key)
        node.value = own + extra


def check_and_merge(root: yaml.Node | None) -> None:
    """Refuse duplicate keys and apply merge keys in a composed YAML tree, in place.

    Parameters
    ----------
    root : yaml.Node or None
        From ``yaml.BaseLoader(text).get_single_node()`` (aliases already checked).

    Raises
    ------
    DuplicateKeyError
        When a mapping holds the same key twice (message names both lines).
    yaml.constructor.ConstructorError
        When a merge key's value is not a mapping or a list of mappings.
    """
    done: set[int] = set()

    def visit(node: yaml.Node) -> None:
        if id(node) in done:
            return
        done.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for pair in list(node.value):
                for child in pair:
                    visit(child)
            _check_mapping(node)  # after its children: a merged anchor is complete
        elif isinstance(node, yaml.SequenceNode):
            for child in node.value:
                visit(child)
        elif isinstance(node, yaml.ScalarNode):
            node.value = unicodedata.normalize("NFC", node.value)  # as the tables' IDs

    if root is not None:
        visit(root)
