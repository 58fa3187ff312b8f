"""A run folder is claimed exclusively: two runs asking for one ID get two folders.

Two ``capacity solve`` runs into one ``--out`` in the same second used to print the
same report path, the later one replacing the other's files (a HiGHS report replaced
by a CBC one). The claim (:func:`optimizer.output.run_folder.claim_run_dir`) is an exclusive
``mkdir`` with a new ID on collision, and every run folder goes through it.
"""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from optimizer.cli.commands import app
from optimizer.output import run_folder
from optimizer.output.atomic import ReportError
from optimizer.output.manifest import read_manifest
from optimizer.output.parquet_tables import read_report
from optimizer.output.run_folder import claim_run_dir, reserve_run_dir

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"
ENV = {"COLUMNS": "200"}
FIXED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_two_claims_with_one_clock_get_two_folders(tmp_path: Path) -> None:
    first = reserve_run_dir(tmp_path, "abcdef0123456789", now=FIXED)
    second = reserve_run_dir(tmp_path, "abcdef0123456789", now=FIXED)
    assert first.name == "20260102T030405Z-abcdef01"
    assert second.name == "20260102T030405Z-abcdef01-2"
    assert first.is_dir() and second.is_dir()
    assert claim_run_dir(tmp_path, first.name).name == "20260102T030405Z-abcdef01-3"


def test_threads_racing_for_one_id_each_get_their_own_folder(tmp_path: Path) -> None:
    n = 8
    barrier = threading.Barrier(n)
    got: list[Path] = []
    lock = threading.Lock()

    def claim() -> None:
        barrier.wait()
        path = claim_run_dir(tmp_path / "out", "run")
        with lock:
            got.append(path)

    threads = [threading.Thread(target=claim) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(p.name for p in got) == sorted(["run"] + [f"run-{k}" for k in range(2, n + 1)])
    assert len(set(got)) == n and all(p.is_dir() for p in got)


def test_claim_under_a_regular_file_names_it(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ReportError, match=r"file exists and is not a directory"):
        claim_run_dir(blocker / "out", "run")


def test_two_solves_in_one_second_into_one_out_keep_both_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_folder, "_utc_now", lambda: FIXED)  # the same second, for sure
    out = tmp_path / "reports"
    paths = []
    for solver in ("highs", "cbc"):
        res = CliRunner().invoke(
            app, ["solve", str(TINY), "--solver", solver, "--out", str(out)], env=ENV
        )
        assert res.exit_code == 0, res.output
        (line,) = [ln for ln in res.output.splitlines() if ln.startswith("Report: ")]
        paths.append(Path(line.split()[1]))
    assert paths[0] != paths[1]
    assert paths[0].parent.name.startswith("20260102T030405Z-")
    assert paths[1].parent.name == paths[0].parent.name + "-2"
    runs = sorted(p for p in out.iterdir() if p.is_dir())
    assert runs == sorted(p.parent for p in paths)
    solvers = [read_manifest(p.parent)["scenarios"]["neutral"]["solver"] for p in paths]
    assert solvers[0] == "highs" and solvers[1] != "highs"
    for p in paths:
        tables = read_report(p)
        assert len(tables["demand"]) > 0


def _fake_hedge(cost_usd: float) -> object:
    """A converged hedged plan whose tables carry ``cost_usd`` (to tell two runs apart)."""
    import types

    import pandas as pd

    return types.SimpleNamespace(
        scenarios=("mc_000", "mc_001"),
        weights=(0.5, 0.5),
        expected_cost_usd=cost_usd,
        lower_bound_usd=cost_usd,
        wait_and_see_usd=cost_usd,
        ev_problem="mean",
        eev_usd=cost_usd,
        vss_usd=0.0,
        evpi_usd=0.0,
        gap_rel=0.0,
        converged=True,
        iterations=pd.DataFrame({"iteration": [0, 1], "upper_bound_usd": [cost_usd] * 2}),
        per_scenario=pd.DataFrame({"scenario": ["mc_000"], "cost_usd": [cost_usd]}),
        first_stage=pd.DataFrame({"column": ["build(a,2026Q1)"], "value": [1.0]}),
        timings_s={"total": 0.1},
    )


