"""Input edge cases (issue 10): one cause, one finding that names it; penalty warnings."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from capacity.dataset import load_dataset, validate_directory
from capacity.schema import SPECS
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


def _site_cell(data: Path, column: str, value: str) -> None:
    p = data / "sites.csv"
    df = pd.read_csv(p, dtype=str, keep_default_na=False)
    df.loc[0, column] = value
    df.to_csv(p, index=False)


@pytest.mark.parametrize("value", ["-200", "inf"])
def test_a_bad_initial_capacity_is_one_finding_not_a_cascade(data: Path, value: str) -> None:
    """-200 also made initial_liquid_mw 'exceed' it; inf also 'exceeded' max_it_mw."""
    _site_cell(data, "initial_it_mw", value)
    found = validate_directory(data)
    assert [(f.file, f.row, f.column) for f in found] == [("sites.csv", 2, "initial_it_mw")]


def test_a_real_cross_column_error_is_still_reported(data: Path) -> None:
    _site_cell(data, "initial_liquid_mw", "500")  # above New Carlisle's 200 MW initial IT
    (f,) = validate_directory(data)
    assert (f.file, f.row, f.column, f.value) == ("sites.csv", 2, "initial_liquid_mw", "500")
    assert f.message == "exceeds initial_it_mw (200 MW)"


@pytest.mark.parametrize("edit", ["delete", "misspell"])
def test_a_quarter_missing_from_periods_is_one_finding_per_file(data: Path, edit: str) -> None:
    """Deleting or misspelling 2025Q2 in periods.csv used to add 37 'unknown period' rows."""
    p = data / "periods.csv"
    df = pd.read_csv(p, dtype=str, keep_default_na=False)
    if edit == "delete":
        df = df[df["period"] != "2025Q2"]
    else:
        df.loc[df["period"] == "2025Q2", "period"] = "2025-Q2"
    df.to_csv(p, index=False)
    found = validate_directory(data)
    own = [f for f in found if f.file == "periods.csv"]
    assert len(own) == 1 and own[0].severity == "error"
    folded = [f for f in found if f.file != "periods.csv"]
    rows_naming = {
        name: int((pd.read_csv(data / name, dtype=str)["period"] == "2025Q2").sum())
        for name in {f.file for f in folded}
    }
    assert set(rows_naming) >= {"demand.csv", "site_grid.csv", "supply_resources.csv"}
    for f in folded:
        assert f.value == "2025Q2" and f.column == "period"
        n = rows_naming[f.file]
        assert f.message.startswith(f"unknown period '2025Q2' in {n} rows of {f.file} (rows ")
        assert "periods.csv has an error of its own: fix it first" in f.message
    assert len(folded) == len(rows_naming)


def test_an_empty_csv_names_the_header_it_expects(data: Path) -> None:
    """pandas said 'No columns to parse from file'; the schema knows the header."""
    from capacity.schema import SPECS

    (data / "customers.csv").write_text("\n", encoding="utf-8")
    (f,) = validate_directory(data)
    assert (f.file, f.row, f.severity) == ("customers.csv", None, "error")  # no row in it
    header = ",".join(SPECS["customers"].column_names)
    assert f.message == f"the file is empty: write the header row {header} then the rows"


def test_a_parquet_beside_the_csv_of_a_table_is_a_warning(data: Path) -> None:
    """CSV wins when both exist: the ignored Parquet file is named, not silently skipped."""
    pd.read_csv(data / "sites.csv").to_parquet(data / "sites.parquet")
    (f,) = validate_directory(data)
    assert (f.severity, f.file) == ("warning", "sites.parquet")
    assert f.message == "sites.csv is read and sites.parquet beside it is ignored; remove one"


@pytest.mark.parametrize(
    ("table", "wrong"),
    [
        ("initial_fleet", "initial_fleets"),
        ("site_pipeline", "site_pipelines"),
        ("contract_terms", "contract_term"),
        ("training_clusters", "training_cluster"),
        ("ppas", "ppa"),
        ("migration", "migrations"),
        ("carbon_policy", "carbon_policies"),
    ],
)
def test_a_table_file_under_a_near_name_is_an_error_not_a_plan_without_it(
    data: Path, table: str, wrong: str
) -> None:
    (data / f"{table}.csv").rename(data / f"{wrong}.csv")
    found = validate_directory(data)
    errors = [f for f in found if f.severity == "error"]
    assert [f.file for f in errors] == [f"{wrong}.csv"], [str(f) for f in found]
    assert f"did you mean {table}.csv?" in errors[0].message
    with pytest.raises(DataValidationError):
        load_dataset(data)


def test_other_files_that_name_no_table_are_warned_and_the_data_still_loads(data: Path) -> None:
    shutil.copy(data / "ppas.csv", data / "ppa.csv")  # a spare copy beside the table
    shutil.copy(data / "demand.csv", data / "notes.csv")  # nothing like a table
    found = {f.file: f for f in validate_directory(data)}
    spare, notes = found["ppa.csv"], found["notes.csv"]
    assert spare.severity == "warning" and "ppas.csv beside it" in spare.message
    assert notes.severity == "warning" and "names no table" in notes.message
    assert {f.file for f in load_dataset(data).warnings} >= {"ppa.csv", "notes.csv"}


def _set(data: Path, table: str, row: int, column: str, value: str) -> None:
    p = data / f"{table}.csv"
    df = pd.read_csv(p, dtype=str, keep_default_na=False)
    df.loc[row - 2, column] = value  # row as the findings number it (header = 1)
    df.to_csv(p, index=False)


def test_a_pipeline_above_the_site_maximum_is_an_error_at_its_first_row_over(data: Path) -> None:
    # new_carlisle: initial 200 MW, max 2,040 MW; its first pipeline row (100 MW in
    # 2025Q2) made 1,840 MW fills the site exactly (allowed), the next row is over
    pipe = pd.read_csv(data / "site_pipeline.csv")
    first = int(pipe.index[pipe["site"] == "new_carlisle"][0]) + 2
    _set(data, "site_pipeline", first, "it_mw", "1840")
    nc = pipe[pipe["site"] == "new_carlisle"]
    over = int(nc.index[1]) + 2  # the second new_carlisle row tips it over
    want = 200 + 1840 + float(nc["it_mw"].iloc[1])
    found = [f for f in validate_directory(data) if f.severity == "error"]
    assert [(f.file, f.row, f.column) for f in found] == [("site_pipeline.csv", over, "it_mw")]
    assert f"is {want:g} MW, above the site's max_it_mw (2040 MW)" in found[0].message


def test_pipeline_liquid_above_its_it_mw_is_an_error(data: Path) -> None:
    _set(data, "site_pipeline", 2, "liquid_mw", "5000")
    found = [f for f in validate_directory(data) if f.severity == "error"]
    assert [(f.file, f.row, f.column, f.value) for f in found] == [
        ("site_pipeline.csv", 2, "liquid_mw", "5000")
    ]


def test_a_reversed_or_overlapping_ppa_step_is_an_error(data: Path) -> None:
    # talen_susquehanna: rows 2 (2024Q1-2026Q1) and 3 (2026Q2-2028Q4)
    _set(data, "ppas", 2, "to_period", "2023Q1")
    found = [f for f in validate_directory(data) if f.severity == "error"]
    assert [(f.row, f.column, f.value) for f in found] == [(2, "to_period", "2023Q1")]
    _set(data, "ppas", 2, "to_period", "2026Q2")  # one quarter shared with row 3
    found = [f for f in validate_directory(data) if f.severity == "error"]
    assert [(f.row, f.column, f.value) for f in found] == [(3, "from_period", "2026Q2")]
    assert "overlaps row 2 of contract 'talen_susquehanna'" in found[0].message
    _set(data, "ppas", 2, "to_period", "2026Q1")
    assert not [f for f in validate_directory(data) if f.severity == "error"]


def test_a_blank_line_keeps_the_row_numbers_below_it_and_is_one_finding(data: Path) -> None:
    p = data / "customers.csv"
    lines = p.read_text(encoding="utf-8").split("\n")
    lines[4] = lines[4].replace("8000", "abc")  # ec2_gpu: file row 5 before the blank line
    lines.insert(2, "")  # a blank file row 3: the bad cell is now on file row 6
    p.write_text("\n".join(lines), encoding="utf-8")
    found = [(f.row, f.column, f.value) for f in validate_directory(data) if f.severity == "error"]
    assert sorted(found, key=str) == sorted(
        [(3, None, None), (6, "unmet_penalty_usd_per_h100e_period", "abc")], key=str
    )


def test_an_unclosed_quote_and_a_long_row_are_named_by_their_file_row(data: Path) -> None:
    p = data / "customers.csv"
    good = p.read_text(encoding="utf-8")
    n = len(good.strip().split("\n"))  # the header and the data rows
    p.write_text(good + 'foo,"Foo,1,2,3\n', encoding="utf-8")
    (f,) = validate_directory(data)
    assert (f.file, f.row) == ("customers.csv", n + 1) and "never closed" in f.message
    p.write_text(good + "foo,Foo,1,2,3,4,5\n", encoding="utf-8")
    (f,) = validate_directory(data)
    assert (f.file, f.row) == ("customers.csv", n + 1) and "has 7 cells" in f.message


@pytest.mark.parametrize(("table", "extra"), [("demand", ",x"), ("workloads", ",0.9,1")])
def test_extra_cells_on_the_first_data_row_are_one_finding(
    data: Path, table: str, extra: str
) -> None:
    """pandas reads such a row's extra cells as an index and shifts every column left.

    That gave hundreds of findings about shifted values (800 for one extra cell in
    demand.csv), none about the cause; the same cells on row 3 were one finding.
    """
    p = data / f"{table}.csv"
    lines = p.read_text(encoding="utf-8").split("\n")
    header = len(lines[0].split(","))
    lines[1] += extra
    p.write_text("\n".join(lines), encoding="utf-8")
    (f,) = validate_directory(data)
    cells = header + extra.count(",")
    assert (f.severity, f.file, f.row) == ("error", f"{table}.csv", 2)
    assert f"row 2 has {cells} cells where the header has {header}" in f.message


def test_a_column_named_twice_in_the_header_is_named_as_such(data: Path) -> None:
    """pandas renames the second one 'workload.1', a name the file never holds."""
    p = data / "workloads.csv"
    lines = p.read_text(encoding="utf-8").split("\n")
    first = lines[0].split(",")[0]
    lines[0] += f",{first}"
    lines[1:] = [ln + ",x" if ln else ln for ln in lines[1:]]
    p.write_text("\n".join(lines), encoding="utf-8")
    (f,) = validate_directory(data)
    assert (f.severity, f.file, f.row, f.column) == ("error", "workloads.csv", 1, first)
    assert f"column {first!r} is named twice in the header row" in f.message


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_byte_order_mark_is_read_with_a_warning(data: Path, encoding: str) -> None:
    p = data / "demand.csv"
    p.write_bytes(p.read_text(encoding="utf-8").encode(encoding))
    (f,) = validate_directory(data)
    assert (f.severity, f.file) == ("warning", "demand.csv") and encoding.upper() in f.message
    assert load_dataset(data).table("demand").equals(load_dataset(ROOT / "data").table("demand"))


@pytest.mark.parametrize("wrong", ["scenarios.yml", "scenario.yaml", "Scenarios.yaml"])
def test_a_scenarios_file_under_a_near_name_is_an_error_not_a_run_without_scenarios(
    data: Path, wrong: str
) -> None:
    (data / "scenarios.yaml").rename(data / wrong)
    found = [f for f in validate_directory(data) if f.severity == "error"]
    assert [(f.file, f.message) for f in found] == [
        (wrong, f"not read: the file must be named scenarios.yaml; rename {wrong}")
    ]


def test_an_onsite_plant_built_above_its_cap_is_an_error_not_an_infeasible_plan(
    data: Path,
) -> None:
    g = pd.read_csv(data / "onsite_generation.csv")
    cap = float(g["max_mw"].iloc[0])
    _set(data, "onsite_generation", 2, "initial_mw", f"{cap + 110:g}")
    found = [f for f in validate_directory(data) if f.severity == "error"]
    assert [(f.file, f.row, f.column) for f in found] == [
        ("onsite_generation.csv", 2, "initial_mw")
    ]
    assert f"exceeds max_mw ({cap:g} MW)" in found[0].message
    _set(data, "onsite_generation", 2, "initial_mw", f"{cap:g}")  # at the cap exactly: fine
    assert not [f for f in validate_directory(data) if f.severity == "error"]


def test_an_initial_fleet_above_its_sites_halls_is_an_error_not_an_infeasible_plan(
    data: Path,
) -> None:
    # northern_virginia: 650 MW of halls in 2025Q1 (no pipeline by then); its cohorts
    # draw 537 MW; 80,000 more H100 (1.4 kW each) in row 2 make 537 + 112 = 649 MW
    # (fits), 81,000 more make 650.4 MW (over)
    fleet = pd.read_csv(data / "initial_fleet.csv")
    base = int(fleet.loc[0, "chips"])
    _set(data, "initial_fleet", 2, "chips", str(base + 80_000))
    assert not [f for f in validate_directory(data) if f.severity == "error"]
    _set(data, "initial_fleet", 2, "chips", str(base + 81_000))
    found = [f for f in validate_directory(data) if f.severity == "error"]
    last = int(fleet.index[fleet["site"] == "northern_virginia"][-1]) + 2
    assert [(f.file, f.row, f.column) for f in found] == [("initial_fleet.csv", last, "chips")]
    assert "draws 650.4 MW of IT in 2025Q1" in found[0].message
    assert "above its halls then (650.0 MW" in found[0].message


def test_a_resource_in_two_units_is_named_on_the_odd_row(data: Path) -> None:
    """kilowafers beside wafers validated: the capacity was read in the usual unit.

    The odd row is the resource's first: the others are not all named for it."""
    p = data / "supply_resources.csv"
    lines = p.read_text(encoding="utf-8").split("\n")
    assert lines[2].endswith(",wafers")
    lines[2] = lines[2][: -len("wafers")] + "kilowafers"
    p.write_text("\n".join(lines), encoding="utf-8")
    (f,) = validate_directory(data)
    assert (f.severity, f.file, f.row, f.column, f.value) == (
        "error",
        "supply_resources.csv",
        3,
        "unit",
        "kilowafers",
    )
    assert "tsmc_n3_wafers is in 'wafers' on its other rows" in f.message


