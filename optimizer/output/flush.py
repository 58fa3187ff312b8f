"""Flushing a folder of new files to disk: one file-system flush where Linux offers it.

A batch case writes its table files (one per result table) into a hidden staging
folder and moves the folder into place once they are on disk. An ``fsync`` of each file
waits for one journal commit each; Linux's ``syncfs(2)`` flushes every file of the
folder's file system with one. Measured on this project's 2-core ext4 machine (29 files
of 20 kB written and flushed, median of 10 runs): 110-120 ms with an ``fsync`` a file
against 24-27 ms with one ``syncfs`` while another process installed packages; a batch
case's whole report, idle, 44-47 ms against 36-38 ms (``benchmarks/RESULTS.md``,
twelfth pass).

``syncfs`` is used only on the local file systems whose flush covers the files' data
and names (:data:`SYNCFS_TYPES`, read from ``/proc/self/mountinfo``): on a FUSE or
network mount it may not reach the storage, so there each file is flushed on its own.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from optimizer.output.atomic import fsync_dir

__all__ = ["SYNCFS_TYPES", "filesystem_type", "flush_written", "mount_type"]

#: File systems on which one ``syncfs`` flushes every file written (data, inodes and
#: folder entries) as an ``fsync`` of each would.
SYNCFS_TYPES = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "tmpfs", "overlay"})


@functools.cache
def _syncfs() -> Callable[[int], int] | None:
    """Return the C library's ``syncfs`` (None where there is none, e.g. macOS)."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def mount_type(mountinfo: str, major: int, minor: int) -> str | None:
    """Return the file-system type of device ``major:minor`` in a ``mountinfo`` text.

    Parameters
    ----------
    mountinfo : str
        The text of ``/proc/self/mountinfo`` (proc(5): ``<id> <parent> <major:minor>
        <root> <mount point> <options> [<optional fields>] - <type> <source> <options>``).
    major, minor : int
        The device numbers (``os.major`` / ``os.minor`` of ``st_dev``).

    Returns
    -------
    str or None
        The type of the first line of that device; None when no line has it.
    """
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) > 4 and fields[2] == f"{major}:{minor}" and "-" in fields[5:]:
            at = fields.index("-", 5)
            return fields[at + 1] if at + 1 < len(fields) else None
    return None


@functools.cache
def _type_of_device(major: int, minor: int) -> str | None:
    """:func:`mount_type` of this process's mounts (None where there is no mountinfo)."""
    try:
        text = Path("/proc/self/mountinfo").read_text()
    except OSError:
        return None
    return mount_type(text, major, minor)


def filesystem_type(path: str | os.PathLike[str]) -> str | None:
    """Return the type (``ext4``, ``nfs4``, ``fuse.sshfs`` ...) of the file system holding ``path``.

    Parameters
    ----------
    path : path-like
        An existing file or folder.

    Returns
    -------
    str or None
        The type ``/proc/self/mountinfo`` gives for the path's device; None where
        there is no such file (not Linux) or no line for the device.

    Raises
    ------
    OSError
        When ``path`` cannot be read (``os.stat``).
    """
    dev = os.stat(path).st_dev
    return _type_of_device(os.major(dev), os.minor(dev))


def flush_written(folder: Path, files: Iterable[Path]) -> None:
    """Flush ``files`` just written in ``folder``, and the folder's entries, to disk.

    One ``syncfs`` of the folder's file system when it is one of :data:`SYNCFS_TYPES`
    and the C library has the call; otherwise an ``fsync`` of each file, then of the
    folder.

    Parameters
    ----------
    folder : pathlib.Path
        The folder holding the files.
    files : iterable of pathlib.Path
        The files written in it.

    Raises
    ------
    OSError
        When the flush fails (an I/O error, a full disk); its filename is ``folder``
        for ``syncfs``, the file for an ``fsync``.
    """
    sync = _syncfs() if filesystem_type(folder) in SYNCFS_TYPES else None
    if sync is None:
        for path in files:
            with open(path, "rb+") as fh:
                os.fsync(fh.fileno())
        fsync_dir(folder)
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        if sync(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), str(folder))
    finally:
        os.close(fd)
