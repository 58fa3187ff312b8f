"""Unit tests of the app's helpers: uploads, downloads, column configs, composer, charts, CLI."""

from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from capacity.dataset import load_dataset
from capacity.scenarios import apply_overrides, diff_datasets
from capacity.validation import DataValidationError, Finding
from optimizer import SolveOptions, solve
from ui import charts, upload
from ui.compose import compose_overrides, plan_metrics, served_by_customer, trainium_chips
from ui.dataio import column_config, dataset_zip_bytes, directory_zip_bytes
from ui.findings_view import findings_table, highlight_rows
from ui.upload import UploadedFile, UploadError, dataset_from_upload

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"


@pytest.fixture(scope="module")
def tiny():  # noqa: ANN201
    return load_dataset(TINY)


@pytest.fixture(scope="module")
def tiny_result(tiny):  # noqa: ANN001, ANN201
    return solve(tiny, SolveOptions(solver="highs", time_limit_s=None))


# --------------------------------------------------------------------------- uploads
def test_zip_round_trip_keeps_the_content_hash(tiny) -> None:  # noqa: ANN001
    data = dataset_zip_bytes(tiny)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert "scenarios.yaml" in zf.namelist() and "sites.csv" in zf.namelist()
    back = dataset_from_upload([UploadedFile("copy.zip", data)], None)
    assert back.hash == tiny.hash
    assert back.name == "copy"
    assert set(back.scenarios) == {"neutral", "squeeze"}


def test_zip_in_a_folder_without_scenarios_keeps_the_current_scenarios(tiny) -> None:  # noqa: ANN001
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for p in TINY.glob("*.csv"):
            zf.write(p, arcname=f"mydata/{p.name}")
        zf.writestr("__MACOSX/._sites.csv", b"junk")
    ds = dataset_from_upload([UploadedFile("mydata.zip", buf.getvalue())], tiny)
    assert set(ds.scenarios) == {"neutral", "squeeze"}
    assert ds.table("sites").equals(tiny.table("sites"))


def test_zip_that_unpacks_over_the_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("sites.csv", b"0" * 5000)  # compresses to a few bytes
    monkeypatch.setattr(upload, "MAX_UPLOAD_BYTES", 1000)
    with pytest.raises(UploadError, match="unpacks to"):
        dataset_from_upload([UploadedFile("bomb.zip", buf.getvalue())], None)


def test_zip_without_tables_and_mixed_uploads_are_refused(tiny) -> None:  # noqa: ANN001
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("readme.txt", b"hello")
    with pytest.raises(UploadError, match="holds no table file"):
        dataset_from_upload([UploadedFile("x.zip", buf.getvalue())], tiny)
    with pytest.raises(UploadError, match="either one zip"):
        dataset_from_upload(
            [UploadedFile("x.zip", buf.getvalue()), UploadedFile("sites.csv", b"")], tiny
        )
    with pytest.raises(UploadError, match="No dataset is loaded"):
        dataset_from_upload([UploadedFile("sites.csv", b"site\n")], None)


def test_single_csv_with_wrong_columns_lists_findings(tiny) -> None:  # noqa: ANN001
    bad = b"site,region\ndc-1,NO\n"
    with pytest.raises(DataValidationError) as e:
        dataset_from_upload([UploadedFile("sites.csv", bad)], tiny)
    missing = {f.column for f in e.value.errors if "missing column" in f.message}
    assert "max_it_mw" in missing and "pue_air" in missing
    assert all(f.file == "sites.csv" for f in e.value.errors if f.column in missing)


# ------------------------------------------------------------------ findings display
def test_findings_table_maps_spreadsheet_rows_to_editor_rows() -> None:
    fs = [
        Finding("error", "demand.csv", 3, "demand_h100e", "-5", "cannot be negative"),
        Finding("warning", "demand.csv", None, None, None, "whole file"),
    ]
    df = findings_table(fs)
    assert df["editor_row"].tolist()[0] == 1 and pd.isna(df["editor_row"].iloc[1])
    assert df["row"].tolist()[0] == 3


