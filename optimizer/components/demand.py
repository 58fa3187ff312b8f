"""Demand: the demand balance and customer commitments, with their priced slack.

Families (both soft: the priced unmet and breach slack never make the model
infeasible):

* ``demand_balance``: sum_{c,s} assign[c,s,k,w,g,p] * h100e[c,w] * derate[k,c] +
  unmet[k,w,g,p] >= demand[k,w,g,p]                                          (H100e)
* ``commitment``: sum_{c in f,s,w} assign * it_kw / 1000 + breach[j,p] >= min_it_mw_j,
  one row per commitment row j and period in from_period..to_period           (MW)

Cost terms (penalties, no cash): ``unmet_penalty`` unmet H100e x
``unmet_penalty_usd_per_h100e_period`` (cost mode only; the margin mode prices unmet
demand as lost revenue, :mod:`optimizer.components.revenue`); ``breach_penalty`` MW short x
``breach_penalty_usd_per_mw``.

The operating columns' keys (:func:`operating_keys`): ``assign`` where a customer's
demand or commitment may use an eligible chip at a site of its region group,
``unmet`` per demand row, ``breach`` per active commitment period.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from capacity.schema import period_index
from optimizer.components.component import ColumnKind, Component, CostTerm
from optimizer.components.plan_context import PlanContext
from optimizer.components.records import ConstraintFamily, ResultRows
from optimizer.components.scenario import ScenarioColumns
from optimizer.lp.builder import ModelBuilder
from optimizer.lp.frames import column_values, rows_frame
from optimizer.lp.grouping import (
    Groups,
    by_key,
    positions,
    sums_at,
    take,
    value_at,
    values_at,
)
from optimizer.lp.join import merge
from optimizer.lp.violations import flagged, violations


def define_demand_balance(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Demand balance: sum assign * h100e[c,w] * derate[k,c] + unmet[k,w,g,p] >= demand[k,w,g,p].

    ``g`` is the demand's region group: its assign columns exist only at sites of
    those regions (regional inference), built in :func:`operating_keys`.
    In the compact formulation the sum runs over ``serve[c,e,k,w,g,p]`` (per region,
    :attr:`~optimizer.components.scenario.ScenarioColumns.customer_work`).
    """
    scenario, unmet = columns.scenario, columns.unmet
    if unmet.empty:
        return
    demand = column_values(unmet, "demand_h100e")
    rows = builder.add_rows("demand_balance", scenario.index, unmet, ">=", demand)
    builder.add_terms(rows, unmet["col"], 1.0)
    row_of = unmet[["k", "w", "g", "t"]].assign(row=rows)
    m = merge(columns.customer_work, row_of, ["k", "w", "g", "t"])
    workload = np.asarray(scenario.workload_names, dtype=object)[column_values(m, "w")]
    c = column_values(m, "c")
    training = scenario.chip_attr(c, "training_h100e").astype(float)
    inference = scenario.chip_attr(c, "inference_h100e").astype(float)
    h100e = np.where(workload == "training", training, inference)
    builder.add_terms(m["row"], m["col"], h100e * column_values(m, "derate"))


