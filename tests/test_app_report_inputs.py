"""AppTest: the app's report download records the edits and overrides, and re-solves."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
import yaml
from apptest_helpers import TINY, goto, open_app

from capacity.dataset import load_dataset
from capacity.recorded_inputs import EDIT_SOURCE, read_scenarios_file
from capacity.scenarios import apply_scenario
from optimizer import SolveOptions, solve


def test_the_downloaded_report_re_solves_to_the_same_objective(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    at = open_app(monkeypatch)
    at.selectbox(key="data_table").set_value("sites")
    at.run()
    at.session_state[at.data_editor[0].key] = {
        "edited_rows": {0: {"energy_price_usd_per_mwh": 80.0}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    goto(at, "scenarios")
    at.number_input(key="cmp_demand_acme").set_value(1.5)  # composed on top of neutral
    at.run()
    goto(at, "plan")
    at.button(key="solve").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    plan = at.session_state["plan"]
    assert plan.scenario == "neutral+custom" and plan.metrics["status"] == "optimal"
    goto(at, "reports")
    assert not at.exception and not at.error
    data = at.session_state["report_zips"][plan.run_id]
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        member = next(n for n in zf.namelist() if n.endswith("inputs.yaml"))
        (tmp_path / "inputs.yaml").write_bytes(zf.read(member))
        manifest = yaml.safe_load(
            zf.read(next(n for n in zf.namelist() if n.endswith("manifest.json")))
        )
    entry = manifest["scenarios"]["neutral+custom"]["inputs"]
    assert entry["edits"] == [
        {
            "table": "sites",
            "key": "dc-1",
            "column": "energy_price_usd_per_mwh",
            "old": "50.0",
            "new": "80.0",
        }
    ]
    ops = [(o["op"], o["table"], o.get("source")) for o in entry["overrides"]]
    assert ops[0] == ("set", "sites", EDIT_SOURCE) and ops[-1][:2] == ("scale", "demand")
    # the data as loaded plus the recorded file, solved outside the app: the same plan
    base = load_dataset(TINY).with_scenarios(read_scenarios_file(tmp_path / "inputs.yaml"), "x")
    again = solve(apply_scenario(base, "neutral+custom"), SolveOptions(solver="highs"))
    assert float(again.objective_usd) == pytest.approx(float(plan.result.objective_usd), rel=1e-9)
    assert float(again.objective_usd) != pytest.approx(
        float(solve(load_dataset(TINY)).objective_usd), rel=1e-6
    )


def test_a_price_edit_solved_in_the_cost_objective_is_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An edit of a customer's price, solved in the cost objective, changed nothing and
    the Plan page said nothing; it now warns (and says nothing in the margin one)."""
    at = open_app(monkeypatch)
    at.selectbox(key="data_table").set_value("customers")
    at.run()
    column = "price_training_usd_per_h100e_period"
    at.session_state[at.data_editor[0].key] = {
        "edited_rows": {0: {column: 9999.0}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    goto(at, "plan")
    at.button(key="solve").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    said = [w.value for w in at.warning if f"customers.{column}" in w.value]
    assert len(said) == 1 and "changes nothing" in said[0]
    at.selectbox(key="solve_objective").set_value("margin")
    at.button(key="solve").click()
    at.run()
    assert at.session_state["plan"].result.objective == "margin"
    assert not [w.value for w in at.warning if "changes nothing" in w.value]


def test_an_added_row_is_named_in_inputs_yaml_and_the_re_solve_warns(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A row added in the app cannot be written as an override: the header names it, and
    `capacity solve --scenarios-file inputs.yaml` warns that its tables differ."""
    from typer.testing import CliRunner

    from capacity.recorded_inputs import recorded_hash
    from optimizer.cli.commands import app

    at = open_app(monkeypatch)
    at.selectbox(key="data_table").set_value("demand")
    at.run()
    at.session_state[at.data_editor[0].key] = {
        "edited_rows": {0: {"demand_h100e": 2500.0}},
        "added_rows": [
            {"customer": "acme", "workload": "inference", "period": "2026Q1", "demand_h100e": 300}
        ],
        "deleted_rows": [],
    }
    at.run()
    assert at.session_state["draft_findings"] == []
    goto(at, "plan")
    at.button(key="solve").click()
    at.run()
    plan = at.session_state["plan"]
    assert plan.metrics["status"] == "optimal"
    goto(at, "reports")
    data = at.session_state["report_zips"][plan.run_id]
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        member = next(n for n in zf.namelist() if n.endswith("inputs.yaml"))
        text = zf.read(member).decode()
    record = tmp_path / "inputs.yaml"
    record.write_text(text)
    assert "# NOT re-created by these overrides (1 edit(s)" in text
    assert "#   demand acme/inference/2026Q1/: row added\n" in text
    assert recorded_hash(record) is not None  # the tables as solved, for the re-solve's check
    name = plan.scenario
    res = CliRunner().invoke(
        app,
        [
            "solve",
            str(TINY),
            "--scenarios-file",
            str(record),
            "--scenario",
            name,
            "--out",
            str(tmp_path / "out"),
        ],
        env={"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"},
    )
    assert res.exit_code == 0, res.output
    assert "the plan is not the report's (the data differ)" in " ".join(res.output.split())


def test_edited_data_with_no_scenario_is_named_edited_and_re_solves(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Edited data with no scenario was recorded as scenario 'base' with the edits as
    overrides: 'base' then meant two data in one folder, and the record could not be
    told from the data as loaded. It is 'edited', and its download re-solves by name."""
    at = open_app(monkeypatch)
    goto(at, "scenarios")
    at.radio(key="cmp_scenario_name").set_value("base")
    at.run()
    goto(at, "data")
    at.selectbox(key="data_table").set_value("sites")
    at.run()
    at.session_state[at.data_editor[0].key] = {
        "edited_rows": {0: {"energy_price_usd_per_mwh": 80.0}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    goto(at, "plan")
    at.button(key="solve").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    plan = at.session_state["plan"]
    assert plan.scenario == "edited" and plan.metrics["status"] == "optimal"
    goto(at, "reports")
    data = at.session_state["report_zips"][plan.run_id]
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        member = next(n for n in zf.namelist() if n.endswith("inputs.yaml"))
        assert "scenario=edited/" in member
        (tmp_path / "inputs.yaml").write_bytes(zf.read(member))
    base = load_dataset(TINY).with_scenarios(read_scenarios_file(tmp_path / "inputs.yaml"), "x")
    again = solve(apply_scenario(base, "edited"), SolveOptions(solver="highs"))
    assert float(again.objective_usd) == pytest.approx(float(plan.result.objective_usd), rel=1e-9)
    as_loaded = solve(apply_scenario(base, "base"), SolveOptions(solver="highs"))
    assert float(as_loaded.objective_usd) != pytest.approx(float(again.objective_usd), rel=1e-6)
