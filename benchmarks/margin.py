"""Benchmark: the margin objective's solve time against the cost objective's, per size.

For each size of :data:`benchmarks.generate.SIZES` (``default`` is the bundled dataset's
shape, generated), and ``bundled`` (the bundled data's neutral scenario itself, whose
contract terms and migration rows the margin objective builds), solves the same dataset
once in each objective mode with HiGHS and prints the wall time of build + solve +
tables + check, and the ratio margin / cost.
Prints only; the target (margin within 1.3x of cost) is read from the output, never
asserted in a test. Run: ``python -m benchmarks.margin --sizes default,large``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence


def time_modes(size: str, repeat: int = 1) -> dict[str, float]:
    """Return the wall seconds of one solve per objective mode on a generated size.

    Parameters
    ----------
    size : str
        A name of :data:`benchmarks.generate.SIZES`, or ``bundled``.
    repeat : int
        Solves per mode (the modes alternate); the fastest of each is kept.

    Returns
    -------
    dict
        ``cost_s``, ``margin_s`` (seconds, the fastest of ``repeat``) and ``ratio``
        (margin / cost).

    Raises
    ------
    RuntimeError
        When a mode's plan is not optimal.
    """
    from benchmarks.generate import generate
    from optimizer import SolveOptions, Status, solve

    ds = _bundled() if size == "bundled" else generate(size)
    out: dict[str, float] = {"cost_s": float("inf"), "margin_s": float("inf")}
    for _ in range(repeat):  # modes alternate, so a load burst hits both alike
        for mode in ("cost", "margin"):
            t0 = time.perf_counter()
            res = solve(ds, SolveOptions(objective=mode))
            out[f"{mode}_s"] = min(out[f"{mode}_s"], time.perf_counter() - t0)
            if res.status != Status.optimal:
                raise RuntimeError(f"{size}/{mode}: {res.status} ({res.message})")
    out["ratio"] = out["margin_s"] / out["cost_s"]
    return out


def _bundled() -> object:
    """The bundled data's neutral scenario (``data/`` next to this package)."""
    from pathlib import Path

    from capacity import apply_scenario, load_dataset

    data = Path(__file__).resolve().parent.parent / "data"
    return apply_scenario(load_dataset(data), "neutral")


def main(argv: Sequence[str] | None = None) -> int:
    """Time both objective modes per size and print one line each."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--sizes", default="default,large", help="comma-separated SIZES names, or bundled"
    )
    ap.add_argument("--repeat", type=int, default=1, help="solves per mode (fastest kept)")
    args = ap.parse_args(argv)
    for size in args.sizes.split(","):
        before = os.getloadavg()[0]
        r = time_modes(size.strip(), args.repeat)
        print(
            f"{size:>8}: cost {r['cost_s']:.1f} s, margin {r['margin_s']:.1f} s, "
            f"margin/cost {r['ratio']:.2f} (1-min load {before:.1f} before, "
            f"{os.getloadavg()[0]:.1f} after)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
