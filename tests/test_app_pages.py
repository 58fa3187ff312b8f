"""AppTest tests of the Streamlit pages (no browser): rendering, edits, uploads, downloads."""

from __future__ import annotations

import io
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from capacity.dataset import load_dataset
from capacity.scenarios import apply_overrides, apply_scenario
from optimizer import SolveOptions, solve
from tests.apptest_helpers import goto, open_app
from tests.test_app_formats import unformatted
from ui import upload
from ui.dataio import dataset_zip_bytes

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"
PAGES = ("data", "scenarios", "plan", "risk", "reports")


def _solve_in_app(at: AppTest) -> float:
    goto(at, "plan")
    at.button(key="solve").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    plan = at.session_state["plan"]
    assert plan.metrics["status"] == "optimal", plan.result.message
    return float(plan.result.objective_usd)


def _direct(ds) -> float:  # noqa: ANN001
    res = solve(ds, SolveOptions(solver="highs", time_limit_s=None))
    assert str(getattr(res.status, "value", res.status)) == "optimal"
    return float(res.objective_usd)


def _texts(elements) -> list[str]:  # noqa: ANN001
    return [str(e.value) for e in elements]


def _power_chart_follows_the_site_selector(at: AppTest) -> None:
    """The power-source chart: one site at a time, stacked MWh by source per quarter."""
    ps = at.session_state["plan"].result.tables["power_sources"]
    sites = sorted(ps.loc[ps["energy_mwh"].abs() > 0, "site"].astype(str).unique())
    select = at.selectbox(key="plan_power_site")
    assert list(select.options) == sites and len(sites) >= 2
    for site in sites[:2]:
        select.set_value(site)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        select = at.selectbox(key="plan_power_site")
        chart = next(c for c in at.get("plotly_chart") if '"Energy by power source' in c.proto.spec)
        spec = chart.proto.spec
        assert f"Energy by power source at {site}" in spec
        mine = ps[(ps["site"] == site) & (ps["energy_mwh"].abs() > 0)]
        for source in mine["source"].unique():  # one stacked trace per source
            assert f'"name":"{source}"' in spec


# ------------------------------------------------------------------------ rendering
def test_every_page_renders_on_the_default_data_after_a_solve(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch, ROOT / "data")
    ds = load_dataset(ROOT / "data")
    assert at.session_state["base_ds"].hash == ds.hash
    assert at.data_editor[0].key == "editor_periods"
    assert len(at.data_editor[0].value) == len(ds.periods)
    obj = _solve_in_app(at)
    assert obj == pytest.approx(_direct(ds), rel=1e-9)
    assert len(at.get("plotly_chart")) == 8  # with the training-cluster timeline
    _power_chart_follows_the_site_selector(at)
    assert [m.label for m in at.metric][:3] == ["Status", "Discounted cost", "Demand served"]
    assert at.metric[0].value == "optimal"
    expanders = [e.label for e in at.expander]
    assert "Money: discounted cost (the objective) and cash (when spent)" in expanders
    assert "Calibration against the public record" in expanders
    assert "Speed to power: grid delays, bridge power, flexible interconnection" in expanders
    frames = [df.value for df in at.dataframe]
    speed = [
        f for f in frames if {"grid_bound_quarters", "bridge_options", "note"} <= set(f.columns)
    ]
    plan_speed = at.session_state["plan"].result.tables["speed_to_power"]
    assert len(speed) == 1 and speed[0]["note"].tolist() == plan_speed["note"].tolist()
    orders = [f for f in frames if {"resource", "utilisation", "unit"} <= set(f.columns)]
    assert len(orders) == 1 and set(orders[0]["resource"]) >= {"recip_engine_mw"}
    # money in $B (or $M: the column's suffix says which), as the Risk page reads it
    money = [f for f in frames if {"term", "cash_kind"} <= set(f.columns)]
    assert len(money) == 1
    scale = {"_bn": 1e9, "_mn": 1e6}
    cash_col = next(c for c in money[0].columns if c.startswith("cash_usd"))
    cells = money[0][cash_col]
    if pd.api.types.is_numeric_dtype(cells):
        cash = cells * scale.get(cash_col.removeprefix("cash_usd"), 1.0)
        rel = 1e-9
    else:  # each amount in its own scale ($109.60B beside $3.54M), to the cent of its scale
        cash = cells.map(_usd_text)
        rel = 1e-3
    assert (cash > 0).any()
    costs = at.session_state["plan"].result.tables["costs"]
    assert cash.sum() == pytest.approx(costs["cash_usd"].sum(), rel=rel)
    # cash per year: capex and opex columns (penalties are not cash)
    per_year = [f for f in frames if "year" in f.columns]
    assert len(per_year) == 1
    kinds = [c for c in per_year[0].columns if c != "year"]
    assert [k.split("_usd")[0] for k in kinds] == ["capex", "opex"]
    year_total = sum(per_year[0][k].sum() * scale.get(k[k.index("_usd") + 4 :], 1.0) for k in kinds)
    cash_total = cash[money[0]["cash_kind"] != "none"].sum()
    assert year_total == pytest.approx(cash_total, rel=rel)
    calibration = [f for f in frames if "inside_band" in f.columns]
    assert len(calibration) == 1 and len(calibration[0]) == len(ds.table("public_record"))
    for page in PAGES:
        goto(at, page)
        assert not at.error, _texts(at.error)
        # every number readable: formats, units in headers (tests/test_app_formats.py)
        shown = [el for el in at.dataframe if el.editing_mode == "read_only"]
        assert [p for el in shown for p in unformatted(el)] == [], page
    # the Reports page lists the run
    assert at.session_state["plan"].scenario == "neutral"  # the CLI's default scenario


