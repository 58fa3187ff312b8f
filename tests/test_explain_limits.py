"""An infeasible plan is explained by the limit the user set, not by a bookkeeping row.

The elastic re-solve relaxes policy limits (carbon caps) before physical limits and
both before balances, and weighs a row whose limit is 0 like the rest of its family
(:mod:`optimizer.plan.explain`). Before, a carbon cap of 0 t was the dearest row to relax
(weight 1 / max(1, |rhs|) = 1 per t) and the explanation blamed "energy supply"
at the sites.

The small dataset is the one of ``tests/test_power.py`` with an installed fleet: 10,000
chips of 1 kW, idle or busy at 1 kW, PUE 1, 1,000 hours a quarter: 10,000 MWh of
facility energy every quarter that no decision can avoid. Grid energy emits 0.5 t/MWh;
on-site generation (lead one quarter, so online from 2026Q2) 0.4 t/MWh. The least the
plan can emit is 5,000 t in 2026Q1 and 4,000 t in each of 2026Q2 and 2026Q3: 13,000 t.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from capacity.dataset import load_dataset
from optimizer import SolveOptions, solve
from optimizer.plan.explain import relax_tier
from tests.conftest import DEFAULT_DATA
from tests.test_power import _dataset

SOLVERS = ["highs", "cbc"]


#: What the explanation adds for a campus with no bridge power option.
NO_BRIDGE = "; no bridge power option at this campus (no bridge row in onsite_generation)"


def _small(tmp_path: Path, policy: list[dict[str, object]], **kw: object) -> Path:
    d = _dataset(tmp_path, **kw)  # type: ignore[arg-type]
    fleet = [{"chip": "g1", "site": "s1", "chips": 10000, "install_period": "2025Q4"}]
    pd.DataFrame(fleet).to_csv(d / "initial_fleet.csv", index=False)
    pd.DataFrame(policy).to_csv(d / "carbon_policy.csv", index=False)
    return d


def _explained(path: Path, solver: str) -> pd.DataFrame:
    res = solve(load_dataset(path), SolveOptions(solver=solver))
    assert res.status.value == "infeasible", res.message
    assert res.infeasibility is not None
    return res.infeasibility


def test_policy_limits_give_first_then_limits_then_balances() -> None:
    assert relax_tier("carbon_cap_period") == relax_tier("carbon_cap_horizon") == 0
    assert relax_tier("site_grid") == relax_tier("grid_energy") == relax_tier("site_water") == 1
    assert relax_tier("power_energy_balance") == relax_tier("chip_inventory") == 2


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_zero_horizon_cap_is_explained_by_the_cap(tmp_path: Path, solver: str) -> None:
    inf = _explained(
        _small(tmp_path, [{"period": "", "carbon_price_usd_per_t": 0, "carbon_cap_t": 0}]), solver
    )
    assert inf["message"].tolist() == [
        "carbon cap over the horizon (to 2026Q3) exceeded by 13,000 t CO2"
    ]
    assert inf.loc[0, "amount"] == pytest.approx(13000.0, rel=1e-6)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_one_tonne_cap_in_one_quarter_is_explained_by_that_cap(
    tmp_path: Path, solver: str
) -> None:
    policy = [
        {"period": "", "carbon_price_usd_per_t": 0, "carbon_cap_t": None},
        {"period": "2026Q2", "carbon_price_usd_per_t": 0, "carbon_cap_t": 1},
    ]
    inf = _explained(_small(tmp_path, policy), solver)
    assert inf["message"].tolist() == ["carbon cap in 2026Q2 exceeded by 3,999 t CO2"]
    assert inf.loc[0, "period"] == "2026Q2" and inf.loc[0, "family"] == "carbon_cap_period"


def test_a_zero_grid_is_explained_by_the_grid_not_by_the_energy_balance(tmp_path: Path) -> None:
    # no grid in 2026Q1 and on-site power only from 2026Q2: the fleet's 10 MW of
    # facility power and its 10,000 MWh have no grid; the energy balance holds
    policy = [{"period": "", "carbon_price_usd_per_t": 0}]
    inf = _explained(_small(tmp_path, policy, grid_mw=(0.0, 30.0, 30.0)), "highs")
    assert sorted(inf["message"]) == [
        "site s1 grid energy (grid capacity x hours) in 2026Q1 short by 10,000 MWh" + NO_BRIDGE,
        "site s1 grid in 2026Q1 short by 10 MW" + NO_BRIDGE,
    ]


def _default_with_policy(tmp_path: Path, policy: str) -> Path:
    import shutil

    d = tmp_path / "data"
    shutil.copytree(DEFAULT_DATA, d)
    (d / "carbon_policy.csv").write_text(policy)
    return d


@pytest.mark.parametrize(
    ("solver", "policy", "family", "period", "words"),
    [
        (
            "highs",
            "period,carbon_price_usd_per_t,carbon_cap_t\n,0,0\n",
            "carbon_cap_horizon",
            "2030Q4",
            "carbon cap over the horizon (to 2030Q4) exceeded by ",
        ),
        (
            "cbc",
            "period,carbon_price_usd_per_t,carbon_cap_t\n,0,\n2025Q1,0,1\n",
            "carbon_cap_period",
            "2025Q1",
            "carbon cap in 2025Q1 exceeded by ",
        ),
    ],
)
def test_the_default_data_with_an_impossible_cap_names_the_cap(
    tmp_path: Path, solver: str, policy: str, family: str, period: str, words: str
) -> None:
    inf = _explained(_default_with_policy(tmp_path, policy), solver)
    assert inf["family"].tolist() == [family], inf["message"].tolist()
    assert inf.loc[0, "period"] == period
    message = str(inf.loc[0, "message"])
    assert message.startswith(words) and message.endswith(" t CO2")
    assert "energy supply" not in message and float(inf.loc[0, "amount"]) > 1e5
