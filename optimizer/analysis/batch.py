"""The batch driver: ``capacity batch``, a sweep's cases solved on Dask into one folder.

``capacity batch SWEEP.yaml`` expands a sweep (:mod:`optimizer.analysis.sweep`) into cases and
solves them on a Dask cluster: by default a ``distributed.LocalCluster`` of ``N``
single-threaded worker processes on this machine; with ``scheduler=ADDRESS`` the same
tasks go to an existing cluster (``Client(address)``). The client process writes each
case's tables as soon as it finishes (:func:`optimizer.analysis.dask_cluster.wait_each`)::

    <out>/batch_manifest.json                    (rewritten atomically after each case)
    <out>/batch_summary.csv                      (one row per case: outcomes)
    <out>/scenario=<case>/<table>.parquet        (every table of report.RESULT_SCHEMAS)

Tables are written by :func:`optimizer.output.report.write_scenario_folder` (one explicit
schema per table, into a hidden staging folder that then replaces the case's folder
whole), so a case that serves nobody still writes every table, typed and possibly
empty, no half file ever sits under a real name, and a case re-solved over an earlier
one never leaves new and old tables mixed. The folder reads with ``pyarrow.dataset`` and DuckDB
(``read_parquet('<out>/scenario=*/demand.parquet', hive_partitioning=true)``).

The parts, each in its module: the cases whose data does not validate
(:mod:`optimizer.analysis.batch_invalid`), which cases a re-run skips
(:mod:`optimizer.analysis.batch_resume`), one case on a worker and model reuse
(:mod:`optimizer.analysis.batch_case`, :mod:`optimizer.analysis.batch_patch`), the
Dask run with its retry of lost cases (:mod:`optimizer.analysis.batch_dask`), the
recording of each finished case (:mod:`optimizer.analysis.batch_record`), the shared
folder (:mod:`optimizer.analysis.batch_folder`) and the printed findings
(:mod:`optimizer.analysis.batch_render`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from capacity.validation import Finding
from optimizer.analysis.batch_case import CaseResult
from optimizer.analysis.batch_dask import on_cluster, solve_on_dask
from optimizer.analysis.batch_folder import (
    folder_lock,
    read_batch_manifest,
    remove_stale_temp_files,
    start_run,
    summary_row,
    write_summary_csv,
)
from optimizer.analysis.batch_invalid import validate_cases
from optimizer.analysis.batch_record import BatchRecorder, iso_now
from optimizer.analysis.batch_resume import case_options, key_options, split_done
from optimizer.analysis.dask_cluster import ClusterOptions
from optimizer.analysis.sweep import SweepSpec
from optimizer.analysis.sweep_cases import SweepCase, expand_sweep
from optimizer.analysis.sweep_read import load_sweep
from optimizer.output import manifest as manifest_module

__all__ = [
    "BATCH_FORMAT",
    "BATCH_SUMMARY",
    "OTHER_RUN",
    "BatchResult",
    "batch_summary",
    "case_data_hash",
    "run_batch",
]

BATCH_SUMMARY = "batch_summary.csv"
BATCH_FORMAT = "capacity-batch/1"


@dataclass
class BatchResult:
    """Outcome of :func:`run_batch`.

    Attributes
    ----------
    out_dir : Path
    manifest : dict
        The final batch manifest.
    summary : DataFrame
        One row per case: name, kind, params (one column per axis/parameter), state,
        status, objective_usd, the plan outcomes, elapsed_s, skipped, error.
    n_done, n_failed, n_skipped : int
        ``n_failed`` includes the invalid cases.
    n_replaced : int
        Cases of this sweep whose plan in the folder is another run's when this run
        ends (state ``other_run``: a batch with cases of the same names wrote into the
        folder meanwhile); the sweep's plans are then not all in the folder.
    invalid : dict of str to tuple of Finding
        Cases whose data does not validate (not solved) and their error findings.
    """

    out_dir: Path
    manifest: dict[str, Any]
    summary: pd.DataFrame
    n_done: int
    n_failed: int
    n_skipped: int
    invalid: dict[str, tuple[Finding, ...]] = field(default_factory=dict)
    n_replaced: int = 0


def run_batch(
    sweep: SweepSpec | str | Path,
    out_dir: str | Path,
    *,
    workers: int = 2,
    scheduler: str | None = None,
    options: Any = None,
    reuse: bool = True,
    progress: bool = True,
    on_case: Callable[[CaseResult], None] | None = None,
    on_invalid: Callable[[dict[str, tuple[Finding, ...]]], None] | None = None,
    cluster: ClusterOptions | None = None,
    on_other_sweeps: Callable[[list[str]], None] | None = None,
    on_warnings: Callable[[list[Finding]], None] | None = None,
) -> BatchResult:
    """Run every case of a sweep on Dask and write each one as soon as it finishes.

    Parameters
    ----------
    sweep : SweepSpec or path
        The sweep (a YAML path is read with :func:`optimizer.analysis.sweep_read.load_sweep`).
    out_dir : path
        Output folder (created): ``scenario=<case>/<table>.parquet``, the batch
        manifest and summary.
    workers : int
        Worker processes of the local cluster (ignored with ``scheduler``).
    scheduler : str, optional
        Address of an existing Dask scheduler (``tcp://host:port``).
    options : SolveOptions, optional
    reuse : bool
        Patch models instead of rebuilding them (see the module docstring).
    progress : bool
        Show the rich progress bar.
    on_case : callable, optional
        Called with each finished :class:`~optimizer.analysis.batch_case.CaseResult`
        (invalid ones too: ``invalid_data``).
    on_invalid : callable, optional
        Called once, before any solve, with the cases whose data does not validate
        (case name -> error findings); not called when every case is valid.
    cluster : ClusterOptions, optional
        TLS and the bounded wait (:mod:`optimizer.analysis.dask_cluster`); ``workers``,
        ``scheduler`` win.
    on_other_sweeps : callable, optional
        Called before any solve with the folder's cases of other sweeps (kept).
    on_warnings : callable, optional
        Called once, before any solve, with a warning per case override its objective
        does not read (:func:`optimizer.plan.objective_reads.unread_override_findings`:
        a price or contract term swept in the cost objective); not called when none is.
        Without it each is a ``UserWarning``.

    Returns
    -------
    BatchResult

    Raises
    ------
    optimizer.analysis.sweep_errors.SweepSpecError
        When the sweep is invalid or names an unknown scenario.
    capacity.validation.DataValidationError
        When the base dataset does not validate (an invalid case is recorded failed).
    """
    from capacity.dataset import load_dataset
    from optimizer.plan.options import SolveOptions

    spec = load_sweep(sweep) if isinstance(sweep, str | Path) else sweep
    options, out = options or SolveOptions(), Path(out_dir)
    base = load_dataset(spec.data)
    cases = expand_sweep(spec, list(base.scenarios))
    out.mkdir(parents=True, exist_ok=True)  # only once the sweep is known to be valid
    solve_doc = case_options(options)
    keys, data_keys = _case_keys(base, cases, solve_doc, options.solver)
    fields = (_run_fields(spec, base, options, reuse), _sweep(spec, options, keys))
    manifest = _start_folder(out, fields, keys, on_other_sweeps)
    todo, skipped = split_done(out, cases, manifest, keys, solve_doc["time_limit_s"])
    invalid = validate_cases(base, todo)
    todo = [c for c in todo if c.name not in invalid]
    run = BatchRecorder(out, manifest, keys, on_case, solve_doc, base, data_keys)
    for case in cases:
        if case.name in invalid:
            run.record_invalid(case, invalid[case.name])
    if invalid and on_invalid is not None:
        on_invalid(dict(invalid))
    unread = _unread_overrides(base, todo, options)
    if unread and on_warnings is not None:
        on_warnings(unread)
    for f in unread if on_warnings is None else ():  # the Python face: a warning each
        warnings.warn(f"{f.file}: {f.message}", UserWarning, stacklevel=2)
    _summarise(out, cases, skipped, keys)  # before any solve: a kill -9 leaves no stale one
    try:
        if todo:
            solve_on_dask(
                run, base, todo, options, reuse, on_cluster(cluster, workers, scheduler), progress
            )
    finally:  # an interrupted run (Ctrl-C, SIGTERM, SIGHUP) still leaves a summary
        manifest, summary = _summarise(out, cases, skipped, keys)
    n_done, n_failed = run.counts["done"], run.counts["failed"]
    replaced = int((summary["state"] == OTHER_RUN).sum()) if len(summary) else 0
    result = BatchResult(out, manifest, summary, n_done, n_failed, len(skipped), dict(invalid))
    result.n_replaced = replaced
    return result


def _case_keys(
    base: Any, cases: Sequence[SweepCase], solve_doc: Mapping[str, Any], solver: str
) -> tuple[dict[str, str], dict[str, str]]:
    """Return each case's key and its data key (:func:`case_data_hash`), by case name.

    The key holds the data key, the case's overrides, the options but the time limit
    (:func:`optimizer.analysis.batch_resume.key_options`), the planner and the solver.
    New planner code, or another solver version (another vertex of a tied optimum),
    redoes every case.
    """
    planner = f"{manifest_module.planner_fingerprint()}|{_solver_identity(solver)}"
    data = {c.name: case_data_hash(base.tables_hash, base.scenarios, c) for c in cases}
    opts = key_options(solve_doc)
    return {c.name: c.key(data[c.name], opts, planner) for c in cases}, data


def case_data_hash(tables_hash: str, scenarios: Mapping[str, Any], case: SweepCase) -> str:
    """Return the hash of the data a case is solved on: the tables and its scenario's overrides.

    ``tables_hash`` is the base dataset's; the overrides are those of the named scenario
    the case starts from (none for ``base``); the case's own overrides are in its key.
    Keyed on the whole dataset's hash, any edit of ``scenarios.yaml`` (a description, a
    scenario no case starts from) redid every case of the folder.
    """
    import hashlib
    import json

    named = scenarios.get(case.base) if case.base not in (None, "base") else None
    overrides = [o.to_dict() for o in named.overrides] if named is not None else []
    doc = json.dumps({"tables": tables_hash, "overrides": overrides}, default=str)
    return hashlib.sha256(doc.encode()).hexdigest()


def _solver_identity(name: str) -> str:
    """Return ``<solver> <version>`` for a case's identity ("<solver> unknown" if unread)."""
    from optimizer.plan.solvers import resolve_solver, solver_version

    try:
        return f"{name} {solver_version(resolve_solver(name))}"
    except (ValueError, OSError, RuntimeError):
        return f"{name} unknown"


