"""``capacity replan``: rolling quarterly replanning along sampled truth paths, with regret."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from capacity.limits import MAX_PARALLEL
from optimizer.cli.checks import refuse_bad_out, require_highs
from optimizer.cli.options import SchedulerOpt
from optimizer.cli.scenarios import load_scenarios

if TYPE_CHECKING:  # pandas stays unloaded for --help
    from collections.abc import Callable

    from rich.console import Console

__all__ = ["REPLAN_HELP", "replan"]

REPLAN_HELP = (
    "Rolling replanning: for each of N sampled truth paths, replan every --every quarters "
    "on the then-current forecast, lock the decisions that are due, reveal the next "
    "quarter's outcomes and replan; report the realised cost and served share per path "
    "against perfect foresight on the same path (regret) and its spread.\n\n"
    "Truth paths: supply (wafers, CoWoS, HBM), grid dates and demand per customer drawn "
    "uniformly in their Monte Carlo ranges on top of BASE (the hedge's draws).\n\n"
    "--revision random-walk (default): each forecast is a random walk with --volatility "
    "(share of the range per replan) that ends on the truth; 0 is perfect foresight. "
    "--revision FILE.csv: your forecasts (columns quarter, parameter, level[, path]).\n\n"
    "--lock KIND:N makes a decision kind firm N quarters ahead (kinds: build, liquid, "
    "retrofit, produce, install, grid_upgrade, onsite_build, onsite_retire, "
    "flexible_upgrade); decisions of passed quarters are always locked.\n\n"
    "--every N > 1 replans less often but locks orders made on forecast supply and grid: when "
    "the truth brings less, the locks give way (a chip order is delivered short, an install "
    "waits for power); the shortfall is reported per path (locks given way, "
    "delivered_short_* columns) and its cost is in the regret. With --revision random-walk "
    "the volatility is per replan, so fewer replans start from a forecast nearer the truth: "
    "regrets of different --every values are not comparable that way (give the forecasts "
    "in a file to compare them); --every must be below the horizon's quarters.\n\n"
    "Exit 0 when every path has a realised plan, 1 otherwise (or bad data, an unknown "
    "scenario, a drawn level the data cannot take), 2 for a bad option."
)
"""The help ``capacity replan --help`` prints."""

_DataArg = Annotated[Path, typer.Argument(metavar="DATA_DIR", help="Dataset directory.")]
_PathsOpt = Annotated[int, typer.Option("--paths", "-n", help="Truth paths (>= 1).")]
_SeedOpt = Annotated[int, typer.Option(help="Seed of the truth draws and revisions.")]
_BaseOpt = Annotated[str, typer.Option(help="Named scenario the draws start from.")]
_RevisionOpt = Annotated[
    str, typer.Option(help="Forecast revision: 'random-walk' or a forecast CSV file.")
]
_VolOpt = Annotated[
    float, typer.Option(help="Random-walk volatility per replan (share of each range).")
]
_EveryOpt = Annotated[int, typer.Option(help="Quarters between replans (1: quarterly).")]
_LockOpt = Annotated[
    list[str] | None,
    typer.Option("--lock", metavar="KIND[:N]", help="KIND[:N] firm N quarters ahead (repeat)."),
]
_WorkersOpt = Annotated[
    int,
    typer.Option(
        "--workers", "-w", min=0, max=MAX_PARALLEL, help="Local Dask workers (0: no Dask)."
    ),
]
_OutOpt = Annotated[
    Path | None,
    typer.Option("--out", help="Report root: the run folder OUT/replan-<run_id>/ is written."),
]


def replan(
    data: _DataArg = Path("data"),
    paths: _PathsOpt = 20,
    seed: _SeedOpt = 0,
    base: _BaseOpt = "neutral",
    revision: _RevisionOpt = "random-walk",
    volatility: _VolOpt = 0.05,
    every: _EveryOpt = 1,
    lock: _LockOpt = None,
    workers: _WorkersOpt = 2,
    scheduler: SchedulerOpt = None,
    out: _OutOpt = None,
) -> None:
    """Run the rolling replan (see REPLAN_HELP)."""
    from optimizer.analysis.replan_setup import ReplanInputError

    require_highs("capacity replan")
    from optimizer.cli.printing import command_console

    console = command_console()
    if out is not None:
        refuse_bad_out(console, out)
    try:
        kw = _settings(console, data, base, paths, seed, revision, volatility, every, lock)
    except ReplanInputError as e:
        console.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2) from None
    result = _run(console, kw, workers, scheduler)
    ok = _print(console, result)
    code = 0 if ok else 1
    if out is not None:
        code = max(code, _write(console, result, out, kw["ds"].hash))
    raise typer.Exit(code)


def _settings(
    console: Console,
    data: Path,
    base: str,
    paths: int,
    seed: int,
    revision: str,
    volatility: float,
    every: int,
    lock: list[str] | None,
) -> dict[str, Any]:
    """Check the options (ReplanInputError naming the bad one), load the data."""
    from optimizer.analysis.replan_setup import (
        RandomWalkRevision,
        ReplanInputError,
        draw_truths,
        parse_locks,
        read_forecast_file,
        replan_epochs,
        revealed_parameters,
    )

    if paths < 1:
        raise ReplanInputError(f"--paths: {paths} is not a number of paths (need >= 1)")
    replan_epochs(1, every)
    locks = parse_locks(lock or [])
    rw = RandomWalkRevision(volatility, seed)
    if base == "all":
        raise ReplanInputError("--base takes one scenario name, not 'all'")
    ((_, ds),) = load_scenarios(console, data, [base])
    n = len(ds.periods)
    if n < 2:  # "use --every below 1" asked for the impossible
        raise ReplanInputError(f"replanning needs a horizon of at least 2 quarters; {data} has {n}")
    if every >= n:  # one plan, on the last forecast: the truth, regret 0 by construction
        raise ReplanInputError(
            f"--every: {every} quarters covers the whole {n}-quarter horizon, so there would "
            "be one plan, made on the last forecast, which is the truth (regret 0 by "
            f"construction); use --every below {n}"
        )
    draw_truths(revealed_parameters(ds), 1, seed)  # checks the seed
    model: Any = rw
    if revision != "random-walk":
        model = read_forecast_file(revision, ds.periods, revealed_parameters(ds), paths)
        _note_off_epoch_rows(console, model.table, ds.periods, every, revision)
    return {"ds": ds, "paths": paths, "seed": seed, "every": every, "locks": locks, "rev": model}


def _note_off_epoch_rows(
    console: Console, table: Any, periods: Any, every: int, source: str
) -> None:
    """Say which forecast quarters no replan is made in (their rows apply at the next one).

    With ``--every 2`` a row for 2026Q2 was applied at the 2026Q3 replan without a word.
    """
    from optimizer.analysis.replan_setup import replan_epochs

    made = {periods[t] for t in replan_epochs(len(periods), every)}
    off = sorted({str(q) for q in table["quarter"]} - made)
    if off:
        console.print(
            f"[yellow]{source}: no replan is made in {', '.join(off[:6])}"
            f"{' ...' if len(off) > 6 else ''} (--every {every}); those rows apply at the "
            "next replan[/]"
        )


def _run(console: Console, kw: dict[str, Any], workers: int, scheduler: str | None) -> Any:
    """Run the paths with a progress report; exit 1 with one line when Dask fails."""
    from rich.markup import escape

    from optimizer.analysis.replan_run import rolling_replan
    from optimizer.analysis.replan_setup import ReplanInputError
    from optimizer.output.progress import Progress

    try:
        with Progress("replan", kw["paths"], enabled=True, bar=True) as bar:
            return rolling_replan(
                kw["ds"],
                kw["paths"],
                seed=kw["seed"],
                every=kw["every"],
                revision=kw["rev"],
                locks=kw["locks"],
                workers=workers,
                scheduler=scheduler,
                progress=bar,
            )
    except (OSError, TimeoutError) as e:
        target = f"the Dask scheduler {scheduler}" if scheduler else "Dask"
        console.print(f"[red]error:[/red] cannot run the paths on {escape(target)}: {e}")
    except ReplanInputError as e:  # a drawn level the data cannot take
        console.print(f"[red]error:[/red] {escape(str(e))}")
    raise typer.Exit(1)


def _money(paths: Any) -> Callable[[float], str]:
    """Return a formatter of the table's money in one scale (``$1.23B``, ``$4.56M``, ``$789``).

    The scale is the largest finite realised or perfect-foresight cost's
    (:func:`optimizer.output.formatting.money_scale`): a tiny dataset's plan of $9.6M
    read "0.01" and its regrets "0.00" in a fixed USD bn.
    """
    from optimizer.output.formatting import fmt_cell, money_scale

    cols = ("realised_cost_usd", "perfect_foresight_cost_usd", "regret_usd")
    values = [abs(float(v)) for c in cols for v in paths[c] if math.isfinite(float(v))]
    div, _, fmt = money_scale(max(values, default=0.0))
    # a path without a plan has no cost (NaN in the table; it printed "inf")
    return lambda x: "n/a" if not math.isfinite(x) else fmt_cell(x / div, fmt)


def _share(v: float) -> str:
    """Return a served share as ``97.5%``; ``n/a`` for a path without a plan (not ``nan%``)."""
    return f"{v:.1%}" if math.isfinite(v) else "n/a"


def _print(console: Console, result: Any) -> bool:
    """Print the regret table and its spread; True when every path has a realised plan."""
    from rich.table import Table

    usd = _money(result.paths)
    t = Table(title="Regret per path (discounted USD)")
    cols = ("path", "status", "realised", "perfect foresight", "regret", "served", "PF served")
    for c in (*cols, "locks given way"):
        t.add_column(c, justify="right")
    for r in result.paths.itertuples():
        t.add_row(
            str(r.path),
            str(r.status),
            usd(r.realised_cost_usd),
            usd(r.perfect_foresight_cost_usd),
            usd(r.regret_usd),
            _share(r.served_share),
            _share(r.perfect_foresight_served_share),
            str(getattr(r, "locks_given_way", 0)),
        )
    console.print(t)
    s = result.spread.set_index("outcome")
    for o, label in (("regret_usd", "regret"), ("regret_share", "regret / PF cost")):
        row = s.loc[o]
        fmt = usd if o == "regret_usd" else (lambda v: f"{v:.2%}" if math.isfinite(v) else "n/a")
        console.print(
            f"{label:>18}: p10 {fmt(row.p10)}  p50 {fmt(row.p50)}  p90 {fmt(row.p90)}  "
            f"mean {fmt(row['mean'])}  (n={int(row.n)})"
        )
    _print_give_way(console, result.paths)
    _print_without_plan(console, result.paths)
    st = result.settings
    console.print(
        f"{st['epochs']} replans per path every {st['every']} quarter(s), revision "
        f"{st['revision']}, {st['seconds']:.0f} s"
    )
    return bool((result.paths["status"] == "optimal").all())


def _print_give_way(console: Console, paths: Any) -> None:
    """One line on the locks the truth could not honour (nothing when every lock held)."""
    if "locks_given_way" not in paths or not int(paths["locks_given_way"].sum()):
        return
    short = [c for c in paths.columns if c.startswith("delivered_short_")]
    digits = {c: 0 if c.endswith("chips") else 1 for c in short}  # whole chips, MW to 0.1
    totals = ", ".join(
        f"{c.removeprefix('delivered_short_')} {paths[c].sum():,.{digits[c]}f}"
        for c in short
        if paths[c].sum() > 1e-6
    )
    n = int((paths["locks_given_way"] > 0).sum())
    console.print(
        f"locks given way on {n} path(s): {int(paths['locks_given_way'].sum())} locks, "
        f"delivered short {totals} (the cost is in the regret)"
    )


def _print_without_plan(console: Console, paths: Any) -> None:
    """One line on replans whose forecast had no plan (nothing when every one had)."""
    if "replans_without_plan" not in paths or not int(paths["replans_without_plan"].sum()):
        return
    col = paths["replans_without_plan"]
    n = int((col > 0).sum())
    console.print(
        f"[yellow]{int(col.sum())} replan(s) on {n} path(s) found no plan on their forecast:[/]"
        " the last plan's decisions fell due there, and the next replan went on "
        "(replans_without_plan in the regret table)"
    )


def _write(console: Console, result: Any, out: Path, dataset_hash: str) -> int:
    """Write the run folder; 1 with a message when it cannot be written."""
    from optimizer.analysis.replan_folder import write_replan
    from optimizer.output.atomic import ReportError

    try:
        run_dir = write_replan(result, out, dataset_hash)
    except (OSError, ReportError) as e:
        console.print(f"[red]error: --out {out}:[/red] the tables were not written: {e}")
        return 1
    console.print(f"Run folder: {run_dir}/ (replan/path=*/regret.parquet, replan_regret.html)")
    return 0
