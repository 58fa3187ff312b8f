"""Replanning locks every commitment of a passed quarter, power contracts included."""

from __future__ import annotations

from pathlib import Path

import pytest

from capacity.dataset import load_dataset
from optimizer.analysis.replan import PathOutcome, ReplanSetup, run_path
from optimizer.analysis.replan_setup import (
    KIND_UNITS,
    LOCK_KINDS,
    REPLANNED_KINDS,
    read_forecast_file,
    revealed_parameters,
)
from optimizer.components.registry import active
from optimizer.plan.options import SolveOptions
from tests.test_power import PERIODS, _dataset, _write
from tests.test_speed_to_power import _flexible


def _path_on_forecasts(
    data: Path, forecasts: str, path: int, truth: dict[str, float]
) -> PathOutcome:
    """Run replanning path ``path`` of ``data`` to ``truth``, forecasts from CSV rows."""
    forecast = data.parent / "forecast.csv"
    forecast.write_text("quarter,parameter,level\n" + forecasts)
    ds = load_dataset(data)
    params = revealed_parameters(ds)
    revision = read_forecast_file(forecast, tuple(ds.periods), params, 1)
    setup = ReplanSetup(base=ds, parameters=params, revision=revision, options=SolveOptions())
    return run_path(setup, path, truth)


def test_every_decision_kind_is_locked_or_replanned() -> None:
    """A kind in neither tuple is one a replan could change in hindsight unnoticed."""
    kinds = set(active().kind_units)
    assert set(LOCK_KINDS).isdisjoint(REPLANNED_KINDS)
    assert set(LOCK_KINDS) | set(REPLANNED_KINDS) == kinds
    assert KIND_UNITS["flexible_upgrade"] == "mw" and KIND_UNITS["produce"] == "chips"


def test_the_help_and_the_guide_name_every_lockable_kind() -> None:
    from optimizer.cli.replan import REPLAN_HELP as HELP

    guide = (Path(__file__).parents[1] / "docs" / "guide" / "replanning.md").read_text()
    for kind in LOCK_KINDS:
        assert kind in HELP and f"`{kind}`" in guide, kind


def test_a_flexible_request_is_locked_once_its_quarter_has_passed(tmp_path: Path) -> None:
    """One site, a 30 MW grid, 1 kW chips and 1,000 h quarters; demand 25,000 H100e a
    quarter at USD 5,000 per unmet H100e; a 20 MW grid upgrade with a 2-quarter lead
    that can come a quarter sooner as a flexible request. The 2026Q1 replan forecasts
    demand at 0.7 (17,500 H100e fits the grid: no request); the truth is 1.3 (32,500
    H100e). A planner who learns it in 2026Q2 requests then, online in 2026Q3: 2026Q2
    loses 2,500 H100e x 5,000 = 12.5M, less the grid energy and rent it saves, 12.22M
    by hand. With flexible requests unlocked the realised plan placed one in 2026Q1
    after the truth was known and the regret read 0."""
    d = _dataset(tmp_path, onsite_cost_per_mwh=None)
    _write(
        d,
        "demand",
        [
            {"customer": "a", "workload": "training", "period": p, "demand_h100e": 25000}
            for p in PERIODS
        ],
    )
    _flexible(d, checkpoint=0.0)  # a 20 MW line, 2 quarters; flexible 1 quarter sooner
    rows = "2026Q1,demand_a,0.7\n2026Q2,demand_a,1.3\n"
    out = _path_on_forecasts(d, rows, 0, {"demand_a": 1.3, "grid_delay": 0.0})
    flex = out.realised.tables["flexible_interconnection"]
    assert flex.loc[flex["mw"] > 1e-6, "decision_period"].tolist() == ["2026Q2"]
    assert out.summary["regret_usd"] == pytest.approx(12_225_000, abs=1_000)  # by hand
    assert out.summary["regret_usd"] == pytest.approx(12_224_747, rel=1e-6)  # as solved
    locked = out.decisions
    assert "flexible_upgrade" in set(locked["kind"])


def test_a_drawn_level_that_makes_the_data_invalid_is_named(tmp_path: Path) -> None:
    """A take-or-pay floor of 9 H100e against a demand of 10: a path drawing demand
    below 0.9 of it made the data invalid, and the command ended in a 70-line
    traceback naming neither the path nor the level."""
    import shutil

    from typer.testing import CliRunner

    from optimizer.cli.commands import app

    hand = Path(__file__).parent / "data" / "replan_hand"
    data = tmp_path / "data"
    shutil.copytree(hand, data)
    (data / "forecast.csv").unlink()
    (data / "tree3.yaml").unlink()
    (data / "contract_terms.csv").write_text(
        "customer,workload,from_period,to_period,price_usd_per_h100e_period,"
        "price_escalator_per_period,take_or_pay_h100e,reservation_h100e,"
        "reservation_fee_usd_per_h100e_period,sla_served_share,sla_credit_usd_per_h100e\n"
        "a,training,2026Q2,2026Q3,,0,9,0,0,0,0\n"
    )
    r = CliRunner().invoke(app, ["replan", str(data), "--paths", "4", "-w", "0"])
    assert r.exit_code == 1, r.output
    assert isinstance(r.exception, SystemExit)  # typer.Exit, not an exception's traceback
    text = " ".join(r.output.split())
    assert "path " in text and "makes the data invalid" in text
    assert "take-or-pay floor 9 H100e is above the demand" in text
    assert "demand_a " in text  # the drawn level is named


