"""Dataset I/O and schema helpers for the app: uploads, downloads, column configs, findings.

Everything here is a plain function of its arguments (no session state), so the pages
stay thin and the tests can call these directly. Parsing and validation are delegated
to :mod:`capacity.dataset` and :mod:`capacity.validation`; this module only moves
bytes between the browser and those functions.
"""

from __future__ import annotations

import dataclasses
import io
import tempfile
import zipfile
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

import pandas as pd

from capacity.dataset import Dataset, load_dataset, read_table_file
from capacity.limits import MAX_UPLOAD_BYTES as MAX_UPLOAD_BYTES  # re-exported for the pages
from capacity.limits import MAX_UPLOAD_MB as MAX_UPLOAD_MB
from capacity.schema import SPECS, TABLE_NAMES, Column, TableSpec
from capacity.validation import DataValidationError, Finding

TABLE_SUFFIXES = (".csv", ".parquet")


class UploadError(ValueError):
    """An upload that cannot be used; the message says why in plain words."""


@dataclass(frozen=True)
class UploadedFile:
    """One uploaded file: its name and its bytes."""

    name: str
    data: bytes


def release_memory() -> None:
    """Return freed memory to the operating system after a large upload was handled.

    CPython's allocator and glibc keep freed arenas for reuse, so a server that parsed a
    50 MB upload stays that large after the browser leaves. A full collection and
    glibc's ``malloc_trim(0)`` (skipped on other C libraries) give the pages back.
    """
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


# ------------------------------------------------------------------------ uploads
def _check_size(name: str, size: int) -> None:
    if size > MAX_UPLOAD_BYTES:
        raise UploadError(
            f"{name} is {size / 1024 / 1024:.1f} MB; the limit is {MAX_UPLOAD_MB} MB per upload."
        )


def _table_of(name: str) -> str | None:
    p = PurePosixPath(name)
    if p.suffix.lower() not in TABLE_SUFFIXES:
        return None
    return p.stem if p.stem in SPECS else None


MAX_ZIP_MEMBERS = 1000
"""Most entries a dataset zip may list (a dataset has about 15 files)."""

_CHUNK = 1 << 20


def _copy_capped(src: IO[bytes], dst: IO[bytes], budget: int, what: str) -> int:
    """Copy ``src`` to ``dst`` in 1 MiB chunks; return the bytes copied.

    Raises
    ------
    UploadError
        As soon as more than ``budget`` bytes come out (whatever the zip declared).
    """
    copied = 0
    while chunk := src.read(min(_CHUNK, budget - copied + 1)):
        copied += len(chunk)
        if copied > budget:
            raise UploadError(
                f"{what} unpacks to more than {MAX_UPLOAD_MB} MB; the limit is {MAX_UPLOAD_MB} MB "
                "for the unpacked contents (the sizes the zip declares are not trusted)."
            )
        dst.write(chunk)
    return copied


def _zip_members(zf: zipfile.ZipFile, name: str) -> list[zipfile.ZipInfo]:
    """Return the files of a zip worth reading (no folders, hidden files, macOS metadata)."""
    infos = zf.infolist()
    if len(infos) > MAX_ZIP_MEMBERS:
        raise UploadError(
            f"{name} lists {len(infos)} entries; a dataset zip holds at most {MAX_ZIP_MEMBERS}."
        )
    return [
        m
        for m in infos
        if not m.is_dir()
        and not PurePosixPath(m.filename).name.startswith(".")
        and "__MACOSX" not in m.filename
    ]


def _check_parquet(path: Path, shown: str) -> None:
    """Refuse a Parquet file whose data unpacks beyond :data:`MAX_UPLOAD_MB`.

    Parquet compresses well, so a small file can hold gigabytes of cells; the sizes
    in its footer are checked before any row is read.
    """
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(path).metadata
    except Exception as exc:  # noqa: BLE001 - any unreadable footer is a bad upload
        raise UploadError(f"{shown} is not a readable Parquet file ({exc}).") from exc
    unpacked = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if unpacked > MAX_UPLOAD_BYTES:
        raise UploadError(
            f"{shown} holds {unpacked / 1024 / 1024:.1f} MB of data once unpacked; the limit "
            f"is {MAX_UPLOAD_MB} MB."
        )


