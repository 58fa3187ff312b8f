"""Dataset cells as the plan reads them: the blank-cell test and the demand regions text.

A cell read from a CSV or a parquet file is blank when it is "" or a missing value
(``str`` of it is "", "nan", "None" or "NaT"); a demand row's ``regions`` cell is its
stripped text, "" (anywhere) when blank.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["BLANK_TEXTS", "is_blank", "region_text"]

#: Text of an empty cell once read (``str`` of "", NaN, None, NaT).
BLANK_TEXTS = ("", "nan", "None", "NaT")


def is_blank(value: Any) -> bool:
    """Return True when a dataset cell is empty ("", NaN, None or NaT)."""
    return str(value) in BLANK_TEXTS


def region_text(regions: pd.Series) -> np.ndarray:
    """Return the stripped text of each ``regions`` cell ("" where missing), as objects."""
    return np.array([str(r).strip() for r in regions.fillna("")], dtype=object)
