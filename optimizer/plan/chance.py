"""Chance rows: a commitment or demand floor met with a required probability over scenarios.

A soft floor row ``r`` of scenario ``s`` reads ``a_r x_s + b_r slack_r >= f_r`` (the
``commitment`` rows with their ``breach`` column, the ``demand_balance`` rows with their
``unmet`` column); ``a_r x_s`` is what the plan delivers. A :class:`ChanceSpec` picks the
rows of one customer in one family and asks that, with probability at least ``beta``
over the scenarios, every picked row of a scenario is met without its slack.

Exact (``method="exact"``, a MIP): one binary ``chance_miss[s]`` per scenario,

    chance_link:         b_r slack_r - f_r * chance_miss[s] <= 0     (each picked row r of s)
    chance_probability:  sum_s p_s chance_miss[s] <= 1 - beta

``f_r`` is a tight big-M: the delivery ``a_r x_s`` is never negative, so the slack never
needs to exceed the floor. The MIP's relative gap is reported as the solver gives it.

Convex approximation (``method="cvar"``, the default, an LP; Nemirovski and Shapiro,
"Convex approximations of chance constrained programs", SIAM J. Optim. 17, 2006): with
the relative shortfall ``g_s = max_r (f_r - a_r x_s) / f_r`` of a scenario,
``CVaR_beta(g) <= 0`` implies ``P(g <= 0) >= beta``; in Rockafellar-Uryasev form, with a
free ``chance_var`` ``t`` and ``chance_excess[s] >= 0``:

    chance_shortfall:  a_r x_s / f_r + chance_excess[s] + t >= 1   (each picked row r of s)
    chance_cvar:       t + 1/(1 - beta) * sum_s p_s chance_excess[s] <= 0

At ``beta = 1`` it is exact (``a_r x_s >= f_r`` in every scenario, written as such); below
1 it is conservative (it may meet the floor more often than asked, and cost more): the
achieved probability is reported, never assumed.

Checker rows: :func:`met_by_scenario` reads, from each scenario's result tables
(``commitments.breach_mw``, ``demand.unmet_h100e``), which scenarios met every picked
row, and :func:`check_chance` checks each family on it: the achieved probability reaches
``beta`` (both methods), a missed scenario is flagged (exact), a scenario the shortfall
rows call met is met and the CVaR term is at most zero (the approximation). Wording when
the rows cannot hold: :func:`chance_wording`. The families' records, row builders and
checks live in :mod:`optimizer.components.appended` (``docs/families.md``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import ArrayLike

from optimizer.components import APPENDED_BY_NAME
from optimizer.components.appended import (
    AppendedRows,
    check_chance_cvar,
    check_chance_link,
    check_chance_probability,
    check_chance_shortfall,
    define_chance_cvar,
    define_chance_link,
    define_chance_probability,
    define_chance_shortfall,
)
from optimizer.lp.frames import column_values
from optimizer.plan.risk import append_rows

__all__ = [
    "CHANCE_FAMILIES",
    "CHANCE_METHODS",
    "ChanceSpec",
    "achieved_probability",
    "check_chance",
    "chance_wording",
    "met_by_scenario",
    "parse_chance",
    "with_chance",
]

#: Row families :func:`with_chance` appends, by method.
CHANCE_FAMILIES = {
    "exact": ("chance_link", "chance_probability"),
    "cvar": ("chance_shortfall", "chance_cvar"),
}

#: Methods of a chance row.
CHANCE_METHODS = ("cvar", "exact")

#: Floor families a chance row may pick, with their slack column kind and result table.
_FLOORS = {
    "commitment": ("breach", "commitments", "breach_mw"),
    "demand": ("unmet", "demand", "unmet_h100e"),
}
_ROW_FAMILY = {"commitment": "commitment", "demand": "demand_balance"}


@dataclass(frozen=True)
class ChanceSpec:
    """Meet ``customer``'s ``family`` floors with probability >= ``probability``.

    Parameters
    ----------
    family : {"commitment", "demand"}
    customer : str
    probability : float
        ``beta`` in (0, 1].
    method : {"cvar", "exact"}

    Raises
    ------
    ValueError
        Naming ``--chance`` (or ``--chance-method``) and the value.
    """

    family: str
    customer: str
    probability: float
    method: str = "cvar"

    def __post_init__(self) -> None:
        if self.family not in _FLOORS:
            raise ValueError(
                f"--chance: {self.family!r} is not a floor family: use one of {sorted(_FLOORS)}"
            )
        b = float(self.probability)
        if not (math.isfinite(b) and 0.0 < b <= 1.0):
            raise ValueError(f"--chance: probability {self.probability!r} is not in (0, 1]")
        if self.method not in CHANCE_METHODS:
            raise ValueError(f"--chance-method: {self.method!r} is not one of {CHANCE_METHODS}")


def parse_chance(text: str, method: str = "cvar") -> ChanceSpec:
    """Read ``FAMILY:CUSTOMER:PROBABILITY`` (``commitment:openai:0.9``).

    Raises
    ------
    ValueError
        Naming ``--chance`` and the text that does not read.
    """
    parts = [p.strip() for p in text.split(":")]
    if len(parts) != 3:
        raise ValueError(f"--chance: {text!r} is not FAMILY:CUSTOMER:PROBABILITY")
    try:
        beta = float(parts[2])
    except ValueError:
        raise ValueError(f"--chance: probability {parts[2]!r} is not a number") from None
    return ChanceSpec(parts[0], parts[1], beta, method)


def _picked(model: Any, spec: ChanceSpec) -> pd.DataFrame:
    """Return the picked rows: ``row, scenario, rhs``; ValueError when the customer has none."""
    con = model.constraints
    codes = list(model.codes["k"])
    if spec.customer not in codes:
        raise ValueError(f"--chance: customer {spec.customer!r} is not in the data: {codes}")
    k = codes.index(spec.customer)
    fam = con["family"].astype(str).to_numpy()
    pick = (fam == _ROW_FAMILY[spec.family]) & (column_values(con, "k") == k)
    pick &= column_values(con, "rhs", dtype=float) > 0
    if not pick.any():
        raise ValueError(f"--chance: {spec.customer!r} has no {spec.family} floor above 0")
    rows = np.flatnonzero(pick)
    return pd.DataFrame(
        {
            "row": rows,
            "scenario": column_values(con, "scenario")[rows],
            "rhs": column_values(con, "rhs")[rows],
        }
    )


def with_chance(model: Any, spec: ChanceSpec | None) -> Any:
    """Return ``model`` with the chance rows of ``spec`` appended (module docstring).

    Parameters
    ----------
    model : PlanningModel
        A stochastic model (its ``weights`` are the scenario probabilities).
    spec : ChanceSpec or None
        None: ``model`` unchanged.

    Returns
    -------
    PlanningModel

    Raises
    ------
    ValueError
        When the customer is unknown or has no floor of the family.
    """
    if spec is None:
        return model
    picked = _picked(model, spec)
    a = model.matrix.tocsr()[column_values(picked, "row")]
    slack = (model.variables["kind"].astype(str) == _FLOORS[spec.family][0]).to_numpy()
    p = np.asarray(model.weights, dtype=float)
    n, n_s = model.n_variables, len(p)
    sc = column_values(picked, "scenario")
    rhs = column_values(picked, "rhs", dtype=float)
    if spec.method == "exact":
        link = define_chance_link(a.multiply(slack[None, :]).tocsr(), sc, rhs, n_s)
        prob = define_chance_probability(n, p, spec.probability)
        return append_rows(model, *_stack(link, prob))
    short = define_chance_shortfall(
        a.multiply(~slack[None, :]).tocsr(), sc, rhs, n_s, spec.probability
    )
    if spec.probability >= 1.0:
        return append_rows(model, *short)
    return append_rows(model, *_stack(short, define_chance_cvar(n, p, spec.probability)))


def _stack(first: AppendedRows, second: AppendedRows) -> AppendedRows:
    """Rows of ``first`` (with its columns) then of ``second`` (over the same columns)."""
    rows = pd.concat([first.rows, second.rows], ignore_index=True)
    return AppendedRows(first.columns, rows, sp.vstack([first.block, second.block], format="csr"))


def check_chance(
    spec: ChanceSpec, met: np.ndarray, weights: ArrayLike, extra: ArrayLike | None
) -> pd.DataFrame:
    """Checker rows of the chance families of ``spec`` (:mod:`optimizer.components.appended`).

    Parameters
    ----------
    spec : ChanceSpec
    met : array of bool, shape (n_scenarios,)
        :func:`met_by_scenario` of the plan's scenarios (from their result tables).
    weights : array, shape (n_scenarios,)
    extra : array or None
        The appended columns' values in order (``chance_miss[s]``; or ``chance_var``
        then ``chance_excess[s]``; none at probability 1).

    Returns
    -------
    DataFrame
        Violations (empty when every row holds).
    """
    w = np.asarray(weights, dtype=float)
    out = [check_chance_probability(met, w, spec.probability)]
    x = np.asarray([] if extra is None else extra, dtype=float)
    if spec.method == "exact" and len(x) >= len(w):
        out.append(check_chance_link(met, x[: len(w)]))
    elif spec.probability < 1.0 and len(x) >= len(w) + 1:
        out.append(check_chance_shortfall(met, float(x[0]), x[1 : 1 + len(w)]))
        out.append(check_chance_cvar(float(x[0]), x[1 : 1 + len(w)], w, spec.probability))
    return pd.concat(out, ignore_index=True)


def met_by_scenario(
    results: Sequence[Any], spec: ChanceSpec, tolerance: float = 1e-6
) -> np.ndarray:
    """Whether each scenario met every picked floor, from its result tables (no LP).

    A scenario without a plan (no tables) did not meet it. A row is met when its slack
    (``breach_mw`` or ``unmet_h100e``) is at most ``tolerance`` times ``1 +`` its floor.
    """
    _, table, column = _FLOORS[spec.family]
    floor = "min_it_mw" if spec.family == "commitment" else "demand_h100e"
    out = []
    for r in results:
        t = r.tables.get(table) if getattr(r, "tables", None) else None
        if r.objective_usd is None or t is None or column not in t:
            out.append(False)
            continue
        mine = t[t["customer"].astype(str) == spec.customer]
        req = mine[floor].to_numpy(dtype=float) if floor in mine else np.zeros(len(mine))
        out.append(
            bool((mine[column].to_numpy(dtype=float) <= tolerance * (1 + np.abs(req))).all())
        )
    return np.asarray(out, dtype=bool)


def achieved_probability(met: np.ndarray, weights: ArrayLike) -> float:
    """Probability weight of the scenarios that met the floors (in [0, 1])."""
    w = np.asarray(weights, dtype=float)
    return float(w[met].sum() / w.sum()) if len(w) else math.nan


def chance_wording(spec: ChanceSpec) -> str:
    """Say why a chance-constrained plan has no solution (the rows that could not hold).

    The wording is the family record's (:data:`optimizer.components.APPENDED_BY_NAME`):
    ``chance_shortfall`` at probability 1, else ``chance_probability`` (exact) or
    ``chance_cvar`` (the approximation).
    """
    what = "commitment floors" if spec.family == "commitment" else "demand floors"
    if spec.probability >= 1.0:
        family = "chance_shortfall"
    else:
        family = "chance_probability" if spec.method == "exact" else "chance_cvar"
    said = APPENDED_BY_NAME[family].wording.format(
        customer=spec.customer, floors=what, probability=f"{spec.probability:.0%}"
    )
    return f"{said}: the {family} row cannot hold; lower the probability or relax the floors"
