"""A reused batch (patched model, retained HiGHS, warm start) reports what a cold solve does.

On the default data, a sweep whose cases change costs (energy price, on-site plant
capex), bounds (demand, supply, grid, order books, contract floors) and matrix
coefficients (eligibility derate) is solved by
:func:`optimizer.analysis.batch_case.solve_many` with reuse. Each case's solution (the
HiGHS answer of the retained session, recorded) is then read again through a model
built from scratch on data loaded afresh (every cache of the sweep missed: new model,
new table objects): every result table, the checker's violations, the message and the
objective must be the same, exactly. The reused objective must equal an independent
cold :func:`optimizer.solve` of the case to solver precision, and the checker must have
run on every case.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from capacity.dataset import load_dataset
from capacity.scenarios import apply_overrides
from optimizer import solve
from optimizer.analysis import batch_case
from optimizer.analysis.batch_case import solve_many
from optimizer.components.plan_context import PlanContext
from optimizer.lp.frames import indexed
from optimizer.lp.reuse_cache import cached_on_cells
from optimizer.output import parquet_tables
from optimizer.plan import pipeline
from optimizer.plan.highs_session import HighsSession
from optimizer.plan.model import build_model
from optimizer.plan.options import SolveOptions
from optimizer.plan.plan_result import _scenario_result
from optimizer.plan.results import solution_frames
from tests.conftest import DEFAULT_DATA

SRC = "assumption: test sweep"


def _scale(table: str, column: str, factor: float) -> dict[str, Any]:
    return {"op": "scale", "table": table, "column": column, "factor": factor, "source": SRC}


#: Cases in sweep order: costs, bounds, coefficients, then costs and bounds together.
SWEEP: list[list[dict[str, Any]]] = [
    [_scale("sites", "energy_price_usd_per_mwh", 1.3)],
    [_scale("onsite_generation", "capex_usd_per_mw", 0.6)],
    [
        _scale("demand", "demand_h100e", 1.1),
        _scale("supply_resources", "capacity", 0.9),
        _scale("site_grid", "grid_mw", 1.1),
    ],
    [_scale("equipment_order_books", "capacity", 2.0)],
    [_scale("contract_terms", "take_or_pay_h100e", 0.5)],
    [_scale("eligibility", "derate", 0.9)],
    [
        _scale("sites", "energy_price_usd_per_mwh", 0.8),
        _scale("demand", "demand_h100e", 0.9),
        _scale("eligibility", "derate", 0.95),
    ],
]


@pytest.fixture(scope="module")
def reused() -> tuple[Any, list[Any], list[Any]]:
    """The base data, the reused sweep's results, and each case's raw HiGHS answer."""
    ds = load_dataset(DEFAULT_DATA)
    raws: list[Any] = []
    run, cold_run = HighsSession.run, pipeline.run_solver

    def recording(self: HighsSession, model: Any) -> Any:
        out = run(self, model)
        raws.append((model, out[0]))
        return out

    def cold_recording(model: Any, options: Any, **kw: Any) -> Any:
        out = cold_run(model, options, **kw)
        raws.append((model, out))
        return out

    batch_case._SESSION_CACHE.clear()
    mp = pytest.MonkeyPatch()
    mp.setattr(HighsSession, "run", recording)
    mp.setattr(pipeline, "run_solver", cold_recording)
    try:
        results = solve_many(ds, SWEEP, SolveOptions(), reuse=True)
    finally:
        mp.undo()
    anchor, *cases = raws  # the session opens on the base model, solved cold
    assert anchor[0].datasets[0].hash == ds.hash
    return ds, results, cases


def test_the_sweep_reuses_the_model_and_warm_starts(reused: Any) -> None:
    _, results, raws = reused
    assert len(raws) == len(SWEEP)
    # every case starts from the base's optimal basis: on-site plant capex and
    # order-book capacity change the model's coefficients beyond the patcher (rebuilt,
    # passed whole, and of the same shape started from that basis); every other case
    # is patched and re-solved from it
    flags = [r.timings_s.get("warm_start") for r in results]
    assert flags == [1.0] * 7
    for r in results:
        assert r.status == "optimal"
        assert r.timings_s["check"] > 0  # the independent checker ran on this case
        assert len(r.violations) == 0


def test_reused_tables_equal_those_read_through_a_fresh_build(reused: Any) -> None:
    _, results, raws = reused
    opts = SolveOptions()
    for i, (items, r, (patched, raw)) in enumerate(zip(SWEEP, results, raws, strict=True)):
        fresh_ds = apply_overrides(load_dataset(DEFAULT_DATA), items)
        fresh = build_model(fresh_ds)
        assert fresh.n_variables == patched.n_variables  # the same columns, in order
        # the same coefficients up to the last bits of a patched product
        assert abs(fresh.matrix - patched.matrix).max() <= 1e-9 * abs(fresh.matrix).max()
        cold = _scenario_result(fresh, raw, 0, opts, None, {})
        what = f"case {i} ({', '.join(o['table'] for o in items)})"
        assert (cold.status, cold.objective_usd, cold.message) == (
            r.status,
            r.objective_usd,
            r.message,
        ), what
        assert list(cold.tables) == list(r.tables)
        for name in r.tables:
            # shadow_prices reads its slacks from the LP's rows: a patched row bound may
            # differ from a rebuilt one in its last bits (scaled right-hand sides, see
            # tests/test_batch.py::test_patched_model_equals_rebuilt_model); every
            # table computed from the plan and the data is equal to the bit
            exact = name != "shadow_prices"
            pd.testing.assert_frame_equal(
                r.tables[name],
                cold.tables[name],
                check_exact=exact,
                rtol=1e-12,
                atol=1e-9,
                obj=f"{what} {name}",
            )
        pd.testing.assert_frame_equal(r.violations, cold.violations, check_exact=True)


@pytest.mark.parametrize("case", [0, 3, 5])
def test_reused_objective_equals_an_independent_cold_solve(reused: Any, case: int) -> None:
    ds, results, _ = reused
    cold = solve(apply_overrides(ds, SWEEP[case]))
    assert cold.status == results[case].status == "optimal"
    assert results[case].objective_usd == pytest.approx(cold.objective_usd, rel=1e-9)
    # the plan's cost terms agree too (tied plans share the objective, not every table)
    got = results[case].tables["costs"]["cost_usd"].sum()
    assert got == pytest.approx(cold.tables["costs"]["cost_usd"].sum(), rel=1e-9)


# ------------------------------------------------------- caches kept across the cases
def test_site_pairs_are_kept_while_the_site_names_are_the_same() -> None:
    """The (site, period) pairs follow the case's site names, not the sites table object."""
    ds = load_dataset(DEFAULT_DATA)
    model = build_model(ds)
    frames = solution_frames(model, np.zeros(model.n_variables))
    first = PlanContext(ds, frames, cache=model).site_periods
    sites = ds.table("sites")
    n_sites, n_periods = len(sites), len(ds.periods)
    assert len(first) == n_sites * n_periods
    assert list(first["site"].iloc[::n_periods]) == list(sites["site"])
    # a case that changes a number of the sites table: a new table, the same names
    pricier = sites.assign(energy_price_usd_per_mwh=sites["energy_price_usd_per_mwh"] * 1.3)
    same = PlanContext(ds.replace(sites=pricier), frames, cache=model).site_periods
    assert same is first
    # a case whose sites are listed in another order: other cells, made again
    flipped = sites.iloc[::-1].reset_index(drop=True)
    other = PlanContext(ds.replace(sites=flipped), frames, cache=model).site_periods
    assert other is not first
    assert list(other["site"].iloc[::n_periods]) == list(flipped["site"])
    assert list(other["period"].iloc[:n_periods]) == list(ds.periods)


