"""The fleet: chips produced and installed, the hosting rules, the fleet they make.

Families: ``site_hosting`` (:mod:`optimizer.components.hosting`: a site hosts only
the chip families and vendors it lists; an install mask with a checker row),
``chip_inventory`` and ``chip_window`` (:mod:`optimizer.components.chips`: cumulative
installs <= cumulative production shifted by the delivery lag, plus opening inventory;
production only inside the sale window), ``fleet_definition`` (fleet[c,s,p] =
fleet[c,s,p-1] + install[c,s,p] - install[c,s,p-lifetime]) and ``fleet_assignment``
(sum_{k,w} assign[c,s,k,w,p] <= fleet[c,s,p] + initial fleet alive).

Cost term ``chip_capex`` (capex): capex_usd_per_chip / lifetime_periods per fleet chip
and period alive inside the horizon (straight-line rent; no salvage), plus
:data:`PRODUCE_TIE_BREAK_USD_PER_CHIP` per chip produced.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from optimizer.components.chips import FAMILIES as chip_families
from optimizer.components.component import ColumnKind, Component, CostTerm
from optimizer.components.hosting import FAMILIES as hosting_families
from optimizer.components.plan_context import PlanContext
from optimizer.components.records import ConstraintFamily
from optimizer.components.scenario import ScenarioColumns
from optimizer.lp.builder import ModelBuilder, expand
from optimizer.lp.frames import column_values
from optimizer.lp.grouping import Groups, value_at
from optimizer.lp.join import merge
from optimizer.lp.violations import violations

#: Tie-break cost per chip produced (USD), booked as chip capex; negligible against
#: chip prices (1e4-1e5 USD) and only stops idle production.
PRODUCE_TIE_BREAK_USD_PER_CHIP = 1e-3

_FLEET_COLUMNS = ["c", "s", "t", "col"]


def define_fleet_definition(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Fleet columns ``fleet[c,s,p]`` = installs still alive, defined recursively.

    fleet_definition rows: fleet[c,s,p] - fleet[c,s,p-1] - install[c,s,p]
    + install[c,s,p-lifetime] == 0. The recursion keeps each install in two rows
    instead of ``lifetime`` rows per family, which keeps the matrix sparse (the
    normal equations of a lifetime-window sum fill in badly). Sets
    ``columns.fleet_columns`` (c, s, t, col) and ``columns.fleet_keys`` (c, s, t,
    init: every (chip, site, period) with a fleet, initial chips alive).
    """
    scenario, install = columns.scenario, columns.install
    if len(install):
        n_periods = scenario.n_periods
        first = install.groupby(["c", "s"], as_index=False)["t"].min()
        fleet = expand(
            first[["c", "s"]], column_values(first, "t"), n_periods - column_values(first, "t"), "t"
        ).astype(np.int64)
        fleet["col"] = builder.add_vars("fleet", scenario.index, fleet)
        rows = builder.add_rows(
            "fleet_definition", scenario.index, fleet, "==", np.zeros(len(fleet))
        )
        builder.add_terms(rows, fleet["col"], 1.0)
        row_of = fleet[["c", "s", "t"]].assign(row=rows)
        previous = merge(fleet.assign(t=fleet["t"] + 1), row_of, ["c", "s", "t"])
        builder.add_terms(previous["row"], previous["col"], -1.0)
        m = merge(install, row_of, ["c", "s", "t"])
        builder.add_terms(m["row"], m["col"], -1.0)
        life = scenario.chip_attr(column_values(install, "c"), "lifetime_periods").astype(np.int64)
        m = merge(install.assign(t=column_values(install, "t") + life), row_of, ["c", "s", "t"])
        builder.add_terms(m["row"], m["col"], 1.0)
        fleet_columns = fleet[_FLEET_COLUMNS]
    else:
        fleet_columns = pd.DataFrame({k: pd.Series([], dtype=np.int64) for k in _FLEET_COLUMNS})
    columns.fleet_columns = fleet_columns
    initial = scenario.initial_fleet
    keys = pd.concat([fleet_columns[["c", "s", "t"]], initial[["c", "s", "t"]]]).drop_duplicates()
    keys = merge(keys.astype(np.int64), initial, ["c", "s", "t"], how="left")
    keys["init"] = keys["chips"].fillna(0.0)
    keys = keys.drop(columns="chips").sort_values(["c", "s", "t"]).reset_index(drop=True)
    columns.fleet_keys = keys


