"""Reading a sweep file: YAML to a validated SweepSpec, every error a finding with its line.

The YAML is read like the dataset's (:func:`yaml.BaseLoader`: every scalar is text
and pydantic converts it), so ``1e3`` is a number and ``NO`` stays a string. Unknown
keys are rejected. Every error is a :class:`~capacity.validation.Finding` naming the
sweep file, the line of the offending key (the ``row`` of the finding) and its field
(``grid.axes[0].levels``); an unknown key or scenario name gets a "did you mean"
hint, and an error that only follows from another one (an empty ``axes`` list after
its only axis failed) is not reported twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from capacity.safe_yaml import YamlLimitError, load_yaml
from capacity.scenario_spec import Override
from capacity.validation import Finding
from optimizer.analysis.sweep import (
    Axis,
    ComposedScenario,
    Distribution,
    GridSpec,
    MonteCarloSpec,
    Parameter,
    SweepSpec,
)
from optimizer.analysis.sweep_errors import PathError, SweepSpecError, pydantic_message, spec_error
from optimizer.analysis.sweep_lines import field_text, line_of, sweep_lines

__all__ = ["check_data_dir", "load_sweep", "parse_sweep"]


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
        if isinstance(exc, PathError):
            path = (*path, *exc.path)
        items.append((path, dict(raw, loc=path)))
    out: list[Finding] = []
    seen: set[tuple[tuple[str | int, ...], str]] = set()
    for path, err in items:
        if any(len(q) > len(path) and q[: len(path)] == path for q, _ in items):
            continue  # a deeper error explains this one
        exc = (err.get("ctx") or {}).get("error")
        if isinstance(exc, PathError):
            msg = str(exc)
        elif err.get("type") == "extra_forbidden":
            msg = pydantic_message(err, _model_at(path[:-1]))
        else:
            msg = pydantic_message(err, _model_at(path[:-1]) if path else None)
        if (path, msg) in seen:
            continue
        seen.add((path, msg))
        val = err.get("input")
        value = None if isinstance(val, Mapping | list | tuple) or val is None else str(val)
        if err.get("type") == "extra_forbidden":
            value = None
        out.append(
            Finding("error", file, line_of(lines, path), field_text(path) or None, value, msg)
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
        raise spec_error(file, "expected a mapping with data, scenarios, grid, monte_carlo", line=1)
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
        raise spec_error(str(p), f"cannot read the file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise spec_error(str(p), f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    except YamlLimitError as exc:
        raise spec_error(str(p), f"refused: {exc}", line=exc.line) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else int(mark.line) + 1
        raise spec_error(str(p), f"not valid YAML: {exc}", line=line) from None
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
