"""Parquet reports: one explicit schema per result table, atomic writes, a run manifest.

Layout of a report (Hive partitioning on ``scenario``)::

    <out>/<run_id>/manifest.json
    <out>/<run_id>/units.csv                     (only with ``units=True``)
    <out>/<run_id>/scenario=<name>/<table>.parquet

Every result table of :data:`RESULT_SCHEMAS` is written for every scenario, even when
empty, always with the same Arrow types, so the files of all scenarios read together
(``pyarrow.dataset``, DuckDB ``read_parquet('<run>/*/<table>.parquet',
hive_partitioning=true)``, pandas). The partition column ``scenario`` lives only in the
directory name; it is never stored as a data column.

Units
-----
Units are always carried in three places, whatever the ``units`` flag:

* the column name's suffix (``_mw``, ``_usd``, ``_h100e`` ...);
* Parquet *field* metadata: ``unit`` and ``description`` of each column;
* the file's key-value metadata ``units``: a JSON object ``{column: unit}`` (readable
  from DuckDB with ``parquet_kv_metadata``).

``units=True`` adds a human data dictionary ``units.csv`` (table, column, type, unit,
description) at the run root, and makes ``capacity solve`` print units in its tables.

Atomicity
---------
Each file is written to a dot-prefixed temporary name in its target directory, flushed
to disk, and moved into place with :func:`os.replace`; a crash never leaves a half file
under a real name, and dot-files are ignored by ``pyarrow.dataset`` and by the globs
above. The manifest is rewritten the same way, under an exclusive lock, so concurrent
writers (``capacity batch``) never lose each other's entries. A scenario's manifest
entry is set to ``state: "writing"`` before its tables are written and to
``state: "complete"`` after; :func:`scenario_is_complete` is the test a batch re-run
uses to skip finished scenarios.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
from filelock import FileLock

from optimizer.components.component import TableColumn as ResultColumn
from optimizer.components.tables import REPORT_TABLES

__all__ = [
    "MANIFEST_NAME",
    "REPORT_FORMAT",
    "RESULT_SCHEMAS",
    "RESULT_TABLES",
    "ReportError",
    "claim_run_dir",
    "columns_frame",
    "default_run_id",
    "manifest_path",
    "open_table_dataset",
    "package_version",
    "read_manifest",
    "read_metadata",
    "read_report",
    "reserve_run_dir",
    "scenario_dir",
    "scenario_is_complete",
    "summary_frame",
    "to_arrow",
    "update_manifest",
    "write_csv_atomic",
    "write_json_atomic",
    "write_report",
    "write_scenario_tables",
    "write_table_atomic",
]

MANIFEST_NAME = "manifest.json"
UNITS_CSV_NAME = "units.csv"
REPORT_FORMAT = "capacity-report/1"
PACKAGE_NAME = "capacity-planner"

#: Columns of every table written per scenario (name, Arrow type, unit, meaning), each
#: declared once by the part of the plan that owns it
#: (:data:`optimizer.components.tables.REPORT_TABLES`).
RESULT_TABLES: dict[str, tuple[ResultColumn, ...]] = {t.name: t.columns for t in REPORT_TABLES}


def _schema(table: str, columns: Sequence[ResultColumn]) -> pa.Schema:
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


RESULT_SCHEMAS: dict[str, pa.Schema] = {t: _schema(t, cols) for t, cols in RESULT_TABLES.items()}
"""Arrow schema of every table written per scenario (field metadata: unit, description)."""

PLAN_TABLES: tuple[str, ...] = tuple(t for t in RESULT_TABLES if t not in ("summary",))
"""Tables taken from the result (``summary`` is computed by the writer)."""


class ReportError(RuntimeError):
    """The report cannot be written or read; the message names the path."""


# ---------------------------------------------------------------------------------
# Small helpers


def package_version() -> str:
    """Return the installed version of ``capacity-planner`` ("0+unknown" if absent)."""
    try:
        return importlib_metadata.version(PACKAGE_NAME)
    except importlib_metadata.PackageNotFoundError:  # pragma: no cover - editable install
        return "0+unknown"


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def default_run_id(dataset_hash: str | None, now: datetime | None = None) -> str:
    """Return a run ID: UTC timestamp plus the first 8 hex digits of the dataset hash.

    Examples
    --------
    >>> default_run_id("abcdef0123456789", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    '20260102T030405Z-abcdef01'
    """
    stamp = (now or _utc_now()).strftime("%Y%m%dT%H%M%SZ")
    short = (dataset_hash or "nohash")[:8]
    return f"{stamp}-{short}"


def claim_run_dir(out_dir: str | os.PathLike[str], run_id: str) -> Path:
    """Claim a new run directory ``<out_dir>/<run_id>`` (``-2``, ``-3`` ... when taken).

    The claim is an exclusive ``os.mkdir`` (no ``exist_ok``): of two runs asking for the
    same ID at the same moment, even in two processes sharing the folder, exactly one
    gets ``<run_id>`` and the other gets a new ID, so no run ever writes into another
    run's directory. Every run directory of the product (``capacity solve``,
    :func:`write_report` without a ``run_id``, the app's download) is claimed here.

    Parameters
    ----------
    out_dir : path-like
        Report root; created (with its parents) when missing.
    run_id : str
        The ID wanted, e.g. :func:`default_run_id`.

    Returns
    -------
    pathlib.Path
        The new, empty directory this call created.

    Raises
    ------
    ReportError
        When ``out_dir`` is unusable, or ``<run_id>`` and 998 suffixed IDs are taken.
    """
    root = Path(out_dir)
    _ensure_dir(root)
    for n in range(1, 1000):
        path = root / (run_id if n == 1 else f"{run_id}-{n}")
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        except OSError as exc:
            raise ReportError(
                f"cannot create report directory {path}: {exc.strerror or exc}"
            ) from exc
        return path
    raise ReportError(f"cannot write report: 999 runs named {run_id}* already exist in {root}")


def reserve_run_dir(
    out_dir: str | os.PathLike[str], dataset_hash: str | None, now: datetime | None = None
) -> Path:
    """Claim a new run directory ``<out_dir>/<default_run_id>[-n]`` (see claim_run_dir).

    Two runs in the same second with the same data share :func:`default_run_id`; the
    exclusive claim gives the second ``<run_id>-2`` (then ``-3`` ...) instead of letting
    it replace the first's files, even across processes sharing the folder.

    Parameters
    ----------
    out_dir : path-like
        Report root; created when missing.
    dataset_hash : str or None
        Hash of the dataset (its first 8 hex digits go into the ID).
    now : datetime, optional
        The UTC time of the ID (default: now).

    Returns
    -------
    pathlib.Path
        The new, empty run directory.

    Raises
    ------
    ReportError
        When ``out_dir`` is unusable, or 1000 run IDs of this second are taken.
    """
    return claim_run_dir(out_dir, default_run_id(dataset_hash, now))


def scenario_dir(run_dir: str | os.PathLike[str], scenario: str) -> Path:
    """Return ``<run_dir>/scenario=<name>``; the name is URI-escaped if it needs to be.

    Hive readers (pyarrow, DuckDB) decode the escape, so the partition value read back
    equals ``scenario``.

    Raises
    ------
    ValueError
        When ``scenario`` is empty.
    """
    if not scenario:
        raise ValueError("scenario name must not be empty")
    return Path(run_dir) / f"scenario={quote(scenario, safe='')}"


def manifest_path(run_dir: str | os.PathLike[str]) -> Path:
    """Return the path of a run's manifest (``<run_dir>/manifest.json``)."""
    return Path(run_dir) / MANIFEST_NAME


def _json_default(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if hasattr(value, "value"):  # Enums
        return value.value
    return str(value)


def _jsonable_float(x: Any) -> float | None:
    if x is None:
        return None
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _status_text(status: Any) -> str:
    return str(getattr(status, "value", status))


# ---------------------------------------------------------------------------------
# Atomic file writes


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _atomic_write(path: Path, write: Callable[[Path], None]) -> Path:
    """Write ``path`` through ``write(tmp)`` on a temporary name, then rename it."""
    path = Path(path)
    tmp = path.parent / f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        write(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)
    return path


def _write_text_atomic(path: Path, text: str) -> Path:
    def write(tmp: Path) -> None:
        tmp.write_text(text, encoding="utf-8")

    return _atomic_write(path, write)


def write_json_atomic(path: str | os.PathLike[str], doc: Mapping[str, Any]) -> Path:
    """Write ``doc`` as indented JSON to ``path`` atomically (temporary name, rename).

    Parameters
    ----------
    path : path-like
        Target file; its folder must exist.
    doc : mapping
        JSON-serialisable document; paths, numpy scalars and Enums are converted.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    OSError
        When the file cannot be written (the temporary file is removed).
    """
    text = json.dumps(doc, indent=2, default=_json_default)
    return _write_text_atomic(Path(path), text + "\n")


def write_csv_atomic(path: str | os.PathLike[str], frame: pd.DataFrame) -> Path:
    """Write ``frame`` as CSV (no index) to ``path`` atomically (temporary name, rename).

    Parameters
    ----------
    path : path-like
        Target file; its folder must exist.
    frame : pandas.DataFrame
        The table; its columns keep their names (and so their unit suffixes).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    OSError
        When the file cannot be written (the temporary file is removed).
    """
    return _atomic_write(Path(path), lambda tmp: frame.to_csv(tmp, index=False))


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


def _text_array(col: pd.Series, type_: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """Text column as Arrow ``type_``: missing cells null, every other cell ``str(v)``.

    pandas' text dtype is held by Arrow already and is handed over without a copy;
    an object column of ``str`` cells (missing: None or NaN) is converted by Arrow
    in one call; any other column cell by cell.
    """
    if isinstance(col.dtype, pd.StringDtype) and col.dtype.storage == "pyarrow":
        return pa.chunked_array(pa.array(col.array)).cast(type_)
    if col.dtype == object:
        try:
            return pa.array(col.to_numpy(), type=type_, from_pandas=True)
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
    path = Path(path)
    table = to_arrow(df, schema, metadata)

    def write(tmp: Path) -> None:
        pq.write_table(table, tmp, compression="zstd")

    try:
        return _atomic_write(path, write)
    except OSError as exc:
        raise ReportError(f"cannot write report file {path}: {exc.strerror or exc}") from exc


# ---------------------------------------------------------------------------------
# Manifest


@contextlib.contextmanager
def _locked(run_dir: Path) -> Iterator[None]:
    """Hold the run's manifest lock (``.manifest.lock``, an OS file lock via filelock)."""
    with FileLock(run_dir / ".manifest.lock"):
        yield


def read_manifest(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Return a run's manifest as a dict (empty dict when there is none yet).

    Raises
    ------
    ReportError
        When the manifest exists but is not valid JSON.
    """
    path = manifest_path(run_dir)
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ReportError(f"cannot read manifest {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ReportError(f"manifest {path} is not a JSON object")
    return data


def update_manifest(
    run_dir: str | os.PathLike[str],
    *,
    run_fields: Mapping[str, Any] | None = None,
    scenario: str | None = None,
    entry: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Merge fields into ``<run_dir>/manifest.json`` atomically and under a lock.

    Parameters
    ----------
    run_dir : path-like
        Run directory (must exist).
    run_fields : mapping, optional
        Top-level fields to set if absent (``run_id``, ``created_utc`` ...) — the first
        writer wins, so a re-run keeps the original creation time. Keys in
        ``run_fields["overwrite"]`` (a list) are always set.
    scenario : str, optional
        Scenario whose entry to replace under ``"scenarios"``.
    entry : mapping, optional
        The scenario's entry (JSON-serialisable; numpy scalars and Enums are converted).

    Returns
    -------
    dict
        The manifest as written.

    Raises
    ------
    ReportError
        When the manifest cannot be read or written.
    """
    run_dir = Path(run_dir)
    try:
        with _locked(run_dir):
            data = read_manifest(run_dir)
            fields = dict(run_fields or {})
            overwrite = set(fields.pop("overwrite", ()))
            for key, value in fields.items():
                if key in overwrite or key not in data:
                    data[key] = value
            data.setdefault("format", REPORT_FORMAT)
            data.setdefault("scenarios", {})
            if scenario is not None:
                data["scenarios"][scenario] = dict(entry or {})
            data["updated_utc"] = _iso(_utc_now())
            write_json_atomic(manifest_path(run_dir), data)
    except OSError as exc:
        raise ReportError(
            f"cannot update manifest {manifest_path(run_dir)}: {exc.strerror or exc}"
        ) from exc
    return data


def scenario_is_complete(run_dir: str | os.PathLike[str], scenario: str) -> bool:
    """Return True when the manifest marks ``scenario`` complete and its files exist.

    This is the test ``capacity batch`` uses to skip finished scenarios on a re-run.
    """
    try:
        entry = read_manifest(run_dir).get("scenarios", {}).get(scenario)
    except ReportError:
        return False
    if not entry or entry.get("state") != "complete":
        return False
    return all((Path(run_dir) / f).is_file() for f in entry.get("files", []))


# ---------------------------------------------------------------------------------
# Writing a scenario


def _frame_or_empty(value: Any, table: str) -> pd.DataFrame:
    """Return a result table as a frame; None or a missing table -> empty frame."""
    schema = RESULT_SCHEMAS[table]
    if value is None:
        return schema.empty_table().to_pandas()
    if isinstance(value, pd.DataFrame):
        if value.empty and len(value.columns) == 0:
            return schema.empty_table().to_pandas()
        if "scenario" in value.columns and "scenario" not in schema.names:
            # the partition column lives in the path only (explain's position index)
            value = value.drop(columns="scenario")
        return value
    if isinstance(value, Sequence) and not isinstance(value, str):
        # e.g. violations given as a list of dicts / dataclasses
        rows = [v if isinstance(v, Mapping) else vars(v) for v in value]
        if not rows:
            return schema.empty_table().to_pandas()
        return pd.DataFrame(rows)
    raise TypeError(f"result table {table!r} is a {type(value).__name__}, not a DataFrame")


def _sum(df: pd.DataFrame | None, column: str) -> float:
    if df is None or column not in df.columns or df.empty:
        return 0.0
    return float(pd.to_numeric(df[column], errors="coerce").fillna(0.0).sum())


def summary_frame(result: Any) -> pd.DataFrame:
    """Return the one-row ``summary`` table of a plan result.

    Parameters
    ----------
    result : PlanResult
        Any object with the PlanResult attributes (see :mod:`optimizer`).

    Returns
    -------
    pandas.DataFrame
        One row with the columns of ``RESULT_SCHEMAS["summary"]``.
    """
    tables = getattr(result, "tables", {}) or {}
    demand = tables.get("demand")
    energy = tables.get("energy")
    dem = _sum(demand, "demand_h100e")
    served = _sum(demand, "served_h100e")
    timings = {str(k): float(v) for k, v in (getattr(result, "timings_s", None) or {}).items()}
    violations = getattr(result, "violations", None)
    n_viol = 0 if violations is None else len(violations)
    duals_from = getattr(result, "duals_from", None)
    row = {
        "status": _status_text(result.status),
        "objective_usd": _jsonable_float(getattr(result, "objective_usd", None)),
        "solver": str(getattr(result, "solver", "") or ""),
        "message": str(getattr(result, "message", "") or ""),
        "dataset_name": str(getattr(result, "dataset_name", "") or ""),
        "dataset_hash": str(getattr(result, "dataset_hash", "") or ""),
        "integer_units": bool(getattr(result, "integer_units", False)),
        "duals_from": None if duals_from is None else str(_status_text(duals_from)),
        "mip_bound_usd": _jsonable_float(getattr(result, "mip_bound_usd", None)),
        "mip_gap": _jsonable_float(getattr(result, "mip_gap", None)),
        "duals_note": str(getattr(result, "duals_note", "") or ""),
        "n_variables": int(getattr(result, "n_variables", 0) or 0),
        "n_constraints": int(getattr(result, "n_constraints", 0) or 0),
        "total_time_s": float(sum(timings.values())),
        "timings_json": json.dumps(timings, sort_keys=True),
        "demand_h100e": dem,
        "served_h100e": served,
        "served_share": served / dem if dem > 0 else float("nan"),
        "facility_mwh": _sum(energy, "facility_mwh"),
        "water_m3": _sum(energy, "water_m3"),
        "n_violations": int(n_viol),
    }
    return pd.DataFrame([row])


def file_metadata(
    result: Any, *, scenario: str, run_id: str | None = None, units: bool = False
) -> dict[str, str]:
    """Return the key-value metadata shared by every file of one scenario.

    Keys: ``scenario``, ``status``, ``objective_usd`` (repr of the float, "" when
    none), ``solver``, ``dataset_hash``, ``dataset_name``, ``package_version``,
    ``run_id``, ``report_format``, ``units_dictionary`` ("true" when ``units.csv``
    was requested), ``integer_units`` ("true"/"false") and ``duals_from`` (``"lp"``
    or ``"lp_with_integers_fixed"``: where the shadow prices come from),
    ``mip_bound_usd`` and ``mip_gap`` (repr of the float, "" for an LP or when the
    solver reports no bound) and ``duals_note`` (why shadow prices are null). The writer
    adds ``table`` and ``units`` (JSON ``{column: unit}``) per file.
    """
    obj = _jsonable_float(getattr(result, "objective_usd", None))
    return {
        "scenario": scenario,
        "status": _status_text(result.status),
        "objective_usd": "" if obj is None else repr(obj),
        "solver": str(getattr(result, "solver", "") or ""),
        "dataset_hash": str(getattr(result, "dataset_hash", "") or ""),
        "dataset_name": str(getattr(result, "dataset_name", "") or ""),
        "package_version": package_version(),
        "run_id": run_id or "",
        "report_format": REPORT_FORMAT,
        "units_dictionary": "true" if units else "false",
        "integer_units": "true" if getattr(result, "integer_units", False) else "false",
        "duals_from": str(_status_text(getattr(result, "duals_from", None) or "lp")),
        "mip_bound_usd": _meta_float(getattr(result, "mip_bound_usd", None)),
        "mip_gap": _meta_float(getattr(result, "mip_gap", None)),
        "duals_note": str(getattr(result, "duals_note", "") or ""),
    }


def _meta_float(x: Any) -> str:
    v = _jsonable_float(x)
    return "" if v is None else repr(v)


def _units_json(table: str) -> str:
    return json.dumps({c.name: c.unit for c in RESULT_TABLES[table]})


def write_scenario_tables(
    result: Any,
    scenario_path: str | os.PathLike[str],
    metadata: Mapping[str, str],
) -> dict[str, Path]:
    """Write every table of :data:`RESULT_SCHEMAS` for one scenario, each atomically.

    Missing result tables (and ``violations`` / ``infeasibility`` when None) are
    written empty with their schema, so every scenario directory holds the same
    files with the same types. ``summary.parquet`` is written last.

    Parameters
    ----------
    result : PlanResult
        The solved plan.
    scenario_path : path-like
        ``<run_dir>/scenario=<name>``; created if needed.
    metadata : mapping of str to str
        Key-value metadata for every file (see :func:`file_metadata`).

    Returns
    -------
    dict of str to pathlib.Path
        Table name -> file written.

    Raises
    ------
    ValueError
        When a result table does not match its schema (checked for all tables before
        any file is written).
    ReportError
        When the directory or a file cannot be written.
    """
    arrow = scenario_tables(result, metadata)
    return _write_arrow_tables(arrow, Path(scenario_path))


def scenario_tables(result: Any, metadata: Mapping[str, str]) -> dict[str, pa.Table]:
    """Return every table of one scenario as Arrow tables of :data:`RESULT_SCHEMAS`.

    Parameters
    ----------
    result : PlanResult
        The solved plan; missing tables, ``violations=None`` and
        ``infeasibility=None`` become empty tables.
    metadata : mapping of str to str
        File metadata; ``table`` and ``units`` (JSON ``{column: unit}``) are added
        per table.

    Returns
    -------
    dict of str to pyarrow.Table
        In :data:`RESULT_TABLES` order, ``summary`` last.

    Raises
    ------
    ValueError
        When a result table does not match its schema.
    """
    tables = dict(getattr(result, "tables", {}) or {})
    frames: dict[str, pd.DataFrame] = {}
    for name in PLAN_TABLES:
        if name == "violations":
            value = getattr(result, "violations", None)
        elif name == "infeasibility":
            value = getattr(result, "infeasibility", None)
        else:
            value = tables.get(name)
        frames[name] = _frame_or_empty(value, name)
    frames["summary"] = summary_frame(result)
    return {
        name: to_arrow(
            df, RESULT_SCHEMAS[name], {**metadata, "table": name, "units": _units_json(name)}
        )
        for name, df in frames.items()
    }


def _write_arrow_tables(arrow: Mapping[str, pa.Table], scenario_path: Path) -> dict[str, Path]:
    _ensure_dir(scenario_path)
    written: dict[str, Path] = {}
    for name, table in arrow.items():
        path = scenario_path / f"{name}.parquet"

        def write(tmp: Path, table: pa.Table = table) -> None:
            pq.write_table(table, tmp, compression="zstd")

        try:
            written[name] = _atomic_write(path, write)
        except OSError as exc:
            raise ReportError(f"cannot write report file {path}: {exc.strerror or exc}") from exc
    return written


def _ensure_dir(path: Path) -> None:
    """Create ``path`` (and parents) or raise a ReportError naming the culprit."""
    for parent in [*reversed(path.parents), path]:
        if parent.exists() and not parent.is_dir():
            raise ReportError(f"cannot write report: {parent} exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportError(f"cannot create report directory {path}: {exc.strerror or exc}") from exc
    if not os.access(path, os.W_OK | os.X_OK):
        raise ReportError(f"cannot write report: directory {path} is not writable")


def columns_frame() -> pd.DataFrame:
    """Return the data dictionary of the result tables.

    Returns
    -------
    pandas.DataFrame
        Columns ``table, column, type, unit, description``; one row per column of
        every table of :data:`RESULT_TABLES`.
    """
    rows = [
        {
            "table": table,
            "column": c.name,
            "type": str(c.type),
            "unit": c.unit,
            "description": c.description,
        }
        for table, cols in RESULT_TABLES.items()
        for c in cols
    ]
    return pd.DataFrame(rows)


def write_report(
    result: Any,
    out_dir: str | os.PathLike[str],
    *,
    scenario: str,
    run_id: str | None = None,
    units: bool = False,
) -> Path:
    """Write a plan result as Parquet files plus the run manifest.

    Writes ``<out_dir>/<run_id>/scenario=<scenario>/<table>.parquet`` for every table
    of :data:`RESULT_SCHEMAS` and merges the scenario's entry into
    ``<out_dir>/<run_id>/manifest.json``. Calling it again for another scenario with
    the same ``run_id`` adds that scenario to the run; calling it again for the same
    scenario replaces its files (idempotent).

    Parameters
    ----------
    result : PlanResult
        The solved plan (any status; an infeasible plan writes its explanation in
        ``infeasibility.parquet``).
    out_dir : path-like
        Report root (created if missing).
    scenario : str
        Scenario name, the Hive partition value.
    run_id : str, optional
        A run this caller owns (claimed by :func:`claim_run_dir` or returned by an
        earlier call; created when missing, never claimed). Default: a new run
        claimed by :func:`reserve_run_dir` (``-2`` ... when that ID is taken).
    units : bool
        Also write the data dictionary ``<run>/units.csv`` (table, column, type, unit,
        description). Units are always in the Parquet field metadata.

    Returns
    -------
    pathlib.Path
        The run directory ``<out_dir>/<run_id>``.

    Raises
    ------
    ReportError
        When the output directory is unusable (a file in the way, not writable); the
        message names the path and no file of the scenario is left half-written.
    ValueError
        When a result table does not match its schema (nothing is written).
    """
    dataset_hash = str(getattr(result, "dataset_hash", "") or "")
    if not scenario:
        raise ValueError("scenario name must not be empty")
    reserved = run_id is None
    run_id = run_id or reserve_run_dir(out_dir, dataset_hash).name
    run_dir = Path(out_dir) / run_id
    sdir = scenario_dir(run_dir, scenario)
    meta = file_metadata(result, scenario=scenario, run_id=run_id, units=units)
    try:
        arrow = scenario_tables(result, meta)  # validates every table before writing
    except ValueError:
        if reserved:
            run_dir.rmdir()  # the empty directory just reserved
        raise
    _ensure_dir(run_dir)
    run_fields = {
        "run_id": run_id,
        "created_utc": _iso(_utc_now()),
        "package_version": package_version(),
        "dataset_hash": dataset_hash,
        "dataset_name": str(getattr(result, "dataset_name", "") or ""),
    }
    update_manifest(
        run_dir,
        run_fields=run_fields,
        scenario=scenario,
        entry={"state": "writing", "started_utc": _iso(_utc_now())},
    )
    written = _write_arrow_tables(arrow, sdir)
    if units:
        _write_text_atomic(run_dir / UNITS_CSV_NAME, columns_frame().to_csv(index=False))
    update_manifest(run_dir, scenario=scenario, entry=scenario_entry(result, run_dir, written))
    return run_dir


def scenario_entry(
    result: Any, run_dir: str | os.PathLike[str], files: Mapping[str, Path]
) -> dict[str, Any]:
    """Return the manifest entry of a written scenario (``state: "complete"``).

    Fields: state, written_utc, status, objective_usd, solver, message, dataset_hash,
    integer_units, n_variables, n_constraints, timings_s, files (paths relative to
    the run directory, POSIX style).
    """
    run_dir = Path(run_dir)
    return {
        "state": "complete",
        "written_utc": _iso(_utc_now()),
        "status": _status_text(result.status),
        "objective_usd": _jsonable_float(getattr(result, "objective_usd", None)),
        "solver": str(getattr(result, "solver", "") or ""),
        "message": str(getattr(result, "message", "") or ""),
        "dataset_hash": str(getattr(result, "dataset_hash", "") or ""),
        "integer_units": bool(getattr(result, "integer_units", False)),
        "n_variables": int(getattr(result, "n_variables", 0) or 0),
        "n_constraints": int(getattr(result, "n_constraints", 0) or 0),
        "timings_s": {
            str(k): float(v) for k, v in (getattr(result, "timings_s", None) or {}).items()
        },
        "files": sorted(Path(p).relative_to(run_dir).as_posix() for p in files.values()),
    }


# ---------------------------------------------------------------------------------
# Reading


def read_metadata(path: str | os.PathLike[str]) -> dict[str, str]:
    """Return the key-value metadata of one Parquet file (decoded to str)."""
    meta = pq.read_schema(path).metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items()}


def _partitioning() -> pads.Partitioning:
    return pads.partitioning(pa.schema([("scenario", pa.string())]), flavor="hive")


def open_table_dataset(run_dir: str | os.PathLike[str], table: str) -> pads.Dataset:
    """Open one table across all scenarios of a run as a ``pyarrow.dataset``.

    The ``scenario`` partition column is typed ``string``; the files' schema is
    :data:`RESULT_SCHEMAS` ``[table]``.

    Raises
    ------
    ReportError
        When no scenario of the run holds the table.
    """
    run_dir = Path(run_dir)
    files = sorted(str(p) for p in run_dir.glob(f"scenario=*/{table}.parquet"))
    if not files:
        raise ReportError(f"no {table}.parquet under {run_dir}/scenario=*/")
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


def read_report(path: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Read a report back into pandas frames.

    Parameters
    ----------
    path : path-like
        Either a scenario directory (``.../scenario=<name>``): returns its tables as
        written; or a run directory: returns each table over all scenarios with an
        extra last column ``scenario`` (str) taken from the partition.

    Returns
    -------
    dict of str to pandas.DataFrame
        Table name -> frame; text columns ``str``, numbers ``float64``/``int64``,
        flags ``bool`` (nullable columns with nulls keep pandas' default mapping).

    Raises
    ------
    ReportError
        When ``path`` holds no report.
    """
    path = Path(path)
    if not path.is_dir():
        raise ReportError(f"no report directory at {path}")
    own = sorted(path.glob("*.parquet"))
    if own:
        return {p.stem: pq.read_table(p).to_pandas() for p in own if not p.name.startswith(".")}
    names = sorted({p.stem for p in path.glob("scenario=*/*.parquet")})
    if not names:
        raise ReportError(f"no Parquet report under {path}")
    out: dict[str, pd.DataFrame] = {}
    for name in names:
        table = open_table_dataset(path, name).to_table()
        out[name] = table.to_pandas()
    return out


def scenario_name_from_dir(path: str | os.PathLike[str]) -> str:
    """Return the scenario of a ``scenario=<name>`` directory (URI escape decoded)."""
    name = Path(path).name
    if not name.startswith("scenario="):
        raise ValueError(f"{path} is not a scenario=<name> directory")
    return unquote(name.split("=", 1)[1])
