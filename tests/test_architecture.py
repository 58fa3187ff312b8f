"""The architecture stays walkable: imports point downwards and functions stay short.

Imports are read with :mod:`ast`, at module level *and* inside function bodies and
``if TYPE_CHECKING:`` blocks: a lazy import hides a cycle from the interpreter, not
from the reader. The layers (see ``optimizer/__init__.py`` and the development guide's layout):

* packages: ``ui`` -> ``optimizer`` -> ``capacity`` (``benchmarks``, the console
  script's launcher ``capacity_cli`` and the notebook API ``capacity_planner`` sit beside
  ``ui``, on top; nothing imports ``ui``, ``benchmarks`` or ``capacity_cli`` but
  themselves);
* ``capacity`` imports neither PuLP, HiGHS nor Streamlit; ``optimizer`` no Streamlit;
* inside ``optimizer``, each module imports only modules of its own or a lower rank
  in :data:`OPTIMIZER_RANKS`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGES = ("capacity", "optimizer", "ui", "benchmarks", "capacity_cli", "capacity_planner")

#: Package layers, lowest first: a package imports only packages of a lower or equal rank.
PACKAGE_RANKS = {
    "capacity": 0,
    "optimizer": 1,
    "ui": 2,
    "benchmarks": 2,
    "capacity_cli": 2,
    "capacity_planner": 2,
}

#: Third-party packages a project package must not import.
FORBIDDEN_THIRD_PARTY = {
    "capacity": {"pulp", "highspy", "streamlit"},
    "optimizer": {"streamlit"},
}

#: Rank of each optimizer sub-package, lowest first: a module imports only modules of
#: its own or a lower rank (inside one sub-package, any module as long as no cycle
#: forms). The package docstring of ``optimizer`` lists the same layers in the same
#: order, and the development guide's layout shows the same tree (both are tested).
OPTIMIZER_RANKS = {
    "optimizer.lp": 0,
    "optimizer.components": 1,
    "optimizer.plan": 2,
    "optimizer": 2,  # the facade re-exports the plan's entry points
    "optimizer.output": 3,
    "optimizer.analysis": 4,
    "optimizer.notebook": 5,
    "optimizer.cli": 6,
}

#: Import edges exempt from the checks (none).
EXEMPT_IMPORTS: frozenset[tuple[str, str]] = frozenset()

#: Longest function allowed, in lines of its ``def`` node (decorators and its
#: docstring excluded). Module-level tables are not functions.
MAX_FUNCTION_LINES = 60

#: Longest product module allowed, in lines.
MAX_MODULE_LINES = 600

#: The product packages the size limits hold for (benchmarks and tests are not product).
PRODUCT_PACKAGES = ("capacity", "optimizer", "ui", "capacity_cli", "capacity_planner")

#: Functions allowed over the limit: none. Split a long function into named steps
#: rather than adding it here.
EXEMPT_LONG_FUNCTIONS: frozenset[str] = frozenset()


def _module_files() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = path
    return mods


MODULES = _module_files()


def _imported_names(name: str, path: Path) -> Iterator[str]:
    """Every dotted name an import statement anywhere in the file refers to."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            # "from pkg import sub" names the submodule pkg.sub, "from mod import name"
            # the module mod: _project_module walks up from "mod.name" to what exists.
            yield from (f"{module}.{alias.name}" for alias in node.names)


def _project_module(dotted: str) -> str | None:
    """The project module a dotted name lives in (``None`` for third-party names)."""
    while dotted and dotted not in MODULES:
        dotted = dotted.rpartition(".")[0]
    return dotted or None


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        targets = {_project_module(d) for d in _imported_names(name, path)}
        graph[name] = {t for t in targets if t is not None and t != name}
    return graph


def _edges() -> list[tuple[str, str]]:
    return [
        (a, b) for a, bs in _graph().items() for b in sorted(bs) if (a, b) not in EXEMPT_IMPORTS
    ]


