"""The inputs of a solved plan, recorded so that the plan can be solved again.

A report records, for each scenario it holds, the full list of overrides that turned
the base data into the data solved (the scenario's own overrides, composed ones in
order, and cell edits written as ``set`` overrides). The record is a scenarios
document (``scenarios: {name: {description, overrides}}``, the format of
``scenarios.yaml``), so ``capacity solve DATA --scenarios-file inputs.yaml --scenario
NAME`` takes it back; comments at its top name the dataset and its content hash.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from capacity.scenario_spec import Override, Scenario, override_lines, parse_scenarios
from capacity.validation import DataValidationError, Finding

__all__ = [
    "INPUTS_FILE",
    "EDIT_SOURCE",
    "edits_as_overrides",
    "inputs_document",
    "inputs_yaml",
    "not_recreated",
    "read_scenarios_file",
    "recorded_hash",
    "recorded_other_plan",
]

INPUTS_FILE = "inputs.yaml"
"""Name of the recorded inputs in each ``scenario=<name>/`` folder of a report."""


def inputs_document(
    scenario: str, overrides: Sequence[Override], description: str = ""
) -> dict[str, Any]:
    """Return the scenarios document that re-creates one solved scenario.

    Parameters
    ----------
    scenario : str
        The scenario's name as reported (``neutral``, ``negative+custom``).
    overrides : sequence of Override
        Every override applied to the base data, in the order applied (empty for
        the base data).
    description : str
        The scenario's description.

    Returns
    -------
    dict
        ``{"scenarios": {scenario: {"description": ..., "overrides": [...]}}}``, plain
        data (each override as :meth:`capacity.scenario_spec.Override.to_dict`).
    """
    body = {"description": description, "overrides": [o.to_dict() for o in overrides]}
    return {"scenarios": {scenario: body}}


def inputs_yaml(
    doc: Mapping[str, Any],
    *,
    dataset_name: str,
    dataset_hash: str,
    flags: str = "",
    tables_hash: str = "",
    not_recreated: Sequence[Mapping[str, str]] = (),
    remade_by: str = "",
) -> str:
    """Return the text of ``inputs.yaml``: a header naming the data, then the document.

    Parameters
    ----------
    doc : Mapping
        From :func:`inputs_document`.
    dataset_name, dataset_hash : str
        The base dataset's name and content hash (SHA-256 hex), for the header.
    flags : str
        The solve options the plan was made with that differ from the defaults, as
        command-line flags (``--objective margin``); added to the header's command.
    tables_hash : str
        Content hash of the solved tables alone, for the header's ``Tables as solved``
        line that :func:`recorded_hash` reads (omitted when empty).
    not_recreated : sequence of mapping
        Edits no override can write (:func:`not_recreated`: rows added or deleted, a
        number cleared): the header lists them, as the re-solve of the file on the
        data as loaded misses them (and the tables' hash then differs).
    """
    (name,) = doc["scenarios"]
    again = f"capacity solve DATA --scenarios-file {INPUTS_FILE} --scenario {_quoted(name)}"
    header = (
        f"# Inputs of scenario {name!r} as solved: the base data {dataset_name!r} with\n"
        f"# these overrides applied in order (data as solved: content hash {dataset_hash}).\n"
        f"# Solve it again: {again}{' ' + flags if flags else ''}\n"
    )
    if remade_by:  # the command solves the data recorded, not this plan
        header = header.replace(
            "# Solve it again: ",
            f"# This plan is {remade_by}.\n# This command solves the same data to its cost "
            "optimum, NOT to this plan: ",
        )
    if tables_hash:
        header += f"# Tables as solved: tables content hash {tables_hash}.\n"
    if not_recreated:
        header += (
            f"# NOT re-created by these overrides ({len(not_recreated)} edit(s); make them in "
            "the data first, or the plan differs):\n"
        )
        for e in not_recreated[:20]:
            what = {"added": "row added", "(no row)": "row deleted", "(cleared)": "cleared"}
            kind = what.get(e["new"], e["new"])
            col = "" if e["column"] == "(row)" else f" {e['column']}"
            header += f"#   {e['table']} {e['key']}{col}: {kind}\n"
        if len(not_recreated) > 20:
            header += (
                f"#   ... and {len(not_recreated) - 20} more (the manifest lists every edit)\n"
            )
    return header + yaml.safe_dump(dict(doc), sort_keys=False, allow_unicode=True)


def not_recreated(edits: Sequence[Mapping[str, str]]) -> list[Mapping[str, str]]:
    """Return the edits among :func:`edits_as_overrides`'s rows that no override writes.

    Rows added (``new`` ``added``) or deleted (``new`` ``(no row)``) and numbers cleared
    (``new`` ``(cleared)``).
    """
    return [e for e in edits if e.get("new") in ("added", "(no row)", "(cleared)")]


def recorded_hash(path: str | Path) -> str | None:
    """Return the tables' content hash an ``inputs.yaml`` header records for the data solved.

    Parameters
    ----------
    path : str or Path
        A report's ``inputs.yaml`` (see :func:`inputs_yaml`).

    Returns
    -------
    str or None
        The 64-hex-digit SHA-256 of the tables as solved (base data with the
        overrides applied; the data's scenarios are not counted, so the same tables
        re-solved from this file give the same hash: ``Dataset.tables_hash``); None
        for a file without that header line (a scenarios.yaml, an older report), or
        one that cannot be read.
    """
    import re

    try:
        head = Path(path).read_text(encoding="utf-8")[:2000]
    except (OSError, UnicodeDecodeError):
        return None
    found = re.search(r"tables content hash ([0-9a-f]{64})", head)
    return found.group(1) if found else None


def recorded_other_plan(path: str | Path) -> str | None:
    """Return what an ``inputs.yaml`` says its plan is when a solve does not make it.

    The ``# This plan is ...`` header line :func:`inputs_yaml` writes for ``remade_by``
    (an alternative plan: another objective under a cost cap); None when the file has
    none (a cost-optimal plan's record, a scenarios.yaml, an unreadable file).
    """
    import re

    try:
        head = Path(path).read_text(encoding="utf-8")[:4000]
    except (OSError, UnicodeDecodeError):
        return None
    if not head.startswith("# Inputs of scenario "):  # only the header a report writes
        return None
    lines = head.splitlines()
    header = lines[: next((i for i, line in enumerate(lines) if not line.startswith("#")), None)]
    found = [m for line in header if (m := re.match(r"^# This plan is (.+)\.$", line))]
    return found[0].group(1) if found else None


def _quoted(name: str) -> str:
    """Return ``name`` as one shell word (quoted when it holds more than [A-Za-z0-9_.+-])."""
    import shlex

    return shlex.quote(name)


EDIT_SOURCE = "edited in the app"
"""``source`` of the ``set`` overrides that record cell edits."""


def edits_as_overrides(origin: Any, edited: Any) -> tuple[list[Override], list[dict[str, str]]]:
    """Return the cell edits from ``origin`` to ``edited`` as ``set`` overrides, and as rows.

    Each changed cell of a row present in both (matched on the table's key) becomes
    one ``set`` override whose ``where`` names the row's key, so applying the
    overrides to ``origin`` gives ``edited``'s values. A row added or removed cannot
    be written as an override, nor can a cleared number: they are listed among the
    rows (``column`` ``(row)`` with ``(no row)`` on one side; ``new`` ``(cleared)``),
    and the overrides do not re-create them.

    Parameters
    ----------
    origin, edited : Dataset
        The data as loaded and the data with the edits (same tables).

    Returns
    -------
    (list of Override, list of dict)
        The overrides, in table and row order, and one ``{table, key, column, old,
        new}`` row per edit (``key``: the key values joined by ``/``).
    """
    from capacity.schema import SPECS

    overrides: list[Override] = []
    rows: list[dict[str, str]] = []
    for name, spec in SPECS.items():
        a, b = origin.table(name), edited.table(name)
        if a.equals(b):
            continue
        key = list(spec.key)
        old = {_key(r, key): r for r in a.to_dict("records")}
        new = {_key(r, key): r for r in b.to_dict("records")}
        for k, r in new.items():
            if k not in old:
                rows.append(_edit_row(name, k, "(row)", "(no row)", "added"))
                continue
            for col in spec.column_names:
                if col in key or _same(old[k][col], r[col]):
                    continue
                value = _text(r[col])
                try:
                    ov = Override(
                        op="set",
                        table=name,
                        column=col,
                        where={c: (v,) for c, v in zip(key, k, strict=True)},
                        value=value,
                        source=EDIT_SOURCE,
                    )
                except ValueError:  # a cleared number: no override can write it
                    rows.append(_edit_row(name, k, col, _text(old[k][col]), "(cleared)"))
                    continue
                overrides.append(ov)
                rows.append(_edit_row(name, k, col, _text(old[k][col]), value))
        for k in old.keys() - new.keys():
            rows.append(_edit_row(name, k, "(row)", "removed", "(no row)"))
    return overrides, rows


def _key(row: Mapping[str, Any], key: Sequence[str]) -> tuple[str, ...]:
    return tuple(_text(row[c]) for c in key)


def _edit_row(table: str, key: tuple[str, ...], column: str, old: str, new: str) -> dict[str, str]:
    return {"table": table, "key": "/".join(key), "column": column, "old": old, "new": new}


def _text(v: Any) -> str:
    """Return a cell as the text a ``set`` override carries (floats exactly, by repr)."""
    if isinstance(v, float):
        return "" if math.isnan(v) else repr(v)
    return "" if v is None else str(v)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return _text(a) == _text(b)


def read_scenarios_file(path: str | Path) -> dict[str, Scenario]:
    """Read a scenarios document from any file (``inputs.yaml`` of a report, a scenarios.yaml).

    Parameters
    ----------
    path : str or Path
        A YAML file of the form ``scenarios: {name: {description, overrides}}``.

    Returns
    -------
    dict of Scenario
        The scenarios by name.

    Raises
    ------
    DataValidationError
        When the file is missing, not valid YAML or holds an invalid override (each
        finding names the file and the override's line).
    """
    from capacity.dataset import read_yaml_file

    p = Path(path)
    if not p.is_file():
        where = p.absolute()
        why = "is a directory, not a scenarios file" if p.is_dir() else "scenarios file not found"
        raise DataValidationError([Finding("error", str(p), None, None, None, f"{why}: {where}")])
    doc = read_yaml_file(p)
    lines = override_lines(p.read_text(encoding="utf-8"))
    scenarios, findings = parse_scenarios(doc, p.name, lines)
    if any(f.severity == "error" for f in findings):
        raise DataValidationError(findings)
    return scenarios
