"""Dataset downloads and the table editor's schema: zips, column configs, editor frames, drafts.

Plain functions of their arguments (no session state), so the pages stay thin and the
tests can call these directly.
"""

from __future__ import annotations

import io
import math
import re
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from capacity.dataset import Dataset
from capacity.schema import SPECS
from capacity.spec_types import Column, TableSpec


def dataset_zip_bytes(ds: Dataset) -> bytes:
    """Return the dataset as a zip of ``<table>.csv`` files plus ``scenarios.yaml``.

    The zip reads back with :func:`ui.upload.dataset_from_upload` (and, unpacked, with
    ``capacity.dataset.load_dataset``) to the same content hash.
    """
    buf = io.BytesIO()
    with tempfile.TemporaryDirectory(prefix="capacity_download_") as tmp:
        ds.write(tmp)
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for p in sorted(Path(tmp).iterdir()):
                if not p.name.startswith("."):
                    zf.write(p, arcname=p.name)
    return buf.getvalue()


def directory_zip_bytes(directory: str | Path) -> bytes:
    """Zip a directory tree (e.g. a Parquet report run) into bytes, paths relative to it.

    Hidden files and everything under a hidden folder are left out: a scenario's
    staging folder (``.scenario=<name>.partial-<pid>``) or an earlier folder set aside
    (``.old-<pid>``) is not part of the report.
    """
    root = Path(directory)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(root.rglob("*")):
            hidden = any(part.startswith(".") for part in p.relative_to(root).parts)
            if p.is_file() and not hidden:
                zf.write(p, arcname=str(p.relative_to(root.parent)))
    return buf.getvalue()


def column_label(col: Column) -> str:
    """Header text: the column name plus its unit, e.g. ``grid_mw [MW]``."""
    return f"{col.name} [{col.unit}]" if col.unit else col.name


def column_help(col: Column, table: TableSpec) -> str:
    """Tooltip: meaning, unit, bounds, default and reference of a column."""
    parts = [col.description]
    if col.unit:
        parts.append(f"Unit: {col.unit}.")
    bounds = col.bounds_text()
    if bounds and col.dtype != "choice":
        parts.append(f"Allowed: {bounds}.")
    if not col.required:
        default = json_safe(col.default)
        # None, NaN or "": the description says what an empty cell means
        parts.append("Optional." if default in (None, "") else f"Optional (empty = {default}).")
    if col.references:
        parts.append(f"Must exist in {col.references[0]}.{col.references[1]}.")
    if col.name in table.key:
        parts.append("Part of the row key.")
    return " ".join(parts)


