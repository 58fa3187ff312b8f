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

Checker rows: :func:`achieved_probability` recomputes, from each scenario's result tables
(``commitments.breach_mw``, ``demand.unmet_h100e``), which scenarios met every picked
row; the exact method must reach ``beta`` on them. Wording when the rows cannot hold:
:func:`chance_wording`.
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

from optimizer.plan.risk import append_rows

__all__ = [
    "CHANCE_FAMILIES",
    "CHANCE_METHODS",
    "ChanceSpec",
    "achieved_probability",
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
_NO_COLUMNS = pd.DataFrame(
    {
        "kind": pd.Series([], dtype=str),
        "scenario": pd.Series([], dtype=np.int64),
        "lb": pd.Series([], dtype=float),
        "ub": pd.Series([], dtype=float),
        "cost": pd.Series([], dtype=float),
        "integer": pd.Series([], dtype=bool),
    }
)


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
    pick = (fam == _ROW_FAMILY[spec.family]) & (con["k"].to_numpy() == k)
    pick &= con["rhs"].to_numpy(dtype=float) > 0
    if not pick.any():
        raise ValueError(f"--chance: {spec.customer!r} has no {spec.family} floor above 0")
    rows = np.flatnonzero(pick)
    return pd.DataFrame(
        {
            "row": rows,
            "scenario": con["scenario"].to_numpy()[rows],
            "rhs": con["rhs"].to_numpy()[rows],
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
    a = model.matrix.tocsr()[picked["row"].to_numpy()]
    slack = (model.variables["kind"].astype(str) == _FLOORS[spec.family][0]).to_numpy()
    p = np.asarray(model.weights, dtype=float)
    n_s = len(p)
    sc = picked["scenario"].to_numpy()
    rhs = picked["rhs"].to_numpy(dtype=float)
    if spec.method == "exact":
        return _exact(model, spec, a.multiply(slack[None, :]).tocsr(), sc, rhs, p)
    delivered = a.multiply(~slack[None, :]).tocsr()
    if spec.probability >= 1.0:
        rows = pd.DataFrame(
            {"family": "chance_shortfall", "scenario": sc, "sense": ">=", "rhs": rhs}
        )
        return append_rows(model, _NO_COLUMNS, rows, delivered)
    n_r = len(picked)
    cols = pd.DataFrame(
        {
            "kind": ["chance_var"] + ["chance_excess"] * n_s,
            "scenario": [-1, *range(n_s)],
            "lb": [-np.inf] + [0.0] * n_s,
            "ub": np.inf,
            "cost": 0.0,
            "integer": False,
        }
    )
    scaled = sp.diags(1.0 / rhs) @ delivered
    excess = sp.csr_matrix((np.ones(n_r), (np.arange(n_r), 1 + sc)), shape=(n_r, n_s + 1))
    excess = excess + sp.csr_matrix(
        (np.ones(n_r), (np.arange(n_r), np.zeros(n_r, int))), shape=(n_r, n_s + 1)
    )
    cvar_row = sp.csr_matrix(
        np.concatenate([np.zeros(model.n_variables), [1.0], p / (1.0 - spec.probability)])
    )
    block = sp.vstack([sp.hstack([scaled, excess]), cvar_row], format="csr")
    rows = pd.DataFrame(
        {
            "family": ["chance_shortfall"] * n_r + ["chance_cvar"],
            "scenario": [*sc, -1],
            "sense": [">="] * n_r + ["<="],
            "rhs": [1.0] * n_r + [0.0],
        }
    )
    return append_rows(model, cols, rows, block)


def _exact(
    model: Any,
    spec: ChanceSpec,
    slack_part: sp.csr_matrix,
    sc: np.ndarray,
    rhs: np.ndarray,
    p: np.ndarray,
) -> Any:
    """Append the big-M rows with one binary per scenario (module docstring)."""
    n_s, n_r = len(p), len(sc)
    cols = pd.DataFrame(
        {
            "kind": "chance_miss",
            "scenario": range(n_s),
            "lb": 0.0,
            "ub": 1.0,
            "cost": 0.0,
            "integer": True,
        }
    )
    link = sp.csr_matrix((-rhs, (np.arange(n_r), sc)), shape=(n_r, n_s))
    prob = sp.csr_matrix(np.concatenate([np.zeros(model.n_variables), p]))
    block = sp.vstack([sp.hstack([slack_part, link]), prob], format="csr")
    rows = pd.DataFrame(
        {
            "family": ["chance_link"] * n_r + ["chance_probability"],
            "scenario": [*sc, -1],
            "sense": ["<="] * (n_r + 1),
            "rhs": [0.0] * n_r + [1.0 - spec.probability],
        }
    )
    return append_rows(model, cols, rows, block)


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
    """Say why a chance-constrained plan has no solution (the rows that could not hold)."""
    what = "commitment floors" if spec.family == "commitment" else "demand"
    return (
        f"no plan meets {spec.customer}'s {what} in at least {spec.probability:.0%} of the "
        f"scenarios: the chance rows ({', '.join(CHANCE_FAMILIES[spec.method])}) cannot "
        "hold; lower the probability or relax the floors"
    )
