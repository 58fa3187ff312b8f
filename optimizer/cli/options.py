"""Options several ``capacity`` commands take: solver, formulation, objective, scheduler."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from optimizer.cli.checks import scheduler_option

__all__ = [
    "SOLVER_HELP",
    "Formulation",
    "FormulationOpt",
    "Objective",
    "ObjectiveOpt",
    "SchedulerOpt",
    "SolverOpt",
]

SOLVER_HELP = (
    "highs (bulk highspy), or any solver PuLP reports available here by PuLP's name "
    "(cbc = PULP_CBC_CMD); 'capacity solvers' lists them."
)
"""Help text of ``--solver`` (``capacity solve`` and ``capacity batch``)."""


class Formulation(StrEnum):
    """LP formulation of the operating columns (:class:`optimizer.SolveOptions`)."""

    compact = "compact"
    reference = "reference"


class Objective(StrEnum):
    """Objective mode of the plan (:class:`optimizer.SolveOptions`)."""

    cost = "cost"
    margin = "margin"


#: ``--solver`` (Typer reads the annotation).
SolverOpt = Annotated[str, typer.Option(help=SOLVER_HELP)]

#: ``--formulation`` (Typer reads the annotation).
FormulationOpt = Annotated[
    Formulation,
    typer.Option(
        "--formulation",
        help="compact: per-site busy chips and per-region service linked by region "
        "balances (exact: same objective and report tables, fewer columns); reference: "
        "per-site, per-customer assign columns. Training clusters and integer "
        "deployment units (solve's --clusters / --integer-units) always use the reference.",
    ),
]

#: ``--objective`` (Typer reads the annotation).
ObjectiveOpt = Annotated[
    Objective,
    typer.Option(
        "--objective",
        help="cost: minimum discounted cost, unserved demand priced by the customers' "
        "unmet penalty; margin: maximum discounted margin (revenue of served H100e at "
        "the customers' prices minus every cost and breach penalty; unserved demand "
        "earns nothing).",
    ),
]


#: ``--scheduler`` (batch, hedge, replan, alternatives): checked before any work starts.
SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        callback=scheduler_option,
        help="Address of an existing Dask scheduler (tcp://host:port).",
    ),
]
