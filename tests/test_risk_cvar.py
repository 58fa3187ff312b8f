"""CVaR risk aversion in the hedged plan, by hand on the newsvendor of tests/test_risk.py.

Demand D = 100 or 300 with probability 1/2; installing x in [100, 300] chips costs
C_low = CHIP x and C_high = CHIP x + 1500 (300 - x) (CHIP = 1000.001 USD). For
alpha >= 1/2 the worst 1 - alpha of the probability lies in the high scenario, so
CVaR = C_high and rho = E + L C_high = const + x (CHIP - 750 + L (CHIP - 1500)): the
plan installs 100 chips while L < 250.001 / 499.999 (about 0.5) and 300 above.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from optimizer.analysis.decompose import hedge_decomposed, hedge_frontier
from optimizer.analysis.hedge import hedged_plan
from optimizer.plan.risk import RiskSpec, check_cvar, cvar, value_at_risk
from tests.test_risk import CHIP, newsvendor

LOW, HIGH = 100 * CHIP, 100 * CHIP + 1500 * 200  # scenario costs of the 100-chip plan


def _two() -> dict[str, object]:
    return {"low": newsvendor(100), "high": newsvendor(300)}


def test_cvar_by_sorting_matches_the_hand_tail_means() -> None:
    v, p = [10.0, 30.0, 20.0], [0.5, 0.25, 0.25]
    assert cvar(v, p, 0.0) == pytest.approx(float(np.dot(v, p)))  # alpha 0: the mean
    assert cvar(v, p, 0.75) == pytest.approx(30.0)
    # worst half: 30 (0.25) and 20 (0.25)
    assert cvar(v, p, 0.5) == pytest.approx(25.0)
    # worst 0.6: 30, 20 and 0.1 of 10
    assert cvar(v, p, 0.4) == pytest.approx((30 * 0.25 + 20 * 0.25 + 10 * 0.1) / 0.6)
    assert value_at_risk(v, p, 0.5) == 10.0 and value_at_risk(v, p, 0.6) == 20.0
    assert math.isinf(cvar([1.0, math.inf], [0.5, 0.5], 0.9))


def test_weight_zero_is_todays_hedge_and_alpha_zero_is_the_expectation() -> None:
    base = hedged_plan(scenarios=_two(), weights=[1, 1])
    zero = hedged_plan(scenarios=_two(), weights=[1, 1], risk=RiskSpec(0.9, 0.0))
    for f in ("expected_cost_usd", "wait_and_see_usd", "eev_usd", "vss_usd", "evpi_usd"):
        assert getattr(zero, f) == getattr(base, f), f
    # alpha 0: CVaR is the expectation, rho = (1 + L) E, the same plan as today's
    a0 = hedged_plan(scenarios=_two(), weights=[1, 1], risk=RiskSpec(0.0, 3.0))
    assert a0.first_stage["fleet"]["installed_chips"].sum() == pytest.approx(100.0, abs=1e-6)
    assert a0.risk["cvar_usd"] == pytest.approx(a0.expected_cost_usd, rel=1e-12)
    assert a0.risk["risk_objective_usd"] == pytest.approx(4 * (LOW + HIGH) / 2, rel=1e-9)


@pytest.mark.parametrize(("weight", "chips"), [(0.25, 100.0), (1.0, 300.0)])
def test_extensive_form_cvar_optimum_by_hand(weight: float, chips: float) -> None:
    h = hedged_plan(scenarios=_two(), weights=[1, 1], risk=RiskSpec(0.9, weight))
    assert h.status == "optimal" and not h.notes
    assert h.first_stage["fleet"]["installed_chips"].sum() == pytest.approx(chips, abs=1e-6)
    c_low, c_high = chips * CHIP, chips * CHIP + 1500 * (300 - chips)
    assert h.risk["cvar_usd"] == pytest.approx(c_high, rel=1e-9)
    assert h.risk["risk_objective_usd"] == pytest.approx(
        (c_low + c_high) / 2 + weight * c_high, rel=1e-9
    )
    # the CVaR rows bind: excess of the high scenario = C_high - VaR, the LP term exact
    extra = h.results.extra
    assert float(extra[0]) + 0.5 * float(extra[1:].sum()) / 0.1 == pytest.approx(c_high, rel=1e-9)
    # VSS and EVPI of rho: EV plan (200 chips) costs 200 CHIP and 200 CHIP + 150000
    ev_low, ev_high = 200 * CHIP, 200 * CHIP + 150000
    assert h.eev_usd == pytest.approx((ev_low + ev_high) / 2 + weight * ev_high, rel=1e-9)
    ws = (100 * CHIP + 300 * CHIP) / 2 + weight * 300 * CHIP
    assert h.wait_and_see_usd == pytest.approx(ws, rel=1e-9)
    assert h.vss_usd == pytest.approx(h.eev_usd - h.risk["risk_objective_usd"], rel=1e-9)
    assert h.evpi_usd >= 0 and h.vss_usd >= 0


def test_a_tail_below_one_scenario_mixes_both_scenarios_by_hand() -> None:
    # alpha 0.25: the worst 0.75 is all of high and 0.25 of low:
    # rho = (5/6) C_low + (7/6) C_high, slope 2 CHIP - 1750 > 0: install 100
    h = hedged_plan(scenarios=_two(), weights=[1, 1], risk=RiskSpec(0.25, 1.0))
    assert h.first_stage["fleet"]["installed_chips"].sum() == pytest.approx(100.0, abs=1e-6)
    assert h.risk["cvar_usd"] == pytest.approx((0.5 * HIGH + 0.25 * LOW) / 0.75, rel=1e-9)


def test_checker_flags_a_wrong_cvar_term_and_a_short_excess() -> None:
    spec = RiskSpec(0.9, 1.0)
    ok = check_cvar([LOW, HIGH], [0.5, 0.5], spec, LOW, [0.0, HIGH - LOW])
    assert len(ok) == 1 and ok["family"].iloc[0] == "cvar_value"  # eta at VaR_0 is not optimal
    good = check_cvar([LOW, HIGH], [0.5, 0.5], spec, HIGH, [0.0, 0.0])
    assert good.empty
    short = check_cvar([LOW, HIGH], [0.5, 0.5], spec, HIGH - 10.0, [0.0, 5.0])
    assert list(short["keys"]) == ["1", "all"] and short["rhs"].iloc[0] == 5.0


def test_decomposition_with_cvar_and_its_frontier_by_hand() -> None:
    two = _two()
    p = hedge_decomposed(
        list(two.values()), [1, 1], list(two), workers=0, tol=1e-8, risk=RiskSpec(0.9, 1.0)
    )
    assert p.converged
    assert p.expected_cost_usd == pytest.approx(2 * 300 * CHIP, rel=1e-8)
    assert p.lower_bound_usd <= 2 * 300 * CHIP * (1 + 1e-9)
    frontier = hedge_frontier(
        list(two.values()), [0.0, 0.25, 2.0], 0.9, [1, 1], list(two), workers=0, tol=1e-8
    )
    exp = [r.risk["expected_cost_usd"] for r in frontier]
    tail = [r.risk["cvar_usd"] for r in frontier]
    assert exp == pytest.approx([(LOW + HIGH) / 2, (LOW + HIGH) / 2, 300 * CHIP], rel=1e-7)
    assert tail == pytest.approx([HIGH, HIGH, 300 * CHIP], rel=1e-7)
    assert frontier[0].expected_cost_usd == pytest.approx((LOW + HIGH) / 2, rel=1e-8)


@pytest.mark.parametrize(
    ("alpha", "weight", "words"),
    [(1.0, 1.0, "--alpha: 1.0"), (-0.1, 1.0, "--alpha: -0.1"), (0.9, -1.0, "--weight: -1.0")],
)
def test_bad_alpha_and_weight_name_the_option_and_value(
    alpha: float, weight: float, words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        RiskSpec(alpha, weight)
