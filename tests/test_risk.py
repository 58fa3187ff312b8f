"""Risk: plan outcomes, tornado, Monte Carlo and the hedged plan (VSS, EVPI) by hand.

The newsvendor dataset: one quarter, one site with room to spare, one chip (1 H100e,
rent = capex 1000 USD for its one-quarter life, no energy cost), one customer whose
unserved H100e costs 1500 USD. Installing x chips for demand D costs
1000.001 x + 1500 max(D - x, 0) (0.001 USD/chip is the model's production tie-break).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from capacity.dataset import Dataset, load_dataset
from capacity.scenarios import apply_overrides, apply_scenario
from optimizer.analysis.hedge import hedged_plan, mean_value_dataset
from optimizer.analysis.monte_carlo import monte_carlo
from optimizer.analysis.outcomes import binding_families, plan_outcomes
from optimizer.analysis.tornado import TornadoParameter, default_tornado_parameters, tornado
from optimizer.plan.pipeline import solve

TINY = Path(__file__).resolve().parents[1] / "tests" / "data" / "tiny_valid"
CHIP = 1000.0 + 1e-3  # rent + production tie-break, USD per chip


def newsvendor(demand: float, *, penalty: float = 1500.0) -> Dataset:
    t = {
        "periods": pd.DataFrame(
            {"period": ["2026Q1"], "hours": ["2160"], "discount_factor": ["1"]}
        ),
        "sites": pd.DataFrame(
            [
                {
                    "site": "dc",
                    "region": "us",
                    "initial_it_mw": "10",
                    "initial_liquid_mw": "0",
                    "max_it_mw": "10",
                    "max_build_mw_per_period": "0",
                    "liquid_share_max": "0",
                    "pue_air": "1.2",
                    "pue_liquid": "1.1",
                    "wue_l_per_kwh_air": "0",
                    "wue_l_per_kwh_liquid": "0",
                    "build_capex_usd_per_mw": "10000000",
                    "energy_price_usd_per_mwh": "0",
                    "carbon_t_per_mwh": "0",
                }
            ]
        ),
        "site_grid": pd.DataFrame({"site": ["dc"], "period": ["2026Q1"], "grid_mw": ["100"]}),
        "site_water": pd.DataFrame(
            {"site": ["dc"], "period": ["2026Q1"], "water_permit_m3": ["1e9"]}
        ),
        "chips": pd.DataFrame(
            [
                {
                    "chip": "gpu",
                    "vendor": "x",
                    "family": "nvidia",
                    "it_kw_per_chip": "1",
                    "cooling": "air",
                    "first_period": "2025Q1",
                    "last_period": "2027Q4",
                    "lifetime_periods": "1",
                    "capex_usd_per_chip": "1000",
                    "training_h100e": "1",
                    "inference_h100e": "1",
                    "hbm_gb": "80",
                    "idle_power_factor": "0",
                }
            ]
        ),
        "supply_resources": pd.DataFrame(
            {"resource": ["wafers"], "period": ["2026Q1"], "capacity": ["1e6"]}
        ),
        "chip_bill_of_materials": pd.DataFrame(
            {"chip": ["gpu"], "resource": ["wafers"], "per_chip": ["0.01"]}
        ),
        "customers": pd.DataFrame(
            [
                {
                    "customer": "acme",
                    "price_training_usd_per_h100e_period": "0",
                    "price_inference_usd_per_h100e_period": "0",
                    "unmet_penalty_usd_per_h100e_period": str(penalty),
                }
            ]
        ),
        "workloads": pd.DataFrame(
            {"workload": ["training", "inference"], "power_factor": ["0.8", "0.6"]}
        ),
        "demand": pd.DataFrame(
            {
                "customer": ["acme"],
                "workload": ["training"],
                "period": ["2026Q1"],
                "demand_h100e": [str(demand)],
            }
        ),
        "eligibility": pd.DataFrame({"customer": ["acme"], "chip": ["gpu"], "derate": ["1"]}),
        "sources": pd.DataFrame(
            {"table": ["*"], "key": ["*"], "column": ["*"], "source": ["assumption"]}
        ),
    }
    return Dataset.from_tables(t, name="newsvendor")


def test_hedged_plan_vss_and_evpi_match_the_newsvendor_by_hand() -> None:
    # D = 100 or 300 with probability 1/2. Critical ratio c/p = 2/3 > 1/2: the hedged
    # plan installs 100 chips. RP = 1000.001*100 + 0.5*1500*200 = 250000.1.
    # EV problem: mean demand 200 -> install 200; EEV = 200000.2 + 0.5*1500*100
    # = 275000.2. WS = 0.5*100000.1 + 0.5*300000.3 = 200000.2.
    low, high = newsvendor(100), newsvendor(300)
    h = hedged_plan(scenarios={"low": low, "high": high}, weights=[1, 1])
    assert h.status == "optimal"
    assert h.weights == (0.5, 0.5)
    assert h.ev_problem == "mean_value"
    assert h.expected_cost_usd == pytest.approx(100 * CHIP + 0.5 * 1500 * 200, rel=1e-9)
    assert h.eev_usd == pytest.approx(200 * CHIP + 0.5 * 1500 * 100, rel=1e-9)
    assert h.wait_and_see_usd == pytest.approx(0.5 * 100 * CHIP + 0.5 * 300 * CHIP, rel=1e-9)
    assert h.vss_usd == pytest.approx(25000.1, rel=1e-9) and h.vss_usd > 0
    assert h.evpi_usd == pytest.approx(49999.9, rel=1e-9) and h.evpi_usd > 0
    fleet = h.first_stage["fleet"]
    assert fleet["installed_chips"].sum() == pytest.approx(100.0, abs=1e-6)
    ps = h.per_scenario.set_index("scenario")
    assert ps.loc["high", "hedged_unmet_h100e"] == pytest.approx(200.0, abs=1e-6)
    assert ps.loc["low", "ev_fixed_cost_usd"] == pytest.approx(200 * CHIP, rel=1e-9)
    assert ps.loc["high", "wait_and_see_cost_usd"] == pytest.approx(300 * CHIP, rel=1e-9)


def test_hedged_plan_with_neutral_ev_and_named_scenarios() -> None:
    # Named scenarios of tiny_valid; ev="neutral" uses the neutral plan as EV plan.
    ds = load_dataset(TINY)
    h = hedged_plan(ds, ["neutral", "squeeze"], [0.5, 0.5], ev="neutral")
    assert h.ev_problem == "neutral"
    assert h.vss_usd >= -1e-6 * abs(h.expected_cost_usd)
    assert h.evpi_usd >= -1e-6 * abs(h.expected_cost_usd)
    direct = [solve(apply_scenario(ds, n)) for n in ("neutral", "squeeze")]
    assert h.wait_and_see_usd == pytest.approx(
        0.5 * direct[0].objective_usd + 0.5 * direct[1].objective_usd, rel=1e-9
    )
    # EEV = expected cost of the neutral first stage re-solved in each scenario
    eev = [
        solve(apply_scenario(ds, n), fixed_first_stage=direct[0]) for n in ("neutral", "squeeze")
    ]
    assert h.eev_usd == pytest.approx(
        0.5 * eev[0].objective_usd + 0.5 * eev[1].objective_usd, rel=1e-9
    )


def test_mean_value_problem_falls_back_to_neutral_when_rows_differ() -> None:
    ds = load_dataset(TINY)
    late = apply_overrides(
        ds, [{"op": "shift", "table": "commitments", "column": "from_period", "periods": -1}]
    )
    h = hedged_plan(scenarios={"neutral": ds, "early": late}, weights=[0.5, 0.5])
    assert h.ev_problem == "neutral"
    assert any("mean-value problem is undefined" in n for n in h.notes)


def test_mean_value_dataset_averages_decimals() -> None:
    mv = mean_value_dataset([newsvendor(100), newsvendor(400)], [0.75, 0.25])
    assert mv.table("demand")["demand_h100e"].iloc[0] == pytest.approx(175.0)


def test_mean_value_dataset_is_undefined_when_a_text_cell_differs() -> None:
    # Equal as they are, or equal as text (another dtype), the cells of a column
    # that is not decimal agree; one text cell that differs leaves no mean.
    a, b = newsvendor(100), newsvendor(400)
    sites = b.table("sites").copy()
    sites["region"] = "eu"
    assert mean_value_dataset([a, b.replace(sites=sites)], [0.5, 0.5]) is None
    sites = b.table("sites").copy()
    sites["region"] = sites["region"].astype(object)
    mv = mean_value_dataset([a, b.replace(sites=sites), a], [0.25, 0.25, 0.5])
    assert mv is not None
    assert mv.table("demand")["demand_h100e"].iloc[0] == pytest.approx(175.0)


def test_object_cells_are_compared_as_text_not_as_equal_values() -> None:
    # equals() takes 1 for 1.0 in object columns; their text differs, so no mean.
    from optimizer.analysis.hedge import _same_cells

    one = pd.DataFrame({"x": pd.Series([1, "a"], dtype=object)})
    other = pd.DataFrame({"x": pd.Series([1.0, "a"], dtype=object)})
    assert one["x"].equals(other["x"])
    assert not _same_cells([one, other], ["x"])
    assert _same_cells([one, one.copy(), one], ["x"])


def test_plan_outcomes_of_the_newsvendor() -> None:
    ds = newsvendor(100)
    r = solve(ds)
    o = plan_outcomes(r, ds)
    assert o["total_cost_usd"] == pytest.approx(100 * CHIP, rel=1e-12)
    assert o["unmet_h100e"] == pytest.approx(0.0, abs=1e-9)
    assert o["trainium_share"] == 0.0
    assert o["breach_mw"] == 0.0
    # the only priced limit: demand (dual = marginal chip cost 1000.001 USD/H100e)
    assert binding_families(r) == {"demand_balance", "chip_inventory", "fleet_assignment"} or (
        "demand_balance" in binding_families(r)
    )
    sp = r.tables["shadow_prices"]
    dual = sp.loc[sp["family"] == "demand_balance", "shadow_price"].iloc[0]
    assert dual == pytest.approx(CHIP, rel=1e-9)
    assert "supply_resource" not in binding_families(r)


def test_tornado_matches_hand_values_and_ranks_by_cost_swing() -> None:
    ds = newsvendor(100)
    params = [
        TornadoParameter(
            "energy_price",
            ({"op": "scale", "table": "sites", "column": "energy_price_usd_per_mwh"},),
            0.5,
            2.0,
        ),
        TornadoParameter(
            "demand", ({"op": "scale", "table": "demand", "column": "demand_h100e"},), 0.5, 1.5
        ),
        TornadoParameter(
            "penalty",
            (
                {
                    "op": "scale",
                    "table": "customers",
                    "column": "unmet_penalty_usd_per_h100e_period",
                },
            ),
            0.5,
            2.0,
        ),
    ]
    t = tornado(ds, None, params)
    cost = t[t["outcome"] == "total_cost_usd"].set_index(["parameter", "side"])
    # demand 50 / 150 chips; penalty x0.5 = 750 < 1000: serve nobody -> 75000
    assert cost.loc[("demand", "low"), "value"] == pytest.approx(50 * CHIP, rel=1e-9)
    assert cost.loc[("demand", "high"), "value"] == pytest.approx(150 * CHIP, rel=1e-9)
    assert cost.loc[("penalty", "low"), "value"] == pytest.approx(750 * 100, rel=1e-9)
    assert cost.loc[("penalty", "high"), "value"] == pytest.approx(100 * CHIP, rel=1e-9)
    assert cost.loc[("demand", "low"), "base_value"] == pytest.approx(100 * CHIP, rel=1e-9)
    assert cost.loc[("demand", "low"), "change"] == pytest.approx(-50 * CHIP, rel=1e-9)
    # ranking: demand swing 100 chips > penalty swing 25000.1 > energy price (no energy cost) 0
    ranks = t.drop_duplicates("parameter").set_index("parameter")
    assert ranks.loc["demand", "rank"] == 1 and ranks.loc["penalty", "rank"] == 2
    assert ranks.loc["energy_price", "rank"] == 3
    assert ranks.loc["demand", "swing_total_cost_usd"] == pytest.approx(100 * CHIP, rel=1e-9)
    assert ranks.loc["energy_price", "swing_total_cost_usd"] == pytest.approx(0.0, abs=1e-6)
    unmet = t[t["outcome"] == "unmet_h100e"].set_index(["parameter", "side"])
    assert unmet.loc[("penalty", "low"), "value"] == pytest.approx(100.0, abs=1e-6)
    assert list(t.columns) == [
        "parameter",
        "side",
        "level",
        "outcome",
        "base_value",
        "value",
        "change",
        "swing_total_cost_usd",
        "status",
        "rank",
    ]


def test_default_tornado_equals_direct_re_solves_on_tiny() -> None:
    ds = load_dataset(TINY)
    params = default_tornado_parameters(ds)
    names = [p.name for p in params]
    assert names == [
        "cowos",
        "grid_delay",
        "demand_acme",
        "pue",
        "wue",
        "energy_price",
        "migration_derate",
    ]
    t = tornado(ds, None, params)
    for p in params:
        for side, level in (("low", p.low), ("high", p.high)):
            d = apply_overrides(ds, p.overrides(level))
            r = solve(d)
            want = plan_outcomes(r, d)
            got = t[(t["parameter"] == p.name) & (t["side"] == side)].set_index("outcome")["value"]
            for o, v in want.items():
                if np.isnan(v):
                    assert np.isnan(got[o])
                else:
                    assert got[o] == pytest.approx(v, rel=1e-6, abs=1e-6), (p.name, side, o)
    swings = t.drop_duplicates("parameter")["swing_total_cost_usd"].to_numpy()
    assert (np.diff(swings) <= 1e-9).all()  # ranked by swing, largest first


def test_monte_carlo_percentiles_and_binding_shares_by_hand() -> None:
    ds = newsvendor(100)
    spec = {
        "samples": 12,
        "seed": 3,
        "parameters": [
            {
                "name": "demand",
                "override": {"op": "scale", "table": "demand", "column": "demand_h100e"},
                "distribution": {"kind": "uniform", "low": 0.5, "high": 1.5},
            }
        ],
    }
    mc = monte_carlo(ds, spec)
    f = np.random.default_rng(3).uniform(0.5, 1.5, 12)
    np.testing.assert_allclose(mc.samples["demand"].to_numpy(), f, rtol=1e-12)
    cost = 100 * f * CHIP  # every sample serves all demand (chip 1000 < penalty 1500)
    np.testing.assert_allclose(mc.samples["total_cost_usd"].to_numpy(), cost, rtol=1e-9)
    p = mc.percentiles.set_index("outcome")
    np.testing.assert_allclose(
        p.loc["total_cost_usd", ["p10", "p50", "p90"]].to_numpy(dtype=float),
        np.percentile(cost, [10, 50, 90]),
        rtol=1e-9,
    )
    assert p.loc["unmet_h100e", "p90"] == pytest.approx(0.0, abs=1e-6)
    assert p.loc["total_cost_usd", "n"] == 12
    b = mc.binding.set_index("family")
    assert b.loc["demand_balance", "share_priced"] == 1.0
    assert "supply_resource" not in b.index or b.loc["supply_resource", "share_priced"] == 0.0
    again = monte_carlo(ds, spec, reuse=False)
    pd.testing.assert_frame_equal(again.samples, mc.samples, rtol=1e-9)
