"""Risk aversion in a two-stage model: E[cost] + L * CVaR_alpha(cost), Rockafellar-Uryasev.

For scenario costs ``C_s(x)`` (each scenario's whole discounted cost, first stage
included) with probabilities ``p_s``, the conditional value at risk at level ``alpha``
is (Rockafellar and Uryasev, "Optimization of conditional value-at-risk", J. Risk 2,
2000, Theorem 1)

    CVaR_alpha(C) = min_eta  eta + 1/(1 - alpha) * sum_s p_s * max(C_s - eta, 0),

the mean of the worst ``1 - alpha`` share of outcomes (``alpha = 0``: the expectation).
The risk-averse plan minimises ``rho(C) = E[C] + L * CVaR_alpha(C)``, ``L >= 0``, as
one LP with one shared free column ``cvar_var`` (eta, the value at risk at the optimum)
and one column ``cvar_excess[s] >= 0`` per scenario:

    cvar_excess:  C_s(x) - eta - cvar_excess[s] <= 0          (one row per scenario)
    objective:    sum_s p_s C_s(x) + L * eta + L/(1 - alpha) * sum_s p_s cvar_excess[s]

``C_s(x)`` in the row is the scenario's cost vector (the model's ``cost_terms`` of that
scenario, discounted, unweighted) and its constant moves to the right-hand side. The row
binds at the hand value ``cvar_excess[s] = C_s - VaR`` for every scenario in the tail.
With ``L = 0`` :func:`with_cvar` returns the model unchanged: today's expected-cost plan.

Infeasibility: the CVaR rows can never make a plan infeasible (``eta`` is free and each
excess unbounded above), so they need no wording in the explanation; a hedge without a
plan fails for the reasons of its scenarios' own rows.

Checker rows: :func:`check_cvar` recomputes CVaR from the scenario costs of the result
tables by sorting (not by the LP) and flags an LP term that differs, or a negative
excess. Result rows: :func:`risk_summary` (expected cost, VaR, CVaR, rho). The family's
record, row builder and check live in :mod:`optimizer.components.appended`
(``docs/families.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import ArrayLike

from optimizer.components.appended import check_cvar_excess, cvar, define_cvar_excess
from optimizer.lp.frames import column_values

__all__ = [
    "CVAR_FAMILY",
    "CVAR_KINDS",
    "RiskSpec",
    "append_rows",
    "check_cvar",
    "cvar",
    "risk_summary",
    "risk_value",
    "scenario_cost_rows",
    "value_at_risk",
    "with_cvar",
]

#: Family name of the CVaR excess rows.
CVAR_FAMILY = "cvar_excess"

#: Column kinds :func:`with_cvar` adds: the value at risk (shared) and the excesses.
CVAR_KINDS = ("cvar_var", "cvar_excess")


@dataclass(frozen=True)
class RiskSpec:
    """The risk measure ``E[C] + weight * CVaR_alpha(C)``.

    Parameters
    ----------
    alpha : float
        CVaR level in [0, 1): the tail is the worst ``1 - alpha`` of the probability.
    weight : float
        ``L >= 0``, USD of expected cost paid per USD of CVaR cut (0: expected cost).

    Raises
    ------
    ValueError
        Naming ``--alpha`` or ``--weight`` and the value.
    """

    alpha: float = 0.9
    weight: float = 0.0

    def __post_init__(self) -> None:
        a, w = float(self.alpha), float(self.weight)
        if not (math.isfinite(a) and 0.0 <= a < 1.0):
            raise ValueError(f"--alpha: {self.alpha!r} is not a CVaR level in [0, 1)")
        if not (math.isfinite(w) and w >= 0.0):
            raise ValueError(f"--weight: {self.weight!r} is not a risk weight >= 0")


def value_at_risk(values: ArrayLike, weights: ArrayLike, alpha: float) -> float:
    """Return ``VaR_alpha``: the least ``v`` with ``P(C <= v) >= alpha`` (USD).

    ``alpha = 0`` gives the smallest outcome with positive probability.
    """
    v, p = _sorted(values, weights)
    cum = np.cumsum(p)
    i = int(np.searchsorted(cum, alpha - 1e-12, side="left"))
    if alpha <= 0:
        i = int(np.flatnonzero(p > 0)[0])
    return float(v[min(i, len(v) - 1)])


def _sorted(values: ArrayLike, weights: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    v = np.asarray(values, dtype=float)
    p = np.asarray(weights, dtype=float)
    p = p / p.sum()
    order = np.argsort(v, kind="stable")
    return v[order], p[order]


def risk_value(values: ArrayLike, weights: ArrayLike, spec: RiskSpec | None) -> float:
    """Return ``rho = E[C] + L * CVaR_alpha(C)`` (the expectation when ``spec`` is None)."""
    p = np.asarray(weights, dtype=float)
    v = np.asarray(values, dtype=float)
    if np.isinf(v[p > 0]).any():
        return math.inf
    mean = float((p[p > 0] * v[p > 0]).sum() / p.sum())
    if spec is None or spec.weight == 0:
        return mean
    return mean + spec.weight * cvar(v, p, spec.alpha)


def risk_summary(values: ArrayLike, weights: ArrayLike, spec: RiskSpec | None) -> dict[str, float]:
    """Return a plan's risk rows: ``expected_cost_usd, var_usd, cvar_usd, risk_objective_usd``.

    ``alpha`` and ``risk_weight`` are the spec's (0.9 and 0 without one).
    """
    s = spec or RiskSpec()
    return {
        "alpha": s.alpha,
        "risk_weight": s.weight,
        "expected_cost_usd": risk_value(values, weights, None),
        "var_usd": value_at_risk(values, weights, s.alpha),
        "cvar_usd": cvar(values, weights, s.alpha),
        "risk_objective_usd": risk_value(values, weights, s),
    }


def scenario_cost_rows(model: Any) -> tuple[sp.csr_matrix, np.ndarray]:
    """Return each scenario's cost as a row over the columns, and its constant.

    Returns
    -------
    (C, c0)
        ``C`` shape (n_scenarios, n_variables): discounted, unweighted USD per column
        unit (``cost_terms`` of the scenario times the discount factor of the period);
        ``c0`` shape (n_scenarios,): the scenario's discounted constant cost (USD).
        ``C @ x + c0`` is each scenario's objective; ``weights @ (C @ x + c0)`` is the
        model's objective.
    """
    from optimizer.plan.coding import discount_factors

    disc = discount_factors(model.datasets[0])
    n_s, n = len(model.weights), model.n_variables
    ct = model.cost_terms
    t = column_values(ct, "t", dtype=np.int64)
    vals = column_values(ct, "coef", dtype=float) * disc[t]
    rows = column_values(ct, "scenario", dtype=np.int64)
    cols = column_values(ct, "col", dtype=np.int64)
    c = sp.csr_matrix((vals, (rows, cols)), shape=(n_s, n))
    c.sum_duplicates()
    c0 = np.zeros(n_s)
    k = model.const_terms
    if len(k):
        kt = column_values(k, "t", dtype=np.int64)
        np.add.at(
            c0, column_values(k, "scenario", dtype=np.int64), column_values(k, "value") * disc[kt]
        )
    return c, c0


def append_rows(
    model: Any,
    columns: pd.DataFrame,
    rows: pd.DataFrame,
    block: sp.spmatrix,
) -> Any:
    """Return ``model`` with new columns and rows appended (new kinds and families allowed).

    Parameters
    ----------
    model : PlanningModel
    columns : DataFrame
        ``kind, scenario, lb, ub, cost, integer`` of the new columns (codes -1, scale 1).
    rows : DataFrame
        ``family, scenario, sense, rhs`` of the new rows (codes -1).
    block : sparse matrix, shape (n_rows_new, n_variables + n_columns_new)
        The new rows over the old and the new columns.
    """
    var = model.variables
    kinds = [k for k in columns["kind"].unique() if k not in var["kind"].cat.categories]
    var = var.assign(kind=var["kind"].cat.add_categories(kinds))
    new_var = pd.DataFrame({c: -1 for c in var.columns}, index=range(len(columns)))
    for c in ("kind", "scenario", "lb", "ub", "cost", "integer"):
        new_var[c] = columns[c].to_numpy()
    new_var["scale"] = 1.0
    new_var = new_var.astype({c: var[c].dtype for c in var.columns if c != "kind"})
    new_var["kind"] = pd.Categorical(new_var["kind"], categories=var["kind"].cat.categories)
    out_var = pd.concat([var, new_var], ignore_index=True)
    con = model.constraints
    fams = [f for f in rows["family"].unique() if f not in con["family"].cat.categories]
    con = con.assign(family=con["family"].cat.add_categories(fams))
    new_con = pd.DataFrame({c: -1 for c in con.columns}, index=range(len(rows)))
    for c in ("family", "scenario", "sense", "rhs"):
        new_con[c] = rows[c].to_numpy()
    new_con = new_con.astype({c: con[c].dtype for c in con.columns if c != "family"})
    new_con["family"] = pd.Categorical(new_con["family"], categories=con["family"].cat.categories)
    out_con = pd.concat([con, new_con], ignore_index=True)
    wide = model.matrix.tocsr().copy()
    wide.resize((model.n_constraints, len(out_var)))
    mat = sp.vstack([wide, sp.csr_matrix(block)], format="csr")
    return replace(model, variables=out_var, constraints=out_con, matrix=mat)


def with_cvar(model: Any, spec: RiskSpec | None) -> Any:
    """Return ``model`` minimising ``E[C] + L * CVaR_alpha(C)`` (module docstring).

    Parameters
    ----------
    model : PlanningModel
        A (stochastic) model whose objective is the expected cost.
    spec : RiskSpec or None
        None or ``weight == 0``: ``model`` itself, unchanged.

    Returns
    -------
    PlanningModel
        With one ``cvar_var`` column (free, shared), ``n_scenarios`` ``cvar_excess``
        columns and ``n_scenarios`` ``cvar_excess`` rows appended (after every
        existing column and row, so positions of the model are kept).
    """
    if spec is None or spec.weight == 0:
        return model
    c, c0 = scenario_cost_rows(model)
    rows = define_cvar_excess(c, c0, model.weights, spec.alpha, spec.weight)
    return append_rows(model, *rows)


def check_cvar(
    values: ArrayLike,
    weights: ArrayLike,
    spec: RiskSpec,
    var_usd: float,
    excess_usd: ArrayLike,
    tolerance: float = 1e-6,
) -> pd.DataFrame:
    """Check the CVaR rows of a plan solved with ``spec``.

    The rows' own check, :func:`optimizer.components.appended.check_cvar_excess`, at
    ``spec.alpha``: same parameters (but ``spec``) and the same violations frame.
    """
    return check_cvar_excess(values, weights, spec.alpha, var_usd, excess_usd, tolerance)
