"""Region pools: the compact formulation's service columns, pooled where customers share regions.

Why pools
---------
In the compact formulation (:mod:`optimizer.components.region`) a customer's service is
``serve[c,e,k,w,g,p]``, one column per region ``e`` the (customer, demand group) may be
served from. For a (chip, workload, period), many (customer, group) pairs may be served
from the *same set* of regions S (a chip eligible everywhere, demand without a region
list: S = every region with a fleet of the chip). The columns of those pairs are then
again a product, {(customer, group) pairs with set S} x {regions of S}, and are
replaced by its margins where that saves columns:

* ``pool_serve[c,q,k,w,g,p]`` chips of region pool q (the set S) serving customer k's
  demand group g: demand balance and commitments read these like ``serve``
  (:attr:`~optimizer.components.scenario.ScenarioColumns.customer_work`);
* ``pool_draw[c,e,q,w,p]`` chips of region e (a member of q) at work for the pool: the
  region balance reads these like ``serve``
  (sum_{k,g} serve + sum_q pool_draw = sum_{s in e} busy);
* ``pool_balance[c,q,w,p]``: sum_{e in q} pool_draw[c,e,q,w,p] =
  sum_{k,g} pool_serve[c,q,k,w,g,p] (chips).

A group of ``n`` pairs over ``m`` regions is pooled when ``n * m > n + m + 1`` (its
``n * m`` serve columns become ``n + m`` columns and one row); only pairs whose derate is
the same in every region of S are pooled (it always is with today's data: the derate is
per customer and chip). At the large benchmark size this turns 90,740 serve columns into
about 13,000 pool_serve, 3,000 pool_draw and the serve columns left.

Exactness: a compact plan gives a pooled plan of the same cost and rows (pool_serve =
sum_e serve over S, pool_draw = sum_{k,g} serve per region); a pooled plan gives back a
compact plan by the proportional split (:func:`spread_pool_service`):
``serve[c,e,k,w,g,p] = pool_serve[c,q,k,w,g,p] * pool_draw[c,e,q,w,p] / sum_e
pool_draw[c,e,q,w,p]``, whose sum over the regions is the pool service and whose sum
over the pairs is the draw (by the pool balance). The report's per-region service and
its north-west corner split to sites run on that split; the checker verifies the pool
balance and both margins of the split row by row (:func:`check_pool_balance`).
"""

from __future__ import annotations

from collections.abc import MutableMapping

import numpy as np
import pandas as pd

from optimizer.components.plan_context import PlanContext
from optimizer.components.records import ConstraintFamily
from optimizer.components.scenario import ScenarioColumns
from optimizer.lp.builder import ModelBuilder
from optimizer.lp.frames import column_values
from optimizer.lp.frames import frame as object_frame
from optimizer.lp.grouping import Groups, group_sum, key_text
from optimizer.lp.join import merge
from optimizer.lp.violations import equal_violations, violations

#: Keys of one pool balance row: chip, pool, workload, period.
POOL_KEYS = ["c", "q", "w", "t"]
#: Keys of a pooled service (customer, demand group) within a (chip, workload, period).
PAIR_KEYS = ["c", "k", "w", "g", "t"]

#: Separator of the regions in a pool's name (as ``demand.regions`` lists regions).
POOL_SEPARATOR = ";"


def pool_name(regions: list[str]) -> str:
    """Name of the region pool of ``regions``: the names sorted and joined by ";"."""
    return POOL_SEPARATOR.join(sorted(regions))


