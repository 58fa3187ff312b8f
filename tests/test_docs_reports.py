"""Every documented way of reading reports runs as written.

The fenced Python blocks of the user guide that read Parquet reports
(``docs/guide/reports.md`` ...) are executed in a folder holding a real multi-scenario run
made by ``capacity solve --scenario all``, with ``<run_id>`` replaced by that run's ID;
each top-level expression's value is checked. Inline ``read_parquet(...)`` snippets of the
guide and the README are run by DuckDB against a report run and a batch-shaped folder.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from optimizer.cli.commands import app

ROOT = Path(__file__).resolve().parents[1]
GUIDE_PAGES = sorted((ROOT / "docs").rglob("*.md"))
TEXT = "\n".join(
    p.read_text(encoding="utf-8")
    for p in [ROOT / "README.md", *GUIDE_PAGES]
    if "_build" not in p.parts
)
TINY = ROOT / "tests" / "data" / "tiny_valid"
SCENARIOS = ["neutral", "squeeze"]  # tests/data/tiny_valid/scenarios.yaml


def report_blocks() -> list[str]:
    """Fenced Python blocks of the docs (docs/guide/reports.md ...) that read Parquet reports."""
    blocks = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)
    return [b for b in blocks if "parquet" in b.lower()]


def inline_queries() -> list[str]:
    """Inline `read_parquet(...)` snippets of the README and the docs prose."""
    return re.findall(r"`(read_parquet\([^`]*\))`", TEXT)


def _run_expressions(code: str) -> list[Any]:
    """Execute ``code``; return the value of each top-level expression statement."""
    values: list[Any] = []
    tree = ast.parse(code)
    body: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.Expr):
            call = ast.parse("_values.append(None)").body[0]
            assert isinstance(call, ast.Expr) and isinstance(call.value, ast.Call)
            call.value.args = [node.value]
            body.append(call)
        else:
            body.append(node)
    tree.body = body
    ast.fix_missing_locations(tree)
    exec(compile(tree, "docs/guide/reports.md", "exec"), {"_values": values})  # noqa: S102
    return values


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    cwd = tmp_path_factory.mktemp("readme")
    out = cwd / "reports"
    res = CliRunner().invoke(
        app, ["solve", str(TINY), "--scenario", "all", "--out", str(out)], env={"COLUMNS": "140"}
    )
    assert res.exit_code == 0, res.output
    runs = [p for p in out.iterdir() if p.is_dir()]
    assert len(runs) == 1  # every scenario in one run folder
    return cwd, runs[0].name


def test_the_guide_has_report_reading_code() -> None:
    assert len(report_blocks()) >= 1
    assert any("ds.dataset" in b for b in report_blocks())
    assert len(inline_queries()) >= 1


@pytest.mark.parametrize("block", report_blocks())
def test_the_guide_report_block_runs_as_written(
    block: str, run_folder: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd, run_id = run_folder
    monkeypatch.chdir(cwd)
    values = _run_expressions(block.replace("<run_id>", run_id))
    frames = [v for v in values if isinstance(v, pd.DataFrame)]
    tables = [v for v in values if isinstance(v, pa.Table)]
    rels = [v for v in values if type(v).__name__ == "DuckDBPyRelation"]
    demand = pd.read_parquet(cwd / "reports" / run_id / "scenario=neutral" / "demand.parquet")
    assert frames and len(frames[0]) == len(demand) > 0
    assert tables, "the pyarrow.dataset example returns a table"
    t = tables[0]
    assert sorted(set(t.column("scenario").to_pylist())) == sorted(SCENARIOS)
    assert "unmet_h100e" in t.column_names and "manifest" not in " ".join(t.column_names)
    if rels:
        got = rels[0].df()
        assert sorted(got.iloc[:, 0]) == sorted(SCENARIOS)  # one row per scenario
        want = {
            s: pd.read_parquet(cwd / "reports" / run_id / f"scenario={s}" / "demand.parquet")[
                "unmet_h100e"
            ].sum()
            for s in SCENARIOS
        }
        for s, v in zip(got.iloc[:, 0], got.iloc[:, 1], strict=True):
            assert v == pytest.approx(want[s], rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("query", inline_queries())
def test_the_inline_duckdb_snippets_run(
    query: str, run_folder: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import duckdb

    cwd, run_id = run_folder
    monkeypatch.chdir(cwd)
    # a batch-shaped folder (scenario=<case>/<table>.parquet + a JSON manifest)
    batch = cwd / "batch_out"
    if not batch.exists():
        shutil.copytree(cwd / "reports" / run_id, batch)
        os.replace(batch / "manifest.json", batch / "batch_manifest.json")
    sql = query.replace("<run_id>", run_id)
    got = duckdb.sql(f"SELECT DISTINCT scenario FROM {sql} ORDER BY 1").fetchall()
    assert [r[0] for r in got] == sorted(SCENARIOS)


def test_the_reports_page_lists_every_result_table_in_order() -> None:
    """The page's table list is RESULT_SCHEMAS's (it once named 16 of 27)."""
    import re

    from optimizer.output.parquet_tables import RESULT_SCHEMAS

    text = " ".join((ROOT / "docs" / "guide" / "reports.md").read_text().split())
    m = re.search(r"one file per table, (\d+) tables: (.*?) \(`optimizer", text)
    assert m, "the page's list of tables"
    names = [n.strip() for n in re.split(r",| and ", m.group(2)) if n.strip()]
    assert int(m.group(1)) == len(RESULT_SCHEMAS)
    assert names == list(RESULT_SCHEMAS)


def test_the_costs_table_describes_every_term_and_cash_kind_it_can_hold() -> None:
    """The column descriptions in the Parquet file name every cost term and cash kind
    (the term description once listed 10 of 18 terms, the cash kinds 3 of 4)."""
    from optimizer.output.parquet_tables import RESULT_SCHEMAS
    from optimizer.plan.cost_tables import CASH_KIND
    from optimizer.plan.model import COST_TERMS

    schema = RESULT_SCHEMAS["costs"]

    def said(column: str) -> str:
        meta = schema.field(column).metadata or {}
        return " ".join(v.decode() for v in meta.values())

    listed = set(said("term").replace("(", " ").replace(";", " ").split(" | "))
    words = {w.strip(" ().;,") for part in listed for w in part.split()}
    assert set(COST_TERMS) <= words, set(COST_TERMS) - words
    kinds = {w.strip(" ().") for w in said("cash_kind").split(" | ")}
    assert set(CASH_KIND.values()) <= {k.split()[0] for k in kinds}, kinds
