"""The ``capacity`` command line: validate, diff, solve, batch, bench, hedge, app.

Each subcommand lives in this file as a thin wrapper over library functions; long
work shows a progress bar and exit codes mean something (0 ok, 1 data or plan error,
2 usage error).
"""

from __future__ import annotations

import math
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from optimizer.analysis.dask_cluster import NO_WORKER_TIMEOUT_S, ClusterOptions, TlsFiles
from optimizer.cli.checks import (
    check_out_dir as check_out_dir,  # re-exported: the check of every --out
)
from optimizer.cli.checks import (
    exit_on_interrupt,
    refuse_bad_files,
    refuse_bad_out,
    seconds_option,
    tolerance_option,
    wait_seconds_option,
)

if TYPE_CHECKING:  # pandas stays unloaded for --help
    from rich.console import Console

    from capacity.dataset import Dataset
    from capacity.validation import Finding
    from optimizer.analysis.sweep import SweepSpecError
    from optimizer.plan.plan_result import PlanResult


class _Commands(TyperGroup):
    """The ``capacity`` command group: Ctrl-C in any command is one line and exit 130."""

    def invoke(self, ctx: Any) -> Any:
        """Run the chosen command inside :func:`optimizer.cli.checks.exit_on_interrupt`."""
        with exit_on_interrupt():
            return super().invoke(ctx)


