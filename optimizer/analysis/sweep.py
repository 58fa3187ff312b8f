"""Sweep specification: which scenarios a batch run solves.

A sweep file (YAML) names a dataset and lists the cases to solve::

    data: data                      # dataset directory (default: data)
    scenarios:                      # named scenarios of the dataset, or composed ones
      - optimistic
      - neutral
      - negative
      - name: cowos_cut
        base: neutral               # optional named scenario applied first
        overrides:
          - {op: scale, table: supply_resources, column: capacity,
             where: {resource: cowos_wafers}, factor: 0.5}
    grid:                           # Cartesian product of override levels
      base: neutral
      axes:
        - name: cowos
          override: {op: scale, table: supply_resources, column: capacity,
                     where: {resource: cowos_wafers}}
          levels: [0.6, 0.8, 1.0, 1.2]
        - name: openai_demand
          override: {op: scale, table: demand, column: demand_h100e,
                     where: {customer: openai}}
          levels: [0.5, 1.0]
    monte_carlo:                    # seeded random draws of override levels
      base: neutral
      samples: 50
      seed: 7
      parameters:
        - name: cowos
          override: {op: scale, table: supply_resources, column: capacity,
                     where: {resource: cowos_wafers}}
          distribution: {kind: triangular, low: 0.6, mode: 1.0, high: 1.2}

A level fills the override's ``factor`` (``op: scale``), ``periods`` (``op: shift``,
rounded to a whole quarter) or ``value`` (``op: set``). An axis or parameter may give
``overrides: [...]`` (a list, every one filled with the same level) instead of one
``override``.

Distributions (``scipy.stats`` frozen distributions sampled with one
``numpy.random.Generator`` seeded by ``seed``; the same seed gives the same draws):

* ``uniform``: ``low``, ``high``;
* ``triangular``: ``low``, ``mode``, ``high``;
* ``truncnorm``: ``mean``, ``sd``, ``low``, ``high`` (normal truncated to [low, high]);
* ``lognormal``: ``median``, ``sigma`` (standard deviation of the log), optional
  ``low``/``high`` clip.

The YAML is read like the dataset's (:func:`yaml.BaseLoader`: every scalar is text
and pydantic converts it), so ``1e3`` is a number and ``NO`` stays a string. Unknown
keys are rejected. Every error is a :class:`~capacity.validation.Finding` naming the
sweep file, the line of the offending key (the ``row`` of the finding) and its field
(``grid.axes[0].levels``); an unknown key or scenario name gets a "did you mean"
hint, and an error that only follows from another one (an empty ``axes`` list after
its only axis failed) is not reported twice.

Case names are stable and Hive-safe: the named scenario itself, ``grid_<axis>-<level>
_<axis>-<level>`` and ``mc_<nnn>``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from scipy import stats

from capacity.safe_yaml import YamlLimitError, compose_yaml, load_yaml
from capacity.scenario_spec import Override
from capacity.validation import Finding, suggest

__all__ = [
    "Axis",
    "ComposedScenario",
    "Distribution",
    "GridSpec",
    "MonteCarloSpec",
    "Parameter",
    "SweepCase",
    "SweepSpec",
    "SweepSpecError",
    "cases_dataset",
    "expand_sweep",
    "fill_level",
    "load_sweep",
    "parse_sweep",
    "sweep_lines",
]

_LEVEL_FIELD = {"scale": "factor", "shift": "periods", "set": "value"}


class SweepSpecError(ValueError):
    """A sweep file is invalid.

    Parameters
    ----------
    findings : sequence of Finding
        One error per problem: ``file`` is the sweep file, ``row`` the 1-based line of
        the offending key (None when unknown), ``column`` the field path
        (``grid.axes[0].override``), ``value`` the text written there.

    Attributes
    ----------
    findings : list of Finding
    errors : list of (str, str)
        ``(field, message)`` pairs of the findings.
    file : str
    """

    def __init__(self, findings: Sequence[Finding]) -> None:
        self.findings = list(findings)
        self.file = self.findings[0].file if self.findings else "sweep"
        super().__init__(
            "invalid sweep specification\n" + "\n".join(_finding_line(f) for f in self.findings)
        )

    @property
    def errors(self) -> list[tuple[str, str]]:
        """``(field, message)`` of every finding."""
        return [(f.column or "", f.message) for f in self.findings]


def _finding_line(f: Finding) -> str:
    where = f.file + ("" if f.row is None else f" line {f.row}")
    return f"{where}: {f.column or '(top level)'}: {f.message}"


def _error(file: str, message: str, column: str = "", line: int | None = None) -> SweepSpecError:
    return SweepSpecError([Finding("error", file, line, column or None, None, message)])


class _PathError(ValueError):
    """A validator error about a part of the item: ``path`` extends the error's location."""

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        self.path = path
        super().__init__(message)


