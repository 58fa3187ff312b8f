"""A malformed quarter in any period column is a finding, never an exception.

Cross-table checks (contract terms against demand, training-cluster windows) and the
scenario filters read period columns beside the schema check that reports a malformed
label; a ``2025-Q1`` in ``demand.csv`` used to escape from the contract check as a
``ValueError`` traceback. The columns are derived from the schema, so a new period
column is covered without editing this file.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from capacity.dataset import validate_directory
from capacity.schema import SPECS, period_ordinals

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"

PERIOD_CELLS = [
    (t.name, c.name)
    for t in SPECS.values()
    for c in t.columns
    if c.dtype == "period" and (DATA / f"{t.name}.csv").exists()
]


def test_period_ordinals_read_quarters_and_leave_the_rest_nan() -> None:
    got = period_ordinals(["2025Q1", "2026Q4", "2025-Q1", "", None, "2026q1"])
    assert got[:2].tolist() == [2025 * 4, 2026 * 4 + 3]
    assert np.isnan(got[2:]).all()


def test_the_schema_has_period_columns_in_the_default_data() -> None:
    assert ("demand", "period") in PERIOD_CELLS and len(PERIOD_CELLS) >= 8


@pytest.mark.parametrize(("table", "column"), PERIOD_CELLS)
def test_a_malformed_quarter_is_a_finding_at_its_cell(
    tmp_path: Path, table: str, column: str
) -> None:
    d = tmp_path / "d"
    shutil.copytree(DATA, d)
    p = d / f"{table}.csv"
    df = pd.read_csv(p, dtype=str, keep_default_na=False)
    filled = np.flatnonzero(df[column].str.match(r"^\d{4}Q[1-4]$"))
    row = int(filled[0]) if len(filled) else 0  # an optional column left empty: fill it
    bad = df.at[row, column].replace("Q", "-Q") if len(filled) else "2026-Q1"
    df.at[row, column] = bad
    df.to_csv(p, index=False)
    for scenario in (None, "negative"):
        found = validate_directory(d, scenario)  # raised ValueError before the fix
        hits = [f for f in found if f.file == f"{table}.csv" and f.column == column]
        assert any(f.severity == "error" and f.row == row + 2 and f.value == bad for f in hits), [
            str(f) for f in found
        ]
