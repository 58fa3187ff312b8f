"""Text held as Python strings in the planner's own processes.

Since pandas 3 a column built from Python strings gets the ``str`` dtype, held by
Arrow unless pandas' ``mode.string_storage`` option says ``"python"``. One solve makes
thousands of small frames (the LP's column and row frames, the result tables, the
checker's families, each validation of a table), and at that size converting cells
between Python and Arrow costs more than the work on them: with the option at
``"python"``, four test modules that solve and tabulate the default data took 90 CPU
seconds against 124 (benchmarks/RESULTS.md, "The test suite, fourth pass").

The ``str`` dtype, its values, its missing values and the Parquet files the report
writer makes (it casts every column to its table's Arrow schema,
:mod:`optimizer.output.parquet_tables`) are the same either way. So the planner's own
processes call :func:`use_python_text`: each ``capacity`` command as it starts (not
``--help``, which imports no pandas), the app and the local Dask workers; a notebook
that imports ``capacity_planner`` keeps its own setting, as the library sets no pandas
option of its own.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["TEXT_STORAGE", "use_python_text"]

#: pandas' ``mode.string_storage`` in the planner's own processes.
TEXT_STORAGE = "python"


def use_python_text() -> None:
    """Hold new text columns of this process as Python strings (``str`` dtype kept).

    Call it as a process of the planner starts, before :mod:`optimizer` is imported:
    the result tables' text dtype is read once, at import
    (``optimizer.components.table_columns.TEXT_DTYPE``).
    """
    pd.set_option("mode.string_storage", TEXT_STORAGE)
