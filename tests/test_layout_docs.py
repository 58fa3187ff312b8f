"""The module map is written three times and the three agree with the files.

* the ranks of the sub-packages (:data:`tests.test_architecture.OPTIMIZER_RANKS`);
* the ``Layers`` section of ``optimizer/__init__.py`` (sub-packages, lowest first) and
  the ``Modules`` section of each sub-package's docstring (one line per module);
* the ``optimizer/`` part of the layout block of the development guide
  (``docs/guide/development.md``, the one module map).

That block is rendered from the docstrings (:func:`render_layout`), so a change
of the tree is a change of the docstrings; the failure message prints the block to
paste.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import ROOT
from tests.test_architecture import OPTIMIZER_RANKS

_ENTRY = re.compile(r"^``(?P<name>\w+)``\s+(?P<text>\S.*)$")


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def _section(doc: str, title: str) -> list[tuple[str, str]]:
    """Entries ``name`` -> first line of text of one docstring section."""
    lines = doc.splitlines()
    try:
        start = lines.index(title) + 2  # skip the underline
    except ValueError:
        return []
    entries: list[tuple[str, str]] = []
    for i, line in enumerate(lines[start:], start):
        if i + 1 < len(lines) and set(lines[i + 1]) == {"-"}:
            break  # the next section's title
        match = _ENTRY.match(line)
        if match:
            entries.append((match["name"], match["text"].strip()))
    return entries


def _sub_packages() -> list[str]:
    ranked = sorted((r, n) for n, r in OPTIMIZER_RANKS.items() if n != "optimizer")
    return [n.split(".")[1] for _, n in ranked]


def _modules_on_disk(package: str) -> set[str]:
    folder = ROOT / "optimizer" / package
    return {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}


def render_layout() -> str:
    """The ``optimizer/`` lines of the development guide's layout block, from the docstrings."""
    layers = dict(_section(_docstring(ROOT / "optimizer" / "__init__.py"), "Layers"))
    out = ["optimizer/                the planner; sub-packages lowest layer first"]
    for package in _sub_packages():
        out.append(f"  {package + '/':<24}{layers.get(package, '')}")
        doc = _docstring(ROOT / "optimizer" / package / "__init__.py")
        for name, _ in _section(doc, "Modules"):
            out.append(f"    {name + '.py'}")
    # wrap module names onto lines of at most 88 characters
    wrapped: list[str] = []
    for line in out:
        if line.startswith("    ") and wrapped and wrapped[-1].startswith("    "):
            if len(wrapped[-1]) + 1 + len(line.strip()) <= 88:
                wrapped[-1] += " " + line.strip()
                continue
        wrapped.append(line)
    return "\n".join(wrapped)


def test_layers_in_the_package_docstring_follow_the_ranks() -> None:
    layers = [n for n, _ in _section(_docstring(ROOT / "optimizer" / "__init__.py"), "Layers")]
    assert layers == _sub_packages()


def test_the_sub_package_folders_are_the_ranked_ones() -> None:
    folders = {p.parent.name for p in (ROOT / "optimizer").glob("*/__init__.py")}
    assert folders == set(_sub_packages())


def test_each_sub_package_docstring_lists_exactly_its_modules() -> None:
    wrong = {}
    for package in _sub_packages():
        doc = _docstring(ROOT / "optimizer" / package / "__init__.py")
        listed = [n for n, _ in _section(doc, "Modules")]
        if sorted(listed) != sorted(_modules_on_disk(package)) or len(set(listed)) != len(listed):
            wrong[package] = (sorted(listed), sorted(_modules_on_disk(package)))
    assert wrong == {}, f"docstring 'Modules' list vs files (listed, on disk): {wrong}"


GUIDE = ROOT / "docs" / "guide" / "development.md"


def _layout_block() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("## Layout\n", 1)[1]
    return section.split("```text\n", 1)[1].split("```", 1)[0]


def test_the_guide_layout_block_shows_the_tree() -> None:
    expected = render_layout()
    assert expected in _layout_block(), (
        "docs/guide/development.md's layout block (## Layout) must hold these lines, "
        "rendered from the package docstrings:\n" + expected
    )


def _named_modules(block: str, folder: str) -> set[str]:
    """Module names (``x.py``) written in the block's lines for one top-level folder."""
    lines = block.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(folder + "/"))
    part = [lines[start]]
    for line in lines[start + 1 :]:
        if line and not line.startswith(" "):
            break
        part.append(line)
    return set(re.findall(r"\b(\w+)\.py\b", "\n".join(part)))


def test_the_guide_layout_names_every_module_of_capacity_and_ui() -> None:
    """The hand-written parts of the map (capacity/, ui/) name exactly the modules on disk."""
    block = _layout_block()
    wrong = {}
    for folder, exempt in (("capacity", {"__init__"}), ("ui", {"__init__"})):
        on_disk = {p.stem for p in (ROOT / folder).glob("*.py")} - exempt
        named = _named_modules(block, folder)
        if on_disk != named:
            wrong[folder] = {
                "not in the map": sorted(on_disk - named),
                "not on disk": sorted(named - on_disk),
            }
    assert wrong == {}, f"docs/guide/development.md's layout block vs the files: {wrong}"


def test_the_section_reader_stops_at_the_next_section() -> None:
    doc = "Head.\n\nModules\n-------\n``a``  one\n``b``  two\n\nOther\n-----\n``c``  x\n"
    assert _section(doc, "Modules") == [("a", "one"), ("b", "two")]


_TRACKER = re.compile(r"\b[Ii]ssues? #?\d+\b|\(#\d+\)")


def test_product_text_cites_no_tracker_numbers() -> None:
    """Docstrings, comments, the README and the docs say what a feature is, not its ticket."""
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for package in (
        "capacity",
        "optimizer",
        "ui",
        "capacity_cli",
        "capacity_planner",
        "benchmarks",
    ):
        paths += sorted((ROOT / package).rglob("*.py"))
    found = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
        for p in paths
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if _TRACKER.search(line)
    ]
    assert found == [], "tracker numbers in product text:\n" + "\n".join(found)
