"""The net_revenue table and the Trainium-vs-NVIDIA cost-ratio calibration, by hand.

tests/data/lp_two: 500 chips of g1 (1 H100e, 1 kW, rent 1,000 USD a quarter) serve
customer a's 500 then 300 H100e of training at 6,000 USD; energy 150 USD per busy
chip-quarter (1 kW x 2,000 h x PUE 1.5 x 100 USD/MWh), 75 per idle chip (factor 0.5).
"""

from __future__ import annotations

import pandas as pd
import pytest

from capacity.dataset import load_dataset
from optimizer import SolveOptions, solve
from optimizer.plan.calibration import METRICS, ScopeError
from tests.lp_helpers import LP_DATA

MARGIN = SolveOptions(objective="margin")


@pytest.fixture(scope="module")
def two():
    return load_dataset(LP_DATA / "lp_two")


def test_net_revenue_by_hand(two):
    r = solve(two, MARGIN)
    nr = r.tables["net_revenue"].set_index("period")
    assert nr["chip"].tolist() == ["g1", "g1"] and nr["site"].tolist() == ["s1", "s1"]
    assert nr["fleet_chips"].tolist() == pytest.approx([500.0, 500.0])
    assert nr["revenue_usd"].tolist() == pytest.approx([500 * 6000.0, 300 * 6000.0])
    assert nr["chip_capex_usd"].tolist() == pytest.approx([500_000.0, 500_000.0])
    # 2026Q2: 300 busy chips x 300 + 200 idle x 150 (the idle draw is the chip's)
    assert nr["energy_usd"].tolist() == pytest.approx([150_000.0, 120_000.0])
    assert nr["margin_usd"].tolist() == pytest.approx([2.35e6, 1.18e6])
    # no site capex, power or penalty here: the chips' margin is the plan's
    assert nr["margin_usd"].sum() == pytest.approx(r.margin_usd, rel=1e-6)


def test_net_revenue_bills_only_the_demand(two):
    # a reservation of 600 H100e held at a 3,000 fee (100 more chips cost 2 x 1,000 rent
    # + 150 busy + 75 idle energy = 2,225): 100 chips more than the demand;
    # they earn no price (the fee is a contract term of the costs table, not a chip's)
    terms = pd.DataFrame(
        [
            {
                "customer": "a",
                "workload": "training",
                "from_period": "2026Q1",
                "to_period": "2026Q1",
                "price_usd_per_h100e_period": float("nan"),
                "price_escalator_per_period": 0.0,
                "take_or_pay_h100e": 0.0,
                "reservation_h100e": 600.0,
                "reservation_fee_usd_per_h100e_period": 3000.0,
                "sla_served_share": 0.0,
                "sla_credit_usd_per_h100e": 0.0,
            }
        ]
    )
    r = solve(two.replace(contract_terms=terms), MARGIN)
    q1 = r.tables["net_revenue"].set_index("period").loc["2026Q1"]
    assert q1["served_h100e"] == pytest.approx(600.0)
    assert q1["billed_h100e"] == pytest.approx(500.0)
    assert q1["revenue_usd"] == pytest.approx(500 * 6000.0)


def test_cost_ratio_metric_by_hand():
    # two chips in one period: trainium at 0.6 USD per H100e-hour, nvidia at 0.8
    ue = pd.DataFrame(
        {
            "chip": ["t2", "h1", "h1"],
            "workload": ["training", "training", "inference"],
            "period": ["2026Q1"] * 3,
            "served_h100e_hours": [100.0, 50.0, 50.0],
            "cost_usd": [60.0, 30.0, 50.0],
        }
    )

    class Chips:
        def table(self, name):
            assert name == "chips"
            return pd.DataFrame(
                {
                    "chip": ["t2", "h1", "b1"],
                    "family": ["trainium", "nvidia", "nvidia"],
                    "vendor": ["aws", "nvidia", "nvidia"],
                }
            )

    metric = METRICS["delivered_cost_ratio_vs_nvidia"]
    tables = {"unit_economics": ue}
    assert metric.compute(tables, Chips(), {"chip": "t2"}, "2026Q1") == pytest.approx(0.75)
    # a workload filter applies to both sides: training 0.6 / 0.6
    both = {"chip": "t2", "workload": "training"}
    assert metric.compute(tables, Chips(), both, "2026Q1") == pytest.approx(1.0)
    # versus names the NVIDIA chips of the comparison: a cheap b1 (0.2 USD per
    # H100e-hour) joins the NVIDIA mix (100 / 200 = 0.5, ratio 1.2); against h1 alone
    # the ratio stays 0.6 / 0.8 = 0.75
    more = pd.concat(
        [
            ue,
            pd.DataFrame(
                {
                    "chip": ["b1"],
                    "workload": ["training"],
                    "period": ["2026Q1"],
                    "served_h100e_hours": [100.0],
                    "cost_usd": [20.0],
                }
            ),
        ]
    )
    tables = {"unit_economics": more}
    assert metric.compute(tables, Chips(), {"chip": "t2"}, "2026Q1") == pytest.approx(1.2)
    vs_h1 = {"chip": "t2", "versus": "h1"}
    assert metric.compute(tables, Chips(), vs_h1, "2026Q1") == pytest.approx(0.75)
    with pytest.raises(ScopeError, match="not NVIDIA chips: t2"):
        metric.compute(tables, Chips(), {"chip": "h1", "versus": "t2"}, "2026Q1")


def test_vendor_claim_rows_are_labelled_as_claims():
    record = load_dataset("data").table("public_record")
    rows = record[record["metric"] == "delivered_cost_ratio_vs_nvidia"]
    assert sorted(rows["scope"]) == ["chip:trainium2/versus:h200", "chip:trainium3"]
    assert rows["note"].str.startswith("Vendor claim, not a measurement").all()
