"""Families appended to a built model: the near-optimal cost cap, the CVaR and chance rows.

These rows are not defined per scenario: the cost cap bounds a whole plan's cost, the
CVaR rows and the chance rows span the scenarios of a stochastic model. Each ``define_*``
returns the new columns, rows and coefficient block (:class:`AppendedRows`) that
:func:`optimizer.plan.risk.append_rows` adds after every column and row of the built
model; each ``check_*`` recomputes its rows from a solved plan (its result tables and
the appended columns' values), not from the LP, and returns the violated rows in the
checker's shape (:data:`optimizer.lp.violations.VIOLATION_COLUMNS`). The records
(:data:`FAMILIES`) name the unit, the wording when the rows cannot hold, the result
rows and the app's view; ``docs/families.md`` lists them
(:mod:`optimizer.components.docs`).

Sources: Rockafellar and Uryasev, "Optimization of conditional value-at-risk",
J. Risk 2 (2000), Theorem 1 (the CVaR rows); Nemirovski and Shapiro, "Convex
approximations of chance constrained programs", SIAM J. Optim. 17 (2006) (the CVaR
approximation of a chance row); DeCarolis, "Using modeling to generate alternatives
(MGA) to expand our thinking on energy futures", Energy Economics 33 (2011) (the cost
cap).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import ArrayLike

from optimizer.components.component import Component
from optimizer.components.records import AppendedFamily

__all__ = [
    "COMPONENT",
    "AppendedRows",
    "check_chance_cvar",
    "check_chance_link",
    "check_chance_probability",
    "check_chance_shortfall",
    "check_cvar_excess",
    "check_mga_cost_cap",
    "cvar",
    "define_chance_cvar",
    "define_chance_link",
    "define_chance_probability",
    "define_chance_shortfall",
    "define_cvar_excess",
    "define_mga_cost_cap",
    "no_columns",
]


class AppendedRows(NamedTuple):
    """New columns, rows and coefficients to append to a built model.

    Attributes
    ----------
    columns : DataFrame
        ``kind, scenario, lb, ub, cost, integer`` of the new columns (may be empty).
    rows : DataFrame
        ``family, scenario, sense, rhs`` of the new rows.
    block : scipy.sparse.csr_matrix, shape (len(rows), n_variables + len(columns))
        The new rows over the model's columns, then the new ones.
    """

    columns: pd.DataFrame
    rows: pd.DataFrame
    block: sp.csr_matrix


def no_columns() -> pd.DataFrame:
    """Return the columns frame with no column (typed)."""
    return pd.DataFrame(
        {
            "kind": pd.Series([], dtype=str),
            "scenario": pd.Series([], dtype=np.int64),
            "lb": pd.Series([], dtype=float),
            "ub": pd.Series([], dtype=float),
            "cost": pd.Series([], dtype=float),
            "integer": pd.Series([], dtype=bool),
        }
    )


def _violations(rows: list[tuple[str, str, str, float, float]]) -> pd.DataFrame:
    """Violations frame (``family, constraint, keys, lhs, rhs, violation``) of ``rows``."""
    return pd.DataFrame(
        {
            "family": pd.Series([r[0] for r in rows], dtype=str),
            "constraint": pd.Series([r[1] for r in rows], dtype=str),
            "keys": pd.Series([r[2] for r in rows], dtype=str),
            "lhs": pd.Series([r[3] for r in rows], dtype=float),
            "rhs": pd.Series([r[4] for r in rows], dtype=float),
            "violation": pd.Series([abs(r[3] - r[4]) for r in rows], dtype=float),
        }
    )


# --- near-optimal alternatives: the cost cap -------------------------------------------


def define_mga_cost_cap(cost: ArrayLike) -> AppendedRows:
    """Cost cap: sum_j cost_j * x_j <= C* + slack * |C*| - const (one row, rhs set per slack).

    Parameters
    ----------
    cost : array, shape (n_variables,)
        The model's objective coefficients (USD per column unit).

    Returns
    -------
    AppendedRows
        No column; one ``<=`` row of scenario 0 whose right-hand side is open (``+inf``)
        until a slack sets it.
    """
    c = np.asarray(cost, dtype=float)
    rows = pd.DataFrame({"family": ["mga_cost_cap"], "scenario": [0], "sense": ["<="]})
    rows["rhs"] = np.inf
    return AppendedRows(no_columns(), rows, sp.csr_matrix(c.reshape(1, -1)))


def check_mga_cost_cap(cost_usd: float, cap_usd: float, tolerance: float = 1e-6) -> pd.DataFrame:
    """Check the cap on a plan's cost recomputed from its costs table (not from the LP).

    Parameters
    ----------
    cost_usd : float
        The alternative plan's cost, summed from its costs table (USD).
    cap_usd : float
        ``C* + slack |C*|`` (USD).
    tolerance : float
        Relative to ``1 + |cap|``.

    Returns
    -------
    DataFrame
        One ``mga_cost_cap`` row when the cost exceeds the cap beyond the tolerance.
    """
    over = cost_usd - cap_usd > tolerance * (1.0 + abs(cap_usd))
    return _violations([("mga_cost_cap", "<=", "plan", cost_usd, cap_usd)] if over else [])


# --- risk aversion: the CVaR rows ------------------------------------------------------


def define_cvar_excess(
    cost_rows: sp.spmatrix, const: ArrayLike, weights: ArrayLike, alpha: float, weight: float
) -> AppendedRows:
    """CVaR excess: C_s(x) - eta - u_s <= 0; cost + L eta + L/(1-alpha) sum_s p_s u_s.

    Parameters
    ----------
    cost_rows : sparse matrix, shape (n_scenarios, n_variables)
        Each scenario's discounted, unweighted cost per column unit (USD).
    const : array, shape (n_scenarios,)
        Each scenario's constant cost (USD): moved to the right-hand side.
    weights : array, shape (n_scenarios,)
        Scenario probabilities ``p_s``.
    alpha : float
        CVaR level in [0, 1).
    weight : float
        ``L > 0``.

    Returns
    -------
    AppendedRows
        Columns ``cvar_var`` (eta, free, shared; cost ``L``) and ``cvar_excess[s] >= 0``
        (cost ``L p_s / (1 - alpha)``); one ``cvar_excess`` row per scenario.
    """
    p = np.asarray(weights, dtype=float)
    n_s = len(p)
    cols = pd.DataFrame(
        {
            "kind": ["cvar_var"] + ["cvar_excess"] * n_s,
            "scenario": [-1, *range(n_s)],
            "lb": [-np.inf] + [0.0] * n_s,
            "ub": np.inf,
            "cost": [weight, *(weight * p / (1.0 - alpha))],
            "integer": False,
        }
    )
    rows = pd.DataFrame(
        {"family": "cvar_excess", "scenario": range(n_s), "sense": "<=", "rhs": -np.asarray(const)}
    )
    extra = sp.hstack(
        [sp.csr_matrix(np.full((n_s, 1), -1.0)), -sp.identity(n_s, format="csr")], format="csr"
    )
    return AppendedRows(cols, rows, sp.hstack([sp.csr_matrix(cost_rows), extra], format="csr"))


def cvar(values: ArrayLike, weights: ArrayLike, alpha: float) -> float:
    """Return ``CVaR_alpha`` of a discrete distribution by sorting (not by an LP).

    The mean of the worst ``1 - alpha`` probability mass (a scenario on the boundary
    counts with the part of its weight inside the tail); equal to the
    Rockafellar-Uryasev minimum. ``alpha = 0`` is the expectation.

    Parameters
    ----------
    values : sequence of float, shape (n_scenarios,)
        Scenario costs (USD); ``inf`` allowed (then the result is ``inf`` if in the tail).
    weights : sequence of float, shape (n_scenarios,)
        Probabilities (normalised here).
    alpha : float
        Level in [0, 1).
    """
    v = np.asarray(values, dtype=float)
    p = np.asarray(weights, dtype=float)
    p = p / p.sum()
    order = np.argsort(v, kind="stable")
    v, p = v[order], p[order]
    tail = 1.0 - alpha
    above = np.concatenate([[0.0], np.cumsum(p[::-1])[:-1]])[::-1]  # mass strictly worse
    inside = np.clip(tail - above, 0.0, p)
    keep = inside > 0
    if np.isinf(v[keep]).any():
        return math.inf
    return float((v[keep] * inside[keep]).sum() / tail)


def check_cvar_excess(
    values: ArrayLike,
    weights: ArrayLike,
    alpha: float,
    var_usd: float,
    excess_usd: ArrayLike,
    tolerance: float = 1e-6,
) -> pd.DataFrame:
    """Check the CVaR rows: excess >= C_s - eta and >= 0, and the LP's term the sorted CVaR.

    Parameters
    ----------
    values : sequence of float, shape (n_scenarios,)
        Scenario costs from the result tables (USD).
    weights : sequence of float
    alpha : float
    var_usd : float
        The solved ``cvar_var`` column (USD).
    excess_usd : sequence of float
        The solved ``cvar_excess`` columns (USD).
    tolerance : float
        Relative to ``1 + |C_s|``.

    Returns
    -------
    DataFrame
        ``cvar_excess`` per violated scenario, ``cvar_value`` when
        ``eta + sum p u / (1 - alpha)`` differs from :func:`cvar` of the costs.
    """
    v = np.asarray(values, dtype=float)
    u = np.asarray(excess_usd, dtype=float)
    p = np.asarray(weights, dtype=float)
    out = []
    scale = 1.0 + np.abs(v)
    lhs = v - var_usd - u
    for s in np.flatnonzero((lhs > tolerance * scale) | (u < -tolerance * scale)):
        out.append(("cvar_excess", "<=", str(int(s)), float(v[s] - var_usd), float(u[s])))
    lp_term = var_usd + float(p @ u) / (1.0 - alpha)
    exact = cvar(v, p, alpha)
    if abs(lp_term - exact) > tolerance * (1.0 + abs(exact)):
        out.append(("cvar_value", "==", "all", lp_term, exact))
    return _violations(out)


# --- chance rows -----------------------------------------------------------------------


def define_chance_link(
    slack_part: sp.spmatrix, scenario: ArrayLike, floor: ArrayLike, n_scenarios: int
) -> AppendedRows:
    """Chance link: b_r slack_r - f_r * chance_miss[s] <= 0 (each picked floor row r of s).

    Parameters
    ----------
    slack_part : sparse matrix, shape (n_rows, n_variables)
        The picked floor rows' slack coefficients ``b_r`` (breach or unmet), zero elsewhere.
    scenario : array of int, shape (n_rows,)
        Scenario of each picked row.
    floor : array, shape (n_rows,)
        Each row's floor ``f_r`` (> 0): the big-M, tight since delivery is never negative.
    n_scenarios : int

    Returns
    -------
    AppendedRows
        One binary ``chance_miss[s]`` per scenario; one ``chance_link`` row per picked row.
    """
    sc = np.asarray(scenario, dtype=np.int64)
    f = np.asarray(floor, dtype=float)
    n_r = len(sc)
    cols = pd.DataFrame(
        {
            "kind": "chance_miss",
            "scenario": range(n_scenarios),
            "lb": 0.0,
            "ub": 1.0,
            "cost": 0.0,
            "integer": True,
        }
    )
    link = sp.csr_matrix((-f, (np.arange(n_r), sc)), shape=(n_r, n_scenarios))
    rows = pd.DataFrame({"family": "chance_link", "scenario": sc, "sense": "<=", "rhs": 0.0})
    return AppendedRows(cols, rows, sp.hstack([sp.csr_matrix(slack_part), link], format="csr"))


def define_chance_probability(
    n_variables: int, weights: ArrayLike, probability: float
) -> AppendedRows:
    """Chance probability: sum_s p_s chance_miss[s] <= 1 - beta (one row).

    Parameters
    ----------
    n_variables : int
        Columns of the model before the ``chance_miss`` columns.
    weights : array, shape (n_scenarios,)
    probability : float
        ``beta`` in (0, 1].

    Returns
    -------
    AppendedRows
        No new column (the row reads the ``chance_miss`` columns of
        :func:`define_chance_link`, appended just before).
    """
    p = np.asarray(weights, dtype=float)
    block = sp.csr_matrix(np.concatenate([np.zeros(n_variables), p]))
    rows = pd.DataFrame(
        {"family": ["chance_probability"], "scenario": [-1], "sense": ["<="]}
    ).assign(rhs=1.0 - probability)
    return AppendedRows(no_columns(), rows, block)


def define_chance_shortfall(
    delivered: sp.spmatrix,
    scenario: ArrayLike,
    floor: ArrayLike,
    n_scenarios: int,
    probability: float,
) -> AppendedRows:
    """Chance shortfall: a_r x_s / f_r + chance_excess[s] + t >= 1 (a_r x_s >= f_r at beta 1).

    Parameters
    ----------
    delivered : sparse matrix, shape (n_rows, n_variables)
        The picked floor rows without their slack: what the plan delivers, ``a_r``.
    scenario : array of int, shape (n_rows,)
    floor : array, shape (n_rows,)
        ``f_r`` (> 0).
    n_scenarios : int
    probability : float
        ``beta``; at 1 the rows are the floors themselves (no new column).

    Returns
    -------
    AppendedRows
        Columns ``chance_var`` (t, free) and ``chance_excess[s] >= 0`` below 1.
    """
    sc = np.asarray(scenario, dtype=np.int64)
    f = np.asarray(floor, dtype=float)
    if probability >= 1.0:
        rows = pd.DataFrame({"family": "chance_shortfall", "scenario": sc, "sense": ">=", "rhs": f})
        return AppendedRows(no_columns(), rows, sp.csr_matrix(delivered))
    n_r = len(sc)
    cols = pd.DataFrame(
        {
            "kind": ["chance_var"] + ["chance_excess"] * n_scenarios,
            "scenario": [-1, *range(n_scenarios)],
            "lb": [-np.inf] + [0.0] * n_scenarios,
            "ub": np.inf,
            "cost": 0.0,
            "integer": False,
        }
    )
    ones = np.ones(n_r)
    excess = sp.csr_matrix((ones, (np.arange(n_r), 1 + sc)), shape=(n_r, n_scenarios + 1))
    excess = excess + sp.csr_matrix(
        (ones, (np.arange(n_r), np.zeros(n_r, int))), shape=(n_r, n_scenarios + 1)
    )
    block = sp.hstack([sp.diags(1.0 / f) @ sp.csr_matrix(delivered), excess], format="csr")
    rows = pd.DataFrame({"family": "chance_shortfall", "scenario": sc, "sense": ">=", "rhs": 1.0})
    return AppendedRows(cols, rows, block)


def define_chance_cvar(n_variables: int, weights: ArrayLike, probability: float) -> AppendedRows:
    """Chance CVaR: t + 1/(1 - beta) * sum_s p_s chance_excess[s] <= 0 (one row, beta < 1).

    Parameters
    ----------
    n_variables : int
        Columns of the model before ``chance_var`` and the ``chance_excess`` columns.
    weights : array, shape (n_scenarios,)
    probability : float
        ``beta`` in (0, 1).

    Returns
    -------
    AppendedRows
        No new column (the row reads those of :func:`define_chance_shortfall`).
    """
    p = np.asarray(weights, dtype=float)
    block = sp.csr_matrix(np.concatenate([np.zeros(n_variables), [1.0], p / (1.0 - probability)]))
    rows = pd.DataFrame({"family": ["chance_cvar"], "scenario": [-1], "sense": ["<="], "rhs": 0.0})
    return AppendedRows(no_columns(), rows, block)


def check_chance_link(met: ArrayLike, miss: ArrayLike) -> pd.DataFrame:
    """Check the link rows: a scenario whose floors are not met has ``chance_miss = 1``.

    Parameters
    ----------
    met : array of bool, shape (n_scenarios,)
        Whether each scenario met every picked floor, read from its result tables
        (:func:`optimizer.plan.chance.met_by_scenario`).
    miss : array, shape (n_scenarios,)
        The solved ``chance_miss`` columns.

    Returns
    -------
    DataFrame
        One ``chance_link`` row per scenario that missed with ``chance_miss < 0.5``.
    """
    m = np.asarray(met, dtype=bool)
    z = np.asarray(miss, dtype=float)
    bad = np.flatnonzero(~m & (z < 0.5))
    return _violations([("chance_link", "<=", str(int(s)), 1.0, float(z[s])) for s in bad])


def check_chance_probability(
    met: ArrayLike, weights: ArrayLike, probability: float, tolerance: float = 1e-9
) -> pd.DataFrame:
    """Check the probability: the weight of the scenarios that met every floor >= beta.

    Holds for both methods (the CVaR approximation implies it). ``met`` is read from
    the result tables, never from the model.

    Returns
    -------
    DataFrame
        One ``chance_probability`` row (achieved against beta) when below.
    """
    m = np.asarray(met, dtype=bool)
    w = np.asarray(weights, dtype=float)
    got = float(w[m].sum() / w.sum()) if len(w) else 0.0
    low = got < probability - tolerance
    return _violations([("chance_probability", ">=", "all", got, probability)] if low else [])


def check_chance_shortfall(
    met: ArrayLike, var: float, excess: ArrayLike, tolerance: float = 1e-6
) -> pd.DataFrame:
    """Check the shortfall rows: a scenario with ``t + chance_excess[s] <= 0`` met every floor.

    The rows give ``max_r (f_r - a_r x_s) / f_r <= t + chance_excess[s]``, so such a
    scenario's relative shortfall is at most zero.

    Returns
    -------
    DataFrame
        One ``chance_shortfall`` row per scenario that the rows say met and did not.
    """
    m = np.asarray(met, dtype=bool)
    bound = var + np.asarray(excess, dtype=float)
    bad = np.flatnonzero(~m & (bound <= -tolerance))
    return _violations([("chance_shortfall", ">=", str(int(s)), 0.0, 1.0) for s in bad])


def check_chance_cvar(
    var: float, excess: ArrayLike, weights: ArrayLike, probability: float, tolerance: float = 1e-6
) -> pd.DataFrame:
    """Check the CVaR row: ``t + sum_s p_s chance_excess[s] / (1 - beta) <= 0``.

    Returns
    -------
    DataFrame
        One ``chance_cvar`` row when the term is above zero beyond the tolerance.
    """
    p = np.asarray(weights, dtype=float)
    term = var + float(p @ np.asarray(excess, dtype=float)) / (1.0 - probability)
    return _violations([("chance_cvar", "<=", "all", term, 0.0)] if term > tolerance else [])


_NEVER = "never infeasible: {why}"

#: The appended families, one record each.
FAMILIES: tuple[AppendedFamily, ...] = (
    AppendedFamily(
        name="mga_cost_cap",
        unit="USD",
        define=define_mga_cost_cap,
        check=check_mga_cost_cap,
        wording=_NEVER.format(
            why="the optimum itself is within every cap, the cap is never relaxed"
        ),
        result="alternatives_ranges: cost_cap_usd per quantity and slack",
        app="Risk page, Near-optimal ranges tab",
        summary_words="cost cap of the near-optimal plans",
    ),
    AppendedFamily(
        name="cvar_excess",
        unit="USD",
        define=define_cvar_excess,
        check=check_cvar_excess,
        wording=_NEVER.format(why="eta is free and each excess unbounded above"),
        result="risk rows: expected_cost_usd, var_usd, cvar_usd, risk_objective_usd",
        app="Risk page, Risk aversion (CVaR, chance) tab: the frontier",
        summary_words="tail cost above the value at risk in scenario {key}",
    ),
    AppendedFamily(
        name="chance_link",
        unit="H100e or MW",
        define=define_chance_link,
        check=check_chance_link,
        wording=_NEVER.format(
            why="a scenario may always be flagged as missed; chance_probability says why a "
            "plan fails"
        ),
        result="chance per-scenario rows: met, weight, cost_usd",
        app="Risk page, Risk aversion (CVaR, chance) tab: the chance row",
        summary_words="floor of {key} met or flagged as missed",
    ),
    AppendedFamily(
        name="chance_probability",
        unit="probability",
        define=define_chance_probability,
        check=check_chance_probability,
        wording=("no plan meets {customer}'s {floors} in at least {probability} of the scenarios"),
        result="chance rows: in_sample and out_of_sample achieved probability",
        app="Risk page, Risk aversion (CVaR, chance) tab: the achieved probability",
        summary_words="probability of meeting the floors",
    ),
    AppendedFamily(
        name="chance_shortfall",
        unit="share of the floor",
        define=define_chance_shortfall,
        check=check_chance_shortfall,
        wording="no plan meets {customer}'s {floors} in every scenario (probability 1)",
        result="chance per-scenario rows: met, weight, cost_usd",
        app="Risk page, Risk aversion (CVaR, chance) tab: the chance row",
        summary_words="relative shortfall of the floors in scenario {key}",
    ),
    AppendedFamily(
        name="chance_cvar",
        unit="share of the floor",
        define=define_chance_cvar,
        check=check_chance_cvar,
        wording=(
            "no plan keeps the CVaR at {probability} of {customer}'s relative shortfall of "
            "its {floors} at or below zero"
        ),
        result="chance rows: in_sample and out_of_sample achieved probability",
        app="Risk page, Risk aversion (CVaR, chance) tab: the achieved probability",
        summary_words="CVaR of the relative shortfall of the floors",
    ),
)

#: The appended families as a part of the plan (no per-scenario rows, columns or costs).
COMPONENT = Component(name="risk", appended=FAMILIES)