def test_pages_render_on_the_tiny_dataset_before_any_solve(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch)
    for page in PAGES:
        goto(at, page)
        assert not at.error, _texts(at.error)
    goto(at, "plan")
    assert any("Press **Solve**" in t for t in _texts(at.info))
    goto(at, "reports")
    assert any("No plan yet" in t for t in _texts(at.info))


def test_the_formulation_selector_reaches_the_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(monkeypatch)
    goto(at, "plan")
    assert at.selectbox(key="solve_formulation").value == "compact"  # the default
    compact = _solve_in_app(at)
    assert at.session_state["plan"].result.formulation == "compact"
    at.selectbox(key="solve_formulation").set_value("reference")
    at.run()
    reference = _solve_in_app(at)
    plan = at.session_state["plan"]
    assert plan.result.formulation == "reference"
    ds = load_dataset(TINY)
    direct = solve(ds, SolveOptions(formulation="reference"))
    assert plan.result.n_variables == direct.n_variables
    assert reference == pytest.approx(compact, rel=1e-9)
    assert reference == pytest.approx(direct.objective_usd, rel=1e-9)


def test_the_objective_selector_reaches_the_solve_and_leads_with_margin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch)
    goto(at, "plan")
    assert at.selectbox(key="solve_objective").value == "cost"  # the default
    _solve_in_app(at)
    assert at.session_state["plan"].result.objective == "cost"
    assert "Discounted margin" not in [m.label for m in at.metric]
    at.selectbox(key="solve_objective").set_value("margin")
    at.run()
    _solve_in_app(at)
    result = at.session_state["plan"].result
    direct = solve(load_dataset(TINY), SolveOptions(objective="margin"))
    assert result.objective == "margin"
    assert result.margin_usd == pytest.approx(direct.margin_usd, rel=1e-9)
    labels = [m.label for m in at.metric]
    assert labels[:3] == ["Discounted margin", "Discounted revenue", "Discounted cost"]
    assert not at.exception


def test_missing_dataset_shows_a_message_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    at = open_app(monkeypatch, tmp_path / "nowhere")
    assert any("did not load" in t for t in _texts(at.error))
    for page in PAGES:
        goto(at, page)
        assert at.error