def _cycles(edges: list[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    graph: dict[str, list[str]] = {m: [] for m in MODULES}
    for a, b in edges:
        graph[a].append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def _optimizer_rank(module: str) -> int | None:
    """Rank of the sub-package a module lives in (``None`` outside ``optimizer``)."""
    while module and module not in OPTIMIZER_RANKS:
        module = module.rpartition(".")[0]
    return OPTIMIZER_RANKS.get(module) if module else None


def test_the_import_reader_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(
        "import capacity.schema\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from optimizer.plan.model import PlanningModel\n"
        "def f():\n    from optimizer.plan.pipeline import solve\n    from . import summary\n"
    )
    found = {_project_module(d) for d in _imported_names("optimizer.output.x", src)}
    assert found == {
        "capacity.schema",
        "optimizer.plan.model",
        "optimizer.plan.pipeline",
        "optimizer.output.summary",
        None,  # typing.TYPE_CHECKING: third party
    }


def test_importing_a_submodule_from_its_package_is_not_an_edge_to_the_package(
    tmp_path: Path,
) -> None:
    src = tmp_path / "m.py"
    src.write_text("from optimizer.output import report\nfrom optimizer import SolveOptions\n")
    found = [_project_module(d) for d in _imported_names("optimizer.x", src)]
    assert found == ["optimizer.output.report", "optimizer"]


def test_the_reader_finds_a_planted_cycle() -> None:
    edges = [("capacity.schema", "capacity.dataset"), ("capacity.dataset", "capacity.schema")]
    assert _cycles(edges) == [["capacity.dataset", "capacity.schema"]]


def test_no_import_cycles_among_project_modules() -> None:
    cycles = _cycles(_edges())
    assert cycles == [], f"import cycles (module-level or lazy imports): {cycles}"


def test_packages_import_only_downwards() -> None:
    wrong = [
        (a, b)
        for a, b in _edges()
        if PACKAGE_RANKS[a.split(".")[0]] < PACKAGE_RANKS[b.split(".")[0]]
        or (b.split(".")[0] in ("ui", "benchmarks") and a.split(".")[0] != b.split(".")[0])
    ]
    assert wrong == [], f"imports against the layers ui -> optimizer -> capacity: {wrong}"


@pytest.mark.parametrize("package", sorted(FORBIDDEN_THIRD_PARTY))
def test_lower_packages_do_not_import_heavy_third_party(package: str) -> None:
    wrong = [
        (name, dotted)
        for name, path in MODULES.items()
        if name.split(".")[0] == package
        for dotted in _imported_names(name, path)
        if dotted.split(".")[0] in FORBIDDEN_THIRD_PARTY[package]
    ]
    assert wrong == [], (
        f"{package} must not import {sorted(FORBIDDEN_THIRD_PARTY[package])}: {wrong}"
    )


def test_every_optimizer_module_lives_in_a_ranked_sub_package() -> None:
    loose = [m for m in MODULES if m.count(".") == 1 and m.startswith("optimizer.")]
    loose = [m for m in loose if MODULES[m].name != "__init__.py"]
    assert loose == [], f"move these modules into a sub-package of OPTIMIZER_RANKS: {loose}"


def test_optimizer_modules_import_only_downwards() -> None:
    wrong = []
    for a, b in _edges():
        ra, rb = _optimizer_rank(a), _optimizer_rank(b)
        if ra is not None and rb is not None and rb > ra:
            wrong.append(f"{a} (rank {ra}) imports {b} (rank {rb})")
    assert wrong == [], "optimizer imports against the documented order:\n" + "\n".join(wrong)


Function = ast.FunctionDef | ast.AsyncFunctionDef


def _functions(tree: ast.AST, prefix: str) -> Iterator[tuple[str, Function]]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, Function):
            yield f"{prefix}.{node.name}", node
            yield from _functions(node, f"{prefix}.{node.name}")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}.{node.name}")
        else:
            yield from _functions(node, prefix)


def _body_lines(node: Function) -> int:
    """Lines of a function's ``def`` node, its docstring excluded."""
    lines = (node.end_lineno or node.lineno) - node.lineno + 1
    first = node.body[0] if node.body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        lines -= (first.end_lineno or first.lineno) - first.lineno + 1
    return lines


def test_the_length_count_leaves_the_docstring_out() -> None:
    tree = ast.parse('def f():\n    """One.\n\n    Two.\n    """\n    return 1\n')
    node = tree.body[0]
    assert isinstance(node, ast.FunctionDef) and _body_lines(node) == 2


def test_no_function_is_longer_than_60_lines() -> None:
    long = []
    for name, path in MODULES.items():
        if name.split(".")[0] not in PRODUCT_PACKAGES:
            continue
        for qualname, node in _functions(ast.parse(path.read_text(encoding="utf-8")), name):
            lines = _body_lines(node)
            if lines > MAX_FUNCTION_LINES and qualname not in EXEMPT_LONG_FUNCTIONS:
                long.append(f"{qualname}: {lines} lines")
    assert long == [], f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(long)


def test_no_product_module_is_longer_than_600_lines() -> None:
    long = [
        f"{name}: {n} lines"
        for name, path in MODULES.items()
        if name.split(".")[0] in PRODUCT_PACKAGES
        and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert long == [], f"modules over {MAX_MODULE_LINES} lines:\n" + "\n".join(long)


def _constants_bound_twice(tree: ast.Module) -> list[str]:
    """Module-level UPPER_CASE names a module assigns more than once."""
    seen: dict[str, int] = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Name) and t.id.isupper():
                seen[t.id] = seen.get(t.id, 0) + 1
    return sorted(n for n, c in seen.items() if c > 1)


def test_no_module_binds_a_constant_twice() -> None:
    """alternatives.py bound CAP_TOLERANCE = 1e-9 for the cap's room below CAP_TOLERANCE =
    1e-6 of its checks: the second won everywhere, and the checks became 1,000 times
    stricter without a word."""
    planted = ast.parse("A = 1\nB: int = 2\nA = 3\n")
    assert _constants_bound_twice(planted) == ["A"]
    twice = [
        f"{name}: {', '.join(found)}"
        for name, path in MODULES.items()
        if (found := _constants_bound_twice(ast.parse(path.read_text(encoding="utf-8"))))
    ]
    assert twice == [], "constants bound twice:\n" + "\n".join(twice)
