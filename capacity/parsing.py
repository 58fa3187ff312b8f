"""Reading one input table: its cells, as text, into typed columns, with a finding per bad cell.

Cells are read as text so ``NO`` stays a region code; each column of the spec gives
the dtype, bounds and default its cells are checked against.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from capacity.schema import INT64_MAX, PERIOD_RE, SOLVER_SAFE_MAX
from capacity.spec_types import Column, TableSpec
from capacity.validation import Finding, suggest


def _cell_text(v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and np.isnan(v):
        return ""
    if v is pd.NA or v is pd.NaT:
        return ""
    return str(v)


REQUIRED_EMPTY = "required value is empty"
"""The start of a required cell's finding when the cell is empty."""


def parse_table(
    table: TableSpec, raw: pd.DataFrame, file: str, horizon_last: str | None = None
) -> tuple[pd.DataFrame, list[Finding]]:
    """Parse raw cells of one table into typed columns and collect findings.

    Parameters
    ----------
    table : TableSpec
        The table's spec.
    raw : DataFrame
        Cells as read (text from CSV, or native values from Parquet), one row per
        data row in file order.
    file : str
        File name used in findings.
    horizon_last : str, optional
        Last period of the horizon, the default of an empty ``commitments.to_period``.

    Returns
    -------
    (DataFrame, list of Finding)
        The typed table with exactly the spec's columns (empty optional cells
        replaced by their default), and findings. Rows with errors are kept, with
        NaN in the bad cell, so that later checks can still run.
    """
    findings: list[Finding] = []
    present = [str(c) for c in raw.columns]
    for c in present:
        if not table.has_column(c):
            findings.append(
                Finding(
                    "error",
                    file,
                    1,
                    c,
                    None,
                    f"unknown column {c!r} in table {table.name}."
                    + suggest(c, table.column_names)
                    + f" Expected columns: {', '.join(table.column_names)}.",
                )
            )
    blank = _blank_rows(raw)
    out = parse_columns(table, raw, table.column_names, file, findings, horizon_last)
    if blank:  # one finding for a blank row, not one per required cell of it
        findings[:] = [
            f for f in findings if not (f.row in blank and f.message.startswith(REQUIRED_EMPTY))
        ]
        for row in sorted(blank):
            msg = "the row is blank: delete it (or fill it in)"
            findings.append(Finding("error", file, row, None, None, msg))
    # one frame of the typed columns (setting them one by one costs a block copy each);
    # every parsed column is a Series on the rows' RangeIndex
    df = pd.DataFrame(
        {col.name: _column_dtype(col, out[col.name]) for col in table.columns},
        index=pd.RangeIndex(len(raw)),
    )
    return df, findings


def no_rows_findings(table: TableSpec, n_rows: int, file: str) -> list[Finding]:
    """Return the finding of a table given with no rows (a header alone), if it has one.

    Parameters
    ----------
    table : TableSpec
        The table's spec; its ``when_empty`` holds the severity and what no rows means.
    n_rows : int
        Data rows of the table as given (a missing file has its own finding instead).
    file : str
        File name used in the finding.

    Returns
    -------
    list of Finding
        One finding (no row, column or value: the whole file) or none.
    """
    if n_rows or table.when_empty is None:
        return []
    severity, means = table.when_empty
    return [Finding(severity, file, None, None, None, f"the table has no rows: {means}")]


def _blank_rows(raw: pd.DataFrame) -> set[int]:
    """Return the file rows (header = 1) of ``raw`` whose every cell is empty."""
    if not len(raw) or not raw.shape[1]:
        return set()

    def blank(col: pd.Series) -> np.ndarray:
        text = col.astype(str).str.strip()
        return (col.isna() | text.isin(["", "nan", "None"])).to_numpy()

    first = raw.iloc[:, 0].to_numpy()
    starts = first == "" if first.dtype == object else np.zeros(len(first), dtype=bool)
    rows = np.flatnonzero(starts | pd.isna(first))  # where a blank row starts
    if not len(rows):
        return set()
    cand = raw.iloc[rows]
    full = np.logical_and.reduce([blank(cand.iloc[:, j]) for j in range(cand.shape[1])])
    return {int(i) + 2 for i in rows[full]}


