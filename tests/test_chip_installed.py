"""Chip inventory over installed-to-date columns: the same LP optimum as the running sums.

Above ``RECURSIVE_INVENTORY_MIN_TERMS`` running-sum terms the chip inventory rows read
one ``installed[c,p]`` column per chip and period, defined by the ``chip_installed``
recursion, instead of every earlier install. The substitution is exact: same plan
cost, the installed columns equal the running sum of the installs, the same inventory
shadow prices, and a clean independent check.
"""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest

from benchmarks.generate import generate
from optimizer import SolveOptions, Status, solve
from optimizer.components.fleet import PRODUCE_TIE_BREAK_USD_PER_CHIP
from optimizer.plan.model import build_model

chips_mod = importlib.import_module("optimizer.components.chips")


def _inventory_prices(res) -> pd.Series:
    sp = res.tables["shadow_prices"]
    sp = sp[sp["family"] == "chip_inventory"]
    keys = [c for c in sp.columns if c not in ("shadow_price", "family")]
    return sp.set_index(keys)["shadow_price"].astype(float).sort_index()


def test_installed_columns_give_the_running_sum_optimum(monkeypatch):
    ds = generate("small")
    sums = solve(ds, SolveOptions(solver="highs"))
    assert "installed" not in set(build_model(ds).variables["kind"])
    monkeypatch.setattr(chips_mod, "RECURSIVE_INVENTORY_MIN_TERMS", 0)
    model = build_model(ds)
    var, con = model.variables, model.constraints
    installed = var[var["kind"] == "installed"]
    assert len(installed) == (con["family"] == "chip_installed").sum() > 0
    # each inventory row now holds its installed column and the produce running sum only
    rows = model.matrix.tocsr()[np.flatnonzero((con["family"] == "chip_inventory").to_numpy())]
    kinds = var["kind"].to_numpy()[rows.indices]
    assert set(kinds) == {"installed", "produce"}
    assert (kinds == "installed").sum() == rows.shape[0]
    rec = solve(ds, SolveOptions(solver="highs"))
    assert sums.status == rec.status == Status.optimal
    assert rec.objective_usd == pytest.approx(sums.objective_usd, rel=1e-9)
    assert len(rec.violations) == 0
    # the same prices up to the produce tie-break (1e-3 USD per chip), where the
    # degenerate LP has more than one dual optimum
    tie = PRODUCE_TIE_BREAK_USD_PER_CHIP
    pd.testing.assert_series_equal(
        _inventory_prices(rec), _inventory_prices(sums), rtol=0, atol=2 * tie
    )
    assert _inventory_prices(rec).min() < -1_000.0  # binding rows are compared, not only zeros


def test_installed_is_the_running_sum_of_installs(monkeypatch):
    from optimizer.plan.highs import _run_highs

    monkeypatch.setattr(chips_mod, "RECURSIVE_INVENTORY_MIN_TERMS", 0)
    ds = generate("small")
    model = build_model(ds)
    raw = _run_highs(model, SolveOptions(solver="highs"))
    assert raw.status == Status.optimal
    var = model.variables.assign(x=raw.x)
    install = var[var["kind"] == "install"].groupby(["c", "t"])["x"].sum()
    installed = var[var["kind"] == "installed"].set_index(["c", "t"])["x"]
    for c, series in installed.groupby(level="c"):
        done = install.loc[c].reindex(series.index.get_level_values("t"), fill_value=0.0)
        np.testing.assert_allclose(series.to_numpy(), done.cumsum().to_numpy(), atol=1e-6)


def test_the_hedged_plan_reads_installed_columns_as_the_installs(monkeypatch):
    from capacity.dataset import load_dataset
    from optimizer.analysis.decompose import hedge_decomposed
    from optimizer.analysis.decompose_cuts import induced_rows
    from optimizer.analysis.hedge import extensive_form_objective
    from optimizer.analysis.monte_carlo import sample_scenarios
    from optimizer.plan.model import build_stochastic_model, first_stage_universe
    from tests.test_risk import TINY

    names, dsets, _ = sample_scenarios(load_dataset(TINY), 3, seed=3)
    ef, status, _ = extensive_form_objective(dsets)  # running sums: below the threshold
    assert status == "optimal" and ef is not None
    u = first_stage_universe(dsets)

    def induced(d):
        m = build_stochastic_model([d], [1.0], universe=u)
        n_first = int((m.variables["scenario"] == -1).sum())
        return m, induced_rows(m, n_first)[0]

    sums = [induced(d)[1] for d in dsets]
    monkeypatch.setattr(chips_mod, "RECURSIVE_INVENTORY_MIN_TERMS", 0)
    for d, before in zip(dsets, sums, strict=True):
        m, after = induced(d)
        assert (m.variables["kind"] == "installed").any()
        # the inventory rows stay induced rows over the installs, with the same entries
        assert after.shape == before.shape and abs(after - before).max() < 1e-9
    p = hedge_decomposed(dsets, names=names, workers=0, tol=1e-6)
    assert p.converged
    assert p.expected_cost_usd == pytest.approx(ef, rel=1e-6)
