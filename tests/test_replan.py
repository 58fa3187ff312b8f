"""Rolling replanning: the hand case, locks that hold, zero volatility, bad input, the folder."""

from __future__ import annotations

import json
import shutil
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
    assert o.summary["locks_given_way"] == 0 and o.give_way.empty
    assert (o.shortfall.filter(like="delivered_short_").to_numpy() == 0).all()


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
    assert (noisy.paths["status"] == "optimal").all()
    for o in noisy.outcomes:
        fleet = o.realised.tables["fleet"].groupby("period")["installed_chips"].sum()
        inst = o.decisions[o.decisions["kind"] == "install"].groupby("period")["value"].sum()
        gw = o.give_way
        short = gw[gw["kind"] == "install"].groupby("period")["delivered_short"].sum()
        for period, chips in fleet.items():
            want = float(inst.get(period, 0.0)) - float(short.get(period, 0.0))
            assert chips == pytest.approx(want, abs=1e-6)


def test_noisy_regret_is_never_negative(noisy: object) -> None:
    ok = noisy.paths[noisy.paths["status"] == "optimal"]
    assert len(ok) >= 1
    assert (ok["regret_usd"] >= -1e-6 * ok["perfect_foresight_cost_usd"]).all()


def test_zero_volatility_is_perfect_foresight(hand: object) -> None:
    res = rolling_replan(hand, 3, seed=1, revision=RandomWalkRevision(0.0, 1))
    p = res.paths
    assert (p["status"] == "optimal").all()
    assert (p["locks_given_way"] == 0).all() and res.give_way.empty
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
        f"'{run}/replan/path=*/regret.parquet', hive_partitioning=true) ORDER BY path"
    )
    df = duckdb.sql(q).df()
    assert df["regret_usd"].to_numpy() == pytest.approx(noisy.paths["regret_usd"].to_numpy())
    plans = cp.read_run(run)
    assert len(plans) == 4
    # each path's plan was solved on its truth, not on the data given: said (it was not)
    with pytest.warns(UserWarning, match="records no inputs.yaml") as caught:
        cp.read_run(run, data=hand)
    assert len(caught) == 4
    assert (run / "replan_regret.html").stat().st_size > 1000
    # a replan killed part way (its marker left, a path's folders missing) is said
    from optimizer.output import run_folder

    run_folder.mark_unfinished(run, [f"path_{k:03d}" for k in range(4)])
    shutil.rmtree(run / "replan" / "path=3")
    with pytest.warns(UserWarning, match="it lacks path_003 of the 4 requested"):
        assert len(read_replan(run)["regret"]) == 3
    run_folder.finish_run(run)
    # the run's dataset_hash is the data given, not the first path's truth data
    man = json.loads((run / "manifest.json").read_text())
    assert man["dataset_hash"] == hand.hash  # type: ignore[attr-defined]
    # another table's or another path's file is named, not read as nulls or as this path's
    from optimizer.output.atomic import ReportError

    p0, p1 = run / "replan" / "path=0", run / "replan" / "path=1"
    shutil.copyfile(p1 / "regret.parquet", p0 / "regret.parquet")
    with pytest.raises(ReportError, match="holds path 1's regret table, not path 0's"):
        read_replan(run)
    shutil.copyfile(p1 / "forecasts.parquet", p0 / "regret.parquet")
    with pytest.raises(ReportError, match="holds the forecasts table, not regret"):
        read_replan(run)
    (p0 / "regret.parquet").write_bytes(b"not parquet")
    with pytest.raises(ReportError, match="regret.parquet: not a readable Parquet table"):
        read_replan(run)
    assert man["kind"] == "replan"