def parse_columns(
    table: TableSpec,
    raw: pd.DataFrame,
    names: Sequence[str],
    file: str,
    findings: list[Finding],
    horizon_last: str | None = None,
) -> dict[str, pd.Series]:
    """Parse some columns of one table (the per-column part of :func:`parse_table`).

    Each column is parsed from its own cells only, so re-parsing the columns an
    override changed gives the same values and findings as parsing the whole table
    (:meth:`capacity.dataset.Dataset.replace` relies on it).

    Parameters
    ----------
    table : TableSpec
    raw : DataFrame
        Cells as read or typed values, one row per data row.
    names : sequence of str
        Spec columns to parse, in spec order.
    file : str
        File name used in findings.
    findings : list of Finding
        Appended to, column by column in the order of ``names``.
    horizon_last : str, optional
        Last period of the horizon (default of an empty ``commitments.to_period``).

    Returns
    -------
    dict of Series
        Parsed values per column, before the final dtype (see :func:`_column_dtype`).
    """
    present = {str(c) for c in raw.columns}
    out: dict[str, pd.Series] = {}
    n = len(raw)
    rownum = np.arange(2, n + 2)
    for name in names:
        col = table.column(name)
        if col.name not in present:
            if col.required:
                findings.append(
                    Finding(
                        "error",
                        file,
                        1,
                        col.name,
                        None,
                        f"missing column {col.name!r} ({col.description})",
                    )
                )
                out[col.name] = pd.Series([np.nan if col.is_numeric else ""] * n, dtype=object)
                continue
            out[col.name] = pd.Series([col.default] * n, dtype=object)
            continue
        texts = [_cell_text(v) for v in raw[col.name].tolist()]
        out[col.name] = _parse_column(
            col, texts, raw[col.name], rownum, file, findings, horizon_last
        )
    return out


def _column_dtype(col: Column, values: pd.Series) -> pd.Series:
    """Return the typed column of a parsed one: float64, int64 (Int64 with gaps) or object."""
    if col.dtype == "float":
        return values.astype("float64")
    if col.dtype == "int":
        vals = pd.to_numeric(values, errors="coerce")
        # a non-finite cell (inf) is already an error finding; hold it as missing
        vals = vals.where(np.isfinite(vals.astype("float64")))
        return vals.astype("Int64") if vals.isna().any() else vals.astype("int64")
    return values.astype(object)


def typed_columns(
    table: TableSpec,
    raw: pd.DataFrame,
    names: Sequence[str],
    file: str,
    horizon_last: str | None = None,
) -> tuple[dict[str, pd.Series], list[Finding]]:
    """Parse and type some columns of one table; return the columns and their findings.

    The columns equal those :func:`parse_table` gives for the whole table (same
    dtype, same values, a RangeIndex), and so do the findings about them.
    """
    findings: list[Finding] = []
    parsed = parse_columns(table, raw, names, file, findings, horizon_last)
    frame = pd.DataFrame(parsed, columns=list(names))
    return {c: _column_dtype(table.column(c), frame[c]) for c in names}, findings


def _cell_error(file: str, row: Any, column: str, value: str, message: str) -> Finding:
    """Return an error finding about one cell (``row`` as a spreadsheet shows it)."""
    return Finding("error", file, int(row), column, value, message)


def _parse_column(
    col: Column,
    texts: list[str],
    native: pd.Series,
    rownum: np.ndarray,
    file: str,
    findings: list[Finding],
    horizon_last: str | None,
) -> pd.Series:
    empty = np.array([t.strip() == "" for t in texts], dtype=bool)
    if col.required:
        for i in np.flatnonzero(empty):
            findings.append(
                _cell_error(
                    file,
                    rownum[i],
                    col.name,
                    texts[i],
                    f"{REQUIRED_EMPTY} ({col.description})",
                )
            )
    default = col.default
    if col.name == "to_period" and default is None:
        default = horizon_last
    if col.is_numeric:
        return _parse_numbers(col, texts, native, empty, default, rownum, file, findings)
    return _parse_text(col, texts, empty, default, rownum, file, findings)


