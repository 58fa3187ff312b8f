"""Every kind of bad input gets a clear error naming file, row, column and value."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from capacity.dataset import load_dataset
from capacity.validation import DataValidationError, Finding


def edit(d: Path, table: str, row: int | None, column: str, value: str) -> None:
    """Set a cell (row = 0-based data row) or, with row None, rename a column."""
    p = d / f"{table}.csv"
    df = pd.read_csv(p, dtype=str, keep_default_na=False)
    if row is None:
        df = df.rename(columns={column: value})
    else:
        df.loc[row, column] = value
    df.to_csv(p, index=False)


def errors(d: Path) -> list[Finding]:
    with pytest.raises(DataValidationError) as exc:
        load_dataset(d)
    return exc.value.errors


def only(findings: list[Finding]) -> Finding:
    assert len(findings) == 1, findings
    return findings[0]


def test_missing_file(tiny_dir: Path) -> None:
    (tiny_dir / "chips.csv").unlink()
    f = only(errors(tiny_dir))
    assert f.file == "chips.csv"
    assert "missing table 'chips'" in f.message


def test_missing_directory(tmp_path: Path) -> None:
    f = only(errors(tmp_path / "nope"))
    assert "not found" in f.message


def test_missing_column(tiny_dir: Path) -> None:
    df = pd.read_csv(tiny_dir / "sites.csv", dtype=str, keep_default_na=False)
    df.drop(columns=["pue_air"]).to_csv(tiny_dir / "sites.csv", index=False)
    f = only(errors(tiny_dir))
    assert (f.file, f.row, f.column) == ("sites.csv", 1, "pue_air")
    assert "missing column" in f.message


def test_unknown_column_suggests_the_right_name(tiny_dir: Path) -> None:
    edit(tiny_dir, "sites", None, "max_it_mw", "max_it_mww")
    errs = errors(tiny_dir)
    unknown = [f for f in errs if f.column == "max_it_mww"]
    assert len(unknown) == 1
    assert "Did you mean 'max_it_mw'?" in unknown[0].message
    assert any(f.column == "max_it_mw" and "missing column" in f.message for f in errs)


def test_text_in_number_column(tiny_dir: Path) -> None:
    edit(tiny_dir, "site_grid", 1, "grid_mw", "n/a")
    f = only(errors(tiny_dir))
    assert (f.file, f.row, f.column, f.value) == ("site_grid.csv", 3, "grid_mw", "n/a")
    assert "not a number" in f.message


def test_required_value_left_empty(tiny_dir: Path) -> None:
    edit(tiny_dir, "chips", 0, "capex_usd_per_chip", "")
    f = only(errors(tiny_dir))
    assert (f.file, f.row, f.column) == ("chips.csv", 2, "capex_usd_per_chip")
    assert "required value is empty" in f.message


def test_optional_empty_takes_documented_default_not_zero(tiny_dir: Path) -> None:
    # tiny_valid leaves h100's idle_power_factor and the commitment's to_period empty.
    ds = load_dataset(tiny_dir)
    chips = ds.table("chips").set_index("chip")
    assert chips.loc["h100", "idle_power_factor"] == pytest.approx(0.3)
    assert chips.loc["trn2", "idle_power_factor"] == pytest.approx(0.25)
    assert ds.table("commitments")["to_period"].tolist() == ["2026Q2"]  # end of horizon
    assert ds.table("eligibility").set_index("chip").loc["h100", "regions"] == ""


def test_negative_capacity(tiny_dir: Path) -> None:
    edit(tiny_dir, "supply_resources", 0, "capacity", "-5")
    f = only(errors(tiny_dir))
    assert (f.file, f.row, f.column, f.value) == ("supply_resources.csv", 2, "capacity", "-5")
    assert "negative" in f.message


def test_pue_below_one(tiny_dir: Path) -> None:
    edit(tiny_dir, "sites", 0, "pue_liquid", "0.95")
    f = only(errors(tiny_dir))
    assert (f.file, f.row, f.column, f.value) == ("sites.csv", 2, "pue_liquid", "0.95")
    assert "PUE cannot be below 1" in f.message


def test_pue_above_two_is_only_a_warning(tiny_dir: Path) -> None:
    edit(tiny_dir, "sites", 0, "pue_air", "2.4")
    ds = load_dataset(tiny_dir)
    (w,) = [f for f in ds.warnings if f.column == "pue_air"]
    assert (w.severity, w.row, w.value) == ("warning", 2, "2.4")


def test_more_than_4_kw_per_chip_is_a_warning(tiny_dir: Path) -> None:
    edit(tiny_dir, "chips", 1, "it_kw_per_chip", "4.5")
    ds = load_dataset(tiny_dir)
    (w,) = [f for f in ds.warnings if f.column == "it_kw_per_chip"]
    assert (w.severity, w.file, w.row) == ("warning", "chips.csv", 3)


@pytest.mark.parametrize("variant", ["dc-1", "dc-1 ", "DC-1", " Dc-1"])
def test_duplicate_keys_including_case_and_space_variants(tiny_dir: Path, variant: str) -> None:
    with open(tiny_dir / "sites.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    dup = list(rows[1])
    dup[0] = variant
    rows.append(dup)
    with open(tiny_dir / "sites.csv", "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    errs = [f for f in errors(tiny_dir) if "duplicate key" in f.message]
    assert len(errs) == 1
    assert (errs[0].file, errs[0].row, errs[0].value) == ("sites.csv", 3, variant)
    assert "row 2" in errs[0].message


@pytest.mark.parametrize(
    ("table", "row", "column", "value", "kind"),
    [
        ("site_grid", 0, "site", "dc-2", "site"),
        ("eligibility", 1, "chip", "trn3", "chip"),
        ("demand", 0, "customer", "globex", "customer"),
    ],
)
def test_unknown_reference(
    tiny_dir: Path, table: str, row: int, column: str, value: str, kind: str
) -> None:
    edit(tiny_dir, table, row, column, value)
    errs = [f for f in errors(tiny_dir) if f.value == value]
    assert len(errs) == 1
    f = errs[0]
    assert (f.file, f.row, f.column) == (f"{table}.csv", row + 2, column)
    assert f"unknown {kind} {value!r}" in f.message


def test_reference_differing_by_case_suggests_the_known_id(tiny_dir: Path) -> None:
    edit(tiny_dir, "initial_fleet", 0, "chip", "H100")
    f = only(errors(tiny_dir))
    assert "Did you mean 'h100'?" in f.message


def test_sale_window_ending_before_it_begins(tiny_dir: Path) -> None:
    edit(tiny_dir, "chips", 1, "last_period", "2024Q1")
    f = only(errors(tiny_dir))
    assert (f.file, f.row, f.column, f.value) == ("chips.csv", 3, "last_period", "2024Q1")
    assert "ends (2024Q1) before it begins (2024Q4)" in f.message


def test_sale_window_starting_before_the_horizon_is_normal(tiny_dir: Path) -> None:
    ds = load_dataset(tiny_dir)  # h100 first_period 2022Q4 < horizon start 2026Q1
    assert ds.table("chips").set_index("chip").loc["h100", "first_period"] == "2022Q4"
    assert not [f for f in ds.warnings if f.column == "first_period"]


def test_bad_period_label(tiny_dir: Path) -> None:
    edit(tiny_dir, "demand", 1, "period", "2026-Q2")
    errs = errors(tiny_dir)
    assert any(f.row == 3 and f.column == "period" and "YYYYQn" in f.message for f in errs)


def test_every_error_reported_at_once(tiny_dir: Path) -> None:
    edit(tiny_dir, "sites", 0, "pue_air", "0.5")
    edit(tiny_dir, "chips", 0, "hbm_gb", "lots")
    edit(tiny_dir, "demand", 0, "demand_h100e", "-1")
    cols = sorted(f.column or "" for f in errors(tiny_dir))
    assert cols == ["demand_h100e", "hbm_gb", "pue_air"]


def test_names_with_spaces_slashes_parentheses_and_non_ascii_are_kept(tiny_dir: Path) -> None:
    name = "Zürich (Nord)/Hall 2"
    for table in ("sites", "site_grid", "site_water", "initial_fleet"):
        p = tiny_dir / f"{table}.csv"
        df = pd.read_csv(p, dtype=str, keep_default_na=False)
        df["site"] = df["site"].replace("dc-1", name)
        df.to_csv(p, index=False, encoding="utf-8")
    # the scenarios name the site too (an override matching no row is an error)
    scen = tiny_dir / "scenarios.yaml"
    scen.write_text(scen.read_text(encoding="utf-8").replace("dc-1", f'"{name}"'), encoding="utf-8")
    ds = load_dataset(tiny_dir)
    assert ds.table("sites")["site"].tolist() == [name]
    assert ds.table("sites")["display_name"].tolist() == ["Site (Zürich)/A"]
    assert set(ds.table("site_grid")["site"]) == {name}


def test_unreadable_csv_is_a_finding_not_a_crash(tiny_dir: Path) -> None:
    (tiny_dir / "workloads.csv").write_bytes(b"workload,power_factor\n\x81\x8d,0.5\n")
    f = only(errors(tiny_dir))
    assert f.file == "workloads.csv"
    assert "cannot read" in f.message


def test_missing_grid_row_is_an_error_not_a_silent_zero(tiny_dir: Path) -> None:
    df = pd.read_csv(tiny_dir / "site_grid.csv", dtype=str)
    df.iloc[:1].to_csv(tiny_dir / "site_grid.csv", index=False)
    f = only(errors(tiny_dir))
    assert f.file == "site_grid.csv"
    assert "no grid row for 1 period(s) (2026Q2)" in f.message


def test_a_case_variant_duplicate_site_is_one_error_not_a_cascade(tiny_dir: Path) -> None:
    df = pd.read_csv(tiny_dir / "sites.csv", dtype=str, keep_default_na=False)
    dup = df.iloc[[0]].assign(site="DC-1")
    pd.concat([df, dup]).to_csv(tiny_dir / "sites.csv", index=False)
    f = only(errors(tiny_dir))
    assert (f.file, f.row, f.value) == ("sites.csv", 3, "DC-1")
    assert "duplicate key" in f.message


def test_hosts_entry_naming_no_family_or_vendor_is_a_warning_with_did_you_mean(
    tiny_dir: Path,
) -> None:
    sites = pd.read_csv(tiny_dir / "sites.csv", dtype=str, keep_default_na=False)
    sites["hosts"] = ""
    sites.loc[0, "hosts"] = "trainum;nvidia"
    sites.to_csv(tiny_dir / "sites.csv", index=False)
    ds = load_dataset(tiny_dir)
    (w,) = [f for f in ds.warnings if f.column == "hosts"]
    assert (w.severity, w.file, w.row, w.value) == ("warning", "sites.csv", 2, "trainum;nvidia")
    assert "'trainum'" in w.message and "trainium" in w.message


@pytest.mark.parametrize(
    "column", ["price_training_usd_per_h100e_period", "price_inference_usd_per_h100e_period"]
)
def test_negative_customer_price(tiny_dir: Path, column: str) -> None:
    # the margin objective earns these prices: a negative one is an error, not a cost
    edit(tiny_dir, "customers", 0, column, "-1")
    f = only(errors(tiny_dir))
    assert (f.file, f.row, f.column, f.value) == ("customers.csv", 2, column, "-1")
    assert "negative" in f.message


# --- cells the loader once accepted and the solve then dropped or re-scored ---------
# (found by a break-it pass: each was valid to ``capacity validate`` and changed the
# plan or the calibration without a word)


@pytest.fixture
def default_dir(tmp_path: Path) -> Path:
    """A writable copy of the bundled dataset (it has every optional table)."""
    import shutil

    from tests.conftest import DEFAULT_DATA

    dst = tmp_path / "data"
    shutil.copytree(DEFAULT_DATA, dst)
    return dst


def test_ppa_naming_an_unknown_site_is_an_error(default_dir: Path) -> None:
    edit(default_dir, "ppas", 0, "site", "nowhere")
    f = only(errors(default_dir))
    assert (f.file, f.row, f.column, f.value) == ("ppas.csv", 2, "site", "nowhere")
    assert "unknown site 'nowhere'" in f.message


def test_ppa_naming_an_unknown_region_is_an_error(default_dir: Path) -> None:
    edit(default_dir, "ppas", 0, "site", "")
    edit(default_dir, "ppas", 0, "region", "mars-1")
    f = only(errors(default_dir))
    assert (f.file, f.row, f.column, f.value) == ("ppas.csv", 2, "region", "mars-1")
    assert "could be delivered nowhere" in f.message


def test_initial_fleet_installed_after_the_horizon_is_an_error(default_dir: Path) -> None:
    edit(default_dir, "initial_fleet", 0, "install_period", "2031Q1")
    f = only(errors(default_dir))
    assert (f.file, f.row, f.column, f.value) == (
        "initial_fleet.csv",
        2,
        "install_period",
        "2031Q1",
    )
    assert "after the horizon ends (2030Q4)" in f.message


def test_initial_fleet_installed_on_the_last_period_is_valid(default_dir: Path) -> None:
    edit(default_dir, "initial_fleet", 0, "install_period", "2030Q4")
    assert load_dataset(default_dir).table("initial_fleet")["install_period"].iat[0] == "2030Q4"


@pytest.mark.parametrize(
    ("scope", "says"),
    [
        ("garbage", "is not name:value"),
        ("planet:mars", "scope filter 'planet' is unknown"),
        ("customer:nobody/chip:trainium2", "customer:nobody names no customer of customers"),
        ("chip:nochip", "chip:nochip names no chip of chips"),
        ("site:new_carlisle|atlantis", "site:atlantis names no site of sites"),
    ],
)
def test_public_record_scope_that_names_nothing_is_an_error(
    default_dir: Path, scope: str, says: str
) -> None:
    edit(default_dir, "public_record", 0, "scope", scope)
    f = only(errors(default_dir))
    assert (f.file, f.row, f.column, f.value) == ("public_record.csv", 2, "scope", scope)
    assert says in f.message


def test_mistyped_order_book_resource_is_an_error_for_the_book_it_empties(
    default_dir: Path,
) -> None:
    books = pd.read_csv(default_dir / "equipment_order_books.csv", dtype=str)
    real = books.loc[0, "resource"]
    edit(default_dir, "equipment_order_books", 0, "resource", "zz_bogus")
    f = only(errors(default_dir))
    assert (f.file, f.column) == ("equipment_order_books.csv", "period")
    assert f"order book {real!r} has no row for 1 period(s) (2025Q1)" in f.message
    with pytest.raises(DataValidationError) as exc:
        load_dataset(default_dir)
    warned = [w for w in exc.value.findings if w.severity == "warning" and w.value == "zz_bogus"]
    assert (
        warned
        and warned[0].row == 2
        and "named by no power_bill_of_materials" in (warned[0].message)
    )


def test_a_looping_symlink_is_named_not_read_as_missing(tiny_dir: Path) -> None:
    """demand.csv linked to itself read as 'missing table demand ... expected file
    demand.csv', the file being right there."""
    from capacity.validation import DataValidationError

    target = tiny_dir / "demand.csv"
    target.unlink()
    target.symlink_to(target)
    with pytest.raises(DataValidationError) as ei:
        load_dataset(tiny_dir)
    text = str(ei.value)
    assert "demand.csv is a link to nothing readable (a broken or looping symlink)" in text
