"""Explain what cannot be served and why a model is infeasible, in domain words.

Two explanations:

* :func:`explain_missing` (before/without solving): demand or commitment rows with a
  positive requirement but no decision that could serve them (no eligible chip on
  sale, or none at an allowed site). They are not infeasible (unmet / breach absorb
  them) but the user should know they are structural, not economic.
* :func:`explain_infeasible`: an elastic re-solve. Every row of a hard family
  (everything except demand_balance and commitment, which already have the priced
  unmet / breach slack) gets a slack column that lets it give; the original costs are
  dropped and the slacks are minimised. Rows whose slack is positive are the limits
  that had to give, reported with the amount ("site new_carlisle grid in 2027Q2 short
  by 120 MW").

Which rows give: tiers, then relative shortfall
-----------------------------------------------
Rows are relaxed in tiers (:func:`relax_tier`), lexicographically: first as little as
possible of the bookkeeping rows (energy balance, chip inventory, fleet assignment,
region and pool balances, hosting, the cluster link; tier 2) while every limit may give
freely, then as little as possible of the physical and supply limits (tier 1) while the
policy limits may give, and last the policy limits the user set (carbon caps and the
training-cluster rules, tier 0). One LP per tier present, each holding the tiers before
it at what they had to give. So a carbon cap of 0 t is explained as "carbon cap over the
horizon exceeded by 1.2e+07 t CO2" (the least the plan emits), never as an energy
shortfall at a site, and a training cluster forced where the fleet is too small as the
cluster below its minimum size, not as a fleet shortfall. Inside a tier each slack is
weighted by 1 / max(1, |rhs|, typical |rhs| of its family in that scenario) (a relative
shortfall): a row whose limit is 0 or tiny weighs like the other rows of its family
instead of being the dearest to relax.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from optimizer.components import BY_NAME, SOFT_FAMILIES
from optimizer.components.hosting import hosting_exclusions
from optimizer.lp.dimensions import VARIABLE_CODE_COLUMNS
from optimizer.lp.frames import column_values
from optimizer.lp.reuse_cache import cached_for
from optimizer.plan.model import DEFINITION_FAMILIES, PlanningModel
from optimizer.plan.shadow_prices import row_keys

__all__ = [
    "EXPLAIN_COLUMNS",
    "SOFT_FAMILIES",
    "elastic_model",
    "explain_infeasible",
    "explain_missing",
    "relax_tier",
]

EXPLAIN_COLUMNS = ("scenario", "family", "period", "key", "amount", "unit", "message")


_EMPTY = pd.DataFrame(
    {
        c: pd.Series([], dtype=float if c == "amount" else (int if c == "scenario" else str))
        for c in EXPLAIN_COLUMNS
    }
)


def _empty() -> pd.DataFrame:
    """Return the explanation table with no rows (a shallow copy: copy-on-write)."""
    return _EMPTY.copy(deep=False)


def _wording(family: str) -> tuple[str, str]:
    """Explanation template and unit of a relaxed row of ``family``."""
    record = BY_NAME.get(family)
    if record is None or not record.explain_template:
        return "{key} ({family}) in {period} short by {amount}", ""
    return record.explain_template, record.explain_unit


def _hosting_note(model: PlanningModel, scenario: int, customer: str) -> str:
    """Wording for the site-hosting rules that exclude a customer's eligible chips."""
    excluded = hosting_exclusions(model.datasets[scenario], customer)
    if not excluded:
        return ""
    return "; site hosting excludes " + ", ".join(excluded)


#: Families whose shortfall is a campus short of power: the explanation says whether the
#: campus has a bridge power option.
_POWER_SHORT = ("site_grid", "grid_energy", "flexible_inference_sla")


def _bridge_note(model: PlanningModel, scenario: int, family: str, site: str) -> str:
    """Wording for a campus short of power: its bridge options, or that it has none."""
    if family not in _POWER_SHORT:
        return ""
    g = model.datasets[scenario].table("onsite_generation")
    mine = g[(g["site"].astype(str) == site) & (g["bridge"].astype(str) == "yes")]
    if mine.empty:
        return "; no bridge power option at this campus (no bridge row in onsite_generation)"
    return "; bridge options here: " + ", ".join(sorted(mine["technology"].astype(str)))


