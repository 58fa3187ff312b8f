"""Validation findings and the checks that produce them.

A finding names the file, the row as a spreadsheet shows it (the header is row 1,
the first data row is row 2), the column, the offending value and a severity:

* ``error``: the data cannot be planned with; loading raises
  :class:`DataValidationError` listing every error at once;
* ``warning``: implausible but possible (more than 3 kW per chip, PUE above 2);
  shown, never blocking.

The checks are driven by :mod:`capacity.schema`: one spec per table gives dtypes,
bounds, defaults, keys and references, so adding a column to the spec adds its checks.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from capacity.period_order import period_order_problems
from capacity.schema import (
    INT64_MAX,
    PERIOD_RE,
    SOLVER_SAFE_MAX,
    SPECS,
    period_index,
)
from capacity.spec_types import Column, TableSpec

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


# ---------------------------------------------------------------------------- parsing
def _cell_text(v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and np.isnan(v):
        return ""
    if v is pd.NA or v is pd.NaT:
        return ""
    return str(v)


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
    out = parse_columns(table, raw, table.column_names, file, findings, horizon_last)
    df = pd.DataFrame(out, columns=table.column_names)
    for col in table.columns:
        df[col.name] = _column_dtype(col, df[col.name])
    return df, findings


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
                    f"required value is empty ({col.description})",
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
        frac = ~empty & np.isfinite(nums) & (np.abs(nums - np.round(nums)) > 1e-9)
        for i in np.flatnonzero(frac):
            findings.append(
                _cell_error(file, rownum[i], col.name, texts[i], "expected a whole number")
            )
    if not col.required:
        nums[empty] = np.nan if default is None else float(default)
    _check_magnitude(col, nums, texts, rownum, file, findings)
    _check_bounds(col, nums, texts, rownum, file, findings)
    return pd.Series(nums, dtype="float64")


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
                    f"implausibly high (above {col.warn_max:g} {col.unit}); check the figure",
                )
            )
    if col.warn_min is not None:
        for i in np.flatnonzero(fin & (nums < col.warn_min)):
            findings.append(
                Finding(
                    "warning",
                    file,
                    int(rownum[i]),
                    col.name,
                    texts[i],
                    f"implausibly low (below {col.warn_min:g} {col.unit}); check the figure",
                )
            )


# ------------------------------------------------------------------ cross-table checks
def check_keys(table: TableSpec, df: pd.DataFrame, file: str) -> list[Finding]:
    """Duplicate keys, also those that differ only by case or surrounding spaces.

    Vectorised: keys are normalised column by column and grouped once, so 20,000
    duplicate rows take milliseconds (each finding names the first row of its key).
    """
    if df.empty:
        return []
    cols = list(table.key)
    raw = df[cols].astype(str)
    norm = pd.DataFrame({c: raw[c].str.strip().str.casefold() for c in cols})
    codes = norm.groupby(cols, sort=False, dropna=False).ngroup().to_numpy()
    _, first_index = np.unique(codes, return_index=True)
    first_of = first_index[codes]  # row position of each row's first occurrence
    dups = np.flatnonzero(first_of != np.arange(len(df)))
    if not len(dups):
        return []
    values = raw.to_numpy()
    findings: list[Finding] = []
    names = ", ".join(cols)
    for i in dups:
        j = int(first_of[i])
        key, first = tuple(values[i]), tuple(values[j])
        msg = f"duplicate key ({names}): the same key as row {j + 2}"
        if first != key:
            msg = (
                f"duplicate key ({names}): same as {'/'.join(map(repr, first))} on row {j + 2} "
                "once case and surrounding spaces are ignored"
            )
        findings.append(Finding("error", file, int(i) + 2, cols[0], "/".join(key), msg))
    return findings


def check_references(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Every foreign key (site, chip, customer, resource, workload, period) must exist."""
    findings: list[Finding] = []
    for name, df in tables.items():
        table = SPECS[name]
        for col in table.columns:
            if col.references is None or df.empty:
                continue
            rt, rc = col.references
            if rt not in tables:
                continue
            known = set(tables[rt][rc].astype(str))
            vals = df[col.name].astype(str)
            bad = np.flatnonzero(~vals.isin(known).to_numpy() & (vals != "").to_numpy())
            hints: dict[str, str] = {}  # one "did you mean" per distinct unknown value
            for i in bad:
                v = vals.iat[i]
                if v not in hints:
                    hints[v] = suggest(v, known)
                msg = f"unknown {rc} {v!r}: not in {rt}." + hints[v]
                findings.append(Finding("error", files[name], int(i) + 2, col.name, v, msg))
    return findings


