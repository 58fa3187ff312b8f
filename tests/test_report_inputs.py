"""Reproducible reports: each scenario's overrides are recorded and solve again to the same plan."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from capacity.dataset import load_dataset
from capacity.override_checks import SOURCE_WARNING
from capacity.recorded_inputs import INPUTS_FILE, read_scenarios_file, recorded_hash
from capacity.scenarios import apply_scenario
from capacity.validation import DataValidationError
from optimizer.cli.commands import app

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"
ENV = {"COLUMNS": "160", "NO_COLOR": "1", "TERM": "dumb"}

PRICEY = """
  pricey:
    description: dearer chips and a later grid, composed
    overrides:
      - op: scale
        table: chips
        column: capex_usd_per_chip
        factor: 1.5
        source: assumption
      - op: shift
        table: site_grid
        column: grid_mw
        where: {site: dc-1}
        periods: 1
        source: assumption
"""


@pytest.fixture
def data(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    shutil.copytree(TINY, d)
    with (d / "scenarios.yaml").open("a", encoding="utf-8") as f:
        f.write(PRICEY)
    return d


def _solve(*args: str) -> dict[str, dict[str, object]]:
    r = CliRunner().invoke(app, ["solve", *args], env=ENV)
    assert r.exit_code == 0, r.output
    out = Path(args[args.index("--out") + 1])
    (run,) = out.iterdir()
    scenarios: dict[str, dict[str, object]] = json.loads((run / "manifest.json").read_text())[
        "scenarios"
    ]
    for name, entry in scenarios.items():
        entry["dir"] = run / f"scenario={name}"
    return scenarios


def test_a_report_re_solves_from_its_recorded_inputs_to_the_same_objective(
    data: Path, tmp_path: Path
) -> None:
    first = _solve(str(data), "-s", "pricey", "-s", "neutral", "--out", str(tmp_path / "a"))
    pricey, neutral = first["pricey"], first["neutral"]
    assert pricey["objective_usd"] != pytest.approx(neutral["objective_usd"], rel=1e-6)
    recorded = pricey["inputs"]
    defined = load_dataset(data).scenarios["pricey"]
    assert recorded["file"] == f"scenario=pricey/{INPUTS_FILE}"  # type: ignore[index]
    assert recorded["overrides"] == [o.to_dict() for o in defined.overrides]  # type: ignore[index]
    assert recorded["edits"] == [] and neutral["inputs"]["overrides"] == []  # type: ignore[index]
    inputs = Path(str(pricey["dir"])) / INPUTS_FILE
    assert read_scenarios_file(inputs)["pricey"] == defined
    # the recorded file alone (the data folder's scenarios.yaml gone) solves the same plan
    (data / "scenarios.yaml").unlink()
    again = _solve(
        str(data), "--scenarios-file", str(inputs), "-s", "pricey", "--out", str(tmp_path / "b")
    )
    assert again["pricey"]["objective_usd"] == pytest.approx(pricey["objective_usd"], rel=1e-9)
    assert again["pricey"]["dataset_hash"] != ""
    text = inputs.read_text(encoding="utf-8")
    assert text.startswith("# Inputs of scenario 'pricey'")
    assert "capacity solve DATA --scenarios-file inputs.yaml --scenario pricey" in text
    assert yaml.safe_load(text)["scenarios"]["pricey"]["overrides"][0]["factor"] == 1.5


def test_a_scenarios_file_that_does_not_fit_the_data_is_one_clear_error(
    data: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "inputs.yaml"
    bad.write_text(
        "scenarios:\n  x:\n    overrides:\n      - op: scale\n        table: chips\n"
        "        column: capex_usd_per_chip\n        where: {chip: nope}\n"
        "        factor: 2\n        source: assumption\n"
    )
    r = CliRunner().invoke(app, ["solve", str(data), "--scenarios-file", str(bad), "-s", "x"])
    assert r.exit_code == 1
    assert "nope" in r.output and "Traceback" not in r.output
    with pytest.raises(DataValidationError, match="not found"):
        read_scenarios_file(tmp_path / "missing.yaml")


@pytest.mark.slow
def test_each_batch_case_records_its_inputs_and_re_solves_to_its_objective(
    tmp_path: Path, scheduler_address: str
) -> None:
    from capacity.scenarios import apply_scenario
    from optimizer import solve
    from optimizer.analysis.batch import run_batch

    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        f"data: {TINY}\nscenarios: [squeeze]\ngrid:\n  base: squeeze\n  axes:\n"
        "    - name: demand\n      override: {op: scale, table: demand, column: demand_h100e}\n"
        "      levels: [0.5, 2.0]\n"
    )
    out = tmp_path / "out"
    r = run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    assert r.n_failed == 0
    base = load_dataset(TINY)
    squeeze = [o.to_dict() for o in base.scenarios["squeeze"].overrides]
    objectives = set()
    for name, entry in r.manifest["scenarios"].items():
        inputs = out / entry["inputs"]["file"]
        recorded = entry["inputs"]["overrides"]
        assert recorded[: len(squeeze)] == squeeze  # the base scenario's own, first
        assert len(recorded) == len(squeeze) + (name != "squeeze")
        recorded_ds = base.with_scenarios(read_scenarios_file(inputs), str(inputs))
        # the sweep's template had no source: the record names the sweep case, so a
        # re-solve of the tool's own record warns of nothing
        assert [str(f) for f in recorded_ds.warnings if SOURCE_WARNING in str(f)] == []
        if name != "squeeze":
            level = name.removeprefix("grid_demand-")
            assert recorded[-1]["source"] == (
                f"assumption: sweep grid case {name} (demand={level})"
            )
        again = solve(apply_scenario(recorded_ds, name))
        assert float(again.objective_usd) == pytest.approx(entry["objective_usd"], rel=1e-9)
        objectives.add(round(entry["objective_usd"]))
    assert len(objectives) == 3  # three different plans, each reproduced


def test_cell_edits_become_set_overrides_that_re_create_the_edited_tables() -> None:
    from capacity.recorded_inputs import edits_as_overrides
    from capacity.scenarios import apply_overrides

    origin = load_dataset(TINY)
    sites = origin.table("sites").copy()
    sites.loc[0, "pue_air"] = 1.2345678901234567
    chips = origin.table("chips").copy()
    chips.loc[1, "capex_usd_per_chip"] = 17_500.0
    edited = origin.replace(sites=sites, chips=chips)
    overrides, rows = edits_as_overrides(origin, edited)
    assert {(o.table, o.column, tuple(o.where.items())) for o in overrides} == {
        ("sites", "pue_air", (("site", ("dc-1",)),)),
        ("chips", "capex_usd_per_chip", (("chip", ("trn2",)),)),
    }
    assert {r["new"] for r in rows} == {"1.2345678901234567", "17500.0"}
    applied = apply_overrides(origin, overrides)
    for t in ("sites", "chips"):
        pd.testing.assert_frame_equal(applied.table(t), edited.table(t))
    added = edited.replace(chips=pd.concat([chips, chips.iloc[[0]].assign(chip="new")]))
    _, rows = edits_as_overrides(origin, added)
    assert {
        "table": "chips",
        "key": "new",
        "column": "(row)",
        "old": "(no row)",
        "new": "added",
    } in rows


def test_the_recorded_command_keeps_the_objective_and_re_solves_to_the_same_margin(
    data: Path, tmp_path: Path
) -> None:
    """A margin-objective report: the header's command carries --objective margin, and
    running it (DATA replaced by the folder) gives the same objective; the cost mode
    would give another one."""
    import shlex

    first = _solve(str(data), "-s", "pricey", "--objective", "margin", "--out", str(tmp_path / "a"))
    entry = first["pricey"]
    assert entry["inputs"]["solve_flags"] == "--objective margin"  # type: ignore[index]
    inputs = Path(str(entry["dir"])) / INPUTS_FILE
    (command,) = [
        line.split("Solve it again: ", 1)[1]
        for line in inputs.read_text(encoding="utf-8").splitlines()
        if "Solve it again: " in line
    ]
    words = shlex.split(command)
    assert words[:3] == ["capacity", "solve", "DATA"]
    args = [str(data), *words[3:]]
    args[args.index(INPUTS_FILE)] = str(inputs)
    again = _solve(*args, "--out", str(tmp_path / "b"))["pricey"]
    assert again["objective_usd"] == pytest.approx(entry["objective_usd"], rel=1e-9)
    cost = _solve(str(data), "-s", "pricey", "--out", str(tmp_path / "c"))["pricey"]
    assert cost["objective_usd"] != pytest.approx(entry["objective_usd"], rel=1e-3)


def test_a_hedge_records_each_sampled_scenario_and_each_solves_again(tmp_path: Path) -> None:
    """`capacity hedge --out` records its draws as solve and batch do (base, then the draw)."""
    from capacity.scenarios import apply_scenario
    from optimizer import solve
    from optimizer.analysis.monte_carlo import sample_scenarios

    args = ["hedge", str(TINY), "-n", "2", "--workers", "0", "--base", "squeeze"]
    r = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "h")], env=ENV)
    assert r.exit_code == 0, r.output
    (run,) = (tmp_path / "h").iterdir()
    start = apply_scenario(load_dataset(TINY), "squeeze")
    names, dsets, _ = sample_scenarios(start, 2, 0, base=None)
    squeeze = [o.to_dict() for o in load_dataset(TINY).scenarios["squeeze"].overrides]
    # the folder says what was run, on which data, with which code (it held CSVs only, its
    # run ID named the first draw's data)
    man = json.loads((run / "manifest.json").read_text())
    assert run.name.startswith("hedge-") and run.name.endswith(start.hash[:8])
    assert man["settings"]["base_dataset_hash"] == start.hash
    assert (man["settings"]["base"], man["settings"]["samples"], man["settings"]["seed"]) == (
        "squeeze",
        2,
        0,
    )
    assert man["package_version"] and man["result"]["converged"] is True
    per = pd.read_csv(run / "per_scenario.csv")
    expected = float((per["weight"] * per["hedged_cost_usd"]).sum())
    assert man["result"]["expected_cost_usd"] == pytest.approx(expected, rel=1e-6)
    assert {n: e["dataset_hash"] for n, e in man["scenarios"].items()} == {
        n: d.hash for n, d in zip(names, dsets, strict=True)
    }
    for name, ds in zip(names, dsets, strict=True):
        path = run / f"scenario={name}" / INPUTS_FILE
        text = path.read_text(encoding="utf-8")
        assert f"content hash {ds.hash}" in text  # the data as solved
        recorded = yaml.safe_load(text)["scenarios"][name]["overrides"]
        assert recorded[: len(squeeze)] == squeeze and len(recorded) > len(squeeze)
        again = apply_scenario(
            load_dataset(TINY).with_scenarios(read_scenarios_file(path), str(path)), name
        )
        for table in ds.tables:  # the recorded overrides re-create the sampled tables
            pd.testing.assert_frame_equal(again.table(table), ds.table(table))
        assert solve(again).objective_usd == pytest.approx(solve(ds).objective_usd, rel=1e-9)
        # each drawn override names its draw (a re-solve warned "override has no source"
        # once per override: 15 on the bundled data)
        drawn = recorded[len(squeeze) :]
        assert all(
            o["source"].startswith(f"assumption: Monte Carlo draw {name} (seed 0)") for o in drawn
        )
        res = CliRunner().invoke(
            app,
            ["solve", str(TINY), "--scenarios-file", str(path), "-s", name, "--no-report"],
            env=ENV,
        )
        assert res.exit_code == 0 and "no source" not in res.output, res.output


def test_inputs_re_solved_on_other_data_say_the_plan_is_not_the_reports(
    data: Path, tmp_path: Path
) -> None:
    """The recorded command on edited data gave another objective without a word. The
    header's content hash is now checked: the same data re-solves silently, edited
    data warns with both hashes."""
    first = _solve(str(data), "-s", "pricey", "--out", str(tmp_path / "a"))
    inputs = Path(str(first["pricey"]["dir"])) / INPUTS_FILE
    solved_tables = apply_scenario(load_dataset(data), "pricey").tables_hash
    args = ["solve", str(data), "--scenarios-file", str(inputs), "-s", "pricey", "--no-report"]
    same = CliRunner().invoke(app, args, env=ENV)
    assert same.exit_code == 0 and "the plan is not the report's" not in same.output
    dem = pd.read_csv(data / "demand.csv")
    dem["demand_h100e"] = dem["demand_h100e"] * 0.9
    dem.to_csv(data / "demand.csv", index=False)
    other = CliRunner().invoke(app, args, env=ENV)
    text = " ".join(other.output.split())
    recorded = recorded_hash(inputs)
    assert recorded == solved_tables  # the tables as solved, whatever the scenarios file
    assert other.exit_code == 0
    assert f"content hash {recorded[:12]}" in text and "the plan is not the report's" in text


def test_a_plan_folder_missing_tables_is_read_with_a_warning_naming_them(
    tmp_path: Path,
) -> None:
    """A scenario folder with demand.parquet and costs.parquet deleted (a partial copy)
    read as a whole optimal plan whose demand and costs were empty, without a word."""
    import warnings

    from optimizer.notebook import read_run
    from optimizer.output.parquet_tables import read_report

    out = tmp_path / "r"
    r = CliRunner().invoke(app, ["solve", str(TINY), "-s", "squeeze", "--out", str(out)], env=ENV)
    assert r.exit_code == 0, r.output
    (run,) = out.iterdir()
    sdir = run / "scenario=squeeze"
    with warnings.catch_warnings():  # whole: no warning
        warnings.simplefilter("error")
        read_run(run)
    for t in ("demand", "costs"):
        (sdir / f"{t}.parquet").unlink()
    for read in (lambda: read_report(sdir), lambda: read_report(run), lambda: read_run(run)):
        with pytest.warns(UserWarning, match=r"lacks 2 of its \d+ tables \(demand.parquet, ") as w:
            read()
        assert "costs.parquet" in str(w[0].message) and str(sdir) in str(w[0].message)


def test_a_figure_read_from_a_table_the_folder_lacks_is_an_error_naming_the_file(
    tmp_path: Path,
) -> None:
    """After the warning, a plan read back with costs.parquet deleted gave opex as an
    empty table and the compare of two such plans zero cost: a false figure. Each
    statistic that reads the lacked table now raises ReportError naming the file, in a
    scenario folder and across a run; one that does not read it gives its figure."""
    import warnings

    from optimizer.notebook import read_report, read_run
    from optimizer.output.atomic import ReportError

    out = tmp_path / "r"
    r = CliRunner().invoke(app, ["solve", str(TINY), "-s", "squeeze", "--out", str(out)], env=ENV)
    assert r.exit_code == 0, r.output
    (run,) = out.iterdir()
    sdir = run / "scenario=squeeze"
    whole = read_report(sdir, data=TINY)
    opex_usd = float(whole.statistics.opex(groupby=[])["opex_usd"].iloc[0])
    fleet = whole.statistics.fleet(groupby=[])
    assert opex_usd > 0
    (sdir / "costs.parquet").unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the lacked tables' warning (tested above)
        part = read_report(sdir, data=TINY)
        plans = read_run(run, data=TINY)
    for plan in (part, plans["squeeze"]):
        for name in ("opex", "capex", "cash", "costs"):
            with pytest.raises(ReportError, match=r"scenario=squeeze/costs\.parquet is missing"):
                getattr(plan.statistics, name)(groupby=[])
        pd.testing.assert_frame_equal(plan.statistics.fleet(groupby=[]), fleet)
    with pytest.raises(ReportError, match="costs.parquet is missing"):
        plans.statistics.opex(groupby=[])


def test_a_report_that_predates_a_table_reads_it_as_empty(tmp_path: Path) -> None:
    """A whole report written before flexible_interconnection existed (its manifest does
    not list the file) raised ReportError on capex, "copy the whole report folder": the
    folder was whole. A table its manifest lists and the folder lacks is still an error."""
    import warnings

    from optimizer.notebook import read_report
    from optimizer.output.atomic import ReportError

    out = tmp_path / "r"
    r = CliRunner().invoke(app, ["solve", str(TINY), "-s", "squeeze", "--out", str(out)], env=ENV)
    assert r.exit_code == 0, r.output
    (run,) = out.iterdir()
    sdir = run / "scenario=squeeze"
    capex = read_report(sdir, data=TINY).statistics.capex(groupby=[])
    # as an older version wrote it: no such file, and the manifest does not list it
    (sdir / "flexible_interconnection.parquet").unlink()
    man = json.loads((run / "manifest.json").read_text())
    files = man["scenarios"]["squeeze"]["files"]
    files.remove("scenario=squeeze/flexible_interconnection.parquet")
    (run / "manifest.json").write_text(json.dumps(man))
    with pytest.warns(UserWarning, match=r"predates 1 table\(s\) \(flexible_interconnection\)"):
        older = read_report(sdir, data=TINY)
    pd.testing.assert_frame_equal(older.statistics.capex(groupby=[]), capex)  # none here
    (sdir / "costs.parquet").unlink()  # listed, lacked: lost
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lost = read_report(sdir, data=TINY)
    with pytest.raises(ReportError, match="costs.parquet is missing"):
        lost.statistics.capex(groupby=[])


def test_a_record_of_base_with_overrides_is_refused_naming_the_rename(tmp_path: Path) -> None:
    """'base' is the data as loaded; an older app download named its edited data 'base'
    with the edits as set overrides. Read back, it is refused with the rename to make,
    while the same record under another name, and 'base' with no overrides, read back."""
    from capacity.scenario_spec import Override
    from optimizer.output.inputs_record import SolvedInputs, write_inputs

    edit = Override(
        op="set",
        table="demand",
        column="demand_h100e",
        where={"customer": ("acme",), "period": ("2026Q1",)},
        value="2500",
        source="app edit",
    )
    write_inputs(SolvedInputs(scenario="base", overrides=(edit,)), tmp_path, tmp_path)
    with pytest.raises(DataValidationError) as e:
        read_scenarios_file(tmp_path / INPUTS_FILE)
    (f,) = e.value.findings
    assert (f.column, f.value) == ("scenarios.base", "base")
    assert "cannot carry overrides" in f.message and "rename it in that inputs.yaml" in f.message
    write_inputs(SolvedInputs(scenario="edited", overrides=(edit,)), tmp_path, tmp_path)
    assert [o.value for o in read_scenarios_file(tmp_path / INPUTS_FILE)["edited"].overrides] == [
        "2500"
    ]
    write_inputs(SolvedInputs(scenario="base", overrides=()), tmp_path, tmp_path)
    assert read_scenarios_file(tmp_path / INPUTS_FILE)["base"].overrides == ()
