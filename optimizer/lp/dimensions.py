"""The index letters of the LP, declared once with their full names.

Every column and row of the model carries integer codes in these dimensions (-1 when
not applicable); the result tables name a code by its :attr:`Dimension.column`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CODE_NAMES", "DIMENSIONS", "ROW_CODE_COLUMNS", "VARIABLE_CODE_COLUMNS", "Dimension"]


@dataclass(frozen=True)
class Dimension:
    """One index letter of the model.

    Attributes
    ----------
    letter : str
        Code column of the index tables (``s``, ``c``, ...).
    column : str
        Result-table column of the letter's names.
    meaning : str
        What one code is.
    on_columns : bool
        Decision columns may carry it (every letter but ``r`` does).
    """

    letter: str
    column: str
    meaning: str
    on_columns: bool = True


#: Every index letter, in the column order of the row and variable tables.
DIMENSIONS: tuple[Dimension, ...] = (
    Dimension("s", "site", "site"),
    Dimension("c", "chip", "chip model"),
    Dimension("k", "customer", "customer"),
    Dimension("w", "workload", "workload (training, inference)"),
    Dimension("r", "resource", "upstream supply resource", on_columns=False),
    Dimension("j", "j", "commitment row (its position in the commitments table)"),
    Dimension("g", "regions", 'demand region group (a demand row\'s regions text; 0 is "")'),
    Dimension("t", "period", "period position in the horizon"),
    Dimension("o", "source", "power source (grid, upgrade:, onsite:, ppa:)"),
    Dimension("e", "region", "site region (sites.region)"),
    Dimension("q", "pool", "region pool (regions a group of customers shares)"),
    Dimension("f", "family", "chip family (chips.family)"),
)

#: Code columns a constraint row may carry (-1 when not applicable).
ROW_CODE_COLUMNS: tuple[str, ...] = tuple(d.letter for d in DIMENSIONS)

#: Code columns a variable may carry (-1 when not applicable).
VARIABLE_CODE_COLUMNS: tuple[str, ...] = tuple(d.letter for d in DIMENSIONS if d.on_columns)

#: Result-table column of each code letter (``j`` stays the commitment row number).
CODE_NAMES: dict[str, str] = {d.letter: d.column for d in DIMENSIONS}
