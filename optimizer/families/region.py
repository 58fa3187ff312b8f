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
  and the grid read these: :attr:`~optimizer.families.base.ScenarioColumns.site_work`);
* ``serve[c,e,k,w,g,p]`` chips of region e serving customer k's demand group g
  (demand balance and commitments read these:
  :attr:`~optimizer.families.base.ScenarioColumns.customer_work`);
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

import numpy as np
import pandas as pd

from optimizer.families.base import (
    CheckInputs,
    ConstraintFamily,
    ModelBuilder,
    ScenarioColumns,
    violations,
)

#: Keys of one region balance row: chip, region, workload, period.
BALANCE_KEYS = ["c", "e", "w", "t"]
BUSY_KEYS = ["c", "s", "w", "t"]
SERVE_KEYS = ["c", "e", "k", "w", "g", "t"]
ASSIGN_KEYS = ["c", "s", "k", "w", "g", "t"]

#: Domain columns of the decomposed assign frame (as :func:`optimizer.results.solution_frames`).
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
        f = frame.merge(saves, on=BALANCE_KEYS)
        f = f[f["_saves"].to_numpy() == compact].drop(columns="_saves")
        return f.sort_values(keys).reset_index(drop=True)

    kept = part(assign.assign(e=a["e"].to_numpy()), ASSIGN_KEYS, False).drop(columns="e")
    return part(busy, BUSY_KEYS, True), part(serve, SERVE_KEYS, True), kept


