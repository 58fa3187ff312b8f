"""Regression: the default dataset's plans, as docs/guide/default-plan.md reports them.

Pins each scenario's discounted objective to solver tolerance (GenX-style) and checks
every figure the page quotes against fresh solves, so neither the data, the model nor
the page drifts silently. A failure prints the fresh figures (the page's lines as they
should read), so a deliberate change to the data is refreshed mechanically: paste the
printed lines into the page and the printed objectives into ``PINNED_OBJECTIVE_USD``.
"""

from __future__ import annotations

import pandas as pd
import pytest

from capacity import apply_scenario, load_dataset
from capacity.scenarios import apply_overrides
from optimizer import Status, solve
from tests.conftest import DEFAULT_DATA, DEFAULT_PLAN_PAGE

PINNED_OBJECTIVE_USD = {
    "neutral": 144_610_374_160.16,
    "optimistic": 154_542_155_568.58,
    "negative": 181_677_942_194.08,
}
SCENARIOS = tuple(PINNED_OBJECTIVE_USD)
CARBON_PRICE = "210"  # USD/t: EPA's 2025 social cost of carbon, the page's what-if


@pytest.fixture(scope="module")
def plans(default_plan):
    ds = load_dataset(DEFAULT_DATA)
    out = {name: default_plan(name) for name in SCENARIOS}
    priced = apply_overrides(
        apply_scenario(ds, "neutral"),
        [
            {
                "op": "set",
                "table": "carbon_policy",
                "column": "carbon_price_usd_per_t",
                "value": CARBON_PRICE,
            }
        ],
    )
    out["carbon"] = (priced, solve(priced))
    return out


@pytest.fixture(scope="module")
def page() -> str:
    return DEFAULT_PLAN_PAGE.read_text(encoding="utf-8")


def _b(usd: float) -> str:
    return f"${usd / 1e9:.1f}B"


def _terms(res, column: str, terms: tuple[str, ...]) -> str:
    c = res.tables["costs"].groupby("term")[column].sum()
    return " / ".join(_b(float(c.get(t, 0.0))) for t in terms)


def _twh(res, prefix: str) -> float:
    ps = res.tables["power_sources"]
    return float(ps.loc[ps["source"].str.startswith(prefix), "energy_mwh"].sum()) / 1e6


def _scored(res) -> pd.DataFrame:
    cal = res.tables["calibration"]
    return cal[cal["matchable"]]


def table_lines(plans) -> list[str]:
    """The rows of the page's scenario table, from the solves."""
    res = [plans[n][1] for n in SCENARIOS]

    def row(label: str, cells: list[str]) -> str:
        return f"| {label} | " + " | ".join(cells) + " |"

    disc = ("chip_capex", "build_capex", "retrofit_capex", "energy", "onsite_power")
    pen = ("unmet_penalty", "breach_penalty")
    cash = ("chip_capex", "build_capex", "retrofit_capex", "energy", "onsite_power")
    lines = [
        row("status", [r.status.value for r in res]),
        row("discounted cost", [_b(r.objective_usd) for r in res]),
        row(
            "chip capex / build capex / retrofit capex / energy / on-site power / unmet "
            "penalty / breach penalty (discounted)",
            [_terms(r, "cost_usd", disc + pen) for r in res],
        ),
        row(
            "cash, undiscounted: chips when installed / buildings when decided / retrofits "
            "/ energy / on-site power",
            [_terms(r, "cash_usd", cash) for r in res],
        ),
    ]
    served, energy, mix, cal = [], [], [], []
    for r in res:
        d = r.tables["demand"]
        served.append(f"{d['served_h100e'].sum() / d['demand_h100e'].sum():.1%}")
        e = r.tables["energy"]
        energy.append(
            f"{e['facility_mwh'].sum() / 1e6:.1f} TWh / {e['water_m3'].sum() / 1e6:.1f} million m3"
        )
        mix.append(
            f"{_twh(r, 'grid'):.1f} / {_twh(r, 'onsite'):.1f} / {_twh(r, 'ppa'):.1f} TWh; "
            f"{e['carbon_t'].sum() / 1e6:.1f} Mt"
        )
        s = _scored(r)
        cal.append(f"{int(s['inside_band'].sum())} of {len(s)}")
    lines += [
        row("demand served (H100e over the horizon)", served),
        row("facility energy / water over the horizon", energy),
        row("energy by source: grid / on-site / PPAs; CO2", mix),
        row("calibration rows inside their band (scored)", cal),
    ]
    return lines


