"""Contract terms: take-or-pay floors, capacity reservations and service tiers (component).

The terms come from the ``contract_terms`` table, expanded per period with the
escalated contract price ``price[k,w,p]`` (:mod:`optimizer.components.contract_inputs`;
the price also drives the revenue term, :mod:`optimizer.components.revenue`). All
three families are soft: a priced shortfall column keeps every model feasible.

* ``take_or_pay`` (H100e): sum_{c,s,g} assign[c,s,k,w,g,p] * h100e[c,w] * derate[k,c]
  + sum_g unmet[k,w,g,p] + top_short[k,w,p] >= floor[k,w,p]. The provider holds the
  floor (chips held for the customer count even beyond its demand); demand it leaves
  unserved already loses its price, so ``top_short`` is the unused floor not held,
  refunded at ``price[k,w,p]`` (term ``take_or_pay_refund``). The customer pays for the
  floor whether it uses it or not: in the margin mode the constant
  ``price[k,w,p] * max(0, floor - demand[k,w,p])`` is billed (term
  ``take_or_pay_billing``), so a floor above a quarter's demand earns its price when
  held, nothing when not.
* ``reservation`` (H100e): sum assign * h100e * derate + res_short[k,w,p] >=
  reserved[k,w,p]; the margin mode bills ``fee * reserved`` (term ``reservation_fee``)
  and refunds ``fee * res_short`` (term ``reservation_refund``).
* ``sla_tier`` (H100e): sla_short[k,w,p] - sum_g unmet[k,w,g,p] >= (tier - 1) *
  demand[k,w,p], i.e. served + sla_short >= tier * demand; each H100e served below the
  tier costs ``sla_credit_usd_per_h100e`` (term ``sla_credit``).

Refunds, credits and billing are revenue (cash kind ``revenue``: given back or
earned) and the families are built in the margin mode only: the cost mode keeps its
penalty weights (unmet demand, commitment breach) and its plan is unchanged by the
contract terms. One contract row per customer, workload and period
(validation refuses overlapping windows).

The billing constants move with the floor, the demand and the reservation, which a
solver's row dual does not see: :func:`billing_dual_shift` adds their derivative,
``-price`` per H100e of floor and ``+price`` per H100e of demand in a quarter whose
demand is below its floor (one more H100e asked is one H100e less billed unused), and
``-fee`` per H100e reserved, so the reported shadow prices of ``take_or_pay``,
``reservation`` and ``demand_balance`` are the objective's full derivative (with the
revenue constant's, :func:`~optimizer.components.revenue.revenue_dual_shift`). At a
floor exactly equal to the demand the derivative has a kink; the shift is then 0 (the
derivative of raising the demand, and of lowering the floor).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.component import ColumnKind, Component, CostTerm
from optimizer.components.contract_inputs import contract_periods
from optimizer.components.plan_context import PlanContext
from optimizer.components.records import ConstraintFamily, ResultRows
from optimizer.components.scenario import ScenarioColumns
from optimizer.lp.builder import ModelBuilder
from optimizer.lp.frames import column_values
from optimizer.lp.grouping import sums_at, value_at, values_at
from optimizer.lp.join import merge
from optimizer.lp.violations import violations

__all__ = [
    "COMPONENT",
    "FAMILIES",
    "billing_dual_shift",
    "canonical_unmet",
    "coded_contracts",
    "held_h100e",
]

_KEYS = ["k", "w", "t"]
#: Row keys of the contract families (the result table's customer, workload, period).
_ROW_KEYS = ("k", "w", "t")
#: (column kind, term column, family) of each shortfall.
SHORTS = (
    ("take_or_pay_short", "take_or_pay_h100e", "take_or_pay"),
    ("reservation_short", "reservation_h100e", "reservation"),
    ("sla_short", "sla_served_share", "sla_tier"),
)


def coded_contracts(columns: ScenarioColumns) -> pd.DataFrame:
    """Return the scenario's contract periods with codes ``k, w, t`` and ``demand_h100e``.

    Computed once per scenario (kept in ``columns.extra["contract_periods"]``).
    """
    if "contract_periods" in columns.extra:
        return columns.extra["contract_periods"]
    scenario = columns.scenario
    cp = contract_periods(scenario.dataset)
    k_of = pd.Series(scenario.customers.index, index=column_values(scenario.customers, "customer"))
    w_of = {w: i for i, w in enumerate(scenario.workload_names)}
    cp = cp.assign(
        k=k_of.reindex(column_values(cp, "customer")).to_numpy(),
        w=cp["workload"].map(w_of).to_numpy(),
    )
    cp = cp.dropna(subset=["k", "w"]).astype({"k": np.int64, "w": np.int64, "t": np.int64})
    dm = scenario.demand
    cp["demand_h100e"] = sums_at(
        [cp[c].to_numpy() for c in _KEYS], [dm[c].to_numpy() for c in _KEYS], dm["demand_h100e"]
    )
    cp = cp.reset_index(drop=True)
    columns.extra["contract_periods"] = cp
    return cp


def _short_rows(cp: pd.DataFrame, kind: str) -> pd.DataFrame:
    """Contract periods that need a ``kind`` shortfall column (a positive term)."""
    if kind == "sla_short":
        keep = (cp["sla_served_share"] > 0) & (cp["demand_h100e"] > 0)
    else:
        term = dict((s[0], s[1]) for s in SHORTS)[kind]
        keep = cp[term] > 0
    return cp[keep.to_numpy(dtype=bool)].reset_index(drop=True)


def add_contract_columns(builder: ModelBuilder, columns: ScenarioColumns, kind: str) -> None:
    """Add the ``kind`` shortfall columns [k,w,p] (H100e) where a contract term needs one.

    Margin mode only: the cost mode keeps today's penalty weights (no contract rows).
    """
    if builder.objective != "margin":
        # no contract rows, and no read of the prices (a cost-mode batch keeps its base
        # model across a price change: optimizer.plan.model.LP_UNREAD_COLUMNS)
        rows = pd.DataFrame({c: pd.Series([], dtype=np.int64) for c in _KEYS})
    else:
        rows = _short_rows(coded_contracts(columns), kind)
    cols = builder.add_vars(kind, columns.scenario.index, rows[_KEYS])
    columns.extra[kind] = rows.assign(col=cols)


def held_h100e(columns: ScenarioColumns, rows: pd.DataFrame) -> pd.DataFrame:
    """Service columns of each row's (k, w, t) with their H100e coefficient (after derate).

    Returns ``row, col, coef``: every assign (or serve) column of the customer's
    workload in the period, any region group.
    """
    scenario = columns.scenario
    m = merge(columns.customer_work, rows[[*_KEYS, "row_id"]], _KEYS)
    workload = np.asarray(scenario.workload_names, dtype=object)[column_values(m, "w")]
    c = column_values(m, "c")
    training = scenario.chip_attr(c, "training_h100e").astype(float)
    inference = scenario.chip_attr(c, "inference_h100e").astype(float)
    h = np.where(workload == "training", training, inference) * column_values(m, "derate")
    return pd.DataFrame(
        {"row": column_values(m, "row_id"), "col": column_values(m, "col"), "coef": h}
    )


def _add_family(
    builder: ModelBuilder,
    columns: ScenarioColumns,
    kind: str,
    rhs: np.ndarray,
    held: bool,
    unmet_coef: float,
) -> None:
    """Rows ``held * sum H100e + unmet_coef * sum_g unmet + short >= rhs`` per short row."""
    rows = columns.extra.get(kind)
    if rows is None or rows.empty:
        return
    family = dict((s[0], s[2]) for s in SHORTS)[kind]
    ids = builder.add_rows(family, columns.scenario.index, rows, ">=", rhs)
    builder.add_terms(ids, rows["col"], 1.0)
    keyed = rows[_KEYS].assign(row_id=ids)
    if held:
        h = held_h100e(columns, keyed)
        builder.add_terms(h["row"], h["col"], h["coef"])
    if unmet_coef:
        m = merge(columns.unmet, keyed, _KEYS)
        builder.add_terms(m["row_id"], m["col"], unmet_coef)


def define_take_or_pay(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Take-or-pay: sum assign*h100e*derate + sum_g unmet + top_short[k,w,p] >= floor[k,w,p]."""
    rows = columns.extra.get("take_or_pay_short", pd.DataFrame())
    rhs = column_values(rows, "take_or_pay_h100e", dtype=float) if len(rows) else np.zeros(0)
    _add_family(builder, columns, "take_or_pay_short", rhs, True, 1.0)


