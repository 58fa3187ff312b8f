"""Reading one table file of a dataset as raw cells, the way a spreadsheet saves it.

CSV files are decoded as UTF-8 (with or without a byte order mark), UTF-16 with its
byte order mark, or Windows-1252 (with a warning); the blank rows and unnamed empty
columns Excel leaves at the edges are dropped; a file saved with another separator is
one finding naming it. Parquet files are read as they are.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd

from capacity.csv_safe import unescape_formula_cells
from capacity.validation import DataValidationError, Finding

__all__ = ["SAVE_AS_UTF8", "read_table_file"]


def read_table_file(path: Path, notes: list[Finding] | None = None) -> pd.DataFrame:
    """Read one table file as raw cells (CSV: all text; Parquet: native values).

    A CSV file is read the way a spreadsheet saves it: UTF-8 (with or without a byte
    order mark), UTF-16 with its byte order mark (Excel's "Unicode Text"), or, when
    it is not UTF-8, Windows-1252 (Excel's plain "CSV (Comma delimited)" on Windows;
    a warning says so). Rows left blank at the end of the file and unnamed empty
    columns (what Excel writes for cells that were once touched) are dropped.

    Parameters
    ----------
    path : Path
        A ``.csv`` or ``.parquet`` file.
    notes : list of Finding, optional
        Appended to: a warning when the file was read as Windows-1252.

    Returns
    -------
    DataFrame
        One row per data row, in file order (row 2 of the file is the first).

    Raises
    ------
    DataValidationError
        When the file cannot be read or parsed as a table (one finding naming the
        file and what to change).
    """
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        text, encoding_note = _decode_csv(path)
        if not text.strip():
            raise DataValidationError([Finding("error", path.name, None, None, None, _empty(path))])
        # blank lines are rows too: skipping them would shift every later row's number
        df = pd.read_csv(
            io.StringIO(text),
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            skip_blank_lines=False,
        )
    except DataValidationError:
        raise
    except Exception as exc:  # noqa: BLE001 - every reader failure becomes a finding
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        row, msg = _parser_row(msg)
        raise DataValidationError(
            [Finding("error", path.name, row, None, None, f"cannot read the file: {msg}")]
        ) from exc
    if not isinstance(df.index, pd.RangeIndex):  # pandas took the first cells as an index
        raise DataValidationError([_extra_first_cells(path.name, text, len(df.columns))])
    twice = _repeated_header_names(text)
    if twice:  # pandas renames the second one (name.1), which the file never says
        raise DataValidationError(
            [
                Finding(
                    "error",
                    path.name,
                    1,
                    name,
                    name,
                    f"column {name!r} is named twice in the header row: remove or rename one",
                )
                for name in twice
            ]
        )
    wrong = _wrong_separator(df)
    if wrong is not None:
        raise DataValidationError([Finding("error", path.name, 1, None, df.columns[0], wrong)])
    if encoding_note is not None and notes is not None:
        notes.append(Finding("warning", path.name, None, None, None, encoding_note))
    return unescape_formula_cells(_drop_blank_edges(df))


def _extra_first_cells(name: str, text: str, n_header: int) -> Finding:
    """Return the finding for a first data row with more cells than the header.

    pandas reads such a file without an error: it takes the extra cells of the first
    row as the rows' index and shifts every column left, so each later check would
    report the shifted values instead (hundreds of findings, none about the cause).
    The row is the first one after the header that is not blank.
    """
    for row, cells in enumerate(csv.reader(io.StringIO(text)), start=1):
        if row > 1 and any(c.strip() for c in cells):
            return Finding(
                "error",
                name,
                row,
                None,
                None,
                f"row {row} has {len(cells)} cells where the header has {n_header}: remove "
                "the extra cells (a comma inside a value needs quotes)",
            )
    return Finding("error", name, 2, None, None, "the first row has more cells than the header")


def _repeated_header_names(text: str) -> list[str]:
    """Return the column names the header row of a CSV text holds more than once."""
    header = next(csv.reader(io.StringIO(text)), [])
    names = [h.strip() for h in header if h.strip()]
    return sorted({n for n in names if names.count(n) > 1})


def _parser_row(msg: str) -> tuple[int | None, str]:
    """Return the file row (header = 1) a CSV parser error names, and the message.

    pandas counts "line N" from 1 (the file's row N) and "row N" of an unclosed
    quote from 0 with the header (the file's row N + 1).
    """
    import re

    m = re.search(r"EOF inside string starting at row (\d+)", msg)
    if m:
        row = int(m.group(1)) + 1
        return (
            row,
            f"a quoted cell opened on row {row} is never closed: "
            'add the closing " or remove the opening one',
        )
    m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", msg)
    if m:
        want, row, saw = (int(g) for g in m.groups())
        return (
            row,
            f"row {row} has {saw} cells where the header has {want}: remove the extra "
            "cells (a comma inside a value needs quotes)",
        )
    return None, msg


def _empty(path: Path) -> str:
    """Return the message for an empty CSV file: its header row is expected (from the schema)."""
    from capacity.schema import SPECS

    spec = SPECS.get(path.stem)
    if spec is None:
        return "the file is empty: write a header row of column names, then one row per record"
    return f"the file is empty: write the header row {','.join(spec.column_names)} then the rows"


SAVE_AS_UTF8 = 'save it as "CSV UTF-8 (Comma delimited)" (in Excel: File > Save As)'
"""The advice given with every encoding finding: the one format read without doubt."""


def _decode_csv(path: Path) -> tuple[str, str | None]:
    """Return the text of a CSV file and a note when it was not UTF-8.

    Raises
    ------
    DataValidationError
        When the bytes are neither UTF-8, UTF-16 with a byte order mark nor
        Windows-1252 text (one finding with the line of the first bad byte).
    """
    data = path.read_bytes()
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16"), None
    utf16 = _utf16_without_bom(data)
    if utf16 is not None:
        return data.decode(utf16), (
            f"read as {utf16.upper()} (UTF-16 without a byte order mark); {SAVE_AS_UTF8}"
        )
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        first = f"byte 0x{data[exc.start]:02x} on line {line}"
    if b"\x00" not in data:
        try:
            text = data.decode("cp1252")
        except UnicodeDecodeError:
            pass
        else:
            return text, (
                f"not UTF-8 ({first}); read as Windows-1252, the encoding of Excel's "
                f"plain CSV; check the accented names, or {SAVE_AS_UTF8}"
            )
    raise DataValidationError(
        [
            Finding(
                "error",
                path.name,
                line,
                None,
                None,
                f"cannot read the file: not UTF-8 or Windows-1252 text ({first}); {SAVE_AS_UTF8}",
            )
        ]
    )


def _utf16_without_bom(data: bytes) -> str | None:
    """Return ``"utf-16-le"`` / ``"utf-16-be"`` when ``data`` is such text without a BOM.

    Text of Latin letters in UTF-16 has a NUL in every other byte: the odd bytes
    (little-endian) or the even ones (big-endian). Taken as that only when nearly all
    of those bytes are NUL, none of the others is, and the bytes decode cleanly.
    """
    if len(data) < 4 or len(data) % 2 or b"\x00" not in data:
        return None
    even, odd = data[0::2], data[1::2]
    for name, zeros, chars in (("utf-16-le", odd, even), ("utf-16-be", even, odd)):
        if zeros.count(0) >= 0.9 * len(zeros) and chars.count(0) == 0:
            try:
                data.decode(name)
            except UnicodeDecodeError:
                return None
            return name
    return None


def _drop_blank_edges(df: pd.DataFrame) -> pd.DataFrame:
    """Drop the blank rows at the end and the unnamed, empty columns of a CSV's cells.

    Blank rows inside the table are kept, so every row keeps the number a
    spreadsheet shows (and a blank required cell there is still an error).
    """
    blank = df.apply(lambda c: c.str.strip() == "").all(axis=1) if df.shape[1] else None
    if blank is not None and len(df) and blank.iloc[-1]:
        keep = int(np.flatnonzero(~blank.to_numpy())[-1]) + 1 if (~blank).any() else 0
        df = df.iloc[:keep]
    unnamed = [
        c for c in df.columns if str(c).startswith("Unnamed: ") and (df[c].str.strip() == "").all()
    ]
    return df.drop(columns=unnamed) if unnamed else df


def _wrong_separator(df: pd.DataFrame) -> str | None:
    """Say so when a CSV was saved with another separator (one cause, one finding).

    A file saved by a spreadsheet with a ';' (or tab, '|') separator reads as a single
    column whose header holds every column name; every later check would fail row by
    row for that one cause.
    """
    if df.shape[1] != 1:
        return None
    header = str(df.columns[0])
    for sep, name in ((";", "';'"), ("\t", "a tab"), ("|", "'|'")):
        if sep in header:
            return (
                f"the columns are separated by {name}, not ','; save the file as "
                "comma-separated CSV (in a spreadsheet: CSV with comma as the separator)"
            )
    return None
