"""Power as a decision (issue 12): each power family binds at a hand-computed value.

A one-site, three-quarter dataset built in the test: 1 kW chips (power factor 1,
idle 1, PUE 1, free chips), 50,000 H100e wanted each quarter, 1,000 hours per
quarter, grid energy at USD 100/MWh and 0.5 t CO2/MWh. One MW of facility power
therefore serves 1,000 H100e and uses 1,000 MWh per quarter.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from capacity.dataset import load_dataset
from optimizer import SolveOptions, solve

PERIODS = ("2026Q1", "2026Q2", "2026Q3")


def _write(folder: Path, name: str, rows: list[dict[str, object]]) -> None:
    pd.DataFrame(rows).to_csv(folder / f"{name}.csv", index=False)


def _dataset(
    tmp_path: Path,
    *,
    grid_mw: tuple[float, ...] = (30.0, 30.0, 30.0),
    penalty: float = 5000.0,
    onsite_cost_per_mwh: float | None = 120.0,
    ppa_price: float | None = None,
    carbon_price: float = 0.0,
    horizon_cap: float | None = None,
    upgrade: bool = False,
) -> Path:
    d = tmp_path / "power"
    d.mkdir(parents=True)
    _write(d, "periods", [{"period": p, "hours": 1000, "discount_factor": 1.0} for p in PERIODS])
    _write(
        d,
        "sites",
        [
            {
                "site": "s1",
                "region": "r1",
                "initial_it_mw": 100,
                "max_it_mw": 100,
                "max_build_mw_per_period": 0,
                "pue_air": 1.0,
                "pue_liquid": 1.0,
                "wue_l_per_kwh_air": 0,
                "wue_l_per_kwh_liquid": 0,
                "build_capex_usd_per_mw": 0,
                "energy_price_usd_per_mwh": 100,
                "carbon_t_per_mwh": 0.5,
            }
        ],
    )
    _write(
        d,
        "site_grid",
        [{"site": "s1", "period": p, "grid_mw": g} for p, g in zip(PERIODS, grid_mw, strict=True)],
    )
    _write(d, "site_water", [{"site": "s1", "period": p, "water_permit_m3": 1e9} for p in PERIODS])
    _write(
        d,
        "chips",
        [
            {
                "chip": "g1",
                "vendor": "v",
                "family": "nv",
                "it_kw_per_chip": 1.0,
                "cooling": "air",
                "first_period": PERIODS[0],
                "last_period": PERIODS[-1],
                "lifetime_periods": 12,
                "capex_usd_per_chip": 0,
                "training_h100e": 1,
                "inference_h100e": 1,
                "hbm_gb": 80,
                "idle_power_factor": 1.0,
            }
        ],
    )
    _write(
        d, "supply_resources", [{"resource": "w", "period": p, "capacity": 1e9} for p in PERIODS]
    )
    _write(d, "chip_bill_of_materials", [{"chip": "g1", "resource": "w", "per_chip": 1.0}])
    _write(
        d, "initial_fleet", [{"chip": "g1", "site": "s1", "chips": 0, "install_period": "2025Q4"}]
    )
    _write(
        d,
        "customers",
        [
            {
                "customer": "a",
                "price_training_usd_per_h100e_period": 0,
                "price_inference_usd_per_h100e_period": 0,
                "unmet_penalty_usd_per_h100e_period": penalty,
            }
        ],
    )
    _write(
        d,
        "demand",
        [
            {"customer": "a", "workload": "training", "period": p, "demand_h100e": 50000}
            for p in PERIODS
        ],
    )
    _write(d, "eligibility", [{"customer": "a", "chip": "g1", "derate": 1.0}])
    _write(
        d,
        "workloads",
        [
            {"workload": "training", "power_factor": 1.0},
            {"workload": "inference", "power_factor": 0.5},
        ],
    )
    _write(
        d,
        "sources",
        [{"table": "*", "key": "*", "column": "*", "source": "assumption", "note": "hand test"}],
    )
    if onsite_cost_per_mwh is not None:
        _write(
            d,
            "onsite_generation",
            [
                {
                    "site": "s1",
                    "technology": "gen",
                    "capex_usd_per_mw": 8e6,
                    "variable_cost_usd_per_mwh": onsite_cost_per_mwh,
                    "carbon_t_per_mwh": 0.4,
                    "lead_periods": 1,
                    "availability": 1.0,
                    "max_mw": 100,
                    "lifetime_periods": 8,
                }
            ],
        )
    if ppa_price is not None:
        _write(
            d,
            "ppas",
            [
                {
                    "contract": "nuke",
                    "from_period": PERIODS[0],
                    "site": "s1",
                    "mw": 100,
                    "price_usd_per_mwh": ppa_price,
                    "carbon_t_per_mwh": 0.0,
                }
            ],
        )
    policy = {"period": "", "carbon_price_usd_per_t": carbon_price}
    if horizon_cap is not None:
        policy["carbon_cap_t"] = horizon_cap
    _write(d, "carbon_policy", [policy])
    if upgrade:
        _write(
            d,
            "grid_upgrades",
            [
                {
                    "site": "s1",
                    "option": "line",
                    "cost_usd_per_mw": 80000,
                    "lead_periods": 1,
                    "max_mw_per_period": 5,
                    "max_mw_total": 8,
                    "lifetime_periods": 8,
                }
            ],
        )
    return d


def _solve(path: Path):  # noqa: ANN202
    res = solve(load_dataset(path), SolveOptions(solver="highs"))
    assert res.status.value == "optimal", res.message
    assert len(res.violations) == 0
    return res


def _built(res) -> float:  # noqa: ANN001
    pdx = res.tables["power_decisions"]
    return float(pdx.loc[pdx["kind"] == "onsite", "mw"].sum())


def _price(res, family: str, period: str | None = None) -> float:  # noqa: ANN001
    sp = res.tables["shadow_prices"]
    sel = sp["family"] == family
    if period is not None:
        sel &= sp["period"] == period
    return float(sp.loc[sel, "shadow_price"].iloc[0])


def test_onsite_generation_bridges_a_grid_delay_when_cheaper_than_unmet_demand(
    tmp_path: Path,
) -> None:
    # grid 30 MW in every quarter, 50 MW wanted: an on-site MW costs 8M/8 = 1M rent + 1,000 MWh
    # x 120 = 0.12M per quarter, an unserved MW 1,000 H100e x 5,000 = 5M: build 20 MW in 2026Q1
    # (online 2026Q2); 2026Q1 cannot be bridged (lead 1 quarter).
    res = _solve(_dataset(tmp_path))
    pdx = res.tables["power_decisions"]
    row = pdx[pdx["kind"] == "onsite"].iloc[0]
    assert row["decision_period"] == "2026Q1" and row["online_period"] == "2026Q2"
    assert row["mw"] == pytest.approx(20.0, abs=1e-6)
    # objective: 2026Q1 20k H100e unmet (100M) + grid 30,000 MWh (3M); 2026Q2-Q3 grid 3M +
    # on-site 20,000 MWh x 120 (2.4M) + rent 20M each
    # (+ the production tie-break, 50,000 chips x 1e-3 USD)
    expected = 100e6 + 3e6 + 2 * (3e6 + 2.4e6 + 20e6) + 50000 * 1e-3
    assert res.objective_usd == pytest.approx(expected, rel=1e-9)
    ps = res.tables["power_sources"]
    gen = ps[(ps["source"] == "onsite:gen") & (ps["period"] == "2026Q3")].iloc[0]
    assert gen["energy_mwh"] == pytest.approx(20000.0) and gen["carbon_t"] == pytest.approx(8000.0)
    # the grid delivers its 30 MW x 1,000 h: an extra grid MWh replaces an on-site MWh (100 vs 120)
    assert _price(res, "grid_energy", "2026Q3") == pytest.approx(-20.0, abs=1e-6)


def test_no_onsite_generation_when_the_grid_arrives_in_time_or_unmet_is_cheaper(
    tmp_path: Path,
) -> None:
    # grid reaches 50 MW in 2026Q2, when on-site power could first arrive: nothing built
    res = _solve(_dataset(tmp_path, grid_mw=(30.0, 50.0, 50.0)))
    assert _built(res) == pytest.approx(0.0, abs=1e-6)
    # grid delayed but unmet demand at 500/H100e: an unserved MW costs 0.5M < 1.12M on-site
    other = tmp_path / "b"
    other.mkdir()
    res = _solve(_dataset(other, penalty=500.0))
    assert _built(res) == pytest.approx(0.0, abs=1e-6)


def test_a_carbon_price_moves_the_mix_to_the_ppa(tmp_path: Path) -> None:
    # PPA at 110 and 0 t vs grid at 100 and 0.5 t: the PPA wins above 20 USD/t
    low = _solve(
        _dataset(
            tmp_path,
            grid_mw=(50.0,) * 3,
            onsite_cost_per_mwh=None,
            ppa_price=110.0,
            carbon_price=10.0,
        )
    )
    ps = low.tables["power_sources"]
    assert ps.loc[ps["source"] == "ppa:nuke", "energy_mwh"].sum() == pytest.approx(0.0, abs=1e-6)
    second = tmp_path / "hi"
    second.mkdir()
    high = _solve(
        _dataset(
            second,
            grid_mw=(50.0,) * 3,
            onsite_cost_per_mwh=None,
            ppa_price=110.0,
            carbon_price=30.0,
        )
    )
    ps = high.tables["power_sources"]
    assert ps.loc[ps["source"] == "ppa:nuke", "energy_mwh"].sum() == pytest.approx(150000.0)
    assert ps.loc[ps["source"] == "grid", "energy_mwh"].sum() == pytest.approx(0.0, abs=1e-6)
    costs = high.tables["costs"].groupby("term")["cost_usd"].sum()
    assert costs["carbon"] == pytest.approx(0.0, abs=1e-6)


def test_a_horizon_carbon_cap_binds_at_its_hand_price(tmp_path: Path) -> None:
    # 150,000 MWh over the horizon; cap 30,000 t -> grid MWh <= 60,000, the PPA supplies the
    # rest; one more t lets one more 2 MWh come from the grid instead: -(110 - 100) * 2
    res = _solve(
        _dataset(
            tmp_path,
            grid_mw=(50.0,) * 3,
            onsite_cost_per_mwh=None,
            ppa_price=110.0,
            horizon_cap=30000.0,
        )
    )
    ps = res.tables["power_sources"]
    assert ps.loc[ps["source"] == "grid", "carbon_t"].sum() == pytest.approx(30000.0)
    assert _price(res, "carbon_cap_horizon") == pytest.approx(-20.0, abs=1e-6)
    # a carbon cap is a limit of the plan: the summary lists it among the binding limits
    from optimizer.output.summary import summarize

    b = summarize(res).binding.set_index("family")
    assert b.loc["carbon_cap_horizon", "limit"] == "carbon cap over the horizon"
    # one sign convention everywhere: the summary shows the signed d(objective)/d(rhs)
    assert b.loc["carbon_cap_horizon", "shadow_price"] == pytest.approx(-20.0, abs=1e-6)


def test_grid_upgrade_rate_and_total_bind(tmp_path: Path) -> None:
    # an upgrade MW rents at 10k per quarter: cheapest. 5 MW per request (rate binds in 2026Q1),
    # 8 MW in total (the 2026Q2 request gets the remaining 3, online 2026Q3)
    res = _solve(_dataset(tmp_path, upgrade=True))
    pdx = res.tables["power_decisions"]
    up = pdx[pdx["kind"] == "grid_upgrade"].set_index("decision_period")["mw"]
    assert up["2026Q1"] == pytest.approx(5.0) and up["2026Q2"] == pytest.approx(3.0)
    assert _price(res, "grid_upgrade_rate", "2026Q1") < 0
    assert _price(res, "grid_upgrade_total") < 0
    # on-site fills the rest: 15 MW in 2026Q2 (50 - 30 - 5), 12 MW in 2026Q3 needed
    assert _built(res) == pytest.approx(15.0, abs=1e-6)


def test_explanation_words_a_power_shortfall(tmp_path: Path) -> None:
    from optimizer.components import BY_NAME

    text = BY_NAME["onsite_energy"].explain_template.format(
        key="s1/onsite:gen", period="2026Q2", amount="5"
    )
    assert text == "on-site generation s1/onsite:gen in 2026Q2 short by 5 MWh"
    text = BY_NAME["carbon_cap_horizon"].explain_template.format(
        key="", period="2026Q3", amount="7"
    )
    assert text == "carbon cap over the horizon (to 2026Q3) exceeded by 7 t CO2"


def _frames(path: Path) -> tuple[object, dict[str, pd.DataFrame]]:
    from optimizer.plan.model import build_model
    from optimizer.plan.raw_solve import run_solver
    from optimizer.plan.results import solution_frames

    ds = load_dataset(path)
    model = build_model(ds)
    raw = run_solver(model, SolveOptions(solver="highs"))
    assert raw.x is not None
    return ds, solution_frames(model, raw.x)


def _shift(fr: dict[str, pd.DataFrame], kind: str, source: str, period: str, mwh: float) -> None:
    f = fr[kind]
    sel = (f["source"] == source) & (f["period"] == period)
    assert sel.sum() == 1
    f.loc[sel, "value"] += mwh


def test_checker_flags_an_energy_balance_broken_by_hand(tmp_path: Path) -> None:
    from optimizer.plan.check import check_frames

    # the bridging plan of the first test: 20 MW on-site online from 2026Q2, grid 30 MW
    ds, fr = _frames(_dataset(tmp_path))
    assert len(check_frames(ds, fr)) == 0
    # 500 MWh moved from the grid to on-site in 2026Q3: on-site 20,500 MWh > 20 MW x 1,000 h
    # (the facility total is unchanged, the grid is below its 30,000 MWh)
    _shift(fr, "power_energy", "onsite:gen", "2026Q3", 500.0)
    _shift(fr, "power_energy", "grid", "2026Q3", -500.0)
    v = check_frames(ds, fr)
    assert v["family"].tolist() == ["onsite_energy"]
    assert v["keys"].tolist() == ["s1/onsite:gen,2026Q3"]
    assert v["lhs"].tolist() == pytest.approx([20500.0])
    assert v["rhs"].tolist() == pytest.approx([20000.0])
    assert v["violation"].tolist() == pytest.approx([500.0])
    # 250 MWh less from the grid in 2026Q2: the sources no longer sum to the facility's
    # 50 MW x 1,000 h = 50,000 MWh
    _shift(fr, "power_energy", "onsite:gen", "2026Q3", -500.0)
    _shift(fr, "power_energy", "grid", "2026Q3", 500.0)
    _shift(fr, "power_energy", "grid", "2026Q2", -250.0)
    v = check_frames(ds, fr)
    assert v["family"].tolist() == ["power_energy_balance"]
    assert v["keys"].tolist() == ["s1,2026Q2"]
    assert v["lhs"].tolist() == pytest.approx([49750.0])
    assert v["rhs"].tolist() == pytest.approx([50000.0])
    assert v["violation"].tolist() == pytest.approx([250.0])


def test_checker_flags_a_grid_upgrade_request_above_its_rate(tmp_path: Path) -> None:
    from optimizer.plan.check import check_frames

    # the upgrade plan: 5 MW requested in 2026Q1 (rate 5), 3 MW in 2026Q2 (total 8)
    ds, fr = _frames(_dataset(tmp_path, upgrade=True))
    assert len(check_frames(ds, fr)) == 0
    # 1 MW moved from the 2026Q2 request to 2026Q1: the total stays 8, the 2026Q1 request
    # is 6 MW against its 5 MW per-request limit (more grid online is not a violation)
    _shift(fr, "grid_upgrade", "upgrade:line", "2026Q1", 1.0)
    _shift(fr, "grid_upgrade", "upgrade:line", "2026Q2", -1.0)
    v = check_frames(ds, fr)
    assert v["family"].tolist() == ["grid_upgrade_rate"]
    assert v["keys"].tolist() == ["s1/upgrade:line,2026Q1"]
    assert v["violation"].tolist() == pytest.approx([1.0])


def test_the_mw_beyond_the_grant_is_derived_once_per_plan_at_its_hand_values(
    tmp_path: Path,
) -> None:
    from optimizer.components.plan_context import PlanContext
    from optimizer.components.power_bridge import online_mw
    from optimizer.components.power_check import _upgrades, extra_grid_mw

    # the upgrade plan: 5 MW requested in 2026Q1 and 3 MW in 2026Q2 (online a quarter
    # later), 15 MW on-site built in 2026Q2 (availability 1): beyond the 30 MW grant
    # 0 MW in 2026Q1, 5 + 15 = 20 MW in 2026Q2, 8 + 15 = 23 MW in 2026Q3
    ds, fr = _frames(_dataset(tmp_path, upgrade=True))
    ctx = PlanContext(ds, fr)
    extra = extra_grid_mw(ctx)
    assert extra["period"].tolist() == list(PERIODS)
    assert extra["mw"].tolist() == pytest.approx([0.0, 20.0, 23.0])
    # the tables and the checks of one plan read the same frame; another plan derives
    # its own (a plan's frames edited by hand are a new context in check_frames)
    assert extra_grid_mw(ctx) is extra
    assert online_mw(ctx, "grid_upgrade", _upgrades(ds)) is online_mw(
        ctx, "grid_upgrade", _upgrades(ds)
    )
    _shift(fr, "grid_upgrade", "upgrade:line", "2026Q2", -3.0)
    fewer = extra_grid_mw(PlanContext(ds, fr))
    assert fewer["mw"].tolist() == pytest.approx([0.0, 20.0, 20.0])
    assert extra["mw"].tolist() == pytest.approx([0.0, 20.0, 23.0])


def test_tornado_moves_the_carbon_price_from_zero_to_the_social_cost(tmp_path: Path) -> None:
    from optimizer.analysis.tornado import (
        SOCIAL_COST_OF_CARBON_USD_PER_T,
        carbon_price_parameter,
        default_tornado_parameters,
        tornado,
    )

    ds = load_dataset(_dataset(tmp_path))
    carbon = next(p for p in default_tornado_parameters(ds) if p.name == "carbon_price")
    assert (carbon.low, carbon.high) == (0.0, SOCIAL_COST_OF_CARBON_USD_PER_T) == (0.0, 210.0)
    t = tornado(ds, SolveOptions(solver="highs"), [carbon_price_parameter()])
    row = t[(t["parameter"] == "carbon_price") & (t["outcome"] == "total_cost_usd")]
    row = row.set_index("side")
    assert (row["status"] == "optimal").all()
    # the bridging plan does not move at 210 USD/t (grid 205 vs on-site 204 USD/MWh, the
    # on-site rent of 1M per MW-quarter is not worth 1 USD/MWh): the swing is its carbon,
    # grid 30,000 MWh x 0.5 t in each quarter and on-site 20,000 MWh x 0.4 t in 2026Q2-Q3
    carbon_t = 3 * 30000 * 0.5 + 2 * 20000 * 0.4
    assert row.loc["low", "change"] == pytest.approx(0.0, abs=1e-3)
    assert row.loc["high", "change"] == pytest.approx(210.0 * carbon_t, rel=1e-9)
    assert row["swing_total_cost_usd"].iloc[0] == pytest.approx(210.0 * carbon_t, rel=1e-9)


def test_initial_onsite_mw_stand_in_the_report_and_their_fixed_cost_in_the_objective(
    tmp_path: Path,
) -> None:
    """10 MW of on-site generation stand from the start (no build: max_mw 10), fixed cost
    USD 87,600 per MW-year = 10 x 87,600 x 1,000 h / 8,760 = 100,000 per quarter. They
    run flat out (120/MWh beats unmet demand): 10,000 MWh x 120 = 1.2M per quarter.

    power_sources showed 0 MW for them, and counted the fixed cost the objective and the
    costs table left out."""
    d = _dataset(tmp_path)
    gen = pd.read_csv(d / "onsite_generation.csv")
    gen["initial_mw"], gen["max_mw"], gen["fixed_cost_usd_per_mw_year"] = 10.0, 10.0, 87600.0
    gen.to_csv(d / "onsite_generation.csv", index=False)
    res = _solve(d)
    ps = res.tables["power_sources"]
    on = ps[ps["source"] == "onsite:gen"].set_index("period")
    assert on["capacity_mw"].tolist() == pytest.approx([10.0] * 3)
    assert on["energy_mwh"].tolist() == pytest.approx([10000.0] * 3)
    assert on["cost_usd"].tolist() == pytest.approx([1.2e6 + 100_000.0] * 3)
    costs = res.tables["costs"]
    onsite = costs[costs["term"] == "onsite_power"].groupby("period")["cost_usd"].sum()
    assert onsite.tolist() == pytest.approx([1.3e6] * 3)
    assert float(costs["cost_usd"].sum()) == pytest.approx(res.objective_usd, rel=1e-12)
    # 10,000 H100e unmet a quarter at 5,000; grid 30,000 MWh at 100; tie-break 40,000 chips
    assert res.objective_usd == pytest.approx(3 * (50e6 + 3e6 + 1.3e6) + 40000 * 1e-3, rel=1e-9)


def test_a_grid_row_of_site_utilisation_prices_one_more_mw_of_grid(tmp_path: Path) -> None:
    """grid_mw bounds two rows: site_grid (MW) and grid_energy (MW x hours). In 2026Q3
    20 MW of on-site power run beside the 30 MW grid: one more MW of grid replaces
    1,000 on-site MWh at 120 by grid MWh at 100, -20,000 USD. site_utilisation's grid
    row showed the MW row's dual alone, 0."""
    res = _solve(_dataset(tmp_path / "a"))
    su = res.tables["site_utilisation"]
    row = su[(su["limit"] == "grid") & (su["period"] == "2026Q3")].iloc[0]
    # one side: one MW less leaves a MW of demand unserved or built (the MW row binds too)
    up = _solve(_dataset(tmp_path / "b", grid_mw=(30.0, 30.0, 31.0)))
    fd = up.objective_usd - res.objective_usd
    assert fd == pytest.approx(-20_000.0, rel=1e-9)
    assert row["shadow_price_usd_per_unit"] == pytest.approx(fd, rel=1e-9)
    assert _price(res, "site_grid", "2026Q3") == pytest.approx(0.0, abs=1e-9)


def test_the_energy_table_costs_the_energy_not_the_capacity(tmp_path: Path) -> None:
    """2026Q3: 30,000 grid MWh at 100 and 20,000 on-site MWh at 120 = 5.4M of energy.
    The energy table's cost summed power_sources, so it also held the on-site plant's
    20M rent of the quarter (25.4M)."""
    res = _solve(_dataset(tmp_path))
    en = res.tables["energy"].set_index("period")
    assert en.loc["2026Q3", "energy_cost_usd"] == pytest.approx(30000 * 100 + 20000 * 120.0)
    ps = res.tables["power_sources"]
    q3 = ps[ps["period"] == "2026Q3"]
    assert q3["cost_usd"].sum() == pytest.approx(5.4e6 + 20e6)  # with the rent
