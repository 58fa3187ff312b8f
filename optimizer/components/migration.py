"""Migration to a new chip family: a one-off porting cost and a derate that recovers (component).

Each ``migration`` row (customer k, family f) states a one-off cost ``M[k,f]`` (USD), an
initial derate ``d0``, recovery quarters ``N`` and the quarter ``p0`` the port starts.
Built in the margin objective only: the cost objective keeps the eligibility derate
and its plan (as it keeps its penalty weights instead of the contract terms).

* Derate schedule (exact; a coefficient, :mod:`optimizer.components.migration_inputs`):
  a chip c of family f serving k in period p delivers h100e[c,w] x derate[k,c] x
  m[k,f,p], m = 1 - d0 x r(p - p0), r(a) = 1 before the start, max(0, 1 - a/N) from it.
  It scales every coefficient that counts a customer's H100e (demand balance,
  take-or-pay, reservation, cluster minimum and the rows below).
* ``migration`` (H100e): ref[k] x sum_{q<=p} port[k,f,q] - sum_{c in f,s,w,g}
  assign[c,s,k,w,g,p] x h100e[c,w] x derate[k,c] x m[k,f,p] >= 0. ``port[k,f,q] >= 0``
  is the share of the customer's reference volume ``ref[k]`` (its largest quarterly
  demand, all workloads and regions) moved onto the family in quarter q; the term
  ``migration_cost`` prices it at ``M[k,f] x port[k,f,q]``, discounted in quarter q.

Approximation (an LP has no "first use"): the cost paid is M times the largest share
of the customer's peak demand the family holds for it in any quarter, paid as the
share grows and never again for a share already moved. It is exactly M, once, when
the family holds the customer's peak demand (the hand test); a plan that moves a
tenth of the peak pays a tenth; a plan holding more than the peak on the family (for
a floor above the demand) pays pro rata beyond M. The derate recovers on the calendar
from ``p0``, not from the plan's first use: a plan that first uses the family after
``p0`` meets a derate already partly recovered. Customers without demand in the
horizon have no reference volume: their rows build nothing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from optimizer.components.component import ColumnKind, Component, CostTerm, ResultTable
from optimizer.components.migration_inputs import peak_demand, plan_factor, rows_in_effect
from optimizer.components.plan_context import PlanContext
from optimizer.components.records import ConstraintFamily, ResultRows
from optimizer.components.scenario import ScenarioColumns
from optimizer.components.table_columns import CUSTOMER, DUAL, F64, PERIOD, STR, col
from optimizer.lp.builder import ModelBuilder
from optimizer.lp.frames import column_values, indexed
from optimizer.lp.grouping import sums_at
from optimizer.lp.join import merge
from optimizer.lp.violations import violations

__all__ = ["COMPONENT", "FAMILIES", "TABLES", "migration_quantities"]

_KEYS = ["k", "f", "t"]


def add_port_columns(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Add ``port[k,f,p]`` (share of ref[k]) for every migration row in effect and period.

    Margin mode only; the frame keeps ``ref`` (H100e) and ``cost`` (USD per share).
    """
    scenario = columns.scenario
    empty = pd.DataFrame({c: pd.Series([], dtype=np.int64) for c in _KEYS})
    rows = rows_in_effect(scenario) if builder.objective == "margin" else None
    if rows is None or not len(rows):
        frame = empty.assign(ref=0.0, cost=0.0)
    else:
        k_of = pd.Series(scenario.customers.index, index=scenario.customers["customer"])
        chips = scenario.chips
        f_of = chips.drop_duplicates("family").set_index("family")["f"]
        pairs = pd.DataFrame(
            {
                "k": k_of.reindex(rows["customer"]).to_numpy(dtype=np.int64),
                "f": f_of.reindex(rows["family"]).to_numpy(dtype=np.int64),
                "cost": column_values(rows, "migration_cost_usd", dtype=float),
            }
        )
        pairs["ref"] = peak_demand(scenario).reindex(pairs["k"]).to_numpy(dtype=float)
        periods = pd.DataFrame({"t": np.arange(scenario.n_periods, dtype=np.int64)})
        frame = pairs.merge(periods, how="cross")[[*_KEYS, "ref", "cost"]]
    cols = builder.add_vars("migration_port", scenario.index, frame[_KEYS])
    columns.extra["migration_port"] = frame.assign(col=cols)


