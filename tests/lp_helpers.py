"""Helpers shared by the LP tests: the tiny hand-solvable datasets and cell edits."""

from __future__ import annotations

from pathlib import Path

from capacity.dataset import Dataset

LP_DATA = Path(__file__).resolve().parent / "data"


def edit(ds: Dataset, table: str, **cols: object) -> Dataset:
    """Return ``ds`` with whole columns of ``table`` set to the given values."""
    df = ds.table(table).copy()
    for c, v in cols.items():
        df[c] = v
    return ds.replace(**{table: df})
