"""YAML line maps of a sweep file: each key path's line, and a path as field text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from capacity.safe_yaml import compose_yaml

__all__ = ["field_text", "line_of", "sweep_lines"]


def sweep_lines(text: str) -> dict[tuple[str | int, ...], int]:
    """Map each path of a sweep YAML text to its 1-based line.

    A mapping entry's path ends with its key (``("grid", "axes")``) and maps to the
    line of the key; a list item's path ends with its index (``("grid", "axes", 0)``)
    and maps to the line where the item starts. Read with ``yaml.compose`` and
    :class:`yaml.BaseLoader`, like the document itself; empty when the text is not
    YAML.
    """
    out: dict[tuple[str | int, ...], int] = {}
    try:
        root = compose_yaml(text)
    except yaml.YAMLError:
        return out

    def walk(node: Any, path: tuple[str | int, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                sub = (*path, str(k.value))
                out.setdefault(sub, k.start_mark.line + 1)
                walk(v, sub)
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                out[(*path, i)] = v.start_mark.line + 1
                walk(v, (*path, i))

    if root is not None:
        walk(root, ())
    return out


def line_of(lines: Mapping[tuple[str | int, ...], int], path: Sequence[str | int]) -> int | None:
    """Return the line of the deepest part of ``path`` that ``lines`` has (None: none)."""
    for n in range(len(path), 0, -1):
        if tuple(path[:n]) in lines:
            return lines[tuple(path[:n])]
    return None


def field_text(path: Sequence[str | int]) -> str:
    """Return a key path as field text: ``("grid", "axes", 0)`` -> ``grid.axes[0]``."""
    parts: list[str] = []
    for x in path:
        if isinstance(x, int):
            parts[-1:] = [f"{parts[-1]}[{x}]" if parts else f"[{x}]"]
        else:
            parts.append(str(x))
    return ".".join(parts)
