"""The constraint-family registry: every family complete, every built row family registered."""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest

import optimizer
from capacity.dataset import load_dataset
from optimizer.components import BY_NAME, FAMILIES, REGISTRY, SOFT_FAMILIES
from optimizer.lp.dimensions import CODE_NAMES
from optimizer.plan import model as model_module
from optimizer.plan.explain import elastic_model
from optimizer.plan.results import TABLE_COLUMNS
from optimizer.plan.shadow_prices import row_keys
from tests.conftest import DEFAULT_DATA, TINY

EXPECTED = (
    "site_built",
    "site_liquid_built",
    "site_it_power",
    "site_liquid",
    "site_liquid_share",
    "site_grid",
    "site_build_rate",
    "site_max",
    "site_water",
    "site_retrofit_rate",
    "site_retrofit_pool",
    "site_hosting",
    "supply_resource",
    "chip_installed",
    "chip_inventory",
    "chip_window",
    "fleet_assignment",
    "demand_balance",
    "commitment",
    "take_or_pay",
    "reservation",
    "sla_tier",
    "migration",
    "region_balance",
    "pool_balance",
    "fleet_definition",
    "grid_upgrade_rate",
    "grid_upgrade_total",
    "onsite_cap",
    "power_energy_balance",
    "grid_energy",
    "onsite_energy",
    "ppa_energy",
    "carbon_cap_period",
    "carbon_cap_horizon",
    "bridge_retire",
    "equipment_order_book",
    "flexible_inference_sla",
    "cluster_link",
    "cluster_min_mw",
    "cluster_min_h100e",
    "cluster_max_sites",
    "cluster_switch",
    "cluster_min_duration",
)

#: Families built only in cluster mode (--clusters / --integer-units).
CLUSTER_FAMILIES = {f for f in EXPECTED if f.startswith("cluster_")}

#: Families built only in the margin objective (contract terms, migration).
CONTRACT_FAMILIES = {"take_or_pay", "reservation", "sla_tier", "migration"}


def test_every_family_is_registered_once_with_define_check_explain_and_unit() -> None:
    names = [f.name for f in REGISTRY]
    assert sorted(names) == sorted(EXPECTED) and len(set(names)) == len(names)
    for f in REGISTRY:
        assert f.unit, f.name
        assert callable(f.define) and f.define.__doc__, f.name
        params = list(inspect.signature(f.define).parameters)
        assert params == ["builder", "columns"], f.name
        if f.definition:
            assert f.check is None and not f.explain_template, f.name
        else:
            assert callable(f.check) and f.check.__doc__, f.name
        if not f.soft and not f.definition:  # hard families are relaxed by the explanation
            assert "{key}" in f.explain_template and "{period}" in f.explain_template, f.name
            assert "{amount}" in f.explain_template and f.explain_unit, f.name
        assert set(f.key_codes) <= set(CODE_NAMES), f.name


def test_families_units_are_the_registry_units_everywhere() -> None:
    assert FAMILIES == {f.name: f.unit for f in REGISTRY}
    assert model_module.FAMILIES == FAMILIES and optimizer.FAMILIES == FAMILIES
    assert FAMILIES["site_water"] == "m3" and FAMILIES["demand_balance"] == "H100e"
    assert SOFT_FAMILIES == (
        "demand_balance",
        "commitment",
        "take_or_pay",
        "reservation",
        "sla_tier",
        "migration",
    )
    assert model_module.DEFINITION_FAMILIES == (
        "site_built",
        "site_liquid_built",
        "chip_installed",
        "fleet_definition",
        "cluster_switch",
    )


def test_result_routing_names_real_tables_and_columns() -> None:
    routed = {f.name: f.result for f in REGISTRY if f.result is not None}
    assert set(routed) == {
        "site_it_power",
        "site_liquid",
        "site_grid",
        "site_water",
        "supply_resource",
        "equipment_order_book",
        "demand_balance",
        "commitment",
        "take_or_pay",
        "reservation",
        "sla_tier",
        "migration",
    }
    for name, result in routed.items():
        assert result is not None
        columns = TABLE_COLUMNS[result.table]
        assert result.dual_column in columns, name
        assert all(CODE_NAMES[c] in columns or c == "j" for c in result.keys), name
    limits = [f.result.limit for f in REGISTRY if f.result and f.result.limit]
    assert limits == ["power", "liquid", "grid", "water"]  # site_utilisation block order