def _fmt(v: float) -> str:
    """``426851.2 -> "426,851"``, ``3478525.5 -> "3,478,526"`` (no exponent), ``0.25 -> "0.25"``."""
    return f"{v:,.0f}" if abs(v) >= 1e6 else f"{v:,.6g}"


def explain_missing(model: PlanningModel, scenario: int = 0) -> pd.DataFrame:
    """Demand and commitment rows of one scenario that no decision can serve.

    Parameters
    ----------
    model : PlanningModel
    scenario : int

    Returns
    -------
    DataFrame
        ``scenario, family, period, key, amount, unit, message``; e.g. "customer x has
        500 H100e of training demand in 2026Q1 but no eligible chip is on sale at an
        allowed site".
    """
    # Which rows have no decision depends on the model's columns and rows and on the
    # chips' families only: a sweep's patched models (same structure) ask once.
    chips = model.datasets[scenario].table("chips")
    if not cached_for(
        model,
        ("missing_rows", scenario),
        (chips,),
        lambda: bool(len(_explain_missing(model, scenario))),
    ):
        return _empty()
    return _explain_missing(model, scenario)


def _explain_missing(model: PlanningModel, scenario: int) -> pd.DataFrame:
    """Compute :func:`explain_missing` (no cache)."""
    var = model.variables
    con = model.constraints
    serving = var["kind"].isin(["assign", "serve", "pool_serve"])  # serve: the compact formulation
    sel_a = (serving & (var["scenario"] == scenario)).to_numpy()
    a = var.loc[sel_a, ["c", "k", "w", "g", "t"]]
    per = np.asarray(model.periods, dtype=object)
    kn = np.asarray(model.codes["k"], dtype=object)
    wn = np.asarray(model.codes["w"], dtype=object)
    rows = []
    d = con[((con["family"] == "demand_balance") & (con["scenario"] == scenario)).to_numpy()]
    if len(d):
        have = a[["k", "w", "g", "t"]].drop_duplicates().assign(_h=True)
        m = d.merge(have, on=["k", "w", "g", "t"], how="left")
        m = m[m["_h"].isna()]
        for r in m.itertuples():
            k, w, p = kn[r.k], wn[r.w], per[r.t]
            rows.append(
                (
                    scenario,
                    "demand_balance",
                    p,
                    f"{k}/{w}",
                    float(r.rhs),
                    "H100e",
                    f"customer {k} has {_fmt(r.rhs)} H100e of {w} demand in {p} but no "
                    "eligible chip is on sale or installed at an allowed site"
                    + _hosting_note(model, scenario, str(k)),
                )
            )
    c = con[((con["family"] == "commitment") & (con["scenario"] == scenario)).to_numpy()]
    if len(c):
        com = model.commitments[scenario].reset_index(drop=True)
        fam_of_chip = pd.Series(
            model.datasets[scenario].table("chips")["family"].astype(str).to_numpy(),
            index=model.datasets[scenario].table("chips")["chip"].astype(str).to_numpy(),
        )
        have = _served_families(a, fam_of_chip, model.codes["c"], kn)
        for r in c.itertuples():
            row = com.iloc[int(r.j)]
            k, f, p = str(row["customer"]), str(row["family"]), per[r.t]
            if (k, f, r.t) not in have:
                rows.append(
                    (
                        scenario,
                        "commitment",
                        p,
                        f"{k}/{f}/{row['from_period']}",
                        float(r.rhs),
                        "MW",
                        f"customer {k} is committed {_fmt(r.rhs)} MW on {f} in {p} but no "
                        f"eligible {f} chip can be at an allowed site",
                    )
                )
    if not rows:
        return _empty()
    return pd.DataFrame(rows, columns=list(EXPLAIN_COLUMNS))


