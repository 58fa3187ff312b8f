"""The figures docs/guide/risk-aversion.md quotes match fresh runs on the bundled data.

Slow (the machine's hedges take minutes): on failure the message prints the fresh
figures, to paste into the page after another change moves the data.
"""

from __future__ import annotations

import pytest

from capacity.dataset import load_dataset
from capacity.scenarios import apply_scenario
from optimizer.analysis.monte_carlo import sample_scenarios
from tests.conftest import ROOT

PAGE = ROOT / "docs" / "guide" / "risk-aversion.md"


def _draws(n: int, seed: int = 0) -> tuple[list[str], list[object]]:
    start = apply_scenario(load_dataset(ROOT / "data"), "neutral")
    names, dsets, _ = sample_scenarios(start, n, seed, base=None)
    return names, dsets


@pytest.mark.long
def test_the_pages_extensive_frontier_is_a_fresh_run() -> None:
    from optimizer.analysis.hedge_risk import extensive_frontier

    _, dsets = _draws(3)
    t = extensive_frontier(dsets, [0, 0.5, 1, 2], 0.9, first_stage="capacity")
    page = PAGE.read_text(encoding="utf-8")
    lines = [
        f"{r.risk_weight:g} | {r.expected_cost_usd / 1e9:,.3f} | {r.cvar_usd / 1e9:,.3f}"
        for r in t.itertuples()
    ]
    missing = [ln for ln in lines if ln not in page]
    assert not missing, "the page's frontier is stale; fresh rows (L | E | CVaR):\n" + "\n".join(
        lines
    )


@pytest.mark.long
def test_the_pages_chance_row_is_a_fresh_run() -> None:
    from optimizer.analysis.hedge_chance import chance_plan
    from optimizer.plan.chance import parse_chance

    names, dsets = _draws(5)
    _, fresh = _draws(10, 1_000_003)
    c = chance_plan(
        dsets,
        parse_chance("commitment:openai:0.9"),
        names=names,
        fresh=fresh,
        first_stage="capacity",
    )
    page = PAGE.read_text(encoding="utf-8")
    want = [
        f"expected cost: {c.expected_cost_usd:,.0f} USD",
        f"achieved in sample: {c.in_sample:.3f} over 5 scenarios",
        f"achieved out of sample: {c.out_of_sample:.3f} over 10 new draws",
    ]
    missing = [w for w in want if w not in page]
    assert not missing, "the page's chance run is stale; fresh lines:\n" + "\n".join(want)


@pytest.mark.long
def test_the_pages_lshaped_frontier_is_a_fresh_run_within_its_tolerance() -> None:
    import re

    from optimizer.analysis.decompose import hedge_frontier
    from optimizer.analysis.hedge_risk import DEFAULT_FRONTIER_WEIGHTS, frontier_table

    names, dsets = _draws(5)
    plans = hedge_frontier(
        dsets, DEFAULT_FRONTIER_WEIGHTS, 0.9, names=names, tol=1e-4, first_stage="capacity"
    )
    t = frontier_table(plans)
    page = PAGE.read_text(encoding="utf-8")
    block = page[page.index("--samples 5 --risk cvar --frontier") :]
    rows = re.findall(
        r"^\| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| [\d.]+ \| converged \|$", block, re.M
    )
    fresh = "\n".join(
        f"| {r.risk_weight:g} | {r.expected_cost_usd / 1e9:.3f} | {r.cvar_usd / 1e9:.3f} | "
        f"{r.risk_objective_usd / 1e9:.3f} | {r.status} |"
        for r in t.itertuples()
    )
    assert len(rows) == len(t), "fresh rows:\n" + fresh
    for (lam, e, cv), r in zip(rows, t.itertuples(), strict=True):
        assert float(lam) == r.risk_weight, fresh
        # the L-shaped plan is within its gap (1e-4) of the optimum: compare at 1e-3
        assert float(e) * 1e9 == pytest.approx(r.expected_cost_usd, rel=1e-3), fresh
        assert float(cv) * 1e9 == pytest.approx(r.cvar_usd, rel=1e-3), fresh


@pytest.mark.long
def test_the_pages_30_draw_frontier_is_a_fresh_run_within_its_tolerance() -> None:
    """The 30-draw L-shaped frontier of the default weights (about an hour on two cores)."""
    import re

    from optimizer.analysis.decompose import hedge_frontier
    from optimizer.analysis.hedge_risk import DEFAULT_FRONTIER_WEIGHTS, frontier_table

    names, dsets = _draws(30)
    plans = hedge_frontier(
        dsets, DEFAULT_FRONTIER_WEIGHTS, 0.9, names=names, tol=1e-4, first_stage="capacity"
    )
    t = frontier_table(plans)
    page = PAGE.read_text(encoding="utf-8")
    block = page[page.index("--samples 30 --risk cvar --frontier --out") :]
    rows = re.findall(
        r"^\| ([\d.]+) \| ([\d.]+) \| [\d.]+ \| ([\d.]+) \| [\d.]+ \| converged \|$", block, re.M
    )
    fresh = "\n".join(
        f"| {r.risk_weight:g} | {r.expected_cost_usd / 1e9:.3f} | {r.var_usd / 1e9:.3f} | "
        f"{r.cvar_usd / 1e9:.3f} | {r.risk_objective_usd / 1e9:.3f} | {r.status} |"
        for r in t.itertuples()
    )
    assert len(rows) == len(t) >= 4, "fresh rows:\n" + fresh
    for (lam, e, cv), r in zip(rows, t.itertuples(), strict=True):
        assert float(lam) == r.risk_weight, fresh
        assert float(e) * 1e9 == pytest.approx(r.expected_cost_usd, rel=1e-3), fresh
        assert float(cv) * 1e9 == pytest.approx(r.cvar_usd, rel=1e-3), fresh
