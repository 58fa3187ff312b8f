"""Region balance: the link of the compact formulation, and its decomposition back to sites.

Why an exact, smaller formulation exists
----------------------------------------
In the reference formulation a column ``assign[c,s,k,w,g,p]`` carries chip x site x
customer x workload x demand region group x period. A customer reaches a site only
through the site's region: eligibility is by region (``eligibility.regions``), the
derate is per (customer, chip) and the same at every site of a region, a demand's
region group ``g`` lists regions, and everything else about a site (hosting, fleet,
cooling, power, water) is about chips, not customers. So, for each (chip, region,
workload, period), the reference columns are the full product {sites of the region
with a fleet} x {(customer, group) pairs that may be served there}. The compact
formulation replaces that product by its two margins:

* ``busy[c,s,w,p]`` chips at work at site s (fleet assignment, energy, water, power
  and the grid read these: :attr:`~optimizer.components.scenario.ScenarioColumns.site_work`);
* ``serve[c,e,k,w,g,p]`` chips of region e serving customer k's demand group g
  (demand balance and commitments read these:
  :attr:`~optimizer.components.scenario.ScenarioColumns.customer_work`);
* ``region_balance[c,e,w,p]``: sum_{k,g} serve[c,e,k,w,g,p] = sum_{s in e} busy[c,s,w,p]
  (chips).

Exactness: a reference plan gives busy = sum_{k,g} assign and serve = sum_{s in e}
assign with the same cost and the same rows; a compact plan gives back a reference
plan by any non-negative split of each region's busy chips over its service
(:func:`split_region_service`), because every (site, customer) pair of the product
has a reference column. :func:`compact_keys` derives both column sets from the
reference keys and verifies the product structure by counting; when it does not hold
(it cannot with today's data rules, see the model docstring) the scenario keeps the
reference columns.

The split (documented decomposition of the report): per (chip, region, workload,
period), the region's sites sorted by busy chips (largest first, then site order) and
its (customer, group) services sorted likewise are laid end to end on one line of
chips and cut where they overlap (the north-west corner rule of a transportation
problem), so each site serves as few customers as possible and each customer sits at
as few sites as possible. The service amounts are scaled by busy total / service
total (1 within the solver's tolerance), so the per-site sums equal ``busy`` exactly.
The checker verifies the balance and both margins of the split row by row
(:func:`check_region_balance`); the fleet-assignment, demand-balance and commitment
checks then run on the split ``assign`` frame.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.plan_context import PlanContext
from optimizer.components.records import ConstraintFamily
from optimizer.components.scenario import ScenarioColumns
from optimizer.lp.builder import ModelBuilder
from optimizer.lp.frames import column_values
from optimizer.lp.frames import frame as object_frame
from optimizer.lp.grouping import (
    Groups,
    as_target,
    group_cumsum,
    group_sum,
    key_text,
    sorted_codes,
)
from optimizer.lp.join import merge
from optimizer.lp.violations import equal_violations, violations

#: Keys of one region balance row: chip, region, workload, period.
BALANCE_KEYS = ["c", "e", "w", "t"]
BUSY_KEYS = ["c", "s", "w", "t"]
SERVE_KEYS = ["c", "e", "k", "w", "g", "t"]
ASSIGN_KEYS = ["c", "s", "k", "w", "g", "t"]

#: Domain columns of the decomposed assign frame
#: (as :func:`optimizer.plan.results.solution_frames`).
ASSIGN_COLUMNS = ["chip", "site", "customer", "workload", "demand_regions", "period", "value"]


def compact_keys(
    assign: pd.DataFrame, site_regions: pd.Series
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame] | None:
    """Busy and serve column keys equivalent to the reference assign keys.

    A (chip, region, workload, period) group with ``n_b`` sites and ``n_s`` services
    has ``n_b * n_s`` reference columns against ``n_b + n_s`` compact columns and one
    region balance row: only groups where ``n_b * n_s > n_b + n_s`` (fewer columns)
    become compact; the others keep their assign columns.

    Parameters
    ----------
    assign : DataFrame
        Reference assign keys ``c, s, k, w, g, t, derate`` (one row per column).
    site_regions : Series
        Region code ``e`` per site code ``s``.

    Returns
    -------
    (DataFrame, DataFrame, DataFrame) or None
        ``busy`` keys ``c, s, w, t, e``, ``serve`` keys ``c, e, k, w, g, t, derate``
        and the assign keys kept (the rows of ``assign`` in the other groups); None
        when the reference keys are not the product of sites and services per
        (chip, region, workload, period), or a derate differs between sites of one
        region: the compact columns would then not be exact.
    """
    a = assign.assign(e=site_regions.reindex(assign["s"]).to_numpy(dtype=np.int64))
    busy = a[[*BUSY_KEYS, "e"]].drop_duplicates(BUSY_KEYS)
    serve = a[[*SERVE_KEYS, "derate"]].drop_duplicates([*SERVE_KEYS, "derate"])
    if serve.duplicated(SERVE_KEYS).any():
        return None
    n_busy = busy.groupby(BALANCE_KEYS).size()
    n_serve = serve.groupby(BALANCE_KEYS).size().reindex(n_busy.index)
    if int((n_busy * n_serve).sum()) != len(a):
        return None
    saves = (n_busy * n_serve > n_busy + n_serve).rename("_saves").reset_index()

    def part(frame: pd.DataFrame, keys: list[str], compact: bool) -> pd.DataFrame:
        f = merge(frame, saves, BALANCE_KEYS)
        f = f[column_values(f, "_saves") == compact].drop(columns="_saves")
        return f.sort_values(keys).reset_index(drop=True)

    kept = part(assign.assign(e=column_values(a, "e")), ASSIGN_KEYS, False).drop(columns="e")
    return part(busy, BUSY_KEYS, True), part(serve, SERVE_KEYS, True), kept


def define_region_balance(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Region balance: sum_{k,g} serve + sum_q pool_draw - sum_{s in e} busy == 0 (chips)."""
    serve, busy, draw = columns.serve, columns.busy, columns.pool_draw
    if not columns.compact or (serve.empty and draw.empty):
        return
    parts = [f[BALANCE_KEYS] for f in (serve, draw) if not f.empty]
    keys = pd.concat(parts).drop_duplicates().sort_values(BALANCE_KEYS).reset_index(drop=True)
    rows = builder.add_rows(
        "region_balance", columns.scenario.index, keys, "==", np.zeros(len(keys))
    )
    row_of = keys.assign(row=rows)
    for supply in (serve, draw):
        if not supply.empty:
            m = merge(supply, row_of, BALANCE_KEYS)
            builder.add_terms(m["row"], m["col"], 1.0)
    m = merge(busy, row_of, BALANCE_KEYS)
    builder.add_terms(m["row"], m["col"], -1.0)