def _summarise(
    out: Path, cases: Sequence[SweepCase], skipped: Sequence[SweepCase], keys: Mapping[str, str]
) -> tuple[dict[str, Any], pd.DataFrame]:
    """Write ``batch_summary.csv`` from the manifest as it is now; return both.

    Written before the first solve too, so a batch killed outright (``kill -9``) leaves
    a summary whose unsolved cases read ``other_run`` or ``missing``, never an earlier
    run's results as current.
    """
    with folder_lock(out):  # no other batch's case half way (``writing``) in it
        manifest = read_batch_manifest(out)
        summary = batch_summary(manifest, cases, {c.name for c in skipped}, keys)
        write_summary_csv(out, summary, BATCH_SUMMARY)
    return manifest, summary


def _unread_overrides(base: Any, cases: Sequence[SweepCase], options: Any) -> list[Finding]:
    """Return a warning for each override of a case that its objective does not read."""
    from optimizer.plan.objective_reads import scenario_overrides, unread_override_findings

    out: list[Finding] = []
    for c in cases:
        overrides = [*scenario_overrides(base.scenarios, c.base or ""), *c.overrides]
        objective = c.solve_options(options).objective
        out.extend(unread_override_findings(overrides, objective, f"case {c.name!r}"))
    return out


def _start_folder(
    out: Path,
    fields: tuple[Mapping[str, Any], Mapping[str, Any]],
    keys: Mapping[str, str],
    on_other_sweeps: Callable[[list[str]], None] | None,
) -> dict[str, Any]:
    """Clear killed writers' temp files and register this run in the folder's manifest.

    ``fields`` is (top-level run fields, this sweep's description).
    """
    with folder_lock(out):
        remove_stale_temp_files(out)
    manifest, others = start_run(out, fields[0], fields[1], keys)
    if others and on_other_sweeps is not None:
        on_other_sweeps(others)
    return manifest


