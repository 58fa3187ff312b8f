"""Site hosting, construction lead time and pipeline, chip delivery lag, retrofit, cash view.

Hand values on tests/data/lp_base (see tests/test_model_families.py): one site s1
(1 MW initial, build rent 1e5 USD per MW-quarter), one chip g1 (1 kW, rent 1,000 USD
a quarter, 1 H100e, air PUE 1.5 / liquid 1.2 at 100 USD/MWh, 2,000 h: 1,300 USD per
serving chip-quarter in an air hall, 1,240 in a liquid hall), 500 H100e demanded in
each of 2026Q1 and 2026Q2, unmet penalty 5,000 USD per H100e-quarter, production
tie-break 0.001 USD per chip.
"""

from __future__ import annotations

import pandas as pd
import pytest

from capacity.dataset import load_dataset
from optimizer import SolveOptions, Status, build_model, solve
from optimizer.plan.check import check_frames
from optimizer.plan.explain import explain_missing
from tests.lp_helpers import LP_DATA, edit

TIE = 1e-3


@pytest.fixture(scope="module")
def base():
    return load_dataset(LP_DATA / "lp_base")


def run(ds):
    r = solve(ds, SolveOptions())
    assert r.status == Status.optimal, r.message
    assert r.violations.empty, r.violations
    return r


def by_period(r, table, column):
    return r.tables[table].groupby("period")[column].sum()


# ------------------------------------------------------------------------ site hosting
def test_hosting_mask_leaves_demand_unplaced_and_says_why(base):
    # s1 hosts only family "other": g1 (family nv, vendor v) has nowhere to go,
    # so all 2 x 500 H100e are unmet: 1,000 * 5,000 = 5,000,000
    ds = edit(base, "sites", hosts="other")
    r = run(ds)
    assert r.objective_usd == pytest.approx(5_000_000, rel=1e-9)
    assert r.tables["fleet"].empty
    missing = explain_missing(build_model(ds))
    assert len(missing) == 2
    assert "g1 at s1 (hosts other)" in missing["message"].iloc[0]


def test_commitment_on_a_family_no_chip_can_serve_is_explained(base):
    # a 0.2 MW commitment of customer a on family nv in 2026Q1..Q2: with s1 hosting
    # only "other", no serving column exists for (a, nv) in either quarter
    com = pd.DataFrame(
        {
            "customer": ["a"],
            "family": ["nv"],
            "from_period": ["2026Q1"],
            "to_period": ["2026Q2"],
            "min_it_mw": [0.2],
            "breach_penalty_usd_per_mw": [1e6],
        }
    )
    blocked = edit(base.replace(commitments=com), "sites", hosts="other")
    missing = explain_missing(build_model(blocked))
    rows = missing[missing["family"] == "commitment"]
    assert rows["period"].tolist() == ["2026Q1", "2026Q2"]
    assert rows["amount"].tolist() == [0.2, 0.2] and set(rows["unit"]) == {"MW"}
    assert rows["key"].iloc[0] == "a/nv/2026Q1"
    assert "eligible nv chip can be at an allowed site" in rows["message"].iloc[0]
    # with the chip hosted, the commitment has serving columns: nothing to explain
    served = explain_missing(build_model(base.replace(commitments=com)))
    assert served.empty


def test_hosting_by_vendor_allows_the_chip(base):
    r = run(edit(base, "sites", hosts="v"))
    assert r.objective_usd == pytest.approx(1_300_000 + 500 * TIE, rel=1e-9)


def test_checker_flags_a_forbidden_fleet(base):
    ds = edit(base, "sites", hosts="other")

    def empty(*cols: str) -> pd.DataFrame:
        frame = pd.DataFrame({c: pd.Series([], dtype=str) for c in cols})
        return frame.assign(value=pd.Series([], dtype=float))

    frames = {
        "build": empty("site", "period"),
        "liquid": empty("site", "period"),
        "install": pd.DataFrame(
            {"chip": ["g1"], "site": ["s1"], "period": ["2026Q1"], "value": [100.0]}
        ),
        "produce": pd.DataFrame({"chip": ["g1"], "period": ["2026Q1"], "value": [100.0]}),
        "assign": empty("chip", "site", "customer", "workload", "period"),
        "unmet": empty("customer", "workload", "period"),
        "breach": empty("customer", "family", "from_period", "period").assign(j=0),
    }
    v = check_frames(ds, frames)
    hosting = v[v["family"] == "site_hosting"]
    assert hosting["keys"].tolist() == ["s1/g1,2026Q1", "s1/g1,2026Q2"]
    assert hosting["lhs"].tolist() == pytest.approx([100, 100])