def test_cached_on_cells_recomputes_for_other_cells_only() -> None:
    made: list[int] = []
    model = object.__new__(PlanContext)  # any weak-referenceable owner stands for a model

    def make() -> int:
        made.append(1)
        return len(made)

    names = np.array(["a", "b"], dtype=object)
    assert cached_on_cells(model, "k", (names,), make) == 1
    assert cached_on_cells(model, "k", (names.copy(),), make) == 1  # same cells: kept
    assert cached_on_cells(model, "k", (np.array(["a", "c"], dtype=object),), make) == 2
    assert cached_on_cells(model, "k", (np.array(["a"], dtype=object),), make) == 3
    assert cached_on_cells(model, "k", (np.array([1, 2]),), make) == 4  # another dtype
    assert len(made) == 4


def test_report_text_columns_encoded_once_read_back_equal() -> None:
    """A text array shared by two cases is encoded once; other cells are encoded anew."""
    keys = pd.array(["north", "south", None], dtype="str")
    first = parquet_tables._encoded(keys, pa.string())
    assert parquet_tables._encoded(keys, pa.string()) is first
    assert first.to_pylist() == ["north", "south", None]
    other = pd.array(["north", "west", "east"], dtype="str")
    assert parquet_tables._encoded(other, pa.string()).to_pylist() == ["north", "west", "east"]
    # a table with a shared text column and a float column written as before
    df = pd.DataFrame({"site": keys, "mw": [1.5, np.nan, -0.0]})
    schema = pa.schema([pa.field("site", pa.string()), pa.field("mw", pa.float64())])
    got = parquet_tables.to_arrow(df, schema)
    assert got.column("site").to_pylist() == ["north", "south", None]
    assert got.column("mw").to_pylist()[0] == 1.5
    assert got.column("mw").null_count == 1


def test_indexed_tables_follow_the_table_object() -> None:
    """A table indexed by name is kept per table object; a changed table is indexed anew."""
    periods = load_dataset(DEFAULT_DATA).table("periods")
    hours = indexed(periods, "period")["hours"]
    assert indexed(periods, "period") is indexed(periods, "period")
    first = str(periods["period"].iloc[0])
    assert hours[first] == float(periods["hours"].iloc[0])
    longer = periods.assign(hours=periods["hours"] * 2.0)  # a case's new table
    assert indexed(longer, "period")["hours"][first] == 2.0 * hours[first]
    assert indexed(periods, "period")["hours"][first] == hours[first]  # the first unchanged