def test_a_replan_write_that_fails_leaves_no_half_run(
    hand: object, noisy: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chart is written last: when it failed, every path's plan stayed behind in a
    run folder beside the error message. The claimed folder now goes whole."""
    import optimizer.analysis.replan_folder as folder
    from optimizer.output.atomic import ReportError

    def no_chart(path: object, text: str) -> None:
        assert len(list(Path(str(path)).parent.glob("scenario=path_*"))) == 4  # all written
        raise ReportError(f"cannot write {path}: No space left on device")

    monkeypatch.setattr(folder, "write_text_atomic", no_chart)
    with pytest.raises(ReportError, match="No space left"):
        write_replan(noisy, tmp_path / "out", hand.hash)  # type: ignore[attr-defined]
    assert list((tmp_path / "out").iterdir()) == []


# ------------------------------------------------------------------ locks that give way
SHORT = Path(__file__).parent / "data" / "replan_short"


@pytest.fixture(scope="module")
def short_path() -> object:
    """Wafers 10 a quarter in the data; the Q1 replan is told 1.0x, the truth is 0.7x."""
    ds = load_dataset(SHORT)
    params = revealed_parameters(ds)
    rev = read_forecast_file(SHORT / "forecast.csv", ds.periods, params)
    truth = {**_neutral_truth(params), "wafer_supply": 0.7}
    return run_path(ReplanSetup(ds, params, rev, every=2), 0, truth)


def test_order_beyond_revealed_supply_is_delivered_short(short_path: object) -> None:
    """Replans in Q1 and Q3 (``every=2``). The Q1 replan, forecasting 10 wafers a quarter,
    builds 10 MW in Q1 and orders and installs 10 chips in Q2; both are locked. The truth
    brings 0.7 * 10 = 7 wafers a quarter (one per chip), so the Q2 order and install give
    way by 3 chips each; Q2 serves 7 of its 10 H100e. The Q3 replan orders 3 more.

    realised = build 10 MW * 3 quarters * 1e5 + chips (7 + 10) quarters * 1e5
             + 3 H100e unmet * 1e6 = 3e6 + 1.7e6 + 3e6 = 7.7e6 USD;
    perfect foresight (7 chips in Q1, 3 in Q2) = 3e6 + 20 * 1e5 = 5e6; regret 2.7e6.
    """
    o = short_path
    s = o.summary
    assert s["status"] == "optimal"
    assert s["locks_given_way"] == 2 and s["replans_given_way"] == 1
    assert s["delivered_short_produce_chips"] == pytest.approx(3.0, abs=1e-6)
    assert s["delivered_short_install_chips"] == pytest.approx(3.0, abs=1e-6)
    assert s["delivered_short_build_mw"] == 0.0
    gw = o.give_way.set_index("kind")
    assert set(gw.index) == {"produce", "install"}
    assert (gw["period"] == "2026Q2").all() and (gw["decided_in"] == "2026Q1").all()
    assert gw["locked_value"].to_numpy() == pytest.approx([10.0, 10.0])
    assert gw["delivered_value"].to_numpy() == pytest.approx([7.0, 7.0], abs=1e-6)
    per_q = o.shortfall.set_index("period")["delivered_short_produce_chips"]
    assert per_q.to_dict() == pytest.approx({"2026Q1": 0.0, "2026Q2": 3.0, "2026Q3": 0.0})
    assert s["realised_cost_usd"] == pytest.approx(7.7e6, rel=1e-7)
    assert s["perfect_foresight_cost_usd"] == pytest.approx(5e6, rel=1e-7)
    assert s["regret_usd"] == pytest.approx(2.7e6, rel=1e-6)
    assert s["served_share"] == pytest.approx(17 / 20)
    unmet = o.realised.tables["demand"].set_index("period")["unmet_h100e"]
    assert unmet.to_dict() == pytest.approx({"2026Q2": 3.0, "2026Q3": 0.0}, abs=1e-6)


def test_locks_the_truth_can_honour_are_held_exactly(short_path: object) -> None:
    """The Q1 build (10 MW) and the Q3 order and install (3 chips each) fit the truth: they
    are delivered as taken, to the lock's band, while the Q2 locks give way."""
    o = short_path
    gave = set(zip(o.give_way["kind"], o.give_way["period"], strict=True))
    held = o.decisions[
        [
            (k, p) not in gave
            for k, p in zip(o.decisions["kind"], o.decisions["period"], strict=True)
        ]
    ]
    assert len(held) == 3
    bo = o.realised.tables["build_out"].set_index("period")["build_mw"]
    fleet = o.realised.tables["fleet"].groupby("period")["installed_chips"].sum()
    for r in held.itertuples():
        if r.kind == "build":
            assert bo[r.period] == pytest.approx(r.value, abs=1e-6)
        if r.kind == "install":
            assert r.value == pytest.approx(3.0, abs=1e-6)
            assert fleet[r.period] == pytest.approx(r.value, abs=1e-6)
    assert o.summary["max_lock_drift"] <= 1e-6


def test_give_way_tables_in_the_run_folder(short_path: object, tmp_path: Path) -> None:
    from optimizer.analysis.replan_run import _gather

    res = _gather([short_path], {"paths": 1})
    assert len(res.give_way) == 2 and (res.give_way["path"] == 0).all()
    back = read_replan(write_replan(res, tmp_path, "hash"))
    assert back["give_way"]["delivered_short"].sum() == pytest.approx(6.0, abs=1e-6)
    sf = back["shortfall"].set_index("period")
    assert sf.loc["2026Q2", "delivered_short_install_chips"] == pytest.approx(3.0, abs=1e-6)
    assert back["regret"]["locks_given_way"].tolist() == [2]


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
    # a kind locked twice: the last window had won without a word
    with pytest.raises(ReplanInputError, match=r"build is already locked by 'build:1'"):
        parse_locks(["build:1", "build:2"])
    with pytest.raises(ReplanInputError, match=r"already locked by 'build'"):
        parse_locks(["build,produce:1,build:3"])


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            "2031Q1,demand_a,0.9",
            r"line 3, column quarter: '2031Q1' is not a quarter of the horizon",
        ),
        ("2026Q2,demand_z,0.9", r"line 3, column parameter: 'demand_z' is not a revealed group"),
        ("2026Q2,demand_a,5", r"line 3, column level: '5' is not a level of demand_a"),
        # a shift of 1.5 quarters was recorded as 1.5 and planned on as 2
        ("2026Q2,grid_delay,1.5", r"line 3, column level: '1.5' is not a whole number of q"),
    ],
)
def test_forecast_file_errors_name_file_line_value(
    hand: object, tmp_path: Path, row: str, message: str
) -> None:
    f = tmp_path / "fc.csv"
    f.write_text(f"quarter,parameter,level\n2026Q1,demand_a,0.8\n{row}\n", encoding="utf-8")
    with pytest.raises(ReplanInputError, match=str(f).replace("\\", "\\\\") + ", " + message):
        read_forecast_file(f, hand.periods, revealed_parameters(hand))  # type: ignore[attr-defined]


