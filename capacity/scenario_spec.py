"""The scenario spec: Override and Scenario records and the reading of ``scenarios.yaml``.

A scenario is a named list of small overrides applied to a base dataset (applying
and diffing are in :mod:`capacity.scenarios`).

``scenarios.yaml`` maps a scenario name to a description and a list of overrides::

    scenarios:
      negative:
        description: OpenAI ramp halved and delayed; N3 supply cut
        overrides:
          - {op: scale, table: demand, column: demand_h100e,
             where: {customer: openai}, factor: 0.5, source: assumption}
          - {op: shift, table: site_grid, column: grid_mw,
             where: {site: [northern_virginia]}, periods: 4, source: assumption}
          - {op: set, table: eligibility, column: derate,
             where: {chip: trainium3}, value: 0.8, source: assumption}

Operations
----------
scale
    Multiply a numeric column by ``factor`` on the rows matching ``where`` (and
    ``from_period``..``to_period`` for tables with a ``period`` column).
shift
    Move a schedule by ``periods`` quarters (positive = later). For a value column of
    a table with a ``period`` column: the value at p becomes the value at p - n
    within each group of the other key columns; the vacated periods take the first
    value (``fill: hold``, e.g. the grid that already exists) or zero (``fill: zero``).
    For a period column (``commitments.from_period``, ``chips.first_period``) the
    labels themselves move by n quarters.
set
    Replace the values of a column by ``value`` on the matching rows.

YAML is read with every scalar as text, then each field is converted to its type
here: ``1e3`` is the number 1000 and the region code ``NO`` stays the string "NO".
Unknown keys are rejected. The pseudo-scenario ``base`` (no overrides) always exists.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from capacity.schema import PERIOD_RE, SOLVER_SAFE_MAX, SPECS
from capacity.validation import Finding, suggest

MAX_SHIFT_PERIODS = 400
"""Largest shift of a schedule, in quarters (100 years), either way."""


def _finite(v: float, what: str) -> float:
    """Return ``v`` when it is a finite number within the solver-safe range, else raise.

    Raises
    ------
    ValueError
        For NaN, +-inf or a magnitude above :data:`capacity.schema.SOLVER_SAFE_MAX`.
    """
    if not math.isfinite(v):
        raise ValueError(f"{what} must be a finite number, got {v}")
    if abs(v) > SOLVER_SAFE_MAX:
        raise ValueError(f"{what} must be at most {SOLVER_SAFE_MAX:g} in magnitude, got {v:g}")
    return v


class Override(BaseModel):
    """One small patch of the data (see the module docstring for the operations)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    op: Literal["scale", "shift", "set"]
    table: str
    column: str
    where: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    from_period: str | None = None
    to_period: str | None = None
    factor: float | None = None
    periods: int | None = None
    fill: Literal["hold", "zero"] = "hold"
    value: str | None = None
    source: str = ""
    note: str = ""

    @field_validator("where", mode="before")
    @classmethod
    def _where_lists(cls, v: Any) -> Any:
        if v is None or v == "":
            return {}
        if not isinstance(v, Mapping):
            raise ValueError("where must map column names to a value or a list of values")
        return {
            str(k): tuple(str(x) for x in (val if isinstance(val, list | tuple) else [val]))
            for k, val in v.items()
        }

    @field_validator("factor")
    @classmethod
    def _finite_factor(cls, v: float | None) -> float | None:
        return None if v is None else _finite(v, "factor")

    @field_validator("periods")
    @classmethod
    def _few_periods(cls, v: int | None) -> int | None:
        if v is not None and abs(v) > MAX_SHIFT_PERIODS:
            raise ValueError(
                f"periods must be within ±{MAX_SHIFT_PERIODS} quarters (a shift of "
                f"{MAX_SHIFT_PERIODS // 4} years), got {v}"
            )
        return v

    @field_validator("from_period", "to_period")
    @classmethod
    def _period(cls, v: str | None) -> str | None:
        if v is not None and not PERIOD_RE.match(v):
            raise ValueError(f"{v!r} is not a quarter like 2026Q3")
        return v

    @model_validator(mode="after")
    def _check(self) -> Override:
        if self.table not in SPECS:
            raise ValueError(f"unknown table {self.table!r}." + suggest(self.table, SPECS))
        spec = SPECS[self.table]
        if not spec.has_column(self.column):
            raise ValueError(
                f"unknown column {self.column!r} in {self.table}."
                + suggest(self.column, spec.column_names)
            )
        for k in self.where:
            if not spec.has_column(k):
                raise ValueError(
                    f"where: unknown column {k!r} in {self.table}." + suggest(k, spec.column_names)
                )
        col = spec.column(self.column)
        self._no_other_ops_keys()
        if self.op == "scale":
            if self.factor is None:
                raise ValueError("scale needs a factor")
            if self.factor < 0:
                raise ValueError(f"factor must not be negative, got {self.factor:g}")
            if col.dtype != "float":
                raise ValueError(
                    f"scale needs a decimal number column; {self.column} is {col.dtype}"
                )
        if self.op == "shift":
            if self.periods is None:
                raise ValueError("shift needs periods (quarters, positive = later)")
            if col.dtype != "period" and (not col.is_numeric or not spec.has_column("period")):
                raise ValueError(
                    f"shift moves a numeric column of a table with a period column, or a "
                    f"period column; {self.table}.{self.column} is neither"
                )
        if self.op == "set" and self.value is None:
            raise ValueError("set needs a value")
        if self.op == "set" and col.is_numeric:
            try:
                number = float(str(self.value))
            except ValueError:
                raise ValueError(
                    f"set: {self.value!r} is not a number ({self.column} is {col.dtype})"
                ) from None
            _finite(number, "set: value")
        if (self.from_period or self.to_period) and not spec.has_column("period"):
            raise ValueError(
                f"from_period/to_period need a table with a period column, not {self.table}"
            )
        return self

    def _no_other_ops_keys(self) -> None:
        """Refuse a key of another operation (``value`` on a scale): it was ignored."""
        own = {"scale": "factor", "shift": "periods", "set": "value"}
        given = {k for k in own.values() if getattr(self, k) is not None}
        if self.fill != "hold":
            given.add("fill")
        wrong = sorted(given - {own[self.op]} - ({"fill"} if self.op == "shift" else set()))
        if wrong:
            keys = ", ".join(wrong)
            raise ValueError(
                f"{keys} {'is' if len(wrong) == 1 else 'are'} not read by op {self.op!r} "
                f"(it takes {own[self.op]}): drop {keys}, or use the op that reads "
                f"{'it' if len(wrong) == 1 else 'them'}"
            )

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (for YAML and hashing), without empty fields."""
        d = self.model_dump(exclude_none=True)
        d["where"] = {k: list(v) for k, v in self.where.items()}
        return {k: v for k, v in d.items() if v not in ({}, "")}


class Scenario(BaseModel):
    """A named list of overrides."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    overrides: tuple[Override, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (for YAML and hashing)."""
        return {"description": self.description, "overrides": [o.to_dict() for o in self.overrides]}


