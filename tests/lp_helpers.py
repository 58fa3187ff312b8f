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


def with_commitment(ds: Dataset, mw: float, penalty: float = 2e6) -> Dataset:
    """``ds`` with one commitment: customer a, family nv, 2026Q1, ``mw`` MW floor,
    ``penalty`` USD per MW of breach (the one-quarter LP datasets' keys)."""
    import pandas as pd

    com = pd.DataFrame(
        {
            "customer": ["a"],
            "family": ["nv"],
            "from_period": ["2026Q1"],
            "to_period": ["2026Q1"],
            "min_it_mw": [mw],
            "breach_penalty_usd_per_mw": [penalty],
        }
    )
    return ds.replace(commitments=com)
