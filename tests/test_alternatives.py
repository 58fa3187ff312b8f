"""Near-optimal alternatives: ranges at hand values, the cost cap, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from capacity.dataset import Dataset, load_dataset
from optimizer.analysis.alternatives import (
    RANGE_COLUMNS,
    AlternativesError,
    cap_rhs,
    near_optimal_ranges,
    parse_slacks,
    range_notes,
)
from optimizer.plan.options import SolveOptions
from tests.lp_helpers import LP_DATA, edit

#: lp_base's optimum by hand: 500 chips in each of two quarters at 1,000 USD capex,
#: 150 USD idle energy and 150 USD more while serving, plus 0.001 USD per chip produced.
C_STAR = 2 * 500 * (1000 + 150 + 150) + 500 * 0.001


def _base() -> Dataset:
    return load_dataset(LP_DATA / "lp_base")


def _two_sites() -> Dataset:
    """lp_base with no initial IT and a second site identical to the first."""
    ds = edit(_base(), "sites", initial_it_mw=0.0)
    s2 = {
        t: pd.concat([ds.table(t), ds.table(t).assign(site="s2")], ignore_index=True)
        for t in ("site_grid", "site_water")
    }
    sites = ds.table("sites")
    s2["sites"] = pd.concat(
        [sites, sites.assign(site="s2", display_name="Site Two")], ignore_index=True
    )
    return ds.replace(**s2)


def _row(ranges: pd.DataFrame, quantity: str, slack: float) -> pd.Series:
    sel = ranges[(ranges["quantity"] == quantity) & (ranges["slack"] == slack)]
    assert len(sel) == 1
    return sel.iloc[0]


def test_two_equal_sites_each_range_is_zero_to_all_at_slack_zero() -> None:
    res = near_optimal_ranges(_two_sites(), [0.0, 0.05])
    # 500 chips of 1 kW need 0.5 MW, built in the first quarter at either site
    for site in ("s1", "s2"):
        r = _row(res.ranges, f"build_mw:{site}", 0.0)
        assert r["min"] == pytest.approx(0.0, abs=1e-7)
        assert r["max"] == pytest.approx(0.5, rel=1e-7)
        wide = _row(res.ranges, f"build_mw:{site}", 0.05)
        assert wide["min"] <= r["min"] + 1e-9 and wide["max"] >= r["max"] - 1e-9
    # the plan that builds all at s1 builds it in its tables too
    alt = next(a for a in res.alternatives if a.name == "max_build_mw:s1@0")
    bo = alt.result.tables["build_out"]
    assert bo.groupby("site")["build_mw"].sum().to_dict() == pytest.approx(
        {"s1": 0.5, "s2": 0.0}, abs=1e-7
    )


def test_slack_widens_ranges_by_the_hand_computed_amount() -> None:
    res = near_optimal_ranges(_base(), [0.0, 0.05])
    assert res.optimum_usd == pytest.approx(C_STAR, rel=1e-9)
    room = 0.05 * C_STAR
    # build: one more MW in the second quarter costs 100,000 USD (annualised capex)
    assert _row(res.ranges, "build_mw:s1", 0.0)["max"] == pytest.approx(0.0, abs=1e-7)
    assert _row(res.ranges, "build_mw:s1", 0.05)["max"] == pytest.approx(room / 100_000, rel=1e-6)
    # fleet in the last quarter: an idle chip costs 1,150 USD there; one chip less in
    # both quarters saves 2 x 1,300 USD and pays 2 x 5,000 USD of unmet penalty
    fleet = _row(res.ranges, "fleet_h100e:nv", 0.05)
    assert fleet["at_optimum"] == pytest.approx(500.0)
    assert fleet["max"] == pytest.approx(500 + room / 1150, rel=1e-6)
    assert fleet["min"] == pytest.approx(500 - room / 7400, rel=1e-6)
    zero = _row(res.ranges, "fleet_h100e:nv", 0.0)
    assert (zero["min"], zero["max"]) == pytest.approx((500.0, 500.0))


def test_every_alternative_is_checked_and_within_the_cap() -> None:
    res = near_optimal_ranges(_two_sites(), [0.01, 0.05], directions=3, seed=7)
    assert len(res.alternatives) == 2 * (2 * 3 + 3)
    for alt in res.alternatives:
        assert alt.result.status.value == "optimal"  # the checker found no violation
        assert len(alt.result.violations) == 0
        assert alt.cost_usd <= cap_rhs(res.optimum_usd, alt.slack) * (1 + 1e-9)
        # the tables' cost is the plan's cost, not the quantity optimised
        assert alt.cost_usd == pytest.approx(alt.result.tables["costs"]["cost_usd"].sum())
    # the cap binds for the maximum of a build at 5 %
    alt = next(a for a in res.alternatives if a.name == "max_build_mw:s1@0.05")
    assert alt.cost_usd == pytest.approx(cap_rhs(res.optimum_usd, 0.05), rel=1e-7)
    # random directions are seeded: the same seed gives the same plans
    again = near_optimal_ranges(_two_sites(), [0.01], directions=3, seed=7)
    d1 = [a.value for a in res.alternatives if a.quantity.startswith("direction")][:3]
    d2 = [a.value for a in again.alternatives if a.quantity.startswith("direction")]
    assert len(d2) == 3 and np.allclose(d1, d2, rtol=1e-6, atol=1e-9)


def test_focus_keeps_the_named_groups_and_quantities() -> None:
    res = near_optimal_ranges(_two_sites(), [0.0], focus=["site_build"])
    assert sorted(res.ranges["quantity"]) == ["build_mw:s1", "build_mw:s2"]
    res = near_optimal_ranges(_two_sites(), [0.0], focus=["fleet_h100e:nv"])
    assert list(res.ranges["quantity"]) == ["fleet_h100e:nv"]


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        ({"slacks": [-0.01]}, "slack: -0.01 is not a slack"),
        ({"focus": ["gas"]}, "focus: gas names no quantity"),
        ({"directions": -1}, "directions: -1"),
    ],
)
def test_bad_options_name_the_option_and_value(kwargs: dict[str, object], text: str) -> None:
    with pytest.raises(ValueError, match=text):
        near_optimal_ranges(_base(), **kwargs)  # type: ignore[arg-type]


def test_parse_slacks_reads_a_list_and_refuses_text() -> None:
    assert parse_slacks("0.05, 0.01") == (0.01, 0.05)
    with pytest.raises(ValueError, match=r"--slack: 'x' is not a number"):
        parse_slacks("0.01,x")


def test_a_base_that_is_not_optimal_stops_and_says_so() -> None:
    # the default data's LP takes seconds: 0.05 s ends it without a plan
    ds = load_dataset(LP_DATA.parents[1] / "data")
    with pytest.raises(AlternativesError, match=r"base plan is not optimal \(status time_limit"):
        near_optimal_ranges(ds, [0.01], options=SolveOptions(time_limit_s=0.05))


def test_range_notes_name_a_range_a_known_plan_contradicts() -> None:
    rows = [
        ("share", "share", 0.01, 0.46, 0.49, 0.47, 1.0),
        ("share", "share", 0.05, 0.48, 0.53, 0.47, 1.0),  # min above the optimum's
        ("mw", "mw", 0.01, 0.0, 10.0, 5.0, 1.0),
        ("mw", "mw", 0.05, 0.0, 9.0, 5.0, 1.0),  # narrower than at 0.01
    ]
    notes = range_notes(pd.DataFrame(rows, columns=list(RANGE_COLUMNS)))
    assert len(notes) == 3
    assert notes[0].startswith("share at slack 0.05: range 0.48..0.53 misses the optimum's 0.47")
    assert "narrower than at a smaller slack (0.46..0.49)" in notes[1]
    assert notes[2].startswith("mw at slack 0.05") and "(0..10)" in notes[2]
    res = near_optimal_ranges(_base(), [0.0, 0.05])
    assert res.notes == ()


def test_on_dask_the_ranges_are_those_of_one_process() -> None:
    from optimizer.analysis.alternatives_dask import ranges_on_dask
    from optimizer.analysis.dask_cluster import ClusterOptions

    ds = _two_sites()
    one = near_optimal_ranges(ds, [0.0, 0.05], directions=2, seed=3)
    got = ranges_on_dask(
        ds, [0.0, 0.05], ClusterOptions(workers=2, security="none"), directions=2, seed=3
    )
    assert list(got.ranges["quantity"]) == list(one.ranges["quantity"])
    assert list(got.ranges["slack"]) == list(one.ranges["slack"])
    cols = ["min", "max", "at_optimum"]
    np.testing.assert_allclose(got.ranges[cols].to_numpy(), one.ranges[cols].to_numpy(), atol=1e-7)
    assert sorted(a.name for a in got.alternatives) == sorted(a.name for a in one.alternatives)
    assert got.optimum_usd == pytest.approx(one.optimum_usd, rel=1e-9)


def test_the_fleet_quantity_counts_the_initial_fleet_its_report_holds() -> None:
    """tiny's 1,000 initial H100 (1 H100e each) alive in the last quarter: the ranges
    said 0 at the optimum and 48.56 at most, its plans' fleet tables 1,000 and 1,048.56."""
    from tests.conftest import TINY

    res = near_optimal_ranges(load_dataset(TINY), [0.05], focus=["fleet"])
    fleet = res.optimum.tables["fleet"]
    last = fleet[(fleet["period"] == fleet["period"].max()) & (fleet["chip"] == "h100")]
    at_opt = _row(res.ranges, "fleet_h100e:nvidia", 0.05)["at_optimum"]
    assert at_opt == pytest.approx(float(last["fleet_chips"].sum())) and at_opt >= 1000.0
    top = next(
        a for a in res.alternatives if a.quantity == "fleet_h100e:nvidia" and a.sense == "max"
    )
    alt = top.result.tables["fleet"]
    alt_last = alt[(alt["period"] == alt["period"].max()) & (alt["chip"] == "h100")]
    assert top.value == pytest.approx(float(alt_last["fleet_chips"].sum()))