def _extract_zip(f: UploadedFile, target: Path) -> list[str]:
    """Unpack the table files (and YAML) of a zip into ``target``; return their names.

    Members are streamed to disk with a running byte count, so the
    :data:`MAX_UPLOAD_MB` limit on the unpacked contents holds even when the zip
    understates a member's size (a zip bomb); nothing is inflated in memory.
    """
    try:
        zf = zipfile.ZipFile(io.BytesIO(f.data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise UploadError(f"{f.name} is not a valid zip archive.") from exc
    with zf:
        members = _zip_members(zf, f.name)
        declared = sum(m.file_size for m in members)
        if declared > MAX_UPLOAD_BYTES:
            raise UploadError(
                f"{f.name} unpacks to {declared / 1024 / 1024:.1f} MB; the limit is "
                f"{MAX_UPLOAD_MB} MB."
            )
        names: list[str] = []
        budget = MAX_UPLOAD_BYTES
        for m in members:
            base = PurePosixPath(m.filename).name
            if _table_of(base) is None and base not in ("scenarios.yaml", "dataset.yaml"):
                continue
            if base in names:
                raise UploadError(f"{f.name} holds {base} twice (in different folders).")
            try:
                with zf.open(m) as src, open(target / base, "wb") as dst:
                    budget -= _copy_capped(src, dst, budget, f.name)
            except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:
                raise UploadError(f"{f.name}: {base} is damaged ({exc}).") from exc
            except (NotImplementedError, RuntimeError) as exc:  # compression, encryption
                raise UploadError(f"{f.name}: {base} cannot be unpacked ({exc}).") from exc
            if base.lower().endswith(".parquet"):
                _check_parquet(target / base, f"{f.name}: {base}")
            names.append(base)
    if not any(_table_of(n) for n in names):
        raise UploadError(
            f"{f.name} holds no table file; expected files named <table>.csv or "
            f"<table>.parquet with table one of: {', '.join(TABLE_NAMES)}."
        )
    return names


def dataset_from_upload(files: Sequence[UploadedFile], current: Dataset | None) -> Dataset:
    """Build a validated Dataset from uploaded files.

    Parameters
    ----------
    files : sequence of UploadedFile
        Either one zip of a whole dataset (``<table>.csv``/``.parquet`` files, optional
        ``scenarios.yaml``), or single table files named ``<table>.csv`` or
        ``<table>.parquet`` that replace those tables of ``current``.
    current : Dataset or None
        The dataset the single tables patch (and whose scenarios a zip without a
        ``scenarios.yaml`` keeps).

    Returns
    -------
    Dataset
        The new dataset; ``current`` is never changed.

    Raises
    ------
    UploadError
        For a file over :data:`MAX_UPLOAD_MB`, a broken zip, an unknown file name,
        single tables without a current dataset.
    DataValidationError
        When the tables do not validate (wrong columns, text in number columns ...);
        ``findings`` lists every problem with file, row, column and value.
    """
    if not files:
        raise UploadError("No file uploaded.")
    for f in files:
        _check_size(f.name, len(f.data))
    zips = [f for f in files if f.name.lower().endswith(".zip")]
    if zips and len(files) > 1:
        raise UploadError("Upload either one zip of a whole dataset, or single table files.")
    with tempfile.TemporaryDirectory(prefix="capacity_upload_") as tmp:
        d = Path(tmp)
        if zips:
            names = _extract_zip(zips[0], d)
            ds = load_dataset(d)
            keep = current is not None and "scenarios.yaml" not in names
            scenarios = current.scenarios if keep and current is not None else ds.scenarios
            return dataclasses.replace(ds, name=Path(zips[0].name).stem, scenarios=scenarios)
        if current is None:
            raise UploadError("No dataset is loaded yet: upload a zip holding every table first.")
        new: dict[str, pd.DataFrame] = {}
        files_by_table: dict[str, str] = {}
        for f in files:
            table = _table_of(f.name)
            if table is None:
                raise UploadError(
                    f"{f.name}: name a file <table>.csv or <table>.parquet, with table one "
                    f"of: {', '.join(TABLE_NAMES)}; or upload a .zip of the whole dataset."
                )
            if table in new:
                raise UploadError(f"Two uploaded files are for table {table!r}.")
            path = d / f"{table}{PurePosixPath(f.name).suffix.lower()}"
            path.write_bytes(f.data)
            if path.suffix == ".parquet":
                _check_parquet(path, f.name)
            new[table] = read_table_file(path)
            files_by_table[table] = PurePosixPath(f.name).name
        return Dataset.from_tables(
            {**current.tables, **new},
            name=current.name,
            scenarios=current.scenarios,
            files=files_by_table,
        )


def dataset_zip_bytes(ds: Dataset) -> bytes:
    """Return the dataset as a zip of ``<table>.csv`` files plus ``scenarios.yaml``.

    The zip reads back with :func:`dataset_from_upload` (and, unpacked, with
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
    """Zip a directory tree (e.g. a Parquet report run) into bytes, paths relative to it."""
    root = Path(directory)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(root.rglob("*")):
            if p.is_file() and not p.name.startswith("."):
                zf.write(p, arcname=str(p.relative_to(root.parent)))
    return buf.getvalue()


# ---------------------------------------------------------------------- findings
ROW_LABEL = "row (file; header = 1)"
"""Header of the findings' ``row`` column: the spreadsheet row the messages use."""

EDITOR_ROW_LABEL = "editor index (= row − 2)"
"""Header of the findings' ``editor_row`` column: the index shown left of the editor."""

FILE_ROWS = (
    "Rows are numbered as in the file, like the messages: the header is row 1, the first "
    "data row is row 2."
)
"""Caption of a findings table about uploaded or loaded files."""

ROW_NUMBERING = (
    FILE_ROWS + " The editor's index on the left counts from 0, so file row N is editor "
    "index N − 2."
)
"""Caption explaining the two row numberings next to a findings table."""


def table_of_file(file: object) -> str:
    """Return the table a finding's file names (``sites.csv`` -> ``sites``)."""
    return PurePosixPath(str(file)).stem


def findings_for_table(findings: Iterable[Finding], table: str) -> list[Finding]:
    """Return the findings about one table's file (``sites.csv``, ``sites.parquet`` ...)."""
    return [f for f in findings if table_of_file(f.file) == table]


def findings_table(findings: Iterable[Finding]) -> pd.DataFrame:
    """Return findings as a frame: file, severity, row, editor_row, column, value, message.

    ``file`` names the table's file (``sites.csv``); ``row`` is the spreadsheet row the
    messages use (header = 1, first data row = 2); ``editor_row`` is the 0-based index
    in the editor (``row - 2``; missing for the header row 1 and for a whole-file
    finding, which has no ``row`` either). Show the frame with
    :func:`findings_column_config` so the headers say which numbering is which.
    """
    rows = []
    for f in findings:
        rows.append(
            {
                "file": str(f.file),
                "severity": f.severity,
                "row": f.row,
                "editor_row": None if f.row is None or f.row < 2 else f.row - 2,
                "column": f.column or "",
                "value": "" if f.value is None else str(f.value),
                "message": f.message,
            }
        )
    df = pd.DataFrame(
        rows, columns=["file", "severity", "row", "editor_row", "column", "value", "message"]
    )
    df["row"] = df["row"].astype("Int64")
    df["editor_row"] = df["editor_row"].astype("Int64")
    return df


def findings_column_config() -> dict[str, Any]:
    """Column config of :func:`findings_table`: headers that name the row numbering."""
    import streamlit as st

    return {
        "file": st.column_config.TextColumn("file (table)"),
        "row": st.column_config.NumberColumn(ROW_LABEL, format="%d"),
        "editor_row": st.column_config.NumberColumn(EDITOR_ROW_LABEL, format="%d"),
    }


def order_findings(findings: Iterable[Finding], first: Sequence[str] = ()) -> list[Finding]:
    """Group findings by table: the tables in ``first`` in that order, then schema order.

    Within a table, errors come before warnings and the file order is kept.
    """
    rank = {t: i for i, t in enumerate(first)}
    n = len(rank)
    schema = {t: n + i for i, t in enumerate(TABLE_NAMES)}

    def key(item: tuple[int, Finding]) -> tuple[int, int, int]:
        i, f = item
        t = table_of_file(f.file)
        return (rank.get(t, schema.get(t, n + len(schema))), f.severity != "error", i)

    return [f for _, f in sorted(enumerate(findings), key=key)]


def errors_by_file(findings: Iterable[Finding]) -> str:
    """Where the errors are: ``"2 in sites.csv, 1 in demand.csv"`` (most first); ``""`` if none."""
    counts: dict[str, int] = {}
    for f in findings:
        if f.severity == "error":
            counts[str(f.file)] = counts.get(str(f.file), 0) + 1
    return ", ".join(f"{n} in {file}" for file, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def _reference_of(f: Finding) -> tuple[str, str] | None:
    """``(table, column)`` a finding's column refers to, when it is an unknown reference."""
    spec = SPECS.get(table_of_file(f.file))
    if spec is None or f.severity != "error" or f.value is None:
        return None
    col = next((c for c in spec.columns if c.name == f.column), None)
    if col is None or col.references is None or not f.message.startswith("unknown "):
        return None
    return col.references


KNOCK_ON_LISTED = 5
"""Most errors of other tables that :func:`knock_on_summary` quotes one by one."""


def knock_on_summary(findings: Iterable[Finding], edited: Iterable[str]) -> tuple[list[str], int]:
    """Summarise the errors an edit caused in other tables.

    Renaming or deleting a key (a site, a chip ...) makes every row of another table
    that still names the old key fail. Those rows are counted per missing key instead
    of listed one by one; other errors of other tables (e.g. a renamed site with no
    grid rows) are quoted, at most :data:`KNOCK_ON_LISTED` of them.

    Parameters
    ----------
    findings : iterable of Finding
        The findings of one validation.
    edited : iterable of str
        Tables the user edited; their own findings are never summarised.

    Returns
    -------
    (list of str, int)
        Sentences, e.g. ``"51 rows in site_grid, site_water refer to site 'old_name',
        which is not in sites."`` (largest group first) then ``"site_grid.csv: site
        'new' has no grid row ..."``; and the number of errors the sentences cover.
    """
    mine = set(edited)
    groups: dict[tuple[str, str, str], tuple[int, list[str]]] = {}
    quoted: list[Finding] = []
    for f in findings:
        t = table_of_file(f.file)
        if t in mine or f.severity != "error":
            continue
        ref = _reference_of(f)
        if ref is None:
            quoted.append(f)
            continue
        n, tables = groups.get((ref[0], ref[1], str(f.value)), (0, []))
        groups[(ref[0], ref[1], str(f.value))] = (n + 1, tables if t in tables else [*tables, t])
    lines = [
        f"{n} row{'s' if n != 1 else ''} in {', '.join(tables)} refer{'' if n != 1 else 's'} "
        f"to {rc} {v!r}, which is not in {rt}."
        for (rt, rc, v), (n, tables) in sorted(groups.items(), key=lambda kv: -kv[1][0])
    ]
    lines += [f"{f.file}: {f.message}" for f in quoted[:KNOCK_ON_LISTED]]
    if len(quoted) > KNOCK_ON_LISTED:
        lines.append(f"… and {len(quoted) - KNOCK_ON_LISTED} more error(s) in other tables.")
    return lines, sum(n for n, _ in groups.values()) + len(quoted)


def highlight_rows(frame: pd.DataFrame, findings: Sequence[Finding]) -> Any:
    """Return a pandas Styler of the rows of ``frame`` named by findings, bad cells coloured.

    Errors are red, warnings amber. Rows keep their editor position as index.
    """
    pos: dict[int, dict[str, str]] = {}
    for f in findings:
        if f.row is None or f.row < 2 or f.row - 2 >= len(frame):
            continue
        cells = pos.setdefault(f.row - 2, {})
        colour = "#f8d7da" if f.severity == "error" else "#fff3cd"
        cols = [f.column] if f.column in frame.columns else list(frame.columns)
        for c in cols:
            if cells.get(c) != "#f8d7da":
                cells[c] = colour
    sub = frame.iloc[sorted(pos)]

    def style(row: pd.Series) -> list[str]:
        cells = pos.get(int(row.name), {})  # type: ignore[arg-type]
        return [f"background-color: {cells[c]}" if c in cells else "" for c in row.index]

    return sub.style.apply(style, axis=1)


# ------------------------------------------------------------------ column config
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
        parts.append(
            f"Optional (empty = {col.default if col.default is not None else 'end of horizon'})."
        )
    if col.references:
        parts.append(f"Must exist in {col.references[0]}.{col.references[1]}.")
    if col.name in table.key:
        parts.append("Part of the row key.")
    return " ".join(parts)


def column_config(table: str) -> dict[str, Any]:
    """Return ``st.data_editor`` column configs built from the table's schema spec.

    Numbers get their unit in the label, bounds as min/max (``step=1`` for integers);
    choice columns are select boxes; periods are checked against ``YYYYQn``.
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
        if c.default is not None and not c.required:
            kw["default"] = c.default
        if c.is_numeric:
            out[c.name] = st.column_config.NumberColumn(
                **kw,
                min_value=c.min,
                max_value=c.max,
                step=1 if c.dtype == "int" else None,
            )
        elif c.dtype == "choice":
            out[c.name] = st.column_config.SelectboxColumn(**kw, options=list(c.choices))
        elif c.dtype == "period":
            out[c.name] = st.column_config.TextColumn(**kw, validate=r"^\d{4}Q[1-4]$")
        else:
            out[c.name] = st.column_config.TextColumn(**kw)
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


__all__ = [
    "MAX_UPLOAD_MB",
    "DataValidationError",
    "UploadError",
    "UploadedFile",
    "column_config",
    "dataset_from_upload",
    "dataset_zip_bytes",
    "directory_zip_bytes",
    "errors_by_file",
    "editor_frame",
    "findings_column_config",
    "findings_for_table",
    "findings_table",
    "knock_on_summary",
    "order_findings",
    "table_of_file",
    "frames_equal",
    "highlight_rows",
    "validate_drafts",
]
