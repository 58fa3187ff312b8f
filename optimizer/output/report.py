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
from dataclasses import dataclass
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

_STR = pa.string()
_F64 = pa.float64()
_I64 = pa.int64()
_BOOL = pa.bool_()


@dataclass(frozen=True)
class ResultColumn:
    """One column of a result table.

    Parameters
    ----------
    name : str
        Column name; its suffix is its unit where it has one.
    type : pyarrow.DataType
        Arrow type written to Parquet (``string``, ``float64``, ``int64``, ``bool``).
    unit : str
        Human unit ("MW", "USD", "" for text or a ratio).
    description : str
        Meaning of the column.
    """

    name: str
    type: pa.DataType
    unit: str
    description: str


def _c(name: str, type_: pa.DataType, unit: str, description: str) -> ResultColumn:
    return ResultColumn(name, type_, unit, description)


_SITE = _c("site", _STR, "", "Site ID.")
_PERIOD = _c("period", _STR, "quarter", "Period (YYYYQn).")
_CHIP = _c("chip", _STR, "", "Chip ID.")
_CUSTOMER = _c("customer", _STR, "", "Customer ID.")
_WORKLOAD = _c("workload", _STR, "", "Workload (training | inference).")
_PER_UNIT = "USD per unit of column 'unit'"
_DUAL = "Discounted shadow price: d(objective)/d(limit), "

