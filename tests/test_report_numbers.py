"""Numbers in reports (issue 10): a quantity at its bound is written at the bound."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from capacity.dataset import load_dataset
from capacity.scenarios import apply_scenario
from optimizer import SolveOptions, solve
from optimizer.lp.tidy_numbers import snap_column, tidy_tables
from tests.conftest import ROOT


def test_snap_column_writes_values_within_tolerance_at_zero() -> None:
    v = np.array([-0.0, -2.8e-14, -0.0187, -5.0, 3.0, np.nan, 1e6])
    got = snap_column(v, 1e-6)  # tolerance 1e-6 x max(1, 1e6) = 1.0
    assert got[:3].tolist() == [0.0, 0.0, 0.0] and not np.signbit(got[:3]).any()
    assert got[3] == -5.0  # beyond the tolerance: a violation, left for the checker
    assert got[4] == 3.0 and np.isnan(got[5]) and got[6] == 1e6


def test_signed_columns_are_left_alone() -> None:
    t = {"shadow_prices": pd.DataFrame({"shadow_price": [-1e-10, -0.0], "slack": [-1e-10, 2.0]})}
    out = tidy_tables(t, 1e-6)["shadow_prices"]
    assert out["shadow_price"].tolist()[0] == -1e-10
    assert out["slack"].tolist() == [0.0, 2.0]


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_no_negative_zero_or_tiny_negative_quantity_in_a_plan(solver: str, default_plan) -> None:  # noqa: ANN001
    if solver == "highs":
        res = default_plan("neutral")[1]
    else:
        res = solve(
            apply_scenario(load_dataset(ROOT / "data"), "neutral"), SolveOptions(solver=solver)
        )
    assert res.status == "optimal"
    for name, df in res.tables.items():
        for c in df.columns:
            if df[c].dtype.kind != "f" or "shadow_price" in c:
                continue
            v = df[c].to_numpy()
            assert not (np.signbit(v) & ~np.isnan(v)).any(), (name, c, v[np.signbit(v)][:5])


def test_summary_notes_degenerate_duals() -> None:
    from optimizer.output.binding_limits import degenerate_limits, degenerate_note

    sp = pd.DataFrame(
        {
            "family": ["site_grid", "site_grid", "supply_resource", "demand_balance"],
            "shadow_price": [-5.0, 0.0, 0.0, 0.0],
            "binding": [True, True, False, True],
        }
    )
    # one grid row at its limit with a zero price; the demand row is not a limit
    assert degenerate_limits({"shadow_prices": sp}) == 1
    assert "not unique" in degenerate_note(1) and "CBC" in degenerate_note(1)
    assert degenerate_limits({"shadow_prices": sp.iloc[:1]}) == 0


def test_tables_snapped_while_made_equal_tidy_tables_of_the_raw_tables() -> None:
    """make_tables(tolerance=...) snaps as tidy_tables does, in the same pass."""
    from optimizer.plan.model import build_model
    from optimizer.plan.options import SolveOptions as Options
    from optimizer.plan.raw_solve import run_solver
    from optimizer.plan.results import make_tables

    ds = apply_scenario(load_dataset(ROOT / "data"), "neutral")
    model = build_model(ds)
    raw = run_solver(model, Options(solver="highs"))
    assert raw.x is not None
    x = raw.x.copy()
    x[np.flatnonzero(x == 0.0)[:50]] = -1e-12  # values a solver leaves just below a bound
    plain = make_tables(model, x, raw.row_dual)
    snapped = make_tables(model, x, raw.row_dual, tolerance=1e-6)
    tidy = tidy_tables(plain, 1e-6)
    n_changed = 0
    for name in plain:
        pd.testing.assert_frame_equal(snapped[name], tidy[name], check_exact=True)
        for c in plain[name].columns:
            if plain[name][c].dtype.kind == "f":
                a, b = plain[name][c].to_numpy(), snapped[name][c].to_numpy()
                n_changed += int((~((a == b) & (np.signbit(a) == np.signbit(b)))).sum())
    assert n_changed > 0  # the nudged values did reach the tables and were snapped
    # text columns are pandas' text dtype, not the object columns used inside
    assert not [(n, c) for n, df in snapped.items() for c in df if df[c].dtype == object]


def test_text_columns_reused_only_for_the_same_strings() -> None:
    """A sweep's cases share text key columns only when every cell is the same str."""
    from optimizer.components.key_match import reused_text as _text

    texts: dict = {}
    a = np.array(["s1", "s2"], dtype=object)
    first = _text(a, texts, ("energy", "site"))
    assert list(first) == ["s1", "s2"] and first.dtype == "str"
    again = _text(np.array(["s1", "s2"], dtype=object), texts, ("energy", "site"))
    assert again is first  # equal cells: the text made for the first case
    other = _text(np.array(["s1", "s3"], dtype=object), texts, ("energy", "site"))
    assert list(other) == ["s1", "s3"]
    # numbers and missing cells are never kept: 1 == 1.0 == True, but str() differs
    nums = _text(np.array([1.0, "x"], dtype=object), texts, ("t", "key"))
    assert list(nums) == ["1.0", "x"] and ("t", "key") not in texts
    assert list(_text(np.array([1, "x"], dtype=object), texts, ("t", "key"))) == ["1", "x"]
    gap = _text(np.array(["a", np.nan], dtype=object), texts, ("t", "gap"))
    assert gap[0] == "a" and pd.isna(gap[1]) and ("t", "gap") not in texts