def test_highlight_rows_colours_exactly_the_bad_cell() -> None:
    frame = pd.DataFrame({"a": [1, 2, 3], "b": [4, 5, 6]})
    fs = [Finding("error", "t.csv", 4, "b", "6", "bad")]  # spreadsheet row 4 = position 2
    styler = highlight_rows(frame, fs)
    assert styler.data.index.tolist() == [2]
    html = styler.to_html()
    assert html.count("background-color: #f8d7da") == 1


def test_rows_with_findings_read_as_the_editor_shows_them() -> None:
    """The table wrote a missing cell as None and 1000 as 1000.000000."""
    import re

    frame = pd.DataFrame({"a": [1000.0, None, -5.0], "b": ["x", None, "y"]})
    fs = [
        Finding("error", "t.csv", 2, "a", "1000", "m"),
        Finding("error", "t.csv", 3, "b", None, "m"),
    ]
    cells = re.findall(r">([^<>]+)</td>", highlight_rows(frame, fs).to_html())
    assert cells == ["1000", "x", "–", "–"]


def test_column_config_carries_units_bounds_and_choices() -> None:
    c = column_config("sites")
    assert c["max_it_mw"]["label"] == "max_it_mw [MW]"
    # bounds in the help, not as the grid's min/max: the browser's grid clamps a value out
    # of range (5 in a [0, 1] column kept as 1, -5 as 5) where validation names the cell
    for table in ("sites", "demand", "periods", "chips"):
        for name, cfg in column_config(table).items():
            assert cfg.get("type_config", {}).get("min_value") is None, (table, name)
            assert cfg.get("type_config", {}).get("max_value") is None, (table, name)
    assert "Allowed:" in c["pue_air"]["help"] and "1" in c["pue_air"]["help"]
    assert "Allowed:" in c["liquid_share_max"]["help"]
    assert "Unit: MW." in c["initial_it_mw"]["help"]
    chips = column_config("chips")
    assert chips["cooling"]["type_config"]["options"] == ["air", "liquid", "either"]
    # numbers are text cells (the grid's number cell read 1e30 as 130); no cell is
    # required and periods have no pattern (the grid kept such rows and cells in the
    # browser, unsent): validation names the cell instead
    assert chips["lifetime_periods"]["type_config"]["type"] == "text"
    assert chips["idle_power_factor"]["default"] == "0.3"
    for table in ("sites", "demand", "site_grid", "chips", "customers"):
        for name, cfg in column_config(table).items():
            assert cfg.get("required") is None, (table, name)
            assert cfg.get("type_config", {}).get("validate") is None, (table, name)


# ------------------------------------------------------------------------ composer
def test_compose_overrides_builds_exactly_the_requested_changes(tiny) -> None:  # noqa: ANN001
    assert compose_overrides(tiny) == []
    ovs = compose_overrides(
        tiny,
        supply={"cowos_wafers": 0.5},
        demand={"acme": 2.0},
        grid_delay_periods=1,
        trainium_derate_factor=0.5,
    )
    assert [o["table"] for o in ovs] == ["supply_resources", "demand", "site_grid", "eligibility"]
    assert trainium_chips(tiny) == ["trn2"]
    ds = apply_overrides(tiny, ovs)
    assert ds.table("supply_resources")["capacity"].tolist() == [500.0, 500.0]
    assert ds.table("demand")["demand_h100e"].tolist() == [3000.0, 1600.0]
    assert ds.table("site_grid")["grid_mw"].tolist() == [30.0, 30.0]  # 2026Q2 gets 2026Q1's
    el = ds.table("eligibility").set_index("chip")["derate"]
    assert el["trn2"] == pytest.approx(0.4) and el["h100"] == 1.0
    d = diff_datasets(tiny, ds)
    assert set(d["table"]) == {"supply_resources", "demand", "site_grid", "eligibility"}
    assert len(d) == 2 + 2 + 1 + 1


def test_plan_metrics_match_the_result_tables(tiny, tiny_result) -> None:  # noqa: ANN001
    m = plan_metrics(tiny_result, tiny)
    dem = tiny_result.tables["demand"]
    a = tiny_result.tables["assignment"]
    assert m["status"] == "optimal"
    assert m["objective_usd"] == pytest.approx(tiny_result.objective_usd)
    assert m["served_share"] == pytest.approx(dem["served_h100e"].sum() / 2300.0)
    trn = a.loc[a["chip"] == "trn2", "h100e"].sum() / a["h100e"].sum()
    assert m["trainium_share"] == pytest.approx(trn)
    s = served_by_customer(tiny_result)
    assert s["demand_h100e"].sum() == pytest.approx(2300.0)
    np.testing.assert_allclose(
        (s["served_h100e"] + s["unmet_h100e"]).to_numpy(float), s["demand_h100e"].to_numpy(float)
    )


