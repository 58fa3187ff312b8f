"""A plan without shadow prices never claims what its duals would say.

Under a solver that returns no duals through PuLP (SCIP_PY, GLPK_CMD) the summary,
the Monte Carlo binding shares, the batch table and the app say the shadow prices are
not available and name the solvers that give them; none says "nothing binds" or 0%.
"""

from __future__ import annotations

import math
from functools import cache
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest
from rich.console import Console
from streamlit.testing.v1 import AppTest

from capacity.dataset import load_dataset
from optimizer import SolveOptions, solve
from optimizer.analysis.batch_render import _binding_shares_table
from optimizer.analysis.monte_carlo import monte_carlo, uniform_monte_carlo
from optimizer.analysis.outcomes import binding_families, binding_limits, binding_shares
from optimizer.analysis.tornado import default_tornado_parameters
from optimizer.output.binding_limits import missing_duals, no_duals_text
from optimizer.output.summary import summarize
from optimizer.output.summary_render import render_summary
from optimizer.plan import solvers as solvers_mod
from optimizer.plan.solvers import dual_solver_names, solver_names
from tests.apptest_helpers import goto, open_app, rerun
from tests.conftest import TINY

NO_DUALS = "SCIP_PY"
needs_scip = pytest.mark.skipif(
    NO_DUALS not in solver_names(), reason="pyscipopt (SCIP_PY) is not installed here"
)


@cache
def _tiny_plan(solver: str) -> Any:
    return solve(load_dataset(TINY), SolveOptions(solver=solver))


def _printed(result: Any) -> str:
    con = Console(width=400, record=True)
    render_summary(summarize(result, scenario="neutral"), con)
    return con.export_text()


def test_the_suggested_solvers_come_from_the_solver_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solvers_mod, "solver_names", lambda: ("highs", "GLPK_CMD", "PULP_CBC_CMD"))
    assert dual_solver_names() == ("highs", "PULP_CBC_CMD")
    assert no_duals_text("GLPK_CMD", "GLPK_CMD returns no duals through PuLP") == (
        "shadow prices are not available from GLPK_CMD (GLPK_CMD returns no duals through "
        "PuLP); solve with highs or PULP_CBC_CMD for them"
    )
    # a solver that does return duals lost them for another reason: no advice to switch
    assert no_duals_text("highs", "fixed-integer LP failed") == (
        "shadow prices are not available for this plan (fixed-integer LP failed)"
    )


@needs_scip
def test_summary_under_a_solver_without_duals_says_so_and_claims_nothing() -> None:
    res = _tiny_plan(NO_DUALS)
    assert str(res.status) == "optimal"
    assert missing_duals(res) == "SCIP_PY returns no duals through PuLP"
    s = summarize(res)
    assert s.duals_note and s.binding.empty and s.degenerate_limits == 0
    text = _printed(res)
    others = [n for n in dual_solver_names() if n != NO_DUALS]
    assert "shadow prices are not available from SCIP_PY" in text
    assert f"solve with {others[0]}" in text and others[-1] in text
    assert "binds with a non-zero shadow price" not in text
    assert "no plant or supply limit" not in text


def test_a_result_read_back_without_its_note_counts_all_null_prices_as_missing() -> None:
    sp = pd.DataFrame(
        {"family": ["site_grid"], "period": ["2026Q1"], "key": ["a"], "shadow_price": [math.nan]}
    )
    res = SimpleNamespace(duals_note="", tables={"shadow_prices": sp})
    assert missing_duals(res) == "the solver returned no duals"
    assert binding_families(res) is None and binding_limits(res) is None
    zero = SimpleNamespace(duals_note="", tables={"shadow_prices": sp.assign(shadow_price=0.0)})
    assert missing_duals(zero) == "" and binding_families(zero) == set()


def test_summary_with_duals_keeps_the_no_binding_sentence() -> None:
    sp = pd.DataFrame(
        {
            "family": ["site_grid"],
            "period": ["2026Q1"],
            "key": ["a"],
            "shadow_price": [0.0],
            "unit": ["USD/MW"],
            "slack": [5.0],
            "binding": [False],
        }
    )
    res = SimpleNamespace(status="optimal", objective_usd=1.0, tables={"shadow_prices": sp})
    text = _printed(res)
    assert "no plant or supply limit binds with a non-zero shadow price" in text
    assert "not available" not in text


def test_binding_shares_leave_samples_without_duals_out_of_the_priced_share() -> None:
    df = binding_shares([None, {"site_grid"}], [{"site_grid"}, {"site_grid"}])
    row = df.set_index("family").loc["site_grid"]
    assert (row["share_priced"], row["n_priced"], row["share_binding"], row["n"]) == (1.0, 1, 1, 2)
    none_known = binding_shares([None, None], [{"site_grid"}, set()])
    assert math.isnan(none_known.loc[0, "share_priced"]) and none_known.loc[0, "n_priced"] == 0
    assert none_known.loc[0, "share_binding"] == 0.5