def test_a_slack_of_zero_ranges_the_optimal_face_of_the_default_plan() -> None:
    """--slack 0 passed the option check, then the capped solves ended 'Unknown' (a cap
    at C* exactly is met only to the solver's tolerance); the cap now has 1e-9 of room."""
    from tests.conftest import DEFAULT_DATA

    res = near_optimal_ranges(load_dataset(DEFAULT_DATA), [0.0], focus=["trainium_share_of_demand"])
    assert [a.result.status.value for a in res.alternatives] == ["optimal", "optimal"]
    r = _row(res.ranges, "trainium_share_of_demand", 0.0)
    assert r["min"] <= r["at_optimum"] <= r["max"]
    assert r["max"] - r["min"] == pytest.approx(0.0, abs=1e-3)
    assert cap_rhs(100.0, 0.0) == pytest.approx(100.0 + 1e-7)


@pytest.mark.slow
def test_a_minimum_reads_the_same_alone_and_after_other_solves() -> None:
    """At HiGHS's default dual tolerance the capped solves stopped short by about 2e-4:
    the minimum of build_mw:norway at 1 % read 137.671 MW after the other sites' solves,
    137.654 on two workers and 137.651 alone (each plan at the cap)."""
    from capacity.scenarios import apply_scenario
    from tests.conftest import DEFAULT_DATA

    ds = apply_scenario(load_dataset(DEFAULT_DATA), "neutral")
    alone = near_optimal_ranges(ds, [0.01], focus=["build_mw:norway"])
    after = near_optimal_ranges(ds, [0.01], focus=["build_mw:atlanta", "build_mw:norway"])
    lo = _row(alone.ranges, "build_mw:norway", 0.01)["min"]
    assert _row(after.ranges, "build_mw:norway", 0.01)["min"] == pytest.approx(lo, rel=1e-7)