def define_migration(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Migration: ref[k] x sum_{q<=p} port[k,f,q] - sum_{c in f} assign*h100e*derate*m >= 0."""
    port = columns.extra.get("migration_port")
    if port is None or port.empty:
        return
    scenario = columns.scenario
    ids = builder.add_rows("migration", scenario.index, port[_KEYS], ">=", np.zeros(len(port)))
    keyed = port[[*_KEYS, "ref"]].assign(row_id=ids)
    moved = port[["k", "f", "t", "col"]].rename(columns={"t": "q"})
    cum = merge(keyed, moved, ["k", "f"])
    cum = cum[column_values(cum, "q") <= column_values(cum, "t")]
    builder.add_terms(cum["row_id"], cum["col"], cum["ref"])
    cw = columns.customer_work
    cw = cw.assign(f=scenario.chip_attr(column_values(cw, "c"), "f").astype(np.int64))
    m = merge(cw, keyed[[*_KEYS, "row_id"]], _KEYS)
    c = column_values(m, "c")
    training = (
        np.asarray(scenario.workload_names, dtype=object)[column_values(m, "w")] == "training"
    )
    h = np.where(
        training,
        scenario.chip_attr(c, "training_h100e").astype(float),
        scenario.chip_attr(c, "inference_h100e").astype(float),
    )
    builder.add_terms(m["row_id"], m["col"], -h * column_values(m, "derate", dtype=float))


def price_migration(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """migration_cost: port[k,f,p] x migration_cost_usd (USD per share of ref moved)."""
    port = columns.extra.get("migration_port")
    if port is None or port.empty:
        return
    cost = column_values(port, "cost", dtype=float)
    builder.add_cost(columns.scenario.index, "migration_cost", port["col"], port["t"], cost)


def migration_quantities(inputs: PlanContext) -> pd.DataFrame:
    """Migration rows of a plan per period: ported share, held H100e and the cost (USD).

    ``customer, family, period, reference_h100e, port_share`` (moved in the period),
    ``ported_share`` (cumulative), ``held_h100e`` (the family's H100e for the customer
    after the derate and its schedule), ``derate_factor`` (m[k,f,p]) and
    ``migration_cost_usd`` (undiscounted, paid in the period). Empty for a plan without
    migration columns (the cost objective).
    """
    port = inputs.frames.get("migration_port")
    if port is None or not len(port):
        return pd.DataFrame(columns=[c.name for c in MIGRATION.columns])
    ds = inputs.dataset
    mig = ds.table("migration")
    out = port[["customer", "family", "period"]].astype(str).reset_index(drop=True)
    out["port_share"] = column_values(port, "value", dtype=float)
    order = {p: i for i, p in enumerate(inputs.periods)}
    out = out.assign(_t=out["period"].map(order)).sort_values(["customer", "family", "_t"])
    out["ported_share"] = out.groupby(["customer", "family"])["port_share"].cumsum()
    dm = ds.table("demand")
    dm = dm[dm["period"].isin(order)]
    peak = dm.groupby(["customer", "period"])["demand_h100e"].sum().groupby(level=0).max()
    out["reference_h100e"] = peak.reindex(out["customer"]).to_numpy(dtype=float)
    a = inputs.assigned
    per = np.where(
        column_values(a, "workload") == "training",
        inputs.chips["training_h100e"].reindex(a["chip"]).to_numpy(dtype=float),
        inputs.chips["inference_h100e"].reindex(a["chip"]).to_numpy(dtype=float),
    )
    h = column_values(a, "value") * per * a["derate"].fillna(0.0).to_numpy(dtype=float)
    fam = inputs.chips["family"].reindex(a["chip"]).astype(str).to_numpy()
    keys = ["customer", "family", "period"]
    target = [out[k].to_numpy() for k in keys]
    out["held_h100e"] = sums_at(
        target, [column_values(a, "customer"), fam, column_values(a, "period")], h
    )
    chip = ds.table("chips").drop_duplicates("family").set_index("family")["chip"]
    probe = out.assign(chip=chip.reindex(out["family"]).to_numpy())
    out["derate_factor"] = plan_factor(ds, inputs.frames, probe)
    cost = mig.set_index(["customer", "family"])["migration_cost_usd"]
    at = pd.MultiIndex.from_frame(out[["customer", "family"]])
    out["migration_cost_usd"] = out["port_share"] * cost.reindex(at).to_numpy(dtype=float)
    return out.drop(columns="_t").reset_index(drop=True)


def check_migration(inputs: PlanContext) -> pd.DataFrame:
    """Check ref x the share ported so far >= the family's H100e held, per customer and period."""
    q = migration_quantities(inputs)
    text = q["customer"] + "/" + q["family"] + "," + q["period"]
    lhs = q["reference_h100e"] * q["ported_share"]
    return violations("migration", text, lhs, q["held_h100e"], ">=", inputs.tolerance)


def _migration_table(ctx: PlanContext) -> pd.DataFrame:
    """Build migration: one row per migration row and period, the cost discounted."""
    q = migration_quantities(ctx)
    disc = indexed(ctx.dataset.table("periods"), "period")["discount_factor"]
    d = disc.reindex(q["period"]).to_numpy(dtype=float)
    q["migration_cost_usd"] = column_values(q, "migration_cost_usd", dtype=float) * d
    return ctx.with_duals(q, "migration")


FAMILIES = (
    ConstraintFamily(
        "migration",
        "H100e",
        define_migration,
        check_migration,
        "",
        "H100e",
        ("k", "f"),
        soft=True,
        result=ResultRows("migration", "shadow_price_usd_per_h100e", ("k", "f", "t")),
        summary_words="migration of {0} to {1}",
    ),
)

MIGRATION = ResultTable(
    "migration",
    (
        CUSTOMER,
        col("family", STR, "", "Chip family the customer moves to."),
        PERIOD,
        col("reference_h100e", F64, "H100e", "The customer's largest quarterly demand."),
        col("port_share", F64, "share", "Share of the reference moved onto the family."),
        col("ported_share", F64, "share", "Share moved so far (the cost paid is M x it)."),
        col("held_h100e", F64, "H100e", "The family's H100e for the customer (after derate)."),
        col("derate_factor", F64, "share", "m = 1 - d0 x the share of the derate not recovered."),
        col("migration_cost_usd", F64, "USD", "Migration cost paid in the period, discounted."),
        col(
            "shadow_price_usd_per_h100e",
            F64,
            "USD/H100e",
            DUAL + "per H100e held on the family beyond the share moved.",
        ),
    ),
    build=_migration_table,
)

#: The tables of the migration part of the plan.
TABLES: tuple[ResultTable, ...] = (MIGRATION,)

COMPONENT = Component(
    "migration",
    columns=(
        ColumnKind(
            "migration_port",
            "k/f/t",
            "share",
            "share of the customer's peak demand moved onto a chip family",
            add=add_port_columns,
        ),
    ),
    families=FAMILIES,
    costs=(
        CostTerm(
            "migration_cost",
            "opex",
            price_migration,
            "margin mode: share of the customer's peak demand moved onto the family x "
            "migration_cost_usd, in the quarter it moves",
        ),
    ),
    tables=TABLES,
)
