"""Dataset I/O and schema helpers for the app: uploads, downloads, column configs, findings.

Everything here is a plain function of its arguments (no session state), so the pages
stay thin and the tests can call these directly. Parsing and validation are delegated
to :mod:`capacity.dataset` and :mod:`capacity.validation`; this module only moves
bytes between the browser and those functions.
"""

from __future__ import annotations

import dataclasses
import io
import math
import tempfile
import zipfile
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

import pandas as pd

from capacity.dataset import Dataset, load_dataset, read_table_file
from capacity.limits import MAX_TRANSPORT_MB as MAX_TRANSPORT_MB
from capacity.limits import MAX_UPLOAD_BYTES as MAX_UPLOAD_BYTES  # re-exported for the pages
from capacity.limits import MAX_UPLOAD_MB as MAX_UPLOAD_MB
from capacity.schema import SPECS, TABLE_NAMES
from capacity.spec_types import Column, TableSpec
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
REFUSED_WHOLE = (
    "The upload is refused as a whole: nothing was loaded and the previous data is kept."
)
"""Second sentence of every refusal: a partial upload is never loaded."""


def _mb(size: int) -> str:
    return f"{size / 1024 / 1024:.1f} MB"


def check_upload_sizes(sizes: Iterable[tuple[str, int]]) -> None:
    """Refuse the whole upload when any file is over :data:`MAX_UPLOAD_MB`.

    Called with the sizes the uploader reports, before any file is read, so one
    oversize file stops the other files from loading too.

    Parameters
    ----------
    sizes : iterable of (str, int)
        File name and size in bytes of every uploaded file.

    Raises
    ------
    UploadError
        Naming every file over the limit with its size in MB (MiB), e.g.
        ``"sites.csv is 51.0 MB; the limit is 50 MB per file. The upload is refused
        as a whole: ..."``.
    """
    over = [f"{name} is {_mb(size)}" for name, size in sizes if size > MAX_UPLOAD_BYTES]
    if over:
        raise UploadError(
            f"{'; '.join(over)}; the limit is {MAX_UPLOAD_MB} MB per file. {REFUSED_WHOLE}"
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


YAML_FILES = ("scenarios.yaml", "dataset.yaml")
"""YAML files a dataset zip may hold beside its tables."""


def _near_miss(zip_name: str, member: str) -> None:
    """Refuse a zip member whose name is a near miss of a table or YAML file name.

    A typo (``site_gird.csv``) would otherwise be skipped and an optional table
    silently loaded empty.
    """
    import difflib

    p = PurePosixPath(member)
    suffix = p.suffix.lower()
    if suffix in TABLE_SUFFIXES:
        known = {t: f"{t}{suffix}" for t in TABLE_NAMES}
    elif suffix in (".yaml", ".yml"):
        known = {PurePosixPath(y).stem: y for y in YAML_FILES}
    else:
        return
    close = difflib.get_close_matches(p.stem, list(known), n=1, cutoff=0.8)
    if close:
        raise UploadError(
            f"{zip_name}: {member} is not a file name the dataset knows (did you mean "
            f"{known[close[0]]}?); rename or remove it. {REFUSED_WHOLE}"
        )


def _check_zip_tables(zip_name: str, unpacked: Mapping[str, str]) -> None:
    """Refuse a zip with no table, a table twice (CSV and Parquet) or a required table missing."""
    tables = [t for n in unpacked if (t := _table_of(n)) is not None]
    if not tables:
        raise UploadError(
            f"{zip_name} holds no table file; expected files named <table>.csv or "
            f"<table>.parquet with table one of: {', '.join(TABLE_NAMES)}."
        )
    both = sorted({t for t in tables if tables.count(t) > 1})
    if both:
        raise UploadError(
            f"{zip_name} holds both {both[0]}.csv and {both[0]}.parquet; keep one file per "
            f"table. {REFUSED_WHOLE}"
        )
    missing = [t for t in TABLE_NAMES if SPECS[t].required and t not in tables]
    if missing:
        raise UploadError(
            f"{zip_name} lacks the required table(s) {', '.join(missing)} (no "
            f"{missing[0]}.csv or {missing[0]}.parquet in it): a zip replaces the whole "
            "dataset, so it must hold every required table. To replace only some tables, "
            f"upload those table files on their own, not in a zip. {REFUSED_WHOLE}"
        )


def _extract_zip(f: UploadedFile, target: Path) -> tuple[dict[str, str], list[str]]:
    """Unpack the table files (and YAML) of a zip into ``target``.

    Members are streamed to disk with a running byte count, so the
    :data:`MAX_UPLOAD_MB` limit on the unpacked contents holds even when the zip
    understates a member's size (a zip bomb); nothing is inflated in memory.

    Returns
    -------
    (dict of str to str, list of str)
        File name unpacked (``sites.csv``) -> its path inside the zip; and the
        members left out because they are neither a table nor a known YAML file.
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
                f"{f.name} unpacks to {_mb(declared)}; the limit is {MAX_UPLOAD_MB} MB."
            )
        unpacked: dict[str, str] = {}
        ignored: list[str] = []
        budget = MAX_UPLOAD_BYTES
        for m in members:
            base = PurePosixPath(m.filename).name
            if _table_of(base) is None and base not in YAML_FILES:
                _near_miss(f.name, m.filename)
                ignored.append(m.filename)
                continue
            if base in unpacked:
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
            unpacked[base] = m.filename
    _check_zip_tables(f.name, unpacked)
    return unpacked, ignored


@dataclass(frozen=True)
class UploadReport:
    """What an upload loaded and from which file: the Data page's success message.

    Attributes
    ----------
    dataset : Dataset
        The new, validated dataset.
    received : tuple of (str, int)
        Every file the app received (name, bytes). A file the browser dropped for
        being over the uploader's cap never arrives, so it is never listed.
    tables_from : Mapping[str, str]
        Table -> the file it was read from (``mydata.zip: sites.csv`` for a zip member).
    empty : tuple of str
        Optional tables the zip did not hold: loaded empty.
    kept : tuple of str
        Tables kept as they were (a single-table upload replaces only its tables).
    previous : str
        Name of the dataset loaded before ("" when none was).
    scenarios_from : str
        Where the named scenarios came from, in words.
    ignored : tuple of str
        Zip members that are neither a table nor ``scenarios.yaml``/``dataset.yaml``.
    """

    dataset: Dataset
    received: tuple[tuple[str, int], ...]
    tables_from: Mapping[str, str]
    empty: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    previous: str = ""
    scenarios_from: str = ""
    ignored: tuple[str, ...] = ()

    def message(self) -> str:
        """Markdown naming every file received and every table's origin.

        E.g. ``Loaded **mydata** from mydata.zip (0.0 MB).`` then one bullet each for the
        tables read (with their file), the optional tables loaded empty, the tables
        kept, the scenarios' origin and the ignored zip members.
        """
        files = ", ".join(f"{n} ({_mb(b)})" for n, b in self.received)
        read = ", ".join(f"{t} ({f})" for t, f in self.tables_from.items())
        if self.kept:
            head = (
                f"Replaced {len(self.tables_from)} table(s) of **{self.dataset.name}** "
                f"with the files received: {files}."
            )
        else:
            head = f"Loaded **{self.dataset.name}** from {files}."
        lines = [head, f"- Tables read ({len(self.tables_from)}): {read}."]
        if self.empty:
            lines.append(
                f"- Not in the upload, so empty (optional tables, {len(self.empty)}): "
                f"{', '.join(self.empty)}."
            )
        if self.kept:
            lines.append(
                f"- Kept as they were ({len(self.kept)} tables of {self.previous}): "
                f"{', '.join(self.kept)}."
            )
        lines.append(f"- Scenarios: {self.scenarios_from}.")
        if self.ignored:
            lines.append(f"- Ignored (not a dataset file): {', '.join(self.ignored)}.")
        lines.append(
            "- Only the files listed here were received; a file the uploader marked as "
            "too large never reached the app and is not included."
        )
        return "\n".join(lines)


def _load_zip(z: UploadedFile, d: Path, current: Dataset | None) -> UploadReport:
    """Load a whole dataset from one zip (the zip's tables; scenarios from it or kept)."""
    unpacked, ignored = _extract_zip(z, d)
    ds = load_dataset(d)
    has_scenarios = "scenarios.yaml" in unpacked
    keep = current is not None and not has_scenarios
    scenarios = current.scenarios if keep and current is not None else ds.scenarios
    ds = dataclasses.replace(ds, name=Path(z.name).stem, scenarios=scenarios)
    tables_from = {
        t: f"{z.name}: {unpacked[n]}" for t in TABLE_NAMES for n in unpacked if _table_of(n) == t
    }
    if has_scenarios:
        scenarios_from = f"from {z.name}: {unpacked['scenarios.yaml']}"
    elif keep and current is not None:
        scenarios_from = f"kept from {current.name} (the zip holds no scenarios.yaml)"
    else:
        scenarios_from = "none (the zip holds no scenarios.yaml)"
    return UploadReport(
        dataset=ds,
        received=((z.name, len(z.data)),),
        tables_from=tables_from,
        empty=tuple(t for t in TABLE_NAMES if t not in tables_from),
        previous=current.name if current is not None else "",
        scenarios_from=scenarios_from,
        ignored=tuple(ignored),
    )


def _load_tables(files: Sequence[UploadedFile], d: Path, current: Dataset | None) -> UploadReport:
    """Replace the tables named by single table files; every other table is kept."""
    if current is None:
        raise UploadError("No dataset is loaded yet: upload a zip holding every table first.")
    new: dict[str, pd.DataFrame] = {}
    files_by_table: dict[str, str] = {}
    for f in files:
        table = _table_of(f.name)
        if table is None:
            raise UploadError(
                f"{f.name}: name a file <table>.csv or <table>.parquet, with table one "
                f"of: {', '.join(TABLE_NAMES)}; or upload a .zip of the whole dataset. "
                + REFUSED_WHOLE
            )
        if table in new:
            raise UploadError(
                f"Two uploaded files are for table {table!r} ({files_by_table[table]} and "
                f"{f.name}). {REFUSED_WHOLE}"
            )
        path = d / f"{table}{PurePosixPath(f.name).suffix.lower()}"
        path.write_bytes(f.data)
        if path.suffix == ".parquet":
            _check_parquet(path, f.name)
        new[table] = read_table_file(path)
        files_by_table[table] = PurePosixPath(f.name).name
    ds = Dataset.from_tables(
        {**current.tables, **new},
        name=current.name,
        scenarios=current.scenarios,
        meta=current.meta,
        files=files_by_table,
    )
    return UploadReport(
        dataset=ds,
        received=tuple((f.name, len(f.data)) for f in files),
        tables_from={t: files_by_table[t] for t in TABLE_NAMES if t in new},
        kept=tuple(t for t in TABLE_NAMES if t not in new),
        previous=current.name,
        scenarios_from=f"kept from {current.name}",
    )


def upload_dataset(files: Sequence[UploadedFile], current: Dataset | None) -> UploadReport:
    """Build a validated Dataset from uploaded files, and say what came from where.

    All or nothing: any file over :data:`MAX_UPLOAD_MB`, any unusable file or any
    validation error refuses the whole upload; ``current`` is never changed.

    Parameters
    ----------
    files : sequence of UploadedFile
        Either one zip of a whole dataset (every required table as
        ``<table>.csv``/``.parquet``, optional tables, optional ``scenarios.yaml``),
        or single table files named ``<table>.csv`` or ``<table>.parquet`` that
        replace those tables of ``current``.
    current : Dataset or None
        The dataset the single tables patch (and whose scenarios a zip without a
        ``scenarios.yaml`` keeps).

    Returns
    -------
    UploadReport
        The new dataset and, table by table, the file it came from.

    Raises
    ------
    UploadError
        For a file over :data:`MAX_UPLOAD_MB` (naming each such file and its size),
        a broken zip, a zip missing a required table or holding a misspelt file, an
        unknown file name, single tables without a current dataset.
    DataValidationError
        When the tables do not validate (wrong columns, text in number columns ...);
        ``findings`` lists every problem with file, row, column and value.
    """
    if not files:
        raise UploadError("No file uploaded.")
    check_upload_sizes((f.name, len(f.data)) for f in files)
    zips = [f for f in files if f.name.lower().endswith(".zip")]
    if zips and len(files) > 1:
        raise UploadError(
            "Upload either one zip of a whole dataset, or single table files "
            f"(received {', '.join(f.name for f in files)}). {REFUSED_WHOLE}"
        )
    with tempfile.TemporaryDirectory(prefix="capacity_upload_") as tmp:
        if zips:
            return _load_zip(zips[0], Path(tmp), current)
        return _load_tables(files, Path(tmp), current)


def dataset_from_upload(files: Sequence[UploadedFile], current: Dataset | None) -> Dataset:
    """Return the dataset of :func:`upload_dataset` (same arguments, same errors)."""
    return upload_dataset(files, current).dataset


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

    Numbers get their unit in the label, bounds as min/max (``step=1`` for integers);
    choice columns are select boxes; periods are checked against ``YYYYQn``. Every
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
            out[c.name] = st.column_config.NumberColumn(
                **kw,
                min_value=json_safe(c.min),
                max_value=json_safe(c.max),
                step=1 if c.dtype == "int" else None,
            )
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


__all__ = [
    "MAX_TRANSPORT_MB",
    "MAX_UPLOAD_MB",
    "REFUSED_WHOLE",
    "DataValidationError",
    "UploadError",
    "UploadReport",
    "UploadedFile",
    "check_upload_sizes",
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
    "json_safe",
    "upload_dataset",
    "validate_drafts",
]
