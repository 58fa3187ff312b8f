"""The sweep specification models: named and composed scenarios, grid, Monte Carlo.

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
        - name: objective           # no override: switches the objective mode
          levels: [cost, margin]
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
``override``. A grid axis named ``objective`` with no override switches the objective
mode of its cases (levels ``cost`` and ``margin``), and a composed scenario may set
``objective: margin`` (or ``cost``); other cases solve in the batch's ``--objective``.

Distributions (``scipy.stats`` frozen distributions sampled with one
``numpy.random.Generator`` seeded by ``seed``; the same seed gives the same draws):

* ``uniform``: ``low``, ``high``;
* ``triangular``: ``low``, ``mode``, ``high``;
* ``truncnorm``: ``mean``, ``sd``, ``low``, ``high`` (normal truncated to [low, high]);
* ``lognormal``: ``median``, ``sigma`` (standard deviation of the log), optional
  ``low``/``high`` clip.

A file is read by :func:`optimizer.analysis.sweep_read.load_sweep` and expanded into
cases by :func:`optimizer.analysis.sweep_cases.expand_sweep`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from capacity.scenario_spec import Override
from capacity.validation import suggest
from optimizer.analysis.sweep_errors import PathError, pydantic_message
from optimizer.analysis.sweep_lines import line_of

__all__ = [
    "Axis",
    "ComposedScenario",
    "Distribution",
    "GridSpec",
    "MonteCarloSpec",
    "Parameter",
    "SweepSpec",
    "fill_level",
    "format_level",
]

_LEVEL_FIELD = {"scale": "factor", "shift": "periods", "set": "value"}


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


def format_level(level: float | str) -> str:
    """Return a level as written in case names and messages (``0.6``, ``2``, ``high``)."""
    if isinstance(level, float):
        return f"{level:g}"
    return str(level)


def _sets_text(template: Mapping[str, Any]) -> bool:
    """Return True when ``template`` sets a column its table's schema holds as text."""
    from capacity.schema import SPECS

    spec = SPECS.get(str(template.get("table")))
    if str(template.get("op")) != "set" or spec is None:
        return False
    col = next((c for c in spec.columns if c.name == template.get("column")), None)
    return col is not None and not col.is_numeric


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Templated(_Frozen):
    """Shared part of an axis and a Monte Carlo parameter: a name and override template(s)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.+\-]+$")
    override: dict[str, Any] | None = None
    overrides: tuple[dict[str, Any], ...] | None = None

    @property
    def switches_objective(self) -> bool:
        """True for a grid axis named ``objective`` without overrides (levels cost, margin)."""
        return False

    @model_validator(mode="after")
    def _one_template(self) -> _Templated:
        if self.switches_objective:
            return self
        if (self.override is None) == (self.overrides is None):
            raise ValueError("give exactly one of 'override' (a mapping) or 'overrides' (a list)")
        if self.overrides is not None and not self.overrides:  # its levels changed nothing
            raise PathError(("overrides",), "needs at least one override")
        fields = list(Override.model_fields)
        for k, t in enumerate(self.templates):
            at: tuple[str | int, ...] = (
                ("override",) if self.override is not None else ("overrides", k)
            )
            for key in t:
                if key not in Override.model_fields:
                    raise PathError(
                        (*at, str(key)), f"unknown key {key!r}." + suggest(str(key), fields)
                    )
            if str(t.get("op")) not in _LEVEL_FIELD:
                raise PathError(
                    (*at, "op") if "op" in t else at,
                    f"override op must be scale, shift or set, got {t.get('op')!r}",
                )
            lvl = _LEVEL_FIELD[str(t["op"])]
            if lvl in t:
                raise PathError(
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


#: Objective modes a sweep case may ask for (an ``objective`` axis level or scenario field).
OBJECTIVES = ("cost", "margin")


class Axis(_Templated):
    """One grid axis: override template(s) and the levels to try.

    An axis named ``objective`` with no override switches the objective mode instead:
    its levels are ``cost`` and ``margin``.
    """

    levels: tuple[float | str, ...] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _levels(cls, data: Any) -> Any:
        """Read the levels as numbers, but as written where every template sets text.

        A ``set`` of a text column (a region, a cooling kind) took ``007`` as 7 and
        ``1e3`` as 1000; its levels are its values as written.
        """
        if not isinstance(data, Mapping) or "levels" not in data:
            return data
        v = data["levels"]
        if not isinstance(v, list | tuple):
            raise PathError(("levels",), "levels must be a list")
        raw = data.get("overrides") or ([data["override"]] if data.get("override") else [])
        text = bool(raw) and all(_sets_text(t) for t in raw if isinstance(t, Mapping))
        out: list[float | str] = []
        for x in v:
            try:
                out.append(str(x) if text else float(x))
            except (TypeError, ValueError):
                out.append(str(x))
        return {**data, "levels": tuple(out)}

    @property
    def switches_objective(self) -> bool:
        """True for an axis named ``objective`` without overrides (levels cost, margin)."""
        return self.name == "objective" and self.override is None and self.overrides is None

    def fill(self, level: float | str) -> tuple[Override, ...]:
        """Return the overrides of this axis at ``level`` (none for the objective axis)."""
        return () if self.switches_objective else super().fill(level)

    @model_validator(mode="after")
    def _levels_valid(self) -> Axis:
        if self.switches_objective:
            for i, lv in enumerate(self.levels):
                if lv not in OBJECTIVES:
                    raise PathError(
                        ("levels", i),
                        f"objective level must be cost or margin, got {format_level(lv)!r}",
                    )
            return self
        shifts = any(str(t.get("op")) == "shift" for t in self.templates)
        for i, lv in enumerate(self.levels):
            if shifts and isinstance(lv, float) and not lv.is_integer():  # named as written
                whole = math.floor(lv)
                raise PathError(
                    ("levels", i),
                    f"level {format_level(lv)} shifts by whole quarters only: use "
                    f"{whole} or {whole + 1}",
                )
            try:
                self.fill(lv)
            except ValidationError as e:
                msg = "; ".join(pydantic_message(x, Override) for x in e.errors())
                raise PathError(
                    ("levels", i), f"level {format_level(lv)} gives an invalid override: {msg}"
                ) from None
        return self


def _values(where: Any, key: str) -> set[str]:
    v = (where or {}).get(key)
    return {str(x) for x in (v if isinstance(v, list | tuple) else [v])}


def _may_share_a_cell(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Return True unless two override templates provably touch different cells.

    Different table or column, a ``where`` key both name with no value in common, or
    period ranges that do not meet: different cells. Anything else may be the same.
    """
    if (a.get("table"), a.get("column")) != (b.get("table"), b.get("column")):
        return False
    wa, wb = a.get("where") or {}, b.get("where") or {}
    if any(not (_values(wa, k) & _values(wb, k)) for k in set(wa) & set(wb)):
        return False
    lo = max(str(a.get("from_period") or ""), str(b.get("from_period") or ""))
    hi = min(str(a.get("to_period") or "~"), str(b.get("to_period") or "~"))
    return lo <= hi  # YYYYQn text orders as the quarters do


