"""``capacity solve``: solve scenarios, print their summaries, write one run folder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from capacity.limits import MAX_PARALLEL
from optimizer.cli.checks import (
    exit_on_interrupt,
    interrupt_ending,
    refuse_bad_files,
    refuse_bad_out,
    require_solver,
    seconds_option,
)
from optimizer.cli.options import Formulation, FormulationOpt, Objective, ObjectiveOpt, SolverOpt
from optimizer.cli.scenarios import load_scenarios, warn_unread_overrides

if TYPE_CHECKING:  # pandas stays unloaded for --help
    from rich.console import Console

    from capacity.dataset import Dataset
    from optimizer.plan.options import SolveOptions
    from optimizer.plan.plan_result import PlanResult

__all__ = ["SOLVE_HELP", "RunFolder", "solve"]

# Typer prints a paragraph's line breaks as they are in rich mode, so each
# paragraph of the help is one logical line, wrapped by the terminal.
SOLVE_HELP = (
    "Solve one or more scenarios, print a ten-second summary of each and write the "
    "Parquet report to OUT/<run_id>/scenario=<name>/ (one run folder for all of them).\n\n"
    "Exit code 0 for an optimal plan (or a feasible plan at the time limit, with a "
    "warning); 1 for bad data, an unknown scenario, an infeasible or unbounded model, "
    "no solution within the time limit, a plan that fails the independent check, a "
    "solver error or an unusable --out directory (checked before solving); 130 on "
    "Ctrl-C and 143 on SIGTERM, the scenarios finished before it kept."
)
"""The help ``capacity solve --help`` prints."""


#: ``capacity solve`` arguments and options (Typer reads the annotations).
_DataDirArg = Annotated[
    Path,
    typer.Argument(
        metavar="DATA_DIR", help="Dataset directory of CSV/Parquet tables plus scenarios.yaml."
    ),
]
_ScenarioOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--scenario",
        "-s",
        metavar="NAME",
        help="Scenario of scenarios.yaml to apply (repeatable, or 'all'); the scenarios "
        "go into one run folder.",
        show_default="neutral",
    ),
]
_WriteLpOpt = Annotated[
    Path | None,
    typer.Option(
        "--write-lp",
        metavar="FILE",
        help="Also write the model each scenario is solved as, as an LP file (readable "
        "names; with several scenarios one file each: FILE's stem + -<scenario>).",
    ),
]
_WriteMpsOpt = Annotated[
    Path | None,
    typer.Option(
        "--write-mps",
        metavar="FILE",
        help="Also write the model each scenario is solved as, as an MPS file (as --write-lp).",
    ),
]
_TimeLimitOpt = Annotated[
    float | None,
    typer.Option(
        "--time-limit",
        callback=seconds_option,
        metavar="SECONDS",
        help="Wall-clock budget (finite, > 0) of each scenario's solve, counted from the "
        "command's start for the first: build, cluster warm start, LP or MIP, the LP with the "
        "integers fixed for shadow prices and the elastic re-solve of an infeasible model all "
        "fit in it (checks and tables add a few seconds). The best feasible plan so far is "
        "reported.",
        show_default="none",
    ),
]
_ThreadsOpt = Annotated[
    int | None,
    typer.Option(
        min=1, max=MAX_PARALLEL, metavar="N", help="Solver threads.", show_default="solver's"
    ),
]
_IntegerUnitsOpt = Annotated[
    bool,
    typer.Option(
        "--integer-units",
        metavar="",
        help="Install whole deployment units (8-GPU servers, racks; MIP, slower). "
        "Shadow prices then come from the LP with the integers fixed.",
    ),
]
_ClustersOpt = Annotated[
    bool,
    typer.Option(
        "--clusters",
        metavar="",
        help="Exact training clusters (training_clusters.csv): binary 'site hosts the "
        "customer's training' per period, minimum cluster size, most sites, switch cost "
        "and minimum duration (MIP; give --time-limit, the gap is reported). Without it "
        "(and without --integer-units) the rule is only reported (fragmented training).",
    ),
]
_UnitsOpt = Annotated[
    bool,
    typer.Option(
        "--units",
        metavar="",
        help="Also write the data dictionary units.csv (table, column, type, unit) "
        "with the report. Units are always in the Parquet field metadata.",
    ),
]
_ScenariosFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--scenarios-file",
        metavar="FILE",
        help="Take the scenarios from FILE instead of DATA_DIR/scenarios.yaml: e.g. a "
        "report's scenario=<name>/inputs.yaml, which solves that report's inputs again.",
    ),
]
_VerboseOpt = Annotated[
    bool,
    typer.Option(
        "--verbose",
        "-v",
        metavar="",
        help="Print the summary in full: every customer and workload, the top 10 binding "
        "limits, the chips, commitments, training-cluster runs and the calibration's worst "
        "rows. Without it the summary fits a screen.",
    ),
]
_OutOpt = Annotated[Path, typer.Option("--out", "-o", metavar="DIR", help="Report root directory.")]
_ReportOpt = Annotated[
    bool,
    typer.Option(
        "--report/--no-report",
        metavar="",
        help="Write the Parquet report (default) or only print the summary.",
        show_default=False,
    ),
]


def solve(
    data_dir: _DataDirArg = Path("data"),
    scenario: _ScenarioOpt = None,
    solver: SolverOpt = "highs",
    time_limit: _TimeLimitOpt = None,
    threads: _ThreadsOpt = None,
    integer_units: _IntegerUnitsOpt = False,
    clusters: _ClustersOpt = False,
    formulation: FormulationOpt = Formulation.compact,
    objective: ObjectiveOpt = Objective.cost,
    units: _UnitsOpt = False,
    out: _OutOpt = Path("reports"),
    report: _ReportOpt = True,
    write_lp: _WriteLpOpt = None,
    write_mps: _WriteMpsOpt = None,
    scenarios_file: _ScenariosFileOpt = None,
    verbose: _VerboseOpt = False,
) -> None:
    """Solve scenarios, print their summaries and write the Parquet report (one run).

    The help shown by ``capacity solve --help`` is :data:`SOLVE_HELP`.
    """
    from optimizer import SolveOptions
    from optimizer.plan.deadline import process_started

    started = process_started()  # the first scenario's --time-limit counts from here
    from optimizer.cli.printing import command_console

    console = command_console()
    solver = require_solver(solver)
    if report:
        refuse_bad_out(console, out)
    files = {"--write-lp": write_lp, "--write-mps": write_mps}
    refuse_bad_files(console, files, [data_dir, scenarios_file])
    with exit_on_interrupt(console):
        prepared = load_scenarios(console, data_dir, list(scenario or ["neutral"]), scenarios_file)
    options = SolveOptions(
        solver=solver,
        time_limit_s=time_limit,
        threads=threads,
        integer_units=integer_units,
        clusters=clusters,
        formulation=formulation.value,
        objective=objective.value,
    )
    if write_lp is not None or write_mps is not None:
        with exit_on_interrupt(console):
            _write_model_files(console, prepared, write_lp, write_mps, options)
    warn_unread_overrides(console, prepared, objective.value)
    run = RunFolder(out, units, [name for name, _ in prepared]) if report else None
    raise typer.Exit(
        _solve_all(console, prepared, options, run, started, time_limit, verbose=verbose)
    )


def _write_model_files(
    console: Console,
    prepared: list[tuple[str, Dataset]],
    write_lp: Path | None,
    write_mps: Path | None,
    options: SolveOptions,
) -> None:
    """Write ``--write-lp`` / ``--write-mps``: the model each scenario is solved as.

    One scenario: the files given. Several: one file per scenario,
    ``<stem>-<scenario><suffix>`` (the scenario name percent-escaped), each holding the
    scenario's model with the solve's objective, clusters, whole units and formulation.
    """
    from urllib.parse import quote

    from optimizer.cli.pulp import export_files

    def named(path: Path | None, scenario: str) -> Path | None:
        if path is None or len(prepared) == 1:
            return path
        return path.with_name(f"{path.stem}-{quote(scenario, safe='')}{path.suffix}")

    for scenario, sds in prepared:
        export_files(
            sds,
            named(write_lp, scenario),
            named(write_mps, scenario),
            integer_units=options.integer_units,
            console=console,
            formulation=options.formulation,
            objective=options.objective,
            clusters=options.clusters,
            label=f"scenario {scenario}, {options.objective} objective",
        )


def _solve_all(
    console: Console,
    prepared: list[tuple[str, Dataset]],
    options: Any,
    run: RunFolder | None,
    started: float,
    time_limit: float | None,
    *,
    verbose: bool = False,
) -> int:
    """Solve each scenario in turn; return the worst exit code (exit 130 on Ctrl-C).

    Each scenario's ``--time-limit`` counts from ``started`` for the first and from
    the end of the one before for the others. An interrupt says where the scenarios
    finished so far are.
    """
    import time

    from optimizer.output.progress import Progress

    codes = [0]
    try:
        # several scenarios: a progress line after each (count, next one, time left)
        with Progress("solve", len(prepared), enabled=len(prepared) > 1, bar=False) as progress:
            for i, (name, sds) in enumerate(prepared):
                progress.now(name)
                deadline = None if time_limit is None else started + time_limit
                window = (started, deadline)
                code = _solve_one(console, name, sds, options, run, window, verbose)
                codes.append(code)
                later = [n for n, _ in prepared[i + 1 :]]
                progress.advance(code == 0, current=later[0] if later else "")
                started = time.monotonic()
        if run is not None:
            run.finish()
    except KeyboardInterrupt as e:
        if run is None:
            where = "no report is written with --no-report"
        elif run.path is None:
            where = "no scenario had finished, so no report was written"
        else:
            where = f"the scenarios finished so far are in {run.path}"
        ended, code = interrupt_ending(e)
        console.print(f"{ended}; {where}; re-run the same command to solve again.")
        raise typer.Exit(code) from None
    return max(codes)


class RunFolder:
    """The one run folder of a ``capacity solve``: claimed at its first report write.

    The first scenario's write claims ``<out>/<run_id>`` exclusively
    (:func:`optimizer.output.report.reserve_run_dir`: a new ID when another run holds it),
    and the run's other scenarios join that folder, so two solves into one ``--out``
    never share a folder, however close together they start.

    Parameters
    ----------
    out : Path
        Report root (``--out``).
    units : bool
        Also write ``units.csv`` (``--units``).
    requested : sequence of str
        The scenarios the run is to hold: until :meth:`finish` the folder is marked
        unfinished with them (:func:`optimizer.output.run_folder.mark_unfinished`), so
        a solve killed part way is not read as the whole run.
    """

    def __init__(self, out: Path, units: bool, requested: Sequence[str] = ()) -> None:
        self.out, self.units = out, units
        self.requested = list(requested)
        self.path: Path | None = None

    def finish(self) -> None:
        """Every requested scenario was solved (written or not): the run is whole."""
        from optimizer.output.run_folder import finish_run

        if self.path is not None:
            finish_run(self.path)

    def write(self, console: Console, result: PlanResult, scenario: str, solved: Dataset) -> int:
        """Write one scenario into the run (claiming it first); return 1 on failure, else 0.

        ``solved`` is the scenario's dataset: its overrides are recorded with the report.
        """
        from optimizer.output.atomic import ReportError
        from optimizer.output.inputs_record import solved_inputs
        from optimizer.output.report import write_report
        from optimizer.output.run_folder import scenario_dir

        run_id = None if self.path is None else self.path.name
        try:
            with console.status("Writing the Parquet report ..."):
                run_dir = write_report(
                    result,
                    self.out,
                    scenario=scenario,
                    run_id=run_id,
                    units=self.units,
                    inputs=solved_inputs(solved, scenario),
                    unfinished=self.requested if len(self.requested) > 1 else (),
                )
                # at once: stopping the spinner joins its thread, and a SIGTERM in that
                # wait said "no scenario had finished" of a scenario committed on disk
                self.path = run_dir
        except (ReportError, ValueError) as e:
            console.print(f"[red]error: report not written:[/red] {e}")
            return 1
        except KeyboardInterrupt as e:  # one after the scenario's commit names its run
            self.path = getattr(e, "committed_run_dir", None) or self.path
            raise
        sdir = scenario_dir(run_dir, scenario)
        console.print(f"Report: {sdir}  (manifest {run_dir / 'manifest.json'})")
        if self.units:
            console.print(f"Units: {run_dir / 'units.csv'}")
        return 0


def _solve_one(
    console: Console,
    name: str,
    sds: Dataset,
    options: Any,
    run: RunFolder | None,
    window: tuple[float, float | None] | None = None,
    verbose: bool = False,
) -> int:
    """Solve one scenario, print its summary, write it into the run; return its exit code.

    ``window`` is the ``time.monotonic()`` readings from which the scenario's
    ``--time-limit`` counts and by which the solve ends (None: no limit); ``verbose``
    prints the summary in full (else the brief form that fits a screen). A solve the
    limit stopped says how much of it went before the solve began.
    """
    import time

    from optimizer import solve as solve_plan
    from optimizer.output.summary import exit_code, summarize
    from optimizer.output.summary_render import render_summary

    start, deadline = window or (0.0, None)
    began = time.monotonic()
    with console.status(f"Building and solving {name!r} ({options.solver}) ..."):
        result = solve_plan(sds, options, deadline=deadline)
    summary = summarize(result, scenario=name, periods=sds.periods)
    render_summary(summary, console, verbose=verbose)
    if deadline is not None and summary.status.startswith("time_limit"):
        console.print(
            f"Of the {deadline - start:g} s --time-limit, {began - start:.1f} s went before the "
            f"solve began (start-up, reading and checking the data); the build and the solver "
            f"had {max(deadline - began, 0.0):.1f} s."
        )
    code = exit_code(summary)
    if run is not None:
        code = max(code, run.write(console, result, name, sds))
    return code
