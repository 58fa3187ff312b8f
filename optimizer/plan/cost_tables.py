"""The costs table: each objective term per period, discounted, undiscounted and as cash.

Sums of cost-term and constant rows per (period, term) as pandas' ``groupby`` gives
them (:func:`optimizer.lp.grouping.group_sum`); which rows feed which pair is found
once per model structure. The cash view counts chips when installed, buildings when
decided, retrofits when done, grid upgrades when requested and energy as billed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from optimizer.components.plan_context import PlanContext
from optimizer.components.power_tables import upgrade_requests
from optimizer.components.registry import MappingView, Registry
from optimizer.lp.frames import column_values
from optimizer.lp.frames import frame as object_frame
from optimizer.lp.grouping import group_sum, positions, take
from optimizer.lp.reuse_cache import cached
from optimizer.plan.model import COST_TERMS, PlanningModel

__all__ = ["CASH_KIND", "cost_rows", "costs_table"]


def _cash_kinds(r: Registry) -> dict[str, str]:
    return {term.name: "none" if term.cash == "penalty" else term.cash for term in r.costs}


#: Cash kind of each cost term of the active registry (its record's ``cash``): capex and
#: opex are cash out; revenue is cash in (negative); penalties are not cash (``none``).
CASH_KIND: MappingView[str] = MappingView(lambda r: r.memo("cash_kinds", _cash_kinds))


def costs_table(
    model: PlanningModel, x: np.ndarray, scenario: int, ctx: PlanContext
) -> pd.DataFrame:
    """Build costs: each term per period, discounted as in the objective, and as cash.

    Parameters
    ----------
    model : PlanningModel
    x : ndarray, shape (n_variables,)
        Column values.
    scenario : int
    ctx : PlanContext
        The scenario's plan (its fleet, build_out and power_decisions tables).

    Returns
    -------
    DataFrame
        ``period, term, cost_usd, undiscounted_cost_usd, cash_usd, cash_kind`` (and
        the term's period position ``t``).
    """
    return _with_cash(_costs(model, x, scenario), ctx)


def _upgrade_cash(ctx: PlanContext) -> pd.Series:
    """Grid-upgrade capex paid per decision period (USD), normal and flexible MW alike.

    MW x ``cost_usd_per_mw`` in the period the upgrade is requested: the normal
    requests of ``power_decisions`` (kind ``grid_upgrade``) and the MW taken as
    flexible interconnection (``flexible_interconnection``, priced by the same
    ``grid_upgrades`` row), which the objective rents like a normal request.
    """
    up = upgrade_requests(ctx.table("power_decisions"), ctx.table("flexible_interconnection"))
    cash = column_values(up, "mw", dtype=float) * column_values(up, "capex_usd_per_mw", dtype=float)
    return pd.Series(cash).groupby(column_values(up, "decision_period")).sum()


def _with_cash(costs: pd.DataFrame, ctx: PlanContext) -> pd.DataFrame:
    """Add the undiscounted cash view to the costs table.

    ``cash_usd`` per (period, term): chips at their full ``capex_usd_per_chip`` in
    the period they are installed; buildings at ``build_capex_usd_per_mw`` in the
    period they are decided (construction lead time or not); retrofits at
    ``retrofit_capex_usd_per_mw`` in the period they are done; grid upgrades (normal
    and flexible MW) at ``cost_usd_per_mw`` in the period they are requested; energy as billed
    (undiscounted, initial fleet included); revenue as earned (negative); penalties
    are not cash (0). Initial
    fleet, initial capacity and the pipeline are sunk (no cash).
    """
    chips, sites = ctx.chips, ctx.sites
    fleet = ctx.table("fleet")
    chip_cash = column_values(fleet, "installed_chips") * take(
        column_values(chips, "capex_usd_per_chip", dtype=float),
        positions(chips.index, column_values(fleet, "chip")),
    )
    build = ctx.table("build_out")
    site_pos = positions(sites.index, column_values(build, "site"))

    def per_mw(column: str) -> np.ndarray:
        if column not in sites:
            return np.zeros(len(build))
        v = take(sites[column].to_numpy(dtype=float), site_pos)
        return np.where(np.isnan(v), 0.0, v)

    periods = pd.Index(ctx.periods)

    def by_period(period: pd.Series, values: np.ndarray) -> np.ndarray:
        t = periods.get_indexer(period.to_numpy())
        return group_sum(t[t >= 0], values[t >= 0], len(periods))

    parts = {
        "chip_capex": by_period(fleet["period"], chip_cash),
        "build_capex": by_period(
            build["period"], column_values(build, "build_mw") * per_mw("build_capex_usd_per_mw")
        ),
        "retrofit_capex": by_period(
            build["period"],
            column_values(build, "retrofit_mw") * per_mw("retrofit_capex_usd_per_mw"),
        ),
    }
    term, t = column_values(costs, "term"), column_values(costs, "t", dtype=np.int64)
    cash = np.zeros(len(costs))
    for name, per_period in parts.items():
        sel = term == name
        cash[sel] = per_period[t[sel]]
    upgrade = _upgrade_cash(ctx)
    if len(upgrade):
        sel = term == "grid_upgrade"
        cash[sel] = upgrade.reindex(costs.loc[sel, "period"]).fillna(0.0).to_numpy()
    # on-site power counts as billed (capex rent + fixed + fuel and O&M) and carbon as
    # paid; revenue as earned (negative cash out)
    billed = [name for name, kind in CASH_KIND.items() if kind in ("opex", "revenue")]
    opex = np.isin(term, billed)
    cash[opex] = column_values(costs, "undiscounted_cost_usd")[opex]
    kind = np.array([CASH_KIND.get(str(x), "none") for x in term], dtype=object)
    return costs.assign(cash_usd=cash, cash_kind=kind)


def _costs(model: PlanningModel, x: np.ndarray, scenario: int) -> pd.DataFrame:
    """Cost per (period, term) of :data:`COST_TERMS`, every pair (0 where no term).

    Sums of cost-term and constant rows per (period, term) as pandas' ``groupby``
    gives them (:func:`optimizer.lp.grouping.group_sum`); which rows feed which
    pair is computed once per model structure.
    """
    ds = model.datasets[scenario]
    disc = ds.table("periods")["discount_factor"].to_numpy(dtype=float)
    rows, col, krows, ids = cost_rows(model, scenario)
    ct, k = model.cost_terms, model.const_terms
    v = column_values(ct, "coef", dtype=float)[rows] * np.asarray(x)[col]
    kv = column_values(k, "value", dtype=float)[krows]
    T, n = len(model.periods), len(COST_TERMS)
    vals = np.concatenate([v, kv])
    keep = ids >= 0
    u = group_sum(ids[keep], vals[keep], T * n)
    t = np.repeat(np.arange(T), n)
    return object_frame(
        {
            "t": t,
            "term": np.tile(np.asarray(COST_TERMS, dtype=object), T),
            "u": u,
            "period": np.asarray(model.periods, dtype=object)[t],
            "undiscounted_cost_usd": u,
            "cost_usd": u * disc[t],
        }
    )


def cost_rows(
    model: PlanningModel, scenario: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cost-term rows, their columns, constant rows, and each row's (period, term) pair.

    The pair number is ``t * len(COST_TERMS) + term position`` (-1: a term outside
    :data:`COST_TERMS`), cost-term rows first; once per model structure (a patch
    changes coefficients and constant values, not these rows).
    """

    def make() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        ct, k = model.cost_terms, model.const_terms
        rows = np.flatnonzero((ct["scenario"] == scenario).to_numpy())
        krows = np.flatnonzero((k["scenario"] == scenario).to_numpy())
        term_pos = {term: i for i, term in enumerate(COST_TERMS)}
        n = len(COST_TERMS)

        def pair(frame: pd.DataFrame, sel: np.ndarray) -> np.ndarray:
            pos = np.array([term_pos.get(str(x), -1) for x in column_values(frame, "term")[sel]])
            t = column_values(frame, "t", dtype=np.int64)[sel]
            return np.where(pos >= 0, t * n + pos, -1).astype(np.int64)

        col = column_values(ct, "col", dtype=np.int64)[rows]
        return rows, col, krows, np.concatenate([pair(ct, rows), pair(k, krows)])

    return cached(model, ("cost_rows", scenario), make)
