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
from tests.conftest import DEFAULT_DATA, ROOT

pytestmark = pytest.mark.slow  # one solve of the default data (about 15-20 s)

PINNED_MARGIN_USD = 745_005_857_890.15
PINNED_REVENUE_USD = 880_275_345_839.06
PINNED_STORY = (
    "| neutral | optimal | $745.0B | $880.3B | $135.3B | 99.2% |\n"
    "unmet H100e-quarters: {'anthropic': 1168000.0, 'bedrock': 0.0, "
    "'ec2_gpu': 24000.0, 'openai': 520000.0}\n"
    "revenue USD B: {'anthropic': 263.0, 'bedrock': 115.6, 'ec2_gpu': 320.0, 'openai': 181.0}\n"
    "best MW (USD M): {'pennsylvania': 20.5, 'mississippi': 17.9, 'west_texas': 9.4}\n"
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


#: Discounted margin (USD) of each named scenario in the margin objective, from
#: ``capacity solve data --objective margin --scenario all`` (2026-12-03).
PINNED_SCENARIO_MARGINS_USD = {
    "neutral": PINNED_MARGIN_USD,
    "optimistic": 814_521_195_878.69,
    "negative": 701_924_017_968.29,
}


def test_the_migration_row_is_paid_for_what_the_family_holds(plan) -> None:
    # OpenAI onto Trainium: the cost term is the table's, the share never above 1 and
    # equal to the family's peak held H100e over OpenAI's peak demand
    m = plan.tables["migration"]
    costs = plan.tables["costs"]
    paid = costs.loc[costs["term"] == "migration_cost", "cost_usd"].sum()
    assert paid == pytest.approx(m["migration_cost_usd"].sum(), rel=1e-9)
    assert 0 < paid < 500e6
    share = m["ported_share"].max()
    assert share == pytest.approx(m["held_h100e"].max() / m["reference_h100e"].iloc[0], rel=1e-6)
    assert share <= 1.0


def test_the_cli_solves_all_three_scenarios_in_the_margin_objective(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from optimizer.cli.commands import app

    out = tmp_path / "out"
    args = ["solve", str(DEFAULT_DATA), "--objective", "margin", "--scenario", "all"]
    r = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert r.exit_code == 0, r.output
    (manifest,) = out.glob("*/manifest.json")
    runs = json.loads(manifest.read_text())["scenarios"]
    assert set(runs) == set(PINNED_SCENARIO_MARGINS_USD)
    for name, margin in PINNED_SCENARIO_MARGINS_USD.items():
        assert runs[name]["status"] == "optimal"
        assert -runs[name]["objective_usd"] == pytest.approx(margin, rel=1e-6), name
