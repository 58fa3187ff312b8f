"""Cases whose data does not validate: found in the client before solving, as findings.

Before anything is solved, every case still to run has its overrides applied to the base
dataset in the client (:func:`validate_cases`; only what the overrides touch is
re-validated, :mod:`capacity.revalidate`). A case whose data no longer validates (a grid
level that takes a PUE below 1) is not sent to the cluster: it is recorded at once with
``state: "failed"``, ``status: "invalid_data"``, its error findings under ``findings``
(file, row, column, value, message) and as text under ``error`` (no traceback: it is a
data error), and the valid cases still run. ``batch_summary.csv`` carries the first
finding in its ``error`` column. Tracebacks are kept only for unexpected exceptions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from capacity.scenarios import UnknownScenarioError, apply_overrides, apply_scenario
from capacity.validation import DataValidationError, Finding
from optimizer.analysis.sweep_cases import SweepCase

__all__ = ["INVALID_DATA", "error_text", "finding_text", "validate_cases"]

#: Status of a case whose data does not validate (never solved).
INVALID_DATA = "invalid_data"


def finding_text(f: Finding) -> str:
    """One line for a finding: ``sites.csv, row 2, column 'pue_air' (value '0.65'): msg``."""
    return str(f).removeprefix(f"{f.severity}: ")


def error_text(exc: Exception) -> str:
    """Readable text of a data error: one finding per line (errors first)."""
    if isinstance(exc, DataValidationError):
        found = exc.errors or list(exc.findings)
        return "\n".join(finding_text(f) for f in found)
    return str(exc)


def validate_cases(base: Any, cases: Sequence[SweepCase]) -> dict[str, tuple[Finding, ...]]:
    """Apply each case's scenario and overrides to ``base`` and collect data errors.

    Parameters
    ----------
    base : Dataset
        The sweep's base dataset.
    cases : sequence of SweepCase

    Returns
    -------
    dict of str to tuple of Finding
        Case name -> its error findings, for the cases whose data does not validate
        only (a valid case is absent). A base scenario that does not validate makes
        every case built on it invalid, with the scenario's findings.

    Notes
    -----
    Costs one :func:`capacity.scenarios.apply_overrides` per case (re-validation of
    the overridden columns and of the checks that read them, about 0.013 s of CPU a
    case on the default data); named base scenarios are applied once each.
    """
    refs: dict[str | None, Any] = {}
    out: dict[str, tuple[Finding, ...]] = {}
    for case in cases:
        try:
            if case.base not in refs:
                try:
                    refs[case.base] = apply_scenario(base, case.base)
                except (DataValidationError, UnknownScenarioError) as exc:
                    refs[case.base] = exc
            ref = refs[case.base]
            if isinstance(ref, Exception):
                raise ref
            if case.overrides:
                apply_overrides(ref, case.overrides, scenario=case.name)
        except DataValidationError as exc:
            out[case.name] = tuple(case.located(f) for f in exc.errors or exc.findings)
        except UnknownScenarioError as exc:
            out[case.name] = (Finding("error", "sweep", None, "base", case.base, str(exc)),)
    return out
