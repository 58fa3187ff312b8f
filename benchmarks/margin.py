"""Benchmark: the margin objective's solve time against the cost objective's, per size.

For each size of :data:`benchmarks.generate.SIZES` (``default`` is the bundled dataset's
shape, generated), solves the same dataset once in each objective mode with HiGHS and
prints the wall time of build + solve + tables + check, and the ratio margin / cost.
Prints only; the target (margin within 1.3x of cost) is read from the output, never
asserted in a test. Run: ``python -m benchmarks.margin --sizes default,large``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence


def time_modes(size: str) -> dict[str, float]:
    """Return the wall seconds of one solve per objective mode on a generated size.

    Parameters
    ----------
    size : str
        A name of :data:`benchmarks.generate.SIZES`.

    Returns
    -------
    dict
        ``cost_s``, ``margin_s`` (seconds) and ``ratio`` (margin / cost).

    Raises
    ------
    RuntimeError
        When a mode's plan is not optimal.
    """
    from benchmarks.generate import generate
    from optimizer import SolveOptions, Status, solve

    ds = generate(size)
    out: dict[str, float] = {}
    for mode in ("cost", "margin"):
        t0 = time.perf_counter()
        res = solve(ds, SolveOptions(objective=mode))
        out[f"{mode}_s"] = time.perf_counter() - t0
        if res.status != Status.optimal:
            raise RuntimeError(f"{size}/{mode}: {res.status} ({res.message})")
    out["ratio"] = out["margin_s"] / out["cost_s"]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Time both objective modes per size and print one line each."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="default,large", help="comma-separated SIZES names")
    args = ap.parse_args(argv)
    for size in args.sizes.split(","):
        r = time_modes(size.strip())
        print(
            f"{size:>8}: cost {r['cost_s']:.1f} s, margin {r['margin_s']:.1f} s, "
            f"margin/cost {r['ratio']:.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
