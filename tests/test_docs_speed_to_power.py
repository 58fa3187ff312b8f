"""The figures of ``docs/guide/speed-to-power.md`` recomputed from a real run.

Two solves of the negative scenario on the default data: as shipped, and without its
bridge rows and flexible offers (the counterfactual the page compares with). Each figure
the page quotes must appear in it and equal the fresh value; on a mismatch the failure
prints every fresh figure, so the page can be refreshed after the data change.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from capacity.dataset import load_dataset
from capacity.scenarios import apply_scenario
from optimizer import solve
from tests.conftest import DEFAULT_DATA

PAGE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "speed-to-power.md"

#: The figures as the page quotes them (text exactly as printed there).
QUOTED = {
    "wt_flexible_mw": "464",
    "wt_curtailed_mwh": "61,058",
    "wt_checkpoint_musd": "6.1",
    "wt_quarters_gained": "12",
    "wt_grid_bound": "4 quarters from 2026Q1",
    "ms_flexible_mw": "133",
    "ms_bridge_mw": "100",
    "nv_bridge_mw": "200",
    "nv_flexible_mw": "227",
    "nv_quarters_gained": "9",
    "new_carlisle_bound": "2 quarters from 2026Q2",
    "bridges_stand_to": "2030Q4",
    "norway_bound": "11 quarters from 2025Q2",
    "oregon_bound": "10 quarters from 2026Q3",
    "pennsylvania_bound": "6 quarters from 2026Q2",
    "aero_binds": "2027Q1",
    "aero_price": "39,694",
    "recip_binds": "2027Q4 to 2029Q1",
    "unmet_with_m": "2.56",
    "unmet_without_m": "4.56",
    "cost_with_busd": "181.7",
    "cost_without_busd": "192.1",
    "wt_bound_without": "11 quarters from 2025Q2",
}


def _campus(st, site: str) -> str:  # noqa: ANN001
    row = st[st["site"] == site].iloc[0]
    return f"{row['grid_bound_quarters']:.0f} quarters from {row['first_grid_bound_period']}"


def _figures() -> dict[str, str]:
    ds = apply_scenario(load_dataset(DEFAULT_DATA), "negative")
    res = solve(ds)
    assert res.status.value == "optimal" and len(res.violations) == 0
    tb = res.tables
    st, fi, bp = tb["speed_to_power"], tb["flexible_interconnection"], tb["bridge_power"]
    eo = tb["equipment_orders"]
    wt = fi[fi["site"] == "west_texas"]
    nv = fi[(fi["site"] == "northern_virginia") & (fi["mw"] > 1e-6)]
    full = eo[eo["utilisation"] > 1 - 1e-9]
    aero = full[full["resource"] == "aeroderivative_turbine_mw"]
    aero = aero[aero["shadow_price_usd_per_unit"] < 0]
    recip = full[(full["resource"] == "recip_engine_mw") & (full["shadow_price_usd_per_unit"] < 0)]
    g = ds.table("onsite_generation")
    bare = ds.replace(
        onsite_generation=g[g["bridge"].astype(str) != "yes"].reset_index(drop=True),
        flexible_interconnection=ds.table("flexible_interconnection").iloc[0:0],
        power_bill_of_materials=ds.table("power_bill_of_materials").query(
            "technology != 'mobile_gt'"
        ),
    )
    without = solve(bare)
    assert without.status.value == "optimal"

    def bridge(site: str) -> str:
        return f"{bp.loc[bp['site'] == site, 'standing_mw'].max():,.0f}"

    return {
        "wt_flexible_mw": f"{wt['mw'].sum():,.0f}",
        "wt_curtailed_mwh": f"{wt['curtailed_mwh'].sum():,.0f}",
        "wt_checkpoint_musd": f"{wt['curtailment_cost_usd'].sum() / 1e6:.1f}",
        "wt_quarters_gained": f"{wt['quarters_gained'].max():.0f}",
        "wt_grid_bound": _campus(st, "west_texas"),
        "ms_flexible_mw": f"{fi.loc[fi['site'] == 'mississippi', 'mw'].sum():,.0f}",
        "ms_bridge_mw": bridge("mississippi"),
        "nv_bridge_mw": bridge("northern_virginia"),
        "nv_flexible_mw": f"{nv['mw'].sum():,.0f}",
        "nv_quarters_gained": f"{nv['quarters_gained'].max():.0f}",
        "new_carlisle_bound": _campus(st, "new_carlisle"),
        "bridges_stand_to": ", ".join(
            sorted(set(bp[bp["standing_mw"] > 1e-6].groupby("site")["period"].max()))
        ),
        "norway_bound": _campus(st, "norway"),
        "oregon_bound": _campus(st, "oregon_umatilla"),
        "pennsylvania_bound": _campus(st, "pennsylvania"),
        "aero_binds": ", ".join(aero["period"]),
        "aero_price": f"{-aero['shadow_price_usd_per_unit'].iloc[0]:,.0f}" if len(aero) else "",
        "recip_binds": f"{recip['period'].iloc[0]} to {recip['period'].iloc[-1]}",
        "unmet_with_m": f"{tb['demand']['unmet_h100e'].sum() / 1e6:.2f}",
        "unmet_without_m": f"{without.tables['demand']['unmet_h100e'].sum() / 1e6:.2f}",
        "cost_with_busd": f"{res.cost_usd / 1e9:.1f}",
        "cost_without_busd": f"{without.cost_usd / 1e9:.1f}",
        "wt_bound_without": _campus(without.tables["speed_to_power"], "west_texas"),
    }


@pytest.mark.slow
def test_the_speed_to_power_page_quotes_a_real_run() -> None:
    text = PAGE.read_text(encoding="utf-8")
    missing = [k for k, v in QUOTED.items() if v not in text]
    assert not missing, f"figures not on the page: {missing}"
    fresh = _figures()
    assert fresh == QUOTED, f"refresh docs/guide/speed-to-power.md and QUOTED with: {fresh}"