def _served_families(
    a: pd.DataFrame, fam_of_chip: pd.Series, chips: Any, customers: np.ndarray
) -> set[tuple[Any, Any, int]]:
    """Distinct (customer, chip family, period position) of the serving columns ``a``.

    Found on integer codes (one ``np.unique`` over the columns) and named only for the
    distinct triples: a large model has about a hundred thousand serving columns.
    """
    fam_codes, fam_names = pd.factorize(fam_of_chip.reindex(np.asarray(chips, dtype=object)))
    f = fam_codes[column_values(a, "c")]
    k, t = column_values(a, "k"), column_values(a, "t")
    known = f >= 0  # a chip without a family serves no commitment
    if not known.any():
        return set()
    kft = np.unique(np.stack([k[known], f[known], t[known]]), axis=1)
    names = np.asarray(fam_names, dtype=object)
    return set(zip(customers[kft[0]], names[kft[1]], kft[2].tolist(), strict=True))


def relax_tier(family: str) -> int:
    """Return the tier in which the elastic re-solve lets a row of ``family`` give.

    Returns
    -------
    int
        0 for a policy limit the user sets (``ConstraintFamily.policy``: carbon caps,
        training-cluster rules),
        1 for a physical or supply limit (``ConstraintFamily.limit``: grid, water,
        wafers ...), 2 for bookkeeping rows (balances, inventory, hosting, cluster link)
        and unknown families. Lower tiers give first (see the module docstring).

    Examples
    --------
    >>> relax_tier("carbon_cap_horizon"), relax_tier("site_grid"), relax_tier("chip_inventory")
    (0, 1, 2)
    """
    record = BY_NAME.get(family)
    if record is None:
        return 2
    if record.policy:
        return 0
    return 1 if record.limit else 2


