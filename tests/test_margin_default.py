"""Regression: the default dataset's neutral plan in the margin objective, as the model guide
(``docs/guide/model.md``) tells it.

Pins the discounted margin, revenue and cost to solver tolerance and checks the guide's
margin story (who is left unserved, who earns what, which limits are worth most), so
neither the data, the model nor the guide drifts silently. When a deliberate change
moves these numbers, update the guide and the pinned values together.
"""

from __future__ import annotations

import pytest

from capacity import apply_scenario, load_dataset
from optimizer import SolveOptions, Status, solve
from tests.conftest import DEFAULT_DATA, ROOT

pytestmark = pytest.mark.slow  # one solve of the default data (about 15-20 s)

PINNED_MARGIN_USD = 545_217_975_523.37
PINNED_REVENUE_USD = 645_683_906_041.95


@pytest.fixture(scope="module")
def plan():
    ds = apply_scenario(load_dataset(DEFAULT_DATA), "neutral")
    return solve(ds, SolveOptions(objective="margin"))


def test_margin_pinned(plan) -> None:
    assert plan.status == Status.optimal
    assert len(plan.violations) == 0
    assert plan.margin_usd == pytest.approx(PINNED_MARGIN_USD, rel=1e-6)
    assert plan.revenue_usd == pytest.approx(PINNED_REVENUE_USD, rel=1e-6)
    assert plan.cost_usd == pytest.approx(PINNED_REVENUE_USD - PINNED_MARGIN_USD, rel=1e-5)


def test_the_model_guide_margin_story_holds(plan) -> None:
    guide = (ROOT / "docs" / "guide" / "model.md").read_text(encoding="utf-8")
    assert "| neutral | optimal | $545.2B | $645.7B | $100.5B | 99.1% |" in guide
    unmet = plan.tables["demand"].groupby("customer")["unmet_h100e"].sum()
    assert unmet["anthropic"] == pytest.approx(1.09e6, rel=5e-3)
    assert unmet["openai"] == pytest.approx(0.30e6, rel=2e-2)
    assert unmet["ec2_gpu"] == pytest.approx(24e3, rel=2e-2)
    assert unmet["bedrock"] == pytest.approx(0.0, abs=1.0)
    rev = plan.tables["customer_revenue"].groupby("customer")["revenue_usd"].sum() / 1e9
    assert rev.round(1).to_dict() == {
        "anthropic": 216.4,
        "openai": 181.9,
        "ec2_gpu": 131.8,
        "bedrock": 115.6,
    }
    sp = plan.tables["shadow_prices"]
    sp = sp[sp["binding"] & (sp["family"] == "site_it_power")]
    # one more MW in every quarter: the sum of the marginal margins (-shadow_price)
    best = (-sp.groupby("key")["shadow_price"].sum()).sort_values(ascending=False) / 1e6
    assert best.index[:3].tolist() in (
        ["pennsylvania", "mississippi", "west_texas"],
        ["mississippi", "pennsylvania", "west_texas"],
    )
    assert best[["pennsylvania", "mississippi", "west_texas"]].round(1).tolist() == [
        18.7,
        18.7,
        15.0,
    ]
