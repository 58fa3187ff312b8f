"""A sweep may switch the objective mode per case: an ``objective`` grid axis or scenario field.

tests/data/lp_two (two quarters, one customer): the cost objective's plan costs its
chips and energy; the margin objective's objective is that cost minus the revenue.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from capacity.dataset import load_dataset
from optimizer import SolveOptions, solve
from optimizer.analysis.batch import run_batch
from optimizer.analysis.batch_folder import read_batch_manifest
from optimizer.analysis.sweep_cases import expand_sweep
from optimizer.analysis.sweep_errors import SweepSpecError
from optimizer.analysis.sweep_read import load_sweep
from tests.lp_helpers import LP_DATA

AXIS_SWEEP = f"""
data: {LP_DATA / "lp_two"}
grid:
  axes:
    - name: objective
      levels: [cost, margin]
"""


def test_an_objective_axis_solves_each_case_in_its_mode(
    tmp_path: Path, scheduler_address: str
) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(AXIS_SWEEP)
    out = tmp_path / "out"
    r = run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    assert (r.n_done, r.n_failed) == (2, 0)
    ds = load_dataset(LP_DATA / "lp_two")
    man = read_batch_manifest(out)["scenarios"]
    for mode in ("cost", "margin"):
        direct = solve(ds, SolveOptions(objective=mode))
        e = man[f"grid_objective-{mode}"]
        assert e["objective_usd"] == pytest.approx(direct.objective_usd, rel=1e-9)
        assert e["options"]["objective"] == mode
    # by hand: margin 3.53M (revenue 4.8M - cost 1.27M), so the margin objective is -3.53M
    assert man["grid_objective-margin"]["objective_usd"] == pytest.approx(-3.53e6, rel=1e-6)
    # its total cost is the plan's cost (1.27M), not minus its margin (it was -3.53M)
    margin_out = man["grid_objective-margin"]["outcomes"]
    assert margin_out["total_cost_usd"] == pytest.approx(1.27e6, rel=1e-6)
    assert margin_out["margin_usd"] == pytest.approx(3.53e6, rel=1e-6)
    assert man["grid_objective-cost"]["objective_usd"] > 0
    # a re-run finds both cases done under their own modes
    again = run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    assert (again.n_skipped, again.n_done) == (2, 0)
    # an objective axis is the sweep's design: read_run calls it one run (it did not),
    # also when one entry predates tables_hash (compared by dataset_hash then)
    import json
    import warnings

    from optimizer.notebook import read_run

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(read_run(out)) == 2
        doc = json.loads((out / "batch_manifest.json").read_text())
        del doc["scenarios"]["grid_objective-cost"]["tables_hash"]
        (out / "batch_manifest.json").write_text(json.dumps(doc))
        assert len(read_run(out)) == 2


def test_a_composed_scenario_may_name_its_objective(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        f"data: {LP_DATA / 'lp_two'}\n"
        "scenarios:\n  - {name: plain}\n  - {name: earn, objective: margin}\n"
    )
    cases = {c.name: c for c in expand_sweep(load_sweep(sweep))}
    assert (cases["plain"].objective, cases["earn"].objective) == (None, "margin")
    opts = SolveOptions()
    assert cases["earn"].solve_options(opts).objective == "margin"
    assert cases["plain"].solve_options(opts) is opts
    # the mode is part of the case's identity
    assert cases["earn"].key("h", {"objective": "cost"}) != (
        cases["plain"].key("h", {"objective": "cost"})
    )


def test_an_objective_axis_level_must_be_cost_or_margin(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(AXIS_SWEEP.replace("[cost, margin]", "[cost, profit]"))
    with pytest.raises(SweepSpecError) as err:
        load_sweep(sweep)
    assert "objective level must be cost or margin, got 'profit'" in str(err.value)


PRICE = "{op: scale, table: customers, column: price_training_usd_per_h100e_period}"


def test_an_override_the_objective_does_not_read_is_a_warning_not_silence(
    tmp_path: Path, scheduler_address: str
) -> None:
    """A price swept in the cost objective changed nothing and said nothing (prices,
    contract terms and migration count in the margin objective only). The batch now
    names each such case before solving; the margin cases, which read the price, and
    the CLI and Python solves of such a scenario in the margin objective say nothing."""
    import warnings

    from typer.testing import CliRunner

    import capacity_planner as cp
    from capacity.recorded_inputs import read_scenarios_file
    from optimizer.cli.commands import app

    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        f"data: {LP_DATA / 'lp_two'}\ngrid:\n  axes:\n"
        f"    - name: price\n      override: {PRICE}\n      levels: [1, 2]\n"
        "    - name: objective\n      levels: [cost, margin]\n"
    )
    found: list = []
    r = run_batch(
        sweep,
        tmp_path / "out",
        scheduler=scheduler_address,
        progress=False,
        on_warnings=found.extend,
    )
    assert r.n_done == 4
    assert sorted(f.file for f in found) == [
        "case 'grid_price-1_objective-cost'",
        "case 'grid_price-2_objective-cost'",
    ]
    assert found[0].column == "customers.price_training_usd_per_h100e_period"
    assert "--objective margin" in found[0].message
    obj = r.summary.set_index("scenario")["objective_usd"]
    # what the warning says: the cost plans are equal, the margin plans are not
    assert obj["grid_price-2_objective-cost"] == pytest.approx(obj["grid_price-1_objective-cost"])
    # by hand (the first test): revenue 4.8M doubled, the same cost 1.27M: margin 8.33M
    assert obj["grid_price-1_objective-margin"] == pytest.approx(-3.53e6, rel=1e-6)
    assert obj["grid_price-2_objective-margin"] == pytest.approx(-8.33e6, rel=1e-6)
    scen = tmp_path / "scenarios.yaml"
    scen.write_text(
        "scenarios:\n  pricey:\n    description: x\n    overrides:\n"
        "      - {op: scale, table: customers, column: price_training_usd_per_h100e_period,"
        " factor: 2}\n"
    )
    data = str(LP_DATA / "lp_two")
    args = ["solve", data, "--scenarios-file", str(scen), "--scenario", "pricey", "--no-report"]
    cost = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert cost.exit_code == 0, cost.output
    assert "warning: scenario 'pricey': the scale override of customers.price_training" in (
        " ".join(cost.output.split())
    )
    margin = CliRunner().invoke(app, [*args, "--objective", "margin"], env={"COLUMNS": "200"})
    assert margin.exit_code == 0 and "changes nothing" not in margin.output
    ds = load_dataset(LP_DATA / "lp_two").with_scenarios(read_scenarios_file(scen), "s")
    with pytest.warns(UserWarning, match="customers.price_training_usd_per_h100e_period"):
        cp.solve(ds, "pricey")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cp.solve(ds, "pricey", SolveOptions(objective="margin"))


def test_a_case_with_its_own_objective_beside_plain_cases_reads_as_one_run(
    tmp_path: Path, scheduler_address: str
) -> None:
    """A fresh batch of a plain case and a case naming the margin objective was read as
    'not plans of one run': the plain case's options kept its objective (cost), the
    other's was left out, so the two never compared equal."""
    import warnings

    from optimizer.notebook import read_run

    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        f"data: {LP_DATA / 'lp_two'}\nscenarios:\n  - base\n"
        "  - {name: in_margin, base: base, objective: margin}\n"
    )
    out = tmp_path / "out"
    r = run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    assert (r.n_done, r.n_failed) == (2, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plans = read_run(out)
    assert sorted(plans) == ["base", "in_margin"]
    assert plans["in_margin"].objective_usd == pytest.approx(-3.53e6, rel=1e-6)