def _parse_numbers(
    col: Column,
    texts: list[str],
    native: pd.Series,
    empty: np.ndarray,
    default: Any,
    rownum: np.ndarray,
    file: str,
    findings: list[Finding],
) -> pd.Series:
    """Parse a numeric column (float64; empty optional cells take the default)."""
    if pd.api.types.is_numeric_dtype(native.dtype) and not pd.api.types.is_bool_dtype(native.dtype):
        nums = pd.to_numeric(native, errors="coerce").to_numpy(dtype="float64", copy=True)
    else:
        nums = pd.to_numeric(
            pd.Series([t.strip() for t in texts], dtype=object), errors="coerce"
        ).to_numpy(dtype="float64", copy=True)
    bad = ~empty & ~np.isfinite(nums)
    grouped = [int(i) for i in np.flatnonzero(bad) if THOUSANDS_RE.match(texts[i].strip())]
    if grouped:
        findings.append(_thousands_finding(col, texts, grouped, rownum, file))
        bad[grouped] = False
    for i in np.flatnonzero(bad):
        findings.append(
            _cell_error(
                file,
                rownum[i],
                col.name,
                texts[i],
                f"not a number; expected {col.dtype} in {col.unit or 'no unit'}",
            )
        )
    if col.dtype == "int":
        finite = ~empty & np.isfinite(nums)
        # inf - round(inf) is nan: compare only finite cells (an infinite one is its own finding)
        frac = finite & (
            np.abs(np.where(finite, nums - np.round(np.where(finite, nums, 0)), 0)) > 1e-9
        )
        for i in np.flatnonzero(frac):
            findings.append(
                _cell_error(file, rownum[i], col.name, texts[i], "expected a whole number")
            )
    if not col.required:
        nums[empty] = np.nan if default is None else float(default)
    _check_magnitude(col, nums, texts, rownum, file, findings)
    _check_bounds(col, nums, texts, rownum, file, findings)
    return pd.Series(nums, dtype="float64")


THOUSANDS_RE = re.compile(r"^[+-]?\d{1,3}([,\u00a0\u202f' ]\d{3})+(\.\d+)?$")
"""A number written with thousands separators (``1,092`` ``1 092`` ``1'092``), as a
spreadsheet saves a cell formatted with them."""


def _thousands_finding(
    col: Column, texts: list[str], rows: list[int], rownum: np.ndarray, file: str
) -> Finding:
    """Return the one finding for a column's cells written with thousands separators.

    Such a cell is not read as a number: ``1,092`` is 1092 in one locale and 1.092
    in another. One finding per column names the first cell and counts the others,
    since they share one cause and one fix.
    """
    first = texts[rows[0]].strip()
    plain = re.sub(r"[,\u00a0\u202f' ]", "", first)
    more = "" if len(rows) == 1 else f" (and {len(rows) - 1} more rows of this column)"
    return _cell_error(
        file,
        rownum[rows[0]],
        col.name,
        first,
        f"written with thousands separators{more}; write plain numbers ({plain}): in a "
        "spreadsheet, format the column as Number without the 1000 separator, then save",
    )


