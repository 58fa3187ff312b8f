"""Binding limits of a plan in domain words: the limit families, their words, the ranked frame.

Also the notes on shadow prices that are missing (the solver returns no duals), not
unique (degenerate limits) or taken from the LP with the integers fixed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from optimizer.components.registry import MappingView, SequenceView
from optimizer.output.summary_frames import TOL, table_or_empty

__all__ = [
    "FAMILY_WORDS",
    "LIMIT_FAMILIES",
    "binding_frame",
    "degenerate_limits",
    "degenerate_note",
    "describe_limit",
    "fixed_integers_note",
    "missing_duals",
    "no_duals_text",
]

#: Families listed as "binding limits": the registry's physical and supply limits
#: (``ConstraintFamily.limit``). Structural rows (liquid share of new build, chip
#: inventory, fleet assignment) price a MW of new capacity or one chip rather than a
#: limit, and demand and commitments have their own sections; all of them stay in
#: ``shadow_prices.parquet``.
LIMIT_FAMILIES: SequenceView[str] = SequenceView(
    lambda r: r.memo("limit_families", lambda r: tuple(f.name for f in r.families if f.limit))
)


#: Domain words for each constraint family, from the registry
#: (``ConstraintFamily.summary_words``); ``{0}``, ``{1}`` ... are the parts of the row
#: key (``chip/site``), ``{key}`` the whole key.
FAMILY_WORDS: MappingView[str] = MappingView(
    lambda r: r.memo(
        "family_words", lambda r: {f.name: f.summary_words for f in r.families if f.summary_words}
    )
)


def describe_limit(family: str, key: str) -> str:
    """Describe a constraint row in domain words.

    Examples
    --------
    >>> describe_limit("site_grid", "new_carlisle")
    'grid interconnect at new_carlisle'
    >>> describe_limit("fleet_assignment", "h100/new_carlisle")
    'fleet of h100 at new_carlisle'
    >>> describe_limit("supply_resource", "cowos_wafers")
    'supply of cowos_wafers'
    """
    parts = [k for k in str(key).replace("|", "/").split("/") if k] or ["-"]
    text_key = "/".join(parts)
    template = FAMILY_WORDS.get(family)
    if template is not None:
        try:
            return template.format(*parts, key=text_key)
        except IndexError:
            pass
    return f"{family.replace('_', ' ')} {text_key}".strip()


def binding_frame(tables: Mapping[str, pd.DataFrame], top: int) -> pd.DataFrame:
    """Return the top binding limits of a plan, grouped over periods and ranked by price.

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        The plan's result tables (``shadow_prices`` is read; missing: no rows).
    top : int
        Number of limits to keep.

    Returns
    -------
    pandas.DataFrame
        ``family, key, limit, unit, periods, first_period, shadow_price,
        shadow_price_sum``: rows of :data:`LIMIT_FAMILIES` with ``binding`` true and a
        non-zero shadow price (see :class:`optimizer.output.summary.PlanSummary`).
    """
    cols = ["family", "period", "key", "shadow_price", "unit", "slack", "binding"]
    out_cols = [
        "family",
        "key",
        "limit",
        "unit",
        "periods",
        "first_period",
        "shadow_price",
        "shadow_price_sum",
    ]
    sp = table_or_empty(tables, "shadow_prices", cols)
    if sp.empty:
        return pd.DataFrame(columns=out_cols)
    price = pd.to_numeric(sp["shadow_price"], errors="coerce").fillna(0.0)
    mask = (
        sp["binding"].astype(bool)
        & (price.abs() > TOL)
        & sp["family"].astype(str).isin(LIMIT_FAMILIES)
    )
    b = sp.loc[mask, ["family", "key", "unit", "period"]].copy()
    if b.empty:
        return pd.DataFrame(columns=out_cols)
    # signed as in the reports: d(objective)/d(limit), <= 0 for a binding limit
    b["price"] = price[mask]
    b["abs_price"] = b["price"].abs()
    b = b.sort_values("abs_price", ascending=False, kind="stable")
    g = (
        b.groupby(["family", "key", "unit"], sort=False)
        .agg(
            periods=("period", "nunique"),
            first_period=("period", "min"),
            shadow_price=("price", "first"),
            shadow_price_sum=("price", "sum"),
            peak=("abs_price", "first"),
        )
        .reset_index()
    )
    g = g.sort_values(["peak", "family", "key"], ascending=[False, True, True])
    g = g.head(top).reset_index(drop=True)
    g["limit"] = [describe_limit(f, k) for f, k in zip(g["family"], g["key"], strict=True)]
    g["periods"] = g["periods"].astype(int)
    return g[out_cols]


def missing_duals(result: Any) -> str:
    """Say why a plan has no shadow prices; "" when the solver returned its duals.

    The one signal every reader of duals uses (summary, Monte Carlo binding shares,
    the app): ``PlanResult.duals_note`` (set by the solve when the solver returns no
    duals), else a ``shadow_prices`` table whose every price is null (a result read
    back without its note).

    Parameters
    ----------
    result : PlanResult
        Any object with ``duals_note`` and ``tables`` (missing ones count as empty).

    Returns
    -------
    str
        The reason, e.g. ``"SCIP_PY returns no duals through PuLP"``; "" when duals
        were received (or the plan has no rows to price).
    """
    note = str(getattr(result, "duals_note", "") or "")
    if note:
        return note
    sp = (getattr(result, "tables", None) or {}).get("shadow_prices")
    if isinstance(sp, pd.DataFrame) and len(sp) and "shadow_price" in sp.columns:
        if bool(pd.to_numeric(sp["shadow_price"], errors="coerce").isna().all()):
            return "the solver returned no duals"
    return ""


def no_duals_text(solver: str, why: str = "") -> str:
    """Say that shadow prices are not available, and which solvers give them.

    Parameters
    ----------
    solver : str
        The solver of the plan (``SCIP_PY``).
    why : str
        The reason (:func:`missing_duals`).

    Returns
    -------
    str
        E.g. ``"shadow prices are not available from SCIP_PY (SCIP_PY returns no duals
        through PuLP); solve with highs, PULP_CBC_CMD or HiGHS for them"``: the
        suggested names are the available solvers that return duals
        (:func:`optimizer.plan.solvers.dual_solver_names`). When the solver itself returns
        duals (they were lost for another reason) only the reason is given.
    """
    from optimizer.plan.solvers import dual_solver_names, returns_duals

    name = solver or "this solver"
    reason = f" ({why})" if why else ""
    if solver and returns_duals(solver):
        return f"shadow prices are not available for this plan{reason}"
    others = [n for n in dual_solver_names() if n.lower() != name.lower()]
    if not others:
        return f"shadow prices are not available from {name}{reason}"
    names = others[0] if len(others) == 1 else ", ".join(others[:-1]) + " or " + others[-1]
    return f"shadow prices are not available from {name}{reason}; solve with {names} for them"


def degenerate_limits(tables: Mapping[str, pd.DataFrame]) -> int:
    """Count plant and supply limits used to the full with a zero shadow price.

    Such rows make the plan degenerate: the duals are not unique, so another solver
    (or a warm start) can return the same plan with another set of priced, "binding"
    limits. Rows of :data:`LIMIT_FAMILIES` with ``binding`` true and
    ``|shadow_price| <= 1e-6`` are counted.
    """
    sp = table_or_empty(tables, "shadow_prices", ["family", "shadow_price", "binding"])
    if sp.empty:
        return 0
    price = pd.to_numeric(sp["shadow_price"], errors="coerce")
    mask = (
        sp["binding"].astype(bool)
        & sp["family"].astype(str).isin(LIMIT_FAMILIES)
        & (price.abs() <= TOL)
    )
    return int(mask.sum())


def fixed_integers_note(integer_units: bool) -> str:
    """Return the note on shadow prices of a MIP, naming the integers of the mode that ran.

    Parameters
    ----------
    integer_units : bool
        ``--integer-units`` (whole-unit installs and cluster choices are integers);
        False: cluster mode, where only the training-cluster choices are.
    """
    held = (
        "the whole-unit installs and the training-cluster choices of the MIP are"
        if integer_units
        else "the training-cluster choices of the MIP (which sites host each customer's "
        "training in each period) are"
    )
    return (
        f"Shadow prices come from the LP with the integers fixed: {held} held at their "
        "values and the LP is re-solved for duals."
    )


def degenerate_note(n: int) -> str:
    """Return the summary's note on degenerate duals (see :func:`degenerate_limits`)."""
    return (
        f"Note: {n} limit(s) are used to the full with a zero shadow price, so the "
        "shadow prices are not unique: HiGHS and CBC (or a warm start) can return this "
        "same plan with a different list of binding limits."
    )