def define_region_balance(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Region balance: sum_{k,g} serve[c,e,k,w,g,p] - sum_{s in e} busy[c,s,w,p] == 0 (chips)."""
    serve, busy = columns.serve, columns.busy
    if not columns.compact or serve.empty:
        return
    keys = serve[BALANCE_KEYS].drop_duplicates().sort_values(BALANCE_KEYS).reset_index(drop=True)
    rows = builder.add_rows(
        "region_balance", columns.scenario.index, keys, "==", np.zeros(len(keys))
    )
    row_of = keys.assign(row=rows)
    m = serve.merge(row_of, on=BALANCE_KEYS)
    builder.add_terms(m["row"], m["col"], 1.0)
    m = busy.merge(row_of, on=BALANCE_KEYS)
    builder.add_terms(m["row"], m["col"], -1.0)


# ------------------------------------------------------------------- the decomposition
def _laid_end_to_end(frame: pd.DataFrame, group: list[str], label: str) -> pd.DataFrame:
    """Sort each group's rows largest first and give each its end on the group's line."""
    f = frame.sort_values(
        [*group, "value", "_order"], ascending=[*([True] * len(group)), False, True]
    )
    f = f.assign(end=f.groupby(group, sort=False)["value"].cumsum().to_numpy())
    return f.assign(side=label)


def split_region_service(
    busy: pd.DataFrame, serve: pd.DataFrame, site_region: pd.Series
) -> pd.DataFrame:
    """Per-site, per-customer assignment from busy chips and regional service.

    North-west corner split, per (chip, region, workload, period) (module docstring).

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
    """
    group = ["chip", "region", "workload", "period"]
    b = busy[busy["value"] > 0].assign(
        region=site_region.reindex(busy.loc[busy["value"] > 0, "site"]).astype(str).to_numpy()
    )
    s = serve[serve["value"] > 0]
    if b.empty or s.empty:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in ASSIGN_COLUMNS}).astype(
            {"value": float}
        )
    b = b.assign(_order=np.arange(len(b)))
    s = s.assign(_order=np.arange(len(s)))
    total_b = b.groupby(group)["value"].sum().rename("total_b")
    total_s = s.groupby(group)["value"].sum().rename("total_s")
    scale = (total_b / total_s).rename("scale")
    s = s.merge(scale, left_on=group, right_index=True, how="inner")
    s = s.assign(value=s["value"] * s["scale"]).drop(columns="scale")
    return _cut(_laid_end_to_end(b, group, "b"), _laid_end_to_end(s, group, "s"), group)


def _cut(b: pd.DataFrame, s: pd.DataFrame, group: list[str]) -> pd.DataFrame:
    """Overlaps of the busy and service intervals of each group (one row per pair)."""
    ends = pd.concat(
        [
            b[[*group, "end", "side", "_order"]],
            s[[*group, "end", "side", "_order"]],
        ],
        ignore_index=True,
    ).sort_values([*group, "end"], kind="stable")
    ends["b_at"] = np.where(ends["side"] == "b", ends["_order"], np.nan)
    ends["s_at"] = np.where(ends["side"] == "s", ends["_order"], np.nan)
    by = ends.groupby(group, sort=False)
    # the piece ending at each breakpoint lies in the next busy and the next service
    # interval ending at or after it
    ends["b_at"] = by["b_at"].bfill()
    ends["s_at"] = by["s_at"].bfill()
    ends["start"] = by["end"].shift(1).fillna(0.0)
    piece = ends[ends["b_at"].notna() & ends["s_at"].notna()]
    piece = piece.assign(value=(piece["end"] - piece["start"]).clip(lower=0.0))
    piece = piece[piece["value"] > 0]
    bi = b.set_index("_order")
    si = s.set_index("_order")
    out = pd.DataFrame(
        {
            "chip": bi["chip"].reindex(piece["b_at"]).to_numpy(),
            "site": bi["site"].reindex(piece["b_at"]).to_numpy(),
            "customer": si["customer"].reindex(piece["s_at"]).to_numpy(),
            "workload": bi["workload"].reindex(piece["b_at"]).to_numpy(),
            "demand_regions": si["demand_regions"].reindex(piece["s_at"]).to_numpy(),
            "period": bi["period"].reindex(piece["b_at"]).to_numpy(),
            "value": piece["value"].to_numpy(),
        }
    )
    keys = ASSIGN_COLUMNS[:-1]
    return out.groupby(keys, as_index=False, sort=False)["value"].sum()[ASSIGN_COLUMNS]


# ------------------------------------------------------------------------- the checker
def _equal(
    family: str, keys: pd.Series, lhs: pd.Series, rhs: pd.Series, tol: float
) -> list[pd.DataFrame]:
    return [
        violations(family, keys, lhs, rhs, "<=", tol),
        violations(family, keys, lhs, rhs, ">=", tol),
    ]


def check_region_balance(inputs: CheckInputs) -> pd.DataFrame:
    """Service of a region = its sites' busy chips, and the split assign has both margins.

    Per (chip, region, workload, period): sum serve == sum busy over the region's
    sites. Per (chip, site, workload, period): sum of the split assign == busy. Per
    (chip, region, customer, workload, demand group, period): sum of the split assign
    over the region's sites == serve. Nothing to check for a reference-formulation
    plan (no busy or serve values).
    """
    busy, serve = inputs.frames.get("busy"), inputs.frames.get("serve")
    if busy is None or serve is None or (busy.empty and serve.empty):
        return violations("region_balance", pd.Series([], dtype=str), [], [], "<=", 0.0)
    region = inputs.sites["region"].astype(str)
    tol = inputs.tolerance
    b = busy.assign(region=region.reindex(busy["site"]).to_numpy())
    a = inputs.frames["assign"]
    a = a.assign(region=region.reindex(a["site"]).to_numpy())
    g = ["chip", "region", "workload", "period"]
    groups = pd.concat([b[g], serve[g]], ignore_index=True).drop_duplicates()
    a = a.merge(groups, on=g)  # the split rows (other groups keep their assign columns)
    out: list[pd.DataFrame] = []
    f = _outer(serve, b, g)
    out += _equal("region_balance", _key(f, g), f["x"], f["y"], tol)
    g = ["chip", "site", "workload", "period"]
    f = _outer(a, busy, g)
    out += _equal("region_balance", "split " + _key(f, g), f["x"], f["y"], tol)
    g = ["chip", "region", "customer", "workload", "demand_regions", "period"]
    f = _outer(a, serve, g)
    out += _equal("region_balance", "split " + _key(f, g), f["x"], f["y"], tol)
    return pd.concat(out, ignore_index=True)


def _outer(x: pd.DataFrame, y: pd.DataFrame, group: list[str]) -> pd.DataFrame:
    """``group`` sums of ``x`` and ``y`` values side by side (``x``, ``y``; 0 when absent)."""
    sx = x.groupby(group, as_index=False)["value"].sum().rename(columns={"value": "x"})
    sy = y.groupby(group, as_index=False)["value"].sum().rename(columns={"value": "y"})
    return sx.merge(sy, on=group, how="outer").fillna({"x": 0.0, "y": 0.0})


def _key(frame: pd.DataFrame, group: list[str]) -> pd.Series:
    """``"a/b/c,period"`` key text of the group columns (period last)."""
    parts = [frame[c].astype(str) for c in group[:-1]]
    text = parts[0]
    for p in parts[1:]:
        text = text + "/" + p
    return text + "," + frame[group[-1]].astype(str)


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
