"""A sweep file's errors: SweepSpecError, its findings, and pydantic errors as text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from capacity.scenario_spec import Override
from capacity.validation import Finding, suggest

__all__ = ["PathError", "SweepSpecError", "pydantic_message", "spec_error"]


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


def spec_error(
    file: str, message: str, column: str = "", line: int | None = None
) -> SweepSpecError:
    """Return a SweepSpecError of one finding in ``file`` (``line``, field ``column``)."""
    return SweepSpecError([Finding("error", file, line, column or None, None, message)])


class PathError(ValueError):
    """A validator error about a part of the item: ``path`` extends the error's location."""

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        self.path = path
        super().__init__(message)


def pydantic_message(err: Mapping[str, Any], model: type[BaseModel] | None) -> str:
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
