"""Loading a folder again returns the Dataset already validated, never a stale one.

``capacity.load_dataset`` keeps the last folders it loaded by their name and every
file's bytes (``capacity.load_cache.folder_key``) and ``apply_scenario`` keeps each scenario
applied to a Dataset on it. These tests hold the kinds that such caches get wrong: an
edit that keeps the file's size and modification time, a file added or renamed, a
folder of the same files under another name, and a pipeline that would mutate the
shared frames.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from capacity import apply_scenario, load_dataset
from capacity.dataset import Dataset
from capacity.load_cache import folder_key
from capacity.revalidate import table_digest
from capacity.validation import DataValidationError

SITES_LINE = "dc-1,Site (Zürich)/A,NO,10,5,100,20,"


def test_the_same_files_load_the_same_dataset_and_its_scenarios(tiny_dir: Path) -> None:
    first = load_dataset(tiny_dir)
    again = load_dataset(tiny_dir)
    assert again is first
    squeeze = apply_scenario(first, "squeeze")
    assert apply_scenario(again, "squeeze") is squeeze

    # the kept scenario holds the scenario's data: CoWoS capacity x 0.1
    def cowos(ds: Dataset) -> np.ndarray:
        t = ds.table("supply_resources")
        return t.loc[t["resource"] == "cowos_wafers", "capacity"].to_numpy(dtype=float)

    assert len(cowos(first)) > 0
    np.testing.assert_allclose(cowos(squeeze), cowos(first) * 0.1, rtol=1e-12)


def test_an_edit_of_the_same_size_and_time_is_read(tiny_dir: Path) -> None:
    first = load_dataset(tiny_dir)
    assert first.table("sites")["max_it_mw"].iloc[0] == 100.0
    sites = tiny_dir / "sites.csv"
    stat = sites.stat()
    text = sites.read_text(encoding="utf-8")
    assert SITES_LINE in text
    # 100 -> 900 MW: same byte count, modification time set back to the old one
    sites.write_text(text.replace(SITES_LINE, SITES_LINE.replace(",100,", ",900,")), "utf-8")
    os.utime(sites, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert sites.stat().st_size == stat.st_size
    assert sites.stat().st_mtime_ns == stat.st_mtime_ns
    edited = load_dataset(tiny_dir)
    assert edited is not first
    assert edited.table("sites")["max_it_mw"].iloc[0] == 900.0
    assert first.table("sites")["max_it_mw"].iloc[0] == 100.0  # the earlier one unchanged


def test_a_file_added_or_renamed_changes_the_key(tiny_dir: Path) -> None:
    first = load_dataset(tiny_dir)
    key = folder_key(tiny_dir)
    (tiny_dir / "scenarios.yaml").rename(tiny_dir / "scenarios.yml")
    assert folder_key(tiny_dir) != key
    with pytest.raises(DataValidationError, match="rename scenarios.yml"):
        load_dataset(tiny_dir)
    (tiny_dir / "scenarios.yml").rename(tiny_dir / "scenarios.yaml")
    assert folder_key(tiny_dir) == key
    assert load_dataset(tiny_dir) is first


def test_a_copy_under_another_name_is_named_after_its_folder(tiny_dir: Path) -> None:
    other = tiny_dir.parent / "tiny-copy"
    shutil.copytree(tiny_dir, other)
    a, b = load_dataset(tiny_dir), load_dataset(other)
    assert (a.name, b.name) == ("tiny", "tiny-copy")
    assert a.tables_hash == b.tables_hash


def test_a_solve_leaves_the_kept_dataset_as_loaded(tiny_dir: Path) -> None:
    from optimizer import solve

    ds = load_dataset(tiny_dir)
    before = {name: table_digest(name, df) for name, df in ds.tables.items()}
    for scenario in ("neutral", "squeeze"):
        res = solve(apply_scenario(ds, scenario))
        assert res.status.value == "optimal"
    after = {name: table_digest(name, df) for name, df in load_dataset(tiny_dir).tables.items()}
    assert after == before
