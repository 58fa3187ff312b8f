"""Regression: the default dataset's neutral plan in the margin objective, as the docs tell it.

Pins the discounted margin, revenue and cost to solver tolerance and checks the margin
story (who is left unserved, who earns what, which limits are worth most), so neither
the data, the model nor docs/guide/margin.md drifts silently
(``tests/test_margin_guide.py`` compares the page's figures with a fresh solve). When a
deliberate change moves these numbers, update the page and the pinned values together.
"""

from __future__ import annotations

import pytest

from optimizer import Status
from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # one solve of the default data (about 15-20 s)

PINNED_MARGIN_USD = 750_647_671_076.34
PINNED_REVENUE_USD = 879_808_232_629.34
PINNED_STORY = (
    "| neutral | optimal | $750.6B | $879.8B | $129.2B | 99.2% |\n"
    "unmet H100e-quarters: {'anthropic': 1136000.0, 'bedrock': 0.0, "
    "'ec2_gpu': 113000.0, 'openai': 592000.0}\n"
    "revenue USD B: {'anthropic': 263.1, 'bedrock': 115.6, 'ec2_gpu': 319.5, 'openai': 180.7}\n"
    "best MW (USD M): {'pennsylvania': 20.8, 'mississippi': 20.0, 'west_texas': 10.1}\n"
).rstrip()


@pytest.fixture(scope="module")
def plan(default_plan):
    return default_plan("neutral", "margin")[1]


def test_margin_pinned(plan) -> None:
    assert plan.status == Status.optimal
    assert len(plan.violations) == 0
    assert plan.margin_usd == pytest.approx(PINNED_MARGIN_USD, rel=1e-6)
    assert plan.revenue_usd == pytest.approx(PINNED_REVENUE_USD, rel=1e-6)
    assert plan.cost_usd == pytest.approx(PINNED_REVENUE_USD - PINNED_MARGIN_USD, rel=1e-5)


def _fresh_story(plan) -> str:
    """The figures of the README's margin story from this solve (a failure prints them)."""
    dem = plan.tables["demand"]
    served = dem["served_h100e"].sum() / dem["demand_h100e"].sum()
    unmet = dem.groupby("customer")["unmet_h100e"].sum().round(-3).to_dict()
    rev = plan.tables["customer_revenue"].groupby("customer")["revenue_usd"].sum() / 1e9
    sp = plan.tables["shadow_prices"]
    sp = sp[sp["binding"] & (sp["family"] == "site_it_power")]
    best = (-sp.groupby("key")["shadow_price"].sum()).sort_values(ascending=False) / 1e6
    b = lambda usd: f"${usd / 1e9:.1f}B"  # noqa: E731
    return (
        f"| neutral | optimal | {b(plan.margin_usd)} | {b(plan.revenue_usd)} | "
        f"{b(plan.cost_usd)} | {served:.1%} |\nunmet H100e-quarters: {unmet}\n"
        f"revenue USD B: {rev.round(1).to_dict()}\n"
        f"best MW (USD M): {best.head(3).round(1).to_dict()}"
    )


def test_readme_margin_story_holds(plan) -> None:
    fresh = _fresh_story(plan)
    # the margin story's home is the guide page; a failure prints the fresh figures
    guide = (ROOT / "docs" / "guide" / "margin.md").read_text(encoding="utf-8")
    b = lambda usd: f"${usd / 1e9:.1f}B"  # noqa: E731
    line = f"margin {b(plan.margin_usd)} = revenue {b(plan.revenue_usd)} - cost {b(plan.cost_usd)}"
    assert line in guide, fresh
    assert fresh == PINNED_STORY, fresh