def define_commitment(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Commit IT MW: sum_{c in f, s, w} assign[c,s,k,w,p] * kw/1000 + breach[j,p] >= min_it_mw.

    Compact formulation: the sum runs over ``serve[c,e,k,w,g,p]`` (regions ``e``).
    """
    scenario, breach = columns.scenario, columns.breach
    if breach.empty:
        return
    rows = builder.add_rows(
        "commitment", scenario.index, breach, ">=", column_values(breach, "min_it_mw")
    )
    builder.add_terms(rows, breach["col"], 1.0)
    row_of = breach[["j", "k", "f", "t"]].assign(row=rows)
    assign = columns.customer_work
    assign = assign.assign(f=scenario.chip_attr(column_values(assign, "c"), "f").astype(np.int64))
    m = merge(assign, row_of, ["k", "f", "t"])
    builder.add_terms(m["row"], m["col"], scenario.it_mw_per_chip(column_values(m, "c")))


def _served(inputs: PlanContext) -> pd.DataFrame:
    """Eligible-merged assignments with ``h`` (H100e after derate)."""
    a, chips = inputs.assigned, inputs.chips
    c = positions(chips.index, a["chip"])
    training = take(column_values(chips, "training_h100e", dtype=float), c)
    inference = take(column_values(chips, "inference_h100e", dtype=float), c)
    h100e = np.where(a["workload"] == "training", training, inference)
    return a.assign(h=column_values(a, "value") * h100e * a["derate"].fillna(0.0).to_numpy())


def check_demand_balance(inputs: PlanContext) -> pd.DataFrame:
    """H100e served (chips * H100e * derate) + unmet >= demand, per demand row (regions too).

    Assignments are matched to demand rows by customer, workload, period and the
    region group; whether a site may serve a group is checked separately
    (:func:`check_demand_regions`). Sums by key as pandas gives them
    (:mod:`optimizer.lp.grouping`).
    """
    keys = ["customer", "workload", "period", "demand_regions"]
    served = _served(inputs)
    dm = inputs.dataset.table("demand")
    dm = dm.assign(demand_regions=_regions_text(dm))
    dm = dm[column_values(dm, "demand_h100e") > 0].reset_index(drop=True)
    target = [column_values(dm, k) for k in keys]
    h = sums_at(target, [column_values(served, k) for k in keys], column_values(served, "h"))
    unmet = inputs.frames["unmet"]
    u = value_at(target, [column_values(unmet, k) for k in keys], column_values(unmet, "value"))
    u = np.where(np.isnan(u), 0.0, u)

    def text(bad: np.ndarray) -> np.ndarray:
        d = dm[bad]
        k = d["customer"] + "/" + d["workload"] + _suffix(d["demand_regions"]) + "," + d["period"]
        out: np.ndarray = k.astype(str).to_numpy()
        return out

    return violations("demand_balance", text, h + u, dm["demand_h100e"], ">=", inputs.tolerance)


def _regions_text(demand: pd.DataFrame) -> pd.Series:
    """Return the stripped ``regions`` text of demand rows ("" when absent)."""
    if "regions" not in demand:
        return pd.Series("", index=demand.index, dtype=object)
    return demand["regions"].fillna("").astype(str).str.strip()


def _suffix(regions: pd.Series) -> pd.Series:
    """``"/<regions>"`` for regional rows, "" for demand served anywhere."""
    return regions.map(lambda r: f"/{r}" if r else "")


def check_demand_regions(inputs: PlanContext) -> pd.DataFrame:
    """Chips serving a regional demand sit at sites of its regions (violation in chips)."""
    a = inputs.assigned
    reg = a["demand_regions"].astype(str).to_numpy()
    small, at = by_key(inputs.sites["region"], a["site"])
    site_region = small.astype(str).str.strip().to_numpy()[at]
    pairs = Groups([reg, site_region])  # each (group, region) pair tested once
    first = np.unique(pairs.ids, return_index=True)[1]
    tested = zip(reg[first], site_region[first], strict=True)
    ok_pair = np.array([not g or r in {x.strip() for x in g.split(";")} for g, r in tested])
    ok = ok_pair.astype(bool)[pairs.ids] if len(reg) else np.zeros(0, dtype=bool)
    return flagged(
        "demand_regions",
        a,
        ~ok,
        "value",
        lambda b: (
            b["customer"]
            + "/"
            + b["workload"]
            + "/"
            + b["demand_regions"]
            + "@"
            + b["site"]
            + ","
            + b["period"]
        ),
        inputs.tolerance,
    )


def check_commitment(inputs: PlanContext) -> pd.DataFrame:
    """Nameplate IT MW assigned to the customer on the family + breach >= min_it_mw.

    Sums per (customer, family, period) as pandas' ``groupby`` gives them
    (:mod:`optimizer.lp.grouping`).
    """
    com = inputs.dataset.table("commitments").reset_index(drop=True)
    if not len(com):
        return violations("commitment", pd.Series([], dtype=str), [], [], ">=", 0.0)
    a, chips, periods = inputs.assigned, inputs.chips, inputs.periods
    c = positions(chips.index, a["chip"])
    family = take(chips["family"].astype(str).to_numpy(), c)
    mw = (
        column_values(a, "value")
        * take(column_values(chips, "it_kw_per_chip", dtype=float), c)
        / 1e3
    )
    p0 = period_index(periods[0])
    rows = []
    for j, r in enumerate(com.itertuples(index=False)):
        lo = max(period_index(str(r.from_period)), p0)
        hi = min(period_index(str(r.to_period)), p0 + len(periods) - 1)
        for pi in range(lo, hi + 1):
            label = f"{r.customer}/{r.family}/{r.from_period},{periods[pi - p0]}"
            rows.append((j, str(r.customer), str(r.family), periods[pi - p0], label))
    text = dict.fromkeys(("customer", "family", "period", "k"), object)
    cf = rows_frame(rows, {"j": np.int64, **text})
    target = [cf[k] for k in ("customer", "family", "period")]
    delivered = sums_at(target, [a["customer"], family, a["period"]], mw)
    br = inputs.frames["breach"]
    got = values_at(
        [cf["j"], cf["period"]],
        [br["j"], br["period"]],
        {"value": column_values(br, "value"), "found": np.ones(len(br))},
    )
    breach = np.where(np.isnan(got["found"]), 0.0, got["value"])
    rhs = column_values(com, "min_it_mw", dtype=float)[column_values(cf, "j", dtype=np.int64)]
    return violations("commitment", cf["k"], delivered + breach, rhs, ">=", inputs.tolerance)


FAMILIES = (
    ConstraintFamily(
        "demand_balance",
        "H100e",
        define_demand_balance,
        check_demand_balance,
        "",
        "H100e",
        ("k", "w", "g"),
        soft=True,
        result=ResultRows("demand", "shadow_price_usd_per_h100e", ("k", "w", "g", "t")),
        summary_words="{0} {1} demand",
    ),
    ConstraintFamily(
        "commitment",
        "MW",
        define_commitment,
        check_commitment,
        "",
        "MW",
        ("j",),
        soft=True,
        result=ResultRows("commitments", "shadow_price_usd_per_mw", ("j", "t")),
        summary_words="{0} commitment on {1}",
    ),
)


def operating_keys(columns: ScenarioColumns) -> dict[str, pd.DataFrame]:
    """Keys of the scenario's assign, unmet and breach columns."""
    scenario = columns.scenario
    el = scenario.eligibility
    # demand-driven assignment, at the sites of the demand's region group
    assign = merge(el, scenario.demand[["k", "w", "g", "t"]], "k")
    assign = merge(assign, scenario.group_sites, ["g", "s"])
    # commitment-driven assignment (customer/family/period with no demand there)
    if len(scenario.commitment_periods):
        assign = pd.concat([assign, _committed_assign(columns)], ignore_index=True)
    assign = merge(assign, columns.fleet_keys[["c", "s", "t"]], ["c", "s", "t"])
    keys = ["c", "s", "k", "w", "g", "t"]
    assign = assign[[*keys, "derate"]].drop_duplicates(keys)
    assign = assign.sort_values(keys).reset_index(drop=True)
    unmet = scenario.demand[["k", "w", "g", "t", "demand_h100e"]].reset_index(drop=True)
    breach = scenario.commitment_periods[["j", "k", "f", "t", "min_it_mw", "penalty"]]
    return {"assign": assign, "unmet": unmet, "breach": breach.reset_index(drop=True)}


def _committed_assign(columns: ScenarioColumns) -> pd.DataFrame:
    """Assign keys of committed (customer, family, period) with no demand there.

    They run the workload with the lowest power factor, in region group 0 (anywhere).
    """
    scenario = columns.scenario
    el = scenario.eligibility
    committed = scenario.commitment_periods[["k", "f", "t"]].drop_duplicates()
    demanded = scenario.demand[["k", "t"]].drop_duplicates()
    committed = committed.merge(demanded, on=["k", "t"], how="left", indicator=True)
    committed = committed[committed["_merge"] == "left_only"][["k", "f", "t"]]
    pf = scenario.power_factor
    w_min = int(np.nanargmin(np.where(np.isnan(pf), np.inf, pf)))
    el_family = el.assign(f=scenario.chip_attr(column_values(el, "c"), "f").astype(np.int64))
    by_commitment = merge(el_family, committed, ["k", "f"]).drop(columns="f")
    by_commitment["w"] = w_min
    by_commitment["g"] = 0
    return by_commitment


def price_unmet(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """unmet_penalty: unmet[k,w,g,p] x unmet_penalty_usd_per_h100e_period of the customer.

    Cost mode only: in the margin mode unserved demand earns nothing instead
    (:mod:`optimizer.components.revenue`).
    """
    if builder.objective == "margin":
        return
    scenario, unmet = columns.scenario, columns.unmet
    penalty = scenario.customers["unmet_penalty_usd_per_h100e_period"].reindex(unmet["k"])
    builder.add_cost(
        scenario.index, "unmet_penalty", unmet["col"], unmet["t"], penalty.to_numpy(dtype=float)
    )


def price_breach(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """breach_penalty: breach[j,p] x breach_penalty_usd_per_mw of the commitment row."""
    scenario, breach = columns.scenario, columns.breach
    penalty = column_values(breach, "penalty", dtype=float)
    builder.add_cost(scenario.index, "breach_penalty", breach["col"], breach["t"], penalty)


COMPONENT = Component(
    "demand",
    columns=(
        ColumnKind("assign", "c/s/k/w/g/t", "chips", "chips at a site serving a customer"),
        ColumnKind("unmet", "k/w/g/t", "H100e", "demand left unserved"),
        ColumnKind("breach", "j/t", "MW", "MW short on a commitment row"),
    ),
    families=FAMILIES,
    costs=(
        CostTerm(
            "unmet_penalty",
            "penalty",
            price_unmet,
            "unmet H100e x unmet_penalty_usd_per_h100e_period",
        ),
        CostTerm(
            "breach_penalty", "penalty", price_breach, "breach MW x breach_penalty_usd_per_mw"
        ),
    ),
)
