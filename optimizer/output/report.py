"""Parquet report writer: a plan result as one file per result table, plus the run manifest.

Layout of a report (Hive partitioning on ``scenario``; see
:mod:`optimizer.output.run_folder`)::

    <out>/<run_id>/manifest.json
    <out>/<run_id>/units.csv                     (only with ``units=True``)
    <out>/<run_id>/scenario=<name>/<table>.parquet
    <out>/<run_id>/scenario=<name>/inputs.yaml   (when the writer is given the inputs)

Every table of :data:`optimizer.output.parquet_tables.RESULT_SCHEMAS` is written for
every scenario, even when empty, with the same Arrow types (see
:mod:`optimizer.output.parquet_tables`); units travel as described in
:mod:`optimizer.output.units`. Each file is written atomically
(:mod:`optimizer.output.atomic`); a scenario's manifest entry says ``writing`` before its
tables are written and ``complete`` after (:mod:`optimizer.output.manifest`).
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from capacity.recorded_inputs import INPUTS_FILE
from optimizer.components.registry import SequenceView
from optimizer.output.atomic import (
    ReportError,
    ensure_dir,
    fsync_dir,
    remove_tree,
    write_text_atomic,
)
from optimizer.output.inputs_record import SolvedInputs, solve_flags, write_inputs
from optimizer.output.manifest import (
    REPORT_FORMAT,
    begin_scenario,
    drop_scenario_entry,
    package_version,
    read_manifest,
    scenario_is_complete,
    update_manifest,
)
from optimizer.output.parquet_tables import (
    RESULT_SCHEMAS,
    to_arrow,
    write_arrow_atomic,
    write_arrow_staged,
)
from optimizer.output.run_folder import (
    aside_dir,
    reserve_run_dir,
    scenario_dir,
    utc_stamp,
)
from optimizer.output.table_schema import RESULT_TABLES
from optimizer.output.units import UNITS_CSV_NAME, columns_frame, units_json

__all__ = [
    "PLAN_TABLES",
    "file_metadata",
    "scenario_entry",
    "scenario_tables",
    "summary_frame",
    "write_report",
    "write_scenario_folder",
    "write_scenario_tables",
]

PLAN_TABLES: SequenceView[str] = SequenceView(
    lambda r: r.memo("plan_tables", lambda _: tuple(t for t in RESULT_TABLES if t != "summary"))
)
"""Tables taken from the result (``summary`` is computed by the writer)."""


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


def _rows(df: pd.DataFrame | None) -> int:
    return 0 if df is None else len(df)


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
    # a result with no plan (infeasible, no solution in time) has no demand or energy
    # table: its sums are unknown (null), not 0 H100e of demand
    unknown = getattr(result, "objective_usd", None) is None and not _rows(demand)
    dem = float("nan") if unknown else _sum(demand, "demand_h100e")
    served = float("nan") if unknown else _sum(demand, "served_h100e")
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
        "facility_mwh": float("nan") if unknown else _sum(energy, "facility_mwh"),
        "water_m3": float("nan") if unknown else _sum(energy, "water_m3"),
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
    solver reports no bound), ``duals_note`` (why shadow prices are null),
    ``objective_mode`` (``cost`` or ``margin``) and, in the margin mode, ``margin_usd``
    and ``revenue_usd`` (repr of the float; "" in the cost mode: ``objective_usd`` is
    then cost - revenue). The writer
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
        "objective_mode": str(getattr(result, "objective", "cost") or "cost"),
        "margin_usd": _meta_float(getattr(result, "margin_usd", None)),
        "revenue_usd": _meta_float(getattr(result, "revenue_usd", None)),
    }


def _meta_float(x: Any) -> str:
    v = _jsonable_float(x)
    return "" if v is None else repr(v)


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
            df, RESULT_SCHEMAS[name], {**metadata, "table": name, "units": units_json(name)}
        )
        for name, df in frames.items()
    }


def _write_arrow_tables(arrow: Mapping[str, pa.Table], scenario_path: Path) -> dict[str, Path]:
    ensure_dir(scenario_path)
    return {
        name: write_arrow_atomic(table, scenario_path / f"{name}.parquet")
        for name, table in arrow.items()
    }


def write_report(
    result: Any,
    out_dir: str | os.PathLike[str],
    *,
    scenario: str,
    run_id: str | None = None,
    units: bool = False,
    inputs: SolvedInputs | None = None,
    unfinished: Sequence[str] = (),
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
    inputs : SolvedInputs, optional
        The overrides (and edits) that made the data solved: written as
        ``scenario=<name>/inputs.yaml`` and as the entry's ``inputs`` field
        (:mod:`optimizer.output.inputs_record`).
    unfinished : sequence of str
        The scenarios a new run (``run_id`` None) is to hold, when more than this one:
        the run is marked unfinished with them (:func:`mark_unfinished`) before its
        first file, so a kill at any point after the claim leaves a run read as
        incomplete; the caller removes the mark when the last one is written.

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
    KeyboardInterrupt
        Before the manifest marks the scenario complete, the run is put back as it was;
        after it, the scenario stays and ``committed_run_dir`` names its run.
    """
    dataset_hash = str(getattr(result, "dataset_hash", "") or "")
    if not scenario:
        raise ValueError("scenario name must not be empty")
    reserved = run_id is None
    run_id = run_id or reserve_run_dir(out_dir, dataset_hash).name
    run_dir = Path(out_dir) / run_id
    sdir = scenario_dir(run_dir, scenario)
    meta = file_metadata(result, scenario=scenario, run_id=run_id, units=units)
    previous = read_manifest(run_dir).get("scenarios", {}).get(scenario)
    began = False  # the scenario's "writing" entry may be in the manifest
    try:  # an error or interrupt before its files: the run as it was
        arrow = scenario_tables(result, meta)  # validates every table before writing
        fields = {
            "run_id": run_id,
            "created_utc": utc_stamp(),
            "package_version": package_version(),
            "dataset_hash": dataset_hash,
            "dataset_name": str(getattr(result, "dataset_name", "") or ""),
        }
        began = True
        begin_scenario(run_dir, scenario, fields, unfinished if reserved else ())
    except BaseException:
        if began:
            _undo_scenario_write(run_dir, sdir, _stage_dir(sdir), scenario, previous, reserved)
        elif reserved:
            remove_tree(run_dir, reraise=False)
        raise
    try:
        entry = _write_scenario_staged(result, arrow, run_dir, sdir, units, inputs)
        update_manifest(run_dir, scenario=scenario, entry=entry)
    except BaseException as exc:
        if scenario_is_complete(run_dir, scenario):  # after the commit (the manifest's rename)
            exc.committed_run_dir = run_dir  # type: ignore[attr-defined]
            raise
        _undo_scenario_write(run_dir, sdir, _stage_dir(sdir), scenario, previous, reserved)
        raise
    return run_dir


