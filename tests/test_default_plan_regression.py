"""Regression: the default dataset's plans, as the README reports them.

Pins each scenario's discounted objective to solver tolerance (GenX-style) and checks
the README's headline facts, so neither the data, the model nor the README drifts
silently. When a deliberate change moves these numbers, update the README table and
the pinned values together.
"""

from __future__ import annotations

import pytest

from capacity import apply_scenario, load_dataset
from optimizer import Status, solve
from tests.conftest import DEFAULT_DATA, ROOT

PINNED_OBJECTIVE_USD = {
    "neutral": 123_720_941_391.65,
    "optimistic": 134_000_797_220.72,
    "negative": 127_248_462_599.05,
}


@pytest.fixture(scope="module")
def plans():
    ds = load_dataset(DEFAULT_DATA)
    return {
        name: (apply_scenario(ds, name), solve(apply_scenario(ds, name)))
        for name in PINNED_OBJECTIVE_USD
    }


@pytest.mark.parametrize("name", list(PINNED_OBJECTIVE_USD))
def test_objective_pinned(plans, name: str) -> None:
    _, res = plans[name]
    assert res.status == Status.optimal
    assert res.objective_usd == pytest.approx(PINNED_OBJECTIVE_USD[name], rel=1e-6)
    assert len(res.violations) == 0


def test_readme_headlines_hold(plans) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ds, res = plans["neutral"]
    assert "| discounted cost | $123.7B | $134.0B | $127.2B |" in readme
    dem = res.tables["demand"]
    served = dem["served_h100e"].sum() / dem["demand_h100e"].sum()
    assert f"{served:.1%}" == "99.8%"
    chips = ds.table("chips").set_index("chip")["family"]
    a = res.tables["assignment"]
    share = a.loc[a["chip"].map(chips) == "trainium", "h100e"].sum() / a["h100e"].sum()
    assert f"{share:.1%}" == "52.6%" and "52.6%" in readme
    end_it_gw = res.tables["fleet"].query("period == '2030Q4'")["it_mw"].sum() / 1000
    assert round(end_it_gw, 1) == 8.8 and "8.8 GW" in readme
    unmet = dem[dem["unmet_h100e"] > 0].set_index(["customer", "workload", "period"])
    short = unmet["unmet_h100e"] / unmet["demand_h100e"]
    assert round(short[("ec2_gpu", "training", "2025Q1")], 2) == 0.22
    assert round(short[("anthropic", "training", "2025Q4")], 2) == 0.08
    com = res.tables["commitments"]
    assert com["breach_mw"].max() == pytest.approx(0.0, abs=1e-6)
