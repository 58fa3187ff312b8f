"""What the app says about bad data and failed plans: which file, which row, what gave."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from capacity.dataset import load_dataset
from capacity.scenarios import apply_overrides
from capacity.validation import Finding
from optimizer import solve
from tests.apptest_helpers import open_app, rerun
from ui.findings_view import (
    EDITOR_ROW_LABEL,
    ROW_LABEL,
    ROW_NUMBERING,
    findings_table,
    knock_on_summary,
    order_findings,
)

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"
WATER_CUT = {"op": "scale", "table": "site_water", "column": "water_permit_m3", "factor": 0.01}


def _texts(elements) -> list[str]:  # noqa: ANN001
    return [str(e.value) for e in elements]


def _findings_frames(at: AppTest) -> list:
    return [d for d in at.dataframe if "message" in d.value.columns]


def _labels(df_element) -> dict[str, str]:  # noqa: ANN001
    cfg = json.loads(df_element.proto.columns)
    return {k.removeprefix("col:name:"): v.get("label", "") for k, v in cfg.items()}


def _zip_with(replace: dict[str, list[tuple[bytes, bytes]]]) -> bytes:
    """The tiny dataset as a zip, with ``{file: [(old, new), ...]}`` byte replacements."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as out:
        for path in sorted(TINY.iterdir()):
            name, data = path.name, path.read_bytes()
            for old, new in replace.get(name, []):
                assert old in data, (name, old)
                data = data.replace(old, new, 1)
            out.writestr(name, data)
    return buf.getvalue()


def _upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.file_uploader(key="upload_files").set_value([(name, data, "application/zip")])
    rerun(at)
    at.button(key="upload_load").click()
    return rerun(at)


def _edit(at: AppTest, table: str, edits: dict[int, dict[str, object]]) -> AppTest:
    at.selectbox(key="data_table").set_value(table)
    rerun(at)
    at.session_state[f"editor_{table}"] = {
        "edited_rows": edits,
        "added_rows": [],
        "deleted_rows": [],
    }
    return rerun(at)


# --------------------------------------------------------------- 1. which file
def test_zip_upload_with_bad_cells_names_the_file_of_each_finding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch)
    before = at.session_state["base_ds"].hash
    # sites.csv: max_build_mw_per_period and energy_price_usd_per_mwh become text
    bad = _zip_with(
        {"sites.csv": [(b",100,20,", b",100,lots,"), (b",12000000,50,", b",12000000,cheap,")]}
    )
    _upload(at, "bad.zip", bad)
    assert at.session_state["base_ds"].hash == before
    assert any("2 error(s) (2 in sites.csv)" in t for t in _texts(at.error)), _texts(at.error)
    (el,) = _findings_frames(at)
    f = el.value
    assert f["file"].tolist() == ["sites.csv", "sites.csv"]
    assert sorted(f["column"]) == ["energy_price_usd_per_mwh", "max_build_mw_per_period"]
    assert sorted(f["value"]) == ["cheap", "lots"]
    assert f["row"].tolist() == [2, 2]  # the only data row of sites.csv
    assert "editor_row" not in f.columns  # an upload has no editor position
    assert _labels(el)["file"] == "file (table)"
    assert _labels(el)["row"] == ROW_LABEL


def test_zip_upload_missing_a_column_names_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(monkeypatch)
    bad = _zip_with({"demand.csv": [(b"demand_h100e", b"demand")]})
    _upload(at, "bad.zip", bad)
    assert any("in demand.csv" in t for t in _texts(at.error)), _texts(at.error)
    (el,) = _findings_frames(at)
    f = el.value
    assert set(f["file"]) == {"demand.csv"}
    assert "missing column 'demand_h100e'" in " ".join(f["message"])
    assert f["row"].tolist() == [1, 1]  # both findings are about the header row


# --------------------------------------------------------------- 2. which row
def test_duplicate_key_findings_use_the_file_row_of_the_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch)
    # demand row 1 (editor index) takes the key of row 0: acme/training/2026Q1
    _edit(at, "demand", {1: {"workload": "training", "period": "2026Q1"}})
    (el,) = _findings_frames(at)
    f = el.value
    assert f["file"].tolist() == ["demand.csv"]
    assert f["message"].tolist() == [
        "duplicate key (customer, workload, period, regions): the same key as row 2"
    ]
    # the second data row is file row 3 and editor index 1; the first is file row 2
    assert f["row"].tolist() == [3]
    assert f["editor_row"].tolist() == [1]
    labels = _labels(el)
    assert labels["row"] == "row (file; header = 1)"
    assert labels["editor_row"] == EDITOR_ROW_LABEL
    assert ROW_NUMBERING in _texts(at.caption)
    assert not any("0 = first row" in t for t in _texts(at.error))  # the old wording


