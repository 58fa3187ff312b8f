"""The components: one module per part of the plan, and the registry of them.

A :class:`~optimizer.components.component.Component` bundles what one part of the
plan owns: its decision column kinds, its constraint families (each a
:class:`~optimizer.components.records.ConstraintFamily`: the vectorised ``define``
with its maths in one docstring line, the independent ``check``, the infeasibility
wording, the unit, the result routing) and its cost terms with their cash kind.
:data:`COMPONENTS` registers them, one line each, in build order; the centre
(:mod:`optimizer.plan`) loops over them: the model builds each family and prices each
cost term, the checker checks each family, the explanation words it, the
shadow-price table keys and prices it. ``docs/families.md`` lists every family
(:mod:`optimizer.components.docs`). :func:`registered` adds components for a ``with``
block (a temporary registry).

Modules
-------
``component``     the Component record (column kinds, families, cost terms, tables).
``records``       the constraint-family record and where its dual lands.
``registry``      the active registry and the views the centre reads it through.
``scenario``      one scenario's coded data and decision columns.
``plan_context``  the plan context the result tables and the checker share.
``quantities``    derived plan quantities: fleet, chips at work, site loads, IT and facility MWh.
``capacity_online``  capacity online per site and period (initial, pipeline, build, retrofit).
``key_match``     key matching and text reuse across a sweep's cases.
``cells``         the blank-cell test and the demand regions text.
``table_columns`` shared result-table columns (site, period, chip, ...) and helpers.
``tables``        the result tables in report order (each declared by its part).
``site_tables``   build_out, site_utilisation and energy tables.
``supply_tables`` production and supply_utilisation tables.
``fleet_tables``  fleet and assignment tables.
``demand_tables`` demand and commitments tables.
``placement_tables``  the training_clusters table.
``plan_tables``   plan-wide tables: costs, shadow prices, violations, calibration, summary.
``power_steps``   PPA steps per period.
``power_online`` MW online per site, source and period from dated decisions (summed on codes).
``power_tables``  power_sources and power_decisions tables.
``site``          sites: IT power, liquid, grid, build rate, maximum, water (component).
``construction``  lead time, pipeline, retrofit rate and pool; build and retrofit capex.
``site_built``    built-to-date columns of large models: running totals of the site builds.
``supply``        the supply chain: resource limits on production (component).
``hosting``       which chip families or vendors a site may host.
``chips``         chip inventory with the delivery lag, the sale window.
``fleet``         fleet definition and assignment, chip capex (component).
``demand``        demand balance, commitments, the penalties (component).
``revenue``       revenue at customer prices for the margin objective (component).
``contract_inputs``  contract terms per period, the escalated contract price.
``contracts``     take-or-pay, reservations, service tiers (component).
``contract_tables``  the contracts table.
``migration_inputs``  the migration derate schedule of a customer on a new chip family.
``migration``     migration to a new chip family: porting cost and derate (component).
``unit_economics`` delivered cost per H100e-hour by chip generation and workload.
``net_revenue``   revenue, cost and margin per chip generation, site and period.
``region``        the region balance and the split of a compact plan to sites.
``pool``          region pools and their proportional split.
``service``       the compact service: region and pool balances (component).
``placement``     exact training clusters, the switch cost (component).
``power``         power families: grid upgrades, on-site generation, PPAs, carbon.
``power_inputs``  the power tables of one scenario, coded.
``power_check``   the power checks and records, grid-price energy (component).
``power_bridge``  bridge power: bought, retired once the grid arrives, salvage back (component).
``power_flex``    flexible interconnection: earlier grid MW for curtailable hours.
``power_speed``   the inference SLA under curtailment, flexible and bridge results (component).
``power_orders``  equipment order books: turbine, engine and transformer slots (component).
``appended``      families appended to a built model: the near-optimal cost cap, the CVaR
                  rows, the chance rows (component).
``docs``          the generated table of every family (``docs/families.md``).

How to add a part of the plan
-----------------------------
Write one module ending with its ``COMPONENT = Component(name, columns=...,
families=..., costs=...)`` record and add one line to :data:`COMPONENTS`:

* a family: ``define_<name>(builder, columns)`` adds rows with
  ``builder.add_rows("<name>", scenario.index, keys, sense, rhs)`` and coefficients
  with ``builder.add_terms`` (merges on code frames, no per-row loops); a
  ``check_<name>(inputs)`` recomputes the limit from ``inputs.frames`` and the dataset
  and returns ``violations("<name>", keys, lhs, rhs, sense, inputs.tolerance)``
  (:mod:`optimizer.lp.violations`); the record names its unit, wording and key codes
  (``tests/test_families_registry.py`` checks that it is complete);
* a column kind: ``ColumnKind(name, keys, unit, description, add=...)`` whose ``add``
  hook adds the columns with ``builder.add_vars`` and keeps the frame in
  ``columns.extra[name]``;
* a cost term: ``CostTerm(name, cash, define, description)`` whose ``define`` calls
  ``builder.add_cost(scenario.index, name, col, t, coef)``.
* a family appended to a built model (rows that span the scenarios of a hedge or cap
  a whole plan's cost): an ``AppendedFamily`` record in the component's ``appended``,
  whose ``define`` returns the new columns, rows and block
  (:class:`~optimizer.components.appended.AppendedRows`, appended by
  :func:`optimizer.plan.risk.append_rows`) and whose ``check`` reads the solved plan
  (``tests/test_appended_families.py`` checks that each record is complete).

Nothing else changes (``tests/test_components.py`` adds a toy component this way).
"""

