"""Parquet result tables: their Arrow schemas, exact-schema conversion, atomic files, reading back.

Every result table of :data:`RESULT_SCHEMAS` is written for every scenario, even when
empty, always with the same Arrow types, so the files of all scenarios read together
(``pyarrow.dataset``, DuckDB ``read_parquet('<run>/scenario=*/<table>.parquet',
hive_partitioning=true)``, pandas). The partition column ``scenario`` lives only in the
directory name; it is never stored as a data column.
"""

from __future__ import annotations

import os
import warnings
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from optimizer.components.component import TableColumn
from optimizer.components.registry import MappingView
from optimizer.lp.frames import column_array
from optimizer.output.atomic import ReportError, atomic_write
from optimizer.output.flush import flush_written
from optimizer.output.run_folder import scenario_name_from_dir
from optimizer.output.table_schema import RESULT_TABLES

__all__ = [
    "RESULT_SCHEMAS",
    "ReportTables",
    "check_one_plan",
    "check_table_file",
    "open_table_dataset",
    "read_metadata",
    "read_report",
    "to_arrow",
    "write_arrow_atomic",
    "write_arrow_staged",
    "write_table_atomic",
]


def _schema(table: str, columns: Sequence[TableColumn]) -> pa.Schema:
    fields = [
        pa.field(
            c.name,
            c.type,
            nullable=True,
            metadata={"unit": c.unit, "description": c.description},
        )
        for c in columns
    ]
    return pa.schema(fields, metadata={"table": table})


RESULT_SCHEMAS: MappingView[pa.Schema] = MappingView(
    lambda r: r.memo(
        "result_schemas", lambda _: {t: _schema(t, cols) for t, cols in RESULT_TABLES.items()}
    )
)
"""Arrow schema of every table written per scenario (field metadata: unit, description)."""


def to_arrow(
    df: pd.DataFrame, schema: pa.Schema, metadata: Mapping[str, str] | None = None
) -> pa.Table:
    """Convert a frame to an Arrow table of exactly ``schema``.

    Parameters
    ----------
    df : pandas.DataFrame
        Must hold every column of ``schema`` (any order, any index; the index is
        dropped). Numbers are cast to the schema type (int -> float64 is exact;
        an unsafe cast raises).
    schema : pyarrow.Schema
        Target schema; its field metadata (units) is kept.
    metadata : mapping of str to str, optional
        Key-value metadata of the table, merged over the schema's own.

    Returns
    -------
    pyarrow.Table
        Columns in schema order; no pandas metadata (so every reader sees the Arrow
        types, not a pandas dtype guess).

    Raises
    ------
    ValueError
        When a schema column is missing, an extra column is present, or a value
        cannot be cast.
    """
    table_name = (schema.metadata or {}).get(b"table", b"?").decode()
    names = list(schema.names)
    missing = [n for n in names if n not in df.columns]
    extra = [str(c) for c in df.columns if c not in names]
    if missing or extra:
        raise ValueError(
            f"result table {table_name!r} does not match its schema: "
            f"missing columns {missing}, unexpected columns {extra}"
        )
    arrays = []
    for field in schema:
        values = column_array(df, field.name) if df.columns.is_unique else None
        if isinstance(values, np.ndarray) and values.dtype == np.float64 and field.type == _F64:
            # the tables' number columns: NaN -> null, no cast needed
            arrays.append(pa.array(values, from_pandas=True))
            continue
        col = df[field.name]
        try:
            if pa.types.is_string(field.type):
                arrays.append(_text_array(col, field.type))
            elif pa.types.is_boolean(field.type):
                arrays.append(_flag_array(col, field.type))
            elif pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(
                col.dtype
            ):
                # NaN -> null (from_pandas), then an exact cast (int -> float64 ...)
                arrays.append(pa.array(col.to_numpy(), from_pandas=True).cast(field.type))
            else:
                arr = pa.array(col.to_numpy(dtype=object, na_value=None), from_pandas=True)
                arrays.append(arr.cast(field.type, safe=True))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            raise ValueError(
                f"result table {table_name!r}, column {field.name!r}: cannot write as "
                f"{field.type}: {exc}"
            ) from exc
    meta = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    meta.update({str(k): str(v) for k, v in (metadata or {}).items()})
    return pa.Table.from_arrays(arrays, schema=schema.with_metadata(meta))


