"""The component record: everything one part of the plan owns, in one place.

A :class:`Component` bundles the decision column kinds, constraint families, cost
terms and result tables of one part of the plan (sites, supply chain, fleet, demand,
the compact service, power, placement). The centre (:mod:`optimizer.plan`) builds,
checks, prices and reports by looping over the registered components; adding a part
of the plan is one component module and one registration line in
:mod:`optimizer.components`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa

from optimizer.components.records import AppendedFamily, ConstraintFamily

__all__ = ["CashKind", "ColumnKind", "Component", "CostTerm", "ResultTable", "TableColumn"]

#: How a cost term is paid: capital (spent when built, charged as rent per period of
#: use), operating (paid per period, its cash the undiscounted cost), or a penalty (a
#: priced slack or a modelling cost such as a cluster switch: no cash, ``cash_kind``
#: ``none`` in the costs table), or revenue (a negative cost, cash in when earned).
CashKind = Literal["capex", "opex", "penalty", "revenue"]


@dataclass(frozen=True)
class TableColumn:
    """One column of a result table, written once.

    Attributes
    ----------
    name : str
        Column name; its suffix carries the unit (``_mw``, ``_usd``, ...).
    type : pyarrow.DataType
        Arrow type written to Parquet (``pa.string()``, ``pa.float64()``, ...).
    unit : str
        Unit of the values ("" for keys and text).
    description : str
        One sentence: what the value means.
    """

    name: str
    type: pa.DataType
    unit: str
    description: str


@dataclass(frozen=True)
class ResultTable:
    """A result table a component owns: its schema and the function that fills it.

    Attributes
    ----------
    name : str
        Table name (the report's ``<table>.parquet``).
    columns : tuple of TableColumn
        The schema, in column order.
    build : callable or None
        ``build(inputs) -> DataFrame`` from the plan-side inputs of
        :mod:`optimizer.plan.results`; ``None`` when the centre fills it.
    """

    name: str
    columns: tuple[TableColumn, ...]
    build: Callable[[Any], Any] | None = None


@dataclass(frozen=True)
class CostTerm:
    """One term of the objective (the ``term`` value of the cost breakdown).

    Attributes
    ----------
    name : str
        Term name (``chip_capex``, ``energy``, ...).
    cash : CashKind
        How it is paid.
    define : callable or None
        ``define(builder, columns)`` adds the term's cost coefficients of one scenario;
        ``None`` when a constraint family of the same component prices it.
    description : str
        One sentence with the formula.
    """

    name: str
    cash: CashKind
    define: Callable[[Any, Any], None] | None
    description: str


@dataclass(frozen=True)
class ColumnKind:
    """One kind of decision column (``build[s,p]``, ``install[c,s,p]``, ...).

    Attributes
    ----------
    name : str
        Kind name (the ``kind`` value of the variable table).
    keys : str
        Code letters of its index, e.g. ``"s/t"`` or ``"c/s/t"``.
    unit : str
        Unit of one column's value.
    description : str
        One sentence: what the decision is.
    add : callable or None
        ``add(builder, columns)`` adds the kind's columns of one scenario (after the
        operating columns; a new kind keeps its frame in ``columns.extra[name]``);
        ``None`` when the centre's column phase, a family that builds columns or
        another kind's hook adds them.
    """

    name: str
    keys: str
    unit: str
    description: str
    add: Callable[[Any, Any], None] | None = None


@dataclass(frozen=True)
class Component:
    """Everything one part of the plan owns.

    Attributes
    ----------
    name : str
        Component name (``site``, ``supply``, ``fleet``, ...).
    columns : tuple of ColumnKind
        Its decision column kinds.
    families : tuple of ConstraintFamily
        Its constraint families (define, check, explain, result rows).
    costs : tuple of CostTerm
        Its objective terms.
    tables : tuple of ResultTable
        Its result tables.
    appended : tuple of AppendedFamily
        Its families appended to a built model (not built per scenario).
    """

    name: str
    columns: tuple[ColumnKind, ...] = ()
    families: tuple[ConstraintFamily, ...] = ()
    costs: tuple[CostTerm, ...] = ()
    tables: tuple[ResultTable, ...] = ()
    appended: tuple[AppendedFamily, ...] = ()
