"""Chance rows on the newsvendor of tests/test_risk.py, by hand.

Demand D = 100 or 300 with probability 1/2; unmet H100e cost 900 USD, less than a chip
(CHIP = 1000.001 USD), so without a chance row the plan installs nothing
(cost 0.5 * 900 * (100 + 300) = 180000). "Meet acme's demand with probability >= beta":

* beta = 0.5, exact: meeting the low scenario is enough; on [100, 300] the slope is
  CHIP - 450 > 0, so x = 100 and the cost is 100 CHIP + 0.5 * 900 * 200 = 190000.1;
* beta = 1: x = 300, cost 300 CHIP;
* the CVaR approximation at beta = 0.5: CVaR_0.5 of two equal scenarios is the worse
  one, so it asks both: x = 300 (conservative; achieved probability 1, reported).
"""

from __future__ import annotations

import pytest

from optimizer.analysis.hedge_chance import chance_plan
from optimizer.plan.chance import ChanceSpec, parse_chance
from optimizer.plan.model import build_stochastic_model
from tests.test_risk import CHIP, newsvendor


def _two() -> list[object]:
    return [newsvendor(100, penalty=900), newsvendor(300, penalty=900)]


@pytest.mark.parametrize(
    ("beta", "method", "chips", "cost", "p_in"),
    [
        (0.5, "exact", 100.0, 100 * CHIP + 0.5 * 900 * 200, 0.5),
        (1.0, "exact", 300.0, 300 * CHIP, 1.0),
        (0.5, "cvar", 300.0, 300 * CHIP, 1.0),
        (1.0, "cvar", 300.0, 300 * CHIP, 1.0),
    ],
)
def test_newsvendor_chance_optimum_by_hand(
    beta: float, method: str, chips: float, cost: float, p_in: float
) -> None:
    fresh = [newsvendor(200, penalty=900), newsvendor(50, penalty=900)]
    c = chance_plan(
        _two(), ChanceSpec("demand", "acme", beta, method), [1, 1], ["low", "high"], fresh=fresh
    )
    assert c.status == "optimal" and not c.notes
    assert c.first_stage["fleet"]["installed_chips"].sum() == pytest.approx(chips, abs=1e-6)
    assert c.expected_cost_usd == pytest.approx(cost, rel=1e-9)
    assert c.in_sample == p_in
    # out of sample, from the fresh scenarios' own tables: 100 chips meet 50, not 200
    assert c.out_of_sample == (0.5 if chips == 100.0 else 1.0)
    if method == "exact":
        assert c.mip_gap is not None and c.mip_gap <= 1e-4
    out = c.per_scenario[c.per_scenario["sample"] == "out"].set_index("scenario")
    assert bool(out.loc["fresh1", "met"]) and out.loc["fresh0", "met"] == (chips >= 200)


def test_without_the_chance_row_the_plan_installs_nothing() -> None:
    from optimizer.analysis.hedge import hedged_plan

    h = hedged_plan(scenarios={"low": _two()[0], "high": _two()[1]}, weights=[1, 1])
    assert h.expected_cost_usd == pytest.approx(0.5 * 900 * 400, rel=1e-9)


def test_exact_rows_are_one_binary_per_scenario_and_a_probability_row() -> None:
    from optimizer.plan.chance import with_chance

    m = build_stochastic_model(_two(), [0.5, 0.5])
    e = with_chance(m, ChanceSpec("demand", "acme", 0.5, "exact"))
    new = e.variables.iloc[m.n_variables :]
    assert list(new["kind"].astype(str)) == ["chance_miss", "chance_miss"]
    assert new["integer"].all()
    fam = e.constraints["family"].astype(str).iloc[m.n_constraints :].tolist()
    assert fam == ["chance_link", "chance_link", "chance_probability"]
    assert e.constraints["rhs"].iloc[-1] == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("demand:acme:0", "probability 0.0 is not in"),
        ("demand:acme:1.5", "probability 1.5 is not in"),
        ("demand:acme:x", "probability 'x' is not a number"),
        ("supply:acme:0.9", "'supply' is not a floor family"),
        ("demand:acme", "is not FAMILY:CUSTOMER:PROBABILITY"),
    ],
)
def test_bad_chance_text_names_the_option_and_value(text: str, words: str) -> None:
    with pytest.raises(ValueError, match="--chance: .*" + words.replace("(", r"\(")):
        parse_chance(text)


def test_unknown_customer_is_named() -> None:
    with pytest.raises(ValueError, match="customer 'nobody' is not in the data"):
        chance_plan(_two(), ChanceSpec("demand", "nobody", 0.9))
    with pytest.raises(ValueError, match="--chance-method: 'mip'"):
        ChanceSpec("demand", "acme", 0.9, "mip")