def pool_keys(
    serve: pd.DataFrame, region_names: tuple[str, ...], pools: MutableMapping[str, int]
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Split compact serve keys into the serve keys kept and the pooled ones.

    Parameters
    ----------
    serve : DataFrame
        Compact serve keys ``c, e, k, w, g, t, derate`` (one row per column).
    region_names : tuple of str
        Region name of each region code ``e``.
    pools : mutable mapping of str to int
        Pool name -> pool code ``q``; new pools are added (codes in order of addition),
        so the codes are shared by the scenarios of one model.

    Returns
    -------
    (DataFrame, DataFrame, DataFrame)
        ``serve`` keys kept (same columns), ``pool_serve`` keys ``c, q, k, w, g, t,
        derate`` and ``pool_draw`` keys ``c, e, q, w, t``; every pooled pair appears
        once in ``pool_serve`` instead of once per region in ``serve``.
    """
    empty_ps = pd.DataFrame({k: pd.Series([], dtype=np.int64) for k in [*PAIR_KEYS, "q"]})
    empty_pd = pd.DataFrame({k: pd.Series([], dtype=np.int64) for k in ["c", "e", "q", "w", "t"]})
    if serve.empty:
        return serve, empty_ps.assign(derate=pd.Series([], dtype=float)), empty_pd
    s = serve.sort_values([*PAIR_KEYS, "e"], kind="stable").reset_index(drop=True)
    key = s[PAIR_KEYS].to_numpy(dtype=np.int64)
    start = np.flatnonzero(np.r_[True, (key[1:] != key[:-1]).any(axis=1)])
    e = column_values(s, "e", dtype=np.int64)
    bits = np.left_shift(np.ones(1, dtype=object), e.astype(object))  # any number of regions
    mask = np.bitwise_or.reduceat(bits, start)
    size = np.diff(np.r_[start, len(s)])
    derate = column_values(s, "derate", dtype=float)
    same = np.minimum.reduceat(derate, start) == np.maximum.reduceat(derate, start)
    pairs = s.loc[start, PAIR_KEYS].reset_index(drop=True)
    pairs["mask"] = mask
    pairs["m"] = size
    pairs["derate"] = derate[start]
    ok = same & (size >= 2)
    group = pairs.loc[ok, ["c", "w", "t", "mask"]]
    n = group.groupby(["c", "w", "t", "mask"], sort=False)["c"].transform("size").to_numpy()
    pooled = np.zeros(len(pairs), bool)
    m = size[ok]
    pooled[np.flatnonzero(ok)] = n * m > n + m + 1
    if not pooled.any():
        return serve, empty_ps.assign(derate=pd.Series([], dtype=float)), empty_pd
    q_of = {}
    for mk in dict.fromkeys(pairs.loc[pooled, "mask"]):
        bits_set = [i for i in range(int(mk).bit_length()) if (int(mk) >> i) & 1]
        q_of[mk] = pools.setdefault(pool_name([region_names[i] for i in bits_set]), len(pools))
    ps = pairs.loc[pooled].reset_index(drop=True)
    ps["q"] = np.array([q_of[mk] for mk in ps["mask"]], dtype=np.int64)
    row_pooled = np.repeat(pooled, size)
    kept = s.loc[~row_pooled].sort_values(["c", "e", "k", "w", "g", "t"]).reset_index(drop=True)
    q_rows = np.repeat(column_values(ps, "q"), column_values(ps, "m", dtype=np.int64))
    draw = s.loc[row_pooled, ["c", "e", "w", "t"]].assign(q=q_rows)
    draw = draw.drop_duplicates().sort_values(["c", "q", "e", "w", "t"]).reset_index(drop=True)
    pool_serve = ps[["c", "q", "k", "w", "g", "t", "derate"]].sort_values(
        ["c", "q", "k", "w", "g", "t"]
    )
    return kept[serve.columns], pool_serve.reset_index(drop=True), draw[["c", "e", "q", "w", "t"]]


def define_pool_balance(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Pool balance: sum_{e in q} pool_draw[c,e,q,w,p] - sum_{k,g} pool_serve[c,q,k,w,g,p] == 0."""
    serve, draw = columns.pool_serve, columns.pool_draw
    if not columns.compact or serve.empty:
        return
    keys = serve[POOL_KEYS].drop_duplicates().sort_values(POOL_KEYS).reset_index(drop=True)
    rows = builder.add_rows("pool_balance", columns.scenario.index, keys, "==", np.zeros(len(keys)))
    row_of = keys.assign(row=rows)
    m = merge(draw, row_of, POOL_KEYS)
    builder.add_terms(m["row"], m["col"], 1.0)
    m = merge(serve, row_of, POOL_KEYS)
    builder.add_terms(m["row"], m["col"], -1.0)


# ---------------------------------------------------------------- back to per-region service
def spread_pool_service(pool_serve: pd.DataFrame, pool_draw: pd.DataFrame) -> pd.DataFrame:
    """Per-region service of the pooled pairs: each pair's chips split like the pool's draw.

    Parameters
    ----------
    pool_serve : DataFrame
        ``chip, pool, customer, workload, demand_regions, period, value`` (chips).
    pool_draw : DataFrame
        ``chip, region, pool, workload, period, value`` (chips).

    Returns
    -------
    DataFrame
        ``chip, region, customer, workload, demand_regions, period, value, pool``:
        ``value = pool_serve * pool_draw / (sum of the pool's draw)``, positive rows
        only (a pool that draws nothing serves nothing).
    """
    cols = ["chip", "region", "customer", "workload", "demand_regions", "period", "value", "pool"]
    ps = pool_serve[column_values(pool_serve, "value") > 0]
    pdw = pool_draw[column_values(pool_draw, "value") > 0]
    if ps.empty or pdw.empty:
        empty = {c: np.array([], dtype=float if c == "value" else object) for c in cols}
        return object_frame(empty)
    g = ["chip", "pool", "workload", "period"]
    total = pdw.groupby(g, sort=False)["value"].sum().rename("total").reset_index()
    d = merge(pdw, total, g)
    d["share"] = column_values(d, "value", dtype=float) / column_values(d, "total", dtype=float)
    m = merge(ps, d[[*g, "region", "share"]], g)
    value = column_values(m, "value", dtype=float) * column_values(m, "share", dtype=float)
    keep = value > 0
    return object_frame(
        {
            "chip": column_values(m, "chip")[keep],
            "region": column_values(m, "region")[keep],
            "customer": column_values(m, "customer")[keep],
            "workload": column_values(m, "workload")[keep],
            "demand_regions": column_values(m, "demand_regions")[keep],
            "period": column_values(m, "period")[keep],
            "value": value[keep],
            "pool": column_values(m, "pool")[keep],
        }
    )


# ------------------------------------------------------------------------- the checker
def _side_by_side(
    family: str, x: pd.DataFrame, y: pd.DataFrame, keys: list[str], prefix: str, tol: float
) -> list[pd.DataFrame]:
    """Check the sums of ``value`` by ``keys`` of two frames equal (0 where a key is absent).

    What ``x.groupby(keys).sum()`` and ``y.groupby(keys).sum()`` joined by an outer
    merge give, on integer group codes (:class:`~optimizer.lp.grouping.Groups`).
    """
    nx = len(x)
    groups = Groups(
        [
            np.concatenate([column_values(x, k, dtype=object), column_values(y, k, dtype=object)])
            for k in keys
        ]
    )
    lhs = group_sum(groups.ids[:nx], column_values(x, "value", dtype=float), groups.n)
    rhs = group_sum(groups.ids[nx:], column_values(y, "value", dtype=float), groups.n)

    return equal_violations(family, key_text(groups, len(keys), prefix), lhs, rhs, tol)


def check_pool_balance(inputs: PlanContext) -> pd.DataFrame:
    """Check that a pool draws what it serves and that its split to regions has both margins.

    Per (chip, pool, workload, period): sum pool_draw == sum pool_serve. Per pooled
    (chip, pool, customer, workload, demand group, period): the split serve rows summed
    over the pool's regions == pool_serve. Per (chip, region, pool, workload, period):
    the split serve rows summed over the pairs == pool_draw. Nothing to check for a plan
    without pools.
    """
    ps, pdw = inputs.frames.get("pool_serve"), inputs.frames.get("pool_draw")
    if ps is None or pdw is None or (ps.empty and pdw.empty):
        return violations("pool_balance", pd.Series([], dtype=str), [], [], "<=", 0.0)
    tol = inputs.tolerance
    serve = inputs.frames["serve"]
    if "pool" in serve:
        split = serve[serve["pool"].astype(str).to_numpy() != ""]
    else:
        split = serve.iloc[:0].assign(pool=pd.Series([], dtype=object))
    out: list[pd.DataFrame] = []
    g = ["chip", "pool", "workload", "period"]
    out += _side_by_side("pool_balance", pdw, ps, g, "", tol)
    g = ["chip", "pool", "customer", "workload", "demand_regions", "period"]
    out += _side_by_side("pool_balance", split, ps, g, "split ", tol)
    g = ["chip", "region", "pool", "workload", "period"]
    out += _side_by_side("pool_balance", split, pdw, g, "split ", tol)
    return pd.concat(out, ignore_index=True)


FAMILIES = (
    ConstraintFamily(
        "pool_balance",
        "chips",
        define_pool_balance,
        check_pool_balance,
        "pool balance of {key} in {period} off by {amount} chips",
        "chips",
        ("c", "q", "w"),
        summary_words="{0} {2} chips in the region pool {1}",
    ),
)