def test_a_discount_factor_that_rises_is_named(data: Path) -> None:
    """0.5 then 0.98 validated, and the plan weighed later quarters' costs more."""
    p = data / "periods.csv"
    df = pd.read_csv(p)
    df.loc[0, "discount_factor"] = 0.5
    df.to_csv(p, index=False)
    (f,) = validate_directory(data)
    assert (f.severity, f.file, f.row, f.column) == ("error", "periods.csv", 3, "discount_factor")
    assert f"rises from 0.5 (row 2) to {df.loc[1, 'discount_factor']:g}" in f.message


@pytest.mark.parametrize(
    ("file", "column", "value", "word"),
    [
        ("sites.csv", "energy_price_usd_per_mwh", "0.06", "low"),  # USD/kWh
        ("chips.csv", "it_kw_per_chip", "0.0015", "low"),  # MW
        ("chips.csv", "capex_usd_per_chip", "43", "low"),  # thousands of USD
        ("chips.csv", "hbm_gb", "192000", "high"),  # MB
        ("chips.csv", "hbm_gb", "0.192", "low"),  # TB
        ("site_grid.csv", "grid_mw", "300000", "high"),  # kW
    ],
)
def test_a_figure_in_the_wrong_unit_is_warned_with_its_cell(
    data: Path, file: str, column: str, value: str, word: str
) -> None:
    """USD/kWh for USD/MWh, MW for kW, thousands of USD: the data validated with no finding
    and solved as "optimal" (energy $12.4M where the plan spends $12.6B)."""
    p = data / file
    df = pd.read_csv(p, dtype=str, keep_default_na=False)
    df.loc[0, column] = value
    df.to_csv(p, index=False)
    found = [f for f in validate_directory(data) if f.column == column]
    assert [(f.severity, f.file, f.row, f.value) for f in found] == [("warning", file, 2, value)]
    assert f"implausibly {word}" in found[0].message and "and its unit" in found[0].message
    assert not load_dataset(ROOT / "data").warnings  # the bundled figures pass


