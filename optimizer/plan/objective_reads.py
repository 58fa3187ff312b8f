"""Overrides the chosen objective never reads: said before the solve, not ignored.

The cost objective builds no revenue, contract-term or migration rows, so a scenario
or sweep override of a customer's price, a contract term or a migration cost changes
nothing in a cost plan. :func:`unread_override_findings` names each such override as
a warning (the columns are :data:`optimizer.plan.model.MARGIN_READ_COLUMNS`, which
``tests/test_reuse_columns.py`` holds to the columns the builds really read).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from capacity.validation import Finding

__all__ = ["scenario_overrides", "unread_override_findings"]


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
        Empty in the margin objective (it reads every column the cost one does, and
        the margin-only ones); in the cost objective one warning per override of a
        column of :data:`optimizer.plan.model.MARGIN_READ_COLUMNS`, ``column`` as
        ``table.column``.
    """
    from optimizer.plan.model import MARGIN_READ_COLUMNS

    if objective == "margin":
        return []
    out = []
    for ov in overrides:
        if (ov.table, ov.column) in MARGIN_READ_COLUMNS:
            msg = (
                f"the {ov.op} override of {ov.table}.{ov.column} changes nothing: the cost "
                "objective does not read it (prices, contract terms and migration count in "
                "the margin objective only); solve in the margin objective "
                "(--objective margin) to use it"
            )
            out.append(Finding("warning", where, None, f"{ov.table}.{ov.column}", None, msg))
    return out


def scenario_overrides(scenarios: Mapping[str, Any], name: str) -> list[Any]:
    """Return the overrides of scenario ``name`` (``a+b``: those of ``a``, then ``b``).

    Names the mapping does not hold (``base``) contribute none.
    """
    out: list[Any] = []
    for part in name.split("+"):
        named = scenarios.get(part)
        if named is not None:
            out.extend(named.overrides)
    return out