def test_result_structure_made_beside_the_solver_gives_the_same_tables(
    monkeypatch, default_plan
) -> None:  # noqa: ANN001
    """Above ALONGSIDE_COLUMNS the tables' index work runs on a thread during the solve."""
    import importlib
    import threading

    pipeline_mod = importlib.import_module("optimizer.plan.pipeline")
    ds, plain = default_plan("neutral")  # default size: below the threshold
    ran_on: list[str] = []
    real = pipeline_mod.warm_structure

    def recording(model):  # type: ignore[no-untyped-def]
        ran_on.append(threading.current_thread().name)
        real(model)

    monkeypatch.setattr(pipeline_mod, "warm_structure", recording)
    monkeypatch.setattr(pipeline_mod, "ALONGSIDE_COLUMNS", 0)
    monkeypatch.setattr(pipeline_mod.os, "cpu_count", lambda: 2)
    beside = solve(ds, SolveOptions(solver="highs"))
    assert ran_on == ["results-structure"]
    assert beside.status == plain.status == "optimal"
    assert beside.objective_usd == plain.objective_usd
    for name, df in plain.tables.items():
        pd.testing.assert_frame_equal(beside.tables[name], df, check_exact=True, obj=name)


def test_resource_rows_carry_the_unit_of_their_input_table(default_plan) -> None:  # noqa: ANN001
    """Order books are in MW or transformers and supply in wafers or stacks, as the data say.

    The order-book shadow prices read ``USD/resource unit`` and supply_utilisation had no
    unit column; both now take each resource's ``unit`` from the table that defines it.
    """
    ds, res = default_plan("neutral")
    books = ds.table("equipment_order_books").drop_duplicates("resource")
    supply = ds.table("supply_resources").drop_duplicates("resource")
    want = {
        **dict(zip(books["resource"], books["unit"], strict=True)),
        **dict(zip(supply["resource"], supply["unit"], strict=True)),
    }
    assert want["recip_engine_mw"] == "MW" and want["cowos_wafers"] == "wafers"
    sp = res.tables["shadow_prices"]
    rows = sp[sp["family"].isin(["equipment_order_book", "supply_resource"])]
    assert len(rows) > 0 and "USD/resource unit" not in set(rows["unit"])
    for fam, key, unit in rows[["family", "key", "unit"]].itertuples(index=False):
        assert unit == "USD/" + want[key.split(",")[0]], (fam, key, unit)
    su = res.tables["supply_utilisation"]
    assert (su["unit"] == su["resource"].map(want)).all()
