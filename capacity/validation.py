"""Validation findings: the Finding record, the error a bad dataset raises, and their helpers.

A finding names the file, the row as a spreadsheet shows it (the header is row 1,
the first data row is row 2), the column, the offending value and a severity:

* ``error``: the data cannot be planned with; loading raises
  :class:`DataValidationError` listing every error at once;
* ``warning``: implausible but possible (more than 3 kW per chip, PUE above 2);
  shown, never blocking.

The findings come from reading each table (:mod:`capacity.parsing`), the cross-table
rules (:mod:`capacity.table_checks`) and the provenance rules
(:mod:`capacity.source_checks`), all driven by :mod:`capacity.schema`: one spec per
table gives dtypes, bounds, defaults, keys and references, so adding a column to the
spec adds its checks.
"""

from __future__ import annotations

import difflib
import os
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    """One validation finding.

    Parameters
    ----------
    severity : {"error", "warning"}
        Errors stop a run; warnings are shown and do not.
    file : str
        File the finding is about (``sites.csv``, ``scenarios.yaml``).
    row : int or None
        1-based row as a spreadsheet shows it (header = 1, first data row = 2);
        None for a whole-file or whole-column finding.
    column : str or None
        Column name, or None.
    value : str or None
        The offending value as written, or None.
    message : str
        What is wrong and what to do about it.
    """

    severity: Severity
    file: str
    row: int | None
    column: str | None
    value: str | None
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.row is not None:
            where += f", row {self.row}"
        if self.column is not None:
            where += f", column {self.column!r}"
        val = "" if self.value is None else f" (value {self.value!r})"
        return f"{self.severity}: {where}{val}: {self.message}"


class DataValidationError(ValueError):
    """Raised when a dataset has errors; ``findings`` lists every one of them.

    Parameters
    ----------
    findings : sequence of Finding
        All findings (errors and warnings) of the failed load.
    """

    def __init__(self, findings: Sequence[Finding]):
        self.findings: tuple[Finding, ...] = tuple(findings)
        errors = [f for f in self.findings if f.severity == "error"]
        head = f"{len(errors)} error(s) in the dataset"
        lines = [str(f) for f in errors[:50]]
        if len(errors) > 50:
            lines.append(f"... and {len(errors) - 50} more")
        super().__init__(head + ":\n" + "\n".join(lines))

    @property
    def errors(self) -> list[Finding]:
        """Only the error findings."""
        return [f for f in self.findings if f.severity == "error"]


def merge_findings(findings: Sequence[Finding], extra: Iterable[Finding]) -> list[Finding]:
    """Return ``findings`` followed by those of ``extra`` not already in it (order kept).

    Linear in the number of findings (a set of the ones seen), so merging the findings of
    many scenarios over 20,000 duplicate rows stays fast.
    """
    seen = set(findings)
    out = list(findings)
    for f in extra:
        if f not in seen:
            seen.add(f)
            out.append(f)
    return out


def left_out_text(findings: Sequence[Finding], shown: int) -> str:
    """Say how many findings a listing capped at ``shown`` rows leaves out.

    Returns
    -------
    str
        E.g. ``"... and 19,800 more finding(s) not shown (19,800 error(s), 0 warning(s))"``;
        "" when every finding is shown.
    """
    rest = findings[shown:]
    if not rest:
        return ""
    n_err = sum(f.severity == "error" for f in rest)
    return (
        f"... and {len(rest):,} more finding(s) not shown "
        f"({n_err:,} error(s), {len(rest) - n_err:,} warning(s))"
    )


def findings_frame(findings: Iterable[Finding]) -> pd.DataFrame:
    """Return findings as a DataFrame with columns severity, file, row, column, value, message."""
    cols = ["severity", "file", "row", "column", "value", "message"]
    rows = [[f.severity, f.file, f.row, f.column, f.value, f.message] for f in findings]
    df = pd.DataFrame(rows, columns=cols)
    df["row"] = df["row"].astype("Int64")
    return df


def suggest(name: str, options: Iterable[str]) -> str:
    """Return a " did you mean 'x'?" hint for a misspelt name, or "" when none is close."""
    opts = list(options)
    close = difflib.get_close_matches(name, opts, n=1, cutoff=0.6)
    if not close:
        lowered = {o.strip().casefold(): o for o in opts}
        hit = lowered.get(str(name).strip().casefold())
        close = [hit] if hit else []
    return f" Did you mean {close[0]!r}?" if close else ""


def normalise_key(value: str) -> str:
    """Key used for duplicate detection: NFC, surrounding spaces dropped, case folded."""
    return unicodedata.normalize("NFC", str(value)).strip().casefold()


def refuse_path(ds: Any, where: str) -> None:
    """Raise TypeError when ``ds`` is a path or None where a loaded Dataset is needed.

    ``cp.tornado("data")`` failed as "'str' object has no attribute 'table'".
    """
    if ds is None or isinstance(ds, str | os.PathLike):
        shown = "None" if ds is None else f"the path {str(ds)!r}"
        raise TypeError(f"{where}: give a loaded Dataset (cp.load(path)), not {shown}")
