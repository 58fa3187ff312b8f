"""The constraint-family record and where a family's dual lands in the result tables."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from optimizer.components.scenario import ScenarioColumns
from optimizer.lp.builder import ModelBuilder

__all__ = ["AppendedFamily", "CheckFn", "ConstraintFamily", "DefineFn", "ResultRows"]

#: ``define(builder, columns)``: adds a family's rows of one scenario.
DefineFn = Callable[[ModelBuilder, ScenarioColumns], None]
#: ``check(inputs)``: the violated rows, from the checker's inputs of one scenario
#: (:class:`~optimizer.components.plan_context.PlanContext`).
CheckFn = Callable[[Any], pd.DataFrame]


@dataclass(frozen=True)
class ResultRows:
    """Where a family's dual (and usage) lands in the result tables.

    Attributes
    ----------
    table : str
        Result table holding the family's shadow price per row key, e.g.
        ``site_utilisation`` (see :data:`optimizer.plan.results.TABLE_COLUMNS`).
    dual_column : str
        Column of that table receiving the conditional dual.
    keys : tuple of str
        Row code letters the dual is matched on (their result-table columns are
        :data:`CODE_NAMES`), e.g. ``("s", "t")`` -> ``site, period``.
    limit : str
        ``site_utilisation`` only: the ``limit`` label of the family's rows.
    used : str
        ``site_utilisation`` only: column of the per-(site, period) load frame with
        what the limit's rows use (``it_mw``, ``liq_mw``, ``fac_mw``, ``water_m3``).
    capacity : str
        ``site_utilisation`` only: column of the per-(site, period) capacity frame
        with the limit's value.
    """

    table: str
    dual_column: str
    keys: tuple[str, ...]
    limit: str = ""
    used: str = ""
    capacity: str = ""


@dataclass(frozen=True)
class ConstraintFamily:
    """Everything about one constraint family, findable from its name.

    Attributes
    ----------
    name : str
        Row ``family`` value, e.g. ``site_grid``.
    unit : str
        Unit of the rhs (and of the slack); shadow prices are in USD per this unit.
    define : callable
        ``define(builder, columns)`` adds the family's rows of one scenario
        (vectorised; returns early when nothing applies). Its docstring states the
        maths in one line.
    check : callable or None
        ``check(inputs)`` recomputes lhs and rhs from the decision frames with plain
        pandas and returns the violated rows
        (:func:`optimizer.lp.violations.violations`); None only for definition rows
        whose meaning the checker recomputes from the inputs.
    explain_template : str
        Infeasibility wording of a relaxed row, with ``{key}``, ``{period}``,
        ``{amount}`` placeholders ("" for soft and definition families, which are
        never relaxed).
    explain_unit : str
        Unit shown with the explanation's amount.
    key_codes : tuple of str
        Code letters whose names make the row's key text, joined by "/" (``j`` is
        the commitment's ``customer/family/from_period``).
    soft : bool
        The family already has a priced slack (unmet, breach): never infeasible.
    definition : bool
        Equality rows defining auxiliary columns: no limit, no shadow price shown.
    builds_columns : bool
        ``define`` also creates columns and runs in the column phase of the build,
        before the other scenarios' operating columns.
    result : ResultRows or None
        Where the dual lands besides the ``shadow_prices`` table.
    summary_words : str
        Domain words for one row in the plan summary and the risk views, with ``{0}``,
        ``{1}`` ... for the parts of the row key (``chip/site``) and ``{key}`` for the
        whole key, e.g. ``"grid interconnect at {0}"``. Required for every family that
        is not a definition family (``tests/test_families_registry.py``).
    limit : bool
        A physical or supply limit of the plan (grid, IT power, water, wafers ...): its
        binding rows are listed among the summary's "binding limits" and in the
        Monte Carlo binding shares. Bookkeeping rows (inventory, fleet assignment) and
        rows with their own summary section (demand, commitments) are not limits.
    policy : bool
        A limit the user sets as a policy choice (a carbon cap, a training-cluster rule:
        minimum size, most sites, minimum duration), not a physical or supply fact.
        When the model is infeasible the explanation lets policy rows
        give before physical limits, and both before bookkeeping rows
        (:func:`optimizer.plan.explain.relax_tier`), so it names the limit the user set.
    """

    name: str
    unit: str
    define: DefineFn
    check: CheckFn | None
    explain_template: str
    explain_unit: str
    key_codes: tuple[str, ...]
    soft: bool = False
    definition: bool = False
    builds_columns: bool = False
    result: ResultRows | None = None
    summary_words: str = ""
    limit: bool = False
    policy: bool = False


@dataclass(frozen=True)
class AppendedFamily:
    """A family of rows appended to a built model (they span scenarios or cap its cost).

    Per-scenario families are :class:`ConstraintFamily` records built by the model's
    loop; these are added after it, by the analysis that needs them (a near-optimal
    run, a risk-averse or chance-constrained hedge), with
    :func:`optimizer.plan.risk.append_rows`.

    Attributes
    ----------
    name : str
        Row ``family`` value, e.g. ``cvar_excess``.
    unit : str
        Unit of the rhs.
    define : callable
        Returns the new columns, rows and coefficient block
        (:class:`optimizer.components.appended.AppendedRows`). Its docstring states the
        maths in one line.
    check : callable
        Recomputes the rows from a solved plan (result tables, appended column values),
        not from the LP; returns the violated rows
        (:data:`optimizer.lp.violations.VIOLATION_COLUMNS`).
    wording : str
        What the explanation says when the rows cannot hold (placeholders filled by the
        analysis), or ``never infeasible: <why>`` when they cannot make a plan infeasible.
    result : str
        The result rows that report the family (table and columns).
    app : str
        Where the app shows it.
    summary_words : str
        Domain words for one row (``{key}``: the scenario).
    """

    name: str
    unit: str
    define: Callable[..., Any]
    check: Callable[..., pd.DataFrame]
    wording: str
    result: str
    app: str
    summary_words: str = ""
