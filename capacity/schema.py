"""The schema: every input table's spec in canonical order, quarter labels, the units table.

Every input table of the dataset is described once: its columns, their dtype, unit,
bounds, default and meaning (the spec types are in :mod:`capacity.spec_types`, the
specs grouped by domain in ``capacity.tables_sites``, ``tables_chips``,
``tables_demand`` and ``tables_record``). The same spec drives

* parsing and validation (:mod:`capacity.dataset`, :mod:`capacity.parsing`,
  :mod:`capacity.table_checks`),
* the units table of the data guide, ``docs/guide/data.md`` (:func:`units_markdown`),
* the Streamlit app's column configuration.

Conventions (see ``shared/DESIGN.md``): a column's unit is its suffix (``_mw``,
``_usd``, ``_h100e`` ...). IDs are kept exactly as written (spaces, slashes,
parentheses and non-ASCII letters included); two IDs that differ only by case or
surrounding spaces are a duplicate-key error. A period is a calendar quarter written
``YYYYQn``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import numpy as np

from capacity import tables_chips, tables_demand, tables_power, tables_record, tables_sites
from capacity.spec_types import Column, TableSpec

SOLVER_SAFE_MAX = 1e12
"""Largest magnitude of any numeric cell, on top of each column's own bounds.

HiGHS treats 1e20 as infinity and refuses matrix entries of 1e15 or more; the LP
multiplies cells together (IT kW x hours, capex / lifetime x discount factor), so
cells are held to 1e12, far above any real figure of the planner (a trillion USD,
H100e, MW or m3) and far below what the solver cannot represent.
"""

INT64_MAX = 2**63 - 1
"""Largest value an ``int`` column's storage (int64) can hold."""

SAFE_RANGE_NOTE = (
    f"Every numeric cell must also lie within ±{SOLVER_SAFE_MAX:g} (`SOLVER_SAFE_MAX`, the "
    "range the solver can take once cells are multiplied together); integers are checked "
    "as written, so a value beyond 64 bits is refused, never wrapped."
)
"""The safe-range rule as printed under the data guide's units table."""

PERIOD_RE = re.compile(r"^(\d{4})Q([1-4])$")


TABLES: tuple[TableSpec, ...] = (
    tables_record.PERIODS,
    tables_sites.SITES,
    tables_sites.SITE_PIPELINE,
    tables_sites.SITE_GRID,
    tables_sites.SITE_WATER,
    tables_chips.CHIPS,
    tables_chips.SUPPLY_RESOURCES,
    tables_chips.CHIP_BILL_OF_MATERIALS,
    tables_chips.INITIAL_FLEET,
    tables_demand.CUSTOMERS,
    tables_demand.WORKLOADS,
    tables_demand.DEMAND,
    tables_demand.ELIGIBILITY,
    tables_demand.COMMITMENTS,
    tables_demand.CONTRACT_TERMS,
    tables_demand.MIGRATION,
    tables_sites.GRID_UPGRADES,
    tables_sites.ONSITE_GENERATION,
    tables_power.EQUIPMENT_ORDER_BOOKS,
    tables_power.POWER_BILL_OF_MATERIALS,
    tables_power.FLEXIBLE_INTERCONNECTION,
    tables_sites.PPAS,
    tables_sites.CARBON_POLICY,
    tables_demand.TRAINING_CLUSTERS,
    tables_record.PUBLIC_RECORD,
    tables_record.SOURCES,
)
"""Every input table's spec in canonical order (the order of the units table and the app)."""

SPECS: dict[str, TableSpec] = {t.name: t for t in TABLES}
TABLE_NAMES: tuple[str, ...] = tuple(SPECS)


def spec(name: str) -> TableSpec:
    """Return the spec of table ``name``.

    Raises
    ------
    KeyError
        When ``name`` is not an input table.
    """
    return SPECS[name]


def iter_columns() -> Iterator[tuple[TableSpec, Column]]:
    """Yield every (table, column) pair of the schema in canonical order."""
    for t in TABLES:
        for c in t.columns:
            yield t, c


def period_index(label: str) -> int:
    """Return a quarter's ordinal (year * 4 + quarter - 1) for sorting and shifting.

    Raises
    ------
    ValueError
        When ``label`` is not ``YYYYQn``.
    """
    m = PERIOD_RE.match(label)
    if not m:
        raise ValueError(f"{label!r} is not a quarter like 2026Q3")
    return int(m.group(1)) * 4 + int(m.group(2)) - 1


def period_ordinals(labels: Iterable[object]) -> np.ndarray:
    """Return the quarter ordinals of ``labels``, NaN where a label is not a quarter.

    For cross-table checks and scenario filters that run before (or beside) the
    schema check that reports a malformed period at its file, row and column: a row
    whose period cannot be read compares False with every bound instead of raising.

    Parameters
    ----------
    labels : iterable
        Cells of a period column, shape (n,); anything ``str`` accepts.

    Returns
    -------
    numpy.ndarray
        float64, shape (n,): ``year * 4 + quarter - 1``, or NaN.
    """
    import pandas as pd  # here: importing the table specs loads no pandas; only this needs it

    cells = labels if isinstance(labels, (pd.Series, np.ndarray)) else list(labels)
    # each distinct label is read once (a demand column repeats a few dozen quarters)
    codes, distinct = pd.factorize(np.asarray(cells, dtype=object), use_na_sentinel=True)
    ords = np.full(len(distinct) + 1, np.nan)  # the last slot: a missing cell
    for j, v in enumerate(distinct):
        m = PERIOD_RE.match(str(v))
        if m:
            ords[j] = int(m.group(1)) * 4 + int(m.group(2)) - 1
    return ords[codes]


def period_label(index: int) -> str:
    """Inverse of :func:`period_index`."""
    return f"{index // 4}Q{index % 4 + 1}"


def units_markdown() -> str:
    """Render the schema as a Markdown units table (one row per column).

    Returns
    -------
    str
        The table, used verbatim in ``docs/guide/data.md`` ("Data and units").
    """
    lines = [
        "| table | column | type | unit | bounds | required (default) | meaning |",
        "|---|---|---|---|---|---|---|",
    ]
    for t, c in iter_columns():
        req = "yes" if c.required else f"no ({'' if c.default is None else c.default})"
        if not c.required and c.default is None:
            req = "no (end of horizon)" if c.name == "to_period" else "no"
        lines.append(
            f"| {t.name} | `{c.name}` | {c.dtype} | {c.unit} | {c.bounds_text()} | {req} "
            f"| {c.description} |"
        )
    return "\n".join(lines) + "\n\n" + SAFE_RANGE_NOTE
