"""Reading an upload into a dataset: size limits, zip unpacking, table files, the report.

All or nothing: a zip replaces the whole dataset, single table files replace their
tables, and any unusable file refuses the whole upload. Parsing and validation are
delegated to :mod:`capacity.dataset`; this module only moves bytes from the browser
to it. Plain functions of their arguments (no session state).
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
from typing import IO

import pandas as pd

from capacity.dataset import Dataset, load_dataset, read_table_file
from capacity.limits import MAX_UPLOAD_BYTES, MAX_UPLOAD_MB
from capacity.schema import SPECS, TABLE_NAMES
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
    notes: list[Finding] = []  # e.g. a file read as Windows-1252
    unread: list[Finding] = []  # files that could not be read as tables at all
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
        files_by_table[table] = PurePosixPath(f.name).name
        try:
            new[table] = read_table_file(path, notes)
        except DataValidationError as e:  # the other files are read and checked too
            unread.extend(e.findings)
    if unread:
        raise DataValidationError([*unread, *_findings_of_read(current, new, files_by_table)])
    ds = Dataset.from_tables(
        {**current.tables, **new},
        name=current.name,
        scenarios=current.scenarios,
        meta=current.meta,
        files=files_by_table,
    )
    if notes:
        named = [
            dataclasses.replace(n, file=files_by_table.get(_table_of(n.file) or "", n.file))
            for n in notes
        ]
        ds = dataclasses.replace(ds, warnings=(*named, *ds.warnings))
    return UploadReport(
        dataset=ds,
        received=tuple((f.name, len(f.data)) for f in files),
        tables_from={t: files_by_table[t] for t in TABLE_NAMES if t in new},
        kept=tuple(t for t in TABLE_NAMES if t not in new),
        previous=current.name,
        scenarios_from=f"kept from {current.name}",
    )


def _findings_of_read(
    current: Dataset, new: Mapping[str, pd.DataFrame], files: Mapping[str, str]
) -> list[Finding]:
    """Return the findings of the uploaded files that were read when another was not.

    One upload named only the unreadable file's error (a ``;``-separated customers.csv)
    and the other file's (``abc`` in demand.csv) on the next try. They are checked with
    the tables as loaded in place of the unreadable ones; a reference to an unreadable
    table is left out (it would be checked against that table's old rows).
    """
    try:
        Dataset.from_tables({**current.tables, **new}, name=current.name, files=dict(files))
    except DataValidationError as e:
        read = {files[t] for t in new}
        unread = {t for t in files if t not in new}
        return [
            f for f in e.findings if f.file in read and (_refers_to(f) or ("", ""))[0] not in unread
        ]
    return []


def _refers_to(f: Finding) -> tuple[str, str] | None:
    """Return the (table, column) that a finding's column references, if any."""
    spec = SPECS.get(_table_of(f.file) or "")
    col = next((c for c in spec.columns if c.name == f.column), None) if spec else None
    return None if col is None else col.references


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
