"""Placement result table: training_clusters (training per site vs the cluster rule)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.component import ResultTable
from optimizer.components.placement import cluster_rules
from optimizer.components.plan_context import PlanContext
from optimizer.components.table_columns import BOOL, CUSTOMER, F64, PERIOD, SITE, STR, col
from optimizer.lp.frames import column_values
from optimizer.lp.frames import frame as object_frame
from optimizer.lp.grouping import (
    Groups,
)

__all__ = ["TRAINING_CLUSTERS", "TABLES"]


#: Training smaller than this (chips) at a site is solver noise, not a placement.
CLUSTER_CHIPS_MIN = 1e-6


def _training_clusters(ctx: PlanContext) -> pd.DataFrame:
    """Build training_clusters: each customer's training per site and period vs its rule.

    Sums per (customer, period, site) and per chip on integer group codes
    (:class:`optimizer.lp.grouping.Groups`, the sums pandas gives).
    """
    assignment = ctx.table("assignment")
    a = assignment[column_values(assignment, "workload") == "training"]
    keys = ["customer", "period", "site"]
    cols = {k: a[k].to_numpy() for k in [*keys, "chip"]}
    g = Groups([cols[k] for k in keys])
    sums = {c: g.sum(a[c].to_numpy(dtype=float)) for c in ("it_mw", "h100e", "chips")}
    keep = sums["chips"] > CLUSTER_CHIPS_MIN
    t: dict[str, Any] = {k: g.key(i)[keep] for i, k in enumerate(keys)}
    t.update({c: v[keep] for c, v in sums.items()})
    t["chips_by_generation"] = _chips_by_generation(g, cols["chip"], a["chips"])[keep]
    limits = _rule_limits(ctx)
    rule = [limits.get((k, p)) for k, p in zip(t["customer"], t["period"], strict=True)]
    for i, c in enumerate(("min_cluster_mw", "min_cluster_h100e", "max_sites")):
        t[c] = np.array([0.0 if r is None else r[i] for r in rule], dtype=float)
    tol = 1e-6
    t["meets_minimum"] = (t["it_mw"] >= t["min_cluster_mw"] * (1 - tol) - tol) & (
        t["h100e"] >= t["min_cluster_h100e"] * (1 - tol) - tol
    )
    kp = Groups([t["customer"], t["period"]])
    t["sites_in_period"] = np.bincount(kp.ids, minlength=kp.n)[kp.ids]
    t["within_max_sites"] = (t["max_sites"] <= 0) | (t["sites_in_period"] <= t["max_sites"])
    order = {p: i for i, p in enumerate(ctx.periods)}
    ti = np.array([order.get(p, -1) for p in t["period"]], dtype=np.int64)
    hosted = set(zip(t["customer"], t["site"], ti, strict=True))
    t["cluster_start"] = np.array(
        [
            bool(i > 0) and (k, s, i - 1) not in hosted
            for k, s, i in zip(t["customer"], t["site"], ti, strict=True)
        ],
        dtype=bool,
    )
    t["enforced"] = np.full(len(ti), ctx.exact_clusters, dtype=bool)
    # customer, period position, site: a stable sort as ``sort_values`` does
    rank = np.lexsort((_rank(t["site"]), ti, _rank(t["customer"])))
    return object_frame({c: np.asarray(v)[rank] for c, v in t.items()})


def _rank(values: np.ndarray) -> np.ndarray:
    """Sorted rank of each text value (equal values, equal ranks)."""
    out: np.ndarray = pd.factorize(values, sort=True)[0]
    return out


def _chips_by_generation(g: Groups, chip: np.ndarray, chips: pd.Series) -> np.ndarray:
    """``"chip:chips;..."`` per group of ``g`` (chips > 1e-6, chip order; NaN: none)."""
    by = Groups([g.ids, chip])
    total = by.sum(chips.to_numpy(dtype=float))
    count = np.round(total).astype(np.int64)
    parts: dict[int, list[str]] = {}
    for p, n, c, v in zip(by.key(0), by.key(1), count, total, strict=True):
        if v > CLUSTER_CHIPS_MIN:
            parts.setdefault(int(p), []).append(f"{n}:{c}")
    out = np.full(g.n, np.nan, dtype=object)
    for p, texts in parts.items():
        out[p] = ";".join(texts)
    return out


def _rule_limits(ctx: PlanContext) -> dict[tuple[str, str], tuple[float, float, float]]:
    """``(min_cluster_mw, min_cluster_h100e, max_sites)`` per (customer, period) rule."""
    rules = cluster_rules(ctx.dataset, ctx.periods)
    cols = ("min_cluster_mw", "min_cluster_h100e", "max_sites")
    keys = zip(rules["customer"], rules["period"], strict=True)
    values = zip(*(rules[c].astype(float) for c in cols), strict=True)
    out = dict(zip(keys, values, strict=True))
    if len(out) != len(rules):  # validation rejects overlapping rules of a customer
        raise ValueError("training_clusters: overlapping rules of one customer")
    return out


def fragmentation_message(table: pd.DataFrame, *, exact: bool) -> str:
    """Say which customers' training breaks the cluster rule in an LP-mode plan.

    Parameters
    ----------
    table : DataFrame
        The ``training_clusters`` result table.
    exact : bool
        The solve had exact cluster binaries (then the checker enforces the rule and
        nothing is said).

    Returns
    -------
    str
        E.g. "LP mode: training below the minimum cluster size at 12 site-periods
        (openai 8, anthropic 4) and over max_sites in 3 periods; solve with --clusters
        for the exact rule"; "" when the plan keeps the rule or the solve was exact.
    """
    if exact or table.empty:
        return ""
    small = table[~table["meets_minimum"].astype(bool)]
    over = table[~table["within_max_sites"].astype(bool)].drop_duplicates(["customer", "period"])
    if small.empty and over.empty:
        return ""
    parts = []
    if len(small):
        per = small.groupby("customer").size().sort_values(ascending=False)
        who = ", ".join(f"{k} {n}" for k, n in per.items())
        parts.append(
            f"training below the minimum cluster size at {len(small)} site-periods ({who})"
        )
    if len(over):
        parts.append(f"over max_sites in {len(over)} customer-periods")
    return "LP mode: " + " and ".join(parts) + "; solve with --clusters for the exact rule"


TRAINING_CLUSTERS = ResultTable(
    "training_clusters",
    (
        CUSTOMER,
        PERIOD,
        SITE,
        col("it_mw", F64, "MW", "All-in IT power of the customer's training chips at the site."),
        col("h100e", F64, "H100e", "Training compute there (after derate)."),
        col("chips", F64, "chips", "Training accelerators there."),
        col("chips_by_generation", STR, "chips", "Chips per generation, 'chip:chips;...'."),
        col("min_cluster_mw", F64, "MW", "Minimum cluster size of the rule (0: none)."),
        col("min_cluster_h100e", F64, "H100e", "Minimum cluster size of the rule (0: none)."),
        col("meets_minimum", BOOL, "", "True when the site's training meets both minimums."),
        col("sites_in_period", F64, "sites", "Sites hosting the customer's training then."),
        col("max_sites", F64, "sites", "Most sites of the rule (0: no limit)."),
        col("within_max_sites", BOOL, "", "True when sites_in_period <= max_sites."),
        col("cluster_start", BOOL, "", "True when the site did not host it the period before."),
        col(
            "enforced",
            BOOL,
            "",
            "True when the solve had exact cluster binaries (--clusters / --integer-units); "
            "False: LP mode, the rule is reported, not enforced.",
        ),
    ),
    build=_training_clusters,
)

#: The tables of this part of the plan.
TABLES: tuple[ResultTable, ...] = (TRAINING_CLUSTERS,)
