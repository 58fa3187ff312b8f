"""Result-table schema: every column of every table a report writes, by table name.

The columns are declared once, by the part of the plan that owns each table
(:data:`optimizer.components.tables.REPORT_TABLES`); :mod:`optimizer.output.parquet_tables`
turns them into the Arrow schemas the report writes.
"""

from __future__ import annotations

from optimizer.components.component import TableColumn
from optimizer.components.tables import REPORT_TABLES

__all__ = ["RESULT_TABLES"]

#: Columns (name, Arrow type, unit, meaning) of every table written per scenario, in
#: report order.
RESULT_TABLES: dict[str, tuple[TableColumn, ...]] = {t.name: t.columns for t in REPORT_TABLES}
