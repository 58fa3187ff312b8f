"""Every ```python block of the documentation site (``docs/**/*.md``) runs as written.

Each block runs from a scratch folder in which ``data`` is the bundled dataset, so a
block may write files (``plan.lp``) without touching the checkout. A block that needs a
fixture of its own (a report folder for ``<run_id>``) runs in the test named for it in
:data:`RUN_ELSEWHERE`; that test must read the page, and an entry naming no block fails,
so no block is skipped silently. A block that defines something is followed by a check
of what it defined (:data:`AFTER`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, TINY

DOCS = ROOT / "docs"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks() -> dict[tuple[str, int], str]:
    """``(page relative to docs/, n-th python block of the page)`` -> code."""
    blocks: dict[tuple[str, int], str] = {}
    for page in sorted(DOCS.rglob("*.md")):
        if "_build" in page.parts:
            continue
        rel = page.relative_to(DOCS).as_posix()
        for i, code in enumerate(_BLOCK.findall(page.read_text(encoding="utf-8"))):
            blocks[(rel, i)] = code
    return blocks


#: Blocks run by another test, with the test file that runs them.
RUN_ELSEWHERE = {
    ("guide/reports.md", 0): "tests/test_docs_reports.py",  # needs a report run
    ("guide/model.md", 0): "tests/test_pulp_face.py",  # checks the printed row and status
}


def _reserve_component_solves(scope: dict[str, Any]) -> None:
    """The development guide's reserve component builds, binds, is priced and reported."""
    from capacity.dataset import load_dataset
    from optimizer import solve
    from optimizer.components import registered

    ds = load_dataset(TINY)
    with registered(scope["COMPONENT"]):
        res = solve(ds)
    base = solve(ds)
    reserve = res.tables["reserve"]
    assert list(reserve["period"]) == list(ds.periods)
    assert reserve["reserve_mw"].tolist() == pytest.approx([2.0] * len(ds.periods))  # binds
    cost = res.tables["costs"]
    reserve_cost = cost.loc[cost["term"] == "reserve", "cost_usd"].sum()
    discount = ds.table("periods")["discount_factor"].to_numpy(dtype=float)
    assert reserve_cost == pytest.approx(2.0 * 1_000.0 * discount.sum(), rel=1e-9)
    assert res.objective_usd == pytest.approx(base.objective_usd + reserve_cost, rel=1e-9)
    assert len(res.violations) == 0  # the block's check accepts the plan


#: Checks run on a block's namespace after it ran.
AFTER: dict[tuple[str, int], Callable[[dict[str, Any]], None]] = {
    ("guide/development.md", 0): _reserve_component_solves,
}

_HERE = [key for key in python_blocks() if key not in RUN_ELSEWHERE]


def test_the_docs_hold_python_blocks() -> None:
    blocks = python_blocks()
    assert ("tutorial.md", 0) in blocks and ("guide/development.md", 0) in blocks


@pytest.mark.parametrize("key", _HERE, ids=[f"{p}#{i}" for p, i in _HERE])
def test_the_block_runs_as_written(
    key: tuple[str, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "data").symlink_to(ROOT / "data", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    scope: dict[str, Any] = {"__name__": "docs_block"}
    exec(compile(python_blocks()[key], f"docs/{key[0]}", "exec"), scope)  # noqa: S102
    if key in AFTER:
        AFTER[key](scope)


@pytest.mark.parametrize("key", sorted(RUN_ELSEWHERE))
def test_a_block_run_elsewhere_is_read_by_its_test(key: tuple[str, int]) -> None:
    assert key in python_blocks(), f"no python block {key}: remove it from RUN_ELSEWHERE"
    runner = (ROOT / RUN_ELSEWHERE[key]).read_text(encoding="utf-8")
    assert key[0] in runner, f"{RUN_ELSEWHERE[key]} does not read docs/{key[0]}"


_SHELL_BLOCK = re.compile(r"^```(?:bash|sh|shell|console)\n(.*?)^```", re.S | re.M)
_INPUT_FILE = re.compile(r"\.(ya?ml|csv|json)$")
_OUTPUT_FLAGS = {"-o", "--out", "--lp", "--units", "--save"}


def documented_input_files() -> list[tuple[str, str]]:
    """``(page, path)`` of each input file a ``capacity`` command in a shell block names."""
    import shlex

    pages = [p for p in DOCS.rglob("*.md") if "_build" not in p.parts] + [ROOT / "README.md"]
    out = []
    for page in sorted(pages):
        for code in _SHELL_BLOCK.findall(page.read_text(encoding="utf-8")):
            for line in code.splitlines():
                line = line.strip().removeprefix("$ ")
                if not line.startswith("capacity "):
                    continue
                toks = shlex.split(line, comments=True)
                for prev, tok in zip(["", *toks], toks, strict=False):
                    if _INPUT_FILE.search(tok) and prev not in _OUTPUT_FLAGS:
                        out.append((page.relative_to(ROOT).as_posix(), tok))
    return out


def test_every_input_file_a_documented_command_names_exists() -> None:
    """``capacity batch sweep.yaml`` in the margin guide failed as written (the file is
    ``examples/sweep.yaml``): commands are run from the checkout, so their input files
    must be there."""
    found = documented_input_files()
    assert ("docs/guide/margin.md", "examples/sweep.yaml") in found
    missing = [(page, f) for page, f in found if not (ROOT / f).exists()]
    assert missing == []