def json_safe(value: Any) -> Any:
    """Return ``value`` with every NaN or infinite float replaced by None, recursively.

    Streamlit sends an editor's column configuration as JSON, where NaN and infinity
    are not allowed (a schema default of NaN means "empty": no default at all).
    Dicts, lists and tuples are copied; other values are returned as they are.
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def column_config(table: str) -> dict[str, Any]:
    """Return ``st.data_editor`` column configs built from the table's schema spec.

    Numbers are edited as text (:func:`editor_view`, :func:`from_editor`): the grid's
    number cell filtered what was typed without a word (``1e30`` kept as ``130``,
    ``2.5e3`` as ``2.53``, a 21-digit number or ``abc`` dropped), and clamped to a
    min/max; here a number reads as typed and a text that is none stays in its cell,
    for validation to name the table, row, column and value. The unit is in the label,
    the bounds in the help. Choice columns are select boxes. No cell is ``required`` and
    periods have no pattern: the grid held a new row with an empty required cell in the
    browser (never sent: lost on the next page) and reverted ``2025Q5`` silently, where
    validation names the cell. Every value is JSON-safe (:func:`json_safe`): a NaN
    default (``carbon_cap_t``, empty = no cap) gives no default, an infinite bound none.
    """
    import streamlit as st

    t = SPECS[table]
    out: dict[str, Any] = {}
    for c in t.columns:
        kw: dict[str, Any] = {"label": column_label(c), "help": column_help(c, t)}
        if json_safe(c.default) is not None and not c.required:
            kw["default"] = _number_text(c.default) if c.is_numeric else c.default
        if c.dtype == "choice":
            out[c.name] = st.column_config.SelectboxColumn(**kw, options=list(c.choices))
        elif c.is_numeric:
            out[c.name] = st.column_config.TextColumn(**kw, alignment="right")
        else:
            out[c.name] = st.column_config.TextColumn(**kw)
    return {name: json_safe(cfg) for name, cfg in out.items()}


def _number_text(value: Any) -> str | None:
    """Return a number as the editor shows it: the shortest text that reads back the same.

    An integer is written in full (``12345678901234567890`` is no float's text); -0.0
    keeps its sign, so opening a table is never an edit.
    """
    if isinstance(value, str):
        return value  # a text typed earlier that is no number: kept for validation
    if value is None or pd.isna(value):
        return None
    if isinstance(value, int | np.integer):
        return str(int(value))
    f = float(value)
    if f.is_integer() and abs(f) < 1e15 and math.copysign(1.0, f) > 0:
        return str(int(f))
    return repr(f)


#: Integer text: read exactly (a float of it loses digits above 2**53).
_INTEGER_TEXT = re.compile(r"^[+-]?\d+$")

#: Decimal text a number cell reads (``2.5e3``, ``-.5``), and the infinities the editor
#: writes (``inf``): Python's float() also took ``1_000`` (where ``1,000`` is refused),
#: ``nan`` (then reported as an empty required cell) and ``1e400`` (reported as ``inf``).
_DECIMAL_TEXT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^[+-]?inf$")


def _typed_number(value: Any) -> Any:
    """Return a cell typed in the editor as a number, NaN when empty, else the text as typed.

    An integer's text is read as an exact ``int``, any other number as a float.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return math.nan
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text:
        return math.nan
    if _INTEGER_TEXT.match(text):
        return int(text)
    if not _DECIMAL_TEXT.match(text):
        return value  # kept as typed: validation names it
    x = float(text)
    return value if math.isinf(x) and "inf" not in text else x  # 1e400: as typed


def editor_view(frame: pd.DataFrame, table: str) -> pd.DataFrame:
    """Return an editor frame with its number columns as text (see :func:`column_config`)."""
    out = frame.copy()
    for c in SPECS[table].columns:
        if c.is_numeric and c.name in out.columns:
            out[c.name] = pd.Series(
                [_number_text(v) for v in out[c.name]], index=out.index, dtype=object
            )
    return out


def _int64(cells: list[Any]) -> bool:
    """Return True when every cell is a whole number an int64 holds exactly (no NaN, inf)."""
    limit = 2**63
    return all(
        (isinstance(v, int) and -limit <= v < limit)
        or (isinstance(v, float) and math.isfinite(v) and v.is_integer() and abs(v) < 2**53)
        for v in cells
    )


def from_editor(edited: pd.DataFrame, table: str, like: pd.DataFrame) -> pd.DataFrame:
    """Return the editor's frame with its number columns read back as numbers.

    Parameters
    ----------
    edited : DataFrame
        What ``st.data_editor`` returned on :func:`editor_view`'s frame.
    table : str
        The table's name.
    like : DataFrame
        The table as loaded: a column it holds as integers is read back as ``int64`` when
        every cell is a whole number an ``int64`` holds exactly; else as floats (``inf``,
        ``1e20`` or ``2.5`` in an integer column stay as typed, for validation to name).

    Returns
    -------
    DataFrame
        The same cells; a text that is no number (``abc``, ``1,000``) stays text, so the
        column is ``object`` and validation names the cell.
    """
    out = edited.copy()
    for c in SPECS[table].columns:
        if not (c.is_numeric and c.name in out.columns):
            continue
        cells = [_typed_number(v) for v in out[c.name]]
        if any(isinstance(v, str) for v in cells):
            out[c.name] = pd.Series(cells, index=out.index, dtype=object)
            continue
        integer = c.name in like.columns and pd.api.types.is_integer_dtype(like[c.name].dtype)
        if integer and _int64(cells):
            out[c.name] = pd.Series([int(v) for v in cells], index=out.index, dtype="int64")
        elif all(not isinstance(v, int) or abs(v) < 2**53 for v in cells):
            out[c.name] = pd.Series(cells, index=out.index, dtype=float)
        else:  # an integer beyond a float's digits: kept whole, for validation to name
            out[c.name] = pd.Series(cells, index=out.index, dtype=object)
    return out


def editor_frame(ds: Dataset, table: str) -> pd.DataFrame:
    """Return the table as the editor shows it: a copy, with a plain 0..n-1 index."""
    return ds.table(table).copy().reset_index(drop=True)


def frames_equal(a: pd.DataFrame | None, b: pd.DataFrame | None) -> bool:
    """Return True when two editor frames hold the same cells (NaN equals NaN)."""
    if a is None or b is None:
        return a is b
    if list(a.columns) != list(b.columns) or a.shape != b.shape:
        return False
    return bool(a.reset_index(drop=True).astype(str).equals(b.reset_index(drop=True).astype(str)))


def validate_drafts(base: Dataset, drafts: Mapping[str, pd.DataFrame]) -> Dataset:
    """Build a Dataset from the base with the edited tables swapped in.

    Raises
    ------
    DataValidationError
        When the edited tables do not validate.
    """
    if not drafts:
        return base
    return base.replace(**{t: df.reset_index(drop=True) for t, df in drafts.items()})