def fill_level(template: Mapping[str, Any], level: float | str) -> Override:
    """Fill an override template with one level and validate it.

    Parameters
    ----------
    template : mapping
        An override without its level (``op``, ``table``, ``column``, ``where`` ...).
    level : float or str
        The factor (scale), number of quarters (shift; rounded to an int) or value (set).

    Returns
    -------
    Override

    Raises
    ------
    pydantic.ValidationError
        When the filled override is invalid (e.g. a negative factor).
    """
    op = str(template.get("op", ""))
    key = _LEVEL_FIELD.get(op)
    body = dict(template)
    if key == "periods":
        body[key] = int(round(float(level)))
    elif key == "value":
        body[key] = _level_text(level)
    elif key is not None:
        body[key] = level
    return Override.model_validate(body)


def _level_text(level: float | str) -> str:
    if isinstance(level, float) and level.is_integer():
        return str(int(level))
    return str(level)


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Templated(_Frozen):
    """Shared part of an axis and a Monte Carlo parameter: a name and override template(s)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.+\-]+$")
    override: dict[str, Any] | None = None
    overrides: tuple[dict[str, Any], ...] | None = None

    @model_validator(mode="after")
    def _one_template(self) -> _Templated:
        if (self.override is None) == (self.overrides is None):
            raise ValueError("give exactly one of 'override' (a mapping) or 'overrides' (a list)")
        fields = list(Override.model_fields)
        for k, t in enumerate(self.templates):
            at: tuple[str | int, ...] = (
                ("override",) if self.override is not None else ("overrides", k)
            )
            for key in t:
                if key not in Override.model_fields:
                    raise _PathError(
                        (*at, str(key)), f"unknown key {key!r}." + suggest(str(key), fields)
                    )
            if str(t.get("op")) not in _LEVEL_FIELD:
                raise _PathError(
                    (*at, "op") if "op" in t else at,
                    f"override op must be scale, shift or set, got {t.get('op')!r}",
                )
            lvl = _LEVEL_FIELD[str(t["op"])]
            if lvl in t:
                raise _PathError(
                    (*at, lvl), f"leave '{lvl}' out of the override: the levels fill it"
                )
        return self

    @property
    def templates(self) -> tuple[dict[str, Any], ...]:
        """The override template(s) as a tuple."""
        if self.override is not None:
            return (self.override,)
        return tuple(self.overrides or ())

    def fill(self, level: float | str) -> tuple[Override, ...]:
        """Return the overrides of this axis at ``level``."""
        return tuple(fill_level(t, level) for t in self.templates)


class Axis(_Templated):
    """One grid axis: override template(s) and the levels to try."""

    levels: tuple[float | str, ...] = Field(min_length=1)

    @field_validator("levels", mode="before")
    @classmethod
    def _levels(cls, v: Any) -> Any:
        if not isinstance(v, list | tuple):
            raise ValueError("levels must be a list")
        out: list[float | str] = []
        for x in v:
            try:
                out.append(float(x))
            except (TypeError, ValueError):
                out.append(str(x))
        return tuple(out)

    @model_validator(mode="after")
    def _levels_valid(self) -> Axis:
        for i, lv in enumerate(self.levels):
            try:
                self.fill(lv)
            except ValidationError as e:
                msg = "; ".join(_message(x, Override) for x in e.errors())
                raise _PathError(
                    ("levels", i), f"level {_fmt(lv)} gives an invalid override: {msg}"
                ) from None
        return self


class GridSpec(_Frozen):
    """Cartesian product of axis levels on top of a base scenario."""

    base: str | None = None
    axes: tuple[Axis, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> GridSpec:
        names = [a.name for a in self.axes]
        if len(set(names)) != len(names):
            raise ValueError(f"axis names must be unique, got {names}")
        return self


class Distribution(_Frozen):
    """A sampling distribution of a Monte Carlo parameter (see the module docstring)."""

    kind: Literal["uniform", "triangular", "truncnorm", "lognormal"]
    low: float | None = None
    high: float | None = None
    mode: float | None = None
    mean: float | None = None
    sd: float | None = Field(default=None, gt=0)
    median: float | None = Field(default=None, gt=0)
    sigma: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _params(self) -> Distribution:
        need = {
            "uniform": ("low", "high"),
            "triangular": ("low", "mode", "high"),
            "truncnorm": ("mean", "sd", "low", "high"),
            "lognormal": ("median", "sigma"),
        }[self.kind]
        allowed = set(need) | ({"low", "high"} if self.kind == "lognormal" else set())
        missing = [k for k in need if getattr(self, k) is None]
        if missing:
            raise ValueError(f"{self.kind} needs {', '.join(need)}; missing {', '.join(missing)}")
        extra = [
            k
            for k in ("low", "high", "mode", "mean", "sd", "median", "sigma")
            if k not in allowed and getattr(self, k) is not None
        ]
        if extra:
            raise ValueError(f"{self.kind} takes {', '.join(sorted(allowed))}; not {extra}")
        if self.low is not None and self.high is not None and not self.low < self.high:
            raise ValueError(f"low ({self.low:g}) must be below high ({self.high:g})")
        if self.kind == "triangular" and not (self.low <= self.mode <= self.high):  # type: ignore[operator]
            raise ValueError("triangular needs low <= mode <= high")
        return self

    def frozen(self) -> Any:
        """Return the ``scipy.stats`` frozen distribution."""
        if self.kind == "uniform":
            return stats.uniform(loc=self.low, scale=float(self.high) - float(self.low))  # type: ignore[arg-type]
        if self.kind == "triangular":
            lo, hi, mo = float(self.low), float(self.high), float(self.mode)  # type: ignore[arg-type]
            return stats.triang(c=(mo - lo) / (hi - lo), loc=lo, scale=hi - lo)
        if self.kind == "truncnorm":
            mu, sd = float(self.mean), float(self.sd)  # type: ignore[arg-type]
            a, b = (float(self.low) - mu) / sd, (float(self.high) - mu) / sd  # type: ignore[arg-type]
            return stats.truncnorm(a, b, loc=mu, scale=sd)
        return stats.lognorm(s=float(self.sigma), scale=float(self.median))  # type: ignore[arg-type]

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draw ``n`` values with ``rng`` (lognormal values clipped to [low, high])."""
        x = np.asarray(self.frozen().rvs(size=n, random_state=rng), dtype="float64")
        if self.kind == "lognormal" and (self.low is not None or self.high is not None):
            x = np.clip(x, self.low, self.high)
        return x


