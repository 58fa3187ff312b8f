"""The result tables of a plan, in report order: each declared once by the part that owns it.

:data:`SOLUTION_TABLES` are the tables read from a solved plan
(:func:`optimizer.plan.results.make_tables`); :data:`REPORT_TABLES` adds the tables the
checker, the calibration, the infeasibility explanation and the report writer fill.
Adding a table is one :class:`~optimizer.components.component.ResultTable` in its
part's module and one entry here.
"""

from __future__ import annotations

from optimizer.components import (
    demand_tables,
    fleet_tables,
    placement_tables,
    plan_tables,
    power_tables,
    site_tables,
    supply_tables,
)
from optimizer.components.component import ResultTable

__all__ = ["REPORT_TABLES", "SOLUTION_TABLES", "TABLES_BY_NAME"]

#: Tables of a solved plan, in the order the result and the report list them.
SOLUTION_TABLES: tuple[ResultTable, ...] = (
    site_tables.BUILD_OUT,
    fleet_tables.FLEET,
    supply_tables.PRODUCTION,
    supply_tables.SUPPLY_UTILISATION,
    fleet_tables.ASSIGNMENT,
    demand_tables.DEMAND,
    site_tables.SITE_UTILISATION,
    demand_tables.COMMITMENTS,
    plan_tables.COSTS,
    site_tables.ENERGY,
    plan_tables.SHADOW_PRICES,
    power_tables.POWER_SOURCES,
    power_tables.POWER_DECISIONS,
    placement_tables.TRAINING_CLUSTERS,
)

#: Every table written per scenario: the plan's, then the checker's violations, the
#: calibration, the infeasibility explanation and the summary row.
REPORT_TABLES: tuple[ResultTable, ...] = (
    *SOLUTION_TABLES,
    plan_tables.VIOLATIONS,
    plan_tables.CALIBRATION,
    plan_tables.INFEASIBILITY,
    plan_tables.SUMMARY,
)

#: Table record by name.
TABLES_BY_NAME: dict[str, ResultTable] = {t.name: t for t in REPORT_TABLES}
