"""Outcomes of one plan and their statistics over many plans.

The figures every scenario analysis reports (:mod:`optimizer.analysis.batch_case` per case,
:mod:`optimizer.analysis.monte_carlo` per sample), kept below both so neither imports
the other:

* ``total_cost_usd``: the discounted cost (``PlanResult.cost_usd``: the objective in
  the cost objective, every term but revenue in the margin objective, whose own
  objective is minus the margin);
* ``unmet_h100e``: sum of ``demand.unmet_h100e`` over customers, workloads and
  periods (H100e-quarters);
* ``trainium_share``: served compute on chips of family ``trainium`` / all served
  compute (``assignment.h100e``, after derate; NaN when nothing is served);
* ``breach_mw``: sum of ``commitments.breach_mw`` (MW-quarters);
* ``margin_usd``, ``revenue_usd``: the margin objective's discounted margin and revenue
  (``PlanResult.margin_usd``, ``revenue_usd``), for a plan solved in the margin
  objective only.

Binding families and limits are read from the ``shadow_prices`` result table. A plan
whose solver returned no duals (:func:`optimizer.output.binding_limits.missing_duals`) has no known
priced families or limits: the functions that read prices return None for it, never
an empty set (which would read as "nothing binds").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.registry import Registry, SequenceView
from optimizer.output.binding_limits import missing_duals
from optimizer.output.summary import OK_STATUSES

__all__ = [
    "ALL_OUTCOMES",
    "LIMIT_FAMILIES",
    "MARGIN_OUTCOMES",
    "OUTCOMES",
    "QUARTER_SUMS",
    "binding_families",
    "binding_limits",
    "binding_shares",
    "mode_outcomes",
    "outcome_percentiles",
    "plan_outcomes",
    "plan_status",
]

#: Outcomes that are sums over the horizon's quarters, and their units: a column named
#: by one (``unmet_h100e``, ``hedged_unmet_h100e``) is not in the suffix's own unit.
QUARTER_SUMS = {"unmet_h100e": "H100e-quarters", "breach_mw": "MW-quarters"}

OUTCOMES = ("total_cost_usd", "unmet_h100e", "trainium_share", "breach_mw")

#: Outcomes of the margin objective (NaN for a plan solved in the cost objective); the
#: tornado and the Monte Carlo report them when asked (``outcomes=MARGIN_OUTCOMES``).
MARGIN_OUTCOMES = ("margin_usd", "revenue_usd")

#: Every outcome :func:`plan_outcomes` returns.
ALL_OUTCOMES = OUTCOMES + MARGIN_OUTCOMES


def plan_status(res: Any) -> str:
    """Solver status of a plan as text (``"optimal"``, ``"infeasible"`` ...)."""
    return str(getattr(res.status, "value", res.status))


def _tab(res: Any, name: str) -> pd.DataFrame:
    t = (getattr(res, "tables", None) or {}).get(name)
    return t if isinstance(t, pd.DataFrame) else pd.DataFrame()


def plan_outcomes(res: Any, ds: Any, family: str = "trainium") -> dict[str, float]:
    """Return the headline outcomes of one plan.

    Parameters
    ----------
    res : PlanResult
        A solved plan (tables ``demand``, ``assignment``, ``commitments``).
    ds : Dataset
        The dataset solved (for the chips' families).
    family : str
        Chip family whose share of served compute is reported.

    Returns
    -------
    dict
        ``total_cost_usd`` (USD, discounted, every cost term: in the margin
        objective revenue is not netted off; NaN without a solution),
        ``unmet_h100e`` (H100e-quarters), ``trainium_share`` (0-1, NaN when nothing
        is served), ``breach_mw`` (MW-quarters); for a plan of the margin objective
        also ``margin_usd`` and ``revenue_usd`` (USD, discounted; NaN without a
        solution).
    """
    obj = res.objective_usd
    if obj is not None and getattr(res, "objective", "cost") == "margin":
        obj = getattr(res, "cost_usd", None)  # the plan's cost, not minus its margin
    dem = _tab(res, "demand")
    asg = _tab(res, "assignment")
    com = _tab(res, "commitments")
    unmet = float(dem["unmet_h100e"].sum()) if "unmet_h100e" in dem else 0.0
    breach = float(com["breach_mw"].sum()) if "breach_mw" in com else 0.0
    share = float("nan")
    if len(asg):
        fam = dict(
            zip(
                ds.table("chips")["chip"].astype(str),
                ds.table("chips")["family"].astype(str),
                strict=True,
            )
        )
        h = asg["h100e"].to_numpy(dtype=float)
        is_f = asg["chip"].astype(str).map(fam).eq(family).to_numpy()
        tot = h.sum()
        share = float(h[is_f].sum() / tot) if tot > 0 else float("nan")
    out = {
        "total_cost_usd": float("nan") if obj is None else float(obj),
        "unmet_h100e": unmet,
        "trainium_share": share,
        "breach_mw": breach,
    }
    if getattr(res, "objective", "cost") == "margin":
        out["margin_usd"] = _usd(getattr(res, "margin_usd", None))
        out["revenue_usd"] = _usd(getattr(res, "revenue_usd", None))
    return out


def mode_outcomes(options: Any) -> tuple[str, ...]:
    """Return the outcomes reported for plans solved with ``options``.

    :data:`OUTCOMES`, and the :data:`MARGIN_OUTCOMES` after them in the margin objective.
    """
    if getattr(options, "objective", "cost") == "margin":
        return ALL_OUTCOMES
    return OUTCOMES


def _usd(value: Any) -> float:
    """Return ``value`` as a float (NaN when None)."""
    return float("nan") if value is None else float(value)


def binding_families(res: Any, tol: float = 1e-9, *, by: str = "price") -> set[str] | None:
    """Constraint families with at least one binding row in a plan.

    Parameters
    ----------
    res : PlanResult
    tol : float
        A shadow price counts as non-zero when ``|price| > tol``.
    by : {"price", "slack"}
        ``"price"``: a row binds when its shadow price is non-zero (the limit costs
        money); ``"slack"``: when ``shadow_prices.binding`` is True (no slack left,
        which also counts degenerate rows at zero price).

    Returns
    -------
    set of str or None
        None for ``by="price"`` when the plan has no shadow prices (the solver
        returned no duals): which families are priced is then unknown.
    """
    if by != "slack" and missing_duals(res):
        return None
    sp = _tab(res, "shadow_prices")
    if sp.empty:
        return set()
    if by == "slack":
        m = sp["binding"].astype(bool).to_numpy()
    else:
        m = (sp["shadow_price"].abs() > tol).to_numpy()
    return set(sp.loc[m, "family"].astype(str))


#: Families whose rows are reported one by one in :func:`binding_limits`: the
#: registry's plant and supply limits (``ConstraintFamily.limit``) plus the liquid share
#: of new build and the commitments, whose prices a risk view wants to see per row;
#: demand, fleet and inventory rows are bookkeeping.
def _risk_limits(r: Registry) -> tuple[str, ...]:
    extra = ("site_liquid_share", "commitment")
    return tuple(
        f.name for f in r.families if (f.limit and f.name != "chip_window") or f.name in extra
    )


LIMIT_FAMILIES: SequenceView[str] = SequenceView(lambda r: r.memo("risk_limits", _risk_limits))


def binding_limits(res: Any, tol: float = 1e-9) -> set[str] | None:
    """Limits (``family:key``) with a non-zero shadow price in at least one period.

    Only rows of :data:`LIMIT_FAMILIES` are listed, e.g. ``supply_resource:cowos_wafers``
    or ``site_grid:northern_virginia``; None when the plan has no shadow prices (the
    solver returned no duals).
    """
    if missing_duals(res):
        return None
    sp = _tab(res, "shadow_prices")
    if sp.empty:
        return set()
    m = (sp["shadow_price"].abs() > tol) & sp["family"].astype(str).isin(LIMIT_FAMILIES)
    sel = sp.loc[m.to_numpy()]
    return {
        f"{f}:{k}" for f, k in zip(sel["family"].astype(str), sel["key"].astype(str), strict=True)
    }


def outcome_percentiles(samples: pd.DataFrame, outcomes: Sequence[str] = OUTCOMES) -> pd.DataFrame:
    """P10, P50, P90 and mean of each outcome over the rows with a plan.

    Parameters
    ----------
    samples : DataFrame
        One row per sample with a ``status`` column and one column per outcome.
    outcomes : sequence of str

    Returns
    -------
    DataFrame
        ``outcome, p10, p50, p90, mean, n`` (NaN values, e.g. no served compute, are
        left out of that outcome's statistics).
    """
    ok = samples[samples["status"].isin(OK_STATUSES)] if "status" in samples else samples
    rows = []
    for o in outcomes:
        x = (
            pd.to_numeric(ok[o], errors="coerce").dropna().to_numpy(dtype=float)
            if o in ok
            else np.zeros(0)
        )
        if len(x):
            p10, p50, p90 = np.percentile(x, [10, 50, 90])
            rows.append(
                {"outcome": o, "p10": p10, "p50": p50, "p90": p90, "mean": x.mean(), "n": len(x)}
            )
        else:
            rows.append(
                {"outcome": o, "p10": np.nan, "p50": np.nan, "p90": np.nan, "mean": np.nan, "n": 0}
            )
    return pd.DataFrame(rows)


def binding_shares(
    priced: Sequence[set[str] | None], slack: Sequence[set[str]] | None = None
) -> pd.DataFrame:
    """Share of samples in which each constraint family binds.

    Parameters
    ----------
    priced : sequence of (set of str or None)
        Per sample, the families with a non-zero shadow price; None for a sample
        without shadow prices (its solver returned no duals).
    slack : sequence of set of str, optional
        Per sample, the families with a row at its limit (``binding`` True).

    Returns
    -------
    DataFrame
        ``family, share_priced, share_binding, n, n_priced`` sorted by
        ``share_priced`` descending (unknown last). ``share_priced`` is a share of the
        ``n_priced`` samples with shadow prices, NaN when none has them (unknown,
        not 0); ``share_binding`` a share of all ``n`` samples.
    """
    n = len(priced)
    known = [p for p in priced if p is not None]
    slack = slack if slack is not None else [set()] * n
    fams = sorted(set().union(*known, *slack)) if n else []
    rows = [
        {
            "family": f,
            "share_priced": sum(f in s for s in known) / len(known) if known else math.nan,
            "share_binding": sum(f in s for s in slack) / n,
            "n": n,
            "n_priced": len(known),
        }
        for f in fams
    ]
    cols = ["family", "share_priced", "share_binding", "n", "n_priced"]
    df = pd.DataFrame(rows, columns=cols)
    return df.sort_values(
        ["share_priced", "family"], ascending=[False, True], kind="stable", na_position="last"
    ).reset_index(drop=True)
