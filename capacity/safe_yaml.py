"""One YAML reader for every YAML file the product reads, with a cap on alias expansion.

``scenarios.yaml``, ``dataset.yaml``, sweep files and the YAML inside app uploads are
all read through :func:`load_yaml` (the document) and :func:`compose_yaml` (its node
tree, for line numbers). Both use :class:`yaml.BaseLoader`, so every scalar stays text
(``1e3`` and the region code ``NO`` stay as written) and no Python object can be built.

Two equal keys in one mapping are refused with both lines, and merge keys
(``<<: *defaults``) are applied (:mod:`capacity.yaml_keys`). Aliases (``*name``) are
allowed, since ``<<: *defaults`` is a common way to share fields, but a document
whose aliases would expand beyond :data:`MAX_YAML_NODES` nodes
(a "billion laughs" document: 18 KB that expands to billions of items) or refer to
themselves is refused with :class:`YamlLimitError` before anything walks it. The
composed node graph itself shares aliased nodes, so the check runs in time linear in
the size of the file.
"""

from __future__ import annotations

from typing import Any

import yaml

from capacity.yaml_keys import check_and_merge

MAX_YAML_NODES = 100_000
"""Most nodes a YAML document may hold once its aliases are expanded.

The bundled ``scenarios.yaml`` expands to a few hundred nodes and the example sweep
to fewer; a sweep or scenario file a hundred times larger still fits.
"""


class YamlLimitError(yaml.YAMLError):  # type: ignore[misc]
    """A YAML document refused before use: aliases that expand too far or loop.

    A subclass of :class:`yaml.YAMLError`, so every reader that reports bad YAML as a
    finding reports this one too. ``line`` is the 1-based line of the offending alias
    (or anchor), when known.
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.problem_mark = _Mark(line - 1) if line is not None else None


class _Mark:
    """Minimal stand-in for a PyYAML mark (``line`` is 0-based, like PyYAML's)."""

    def __init__(self, line: int) -> None:
        self.line = line


def _expanded_size(root: yaml.Node, limit: int) -> int:
    """Return the number of nodes of ``root`` with aliases expanded (stops above ``limit``).

    Raises
    ------
    YamlLimitError
        When the expansion exceeds ``limit`` or a node contains itself.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise YamlLimitError(
                "an alias refers to the node that contains "
                "it (a recursive YAML document); write the values out instead",
                node.start_mark.line + 1,
            )
        open_nodes.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            children: list[yaml.Node] = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        else:
            children = []
        for child in children:
            total += size(child)
            if total > limit:
                raise YamlLimitError(
                    f"the document's aliases expand to more "
                    f"than {limit:,} items (a 'billion laughs' document?); the limit keeps a "
                    "small file from exhausting memory. Write the values out, or use fewer "
                    "aliases",
                    child.start_mark.line + 1,
                )
        open_nodes.discard(key)
        sizes[key] = total
        return total

    return size(root)


def _too_deep() -> YamlLimitError:
    return YamlLimitError(
        "the document nests lists or mappings too deeply to read; a scenario or sweep "
        "file needs only a few levels"
    )


def compose_yaml(text: str, *, max_nodes: int = MAX_YAML_NODES) -> yaml.Node | None:
    """Return the node tree of a YAML text (BaseLoader), checked against the alias cap.

    Parameters
    ----------
    text : str
        The YAML document.
    max_nodes : int
        Most nodes once aliases are expanded.

    Returns
    -------
    yaml.Node or None
        The root node; None for an empty document.

    Raises
    ------
    yaml.YAMLError
        For invalid YAML; :class:`YamlLimitError` when the alias cap is exceeded.
    """
    loader = yaml.BaseLoader(text)
    try:
        root = loader.get_single_node()
        if root is not None:
            _expanded_size(root, max_nodes)
            check_and_merge(root)
        return root
    except RecursionError:
        raise _too_deep() from None
    finally:
        loader.dispose()


def load_yaml(text: str, *, max_nodes: int = MAX_YAML_NODES) -> Any:
    """Load a YAML text with every scalar as text, refusing alias bombs.

    Parameters
    ----------
    text : str
        The YAML document.
    max_nodes : int
        Most nodes once aliases are expanded (:data:`MAX_YAML_NODES`).

    Returns
    -------
    Any
        Nested dicts, lists and strings (None for an empty document).

    Raises
    ------
    yaml.YAMLError
        For invalid YAML; :class:`YamlLimitError` when the alias cap is exceeded or an
        alias is recursive.
    """
    loader = yaml.BaseLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        _expanded_size(root, max_nodes)
        check_and_merge(root)  # duplicate keys refused, '<<' merge keys applied
        return loader.construct_document(root)
    except RecursionError:
        raise _too_deep() from None
    finally:
        loader.dispose()
