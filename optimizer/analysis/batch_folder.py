"""One batch output folder, many writers: the manifest is merged under a lock.

Every change to ``<out>/batch_manifest.json`` (the start of a run, each finished case)
and every rewrite of ``<out>/batch_summary.csv`` happens while holding an exclusive
lock on ``<out>/.batch.lock`` (``filelock``, an OS file lock released by the kernel
if the holder dies, so a ``kill -9`` never leaves a stale lock). Inside the lock the manifest is
re-read from disk and only this writer's entries are replaced, so two batches writing
into one folder at the same time keep each other's cases.

Several sweeps in one folder
----------------------------
A folder may hold the cases of several sweeps: they are all kept. Each case entry
records the ``sweep`` it came from (:func:`sweep_id`), and ``sweeps`` at the top of the
manifest lists each sweep's data folder, solver, solve options and cases. A case of
another sweep with the same name but a different key (other data, overrides or solve
options) is replaced by the new run (its files are rewritten); :func:`start_run`
returns the names of the cases that belong to other sweeps so the caller can say so.
Globs such as
``read_parquet('<out>/scenario=*/demand.parquet')`` read every sweep's cases: filter by the
manifest's ``sweep`` field, or give each sweep its own ``--out``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
from filelock import FileLock

from capacity.csv_safe import to_safe_csv
from optimizer.output.atomic import ReportError, remove_tree
from optimizer.output.run_folder import aside_parts, pid_alive

__all__ = [
    "BATCH_MANIFEST",
    "read_batch_manifest",
    "folder_lock",
    "merge_case",
    "remove_stale_temp_files",
    "start_run",
    "sweep_id",
    "write_summary_csv",
]

LOCK_NAME = ".batch.lock"
BATCH_MANIFEST = "batch_manifest.json"
_LOCKS: dict[str, FileLock] = {}  # one lock object per folder: re-entrant in a thread


@contextlib.contextmanager
def folder_lock(out: Path) -> Iterator[None]:
    """Hold the exclusive lock of one batch output folder (blocking until free).

    An OS file lock (``filelock``, as the report manifest's): the kernel releases it
    when its holder dies, so a killed batch never leaves the folder locked. The lock
    is re-entrant within a thread (one ``FileLock`` object per folder, counted), so a
    block that holds it (a case's write, check and entry) may call functions that
    take it again.
    """
    path = str((Path(out) / LOCK_NAME).resolve())
    lock = _LOCKS.get(path)
    if lock is None:
        lock = _LOCKS.setdefault(path, FileLock(path))
    with lock:
        yield


def sweep_id(keys: Mapping[str, str]) -> str:
    """Return a short id of a sweep: sha256 of its sorted (case name, case key) pairs."""
    text = "\n".join(f"{n}\t{k}" for n, k in sorted(keys.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def read_batch_manifest(out_dir: str | Path) -> dict[str, Any]:
    """Return ``<out_dir>/batch_manifest.json`` as a dict (empty when absent or unreadable)."""
    p = Path(out_dir) / BATCH_MANIFEST
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _read(out: Path) -> dict[str, Any]:
    return read_batch_manifest(out)


def _write(out: Path, doc: Mapping[str, Any]) -> None:
    from optimizer.output.atomic import write_json_atomic

    try:
        write_json_atomic(out / BATCH_MANIFEST, doc)
    except OSError as exc:
        raise _cannot_write(out / BATCH_MANIFEST, exc) from exc


def _cannot_write(path: Path, exc: OSError) -> ReportError:
    """Return the error of a batch folder file that cannot be written (names the file)."""
    return ReportError(f"cannot write {path}: {exc.strerror or exc}")


def start_run(
    out: Path,
    run_fields: Mapping[str, Any],
    sweep: Mapping[str, Any],
    keys: Mapping[str, str],
) -> tuple[dict[str, Any], list[str]]:
    """Register a run in the folder's manifest; return (manifest as on disk, others).

    Parameters
    ----------
    out : Path
        Batch output folder (exists).
    run_fields : mapping
        Top-level fields of this run (``format``, ``data``, ``dataset_hash``, ...);
        they overwrite the previous run's, ``created_utc`` excepted.
    sweep : mapping
        This sweep's description, stored under ``sweeps[sid]``.
    keys : mapping of str to str
        This sweep's case names and keys; entries with the same name and key are
        tagged with this sweep (they will be skipped, not redone).

    Returns
    -------
    (dict, list of str)
        The merged manifest (every case entry of every sweep kept), and the names
        of the cases recorded by other sweeps.
    """
    with folder_lock(out):
        doc = _read(out)
        created = doc.get("created_utc")
        doc.update(run_fields)
        doc["created_utc"] = created or run_fields.get("created_utc")
        sid = sweep_id(keys)
        entries = doc.setdefault("scenarios", {})
        for name, entry in entries.items():
            if keys.get(name) == entry.get("key"):
                entry["sweep"] = sid
        doc.setdefault("sweeps", {})[sid] = dict(sweep)
        _write(out, doc)
    others = [n for n in doc["scenarios"] if n not in keys]
    return doc, others


def merge_case(out: Path, name: str, entry: Mapping[str, Any], updated: str) -> dict[str, Any]:
    """Set one case's entry in the folder's manifest under the lock; return the manifest.

    The manifest is re-read inside the lock, so entries written meanwhile by other
    batches are kept.
    """
    with folder_lock(out):
        doc = _read(out)
        doc.setdefault("scenarios", {})[name] = dict(entry)
        doc["updated_utc"] = updated
        _write(out, doc)
    return doc


def summary_row(
    name: str, kind: str, params: Mapping[str, Any], entry: Mapping[str, Any], *, skipped: bool
) -> dict[str, Any]:
    """Return one ``batch_summary.csv`` row from a case's manifest entry (outcomes flattened).

    Keys: ``scenario, kind, sweep, param_<name>..., state, status, objective_usd, total_cost_usd,
    unmet_h100e, trainium_share, breach_mw, binding_families, binding_limits,
    degenerate_limits, time_s, skipped, error`` (the error's first line;
    ``degenerate_limits`` counts the limits used to the full at a zero shadow price,
    whose binding lists are then not unique); ``margin_usd, revenue_usd`` after them
    for a case solved in the margin objective. ``sweep`` is the id of the sweep whose run
    wrote the case's plan (:func:`sweep_id`; "" for an entry from before it was kept).
    """
    e, o = entry, entry.get("outcomes") or {}
    row: dict[str, Any] = {"scenario": name, "kind": kind, "sweep": e.get("sweep") or ""}
    row.update({f"param_{k}": v for k, v in params.items()})
    row.update(
        state=e.get("state", "missing"),
        status=e.get("status", ""),
        objective_usd=e.get("objective_usd"),
        total_cost_usd=o.get("total_cost_usd"),
        unmet_h100e=o.get("unmet_h100e"),
        trainium_share=o.get("trainium_share"),
        breach_mw=o.get("breach_mw"),
        binding_families=_joined(o, "binding_families"),
        binding_limits=_joined(o, "binding_limits"),
        degenerate_limits=o.get("degenerate_limits"),
        time_s=e.get("time_s"),
        skipped=skipped,
        error=(e.get("error") or "").splitlines()[0] if e.get("error") else "",
    )
    if "margin_usd" in o:  # a case solved in the margin objective
        row.update(margin_usd=o.get("margin_usd"), revenue_usd=o.get("revenue_usd"))
    return row


def _joined(outcomes: Mapping[str, Any], key: str) -> str | None:
    """Join the names with ``;``; None when the case has them as null (no duals: unknown)."""
    if key in outcomes and outcomes[key] is None:
        return None
    return ";".join(outcomes.get(key) or [])


def _other_rows(doc: Mapping[str, Any], names: set[str]) -> list[dict[str, Any]]:
    rows = []
    for name, e in (doc.get("scenarios") or {}).items():
        if name in names:
            continue
        row = summary_row(name, e.get("kind", ""), e.get("params") or {}, e, skipped=True)
        rows.append(row)
    return rows


def write_summary_csv(out: Path, mine: pd.DataFrame, path_name: str) -> pd.DataFrame:
    """Write ``batch_summary.csv``: this run's rows, then every other case of the folder.

    Parameters
    ----------
    out : Path
        Batch output folder.
    mine : DataFrame
        This run's rows (:func:`optimizer.analysis.batch.batch_summary`).
    path_name : str
        File name of the summary.

    Returns
    -------
    DataFrame
        The rows written (other sweeps' cases marked ``skipped``).
    """
    with folder_lock(out):
        doc = _read(out)
        rows = _other_rows(doc, set(mine["scenario"]) if len(mine) else set())
        both = pd.concat([mine, pd.DataFrame(rows)], ignore_index=True) if rows else mine
        tmp = out / f".{path_name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            to_safe_csv(both, tmp)  # text cells that start like a formula are escaped
            os.replace(tmp, out / path_name)
        except OSError as exc:
            raise _cannot_write(out / path_name, exc) from exc
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
    return both


def remove_stale_temp_files(out: Path) -> list[Path]:
    """Remove what killed writers left: temporary files and staging folders.

    A writer names its temporary file (``.<name>.tmp-<pid>-<hex>``) and a case's
    staging folder (``.scenario=<case>.partial-<pid>``) with its process id; one whose
    process is gone (or whose name carries no process id) can never be moved into
    place and is removed. An earlier folder set aside for a replacement
    (``.scenario=<case>.old-<pid>``) is put back when the kill came before the new one
    moved in, and removed otherwise. Those of live processes (a concurrent batch) are
    left alone.

    Returns
    -------
    list of Path
        The files and folders removed.
    """
    removed = []
    for p in [*out.glob(".*.tmp-*"), *out.glob("scenario=*/.*.tmp-*")]:
        head = p.name.rsplit(".tmp-", 1)[1].split("-", 1)[0]
        if head.isdigit() and pid_alive(int(head)):
            continue
        with contextlib.suppress(OSError):
            p.unlink()
            removed.append(p)
    for p in [*out.glob(".scenario=*.partial-*"), *out.glob(".scenario=*.old-*")]:
        name, kind, pid = aside_parts(p)
        if pid is not None and pid_alive(pid):
            continue
        home = out / name
        with contextlib.suppress(OSError):
            if kind == "old" and not home.exists():
                p.rename(home)  # killed between its two renames: the earlier folder
                continue
            if remove_tree(p):  # a read-only copy is made writable first
                removed.append(p)
    return sorted(removed)
