"""The solved inputs of each report scenario: ``inputs.yaml`` and its manifest fields.

Every report (``capacity solve``, ``capacity batch``, the app's download) records, per
scenario, the overrides that turned the base data into the data solved (composed
scenarios in order, the app's cell edits as ``set`` overrides): in the manifest entry
(``inputs``) and as ``scenario=<name>/inputs.yaml``, a scenarios document that
``capacity solve DATA --scenarios-file inputs.yaml --scenario NAME`` solves again
(:mod:`capacity.recorded_inputs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capacity.recorded_inputs import INPUTS_FILE, inputs_document, inputs_yaml, not_recreated
from capacity.scenario_spec import Override
from optimizer.output.atomic import write_text_atomic

__all__ = ["SolvedInputs", "solve_flags", "solved_inputs", "write_inputs"]


@dataclass(frozen=True)
class SolvedInputs:
    """What a report records about the data of one solved scenario.

    Attributes
    ----------
    scenario : str
        The name the scenario is reported under.
    overrides : tuple of Override
        Every override applied to the base data, in order (edits last).
    description : str
        The scenario's description.
    dataset_name, dataset_hash : str
        The solved dataset's name and content hash (SHA-256 hex).
    tables_hash : str
        The solved dataset's tables' content hash alone (its scenarios not counted):
        what a re-solve of the record on the same data reproduces.
    edits : tuple of dict
        The cell edits among ``overrides``, as ``{table, key, column, old, new}`` rows
        (the app's edits; empty for a command-line run).
    remade_by : str
        How the plan is made again when ``capacity solve`` of the record does not make
        it (an alternative plan); empty when it does.
    """

    scenario: str
    overrides: tuple[Override, ...]
    description: str = ""
    dataset_name: str = ""
    dataset_hash: str = ""
    edits: tuple[dict[str, str], ...] = field(default_factory=tuple)
    tables_hash: str = ""
    remade_by: str = ""

    def manifest_fields(self, run_dir: Path, file: Path) -> dict[str, Any]:
        """Return the ``inputs`` entry of the manifest: the file, overrides and edits."""
        return {
            "file": file.relative_to(run_dir).as_posix(),
            "scenario": self.scenario,
            "overrides": [o.to_dict() for o in self.overrides],
            "edits": [dict(e) for e in self.edits],
            **({"remade_by": self.remade_by} if self.remade_by else {}),
        }


def solved_inputs(
    ds: Any,
    scenario: str,
    extra: Sequence[Override] = (),
    edits: Sequence[dict[str, str]] = (),
) -> SolvedInputs:
    """Return the recorded inputs of a scenario solved from ``ds``'s named scenarios.

    Parameters
    ----------
    ds : Dataset
        The solved dataset; its ``scenarios`` hold ``scenario`` (absent for the base
        data, which has no overrides).
    scenario : str
        The scenario's name as reported.
    extra : sequence of Override
        Overrides applied after the named scenario's own (composed ones, edits).
    edits : sequence of dict
        The cell edits among ``extra`` (``table, key, column, old, new``).
    """
    named = ds.scenarios.get(scenario)
    own = tuple(named.overrides) if named is not None else ()
    return SolvedInputs(
        scenario=scenario,
        overrides=own + tuple(extra),
        description="" if named is None else named.description,
        dataset_name=str(ds.name),
        dataset_hash=str(ds.hash),
        edits=tuple(dict(e) for e in edits),
        tables_hash=str(ds.tables_hash),
    )


def solve_flags(result: Any) -> str:
    """Return the command-line flags of the solve options a plan was made with.

    Only options that differ from ``capacity solve``'s defaults and shape the plan:
    ``--objective``, ``--integer-units``, ``--clusters``, ``--formulation reference``
    (the same optimum, other columns). ``result`` is a :class:`PlanResult` (or any
    object with those attributes; missing ones count as defaults).
    """
    flags = []
    objective = str(getattr(result, "objective", "cost") or "cost")
    if objective != "cost":
        flags.append(f"--objective {objective}")
    if getattr(result, "integer_units", False):
        flags.append("--integer-units")
    if getattr(result, "clusters", False):
        flags.append("--clusters")
    if getattr(result, "formulation", "compact") == "reference":
        flags.append("--formulation reference")
    return " ".join(flags)


def write_inputs(
    inputs: SolvedInputs, scenario_path: Path, run_dir: Path, flags: str = ""
) -> dict[str, Any]:
    """Write ``<scenario_path>/inputs.yaml`` atomically; return its manifest fields.

    ``flags`` (:func:`solve_flags`) completes the header's command that solves it again
    and is kept in the manifest entry as ``solve_flags``.
    """
    doc = inputs_document(inputs.scenario, inputs.overrides, inputs.description)
    text = inputs_yaml(
        doc,
        dataset_name=inputs.dataset_name,
        dataset_hash=inputs.dataset_hash,
        flags=flags,
        tables_hash=inputs.tables_hash,
        not_recreated=not_recreated(inputs.edits),
        remade_by=inputs.remade_by,
    )
    path = scenario_path / INPUTS_FILE
    write_text_atomic(path, text)
    return {**inputs.manifest_fields(run_dir, path), "solve_flags": flags}