@cache
def _mc(solver: str) -> Any:
    ds = load_dataset(TINY)
    cowos = [p for p in default_tornado_parameters(ds) if p.name == "cowos"]
    spec = uniform_monte_carlo(cowos, 2, 3)
    return monte_carlo(ds, spec, SolveOptions(solver=solver))


@needs_scip
def test_monte_carlo_binding_shares_without_duals_are_unknown_not_zero() -> None:
    mc = _mc(NO_DUALS)
    assert (mc.samples["status"] == "optimal").all()
    assert mc.samples["binding_families"].isna().all()
    assert mc.samples["binding_limits"].isna().all()
    assert len(mc.binding) and mc.binding["share_priced"].isna().all()
    assert (mc.binding["n_priced"] == 0).all()
    assert (mc.binding["share_binding"] > 0).any()  # slack needs no duals: still known
    assert mc.limits.empty
    assert mc.duals_note.startswith("shadow prices are not available from SCIP_PY")
    assert mc.duals_note.endswith("unknown for 2 of 2 samples with a plan")
    with_duals = _mc("highs")
    assert with_duals.duals_note == ""
    assert with_duals.binding["share_priced"].notna().all()
    assert with_duals.binding.set_index("family").loc["demand_balance", "share_priced"] == 1.0


def test_batch_binding_table_shows_unknown_with_the_reason() -> None:
    mc = pd.DataFrame(
        {
            "status": ["optimal", "optimal"],
            "binding_families": [None, None],
            "binding_limits": [None, None],
        }
    )
    con = Console(width=300, record=True)
    con.print(_binding_shares_table(mc, NO_DUALS))
    text = " ".join(con.export_text().split())  # the caption wraps to the table's width
    assert "shadow prices are not available from SCIP_PY" in text
    assert "unknown for 2 of 2 samples" in text
    known = mc.assign(binding_families=["site_grid", ""], binding_limits=["site_grid:a", ""])
    con = Console(width=300, record=True)
    con.print(_binding_shares_table(known, "highs"))
    text = con.export_text()
    assert "50%" in text and "not available" not in text
    # a balance binds in every plan and has no limits: its empty cell read as "none"
    both = known.assign(binding_families=["site_grid;demand_balance", "demand_balance"])
    con = Console(width=300, record=True)
    con.print(_binding_shares_table(both, "highs"))
    rows = {ln.split("│")[1].strip(): ln for ln in con.export_text().splitlines() if "│" in ln}
    assert "balance or definition rows: priced in every plan, not limits" in rows["demand_balance"]
    assert "a 50%" in rows["site_grid"] and "not limits" not in rows["site_grid"]


@needs_scip
def test_plan_page_says_shadow_prices_are_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(monkeypatch)
    goto(at, "plan")
    at.selectbox(key="solve_solver").set_value(NO_DUALS)
    rerun(at)
    at.button(key="solve").click()
    rerun(at)
    goto(at, "plan")
    notes = [w.value for w in at.warning]
    assert any("shadow prices are not available from SCIP_PY" in n for n in notes), notes
    at.selectbox(key="solve_solver").set_value("highs")
    rerun(at)
    at.button(key="solve").click()
    rerun(at)
    goto(at, "plan")
    assert not any("not available" in w.value for w in at.warning)


def _mc_view(mc) -> None:  # noqa: ANN001 - AppTest runs the source alone, without imports
    from ui.risk_view import _monte_carlo_results

    _monte_carlo_results(mc)


@needs_scip
def test_risk_view_shows_the_note_on_monte_carlo_without_duals() -> None:
    at = AppTest.from_function(_mc_view, args=(_mc(NO_DUALS),), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    notes = [w.value for w in at.warning]
    assert any("Priced shares unknown: shadow prices are not available" in n for n in notes)
    at = AppTest.from_function(_mc_view, args=(_mc("highs"),), default_timeout=60)
    at.run()
    assert not at.exception and not at.warning


def test_no_note_claims_where_absent_duals_come_from() -> None:
    sp = pd.DataFrame(
        {
            "family": ["site_grid"],
            "period": ["2026Q1"],
            "key": ["a"],
            "shadow_price": [math.nan],
            "unit": ["USD/MW"],
            "slack": [0.0],
            "binding": [True],
        }
    )
    res = SimpleNamespace(
        status="optimal",
        objective_usd=1.0,
        solver="GLPK_CMD",
        duals_note="GLPK_CMD returns no duals through PuLP",
        duals_from="lp_with_integers_fixed",
        tables={"shadow_prices": sp},
    )
    text = " ".join(_printed(res).split())
    assert "shadow prices are not available from GLPK_CMD" in text
    assert "integers fixed" not in text and "zero shadow price" not in text
