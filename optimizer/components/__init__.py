"""Constraint-family registry: one entry per family, holding everything about it.

:data:`REGISTRY` lists every constraint family of the planning LP as a
:class:`~optimizer.components.records.ConstraintFamily` record, in build order. From one
entry you reach the family's

* ``define(builder, columns)``: the vectorised function that adds its rows for one
  scenario (maths in its docstring; see also :mod:`optimizer.plan.model`);
* ``check(inputs)``: the independent check that recomputes lhs and rhs from the
  decision frames and the dataset with pandas and numpy, never from the LP
  (:mod:`optimizer.plan.check` runs them all; sums by key on integer group codes,
  :mod:`optimizer.lp.grouping`, give pandas' sums bit for bit);
* ``explain_template`` / ``explain_unit``: the wording of an infeasibility
  explanation when the elastic re-solve relaxes one of its rows
  (:mod:`optimizer.plan.explain`);
* ``unit``: the rhs unit (shadow prices are USD per this unit; :data:`FAMILIES`);
* ``key_codes``: the code letters naming a row ("site", "chip/site", ...);
* ``result``: where its dual lands besides ``shadow_prices`` (e.g. the
  ``site_utilisation`` limit it prices; :mod:`optimizer.plan.results`);
* ``soft`` / ``definition`` flags: priced-slack families are never relaxed by the
  explanation; definition rows carry no shadow price.

Modules: :mod:`~optimizer.components.site` (site_it_power, site_liquid_share,
site_liquid, site_grid, site_build_rate, site_max, site_water),
:mod:`~optimizer.components.supply` (supply_resource), :mod:`~optimizer.components.chips`
(chip_inventory with the delivery lag, chip_window),
:mod:`~optimizer.components.construction` (lead time and pipeline helpers,
site_retrofit_rate, site_retrofit_pool), :mod:`~optimizer.components.hosting`
(site_hosting: an install mask with a checker row),
:mod:`~optimizer.components.fleet` (fleet_definition,
fleet_assignment), :mod:`~optimizer.components.demand` (demand_balance, commitment),
:mod:`~optimizer.components.region` (region_balance: the link of the compact
formulation's per-site busy chips and per-region service, and the split of a compact
plan back to per-site, per-customer assignments), :mod:`~optimizer.components.pool`
(pool_balance: the compact formulation's service pooled over the regions a group of
customers shares, and its proportional split back to per-region service),
:mod:`~optimizer.components.placement` (cluster_link, cluster_min_mw, cluster_min_h100e,
cluster_max_sites, cluster_switch, cluster_min_duration: exact training clusters,
built only in cluster mode);
shared pieces (coded scenario data, the row builder, the checker's inputs, the
record types) in :mod:`~optimizer.components.base`; group sums and key lookups on
integer codes (used by the checks and the result tables) in
:mod:`~optimizer.lp.grouping`; internal frames whose text keys stay NumPy object
columns (not pandas' Arrow text, which every read as NumPy converts back) in
:mod:`~optimizer.lp.frames`.

How to add a constraint family
------------------------------
Write one module (or add to the module of its group) with a
``define_<name>(builder, columns)`` function that adds rows with
``builder.add_rows("<name>", scenario.index, keys, sense, rhs)`` and coefficients with
``builder.add_terms`` (merges on code frames, no per-row loops; return early when
nothing applies), a ``check_<name>(inputs)`` function that recomputes the same limit
from ``inputs.frames`` / ``inputs.fleet`` and the dataset and returns
``violations("<name>", keys, lhs, rhs, sense, inputs.tolerance)``, and a
``ConstraintFamily("<name>", unit, define_<name>, check_<name>, explain_template,
explain_unit, key_codes, result=..., summary_words="...", limit=...)`` record
(``summary_words`` names one row in the plan summary and risk views; ``limit=True``
lists the family among the summary's binding limits and the Monte Carlo binding
shares). Then add that record to
:data:`REGISTRY` below at the place it should be built. Nothing else changes: the
model builds it, the checker checks it, the explanation words it, the shadow-price
table keys and prices it (``tests/test_families_registry.py`` checks that every
record is complete). Give ``result`` a :class:`~optimizer.components.records.ResultRows`
only when the dual belongs in a domain table as well (a new ``site_utilisation``
limit needs its ``used`` and ``capacity`` columns in :mod:`optimizer.plan.results`). A new
decision variable kind is a change to :mod:`optimizer.plan.model` (``VAR_KINDS`` and the
column phase), not to the registry.
"""

from __future__ import annotations

from optimizer.components import (
    chips,
    construction,
    demand,
    fleet,
    hosting,
    placement,
    pool,
    power_check,
    region,
    site,
    supply,
)
from optimizer.components.records import ConstraintFamily, ResultRows

__all__ = [
    "BY_NAME",
    "ConstraintFamily",
    "DEFINITION_FAMILIES",
    "FAMILIES",
    "REGISTRY",
    "ResultRows",
    "SOFT_FAMILIES",
]


def _ordered(*groups: tuple[ConstraintFamily, ...]) -> tuple[ConstraintFamily, ...]:
    return tuple(f for group in groups for f in group)


_FLEET_DEFINITION, _FLEET_ASSIGNMENT = fleet.FAMILIES

#: Every constraint family, in build order. Families with ``builds_columns`` (the fleet
#: definition) run in the column phase, before every row family, whatever their place.
REGISTRY: tuple[ConstraintFamily, ...] = _ordered(
    site.FAMILIES,
    construction.FAMILIES,
    hosting.FAMILIES,
    supply.FAMILIES,
    chips.FAMILIES,
    (_FLEET_ASSIGNMENT,),
    demand.FAMILIES,
    region.FAMILIES,
    pool.FAMILIES,
    placement.FAMILIES,
    (_FLEET_DEFINITION,),
    power_check.FAMILIES,
)

#: Family record by name.
BY_NAME: dict[str, ConstraintFamily] = {f.name: f for f in REGISTRY}

#: Constraint families with the unit of their rhs, in registry order.
FAMILIES: dict[str, str] = {f.name: f.unit for f in REGISTRY}

#: Definition rows (equalities of auxiliary columns); not limits, no shadow price shown.
DEFINITION_FAMILIES: tuple[str, ...] = tuple(f.name for f in REGISTRY if f.definition)

#: Families with a priced slack (unmet, breach): never relaxed by the explanation.
SOFT_FAMILIES: tuple[str, ...] = tuple(f.name for f in REGISTRY if f.soft)