from __future__ import annotations

from dataclasses import replace

from optimizer.components import (
    appended,
    contract_tables,
    contracts,
    demand,
    demand_tables,
    fleet,
    fleet_tables,
    migration,
    placement,
    placement_tables,
    power_bridge,
    power_check,
    power_orders,
    power_speed,
    power_tables,
    revenue,
    service,
    site,
    site_tables,
    supply,
    supply_tables,
)
from optimizer.components.component import Component
from optimizer.components.records import AppendedFamily, ConstraintFamily, ResultRows
from optimizer.components.registry import MappingView, SequenceView, activate, registered

__all__ = [
    "APPENDED",
    "APPENDED_BY_NAME",
    "BY_NAME",
    "COMPONENTS",
    "ConstraintFamily",
    "DEFINITION_FAMILIES",
    "FAMILIES",
    "REGISTRY",
    "ResultRows",
    "SOFT_FAMILIES",
    "registered",
]

#: The parts of the plan, one registration line each, in build order: their families
#: are built in this order, their column hooks run in it and their cost terms are added
#: to the objective in it (``tests/test_components.py`` checks the order).
#: The registered parts of the plan, one line each, in build order. The table modules of
#: the built-in parts import their part's module (a table reads its part's inputs), so
#: their records take their tables here.
COMPONENTS: tuple[Component, ...] = (
    replace(site.COMPONENT, tables=site_tables.TABLES),
    replace(supply.COMPONENT, tables=supply_tables.TABLES),
    replace(fleet.COMPONENT, tables=fleet_tables.TABLES),
    replace(demand.COMPONENT, tables=demand_tables.TABLES),
    revenue.COMPONENT,
    service.COMPONENT,
    replace(placement.COMPONENT, tables=placement_tables.TABLES),
    replace(power_check.COMPONENT, tables=power_tables.TABLES),
    replace(contracts.COMPONENT, tables=contract_tables.TABLES),
    migration.COMPONENT,
    power_bridge.COMPONENT,
    power_orders.COMPONENT,
    power_speed.COMPONENT,
    appended.COMPONENT,
)
activate(COMPONENTS)

#: Every constraint family of the active components, in build order. Families with
#: ``builds_columns`` (the fleet definition, the power columns) run in the column
#: phase, before every row family, in this order.
REGISTRY: SequenceView[ConstraintFamily] = SequenceView(lambda r: r.families)

#: Families appended to a built model (cost cap, CVaR, chance rows), in registry order.
APPENDED: SequenceView[AppendedFamily] = SequenceView(lambda r: r.appended)

#: Appended family record by name.
APPENDED_BY_NAME: MappingView[AppendedFamily] = MappingView(lambda r: r.appended_by_name)

#: Family record by name.
BY_NAME: MappingView[ConstraintFamily] = MappingView(lambda r: r.by_name)

#: Constraint families with the unit of their rhs, in registry order.
FAMILIES: MappingView[str] = MappingView(lambda r: r.units)

#: Definition rows (equalities of auxiliary columns); not limits, no shadow price shown.
DEFINITION_FAMILIES: SequenceView[str] = SequenceView(
    lambda r: tuple(f.name for f in r.families if f.definition)
)

#: Families with a priced slack (unmet, breach): never relaxed by the explanation.
SOFT_FAMILIES: SequenceView[str] = SequenceView(
    lambda r: tuple(f.name for f in r.families if f.soft)
)
