"""Tests of ``capacity solve`` (CLI) and optimizer.output.summary.

Most tests replace the LP by a fake result (tests/test_report.py) so they pin the
summary's numbers by hand; the end-to-end tests run the real LP on the bundled data.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from test_report import fake_result
from typer.testing import CliRunner

import optimizer
from optimizer.cli.commands import app
from optimizer.output.binding_limits import describe_limit
from optimizer.output.formatting import fmt_qty, fmt_usd
from optimizer.output.parquet_tables import read_metadata, read_report
from optimizer.output.summary import exit_code, summarize

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"
ENV = {"COLUMNS": "160", "NO_COLOR": "1", "TERM": "dumb"}

runner = CliRunner()


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@dataclass
class _Options:
    solver: str = "highs"
    time_limit_s: float | None = None
    threads: int | None = None
    integer_units: bool = False
    clusters: bool = False
    formulation: str = "compact"
    objective: str = "cost"


@pytest.fixture
def fake_solve(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Replace optimizer.solve by a fake; the dict sets the result and records calls."""
    box: dict[str, Any] = {"result": fake_result(), "calls": []}

    def solve(ds: Any, options: Any, **kw: Any) -> Any:
        box["calls"].append((ds, options))
        return box["result"]

    monkeypatch.setattr(optimizer, "solve", solve, raising=False)
    monkeypatch.setattr(optimizer, "SolveOptions", _Options, raising=False)
    return box


# ---------------------------------------------------------------------------------
# summarize (pure)


def test_summarize_hand_numbers() -> None:
    s = summarize(fake_result(), scenario="neutral")
    assert s.ok and s.status == "optimal" and exit_code(s) == 0
    assert s.first_period == "2026Q1" and s.last_period == "2026Q2" and s.n_periods == 2
    served = s.served.set_index(["customer", "workload"])
    assert served.loc[("acme", "training"), "served_share"] == pytest.approx(0.9)
    assert served.loc[("acme", "training"), "demand_h100e"] == pytest.approx(100.0)  # avg/q
    assert served.loc[("beta", "inference"), "served_share"] == pytest.approx(0.75)
    assert s.served_share == pytest.approx(255 / 300)
    # grid at alpha ranks first (max |price| over its 2 binding periods), then CoWoS;
    # the non-binding water row and the demand row are left out
    assert s.binding["limit"].tolist() == [
        "grid interconnect at alpha",
        "supply of cowos_wafers",
    ]
    # signed as in shadow_prices.parquet (one convention everywhere)
    assert s.binding["shadow_price"].tolist() == [-2.5e6, -1.2e5]
    assert s.binding["shadow_price_sum"].tolist() == [-3.5e6, -1.2e5]
    assert s.binding["periods"].tolist() == [2, 1]
    assert s.facility_twh == pytest.approx(4.0)
    assert s.water_million_m3 == pytest.approx(2.0)
    chips = s.chips.set_index("chip")
    assert chips.loc["trainium3", "installed_chips"] == 2000.0
    assert chips.loc["h100", "fleet_chips_end"] == 5000.0
    com = s.commitments.set_index(["customer", "family"])
    assert bool(com.loc[("acme", "nvidia"), "met"])
    assert com.loc[("beta", "trainium"), "breached_periods"] == 2
    assert com.loc[("beta", "trainium"), "max_breach_mw"] == 2.0
    costs = s.costs.set_index("term")["cost_usd"]
    assert costs["chip_capex"] == 2e9


def test_summarize_statuses_and_empty_tables() -> None:
    s = summarize(fake_result(status="infeasible", objective_usd=None, tables={}))
    assert not s.ok and exit_code(s) == 1
    assert math.isnan(s.served_share) and s.binding.empty and s.chips.empty
    assert exit_code(summarize(fake_result(status="time_limit_feasible"))) == 0
    violated = fake_result(status="optimal", violations=[{"family": "site_grid"}])
    assert exit_code(summarize(violated)) == 1


