"""The README's and the benchmark guide's figures are those of ``benchmarks/RESULTS.md``.

``benchmarks.run`` writes the targets table at the top of RESULTS.md; the README's
benchmark table and the guide's are written by hand from it, so each figure they quote
is read here from the generated table and looked for in both (a re-run that moves a
figure fails this test until the two texts are rewritten).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: target row (its start in RESULTS.md) -> pattern of the figure its numbers cell gives.
FIGURES = {
    "large: ours (compact) / linopy": r"([\d.]+) s / [\d.]+ s = ([\d.]+) ",
    "large: peak memory": r"(\d+) MB",
    "build time log-log slope": r"slope ([\d.]+)",
    "batch: reuse >= 10x": r"([\d.]+) s / ([\d.]+) s = ([\d.]+)x",
    "hedged 100-scenario plan": r"converged (\d+) s",
}


def _targets() -> dict[str, str]:
    text = (ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    table = text.split("## Targets", 1)[1].split("\n## ", 1)[0]
    rows = [r.strip("|").split("|") for r in table.splitlines() if r.startswith("| ")]
    return {cells[0].strip(): cells[2].strip() for cells in rows if len(cells) >= 3}


def _section(path: Path, heading: str) -> str:
    text = path.read_text(encoding="utf-8")
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize(
    ("path", "heading"),
    [("README.md", "## Benchmark"), ("docs/guide/benchmark.md", "| target | verdict")],
)
def test_quoted_figures_are_the_recorded_runs(path: str, heading: str) -> None:
    quoted = _section(ROOT / path, heading)
    targets = _targets()
    missing = []
    for row, pattern in FIGURES.items():
        cell = next(v for k, v in targets.items() if k.startswith(row))
        match = re.search(pattern, cell)
        assert match is not None, f"RESULTS.md target {row!r}: {cell!r} has no {pattern!r}"
        missing += [f"{row}: {g}" for g in match.groups() if g not in quoted]
    assert missing == [], f"{path} does not quote RESULTS.md's figures: {missing}"


def test_the_targets_table_is_read() -> None:
    """The parser sees every row above (a renamed row would make the test vacuous)."""
    targets = _targets()
    for row in FIGURES:
        assert sum(k.startswith(row) for k in targets) == 1, row