RESULT_TABLES: dict[str, tuple[ResultColumn, ...]] = {
    "build_out": (
        _SITE,
        _PERIOD,
        _c("build_mw", _F64, "MW", "New IT capacity decided in the period (online lead later)."),
        _c("liquid_build_mw", _F64, "MW", "Part of the decided capacity fitted for liquid."),
        _c("retrofit_mw", _F64, "MW", "Air-cooled IT MW converted to liquid in the period."),
        _c("pipeline_mw", _F64, "MW", "Pipeline capacity (under way before the horizon) online."),
        _c("online_mw", _F64, "MW", "IT capacity coming online in the period (pipeline + builds)."),
        _c("it_capacity_mw", _F64, "MW", "IT capacity online (usable) in the period."),
        _c("liquid_capacity_mw", _F64, "MW", "Liquid-cooled IT capacity online in the period."),
        _c(
            "decided_capacity_mw",
            _F64,
            "MW",
            "IT capacity decided so far: initial + whole pipeline + cumulative build_mw.",
        ),
    ),
    "fleet": (
        _CHIP,
        _SITE,
        _PERIOD,
        _c("installed_chips", _F64, "chips", "Accelerators installed in the period."),
        _c("retired_chips", _F64, "chips", "Accelerators reaching end of life in the period."),
        _c("fleet_chips", _F64, "chips", "Accelerators in service in the period."),
        _c("assigned_chips", _F64, "chips", "Accelerators serving a customer."),
        _c("idle_chips", _F64, "chips", "Accelerators in service serving no one."),
        _c("it_mw", _F64, "MW", "All-in IT power of the fleet (rated)."),
    ),
    "production": (
        _CHIP,
        _PERIOD,
        _c("produced_chips", _F64, "chips", "Accelerators produced in the period."),
        _c("installed_chips", _F64, "chips", "Accelerators installed in the period."),
        _c("inventory_chips", _F64, "chips", "Produced but not yet installed, end of period."),
    ),
    "supply_utilisation": (
        _c("resource", _STR, "", "Supply resource ID."),
        _PERIOD,
        _c("used", _F64, "resource unit", "Units of the resource consumed."),
        _c("capacity", _F64, "resource unit", "Units of the resource available."),
        _c("utilisation", _F64, "share", "used / capacity (0-1; NaN when capacity is 0)."),
        _c(
            "shadow_price_usd_per_unit",
            _F64,
            "USD per resource unit",
            _DUAL + "per unit of the resource.",
        ),
    ),
    "assignment": (
        _CHIP,
        _SITE,
        _CUSTOMER,
        _WORKLOAD,
        _PERIOD,
        _c("chips", _F64, "chips", "Accelerators serving the customer's workload."),
        _c("h100e", _F64, "H100e", "Effective compute delivered (after derate)."),
        _c("it_mw", _F64, "MW", "All-in IT power of the assigned chips (rated)."),
    ),
    "demand": (
        _CUSTOMER,
        _WORKLOAD,
        _PERIOD,
        _c(
            "regions",
            _STR,
            "",
            "Site regions that may serve the demand, ';'-separated ('' = anywhere).",
        ),
        _c("demand_h100e", _F64, "H100e", "Compute wanted."),
        _c("served_h100e", _F64, "H100e", "Compute delivered."),
        _c("unmet_h100e", _F64, "H100e", "Compute not delivered (penalised)."),
        _c("served_share", _F64, "share", "served / demand (0-1; NaN when demand is 0)."),
        _c(
            "shadow_price_usd_per_h100e",
            _F64,
            "USD/H100e",
            _DUAL + "per H100e of demand in the period.",
        ),
    ),
    "site_utilisation": (
        _SITE,
        _PERIOD,
        _c("limit", _STR, "", "Limit (power | liquid | grid | water)."),
        _c("used", _F64, "column 'unit'", "Amount of the limit used."),
        _c("capacity", _F64, "column 'unit'", "Amount available."),
        _c("unit", _STR, "", "Unit of used and capacity (MW, m3 ...)."),
        _c("utilisation", _F64, "share", "used / capacity (0-1; NaN when capacity is 0)."),
        _c("shadow_price_usd_per_unit", _F64, _PER_UNIT, _DUAL + "per unit of the limit."),
    ),
    "commitments": (
        _CUSTOMER,
        _c("family", _STR, "", "Chip family of the commitment."),
        _PERIOD,
        _c("min_it_mw", _F64, "MW", "Contracted minimum IT power."),
        _c("delivered_it_mw", _F64, "MW", "IT power delivered on the family."),
        _c("breach_mw", _F64, "MW", "Shortfall below the commitment (penalised)."),
        _c("shadow_price_usd_per_mw", _F64, "USD/MW", _DUAL + "per MW of commitment."),
    ),
    "costs": (
        _PERIOD,
        _c(
            "term",
            _STR,
            "",
            "Cost term (chip_capex | build_capex | retrofit_capex | energy | unmet_penalty | "
            "breach_penalty | grid_upgrade | onsite_power | carbon | cluster_switch).",
        ),
        _c(
            "cost_usd",
            _F64,
            "USD",
            "Discounted cost as in the objective (capex as straight-line rent inside the horizon).",
        ),
        _c("undiscounted_cost_usd", _F64, "USD", "Objective cost before discounting."),
        _c(
            "cash_usd",
            _F64,
            "USD",
            "Undiscounted cash out in the period: chips at full price when installed, "
            "buildings when decided, retrofits when done, energy as billed; penalties 0.",
        ),
        _c("cash_kind", _STR, "", "capex | opex | none (penalties are not cash)."),
    ),
    "energy": (
        _SITE,
        _PERIOD,
        _c("it_mwh", _F64, "MWh", "IT energy."),
        _c("facility_mwh", _F64, "MWh", "Facility energy (IT energy x PUE)."),
        _c("water_m3", _F64, "m3", "Water drawn (IT MWh x WUE)."),
        _c("energy_cost_usd", _F64, "USD", "Undiscounted cost of facility energy."),
        _c("carbon_t", _F64, "t CO2", "Emissions of facility energy."),
    ),
    "shadow_prices": (
        _c("family", _STR, "", "Constraint family (site_grid, supply_resource ...)."),
        _PERIOD,
        _c("key", _STR, "", "Row of the family, parts joined by '/' (site, chip/site ...)."),
        _c("shadow_price", _F64, "column 'unit'", _DUAL + "in USD per unit of the row."),
        _c("unit", _STR, "", "Unit of shadow_price (USD/MW, USD/m3, USD/wafers ...)."),
        _c(
            "slack",
            _F64,
            "row unit (column 'unit' without 'USD/')",
            "Unused room of the constraint (rhs - lhs for <=, lhs - rhs for >=).",
        ),
        _c("binding", _BOOL, "", "True when slack <= 1e-6 * (1 + |rhs|)."),
    ),
    # Power as a decision (issue 12; optimizer.plan.power_results).
    "power_sources": (
        _SITE,
        _PERIOD,
        _c("source", _STR, "", "Power source: grid, onsite:<technology> or ppa:<contract>."),
        _c(
            "capacity_mw",
            _F64,
            "MW",
            "Grid: granted + energised upgrades; on-site: nameplate online; PPA: contracted.",
        ),
        _c("energy_mwh", _F64, "MWh", "Facility energy bought from the source."),
        _c(
            "cost_usd",
            _F64,
            "USD",
            "Undiscounted cost: energy at its price plus upgrade rent (grid) or capex rent "
            "and fixed cost (on-site).",
        ),
        _c("carbon_t", _F64, "t CO2", "Emissions of the energy."),
    ),
    "power_decisions": (
        _SITE,
        _c("kind", _STR, "", "grid_upgrade | onsite | ppa."),
        _c("option", _STR, "", "Upgrade option, technology or contract ID."),
        _c("decision_period", _STR, "quarter", "Quarter the request, order or contract is made."),
        _c("online_period", _STR, "quarter", "First quarter the MW are available."),
        _c("mw", _F64, "MW", "MW requested or built; PPA: largest average MW taken."),
        _c("capex_usd_per_mw", _F64, "USD/MW", "Upgrade cost or on-site capex per MW."),
        _c(
            "energy_usd_per_mwh",
            _F64,
            "USD/MWh",
            "Energy cost of the source (fuel + O&M, or PPA price).",
        ),
        _c("grid_price_usd_per_mwh", _F64, "USD/MWh", "The site's grid price, for comparison."),
        _c("carbon_t_per_mwh", _F64, "t CO2/MWh", "Emissions per MWh of the source."),
    ),
    # One row per customer, period and site hosting the customer's training (issue 14).
    "training_clusters": (
        _CUSTOMER,
        _PERIOD,
        _SITE,
        _c("it_mw", _F64, "MW", "All-in IT power of the customer's training chips at the site."),
        _c("h100e", _F64, "H100e", "Training compute there (after derate)."),
        _c("chips", _F64, "chips", "Training accelerators there."),
        _c("chips_by_generation", _STR, "chips", "Chips per generation, 'chip:chips;...'."),
        _c("min_cluster_mw", _F64, "MW", "Minimum cluster size of the rule (0: none)."),
        _c("min_cluster_h100e", _F64, "H100e", "Minimum cluster size of the rule (0: none)."),
        _c("meets_minimum", _BOOL, "", "True when the site's training meets both minimums."),
        _c("sites_in_period", _F64, "sites", "Sites hosting the customer's training then."),
        _c("max_sites", _F64, "sites", "Most sites of the rule (0: no limit)."),
        _c("within_max_sites", _BOOL, "", "True when sites_in_period <= max_sites."),
        _c("cluster_start", _BOOL, "", "True when the site did not host it the period before."),
        _c(
            "enforced",
            _BOOL,
            "",
            "True when the solve had exact cluster binaries (--clusters / --integer-units); "
            "False: LP mode, the rule is reported, not enforced.",
        ),
    ),
    # Rows of the independent checker (optimizer.plan.check.VIOLATION_COLUMNS): one per
    # constraint recomputed from the solution and violated beyond tolerance.
    "violations": (
        _c("family", _STR, "", "Constraint family (or bounds / eligibility)."),
        _c("constraint", _STR, "", "Constraint row, e.g. site_grid[alpha|2026Q2]."),
        _c("keys", _STR, "", "Domain keys of the row."),
        _c("lhs", _F64, "constraint unit", "Left-hand side recomputed from the solution."),
        _c("rhs", _F64, "constraint unit", "Limit."),
        _c("violation", _F64, "constraint unit", "Amount by which the limit is exceeded."),
    ),
    # The plan held against the public record (optimizer.plan.calibration defines metrics).
    "calibration": (
        _c("metric", _STR, "", "Metric (formula in optimizer/plan/calibration.py)."),
        _c("scope", _STR, "", "What the figure covers ('fleet' or filters like chip:x)."),
        _c("period", _STR, "quarter", "Quarter (annual metrics: last quarter of the year)."),
        _c("record_value", _F64, "column 'unit'", "The publicly reported figure."),
        _c("record_low", _F64, "column 'unit'", "Lowest plan value counted as agreeing."),
        _c("record_high", _F64, "column 'unit'", "Highest plan value counted as agreeing."),
        _c("plan_value", _F64, "column 'unit'", "The plan's value (metric / plan_share)."),
        _c("unit", _STR, "", "Unit of the values."),
        _c("ratio", _F64, "", "plan_value / record_value (null when the record is 0)."),
        _c("inside_band", _BOOL, "", "record_low <= plan_value <= record_high."),
        _c("matchable", _BOOL, "", "True when the row is scored (model can match it)."),
        _c("reason", _STR, "", "Why the row is not matchable (empty when it is)."),
        _c("source", _STR, "", "Public address of the figure."),
    ),
    # Rows of the elastic re-solve of an infeasible model (optimizer.plan.explain): which
    # limits had to give. The explainer's ``scenario`` position column is dropped.
    "infeasibility": (
        _c("family", _STR, "", "Constraint family."),
        _c("period", _STR, "quarter", "Period."),
        _c("key", _STR, "", "Row of the family (site, resource, chip ...)."),
        _c("amount", _F64, "column 'unit'", "Amount the limit had to give."),
        _c("unit", _STR, "", "Unit of the amount."),
        _c("message", _STR, "", "The shortfall in domain words."),
    ),
    # One row per scenario: the plan's headline numbers.
    "summary": (
        _c("status", _STR, "", "Solve status."),
        _c("objective_usd", _F64, "USD", "Discounted objective (null without a solution)."),
        _c("solver", _STR, "", "Solver that ran (a name capacity solvers lists)."),
        _c("message", _STR, "", "Solver or checker message."),
        _c("dataset_name", _STR, "", "Dataset name."),
        _c("dataset_hash", _STR, "", "sha256 of the solved dataset (scenario applied)."),
        _c("integer_units", _BOOL, "", "True when whole deployment units were enforced."),
        _c("duals_from", _STR, "", "Where the shadow prices come from."),
        _c("mip_bound_usd", _F64, "USD", "MIP best bound (null for an LP or when unknown)."),
        _c("mip_gap", _F64, "share", "MIP relative gap |objective - bound| / |objective|."),
        _c("duals_note", _STR, "", "Why shadow prices are null ('' when available)."),
        _c("n_variables", _I64, "", "LP variables."),
        _c("n_constraints", _I64, "", "LP constraints."),
        _c("total_time_s", _F64, "s", "Sum of the recorded timings."),
        _c("timings_json", _STR, "", "Timings of each step, JSON {step: seconds}."),
        _c("demand_h100e", _F64, "H100e", "Demand summed over the periods."),
        _c("served_h100e", _F64, "H100e", "Served compute summed over the periods."),
        _c("served_share", _F64, "share", "served_h100e / demand_h100e."),
        _c("facility_mwh", _F64, "MWh", "Facility energy over the horizon."),
        _c("water_m3", _F64, "m3", "Water over the horizon."),
        _c("n_violations", _I64, "", "Rows of the violations table."),
    ),
}


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