def _overwritten(field: str, what: str, items: Sequence[_Templated]) -> None:
    """Refuse a ``set`` template that may write a cell an earlier item also changes.

    Items apply in order; a ``set`` replaces what an earlier one did to the same cell, so
    that item's level was recorded for every case but took no effect (two axes setting
    the carbon price ran every case at the second one's level). Scales and shifts of one
    cell compose, and are allowed.
    """
    for j, later in enumerate(items):
        for t in later.templates:
            if str(t.get("op")) != "set":
                continue
            for earlier in items[:j]:
                if any(_may_share_a_cell(e, t) for e in earlier.templates):
                    raise PathError(
                        (field, j),
                        f"{what} {later.name!r} sets {t.get('table')}.{t.get('column')} where "
                        f"{what} {earlier.name!r} also changes it: every case would record the "
                        f"level of {earlier.name!r} but run with the value of {later.name!r}; "
                        "make their 'where' filters disjoint, or use one",
                    )


class GridSpec(_Frozen):
    """Cartesian product of axis levels on top of a base scenario."""

    base: str | None = None
    axes: tuple[Axis, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> GridSpec:
        names = [a.name for a in self.axes]
        if len(set(names)) != len(names):
            raise ValueError(f"axis names must be unique, got {names}")
        _overwritten("axes", "axis", self.axes)
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
        given = {k: getattr(self, k) for k in ("low", "high", "mode", "mean", "sd", "median")}
        given["sigma"] = self.sigma
        bad = [f"{k} {v}" for k, v in given.items() if v is not None and not math.isfinite(v)]
        if bad:  # scipy's "Domain error in arguments" at the first draw
            raise ValueError(f"{', '.join(bad)}: the parameters must be finite numbers")
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
        # imported here: scipy.stats takes about 0.9 s to import, and every batch, CLI
        # and Dask worker process that reads a sweep file but samples nothing skips it
        from scipy import stats

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
    """One uncertain Monte Carlo parameter: override template(s) and a distribution.

    Every value the distribution can draw must make valid overrides: the ends of its
    range (``low``, ``high``, where given; a uniform, triangular or truncated normal is
    bounded by them, a lognormal is positive) are filled into the templates when the
    sweep is read, as a grid axis's levels are, so a range that allows a negative scale
    factor is one finding naming the line, not an error at the first such draw.
    """

    distribution: Distribution

    @model_validator(mode="after")
    def _range_valid(self) -> Parameter:
        d = self.distribution
        shifts = any(str(t.get("op")) == "shift" for t in self.templates)
        if shifts and d.low is not None and d.high is not None:
            lo, hi = round(d.low), round(d.high)
            if lo == hi:  # every draw is rounded to whole quarters: one level, no spread
                raise PathError(
                    ("distribution",),
                    f"a shift moves whole quarters and every draw in [{d.low:g}, {d.high:g}] "
                    f"rounds to {lo}: widen the range or use a fixed shift",
                )
        for end in ("low", "high"):
            value = getattr(d, end)
            if value is None:
                continue
            try:
                self.fill(float(value))
            except ValidationError as e:
                msg = "; ".join(pydantic_message(x, Override) for x in e.errors())
                raise PathError(
                    ("distribution", end),
                    f"{end} {format_level(float(value))} gives an invalid override: {msg}",
                ) from None
        return self


class MonteCarloSpec(_Frozen):
    """Seeded random draws of parameters on top of a base scenario."""

    base: str | None = None
    samples: int = Field(gt=0, le=100_000)
    seed: int = Field(default=0, ge=0)
    parameters: tuple[Parameter, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> MonteCarloSpec:
        names = [p.name for p in self.parameters]
        if len(set(names)) != len(names):
            raise ValueError(f"parameter names must be unique, got {names}")
        _overwritten("parameters", "parameter", self.parameters)
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
    #: Objective mode of this case (None: the batch's ``--objective``).
    objective: Literal["cost", "margin"] | None = None


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
        return line_of(self._lines, path)

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