def define_fleet_assignment(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Fleet assignment: sum_{k,w} assign[c,s,k,w,p] <= fleet[c,s,p] (initial + installs alive).

    In the compact formulation the lhs is sum_w busy[c,s,w,p] (the same chips,
    :attr:`~optimizer.components.scenario.ScenarioColumns.site_work`).
    """
    scenario, assign = columns.scenario, columns.site_work
    if assign.empty:
        return
    keys = merge(assign[["c", "s", "t"]].drop_duplicates(), columns.fleet_keys, ["c", "s", "t"])
    keys = keys.sort_values(["c", "s", "t"]).reset_index(drop=True)
    rows = builder.add_rows(
        "fleet_assignment", scenario.index, keys, "<=", column_values(keys, "init")
    )
    row_of = keys[["c", "s", "t"]].assign(row=rows)
    m = merge(assign, row_of, ["c", "s", "t"])
    builder.add_terms(m["row"], m["col"], 1.0)
    m = merge(columns.fleet_columns, row_of, ["c", "s", "t"])
    builder.add_terms(m["row"], m["col"], -1.0)


def check_fleet_assignment(inputs: PlanContext) -> pd.DataFrame:
    """Chips assigned per (chip, site, period) <= fleet recomputed from installs and lifetimes.

    Sums per (chip, site, period) as pandas' ``groupby`` gives them, in its order
    (:mod:`optimizer.lp.grouping`).
    """
    asg, fleet = inputs.frames["assign"], inputs.fleet
    cols = ("chip", "site", "period")
    g = Groups([asg[c] for c in cols])
    keys = [g.key(i) for i in range(3)]
    have = value_at(
        keys,
        [fleet[c] for c in cols],
        column_values(fleet, "fleet_chips", dtype=float),
    )

    def text(bad: np.ndarray) -> np.ndarray:
        chip, site, period = (k[bad].astype(object) for k in keys)
        out: np.ndarray = chip + "/" + site + "," + period
        return out

    assigned = g.sum(column_values(asg, "value", dtype=float))
    fleet_chips = np.where(np.isnan(have), 0.0, have)
    return violations("fleet_assignment", text, assigned, fleet_chips, "<=", inputs.tolerance)


FAMILIES = (
    ConstraintFamily(
        "fleet_definition",
        "chips",
        define_fleet_definition,
        # No check of its own: the checker never reads the fleet columns; it recomputes
        # the fleet from installs and lifetimes (fleet_values), which is this definition.
        None,
        "",
        "chips",
        (),
        definition=True,
        builds_columns=True,
    ),
    ConstraintFamily(
        "fleet_assignment",
        "chips",
        define_fleet_assignment,
        check_fleet_assignment,
        "fleet {key} in {period} short by {amount} chips",
        "chips",
        ("c", "s"),
        summary_words="fleet of {0} at {1}",
    ),
)


def price_chip_capex(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """chip_capex: capex_usd_per_chip / lifetime_periods per chip alive, and the tie-break."""
    scenario = columns.scenario
    fleet = columns.fleet_columns
    c = column_values(fleet, "c")
    rent = scenario.chip_attr(c, "capex_usd_per_chip") / scenario.chip_attr(c, "lifetime_periods")
    builder.add_cost(scenario.index, "chip_capex", fleet["col"], fleet["t"], rent.astype(float))
    produce = columns.produce
    tie_break = PRODUCE_TIE_BREAK_USD_PER_CHIP
    builder.add_cost(scenario.index, "chip_capex", produce["col"], produce["t"], tie_break)


COMPONENT = Component(
    "fleet",
    columns=(
        ColumnKind("install", "c/s/t", "chips", "chips installed at a site in period t"),
        ColumnKind("produce", "c/t", "chips", "chips produced in period t"),
        ColumnKind("fleet", "c/s/t", "chips", "installed chips alive (fleet_definition)"),
        ColumnKind(
            "installed",
            "c/t",
            "chips",
            "chips installed up to period t, all sites (chip_installed)",
        ),
    ),
    families=hosting_families + chip_families + FAMILIES,
    costs=(
        CostTerm(
            "chip_capex",
            "capex",
            price_chip_capex,
            "capex_usd_per_chip / lifetime_periods per chip alive in the horizon, plus "
            "a tie-break per chip produced",
        ),
    ),
)
