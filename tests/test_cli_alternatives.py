"""``capacity alternatives``: ranges printed, the run folder readable, bad options named."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from optimizer.cli.alternatives import RANGES_FILE, report_scenario
from optimizer.cli.commands import app
from optimizer.output.parquet_tables import open_table_dataset
from tests.lp_helpers import LP_DATA

ENV = {"COLUMNS": "140", "NO_COLOR": "1", "TERM": "dumb"}
BASE = str(LP_DATA / "lp_base")


def _run(args: list[str]) -> tuple[int, str]:
    res = CliRunner().invoke(app, args, env=ENV)
    return res.exit_code, res.output


def test_alternatives_prints_ranges_and_writes_one_run_folder(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app, ["alternatives", BASE, "--slack", "0,0.05", "--out", str(tmp_path)], env=ENV
    )
    code, text = res.exit_code, res.output
    assert code == 0, text
    assert "build_mw:s1" in res.stdout and "fleet_h100e:nv" in res.stdout
    # the last progress line is printed (2 x 2 x 2 solved), on stderr: the output piped
    # or redirected to a file holds the results alone
    assert "alternatives: 8/8 done" in res.stderr and "8/8 done" not in res.stdout
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    ranges = pd.read_parquet(run / f"{RANGES_FILE}.parquet")
    # lp_base: C* = 1,300,000.5 USD; at 5 % the build may reach 0.05 C* / 100,000 USD per MW
    row = ranges[(ranges["quantity"] == "build_mw:s1") & (ranges["slack"] == 0.05)].iloc[0]
    assert row["max"] == pytest.approx(0.05 * 1_300_000.5 / 100_000, rel=1e-6)
    # the plan reaching that end is a scenario of the run, with the build in its tables
    assert row["scenario_max"] == report_scenario("max_build_mw:s1@0.05")
    build = open_table_dataset(run, "build_out").to_table().to_pandas()
    assert build["scenario"].nunique() == 1 + 2 * 2 * 2  # one Hive dataset over the run
    bo = pd.read_parquet(run / f"scenario={row['scenario_max']}" / "build_out.parquet")
    assert bo["build_mw"].sum() == pytest.approx(row["max"], rel=1e-6)
    scenarios = sorted(p.name for p in run.glob("scenario=*"))
    assert len(scenarios) == 1 + 2 * 2 * 2  # the optimum, 2 quantities x min/max x 2 slacks
    duckdb = pytest.importorskip("duckdb")
    n = (
        duckdb.connect()
        .execute(
            f"select count(distinct scenario) from read_parquet('{run}/scenario=*/costs.parquet', "
            "hive_partitioning = true)"
        )
        .fetchall()
    )
    assert n == [(len(scenarios),)]


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["--slack", "-0.01"], "-0.01 is not a slack"),
        (["--slack", "a"], "'a' is not a number"),
        (["--focus", "gas"], "gas names no quantity"),
        (["--directions", "-2"], "-2 is not >= 0"),
        (["--scenario", "all"], "takes one scenario name, not 'all'"),
    ],
)
def test_bad_options_are_usage_errors_naming_option_and_value(
    tmp_path: Path, args: list[str], text: str
) -> None:
    code, out = _run(["alternatives", BASE, *args, "--out", str(tmp_path)])
    assert code == 2
    assert text in " ".join(out.split())


def test_workers_split_the_quantities_over_dask_with_the_same_ranges(tmp_path: Path) -> None:
    args = ["alternatives", BASE, "--slack", "0,0.05"]
    assert _run([*args, "--out", str(tmp_path / "one")])[0] == 0
    code, text = _run([*args, "--workers", "2", "--out", str(tmp_path / "dask")])
    assert code == 0, text
    one, dask = (
        pd.read_parquet(next((tmp_path / d).glob(f"*/{RANGES_FILE}.parquet")))
        for d in ("one", "dask")
    )
    pd.testing.assert_frame_equal(
        one.drop(columns="cost_cap_usd"), dask.drop(columns="cost_cap_usd"), atol=1e-7
    )


def test_a_misspelt_focus_is_refused_before_the_model_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import optimizer.analysis.alternatives as alternatives_mod

    def _no_build(*_a: object, **_k: object) -> None:
        raise AssertionError("the model was built for a focus that names no quantity")

    monkeypatch.setattr(alternatives_mod, "near_optimal_ranges", _no_build)
    code, out = _run(["alternatives", BASE, "--focus", "fleet", "--focus", "gas"])
    assert code == 2 and "gas names no quantity" in " ".join(out.split())


@pytest.mark.parametrize("data", ["default", "lp_base"])
def test_the_focus_names_known_from_the_data_are_the_model_quantities(data: str) -> None:
    from capacity.dataset import load_dataset
    from capacity.scenarios import apply_scenario
    from optimizer.analysis.alternatives_quantities import default_quantities, quantity_names
    from optimizer.plan.model import build_model
    from tests.conftest import DEFAULT_DATA

    ds = apply_scenario(load_dataset(DEFAULT_DATA), "neutral") if data == "default" else None
    if ds is None:
        ds = load_dataset(BASE)
    quantities = default_quantities(build_model(ds))
    assert quantity_names(ds) == {q.name for q in quantities} | {q.group for q in quantities}


def test_an_alternatives_record_says_what_the_plan_is_and_its_solve_warns(tmp_path: Path) -> None:
    """An alternative's inputs.yaml said "Solve it again" and re-solved to the optimum
    ($144.6B on the bundled data for a plan of $147.5B), its manifest nothing of the cap."""
    import json

    code, text = _run(["alternatives", BASE, "--slack", "0.05", "--out", str(tmp_path)])
    assert code == 0, text
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    alt = run / "scenario=max_build_mw-s1_slack0.05"
    head = (alt / "inputs.yaml").read_text()
    # lp_base: C* = 1,300,000.5 USD, so the cap is 1.05 C* = $1.37M
    assert "# This plan is the maximum of build_mw:s1 with the discounted cost at most " in head
    assert "(1 + 0.05) x the optimum = $1.37M" in head and "Solve it again" not in head
    assert "Solve it again" in (run / "scenario=base" / "inputs.yaml").read_text()
    entries = json.loads((run / "manifest.json").read_text())["scenarios"]
    assert "maximum of build_mw:s1" in entries["max_build_mw-s1_slack0.05"]["inputs"]["remade_by"]
    assert "remade_by" not in entries["base"]["inputs"]
    args = ["solve", BASE, "--scenarios-file", str(alt / "inputs.yaml"), "--no-report"]
    code, text = _run([*args, "-s", "max_build_mw-s1_slack0.05"])
    assert code == 0, text
    flat = " ".join(text.split())
    assert "this solve gives the cost optimum of its data, not that plan" in flat
    code, text = _run(
        [
            "solve",
            BASE,
            "--scenarios-file",
            str(run / "scenario=base" / "inputs.yaml"),
            "-s",
            "base",
            "--no-report",
        ]
    )
    assert code == 0 and "not that plan" not in " ".join(text.split())


def test_a_hand_written_comment_is_not_read_as_an_alternatives_record(tmp_path: Path) -> None:
    """Only the header a report writes says what an alternative plan is."""
    from capacity.recorded_inputs import recorded_other_plan

    hand = tmp_path / "scenarios.yaml"
    hand.write_text("# This plan is what we agreed on.\nscenarios: {}\n")
    assert recorded_other_plan(hand) is None
