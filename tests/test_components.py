"""The component registry: a part of the plan is one module plus one registration line.

A toy component (a new column kind, one family with its check, one cost term, one
result table) is added in a temporary registry and is built, checked, priced and
reported with no other module edited; the registry keeps today's build order, and
``docs/families.md`` is the table the registry generates.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from capacity.dataset import load_dataset
from optimizer import solve
from optimizer.components import COMPONENTS, REGISTRY, registered
from optimizer.components.component import (
    ColumnKind,
    Component,
    CostTerm,
    ResultTable,
    TableColumn,
)
from optimizer.components.docs import FAMILIES_DOC, families_table
from optimizer.components.plan_context import PlanContext
from optimizer.components.records import ConstraintFamily
from optimizer.components.registry import active
from optimizer.components.scenario import ScenarioColumns
from optimizer.lp.builder import ModelBuilder
from optimizer.lp.violations import violations
from optimizer.output.report import write_report
from optimizer.output.table_schema import RESULT_TABLES
from optimizer.plan.check import check_frames
from optimizer.plan.model import COST_TERMS, VAR_KINDS, build_model
from optimizer.plan.results import solution_frames
from tests.conftest import ROOT, TINY

RESERVE_MW = 2.0  # the toy's floor per period
RESERVE_USD_PER_MW = 1_000.0  # the toy's price per MW and period


# ----------------------------------------------------------------------- the toy module
def add_reserve(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """One ``toy_reserve[t]`` column per period (MW held in reserve)."""
    scenario = columns.scenario
    keys = pd.DataFrame({"t": np.arange(scenario.n_periods, dtype=np.int64)})
    columns.extra["toy_reserve"] = keys.assign(
        col=builder.add_vars("toy_reserve", scenario.index, keys)
    )


def define_toy_reserve_floor(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Toy reserve floor: toy_reserve[p] >= RESERVE_MW."""
    reserve = columns.extra["toy_reserve"]
    rhs = np.full(len(reserve), RESERVE_MW)
    rows = builder.add_rows("toy_reserve_floor", columns.scenario.index, reserve, ">=", rhs)
    builder.add_terms(rows, reserve["col"], 1.0)


def check_toy_reserve_floor(inputs: PlanContext) -> pd.DataFrame:
    """Reserve held per period >= RESERVE_MW (recomputed from the decision frame)."""
    frame = inputs.frames.get("toy_reserve")
    if frame is None:
        frame = pd.DataFrame({"period": [], "value": []})
    lhs = frame["value"].to_numpy(dtype=float)
    rhs = np.full(len(frame), RESERVE_MW)
    keys = frame["period"].astype(str)
    return violations("toy_reserve_floor", keys, lhs, rhs, ">=", inputs.tolerance)


