"""Dataset downloads and the table editor's schema: zips, column configs, editor frames, drafts.

Plain functions of their arguments (no session state), so the pages stay thin and the
tests can call these directly.
"""

from __future__ import annotations

import io
import math
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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

    Numbers get their unit in the label and their bounds in the help (``step=1`` for
    integers), not as the editor's min/max: the browser's grid would clamp a value out
    of range or drop its minus sign without a word (-5 stored as 5, 5 in a [0, 1]
    column as 1), where validation names the table, row, column and the value typed.
    Choice columns are select boxes; periods are checked against ``YYYYQn``. Every
    value is JSON-safe (:func:`json_safe`): a NaN default (``carbon_cap_t``, empty =
    no cap) gives no default, an infinite bound no bound.
    """
    import streamlit as st

    t = SPECS[table]
    out: dict[str, Any] = {}
    for c in t.columns:
        kw: dict[str, Any] = {
            "label": column_label(c),
            "help": column_help(c, t),
            "required": c.required,
        }
        if json_safe(c.default) is not None and not c.required:
            kw["default"] = c.default
        if c.is_numeric:
            out[c.name] = st.column_config.NumberColumn(**kw, step=1 if c.dtype == "int" else None)
        elif c.dtype == "choice":
            out[c.name] = st.column_config.SelectboxColumn(**kw, options=list(c.choices))
        elif c.dtype == "period":
            out[c.name] = st.column_config.TextColumn(**kw, validate=r"^\d{4}Q[1-4]$")
        else:
            out[c.name] = st.column_config.TextColumn(**kw)
    return {name: json_safe(cfg) for name, cfg in out.items()}


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