def _stage_dir(sdir: Path) -> Path:
    """Return the hidden folder a scenario's files are written into before they move in."""
    return aside_dir(sdir, "partial")


def _write_scenario_staged(
    result: Any,
    arrow: Mapping[str, pa.Table],
    run_dir: Path,
    sdir: Path,
    units: bool,
    inputs: SolvedInputs | None,
) -> dict[str, Any]:
    """Write a scenario's files into its staging folder, move them in whole; return its entry.

    An error or Ctrl-C part way leaves the earlier files (or none): never a half-written
    scenario (the caller puts the manifest back, :func:`_undo_scenario_write`).
    """
    if units:
        write_text_atomic(run_dir / UNITS_CSV_NAME, columns_frame().to_csv(index=False))
    flags = solve_flags(result)
    files = _stage_and_move(arrow, sdir, inputs, run_dir, flags)
    entry = scenario_entry(result, run_dir, files)
    if inputs is not None:
        entry["inputs"] = {
            **inputs.manifest_fields(run_dir, sdir / INPUTS_FILE),
            "solve_flags": flags,
        }
    return entry


def _stage_and_move(
    arrow: Mapping[str, pa.Table],
    sdir: Path,
    inputs: SolvedInputs | None,
    run_dir: Path,
    flags: str,
) -> dict[str, Path]:
    """Write ``arrow`` (and ``inputs.yaml``) into a staging folder and move it in whole.

    On any error the staging folder goes and an earlier ``sdir`` stays. Returns each
    table's file in ``sdir``.
    """
    stage = _stage_dir(sdir)
    if stage.exists() and not remove_tree(stage):
        raise ReportError(f"cannot remove the staging folder {stage} left by this process")
    try:
        ensure_dir(stage)
        staged = write_arrow_staged(arrow, stage)
        if inputs is not None:
            write_inputs(inputs, stage, run_dir, flags)
        _move_into_place(stage, sdir)
    except BaseException:
        remove_tree(stage, reraise=False)  # whole even if a second Ctrl-C comes
        raise
    return {n: sdir / p.name for n, p in staged.items()}