def define_reservation(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Reservation: sum assign * h100e * derate + res_short[k,w,p] >= reserved_h100e[k,w,p]."""
    rows = columns.extra.get("reservation_short", pd.DataFrame())
    rhs = column_values(rows, "reservation_h100e", dtype=float) if len(rows) else np.zeros(0)
    _add_family(builder, columns, "reservation_short", rhs, True, 0.0)


def define_sla_tier(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """SLA tier: sla_short[k,w,p] - sum_g unmet[k,w,g,p] >= (tier[k,w,p] - 1) * demand[k,w,p]."""
    rows = columns.extra.get("sla_short", pd.DataFrame())
    if not len(rows):
        return
    tier = column_values(rows, "sla_served_share", dtype=float)
    rhs = (tier - 1.0) * column_values(rows, "demand_h100e", dtype=float)
    _add_family(builder, columns, "sla_short", rhs, False, -1.0)


def _price_short(
    builder: ModelBuilder, columns: ScenarioColumns, kind: str, term: str, coef: str
) -> None:
    """``term``: the ``kind`` shortfall x the contract period's ``coef`` column (USD/H100e)."""
    rows = columns.extra.get(kind)
    if rows is None or rows.empty:
        return
    builder.add_cost(
        columns.scenario.index, term, rows["col"], rows["t"], rows[coef].to_numpy(dtype=float)
    )


def price_take_or_pay_refund(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """take_or_pay_refund: top_short[k,w,p] x price[k,w,p] (USD, a revenue given back)."""
    _price_short(
        builder, columns, "take_or_pay_short", "take_or_pay_refund", "price_usd_per_h100e_period"
    )


def price_reservation_refund(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """reservation_refund: res_short[k,w,p] x reservation_fee_usd_per_h100e_period."""
    _price_short(
        builder,
        columns,
        "reservation_short",
        "reservation_refund",
        "reservation_fee_usd_per_h100e_period",
    )


def price_sla_credit(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """sla_credit: sla_short[k,w,p] x sla_credit_usd_per_h100e (USD, a revenue given back)."""
    _price_short(builder, columns, "sla_short", "sla_credit", "sla_credit_usd_per_h100e")


def price_take_or_pay_billing(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """take_or_pay_billing (margin mode): -price[k,w,p] x max(0, floor - demand[k,w,p])."""
    if builder.objective != "margin":
        return
    cp = coded_contracts(columns)
    if cp.empty:
        return
    unused = np.maximum(cp["take_or_pay_h100e"] - cp["demand_h100e"], 0.0).to_numpy(dtype=float)
    value = -unused * column_values(cp, "price_usd_per_h100e_period", dtype=float)
    builder.add_const(columns.scenario.index, "take_or_pay_billing", cp["t"], value)


def billing_dual_shift(model: Any) -> np.ndarray:
    """Return what the contracts' billing constants add to each row's d(objective)/d(rhs).

    The margin objective holds, per contract quarter, ``-disc[t] * price[k,w,t] *
    max(0, floor - demand)`` (term ``take_or_pay_billing``) and ``-disc[t] * fee[k,w,t]
    * reserved`` (term ``reservation_fee``), which a solver's row dual does not see.
    Where the floor is above the quarter's demand, one more H100e of floor bills one
    more (``-weight * disc * price`` on the ``take_or_pay`` row) and one more H100e of
    demand bills one less unused (``+weight * disc * price`` on each of the quarter's
    ``demand_balance`` rows); one more H100e reserved bills its fee (``-weight * disc *
    fee`` on the ``reservation`` row). Elsewhere, and in the cost mode, 0.

    Parameters
    ----------
    model : PlanningModel
        The built model (``objective``, ``constraints``, ``codes``, ``datasets``,
        ``weights``).

    Returns
    -------
    ndarray, shape (n_constraints,)
        USD (discounted, weighted) per H100e of the row's right-hand side.
    """
    con = model.constraints
    shift = np.zeros(len(con))
    if model.objective != "margin":
        return shift
    family = con["family"].to_numpy()
    sel = np.isin(family, ("take_or_pay", "demand_balance", "reservation"))
    if not sel.any():
        return shift
    rows = con.loc[sel]
    k = np.asarray(model.codes["k"], dtype=object)[column_values(rows, "k")]
    w = np.asarray(model.codes["w"], dtype=object)[column_values(rows, "w")]
    t, scenario, fam = column_values(rows, "t"), column_values(rows, "scenario"), family[sel]
    for i, ds in enumerate(model.datasets):
        m = scenario == i
        cp = contract_periods(ds)
        if not m.any() or cp.empty:
            continue
        at = [column_values(cp, "customer"), column_values(cp, "workload"), column_values(cp, "t")]
        got = values_at([k[m], w[m], t[m]], at, _billing_rates(ds, cp, at))
        per_row = np.select(
            [fam[m] == "take_or_pay", fam[m] == "demand_balance"],
            [-got["unused_price"], got["unused_price"]],
            -got["fee"],
        )
        disc = ds.table("periods")["discount_factor"].to_numpy(dtype=float)[t[m]]
        shift[np.flatnonzero(sel)[m]] = model.weights[i] * disc * np.nan_to_num(per_row)
    return shift


def _billing_rates(ds: Any, cp: pd.DataFrame, at: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Per contract quarter: the price where the floor is above demand (else 0), the fee."""
    dm = ds.table("demand")
    t_of = {p: i for i, p in enumerate(ds.periods)}
    demand = sums_at(
        at,
        [
            column_values(dm, "customer"),
            column_values(dm, "workload"),
            np.asarray([t_of[p] for p in column_values(dm, "period")], dtype=np.int64),
        ],
        column_values(dm, "demand_h100e", dtype=float),
    )
    unused = column_values(cp, "take_or_pay_h100e", dtype=float) - demand
    price = column_values(cp, "price_usd_per_h100e_period", dtype=float)
    fee = column_values(cp, "reservation_fee_usd_per_h100e_period", dtype=float)
    return {"unused_price": np.where(unused > 0, price, 0.0), "fee": fee}


def canonical_unmet(model: Any, x: np.ndarray) -> np.ndarray:
    """Return ``x`` with unmet H100e that serve no demand moved to the take-or-pay shortfall.

    In the margin mode an H100e of unmet demand loses the customer's price and counts
    towards a take-or-pay floor; an H100e of floor not held is refunded at the same
    price. So where the floor is above what is held, unmet beyond what the demand row
    needs (demand already served, or unmet above the demand) and the refund cost the
    same: the LP is indifferent, and a solver could report 800 unmet of 500 asked, or
    100 unmet of a demand served in full, with the floor read as covered. Here each
    unmet column gives up its excess over its demand row's need to the shortfall column
    of its (customer, workload, period), where both cost the same (the objective, every
    row and the floor row's sum unchanged): unmet is then the demand not served.

    Parameters
    ----------
    model : PlanningModel
    x : ndarray, shape (n_variables,)
        An optimal column vector.

    Returns
    -------
    ndarray, shape (n_variables,)
        ``x`` itself when nothing moves, else a moved copy.
    """
    if model.objective != "margin":
        return x
    var = model.variables
    kind = var["kind"].to_numpy()
    u, s = np.flatnonzero(kind == "unmet"), np.flatnonzero(kind == "take_or_pay_short")
    if not len(u) or not len(s):
        return x
    key = var[["scenario", "k", "w", "t"]].to_numpy(dtype=np.int64)
    s_of = {tuple(key[c]): c for c in s}
    short = np.array([s_of.get(tuple(key[c]), -1) for c in u], dtype=np.int64)
    cost = var["cost"].to_numpy(dtype=float)
    same = (short >= 0) & np.isclose(cost[u], cost[np.maximum(short, 0)], rtol=1e-12, atol=0.0)
    row = _demand_row(model, u)
    keep = same & (row >= 0)
    if not keep.any():
        return x
    con = model.constraints
    act = model.matrix @ x
    excess = act[row[keep]] - con["rhs"].to_numpy(dtype=float)[row[keep]]
    move = np.clip(np.minimum(x[u[keep]], excess), 0.0, None)
    if not (move > 0).any():
        return x
    out = x.copy()
    out[u[keep]] -= move
    np.add.at(out, short[keep], move)
    return out


def _demand_row(model: Any, cols: np.ndarray) -> np.ndarray:
    """Return the demand_balance row of each unmet column (-1: it is in other rows too).

    A column is moved only when its rows are its demand row, its take-or-pay row and its
    service tier (where less unmet is never infeasible).
    """
    family = model.constraints["family"].to_numpy()
    csc = model.matrix.tocsc()
    out = np.full(len(cols), -1, dtype=np.int64)
    for i, c in enumerate(cols):
        rows = csc.indices[csc.indptr[c] : csc.indptr[c + 1]]
        fams = family[rows]
        if set(fams) <= {"demand_balance", "take_or_pay", "sla_tier"}:
            hit = rows[fams == "demand_balance"]
            out[i] = hit[0] if len(hit) == 1 else -1
    return out


def price_reservation_fee(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """reservation_fee (margin mode): -reserved_h100e[k,w,p] x fee per H100e-quarter."""
    if builder.objective != "margin":
        return
    cp = coded_contracts(columns)
    if cp.empty:
        return
    fee = cp["reservation_h100e"] * cp["reservation_fee_usd_per_h100e_period"]
    builder.add_const(columns.scenario.index, "reservation_fee", cp["t"], -fee.to_numpy(float))


def contract_quantities(inputs: PlanContext) -> pd.DataFrame:
    """Contract periods with demand, held, unmet and the shortfalls of one plan (H100e).

    ``held_h100e`` = assigned H100e after derate of the customer's workload (all sites,
    all region groups); ``unmet_h100e`` summed over region groups; the shortfall
    columns read the plan's ``*_short`` values (0 where none) and ``*_short_built``
    says whether the family has a row there (the checker checks only those: the cost
    objective builds none). Made once per plan context (the contracts table and the
    three contract checks read it); each caller gets its own shallow copy.
    """
    made = inputs.once("contract_quantities", lambda: _contract_quantities(inputs))
    return made.copy(deep=False)


def _contract_quantities(inputs: PlanContext) -> pd.DataFrame:
    """Compute :func:`contract_quantities`."""
    cp = contract_periods(inputs.dataset)
    if cp.empty:  # no contract: the columns, no row (no plan value is read)
        return _no_quantities(cp)
    keys = ["customer", "workload", "period"]
    target = [cp[k].to_numpy() for k in keys]
    dm = inputs.dataset.table("demand")
    cp["demand_h100e"] = sums_at(target, [dm[k].to_numpy() for k in keys], dm["demand_h100e"])
    a, chips = inputs.assigned, inputs.chips
    per = np.where(
        column_values(a, "workload") == "training",
        chips["training_h100e"].reindex(a["chip"]).to_numpy(dtype=float),
        chips["inference_h100e"].reindex(a["chip"]).to_numpy(dtype=float),
    )
    h = column_values(a, "value") * per * a["derate"].fillna(0.0).to_numpy(dtype=float)
    cp["held_h100e"] = sums_at(target, [a[k].to_numpy() for k in keys], h)
    un = inputs.frames["unmet"]
    cp["unmet_h100e"] = sums_at(target, [un[k].to_numpy() for k in keys], un["value"])
    for kind, _, _ in SHORTS:
        f = inputs.frames.get(kind)
        got = np.full(len(cp), np.nan)
        if f is not None and len(f):
            got = value_at(target, [f[k].to_numpy() for k in keys], column_values(f, "value"))
        cp[kind + "_h100e"] = np.where(np.isnan(got), 0.0, got)
        cp[kind + "_built"] = ~np.isnan(got)  # the family has a row here (margin mode)
    return cp


def _no_quantities(cp: pd.DataFrame) -> pd.DataFrame:
    """:func:`contract_quantities` of a dataset without contract periods (no row)."""
    cols: dict[str, np.ndarray] = {
        "demand_h100e": np.zeros(0),
        "held_h100e": np.zeros(0),
        "unmet_h100e": np.zeros(0),
    }
    for kind, _, _ in SHORTS:
        cols[kind + "_h100e"] = np.zeros(0)
        cols[kind + "_built"] = np.zeros(0, dtype=bool)
    return cp.assign(**cols)


def _text(cp: pd.DataFrame) -> pd.Series:
    """``customer/workload,period`` keys of contract periods."""
    return cp["customer"] + "/" + cp["workload"] + "," + cp["period"]


def check_take_or_pay(inputs: PlanContext) -> pd.DataFrame:
    """Held H100e + unmet + take-or-pay shortfall >= the floor, per contract period.

    Unmet H100e count up to the demand only: unserved demand beyond the demand is no
    demand (the model bounds unmet by the demand in the margin mode).
    """
    cp = contract_quantities(inputs)
    cp = cp[column_values(cp, "take_or_pay_short_built", dtype=bool)].reset_index(drop=True)
    unmet = np.minimum(cp["unmet_h100e"], cp["demand_h100e"])
    lhs = cp["held_h100e"] + unmet + cp["take_or_pay_short_h100e"]
    return violations(
        "take_or_pay", _text(cp), lhs, cp["take_or_pay_h100e"], ">=", inputs.tolerance
    )


def check_reservation(inputs: PlanContext) -> pd.DataFrame:
    """Held H100e + reservation shortfall >= the reserved H100e, per contract period."""
    cp = contract_quantities(inputs)
    cp = cp[column_values(cp, "reservation_short_built", dtype=bool)].reset_index(drop=True)
    lhs = cp["held_h100e"] + cp["reservation_short_h100e"]
    return violations(
        "reservation", _text(cp), lhs, cp["reservation_h100e"], ">=", inputs.tolerance
    )


def check_sla_tier(inputs: PlanContext) -> pd.DataFrame:
    """Demand - unmet + SLA shortfall >= tier x demand, per contract period with a tier."""
    cp = contract_quantities(inputs)
    cp = cp[column_values(cp, "sla_short_built", dtype=bool)].reset_index(drop=True)
    lhs = cp["demand_h100e"] - cp["unmet_h100e"] + cp["sla_short_h100e"]
    rhs = cp["sla_served_share"] * cp["demand_h100e"]
    return violations("sla_tier", _text(cp), lhs, rhs, ">=", inputs.tolerance)


FAMILIES = (
    ConstraintFamily(
        "take_or_pay",
        "H100e",
        define_take_or_pay,
        check_take_or_pay,
        "",
        "H100e",
        ("k", "w"),
        soft=True,
        result=ResultRows("contracts", "shadow_price_take_or_pay_usd_per_h100e", _ROW_KEYS),
        summary_words="take-or-pay floor of {0} {1}",
    ),
    ConstraintFamily(
        "reservation",
        "H100e",
        define_reservation,
        check_reservation,
        "",
        "H100e",
        ("k", "w"),
        soft=True,
        result=ResultRows("contracts", "shadow_price_reservation_usd_per_h100e", _ROW_KEYS),
        summary_words="capacity reservation of {0} {1}",
    ),
    ConstraintFamily(
        "sla_tier",
        "H100e",
        define_sla_tier,
        check_sla_tier,
        "",
        "H100e",
        ("k", "w"),
        soft=True,
        result=ResultRows("contracts", "shadow_price_sla_usd_per_h100e", _ROW_KEYS),
        summary_words="service tier of {0} {1}",
    ),
)


def _kind(name: str, description: str) -> ColumnKind:
    """One shortfall column kind ``k/w/t`` in H100e, added by its own hook."""
    return ColumnKind(
        name, "k/w/t", "H100e", description, add=partial(add_contract_columns, kind=name)
    )


COMPONENT = Component(
    "contracts",
    columns=(
        _kind("take_or_pay_short", "take-or-pay floor not held (refunded at the price)"),
        _kind("reservation_short", "reserved H100e not held (fee refunded)"),
        _kind("sla_short", "H100e served below the service tier (credited)"),
    ),
    families=FAMILIES,
    costs=(
        CostTerm(
            "take_or_pay_refund",
            "revenue",
            price_take_or_pay_refund,
            "take-or-pay floor not held (H100e) x the contract price",
        ),
        CostTerm(
            "reservation_refund",
            "revenue",
            price_reservation_refund,
            "reserved H100e not held x reservation_fee_usd_per_h100e_period",
        ),
        CostTerm(
            "sla_credit",
            "revenue",
            price_sla_credit,
            "H100e served below the tier x sla_credit_usd_per_h100e",
        ),
        CostTerm(
            "take_or_pay_billing",
            "revenue",
            price_take_or_pay_billing,
            "margin mode: -(floor - demand, when positive) H100e x the contract price "
            "(the floor billed whether used or not)",
        ),
        CostTerm(
            "reservation_fee",
            "revenue",
            price_reservation_fee,
            "margin mode: -reserved H100e x reservation_fee_usd_per_h100e_period",
        ),
    ),
)
