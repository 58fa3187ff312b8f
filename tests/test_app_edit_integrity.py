"""An edit in the app never changes a plan's meaning without a word (AppTest).

Found by a break test of the app: a site renamed in the Data editor turned a one-site
grid delay into a delay of every site; the Plan page solved the base data in place of a
scenario the edit had broken, and kept showing a plan solved with other settings; a
single-table upload dropped pending edits; the Reports page read "nan%".
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest_helpers import goto, open_app, rerun
from tests.conftest import TINY


def _edit(
    at: AppTest,
    table: str,
    edited_rows: dict[int, dict[str, Any]] | None = None,
    added: list[dict[str, Any]] | None = None,
    deleted: list[int] | None = None,
) -> None:
    """Make one edit in the Data page's editor of ``table`` (as the browser sends it)."""
    at.selectbox(key="data_table").set_value(table)
    rerun(at)
    (ed,) = at.data_editor
    at.session_state[ed.key] = {
        "edited_rows": edited_rows or {},
        "added_rows": added or [],
        "deleted_rows": deleted or [],
    }
    rerun(at)


def _two_sites(tmp_path: Path) -> Path:
    """The tiny dataset with a second site ``dc-2``, a copy of ``dc-1``."""
    d = tmp_path / "two_sites"
    shutil.copytree(TINY, d)
    for name in ("sites", "site_grid", "site_water"):
        df = pd.read_csv(d / f"{name}.csv", keep_default_na=False)
        extra = df[df["site"] == "dc-1"].assign(site="dc-2")
        pd.concat([df, extra]).to_csv(d / f"{name}.csv", index=False)
    return d


def _rename_dc1(at: AppTest) -> None:
    """Rename site dc-1 to dc-9 in every table that names it (a valid edit)."""
    _edit(at, "sites", {0: {"site": "dc-9"}})
    _edit(at, "site_grid", {0: {"site": "dc-9"}, 1: {"site": "dc-9"}})
    _edit(at, "site_water", {0: {"site": "dc-9"}, 1: {"site": "dc-9"}})
    _edit(at, "initial_fleet", {0: {"site": "dc-9"}})
    assert at.session_state["draft_findings"] == []


