"""Rolling replanning: the hand case, locks that hold, zero volatility, bad input, the folder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from capacity.dataset import load_dataset
from optimizer.analysis.replan import ReplanSetup, run_path
from optimizer.analysis.replan_folder import read_replan, write_replan
from optimizer.analysis.replan_run import rolling_replan
from optimizer.analysis.replan_setup import (
    RandomWalkRevision,
    ReplanInputError,
    draw_truths,
    parse_locks,
    read_forecast_file,
    revealed_parameters,
)
from optimizer.components.construction import FACILITY_LIFE_PERIODS

HAND = Path(__file__).parent / "data" / "replan_hand"


@pytest.fixture(scope="module")
def hand() -> object:
    return load_dataset(HAND)


def _neutral_truth(params: object) -> dict[str, float]:
    """Every group at the data as it is: factor 1, shift 0."""
    return {p.name: (0.0 if p.name == "grid_delay" else 1.0) for p in params}  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def hand_path(hand: object) -> object:
    params = revealed_parameters(hand)
    rev = read_forecast_file(HAND / "forecast.csv", hand.periods, params)  # type: ignore[attr-defined]
    return run_path(ReplanSetup(hand, params, rev, every=1), 0, _neutral_truth(params))


def test_hand_case_builds_once_with_foresight_twice_replanned(
    hand: object, hand_path: object
) -> None:
    """Demand 10 H100e in Q2-Q3, lead 1: foresight builds 10 MW in Q1; told 7, the replanner
    builds 7 in Q1 and 3 in Q2, leaving 3 H100e unserved in Q2.

    regret = 3 * penalty - 3 MW * (one quarter of build rent) - 3 chips * (one quarter of chip
    rent) = 3 * 1e6 - 3 * 6e6 / 60 - 3 * 4e5 / 4 = 2.4e6 USD.
    """
    o = hand_path
    pf_build = o.perfect_foresight.tables["build_out"]
    built = pf_build[pf_build["build_mw"] > 1e-9]
    assert list(built["period"]) == ["2026Q1"] and built["build_mw"].iloc[0] == pytest.approx(10.0)
    d = o.decisions
    builds = d[d["kind"] == "build"].sort_values("period")
    assert list(builds["decided_in"]) == ["2026Q1", "2026Q2"]
    assert builds["value"].to_numpy() == pytest.approx([7.0, 3.0])
    penalty = float(hand.table("customers")["unmet_penalty_usd_per_h100e_period"].iloc[0])  # type: ignore[attr-defined]
    build_rent = (
        float(hand.table("sites")["build_capex_usd_per_mw"].iloc[0]) / FACILITY_LIFE_PERIODS
    )  # type: ignore[attr-defined]
    chips = hand.table("chips")  # type: ignore[attr-defined]
    chip_rent = float(chips["capex_usd_per_chip"].iloc[0] / chips["lifetime_periods"].iloc[0])
    hand_regret = 3 * penalty - 3 * build_rent - 3 * chip_rent
    assert hand_regret == pytest.approx(2.4e6)
    assert o.summary["regret_usd"] == pytest.approx(hand_regret, rel=1e-7)
    assert o.summary["perfect_foresight_cost_usd"] == pytest.approx(
        10 * 3 * 1e5 + 10 * 2 * 1e5, rel=1e-8
    )
    assert o.summary["served_share"] == pytest.approx(17 / 20)


def test_realised_plan_keeps_every_decision_as_taken(hand_path: object) -> None:
    d = hand_path.decisions
    bo = hand_path.realised.tables["build_out"].set_index("period")["build_mw"]
    for r in d[d["kind"] == "build"].itertuples():
        assert bo[r.period] == pytest.approx(r.value, abs=1e-6)


@pytest.fixture(scope="module")
def noisy(hand: object) -> object:
    return rolling_replan(hand, 4, seed=3, revision=RandomWalkRevision(0.3, 3))


def test_locked_decisions_never_change_on_any_path(noisy: object) -> None:
    """Every later replan's solution keeps each locked decision (the drift each path records),
    and the realised plan is the decisions as taken."""
    assert len(noisy.paths) == 4
    assert (noisy.paths["max_lock_drift"] <= 1e-6).all(), noisy.paths["max_lock_drift"]
    for o in noisy.outcomes:
        fleet = o.realised.tables["fleet"].groupby("period")["installed_chips"].sum()
        inst = o.decisions[o.decisions["kind"] == "install"].groupby("period")["value"].sum()
        for period, chips in fleet.items():
            assert chips == pytest.approx(float(inst.get(period, 0.0)), abs=1e-6)


def test_noisy_regret_is_never_negative(noisy: object) -> None:
    ok = noisy.paths[noisy.paths["status"] == "optimal"]
    assert len(ok) >= 1
    assert (ok["regret_usd"] >= -1e-6 * ok["perfect_foresight_cost_usd"]).all()


def test_zero_volatility_is_perfect_foresight(hand: object) -> None:
    res = rolling_replan(hand, 3, seed=1, revision=RandomWalkRevision(0.0, 1))
    p = res.paths
    assert (p["status"] == "optimal").all()
    assert p["realised_cost_usd"].to_numpy() == pytest.approx(
        p["perfect_foresight_cost_usd"].to_numpy(), rel=1e-7
    )
    assert (p["served_share"] - p["perfect_foresight_served_share"]).abs().max() < 1e-7


def test_random_walk_ends_on_the_truth_and_stays_in_range(hand: object) -> None:
    params = revealed_parameters(hand)
    truth = draw_truths(params, 1, 5)[0]
    f = RandomWalkRevision(0.2, 5).forecasts(params, truth, hand.periods, (0, 1, 2), 0)  # type: ignore[attr-defined]
    assert f[-1] == pytest.approx([truth[p.name] for p in params])
    for j, p in enumerate(params):
        assert (f[:, j] >= min(p.low, p.high) - 1e-12).all()
        assert (f[:, j] <= max(p.low, p.high) + 1e-12).all()


def test_coarser_steps_replan_less_often(hand: object) -> None:
    res = rolling_replan(hand, 1, seed=0, every=2, revision=RandomWalkRevision(0.0, 0))
    assert res.settings["epochs"] == 2
    assert res.paths["regret_usd"].iloc[0] == pytest.approx(0.0, abs=1e-6 * 5e6)


def test_run_folder_reads_back_and_in_duckdb(hand: object, noisy: object, tmp_path: Path) -> None:
    import duckdb

    import capacity_planner as cp

    run = write_replan(noisy, tmp_path, hand.hash)  # type: ignore[attr-defined]
    back = read_replan(run)
    assert sorted(back["regret"]["path"]) == [0, 1, 2, 3]
    got = back["regret"].set_index("path")["regret_usd"].sort_index().to_numpy()
    assert got == pytest.approx(noisy.paths["regret_usd"].to_numpy())
    q = (
        "SELECT path, regret_usd FROM read_parquet("
        f"'{run}/replan/*/regret.parquet', hive_partitioning=true) ORDER BY path"
    )
    df = duckdb.sql(q).df()
    assert df["regret_usd"].to_numpy() == pytest.approx(noisy.paths["regret_usd"].to_numpy())
    plans = cp.read_run(run)
    assert len(plans) == 4
    assert (run / "replan_regret.html").stat().st_size > 1000


# ------------------------------------------------------------------------ bad input
def test_paths_below_one_is_named(hand: object) -> None:
    with pytest.raises(ReplanInputError, match=r"--paths: 0 is not a number of paths"):
        rolling_replan(hand, 0)


def test_lock_naming_no_decision_is_named() -> None:
    with pytest.raises(
        ReplanInputError, match=r"--lock 'concrete:2': 'concrete' names no decision"
    ):
        parse_locks(["produce:1", "concrete:2"])
    with pytest.raises(ReplanInputError, match=r"'-1' is not a number of quarters"):
        parse_locks(["build:-1"])
    assert parse_locks(["produce:2"])["produce"] == 2


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            "2031Q1,demand_a,0.9",
            r"line 3, column quarter: '2031Q1' is not a quarter of the horizon",
        ),
        ("2026Q2,demand_z,0.9", r"line 3, column parameter: 'demand_z' is not a revealed group"),
        ("2026Q2,demand_a,5", r"line 3, column level: '5' is not a level of demand_a"),
    ],
)
def test_forecast_file_errors_name_file_line_value(
    hand: object, tmp_path: Path, row: str, message: str
) -> None:
    f = tmp_path / "fc.csv"
    f.write_text(f"quarter,parameter,level\n2026Q1,demand_a,0.8\n{row}\n", encoding="utf-8")
    with pytest.raises(ReplanInputError, match=str(f).replace("\\", "\\\\") + ", " + message):
        read_forecast_file(f, hand.periods, revealed_parameters(hand))  # type: ignore[attr-defined]


def test_cli_bad_options_exit_2(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from optimizer.cli.commands import app

    r = CliRunner().invoke(app, ["replan", str(HAND), "--paths", "0"])
    assert r.exit_code == 2 and "--paths: 0" in r.output
    r = CliRunner().invoke(app, ["replan", str(HAND), "--lock", "concrete"])
    assert r.exit_code == 2 and "names no decision" in r.output


def test_cli_replan_runs_and_writes(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from optimizer.cli.commands import app

    r = CliRunner().invoke(
        app,
        [
            "replan",
            str(HAND),
            "--paths",
            "2",
            "--workers",
            "0",
            "--volatility",
            "0",
            "--out",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "Regret per path" in r.output
    runs = list(tmp_path.glob("replan-*"))
    assert len(runs) == 1
    back = read_replan(runs[0])
    assert np.abs(back["regret"]["regret_usd"].to_numpy()).max() < 1e-6 * 5e6
    assert isinstance(back["spread"], pd.DataFrame) and len(back["spread"])
