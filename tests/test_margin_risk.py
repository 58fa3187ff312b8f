"""Margin as the outcome of the tornado and the Monte Carlo, by hand on tests/data/lp_one.

A served H100e earns 6,000 USD and costs 1,300 (rent 1,000 + energy 300): margin
4,700 per H100e of demand (500 H100e), so a demand factor f gives margin 500 f x 4,700
and revenue 500 f x 6,000 while f x 500 fits the site (1 MW: 1,000 chips).
"""

from __future__ import annotations

import numpy as np
import pytest

from capacity.dataset import load_dataset
from optimizer import SolveOptions, solve
from optimizer.analysis.monte_carlo import monte_carlo
from optimizer.analysis.outcomes import ALL_OUTCOMES, OUTCOMES, mode_outcomes, plan_outcomes
from optimizer.analysis.tornado import TornadoParameter, tornado
from tests.lp_helpers import LP_DATA

MARGIN = SolveOptions(objective="margin")
DEMAND = {"op": "scale", "table": "demand", "column": "demand_h100e"}


@pytest.fixture(scope="module")
def one():
    return load_dataset(LP_DATA / "lp_one")


def test_plan_outcomes_hold_margin_and_revenue_in_the_margin_mode_only(one):
    margin = plan_outcomes(solve(one, MARGIN), one)
    assert margin["margin_usd"] == pytest.approx(500 * 4700.0, rel=1e-6)
    assert margin["revenue_usd"] == pytest.approx(500 * 6000.0, rel=1e-9)
    cost = plan_outcomes(solve(one, SolveOptions()), one)
    assert set(cost) == set(OUTCOMES)  # no margin in the cost objective
    assert mode_outcomes(MARGIN) == ALL_OUTCOMES and mode_outcomes(None) == OUTCOMES


def test_tornado_reports_margin_in_the_margin_mode(one):
    param = TornadoParameter("demand", (DEMAND,), 0.8, 1.2)
    t = tornado(one, MARGIN, [param])
    m = t[t["outcome"] == "margin_usd"].set_index("side")
    assert m.loc["low", "value"] == pytest.approx(400 * 4700.0, rel=1e-6)
    assert m.loc["high", "value"] == pytest.approx(600 * 4700.0, rel=1e-6)
    assert m.loc["high", "base_value"] == pytest.approx(500 * 4700.0, rel=1e-6)
    assert set(t["outcome"]) == set(ALL_OUTCOMES)
    assert set(tornado(one, SolveOptions(), [param])["outcome"]) == set(OUTCOMES)


def test_monte_carlo_margin_percentiles_by_hand(one):
    spec = {
        "samples": 6,
        "seed": 5,
        "parameters": [
            {
                "name": "demand",
                "override": DEMAND,
                "distribution": {"kind": "uniform", "low": 0.5, "high": 1.5},
            }
        ],
    }
    mc = monte_carlo(one, spec, MARGIN)
    f = np.random.default_rng(5).uniform(0.5, 1.5, 6)
    margin = 500 * f * 4700.0
    np.testing.assert_allclose(mc.samples["margin_usd"].to_numpy(), margin, rtol=1e-6)
    p = mc.percentiles.set_index("outcome")
    np.testing.assert_allclose(
        p.loc["margin_usd", ["p10", "p50", "p90"]].to_numpy(dtype=float),
        np.percentile(margin, [10, 50, 90]),
        rtol=1e-6,
    )


def test_extensive_form_objective_holds_the_revenue_constant(one):
    # demand 500 or 300 H100e, equal weights, installs shared (as in test_margin.py):
    # the expected margin by hand; the reported objective is cost - revenue = -margin,
    # so it includes the constant -price x demand of each scenario
    from optimizer.analysis.hedge import extensive_form_objective
    from tests.lp_helpers import edit

    low = edit(one, "demand", demand_h100e=300.0)
    expected_margin = 0.5 * 500 * 4700 + 0.5 * (300 * 4700 - 200 * 1000 - 30_000)
    obj, status, _ = extensive_form_objective([one, low], [0.5, 0.5], MARGIN)
    assert status == "optimal"
    assert obj == pytest.approx(-expected_margin, rel=1e-6)


def test_hedge_cli_margin_runs_the_l_shaped_method_and_the_extensive_form(tmp_path):
    import re

    from typer.testing import CliRunner

    from optimizer.cli.commands import app
    from tests.conftest import TINY

    runner = CliRunner(env={"COLUMNS": "200"})
    args = ["hedge", str(TINY), "--samples", "2", "--objective", "margin", "--workers", "0"]
    res = runner.invoke(app, [*args, "--reference"])
    assert res.exit_code == 0, res.output
    assert "expected margin RP (lower bound)" in res.output and "converged" in res.output
    # the reference is the margin LP's extensive form: it prints a positive margin, and
    # the decomposition's figure is within the tolerance of it
    assert "extensive form: optimal, expected margin =" in res.output
    diff = re.search(r"relative diff to L-shaped: (\S+)", res.output)
    assert diff is not None and abs(float(diff.group(1))) <= 1e-4
    res = runner.invoke(
        app,
        ["hedge", str(TINY), "--samples", "2", "--objective", "margin", "--method", "extensive"],
    )
    assert res.exit_code == 0, res.output
    assert "expected margin =" in res.output


def test_batch_summary_rows_carry_margin_only_for_margin_cases(one):
    from optimizer.analysis.batch_folder import summary_row

    margin = plan_outcomes(solve(one, MARGIN), one)
    row = summary_row("c1", "grid", {}, {"state": "done", "outcomes": margin}, skipped=False)
    assert row["margin_usd"] == pytest.approx(500 * 4700.0, rel=1e-6)
    assert row["revenue_usd"] == pytest.approx(500 * 6000.0, rel=1e-9)
    cost = plan_outcomes(solve(one, SolveOptions()), one)
    row = summary_row("c1", "grid", {}, {"state": "done", "outcomes": cost}, skipped=False)
    assert "margin_usd" not in row and "revenue_usd" not in row