# -------------------------------------------------------------------------- editing
def test_two_edits_in_two_tables_both_reach_the_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(monkeypatch)
    base = load_dataset(TINY)
    at.selectbox(key="data_table").set_value("demand")
    at.run()
    at.session_state[at.data_editor[0].key] = {
        "edited_rows": {0: {"demand_h100e": 2500.0}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    assert at.session_state["base_ds"].table("demand")["demand_h100e"].tolist() == [2500.0, 800.0]
    at.selectbox(key="data_table").set_value("sites")
    at.run()
    at.session_state[at.data_editor[0].key] = {
        "edited_rows": {0: {"energy_price_usd_per_mwh": 80.0}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    assert not at.exception
    edited = at.session_state["base_ds"]
    assert edited.table("demand")["demand_h100e"].iloc[0] == 2500.0  # first edit still there
    assert edited.table("sites")["energy_price_usd_per_mwh"].iloc[0] == 80.0

    demand = base.table("demand").copy()
    demand.loc[0, "demand_h100e"] = 2500.0
    sites = base.table("sites").copy()
    sites.loc[0, "energy_price_usd_per_mwh"] = 80.0
    expected = _direct(base.replace(demand=demand, sites=sites))
    assert expected != pytest.approx(_direct(base), rel=1e-6)
    assert _solve_in_app(at) == pytest.approx(expected, rel=1e-9)

    # back on the Data page the demand editor still shows the first edit
    goto(at, "data")
    at.selectbox(key="data_table").set_value("demand")
    at.run()
    # numbers are edited as text (the grid's number cells filtered what was typed)
    assert at.data_editor[0].value["demand_h100e"].tolist() == ["2500", "800"]


def test_an_edit_marks_the_old_plan_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(monkeypatch)
    _solve_in_app(at)
    goto(at, "data")
    at.selectbox(key="data_table").set_value("demand")
    at.run()
    at.session_state[at.data_editor[0].key] = {
        "edited_rows": {1: {"demand_h100e": 900.0}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    goto(at, "plan")
    assert any("changed since the last plan" in t for t in _texts(at.warning))
    assert len(at.get("plotly_chart")) == 0


def test_an_invalid_edit_is_kept_with_findings_and_the_last_valid_data_stays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch)
    base_hash = at.session_state["base_ds"].hash
    at.selectbox(key="data_table").set_value("demand")
    at.run()
    at.session_state[at.data_editor[0].key] = {
        "edited_rows": {1: {"demand_h100e": -5.0}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    assert not at.exception
    assert at.session_state["base_ds"].hash == base_hash
    assert at.session_state["drafts"]["demand"]["demand_h100e"].tolist() == [1500.0, -5.0]
    assert any("1 error(s)" in t for t in _texts(at.error))
    frames = [d.value for d in at.dataframe]
    findings = next(f for f in frames if "message" in f.columns)
    assert findings["editor_row"].tolist() == [1]
    assert findings["column"].tolist() == ["demand_h100e"]
    highlighted = next(f for f in frames if "demand_h100e" in f.columns and len(f) == 1)
    assert highlighted["demand_h100e"].tolist() == [-5.0]
    # the Plan page solves the last valid data
    goto(at, "plan")
    assert at.session_state["base_ds"].hash == base_hash


# -------------------------------------------------------------------------- uploads
def _upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.file_uploader(key="upload_files").set_value([(name, data, "application/octet-stream")])
    at.run()
    at.button(key="upload_load").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize(
    ("name", "payload", "message"),
    [
        ("dataset.zip", b"this is not a zip", "not a valid zip"),
        ("demand.csv", b"customer,workload,period,demand\nacme,training,2026Q1,1\n", "error(s)"),
        (
            "demand.csv",
            b"customer,workload,period,demand_h100e\nacme,training,2026Q1,lots\n",
            "error(s)",
        ),
        ("notes.txt.csv", b"a,b\n1,2\n", "name a file <table>.csv"),
    ],
)
def test_a_bad_upload_shows_an_error_and_keeps_the_data(
    monkeypatch: pytest.MonkeyPatch, name: str, payload: bytes, message: str
) -> None:
    at = open_app(monkeypatch)
    before = at.session_state["base_ds"].hash
    _upload(at, name, payload)
    assert any(message in t for t in _texts(at.error)), _texts(at.error)
    assert at.session_state["base_ds"].hash == before


def test_bad_upload_findings_name_the_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(monkeypatch)
    _upload(at, "demand.csv", b"customer,workload,period,demand_h100e\nacme,training,2026Q1,lots\n")
    f = next(d.value for d in at.dataframe if "message" in d.value.columns)
    row = f.iloc[0]
    assert (row["row"], row["column"], row["value"]) == (2, "demand_h100e", "lots")
    assert "not a number" in row["message"]


def test_an_upload_over_the_size_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(monkeypatch)
    before = at.session_state["base_ds"].hash
    monkeypatch.setattr(upload, "MAX_UPLOAD_BYTES", 100)
    _upload(at, "demand.csv", b"customer,workload,period,demand_h100e\n" + b"x" * 200)
    assert any("the limit is 50 MB" in t for t in _texts(at.error)), _texts(at.error)
    assert at.session_state["base_ds"].hash == before


def test_a_good_zip_upload_replaces_the_data_and_round_trips(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch)
    base = load_dataset(TINY)
    demand = base.table("demand").copy()
    demand.loc[0, "demand_h100e"] = 1234.0
    new = base.replace(demand=demand)
    _upload(at, "mydata.zip", dataset_zip_bytes(new))
    got = at.session_state["base_ds"]
    assert got.name == "mydata"
    assert got.table("demand")["demand_h100e"].tolist() == [1234.0, 800.0]
    assert got.hash == new.hash
    assert any(t.startswith("Loaded **mydata** from mydata.zip") for t in _texts(at.success))


def test_single_table_upload_replaces_only_that_table(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(monkeypatch)
    buf = io.BytesIO()
    pd.DataFrame(
        {
            "customer": ["acme"],
            "workload": ["training"],
            "period": ["2026Q1"],
            "demand_h100e": [42.0],
        }
    ).to_parquet(buf, index=False)
    _upload(at, "demand.parquet", buf.getvalue())
    got = at.session_state["base_ds"]
    assert got.table("demand")["demand_h100e"].tolist() == [42.0]
    assert got.table("sites").equals(load_dataset(TINY).table("sites"))


# --------------------------------------------------------------- scenarios and risk
def test_composed_scenario_is_diffed_and_solved(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(monkeypatch)
    goto(at, "scenarios")
    at.number_input(key="cmp_demand_acme").set_value(1.5)
    at.run()
    assert not at.exception
    diff = next(d.value for d in at.dataframe if "old" in d.value.columns)
    assert sorted(diff["new"]) == ["1,200", "2,250"]  # as the tables read numbers
    assert set(diff["unit"]) == {"H100e"}  # old and new mix many columns' units
    base = load_dataset(TINY)
    ov = [
        {
            "op": "scale",
            "table": "demand",
            "column": "demand_h100e",
            "where": {"customer": ["acme"]},
            "factor": 1.5,
        }
    ]
    expected = _direct(apply_overrides(base, ov))
    assert _solve_in_app(at) == pytest.approx(expected, rel=1e-9)
    assert at.session_state["plan"].scenario == "neutral+custom"  # on the default scenario
    # the composer keeps its value after a page change
    goto(at, "scenarios")
    assert at.number_input(key="cmp_demand_acme").value == 1.5


def test_an_invalid_composed_scenario_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(monkeypatch)
    goto(at, "scenarios")
    at.number_input(key="cmp_trainium_derate").set_value(1.5)  # derate 0.8 * 1.5 > 1
    at.run()
    assert any("does not validate" in t for t in _texts(at.error))
    assert at.session_state["overrides"] == []


def test_risk_page_compares_scenarios(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(monkeypatch)
    goto(at, "risk")
    at.multiselect(key="risk_scenarios").set_value(["neutral", "squeeze"])
    at.run()
    at.button(key="risk_compare_btn").click()
    at.run()
    assert not at.exception
    cmp = at.session_state["risk_compare"]["frame"].set_index("scenario")
    base = load_dataset(TINY)
    assert cmp.loc["squeeze", "objective_usd"] == pytest.approx(
        _direct(apply_scenario(base, "squeeze")), rel=1e-9
    )
    assert cmp.loc["neutral", "objective_usd"] == pytest.approx(_direct(base), rel=1e-9)
    assert cmp.loc["neutral", "served_share"] == pytest.approx(1.0)
    assert 0.0 <= cmp.loc["neutral", "trainium_share"] <= 1.0


# -------------------------------------------------------------------------- downloads
def test_download_keeps_the_results_on_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(monkeypatch)
    obj = _solve_in_app(at)
    at.download_button(key="plan_demand_csv").click()
    at.run()
    assert not at.exception
    assert len(at.get("plotly_chart")) == 8  # with the training-cluster timeline
    assert at.metric[0].value == "optimal"
    goto(at, "reports")
    assert not at.error, _texts(at.error)
    at.download_button(key="report_download").click()
    at.run()
    assert not at.exception
    assert at.download_button(key="report_download")  # still offered
    assert at.session_state["plan"].result.objective_usd == obj
    runs = next(d.value for d in at.dataframe if "run_id" in d.value.columns)
    assert runs["cost_usd_mn"].tolist() == [pytest.approx(obj / 1e6)]  # $1.96M, not $0.00B
    # the report zip holds the Parquet tables of this run
    zdata = at.session_state["report_zips"][at.session_state["plan"].run_id]
    with zipfile.ZipFile(io.BytesIO(zdata)) as zf:
        names = zf.namelist()
        member = next(n for n in names if n.endswith("scenario=neutral/demand.parquet"))
        demand = pd.read_parquet(io.BytesIO(zf.read(member)))
    assert any(n.endswith("manifest.json") for n in names)
    assert demand["demand_h100e"].sum() == pytest.approx(2300.0)
    goto(at, "plan")
    assert len(at.get("plotly_chart")) == 8  # with the training-cluster timeline


def test_risk_page_without_the_risk_module_shows_an_info_box(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "optimizer.analysis.hedge", None)  # import now fails
    at = open_app(monkeypatch)
    goto(at, "risk")
    assert any("risk modules (`optimizer.analysis.tornado`," in t for t in _texts(at.info))
    assert not at.error


_RERUN = """
import runpy, sys
runpy.run_path("ui/app.py", run_name=sys.argv[1])
import streamlit as st
print("base_ds" in st.session_state)
"""


@pytest.mark.parametrize(("run_name", "ran"), [("__main__", "True"), ("__mp_main__", "False")])
def test_a_spawned_process_that_reads_the_app_file_runs_no_page(run_name: str, ran: str) -> None:
    # multiprocessing's spawn start re-reads the parent's __main__ file as __mp_main__
    # in each child (a local Dask cluster's workers started from the app's process):
    # the app's session (its dataset loaded into the session state) starts only in
    # Streamlit's own run of the file
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run(
        [sys.executable, "-c", _RERUN, run_name],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split()[-1] == ran


def _usd_text(text: str) -> float:
    """Read a money cell such as ``$109.60B``, ``-$3.54M`` or ``$0`` back as USD."""
    sign = -1.0 if text.startswith("-") else 1.0
    body = text.lstrip("-").removeprefix("$").replace(",", "")
    mult = {"B": 1e9, "M": 1e6}.get(body[-1:], 1.0)
    return sign * float(body.rstrip("BM")) * mult


#: Streamlit input widgets: a setting the user chose (not buttons, uploads or views).
_INPUTS = {"checkbox", "multiselect", "number_input", "radio", "selectbox", "slider", "text_input"}


def _inputs_without_persist() -> list[str]:
    """Input widgets of ui/ with a key but no ``persist_state`` (itself or in ``**kwargs``)."""
    import ast

    missing = []
    for path in sorted((Path(__file__).resolve().parents[1] / "ui").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            names = {k.arg for k in node.keywords}
            spread = [ast.unparse(k.value) for k in node.keywords if k.arg is None]
            if node.func.attr in _INPUTS and "key" in names and "persist_state" not in names:
                if not spread:  # ``**kept`` is checked by the page's own test
                    missing.append(f"{path.name}:{node.lineno} {node.func.attr}")
    return missing


def test_every_input_with_a_key_keeps_its_value_across_pages() -> None:
    """The MIP checkbox, the near-optimal slacks and the risk-aversion inputs reset after
    a visit to another page (the results made with them then hid): every input widget
    with a key is kept for the session, found from the source of ui/."""
    assert _inputs_without_persist() == []


def test_the_mip_checkbox_and_risk_inputs_survive_a_page_switch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch, TINY)
    goto(at, "plan")
    at.checkbox(key="solve_clusters").check()
    at.run()
    goto(at, "risk")
    at.text_input(key="alt_slacks").set_value("0.02")
    at.number_input(key="ra_alpha").set_value(0.9)
    at.run()
    goto(at, "data")
    goto(at, "plan")
    assert at.checkbox(key="solve_clusters").value is True
    goto(at, "risk")
    assert at.text_input(key="alt_slacks").value == "0.02"
    assert at.number_input(key="ra_alpha").value == pytest.approx(0.9)