def test_a_forecast_file_saved_by_a_spreadsheet_reads_or_says_its_encoding(
    hand: object, tmp_path: Path
) -> None:
    """A byte-order mark ("CSV UTF-8") read as a header without its columns; Latin-1
    text gave a UnicodeDecodeError traceback."""
    f = tmp_path / "bom.csv"
    f.write_bytes(b"\xef\xbb\xbfquarter,parameter,level\n2026Q1,demand_a,0.8\n")
    params = revealed_parameters(hand)  # type: ignore[attr-defined]
    rev = read_forecast_file(f, hand.periods, params)  # type: ignore[attr-defined]
    assert rev is not None
    g = tmp_path / "latin.csv"
    g.write_bytes(b"quarter,parameter,level\n2026Q1,demand_a,0.8\n# pr\xe9vision\n")
    with pytest.raises(ReplanInputError, match=r"latin.csv: not UTF-8 text .*save it as CSV"):
        read_forecast_file(g, hand.periods, params)  # type: ignore[attr-defined]


def test_cli_bad_options_exit_2(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from optimizer.cli.commands import app

    r = CliRunner().invoke(app, ["replan", str(HAND), "--paths", "0"])
    assert r.exit_code == 2 and "--paths: 0" in r.output
    r = CliRunner().invoke(app, ["replan", str(HAND), "--lock", "concrete"])
    assert r.exit_code == 2 and "names no decision" in r.output
    # one replan over the whole horizon forecasts the truth: regret 0 by construction
    n = len(load_dataset(HAND).periods)
    r = CliRunner().invoke(app, ["replan", str(HAND), "--every", str(n)])
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and f"covers the whole {n}-quarter horizon" in text
    assert f"use --every below {n}" in text


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
    # the table's money in the scale of its plans' costs (millions here), as the
    # regret table holds them: it read "0.01" and "0.00" in a fixed USD bn
    realised = back["regret"]["realised_cost_usd"].to_numpy()
    assert 1e6 <= realised.max() < 1e9
    for v in realised:
        assert f"${v / 1e6:,.2f}M" in r.output
    assert "USD bn" not in r.output
    # written to a file or pipe, the tables are 140 wide: rich's 80 cut the header
    # to "perfect foresig..." (printing.command_console)
    assert "perfect foresight" in r.output and "foresig…" not in r.output
    # each replan table names its run and the code that wrote it (path and data only)
    from optimizer.output.parquet_tables import read_metadata

    meta = read_metadata(runs[0] / "replan" / "path=0" / "decisions.parquet")
    assert meta["run_id"] == runs[0].name and meta["package_version"]
    assert meta["table"] == "decisions" and meta["path"] == "0"
    spread = read_metadata(runs[0] / "replan" / "spread.parquet")
    assert spread["run_id"] == runs[0].name and spread["table"] == "spread"
    assert spread["package_version"] and spread["dataset_hash"] == meta["dataset_hash"]


def test_a_forecast_file_with_a_row_twice_or_a_path_beyond_the_run_is_refused(
    tmp_path: Path,
) -> None:
    """The last of two rows had won, and a row of path 99 under --paths 1 was ignored."""
    from optimizer.analysis.replan_setup import ReplanInputError

    hand = load_dataset(HAND)
    params = revealed_parameters(hand)
    twice = tmp_path / "twice.csv"
    twice.write_text("quarter,parameter,level\n2026Q1,demand_a,0.9\n2026Q1,demand_a,1.2\n")
    with pytest.raises(ReplanInputError) as err:
        read_forecast_file(twice, hand.periods, params)  # type: ignore[attr-defined]
    assert str(err.value) == (
        f"{twice}, line 3: a second forecast of demand_a made in 2026Q1 (line 2 has one): keep one"
    )
    per_path = tmp_path / "paths.csv"
    per_path.write_text(
        "quarter,parameter,level,path\n2026Q1,demand_a,0.9,0\n2026Q1,demand_a,1.2,1\n"
    )
    rev = read_forecast_file(per_path, hand.periods, params, paths=2)  # type: ignore[attr-defined]
    assert rev.table["path"].tolist() == [0, 1]  # one row per path is no repeat
    with pytest.raises(
        ReplanInputError,
        match=r"line 3, column path: 1 is not a path of this run \(0 to 0; --paths 1\)",
    ):
        read_forecast_file(per_path, hand.periods, params, paths=1)  # type: ignore[attr-defined]


def test_a_shortfall_within_solver_tolerance_is_no_lock_given_way() -> None:
    """6.45e-5 chips short of a 64-chip lock were listed as a lock the truth could not
    honour (the relative floor alone, 1e-6 x 64 = 6.4e-5, let it through)."""
    import pandas as pd

    from optimizer.analysis.replan_folder import give_way_table

    held = pd.DataFrame(
        {
            "decided_in": ["2026Q1"] * 3,
            "kind": ["install", "install", "build"],
            "s": [0, 0, 0],
            "c": [0, 0, -1],
            "o": [-1, -1, -1],
            "t": [1, 2, 1],
            "locked_value": [64.0, 64.0, 5.0],
            "delivered_short": [6.45e-5, 0.5, 0.011],
        }
    )
    held["value"] = held["locked_value"] - held["delivered_short"]
    codes = {"s": ["nova"], "c": ["rubin"], "o": []}
    gw = give_way_table(held, codes, ["2026Q1", "2026Q2", "2026Q3"])
    assert gw[["kind", "period", "delivered_short"]].values.tolist() == [
        ["install", "2026Q3", 0.5],
        ["build", "2026Q2", 0.011],
    ]


def test_the_decisions_table_leaves_out_the_solvers_noise() -> None:
    """decisions.parquet held installs of -1e-7 chips and builds of 1.85e-7 MW."""
    from types import SimpleNamespace

    from optimizer.analysis.replan import _decision_table

    locked = pd.DataFrame(
        {
            "decided_in": ["2026Q1"] * 4,
            "kind": ["install", "install", "build", "build"],
            "s": [0, 0, 0, 0],
            "c": [0, 0, -1, -1],
            "o": [-1, -1, -1, -1],
            "t": [0, 1, 0, 1],
            "value": [2e6, -1e-7, 2.0, 1.85e-7],
        }
    )
    model = SimpleNamespace(codes={"s": ("dc-1",), "c": ("h100",), "o": ()})
    d = _decision_table(locked, model, ["2026Q1", "2026Q2"])
    # an absolute floor: 2 MW beside 2e6 chips is a decision (a floor relative to the
    # kind's largest would drop small real ones)
    assert d["value"].tolist() == [2e6, 2.0]
    assert d["kind"].tolist() == ["install", "build"] and d["chip"].tolist() == ["h100", ""]
    assert d["unit"].tolist() == ["chips", "MW"]  # the value mixed MW and chips unlabelled


def test_the_replan_chart_labels_its_axes_and_reads_shares_in_percent() -> None:
    """The served share chart read 0.96-0.99 beside a table in %, its legend listed the
    regret bars, and neither axis had a title."""
    from optimizer.analysis.replan_folder import replan_figure

    paths = pd.DataFrame(
        {
            "path": [0, 1],
            "regret_usd": [2e9, 3e9],
            "served_share": [0.97, 0.98],
            "perfect_foresight_served_share": [0.99, 0.99],
        }
    )
    fig = replan_figure(paths)
    assert fig.layout.yaxis.title.text == "regret [USD billion]"
    assert list(fig.data[0].y) == [2.0, 3.0]
    # the shares span 2 points: one decimal (ticks read 89%, 89%, 90% over 88.6-89.9%)
    assert (
        fig.layout.yaxis2.title.text == "served share [%]" and fig.layout.yaxis2.tickformat == ".1%"
    )
    wide = paths.assign(served_share=[0.70, 0.98])
    assert replan_figure(wide).layout.yaxis2.tickformat == ".0%"
    assert [t.name for t in fig.data if t.showlegend is not False] == [
        "replanned",
        "perfect foresight",
    ]


def test_the_give_way_line_prints_whole_chips_and_tenths_of_a_mw() -> None:
    """It printed 'produce_chips 354,952.4': a fraction of a chip."""
    from rich.console import Console

    from optimizer.cli.replan import _print_give_way

    paths = pd.DataFrame(
        {
            "locks_given_way": [2, 1],
            "delivered_short_produce_chips": [354_000.25, 952.2],
            "delivered_short_build_mw": [12.34, 0.0],
        }
    )
    console = Console(width=200, record=True, color_system=None)
    _print_give_way(console, paths)
    text = console.export_text()
    assert "produce_chips 354,952," in text and "build_mw 12.3 " in text, text
    assert "locks given way on 2 path(s): 3 locks" in text


def test_a_lock_of_nothing_is_held_at_exactly_zero(hand: object) -> None:
    """A realised plan built 1e-7 MW and made 1e-7 chips in quarters where nothing was
    decided: the lock band (1e-7) let the optimum buy a little unmet demand back. On the
    hand case with every decision locked at 0, nothing is built, made or installed and
    all 20 H100e-quarters of demand go unmet."""
    from optimizer.analysis.replan import _fix_unlocked_to_zero
    from optimizer.plan.model import build_model
    from optimizer.plan.options import SolveOptions
    from optimizer.plan.pipeline import solve_model

    empty = pd.DataFrame(columns=["kind", "s", "c", "o", "t", "value"])
    res = solve_model(_fix_unlocked_to_zero(build_model(hand), empty), SolveOptions())[0]
    assert res.status.value == "optimal"
    assert (res.tables["build_out"]["build_mw"] == 0.0).all()
    assert (res.tables["production"]["produced_chips"] == 0.0).all()
    assert (res.tables["fleet"]["installed_chips"] == 0.0).all()
    assert res.tables["demand"]["unmet_h100e"].sum() == pytest.approx(20.0, abs=1e-12)


def test_a_decision_within_the_floor_is_locked_as_nothing() -> None:
    """Values the solver left at 5e-7 MW were locked as decisions and built in the
    realised plan; at most DECISION_FLOOR (1e-6) is due as 0, above it as it is."""
    from types import SimpleNamespace

    from optimizer.analysis.replan import DECISION_FLOOR, _due

    model = SimpleNamespace(
        variables=pd.DataFrame(
            {
                "kind": ["build", "build", "build", "install"],
                "s": [0, 0, 0, 0],
                "c": [-1, -1, -1, 0],
                "o": [-1, -1, -1, -1],
                "t": [0, 1, 2, 0],
                "scale": [1.0, 1.0, 1.0, 1.0],
            }
        )
    )
    x = np.array([5e-7, DECISION_FLOOR, 2.0 * DECISION_FLOOR, 3.0])
    due = _due(model, x, {"build": 3, "install": 1}, pd.DataFrame())
    assert due["value"].tolist() == [0.0, 0.0, 2e-6, 3.0]