def override_lines(text: str) -> dict[tuple[Any, ...], int]:
    """Map (scenario, override index[, key]) to 1-based lines of ``scenarios.yaml``.

    ``(scenario,)`` gives the line of the scenario's name, ``(scenario, i)`` the line
    where override ``i`` starts and ``(scenario, i, key)`` the line of one of its keys.

    Used so that findings about ``scenarios.yaml`` name a line an editor can jump to.
    Returns an empty mapping when the text is not a mapping of the expected shape.
    """
    import yaml

    from capacity.safe_yaml import compose_yaml

    out: dict[tuple[Any, ...], int] = {}
    try:
        root = compose_yaml(text)
    except yaml.YAMLError:
        return out
    if not isinstance(root, yaml.MappingNode):
        return out
    for k, v in root.value:
        if k.value != "scenarios" or not isinstance(v, yaml.MappingNode):
            continue
        for name_node, body in v.value:
            out[(str(name_node.value),)] = name_node.start_mark.line + 1
            if not isinstance(body, yaml.MappingNode):
                continue
            for key_node, ovs in body.value:
                if key_node.value == "overrides" and isinstance(ovs, yaml.SequenceNode):
                    for i, node in enumerate(ovs.value):
                        out[(str(name_node.value), i)] = node.start_mark.line + 1
                        if isinstance(node, yaml.MappingNode):
                            for field_node, _ in node.value:
                                line = field_node.start_mark.line + 1
                                out[(str(name_node.value), i, str(field_node.value))] = line
    return out


