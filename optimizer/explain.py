"""Explain what cannot be served and why a model is infeasible, in domain words.

Two explanations:

* :func:`explain_missing` (before/without solving): demand or commitment rows with a
  positive requirement but no decision that could serve them (no eligible chip on
  sale, or none at an allowed site). They are not infeasible (unmet / breach absorb
  them) but the user should know they are structural, not economic.
* :func:`explain_infeasible`: an elastic re-solve. Every row of a hard family
  (everything except demand_balance and commitment, which already have the priced
  unmet / breach slack) gets a slack column that lets it give; the original costs are
  dropped and the sum of slacks, each weighted by 1 / max(1, |rhs|) (relative
  shortfall), is minimised. Rows whose slack is positive are the limits that had to
  give, reported with the amount ("site new_carlisle grid in 2027Q2 short by 120 MW").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from optimizer.families import BY_NAME, SOFT_FAMILIES
from optimizer.families.hosting import hosting_exclusions
from optimizer.model import DEFINITION_FAMILIES, PlanningModel
from optimizer.results import row_keys
from optimizer.reuse_cache import cached_for

__all__ = [
    "EXPLAIN_COLUMNS",
    "SOFT_FAMILIES",
    "elastic_model",
    "explain_infeasible",
    "explain_missing",
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


def _fmt(v: float) -> str:
    return f"{v:,.6g}"


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
    f = fam_codes[a["c"].to_numpy()]
    k, t = a["k"].to_numpy(), a["t"].to_numpy()
    known = f >= 0  # a chip without a family serves no commitment
    if not known.any():
        return set()
    kft = np.unique(np.stack([k[known], f[known], t[known]]), axis=1)
    names = np.asarray(fam_names, dtype=object)
    return set(zip(customers[kft[0]], names[kft[1]], kft[2].tolist(), strict=True))


def elastic_model(model: PlanningModel) -> PlanningModel:
    """Return the elastic (phase-one) model: a slack on every hard row, slack costs only.

    Returns
    -------
    PlanningModel
        Original columns with zero cost (integers relaxed), then one slack column
        (``kind`` "elastic", row id in ``j``) per hard row.
    """
    con = model.constraints
    hard = ~con["family"].astype(str).isin([*SOFT_FAMILIES, *DEFINITION_FAMILIES]).to_numpy()
    rows = np.flatnonzero(hard)
    n = model.n_variables
    sign = np.where(con["sense"].to_numpy()[rows] == "<=", -1.0, 1.0)
    e = sp.csr_matrix((sign, (rows, np.arange(len(rows)))), shape=(model.n_constraints, len(rows)))
    mat = sp.hstack([model.matrix, e], format="csr")
    var = model.variables.copy()
    var["cost"] = 0.0
    var["integer"] = False
    rhs = np.abs(con["rhs"].to_numpy()[rows])
    ev = pd.DataFrame(
        {
            "kind": pd.Categorical(
                ["elastic"] * len(rows), categories=[*var["kind"].cat.categories, "elastic"]
            ),
            "scenario": con["scenario"].to_numpy()[rows],
            "s": -1,
            "c": -1,
            "k": -1,
            "w": -1,
            "o": -1,
            "j": rows,
            "g": -1,
            "e": -1,
            "q": -1,
            "t": con["t"].to_numpy()[rows],
            "lb": 0.0,
            "ub": np.inf,
            "integer": False,
            "scale": 1.0,
            "cost": 1.0 / np.maximum(1.0, rhs),
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
    ``explain_unit`` (:data:`optimizer.families.REGISTRY`).

    Parameters
    ----------
    model : PlanningModel
        The infeasible model.
    solve_lp : callable
        ``solve_lp(elastic_model) -> x or None``: solves an LP and returns the
        column values (None when it does not solve). Passed in by
        :func:`optimizer.solve.solve_model` so this module does not import the
        solver layer above it.

    Returns
    -------
    DataFrame
        ``scenario, family, period, key, amount, unit, message``, largest relative
        shortfall first; empty when the elastic model does not solve.
    """
    el = elastic_model(model)
    x = solve_lp(el)
    if x is None:
        return _empty()
    var = el.variables
    sel = (var["kind"] == "elastic").to_numpy()
    slack = x[sel]
    rows = var.loc[sel, "j"].to_numpy()
    con = model.constraints
    rhs = con["rhs"].to_numpy()[rows]
    big = slack > 1e-7 * (1 + np.abs(rhs))
    rows, slack = rows[big], slack[big]
    if not len(rows):
        return _empty()
    c = con.iloc[rows]
    out = []
    for scen in np.unique(c["scenario"].to_numpy()):
        m = (c["scenario"] == scen).to_numpy()
        cs = c[m]
        keys = row_keys(model, cs, int(scen))
        for (fam, t), key, amt in zip(
            zip(cs["family"].astype(str), cs["t"], strict=True), keys, slack[m], strict=True
        ):
            text, unit = _wording(fam)
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
    return df.sort_values("amount", ascending=False, kind="stable").reset_index(drop=True)