def _slack_weights(con: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """1 / max(1, |rhs|, median non-zero |rhs| of the row's family and scenario)."""
    rhs = np.abs(column_values(con, "rhs", dtype=float)[rows])
    f = pd.DataFrame(
        {
            "family": con["family"].astype(str).to_numpy()[rows],
            "scenario": column_values(con, "scenario")[rows],
            "rhs": np.where(rhs > 0, rhs, np.nan),
        }
    )
    typical = f.groupby(["family", "scenario"])["rhs"].transform("median").to_numpy()
    return 1.0 / np.fmax(np.fmax(1.0, rhs), np.nan_to_num(typical, nan=1.0))


def elastic_model(model: PlanningModel) -> PlanningModel:
    """Return the elastic (phase-one) model: a slack on every hard row, slack costs only.

    Returns
    -------
    PlanningModel
        Original columns with zero cost (integers relaxed), then one slack column
        (``kind`` "elastic", row id in ``j``) per hard row, costing its relative
        shortfall weight (module docstring) per unit of the row; the tiers are
        applied by :func:`explain_infeasible`.
    """
    con = model.constraints
    hard = ~con["family"].astype(str).isin([*SOFT_FAMILIES, *DEFINITION_FAMILIES]).to_numpy()
    rows = np.flatnonzero(hard)
    n = model.n_variables
    sign = np.where(column_values(con, "sense")[rows] == "<=", -1.0, 1.0)
    e = sp.csr_matrix((sign, (rows, np.arange(len(rows)))), shape=(model.n_constraints, len(rows)))
    mat = sp.hstack([model.matrix, e], format="csr")
    var = model.variables.copy()
    var["cost"] = 0.0
    var["integer"] = False
    ev = pd.DataFrame(
        {
            "kind": pd.Categorical(
                ["elastic"] * len(rows), categories=[*var["kind"].cat.categories, "elastic"]
            ),
            "scenario": column_values(con, "scenario")[rows],
            **dict.fromkeys(VARIABLE_CODE_COLUMNS, -1),
            "j": rows,
            "t": column_values(con, "t")[rows],
            "lb": 0.0,
            "ub": np.inf,
            "integer": False,
            "scale": 1.0,
            "cost": _slack_weights(con, rows),
        }
    )
    var["kind"] = pd.Categorical(var["kind"].astype(str), categories=ev["kind"].cat.categories)
    var = pd.concat([var, ev[var.columns]], ignore_index=True)
    del n
    return replace(
        model,
        variables=var,
        matrix=mat,
        const_terms=model.const_terms.iloc[0:0],
        cost_terms=model.cost_terms.iloc[0:0],
    )


def explain_infeasible(
    model: PlanningModel, solve_lp: Callable[[PlanningModel], np.ndarray | None]
) -> pd.DataFrame:
    """Elastic re-solve: which hard limits had to give, and by how much.

    Each relaxed row is worded by its family's ``explain_template`` and
    ``explain_unit`` (:data:`optimizer.components.REGISTRY`).

    Parameters
    ----------
    model : PlanningModel
        The infeasible model.
    solve_lp : callable
        ``solve_lp(elastic_model) -> x or None``: solves an LP and returns the
        column values (None when it does not solve); called once per relax tier
        present (at most three times, see the module docstring). Passed in by
        :func:`optimizer.plan.pipeline.solve_model` so this module does not import the
        solver layer above it.

    Returns
    -------
    DataFrame
        ``scenario, family, period, key, amount, unit, message``: policy limits
        first, then physical limits, then bookkeeping rows (:func:`relax_tier`), the
        largest amount first inside each; empty when the elastic model does not solve.
    """
    el = elastic_model(model)
    x = _solve_in_tiers(el, model.constraints, solve_lp)
    if x is None:
        return _empty()
    var = el.variables
    sel = (var["kind"] == "elastic").to_numpy()
    slack = x[sel]
    rows = var.loc[sel, "j"].to_numpy()
    con = model.constraints
    rhs = column_values(con, "rhs")[rows]
    big = slack > 1e-7 * (1 + np.abs(rhs))
    rows, slack = rows[big], slack[big]
    if not len(rows):
        return _empty()
    c = con.iloc[rows]
    out = []
    for scen in np.unique(column_values(c, "scenario")):
        m = (c["scenario"] == scen).to_numpy()
        cs = c[m]
        keys = row_keys(model, cs, int(scen))
        for (fam, t), key, amt in zip(
            zip(cs["family"].astype(str), cs["t"], strict=True), keys, slack[m], strict=True
        ):
            text, unit = _wording(fam)
            text += _bridge_note(model, int(scen), fam, str(key))
            p = model.periods[int(t)]
            out.append(
                (
                    int(scen),
                    fam,
                    p,
                    str(key),
                    float(amt),
                    unit,
                    text.format(key=key, period=p, amount=_fmt(amt), family=fam),
                )
            )
    df = pd.DataFrame(out, columns=list(EXPLAIN_COLUMNS))
    tier = df["family"].map(relax_tier)
    df = df.assign(_tier=tier).sort_values(["_tier", "amount"], ascending=[True, False])
    return df.drop(columns="_tier").reset_index(drop=True)


def _solve_in_tiers(
    el: PlanningModel,
    con: pd.DataFrame,
    solve_lp: Callable[[PlanningModel], np.ndarray | None],
) -> np.ndarray | None:
    """Minimise the slacks tier by tier, bookkeeping rows first (module docstring).

    The LP of tier ``k`` prices the slacks of tiers >= k at their weight, leaves the
    lower tiers free (cost 0), and keeps the higher tiers at most at what their own LP
    let them give (plus 1e-8 relative, far below the reported 1e-7). The last LP's
    values are returned (None when one does not solve). One LP when one tier is present.
    """
    var = el.variables
    pos = np.flatnonzero((var["kind"] == "elastic").to_numpy())
    rows = column_values(var, "j")[pos]
    tiers = np.array([relax_tier(f) for f in con["family"].astype(str).to_numpy()[rows]])
    weight = column_values(var, "cost", dtype=float)[pos]
    room = 1e-8 * (1.0 + np.abs(column_values(con, "rhs", dtype=float)[rows]))
    ub = np.full(len(pos), np.inf)
    x: np.ndarray | None = None
    for k in sorted(set(tiers.tolist()), reverse=True):
        cost = column_values(var, "cost", dtype=float, copy=True)
        upper = column_values(var, "ub", dtype=float, copy=True)
        cost[pos] = np.where(tiers >= k, weight, 0.0)
        upper[pos] = ub
        x = solve_lp(replace(el, variables=var.assign(cost=cost, ub=upper)))
        if x is None:
            return None
        held = tiers == k
        ub[held] = np.maximum(x[pos][held], 0.0) + room[held]
    return x