def test_a_forecast_without_a_plan_does_not_end_the_path(tmp_path: Path) -> None:
    """One site with 20 MW built and 20 chips arriving in 2026Q2; a grid of 1, 30 and
    60 MW; demand 10 then 40 H100e. The 2026Q1 forecast delays the grid two quarters:
    20 MW of idle fleet against 1 MW has no plan. The truth brings the grid two
    quarters early. The loop stopped at the first replan and fixed every later
    decision at 0: 21M of unmet demand, a regret of 14.7M and 'replans' 3. Now the
    2026Q2 replan sees the truth and builds the 21 MW for 2026Q3 in time, as perfect
    foresight does: regret 0."""
    import shutil

    hand = Path(__file__).parent / "data" / "replan_hand"
    data = tmp_path / "data"
    shutil.copytree(hand, data)
    sites = (data / "sites.csv").read_text().replace("s1,Site One,r1,0.0,", "s1,Site One,r1,20.0,")
    (data / "sites.csv").write_text(sites)
    (data / "site_grid.csv").write_text(
        "site,period,grid_mw\ns1,2026Q1,1\ns1,2026Q2,30\ns1,2026Q3,60\n"
    )
    fleet = (data / "initial_fleet.csv").read_text().rstrip("\n") + "\ng1,s1,20,2026Q2\n"
    (data / "initial_fleet.csv").write_text(fleet)
    (data / "demand.csv").write_text(
        "customer,workload,period,demand_h100e\na,training,2026Q2,10\na,training,2026Q3,40\n"
    )
    truth = {"wafer_supply": 1.25, "grid_delay": -2.0, "demand_a": 1.0}
    rows = "2026Q1,grid_delay,2\n2026Q2,grid_delay,0\n"
    out = _path_on_forecasts(data, rows, 5, truth)
    s = out.summary
    assert s["replans"] == 3 and s["replans_without_plan"] == 1
    assert s["served_share"] == pytest.approx(1.0, abs=1e-9)
    assert s["realised_cost_usd"] == pytest.approx(s["perfect_foresight_cost_usd"], rel=1e-9)
    assert s["regret_usd"] == pytest.approx(0.0, abs=1.0)
    build = out.decisions[out.decisions["kind"] == "build"]
    assert build[["decided_in", "period"]].values.tolist() == [["2026Q2", "2026Q2"]]
    assert build["value"].sum() == pytest.approx(20.0, rel=1e-6)  # 40 H100e less the 20 MW built


def test_a_one_quarter_horizon_and_a_path_without_a_plan_are_said_plainly(
    tmp_path: Path,
) -> None:
    """One quarter: "use --every below 1" asked for the impossible. A path without a
    plan printed "perfect foresight inf" and "regret inf" where its table holds NaN."""
    import math
    import shutil

    import pandas as pd
    from typer.testing import CliRunner

    from optimizer.cli.commands import app
    from optimizer.cli.replan import _money

    data = tmp_path / "one"
    shutil.copytree(Path(__file__).parent / "data" / "replan_hand", data)
    for f in data.glob("*.csv"):
        t = pd.read_csv(f)
        for col in ("period", "install_period"):
            if col in t.columns:
                t = t[t[col] == "2026Q1"]
        t.to_csv(f, index=False)
    (data / "forecast.csv").unlink()
    r = CliRunner().invoke(app, ["replan", str(data), "--paths", "1", "-w", "0"])
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and "needs a horizon of at least 2 quarters" in text, text
    assert "below 1" not in text
    paths = pd.DataFrame(
        {
            "realised_cost_usd": [math.inf, 2.0e6],
            "perfect_foresight_cost_usd": [math.nan, 1.5e6],
            "regret_usd": [math.nan, 0.5e6],
        }
    )
    usd = _money(paths)
    assert [usd(v) for v in (math.inf, math.nan, 0.5e6)] == ["n/a", "n/a", "$0.50M"]
    from optimizer.cli.replan import _share

    assert [_share(v) for v in (math.nan, 0.975)] == ["n/a", "97.5%"]  # it read nan%


def test_a_forecast_row_in_a_quarter_without_a_replan_is_named(tmp_path: Path) -> None:
    """With --every 2 a row for 2026Q2 was applied at the next replan without a word."""
    from typer.testing import CliRunner

    from optimizer.cli.commands import app

    hand = Path(__file__).parent / "data" / "replan_hand"
    f = tmp_path / "fc.csv"
    f.write_text("quarter,parameter,level\n2026Q1,demand_a,0.8\n2026Q2,demand_a,1.2\n")
    args = ["replan", str(hand), "--paths", "1", "-w", "0", "--every", "2", "--revision", str(f)]
    r = CliRunner().invoke(app, args)
    text = " ".join(r.output.split())
    assert r.exit_code == 0, text
    assert "no replan is made in 2026Q2 (--every 2); those rows apply at the next replan" in text
    r = CliRunner().invoke(app, [*args[:7], "1", *args[8:]])  # --every 1: every quarter
    assert r.exit_code == 0 and "no replan is made" not in " ".join(r.output.split())


@pytest.mark.parametrize(
    ("command", "option", "helptext"),
    [
        ("replan", "--base", "an unknown scenario"),
        ("alternatives", "--scenario", "the scenario unknown"),
    ],
)
def test_an_unknown_scenario_exits_1_as_the_help_says(
    command: str, option: str, helptext: str
) -> None:
    """Their help said 1 for a plan not found and 2 for a bad option; an unknown scenario
    exits 1, as in solve, and the help now says so."""
    from typer.testing import CliRunner

    from optimizer.cli.commands import app

    hand = Path(__file__).parent / "data" / "replan_hand"
    r = CliRunner().invoke(app, [command, str(hand), option, "nope"])
    assert r.exit_code == 1, r.output
    assert "nope" in r.output
    h = CliRunner().invoke(app, [command, "--help"], terminal_width=200)
    assert helptext in " ".join(h.output.split())
