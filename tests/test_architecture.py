"""The architecture stays walkable: imports point downwards and functions stay short.

Imports are read with :mod:`ast`, at module level *and* inside function bodies and
``if TYPE_CHECKING:`` blocks: a lazy import hides a cycle from the interpreter, not
from the reader. The layers (see ``optimizer/__init__.py`` and the README's layout):

* packages: ``ui`` -> ``optimizer`` -> ``capacity`` (``benchmarks`` and the console
  script's launcher ``capacity_cli`` sit beside ``ui``, on top; nothing imports ``ui``,
  ``benchmarks`` or ``capacity_cli`` but themselves);
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

PACKAGES = ("capacity", "optimizer", "ui", "benchmarks", "capacity_cli")

#: Package layers, lowest first: a package imports only packages of a lower or equal rank.
PACKAGE_RANKS = {"capacity": 0, "optimizer": 1, "ui": 2, "benchmarks": 2, "capacity_cli": 2}

#: Third-party packages a project package must not import.
FORBIDDEN_THIRD_PARTY = {
    "capacity": {"pulp", "highspy", "streamlit"},
    "optimizer": {"streamlit"},
}

#: Rank of each optimizer module, lowest first (same rank may import each other, as
#: long as no cycle forms). Mirrors the module map of ``optimizer/__init__.py``.
OPTIMIZER_RANKS = {
    # the LP: build, solve, read back
    "optimizer.model": 0,  # the LP and its constraint families (and optimizer.families.*)
    "optimizer.reuse_cache": 0,  # per-structure caches a sweep's patched models share
    "optimizer.results": 1,
    "optimizer.power_results": 1,  # power_sources and power_decisions (issue 12)
    "optimizer.check": 1,
    "optimizer.explain": 1,
    "optimizer.calibration": 1,  # the plan held against data/public_record.csv
    "optimizer.pulp_io": 1,  # the model as a PuLP problem: readable names, LP/MPS files
    "optimizer.solvers": 1,  # solver registry and the PuLP solve path (used by solve)
    "optimizer.tidy_numbers": 1,  # quantities at their bound written at the bound
    "optimizer.solve": 2,
    "optimizer": 2,  # the package facade re-exports model, results and solve
    # output: writers and formatters of result tables (import no other optimizer module)
    "optimizer.report": 3,
    "optimizer.summary": 3,
    # scenario analysis: specs, outcome metrics, many solves, risk views
    "optimizer.sweep": 4,
    "optimizer.cluster": 4,  # Dask client, local cluster security, bounded wait
    "optimizer.outcomes": 4,
    "optimizer.case_check": 4,  # is a written batch case really done (reads report files)
    "optimizer.batch_folder": 4,  # the batch folder's manifest, merged under a lock
    "optimizer.batch": 5,
    "optimizer.risk": 6,
    "optimizer.decompose": 7,  # the hedged plan by L-shaped decomposition on Dask
    # the command line
    "optimizer.cli_checks": 8,  # option and output checks shared by every command
    "optimizer.cli": 8,
    "optimizer.cli_pulp": 8,  # capacity solvers / export-lp, registered by optimizer.cli
}

#: Import edges exempt from the checks (none).
EXEMPT_IMPORTS: frozenset[tuple[str, str]] = frozenset()

#: Longest function allowed, in lines of its ``def`` node (decorators excluded,
#: docstring included). Module-level tables are not functions.
MAX_FUNCTION_LINES = 80

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
    if module == "optimizer.families" or module.startswith("optimizer.families."):
        return OPTIMIZER_RANKS["optimizer.model"]
    return OPTIMIZER_RANKS.get(module)


def test_the_import_reader_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(
        "import capacity.schema\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from optimizer.model import PlanningModel\n"
        "def f():\n    from optimizer.solve import solve\n    from . import summary\n"
    )
    found = {_project_module(d) for d in _imported_names("optimizer.x", src)}
    assert found == {
        "capacity.schema",
        "optimizer.model",
        "optimizer.solve",
        "optimizer.summary",
        None,  # typing.TYPE_CHECKING: third party
    }


def test_importing_a_submodule_from_its_package_is_not_an_edge_to_the_package(
    tmp_path: Path,
) -> None:
    src = tmp_path / "m.py"
    src.write_text("from optimizer import report\nfrom optimizer import SolveOptions\n")
    found = [_project_module(d) for d in _imported_names("optimizer.x", src)]
    assert found == ["optimizer.report", "optimizer"]


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


def test_every_optimizer_module_has_a_rank() -> None:
    missing = [m for m in MODULES if m.split(".")[0] == "optimizer" and _optimizer_rank(m) is None]
    assert missing == [], f"add these modules to OPTIMIZER_RANKS and the module map: {missing}"


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


def test_no_function_is_longer_than_80_lines() -> None:
    long = []
    for name, path in MODULES.items():
        if name.split(".")[0] not in ("capacity", "optimizer", "ui"):
            continue
        for qualname, node in _functions(ast.parse(path.read_text(encoding="utf-8")), name):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > MAX_FUNCTION_LINES and qualname not in EXEMPT_LONG_FUNCTIONS:
                long.append(f"{qualname}: {lines} lines")
    assert long == [], f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(long)
