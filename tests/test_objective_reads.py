"""Overrides the objective never reads: the declared columns match the builds' reads,
and each face of a solve warns (found missing by a break-it pass: the margin objective's
unread unmet penalty, a dataset given with its scenario applied, alternatives)."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

import capacity_planner as cp
from capacity.dataset import load_dataset
from optimizer.analysis.tornado import TornadoParameter
from optimizer.cli.commands import app
from optimizer.plan.model import MARGIN_READ_COLUMNS, build_model
from optimizer.plan.objective_reads import COST_ONLY_COLUMNS
from optimizer.plan.options import SolveOptions
from tests.column_reads import recording
from tests.conftest import DEFAULT_DATA
from tests.lp_helpers import LP_DATA


def _reads(objective: str) -> set[tuple[str, str]]:
    ds = load_dataset(DEFAULT_DATA)
    with recording(ds) as (rds, reads):
        build_model(rds, objective=objective)
    return reads


def test_the_declared_columns_are_those_only_one_objective_reads() -> None:
    cost, margin = _reads("cost"), _reads("margin")
    assert margin - cost == set(MARGIN_READ_COLUMNS)
    assert cost - margin == set(COST_ONLY_COLUMNS)


PENALTY = """scenarios:
  soft:
    description: x
    overrides:
      - {op: scale, table: customers, column: unmet_penalty_usd_per_h100e_period, factor: 1000}
  pricey:
    description: x
    overrides:
      - {op: scale, table: customers, column: price_training_usd_per_h100e_period, factor: 2}
  hi+price:
    description: a name with a plus, not a composition
    overrides:
      - {op: scale, table: customers, column: price_training_usd_per_h100e_period, factor: 2}
  dear:
    description: x
    overrides:
      - {op: scale, table: chips, column: capex_usd_per_chip, factor: 3}
"""


@pytest.fixture
def lp_two(tmp_path: Path) -> Path:
    d = tmp_path / "lp_two"
    shutil.copytree(LP_DATA / "lp_two", d)
    (d / "scenarios.yaml").write_text(PENALTY)
    return d


def test_an_unmet_penalty_override_in_the_margin_objective_is_a_warning(lp_two: Path) -> None:
    margin = SolveOptions(objective="margin")
    with pytest.warns(UserWarning, match="unmet_penalty_usd_per_h100e_period changes nothing"):
        soft = cp.solve(lp_two, "soft", margin)
    base = cp.solve(lp_two, None, margin)
    assert soft.objective_usd == pytest.approx(base.objective_usd, rel=1e-12)  # as it says
    with warnings.catch_warnings():  # the cost objective reads it: no warning
        warnings.simplefilter("error")
        cp.solve(lp_two, "soft")


def test_a_dataset_given_with_its_scenario_applied_warns_as_its_name_would(lp_two: Path) -> None:
    with pytest.warns(UserWarning, match="price_training_usd_per_h100e_period changes nothing"):
        cp.solve(cp.load(lp_two, "pricey"))


def test_alternatives_warn_of_an_override_the_cost_objective_does_not_read(
    lp_two: Path, tmp_path: Path
) -> None:
    args = ["alternatives", str(lp_two), "--scenario", "pricey", "--directions", "0"]
    res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "warning: scenario 'pricey': the scale override of customers.price_training" in text


def test_alternatives_record_their_inputs_so_read_run_uses_the_data_solved(
    lp_two: Path, tmp_path: Path
) -> None:
    """capacity alternatives wrote no inputs.yaml: read_run(data=...) read a capex x3
    scenario's plans with x1 unit capex (a third of the capex they spent)."""
    out = tmp_path / "out"
    args = ["alternatives", str(lp_two), "--scenario", "dear", "--directions", "0"]
    res = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert res.exit_code == 0, res.output
    (run,) = out.iterdir()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plans = cp.read_run(run, data=lp_two)
    assert len(plans) >= 2
    for name in plans:
        plan = plans[name]
        costs = plan.tables["costs"]
        cash = costs.loc[costs["term"] == "chip_capex", "cash_usd"].sum()
        stat = plan.statistics.capex(groupby=["term"]).set_index("term")["capex_usd"]
        assert cash > 0 and stat["chip_capex"] == pytest.approx(cash, rel=1e-9), name


def test_a_scenario_named_with_a_plus_is_itself_not_a_composition(lp_two: Path) -> None:
    with pytest.warns(UserWarning, match="price_training_usd_per_h100e_period changes nothing"):
        cp.solve(lp_two, "hi+price")


def test_the_python_batch_warns_without_a_callback(
    lp_two: Path, tmp_path: Path, scheduler_address: str
) -> None:
    """cp.run_batch printed nothing for a price axis in the cost objective (the warnings
    went to a callback only the CLI gave)."""
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        f"data: {lp_two}\ngrid:\n  axes:\n    - name: price\n      override: "
        "{op: scale, table: customers, column: price_training_usd_per_h100e_period}\n"
        "      levels: [2]\n"
    )
    with pytest.warns(UserWarning, match="case 'grid_price-2': the scale override"):
        cp.run_batch(sweep, tmp_path / "out", scheduler=scheduler_address, progress=False)


PRICE = {"op": "scale", "table": "customers", "column": "price_training_usd_per_h100e_period"}


def test_a_tornado_on_a_price_in_the_cost_objective_warns_that_its_zero_swing_is_unread(
    lp_two: Path,
) -> None:
    """cp.tornado and cp.monte_carlo said nothing when a parameter's column was unread:
    a zero swing read as a plan insensitive to the price."""
    ds = cp.load(lp_two)
    param = TornadoParameter("price", (PRICE,), 0.5, 2.0)
    with pytest.warns(UserWarning, match="parameter 'price': the scale override of customers"):
        cost = cp.tornado(ds, None, [param])
    margin_opts = SolveOptions(objective="margin")
    with warnings.catch_warnings():  # the margin objective reads prices: no warning
        warnings.simplefilter("error")
        margin = cp.tornado(ds, margin_opts, [param])
    assert cost["swing_total_cost_usd"].abs().max() == 0.0  # unread: no swing at all
    assert margin["swing_total_cost_usd"].abs().max() > 1e6  # read: the margin moves
    spec = {
        "samples": 2,
        "seed": 1,
        "parameters": [
            {
                "name": "price",
                "override": PRICE,
                "distribution": {"kind": "uniform", "low": 0.5, "high": 2.0},
            }
        ],
    }
    with pytest.warns(UserWarning, match="parameter 'price': the scale override of customers"):
        cp.monte_carlo(ds, spec)


def test_a_scenario_is_applied_once_and_never_on_top_of_another(lp_two: Path) -> None:
    """cp.solve(cp.load(path, "dear"), "dear") applied capex x3 twice (x9), and
    cp.solve(cp.load(path, "dear"), "pricey") solved the x3 data under the name pricey."""
    once = cp.solve(lp_two, "dear")
    applied = cp.load(lp_two, "dear")
    again = cp.solve(applied, "dear")
    assert again.objective_usd == pytest.approx(once.objective_usd, rel=1e-12)
    assert cp.solve(applied).objective_usd == pytest.approx(once.objective_usd, rel=1e-12)
    assert cp.solve(lp_two).objective_usd < once.objective_usd  # dear moves the plan
    with pytest.raises(ValueError, match="already has scenario 'dear' applied"):
        cp.solve(applied, "soft")
    with pytest.raises(ValueError, match="already has scenario 'dear' applied"):
        cp.solve_scenarios(applied, ["dear", "soft"])