#: Arrow's float64, the type of every number column of the result tables.
_F64 = pa.float64()


#: Arrow columns of the last text arrays written, by the identity of the pandas array.
_ENCODED: OrderedDict[int, tuple[Any, pa.DataType, pa.ChunkedArray]] = OrderedDict()

#: Text arrays :data:`_ENCODED` keeps (a few cases' key columns of every table).
_ENCODED_SIZE = 512


def _encoded(values: Any, type_: pa.DataType) -> pa.ChunkedArray:
    """Return a pandas Arrow text array as Arrow ``type_``, reused for the very same array.

    The result tables of a sweep's cases share their key columns while the keys are
    the same cells (``optimizer.components.key_match.reused_text``); such a column is
    encoded once. Pandas' arrays are immutable here and the cache holds each array it
    keys, so an identity cannot be reused by another array while its entry lives.
    """
    hit = _ENCODED.get(id(values))
    if hit is not None and hit[0] is values and hit[1] == type_:
        _ENCODED.move_to_end(id(values))
        return hit[2]
    made = pa.chunked_array(pa.array(values)).cast(type_)
    _ENCODED[id(values)] = (values, type_, made)
    if len(_ENCODED) > _ENCODED_SIZE:
        _ENCODED.popitem(last=False)
    return made


def _text_array(col: pd.Series, type_: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """Text column as Arrow ``type_``: missing cells null, every other cell ``str(v)``.

    pandas' text dtype held by Arrow is handed over without a copy; held as Python
    strings (:mod:`capacity.text_storage`), or an object column of ``str`` cells
    (missing: None or NaN), it is converted by Arrow in one call; any other column
    cell by cell.
    """
    if isinstance(col.dtype, pd.StringDtype) and col.dtype.storage == "pyarrow":
        return _encoded(col.array, type_)
    if col.dtype == object or isinstance(col.dtype, pd.StringDtype):  # Python-held text
        try:
            return pa.array(col.to_numpy(dtype=object), type=type_, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass  # a cell that is not text: str() of it, below
    return pa.array([None if _isna(v) else str(v) for v in col.tolist()], type=type_)


def _flag_array(col: pd.Series, type_: pa.DataType) -> pa.Array:
    """Flag column as Arrow ``type_``: missing cells null, every other cell ``bool(v)``."""
    if col.dtype == bool:  # no missing value: the NumPy flags as they are
        return pa.array(col.to_numpy(), type=type_)
    return pa.array([None if _isna(v) else bool(v) for v in col.tolist()], type=type_)


def _isna(v: Any) -> bool:
    if v is None:
        return True
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def write_table_atomic(
    df: pd.DataFrame,
    path: str | os.PathLike[str],
    schema: pa.Schema,
    metadata: Mapping[str, str] | None = None,
) -> Path:
    """Write one frame to Parquet atomically (temporary name, fsync, ``os.replace``).

    Parameters
    ----------
    df : pandas.DataFrame
        The table; see :func:`to_arrow` for the column rules.
    path : path-like
        Final file path; its directory must exist.
    schema : pyarrow.Schema
        Explicit schema, e.g. ``RESULT_SCHEMAS["build_out"]``.
    metadata : mapping of str to str, optional
        Key-value metadata stored in the file footer.

    Returns
    -------
    pathlib.Path
        ``path``. Writing the same content twice gives the same file (idempotent).

    Raises
    ------
    ValueError
        When ``df`` does not fit ``schema`` (nothing is written).
    ReportError
        When the file cannot be written; ``path`` is unchanged and no temporary file
        is left.
    """
    return write_arrow_atomic(to_arrow(df, schema, metadata), Path(path))


def write_arrow_atomic(table: pa.Table, path: Path) -> Path:
    """Write an Arrow table to one Parquet file (zstd) atomically.

    Parameters
    ----------
    table : pyarrow.Table
        The table as it is to be stored (schema and metadata included).
    path : pathlib.Path
        Final file path; its directory must exist.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    ReportError
        When the file cannot be written; ``path`` is unchanged and no temporary file
        is left.
    """

    def write(tmp: Path) -> None:
        _write_parquet(table, tmp)

    try:
        return atomic_write(path, write)
    except OSError as exc:
        raise _cannot_write(path, exc) from exc


#: Compression of every Parquet file of a report.
_COMPRESSION = "zstd"


def _write_parquet(table: pa.Table, path: Path) -> None:
    """Write one report file: zstd, dictionary encoding for the text columns only.

    Numbers rarely repeat in a result table, so a dictionary of their values costs time
    and bytes for nothing; the text keys (site, chip, period ...) repeat on every row.
    Measured (``benchmarks/RESULTS.md``, twelfth pass): a batch case's 27 files 25.6 ->
    22.5 ms, the generated medium plan's report 2.00 -> 1.67 MB. Readers see the same
    Arrow schema either way.

    Parameters
    ----------
    table : pyarrow.Table
        The table as it is to be stored.
    path : pathlib.Path
        The file to write (replaced when it exists).

    Raises
    ------
    OSError
        When the file cannot be written.
    """
    text = [f.name for f in table.schema if pa.types.is_string(f.type)]
    pq.write_table(table, path, compression=_COMPRESSION, use_dictionary=text)


def _cannot_write(path: Path, exc: OSError) -> ReportError:
    """Return the error of a report file that cannot be written (names the file)."""
    return ReportError(f"cannot write report file {path}: {exc.strerror or exc}")


def write_arrow_staged(tables: Mapping[str, pa.Table], stage: Path) -> dict[str, Path]:
    """Write Arrow tables as ``<name>.parquet`` (zstd) into a staging folder, durably.

    The staging folder is hidden and moves in whole once complete
    (:func:`optimizer.output.report.write_scenario_folder`), so no reader ever sees its
    files under their real names while they are written: each file is written under
    its final name, then the files and the folder are flushed to disk together
    (:func:`optimizer.output.flush.flush_written`: one ``syncfs`` on a local Linux file
    system, an ``fsync`` of each file elsewhere). :func:`write_arrow_atomic` instead
    renames each file into a visible folder, which costs a rename and a folder flush
    per file (one file per result table).

    Parameters
    ----------
    tables : mapping of str to pyarrow.Table
        Table name -> table as it is to be stored.
    stage : pathlib.Path
        The staging folder; it must exist. On an error the caller removes it.

    Returns
    -------
    dict of str to pathlib.Path
        Table name -> its file in ``stage``.

    Raises
    ------
    ReportError
        When a file cannot be written (names the file) or the files cannot be flushed
        to disk (names the folder).
    """
    out = {}
    for name, table in tables.items():
        path = stage / f"{name}.parquet"
        try:
            _write_parquet(table, path)
        except OSError as exc:
            raise _cannot_write(path, exc) from exc
        out[name] = path
    try:
        flush_written(stage, out.values())
    except OSError as exc:
        raise ReportError(
            f"cannot flush the report files in {stage} to disk: {exc.strerror or exc}"
        ) from exc
    return out


def read_metadata(path: str | os.PathLike[str]) -> dict[str, str]:
    """Return the key-value metadata of one Parquet file (decoded to str)."""
    meta = pq.read_schema(path).metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items()}


def _partitioning() -> pads.Partitioning:
    return pads.partitioning(pa.schema([("scenario", pa.string())]), flavor="hive")


def open_table_dataset(
    run_dir: str | os.PathLike[str], table: str, *, checked: bool = False
) -> pads.Dataset:
    """Open one table across all scenarios of a run as a ``pyarrow.dataset``.

    The ``scenario`` partition column is typed ``string``; the files' schema is
    :data:`RESULT_SCHEMAS` ``[table]``. ``checked``: the caller has checked every file
    (:func:`check_table_file`; :func:`read_report` does, for every table at once).

    Raises
    ------
    ReportError
        When no scenario of the run holds the table, or one of its files is no Parquet
        or holds another table (named by the file's ``table`` metadata).
    """
    run_dir = Path(run_dir)
    files = sorted(str(p) for p in run_dir.glob(f"scenario=*/{table}.parquet"))
    if not files:
        raise ReportError(f"no {table}.parquet under {run_dir}/scenario=*/")
    for f in [] if checked else files:  # another table's file read as rows of nulls
        check_table_file(Path(f))
    schema = RESULT_SCHEMAS.get(table)
    if schema is not None:
        schema = schema.append(pa.field("scenario", pa.string()))
    return pads.dataset(
        files,
        format="parquet",
        partitioning=_partitioning(),
        partition_base_dir=str(run_dir),
        schema=schema,
    )


class ReportTables(dict[str, pd.DataFrame]):
    """Tables read from a report folder, with the plan's tables the folder lacks.

    A ``dict`` of table name -> frame. ``absent`` maps each table of
    :data:`RESULT_SCHEMAS` that a scenario folder lacks (copied in part, a file
    deleted) to that folder: :meth:`require` refuses it, so a figure read from an
    absent table is an error naming the file, not an empty table that sums to zero.
    """

    def __init__(
        self, tables: Mapping[str, pd.DataFrame], absent: Mapping[str, Path] | None = None
    ) -> None:
        super().__init__(tables)
        self.absent = dict(absent or {})

    def require(self, name: str) -> pd.DataFrame | None:
        """Return table ``name`` (None when no plan has it).

        Raises
        ------
        ReportError
            When ``name`` is a plan's table a scenario folder lacks, naming its file.
        """
        if name in self.absent:
            raise ReportError(
                f"{self.absent[name] / (name + '.parquet')} is missing, and this figure is "
                "read from it: copy the whole report folder or solve again"
            )
        return self.get(name)


def read_report(path: str | os.PathLike[str]) -> ReportTables:
    """Read a report back into pandas frames.

    Parameters
    ----------
    path : path-like
        Either a scenario directory (``.../scenario=<name>``): returns its tables as
        written; or a run directory: returns each table over all scenarios with an
        extra last column ``scenario`` (str) taken from the partition.

    Returns
    -------
    ReportTables
        Table name -> frame (a ``dict``); text columns ``str``, numbers
        ``float64``/``int64``, flags ``bool`` (nullable columns with nulls keep pandas'
        default mapping). Its ``absent`` names the plan's tables no file held.

    Raises
    ------
    ReportError
        When ``path`` holds no report, or a table file that is no Parquet or holds
        another table (its schema's ``table`` metadata), naming the file.

    Warns
    -----
    UserWarning
        For a scenario folder that holds some of a plan's tables
        (:data:`RESULT_SCHEMAS`) but not all: a partly copied or synced report would
        otherwise read as whole; a figure read from a missing table
        (:meth:`ReportTables.require`) raises ``ReportError``.
    """
    path = Path(path)
    if not path.is_dir():
        raise ReportError(f"no report directory at {path}")
    own = sorted(path.glob("*.parquet"))
    if own:
        tables = {p: _read_checked(p) for p in own if not p.name.startswith(".")}
        check_one_plan(path, {p: t.schema for p, t in tables.items()})
        read = {p.stem: t.to_pandas() for p, t in tables.items()}
        return ReportTables(read, dict.fromkeys(_warn_missing_tables(path), path))
    names = sorted({p.stem for p in path.glob("scenario=*/*.parquet")})
    if not names:
        raise ReportError(f"no Parquet report under {path}")
    absent: dict[str, Path] = {}
    for sdir in sorted(path.glob("scenario=*")):
        files = [p for p in sorted(sdir.glob("*.parquet")) if not p.name.startswith(".")]
        check_one_plan(sdir, {p: check_table_file(p) for p in files})
        absent.update((t, sdir) for t in _warn_missing_tables(sdir) if t not in absent)
    out: dict[str, pd.DataFrame] = {}
    for name in names:
        table = open_table_dataset(path, name, checked=True).to_table()  # checked above
        out[name] = table.to_pandas()
    # a table some scenario lacks would sum over the others only
    return ReportTables(out, absent)


def _warn_missing_tables(sdir: Path) -> list[str]:
    """Warn when ``sdir`` lacks some of a plan's tables; return those lost.

    A table the folder's manifest lists as written, or any lacked table when no manifest
    lists the folder's files, is lost (copied in part, a file deleted): a figure read from
    it is an error. A table the manifest does not list was not written: the report
    predates it (an older version), and it reads as empty, with the warning.
    """
    present = {p.stem for p in sdir.glob("*.parquet") if not p.name.startswith(".")}
    missing = [t for t in RESULT_SCHEMAS if t not in present]
    if not (present & set(RESULT_SCHEMAS)) or not missing:
        return []
    listed = _listed_tables(sdir)
    lost = [t for t in missing if listed is None or t in listed]
    older = [t for t in missing if t not in lost]
    files = ", ".join(f"{t}.parquet" for t in lost)
    if lost:
        warnings.warn(
            f"{sdir}: this plan's folder lacks {len(lost)} of its {len(RESULT_SCHEMAS)} tables "
            f"({files}); a figure read from them is an error, not empty: copy the whole "
            "folder or solve again",
            UserWarning,
            stacklevel=3,
        )
    if older:
        warnings.warn(
            f"{sdir}: this report predates {len(older)} table(s) "
            f"({', '.join(older)}): they read as empty; solve again to have them",
            UserWarning,
            stacklevel=3,
        )
    return lost


def _listed_tables(sdir: Path) -> set[str] | None:
    """Return the tables a manifest beside ``sdir`` lists as written for it (None: none does)."""
    import json

    if not sdir.name.startswith("scenario="):
        return None
    name = scenario_name_from_dir(sdir)
    for path in sorted(sdir.parent.glob("*manifest*.json")):  # a run's or a batch's
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))["scenarios"][name]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        files = entry.get("files") if isinstance(entry, dict) else None
        if isinstance(files, list):
            return {Path(str(f)).stem for f in files}
    return None


