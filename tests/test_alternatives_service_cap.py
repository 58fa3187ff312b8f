"""The near-optimal alternatives' service cap: no plan serves demand that does not exist.

A break test found ``capacity alternatives tests/data/tiny_valid --slack 10 --focus
trainium_share_of_demand`` reaching a Trainium share of 585 % of the demand: the demand
balance rows are ``>=``, and a quantity maximised inside the cost cap counted service
above demand (chips busy for nobody). Each demand row is now held at most at the larger
of its demand and its activity at the optimum (``with_service_cap``), and each
alternative's demand table is checked against that cap (``service_over_cap``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import optimizer.analysis.alternatives as alternatives
from capacity.dataset import load_dataset
from optimizer.analysis.alternatives import near_optimal_ranges, service_over_cap
from optimizer.plan.model import build_model
from tests.conftest import TINY

FOCUS = ["trainium_share_of_demand"]


def test_the_trainium_share_binds_at_all_of_the_demand_not_beyond() -> None:
    """Tiny data, 1,000 % slack: at most 100 % of demand (585 % without the cap)."""
    res = near_optimal_ranges(load_dataset(TINY), (10.0,), focus=FOCUS)
    (row,) = res.ranges.itertuples()
    assert row.max == pytest.approx(1.0, abs=1e-9)  # every H100e of demand by Trainium
    assert row.min == pytest.approx(0.0, abs=1e-9)
    for alt in res.alternatives:
        d = alt.result.tables["demand"]
        assert (d["served_h100e"] <= d["demand_h100e"] * (1 + 1e-9) + 1e-9).all(), alt.name


def test_without_the_cap_the_share_passes_all_of_the_demand(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cap is what binds: without it the same run reaches 5.85 (the reported 585 %)."""
    monkeypatch.setattr(alternatives, "with_service_cap", lambda model, x: model)
    monkeypatch.setattr(alternatives, "_refuse_over_service", lambda alt, optimum: None)
    res = near_optimal_ranges(load_dataset(TINY), (10.0,), focus=FOCUS)
    assert float(res.ranges["max"].iloc[0]) == pytest.approx(5.847709, rel=1e-5)


def test_the_cap_is_the_demand_or_the_optimum_s_own_service_where_higher() -> None:
    """Row bounds: demand <= activity <= max(demand, a*); other rows keep theirs."""
    model = build_model(load_dataset(TINY))
    lo0, hi0 = model.row_bounds()
    demand_rows = np.flatnonzero(model.constraints["family"].to_numpy() == "demand_balance")
    x = np.zeros(model.n_variables)
    act = model.matrix[demand_rows] @ x  # 0: below demand, so the cap is the demand
    capped = alternatives.with_service_cap(model, x)
    lo, hi = capped.row_bounds()
    assert np.array_equal(lo, lo0)
    rhs = model.constraints["rhs"].to_numpy(float)[demand_rows]
    assert np.array_equal(hi[demand_rows], np.maximum(rhs, act))
    assert np.array_equal(hi[demand_rows], rhs)  # 1500 and 800 H100e
    others = np.setdiff1d(np.arange(model.n_constraints), demand_rows)
    assert np.array_equal(hi[others], hi0[others])
    # an optimum serving 10 % above a row's demand keeps that row's own level as its cap
    unmet = np.flatnonzero(model.variables["kind"].to_numpy() == "unmet")
    x[unmet] = 1.1 * rhs  # one unmet column per demand row, coefficient 1
    hi = alternatives.with_service_cap(model, x).row_bounds()[1]
    assert np.allclose(hi[demand_rows], 1.1 * rhs)


def test_service_over_cap_names_a_row_above_demand_and_the_optimum() -> None:
    keys = {"customer": ["a", "a"], "workload": ["training", "inference"]}
    keys |= {"period": ["2026Q1", "2026Q1"], "regions": ["", ""]}
    optimum = pd.DataFrame({**keys, "demand_h100e": [100.0, 100.0], "served_h100e": [90.0, 105.0]})
    alt = optimum.assign(served_h100e=[110.0, 105.0])
    over = service_over_cap(alt, optimum)
    assert over[["workload", "served_h100e", "cap_h100e"]].values.tolist() == [
        ["training", 110.0, 100.0]
    ]
    assert service_over_cap(optimum, optimum).empty


def test_a_slack_whose_cap_overflows_is_refused() -> None:
    """--slack 1e308 made the cap (1 + slack) C* infinite: a cap of nothing."""
    from optimizer.analysis.alternatives import parse_slacks

    assert parse_slacks("0,1e6") == (0.0, 1e6)
    with pytest.raises(ValueError, match=r"^--slack: 1e\+308 is not a slack"):
        parse_slacks("1e308")


def test_ranges_write_zero_as_zero() -> None:
    """-0.0 and solver noise below zero read 0 (the table printed '-0')."""
    ranges = pd.DataFrame(
        {
            "quantity": ["fleet_h100e:nvidia", "build_mw:x"],
            "unit": ["H100e", "MW"],
            "slack": [0.01, 0.01],
            "min": [-0.0, -1e-12],
            "max": [7.9e6, 1090.0],
            "at_optimum": [-3e-3, 0.0],
            "cost_cap_usd": [1.0, 1.0],
        }
    )
    out = alternatives._tidy_ranges(ranges)
    assert out["min"].tolist() == [0.0, 0.0] and not np.signbit(out["min"]).any()
    assert out["at_optimum"].tolist() == [0.0, 0.0]  # -3e-3 H100e of a 7.9e6 fleet
    assert out["max"].tolist() == [7.9e6, 1090.0]