def _line(lines: Mapping[Any, int] | None, name: str, i: int, loc: tuple[Any, ...]) -> int | None:
    if not lines:
        return None
    if loc and (name, i, str(loc[0])) in lines:
        return lines[(name, i, str(loc[0]))]
    return lines.get((name, i))


def override_error_message(err: Mapping[str, Any], loc: str) -> str:
    """Return the finding message of one pydantic error of an override at ``loc``.

    An unknown key gets a "did you mean" hint; a validator's message loses pydantic's
    "Value error, " prefix.
    """
    if err.get("type") == "extra_forbidden":
        return f"unknown key {loc!r}." + suggest(loc, list(Override.model_fields))
    return str(err["msg"]).removeprefix("Value error, ")


#: The name of the data as loaded, with no scenario applied (``--scenario base``).
BASE = "base"

#: The word that selects every scenario (``--scenario all``): no scenario may be named so.
ALL_SCENARIOS = "all"

#: YAML's empty values as the text loader reads them: a scenario with no overrides.
_EMPTY_BODY = ("", "~", "null", "Null", "NULL")


def base_name_problem(name: str, overrides: int) -> str | None:
    """Say why a scenario or case named ``base`` cannot carry ``overrides`` (None if it can).

    ``base`` is the data as loaded: ``--scenario base``, the app's scenario list and every
    comparison against the base mean the tables without any scenario. A scenario so named
    with overrides would quietly change what all of them mean, so it is refused; with no
    override it is the base data under its own name (a report's record of the base data).

    Parameters
    ----------
    name : str
        The scenario's or sweep case's name.
    overrides : int
        How many overrides it applies to the data as loaded.
    """
    if name != BASE or not overrides:
        return None
    return (
        f"the name {BASE!r} means the data as loaded (--scenario {BASE}, the app's "
        f"{BASE!r}), so a scenario so named cannot carry overrides; rename it (a report "
        f"downloaded from an older app named its edited data {BASE!r}: rename it in that "
        f"inputs.yaml and pass the new name to --scenario)"
    )


def parse_scenarios(
    doc: Any, file: str = "scenarios.yaml", lines: Mapping[Any, int] | None = None
) -> tuple[dict[str, Scenario], list[Finding]]:
    """Parse a scenarios document (as loaded from YAML) into Scenario objects.

    Parameters
    ----------
    doc : Any
        The YAML document: ``{"scenarios": {name: {description, overrides}}}``.
    file : str
        File name used in findings.
    lines : Mapping, optional
        Line of each override (from :func:`override_lines`), reported as the
        finding's row.

    Returns
    -------
    (dict of Scenario, list of Finding)
        Valid scenarios by name and an error finding for each invalid one, naming
        the scenario, the override's position, line and field; an unknown key gets
        a "did you mean" hint.
    """
    findings: list[Finding] = []
    out: dict[str, Scenario] = {}
    if doc is None or doc == "":
        return out, findings
    if not isinstance(doc, Mapping) or not isinstance(doc.get("scenarios", {}), Mapping):
        findings.append(
            Finding("error", file, None, None, None, "expected a mapping 'scenarios: {name: ...}'")
        )
        return out, findings
    if extra := ", ".join(sorted(set(doc) - {"scenarios"})):
        only = "unknown top-level key(s); only 'scenarios' is allowed"
        findings.append(Finding("error", file, None, None, extra, only))
    folded: dict[str, str] = {}
    for name, body in (doc.get("scenarios") or {}).items():
        sc = _parse_one(str(name), body, file, lines, findings, folded)
        if sc is not None:
            out[sc.name] = sc
    return out, findings