def test_every_row_family_of_a_built_default_model_is_registered() -> None:
    for path in (DEFAULT_DATA, TINY):
        m = model_module.build_model(load_dataset(path))
        built = set(m.constraints["family"].astype(str).unique())
        assert built <= set(BY_NAME), built - set(BY_NAME)
        # the default model exercises every family except the stochastic-only window
        if path == DEFAULT_DATA:
            # carbon caps: the default data prices carbon (at 0) but sets no cap
            no_rows = {"chip_window", "site_hosting", "carbon_cap_period", "carbon_cap_horizon"}
            no_rows |= CONTRACT_FAMILIES  # margin-mode families, checked below
            # installed-to-date columns only above RECURSIVE_INVENTORY_MIN_TERMS running-sum terms
            no_rows |= {"chip_installed"}
            # built-to-date columns only above RECURSIVE_CAPACITY_MIN_TERMS running-sum terms
            no_rows |= {"site_built", "site_liquid_built"}
            assert built == set(EXPECTED) - no_rows - CLUSTER_FAMILIES
            margin = model_module.build_model(load_dataset(path), objective="margin")
            by_margin = set(margin.constraints["family"].astype(str).unique())
            assert CONTRACT_FAMILIES <= by_margin  # each contract term has rows in the data
    # the reference formulation has no region or pool balance
    compact_only = {"region_balance", "pool_balance"}
    m = model_module.build_model(load_dataset(DEFAULT_DATA), formulation="reference")
    built = set(m.constraints["family"].astype(str).unique())
    assert built == set(EXPECTED) - no_rows - CLUSTER_FAMILIES - compact_only
    # cluster mode adds the cluster families (the default data has no H100e minimum) and
    # keeps the reference formulation (per-site, per-customer columns)
    m = model_module.build_model(load_dataset(DEFAULT_DATA), clusters=True)
    assert m.formulation == "reference" and "clusters" in m.formulation_note
    built = set(m.constraints["family"].astype(str).unique())
    assert built == set(EXPECTED) - no_rows - {"cluster_min_h100e"} - compact_only


def test_row_keys_and_elastic_wording_come_from_the_registry() -> None:
    m = model_module.build_model(load_dataset(DEFAULT_DATA))
    con = m.constraints
    keys = row_keys(m, con)
    fam = con["family"].astype(str).to_numpy()
    sites = set(m.codes["s"])
    assert set(keys[fam == "site_grid"]) <= sites
    fa = keys[fam == "fleet_assignment"]
    assert all(k.split("/")[0] in m.codes["c"] and k.split("/")[1] in sites for k in fa)
    assert (keys[fam == "fleet_definition"] == "").all()
    # the elastic model relaxes exactly the hard rows (not soft, not definition)
    el = elastic_model(m)
    slack_rows = el.variables.loc[(el.variables["kind"] == "elastic").to_numpy(), "j"].to_numpy()
    hard = [f.name for f in REGISTRY if not f.soft and not f.definition]
    assert np.array_equal(slack_rows, np.flatnonzero(np.isin(fam, hard)))
    assert isinstance(el.variables, pd.DataFrame)


def test_summary_words_and_limits_come_from_the_registry() -> None:
    from optimizer.analysis import outcomes
    from optimizer.output import binding_limits

    for f in REGISTRY:
        if not f.definition:
            assert f.summary_words, f"{f.name}: summary_words missing"
            fallback = f"{f.name.replace('_', ' ')} a/b/c"
            assert binding_limits.describe_limit(f.name, "a/b/c") != fallback, f.name
    assert binding_limits.describe_limit("site_grid", "new_carlisle") == (
        "grid interconnect at new_carlisle"
    )
    # the physical and supply limits the summary lists, as before the registry held them
    assert set(binding_limits.LIMIT_FAMILIES) == {
        "site_it_power",
        "site_liquid",
        "site_grid",
        "site_water",
        "site_build_rate",
        "site_max",
        "supply_resource",
        "chip_window",
        "site_retrofit_rate",
        "site_retrofit_pool",
        # power (issue 12): utility request limits, permits, energy by source, carbon caps;
        # the facility energy balance is bookkeeping
        "grid_upgrade_rate",
        "grid_upgrade_total",
        "onsite_cap",
        "grid_energy",
        "onsite_energy",
        "ppa_energy",
        "carbon_cap_period",
        "carbon_cap_horizon",
        # speed to power: vendor slots, the inference SLA under curtailment
        "equipment_order_book",
        "flexible_inference_sla",
    }
    assert "power_energy_balance" not in binding_limits.LIMIT_FAMILIES
    assert set(outcomes.LIMIT_FAMILIES) == (
        set(binding_limits.LIMIT_FAMILIES) - {"chip_window"}
    ) | {
        "site_liquid_share",
        "commitment",
    }


def test_checker_tolerance_scales_with_the_family() -> None:
    from optimizer.lp.violations import violations

    keys = pd.Series(["big", "zero"])
    # a fleet-assignment family whose largest row is 1M chips: a row of rhs 0 that a
    # warm-started simplex returns 2e-6 chips over is noise (tolerance 1e-6 * 1,001)
    ok = violations("fleet_assignment", keys, [1e6, 2e-6], [1e6, 0.0], "<=", 1e-6)
    assert ok.empty
    # 0.01 chips over is not noise at that scale
    bad = violations("fleet_assignment", keys, [1e6, 0.01], [1e6, 0.0], "<=", 1e-6)
    assert list(bad["keys"]) == ["zero"] and bad["violation"].iloc[0] == pytest.approx(0.01)
    # a family of small rows keeps the tight absolute tolerance
    small = violations("site_grid", keys, [1.0, 2e-6], [1.0, 0.0], "<=", 1e-6)
    assert list(small["keys"]) == ["zero"]
