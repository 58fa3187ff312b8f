"""Run folders: run IDs, the exclusive claim of a run directory, scenario partitions, UTC stamps.

Layout of a run folder (Hive partitioning on ``scenario``)::

    <out>/<run_id>/manifest.json
    <out>/<run_id>/units.csv                     (only with ``units=True``)
    <out>/<run_id>/scenario=<name>/<table>.parquet
    <out>/<run_id>/.unfinished.json              (only while the run is written)

A run written in several steps (the scenarios of one ``capacity solve``, the paths of
a replan, the plans of alternatives or a hedge) holds ``.unfinished.json`` (its
writer's pid and the scenarios requested) from its claim until its last file: a
writer killed part way (``kill -9``, a power cut) leaves it, and
:func:`optimizer.notebook.read_run` warns instead of reading part of a run as the
whole (:func:`unfinished_note`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote, unquote

from capacity.limits import MAX_SCENARIO_NAME_BYTES, scenario_name_problem
from optimizer.output.atomic import ReportError, ensure_dir

__all__ = [
    "claim_run_dir",
    "claimed_run_dir",
    "default_run_id",
    "reserve_run_dir",
    "MAX_SCENARIO_NAME_BYTES",
    "scenario_dir",
    "scenario_name_from_dir",
    "scenario_name_problem",
    "aside_dir",
    "aside_parts",
    "finish_run",
    "mark_unfinished",
    "pid_alive",
    "unfinished_note",
    "utc_stamp",
]

UNFINISHED = ".unfinished.json"
"""Marker of a run folder still being written (or whose writer died part way)."""


def aside_dir(sdir: Path, kind: str, pid: int | None = None) -> Path:
    """Return the hidden sibling a writer keeps beside scenario folder ``sdir``.

    ``kind`` is ``partial`` (the staging folder a new write fills) or ``old`` (the
    earlier folder set aside while the new one moves in); the name ends in the
    writer's process id, ``.<name>.<kind>-<pid>``, so what a killed writer left is
    told from a live writer's (:func:`aside_parts`).
    """
    return sdir.with_name(f".{sdir.name}.{kind}-{os.getpid() if pid is None else pid}")


def aside_parts(path: Path) -> tuple[str, str, int | None]:
    """Return (scenario folder name, kind, pid) of an :func:`aside_dir` name.

    ``pid`` is None when the name does not end in a process id.
    """
    name, _, head = path.name.rpartition("-")
    home, _, kind = name[1:].rpartition(".")
    return home, kind, int(head) if head.isdigit() else None


def mark_unfinished(run_dir: str | os.PathLike[str], requested: Sequence[str] = ()) -> None:
    """Mark a run folder as being written: ``.unfinished.json`` (pid, requested, time).

    Parameters
    ----------
    run_dir : path-like
        The claimed run folder (exists).
    requested : sequence of str
        The scenarios the run is to hold (empty when not known up front).
    """
    from optimizer.output.atomic import write_json_atomic

    doc = {"pid": os.getpid(), "requested": list(requested), "started_utc": utc_stamp()}
    write_json_atomic(Path(run_dir) / UNFINISHED, doc)


def finish_run(run_dir: str | os.PathLike[str]) -> None:
    """Remove a run folder's ``.unfinished.json``: every file of the run is written."""
    with contextlib.suppress(FileNotFoundError):
        (Path(run_dir) / UNFINISHED).unlink()


def unfinished_note(run_dir: str | os.PathLike[str], held: Sequence[str]) -> str:
    """Return why a run folder is not whole ("" when it is finished).

    Parameters
    ----------
    run_dir : path-like
        A run folder.
    held : sequence of str
        The scenarios it holds (read).

    Returns
    -------
    str
        Empty when the folder has no ``.unfinished.json``; else a sentence naming the
        writer (still running, or stopped) and the requested scenarios it lacks.
    """
    path = Path(run_dir) / UNFINISHED
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ""
    except (OSError, ValueError):
        doc = {}
    pid = int(doc.get("pid") or 0) if isinstance(doc, dict) else 0
    requested = list(doc.get("requested") or []) if isinstance(doc, dict) else []
    alive = pid > 0 and pid_alive(pid)
    who = f"its writer (pid {pid}) is still writing it" if alive else "its writer stopped part way"
    missing = [n for n in requested if n not in held]
    lacks = f"; it lacks {', '.join(missing)} of the {len(requested)} requested" if missing else ""
    return f"{run_dir}: this run is not finished ({who}{lacks}): read as it is, it is part of a run"


def pid_alive(pid: int) -> bool:
    """Return True when process ``pid`` exists (one of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def utc_stamp() -> str:
    """Return the current UTC time as ``YYYY-MM-DDTHH:MM:SSZ`` (manifest time stamps).

    Returns
    -------
    str
        E.g. ``"2026-01-02T03:04:05Z"``.
    """
    return _iso(_utc_now())


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
    ensure_dir(root)
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


@contextlib.contextmanager
def claimed_run_dir(
    out_dir: str | os.PathLike[str], run_id: str, requested: Sequence[str] = ()
) -> Iterator[Path]:
    """Claim a run directory (:func:`claim_run_dir`) for a block that fills it whole.

    When the block raises (a write error, Ctrl-C, SIGTERM turned into an interrupt) the
    directory and every file the block wrote are removed before the exception goes on,
    so an error message never sits beside half a report. While the block runs the
    folder holds ``.unfinished.json`` (:func:`mark_unfinished`), removed when it ends
    well, so a writer killed outright leaves a folder read_run warns about.

    Parameters
    ----------
    out_dir : path-like
        Report root; created when missing.
    run_id : str
        The ID wanted (``-2``, ``-3`` ... when taken).
    requested : sequence of str
        The scenarios the run is to hold, for the unfinished marker (a killed run's
        warning names those it lacks).

    Yields
    ------
    pathlib.Path
        The new, empty directory.

    Raises
    ------
    ReportError
        As :func:`claim_run_dir`; anything the block raises, after the clean-up.
    """
    run_dir = claim_run_dir(out_dir, run_id)
    try:
        mark_unfinished(run_dir, requested)  # a kill -9 part way leaves it: read_run warns
        yield run_dir
    except BaseException:
        shutil.rmtree(run_dir, ignore_errors=True)
        raise
    finish_run(run_dir)


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
        When ``scenario`` cannot name a folder (:func:`scenario_name_problem`).
    """
    problem = scenario_name_problem(scenario)
    if problem:
        raise ValueError(problem)
    return Path(run_dir) / f"scenario={quote(scenario, safe='')}"


def scenario_name_from_dir(path: str | os.PathLike[str]) -> str:
    """Return the scenario of a ``scenario=<name>`` directory (URI escape decoded)."""
    name = Path(path).name
    if not name.startswith("scenario="):
        raise ValueError(f"{path} is not a scenario=<name> directory")
    return unquote(name.split("=", 1)[1])