# ------------------------------------------------------------ lead time and pipeline
def test_lead_time_delays_the_build_by_one_quarter(base):
    # 0.3 MW online, lead 1: Q1 serves 300 (200 unmet); 0.2 MW decided in Q1 is online
    # in Q2. 300 * 2 * 1,300 + 200 * 1,300 + 0.2 MW * 1e5 * 2 quarters + 200 * 5,000
    # = 780,000 + 260,000 + 40,000 + 1,000,000 = 2,080,000
    ds = edit(base, "sites", initial_it_mw=0.3, lead_time_periods=1)
    r = run(ds)
    assert r.objective_usd == pytest.approx(2_080_000 + 500 * TIE, rel=1e-9)
    bo = r.tables["build_out"].set_index("period")
    assert bo["build_mw"].tolist() == pytest.approx([0.2, 0.0])
    assert bo["online_mw"].tolist() == pytest.approx([0.0, 0.2])
    assert bo["it_capacity_mw"].tolist() == pytest.approx([0.3, 0.5])
    assert bo["decided_capacity_mw"].tolist() == pytest.approx([0.5, 0.5])
    assert r.tables["demand"]["unmet_h100e"].tolist() == pytest.approx([200, 0])


def test_pipeline_comes_online_in_its_quarter_at_no_capex(base):
    # no build, 0.3 MW + 0.2 MW pipeline online in Q2: as above without the build rent
    ds = edit(base, "sites", initial_it_mw=0.3, max_build_mw_per_period=0.0)
    pipe = pd.DataFrame(
        {"site": ["s1"], "online_period": ["2026Q2"], "it_mw": [0.2], "liquid_mw": [0.0]}
    )
    r = run(ds.replace(site_pipeline=pipe))
    assert r.objective_usd == pytest.approx(2_040_000 + 500 * TIE, rel=1e-9)
    bo = r.tables["build_out"].set_index("period")
    assert bo["pipeline_mw"].tolist() == pytest.approx([0.0, 0.2])
    assert bo["it_capacity_mw"].tolist() == pytest.approx([0.3, 0.5])


def test_pipeline_counts_towards_the_campus_maximum(base):
    # max 1.2 MW, 1 MW initial, 0.2 MW pipeline (online after the horizon): no room
    ds = edit(base, "sites", max_it_mw=1.2, initial_it_mw=1.0)
    pipe = pd.DataFrame(
        {"site": ["s1"], "online_period": ["2027Q1"], "it_mw": [0.2], "liquid_mw": [0.0]}
    )
    m = build_model(ds.replace(site_pipeline=pipe))
    assert (m.variables["kind"] == "build").sum() == 0


# ----------------------------------------------------------------- chip delivery lag
def test_delivery_lag_moves_installs_one_quarter(base):
    # lag 1: production runs one quarter ahead of the 2026Q1-Q2 window, so only the
    # 2026Q1 output (installable in Q2) is in the horizon: Q1 fully unmet.
    # 500 * 5,000 + 500 * 1,300 = 3,150,000
    r = run(edit(base, "chips", delivery_lag_periods=1))
    assert r.objective_usd == pytest.approx(3_150_000 + 500 * TIE, rel=1e-9)
    assert by_period(r, "production", "produced_chips").tolist() == pytest.approx([500, 0])
    fleet = r.tables["fleet"].set_index("period")
    assert fleet.loc["2026Q2", "installed_chips"] == pytest.approx(500)
    assert "2026Q1" not in fleet.index


def test_opening_inventory_is_installable_at_once(base):
    # plus 100 chips in transit: Q1 serves 100 (400 unmet), Q2 500:
    # 100 * 2 * 1,300 + 400 * 1,300 + 400 * 5,000 = 2,780,000 (400 produced)
    ds = edit(base, "chips", delivery_lag_periods=1, opening_inventory_chips=100.0)
    r = run(ds)
    assert r.objective_usd == pytest.approx(2_780_000 + 400 * TIE, rel=1e-9)
    sp = r.tables["shadow_prices"]
    inv = sp[(sp["family"] == "chip_inventory") & (sp["period"] == "2026Q1")]
    assert bool(inv["binding"].iloc[0])


# -------------------------------------------------------------------------- retrofit
def _liquid_only(base, **sites):
    ds = edit(base, "sites", max_build_mw_per_period=0.0, retrofit_capex_usd_per_mw=6e6, **sites)
    return edit(ds, "chips", cooling="liquid")


