"""Input edge cases (issue 10): one cause, one finding that names it; penalty warnings."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from capacity.dataset import load_dataset, validate_directory
from capacity.validation import DataValidationError

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    d = tmp_path / "d"
    shutil.copytree(ROOT / "data", d)
    return d


def test_a_semicolon_separated_csv_is_one_finding_naming_the_separator(data: Path) -> None:
    p = data / "sites.csv"
    p.write_text(p.read_text(encoding="utf-8").replace(",", ";"), encoding="utf-8")
    found = validate_directory(data)
    assert len(found) == 1
    (f,) = found
    assert f.file == "sites.csv" and f.row == 1 and f.severity == "error"
    assert "separated by ';'" in f.message and "comma-separated" in f.message


def test_an_unsorted_periods_table_is_one_finding_naming_the_cause(data: Path) -> None:
    p = data / "periods.csv"
    df = pd.read_csv(p, dtype=str)
    df.iloc[::-1].to_csv(p, index=False)  # every quarter once, newest first
    found = validate_directory(data)
    assert len(found) == 1, [str(f) for f in found]
    (f,) = found
    assert f.file == "periods.csv" and f.row == 3 and f.column == "period"
    first, last = df["period"].iloc[0], df["period"].iloc[-1]
    assert "not in time order" in f.message and "sort periods.csv by period" in f.message
    assert f"from {first} to {last}" in f.message


def test_a_gap_in_the_periods_is_still_reported_by_row(data: Path) -> None:
    p = data / "periods.csv"
    df = pd.read_csv(p, dtype=str)
    df.drop(index=3).to_csv(p, index=False)
    found = [f for f in validate_directory(data) if f.file == "periods.csv"]
    assert [(f.row, f.message.split(" (")[0]) for f in found] == [
        (5, "periods must be consecutive quarters in time order")
    ]


def test_an_unmet_penalty_with_extra_zeros_is_warned(data: Path) -> None:
    p = data / "customers.csv"
    df = pd.read_csv(p, dtype=str)
    df.loc[0, "unmet_penalty_usd_per_h100e_period"] = (
        "12000000000"  # six extra zeros (nine exceed SOLVER_SAFE_MAX)
    )
    df.to_csv(p, index=False)
    ds = load_dataset(data)  # a warning, not an error
    (w,) = [f for f in ds.warnings if "implausible penalty" in f.message]
    assert (w.file, w.row, w.column) == ("customers.csv", 2, "unmet_penalty_usd_per_h100e_period")
    assert w.severity == "warning" and "2,181,818 times its highest price" in w.message
    # the bundled penalties (about 2x the price) pass
    assert not [f for f in load_dataset(ROOT / "data").warnings if "penalty" in f.message]


def test_a_breach_penalty_beyond_reason_is_warned(data: Path) -> None:
    p = data / "commitments.csv"
    df = pd.read_csv(p, dtype=str)
    df.loc[1, "breach_penalty_usd_per_mw"] = "800000000000"
    df.to_csv(p, index=False)
    (w,) = [f for f in load_dataset(data).warnings if "implausible penalty" in f.message]
    assert (w.file, w.row, w.column) == ("commitments.csv", 3, "breach_penalty_usd_per_mw")


def test_tiny_data_has_no_penalty_warning() -> None:
    with pytest.raises(DataValidationError):
        load_dataset(TINY / "nope")
    assert not [f for f in load_dataset(TINY).warnings if "penalty" in f.message]
