"""Result tables and checker of a patched (reused) model equal those of a fresh build.

With model reuse (:mod:`optimizer.analysis.batch_patch`) the result tables and the checker of each
case read index work cached under the base model (:mod:`optimizer.lp.reuse_cache`): dual
joins, decision keys, shadow-price rows, the missing-row test. The reference is the
same column vector read through the same model under a new identity (every cache
computed afresh, as for a model built from scratch): every table, the violations and
the message must be the same, exactly, and a plan broken by hand must be caught the
same way on both paths. (A rebuilt model may differ from a patched one in the last
bits of a scaled coefficient, :func:`tests.test_batch.test_patched_model_equals_rebuilt_model`.)
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd
import pytest

from capacity.dataset import load_dataset
from capacity.scenarios import apply_overrides
from optimizer.analysis.batch_patch import patch_model
from optimizer.plan.model import build_model
from optimizer.plan.options import SolveOptions
from optimizer.plan.plan_result import _scenario_result
from optimizer.plan.raw_solve import run_solver
from tests.conftest import DEFAULT_DATA

SRC = "assumption: test sweep"

#: Value-only cases of a sweep on the default data (each patchable).
CASES: list[list[dict[str, Any]]] = [
    [
        {"op": "scale", "table": "demand", "column": "demand_h100e", "factor": f},
        {"op": "scale", "table": "supply_resources", "column": "capacity", "factor": 2.0 - f},
        {"op": "scale", "table": "sites", "column": "energy_price_usd_per_mwh", "factor": f},
    ]
    for f in (0.8, 1.2)
] + [
    [
        {"op": "scale", "table": "eligibility", "column": "derate", "factor": 0.9},
        {"op": "scale", "table": "site_grid", "column": "grid_mw", "factor": 1.1},
        {
            "op": "scale",
            "table": "customers",
            "column": "unmet_penalty_usd_per_h100e_period",
            "factor": 0.5,
        },
    ]
]


def _assert_same(a: Any, b: Any, what: str) -> None:
    assert (a.status, a.objective_usd, a.message) == (b.status, b.objective_usd, b.message), what
    assert set(a.tables) == set(b.tables)
    for t in a.tables:
        pd.testing.assert_frame_equal(a.tables[t], b.tables[t], check_exact=True, obj=f"{what} {t}")
    pd.testing.assert_frame_equal(a.violations, b.violations, check_exact=True, obj=what)


def test_patched_models_read_back_exactly_as_fresh_builds() -> None:
    base = load_dataset(DEFAULT_DATA)
    base_model = build_model(base)
    opts = SolveOptions(solver="highs")
    for i, ovs in enumerate(CASES):
        ds = apply_overrides(base, [{**o, "source": SRC} for o in ovs])
        patched = patch_model(base_model, base, ds)
        assert patched is not None
        raw = run_solver(patched, opts)
        assert raw.x is not None
        fresh = dataclasses.replace(patched)  # the same arrays, its own empty caches
        reused = _scenario_result(patched, raw, 0, opts, None, {})
        _assert_same(reused, _scenario_result(fresh, raw, 0, opts, None, {}), f"case {i}")
        assert reused.status.value == "optimal"
        assert not len(reused.violations)
        # the same plan read twice through the cache gives the same tables again
        _assert_same(reused, _scenario_result(patched, raw, 0, opts, None, {}), f"again {i}")


def test_a_plan_broken_by_hand_is_caught_on_the_reuse_path() -> None:
    """Installs 5% above what was produced: chip_inventory rows fail, on both paths."""
    base = load_dataset(DEFAULT_DATA)
    base_model = build_model(base)
    opts = SolveOptions(solver="highs")
    ds = apply_overrides(base, [{**o, "source": SRC} for o in CASES[0]])
    patched = patch_model(base_model, base, ds)
    assert patched is not None
    raw = run_solver(patched, opts)
    assert raw.x is not None
    first = _scenario_result(patched, raw, 0, opts, None, {})  # fills the caches
    assert not len(first.violations)
    x = raw.x.copy()
    install = (patched.variables["kind"] == "install").to_numpy()
    x[install] *= 1.05
    broken = dataclasses.replace(raw, x=x)
    a = _scenario_result(patched, broken, 0, opts, None, {})
    b = _scenario_result(dataclasses.replace(patched), broken, 0, opts, None, {})
    _assert_same(a, b, "broken plan")
    assert a.status.value == "error"
    assert "chip_inventory" in set(a.violations["family"])
    inv = a.violations[a.violations["family"] == "chip_inventory"]
    # installs <= production: the violation is the excess of installs
    assert inv["violation"].to_numpy() == pytest.approx((inv["lhs"] - inv["rhs"]).to_numpy())
    assert np.all(a.violations["violation"].to_numpy() > 0)


#: Decision kind scaled by hand -> the families that must report it (default data,
#: compact formulation; the same sets the pandas checker reported before the checks
#: moved to integer group codes).
BROKEN = {
    ("install", 1.05): {
        "chip_inventory",
        "power_energy_balance",
        "site_grid",
        "site_it_power",
        "site_liquid",
    },
    ("busy", 1.1): {
        "fleet_assignment",
        "power_energy_balance",
        "region_balance",
        "flexible_inference_sla",
    },
    ("serve", 0.9): {"region_balance"},
    ("build", 0.8): {"site_it_power", "site_liquid_share", "site_retrofit_pool"},
    ("produce", 0.7): {"chip_inventory"},
    ("unmet", 0.5): {"demand_balance"},
    ("liquid", 1.5): {"site_liquid_share", "site_retrofit_pool"},
}


def test_plans_broken_by_hand_name_the_families_on_both_paths() -> None:
    """Each hand-broken plan is caught by exactly its families, cached or not."""
    base = load_dataset(DEFAULT_DATA)
    model = build_model(base, formulation="compact")
    opts = SolveOptions(solver="highs")
    raw = run_solver(model, opts)
    assert raw.x is not None
    assert not len(_scenario_result(model, raw, 0, opts, None, {}).violations)  # fills caches
    for (kind, factor), families in BROKEN.items():
        x = raw.x.copy()
        x[(model.variables["kind"] == kind).to_numpy()] *= factor
        broken = dataclasses.replace(raw, x=x)
        a = _scenario_result(model, broken, 0, opts, None, {})
        b = _scenario_result(dataclasses.replace(model), broken, 0, opts, None, {})
        _assert_same(a, b, f"{kind} x {factor}")
        assert a.status.value == "error"
        assert set(a.violations["family"]) == families, (kind, factor)
        assert np.all(a.violations["violation"].to_numpy() > 0)
