"""Units of the result tables: ``{column: unit}`` file metadata and the units.csv dictionary.

Units are always carried in three places, whatever the ``units`` flag:

* the column name's suffix (``_mw``, ``_usd``, ``_h100e`` ...);
* Parquet *field* metadata: ``unit`` and ``description`` of each column;
* the file's key-value metadata ``units``: a JSON object ``{column: unit}`` (readable
  from DuckDB with ``parquet_kv_metadata``).

``units=True`` adds a human data dictionary ``units.csv`` (table, column, type, unit,
description) at the run root, and makes ``capacity solve`` print units in its tables.
"""

from __future__ import annotations

import json

import pandas as pd

from optimizer.output.table_schema import RESULT_TABLES

__all__ = ["UNITS_CSV_NAME", "columns_frame", "units_json"]

UNITS_CSV_NAME = "units.csv"


def units_json(table: str) -> str:
    """Return the units of one result table as JSON ``{column: unit}`` (file metadata).

    Parameters
    ----------
    table : str
        A table of :data:`optimizer.output.table_schema.RESULT_TABLES`.

    Returns
    -------
    str
        E.g. ``'{"period": "quarter", "term": "", "cost_usd": "USD", ...}'``.
    """
    return json.dumps({c.name: c.unit for c in RESULT_TABLES[table]})


def columns_frame() -> pd.DataFrame:
    """Return the data dictionary of the result tables.

    Returns
    -------
    pandas.DataFrame
        Columns ``table, column, type, unit, description``; one row per column of
        every table of :data:`RESULT_TABLES`.
    """
    rows = [
        {
            "table": table,
            "column": c.name,
            "type": str(c.type),
            "unit": c.unit,
            "description": c.description,
        }
        for table, cols in RESULT_TABLES.items()
        for c in cols
    ]
    return pd.DataFrame(rows)