def test_two_hedges_in_one_second_into_one_out_keep_both_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import optimizer.analysis.decompose

    monkeypatch.setattr(run_folder, "_utc_now", lambda: FIXED)  # the same second, for sure
    out = tmp_path / "hedges"
    printed = []
    for cost in (111.0, 222.0):
        monkeypatch.setattr(
            optimizer.analysis.decompose,
            "hedge_decomposed",
            lambda *_a, _c=cost, **_k: _fake_hedge(_c),
        )
        args = ["hedge", str(TINY), "-n", "2", "--workers", "0", "--out", str(out)]
        res = CliRunner().invoke(app, args, env=ENV)
        assert res.exit_code == 0, res.output
        printed.append(" ".join(res.output.split()))
    runs = sorted(p for p in out.iterdir())
    assert runs[0].name.startswith("hedge-20260102T030405Z-")
    assert [p.name for p in runs] == [runs[0].name, runs[0].name + "-2"]
    import pandas as pd

    costs = [pd.read_csv(p / "per_scenario.csv")["cost_usd"].tolist() for p in runs]
    assert costs == [[111.0], [222.0]]
    # the three tables, and each sampled scenario's recorded inputs (scenario=<name>/)
    assert all(
        sorted(f.name for f in p.iterdir() if f.is_file())
        == ["first_stage.csv", "iterations.csv", "manifest.json", "per_scenario.csv"]
        and all(f.name.startswith("scenario=") for f in p.iterdir() if f.is_dir())
        for p in runs
    )
    assert f"Tables: {runs[0]}/" in printed[0] and f"Tables: {runs[1]}/" in printed[1]


def test_a_claimed_run_folder_goes_whole_when_its_block_fails(tmp_path: Path) -> None:
    from optimizer.output.run_folder import claimed_run_dir

    with pytest.raises(KeyboardInterrupt), claimed_run_dir(tmp_path, "r") as run:
        (run / "scenario=a").mkdir()
        (run / "scenario=a" / "fleet.parquet").write_bytes(b"x")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []
    with claimed_run_dir(tmp_path, "r") as run:
        (run / "leaves.parquet").write_bytes(b"x")
    assert [p.name for p in tmp_path.iterdir()] == ["r"] and (run / "leaves.parquet").exists()


_KILL_SECOND = """
import os, sys
from optimizer.cli import solve as s
real = s._solve_one
def one(console, name, *a, **k):
    if name == sys.argv[3]:
        os._exit(9)  # as kill -9: no clean-up of any kind
    return real(console, name, *a, **k)
s._solve_one = one
from optimizer.cli.commands import app
app(["solve", sys.argv[1], "--scenario", "all", "--out", sys.argv[2]])
"""


_KILL_AFTER_FIRST_REPORT = """
import os, sys
from optimizer.output import report as r
real = r.write_report
def write(*a, **k):
    run = real(*a, **k)
    os._exit(9)  # as kill -9, the moment the first scenario's report is complete
r.write_report = write
from optimizer.cli.commands import app
app(["solve", sys.argv[1], "--scenario", "all", "--out", sys.argv[2]])
"""


def test_a_solve_killed_right_after_its_first_report_is_not_read_as_whole(
    tmp_path: Path,
) -> None:
    """The run was marked unfinished only after its first scenario's report was
    complete: a kill in between left a one-scenario run that read as whole. The mark
    is now written with the run's claim, before its first file."""
    from capacity.dataset import load_dataset
    from tests.conftest import TINY

    names = list(load_dataset(TINY).scenarios)
    text = _read_killed_run(tmp_path, _KILL_AFTER_FIRST_REPORT, names)
    assert f"it lacks {', '.join(names[1:])} of the {len(names)} requested" in text


