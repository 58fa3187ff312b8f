"""Result-table schema: every column of every table a report writes, by table name.

The columns are declared once, by the part of the plan that owns each table
(:data:`optimizer.components.tables.REPORT_TABLES`); :mod:`optimizer.output.parquet_tables`
turns them into the Arrow schemas the report writes.
"""

from __future__ import annotations

from optimizer.components.component import TableColumn
from optimizer.components.registry import MappingView
from optimizer.components.tables import REPORT_TABLES

__all__ = ["RESULT_TABLES"]

#: Columns (name, Arrow type, unit, meaning) of every table written per scenario, in
#: report order (of the active registry).
RESULT_TABLES: MappingView[tuple[TableColumn, ...]] = MappingView(
    lambda r: r.memo("result_columns", lambda _: {t.name: t.columns for t in REPORT_TABLES})
)