def _parse_text(
    col: Column,
    texts: list[str],
    empty: np.ndarray,
    default: Any,
    rownum: np.ndarray,
    file: str,
    findings: list[Finding],
) -> pd.Series:
    """Parse a text, period or choice column (object; empty optional cells take the default)."""
    # one spelling per text: precomposed and decomposed accents are the same ID (NFC)
    vals = [unicodedata.normalize("NFC", t) for t in texts]
    if not col.required:
        for j in np.flatnonzero(empty):
            vals[int(j)] = "" if default is None else str(default)
    if col.dtype == "period":
        for r, v in enumerate(vals):
            if v != "" and not PERIOD_RE.match(v):
                findings.append(
                    _cell_error(
                        file,
                        rownum[r],
                        col.name,
                        v,
                        "not a quarter; write periods as YYYYQn, e.g. 2026Q3",
                    )
                )
    elif col.dtype == "choice":
        for r, v in enumerate(vals):
            if v != "" and v not in col.choices:
                findings.append(
                    _cell_error(
                        file,
                        rownum[r],
                        col.name,
                        v,
                        f"must be one of {', '.join(col.choices)}." + suggest(v, col.choices),
                    )
                )
    return pd.Series(vals, dtype=object)


def _check_magnitude(
    col: Column,
    nums: np.ndarray,
    texts: list[str],
    rownum: np.ndarray,
    file: str,
    findings: list[Finding],
) -> None:
    """Refuse cells beyond 64 bits (int columns) or beyond the solver-safe range.

    Such cells get an error naming the value as written and become NaN in ``nums``
    (in place), so no later step casts them (an int64 cast would wrap silently).
    """
    too_big = np.isfinite(nums) & (np.abs(nums) > SOLVER_SAFE_MAX)
    for i in np.flatnonzero(too_big):
        text = texts[i].strip()
        if col.dtype == "int" and _beyond_int64(text):
            msg = f"too large for a 64-bit integer ({col.name} is a whole number of {col.unit})"
        else:
            msg = (
                f"outside the range the solver can take (at most {SOLVER_SAFE_MAX:g} in "
                f"magnitude, see SOLVER_SAFE_MAX); check the unit ({col.unit or 'no unit'})"
            )
        findings.append(_cell_error(file, rownum[i], col.name, texts[i], msg))
    nums[too_big] = np.nan


def _beyond_int64(text: str) -> bool:
    """Return True when ``text`` is an integer literal that an int64 cannot hold."""
    body = text.replace("_", "")
    if body[:1] in "+-":
        body = body[1:]
    return body.isdigit() and int(body) > INT64_MAX


def _check_bounds(
    col: Column,
    nums: np.ndarray,
    texts: list[str],
    rownum: np.ndarray,
    file: str,
    findings: list[Finding],
) -> None:
    fin = np.isfinite(nums)
    if col.min is not None:
        low = fin & ((nums <= col.min) if col.min_exclusive else (nums < col.min))
        rel = "above" if col.min_exclusive else "at least"
        what = ""
        if col.name.startswith("pue"):
            what = "PUE cannot be below 1: facility power includes the IT power"
        for i in np.flatnonzero(low):
            msg = what or f"must be {rel} {col.min:g}"
            if col.min == 0 and not col.min_exclusive:
                msg = f"cannot be negative ({col.description})"
            findings.append(Finding("error", file, int(rownum[i]), col.name, texts[i], msg))
    if col.max is not None:
        for i in np.flatnonzero(fin & (nums > col.max)):
            findings.append(
                Finding(
                    "error",
                    file,
                    int(rownum[i]),
                    col.name,
                    texts[i],
                    f"must be at most {col.max:g}",
                )
            )
    if col.warn_max is not None:
        for i in np.flatnonzero(fin & (nums > col.warn_max)):
            findings.append(
                Finding(
                    "warning",
                    file,
                    int(rownum[i]),
                    col.name,
                    texts[i],
                    f"implausibly high (above {col.warn_max:g} {col.unit}); check the figure "
                    "and its unit",
                )
            )
    if col.warn_min is not None:  # 0 is "none" (sunk chips, energy paid elsewhere), no slip
        for i in np.flatnonzero(fin & (nums < col.warn_min) & (nums != 0)):
            findings.append(
                Finding(
                    "warning",
                    file,
                    int(rownum[i]),
                    col.name,
                    texts[i],
                    f"implausibly low (below {col.warn_min:g} {col.unit}); check the figure "
                    "and its unit",
                )
            )
