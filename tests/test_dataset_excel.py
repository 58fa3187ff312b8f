"""Files as a spreadsheet saves them, and wrong paths: each gets the stated outcome.

Windows-1252 text is read (with a warning saying so), UTF-16 "Unicode Text" is read,
bytes that are no known text give one line of advice; the blank rows Excel leaves at
the end are ignored; thousands separators are one finding per column naming the first
cell; a missing folder names the path looked at; a table file given as the data folder
names its folder.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from capacity.dataset import load_dataset, validate_directory
from capacity.validation import DataValidationError, Finding
from optimizer.cli.commands import app

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"
ENV = {"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    d = tmp_path / "tiny"
    shutil.copytree(TINY, d)
    return d


def _errors(d: Path) -> list[Finding]:
    with pytest.raises(DataValidationError) as exc:
        load_dataset(d)
    return exc.value.errors


def test_windows_1252_text_reads_as_the_utf8_file_with_a_warning(tiny: Path) -> None:
    base = load_dataset(TINY)
    p = tiny / "sites.csv"
    text = p.read_text(encoding="utf-8")
    assert "ü" in text
    p.write_bytes(text.encode("cp1252"))
    ds = load_dataset(tiny)
    assert ds.table("sites")["display_name"].tolist() == ["Site (Zürich)/A"]
    assert ds.hash == base.hash
    (note,) = [w for w in ds.warnings if w.file == "sites.csv" and "Windows-1252" in w.message]
    assert note.severity == "warning"
    assert "byte 0xfc on line 2" in note.message and "CSV UTF-8" in note.message


def test_utf16_unicode_text_with_commas_reads_as_the_utf8_file(tiny: Path) -> None:
    p = tiny / "sites.csv"
    p.write_bytes(p.read_text(encoding="utf-8").encode("utf-16"))
    assert load_dataset(tiny).hash == load_dataset(TINY).hash


def test_bytes_of_no_known_encoding_are_one_line_of_advice(tiny: Path) -> None:
    p = tiny / "workloads.csv"
    p.write_bytes(b"workload,power_factor\ntraining,1.0\n\x81\x8d,0.5\n")
    (f,) = _errors(tiny)
    assert (f.file, f.row) == ("workloads.csv", 3)
    assert "\n" not in f.message
    assert "not UTF-8 or Windows-1252 text (byte 0x81 on line 3)" in f.message
    assert "CSV UTF-8" in f.message


def test_trailing_blank_rows_and_empty_columns_from_excel_are_ignored(tiny: Path) -> None:
    p = tiny / "site_grid.csv"
    lines = p.read_text(encoding="utf-8").splitlines()
    ncol = lines[0].count(",") + 1
    # Excel: cells once touched become empty columns, rows once touched blank rows
    rows = [lines[0] + ",,"] + [ln + ",," for ln in lines[1:]]
    rows += ["," * (ncol + 1)] * 40 + [" ," + "," * ncol]
    p.write_text("\r\n".join(rows) + "\r\n", encoding="utf-8")
    ds = load_dataset(tiny)
    assert ds.hash == load_dataset(TINY).hash
    assert not [w for w in ds.warnings if w.file == "site_grid.csv"]


def test_a_blank_row_inside_the_table_is_still_reported_at_its_row(tiny: Path) -> None:
    p = tiny / "site_grid.csv"
    lines = p.read_text(encoding="utf-8").splitlines()
    blank = "," * lines[0].count(",")
    p.write_text("\n".join([lines[0], lines[1], blank, *lines[2:], blank]) + "\n")
    errs = [f for f in _errors(tiny) if f.file == "site_grid.csv"]
    assert errs and {f.row for f in errs if f.row is not None} == {3}


def test_thousands_separators_are_one_finding_per_column(tiny: Path) -> None:
    p = tiny / "sites.csv"
    head, row = p.read_text(encoding="utf-8").splitlines()[:2]
    cells = row.split(",")
    cols = head.split(",")
    capex = cols.index("build_capex_usd_per_mw")
    assert cells[capex] == "12000000"
    cells[capex] = '"12,000,000"'
    p.write_text("\n".join([head, ",".join(cells)]) + "\n", encoding="utf-8")
    grid = tiny / "site_grid.csv"
    glines = grid.read_text(encoding="utf-8").splitlines()
    gcol = glines[0].split(",").index("grid_mw")
    out = [glines[0]]
    for ln in glines[1:]:
        c = ln.split(",")
        c[gcol] = f'"1,{int(float(c[gcol])):03d}"'
        out.append(",".join(c))
    grid.write_text("\n".join(out) + "\n", encoding="utf-8")
    errs = _errors(tiny)
    (site,) = [f for f in errs if f.file == "sites.csv"]
    assert (site.row, site.column, site.value) == (2, "build_capex_usd_per_mw", "12,000,000")
    assert "thousands separators" in site.message and "(12000000)" in site.message
    (g,) = [f for f in errs if f.file == "site_grid.csv"]
    assert (g.row, g.column) == (2, "grid_mw")
    assert f"(and {len(glines) - 2} more rows of this column)" in g.message
    assert len(errs) == 2, errs


def test_a_decimal_comma_is_not_taken_for_a_thousands_separator(tiny: Path) -> None:
    p = tiny / "sites.csv"
    head, row = p.read_text(encoding="utf-8").splitlines()[:2]
    cells = row.split(",")
    pue = head.split(",").index("pue_air")
    cells[pue] = '"1,3"'
    p.write_text("\n".join([head, ",".join(cells)]) + "\n", encoding="utf-8")
    (f,) = _errors(tiny)
    assert (f.row, f.column, f.value) == (2, "pue_air", "1,3")
    assert "not a number" in f.message


def test_a_missing_folder_names_the_absolute_path(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (f,) = validate_directory("nope")
    assert str(tmp_path / "nope") in f.message and "not found" in f.message


def test_a_table_file_given_as_the_folder_names_its_folder(tiny: Path) -> None:
    (f,) = validate_directory(tiny / "sites.csv")
    assert f.message.startswith("this is a file")
    assert f"give its folder, {tiny}," in f.message


@pytest.mark.parametrize("command", ["validate", "solve"])
def test_cli_says_give_its_folder(tiny: Path, command: str) -> None:
    r = CliRunner().invoke(app, [command, str(tiny / "sites.csv")], env=ENV)
    assert r.exit_code == 1
    text = re.sub(r"\s+", " ", r.output)
    assert "this is a file" in text and f"give its folder, {tiny}" in text
    assert "Traceback" not in text


def test_an_app_upload_of_a_windows_1252_table_keeps_the_warning(tiny: Path) -> None:
    from ui.upload import UploadedFile, upload_dataset

    current = load_dataset(TINY)
    data = (TINY / "sites.csv").read_text(encoding="utf-8").encode("cp1252")
    report = upload_dataset([UploadedFile("sites.csv", data)], current)
    assert report.dataset.hash == current.hash  # the same cells as the UTF-8 file
    (note,) = [w for w in report.dataset.warnings if "Windows-1252" in w.message]
    assert note.file == "sites.csv" and note.severity == "warning"
