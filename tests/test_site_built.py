"""Site rows over built-to-date columns: the same LP optimum as the running sums of builds.

Above ``RECURSIVE_CAPACITY_MIN_TERMS`` running-sum terms ``site_max``, ``site_it_power``,
``site_liquid`` and ``site_retrofit_pool`` read one ``built[s,p]`` (or
``liquid_built[s,p]``) column per site and period, defined by the ``site_built`` and
``site_liquid_built`` recursions, instead of every earlier build. The substitution is
exact: same plan cost, the built columns equal the running sums of the builds, the
site-size limit binds at the hand value with the same shadow price, and a clean
independent check.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from benchmarks.generate import SIZES, generate, generate_tables
from capacity.dataset import Dataset
from optimizer import SolveOptions, Status, solve
from optimizer.plan.model import build_model

built_mod = importlib.import_module("optimizer.components.site_built")

#: site_000 of the small generated instance: 10 MW initial IT, no pipeline; a
#: 60 MW campus leaves 50 MW to build, which the plan wants and more.
CAMPUS_MW, INITIAL_MW = 60.0, 10.0


def _small_with_campus() -> Dataset:
    tables = generate_tables(SIZES["small"])
    sites = tables["sites"]
    assert float(sites.loc[0, "initial_it_mw"]) == INITIAL_MW
    sites.loc[0, "max_it_mw"] = CAMPUS_MW
    return Dataset.from_tables(tables)


def _site_max_price(res) -> float:
    sp = res.tables["shadow_prices"]
    row = sp[(sp["family"] == "site_max") & (sp["key"] == "site_000") & sp["binding"]]
    assert len(row) == 1, row
    return float(row["shadow_price"].iloc[0])


def test_built_columns_give_the_running_sum_optimum(monkeypatch):
    ds = generate("small")
    sums = solve(ds, SolveOptions(solver="highs"))
    assert not {"built", "liquid_built"} & set(build_model(ds).variables["kind"])
    monkeypatch.setattr(built_mod, "RECURSIVE_CAPACITY_MIN_TERMS", 0)
    model = build_model(ds)
    var, con = model.variables, model.constraints
    for kind, family in (("built", "site_built"), ("liquid_built", "site_liquid_built")):
        assert len(var[var["kind"] == kind]) == (con["family"] == family).sum() > 0
    # each site_max row now holds exactly one column: its site's built-to-date column
    a = model.matrix.tocsr()
    rows = a[np.flatnonzero((con["family"] == "site_max").to_numpy())]
    assert set(np.diff(rows.indptr)) == {1}
    assert set(var["kind"].to_numpy()[rows.indices]) == {"built"}
    rec = solve(ds, SolveOptions(solver="highs"))
    assert sums.status == rec.status == Status.optimal
    assert rec.objective_usd == pytest.approx(sums.objective_usd, rel=1e-9)
    assert len(rec.violations) == 0


def test_built_is_the_running_sum_of_builds(monkeypatch):
    from optimizer.plan.highs import _run_highs

    monkeypatch.setattr(built_mod, "RECURSIVE_CAPACITY_MIN_TERMS", 0)
    model = build_model(generate("small"))
    raw = _run_highs(model, SolveOptions(solver="highs"))
    assert raw.status == Status.optimal
    var = model.variables.assign(x=raw.x)
    for kind, total in (("build", "built"), ("liquid", "liquid_built")):
        made = var[var["kind"] == kind].set_index(["s", "t"])["x"]
        to_date = var[var["kind"] == total].set_index(["s", "t"])["x"]
        assert made.sum() > 1.0  # the plan builds, so the sums are not all zeros
        for s, series in to_date.groupby(level="s"):
            done = made.loc[s].reindex(series.index.get_level_values("t"), fill_value=0.0)
            np.testing.assert_allclose(series.to_numpy(), done.cumsum().to_numpy(), atol=1e-6)


def test_the_campus_limit_binds_at_its_hand_value_through_built(monkeypatch):
    from optimizer.plan.highs import _run_highs

    ds = _small_with_campus()
    price_sums = _site_max_price(solve(ds, SolveOptions(solver="highs")))
    monkeypatch.setattr(built_mod, "RECURSIVE_CAPACITY_MIN_TERMS", 0)
    res = solve(ds, SolveOptions(solver="highs"))
    assert res.status == Status.optimal and len(res.violations) == 0
    model = build_model(ds)
    raw = _run_highs(model, SolveOptions(solver="highs"))
    var = model.variables.assign(x=raw.x)
    built = var[(var["kind"] == "built") & (var["s"] == 0)].sort_values("t")["x"]
    # the campus is full by the last decision period: 60 MW - 10 MW initial
    assert built.iloc[-1] == pytest.approx(CAMPUS_MW - INITIAL_MW, abs=1e-6)
    price = _site_max_price(res)
    assert price == pytest.approx(price_sums, rel=1e-6)
    assert price < -1_000.0
    # the dual is the cost change of one more MW of campus (USD per MW)
    tables = generate_tables(SIZES["small"])
    tables["sites"].loc[0, "max_it_mw"] = CAMPUS_MW + 1.0
    more = solve(Dataset.from_tables(tables), SolveOptions(solver="highs"))
    assert more.objective_usd - res.objective_usd == pytest.approx(price, rel=1e-4)


def test_the_hedged_plan_reads_built_columns_as_the_builds(monkeypatch):
    from capacity.dataset import load_dataset
    from optimizer.analysis.decompose_cuts import induced_rows
    from optimizer.analysis.monte_carlo import sample_scenarios
    from optimizer.plan.model import build_stochastic_model, first_stage_universe
    from tests.test_risk import TINY

    _, dsets, _ = sample_scenarios(load_dataset(TINY), 2, seed=3)
    u = first_stage_universe(dsets)

    def induced(d):
        m = build_stochastic_model([d], [1.0], universe=u)
        n_first = int((m.variables["scenario"] == -1).sum())
        return m, induced_rows(m, n_first)[0]

    sums = [induced(d)[1] for d in dsets]
    monkeypatch.setattr(built_mod, "RECURSIVE_CAPACITY_MIN_TERMS", 0)
    for d, before in zip(dsets, sums, strict=True):
        m, after = induced(d)
        assert (m.variables["kind"] == "built").any()
        # the site rows stay induced rows over the builds, with the same entries
        assert after.shape == before.shape and abs(after - before).max() < 1e-9