def _run_fields(spec: SweepSpec, base: Any, options: Any, reuse: bool) -> dict[str, Any]:
    """Top-level manifest fields of this run (the folder's last run)."""
    return {
        "format": BATCH_FORMAT,
        "created_utc": iso_now(),
        "updated_utc": iso_now(),
        "data": str(spec.data),
        "dataset_name": base.name,
        "dataset_hash": base.hash,
        "solver": options.solver,
        "time_limit_s": options.time_limit_s,
        "reuse": reuse,
    }


def _sweep(spec: SweepSpec, options: Any, keys: Mapping[str, str]) -> dict[str, Any]:
    """Return the sweep's entry under the manifest's ``sweeps``.

    See :mod:`optimizer.analysis.batch_folder`.
    """
    return {
        "data": str(spec.data),
        "solver": options.solver,
        "options": case_options(options),
        "updated_utc": iso_now(),
        "cases": list(keys),
    }


#: State of a summary row whose plan in the folder is another run's (not this sweep's).
OTHER_RUN = "other_run"


def batch_summary(
    manifest: Mapping[str, Any],
    cases: Sequence[SweepCase],
    skipped: set[str] | None = None,
    keys: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Return one row per case from a batch manifest (outcomes flattened).

    Columns: ``scenario, kind, sweep, <param columns>, state, status, objective_usd,
    total_cost_usd, unmet_h100e, trainium_share, breach_mw, binding_families,
    binding_limits, degenerate_limits, time_s, skipped, error``. With ``keys`` (this
    sweep's case keys), a case whose entry holds another key (a second batch into the
    same folder, with other data, overrides or options, wrote it later; or an
    interrupted re-run after a data edit never reached it) is given state
    ``other_run`` and no outcomes: its files are not this sweep's plan.
    """
    rows = []
    skipped = skipped or set()
    for c in cases:
        e = (manifest.get("scenarios") or {}).get(c.name, {})
        if keys is not None and e and e.get("key") != keys.get(c.name):
            e = {
                "sweep": e.get("sweep"),  # whose plan the folder holds
                "state": OTHER_RUN,
                "error": "the folder's plan for this case is another run's (other data, "
                "overrides or options), not this sweep's: re-run to solve it",
            }
        rows.append(summary_row(c.name, c.kind, c.params, e, skipped=c.name in skipped))
    return pd.DataFrame(rows)
