"""The datasets loaded last, kept by their folder's content.

:func:`capacity.dataset.load_dataset` reads and validates a folder; a planner's session
(the notebook API, the app, a test suite) loads the same folder again and again. A
:class:`capacity.dataset.Dataset` is immutable, so loading a folder whose files are byte
for byte those read before can return that same Dataset; any edit, however small and
whatever the file's modification time, gives another key and a fresh read.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["LOAD_CACHE_SIZE", "cached_load", "folder_key"]

#: Folders kept (the least recently loaded is dropped first).
LOAD_CACHE_SIZE = 8

T = TypeVar("T")

_LOADED: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
_LOCK = threading.Lock()


def folder_key(directory: Path) -> tuple[Any, ...] | None:
    """Return what a dataset folder's Dataset depends on: its name and every entry's content.

    Parameters
    ----------
    directory : Path
        A dataset folder.

    Returns
    -------
    tuple or None
        The folder's name (a dataset without ``dataset.yaml`` is named after it) and,
        per entry in name order, its name and the SHA-256 of its bytes (None for a
        sub-folder); None when an entry cannot be read (such a folder is never cached).
        Equal keys load equal Datasets: a file edited, added, removed or renamed
        changes the key, whatever its modification time says.
    """
    try:
        entries = []
        for p in sorted(directory.iterdir()):
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None
            entries.append((p.name, digest))
        return (directory.resolve().name, tuple(entries))
    except OSError:
        return None


def cached_load(directory: Path, load: Callable[[Path], T]) -> T:
    """Return ``load(directory)``, or what it returned for the same folder content.

    Parameters
    ----------
    directory : Path
        A dataset folder.
    load : callable
        Reads and validates the folder (raises for bad data; nothing is kept then).

    Returns
    -------
    The loaded object, shared by every call with an equal :func:`folder_key`. A folder
    that changed while it was read is returned but not kept.
    """
    key = folder_key(directory)
    with _LOCK:
        if key is not None and key in _LOADED:
            _LOADED.move_to_end(key)
            return _LOADED[key]
    out = load(directory)
    if key is not None and folder_key(directory) == key:
        with _LOCK:
            _LOADED[key] = out
            while len(_LOADED) > LOAD_CACHE_SIZE:
                _LOADED.popitem(last=False)
    return out