def test_a_margin_plans_cost_is_its_cost_on_the_reports_and_risk_pages() -> None:
    """The Reports page's "Discounted cost", its runs table and the Risk page's scenario
    comparison (table and chart) showed a margin plan's objective, minus its margin, as
    its cost (lp_two: -3.53M for a plan that costs 1.27M)."""
    from tests.lp_helpers import LP_DATA

    ds = load_dataset(LP_DATA / "lp_two")
    res = solve(ds, SolveOptions(objective="margin"))
    m = plan_metrics(res, ds)
    assert m["objective_usd"] == pytest.approx(-3.53e6, rel=1e-6)  # cost - revenue
    assert m["cost_usd"] == pytest.approx(1.27e6, rel=1e-6)  # by hand: chips and energy
    cost_plan = solve(ds)
    assert plan_metrics(cost_plan, ds)["cost_usd"] == pytest.approx(cost_plan.objective_usd)
    frame = pd.DataFrame([{"scenario": "margin", **m}])
    fig = charts.scenario_costs(frame)
    assert fig is not None and fig.data[0].y[0] == pytest.approx(1.27)  # USD millions


# --------------------------------------------------------------------------- charts
def test_every_plan_chart_draws_the_result_numbers(tiny, tiny_result) -> None:  # noqa: ANN001
    t = tiny_result.tables
    periods = list(tiny.periods)
    for row in charts.PLAN_CHARTS:
        for _key, make in row:
            assert make(t, periods) is not None
    fig = charts.installed_it_mw(t, periods)
    total = sum(np.nansum(np.asarray(tr.y, dtype=float)) for tr in fig.data)
    assert total == pytest.approx(t["fleet"]["it_mw"].sum())
    assert fig.layout.yaxis.title.text == "IT [MW]"  # it read "it_mw [MW]"
    fig = charts.energy_water(t, periods)
    assert np.asarray(fig.data[0].y, dtype=float).sum() == pytest.approx(
        t["energy"]["facility_mwh"].sum()
    )
    # the water axis's own round ticks (synced to the energy grid: 0.359M, 0.719M ...)
    assert fig.layout.yaxis2.tickmode == "auto" and fig.layout.yaxis2.showgrid is False
    assert charts.installed_it_mw({}, periods) is None
    assert charts.shadow_price_heatmap({"shadow_prices": t["shadow_prices"].iloc[0:0]}) is None