def check_semantics(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Domain rules across columns and tables.

    Periods are consecutive quarters; a sale window does not end before it begins
    (it may start before the horizon); initial liquid capacity fits initial capacity
    and both fit the site maximum; every site has a grid and water row for every
    period and every resource a capacity for every period; commitment families exist.
    """
    out, horizon = _check_periods(tables, files)
    out += _check_sale_windows(tables, files)
    out += _check_initial_capacity(tables, files)
    if horizon:
        out += _check_schedules(tables, files, horizon)
    out += _check_commitments(tables, files)
    out += _check_regions(tables, files)
    out += _check_hosts(tables, files)
    return out


def _check_periods(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]
) -> tuple[list[Finding], list[str]]:
    """Check periods are consecutive quarters; return findings and horizon (empty if bad)."""
    out: list[Finding] = []
    periods = tables["periods"]
    f = files["periods"]
    idx = [period_index(p) if PERIOD_RE.match(str(p)) else None for p in periods["period"]]
    ok = [i for i in idx if i is not None]
    if len(periods) == 0:
        out.append(Finding("error", f, None, "period", None, "the horizon has no periods"))
    labels = [str(p) for p in periods["period"]]
    for row, value, msg in period_order_problems(labels, idx, f):
        out.append(Finding("error", f, row, "period", value, msg))
    horizon = [str(p) for p in periods["period"]] if len(ok) == len(idx) else []
    return out, horizon


def _check_sale_windows(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]
) -> list[Finding]:
    """Check that no chip's sale window ends before it begins."""
    out: list[Finding] = []
    chips = tables["chips"]
    for i, (a, b) in enumerate(zip(chips["first_period"], chips["last_period"], strict=True)):
        if (
            PERIOD_RE.match(str(a))
            and PERIOD_RE.match(str(b))
            and period_index(str(b)) < period_index(str(a))
        ):
            out.append(
                Finding(
                    "error",
                    files["chips"],
                    i + 2,
                    "last_period",
                    str(b),
                    f"sale window ends ({b}) before it begins ({a})",
                )
            )
    return out


def _check_initial_capacity(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]
) -> list[Finding]:
    """Check that initial liquid fits initial capacity, which fits the site maximum."""
    out: list[Finding] = []
    sites = tables["sites"]
    fs = files["sites"]
    for i, row in enumerate(sites.itertuples(index=False)):
        if row.initial_liquid_mw > row.initial_it_mw + 1e-9:
            out.append(
                Finding(
                    "error",
                    fs,
                    i + 2,
                    "initial_liquid_mw",
                    f"{row.initial_liquid_mw:g}",
                    f"exceeds initial_it_mw ({row.initial_it_mw:g} MW)",
                )
            )
        if row.initial_it_mw > row.max_it_mw + 1e-9:
            out.append(
                Finding(
                    "error",
                    fs,
                    i + 2,
                    "initial_it_mw",
                    f"{row.initial_it_mw:g}",
                    f"exceeds max_it_mw ({row.max_it_mw:g} MW)",
                )
            )
    return out


def _check_schedules(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str], horizon: list[str]
) -> list[Finding]:
    """Check every site has grid and water rows, every resource a capacity, per period."""
    out: list[Finding] = []
    sites = tables["sites"]
    for tname, keycol, label in (
        ("site_grid", "site", "grid"),
        ("site_water", "site", "water permit"),
    ):
        have = set(zip(tables[tname][keycol].astype(str), tables[tname]["period"], strict=True))
        # a site repeated under another case/spacing is already a duplicate-key
        # error: do not also report its missing schedules
        first_ids = {normalise_key(x): x for x in reversed(sites["site"].astype(str).tolist())}
        for s in first_ids.values():
            missing = [p for p in horizon if (s, p) not in have]
            if missing:
                out.append(
                    Finding(
                        "error",
                        files[tname],
                        None,
                        "period",
                        None,
                        f"site {s!r} has no {label} row for {len(missing)} period(s) "
                        f"({', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}); "
                        "every site needs one row per period",
                    )
                )
    res = tables["supply_resources"]
    have = set(zip(res["resource"].astype(str), res["period"], strict=True))
    for r in sorted(set(res["resource"].astype(str))):
        missing = [p for p in horizon if (r, p) not in have]
        if missing:
            out.append(
                Finding(
                    "error",
                    files["supply_resources"],
                    None,
                    "period",
                    None,
                    f"resource {r!r} has no capacity row for {len(missing)} period(s) "
                    f"({', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''})",
                )
            )
    return out