def price_toy_reserve(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """toy_reserve: RESERVE_USD_PER_MW per MW held, per period."""
    reserve = columns.extra["toy_reserve"]
    index = columns.scenario.index
    builder.add_cost(index, "toy_reserve", reserve["col"], reserve["t"], RESERVE_USD_PER_MW)


def toy_reserve_table(ctx: PlanContext) -> pd.DataFrame:
    """The toy_reserve table: MW held per period, from the plan's decision frame."""
    frame = ctx.frames["toy_reserve"]
    return pd.DataFrame({"period": frame["period"], "reserve_mw": frame["value"]})


TOY_TABLE = ResultTable(
    "toy_reserve",
    (
        TableColumn("period", pa.string(), "quarter", "Period (YYYYQn)."),
        TableColumn("reserve_mw", pa.float64(), "MW", "MW held in reserve."),
    ),
    build=toy_reserve_table,
)

TOY = Component(
    "toy",
    columns=(ColumnKind("toy_reserve", "t", "MW", "MW held in reserve", add=add_reserve),),
    families=(
        ConstraintFamily(
            "toy_reserve_floor",
            "MW",
            define_toy_reserve_floor,
            check_toy_reserve_floor,
            "toy reserve in {period} short by {amount} MW ({key})",
            "MW",
            (),
            summary_words="toy reserve",
            limit=True,
        ),
    ),
    costs=(CostTerm("toy_reserve", "opex", price_toy_reserve, "reserve MW x its price"),),
    tables=(TOY_TABLE,),
)


# ------------------------------------------------------------------------------ tests
def test_the_toy_is_built_in_a_temporary_registry_only() -> None:
    ds = load_dataset(TINY)
    T = len(ds.periods)
    with registered(TOY):
        assert "toy_reserve" in VAR_KINDS and "toy_reserve" in COST_TERMS
        assert REGISTRY[-1].name == "toy_reserve_floor"
        model = build_model(ds)
    var, con = model.variables, model.constraints
    assert int((var["kind"] == "toy_reserve").sum()) == T
    rows = (con["family"] == "toy_reserve_floor").to_numpy()
    assert rows.sum() == T and (con.loc[rows, "rhs"] == RESERVE_MW).all()
    assert set(model.cost_terms["term"]) >= {"toy_reserve", "chip_capex"}
    # outside the block the registry is today's again
    assert "toy_reserve" not in VAR_KINDS and active().components == COMPONENTS
    plain = build_model(ds)
    assert plain.n_variables == model.n_variables - T
    assert plain.n_constraints == model.n_constraints - T


def test_the_toy_is_priced_and_checked() -> None:
    ds = load_dataset(TINY)
    discount = ds.table("periods")["discount_factor"].to_numpy(dtype=float)
    hand = float((RESERVE_MW * RESERVE_USD_PER_MW * discount).sum())
    base = solve(ds)
    with registered(TOY):
        result = solve(ds)
        model = build_model(ds)
    assert result.objective_usd == pytest.approx(base.objective_usd + hand, rel=1e-9)
    costs = result.tables["costs"]
    toy = costs.loc[costs["term"] == "toy_reserve", "cost_usd"].sum()
    assert toy == pytest.approx(hand, rel=1e-9)
    assert len(result.violations) == 0
    # the independent checker runs the toy's check on the toy's decision frame
    x = np.zeros(model.n_variables)
    x[(model.variables["kind"] == "toy_reserve").to_numpy()] = RESERVE_MW
    with registered(TOY):
        frames = solution_frames(model, x)  # the toy's kind has its decision frame
    assert frames["toy_reserve"]["value"].tolist() == [RESERVE_MW] * len(ds.periods)
    with registered(TOY):
        clean = check_frames(ds, frames)
        frames["toy_reserve"].loc[0, "value"] = RESERVE_MW - 0.5
        short = check_frames(ds, frames)
    assert "toy_reserve_floor" not in set(clean["family"])
    found = short[short["family"] == "toy_reserve_floor"]
    assert len(found) == 1 and found["violation"].iloc[0] == pytest.approx(0.5)
    assert found["keys"].iloc[0] == ds.periods[0]


def test_the_toy_is_reported(tmp_path: Path) -> None:
    ds = load_dataset(TINY)
    discount = ds.table("periods")["discount_factor"].to_numpy(dtype=float)
    with registered(TOY):
        result = solve(ds)
        run = write_report(result, tmp_path, scenario="toy", run_id="toy")
    table = result.tables["toy_reserve"]
    assert table["period"].tolist() == list(ds.periods)
    assert table["reserve_mw"].tolist() == pytest.approx([RESERVE_MW] * len(ds.periods))
    # the cost term's cash kind comes from its record: opex, paid as billed
    costs = result.tables["costs"]
    toy = costs[costs["term"] == "toy_reserve"]
    assert set(toy["cash_kind"]) == {"opex"}
    assert toy["cash_usd"].sum() == pytest.approx(RESERVE_MW * RESERVE_USD_PER_MW * len(discount))
    # the report writes the toy's table with its schema and units, like any other
    path = run / "scenario=toy" / "toy_reserve.parquet"
    written = pq.read_table(path)
    assert written.column_names == ["period", "reserve_mw"]
    assert written.schema.field("reserve_mw").metadata[b"unit"] == b"MW"
    assert written.column("reserve_mw").to_pylist() == pytest.approx([RESERVE_MW] * len(ds.periods))
    # outside the block the report's tables are today's again
    assert "toy_reserve" not in RESULT_TABLES


def test_the_registry_keeps_the_build_order() -> None:
    """Row families are built in today's order; column-building ones keep theirs."""
    rows = [f.name for f in REGISTRY if not f.builds_columns]
    assert rows == list(BUILD_ORDER)
    column_phase = [f.name for f in REGISTRY if f.builds_columns]
    assert column_phase == [
        "site_built",
        "site_liquid_built",
        "chip_installed",
        "fleet_definition",
        "grid_upgrade_rate",
    ]
    assert [c.name for c in COMPONENTS] == [
        "site",
        "supply",
        "fleet",
        "demand",
        "revenue",
        "service",
        "placement",
        "power",
        "contracts",
        "migration",
        "bridge",
        "equipment",
        "speed_to_power",
        "risk",
    ]


def test_the_families_table_is_generated_and_complete() -> None:
    text = (ROOT / FAMILIES_DOC).read_text(encoding="utf-8")
    assert text == families_table(), "run python -m optimizer.components.docs"
    for family in REGISTRY:
        assert f"| `{family.name}` |" in text, family.name


#: The order the row families are built in, as before the components (site_hosting
#: adds no rows: a mask on the install columns, so its place in the order is free).
BUILD_ORDER = (
    "site_it_power",
    "site_liquid_share",
    "site_liquid",
    "site_grid",
    "site_build_rate",
    "site_max",
    "site_water",
    "site_retrofit_rate",
    "site_retrofit_pool",
    "supply_resource",
    "site_hosting",
    "chip_inventory",
    "chip_window",
    "fleet_assignment",
    "demand_balance",
    "commitment",
    "region_balance",
    "pool_balance",
    "cluster_link",
    "cluster_min_mw",
    "cluster_min_h100e",
    "cluster_max_sites",
    "cluster_switch",
    "cluster_min_duration",
    "grid_upgrade_total",
    "onsite_cap",
    "power_energy_balance",
    "grid_energy",
    "onsite_energy",
    "ppa_energy",
    "carbon_cap_period",
    "carbon_cap_horizon",
    "take_or_pay",
    "reservation",
    "sla_tier",
    "migration",
    # speed to power: bridge retirement, equipment order books, the inference SLA
    "bridge_retire",
    "equipment_order_book",
    "flexible_inference_sla",
)
