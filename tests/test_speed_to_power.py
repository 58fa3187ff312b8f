"""Speed to power: equipment order books, bridge power and flexible interconnection.

Hand-sized datasets from :func:`tests.test_power._dataset`: one site, three quarters of
1,000 hours (discount factor 1), 1 kW chips (idle and training power factor 1, PUE 1,
free chips), 50,000 H100e wanted per quarter at USD 5,000 per unserved H100e, grid
30 MW at USD 100/MWh. One MW of facility power serves 1,000 H100e and draws 1,000 MWh
per quarter; every chip produced costs the USD 1e-3 production tie-break.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from capacity.dataset import load_dataset
from capacity.validation import DataValidationError
from optimizer import SolveOptions, solve
from tests.conftest import DEFAULT_DATA
from tests.test_power import _dataset, _write

GEN = {
    "site": "s1",
    "technology": "gen",
    "capex_usd_per_mw": 8e6,
    "variable_cost_usd_per_mwh": 120,
    "carbon_t_per_mwh": 0.4,
    "lead_periods": 1,
    "availability": 1.0,
    "max_mw": 100,
    "lifetime_periods": 8,
}


def _sub(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    return folder


def _solve(path: Path):  # noqa: ANN202
    res = solve(load_dataset(path), SolveOptions(solver="highs"))
    assert res.status.value == "optimal", res.message
    assert len(res.violations) == 0, res.violations
    return res


def _order_book(folder: Path, q2_mw: float) -> Path:
    _write(
        folder,
        "equipment_order_books",
        [
            {"resource": "turbine_slots", "period": p, "capacity": c, "unit": "MW"}
            for p, c in (("2026Q1", 0.0), ("2026Q2", q2_mw), ("2026Q3", 0.0))
        ],
    )
    _write(
        folder,
        "power_bill_of_materials",
        [{"technology": "gen", "resource": "turbine_slots", "per_mw": 1.0}],
    )
    return folder


def test_an_order_book_binds_at_exactly_its_slots_with_the_finite_difference_dual(
    tmp_path: Path,
) -> None:
    # without the order book the plan builds 20 MW in 2026Q1, online 2026Q2; 12 MW of
    # turbine slots in 2026Q2 (none in 2026Q3) cap it at 12 MW
    res = _solve(_order_book(_dataset(_sub(tmp_path, "a")), 12.0))
    eo = res.tables["equipment_orders"]
    row = eo[(eo["resource"] == "turbine_slots") & (eo["period"] == "2026Q2")].iloc[0]
    assert row["used"] == pytest.approx(12.0, abs=1e-6)
    assert row["utilisation"] == pytest.approx(1.0, abs=1e-9)
    # one more slot: 1 MW more on site in 2026Q2 and 2026Q3, each quarter 1,000 H100e served
    # (USD 5M) for the rent (USD 1M) and 1,000 MWh at USD 120 instead of nothing, and 1,000
    # more chips at the USD 1e-3 tie-break
    hand = -2 * (5e6 - 1e6 - 0.12e6) + 1000 * 1e-3
    more = _solve(_order_book(_dataset(_sub(tmp_path, "b")), 13.0))
    fd = more.objective_usd - res.objective_usd
    assert fd == pytest.approx(hand, rel=1e-9)
    assert row["shadow_price_usd_per_unit"] == pytest.approx(fd, rel=1e-6)
    sp = res.tables["shadow_prices"]
    fam = sp[sp["family"] == "equipment_order_book"]
    assert float(fam.loc[fam["period"] == "2026Q2", "shadow_price"].iloc[0]) == pytest.approx(fd)


def test_a_bridge_fuel_cell_bridges_a_grid_delay_and_is_retired_when_the_grid_arrives(
    tmp_path: Path,
) -> None:
    # grid 30 MW until 2026Q3, then 50 MW: 20 MW of fuel cells bought in 2026Q1 (online
    # 2026Q2) bridge 2026Q2; keeping them in 2026Q3 costs USD 87,600/MW-year x 1,000 h /
    # 8,760 h = USD 10,000/MW, so they are retired in 2026Q3 (their salvage is the same
    # then or at the end, discount factor 1)
    d = _dataset(tmp_path, grid_mw=(30.0, 30.0, 50.0), onsite_cost_per_mwh=None)
    bridge = dict(
        GEN,
        technology="fuel_cell",
        fixed_cost_usd_per_mw_year=87600,
        bridge="yes",
        salvage_usd_per_mw=6e6,
    )
    _write(d, "onsite_generation", [bridge])
    res = _solve(d)
    bp = res.tables["bridge_power"].set_index("period")
    assert bp.loc["2026Q2", "standing_mw"] == pytest.approx(20.0, abs=1e-6)
    assert bp.loc["2026Q3", "retired_mw"] == pytest.approx(20.0, abs=1e-6)
    assert bp.loc["2026Q3", "standing_mw"] == pytest.approx(0.0, abs=1e-6)
    # 2026Q1 unmet 20,000 H100e (USD 100M) + grid 3M; 2026Q2 grid 3M + 20,000 MWh x 120
    # + fixed 0.2M; 2026Q3 grid 5M; capex 20 x 8M less salvage 20 x 6M; chips 50,000 x 1e-3
    hand = 100e6 + 3e6 + 3e6 + 2.4e6 + 0.2e6 + 5e6 + 20 * (8e6 - 6e6) + 50
    assert res.objective_usd == pytest.approx(hand, rel=1e-9)
    # without the fixed cost keeping and retiring cost the same: no salvage gain from
    # retiring early, so the objective is the hand value less the fixed cost
    d2 = _dataset(_sub(tmp_path, "b"), grid_mw=(30.0, 30.0, 50.0), onsite_cost_per_mwh=None)
    _write(d2, "onsite_generation", [dict(bridge, fixed_cost_usd_per_mw_year=0)])
    assert _solve(d2).objective_usd == pytest.approx(hand - 0.2e6, rel=1e-9)


def _flexible(folder: Path, checkpoint: float, *, sla: float = 1.0) -> Path:
    _write(
        folder,
        "grid_upgrades",
        [
            {
                "site": "s1",
                "option": "line",
                "cost_usd_per_mw": 80000,
                "lead_periods": 2,
                "max_mw_per_period": 20,
                "max_mw_total": 20,
                "lifetime_periods": 8,
            }
        ],
    )
    _write(
        folder,
        "flexible_interconnection",
        [
            {
                "site": "s1",
                "option": "line",
                "flexible_lead_periods": 1,
                "curtailment_share": 0.01,
                "checkpoint_cost_usd_per_mwh": checkpoint,
                "inference_sla_share": sla,
            }
        ],
    )
    return folder


#: Value of one flexible MW in its curtailable quarter 2026Q2: it delivers 990 MWh, so
#: 990 more chips serve 990 H100e (USD 4.95M unmet avoided) for USD 10,000 rent, 990 MWh x
#: USD 100 and 990 chips x 1e-3; it curtails 10 MWh. The plan takes the offer exactly when
#: 10 x checkpoint cost < this margin: checkpoint cost below USD 484,099.90 per MWh.
THRESHOLD = (4.95e6 - 10_000 - 99_000 - 990 * 1e-3) / 10


@pytest.mark.parametrize("checkpoint", [THRESHOLD * 0.99, THRESHOLD * 1.01])
def test_the_flexible_offer_is_taken_exactly_when_the_earlier_quarter_pays_for_the_curtailment(
    tmp_path: Path, checkpoint: float
) -> None:
    d = _dataset(tmp_path, onsite_cost_per_mwh=None)
    res = _solve(_flexible(d, checkpoint))
    fi = res.tables["flexible_interconnection"]
    taken = float(fi["mw"].sum()) if len(fi) else 0.0
    if checkpoint < THRESHOLD:
        row = fi.iloc[0]
        assert taken == pytest.approx(20.0, abs=1e-6)
        assert (row["decision_period"], row["online_period"]) == ("2026Q1", "2026Q2")
        assert row["quarters_gained"] == 1.0
        assert row["curtailed_mwh"] == pytest.approx(20 * 0.01 * 1000)
        assert row["curtailment_cost_usd"] == pytest.approx(200 * checkpoint)
        dm = res.tables["demand"]
        q2 = dm[dm["period"] == "2026Q2"]
        assert float(q2["served_h100e"].sum()) == pytest.approx(30_000 + 20 * 990, rel=1e-9)
    else:
        assert taken == pytest.approx(0.0, abs=1e-6)
        up = res.tables["power_decisions"]
        assert float(up.loc[up["kind"] == "grid_upgrade", "mw"].sum()) == pytest.approx(20.0)
    # either way the 20 MW are paid in full when requested: 20 x USD 80,000 in 2026Q1
    # (the cash view left the flexible MW out)
    costs = res.tables["costs"].set_index(["period", "term"])["cash_usd"]
    assert costs[("2026Q1", "grid_upgrade")] == pytest.approx(20 * 80_000, rel=1e-9)
    assert costs.xs("grid_upgrade", level="term").sum() == pytest.approx(20 * 80_000, rel=1e-9)
    # and power_sources reconciles with costs: the grid rows hold the energy and the
    # rent of every upgrade MW, flexible ones included (20 x 80,000 / 8 a quarter)
    ps, c = res.tables["power_sources"], res.tables["costs"]
    grid = ps[ps["source"] == "grid"]
    billed = c[c["term"].isin(["energy", "grid_upgrade"])]["undiscounted_cost_usd"].sum()
    assert grid["cost_usd"].sum() == pytest.approx(billed, rel=1e-9)
    rent = c[c["term"] == "grid_upgrade"].set_index("period")["undiscounted_cost_usd"]
    assert rent["2026Q3"] == pytest.approx(20 * 80_000 / 8, rel=1e-9)


@pytest.mark.parametrize("sla", [1.0, 0.5])
def test_inference_is_never_curtailed_below_its_sla_share(tmp_path: Path, sla: float) -> None:
    # all demand is inference: with an SLA share of 1 every inference chip must fit the
    # firm 30 MW in 2026Q2, so the curtailable MW are of no use and are not taken (they
    # cost rent); with a share of 0.5, 60 MW of inference fit the firm supply and the
    # site takes all 20 flexible MW (site_grid 50 MW binds)
    d = _dataset(tmp_path, onsite_cost_per_mwh=None)
    _write(
        d,
        "demand",
        [
            {"customer": "a", "workload": "inference", "period": p, "demand_h100e": 50000}
            for p in ("2026Q1", "2026Q2", "2026Q3")
        ],
    )
    res = _solve(_flexible(d, 0.0, sla=sla))
    dm = res.tables["demand"]
    served = float(dm.loc[dm["period"] == "2026Q2", "served_h100e"].sum())
    fi = res.tables["flexible_interconnection"]
    taken = float(fi["mw"].sum()) if len(fi) else 0.0
    assert served * sla <= 30_000 * (1 + 1e-9)  # firm supply in the curtailable quarter
    if sla == 1.0:
        assert taken == pytest.approx(0.0, abs=1e-6)
        assert served == pytest.approx(30_000, rel=1e-9)
    else:
        assert taken == pytest.approx(20.0, abs=1e-6)
        assert served == pytest.approx(50_000, rel=1e-9)


def test_the_checker_flags_inference_above_the_firm_supply_and_orders_above_slots(
    tmp_path: Path,
) -> None:
    from optimizer.plan.check import check_frames
    from tests.test_power import _frames

    d = _dataset(_sub(tmp_path, "a"), onsite_cost_per_mwh=None)
    _write(
        d,
        "demand",
        [
            {"customer": "a", "workload": "inference", "period": p, "demand_h100e": 50000}
            for p in ("2026Q1", "2026Q2", "2026Q3")
        ],
    )
    ds, fr = _frames(_flexible(d, 0.0, sla=0.5))
    assert len(check_frames(ds, fr)) == 0
    a = fr["assign"]
    q2 = (a["period"] == "2026Q2").to_numpy()
    a.loc[q2, "value"] *= 1.5  # 75 MW of inference x 0.5 > the firm 30 MW
    v = check_frames(ds, fr)
    sla = v[v["family"] == "flexible_inference_sla"]
    assert sla["keys"].tolist() == ["s1,2026Q2"]
    assert sla["lhs"].tolist() == pytest.approx([37.5])
    assert sla["rhs"].tolist() == pytest.approx([30.0])
    # one MW of turbines more than the 12 MW of slots in 2026Q2
    ds, fr = _frames(_order_book(_dataset(_sub(tmp_path, "b")), 12.0))
    ob = fr["onsite_build"]
    ob.loc[(ob["period"] == "2026Q1").to_numpy(), "value"] += 1.0
    v = check_frames(ds, fr)
    eo = v[v["family"] == "equipment_order_book"]
    assert eo["keys"].tolist() == ["turbine_slots,2026Q2"]
    assert eo["lhs"].tolist() == pytest.approx([13.0])
    assert eo["rhs"].tolist() == pytest.approx([12.0])


def _copy(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    shutil.copytree(DEFAULT_DATA, d)
    return d


def _finding(d: Path, file: str) -> list[tuple[str, int | None, str | None, str | None]]:
    with pytest.raises(DataValidationError) as exc:
        load_dataset(d)
    return [
        (f.file, f.row, f.column, f.value)
        for f in exc.value.findings
        if f.severity == "error" and f.file == file
    ]


def _edit(d: Path, name: str, row: int, column: str, value: object) -> None:
    df = pd.read_csv(d / f"{name}.csv", dtype=str, keep_default_na=False)
    df.loc[row, column] = str(value)
    df.to_csv(d / f"{name}.csv", index=False)


@pytest.mark.parametrize(
    ("name", "column", "value"),
    [
        ("flexible_interconnection", "curtailment_share", "1.0"),
        ("flexible_interconnection", "curtailment_share", "-0.1"),
        ("flexible_interconnection", "flexible_lead_periods", "40"),
        ("power_bill_of_materials", "technology", "fusion_reactor"),
        ("onsite_generation", "storage_hours", "-4"),
    ],
)
def test_bad_speed_to_power_input_names_file_row_column_and_value(
    tmp_path: Path, name: str, column: str, value: str
) -> None:
    d = _copy(tmp_path)
    _edit(d, name, 1, column, value)
    found = _finding(d, f"{name}.csv")
    assert (f"{name}.csv", 3, column, value) in found, found


@pytest.mark.parametrize("bridge", [False, True])
def test_a_campus_short_of_power_is_told_whether_it_has_a_bridge_option(
    tmp_path: Path, bridge: bool
) -> None:
    # 40,000 chips (40 MW) installed before the horizon against a 30 MW grid: site_grid
    # cannot hold in 2026Q1 whatever the plan does (a bridge needs one quarter)
    d = _dataset(tmp_path, onsite_cost_per_mwh=None)
    _write(
        d,
        "initial_fleet",
        [{"chip": "g1", "site": "s1", "chips": 40000, "install_period": "2025Q4"}],
    )
    if bridge:
        _write(d, "onsite_generation", [dict(GEN, technology="fuel_cell", bridge="yes")])
    res = solve(load_dataset(d), SolveOptions(solver="highs"))
    assert res.status.value == "infeasible"
    inf = res.infeasibility
    grid = inf[(inf["family"] == "site_grid") & (inf["period"] == "2026Q1")]
    assert grid["amount"].tolist() == pytest.approx([10.0])
    note = (
        "; bridge options here: fuel_cell"
        if bridge
        else "; no bridge power option at this campus (no bridge row in onsite_generation)"
    )
    assert grid["message"].iloc[0].endswith(note)


def test_the_campus_table_and_summary_tell_how_a_grid_delay_is_met(tmp_path: Path) -> None:
    from optimizer.output.summary import summarize

    d = _dataset(tmp_path, onsite_cost_per_mwh=None)
    res = _solve(_flexible(d, THRESHOLD * 0.5))
    st = res.tables["speed_to_power"].set_index("site")
    assert st.loc["s1", "flexible_mw"] == pytest.approx(20.0)
    assert st.loc["s1", "quarters_gained"] == 1.0
    assert st.loc["s1", "curtailed_mwh"] == pytest.approx(200.0)
    assert st.loc["s1", "bridge_options"] == ""
    notes = summarize(res).power_notes
    assert len(notes) == 1 and notes[0].startswith("s1: grid interconnect binds in ")
    assert "no bridge power option at this campus" in notes[0]
    assert notes[0].endswith(
        "flexible interconnection: 20 MW up to 1 quarters earlier, 200 MWh curtailed"
    )


def test_a_scenario_override_tightens_an_order_book_and_the_plan_follows(tmp_path: Path) -> None:
    from capacity.scenarios import apply_overrides

    # halving the 2026Q2 turbine slots (12 -> 6 MW) halves the turbines the plan can place
    ds = load_dataset(_order_book(_dataset(tmp_path), 12.0))
    tight = apply_overrides(
        ds,
        [
            {
                "op": "scale",
                "table": "equipment_order_books",
                "column": "capacity",
                "where": {"resource": "turbine_slots"},
                "factor": 0.5,
                "source": "assumption: a vendor pushes half its slots out",
            }
        ],
    )
    res = solve(tight, SolveOptions(solver="highs"))
    eo = res.tables["equipment_orders"]
    row = eo[eo["period"] == "2026Q2"].iloc[0]
    assert (row["capacity"], row["used"]) == pytest.approx((6.0, 6.0))


def test_the_campus_note_counts_one_quarter_in_the_singular() -> None:
    """'grid interconnect binds in 1 quarters' read so in the speed-to-power table."""
    from types import SimpleNamespace

    from optimizer.components.power_speed import campus_note

    row = SimpleNamespace(
        grid_bound_quarters=1.0,
        first_grid_bound_period="2026Q3",
        bridge_mw=0.0,
        bridge_options="battery",
        flexible_mw=0.0,
        quarters_gained=0.0,
        curtailed_mwh=0.0,
    )
    assert campus_note(row).startswith("grid interconnect binds in 1 quarter from 2026Q3")
    assert "2 quarters from" in campus_note(
        SimpleNamespace(**{**vars(row), "grid_bound_quarters": 2.0})
    )