def _parse_one(
    name: str,
    body: Any,
    file: str,
    lines: Mapping[Any, int] | None,
    findings: list[Finding],
    folded: dict[str, str],
) -> Scenario | None:
    """Parse one scenario; its findings (at its name's line) go to ``findings``; None on error."""
    at = (lines or {}).get((name,))

    def error(column: str, value: str | None, message: str) -> None:
        findings.append(Finding("error", file, at, column, value, message))

    problem = _name_problem(name) or _folded_problem(folded, name)
    if problem is not None:
        error(f"scenarios.{name}", name, problem)
        return None
    body = _body(body)
    if isinstance(body, str):  # a list was read as no overrides, without a word
        error(f"scenarios.{name}", None, body)
        return None
    ovs = body.get("overrides") or []
    if not isinstance(ovs, list):
        error(f"{name}.overrides", None, "must be a list")
        return None
    parsed = _parse_overrides(name, ovs, file, lines, findings)
    problem = base_name_problem(name, len(ovs))
    if problem is not None:
        error(f"scenarios.{name}", name, problem)
        return None
    extra_keys = set(body) - {"description", "overrides"}
    if extra_keys:
        only = "unknown key(s); a scenario has 'description' and 'overrides'"
        error(f"scenarios.{name}", ", ".join(sorted(extra_keys)), only)
    return Scenario(
        name=name, description=str(body.get("description", "")), overrides=tuple(parsed)
    )


def _body(body: Any) -> Mapping[str, Any] | str:
    """Return a scenario's body as a mapping (empty: no overrides), or why it is none."""
    if body is None or (isinstance(body, str) and body.strip() in _EMPTY_BODY):
        return {}
    if isinstance(body, Mapping):
        return body
    kind = "a list" if isinstance(body, list) else f"the text {str(body)!r}"
    return (
        f"a scenario is a mapping with 'description' and 'overrides', not {kind}; "
        "put the overrides under 'overrides:'"
    )


def _folded_problem(folded: dict[str, str], name: str) -> str | None:
    """Say when ``name`` differs from an earlier scenario's only in letter case.

    ``scenario=neutral`` and ``scenario=Neutral`` are one report folder on macOS and
    Windows. ``folded`` maps each case-folded name seen to its first spelling.
    """
    other = folded.setdefault(name.casefold(), name)
    if other == name:
        return None
    return (
        f"scenarios {other!r} and {name!r} differ only in letter case: their report "
        "folders are one on macOS and Windows; rename one"
    )


def _name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a scenario (reserved, or no report folder can hold it)."""
    from capacity.limits import scenario_name_problem

    if name.strip().lower() == ALL_SCENARIOS:
        return (
            f"the name {ALL_SCENARIOS!r} is reserved: --scenario {ALL_SCENARIOS} means "
            "every scenario, so this one could never be chosen alone; rename it"
        )
    return scenario_name_problem(name)


def _parse_overrides(
    name: str,
    ovs: list[Any],
    file: str,
    lines: Mapping[Any, int] | None,
    findings: list[Finding],
) -> list[Override]:
    """Validate one scenario's overrides; append a finding per error (file, line, field)."""
    parsed: list[Override] = []
    for i, ov in enumerate(ovs):
        try:
            parsed.append(Override.model_validate(ov))
        except ValidationError as e:
            for err in e.errors():
                loc = ".".join(str(x) for x in err["loc"])
                where = f"scenarios.{name}.overrides[{i}]" + (f".{loc}" if loc else "")
                val = err.get("input")
                findings.append(
                    Finding(
                        "error",
                        file,
                        _line(lines, name, i, err["loc"]),
                        where,
                        None if isinstance(val, dict | list) else str(val),
                        override_error_message(err, loc),
                    )
                )
    return parsed
