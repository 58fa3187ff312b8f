"""The price of cutting the tail: expected cost against CVaR over a sweep of risk weights.

Each point of the frontier is the risk-averse hedged plan for one weight ``L`` of
``rho = E[C] + L * CVaR_alpha(C)`` (:mod:`optimizer.plan.risk`); the table reports the
plan's expected cost and its CVaR, so the step from one point to the next reads as
"pay this much in expectation to cut the tail by that much". The extensive form solves
one LP per weight (:func:`extensive_frontier`); the L-shaped method keeps one master and
its cuts across the weights (:func:`optimizer.analysis.decompose.hedge_frontier`) and
:func:`frontier_table` reads its plans.

Result rows: :data:`FRONTIER_COLUMNS`, one per weight. As ``L`` grows the expected cost
cannot fall and the CVaR cannot rise (each point minimises ``E + L CVaR``: a standard
exchange argument); :func:`frontier_notes` says where a solve's tolerance broke that.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from optimizer.plan.risk import RiskSpec, risk_summary, with_cvar

__all__ = [
    "DEFAULT_FRONTIER_WEIGHTS",
    "FRONTIER_COLUMNS",
    "extensive_frontier",
    "frontier_figure",
    "frontier_notes",
    "frontier_table",
    "parse_weights",
]

#: Risk weights swept by ``--frontier`` unless ``--weights`` names others.
DEFAULT_FRONTIER_WEIGHTS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0)

#: Columns of the frontier table.
FRONTIER_COLUMNS = (
    "risk_weight",
    "alpha",
    "expected_cost_usd",
    "var_usd",
    "cvar_usd",
    "risk_objective_usd",
    "status",
    "gap_rel",
)


def parse_weights(text: str | Sequence[float], option: str = "--weights") -> tuple[float, ...]:
    """Read risk weights (``"0,0.5,1"``); each a finite number >= 0.

    Raises
    ------
    ValueError
        Naming ``option`` and the value that is not a weight.
    """
    from optimizer.analysis.alternatives import parse_nonnegative

    return parse_nonnegative(text, option, "risk weight >= 0")


def extensive_frontier(
    datasets: Sequence[Any],
    risk_weights: Sequence[float],
    alpha: float = 0.9,
    weights: Sequence[float] | None = None,
    options: Any = None,
    first_stage: str | Sequence[str] = "full",
    progress: Any = None,
) -> pd.DataFrame:
    """Solve the extensive form once per risk weight; return the frontier table.

    Parameters
    ----------
    datasets : sequence of Dataset
        Scenario datasets over one horizon.
    risk_weights : sequence of float
        Weights ``L >= 0`` of ``CVaR_alpha``.
    alpha : float
        CVaR level in [0, 1).
    weights : sequence of float, optional
        Scenario probabilities (default equal).
    options : SolveOptions, optional
    first_stage : str or sequence of str
        The shared decisions (``full`` or ``capacity``).
    progress : ProgressLike, optional
        Told each weight as it starts and ends (:mod:`optimizer.output.progress`).

    Returns
    -------
    DataFrame
        :data:`FRONTIER_COLUMNS`, one row per weight (``gap_rel`` 0: an LP optimum).

    Raises
    ------
    ValueError
        For an alpha outside [0, 1) or a negative weight (naming the option).
    """
    from optimizer.plan.stochastic import solve_stochastic

    n = len(datasets)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    w = w / w.sum()
    rows = []
    for lam in risk_weights:
        spec = RiskSpec(alpha, float(lam))
        if progress is not None:
            progress.now(f"L={float(lam):g}")
        sto = solve_stochastic(
            datasets,
            list(w),
            options,
            first_stage=first_stage,
            extend=partial(with_cvar, spec=spec),
        )
        costs = [r.objective_usd for r in sto.scenarios]
        if progress is not None:
            progress.advance(sto.status.value == "optimal")
        if any(c is None for c in costs):
            rows.append({"risk_weight": spec.weight, "alpha": alpha, "status": sto.status.value})
            continue
        rows.append(
            {
                **risk_summary([float(c or 0.0) for c in costs], w, spec),
                "status": sto.status.value,
                "gap_rel": 0.0,
            }
        )
    return pd.DataFrame(rows).reindex(columns=list(FRONTIER_COLUMNS))


def frontier_table(plans: Sequence[Any]) -> pd.DataFrame:
    """Return :data:`FRONTIER_COLUMNS` of L-shaped plans (:func:`hedge_frontier`'s list)."""
    rows = [
        {
            **dict(p.risk),
            "status": "converged" if p.converged else "not_converged",
            "gap_rel": p.gap_rel,
        }
        for p in plans
    ]
    return pd.DataFrame(rows).reindex(columns=list(FRONTIER_COLUMNS))


def frontier_notes(table: pd.DataFrame, rel: float = 1e-4) -> tuple[str, ...]:
    """Say where the expected cost falls or the CVaR rises as the weight grows (beyond ``rel``)."""
    t = table.sort_values("risk_weight")
    notes = []
    e, c, lam = (
        t[k].to_numpy(dtype=float) for k in ("expected_cost_usd", "cvar_usd", "risk_weight")
    )
    for i in range(1, len(t)):
        if e[i] < e[i - 1] * (1 - rel):
            notes.append(
                f"expected cost falls from L={lam[i - 1]:g} to L={lam[i]:g}: a solve tolerance"
            )
        if c[i] > c[i - 1] * (1 + rel):
            notes.append(f"CVaR rises from L={lam[i - 1]:g} to L={lam[i]:g}: a solve tolerance")
    return tuple(notes)


def _point_labels(t: pd.DataFrame, div: float) -> list[str]:
    """``L=<weight>`` per point; points at one place (to 1e-6 of the scale) share one label.

    Every weight of a small dataset can give the same plan: four labels overprinted into
    one unreadable smear. The first point of a place reads ``L=0, 0.25, 1, 4``.
    """
    at = [
        (round(float(x) / div, 6), round(float(y) / div, 6))
        for x, y in zip(t["expected_cost_usd"], t["cvar_usd"], strict=True)
    ]
    weights: dict[tuple[float, float], list[str]] = {}
    for p, w in zip(at, t["risk_weight"], strict=True):
        weights.setdefault(p, []).append(f"{float(w):g}")
    first = {p: i for i, p in reversed(list(enumerate(at)))}
    return ["L=" + ", ".join(weights[p]) if first[p] == i else "" for i, p in enumerate(at)]


def frontier_figure(table: pd.DataFrame) -> Any:
    """Return a plotly figure: expected cost (x) against CVaR (y), one marker per weight.

    Both axes in the USD scale of the largest amount (billions for the bundled data).
    """
    import plotly.graph_objects as go

    from optimizer.output.formatting import money_axis

    t = table.dropna(subset=["expected_cost_usd", "cvar_usd"]).sort_values("risk_weight")
    alpha = float(t["alpha"].iloc[0]) if len(t) else 0.9
    div, _, letter = money_axis([*t["expected_cost_usd"], *t["cvar_usd"]])
    unit = f"USD {letter}".rstrip()
    fig = go.Figure(
        go.Scatter(
            x=t["expected_cost_usd"] / div,
            y=t["cvar_usd"] / div,
            mode="lines+markers+text",
            text=_point_labels(t, div),
            textposition="top right",
            hovertemplate=f"expected %{{x:.2f}} {unit}<br>CVaR %{{y:.2f}} {unit}"
            "<extra>%{text}</extra>",
        )
    )
    fig.update_layout(
        title=f"Price of cutting the tail: expected cost against CVaR at alpha {alpha:g}",
        xaxis_title=f"expected cost ({unit}, discounted)",
        yaxis_title=f"CVaR {alpha:g} of cost ({unit}, discounted)",
    )
    return fig
