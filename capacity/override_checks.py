"""Overrides that would change nothing: a ``where`` value that matches no row is a finding.

An override whose ``where`` names a value the table does not hold (``customer: OpenAI``
when the ID is ``openai``) used to be a silent no-op: ``validate`` was clean and
``diff`` showed no changed cell. Both entry points now report it:

* :func:`scenario_match_findings` when a dataset is loaded, at the override's line
  of ``scenarios.yaml``;
* :func:`capacity.scenarios.unmatched_override` when overrides are applied (sweeps,
  the app's composer, risk tools), through :func:`capacity.scenarios.apply_overrides`.

Each message names the value that matches nothing and, when one is close, the ID the
author probably meant; a misspelt value in a list (``[tsmc_n3_wafers, cowos_wafrs]``) is
reported although the list's other values match rows.

An override that edits ``commitments`` is a warning (:data:`CONTRACT_WARNING`): a signed
contract is a fact, and a risk scenario changes what can serve it (supply, demand,
delays, prices), so the breach is what the plan reports.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from capacity.scenario_spec import Override, Scenario
from capacity.scenarios import unmatched_override
from capacity.schema import SPECS
from capacity.validation import Finding

CONTRACT_WARNING = (
    "a scenario should not rewrite a signed contract: commitments are facts, and the risk "
    "is whether the plan can serve them; change supply, demand, delays, prices or "
    "derates instead and read the breach (MW, quarters, penalty) the plan reports"
)
"""Why an override of the ``commitments`` table is a warning."""

SOURCE_WARNING = (
    "override has no source: say where its figure comes from (an address, or "
    "'assumption: ...'), as every figure of the data does"
)
"""Why an override without a ``source`` is a warning."""


def scenario_match_findings(
    tables: Mapping[str, pd.DataFrame],
    scenarios: Mapping[str, Scenario],
    file: str = "scenarios.yaml",
    lines: Mapping[tuple[object, ...], int] | None = None,
) -> list[Finding]:
    """Return an error for each scenario override whose ``where`` matches no base row.

    Each override that touches ``commitments`` also gets a warning
    (:data:`CONTRACT_WARNING`), at its ``table`` line, and one without a ``source`` a
    warning (:data:`SOURCE_WARNING`).

    An override on a table whose period column an earlier override of the same
    scenario shifted is left to the check at apply time (its rows have moved).

    Parameters
    ----------
    tables : Mapping[str, DataFrame]
        The validated base tables.
    scenarios : Mapping[str, Scenario]
        Parsed scenarios.
    file : str
        File name used in findings.
    lines : Mapping, optional
        From :func:`capacity.scenario_spec.override_lines`: the line of each override's
        ``where`` key (or of the override) becomes the finding's row.

    Returns
    -------
    list of Finding
    """
    out: list[Finding] = []
    for name, sc in scenarios.items():
        moved: set[str] = set()
        for i, ov in enumerate(sc.overrides):
            if ov.table == "commitments":
                line = lines.get((name, i, "table"), lines.get((name, i))) if lines else None
                where = f"scenarios.{name}.overrides[{i}].table"
                out.append(Finding("warning", file, line, where, ov.table, CONTRACT_WARNING))
            if not ov.source.strip():
                line = lines.get((name, i)) if lines else None
                where = f"scenarios.{name}.overrides[{i}].source"
                out.append(Finding("warning", file, line, where, "", SOURCE_WARNING))
            if ov.table in moved or ov.table not in tables:
                continue
            msg = unmatched_override(tables[ov.table], ov)
            if msg is not None:
                line = None
                if lines:
                    line = lines.get((name, i, "where"), lines.get((name, i)))
                where = f"scenarios.{name}.overrides[{i}].where"
                out.append(Finding("error", file, line, where, _where_text(ov), msg))
            if ov.op == "shift" and SPECS[ov.table].column(ov.column).dtype == "period":
                moved.add(ov.table)
    return out


def _where_text(ov: Override) -> str:
    """Return the ``where`` of an override as written, e.g. ``customer=OpenAI``."""
    return ", ".join(f"{k}={'|'.join(v)}" for k, v in ov.where.items()) or "(all rows)"