# ------------------------------------------------------------------- the decomposition
def _empty_assign() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series([], dtype=object) for c in ASSIGN_COLUMNS}).astype(
        {"value": float}
    )


def _laid_end_to_end(gid: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of each group largest first (then row order), and each row's end on the line.

    Returns the row order (grouped by ``gid``) and the running sum of ``value`` in it.
    """
    order = np.lexsort((np.arange(len(gid)), -value, gid))  # NaN values last in a group
    return order, group_cumsum(gid[order], value[order])


def split_region_service(
    busy: pd.DataFrame, serve: pd.DataFrame, site_region: pd.Series
) -> pd.DataFrame:
    """Per-site, per-customer assignment from busy chips and regional service.

    North-west corner split, per (chip, region, workload, period) (module docstring),
    on integer group codes (:class:`optimizer.lp.grouping.Groups`; sums and
    running sums as pandas computes them).

    Parameters
    ----------
    busy : DataFrame
        ``chip, site, workload, period, value`` (chips at work per site).
    serve : DataFrame
        ``chip, region, customer, workload, demand_regions, period, value`` (chips of
        the region serving the customer's demand group).
    site_region : Series
        Region of each site, indexed by site.

    Returns
    -------
    DataFrame
        ``chip, site, customer, workload, demand_regions, period, value`` (chips),
        positive rows only: for each site the values sum to its busy chips; for each
        service they sum to its value times busy total / service total of the group.
        Rows are listed by (chip, region, workload, period) group, then along the line.
    """
    b = busy[column_values(busy, "value") > 0].reset_index(drop=True)
    s = serve[column_values(serve, "value") > 0].reset_index(drop=True)
    if b.empty or s.empty:
        return _empty_assign()
    region = site_region.reindex(b["site"]).astype(str).to_numpy()
    nb = len(b)
    groups = Groups(
        [
            np.concatenate([column_values(b, "chip"), column_values(s, "chip")]),
            np.concatenate([region, s["region"].astype(str).to_numpy()]),
            np.concatenate([column_values(b, "workload"), column_values(s, "workload")]),
            np.concatenate([column_values(b, "period"), column_values(s, "period")]),
        ]
    )
    gb, gs = groups.ids[:nb], groups.ids[nb:]
    bv = column_values(b, "value", dtype=float)
    sv = column_values(s, "value", dtype=float)
    total_b = group_sum(gb, bv, groups.n)
    total_s = group_sum(gs, sv, groups.n)
    has_b = np.bincount(gb, minlength=groups.n) > 0
    has_s = np.bincount(gs, minlength=groups.n) > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(has_b & has_s, total_b / np.where(has_s, total_s, 1.0), np.nan)
    sv = sv * scale[gs]
    b_order, b_end = _laid_end_to_end(gb, bv)
    s_order, s_end = _laid_end_to_end(gs, sv)
    return _cut(b, s, gb[b_order], b_order, b_end, gs[s_order], s_order, s_end)


def _next_of_side(side: np.ndarray, gid: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Position of the next row at or after each row on ``side`` in its group (-1: none)."""
    mine = np.flatnonzero(side)
    nxt = np.searchsorted(mine, np.arange(len(side)))
    found = nxt < len(mine)
    pos = np.where(found, mine[np.minimum(nxt, len(mine) - 1)] if len(mine) else 0, 0)
    ok = found & (gid[pos] == gid)
    return np.where(ok, at[pos], -1)


def _cut(
    b: pd.DataFrame,
    s: pd.DataFrame,
    b_gid: np.ndarray,
    b_row: np.ndarray,
    b_end: np.ndarray,
    s_gid: np.ndarray,
    s_row: np.ndarray,
    s_end: np.ndarray,
) -> pd.DataFrame:
    """Overlaps of the busy and service intervals of each group (one row per pair)."""
    gid = np.concatenate([b_gid, s_gid])
    end = np.concatenate([b_end, s_end])
    row = np.concatenate([b_row, s_row])
    is_b = np.concatenate([np.ones(len(b_gid), bool), np.zeros(len(s_gid), bool)])
    o = np.lexsort((end, gid))  # stable: busy before service at equal ends; NaN last
    gid, end, row, is_b = gid[o], end[o], row[o], is_b[o]
    # the piece ending at each breakpoint lies in the next busy and the next service
    # interval ending at or after it
    b_at = _next_of_side(is_b, gid, row)
    s_at = _next_of_side(~is_b, gid, row)
    first = np.ones(len(gid), bool)
    first[1:] = gid[1:] != gid[:-1]
    start = np.concatenate([[0.0], end[:-1]])
    start = np.where(first | np.isnan(start), 0.0, start)
    value = end - start
    value = np.where(value < 0, 0.0, value)  # NaN stays NaN (and is dropped next)
    keep = (b_at >= 0) & (s_at >= 0) & (value > 0)
    bi, si, value = b_at[keep], s_at[keep], value[keep]
    if not len(value):
        return _empty_assign()
    cols = {
        "chip": column_values(b, "chip")[bi],
        "site": column_values(b, "site")[bi],
        "customer": column_values(s, "customer")[si],
        "workload": column_values(b, "workload")[bi],
        "demand_regions": column_values(s, "demand_regions")[si],
        "period": column_values(b, "period")[bi],
    }
    # one row per (site, customer) pair in order of first appearance, pieces summed
    pair = Groups(list(cols.values()))
    _, first_at = np.unique(pair.ids, return_index=True)
    rank = np.empty(pair.n, dtype=np.int64)
    rank[np.argsort(first_at, kind="stable")] = np.arange(pair.n)
    ids = rank[pair.ids]
    rows = np.sort(first_at)
    out = {c: v[rows] for c, v in cols.items()}
    out["value"] = group_sum(ids, value, pair.n)
    return object_frame(out)[ASSIGN_COLUMNS]


# ------------------------------------------------------------------------- the checker
def check_region_balance(inputs: PlanContext) -> pd.DataFrame:
    """Service of a region = its sites' busy chips, and the split assign has both margins.

    Per (chip, region, workload, period): sum serve == sum busy over the region's
    sites. Per (chip, site, workload, period): sum of the split assign == busy. Per
    (chip, region, customer, workload, demand group, period): sum of the split assign
    over the region's sites == serve. Nothing to check for a reference-formulation
    plan (no busy or serve values). Sums by group as pandas computes them
    (:mod:`optimizer.lp.grouping`).
    """
    busy, serve = inputs.frames.get("busy"), inputs.frames.get("serve")
    if busy is None or serve is None or (busy.empty and serve.empty):
        return violations("region_balance", pd.Series([], dtype=str), [], [], "<=", 0.0)
    region = inputs.sites["region"].astype(str)
    tol = inputs.tolerance
    col = _Columns(busy, serve, inputs.frames["assign"], region)
    g = ["chip", "region", "workload", "period"]
    # the split rows (other groups keep their assign columns)
    kept = col.split_rows(g)
    out: list[pd.DataFrame] = []
    rb = "region_balance"
    out += equal_violations(rb, *_outer(col, ("serve", "busy"), g, None), tol)
    g = ["chip", "site", "workload", "period"]
    out += equal_violations(rb, *_outer(col, ("assign", "busy"), g, kept, "split "), tol)
    g = ["chip", "region", "customer", "workload", "demand_regions", "period"]
    out += equal_violations(rb, *_outer(col, ("assign", "serve"), g, kept, "split "), tol)
    return pd.concat(out, ignore_index=True)


class _Columns:
    """Key columns and values of busy, serve and assign (region added from the site)."""

    def __init__(
        self, busy: pd.DataFrame, serve: pd.DataFrame, assign: pd.DataFrame, region: pd.Series
    ) -> None:
        self.frames = {"busy": busy, "serve": serve, "assign": assign}
        self._site_region = region
        self._vocab: dict[str, tuple[dict[str, np.ndarray], np.ndarray]] = {}

    def _piece(self, kind: str, name: str) -> Any:
        """Column ``name`` of ``kind``: a Series, or (codes, values) for a site's region."""
        if name != "region" or kind == "serve":
            return self.frames[kind][name]
        (site,), sites = sorted_codes([self.frames[kind]["site"]])
        region = self._site_region
        return site, region.reindex(as_target(region.index, sites)).to_numpy()  # of each site

    def codes(self, kind: str, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Sorted codes of column ``name`` of ``kind`` and the values they index.

        One vocabulary per column name over the kinds that have it, factorized once
        (a region of busy and assign rows: the region of the row's site).
        """
        if name not in self._vocab:
            kinds = [k for k in self.frames if name == "region" or name in self.frames[k]]
            parts = [self._piece(k, name) for k in kinds]
            try:
                codes, values = sorted_codes(parts)
            except ValueError:
                raise ValueError(f"region balance: a missing {name}") from None
            self._vocab[name] = (
                dict(zip(kinds, codes, strict=True)),
                np.asarray(values, dtype=object),
            )
        by_kind, values = self._vocab[name]
        return by_kind[kind], values

    def value(self, kind: str) -> np.ndarray:
        return np.asarray(self.frames[kind]["value"].to_numpy(dtype=float))

    def split_rows(self, group: list[str]) -> np.ndarray:
        """Assign rows whose (chip, region, workload, period) has busy or serve rows."""
        kinds = ("busy", "serve", "assign")
        n = [len(self.frames[k]) for k in kinds]
        groups = _coded_groups(self, kinds, group)
        ids = groups.ids
        has = np.zeros(groups.n, bool)
        has[ids[: n[0] + n[1]]] = True
        out: np.ndarray = has[ids[n[0] + n[1] :]]
        return out


def _coded_groups(
    col: _Columns,
    kinds: tuple[str, ...],
    group: list[str],
    rows: dict[str, np.ndarray] | None = None,
) -> Groups:
    """Return the groups of the rows of ``kinds`` (in turn; ``rows`` selects some) by ``group``."""
    rows = rows or {}
    coded = []
    for name in group:
        parts = []
        for k in kinds:
            c = col.codes(k, name)[0]
            parts.append(c[rows[k]] if k in rows else c)
        coded.append((np.concatenate(parts), col.codes(kinds[0], name)[1]))
    return Groups([], coded=coded)


def _outer(
    col: _Columns,
    kinds: tuple[str, str],
    group: list[str],
    x_rows: np.ndarray | None,
    prefix: str = "",
) -> tuple[Any, np.ndarray, np.ndarray]:
    """``group`` sums of two kinds' values side by side (0 when absent), and key text.

    What ``groupby(group).sum()`` of each and an outer ``merge`` give: groups in the
    keys' sorted order. ``x_rows`` selects rows of the first kind (None: all).
    """
    xk, yk = kinds
    xv = col.value(xk)
    if x_rows is not None:
        xv = xv[x_rows]
    nx = len(xv)
    groups = _coded_groups(col, kinds, group, None if x_rows is None else {xk: x_rows})
    x = group_sum(groups.ids[:nx], xv, groups.n)
    y = group_sum(groups.ids[nx:], col.value(yk), groups.n)

    return key_text(groups, len(group), prefix), x, y


FAMILIES = (
    ConstraintFamily(
        "region_balance",
        "chips",
        define_region_balance,
        check_region_balance,
        "region balance of {key} in {period} off by {amount} chips",
        "chips",
        ("c", "e", "w"),
        summary_words="{0} {2} chips in region {1}",
    ),
)
