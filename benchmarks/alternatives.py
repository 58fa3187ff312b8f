"""Benchmark of the near-optimal alternatives: one built model re-solved warm vs rebuilt cold.

Run from the repository root::

    python -m benchmarks.alternatives [--data data] [--scenario neutral] [--slack 0.01]
        [--focus fleet] [--focus site_build ...]

Solves :func:`optimizer.analysis.alternatives.near_optimal_ranges` on the dataset (the
product path: one model, the cost-cap row added once, each alternative changing only the
column costs and the cap's bound on a retained HiGHS instance from the previous basis),
then solves the same alternatives again the naive way: a fresh ``build_model`` and a cold
HiGHS solve for each. Prints, per alternative, the warm and the cold solve time and both
values of the quantity (they must agree to solver tolerance), then the totals and the
1-minute load average (the machine is shared). Nothing is asserted: times go here, not
in tests.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any


def _cold(ds: Any, c_star: float, alt: Any, quantities: dict[str, Any]) -> tuple[float, float]:
    """Rebuild the model, add the cap, solve cold; return (seconds, quantity value)."""
    from optimizer.analysis.alternatives import _at, cap_rhs, objective_vector, with_cost_cap
    from optimizer.analysis.alternatives_quantities import quantity_value
    from optimizer.plan.model import build_model
    from optimizer.plan.options import SolveOptions
    from optimizer.plan.raw_solve import run_solver

    t0 = time.perf_counter()
    model = with_cost_cap(build_model(ds))
    q = quantities[alt.quantity]
    objective = objective_vector(q, model.n_variables, alt.sense)
    capped = _at(model, objective, cap_rhs(c_star, alt.slack))
    raw = run_solver(capped, SolveOptions())
    value = float("nan") if raw.x is None else quantity_value(q, raw.x)
    return time.perf_counter() - t0, value


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print its lines."""
    from capacity.dataset import load_dataset
    from capacity.scenarios import apply_scenario
    from optimizer.analysis.alternatives import near_optimal_ranges
    from optimizer.analysis.alternatives_quantities import default_quantities
    from optimizer.plan.model import build_model

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="data")
    p.add_argument("--scenario", default="neutral", help="named scenario ('': the base data)")
    p.add_argument("--slack", type=float, default=0.01)
    p.add_argument("--focus", action="append", default=None)
    a = p.parse_args(argv)
    ds: Any = load_dataset(a.data)
    if a.scenario:
        ds = apply_scenario(ds, a.scenario)
    print(f"load average (1 min) before: {os.getloadavg()[0]:.2f}")
    t0 = time.perf_counter()
    res = near_optimal_ranges(ds, [a.slack], focus=a.focus or ["site_build"])
    warm_total = time.perf_counter() - t0
    quantities = {q.name: q for q in default_quantities(build_model(ds))}
    print(f"optimum {res.optimum_usd:,.0f} USD; {len(res.alternatives)} alternatives")
    print(
        "alternative | warm solve s | tables+check s | cold build+solve s | warm value | cold value"
    )
    cold_total = 0.0
    for alt in res.alternatives:
        tm = alt.result.timings_s
        cold_s, cold_v = _cold(ds, res.optimum_usd, alt, quantities)
        cold_total += cold_s
        print(
            f"{alt.name} | {tm['solve']:.2f} | {tm['results'] + tm['check']:.2f} | "
            f"{cold_s:.2f} | {alt.value:,.6g} | {cold_v:,.6g}"
        )
    print(
        f"total: product path {warm_total:.1f} s (optimum, every alternative, its tables and "
        f"checker); cold build+solve of the alternatives alone {cold_total:.1f} s"
    )
    print(f"load average (1 min) after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
