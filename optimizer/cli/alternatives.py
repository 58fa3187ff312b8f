"""``capacity alternatives``: near-optimal ranges (MGA) of plan quantities under cost slacks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from capacity.limits import MAX_PARALLEL
from optimizer.cli.checks import exit_on_interrupt, refuse_bad_out, require_highs
from optimizer.cli.options import SchedulerOpt
from optimizer.cli.scenarios import load_scenarios, warn_unread_overrides

if TYPE_CHECKING:  # pandas stays unloaded for --help
    from rich.console import Console

__all__ = ["ALTERNATIVES_HELP", "RANGES_FILE", "alternatives", "report_scenario"]

ALTERNATIVES_HELP = (
    "Near-optimal alternatives: how far each plan quantity can move within a cost slack.\n\n"
    "Solves the optimum C*, adds the row cost <= (1 + slack) C* and minimises and maximises "
    "each quantity: each chip family's fleet in the last quarter (H100e), each site's built "
    "MW, on-site generation (TWh) and the Trainium share of demand served; plus --directions "
    "seeded random directions over them. One model is built; each alternative changes only "
    "the objective and the cap row and restarts HiGHS from the previous basis.\n\n"
    "--workers N splits the quantities over N local Dask worker processes (each builds the "
    "model and solves the optimum once); --scheduler sends them to an existing cluster. "
    "Without either the run stays in this process, which is as fast on two cores.\n\n"
    "Prints the ranges table and writes a run folder under --out: the optimum and every "
    "alternative plan as scenarios (the tables of 'capacity solve'), and the ranges as "
    "alternatives_ranges.parquet and .csv.\n\n"
    "Exit 0 when every alternative is found, 1 when the base plan is not optimal, a "
    "report is not written, the data are bad or the scenario unknown, 2 for a bad option."
)
"""The help ``capacity alternatives --help`` prints."""

#: File name (without suffix) of the ranges table in the run folder.
RANGES_FILE = "alternatives_ranges"

_DataArg = Annotated[Path, typer.Argument(metavar="DATA_DIR", help="Dataset directory.")]
_ScenarioOpt = Annotated[
    str, typer.Option("--scenario", "-s", metavar="NAME", help="Scenario of scenarios.yaml.")
]
_SlackOpt = Annotated[
    str, typer.Option("--slack", help="Cost slacks, comma-separated shares (0.05 = 5 %).")
]
_DirectionsOpt = Annotated[
    int, typer.Option("--directions", "-n", help="Seeded random directions per slack.")
]
_FocusOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--focus",
        metavar="NAME",
        help="Quantity group (fleet, site_build, onsite, trainium_share_of_demand) or quantity "
        "name to keep (repeatable); default all.",
        show_default=False,
    ),
]
_SeedOpt = Annotated[int, typer.Option(min=0, help="Seed of the random directions.")]
_OutOpt = Annotated[Path, typer.Option("--out", help="Report root folder.")]
_WorkersOpt = Annotated[
    int,
    typer.Option(
        "--workers",
        "-w",
        min=0,
        max=MAX_PARALLEL,
        help="Local Dask workers (0: in this process, the default).",
    ),
]


def report_scenario(name: str) -> str:
    """Folder-friendly scenario name of an alternative (``max_build_mw:s1@0.05`` -> ...).

    ``:`` becomes ``-`` and ``@`` becomes ``_slack``:
    ``max_build_mw-s1_slack0.05``.
    """
    return name.replace(":", "-").replace("@", "_slack")


def alternatives(
    data: _DataArg = Path("data"),
    scenario: _ScenarioOpt = "neutral",
    slack: _SlackOpt = "0.01,0.05",
    directions: _DirectionsOpt = 0,
    focus: _FocusOpt = None,
    seed: _SeedOpt = 0,
    out: _OutOpt = Path("reports"),
    workers: _WorkersOpt = 0,
    scheduler: SchedulerOpt = None,
) -> None:
    """Print the near-optimal ranges and write the alternative plans (see ALTERNATIVES_HELP)."""
    from optimizer.analysis.alternatives import parse_slacks

    require_highs("capacity alternatives")
    from optimizer.cli.printing import command_console

    console = command_console()
    try:
        slacks = parse_slacks(slack)
    except ValueError as e:
        raise typer.BadParameter(str(e).removeprefix("--slack: "), param_hint="'--slack'") from e
    if directions < 0:
        raise typer.BadParameter(f"{directions} is not >= 0", param_hint="'--directions'")
    if scenario == "all":
        raise typer.BadParameter("takes one scenario name, not 'all'", param_hint="'--scenario'")
    refuse_bad_out(console, out)
    with exit_on_interrupt(console):
        ((name, ds),) = load_scenarios(console, data, [scenario])
        warn_unread_overrides(console, [(name, ds)], "cost")  # alternatives: cost objective
        _check_focus(ds, list(focus or ()))
        where = (workers, scheduler)
        res = _run(console, ds, slacks, directions, list(focus or ()), seed, where)
        _print_ranges(console, res)
        code = _write(console, res, out, name, ds)
    raise typer.Exit(code)


def _check_focus(ds: Any, focus: list[str]) -> None:
    """Refuse a ``--focus`` naming no quantity (usage error, exit 2) before any build."""
    from optimizer.analysis.alternatives_quantities import check_focus

    try:
        check_focus(ds, focus)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="'--focus'") from e


def _run(
    console: Console,
    ds: Any,
    slacks: tuple[float, ...],
    directions: int,
    focus: list[str],
    seed: int,
    where: tuple[int, str | None] = (0, None),
) -> Any:
    """Run :func:`near_optimal_ranges` with a progress report; exit 1 or 2 with one line.

    ``where`` is ``(--workers, --scheduler)``: with either set the quantities are split
    over Dask workers (:func:`optimizer.analysis.alternatives_dask.ranges_on_dask`).
    """
    from rich.markup import escape

    from optimizer.analysis.alternatives import AlternativesError, near_optimal_ranges
    from optimizer.output.progress import Progress, step_callback

    console.print("Solving the optimum, then each alternative from its basis ...")
    try:
        with step_callback(lambda total: Progress("alternatives", total)) as progress:
            if where[0] or where[1]:
                res = _on_dask(console, ds, slacks, directions, focus, seed, where)
            else:
                res = near_optimal_ranges(
                    ds, slacks, directions=directions, focus=focus, seed=seed, progress=progress
                )
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="'--focus'") from e
    except AlternativesError as e:
        console.print(f"[red]error:[/red] {escape(str(e))}")
        raise typer.Exit(1) from e
    return res


def _on_dask(
    console: Console,
    ds: Any,
    slacks: tuple[float, ...],
    directions: int,
    focus: list[str],
    seed: int,
    where: tuple[int, str | None],
) -> Any:
    """Run the alternatives on Dask; a cluster that cannot be reached is one line, exit 1."""
    from rich.markup import escape

    from optimizer.analysis.alternatives_dask import ranges_on_dask
    from optimizer.analysis.dask_cluster import ClusterOptions

    workers, scheduler = where
    cluster = ClusterOptions(workers=max(workers, 1), scheduler=scheduler)
    target = f"the Dask scheduler {scheduler}" if scheduler else f"{cluster.workers} local workers"
    try:
        with console.status(f"Solving the alternatives on {escape(target)} ..."):
            return ranges_on_dask(
                ds, slacks, cluster, directions=directions, focus=focus, seed=seed
            )
    except (OSError, TimeoutError) as e:
        console.print(f"[red]error:[/red] cannot run on {escape(target)}: {e}")
        raise typer.Exit(1) from e


def _print_ranges(console: Console, res: Any) -> None:
    """Print C* and the ranges table (one row per quantity and slack)."""
    from rich.table import Table

    from optimizer.output.formatting import fmt_usd, text_column

    console.print(
        f"Optimum C* = {fmt_usd(res.optimum_usd, 3)}; {len(res.alternatives)} "
        f"alternative plans in {res.elapsed_s:,.1f} s"
    )
    table = Table("quantity", "unit", "slack \\[%]", "min", "max", "at optimum")
    for r in res.ranges.itertuples():
        # each row has its own unit: the row's three values are one column of the formatter
        unit = str(r.unit)
        name = "value_share" if unit == "share" else f"value_{unit.lower()}"
        _, cells = text_column(name, [r.min, r.max, r.at_optimum])
        table.add_row(r.quantity, unit, f"{100 * r.slack:g}", *cells)
    console.print(table)
    for note in res.notes:
        console.print(f"[yellow]note:[/yellow] {note}")


def _write(console: Console, res: Any, out: Path, scenario: str, ds: Any) -> int:
    """Write the optimum, every alternative and the ranges into one run folder; 0 or 1.

    Every plan was solved on ``ds`` (the scenario applied), so each scenario folder
    records the scenario's overrides in its ``inputs.yaml``, as ``capacity solve``'s do:
    ``read_run(folder, data=...)`` then reads each plan against the data it was solved on.
    """
    import dataclasses

    import pyarrow as pa

    from optimizer.output.atomic import ReportError, write_csv_atomic
    from optimizer.output.inputs_record import solved_inputs
    from optimizer.output.parquet_tables import write_arrow_atomic
    from optimizer.output.report import write_report
    from optimizer.output.run_folder import claimed_run_dir, default_run_id

    plans = [(scenario, res.optimum, "")]
    plans += [(report_scenario(a.name), a.result, _remade_by(a, res)) for a in res.alternatives]
    run_id = default_run_id(str(getattr(res.optimum, "dataset_hash", "") or ""))
    try:  # one run folder, removed whole when any write fails or is interrupted
        with (
            console.status("Writing the Parquet report ..."),
            claimed_run_dir(out, run_id, [name for name, _, _ in plans]) as run_dir,
        ):
            recorded = solved_inputs(ds, scenario)
            for name, result, remade_by in plans:
                inputs = dataclasses.replace(recorded, scenario=name, remade_by=remade_by)
                write_report(result, out, scenario=name, run_id=run_dir.name, inputs=inputs)
            ranges = res.ranges.assign(
                scenario_min=_scenario_of(res, "min"), scenario_max=_scenario_of(res, "max")
            )
            write_arrow_atomic(
                pa.Table.from_pandas(ranges, preserve_index=False),
                run_dir / f"{RANGES_FILE}.parquet",
            )
            write_csv_atomic(run_dir / f"{RANGES_FILE}.csv", ranges)
    except (ReportError, ValueError) as e:
        console.print(f"[red]error: report not written:[/red] {e}")
        return 1
    console.print(f"Report: {run_dir}  ({len(plans)} scenarios; ranges in {RANGES_FILE}.parquet)")
    return 0


def _remade_by(alt: Any, res: Any) -> str:
    """Return what an alternative's ``inputs.yaml`` says the plan is (no solve of it).

    ``capacity solve`` of its data gives the cost optimum, not this plan (its record read
    "Solve it again" and re-solved to the optimum, $144.6B for a plan of $147.5B).
    """
    from optimizer.output.formatting import fmt_usd

    cap = (1 + alt.slack) * float(res.optimum.objective_usd)
    return (
        f"the {'minimum' if alt.sense == 'min' else 'maximum'} of {alt.quantity} with the "
        f"discounted cost at most (1 + {alt.slack:g}) x the optimum = {fmt_usd(cap, 2)}, "
        f"made by `capacity alternatives --slack {alt.slack:g}`"
    )


def _scenario_of(res: Any, sense: str) -> list[str]:
    """Report scenario of the plan reaching each range row's ``sense`` end."""
    by = {(a.quantity, a.slack, a.sense): report_scenario(a.name) for a in res.alternatives}
    return [by[(r.quantity, r.slack, sense)] for r in res.ranges.itertuples()]
