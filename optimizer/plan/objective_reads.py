"""Overrides the chosen objective never reads: said before the solve, not ignored.

The cost objective builds no revenue, contract-term or migration rows, so a scenario
or sweep override of a customer's price, a contract term or a migration cost changes
nothing in a cost plan; the margin objective prices no unmet demand (unserved demand
earns nothing), so an override of a customer's unmet penalty changes nothing in a
margin plan. :func:`unread_override_findings` names each such override as a warning.
The columns are :data:`optimizer.plan.model.MARGIN_READ_COLUMNS` and
:data:`COST_ONLY_COLUMNS`; ``tests/test_objective_reads.py`` holds both to the columns
the two builds really read.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from capacity.validation import Finding

__all__ = [
    "COST_ONLY_COLUMNS",
    "scenario_overrides",
    "unread_override_findings",
    "warn_unread_parameters",
]

#: Input columns the cost objective reads and the margin objective does not, as
#: ``(table, column)``: the unmet penalty (the margin objective's unserved demand earns
#: nothing instead of paying a penalty).
COST_ONLY_COLUMNS: frozenset[tuple[str, str]] = frozenset(
    {("customers", "unmet_penalty_usd_per_h100e_period")}
)


def unread_override_findings(
    overrides: Sequence[Any], objective: str, where: str = "overrides"
) -> list[Finding]:
    """Return a warning for each override of a column the objective does not read.

    Parameters
    ----------
    overrides : sequence of Override
        The overrides applied to the base data (each with ``table`` and ``column``).
    objective : {"cost", "margin"}
        The objective solved.
    where : str
        The finding's ``file`` (the scenario or case the overrides belong to).

    Returns
    -------
    list of Finding
        One warning per override of a column the objective does not read: in the
        cost objective those of :data:`optimizer.plan.model.MARGIN_READ_COLUMNS`, in
        the margin objective those of :data:`COST_ONLY_COLUMNS`; ``column`` as
        ``table.column``.
    """
    from optimizer.plan.model import MARGIN_READ_COLUMNS

    unread = COST_ONLY_COLUMNS if objective == "margin" else MARGIN_READ_COLUMNS
    why = (
        "the margin objective does not read it (unserved demand earns nothing there, "
        "it pays no penalty); solve in the cost objective to use it"
        if objective == "margin"
        else "the cost objective does not read it (prices, contract terms and migration "
        "count in the margin objective only); solve in the margin objective "
        "(--objective margin) to use it"
    )
    out = []
    for ov in overrides:
        if (ov.table, ov.column) in unread:
            msg = f"the {ov.op} override of {ov.table}.{ov.column} changes nothing: {why}"
            out.append(Finding("warning", where, None, f"{ov.table}.{ov.column}", None, msg))
    return out


def scenario_overrides(scenarios: Mapping[str, Any], name: str) -> list[Any]:
    """Return the overrides of scenario ``name`` (``a+b``: those of ``a``, then ``b``).

    A name the mapping holds whole (``hi+price``) is that scenario; names it does not
    hold (``base``) contribute none.
    """
    if name in scenarios:
        return list(scenarios[name].overrides)
    out: list[Any] = []
    for part in name.split("+"):
        named = scenarios.get(part)
        if named is not None:
            out.extend(named.overrides)
    return out


def warn_unread_parameters(parameters: Mapping[str, Sequence[Any]], options: Any = None) -> None:
    """Warn for each risk parameter whose overrides the objective of ``options`` never reads.

    A tornado group or a Monte Carlo parameter on such a column (a customer price in the
    cost objective) moves nothing: its swing or spread is zero because the plan never
    reads it, not because the plan is insensitive to it.

    Parameters
    ----------
    parameters : Mapping[str, sequence of Override]
        Each parameter's name and its overrides at one level.
    options : SolveOptions, optional
        Its ``objective`` (default ``"cost"``).

    Warns
    -----
    UserWarning
        One per unread override, naming the parameter (see
        :func:`unread_override_findings`).
    """
    objective = str(getattr(options, "objective", "cost") or "cost")
    for name, overrides in parameters.items():
        for f in unread_override_findings(overrides, objective):
            warnings.warn(f"parameter {name!r}: {f.message}", UserWarning, stacklevel=3)
