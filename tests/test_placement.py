"""Issue 14 at hand values: training clusters (cluster mode and LP mode) and regional inference.

Dataset ``tests/data/lp_clusters``: one chip g1 (1 kW, 1 H100e, idle factor 0.5, not on
sale: only the initial fleet), sites s1 (region r1, 3000 chips, 100 USD/MWh) and s2
(region r2, 1000 chips arriving 2026Q2, 200 USD/MWh), PUE 1, 1000 h per quarter,
customer a with training demand 3000 / 3500 / 3000 H100e in 2026Q1-Q3 (unmet penalty
5000 USD/H100e) and a cluster rule: at least 1 MW per site, a start costs 1,000,000 USD
and a started cluster stays 2 quarters. A chip serving training draws 1 MWh per
quarter, an idle one 0.5 MWh.

LP plan (by hand): s1 serves 3000 every quarter and s2 the missing 500 in 2026Q2, a
0.5 MW fragment. Energy: 2026Q1 3000 MWh x 100 = 300,000; 2026Q2 s1 300,000, s2 (500 +
500 x 0.5) MWh x 200 = 150,000; 2026Q3 s1 300,000, s2 1000 x 0.5 x 200 = 100,000;
objective 1,150,000 USD.

Cluster plan: s2 must hold >= 1 MW when it hosts a's training: 2026Q2 s1 2500 + s2 1000
(start at s2: 1,000,000 USD), and the 2-quarter minimum keeps s2 in 2026Q3 (s1 2000 + s2
1000). Energy: 300,000 + (2750 x 100 + 1000 x 200) + (2500 x 100 + 1000 x 200) =
1,225,000; objective 2,225,000 USD (hosting beats leaving 500 H100e unmet: 2,500,000).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from capacity.dataset import load_dataset
from capacity.validation import DataValidationError
from optimizer import SolveOptions, Status, solve
from optimizer.analysis.batch_patch import patch_model
from optimizer.plan.check import check_frames
from optimizer.plan.model import build_model
from optimizer.plan.pipeline import solve_model
from optimizer.plan.raw_solve import run_solver
from optimizer.plan.results import solution_frames
from tests.conftest import DEFAULT_DATA
from tests.lp_helpers import LP_DATA, edit

CLUSTERS = SolveOptions(clusters=True)


@pytest.fixture(scope="module")
def ds():
    return load_dataset(LP_DATA / "lp_clusters")


def _rule(ds, **cols):
    return edit(ds, "training_clusters", **cols)


def _site_mw(res, site: str, period: str) -> float:
    t = res.tables["training_clusters"]
    row = t[(t["site"] == site) & (t["period"] == period)]
    return float(row["it_mw"].sum())


# ----------------------------------------------------------------------------- LP mode
def test_lp_mode_reports_the_fragment_and_never_enforces(ds) -> None:
    res = solve(ds)
    assert res.status == Status.optimal and not res.clusters
    assert res.objective_usd == pytest.approx(1_150_000, rel=1e-9)
    t = res.tables["training_clusters"]
    frag = t[~t["meets_minimum"]]
    assert frag[["customer", "period", "site"]].values.tolist() == [["a", "2026Q2", "s2"]]
    assert frag["it_mw"].iloc[0] == pytest.approx(0.5)
    assert frag["chips_by_generation"].iloc[0] == "g1:500"
    assert not t["enforced"].any()
    assert "LP mode: training below the minimum cluster size at 1 site-periods (a 1)" in (
        res.message
    )
    assert len(res.violations) == 0  # reported, not a violation


# ------------------------------------------------------------------------ cluster mode
def test_cluster_mode_keeps_the_minimum_and_pays_one_start(ds) -> None:
    res = solve(ds, CLUSTERS)
    assert res.status == Status.optimal and res.clusters and res.mip_gap == pytest.approx(0)
    assert res.objective_usd == pytest.approx(2_225_000, rel=1e-9)
    t = res.tables["training_clusters"]
    assert t["meets_minimum"].all() and t["enforced"].all()
    assert _site_mw(res, "s2", "2026Q2") == pytest.approx(1.0)  # cluster_min_mw binds at 1 MW
    assert _site_mw(res, "s2", "2026Q3") == pytest.approx(1.0)  # kept by the minimum duration
    assert _site_mw(res, "s1", "2026Q2") == pytest.approx(2.5)
    starts = t[t["cluster_start"]][["site", "period"]].values.tolist()
    assert starts == [["s2", "2026Q2"]]
    costs = res.tables["costs"].groupby("term")["cost_usd"].sum()
    assert costs["cluster_switch"] == pytest.approx(1_000_000)
    assert costs["energy"] == pytest.approx(1_225_000)
    assert len(res.violations) == 0
    sp = res.tables["shadow_prices"]
    row = sp[(sp["family"] == "cluster_min_mw") & (sp["key"] == "a/s2")]
    assert row["binding"].all()


def test_minimum_duration_binds_at_its_hand_cost(ds) -> None:
    # without the 2-quarter minimum s2 is left in 2026Q3: s1 serves 3000 there
    # (saves 1000 chips x 0.5 MWh x (200 - 100) USD = 50,000 USD)
    free = solve(_rule(ds, min_duration_periods=1), CLUSTERS)
    assert free.objective_usd == pytest.approx(2_175_000, rel=1e-9)
    assert _site_mw(free, "s2", "2026Q3") == 0.0


def test_max_sites_binds_and_leaves_demand_unmet(ds) -> None:
    # one site per quarter: 2026Q2 serves 3000 at s1 and leaves 500 H100e unmet
    # energy 300,000 + (300,000 + 100,000) + (300,000 + 100,000) + unmet 2,500,000
    res = solve(_rule(ds, max_sites=1), CLUSTERS)
    assert res.objective_usd == pytest.approx(3_600_000, rel=1e-9)
    t = res.tables["training_clusters"]
    assert (t["sites_in_period"] == 1).all() and t["within_max_sites"].all()
    d = res.tables["demand"].set_index("period")
    assert d.loc["2026Q2", "unmet_h100e"] == pytest.approx(500)
    sp = res.tables["shadow_prices"]
    row = sp[(sp["family"] == "cluster_max_sites") & (sp["period"] == "2026Q2")]
    assert row["key"].tolist() == ["a"] and row["binding"].all()


def test_h100e_minimum_binds_at_its_hand_value(ds) -> None:
    # at least 800 H100e per site: s2 hosts 800 in 2026Q2 and 2026Q3
    # energy 300,000 + (2850 x 100 + 900 x 200) + (2600 x 100 + 900 x 200) + start
    res = solve(_rule(ds, min_cluster_mw=0.0, min_cluster_h100e=800.0), CLUSTERS)
    assert res.objective_usd == pytest.approx(2_205_000, rel=1e-9)
    t = res.tables["training_clusters"].set_index(["site", "period"])
    assert t.loc[("s2", "2026Q2"), "h100e"] == pytest.approx(800)
    assert t.loc[("s2", "2026Q3"), "h100e"] == pytest.approx(800)


def test_cluster_min_dual_matches_a_finite_difference(ds) -> None:
    """Shadow price of cluster_min_mw[a/s2, 2026Q2] (LP with the binaries fixed).

    Each MW required at s2 moves 1000 chips of training from s1 to s2: each adds
    0.5 MWh x 200 at s2 and saves 0.5 MWh x 100 at s1, so 50,000 USD per MW (checked
    downwards: s2 holds exactly 1 MW of chips, so the row cannot rise).
    """
    res = solve(ds, CLUSTERS)
    sp = res.tables["shadow_prices"]
    row = sp[
        (sp["family"] == "cluster_min_mw") & (sp["key"] == "a/s2") & (sp["period"] == "2026Q2")
    ]
    assert row["shadow_price"].iloc[0] == pytest.approx(50_000, rel=1e-6)
    model = build_model(ds, clusters=True)
    raw = run_solver(model, CLUSTERS)
    assert raw.x is not None
    var = model.variables.copy()
    ints = var["integer"].to_numpy()
    var.loc[ints, "lb"] = var.loc[ints, "ub"] = np.round(raw.x[ints])
    var["integer"] = False
    fixed = replace(model, variables=var)
    con = fixed.constraints
    s2 = model.codes["s"].index("s2")
    sel = ((con["family"] == "cluster_min_mw") & (con["t"] == 1) & (con["s"] == s2)).to_numpy()
    assert sel.sum() == 1
    bumped = con.copy()
    bumped.loc[sel, "rhs"] = bumped.loc[sel, "rhs"] - 0.1  # s2 holds exactly 1 MW of chips
    base = run_solver(fixed, CLUSTERS).solver_objective
    less = run_solver(replace(fixed, constraints=bumped), CLUSTERS).solver_objective
    assert base is not None and less is not None
    assert (base - less) / 0.1 == pytest.approx(50_000, rel=1e-6)


# --------------------------------------------------------------------------- checker
def _cluster_frames(ds):
    model = build_model(ds, clusters=True)
    raw = run_solver(model, CLUSTERS)
    return solution_frames(model, raw.x, 0)


def _set(frame: pd.DataFrame, value: float, **keys: str) -> pd.DataFrame:
    f = frame.copy()
    m = np.ones(len(f), dtype=bool)
    for k, v in keys.items():
        m &= (f[k] == v).to_numpy()
    f.loc[m, "value"] = value
    return f


def test_checker_recomputes_each_cluster_family_from_the_values(ds) -> None:
    fr = _cluster_frames(ds)
    assert check_frames(ds, fr).empty
    # a 0.5 MW fragment at s2 in 2026Q2: below the minimum
    bad = {**fr, "assign": _set(fr["assign"], 500.0, site="s2", period="2026Q2")}
    v = check_frames(ds, bad).set_index("family")
    assert v.loc["cluster_min_mw", "keys"] == "a/s2,2026Q2"
    assert (v.loc["cluster_min_mw", "lhs"], v.loc["cluster_min_mw", "rhs"]) == (0.5, 1.0)
    # training at s2 with the cluster switched off: link violated (1000 H100e vs 0)
    bad = {**fr, "cluster": _set(fr["cluster"], 0.0, site="s2", period="2026Q2")}
    v = check_frames(ds, bad).set_index("family")
    assert v.loc["cluster_link", "lhs"] == pytest.approx(1000.0)
    assert v.loc["cluster_link", "rhs"] == 0.0
    # leaving s2 one quarter after the start: minimum duration violated in 2026Q3
    gone = {
        **fr,
        "assign": _set(fr["assign"], 0.0, site="s2", period="2026Q3"),
        "cluster": _set(fr["cluster"], 0.0, site="s2", period="2026Q3"),
    }
    v = check_frames(ds, gone)
    assert "cluster_min_duration[a/s2,2026Q3]" in v["constraint"].tolist()
    # two sites where the rule allows one
    one = _rule(ds, max_sites=1)
    v = check_frames(one, fr)
    v = v[v["family"] == "cluster_max_sites"]
    assert v[["keys", "lhs", "rhs"]].values.tolist() == [
        ["a,2026Q2", 2.0, 1.0],
        ["a,2026Q3", 2.0, 1.0],
    ]


def test_explanation_words_a_forced_cluster_below_its_minimum(ds) -> None:
    # s2 receives only 500 chips (0.5 MW); forcing a cluster there cannot meet 1 MW
    small = edit(ds, "initial_fleet", chips=[3000.0, 500.0])
    model = build_model(small, clusters=True)
    var = model.variables.copy()
    s2 = model.codes["s"].index("s2")
    force = ((var["kind"] == "cluster") & (var["s"] == s2) & (var["t"] == 1)).to_numpy()
    var.loc[force, "lb"] = 1.0
    res = solve_model(replace(model, variables=var), CLUSTERS)[0]
    assert res.status == Status.infeasible
    msgs = res.infeasibility["message"].tolist()
    assert "training cluster a/s2 in 2026Q2 below its minimum size by 0.5 MW" in msgs


# ----------------------------------------------------------------- regional inference
def test_regional_inference_is_served_only_in_its_region(ds) -> None:
    """r2 wants 1500 H100e but s2 holds 1000 chips: 500 unmet although s1 idles 2000."""
    # idle draw 0.3 < inference draw 0.5: serving beyond demand costs energy
    regional = edit(ds, "chips", idle_power_factor=0.3)
    regional = edit(regional, "initial_fleet", install_period=["2025Q1", "2025Q1"]).replace(
        demand=pd.DataFrame(
            {
                "customer": ["a", "a"],
                "workload": ["inference", "inference"],
                "period": ["2026Q1", "2026Q1"],
                "demand_h100e": [1500.0, 1000.0],
                "regions": ["r2", "r1"],
            }
        )
    )
    res = solve(regional)
    assert res.status == Status.optimal and len(res.violations) == 0
    d = res.tables["demand"].set_index("regions")
    assert d.loc["r2", "served_h100e"] == pytest.approx(1000)
    assert d.loc["r2", "unmet_h100e"] == pytest.approx(500)
    assert d.loc["r1", "served_h100e"] == pytest.approx(1000)
    assert d.loc["r2", "shadow_price_usd_per_h100e"] == pytest.approx(5000)
    a = res.tables["assignment"]
    assert set(a["site"]) == {"s1", "s2"} and a.groupby("site")["chips"].sum().to_dict() == (
        pytest.approx({"s1": 1000.0, "s2": 1000.0})
    )
    # the checker flags a regional demand served outside its regions
    model = build_model(regional)
    fr = solution_frames(model, run_solver(model, SolveOptions()).x, 0)
    moved = fr["assign"].copy()
    moved.loc[moved["demand_regions"] == "r2", "site"] = "s1"
    v = check_frames(regional, {**fr, "assign": moved})
    assert "demand_regions" in set(v["family"])


def test_bad_regions_and_overlapping_rules_are_errors(ds) -> None:
    with pytest.raises(DataValidationError) as e:
        edit(ds, "demand", regions=["r1", "mars", ""])
    (f,) = [f for f in e.value.findings if f.column == "regions" and f.severity == "error"]
    assert f.file.endswith("demand.csv") and f.row == 3 and f.value == "mars"
    rules = pd.concat([ds.table("training_clusters")] * 2, ignore_index=True)
    rules.loc[1, "from_period"] = "2026Q2"
    with pytest.raises(DataValidationError) as e:
        ds.replace(training_clusters=rules)
    assert any("overlaps" in f.message for f in e.value.findings)


# -------------------------------------------------------------------- default dataset
def test_default_data_regional_demand_patches_like_a_rebuild() -> None:
    from capacity.scenarios import apply_overrides

    base = load_dataset(DEFAULT_DATA)
    ov = {"op": "scale", "table": "demand", "column": "demand_h100e", "factor": 1.2}
    new = apply_overrides(base, [ov])
    patched = patch_model(build_model(base), base, new)
    assert patched is not None
    want = build_model(new)
    np.testing.assert_allclose(patched.constraints["rhs"], want.constraints["rhs"], rtol=1e-12)
    assert patch_model(build_model(base, clusters=True), base, new) is None


# ------------------------------------------------------------------------------- app
def test_plan_page_shows_fragments_then_the_exact_cluster_timeline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.apptest_helpers import goto, open_app

    at = open_app(monkeypatch, LP_DATA / "lp_clusters")
    goto(at, "plan")
    at.button(key="solve").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("LP mode: 1 training placements" in str(w.value) for w in at.warning)
    at.checkbox(key="solve_clusters").check()
    at.button(key="solve").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    plan = at.session_state["plan"]
    assert plan.result.objective_usd == pytest.approx(2_225_000, rel=1e-9)
    assert any("exact rule (MIP gap 0.00%)" in str(c.value) for c in at.caption)
    titles = [str(c.proto.spec) for c in at.get("plotly_chart")]
    assert any("Training clusters per customer" in t for t in titles)


# -------------------------------------------------------------------- MIP warm start
@pytest.mark.parametrize(
    ("rule", "optimum_usd"),
    [({}, 2_225_000), ({"max_sites": 1}, 3_600_000), ({"min_duration_periods": 1}, 2_175_000)],
)
def test_warm_started_mip_reaches_the_hand_optimum(ds, rule, optimum_usd) -> None:
    from optimizer.plan.warm_start import cluster_warm_start

    data = _rule(ds, **rule) if rule else ds
    model = build_model(data, clusters=True)
    warm = cluster_warm_start(model, CLUSTERS)
    assert warm.x is not None and warm.objective_usd is not None
    assert np.isfinite(warm.objective_usd)
    assert warm.objective_usd >= optimum_usd * (1 - 1e-9)  # a feasible point: never below
    cluster = (model.variables["kind"] == "cluster").to_numpy()
    assert set(np.unique(warm.x[cluster])) <= {0.0, 1.0}
    res = solve(data, CLUSTERS)
    assert res.status == Status.optimal and len(res.violations) == 0
    assert res.objective_usd == pytest.approx(optimum_usd, rel=1e-9)
    assert f"objective ${warm.objective_usd:,.0f}" in res.message
    cold = solve(data, replace(CLUSTERS, mip_start=False))
    assert cold.objective_usd == pytest.approx(optimum_usd, rel=1e-9)
    assert "warm start" not in cold.message


def test_exact_clusters_hold_a_commitment_beyond_the_demand(tmp_path) -> None:
    """5,000 chips stand; 3,000 H100e of training asked; a 4 MW commitment (1e6 USD per
    MW short); clusters of at least 1 MW on one site. Holding 4,000 chips costs 4,000 MWh
    x 10 USD a quarter: 80,000 over two quarters, and it meets every rule. The cluster
    link held the site's training H100e at the 3,000 asked, so exact mode reported
    2,060,000 with 1 MW breached, "optimal" at a 0% gap."""
    import shutil

    shutil.copytree(LP_DATA / "lp_two", tmp_path / "d")
    files = {
        "chips.csv": "chip,display_name,vendor,family,it_kw_per_chip,cooling,first_period,"
        "last_period,lifetime_periods,capex_usd_per_chip,training_h100e,inference_h100e,"
        "hbm_gb,unit_name,chips_per_unit,idle_power_factor\n"
        "g1,G1,v,nv,1.0,air,2025Q1,2025Q4,20,4000,1.0,1.0,80,server,8,0\n",
        "commitments.csv": "customer,family,from_period,to_period,min_it_mw,"
        "breach_penalty_usd_per_mw\na,nv,2026Q1,,4,1000000\n",
        "demand.csv": "customer,workload,period,demand_h100e\n"
        "a,training,2026Q1,3000\na,training,2026Q2,3000\n",
        "initial_fleet.csv": "chip,site,chips,install_period\ng1,s1,5000,2025Q1\n",
        "periods.csv": "period,hours,discount_factor\n2026Q1,1000,1.0\n2026Q2,1000,1.0\n",
        "sites.csv": "site,display_name,region,initial_it_mw,initial_liquid_mw,max_it_mw,"
        "max_build_mw_per_period,liquid_share_max,pue_air,pue_liquid,wue_l_per_kwh_air,"
        "wue_l_per_kwh_liquid,build_capex_usd_per_mw,energy_price_usd_per_mwh,"
        "carbon_t_per_mwh\ns1,S1,r1,10,0,10,0,0,1.0,1.0,0,0,1000000,10,0\n",
        "training_clusters.csv": "customer,from_period,to_period,min_cluster_mw,"
        "min_cluster_h100e,max_sites,switch_cost_usd,min_duration_periods\n"
        "a,2026Q1,,1.0,0,1,0,1\n",
    }
    for name, text in files.items():
        (tmp_path / "d" / name).write_text(text)
    data = load_dataset(tmp_path / "d")
    lp = solve(data, SolveOptions())
    exact = solve(data, SolveOptions(clusters=True))
    for r in (lp, exact):
        assert r.status == Status.optimal and not len(r.violations), r.message
        assert r.objective_usd == pytest.approx(80_000.0, rel=1e-9)
        c = r.tables["commitments"]
        assert c["breach_mw"].tolist() == pytest.approx([0.0, 0.0], abs=1e-9)
