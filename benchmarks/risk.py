"""Benchmark of risk aversion in the hedged plan: the CVaR frontier and a chance row.

Run from the repository root::

    python -m benchmarks.risk [--data data] [--samples 30] [--weights 0,0.1,0.25,0.5,1,2]
        [--alpha 0.9] [--chance commitment:openai:0.9] [--fresh 30] [--skip-frontier]

On Monte Carlo draws of the dataset (base ``neutral``, seed 0, the capacity first stage,
as ``capacity hedge``): the L-shaped frontier over the weights on one master and one set of
Dask workers (:func:`optimizer.analysis.decompose.hedge_frontier`), then the chance row
solved by the CVaR approximation and exactly (the MIP), each with its achieved
probability in sample and over ``--fresh`` new draws. Prints each point's expected cost,
CVaR, iterations and time, each chance run's cost, gap, probabilities and time, and the
1-minute load average before and after (the machine is shared). Nothing is asserted:
times go here, not in tests.
"""

from __future__ import annotations

import argparse
import os
import time


def main() -> None:
    """Run the benchmark and print its figures."""
    from capacity.dataset import load_dataset
    from capacity.scenarios import apply_scenario
    from optimizer.analysis.decompose import hedge_frontier
    from optimizer.analysis.hedge_chance import chance_plan
    from optimizer.analysis.hedge_risk import frontier_table, parse_weights
    from optimizer.analysis.monte_carlo import sample_scenarios
    from optimizer.plan.chance import parse_chance

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data")
    ap.add_argument("--samples", type=int, default=30)
    ap.add_argument("--weights", default="0,0.1,0.25,0.5,1,2")
    ap.add_argument("--alpha", type=float, default=0.9)
    ap.add_argument("--chance", default="commitment:openai:0.9")
    ap.add_argument("--fresh", type=int, default=30)
    ap.add_argument("--skip-frontier", action="store_true")
    a = ap.parse_args()
    print(f"load before: {os.getloadavg()[0]:.1f}")
    start = apply_scenario(load_dataset(a.data), "neutral")
    names, dsets, _ = sample_scenarios(start, a.samples, 0, base=None)
    if not a.skip_frontier:
        t0 = time.perf_counter()
        plans = hedge_frontier(
            dsets,
            parse_weights(a.weights),
            a.alpha,
            names=names,
            tol=1e-4,
            max_iter=300,
            first_stage="capacity",
        )
        table = frontier_table(plans)
        print(f"frontier, {a.samples} samples, alpha {a.alpha:g}: {time.perf_counter() - t0:.1f} s")
        for p, r in zip(plans, table.itertuples(), strict=True):
            print(
                f"  L={r.risk_weight:g}: E {r.expected_cost_usd:.6e} CVaR {r.cvar_usd:.6e} "
                f"gap {r.gap_rel:.1e} iterations {len(p.iterations) - 1} "
                f"({p.timings_s['iterations']:.1f} s)"
            )
    _, fresh, _ = sample_scenarios(start, a.fresh, 1_000_003, base=None)
    for method in ("cvar", "exact"):
        spec = parse_chance(a.chance, method)
        t0 = time.perf_counter()
        c = chance_plan(dsets, spec, names=names, fresh=fresh, first_stage="capacity")
        gap = "-" if c.mip_gap is None else f"{c.mip_gap:.1e}"
        print(
            f"chance {a.chance} {method}: {c.status}, E {c.expected_cost_usd or float('nan'):.6e}, "
            f"gap {gap}, in sample {c.in_sample:.3f}, out of sample {c.out_of_sample}, "
            f"{time.perf_counter() - t0:.1f} s"
        )
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