app = typer.Typer(
    cls=_Commands,
    name="capacity",
    help="Data-center capacity, power and supply-chain planner.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def main() -> None:
    """Entry point of the ``capacity`` console script."""
    app()


# --- commands are added below; keep each one a thin wrapper -------------------------


def app_command(port: int, address: str, headless: bool) -> list[str]:
    """Return the ``streamlit run ui/app.py`` command line of ``capacity app``."""
    import sys

    from capacity.limits import MAX_TRANSPORT_MB

    script = Path(__file__).resolve().parents[1] / "ui" / "app.py"
    cmd = [sys.executable, "-m", "streamlit", "run", str(script)]
    cmd += ["--server.port", str(port), "--server.address", address]
    cmd += ["--server.headless", "true" if headless else "false"]
    # the server carries files up to the uploader's cap (capacity.limits.MAX_TRANSPORT_MB,
    # above the app's own limit), so a file over the app's limit reaches the app and is
    # refused by name with the whole upload, instead of being dropped unseen
    cmd += ["--server.maxUploadSize", str(MAX_TRANSPORT_MB)]
    return cmd + ["--browser.gatherUsageStats", "false"]


@app.command("app")
def app_(
    port: Annotated[int, typer.Option("--port", "-p", min=1, max=65535, help="Port.")] = 8501,
    data: Annotated[
        Path | None,
        typer.Option("--data", "-d", help="Dataset directory opened first (default: data/)."),
    ] = None,
    address: Annotated[str, typer.Option(help="Address to listen on.")] = "localhost",
    headless: Annotated[
        bool, typer.Option("--headless/--browser", help="Do not open a browser tab.")
    ] = True,
) -> None:
    """Start the Streamlit app (data editor, scenarios, plan, risk, reports).

    Prints the address, then replaces this process with the Streamlit server
    (``os.execve``), so the process id that started the app is the server's: a
    SIGTERM or Ctrl+C to it stops the server. Exits 1 when ``--data`` is not a
    directory.
    """
    import os
    import sys

    env = dict(os.environ)
    if data is not None:
        if not data.is_dir():
            typer.echo(f"error: --data {data} is not a directory", err=True)
            raise typer.Exit(1)
        env["CAPACITY_DATA"] = str(data.resolve())
    typer.echo(f"Capacity planner app: http://{address}:{port}  (Ctrl+C to stop)")
    sys.stdout.flush()
    sys.stderr.flush()
    cmd = app_command(port, address, headless)
    os.execve(cmd[0], cmd, env)


DEFAULT_MAX_FINDINGS = 200
"""Findings ``capacity validate`` lists before it counts the rest (``--max-findings``)."""


def print_findings(
    findings: list[Finding],
    *,
    title: str = "Validation findings",
    limit: int = DEFAULT_MAX_FINDINGS,
) -> None:
    """Print findings as a table: severity, file, row, column, value, message.

    At most ``limit`` rows (errors first; 0 = no limit), then a line counting what was
    left out, and the totals.
    """
    from rich.console import Console
    from rich.table import Table

    from capacity.validation import left_out_text

    console = Console(width=max(120, Console().width))
    if not findings:
        console.print("[green]No findings: the data is valid.[/green]")
        return
    table = Table(title=title, show_lines=False)
    for col in ("severity", "file", "row", "column", "value", "message"):
        table.add_column(col, overflow="fold")
    order = sorted(findings, key=lambda f: (f.severity != "error", f.file, f.row or 0))
    shown = len(order) if limit <= 0 else min(limit, len(order))
    for f in order[:shown]:
        colour = "red" if f.severity == "error" else "yellow"
        table.add_row(
            f"[{colour}]{f.severity}[/{colour}]",
            f.file,
            "" if f.row is None else str(f.row),
            f.column or "",
            "" if f.value is None else repr(f.value),
            f.message,
        )
    console.print(table)
    if shown < len(order):
        console.print(left_out_text(order, shown) + "; --max-findings 0 lists them all")
    n_err = sum(f.severity == "error" for f in findings)
    console.print(f"{n_err} error(s), {len(findings) - n_err} warning(s)")


@app.command()
def validate(
    data_dir: Annotated[
        Path, typer.Argument(help="Dataset directory of CSV/Parquet tables.")
    ] = Path("data"),
    scenario: Annotated[
        list[str] | None,
        typer.Option(
            "--scenario", "-s", help="Also validate this scenario (repeatable; 'all' = every one)."
        ),
    ] = None,
    max_findings: Annotated[
        int,
        typer.Option(
            "--max-findings",
            min=0,
            help="List at most this many findings (errors first), then count the rest; 0 = all.",
        ),
    ] = DEFAULT_MAX_FINDINGS,
) -> None:
    """Validate a dataset (and scenarios): every finding with file, row, column and value.

    Exits 0 when there is no error (warnings allowed), 1 when there is.
    """
    from capacity.dataset import load_dataset, validate_directory
    from capacity.validation import DataValidationError, merge_findings

    findings = validate_directory(data_dir)
    names = list(scenario or [])
    if "all" in names and not any(f.severity == "error" for f in findings):
        try:
            names = [n for n in load_dataset(data_dir).scenarios]
        except DataValidationError:
            names = []
    for name in names:
        extra = validate_directory(data_dir, name)
        findings = merge_findings(findings, extra)
    print_findings(findings, limit=max_findings)
    checked = ", ".join(names) if names else "base data"
    if any(f.severity == "error" for f in findings):
        typer.echo(f"INVALID: {data_dir} ({checked})")
        raise typer.Exit(1)
    typer.echo(f"OK: {data_dir} is valid ({checked})")


@app.command()
def diff(
    args: Annotated[
        list[str],
        typer.Argument(
            help="[DATA_DIR] SCENARIO_A SCENARIO_B (DATA_DIR defaults to data; "
            "'base' = the data as is).",
            metavar="ARGS",
            show_default=False,
        ),
    ],
) -> None:
    """Show exactly which cells differ between two scenarios (table, key, column, old, new)."""
    from rich.console import Console
    from rich.table import Table

    from capacity.dataset import load_dataset
    from capacity.scenarios import UnknownScenarioError, apply_scenario, diff_datasets
    from capacity.validation import DataValidationError

    if len(args) not in (2, 3):
        typer.echo("usage: capacity diff [DATA_DIR] SCENARIO_A SCENARIO_B", err=True)
        raise typer.Exit(2)
    data_dir = Path(args[0]) if len(args) == 3 else Path("data")
    scenario_a, scenario_b = args[-2], args[-1]
    try:
        ds = load_dataset(data_dir)
        a, b = apply_scenario(ds, scenario_a), apply_scenario(ds, scenario_b)
    except DataValidationError as e:
        print_findings(list(e.findings))
        raise typer.Exit(1) from None
    except UnknownScenarioError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    d = diff_datasets(a, b)
    table = Table(title=f"{scenario_a} -> {scenario_b}: {len(d)} changed cell(s)")
    for col in d.columns:
        table.add_column(col, overflow="fold")
    for row in d.itertuples(index=False):
        table.add_row(*map(str, row))
    Console(width=140).print(table)


# --- capacity solve (owner: reports/summary engineer) --------------------------------


SOLVER_HELP = (
    "highs (bulk highspy), or any solver PuLP reports available here by PuLP's name "
    "(cbc = PULP_CBC_CMD); 'capacity solvers' lists them."
)


def require_solver(solver: str) -> str:
    """Return the canonical solver name, or print one line and exit 1 when unusable."""
    from optimizer.plan.solvers import SolverUnavailableError, resolve_solver

    try:
        return resolve_solver(solver)
    except SolverUnavailableError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None


def require_highs(purpose: str) -> None:
    """Print one line naming ``pip install highspy`` and exit 1 when highspy cannot be imported."""
    from optimizer.plan.solvers import SolverUnavailableError, require_highspy

    try:
        require_highspy(purpose)
    except SolverUnavailableError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None


# Typer prints a paragraph's line breaks as they are in rich mode, so each
# paragraph of the help is one logical line, wrapped by the terminal.
SOLVE_HELP = (
    "Solve one or more scenarios, print a ten-second summary of each and write the "
    "Parquet report to OUT/<run_id>/scenario=<name>/ (one run folder for all of them).\n\n"
    "Exit code 0 for an optimal plan (or a feasible plan at the time limit, with a "
    "warning); 1 for bad data, an unknown scenario, an infeasible or unbounded model, "
    "no solution within the time limit, a plan that fails the independent check, a "
    "solver error or an unusable --out directory (checked before solving)."
)


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
_SolverOpt = Annotated[str, typer.Option(help=SOLVER_HELP)]
_WriteLpOpt = Annotated[
    Path | None,
    typer.Option("--write-lp", metavar="FILE", help="Also write the LP (readable names)."),
]
_WriteMpsOpt = Annotated[
    Path | None,
    typer.Option("--write-mps", metavar="FILE", help="Also write the MPS (readable names)."),
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
    typer.Option(min=1, metavar="N", help="Solver threads.", show_default="solver's"),
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


class Formulation(StrEnum):
    """LP formulation of the operating columns (:class:`optimizer.SolveOptions`)."""

    compact = "compact"
    reference = "reference"


_FormulationOpt = Annotated[
    Formulation,
    typer.Option(
        "--formulation",
        help="compact: per-site busy chips and per-region service linked by region "
        "balances (exact: same objective and report tables, fewer columns); reference: "
        "per-site, per-customer assign columns. --clusters / --integer-units always "
        "use the reference.",
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


@app.command(help=SOLVE_HELP)
def solve(
    data_dir: _DataDirArg = Path("data"),
    scenario: _ScenarioOpt = None,
    solver: _SolverOpt = "highs",
    time_limit: _TimeLimitOpt = None,
    threads: _ThreadsOpt = None,
    integer_units: _IntegerUnitsOpt = False,
    clusters: _ClustersOpt = False,
    formulation: _FormulationOpt = Formulation.compact,
    units: _UnitsOpt = False,
    out: _OutOpt = Path("reports"),
    report: _ReportOpt = True,
    write_lp: _WriteLpOpt = None,
    write_mps: _WriteMpsOpt = None,
) -> None:
    """Solve scenarios, print their summaries and write the Parquet report (one run).

    The help shown by ``capacity solve --help`` is :data:`SOLVE_HELP`.
    """
    import sys
    import time

    from rich.console import Console

    from optimizer import SolveOptions
    from optimizer.plan.deadline import process_started

    started = process_started()  # the first scenario's --time-limit counts from here
    console = Console() if sys.stdout.isatty() else Console(width=140)
    solver = require_solver(solver)
    if report:
        refuse_bad_out(console, out)
    refuse_bad_files(console, {"--write-lp": write_lp, "--write-mps": write_mps})
    with exit_on_interrupt(console):
        prepared = _load_scenarios(console, data_dir, list(scenario or ["neutral"]))
        if write_lp is not None or write_mps is not None:
            from optimizer.cli.pulp import export_files

            # the files hold one LP: the first scenario asked for
            export_files(
                prepared[0][1],
                write_lp,
                write_mps,
                integer_units=integer_units,
                console=console,
                formulation=formulation.value,
            )
    options = SolveOptions(
        solver=solver,
        time_limit_s=time_limit,
        threads=threads,
        integer_units=integer_units,
        clusters=clusters,
        formulation=formulation.value,
    )
    run = RunFolder(out, units) if report else None
    codes = [0]
    try:
        for name, sds in prepared:
            deadline = None if time_limit is None else started + time_limit
            codes.append(_solve_one(console, name, sds, options, run, deadline))
            started = time.monotonic()
    except KeyboardInterrupt:
        if run is None:
            where = "no report is written with --no-report"
        elif run.path is None:
            where = "no scenario had finished, so no report was written"
        else:
            where = f"the scenarios finished so far are in {run.path}"
        console.print(f"interrupted; {where}; re-run the same command to solve again.")
        raise typer.Exit(130) from None
    raise typer.Exit(max(codes))


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
    """

    def __init__(self, out: Path, units: bool) -> None:
        self.out, self.units = out, units
        self.path: Path | None = None

    def write(self, console: Console, result: PlanResult, scenario: str) -> int:
        """Write one scenario into the run (claiming it first); return 1 on failure, else 0."""
        from optimizer.output.report import ReportError, scenario_dir, write_report

        run_id = None if self.path is None else self.path.name
        try:
            with console.status("Writing the Parquet report ..."):
                run_dir = write_report(
                    result, self.out, scenario=scenario, run_id=run_id, units=self.units
                )
        except (ReportError, ValueError) as e:
            console.print(f"[red]error: report not written:[/red] {e}")
            return 1
        self.path = run_dir
        sdir = scenario_dir(run_dir, scenario)
        console.print(f"Report: {sdir}  (manifest {run_dir / 'manifest.json'})")
        if self.units:
            console.print(f"Units: {run_dir / 'units.csv'}")
        return 0


def scenario_names(known: list[str], requested: list[str]) -> list[str]:
    """Return the scenarios to solve: ``all`` expands to every known one, in file order.

    Duplicates are dropped (first kept). The default ``["neutral"]`` on a dataset with
    no scenarios means the base data (``"base"``).

    Examples
    --------
    >>> scenario_names(["optimistic", "neutral"], ["all", "neutral"])
    ['optimistic', 'neutral']
    >>> scenario_names([], ["neutral"])
    ['base']
    """
    if requested == ["neutral"] and not known:
        return ["base"]
    names: list[str] = []
    for name in requested:
        for n in known if name == "all" else [name]:
            if n not in names:
                names.append(n)
    return names


def _load_scenarios(
    console: Console, data_dir: Path, requested: list[str]
) -> list[tuple[str, Dataset]]:
    """Load ``data_dir`` and apply each requested scenario (exit 1 on bad data or a name).

    Every scenario is applied before anything is solved, so an unknown name or a
    scenario whose data does not validate stops the command in seconds. A dataset
    without scenarios is solved as its base data when the default ``neutral`` was
    asked for.
    """
    from capacity.dataset import load_dataset
    from capacity.scenarios import UnknownScenarioError, apply_scenario
    from capacity.validation import DataValidationError

    try:
        with console.status(f"Loading {data_dir} ..."):
            ds = load_dataset(data_dir)
        if ds.warnings:
            console.print(
                f"[yellow]{len(ds.warnings)} data warning(s); run "
                f"'capacity validate {data_dir}' to see them.[/yellow]"
            )
        if requested == ["neutral"] and not ds.scenarios:
            console.print(f"[yellow]{data_dir} defines no scenarios: solving its base data.")
        out = []
        for name in scenario_names(list(ds.scenarios), requested):
            with console.status(f"Applying scenario {name!r} ..."):
                out.append((name, apply_scenario(ds, name)))
    except DataValidationError as e:
        print_findings(list(e.findings), title=f"Data errors in {data_dir}")
        raise typer.Exit(1) from None
    except UnknownScenarioError as e:
        console.print(f"[red]error:[/red] {e}")
        raise typer.Exit(1) from None
    return out


def _solve_one(
    console: Console,
    name: str,
    sds: Dataset,
    options: Any,
    run: RunFolder | None,
    deadline: float | None = None,
) -> int:
    """Solve one scenario, print its summary, write it into the run; return its exit code.

    ``deadline`` is the ``time.monotonic()`` reading by which the solve ends.
    """
    from optimizer import solve as solve_plan
    from optimizer.output.summary import exit_code, render_summary, summarize

    with console.status(f"Building and solving {name!r} ({options.solver}) ..."):
        result = solve_plan(sds, options, deadline=deadline)
    summary = summarize(result, scenario=name, periods=sds.periods)
    render_summary(summary, console)
    code = exit_code(summary)
    if run is not None:
        code = max(code, run.write(console, result, name))
    return code


# --- capacity solvers / export-lp (owner: PuLP face; bodies in optimizer/cli/pulp.py) --
def _register_pulp_commands() -> None:
    from optimizer.cli import pulp as cli_pulp

    app.command("solvers")(cli_pulp.solvers)
    app.command("export-lp")(cli_pulp.export_lp)


_register_pulp_commands()


# --- capacity batch (owner: risk/batch engineer) -------------------------------------


_SecureOption = Annotated[
    bool | None,
    typer.Option(
        "--secure/--insecure",
        help="Local cluster over TLS with a temporary certificate (default: on when "
        "'cryptography' is installed; --secure requires it, --insecure turns it off).",
    ),
]
_TlsCaOption = Annotated[
    str | None,
    typer.Option("--tls-ca-file", help="With --scheduler: CA file of a TLS Dask cluster."),
]
_TlsCertOption = Annotated[
    str | None, typer.Option("--tls-cert", help="With --scheduler: client certificate.")
]
_TlsKeyOption = Annotated[
    str | None, typer.Option("--tls-key", help="With --scheduler: client private key.")
]
_WorkerTimeoutOption = Annotated[
    float,
    typer.Option(
        "--worker-timeout",
        callback=wait_seconds_option,
        help="Seconds to wait while no Dask worker is connected before the unfinished "
        "cases are marked failed. A reconnecting client is waited for (up to 120 s, said on "
        "stderr) and its cancelled cases resubmitted; only a scheduler that is gone fails them.",
    ),
]


_CaseTimeLimitOpt = Annotated[
    float | None,
    typer.Option(
        "--time-limit",
        callback=seconds_option,
        help="Solver time limit per case, seconds (finite, > 0).",
    ),
]


def _tls_files(
    scheduler: str | None, ca_file: str | None, cert: str | None, key: str | None
) -> TlsFiles | None:
    """TLS files of ``--scheduler`` (None: use the Dask configuration); exit 2 on misuse."""
    if ca_file is None and cert is None and key is None:
        return None
    if not scheduler:
        typer.echo("error: --tls-ca-file/--tls-cert/--tls-key need --scheduler", err=True)
        raise typer.Exit(2)
    if ca_file is None:
        typer.echo("error: --tls-cert/--tls-key need --tls-ca-file", err=True)
        raise typer.Exit(2)
    return TlsFiles(ca_file, cert, key)


def _print_sweep_error(console: Console, e: SweepSpecError) -> None:
    """Print an invalid sweep's findings: file, line, field, message."""
    from rich.markup import escape

    console.print(f"[red]error:[/red] invalid sweep {escape(e.file)}")
    for f in e.findings:
        where = f.file + ("" if f.row is None else f" line {f.row}")
        field = f"{f.column}: " if f.column else ""
        console.print(f"  {escape(where)}: {escape(field + f.message)}")


def other_sweeps_note(out: Path, names: list[str]) -> str:
    """Return the note printed when a batch folder also holds other sweeps' cases."""
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return (
        f"[yellow]note:[/yellow] {out} also holds {len(names)} case(s) of another sweep "
        f"({shown}); they are kept in the manifest and summary, and globs over the folder "
        "read them too. Use another --out to keep sweeps apart."
    )


def _cluster_options(secure: bool | None, tls: Any, worker_timeout: float) -> ClusterOptions:
    """Dask cluster options of ``capacity batch`` (``--secure/--insecure`` unset: auto)."""
    return ClusterOptions(
        security="auto" if secure is None else ("tls" if secure else "none"),
        tls=tls,
        worker_timeout_s=worker_timeout,
    )


@app.command()
def batch(
    sweep: Annotated[Path, typer.Argument(help="Sweep YAML: data, scenarios, grid, monte_carlo.")],
    workers: Annotated[
        int,
        typer.Option("--workers", "-w", min=1, help="Worker processes of the local Dask cluster."),
    ] = 2,
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler", help="Address of an existing Dask scheduler (tcp://host:port)."
        ),
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder.")] = Path("batch_out"),
    solver: Annotated[str, typer.Option(help=SOLVER_HELP)] = "highs",
    time_limit: _CaseTimeLimitOpt = None,
    reuse: Annotated[
        bool,
        typer.Option(
            "--reuse/--no-reuse", help="Patch the base model per case instead of rebuilding."
        ),
    ] = True,
    formulation: _FormulationOpt = Formulation.compact,
    secure: _SecureOption = None,
    tls_ca_file: _TlsCaOption = None,
    tls_cert: _TlsCertOption = None,
    tls_key: _TlsKeyOption = None,
    worker_timeout: _WorkerTimeoutOption = NO_WORKER_TIMEOUT_S,
) -> None:
    """Solve every case of a sweep on Dask; write <out>/scenario=<case>/<table>.parquet.

    Finished cases are skipped on a re-run. Every case's data is validated before any
    solve: cases whose overrides make the data invalid are listed (file, row, column,
    value, message), recorded as failed, and the valid cases still run. Exits 0 when
    every case has a plan, 1 when some case failed or the sweep/data is invalid.
    """
    from rich.console import Console
    from rich.markup import escape

    from capacity.validation import DataValidationError
    from optimizer import SolveOptions
    from optimizer.analysis.batch import render_batch, render_invalid, run_batch
    from optimizer.analysis.sweep import SweepSpecError, check_data_dir, load_sweep

    console = Console(width=max(120, Console().width))
    tls = _tls_files(scheduler, tls_ca_file, tls_cert, tls_key)
    refuse_bad_out(console, out)
    try:
        spec = check_data_dir(load_sweep(sweep))
        result = run_batch(
            spec,
            out,
            workers=workers,
            scheduler=scheduler,
            options=SolveOptions(require_solver(solver), time_limit, formulation=formulation),
            reuse=reuse,
            on_invalid=lambda bad: render_invalid(bad, console),
            cluster=_cluster_options(secure, tls, worker_timeout),
            on_other_sweeps=lambda names: console.print(other_sweeps_note(out, names)),
        )
    except (OSError, TimeoutError, RuntimeError) as e:
        target = f"the Dask scheduler {scheduler}" if scheduler else "a local Dask cluster"
        console.print(f"[red]error:[/red] cannot start the batch on {escape(target)}: {e}")
        raise typer.Exit(1) from None
    except SweepSpecError as e:
        _print_sweep_error(console, e)
        raise typer.Exit(1) from None
    except DataValidationError as e:
        print_findings(list(e.findings))
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        console.print("interrupted; re-run the same command to resume.")
        raise typer.Exit(130) from None
    render_batch(result, console)
    raise typer.Exit(0 if result.n_failed == 0 else 1)


# --- capacity bench (owner: benchmark engineer) --------------------------------------
# benchmarks/ is a plain folder beside the installed packages (not installed): the
# command finds it next to this checkout and runs ``python -m benchmarks.run`` there.


BENCH_SIZES = ("small", "default", "medium", "large", "xl")
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


@app.command()
def bench(
    sizes: Annotated[
        str,
        typer.Option(
            "--sizes",
            callback=sizes_option,
            help="Comma-separated sizes: small, default, medium, large, xl.",
        ),
    ] = "default,medium,large,xl",
    out: Annotated[Path, typer.Option("--out", help="Markdown results file.")] = Path(
        "benchmarks/RESULTS.md"
    ),
    batch_n: Annotated[
        int, typer.Option("--batch", min=0, help="Sweep size for the reuse test (0 = skip).")
    ] = 20,
    time_limit: Annotated[
        float,
        typer.Option(
            "--time-limit", callback=seconds_option, help="HiGHS time limit per solve (s)."
        ),
    ] = 900.0,
    xl_time_limit: Annotated[
        float,
        typer.Option(
            "--xl-time-limit", callback=seconds_option, help="HiGHS time limit at xl (s)."
        ),
    ] = 600.0,
) -> None:
    """Benchmark ours vs a highspy floor vs a linopy peer; write RESULTS.md.

    Needs a source checkout (the benchmarks/ folder). Exits 0 after writing the file
    (targets are printed, not asserted), 1 when ``--out`` cannot be written (checked
    first), 2 for a bad option or when benchmarks/ cannot be found.
    """
    from rich.console import Console

    refuse_bad_files(Console(stderr=True), {"--out": out})
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    if not (root / "benchmarks" / "run.py").exists():
        typer.echo(f"error: no benchmarks/ folder next to {root} (needs a checkout)", err=True)
        raise typer.Exit(2)
    import importlib.util

    if importlib.util.find_spec("linopy") is None:
        typer.echo(
            "error: the benchmark's peer model needs linopy: pip install -e '.[bench]'", err=True
        )
        raise typer.Exit(2)
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


# --- capacity hedge (owner: scale engineer) ------------------------------------------


class _HedgeMethod(StrEnum):
    lshaped = "lshaped"
    extensive = "extensive"


class _FirstStage(StrEnum):
    capacity = "capacity"
    full = "full"


HEDGE_HELP = (
    "Hedged (two-stage) plan over N Monte Carlo scenarios, with VSS and EVPI.\n\n"
    "Scenarios: every default tornado parameter (supply, grid delay, demand, PUE, WUE, "
    "energy price, migration derate) drawn uniformly in its range on top of BASE.\n\n"
    "--method lshaped (default) solves it by an L-shaped decomposition whose scenario "
    "subproblems run on Dask (a local cluster of --workers processes, or --scheduler); "
    "--method extensive solves the one extensive-form LP (memory grows with N). "
    "--reference also solves the extensive form and prints the difference.\n\n"
    "--first-stage capacity (default) shares only the facility decisions (build, liquid, "
    "retrofit) across the scenarios: chip production and installs are recourse, chosen per "
    "scenario. --first-stage full also shares production and installs (the plan of "
    "optimizer.analysis.risk.hedged_plan); at the default size it does not converge in useful "
    "time.\n\n"
    "Options and --out are checked before anything is solved. A sampled scenario with no "
    "plan on its own is explained as 'capacity solve' explains an infeasible plan.\n\n"
    "Exit 0 when the plan is found (and within --tol of the reference), 1 otherwise, 2 "
    "for a bad option."
)


@app.command(help=HEDGE_HELP)
def hedge(
    data: Annotated[Path, typer.Argument(help="Dataset directory.")] = Path("data"),
    samples: Annotated[int, typer.Option("--samples", "-n", min=1, help="Scenarios.")] = 10,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the draws.")] = 0,
    base: Annotated[str, typer.Option(help="Named scenario the draws start from.")] = "neutral",
    method: Annotated[_HedgeMethod, typer.Option(help="Solution method.")] = _HedgeMethod.lshaped,
    workers: Annotated[
        int, typer.Option("--workers", "-w", min=0, help="Local Dask workers (0: no Dask).")
    ] = 2,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="Existing Dask scheduler (tcp://host:port).")
    ] = None,
    first_stage: Annotated[
        _FirstStage, typer.Option("--first-stage", help="Decisions shared by the scenarios.")
    ] = _FirstStage.capacity,
    tol: Annotated[
        float,
        typer.Option(
            callback=tolerance_option, help="Relative gap to stop at (L-shaped), in (0, 1)."
        ),
    ] = 1e-4,
    max_iter: Annotated[int, typer.Option("--max-iter", min=1, help="Iteration limit.")] = 300,
    reference: Annotated[
        bool, typer.Option("--reference/--no-reference", help="Also solve the extensive form.")
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Root folder of the CSV tables (iterations, per-scenario, first-stage), "
            "written to a new OUT/hedge-<run_id>/ per run, so runs never overwrite each other.",
        ),
    ] = None,
) -> None:
    """Solve the hedged plan (see HEDGE_HELP)."""
    from rich.console import Console

    require_highs("capacity hedge")

    console = Console()
    if out is not None:
        refuse_bad_out(console, out)
    with exit_on_interrupt(console):
        names, dsets = _hedge_scenarios(console, data, base, samples, seed)
        if method == _HedgeMethod.extensive:
            rp = _extensive_rp(console, names, dsets, first_stage.value)
            raise typer.Exit(0 if rp is not None else 1)
        p = _hedge_plan(
            console,
            names,
            dsets,
            workers=workers,
            scheduler=scheduler,
            tol=tol,
            max_iter=max_iter,
            progress=True,
            first_stage=first_stage.value,
        )
        ok = _print_hedge(console, p, tol)
        if reference:
            rp = _extensive_rp(console, names, dsets, first_stage.value, p.expected_cost_usd)
            ok = ok and rp is not None and abs(p.expected_cost_usd - rp) <= max(tol, 1e-9) * abs(rp)
    code = 0 if ok else 1
    if out is not None:
        code = max(code, _write_hedge_csv(console, p, out, dsets[0].hash))
    raise typer.Exit(code)


def _hedge_scenarios(
    console: Console, data: Path, base: str, samples: int, seed: int
) -> tuple[list[str], list[Dataset]]:
    """Load ``data``, apply ``--base`` as ``capacity solve`` applies ``--scenario``, draw.

    An unknown ``--base`` stops with the solve command's "unknown scenario, did you
    mean" message (exit 1); bad data prints its findings (exit 1); ``--base all``
    is a usage error (exit 2).
    """
    from optimizer.analysis.decompose import sample_scenarios

    if base == "all":
        raise typer.BadParameter("takes one scenario name, not 'all'", param_hint="'--base'")
    ((_, start),) = _load_scenarios(console, data, [base])
    names, dsets, notes = sample_scenarios(start, samples, seed, base=None)
    for n in notes:
        console.print(f"[yellow]note:[/yellow] {n}")
    if not dsets:
        console.print("[red]error:[/red] every draw made the data invalid; nothing was solved.")
        raise typer.Exit(1)
    return names, dsets


def _hedge_plan(console: Console, names: list[str], dsets: list[Dataset], **kw: Any) -> Any:
    """Run :func:`optimizer.analysis.decompose.hedge_decomposed`; exit 1 with a message on failure.

    A scenario with no plan even on its own is explained as ``capacity solve``
    explains an infeasible plan (its own solve and elastic re-solve); a Dask cluster
    that cannot start, or a decomposition that finds no operable plan, is one line.
    """
    from rich.markup import escape

    from optimizer.analysis.decompose import ScenarioInfeasibleError, hedge_decomposed

    try:
        return hedge_decomposed(dsets, names=names, **kw)
    except ScenarioInfeasibleError as e:
        console.print(
            f"[red]error:[/red] scenario {e.scenario} has no plan even on its own "
            f"({e.status}), so no plan can hedge it. Its own solve:"
        )
        if not _explain_alone(console, e.scenario, dsets[e.position]):
            console.print(
                f"solved alone as 'capacity solve' solves it, {e.scenario} has a plan: the "
                "decomposition's subproblem failed numerically; try --method extensive."
            )
    except (OSError, TimeoutError) as e:
        target = f"the Dask scheduler {kw.get('scheduler')}" if kw.get("scheduler") else "Dask"
        console.print(f"[red]error:[/red] cannot run the hedge on {escape(target)}: {e}")
    except RuntimeError as e:
        console.print(f"[red]error:[/red] no hedged plan was found: {escape(str(e))}")
    raise typer.Exit(1)


def _explain_alone(console: Console, name: str, ds: Dataset) -> bool:
    """Solve one scenario as ``capacity solve`` does and print its summary when it fails.

    Returns True when the scenario has no acceptable plan on its own (its summary,
    with the elastic re-solve's "limits that had to give", was printed).
    """
    from optimizer import SolveOptions
    from optimizer import solve as solve_plan
    from optimizer.output.summary import exit_code, render_summary, summarize

    with console.status(f"Solving scenario {name!r} alone ..."):
        result = solve_plan(ds, SolveOptions())
    summary = summarize(result, scenario=name, periods=ds.periods)
    if exit_code(summary) == 0:
        return False
    render_summary(summary, console)
    return True


def _extensive_rp(
    console: Console,
    names: list[str],
    dsets: list[Dataset],
    first_stage: str,
    lshaped_usd: float | None = None,
) -> float | None:
    """Solve the extensive form and print RP (or why there is none); return RP in USD.

    With ``lshaped_usd`` (``--reference``) the relative difference to it is printed.
    When the extensive form is infeasible, the first scenario with no plan on its own
    is explained as ``capacity solve`` explains it; if each has one, the message says
    that no single first stage operates them all.
    """
    from optimizer.analysis.decompose import extensive_form_objective

    with console.status("Solving the extensive form ..."):
        obj, status, tm = extensive_form_objective(dsets, first_stage=first_stage)
    took = f"build {tm['build']:.1f} s, solve {tm['solve']:.1f} s"
    if obj is not None and math.isfinite(obj):
        console.print(f"extensive form: {status}, RP = {obj:,.0f} USD, {took}")
        if lshaped_usd is not None:
            diff = (lshaped_usd - obj) / max(abs(obj), 1.0)
            console.print(f"{'relative diff to L-shaped':>32}: {diff:.2e}")
        return obj
    console.print(
        f"[red]extensive form: {status}, no RP (expected cost): no plan found[/red], {took}"
    )
    if status == "infeasible":
        for name, ds in zip(names, dsets, strict=True):
            if _explain_alone(console, name, ds):
                console.print(f"[red]scenario {name} has no plan even on its own.[/red]")
                return None
        console.print(
            f"every scenario has a plan on its own, but no one first stage ({first_stage}) "
            "operates them all."
        )
    return None


def _print_hedge(console: Console, p: Any, tol: float) -> bool:
    """Print the hedged plan's bounds, VSS, EVPI and gap; return whether it converged."""
    rows = [
        ("expected cost RP (upper bound)", p.expected_cost_usd),
        ("lower bound", p.lower_bound_usd),
        ("wait-and-see WS", p.wait_and_see_usd),
        (f"EEV ({p.ev_problem} plan)", p.eev_usd),
        ("VSS = EEV - RP", p.vss_usd),
        ("EVPI = RP - WS", p.evpi_usd),
    ]
    for label, v in rows:
        console.print(f"{label:>32}: {v:,.0f} USD")
    console.print(
        f"{'gap':>32}: {p.gap_rel:.2e} ({'converged' if p.converged else 'NOT converged'} "
        f"at tol {tol:g}, {len(p.iterations) - 1} iterations, {p.timings_s['total']:.1f} s)"
    )
    return bool(p.converged)


def _write_hedge_csv(console: Console, p: Any, out: Path, dataset_hash: str) -> int:
    """Write the hedge's three CSV tables into a new run folder under ``out``.

    The folder ``<out>/hedge-<run_id>`` is claimed exclusively
    (:func:`optimizer.output.report.claim_run_dir`: a new ID when another run holds it) and
    each table is written to a temporary name and renamed, so two hedges into one
    ``--out`` keep both results and a crash leaves no half file. Returns 1 (with a
    message) when the folder or a table cannot be written, else 0.
    """
    from optimizer.output.report import ReportError, claim_run_dir, default_run_id, write_csv_atomic

    try:
        run_dir = claim_run_dir(out, "hedge-" + default_run_id(dataset_hash))
        for name in ("iterations", "per_scenario", "first_stage"):
            write_csv_atomic(run_dir / f"{name}.csv", getattr(p, name))
    except (OSError, ReportError) as e:
        console.print(f"[red]error: --out {out}:[/red] the tables were not written: {e}")
        return 1
    console.print(f"Tables: {run_dir}/ (iterations.csv, per_scenario.csv, first_stage.csv)")
    return 0
