"""The run manifest: its path, reading it, merging entries under a lock, the completeness test.

The manifest is rewritten atomically, under an exclusive lock, so concurrent writers
(``capacity batch``) never lose each other's entries. A scenario's manifest entry is set
to ``state: "writing"`` before its tables are written and to ``state: "complete"``
after; :func:`scenario_is_complete` is the test a batch re-run uses to skip finished
scenarios.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from filelock import FileLock

from optimizer.output.atomic import ReportError, ensure_dir, write_json_atomic
from optimizer.output.run_folder import mark_unfinished, utc_stamp

__all__ = [
    "MANIFEST_NAME",
    "REPORT_FORMAT",
    "begin_scenario",
    "manifest_path",
    "package_version",
    "planner_fingerprint",
    "code_digest",
    "read_manifest",
    "scenario_is_complete",
    "update_manifest",
]

MANIFEST_NAME = "manifest.json"
REPORT_FORMAT = "capacity-report/1"
PACKAGE_NAME = "capacity-planner"


@functools.cache
def package_version() -> str:
    """Return the installed version of ``capacity-planner`` ("0+unknown" if absent).

    Read once a process (each batch case's files carry it; the code running is the one
    imported, whatever an upgrade during the run installs).
    """
    try:
        return importlib_metadata.version(PACKAGE_NAME)
    except importlib_metadata.PackageNotFoundError:  # pragma: no cover - editable install
        return "0+unknown"


def planner_fingerprint() -> str:
    """Return the planner's identity for resumable work: its version and a code digest.

    ``<version>+<12 hex digits>``: :func:`package_version` and :func:`code_digest`. An
    editable install (``pip install -e .``, the README's) keeps its version while its
    code changes: a batch resumed after an update kept plans the older code had made,
    as current, where the version alone named the planner.
    """
    return f"{package_version()}+{code_digest()}"


@functools.cache
def code_digest() -> str:
    """Return the SHA-256 (12 hex digits) of the planner's Python sources, once a process.

    Every ``.py`` file of the ``capacity`` and ``optimizer`` packages, its path and
    bytes, in path order.
    """
    import hashlib

    import capacity
    import optimizer

    digest = hashlib.sha256()
    for pkg in (capacity, optimizer):
        root = Path(str(pkg.__file__)).parent
        for f in sorted(root.rglob("*.py")):
            digest.update(f.relative_to(root.parent).as_posix().encode())
            digest.update(f.read_bytes())
    return digest.hexdigest()[:12]


def manifest_path(run_dir: str | os.PathLike[str]) -> Path:
    """Return the path of a run's manifest (``<run_dir>/manifest.json``)."""
    return Path(run_dir) / MANIFEST_NAME


@functools.lru_cache(maxsize=64)
def _lock_for(path: Path) -> FileLock:
    """Return the one lock object of this process for ``path`` (re-entrant in a thread)."""
    return FileLock(path)


@contextlib.contextmanager
def _locked(run_dir: Path) -> Iterator[None]:
    """Hold the run's manifest lock (``.manifest.lock``, an OS file lock via filelock).

    One lock object per file: a Ctrl-C between filelock's acquire and the ``with`` block
    leaves it held, and the clean-up's manifest edit then re-enters it. A second object
    for the same file raised filelock's "Deadlock" RuntimeError there (a traceback in
    place of the one-line interrupt message); filelock 3 would wait forever.
    """
    lock = _lock_for(run_dir / ".manifest.lock")
    try:
        lock.acquire()
    except RuntimeError as exc:  # filelock's refusal: a lock inherited or not let go
        raise ReportError(f"cannot lock {run_dir / '.manifest.lock'}: {exc}") from exc
    try:
        yield
    finally:
        lock.release()


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
    fields = dict(run_fields or {})
    overwrite = set(fields.pop("overwrite", ()))

    def change(data: dict[str, Any]) -> None:
        for key, value in fields.items():
            if key in overwrite or key not in data:
                data[key] = value
        data.setdefault("format", REPORT_FORMAT)
        data.setdefault("scenarios", {})
        if scenario is not None:
            data["scenarios"][scenario] = dict(entry or {})

    return _edit_manifest(run_dir, change)


def _edit_manifest(
    run_dir: str | os.PathLike[str], change: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    """Read, change and write back ``<run_dir>/manifest.json`` under its lock."""
    run_dir = Path(run_dir)
    try:
        with _locked(run_dir):
            data = read_manifest(run_dir)
            change(data)
            data["updated_utc"] = utc_stamp()
            write_json_atomic(manifest_path(run_dir), data)
    except OSError as exc:
        raise ReportError(
            f"cannot update manifest {manifest_path(run_dir)}: {exc.strerror or exc}"
        ) from exc
    return data


def begin_scenario(
    run_dir: Path,
    scenario: str,
    run_fields: Mapping[str, Any],
    unfinished: Sequence[str],
) -> None:
    """Record ``scenario`` as being written (``state: "writing"``) in a run's manifest.

    The folder and manifest are created when missing; ``run_fields`` as in
    :func:`update_manifest`; ``unfinished``, when not empty, marks the run unfinished
    with those scenarios before its first file (:func:`mark_unfinished`).

    Raises
    ------
    ReportError
        When the folder or the manifest cannot be written.
    """
    ensure_dir(run_dir)
    if unfinished:  # before its first file: a kill from here on is seen
        mark_unfinished(run_dir, unfinished)
    entry = {"state": "writing", "started_utc": utc_stamp()}
    update_manifest(run_dir, run_fields=run_fields, scenario=scenario, entry=entry)


def drop_scenario_entry(run_dir: str | os.PathLike[str], scenario: str) -> dict[str, Any]:
    """Remove a scenario's manifest entry; return the manifest as written.

    Used when writing a scenario new to the run stops part way (an error or Ctrl-C):
    the manifest then says again what is on disk, no entry for it.

    Raises
    ------
    ReportError
        When the manifest cannot be read or written.
    """

    def change(data: dict[str, Any]) -> None:
        data.setdefault("scenarios", {}).pop(scenario, None)

    return _edit_manifest(run_dir, change)


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