def story_figures(plans) -> dict[str, str]:
    """Each figure the page's bullets quote, as the page writes it."""
    ds, res = plans["neutral"]
    t = res.tables
    chips = ds.table("chips").set_index("chip")
    dem = t["demand"].set_index(["customer", "workload", "period"])
    short = dem["unmet_h100e"] / dem["demand_h100e"]
    fl = t["fleet"]
    t2 = fl[(fl["chip"] == "trainium2") & (fl["period"] == "2025Q4")]
    nc_t2 = t2.loc[t2["site"] == "new_carlisle", "fleet_chips"].sum()
    end = fl[fl["period"] == "2030Q4"].groupby("chip")["it_mw"].sum().sort_values() / 1000
    a = t["assignment"]
    share = a.loc[a["chip"].map(chips["family"]) == "trainium", "h100e"].sum() / a["h100e"].sum()
    bo = t["build_out"]
    retro = bo.groupby("site")["retrofit_mw"].sum()
    nv_it = fl[(fl["site"] == "northern_virginia") & (fl["period"] == "2030Q4")]["it_mw"].sum()
    pdc = t["power_decisions"]
    up = pdc[pdc["kind"] == "grid_upgrade"].groupby("site")["mw"].sum()
    eng = pdc[pdc["option"] == "recip_engine"].groupby("site")["mw"].sum()
    cc = pdc[pdc["option"] == "combined_cycle"]
    mgt = pdc[(pdc["option"] == "mobile_gt") & (pdc["site"] == "northern_virginia")]["mw"].sum()
    flex = t["flexible_interconnection"].groupby("site")["mw"].sum()
    neg_ds, neg = plans["negative"]
    com = neg.tables["commitments"]
    oa = com[(com["customer"] == "openai") & (com["breach_mw"] > 1e-6)]
    na = neg.tables["assignment"]
    neg_share = (
        na.loc[na["chip"].map(chips["family"]) == "trainium", "h100e"].sum() / na["h100e"].sum()
    )
    opt = plans["optimistic"][1]
    opt_end = opt.tables["fleet"].query("period == '2030Q4'")["it_mw"].sum() / 1000
    carbon = plans["carbon"][1]
    neutral_grid, neutral_onsite = _twh(res, "grid"), _twh(res, "onsite")
    breach_usd = neg.tables["costs"].query("term == 'breach_penalty'")["cost_usd"].sum()
    bedrock_short = com[(com["customer"] == "bedrock") & (com["period"] == "2025Q4")][
        "breach_mw"
    ].sum()
    neg_flex = neg.tables["flexible_interconnection"].groupby("site")["mw"].sum()
    inf = a[(a["workload"] == "inference") & (a["site"] == "norway")]
    norway = inf.groupby("period")["h100e"].sum()
    tc = t["training_clusters"]
    ruled = tc[tc["min_cluster_mw"] > 0]
    return {
        "ec2 short 2025Q1": f"{short[('ec2_gpu', 'training', '2025Q1')]:.0%} in 2025Q1",
        "ec2 short 2025Q2": f"{short[('ec2_gpu', 'training', '2025Q2')]:.0%} in 2025Q2",
        "trainium2 2025Q4": f"Trainium2 reaches {t2['fleet_chips'].sum() / 1e6:.2f}M chips",
        "trainium2 at New Carlisle": f"{nc_t2 / 1e3:.0f}k of them",
        "retrofit": f"{bo['retrofit_mw'].sum():,.0f} MW of air halls",
        "retrofit NV": f"Northern Virginia converts {retro['northern_virginia']:,.0f} MW",
        "NV IT 2030Q4": f"uses {nv_it:,.0f} MW of IT in 2030Q4",
        "end IT": f"about {end.sum():.1f} GW of IT",
        "end by chip": ", ".join(
            f"{c.replace('trainium', 'Trainium').replace('rubin', 'Rubin')} {v:.1f} GW"
            for c, v in end.sort_values(ascending=False).head(4).items()
        ),
        "trainium share": f"Trainium serves {share:.1%} of the served H100e",
        "engines": f"{eng.sum():,.0f} MW of reciprocating engines",
        "combined cycle": f"builds {cc['mw'].sum():,.0f} MW of combined cycle at West Texas",
        "turbines NV": f"{mgt:,.0f} MW of trailer-mounted turbines",
        "flexible neutral": (
            f"Mississippi ({flex['mississippi']:.0f} MW) and "
            f"West Texas ({flex['west_texas']:.0f} MW) take flexible interconnection"
        ),
        "on-site neutral": (
            f"{neutral_onsite:.1f} of {neutral_grid + neutral_onsite:.0f} TWh come from on-site gas"
        ),
        "upgrades": (
            f"add {up['oregon_umatilla']:.0f} MW at Oregon and "
            f"{up['pennsylvania']:.0f} MW at Pennsylvania"
        ),
        "carbon grid": f"grid {neutral_grid:.1f} -> {_twh(carbon, 'grid'):.1f} TWh",
        "carbon engines": f"on-site gas {neutral_onsite:.1f} -> {_twh(carbon, 'onsite'):.1f} TWh",
        "carbon ppa": f"PPAs 0 -> {_twh(carbon, 'ppa'):.1f} TWh",
        "negative cost": f"{_b(neg.objective_usd - res.objective_usd)} more",
        "negative breach": "OpenAI "
        + " and ".join(f"{r.breach_mw:.0f} MW short in {r.period}" for r in oa.itertuples()),
        "negative breach penalty": f"breach penalty {_b(breach_usd)}",
        "negative bedrock": (
            f"Bedrock {bedrock_short:.0f} MW short of its 230 MW Trainium floor in 2025Q4"
        ),
        "negative flexible": (
            f"energises {neg_flex['west_texas']:.0f} MW at West Texas, "
            f"{neg_flex['northern_virginia']:.0f} MW at Northern Virginia and "
            f"{neg_flex['mississippi']:.0f} MW at Mississippi"
        ),
        "negative share": f"Trainium share at {neg_share:.1%}",
        "optimistic": (
            f"{_b(opt.objective_usd - res.objective_usd)} more because more demand is served, "
            f"{opt_end:.1f} GW"
        ),
        "norway": (
            f"{norway['2025Q1'] / 1e3:.1f}k H100e in 2025Q1, {norway['2027Q4'] / 1e3:.0f}k in "
            f"2027Q4 and {norway['2030Q4'] / 1e3:.0f}k in 2030Q4"
        ),
        "fragments": f"{int((~ruled['meets_minimum']).sum())} of {len(ruled)} site-quarters",
    }