EMPTY_MEANS = [(n, s.when_empty) for n, s in SPECS.items() if s.when_empty is not None]


@pytest.mark.parametrize(("table", "when_empty"), EMPTY_MEANS, ids=[n for n, _ in EMPTY_MEANS])
def test_a_table_with_no_rows_says_what_that_means(
    data: Path, table: str, when_empty: tuple[str, str]
) -> None:
    """A header-only eligibility.csv validated with no finding and solved as "optimal" with
    0% of demand served; an empty chip_bill_of_materials.csv dropped every supply limit."""
    p = data / f"{table}.csv"
    p.write_text(p.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    found = [f for f in validate_directory(data) if f.message.startswith("the table has no rows")]
    severity, means = when_empty
    assert [(f.severity, f.file, f.message) for f in found] == [
        (severity, f"{table}.csv", f"the table has no rows: {means}")
    ]


def test_an_app_edit_that_deletes_every_row_is_refused_or_warned() -> None:
    """The app's editor: every row of eligibility deleted read "Edits are valid and active"."""
    ds = load_dataset(ROOT / "data")
    with pytest.raises(DataValidationError) as e:
        ds.replace(eligibility=ds.table("eligibility").iloc[:0])
    assert any(
        f.file == "eligibility.csv" and f.severity == "error" and "no rows" in f.message
        for f in e.value.findings
    )
    bom = ds.replace(chip_bill_of_materials=ds.table("chip_bill_of_materials").iloc[:0])
    (w,) = [f for f in bom.warnings if "no rows" in f.message]
    assert w.file == "chip_bill_of_materials.csv" and "limits do not apply" in w.message
    # the rows kept by a row deleted are an ordinary table
    assert not ds.replace(eligibility=ds.table("eligibility").iloc[1:]).warnings


@pytest.mark.parametrize(
    ("file", "column"),
    [
        ("sites.csv", "energy_price_usd_per_mwh"),  # energy paid elsewhere
        ("chips.csv", "capex_usd_per_chip"),  # chips owned already
        ("chips.csv", "hbm_gb"),  # a chip without HBM
    ],
)
def test_a_zero_is_none_not_a_unit_slip(data: Path, file: str, column: str) -> None:
    """0 for a chip without HBM, sunk capex or energy paid elsewhere read "implausibly low
    (below 8 GB)": a unit slip scales a figure, it never makes it 0."""
    p = data / file
    df = pd.read_csv(p, dtype=str, keep_default_na=False)
    df.loc[0, column] = "0"
    df.to_csv(p, index=False)
    assert [f for f in validate_directory(data) if f.column == column] == []