def test_formatting() -> None:
    assert fmt_usd(412.34e9) == "$412.3B"
    assert fmt_usd(-2.5e6) == "-$2.5M"
    assert fmt_usd(None) == "n/a"
    assert fmt_usd(float("-inf")) == "-∞"
    assert fmt_qty(1_234_567) == "1.2M"
    assert fmt_qty(3.25) == "3.2"
    assert describe_limit("site_water", "new_carlisle") == "water permit at new_carlisle"
    assert describe_limit("fleet_assignment", "h100/dc 1") == "fleet of h100 at dc 1"
    assert describe_limit("fleet_assignment", "h100") == "fleet assignment h100"
    assert describe_limit("new_family", "x") == "new family x"


# ---------------------------------------------------------------------------------
# CLI with a fake LP


def test_cli_solve_prints_summary_and_writes_report(
    fake_solve: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "reports"
    r = runner.invoke(
        app,
        [
            "solve",
            str(TINY),
            "--scenario",
            "squeeze",
            "--out",
            str(out),
            "--time-limit",
            "30",
            "--threads",
            "1",
            "--solver",
            "cbc",
            "--units",
        ],
        env=ENV,
    )
    assert r.exit_code == 0, r.output
    text = _plain(r.output)
    assert "Status: optimal" in text
    assert "$2.4B" in text
    assert "85.0% of H100e demand" in text  # 255 / 300 from the fake's demand table
    assert "90.0%" in text and "75.0%" in text
    assert "grid interconnect at alpha" in text and "$2.5M/MW" in text
    assert "$120.0k/wafer" in text and "$3.5M" in text
    assert "liquid share" not in text
    assert "4.00 TWh facility" in text and "2.00 million m3" in text
    assert "breached in 2 of 2 periods" in text
    ds, options = fake_solve["calls"][0]
    assert ds.scenario == "squeeze"  # the scenario was applied before solving
    assert (
        options.solver == "PULP_CBC_CMD" and options.time_limit_s == 30.0 and options.threads == 1
    )
    (run_dir,) = out.iterdir()
    sdir = run_dir / "scenario=squeeze"
    assert f"Report: {sdir}" in text
    assert (sdir / "demand.parquet").is_file() and (run_dir / "units.csv").is_file()
    assert read_metadata(sdir / "demand.parquet")["scenario"] == "squeeze"
    man = json.loads((run_dir / "manifest.json").read_text())
    assert man["scenarios"]["squeeze"]["status"] == "optimal"


def test_cli_no_report(
    fake_solve: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, ["solve", str(TINY), "--no-report"], env=ENV)
    assert r.exit_code == 0, r.output
    assert list(tmp_path.iterdir()) == []  # no reports/ folder
    assert fake_solve["calls"][0][0].scenario == "neutral"
    # --out and --units are read only with a report: given with --no-report, refused
    for extra in (["--out", str(tmp_path / "r")], ["--units"]):
        r = runner.invoke(app, ["solve", str(TINY), *extra, "--no-report"], env=ENV)
        assert r.exit_code == 2
        assert "needs a report (read only there): drop it, or drop --no-report" in _plain(r.output)
    assert len(fake_solve["calls"]) == 1 and list(tmp_path.iterdir()) == []


def test_cli_objective_reaches_the_solve(fake_solve: dict[str, Any], tmp_path: Path) -> None:
    args = ["solve", str(TINY), "--no-report"]
    assert runner.invoke(app, args, env=ENV).exit_code == 0
    assert fake_solve["calls"][-1][1].objective == "cost"  # the default
    r = runner.invoke(app, [*args, "--objective", "margin"], env=ENV)
    assert r.exit_code == 0, r.output
    assert fake_solve["calls"][-1][1].objective == "margin"
    bad = runner.invoke(app, [*args, "--objective", "profit"], env=ENV)
    assert bad.exit_code == 2  # usage error: not a choice


def test_cli_margin_summary_leads_with_margin_revenue_and_cost(tmp_path: Path) -> None:
    # a real solve of the one-quarter LP: 500 H100e at 6,000 USD, 1,300 USD each to serve
    lp_one = Path(__file__).resolve().parent / "data" / "lp_one"
    args = ["solve", str(lp_one), "--objective", "margin", "--no-report"]
    r = runner.invoke(app, args, env=ENV)
    assert r.exit_code == 0, r.output
    text = _plain(r.output)
    assert "Margin (discounted): $2.3M = revenue $3.0M - cost $650.0k" in text
    assert "revenue -$3.0M" in text  # the cost line's revenue term (minus the revenue)
    # the cost mode has no revenue term: its cost line does not name one
    cost = _plain(runner.invoke(app, ["solve", str(lp_one), "--no-report"], env=ENV).output)
    line = cost.split("Costs (discounted", 1)[1].split("Cash (", 1)[0]  # may wrap
    assert "revenue" not in line and "chip capex" in line


def test_cli_unknown_scenario_lists_known(fake_solve: dict[str, Any], tmp_path: Path) -> None:
    r = runner.invoke(app, ["solve", str(TINY), "-s", "squeez", "--out", str(tmp_path)], env=ENV)
    assert r.exit_code == 1
    text = _plain(r.output)
    assert "unknown scenario 'squeez'" in text
    assert "neutral" in text and "squeeze" in text
    assert not fake_solve["calls"]


def test_cli_bad_data_prints_findings(fake_solve: dict[str, Any], tmp_path: Path) -> None:
    data = tmp_path / "bad"
    shutil.copytree(TINY, data)
    sites = pd.read_csv(data / "sites.csv", dtype=str, keep_default_na=False)
    sites.loc[0, "pue_air"] = "0.5"  # PUE below 1 is an error
    sites.to_csv(data / "sites.csv", index=False)
    r = runner.invoke(app, ["solve", str(data), "--out", str(tmp_path / "o")], env=ENV)
    assert r.exit_code == 1
    text = _plain(r.output)
    assert "sites.csv" in text and "pue_air" in text and "0.5" in text
    assert not fake_solve["calls"] and not (tmp_path / "o").exists()
    missing = runner.invoke(app, ["solve", str(tmp_path / "nope")], env=ENV)
    assert missing.exit_code == 1
    assert "dataset directory not found" in _plain(missing.output)


def test_cli_infeasible_explains_and_exits_1(fake_solve: dict[str, Any], tmp_path: Path) -> None:
    infeas = pd.DataFrame(
        {
            "family": ["site_grid"],
            "key": ["alpha"],
            "period": ["2026Q2"],
            "amount": [120.0],
            "unit": ["MW"],
            "message": ["site alpha grid in 2026Q2 short by 120 MW"],
        }
    )
    fake_solve["result"] = fake_result(
        status="infeasible", objective_usd=None, tables={}, infeasibility=infeas
    )
    r = runner.invoke(app, ["solve", str(TINY), "--out", str(tmp_path)], env=ENV)
    assert r.exit_code == 1
    text = _plain(r.output)
    assert "Status: infeasible" in text
    assert "site alpha grid in 2026Q2 short by 120 MW" in text
    (run_dir,) = tmp_path.iterdir()  # the explanation is in the report too
    assert read_report(run_dir / "scenario=neutral")["infeasibility"]["amount"].tolist() == [120.0]


def test_cli_time_limit_statuses(
    fake_solve: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 6 s limit on a loaded machine ended with "solver highs, 1.0 s" and no plan, and
    nothing said that start-up and reading the data had taken the other 4.8 s."""
    import time

    from optimizer.plan import deadline

    monkeypatch.setattr(deadline, "process_started", lambda: time.monotonic() - 4.0)
    fake_solve["result"] = fake_result(status="time_limit_no_solution", objective_usd=None)
    r = runner.invoke(app, ["solve", str(TINY), "--no-report", "--time-limit", "6"], env=ENV)
    assert r.exit_code == 1
    text = _plain(r.output)
    assert "time limit was reached before any feasible plan" in text
    m = re.search(
        r"Of the 6 s --time-limit, ([\d.]+) s went before the solve began .* the build and "
        r"the solver had ([\d.]+) s",
        " ".join(text.split()),
    )
    assert m is not None, text
    before, had = float(m.group(1)), float(m.group(2))
    assert 4.0 <= before < 5.0  # the 4 s before the command's code ran, and its reading
    assert before + had == pytest.approx(6.0, abs=0.11)
    fake_solve["result"] = fake_result(status="time_limit_feasible")
    r = runner.invoke(app, ["solve", str(TINY), "--no-report"], env=ENV)
    assert r.exit_code == 0
    assert "Warning: time limit reached" in _plain(r.output)


def test_cli_report_path_blocked(fake_solve: dict[str, Any], tmp_path: Path) -> None:
    blocker = tmp_path / "reports"
    blocker.write_text("x")
    r = runner.invoke(app, ["solve", str(TINY), "--out", str(blocker)], env=ENV)
    assert r.exit_code == 1
    assert f"{blocker} exists and is not a directory" in _plain(r.output)
    assert blocker.read_text() == "x"


# ---------------------------------------------------------------------------------
# End to end with the real LP

REPORT_TINY = ROOT / "tests" / "data" / "report_tiny"


def test_cli_real_lp_on_report_tiny(tmp_path: Path) -> None:
    """report_tiny by hand: wafers cap the fleet at 300 chips in 2026Q1 and 400 in
    2026Q2 against 500 H100e of demand each quarter, so 700 / 1000 = 70.0 % is served.
    Objective: chip rent 1000 USD/chip/quarter (300 x 2 + 100 x 1 chip-quarters),
    energy 300 USD per chip-quarter (2 MWh x PUE 1.5 x 100 USD), unmet 5000 USD per
    H100e-quarter (200 + 100), tie-break 1e-3 per chip produced: 2,410,000.4 USD.
    A wafer in 2026Q1 saves 2 x (5000 - 1300) = 7400 USD (less the tie-break), one in
    2026Q2 saves 3700: the binding limit with peak 7.4k and sum 11.1k USD/wafer."""
    out = tmp_path / "reports"
    r = runner.invoke(app, ["solve", str(REPORT_TINY), "--out", str(out)], env=ENV)
    assert r.exit_code == 0, r.output
    text = _plain(r.output)
    (run_dir,) = out.iterdir()
    tables = read_report(run_dir / "scenario=neutral")
    d = tables["demand"]
    share = d["served_h100e"].sum() / d["demand_h100e"].sum()
    assert share == pytest.approx(0.7, abs=1e-9)
    assert f"{100 * share:.1f}% of H100e demand" in text
    assert "70.0% of H100e demand" in text
    assert "Status: optimal" in text and "$2.4M" in text
    assert "supply of wafers" in text and "-$7.4k/wafer" in text and "-$11.1k" in text
    assert "d(cost)/d(limit)" in text  # the sign convention is in the column header
    assert "Commitments: none" in text
    summ = tables["summary"].iloc[0]
    assert summ["status"] == "optimal"
    assert summ["objective_usd"] == pytest.approx(2_410_000.4, rel=1e-9)
    assert summ["served_share"] == pytest.approx(0.7)
    sp = tables["shadow_prices"].query("family == 'supply_resource'").set_index("period")
    assert sp.loc["2026Q1", "shadow_price"] == pytest.approx(-7400.0, abs=1e-2)
    assert sp.loc["2026Q2", "shadow_price"] == pytest.approx(-3700.0, abs=1e-2)
    meta = read_metadata(run_dir / "scenario=neutral" / "fleet.parquet")
    assert float(meta["objective_usd"]) == pytest.approx(2_410_000.4, rel=1e-9)
    assert f"Report: {run_dir / 'scenario=neutral'}" in text


def test_cli_real_lp_tight_scenario_serves_less(tmp_path: Path) -> None:
    # half the wafers: 150 chips, then 200: 350 / 1000 served
    r = runner.invoke(
        app, ["solve", str(REPORT_TINY), "-s", "tight", "--solver", "cbc", "--no-report"], env=ENV
    )
    assert r.exit_code == 0, r.output
    assert "35.0% of H100e demand" in _plain(r.output)
    assert "solver PULP_CBC_CMD" in _plain(r.output)


@pytest.mark.slow
@pytest.mark.skipif(
    not (ROOT / "data" / "scenarios.yaml").exists(), reason="default dataset not present"
)
def test_cli_default_data_three_scenarios_optimal(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    for name in ("neutral", "optimistic", "negative"):
        r = runner.invoke(
            app, ["solve", str(ROOT / "data"), "--scenario", name, "--out", str(out)], env=ENV
        )
        assert r.exit_code == 0, r.output
        text = _plain(r.output)
        assert "Status: optimal" in text
        assert re.search(r"Objective \(discounted\): \$\d+(\.\d)?[MBT]", text)
    runs = list(out.iterdir())
    summaries = pd.concat([read_report(d)["summary"] for d in runs], ignore_index=True).set_index(
        "scenario"
    )
    assert sorted(summaries.index) == ["negative", "neutral", "optimistic"]
    assert (summaries["status"] == "optimal").all()
    assert (summaries["n_violations"] == 0).all()


# ---------------------------------------------------------------------------------
# Findings of the new-user trial


def _violations(n: int) -> pd.DataFrame:
    lhs = [655.5801399999999 + 100.0 * i for i in range(n)]
    return pd.DataFrame(
        {
            "family": ["site_it_power"] * (n - 2) + ["site_grid", "supply_resource"],
            "constraint": [f"row{i}" for i in range(n)],
            "keys": [f"new_carlisle,2025Q{1 + i % 4}" for i in range(n - 2)]
            + ["alpha,2026Q1", "cowos_wafers,2026Q2"],
            "lhs": lhs,
            "rhs": [200.0] * n,
            "violation": [x - 200.0 for x in lhs],
        }
    )


def test_cli_error_status_hides_objective_and_rounds_violations(
    fake_solve: dict[str, Any], tmp_path: Path
) -> None:
    fake_solve["result"] = fake_result(
        status="error", objective_usd=-51.1e9, violations=_violations(12)
    )
    r = runner.invoke(app, ["solve", str(TINY), "--no-report"], env=ENV)
    assert r.exit_code == 1
    text = _plain(r.output)
    assert "Objective (discounted): n/a — the solution failed the independent check" in text
    assert "-$51.1B" not in text
    assert "655.5801399" not in text and "1798.78" not in text
    assert "Violations: the 10 largest of 12" in text
    # largest first: supply_resource (lhs 1,755.58, by 1,555.58), in domain words
    first = text.index("supply of cowos_wafers")
    assert text.index("grid interconnect at alpha") > first
    assert re.search(
        r"1 │ supply of cowos_wafers +│ 2026Q2 │ +1,755\.6 │ +200\.0 │ +1,555\.6 │", text
    )
    assert re.search(r"│ 2025Q3 │ +855\.6 │ +200\.0 │ +655\.6 │", text)
    assert "IT power capacity at new_carlisle" in text
    assert "Violations by family: site it power 10, site grid 1, supply resource 1" in text
    rows = summarize(fake_result(status="error", violations=_violations(12)))
    assert rows.n_violations == 12


def test_horizon_comes_from_the_dataset_without_a_solution(
    fake_solve: dict[str, Any], tmp_path: Path
) -> None:
    fake_solve["result"] = fake_result(
        status="time_limit_no_solution", objective_usd=None, tables={}
    )
    r = runner.invoke(app, ["solve", str(TINY), "--no-report", "--time-limit", "0.001"], env=ENV)
    assert r.exit_code == 1
    assert "(2026Q1-2026Q2, 2 quarters)" in _plain(r.output)
    # the result's own horizon (PlanResult.periods) is used by summarize
    res = fake_result(status="infeasible", objective_usd=None, tables={})
    res.periods = ("2025Q1", "2025Q2", "2025Q3")  # type: ignore[attr-defined]
    s = summarize(res)
    assert (s.first_period, s.last_period, s.n_periods) == ("2025Q1", "2025Q3", 3)


def _integer_result(breach: list[float]) -> Any:
    res = fake_result(integer_units=True, duals_from="lp_with_integers_fixed")
    com = res.tables["commitments"].copy()
    com["breach_mw"] = breach
    res.tables["commitments"] = com
    return res


def test_cli_integer_units_small_shortfalls_and_dual_source(
    fake_solve: dict[str, Any], tmp_path: Path
) -> None:
    # floors 5 MW (acme) and 2 MW (beta); whole units miss them by 0.02 / 0.01 MW
    fake_solve["result"] = _integer_result([0.0, 0.02, 0.01, 0.0])
    r = runner.invoke(app, ["solve", str(TINY), "--no-report"], env=ENV)
    assert r.exit_code == 0, r.output
    text = _plain(r.output)
    assert (
        "Commitments: all 2 met to within 0.02 MW (0.5% of the floor): whole deployment "
        "units cannot hit a MW floor exactly"
    ) in text
    assert "breached in 1 of 2 periods (up to 0.02 MW short, of the 5 MW floor in 2026Q2)" in text
    assert "Shadow prices come from the LP with the integers fixed" in text
    s = summarize(_integer_result([0.0, 0.02, 0.01, 0.0]))
    assert s.max_shortfall_mw == pytest.approx(0.02) and s.duals_from == "lp_with_integers_fixed"
    # a real breach (2 MW of a 2 MW floor) is not called small
    s = summarize(fake_result())
    from optimizer.output.summary_text import commitments_title

    assert commitments_title(s) == (
        "Commitments: 1 of 2 met in every period; largest shortfall beta 2.0 MW of its "
        "2.0 MW floor in 2026Q1 (100% short)"
    )
    # in LP mode a small breach is the plan's choice, not a rounding: named as a breach
    lp = fake_result()
    com = lp.tables["commitments"].copy()
    com["breach_mw"] = [0.0, 0.02, 0.01, 0.0]
    lp.tables["commitments"] = com
    assert commitments_title(summarize(lp)) == (
        "Commitments: 0 of 2 met in every period; largest shortfall acme 0.02 MW of its "
        "5.0 MW floor in 2026Q2 (0.4% short); largest by share beta 0.01 MW of its 2.0 MW "
        "floor in 2026Q1 (0.5% short)"
    )
    fake_solve["result"] = fake_result()
    assert "Shadow prices come from" not in _plain(
        runner.invoke(app, ["solve", str(TINY), "--no-report"], env=ENV).output
    )


def test_cli_bad_out_fails_before_solving(fake_solve: dict[str, Any], tmp_path: Path) -> None:
    blocker = tmp_path / "reports"
    blocker.write_text("x")
    for out in (blocker, blocker / "sub"):
        r = runner.invoke(app, ["solve", str(TINY), "--out", str(out)], env=ENV)
        assert r.exit_code == 1
        text = _plain(r.output)
        assert f"--out {out}: {blocker} exists and is not a directory; nothing was solved" in text
        assert "Status:" not in text
    assert not fake_solve["calls"] and blocker.read_text() == "x"


def test_solve_help_reads_well(monkeypatch: pytest.MonkeyPatch) -> None:
    # click's help is as wide as the terminal (COLUMNS); its test runner forces 80, so
    # the help is rendered from the command's context here
    import typer

    monkeypatch.setenv("COLUMNS", "400")
    group = typer.main.get_command(app)
    solve_cmd = group.commands["solve"]  # type: ignore[attr-defined]
    parent = group.make_context("capacity", ["solve"], resilient_parsing=True)
    ctx = solve_cmd.make_context("solve", [], parent=parent, resilient_parsing=True)
    help_text = solve_cmd.get_help(ctx)
    lines = help_text.splitlines()
    # each paragraph is one logical line: at 400 columns it is not broken mid-sentence
    assert any(
        "with a warning); 1 for bad data" in ln and "finished before it kept." in ln for ln in lines
    )
    flag_lines = [ln for ln in lines if "--integer-units" in ln or "--units " in ln]
    assert flag_lines and not any("<bool>" in ln for ln in flag_lines)
    assert "[default: report]" not in help_text
    assert "SECONDS" in help_text and "Usage: capacity solve [OPTIONS] [DATA_DIR]" in _plain(
        help_text
    )


def test_margin_binding_limits_say_what_the_shadow_price_is_a_derivative_of() -> None:
    """The margin objective keeps the reports' sign convention (d(objective)/d(limit),
    objective = cost - revenue); its header says so, and the cost mode's says cost."""
    data = Path(__file__).resolve().parents[1] / "data"
    margin = _plain(
        runner.invoke(
            app, ["solve", str(data), "--objective", "margin", "--no-report"], env=ENV
        ).output
    )
    assert "d(discounted cost - revenue)/d(limit)" in margin
    assert "the marginal margin is minus it" in margin
    cost = _plain(runner.invoke(app, ["solve", str(data), "--no-report"], env=ENV).output)
    assert "d(discounted cost)/d(limit)" in cost and "revenue)/d(limit)" not in cost


def test_a_cluster_run_says_how_many_of_its_quarters_are_below_the_minimum() -> None:
    """One small first quarter of a 3-quarter run: 1 of 3 below, the mean labelled."""
    from types import SimpleNamespace

    from optimizer.output.summary_frames import cluster_spans
    from optimizer.output.summary_text import clusters_text

    periods = ["2025Q1", "2025Q2", "2025Q3", "2025Q4"]
    t = pd.DataFrame(
        {
            "customer": ["acme"] * 4,
            "site": ["a", "a", "a", "b"],
            "period": ["2025Q1", "2025Q2", "2025Q3", "2025Q4"],
            "it_mw": [10.0, 200.0, 300.0, 150.0],
            "meets_minimum": [False, True, True, True],
        }
    )
    runs = cluster_spans(t, periods)
    assert runs[["site", "periods", "periods_below", "meets_minimum"]].values.tolist() == [
        ["a", 3, 1, False],
        ["b", 1, 0, True],
    ]
    assert runs["mean_it_mw"].tolist() == [170.0, 150.0]
    s = SimpleNamespace(training_clusters=runs, clusters_enforced=False, mip_gap=None)
    assert clusters_text(s) == [  # type: ignore[arg-type]
        "Training clusters (LP mode: rule reported, not enforced; 1 placement(s) (customer, "
        "site, quarter) below the minimum size, in 1 run(s) of consecutive quarters; solve "
        "with --clusters):",
        "  acme: a 2025Q1-2025Q3 (mean 170 MW; 1 of 3 quarters below the minimum), "
        "b 2025Q4-2025Q4 (mean 150 MW)",
    ]


def test_the_cash_line_names_every_term_with_cash_under_its_kind() -> None:
    """On-site power and grid upgrades are cash too: capex + opex = the table's cash."""
    from optimizer.output.summary_text import cash_line

    costs = pd.DataFrame(
        {
            "term": ["build_capex", "chip_capex", "energy", "grid_upgrade", "onsite_power"]
            + ["unmet_penalty", "revenue"],
            "cash_usd": [70e9, 230e9, 16e9, 40e6, 1.8e9, 0.0, -1.2e12],
            "cash_kind": ["capex", "capex", "opex", "capex", "opex", "none", "revenue"],
        }
    )
    assert cash_line(costs, facility_twh=48.0, n_periods=4) == (
        "Cash (undiscounted, when spent): capex $300.0B (chips at full price when installed "
        "$230.0B, buildings when decided $70.0B, grid upgrades $40.0M), opex $17.8B (energy "
        "$16.0B, on-site power $1.8B), revenue in $1.2T (revenue $1.2T); the plan's computed "
        "facility energy 48.0 TWh a year"
    )


def test_summary_wording_of_near_full_service_no_demand_and_one_more_generation() -> None:
    """A share short of 1 never reads 100.0%; no demand is said so; one generation."""
    from types import SimpleNamespace

    from optimizer.output.summary_render import _pct, _served_table
    from optimizer.output.summary_text import fleet_line

    assert _pct(0.99996) == ">99.9%" and _pct(1.0) == "100.0%" and _pct(0.9974) == "99.7%"
    empty = SimpleNamespace(served_share=float("nan"), served=pd.DataFrame())
    assert _served_table(empty, short=True) == (  # type: ignore[arg-type]
        "Demand served over the horizon: the data hold no demand (0 H100e in every row)"
    )
    chips = pd.DataFrame(
        {"chip": ["a", "b", "c"], "fleet_chips_end": [3.0, 2.0, 1.0], "it_mw_end": [1.0] * 3}
    )
    assert fleet_line(chips, "2030Q4", most=2).endswith("(a 3.0, b 2.0, and 1 more generation)")
    assert fleet_line(chips, "2030Q4", most=1).endswith("(a 3.0, and 2 more generations)")
    # an initial fleet that served, then retired before the end (no supply): not "no chips"
    gone = pd.DataFrame(
        {
            "chip": ["h100", "a100"],
            "installed_chips": [0.0, 0.0],
            "fleet_chips_end": [0.0, 0.0],
            "it_mw_end": [0.0, 0.0],
            "fleet_chips_max": [850_000.0, 20_000.0],
        }
    )
    assert fleet_line(gone, "2030Q4") == (
        "Fleet at end of 2030Q4: no chips in service; largest fleet earlier: h100 850.0k, "
        "a100 20.0k (no chips installed)"
    )