def _read_killed_run(tmp_path: Path, script: str, names: list[str], *args: str) -> str:
    """Run ``script`` (a solve of TINY's scenarios killed part way), read its run folder:
    it holds the first scenario alone and warns it is not finished; return the warning."""
    import subprocess
    import sys

    from optimizer.notebook import read_run
    from tests.conftest import TINY

    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-c", script, str(TINY), str(out), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 9, done.stderr
    (run,) = [p for p in out.iterdir() if p.is_dir()]
    with pytest.warns(UserWarning, match="this run is not finished") as caught:
        plans = read_run(run)
    assert list(plans) == names[:1]
    return str(caught[0].message)


def test_a_solve_killed_part_way_is_not_read_as_the_whole_run(tmp_path: Path) -> None:
    """kill -9 of `capacity solve --scenario all` after its first scenario left a run
    folder that read_run read as the whole run, without a word. The run now holds
    .unfinished.json (the writer's pid, the scenarios requested) until its last
    scenario: read_run names what it lacks; a finished run reads without a warning."""
    import warnings

    from capacity.dataset import load_dataset
    from optimizer.notebook import read_run
    from tests.conftest import TINY

    names = list(load_dataset(TINY).scenarios)  # what --scenario all solves
    assert len(names) >= 2
    text = _read_killed_run(tmp_path, _KILL_SECOND, names, names[1])
    assert "stopped part way" in text
    assert f"it lacks {', '.join(names[1:])} of the {len(names)} requested" in text
    whole = CliRunner().invoke(
        app, ["solve", str(TINY), "--scenario", "all", "--out", str(tmp_path / "whole")]
    )
    assert whole.exit_code == 0, whole.output
    (run,) = [p for p in (tmp_path / "whole").iterdir() if p.is_dir()]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(read_run(run)) == len(names)
    assert not (run / ".unfinished.json").exists()


def test_a_claimed_run_is_marked_unfinished_until_its_block_ends(tmp_path: Path) -> None:
    """replan, alternatives, the hedge and the tree fill a claimed run folder: killed
    outright in the block (no exception to clean up on), the folder was read as whole."""
    import json
    import subprocess
    import sys

    with run_folder.claimed_run_dir(tmp_path, "r", ["a", "b"]) as d:
        marker = json.loads((d / ".unfinished.json").read_text())
        assert marker["pid"] == os.getpid() and marker["requested"] == ["a", "b"]
        assert "still writing it" in run_folder.unfinished_note(d, [])
    assert not (d / ".unfinished.json").exists()
    assert run_folder.unfinished_note(d, []) == ""
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    run_folder.mark_unfinished(d, ["a", "b"])
    doc = json.loads((d / ".unfinished.json").read_text())
    doc["pid"] = int(dead.stdout)  # the writer, gone
    (d / ".unfinished.json").write_text(json.dumps(doc))
    note = run_folder.unfinished_note(d, ["a"])
    assert "stopped part way" in note and "it lacks b of the 2 requested" in note


def test_a_scenario_name_that_needs_escaping_reads_back_under_its_own_name(
    tmp_path: Path,
) -> None:
    """read_run/read_report took the folder name as written (scenario=high%20demand):
    the plan came back as 'high%20demand', the manifest lookup missed (a false
    'unfinished' warning) and its inputs.yaml was not applied to data=."""
    import shutil
    import warnings

    from optimizer.notebook import read_report, read_run
    from tests.conftest import TINY

    data = tmp_path / "data"
    shutil.copytree(TINY, data)
    with (data / "scenarios.yaml").open("a", encoding="utf-8") as f:
        f.write(
            "  high demand:\n    description: x\n    overrides:\n"
            "      - {op: scale, table: chips, column: capex_usd_per_chip, factor: 3}\n"
        )
    args = ["solve", str(data), "-s", "high demand", "-s", "neutral", "--out", str(tmp_path / "o")]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    (run,) = (tmp_path / "o").iterdir()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plans = read_run(run, data=data)
        one = read_report(run / "scenario=high%20demand", data=data)
    assert set(plans) == {"high demand", "neutral"}
    for plan in (plans["high demand"], one):
        costs = plan.tables["costs"]
        cash = costs.loc[costs["term"] == "chip_capex", "cash_usd"].sum()
        stat = plan.statistics.capex(groupby=["term"]).set_index("term")["capex_usd"]
        assert cash > 0 and stat["chip_capex"] == pytest.approx(cash, rel=1e-9)


