"""Atomic file writes (temporary name, fsync, rename), the directory check and the report's error.

Each file is written to a dot-prefixed temporary name in its target directory, flushed
to disk, and moved into place with :func:`os.replace`; a crash never leaves a half file
under a real name, and dot-files are ignored by ``pyarrow.dataset`` and by the report
globs.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = [
    "ReportError",
    "atomic_write",
    "ensure_dir",
    "fsync_dir",
    "remove_tree",
    "write_csv_atomic",
    "write_json_atomic",
    "write_text_atomic",
]


class ReportError(RuntimeError):
    """The report cannot be written or read; the message names the path."""


def ensure_dir(path: Path) -> None:
    """Create ``path`` (and parents) or raise a ReportError naming the culprit.

    Parameters
    ----------
    path : pathlib.Path
        The directory wanted.

    Raises
    ------
    ReportError
        When a parent is a file, the directory cannot be created or is not writable.
    """
    for parent in [*reversed(path.parents), path]:
        if parent.exists() and not parent.is_dir():
            raise ReportError(f"cannot write report: {parent} exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportError(f"cannot create report directory {path}: {exc.strerror or exc}") from exc
    if not os.access(path, os.W_OK | os.X_OK):
        raise ReportError(f"cannot write report: directory {path} is not writable")


def _json_default(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if hasattr(value, "value"):  # Enums
        return value.value
    return str(value)


def fsync_dir(directory: Path) -> None:
    """Flush a folder's entries (new, renamed or removed names) to disk; best effort.

    Parameters
    ----------
    directory : pathlib.Path
        The folder; an error opening or flushing it is ignored (some file systems
        cannot flush a folder).
    """
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _writable_and_again(func: Callable[[str], Any], path: str, _exc: Any) -> None:
    """``shutil.rmtree``'s error handler: make the folder holding ``path`` writable, retry.

    A scenario folder made read-only (``chmod a-w``) by its owner keeps its files until
    the folder is writable again; the writer owns it and may make it so.
    """
    parent = os.path.dirname(path)
    with contextlib.suppress(OSError):
        os.chmod(parent, os.stat(parent).st_mode | stat.S_IWUSR | stat.S_IXUSR)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, os.stat(path).st_mode | stat.S_IWUSR | stat.S_IXUSR | stat.S_IRUSR)
    with contextlib.suppress(OSError):
        func(path)


def remove_tree(path: Path, *, reraise: bool = True) -> bool:
    """Remove a folder this process wrote (or set aside), finished even if interrupted.

    A folder made read-only inside is made writable first. A Ctrl-C (or SIGTERM, read
    as one) that arrives during the removal does not leave it half done, with table
    files under a hidden folder that a reader's glob may still match: the removal goes
    on to its end and the interrupt is raised after (``reraise``), or dropped when the
    caller is already on its way out with another exception.

    Parameters
    ----------
    path : pathlib.Path
        The folder (nothing happens when it does not exist).
    reraise : bool
        Raise an interrupt that came during the removal, once it is done.

    Returns
    -------
    bool
        True when the folder is gone.
    """
    pending: BaseException | None = None
    for _ in range(100):  # each pass removes what it can; an interrupt only restarts it
        try:
            if os.path.lexists(path):
                shutil.rmtree(path, onerror=_writable_and_again)
            break
        except KeyboardInterrupt as exc:
            pending = exc
        except OSError:
            break
    if pending is not None and reraise:
        raise pending
    return not os.path.lexists(path)


def atomic_write(path: Path, write: Callable[[Path], None]) -> Path:
    """Write ``path`` through ``write(tmp)`` on a temporary name, then rename it.

    Parameters
    ----------
    path : pathlib.Path
        Target file; its folder must exist.
    write : callable
        Writes the content to the temporary path it is given.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    OSError
        When the file cannot be written (the temporary file is removed).
    """
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
    fsync_dir(path.parent)
    return path


def write_text_atomic(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`atomic_write`).

    Parameters
    ----------
    path : pathlib.Path
        Target file; its folder must exist.
    text : str
        The whole content.

    Returns
    -------
    pathlib.Path
        ``path``.
    """

    def write(tmp: Path) -> None:
        tmp.write_text(text, encoding="utf-8")

    return atomic_write(path, write)


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
    return write_text_atomic(Path(path), text + "\n")


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
    return atomic_write(Path(path), lambda tmp: frame.to_csv(tmp, index=False))
