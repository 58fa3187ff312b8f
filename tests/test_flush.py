"""The report's flush to disk: one syncfs on a local Linux file system, else an fsync a file.

A batch case's table files are written into a hidden staging folder and must be on disk
before the folder moves into place (:mod:`optimizer.output.flush`).
"""

from __future__ import annotations

import ctypes
import errno
import os
from pathlib import Path

import pytest
from test_report import fake_result

from optimizer.output import flush
from optimizer.output.atomic import ReportError
from optimizer.output.parquet_tables import RESULT_SCHEMAS
from optimizer.output.report import file_metadata, write_scenario_folder

_LINES = """\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
36 22 0:32 / /mnt/remote rw,nosuid,nodev master:7 - fuse.sshfs host:/data rw,user_id=0
41 22 0:45 / /srv/nfs rw,relatime shared:9 - nfs4 server:/export rw,vers=4.2
50 22 0:51 / /dev/shm rw,nosuid,nodev shared:3 - tmpfs tmpfs rw
"""


def test_mount_type_reads_the_type_after_the_separator() -> None:
    """The type follows the " - " separator, whatever optional fields come before it."""
    assert flush.mount_type(_LINES, 254, 0) == "ext4"
    assert flush.mount_type(_LINES, 0, 32) == "fuse.sshfs"
    assert flush.mount_type(_LINES, 0, 45) == "nfs4"
    assert flush.mount_type(_LINES, 0, 51) == "tmpfs"
    assert flush.mount_type(_LINES, 9, 9) is None
    assert flush.mount_type("", 254, 0) is None


def test_only_local_file_systems_take_one_syncfs() -> None:
    """A FUSE or network mount is flushed file by file (its syncfs may not reach storage)."""
    for kind in ("ext4", "xfs", "btrfs", "tmpfs", "overlay"):
        assert kind in flush.SYNCFS_TYPES
    for kind in ("fuse.sshfs", "nfs4", "cifs", "9p", "vfat", None):
        assert kind not in flush.SYNCFS_TYPES


@pytest.mark.skipif(not Path("/proc/self/mountinfo").exists(), reason="no /proc (not Linux)")
def test_filesystem_type_of_this_machine() -> None:
    """/proc is of type proc; the test folder's type is a name from mountinfo."""
    assert flush.filesystem_type("/proc") == "proc"


def _recording_syncfs(monkeypatch: pytest.MonkeyPatch, result: int = 0) -> list[str]:
    """Make flush use a syncfs that records the folder it is given and returns ``result``."""
    seen: list[str] = []
    real = flush._syncfs()

    def syncfs(fd: int) -> int:
        seen.append(os.readlink(f"/proc/self/fd/{fd}"))
        if result != 0:
            ctypes.set_errno(errno.EIO)
            return result
        return real(fd) if real is not None else 0

    monkeypatch.setattr(flush, "_syncfs", lambda: syncfs)
    monkeypatch.setattr(flush, "filesystem_type", lambda path: "ext4")
    return seen


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="no /proc (not Linux)")
def test_a_scenario_folder_on_a_local_file_system_is_flushed_by_one_syncfs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One syncfs of the staging folder, before the move; no fsync of each file."""
    seen = _recording_syncfs(monkeypatch)
    fsynced: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        fsynced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    result = fake_result()
    sdir = tmp_path / "scenario=neutral"
    files = write_scenario_folder(result, sdir, file_metadata(result, scenario="neutral"))
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert seen == [str(tmp_path / f".scenario=neutral.partial-{os.getpid()}")]
    assert fsynced == [str(tmp_path)]  # the parent, after the move: nothing file by file
    assert sorted(files) == sorted(RESULT_SCHEMAS)
    assert sorted(p.name for p in sdir.iterdir()) == sorted(f"{n}.parquet" for n in RESULT_SCHEMAS)


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="no /proc (not Linux)")
def test_a_failed_flush_names_the_folder_and_keeps_the_earlier_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """syncfs failing (EIO) is a ReportError naming the folder; the earlier folder stays whole."""
    result = fake_result()
    sdir = tmp_path / "scenario=neutral"
    write_scenario_folder(result, sdir, file_metadata(result, scenario="neutral"))
    before = {p.name: p.read_bytes() for p in sdir.iterdir()}
    _recording_syncfs(monkeypatch, result=-1)
    stage = tmp_path / f".scenario=neutral.partial-{os.getpid()}"
    with pytest.raises(ReportError) as err:
        write_scenario_folder(result, sdir, file_metadata(result, scenario="neutral"))
    assert str(err.value) == (
        f"cannot flush the report files in {stage} to disk: {os.strerror(errno.EIO)}"
    )
    assert {p.name: p.read_bytes() for p in sdir.iterdir()} == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