def test_the_hedge_manifest_is_strict_json_when_eev_is_infinite(tmp_path: Path) -> None:
    """EEV and VSS are inf when a scenario cannot run the EV plan: json wrote Infinity."""
    import dataclasses
    import json

    from optimizer.cli.hedge_folder import _hedge_manifest
    from optimizer.output.inputs_record import SolvedInputs

    p = _fake_hedge(5.0)
    p.eev_usd = p.vss_usd = float("inf")
    p.gap_rel = float("nan")
    inputs = [dataclasses.replace(SolvedInputs("mc_000", ()), dataset_hash="h0")]
    doc = _hedge_manifest(p, tmp_path / "hedge-x", inputs, {"base": "neutral"})
    text = json.dumps(doc, allow_nan=False)  # strict JSON: no Infinity, no NaN
    back = json.loads(text)
    assert back["result"]["eev_usd"] is None and back["result"]["vss_usd"] is None
    assert back["result"]["gap_rel"] is None and back["result"]["expected_cost_usd"] == 5.0
    # one master iteration after the EV plan's evaluation (row 0), as the CLI prints it
    assert back["result"]["iterations"] == 1
    assert back["scenarios"]["mc_000"] == {
        "weight": 0.5,
        "inputs": "scenario=mc_000/inputs.yaml",
        "dataset_hash": "h0",
    }


def test_the_frontier_and_chance_folders_name_the_base_data_and_record_the_draws(
    tmp_path: Path,
) -> None:
    """The frontier's run ID named the first draw's data hash, and its folder held the
    two files alone: seed, samples and base were nowhere."""
    import json
    from types import SimpleNamespace

    import pandas as pd
    from rich.console import Console

    from optimizer.cli.hedge_folder import drawn_settings, write_chance, write_frontier

    settings = {**drawn_settings("neutral", "02548e90ffff", 4, 7, None), "alpha": 0.9}
    table = pd.DataFrame(
        {
            "risk_weight": [0.0, 1.0],
            "alpha": [0.9, 0.9],
            "expected_cost_usd": [1e9, 1.1e9],
            "cvar_usd": [2e9, 1.5e9],
            "var_usd": [1.8e9, 1.4e9],
        }
    )
    console = Console(file=open(os.devnull, "w"))  # noqa: SIM115
    assert write_frontier(console, table, tmp_path, settings) == 0
    chance = SimpleNamespace(per_scenario=pd.DataFrame({"scenario": ["mc_000"], "met": [True]}))
    assert write_chance(console, chance, tmp_path, settings) == 0
    for kind, files in (
        ("hedge-frontier", {"frontier.csv", "frontier.html"}),
        ("hedge-chance", {"chance.csv"}),
    ):
        (run,) = tmp_path.glob(f"{kind}-*")
        assert run.name.endswith("02548e90")
        assert {p.name for p in run.iterdir()} == files | {"manifest.json"}
        doc = json.loads((run / "manifest.json").read_text())
        assert doc["kind"] == kind and doc["run_id"] == run.name
        assert doc["settings"]["seed"] == 7 and doc["settings"]["samples"] == 4
        assert doc["settings"]["base_dataset_hash"] == "02548e90ffff"


def test_the_hedge_manifest_records_the_risk_setting_as_numbers() -> None:
    """It held the text "RiskSpec(alpha=0.9, weight=1.0)", which a reader had to parse."""
    import json

    from optimizer.cli.hedge_folder import drawn_settings
    from optimizer.plan.risk import RiskSpec

    got = drawn_settings("neutral", "02548e90ffff", 5, 0, RiskSpec(0.9, 1.0))
    assert json.loads(json.dumps(got))["risk"] == {"alpha": 0.9, "weight": 1.0}
    assert drawn_settings("neutral", "02548e90ffff", 5, 0, None)["risk"] is None