def test_retrofit_rate_binds(base):
    # liquid-only chip, no liquid hall, 0.2 MW/quarter converted at 1e5 USD rent per
    # MW-quarter: Q1 200 chips, Q2 400. 0.2*1e5*2 + 0.2*1e5 + 200*2*1,240 + 200*1,240
    # + 300*5,000 + 100*5,000 = 40,000 + 20,000 + 496,000 + 248,000 + 2,000,000
    ds = _liquid_only(base, retrofit_mw_per_period=0.2)
    r = run(ds)
    assert r.objective_usd == pytest.approx(2_804_000 + 400 * TIE, rel=1e-9)
    bo = r.tables["build_out"].set_index("period")
    assert bo["retrofit_mw"].tolist() == pytest.approx([0.2, 0.2])
    assert bo["liquid_capacity_mw"].tolist() == pytest.approx([0.2, 0.4])
    cash = r.tables["costs"].set_index(["period", "term"])["cash_usd"]
    assert cash[("2026Q1", "retrofit_capex")] == pytest.approx(0.2 * 6e6)
    assert cash[("2026Q1", "unmet_penalty")] == 0.0


def test_retrofit_rate_dual_equals_finite_difference(base):
    h = 0.01
    r0 = run(_liquid_only(base, retrofit_mw_per_period=0.2))
    r1 = run(_liquid_only(base, retrofit_mw_per_period=0.2 + h))
    sp = r0.tables["shadow_prices"]
    dual = sp[sp["family"] == "site_retrofit_rate"]["shadow_price"].sum()
    fd = (r1.objective_usd - r0.objective_usd) / h
    assert dual == pytest.approx(fd, rel=1e-6)
    assert dual < 0  # more conversion per quarter lowers the cost


def test_retrofit_pool_binds_at_the_air_mw(base):
    # only 0.3 MW of air halls exist: 0.2 in Q1, 0.1 in Q2
    r = run(_liquid_only(base, retrofit_mw_per_period=0.2, initial_it_mw=0.3))
    bo = r.tables["build_out"].set_index("period")
    assert bo["retrofit_mw"].tolist() == pytest.approx([0.2, 0.1])


def test_retrofit_downtime_takes_it_capacity(base):
    # air chip, 1 MW, a retrofit at half downtime would cut Q1 IT capacity: no reason
    # to convert when the chip is air-cooled, so none is done and nothing is lost
    ds = edit(
        base,
        "sites",
        retrofit_mw_per_period=0.2,
        retrofit_capex_usd_per_mw=6e6,
        retrofit_downtime_share=0.5,
    )
    r = run(ds)
    assert r.objective_usd == pytest.approx(1_300_000 + 500 * TIE, rel=1e-9)
    assert r.tables["build_out"]["retrofit_mw"].sum() == pytest.approx(0.0)


def test_retrofit_downtime_is_used_it_power_in_site_utilisation(base):
    """Only 0.3 MW of air halls; a liquid chip; half of a converted MW is out for its
    quarter. Q1 converts 0.2: fleet 0.2 + downtime 0.1 = 0.3. Q2: the liquid fleet
    0.2 + r plus downtime 0.5 r fills 0.3, so r = 0.1 / 1.5. Both power rows bind at
    0.3, and site_utilisation said 0.2 and 0.267 used (the downtime left out)."""
    ds = _liquid_only(
        base, retrofit_mw_per_period=0.2, initial_it_mw=0.3, retrofit_downtime_share=0.5
    )
    r = run(ds)
    retro = r.tables["build_out"].set_index("period")["retrofit_mw"]
    assert retro.tolist() == pytest.approx([0.2, 0.1 / 1.5], rel=1e-6)
    su = r.tables["site_utilisation"]
    power = su[su["limit"] == "power"].set_index("period")
    assert power["used"].tolist() == pytest.approx([0.2 + 0.1, 0.2 + 0.1 / 1.5 + 0.05 / 1.5])
    assert power["used"].tolist() == pytest.approx(power["capacity"].tolist())
    assert power["utilisation"].tolist() == pytest.approx([1.0, 1.0])


# ------------------------------------------------------------------------- cash view
def test_cash_view_books_chips_when_installed_and_buildings_when_decided(base):
    ds = edit(base, "sites", initial_it_mw=0.3, lead_time_periods=1)
    r = run(ds)
    cash = r.tables["costs"].set_index(["period", "term"])
    # 300 chips in Q1, 200 in Q2 at 4,000 USD; 0.2 MW at 6e6 USD decided in Q1
    assert cash.loc[("2026Q1", "chip_capex"), "cash_usd"] == pytest.approx(1_200_000)
    assert cash.loc[("2026Q2", "chip_capex"), "cash_usd"] == pytest.approx(800_000)
    assert cash.loc[("2026Q1", "build_capex"), "cash_usd"] == pytest.approx(1_200_000)
    assert cash.loc[("2026Q1", "energy"), "cash_kind"] == "opex"
    energy = cash.xs("energy", level="term")
    assert (energy["cash_usd"] == energy["undiscounted_cost_usd"]).all()
