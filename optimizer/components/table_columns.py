"""Result-table columns several tables share, and what a table's schema gives its readers.

The per-part table modules (:mod:`~optimizer.components.site_tables`,
:mod:`~optimizer.components.fleet_tables`, ...) declare each table once as a
:class:`~optimizer.components.component.ResultTable` from these pieces; the result
tables (:mod:`optimizer.plan.results`) and the report writer
(:mod:`optimizer.output.report`) read column names, dtypes and units from there.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from optimizer.components.component import ResultTable, TableColumn

__all__ = [
    "BOOL",
    "CHIP",
    "CUSTOMER",
    "DUAL",
    "F64",
    "I64",
    "PERIOD",
    "PER_UNIT",
    "SITE",
    "STR",
    "TEXT_DTYPE",
    "WORKLOAD",
    "col",
    "column_names",
    "is_flag",
    "is_text",
]

STR = pa.string()
F64 = pa.float64()
I64 = pa.int64()
BOOL = pa.bool_()

#: The text dtype of the result tables (what ``astype(str)`` gives).
TEXT_DTYPE = pd.Series([], dtype=object).astype(str).dtype


def col(name: str, type_: pa.DataType, unit: str, description: str) -> TableColumn:
    """Return one column of a result table (name, Arrow type, unit, meaning)."""
    return TableColumn(name, type_, unit, description)


SITE = col("site", STR, "", "Site ID.")
PERIOD = col("period", STR, "quarter", "Period (YYYYQn).")
CHIP = col("chip", STR, "", "Chip ID.")
CUSTOMER = col("customer", STR, "", "Customer ID.")
WORKLOAD = col("workload", STR, "", "Workload (training | inference).")
PER_UNIT = "USD per unit of column 'unit'"
DUAL = "Discounted shadow price: d(objective)/d(limit), "


def column_names(table: ResultTable) -> tuple[str, ...]:
    """Return the column names of ``table``, in order."""
    return tuple(c.name for c in table.columns)


def is_text(column: TableColumn) -> bool:
    """Return True when ``column`` holds text (``str`` cells, an Arrow string)."""
    return bool(pa.types.is_string(column.type))


def is_flag(column: TableColumn) -> bool:
    """Return True when ``column`` holds booleans."""
    return bool(pa.types.is_boolean(column.type))
