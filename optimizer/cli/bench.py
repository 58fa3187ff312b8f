"""``capacity bench``: run the checkout's benchmarks (``python -m benchmarks.run``).

benchmarks/ is a plain folder beside the installed packages (not installed): the
command finds it next to this checkout and runs the benchmark there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from optimizer.cli.checks import refuse_bad_files, seconds_option

__all__ = ["BENCH_OUT", "BENCH_SIZES", "bench", "sizes_option"]

BENCH_SIZES = ("small", "default", "medium", "large", "xl", "xxl", "xxl96")
"""Size names of ``capacity bench --sizes`` (the keys of ``benchmarks.generate.SIZES``)."""


def sizes_option(value: str) -> str:
    """Check ``--sizes``: a comma-separated list of :data:`BENCH_SIZES` names.

    Raises
    ------
    typer.BadParameter
        For an empty list or an unknown name (with a "did you mean" hint).
    """
    from capacity.validation import suggest

    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise typer.BadParameter(f"give one or more of {', '.join(BENCH_SIZES)}")
    for n in names:
        if n not in BENCH_SIZES:
            raise typer.BadParameter(
                f"unknown size {n!r}; the sizes are {', '.join(BENCH_SIZES)}."
                + suggest(n, BENCH_SIZES)
            )
    return value


#: ``capacity bench`` options (Typer reads the annotations).
_SizesOpt = Annotated[
    str,
    typer.Option(
        "--sizes",
        callback=sizes_option,
        help="Comma-separated sizes: small, default, medium, large, xl, xxl (4x xl's sites), "
        "xxl96 (twice xl's sites over a doubled horizon).",
    ),
]
BENCH_OUT = Path("bench_out/RESULTS.md")
"""Default ``capacity bench --out``: an ignored folder, so a run never rewrites the
tracked benchmarks/RESULTS.md unless that file is given (``--out benchmarks/RESULTS.md``)."""

_OutOpt = Annotated[
    Path,
    typer.Option(
        "--out",
        help="Markdown results file. Give benchmarks/RESULTS.md to update the checkout's "
        "recorded results.",
    ),
]
_BatchOpt = Annotated[
    int, typer.Option("--batch", min=0, help="Sweep size for the reuse test (0 = skip).")
]
_TimeLimitOpt = Annotated[
    float,
    typer.Option("--time-limit", callback=seconds_option, help="HiGHS time limit per solve (s)."),
]
_XlTimeLimitOpt = Annotated[
    float,
    typer.Option("--xl-time-limit", callback=seconds_option, help="HiGHS time limit at xl (s)."),
]


def bench(
    sizes: _SizesOpt = "default,medium,large,xl",
    out: _OutOpt = BENCH_OUT,
    batch_n: _BatchOpt = 20,
    time_limit: _TimeLimitOpt = 900.0,
    xl_time_limit: _XlTimeLimitOpt = 600.0,
) -> None:
    """Benchmark ours vs a highspy floor vs a linopy peer; write the results file.

    Needs a source checkout (the benchmarks/ folder). Exits 0 after writing the file
    (targets are printed, not asserted), 1 when --out cannot be written (checked
    first), 2 for a bad option or when benchmarks/ cannot be found.
    """
    from rich.console import Console

    refuse_bad_files(Console(stderr=True), {"--out": out})
    import subprocess
    import sys

    root = _checkout_root()
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.run",
        "--sizes",
        sizes,
        "--out",
        str(out.resolve()),
        "--batch",
        str(batch_n),
        "--time-limit",
        str(time_limit),
        "--xl-time-limit",
        str(xl_time_limit),
    ]
    raise typer.Exit(subprocess.call(cmd, cwd=root))


def _checkout_root() -> Path:
    """Return the checkout that holds benchmarks/; exit 2 without it or without linopy."""
    import importlib.util

    root = Path(__file__).resolve().parents[2]
    if not (root / "benchmarks" / "run.py").exists():
        typer.echo(f"error: no benchmarks/ folder next to {root} (needs a checkout)", err=True)
        raise typer.Exit(2)
    if importlib.util.find_spec("linopy") is None:
        typer.echo(
            "error: the benchmark's peer model needs linopy: pip install -e '.[bench]'", err=True
        )
        raise typer.Exit(2)
    return root
