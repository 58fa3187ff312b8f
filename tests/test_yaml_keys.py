"""YAML mapping keys (issue 10): duplicates refused with both lines, merge keys applied."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from capacity.dataset import load_dataset
from capacity.safe_yaml import load_yaml
from capacity.validation import DataValidationError
from capacity.yaml_keys import DuplicateKeyError
from optimizer.analysis.sweep_errors import SweepSpecError
from optimizer.analysis.sweep_read import load_sweep

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"


def test_a_second_scenario_with_the_same_name_is_refused_with_both_lines(tmp_path: Path) -> None:
    data = tmp_path / "d"
    shutil.copytree(TINY, data)
    text = (data / "scenarios.yaml").read_text()
    n = len(text.splitlines())
    (data / "scenarios.yaml").write_text(text + "  neutral:\n    overrides: []\n")
    with pytest.raises(DataValidationError) as ei:
        load_dataset(data)
    (f,) = ei.value.findings
    assert f.file == "scenarios.yaml" and f.row == n + 1
    assert f"duplicate key 'neutral' at line {n + 1} (first at line 2)" in f.message


def test_an_axis_with_levels_twice_is_refused_at_its_line(tmp_path: Path) -> None:
    p = tmp_path / "s.yaml"
    p.write_text(
        f"data: {TINY}\n"  # 1
        "grid:\n"  # 2
        "  base: neutral\n"  # 3
        "  axes:\n"  # 4
        "    - name: d\n"  # 5
        "      override: {op: scale, table: demand, column: demand_h100e}\n"  # 6
        "      levels: [0.5, 1.0]\n"  # 7
        "      levels: [2.0]\n"  # 8
    )
    with pytest.raises(SweepSpecError) as ei:
        load_sweep(p)
    (f,) = ei.value.findings
    assert f.row == 8 and "duplicate key 'levels' at line 8 (first at line 7)" in f.message


def test_merge_keys_are_applied_and_own_keys_win() -> None:
    doc = load_yaml(
        "defaults: &d\n  op: scale\n  table: demand\n  factor: 1.5\n"
        "one:\n  <<: *d\n  factor: 2\n"
        "two:\n  <<: [*d, {source: x}]\n"
    )
    assert doc["one"] == {"op": "scale", "table": "demand", "factor": "2"}
    assert doc["two"] == {"op": "scale", "table": "demand", "factor": "1.5", "source": "x"}
    with pytest.raises(DuplicateKeyError):
        load_yaml("a: 1\nb: 2\na: 3\n")


def test_merge_keys_in_a_scenario_file(tmp_path: Path) -> None:
    data = tmp_path / "d"
    shutil.copytree(TINY, data)
    # the top level only allows 'scenarios'; anchors live on the first override
    (data / "scenarios.yaml").write_text(
        "scenarios:\n"
        "  neutral:\n    overrides: []\n"
        "  half:\n    overrides:\n"
        "      - &half {op: scale, table: demand, column: demand_h100e, factor: 0.5,"
        " source: assumption}\n"
        "  quarter:\n    overrides:\n      - <<: *half\n        factor: 0.25\n"
    )
    ds = load_dataset(data)
    from capacity.scenarios import apply_scenario

    base = ds.table("demand")["demand_h100e"].sum()
    q = apply_scenario(ds, "quarter").table("demand")["demand_h100e"].sum()
    assert q == pytest.approx(base * 0.25)


NFC, NFD = "z\u00fcrich", "zu\u0308rich"  # precomposed / decomposed "zürich"


def test_ids_that_differ_only_in_unicode_normalisation_are_one_site(tmp_path: Path) -> None:
    data = tmp_path / "d"
    shutil.copytree(TINY, data)
    for name in ("sites.csv", "scenarios.yaml"):
        p = data / name
        p.write_text(p.read_text(encoding="utf-8").replace("dc-1", NFC), encoding="utf-8")
    for name in ("site_grid.csv", "site_water.csv", "initial_fleet.csv"):
        p = data / name
        p.write_text(p.read_text(encoding="utf-8").replace("dc-1", NFD), encoding="utf-8")
    ds = load_dataset(data)  # no "unknown site 'zürich', did you mean 'zürich'?"
    assert set(ds.table("site_grid")["site"]) == {NFC} == set(ds.table("sites")["site"])
    sites = data / "sites.csv"
    lines = sites.read_text(encoding="utf-8").splitlines()
    sites.write_text("\n".join([*lines, lines[1].replace(NFC, NFD)]) + "\n", encoding="utf-8")
    with pytest.raises(DataValidationError) as ei:
        load_dataset(data)
    assert any("duplicate key (site)" in f.message for f in ei.value.findings)