def test_a_renamed_site_does_not_turn_a_one_site_grid_delay_into_every_site(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The delay chose dc-1; dc-1 renamed, the delay is off and the page says so."""
    at = open_app(monkeypatch, _two_sites(tmp_path))
    goto(at, "scenarios")
    at.number_input(key="cmp_grid_delay").set_value(1)
    at.multiselect(key="cmp_grid_sites").set_value(["dc-1"])
    rerun(at)
    assert set(at.dataframe[-1].value["key"]) == {"dc-1/2026Q2"}  # one site delayed
    goto(at, "data")
    _rename_dc1(at)
    goto(at, "scenarios")
    assert not [o for o in at.session_state["overrides"] if o.get("op") == "shift"]
    # the diff against the data as loaded holds the rename's edits and nothing more
    caps = [c.value for c in at.caption if "changed cell(s)" in c.value]
    n = caps[0].split(" changed cell(s)")[0]
    assert caps and f", {n} of them by edits on the Data page." in caps[0], caps
    warned = [w.value for w in at.warning if "grid delay was chosen for dc-1" in w.value]
    assert warned and "off until you choose its sites again" in warned[0]
    # choosing again clears the note and delays exactly the site chosen
    at.multiselect(key="cmp_grid_sites").set_value(["dc-2"])
    rerun(at)
    assert not [w for w in at.warning if "grid delay" in w.value]
    # beside the rename's edits (dc-1 is dc-9 now), the delay moves dc-2 alone
    keys = set(at.dataframe[-1].value["key"])
    assert {k for k in keys if "dc-1" not in k and "dc-9" not in k} == {"dc-2/2026Q2"}


def test_a_multiplier_of_a_renamed_customer_is_named_not_dropped_silently(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A demand multiplier set on a customer an edit renamed: a warning names it."""
    at = open_app(monkeypatch)
    goto(at, "scenarios")
    at.number_input(key="cmp_demand_acme").set_value(1.5)
    rerun(at)
    goto(at, "data")
    customers = at.session_state["base_ds"].table("customers")
    rows = {i: {"customer": "acme2"} for i in range(len(customers))}
    _edit(at, "customers", rows)
    demand = at.session_state["base_ds"].table("demand")
    _edit(at, "demand", {i: {"customer": "acme2"} for i in range(len(demand))})
    for t in ("commitments", "eligibility"):
        frame = at.session_state["base_ds"].table(t)
        if "customer" in frame and len(frame):
            _edit(at, t, {i: {"customer": "acme2"} for i in range(len(frame))})
    assert at.session_state["draft_findings"] == []
    goto(at, "scenarios")
    texts = [w.value for w in at.warning]
    assert any("demand multiplier of acme (x1.5)" in t for t in texts), texts


def test_the_plan_page_says_why_the_chosen_scenario_was_replaced_by_base(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """squeeze names dc-1; dc-1 renamed, the edited data is solved and the page says why.

    It is named 'edited': 'base' is the data as loaded (capacity.scenario_spec)."""
    at = open_app(monkeypatch, _two_sites(tmp_path))
    goto(at, "scenarios")
    at.radio(key="cmp_scenario_name").set_value("squeeze")
    rerun(at)
    goto(at, "data")
    _rename_dc1(at)
    want = "The chosen scenario **squeeze** does not apply to the edited data"
    assert any(w.value.startswith(want) for w in at.warning)  # the Data page, at once
    goto(at, "plan")
    texts = [w.value for w in at.warning]
    assert any(t.startswith(want) and "'dc-1'" in t for t in texts), texts
    # the finding is located as every other is (it quoted the message alone)
    assert any(t.startswith(want) and "is planned: overrides, column " in t for t in texts), texts
    at.button(key="solve").click()
    rerun(at)
    assert at.session_state["plan"].scenario == "edited"
    assert any(
        w.value.startswith(want) and "(**edited**) is planned" in w.value for w in at.warning
    )
    goto(at, "risk")  # its tools run on the same data: it said nothing
    assert any(w.value.startswith(want) for w in at.warning)


def test_the_plan_page_flags_a_plan_solved_with_other_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The objective changed after the solve: the page names the change until solved again."""
    at = open_app(monkeypatch)
    goto(at, "plan")
    at.button(key="solve").click()
    rerun(at)
    assert not [w for w in at.warning if "solver settings changed" in w.value]
    at.selectbox(key="solve_objective").set_value("margin")
    rerun(at)
    (w,) = [w.value for w in at.warning if "solver settings changed" in w.value]
    assert "(objective cost -> margin)" in w
    at.number_input(key="solve_time_limit").set_value(30)
    rerun(at)
    (w,) = [w.value for w in at.warning if "solver settings changed" in w.value]
    assert "(objective cost -> margin, time limit [s] none -> 30)" in w
    at.button(key="solve").click()
    rerun(at)
    assert not [w for w in at.warning if "solver settings changed" in w.value]
    assert at.session_state["plan"].settings["objective"] == "margin"


def test_the_demand_served_of_a_plan_with_no_demand_is_a_dash_not_nan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No demand rows: the served share has no value, shown as "–" on Plan and Reports;
    the data page says the table has no rows (a warning: the plan buys nothing for it)."""
    at = open_app(monkeypatch)
    n = len(at.session_state["base_ds"].table("demand"))
    _edit(at, "demand", deleted=list(range(n)))
    assert not at.session_state["draft_findings"]  # valid: the edit is active
    (w,) = [f for f in at.session_state["base_ds"].warnings if "no rows" in f.message]
    assert (w.file, w.severity) == ("demand.csv", "warning")
    goto(at, "plan")
    at.button(key="solve").click()
    rerun(at)
    assert [m.value for m in at.metric if m.label == "Demand served"] == ["–"]
    goto(at, "reports")
    assert [m.value for m in at.metric if m.label == "Demand served"] == ["–"]


def test_loading_a_single_table_keeps_the_pending_edits_of_the_other_tables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Edits that did not validate yet survive an upload of another table, and it says so."""
    at = open_app(monkeypatch)
    _edit(at, "demand", {1: {"demand_h100e": -5.0}})  # does not validate
    _edit(at, "periods", {0: {"hours": 2000}})  # valid, but held with the invalid one
    assert at.session_state["draft_findings"]
    data = (TINY / "sites.csv").read_bytes()
    at.file_uploader(key="upload_files").set_value([("sites.csv", data, "text/csv")])
    rerun(at)
    at.button(key="upload_load").click()
    rerun(at)
    drafts = at.session_state["drafts"]
    assert sorted(drafts) == ["demand", "periods"]
    assert drafts["periods"].loc[0, "hours"] == 2000
    assert drafts["demand"].loc[1, "demand_h100e"] == -5.0
    assert at.session_state["draft_findings"]  # still the negative demand
    texts = [s.value for s in at.success]
    assert any(
        "Your edits of demand, periods are kept and still do not validate" in t for t in texts
    ), texts


def test_a_finding_names_the_editor_index_the_row_shows_after_a_row_delete(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Row 0 deleted, row 1 given an unknown customer: the editor still labels it 1."""
    at = open_app(monkeypatch)
    _edit(at, "demand", {1: {"customer": "zzz"}}, deleted=[0])
    frames = [d.value for d in at.dataframe]
    at_findings = next(i for i, f in enumerate(frames) if "message" in f.columns)
    bad = frames[at_findings][frames[at_findings]["column"] == "customer"]
    assert bad["row"].tolist() == [2]  # the first data row of the table as it would be saved
    assert bad["editor_row"].tolist() == [1]  # the label the editor shows
    shown = frames[at_findings + 1]  # "rows with findings", by the editor's label
    assert shown.index.tolist() == [1] and shown["customer"].tolist() == ["zzz"]


def test_numbers_are_read_as_typed_and_a_text_that_is_none_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The grid's number cells filtered keystrokes: 1e30 was kept as 130 and accepted
    ("Edits are valid and active"), 2.5e3 as 2.53; abc or a 21-digit number left the old
    value without a word. Numbers are text cells now, read back here (as the browser
    sends a text cell's value)."""
    at = open_app(monkeypatch)
    _edit(at, "demand", {0: {"demand_h100e": "2.5e3"}})
    assert at.session_state["draft_findings"] == []
    assert at.session_state["base_ds"].table("demand")["demand_h100e"].tolist() == [2500.0, 800.0]
    for typed, kept, shown, words in (
        ("1e30", 1e30, "1e+30", "outside the range the solver can take"),
        ("abc", "abc", "abc", "not a number"),
        ("1,000", "1,000", "1,000", "written with thousands separators"),
    ):
        _edit(at, "demand", {0: {"demand_h100e": typed}})
        (f,) = [f for f in at.session_state["draft_findings"] if f.severity == "error"]
        assert (f.file, f.row, f.column, f.value) == ("demand.csv", 2, "demand_h100e", shown)
        assert words in f.message
        assert at.session_state["drafts"]["demand"]["demand_h100e"].tolist()[0] == kept
        assert at.session_state["base_ds"].table("demand")["demand_h100e"].iloc[0] == 2500.0
        assert not at.exception


def test_a_new_row_with_empty_cells_is_kept_and_its_cells_are_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A customer row added with an empty required cell was held by the grid in the
    browser (required columns), never sent: "No findings", then gone after another page."""
    at = open_app(monkeypatch)
    _edit(
        at, "customers", added=[{"customer": "zeta", "price_training_usd_per_h100e_period": "4000"}]
    )
    draft = at.session_state["drafts"]["customers"]
    assert draft["customer"].tolist()[-1] == "zeta" and len(draft) == 2
    errors = [f for f in at.session_state["draft_findings"] if f.severity == "error"]
    assert errors and all(f.file == "customers.csv" and f.row == 3 for f in errors)
    named = {f.column for f in errors}
    assert "price_inference_usd_per_h100e_period" in named, [f.message for f in errors]
    goto(at, "plan")
    goto(at, "data")
    assert at.session_state["drafts"]["customers"]["customer"].tolist()[-1] == "zeta"


def test_the_download_and_the_plan_say_edits_with_errors_are_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a valid edit and an invalid one pending, the zip and the plan held the valid
    one only; only the sidebar said "the last valid data is used"."""
    at = open_app(monkeypatch)
    _edit(at, "demand", {0: {"demand_h100e": "-5"}})
    said = "The edits have errors (1 in demand.csv): this zip holds the last valid data"
    assert any(said in c.value for c in at.caption), [c.value for c in at.caption]
    goto(at, "plan")
    assert any(
        "The edits have errors (1 in demand.csv): the plan is solved on the last valid data"
        in w.value
        for w in at.warning
    )
    goto(at, "data")
    _edit(at, "demand", {0: {"demand_h100e": "2500"}})
    assert not any("The edits have errors" in c.value for c in at.caption)
    goto(at, "plan")
    assert not any("The edits have errors" in w.value for w in at.warning)


def test_the_sidebar_names_the_scenario_chosen_in_the_same_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sidebar was drawn before the page: choosing a scenario showed the previous one
    until the next run (seen in a headless browser: 'neutral' beside 'negative')."""
    at = open_app(monkeypatch)
    goto(at, "scenarios")
    at.radio(key="cmp_scenario_name").set_value("squeeze")
    at.run()
    shown = [m.value for m in at.sidebar.markdown]
    assert "**squeeze**" in shown, shown


def test_the_diff_of_edited_data_shows_the_edits(monkeypatch: pytest.MonkeyPatch) -> None:
    """With 'base' chosen after an edit the page read "Diff: base -> edited" and "No cell
    differs from the base data": it compared the edited data with itself."""
    at = open_app(monkeypatch)
    _edit(at, "sites", {0: {"energy_price_usd_per_mwh": 80.0}})
    goto(at, "scenarios")
    at.radio(key="cmp_scenario_name").set_value("base")
    rerun(at)
    assert not [i for i in at.info if "No cell differs" in i.value]
    diff = at.dataframe[-1].value
    row = diff[diff["column"] == "energy_price_usd_per_mwh"]
    assert len(row) == 1 and float(row["new"].iloc[0]) == 80.0
    assert any(c.value.endswith("1 of them by edits on the Data page.") for c in at.caption)


def test_back_on_the_data_page_the_editor_shows_the_active_edit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cell typed but not entered when the Plan link was clicked reached the drafts (the
    plan solved it) while the editor, back on Data, showed the old value and took no more
    clicks: on a new visit every editor is a new widget built from the drafts."""
    at = open_app(monkeypatch)
    _edit(at, "demand", {0: {"demand_h100e": 3200000.0}})
    (before,) = at.data_editor
    assert float(at.session_state["drafts"]["demand"]["demand_h100e"].iloc[0]) == 3200000.0
    goto(at, "plan")
    goto(at, "data")
    (after,) = at.data_editor
    assert after.key != before.key  # not the browser's copy of the old widget
    assert float(after.value["demand_h100e"].iloc[0]) == 3200000.0
    # the next edit goes on from the active one
    at.session_state[after.key] = {
        "edited_rows": {1: {"demand_h100e": 480001.0}},
        "added_rows": [],
        "deleted_rows": [],
    }
    rerun(at)
    draft = at.session_state["drafts"]["demand"]["demand_h100e"]
    assert (float(draft.iloc[0]), float(draft.iloc[1])) == (3200000.0, 480001.0)
