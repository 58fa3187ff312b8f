"""Spec types of the schema: the Column and TableSpec records and the column builders.

The table specs themselves are grouped by domain (``capacity.tables_*``) and listed
in canonical order by :mod:`capacity.schema`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

DType = Literal["id", "str", "float", "int", "period", "choice"]


@dataclass(frozen=True)
class Column:
    """One column of an input table.

    Parameters
    ----------
    name : str
        Column name; its suffix is its unit (``_mw``, ``_usd`` ...).
    dtype : {"id", "str", "float", "int", "period", "choice"}
        ``id`` is a key or reference string kept exactly as written; ``period`` is a
        ``YYYYQn`` quarter; ``choice`` takes one of ``choices``.
    unit : str
        Human-readable unit ("MW", "USD per chip", "" for a ratio).
    description : str
        Meaning of the column, shown in the data guide and the app.
    required : bool
        When True an empty cell is an error. When False an empty cell takes
        ``default``; the default is documented here, never an implicit zero.
    default : Any
        Value of an empty optional cell.
    min, max : float or None
        Inclusive bounds; a value outside is an error.
    min_exclusive : bool
        When True the lower bound is strict (value must be > ``min``).
    warn_min, warn_max : float or None
        Plausibility bounds; a value outside is a warning, not an error.
    choices : tuple of str
        Allowed values of a ``choice`` column.
    references : tuple of (table, column) or None
        Foreign key: the value must exist in that table's column.
    """

    name: str
    dtype: DType
    unit: str
    description: str
    required: bool = True
    default: Any = None
    min: float | None = None
    max: float | None = None
    min_exclusive: bool = False
    warn_min: float | None = None
    warn_max: float | None = None
    choices: tuple[str, ...] = ()
    references: tuple[str, str] | None = None

    @property
    def is_numeric(self) -> bool:
        """True for ``float`` and ``int`` columns."""
        return self.dtype in ("float", "int")

    def bounds_text(self) -> str:
        """Bounds as text for documentation, e.g. ``[1, ∞)`` or ``(0, 1]``."""
        if self.dtype == "choice":
            return " | ".join(self.choices)
        if not self.is_numeric:
            return ""
        lo = "-∞" if self.min is None else f"{self.min:g}"
        hi = "∞" if self.max is None else f"{self.max:g}"
        left = "(" if (self.min is None or self.min_exclusive) else "["
        right = ")" if self.max is None else "]"
        return f"{left}{lo}, {hi}{right}"


@dataclass(frozen=True)
class TableSpec:
    """Spec of one input table.

    Parameters
    ----------
    name : str
        Table name; the file is ``<name>.csv`` (or ``<name>.parquet``).
    description : str
        What one row means.
    columns : tuple of Column
        Columns in canonical order.
    key : tuple of str
        Columns whose values identify a row; unique after ignoring case and
        surrounding spaces.
    required : bool
        When False a missing file means an empty table.
    when_empty : (severity, str) or None
        The finding a table with no rows gets (``"error"`` or ``"warning"``) and what
        no rows means for the plan; None when no rows is an ordinary table.
    """

    name: str
    description: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    required: bool = True
    when_empty: tuple[Literal["error", "warning"], str] | None = None
    _by_name: dict[str, Column] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {c.name: c for c in self.columns})

    @property
    def column_names(self) -> list[str]:
        """Column names in canonical order."""
        return [c.name for c in self.columns]

    @property
    def filename(self) -> str:
        """CSV file name of the table."""
        return f"{self.name}.csv"

    def column(self, name: str) -> Column:
        """Return the spec of column ``name``; raises KeyError when unknown."""
        return self._by_name[name]

    def has_column(self, name: str) -> bool:
        """Return True when ``name`` is a column of this table."""
        return name in self._by_name


def id_col(name: str, description: str, references: tuple[str, str] | None = None) -> Column:
    """Return a required ID column (kept exactly as written), optionally a foreign key."""
    return Column(name, "id", "", description, references=references)


def period_col(
    name: str, description: str, *, in_horizon: bool = True, required: bool = True
) -> Column:
    """Return a ``YYYYQn`` quarter column; ``in_horizon`` makes it a key of ``periods``."""
    ref = ("periods", "period") if in_horizon else None
    return Column(name, "period", "quarter", description, required=required, references=ref)


def num_col(
    name: str,
    unit: str,
    description: str,
    *,
    dtype: DType = "float",
    min: float | None = 0.0,
    max: float | None = None,
    min_exclusive: bool = False,
    warn_min: float | None = None,
    warn_max: float | None = None,
    required: bool = True,
    default: Any = None,
) -> Column:
    """Return a numeric column, at least 0 unless ``min`` says otherwise.

    Parameters are those of :class:`Column`; ``dtype`` is ``"float"`` or ``"int"``.
    """
    return Column(
        name,
        dtype,
        unit,
        description,
        required=required,
        default=default,
        min=min,
        max=max,
        min_exclusive=min_exclusive,
        warn_min=warn_min,
        warn_max=warn_max,
    )


#: Foreign keys of the tables that name a site, chip, customer, resource or workload.
SITE_REF = ("sites", "site")
CHIP_REF = ("chips", "chip")
CUSTOMER_REF = ("customers", "customer")
RESOURCE_REF = ("supply_resources", "resource")
WORKLOAD_REF = ("workloads", "workload")