def write_scenario_folder(
    result: Any,
    scenario_path: str | os.PathLike[str],
    metadata: Mapping[str, str],
    inputs: SolvedInputs | None = None,
    run_dir: str | os.PathLike[str] | None = None,
) -> dict[str, Path]:
    """Write a scenario's tables (and ``inputs.yaml``) into a staging folder, move it in whole.

    A batch case re-solved over an earlier one wrote its tables in place one by one:
    an error or interrupt part way left a folder of new and old tables mixed, which
    pandas, DuckDB and :func:`optimizer.notebook.read_run` read as one plan. Here the
    earlier folder stays whole until the new one replaces it.

    Parameters
    ----------
    result : PlanResult
        The solved plan.
    scenario_path : path-like
        ``<folder>/scenario=<name>``.
    metadata : mapping of str to str
        Key-value metadata for every file (see :func:`file_metadata`).
    inputs : SolvedInputs, optional
        Written as ``inputs.yaml`` with the tables (needs ``run_dir``).
    run_dir : path-like, optional
        The run or batch folder the ``inputs.yaml`` paths are relative to.

    Returns
    -------
    dict of str to pathlib.Path
        Table name -> its file in ``scenario_path``.

    Raises
    ------
    ValueError
        When a result table does not match its schema (nothing is written).
    ReportError, OSError
        When a file cannot be written (the staging folder is removed, an earlier
        folder is left whole).
    """
    sdir = Path(scenario_path)
    arrow = scenario_tables(result, metadata)
    return _stage_and_move(arrow, sdir, inputs, Path(run_dir or sdir.parent), solve_flags(result))


def _move_into_place(stage: Path, sdir: Path) -> None:
    """Replace ``sdir`` by the complete ``stage`` folder (the old one is removed after)."""
    old = aside_dir(sdir, "old")
    if sdir.exists():
        sdir.rename(old)
    try:
        stage.rename(sdir)
    except BaseException:
        if old.exists() and not sdir.exists():
            old.rename(sdir)
        raise
    fsync_dir(sdir.parent)
    if not remove_tree(old):  # a folder its owner made read-only is made writable first
        warnings.warn(
            f"could not remove {old}, the earlier copy of {sdir.name}: remove it by hand "
            "(hidden; the documented scenario=*/ globs do not read it)",
            stacklevel=2,
        )


def _undo_scenario_write(
    run_dir: Path,
    sdir: Path,
    stage: Path,
    scenario: str,
    previous: Mapping[str, Any] | None,
    reserved: bool,
) -> None:
    """Put a run back as it was before an interrupted scenario write (best effort).

    The staged files go. A scenario written before keeps its earlier files whole, and
    its manifest entry stays ``writing`` (not complete), so a batch re-run redoes it
    rather than trusting files that are not this write's. A scenario new to the run
    loses its entry and its folder (even when the interrupt came after the folder moved
    in but before the manifest said ``complete``), and a run folder this call reserved
    is removed when nothing else is in it: an interrupted ``capacity solve`` leaves no
    report behind.
    """
    remove_tree(stage, reraise=False)  # on the way out already: a second Ctrl-C waits
    old = aside_dir(sdir, "old")
    if old.exists() and not sdir.exists():
        old.rename(sdir)
    if previous is not None:
        return
    if not old.exists():  # moved in, but the manifest never said complete: not this run's
        remove_tree(sdir, reraise=False)
    try:
        left = drop_scenario_entry(run_dir, scenario).get("scenarios")
    except ReportError:  # the manifest cannot be written (a full disk): read the folder
        left = [p for p in run_dir.glob("scenario=*") if p.is_dir()]
    if reserved and not left:
        remove_tree(run_dir, reraise=False)  # the run this call made: nothing in it


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
        "written_utc": utc_stamp(),
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