def _read_checked(p: Path) -> pa.Table:
    """Read one table file of a scenario folder, checked to be the table it is named.

    A file replaced by another table read on and failed later as a pandas KeyError
    (``['term', 'cash_kind'] not in index``); a garbage file as pyarrow's ArrowInvalid.
    """
    try:
        table = pq.read_table(p)
    except (OSError, ValueError) as e:  # pyarrow.ArrowInvalid is a ValueError
        raise ReportError(f"{p}: not a readable Parquet table ({e})") from None
    _check_named(p, table.schema)
    return table


def check_one_plan(sdir: Path, schemas: Mapping[Path, pa.Schema]) -> None:
    """ReportError unless a scenario folder's files are of its scenario, one run and one dataset.

    A table copied from another folder read as this plan's (mc_000's unmet as mc_001's);
    two batches into folders of one name share a run_id. Older reports are not checked.
    """
    want = scenario_name_from_dir(sdir) if sdir.name.startswith("scenario=") else None
    runs: dict[str, Path] = {}
    data: dict[str, Path] = {}
    for p, schema in schemas.items():
        meta = schema.metadata or {}
        scenario = meta.get(b"scenario", b"").decode()
        if want is not None and scenario and scenario != want:
            raise ReportError(
                f"{p}: holds the {p.stem} table of scenario {scenario!r}, not of {want!r} (a "
                "file copied from another folder); write the report again"
            )
        if run := meta.get(b"run_id", b"").decode():
            runs.setdefault(run, p)
        if ds := meta.get(b"dataset_hash", b"").decode():
            data.setdefault(ds, p)
    if len(runs) > 1:
        which = ", ".join(f"{p.name} of run {run}" for run, p in runs.items())
        raise ReportError(
            f"{sdir}: its tables come from {len(runs)} runs ({which}): a file copied from "
            "another run; write the report again"
        )
    if len(data) > 1:  # two batches into folders of one name share their run_id
        which = ", ".join(f"{p.name} of data {h[:12]}" for h, p in data.items())
        raise ReportError(f"{sdir}: its tables are plans of {len(data)} datasets ({which})")


def check_table_file(p: Path) -> pa.Schema:
    """Check one table file by its footer alone: readable, and the table it is named.

    Returns the file's schema (with its key-value metadata); raises ``ReportError`` naming
    the file when it is no Parquet or its ``table`` metadata names another table.

    A run folder's tables are read through a ``pyarrow.dataset`` with each table's schema,
    which read a file of another table as rows of nulls and a garbage file as ArrowInvalid.
    """
    try:
        schema = pq.read_schema(p)
    except (OSError, ValueError) as e:  # pyarrow.ArrowInvalid is a ValueError
        raise ReportError(f"{p}: not a readable Parquet table ({e})") from None
    _check_named(p, schema)
    return schema


def _check_named(p: Path, schema: pa.Schema) -> None:
    """ReportError when the file's ``table`` metadata names another table than its name."""
    written = (schema.metadata or {}).get(b"table", b"").decode()
    if written and written != p.stem:  # the name each file is written with (its schema's)
        raise ReportError(
            f"{p}: holds the {written} table, not {p.stem} (a file copied over another); "
            "write the report again"
        )
