"""The result tables of a plan, in report order: each declared once by the part that owns it.

:data:`SOLUTION_TABLES` are the tables read from a solved plan
(:func:`optimizer.plan.results.make_tables`); :data:`REPORT_TABLES` adds the tables the
checker, the calibration, the infeasibility explanation and the report writer fill.
Each part lists its tables in its component record (``Component.tables``); adding a
table is one :class:`~optimizer.components.component.ResultTable` there.
"""

from __future__ import annotations

from optimizer.components import plan_tables
from optimizer.components.component import ResultTable
from optimizer.components.registry import MappingView, Registry, SequenceView

__all__ = ["REPORT_TABLES", "SOLUTION_TABLES", "TABLES_BY_NAME"]


def _solution(r: Registry) -> tuple[ResultTable, ...]:
    return (*r.tables, plan_tables.COSTS, plan_tables.SHADOW_PRICES)


def _report(r: Registry) -> tuple[ResultTable, ...]:
    return (
        *_solution(r),
        plan_tables.VIOLATIONS,
        plan_tables.CALIBRATION,
        plan_tables.INFEASIBILITY,
        plan_tables.SUMMARY,
    )


#: Tables of a solved plan: every registered component's, in registration order, then
#: the plan-wide costs and shadow prices.
SOLUTION_TABLES: SequenceView[ResultTable] = SequenceView(_solution)

#: Every table written per scenario: the plan's, then the checker's violations, the
#: calibration, the infeasibility explanation and the summary row.
REPORT_TABLES: SequenceView[ResultTable] = SequenceView(_report)

#: Table record by name.
TABLES_BY_NAME: MappingView[ResultTable] = MappingView(
    lambda r: r.memo("tables_by_name", lambda r: {t.name: t for t in _report(r)})
)