def _check_commitments(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]
) -> list[Finding]:
    """Check that a commitment names a chip family and does not end before it begins."""
    out: list[Finding] = []
    chips = tables["chips"]
    families = set(chips["family"].astype(str))
    com = tables.get("commitments")
    if com is not None:
        for i, row in enumerate(com.itertuples(index=False)):
            if str(row.family) not in families:
                out.append(
                    Finding(
                        "error",
                        files["commitments"],
                        i + 2,
                        "family",
                        str(row.family),
                        f"no chip has family {row.family!r}." + suggest(str(row.family), families),
                    )
                )
            start, end = str(row.from_period), str(row.to_period)
            if (
                PERIOD_RE.match(start)
                and PERIOD_RE.match(end)
                and period_index(end) < period_index(start)
            ):
                out.append(
                    Finding(
                        "error",
                        files["commitments"],
                        i + 2,
                        "to_period",
                        end,
                        f"commitment ends ({end}) before it begins ({start})",
                    )
                )
    return out


def _check_regions(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Check eligibility regions are regions of some site (a warning otherwise)."""
    out: list[Finding] = []
    sites = tables["sites"]
    regions = set(sites["region"].astype(str))
    elig = tables["eligibility"]
    for i, txt in enumerate(elig["regions"].astype(str)):
        for reg in [r.strip() for r in txt.split(";") if r.strip()]:
            if reg not in regions:
                out.append(
                    Finding(
                        "warning",
                        files["eligibility"],
                        i + 2,
                        "regions",
                        txt,
                        f"region {reg!r} is not the region of any site." + suggest(reg, regions),
                    )
                )
    return out


def _check_hosts(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Check that each ``sites.hosts`` entry names a chip family or vendor (a warning).

    An entry that matches nothing forbids no more than it allows: a site whose every
    entry is unknown hosts no chip at all. That may be deliberate (a campus reserved
    for a family not in the dataset), so it is a warning, with a did-you-mean for a
    typo ("trainum"), at the site's row.
    """
    sites = tables["sites"]
    if "hosts" not in sites:
        return []
    chips = tables["chips"]
    known = set(chips["family"].astype(str)) | set(chips["vendor"].astype(str))
    out: list[Finding] = []
    for i, txt in enumerate(sites["hosts"].fillna("").astype(str)):
        for entry in [h.strip() for h in txt.split(";") if h.strip()]:
            if entry not in known:
                out.append(
                    Finding(
                        "warning",
                        files["sites"],
                        i + 2,
                        "hosts",
                        txt,
                        f"{entry!r} is neither a chip family nor a vendor of chips.csv; "
                        "the site could host no chip." + suggest(entry, known),
                    )
                )
    return out


def check_placement(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Placement rules: demand regions and training-cluster rows (issue 14).

    A region named in ``demand.regions`` must be the region of some site (else the
    demand could be served nowhere: an error naming the row); a training-cluster rule
    must not end before it begins, and two rules of one customer must not overlap.

    Returns
    -------
    list of Finding
        Errors naming file, row, column and value.
    """
    out: list[Finding] = []
    regions = set(tables["sites"]["region"].astype(str))
    demand = tables["demand"]
    if "regions" in demand:
        for i, txt in enumerate(demand["regions"].astype(str)):
            for reg in [r.strip() for r in txt.split(";") if r.strip()]:
                if reg not in regions:
                    msg = f"region {reg!r} is not the region of any site, so this demand could "
                    msg += "be served nowhere." + suggest(reg, regions)
                    out.append(Finding("error", files["demand"], i + 2, "regions", txt, msg))
    rules = tables.get("training_clusters")
    if rules is None or not len(rules):
        return out
    seen: dict[str, list[tuple[int, int, int]]] = {}
    for i, row in enumerate(rules.itertuples(index=False)):
        start, end = str(row.from_period), str(row.to_period)
        if not PERIOD_RE.match(start):
            continue
        lo = period_index(start)
        hi = period_index(end) if PERIOD_RE.match(end) else 10**9
        if hi < lo:
            msg = f"training-cluster rule ends ({end}) before it begins ({start})"
            out.append(Finding("error", files["training_clusters"], i + 2, "to_period", end, msg))
            continue
        for j, a, b in seen.get(str(row.customer), []):
            if lo <= b and a <= hi:
                msg = f"rule overlaps the rule of row {j} for customer {row.customer!r}"
                out.append(
                    Finding("error", files["training_clusters"], i + 2, "from_period", start, msg)
                )
        seen.setdefault(str(row.customer), []).append((i + 2, lo, hi))
    return out


def check_sources(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Every figure of the dataset must be traced in the sources table.

    A sources row covers the cells of ``table`` whose key (key values joined by
    "/") matches its ``key`` pattern (``*`` matches anything, so ``openai/*`` covers
    every row of customer openai and ``*`` a whole column) in ``column`` (or every
    column with ``*``). Its ``source`` is a public address (http...) or starts with
    the word ``assumption``.

    Returns
    -------
    list of Finding
        A warning per (table, column) with uncovered figures (naming the first
        uncovered row), and a warning per sources row whose source is neither an
        address nor an assumption. The sources table itself and display names are
        exempt.
    """
    from fnmatch import fnmatchcase

    src = tables.get("sources")
    if src is None or src.empty:
        return []
    out: list[Finding] = []
    for i, s in enumerate(src["source"].astype(str)):
        text = s.strip().lower()
        if not (text.startswith(("http://", "https://")) or text.startswith("assumption")):
            out.append(
                Finding(
                    "warning",
                    files["sources"],
                    i + 2,
                    "source",
                    s,
                    "a source is a public address (https://...) or the word 'assumption'",
                )
            )
    patterns: dict[str, list[tuple[str, str]]] = {}
    for t, k, c in zip(
        src["table"].astype(str), src["key"].astype(str), src["column"].astype(str), strict=True
    ):
        patterns.setdefault(t, []).append((k, c))
    for name, df in tables.items():
        if name in ("sources", "public_record") or df.empty:
            # public_record carries its own source column (check_public_record)
            continue
        table = SPECS[name]
        pats = patterns.get(name, [])
        keys = ["/".join(map(str, r)) for r in df[list(table.key)].itertuples(index=False)]
        for col in table.columns:
            if col.name in table.key or col.name == "display_name":
                continue
            cpats = [k for k, c in pats if c in (col.name, "*")]
            for i, key in enumerate(keys):
                if not any(p == key or fnmatchcase(key, p) for p in cpats):
                    out.append(
                        Finding(
                            "warning",
                            files[name],
                            i + 2,
                            col.name,
                            key,
                            f"figure {name}.{col.name} for {key!r} has no row in "
                            "sources.csv (give a public address or 'assumption')",
                        )
                    )
                    break
    return out


def check_public_record(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]
) -> list[Finding]:
    """Rules of the public-record table (the figures the plan is calibrated against).

    Every row cites a public address (``https://...``; neither an assumption nor a
    file of this repository), its band holds its value (``low <= value <= high``) and
    a row marked ``matchable = no`` says why in ``reason``.

    Returns
    -------
    list of Finding
        One error per broken rule, naming the row, column and value.
    """
    df = tables.get("public_record")
    if df is None or df.empty:
        return []
    f = files["public_record"]
    out: list[Finding] = []
    for i, r in enumerate(df.itertuples(index=False)):
        row = i + 2
        src = str(r.source).strip()
        if not src.lower().startswith(("https://", "http://")):
            out.append(
                Finding(
                    "error",
                    f,
                    row,
                    "source",
                    src,
                    "a public-record figure needs a public address (https://...) that "
                    "supports it; assumptions belong in sources.csv",
                )
            )
        lo, val, hi = float(r.low), float(r.value), float(r.high)
        if not lo <= val <= hi:
            out.append(
                Finding(
                    "error",
                    f,
                    row,
                    "low" if val < lo else "high",
                    f"{lo:g}..{hi:g}",
                    f"the band low..high must hold the value {val:g}",
                )
            )
        if str(r.matchable) == "no" and not str(r.reason).strip():
            out.append(
                Finding(
                    "error",
                    f,
                    row,
                    "reason",
                    "",
                    "a row marked matchable = no must say why in 'reason'",
                )
            )
    return out