@pytest.mark.parametrize("name", SCENARIOS)
def test_objective_pinned(plans, name: str) -> None:
    _, res = plans[name]
    assert res.status == Status.optimal
    assert len(res.violations) == 0
    assert res.objective_usd == pytest.approx(PINNED_OBJECTIVE_USD[name], rel=1e-6), (
        f"fresh objectives: { {n: round(plans[n][1].objective_usd, 2) for n in SCENARIOS} }"
    )


def test_page_table_holds(plans, page: str) -> None:
    lines = table_lines(plans)
    missing = [line for line in lines if line not in page]
    assert not missing, "the page's scenario table should read:\n" + "\n".join(lines)


def test_page_story_holds(plans, page: str) -> None:
    figs = story_figures(plans)
    missing = {k: v for k, v in figs.items() if v not in page}
    assert not missing, "the page's figures should read:\n" + "\n".join(
        f"{k}: {v}" for k, v in figs.items()
    )


def test_contracts_stand_and_the_negative_plan_breaches_openai(plans) -> None:
    """A scenario changes what can serve a contract, never the contract."""
    base = plans["neutral"][0].table("commitments")
    for name in SCENARIOS:
        ds, res = plans[name]
        pd.testing.assert_frame_equal(ds.table("commitments"), base)
    com = plans["negative"][1].tables["commitments"]
    openai = com[(com["customer"] == "openai") & (com["breach_mw"] > 1e-6)]
    assert len(openai) >= 1
    assert (openai["min_it_mw"] >= 1500).all()  # the signed ramp, not a halved one
    neutral = plans["neutral"][1].tables["commitments"]
    assert (neutral.loc[neutral["customer"] == "openai", "breach_mw"] <= 1e-6).all()


def test_new_carlisle_is_trainium_only_and_european_inference_stays_in_norway(plans) -> None:
    _, res = plans["neutral"]
    fleet = res.tables["fleet"]
    assert set(fleet.loc[fleet["site"] == "new_carlisle", "chip"]) <= {
        "trainium2",
        "trainium3",
        "trainium4",
    }
    dem = res.tables["demand"]
    eu = dem[dem["regions"] == "NO"]
    assert eu["served_h100e"].sum() == pytest.approx(eu["demand_h100e"].sum(), rel=1e-9)
    a = res.tables["assignment"]
    no = a[(a["workload"] == "inference") & (a["site"] == "norway")]
    assert "ec2_gpu" not in set(no["customer"])  # ec2_gpu inference may run anywhere


def test_calibration_table_of_the_page(plans, page: str) -> None:
    """At least 20 scored plan rows in every scenario; the page lists each neutral row,
    and every scored row outside its band carries a 'why outside' line."""
    for name in SCENARIOS:
        assert len(_scored(plans[name][1])) >= 20, name
    cal = plans["neutral"][1].tables["calibration"]
    section = page.split("## Calibration against the public record", 1)[1]
    fresh = []
    for r in cal.itertuples():
        scope = str(r.scope).replace("|", "\\|")  # a table cell escapes its bars
        key = f"| {r.metric} | {scope} | {r.period} |"
        inside = "yes" if r.inside_band else "no"
        fresh.append(f"{key} {r.plan_value:.4g} | {inside} |")
        line = next((ln for ln in section.splitlines() if ln.startswith(key)), None)
        assert line is not None, "missing row; fresh rows:\n" + "\n".join(fresh)
        assert f"| {r.plan_value:.4g} | {inside} |" in line, (
            f"{key}: plan {r.plan_value:.4g}, inside {inside}; fresh rows so far:\n"
            + "\n".join(fresh)
        )
        if r.matchable and not r.inside_band:
            assert "why outside:" in line, key
    s = _scored(plans["neutral"][1])
    claim = f"{int(s['inside_band'].sum())} of {len(s)} scored rows"
    assert claim in section, f"the page should say: {claim}"