class Parameter(_Templated):
    """One uncertain Monte Carlo parameter: override template(s) and a distribution."""

    distribution: Distribution


class MonteCarloSpec(_Frozen):
    """Seeded random draws of parameters on top of a base scenario."""

    base: str | None = None
    samples: int = Field(gt=0, le=100_000)
    seed: int = 0
    parameters: tuple[Parameter, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> MonteCarloSpec:
        names = [p.name for p in self.parameters]
        if len(set(names)) != len(names):
            raise ValueError(f"parameter names must be unique, got {names}")
        return self

    def draw(self) -> dict[str, np.ndarray]:
        """Draw every parameter's samples (same seed -> same values).

        Returns
        -------
        dict of str to ndarray
            Parameter name -> ``samples`` values, drawn in the order listed from one
            ``numpy.random.default_rng(seed)``; shift levels rounded to whole quarters.
        """
        rng = np.random.default_rng(self.seed)
        out: dict[str, np.ndarray] = {}
        for p in self.parameters:
            x = p.distribution.sample(self.samples, rng)
            if any(str(t.get("op")) == "shift" for t in p.templates):
                x = np.round(x)
            out[p.name] = x
        return out


class ComposedScenario(_Frozen):
    """An inline scenario: a name, an optional named base scenario, and overrides."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.+\-]+$")
    base: str | None = None
    description: str = ""
    overrides: tuple[Override, ...] = ()


class SweepSpec(_Frozen):
    """A whole sweep: dataset directory, named/composed scenarios, grid, Monte Carlo."""

    data: Path = Path("data")
    scenarios: tuple[str | ComposedScenario, ...] = ()
    grid: GridSpec | None = None
    monte_carlo: MonteCarloSpec | None = None
    _file: str = PrivateAttr(default="sweep")
    _lines: dict[tuple[str | int, ...], int] = PrivateAttr(default_factory=dict)

    @property
    def file(self) -> str:
        """The sweep file this spec was read from (``"sweep"`` when built in code)."""
        return self._file

    def line(self, *path: str | int) -> int | None:
        """Return the 1-based line of ``path`` (e.g. ``"grid", "base"``) in the sweep file.

        The line of the deepest part of ``path`` the file has; None when unknown.
        """
        return _line_of(self._lines, path)

    @field_validator("scenarios", mode="before")
    @classmethod
    def _scen(cls, v: Any) -> Any:
        if v is None or v == "":
            return ()
        if not isinstance(v, list | tuple):
            raise ValueError("scenarios must be a list of names or {name, overrides} mappings")
        return tuple(x if isinstance(x, Mapping | ComposedScenario) else str(x) for x in v)

    @model_validator(mode="after")
    def _nonempty(self) -> SweepSpec:
        if not self.scenarios and self.grid is None and self.monte_carlo is None:
            raise ValueError("a sweep needs scenarios, a grid or a monte_carlo section")
        return self


@dataclass(frozen=True)
class SweepCase:
    """One scenario of a sweep, ready to be applied to the base dataset.

    Attributes
    ----------
    name : str
        Case name (Hive partition value).
    kind : {"scenario", "grid", "monte_carlo"}
        Where the case comes from.
    base : str or None
        Named scenario of the dataset applied first (None: the data as is).
    overrides : tuple of Override
        Applied after ``base``.
    params : dict
        Axis or parameter name -> level (grid and Monte Carlo cases).
    """

    name: str
    kind: Literal["scenario", "grid", "monte_carlo"]
    base: str | None = None
    overrides: tuple[Override, ...] = ()
    params: Mapping[str, float | str] = field(default_factory=dict)

    def key(self, base_hash: str, solve: Mapping[str, Any] | None = None) -> str:
        """Return the case's identity: sha256 of name, data, base, overrides, solve options.

        Parameters
        ----------
        base_hash : str
            Hash of the sweep's base dataset.
        solve : mapping, optional
            The solve options the case runs with (``capacity batch`` passes
            :func:`optimizer.analysis.batch.case_options`: solver, time limit, formulation,
            integer units, clusters ...); None leaves them out of the key.

        Returns
        -------
        str
            Hex sha256. Two runs of the same case over the same data with the same
            options share the key; changing the data, the base scenario, an override
            or a solve option changes it (so ``capacity batch`` redoes the case).
        """
        doc: dict[str, Any] = {
            "name": self.name,
            "data": base_hash,
            "base": self.base,
            "overrides": [o.to_dict() for o in self.overrides],
        }
        if solve is not None:
            doc["solve"] = dict(solve)
        return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


def sweep_lines(text: str) -> dict[tuple[str | int, ...], int]:
    """Map each path of a sweep YAML text to its 1-based line.

    A mapping entry's path ends with its key (``("grid", "axes")``) and maps to the
    line of the key; a list item's path ends with its index (``("grid", "axes", 0)``)
    and maps to the line where the item starts. Read with ``yaml.compose`` and
    :class:`yaml.BaseLoader`, like the document itself; empty when the text is not
    YAML.
    """
    out: dict[tuple[str | int, ...], int] = {}
    try:
        root = compose_yaml(text)
    except yaml.YAMLError:
        return out

    def walk(node: Any, path: tuple[str | int, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                sub = (*path, str(k.value))
                out.setdefault(sub, k.start_mark.line + 1)
                walk(v, sub)
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                out[(*path, i)] = v.start_mark.line + 1
                walk(v, (*path, i))

    if root is not None:
        walk(root, ())
    return out


def _line_of(lines: Mapping[tuple[str | int, ...], int], path: Sequence[str | int]) -> int | None:
    for n in range(len(path), 0, -1):
        if tuple(path[:n]) in lines:
            return lines[tuple(path[:n])]
    return None


def _field_text(path: Sequence[str | int]) -> str:
    parts: list[str] = []
    for x in path:
        if isinstance(x, int):
            parts[-1:] = [f"{parts[-1]}[{x}]" if parts else f"[{x}]"]
        else:
            parts.append(str(x))
    return ".".join(parts)


# pydantic location parts that name a union branch or validator, not a key of the file
_TAGS = frozenset({"str", "int", "float", "bool", "ComposedScenario"})


def _clean_loc(loc: Sequence[str | int]) -> tuple[str | int, ...]:
    return tuple(x for x in loc if isinstance(x, int) or (x not in _TAGS and "[" not in x))


# which model a key path (list indices dropped) points into, for "did you mean" hints
_MODELS: dict[tuple[str, ...], type[BaseModel]] = {}


def _model_at(path: Sequence[str | int]) -> type[BaseModel] | None:
    if not _MODELS:
        _MODELS.update(
            {
                (): SweepSpec,
                ("grid",): GridSpec,
                ("grid", "axes"): Axis,
                ("monte_carlo",): MonteCarloSpec,
                ("monte_carlo", "parameters"): Parameter,
                ("monte_carlo", "parameters", "distribution"): Distribution,
                ("scenarios",): ComposedScenario,
                ("scenarios", "overrides"): Override,
            }
        )
    return _MODELS.get(tuple(str(x) for x in path if not isinstance(x, int)))


def _message(err: Mapping[str, Any], model: type[BaseModel] | None) -> str:
    """Readable text of one pydantic error (unknown key with a hint, missing key ...)."""
    loc = err.get("loc") or ()
    key = str(loc[-1]) if loc else ""
    kind = err.get("type")
    if kind == "extra_forbidden":
        return f"unknown key {key!r}." + (suggest(key, model.model_fields) if model else "")
    if kind == "missing":
        return f"missing key {key!r}"
    if kind in ("too_short", "too_long") and "min_length" in (err.get("ctx") or {}):
        n = err["ctx"]["min_length"]
        return f"needs at least {n} item{'s' if n != 1 else ''}"
    msg = str(err["msg"]).removeprefix("Value error, ")
    return f"{key}: {msg}" if model is Override and key and kind != "value_error" else msg


def _findings(
    e: ValidationError, file: str, lines: Mapping[tuple[str | int, ...], int]
) -> list[Finding]:
    """Turn a SweepSpec ValidationError into findings, dropping follow-on errors.

    An error whose location is a strict prefix of another error's location (a list
    that is empty because its only item failed, the other branch of a ``str |
    mapping`` union) follows from that error and is left out.
    """
    items: list[tuple[tuple[str | int, ...], dict[str, Any]]] = []
    for raw in e.errors():
        path = _clean_loc(raw["loc"])
        exc = (raw.get("ctx") or {}).get("error")
        if isinstance(exc, _PathError):
            path = (*path, *exc.path)
        items.append((path, dict(raw, loc=path)))
    out: list[Finding] = []
    seen: set[tuple[tuple[str | int, ...], str]] = set()
    for path, err in items:
        if any(len(q) > len(path) and q[: len(path)] == path for q, _ in items):
            continue  # a deeper error explains this one
        exc = (err.get("ctx") or {}).get("error")
        if isinstance(exc, _PathError):
            msg = str(exc)
        elif err.get("type") == "extra_forbidden":
            msg = _message(err, _model_at(path[:-1]))
        else:
            msg = _message(err, _model_at(path[:-1]) if path else None)
        if (path, msg) in seen:
            continue
        seen.add((path, msg))
        val = err.get("input")
        value = None if isinstance(val, Mapping | list | tuple) or val is None else str(val)
        if err.get("type") == "extra_forbidden":
            value = None
        out.append(
            Finding("error", file, _line_of(lines, path), _field_text(path) or None, value, msg)
        )
    return sorted(out, key=lambda f: f.row if f.row is not None else 1 << 30)


def parse_sweep(
    doc: Any, file: str = "sweep", lines: Mapping[tuple[str | int, ...], int] | None = None
) -> SweepSpec:
    """Validate a sweep document (as read from YAML).

    Parameters
    ----------
    doc : Any
        The YAML document (read with :class:`yaml.BaseLoader`).
    file : str
        Name of the sweep file, used in findings.
    lines : mapping, optional
        Line of each path (from :func:`sweep_lines`), reported as the finding's row.

    Returns
    -------
    SweepSpec
        Remembers ``file`` and ``lines`` for later errors (unknown scenario names).

    Raises
    ------
    SweepSpecError
        With every error, each naming the file, line, field and what is wrong.
    """
    lines = dict(lines or {})
    if not isinstance(doc, Mapping):
        raise _error(file, "expected a mapping with data, scenarios, grid, monte_carlo", line=1)
    try:
        spec = SweepSpec.model_validate(dict(doc))
    except ValidationError as e:
        raise SweepSpecError(_findings(e, file, lines)) from None
    spec._file = file
    spec._lines = lines
    return spec


def load_sweep(path: str | Path) -> SweepSpec:
    """Read and validate a sweep YAML file.

    A relative ``data`` path is resolved against the sweep file's folder (like any
    path inside a configuration file), never against the current directory, so the
    same command works from anywhere. :func:`check_data_dir` reports a missing one.

    Raises
    ------
    SweepSpecError
        When the file is missing, not YAML, or invalid (findings name the file, line
        and field).
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
        doc = load_yaml(text)
    except OSError as exc:
        raise _error(str(p), f"cannot read the file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise _error(str(p), f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    except YamlLimitError as exc:
        raise _error(str(p), f"refused: {exc}", line=exc.line) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else int(mark.line) + 1
        raise _error(str(p), f"not valid YAML: {exc}", line=line) from None
    spec = parse_sweep(doc, str(p), sweep_lines(text))
    if not spec.data.expanduser().is_absolute():
        spec = spec.model_copy(update={"data": p.parent / spec.data})
    spec._file, spec._lines = str(p), sweep_lines(text)
    return spec


def check_data_dir(spec: SweepSpec) -> SweepSpec:
    """Return ``spec``, or raise when the sweep's ``data`` folder does not exist.

    Raises
    ------
    SweepSpecError
        One finding naming the sweep file, the line and key ``data``, the path as
        written and the folder it was looked for in.
    """
    path = spec.data.expanduser()
    if path.is_dir():
        return spec
    what = "is not a directory" if path.exists() else "does not exist"
    raise SweepSpecError(
        [
            Finding(
                "error",
                spec.file,
                spec.line("data"),
                "data",
                str(spec.data),
                f"dataset folder {path} {what} (a relative path is resolved against the "
                "sweep file's folder)",
            )
        ]
    )


def _fmt(level: float | str) -> str:
    if isinstance(level, float):
        return f"{level:g}"
    return str(level)


def expand_sweep(spec: SweepSpec, known_scenarios: Sequence[str] | None = None) -> list[SweepCase]:
    """List the cases of a sweep in a fixed order (scenarios, grid, Monte Carlo).

    Parameters
    ----------
    spec : SweepSpec
        The validated sweep.
    known_scenarios : sequence of str, optional
        Scenario names of the dataset; when given, unknown names raise.

    Returns
    -------
    list of SweepCase

    Raises
    ------
    SweepSpecError
        For an unknown scenario name (with the names the dataset defines and a "did you
        mean" hint) or two cases with the same name; findings name the sweep file and
        line.
    """
    cases: list[SweepCase] = []
    errors: list[Finding] = []
    known = (
        None if known_scenarios is None else ["base", *(n for n in known_scenarios if n != "base")]
    )

    def fail(path: tuple[str | int, ...], value: str | None, msg: str) -> None:
        errors.append(Finding("error", spec.file, spec.line(*path), _field_text(path), value, msg))

    def check(name: str | None, *path: str | int) -> None:
        if known is not None and name is not None and name not in known:
            fail(
                path,
                name,
                f"unknown scenario {name!r}; the dataset defines: {', '.join(known)}."
                + suggest(name, known),
            )

    for i, s in enumerate(spec.scenarios):
        if isinstance(s, str):
            check(s, "scenarios", i)
            cases.append(SweepCase(name=s, kind="scenario", base=s))
        else:
            check(s.base, "scenarios", i, "base")
            cases.append(
                SweepCase(name=s.name, kind="scenario", base=s.base, overrides=s.overrides)
            )
    if spec.grid is not None:
        check(spec.grid.base, "grid", "base")
        cases += _grid_cases(spec.grid)
    if spec.monte_carlo is not None:
        check(spec.monte_carlo.base, "monte_carlo", "base")
        cases += _monte_carlo_cases(spec.monte_carlo)
    seen: set[str] = set()
    for i, c in enumerate(cases):
        if c.name in seen:
            at: tuple[str | int, ...] = ("scenarios", i) if c.kind == "scenario" else (c.kind,)
            fail(at, c.name, f"two cases are named {c.name!r}")
        seen.add(c.name)
    if errors:
        raise SweepSpecError(errors)
    return cases


def _grid_cases(g: GridSpec) -> list[SweepCase]:
    """One case per combination of the axes' levels, named ``grid_<axis>-<level>_...``."""
    cases = []
    for combo in itertools.product(*(a.levels for a in g.axes)):
        ovs: list[Override] = []
        for a, lv in zip(g.axes, combo, strict=True):
            ovs.extend(a.fill(lv))
        name = "grid_" + "_".join(
            f"{a.name}-{_fmt(lv)}" for a, lv in zip(g.axes, combo, strict=True)
        )
        params: dict[str, float | str] = {a.name: lv for a, lv in zip(g.axes, combo, strict=True)}
        cases.append(
            SweepCase(name=name, kind="grid", base=g.base, overrides=tuple(ovs), params=params)
        )
    return cases


def _monte_carlo_cases(mc: MonteCarloSpec) -> list[SweepCase]:
    """One case per seeded sample, named ``mc_000``, ``mc_001`` ..."""
    draws = mc.draw()
    width = max(3, len(str(mc.samples - 1)))
    cases = []
    for k in range(mc.samples):
        ovs: list[Override] = []
        params: dict[str, float | str] = {}
        for p in mc.parameters:
            lv = float(draws[p.name][k])
            ovs.extend(p.fill(lv))
            params[p.name] = lv
        cases.append(
            SweepCase(
                name=f"mc_{k:0{width}d}",
                kind="monte_carlo",
                base=mc.base,
                overrides=tuple(ovs),
                params=params,
            )
        )
    return cases


def cases_dataset(base: Any, case: SweepCase) -> Any:
    """Return the dataset of one case: ``base`` with the case's scenario and overrides.

    Parameters
    ----------
    base : capacity.dataset.Dataset
        The dataset named by the sweep's ``data``.
    case : SweepCase

    Returns
    -------
    capacity.dataset.Dataset
        Labelled with the case name as its scenario.

    Raises
    ------
    capacity.scenarios.UnknownScenarioError, capacity.validation.DataValidationError
    """
    import dataclasses

    from capacity.scenarios import apply_overrides, apply_scenario

    ds = apply_scenario(base, case.base)
    if case.overrides:
        return apply_overrides(ds, case.overrides, scenario=case.name)
    # relabel without re-validating (the tables are unchanged)
    return dataclasses.replace(ds, scenario=case.name) if ds.scenario != case.name else ds