# ------------------------------------------------------------------------------ CLI
def test_capacity_app_starts_streamlit_on_the_app(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import os

    from optimizer.cli.commands import app

    seen: dict[str, object] = {}

    def fake_execve(path, cmd, env):  # noqa: ANN001, ANN202
        seen["path"], seen["cmd"], seen["env"] = path, cmd, env

    monkeypatch.setattr(os, "execve", fake_execve)
    res = CliRunner().invoke(app, ["app", "--port", "8600", "--data", str(TINY)])
    assert res.exit_code == 0, res.output
    assert "http://localhost:8600" in res.output
    cmd = seen["cmd"]
    assert seen["path"] == sys.executable  # the process becomes the server (one pid)
    assert cmd[:4] == [sys.executable, "-m", "streamlit", "run"]
    assert Path(cmd[4]) == ROOT / "ui" / "app.py"
    assert cmd[cmd.index("--server.port") + 1] == "8600"
    assert seen["env"]["CAPACITY_DATA"] == str(TINY.resolve())
    bad = CliRunner().invoke(app, ["app", "--data", str(tmp_path / "missing")])
    assert bad.exit_code == 1


def test_a_report_zip_leaves_out_staging_and_set_aside_folders(tmp_path: Path) -> None:
    """The reports page zipped files under ``.scenario=x.partial-<pid>/`` too (only a
    file's own name was checked for a leading dot)."""
    run = tmp_path / "20261203T000000Z-abcd"
    for folder in ("scenario=neutral", ".scenario=negative.partial-99", ".scenario=a.old-98"):
        (run / folder).mkdir(parents=True)
        (run / folder / "fleet.parquet").write_bytes(b"x")
    (run / "manifest.json").write_text("{}")
    (run / ".manifest.json.tmp-97-ab").write_text("{")
    names = zipfile.ZipFile(io.BytesIO(directory_zip_bytes(run))).namelist()
    assert sorted(names) == [
        f"{run.name}/manifest.json",
        f"{run.name}/scenario=neutral/fleet.parquet",
    ]


def test_the_editor_text_round_trip_keeps_every_cell_and_dtype() -> None:
    """Numbers are edited as text: each bundled table reads back as it was (no spurious
    edit on opening a table), and an integer column typed inf, 1e19 or 2**63 is no crash
    (int64 casting raised IntCastingNaNError, or wrapped 2**63 to -2**63) but a value
    validation names."""
    from capacity.schema import TABLE_NAMES
    from ui.dataio import editor_frame, editor_view, frames_equal, from_editor

    ds = load_dataset(ROOT / "data")
    for table in TABLE_NAMES:
        f = editor_frame(ds, table)
        back = from_editor(editor_view(f, table), table, f)
        assert frames_equal(back, f) and list(back.dtypes) == list(f.dtypes), table
    f = editor_frame(ds, "chips")
    view = editor_view(f, "chips")
    for typed, named in (
        ("inf", "inf"),
        ("1e19", "1e+19"),
        ("9223372036854775808", "9223372036854775808"),
    ):
        edited = view.copy()
        edited.loc[0, "lifetime_periods"] = typed
        back = from_editor(edited, "chips", f)
        with pytest.raises(DataValidationError) as e:
            ds.replace(chips=back)
        (err,) = e.value.errors
        assert (err.row, err.column, err.value) == (2, "lifetime_periods", named)
    edited = view.copy()
    edited.loc[0, "lifetime_periods"] = "12"
    assert from_editor(edited, "chips", f)["lifetime_periods"].dtype == "int64"
    zero = pd.DataFrame({"carbon_price_usd_per_t": [-0.0], "carbon_cap_t": [float("nan")]})
    back = from_editor(editor_view(zero, "carbon_policy"), "carbon_policy", zero)
    assert frames_equal(back, zero)  # -0.0 kept its sign: no edit


@pytest.mark.parametrize("typed", ["1_000", "nan", "1e400"])
def test_a_number_cell_reads_decimal_text_only_and_names_the_rest_as_typed(typed: str) -> None:
    """float() took 1_000 (where 1,000 is refused), nan (then reported as an empty
    required cell) and 1e400 (reported as 'inf'): each is now named as typed."""
    from ui.dataio import editor_frame, editor_view, from_editor

    ds = load_dataset(ROOT / "data")
    f = editor_frame(ds, "chips")
    edited = editor_view(f, "chips")
    edited.loc[0, "capex_usd_per_chip"] = typed
    with pytest.raises(DataValidationError) as e:
        ds.replace(chips=from_editor(edited, "chips", f))
    (err,) = e.value.errors
    assert (err.row, err.column, err.value) == (2, "capex_usd_per_chip", typed)


def test_the_scenario_diff_reads_numbers_with_separators() -> None:
    """The app's diff showed 480000 -> 240000 where every table shows 480,000."""
    from ui.compose import diff_with_units

    diff = pd.DataFrame(
        {
            "table": ["demand", "demand", "commitments", "sites"],
            "key": ["a/training/2026Q1", "a/training/2026Q2", "a/x/2027Q1", "s1"],
            "column": ["demand_h100e", "demand_h100e", "from_period", "max_it_mw"],
            "old": ["480000", "nan", "2027Q1", "1234.5"],
            "new": ["240000", "(no row)", "2027Q3", "1e400"],
        }
    )
    got = diff_with_units(diff)
    assert got["old"].tolist() == ["480,000", "nan", "2027Q1", "1,234.5"]
    assert got["new"].tolist() == ["240,000", "(no row)", "2027Q3", "1e400"]
    assert got["unit"].tolist() == ["H100e", "H100e", "quarter", "MW"]