def test_renaming_a_site_shows_its_table_first_and_summarises_the_knock_on_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch)
    _edit(at, "sites", {0: {"site": "dc-x"}})
    # 2 grid + 2 water + 1 fleet rows name dc-1; dc-x has no grid nor water rows
    assert any(
        "Edits have 7 error(s) (3 in site_grid.csv, 3 in site_water.csv, 1 in "
        "initial_fleet.csv)" in t
        for t in _texts(at.error)
    ), _texts(at.error)
    assert any("No findings in sites.csv itself" in t for t in _texts(at.info))
    knock = next(t for t in _texts(at.error) if "knock-on" in t)
    assert knock.startswith("7 knock-on error(s) in other tables")
    assert (
        "- 5 rows in site_grid, site_water, initial_fleet refer to site 'dc-1', which is "
        "not in sites."
    ) in knock
    assert "site_grid.csv: site 'dc-x' has no grid row for 2 period(s)" in knock
    (el,) = _findings_frames(at)  # the full list, in the expander, grouped by file
    assert el.value["file"].tolist() == ["site_grid.csv"] * 3 + ["site_water.csv"] * 3 + [
        "initial_fleet.csv"
    ]


# ------------------------------------------------------ pure findings helpers
def _f(file: str, row: int | None, column: str, value: str | None, msg: str) -> Finding:
    return Finding("error", file, row, column, value, msg)


UNKNOWN_OLD = "unknown site 'old': not in sites."


def test_knock_on_summary_counts_rows_per_missing_key() -> None:
    fs = [
        _f("sites.csv", 3, "site", "a", "duplicate key (site): the same key as row 2"),
        *[
            _f("site_grid.csv", r, "site", "old", "unknown site 'old': not in sites.")
            for r in (2, 3)
        ],
        _f("site_water.csv", 2, "site", "old", UNKNOWN_OLD),
        _f("eligibility.csv", 4, "chip", "h9", "unknown chip 'h9': not in chips."),
    ]
    lines, n = knock_on_summary(fs, edited=["sites"])
    assert lines == [
        "3 rows in site_grid, site_water refer to site 'old', which is not in sites.",
        "1 row in eligibility refers to chip 'h9', which is not in chips.",
    ]
    assert n == 4  # the sites.csv finding is the edited table's own, not a knock-on
    ordered = order_findings(fs[::-1], first=["site_water"])
    assert [f.file for f in ordered] == [
        "site_water.csv",
        "sites.csv",
        "site_grid.csv",
        "site_grid.csv",
        "eligibility.csv",
    ]
    t = findings_table(fs[:1])
    assert list(t.columns) == [
        "file",
        "severity",
        "row",
        "editor_row",
        "column",
        "value",
        "message",
    ]
    assert (t.loc[0, "row"], t.loc[0, "editor_row"]) == (3, 1)


# ------------------------------------------------------- 3. an infeasible plan
def test_infeasible_plan_shows_na_objective_and_what_had_to_give_with_units(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch)
    at.session_state["overrides"] = [WATER_CUT]  # 1% of the water permit: infeasible
    at.switch_page("app_pages/plan.py")
    rerun(at)
    at.button(key="solve").click()
    rerun(at)
    assert at.session_state["plan"].metrics["status"] == "infeasible"
    assert at.metric[0].value == "infeasible"
    assert at.metric[1].label == "Discounted cost"
    assert at.metric[1].value == "n/a"
    captions = _texts(at.caption)
    assert any(
        t.startswith("Objective n/a (status infeasible) · solver HiGHS · bulk") for t in captions
    )
    assert not any("nan" in t for t in captions)
    give = next(d for d in at.dataframe if "family" in d.value.columns)
    df = give.value
    assert list(df.columns) == ["family", "period", "key", "amount", "message"]  # no scenario
    # the elastic re-solve's water shortfalls (m3), as the optimizer reports them
    direct = solve(apply_overrides(load_dataset(TINY), [WATER_CUT])).infeasibility
    pairs = zip(direct["amount"], direct["unit"], strict=True)
    assert df["amount"].tolist() == [f"{a:,.6g} {u}" for a, u in pairs]
    assert df["amount"].tolist() == ["375.92 m3", "360.8 m3"]
    assert df["period"].tolist() == ["2026Q2", "2026Q1"]
    assert set(df["family"]) == {"site_water"}
