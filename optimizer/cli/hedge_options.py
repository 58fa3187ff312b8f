"""The risk options of ``capacity hedge``, each checked before anything is loaded.

CVaR: ``--risk``, ``--alpha``, ``--weight``, ``--frontier``, ``--weights``; chance rows:
``--chance``, ``--chance-method``, ``--fresh``; the L-shaped run's ``--time-limit``; and
the refusal of options that need another, or of modes that do not combine.
"""

from __future__ import annotations

import math
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from optimizer.cli.checks import seconds_option

if TYPE_CHECKING:
    from rich.console import Console

__all__: list[str] = []


class _HedgeMethod(StrEnum):
    lshaped = "lshaped"
    extensive = "extensive"


class _FirstStage(StrEnum):
    capacity = "capacity"
    full = "full"


class _Risk(StrEnum):
    none = "none"
    cvar = "cvar"


def _alpha_option(value: float) -> float:
    """Check ``--alpha``: a CVaR level in [0, 1)."""
    if not (math.isfinite(value) and 0 <= value < 1):
        raise typer.BadParameter(f"{value:g} is not a CVaR level: give a number in [0, 1)")
    return value


def _weight_option(value: float) -> float:
    """Check ``--weight``: a risk weight >= 0."""
    if not (math.isfinite(value) and value >= 0):
        raise typer.BadParameter(f"{value:g} is not a risk weight: give a number >= 0")
    return value


def _weights_option(value: str | None) -> str | None:
    """Check ``--weights``: comma-separated risk weights >= 0."""
    from optimizer.analysis.hedge_risk import parse_weights

    if value is None:
        return None
    try:
        parse_weights(value)
    except ValueError as e:
        raise typer.BadParameter(str(e).removeprefix("--weights: ")) from None
    return value


_RiskOpt = Annotated[_Risk, typer.Option("--risk", help="Risk measure of the plan's cost.")]
_AlphaOpt = Annotated[
    float, typer.Option(callback=_alpha_option, help="CVaR level in [0, 1) (--risk cvar).")
]
_WeightOpt = Annotated[
    float, typer.Option(callback=_weight_option, help="Weight L >= 0 of the CVaR (--risk cvar).")
]
_FrontierOpt = Annotated[
    bool, typer.Option("--frontier", help="Sweep --weights: expected cost against CVaR.")
]
_WeightsOpt = Annotated[
    str | None,
    typer.Option(
        callback=_weights_option, help="Risk weights of --frontier (default 0,0.1,0.25,0.5,1,2)."
    ),
]


def _chance_option(value: str | None) -> str | None:
    """Check ``--chance``: ``FAMILY:CUSTOMER:PROBABILITY`` with a probability in (0, 1]."""
    from optimizer.plan.chance import parse_chance

    if value is None:
        return None
    try:
        parse_chance(value)
    except ValueError as e:
        raise typer.BadParameter(str(e).removeprefix("--chance: ")) from None
    return value


class _ChanceMethod(StrEnum):
    cvar = "cvar"
    exact = "exact"


_ChanceOpt = Annotated[
    str | None,
    typer.Option(
        callback=_chance_option,
        help="Chance row FAMILY:CUSTOMER:PROBABILITY, e.g. commitment:openai:0.9 (extensive form).",
    ),
]
_ChanceMethodOpt = Annotated[
    _ChanceMethod,
    typer.Option("--chance-method", help="cvar: convex approximation (LP); exact: MIP."),
]
_FreshOpt = Annotated[
    int, typer.Option("--fresh", min=0, help="Out-of-sample scenarios for --chance.")
]
_ReplanLeavesOpt = Annotated[
    bool,
    typer.Option(
        "--replan-leaves",
        help="With --tree: also replan quarterly along each leaf and print the tree plan, "
        "the two-stage hedge and rolling replanning side by side.",
    ),
]


_TimeLimitOpt = Annotated[
    float | None,
    typer.Option(
        "--time-limit",
        callback=seconds_option,
        help="Seconds for the L-shaped run, from the end of the sampling: it then stops "
        "with the best plan evaluated so far (NOT converged), or with no plan while the "
        "scenarios' first solves are not over; exit 1 either way.",
    ),
]


def _refuse_mixed_modes(
    console: Console,
    tree: Path | None,
    margin: bool,
    risk: Any,
    chance: str | None,
    method: _HedgeMethod,
    time_limit: float | None = None,
    *,
    out: Path | None = None,
    frontier: bool = False,
) -> None:
    """Exit 2, before anything is loaded, on a combination of modes that is not built.

    Among them: ``--chance`` with ``--risk cvar`` (the chance program has its own
    risk measure; the CVaR weight and the frontier were dropped without a word), and
    ``--method extensive --out`` without ``--frontier`` or ``--chance`` (the extensive
    form gives the plan's RP only: the tables ``--out`` writes are the L-shaped run's).
    """
    msg = None
    if time_limit is not None and (tree is not None or chance is not None or method != "lshaped"):
        msg = (
            "--time-limit bounds the L-shaped run: drop it, or --tree, --chance and "
            "--method extensive."
        )
    elif tree is not None and (margin or risk is not None or chance is not None):
        msg = (
            "--tree solves the cost objective, risk neutral: drop --objective margin, "
            "--risk and --chance, or --tree."
        )
    elif margin and (risk is not None or chance is not None):
        msg = "--risk and --chance hedge the cost objective: drop --objective margin or them."
    elif chance is not None and risk is not None:
        msg = (
            "--chance solves its own program (--chance-method): drop --risk cvar (with "
            "--weight and --frontier), or --chance."
        )
    elif method == "extensive" and out is not None and not frontier and chance is None:
        msg = (
            "--out writes the L-shaped run's tables (iterations, per-scenario WS and EEV, the "
            "first stage); --method extensive gives the plan's RP only: drop --method "
            "extensive (--reference also solves the extensive form), or --out."
        )
    if msg is not None:
        console.print(f"[red]{msg}[/red]")
        raise typer.Exit(2)
