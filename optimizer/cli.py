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

from optimizer.cluster import NO_WORKER_TIMEOUT_S, ClusterOptions, TlsFiles

if TYPE_CHECKING:  # pandas stays unloaded for --help
    from rich.console import Console

    from capacity.dataset import Dataset
    from capacity.validation import Finding
    from optimizer.solve import PlanResult
    from optimizer.sweep import SweepSpecError

app = typer.Typer(
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
    from optimizer.solvers import SolverUnavailableError, resolve_solver

    try:
        return resolve_solver(solver)
    except SolverUnavailableError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None


def require_highs(purpose: str) -> None:
    """Print one line naming ``pip install highspy`` and exit 1 when highspy cannot be imported."""
    from optimizer.solvers import SolverUnavailableError, require_highspy

    try:
        require_highspy(purpose)
    except SolverUnavailableError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None


def check_out_dir(out: Path) -> str | None:
    """Return why ``out`` cannot hold a report, or None when it can (nothing is created).

    ``out`` is usable when it is a writable directory, or when it does not exist
    yet and its nearest existing ancestor is a writable directory (so it can be
    created). Run before loading and solving, so a bad ``--out`` fails in a second.
    """
    import os
    import tempfile

    path = out.expanduser()
    for p in [*reversed(path.parents), path]:
        if p.exists() and not p.is_dir():
            return f"{p} exists and is not a directory"
    existing = next((p for p in [path, *path.parents] if p.exists()), Path("."))
    problem = None
    if not os.access(existing, os.W_OK | os.X_OK):
        problem = "is not writable"
    else:  # access() says yes to root everywhere (even /proc): try a real folder
        try:
            os.rmdir(tempfile.mkdtemp(prefix=".capacity-probe-", dir=existing))
        except OSError as exc:
            problem = f"is not writable ({exc.strerror or exc})"
    if problem is None:
        return None
    if existing == path:
        return f"directory {path} {problem}"
    return f"{path} cannot be created: directory {existing} {problem}"


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
        min=0.0,
        metavar="SECONDS",
        help="Wall-clock budget of each scenario's solve, counted from the command's start "
        "for the first: build, cluster warm start, LP or MIP, the LP with the integers fixed "
        "for shadow prices and the elastic re-solve of an infeasible model all fit in it "
        "(checks and tables add a few seconds). The best feasible plan so far is reported.",
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
    from optimizer.report import default_run_id
    from optimizer.solvers import process_started

    started = process_started()  # the first scenario's --time-limit counts from here
    console = Console() if sys.stdout.isatty() else Console(width=140)
    solver = require_solver(solver)
    if report:
        problem = check_out_dir(out)
        if problem is not None:
            console.print(f"[red]error: --out {out}:[/red] {problem}; nothing was solved.")
            raise typer.Exit(1)
    prepared = _load_scenarios(console, data_dir, list(scenario or ["neutral"]))
    if write_lp is not None or write_mps is not None:
        from optimizer.cli_pulp import export_files

        # the files hold one LP: the first scenario asked for
        sds = prepared[0][1]
        export_files(
            sds,
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
    run_id = default_run_id(prepared[0][1].hash)
    codes = [0]
    try:
        for name, sds in prepared:
            deadline = None if time_limit is None else started + time_limit
            codes.append(
                _solve_one(
                    console, name, sds, options, out if report else None, run_id, units, deadline
                )
            )
            started = time.monotonic()
    except KeyboardInterrupt:
        console.print(
            f"interrupted; the scenarios finished so far are in {out / run_id}; "
            "re-run the same command to solve again."
        )
        raise typer.Exit(130) from None
    raise typer.Exit(max(codes))


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
    out: Path | None,
    run_id: str,
    units: bool,
    deadline: float | None = None,
) -> int:
    """Solve one scenario, print its summary, write it into the run; return its exit code.

    ``deadline`` is the ``time.monotonic()`` reading by which the solve ends.
    """
    from optimizer import solve as solve_plan
    from optimizer.summary import exit_code, render_summary, summarize

    with console.status(f"Building and solving {name!r} ({options.solver}) ..."):
        result = solve_plan(sds, options, deadline=deadline)
    summary = summarize(result, scenario=name, periods=sds.periods)
    render_summary(summary, console)
    code = exit_code(summary)
    if out is not None:
        code = max(code, _write_solve_report(console, result, out, name, run_id, units))
    return code


def _write_solve_report(
    console: Console, result: PlanResult, out: Path, scenario: str, run_id: str, units: bool
) -> int:
    """Write one scenario into the run's Parquet report; return 1 when it failed, else 0."""
    from optimizer.report import ReportError, scenario_dir, write_report

    try:
        with console.status("Writing the Parquet report ..."):
            run_dir = write_report(result, out, scenario=scenario, run_id=run_id, units=units)
    except (ReportError, ValueError) as e:
        console.print(f"[red]error: report not written:[/red] {e}")
        return 1
    sdir = scenario_dir(run_dir, scenario)
    console.print(f"Report: {sdir}  (manifest {run_dir / 'manifest.json'})")
    if units:
        console.print(f"Units: {run_dir / 'units.csv'}")
    return 0


# --- capacity solvers / export-lp (owner: PuLP face; bodies in optimizer/cli_pulp.py) --
def _register_pulp_commands() -> None:
    from optimizer import cli_pulp

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
        min=0.0,
        help="Seconds to wait while no Dask worker is connected before the unfinished "
        "cases are marked failed (a lost scheduler fails them at once).",
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


def _refuse_bad_out(console: Console, out: Path) -> None:
    """Exit 1 before any work when ``out`` cannot hold the output (see check_out_dir)."""
    problem = check_out_dir(out)
    if problem is not None:
        console.print(f"[red]error: --out {out}:[/red] {problem}; nothing was solved.")
        raise typer.Exit(1)


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
    time_limit: Annotated[
        float | None,
        typer.Option("--time-limit", min=0.0, help="Solver time limit per case, seconds."),
    ] = None,
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
    from optimizer.batch import render_batch, render_invalid, run_batch
    from optimizer.sweep import SweepSpecError, check_data_dir, load_sweep

    console = Console(width=max(120, Console().width))
    tls = _tls_files(scheduler, tls_ca_file, tls_cert, tls_key)
    _refuse_bad_out(console, out)
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


@app.command()
def bench(
    sizes: Annotated[
        str,
        typer.Option("--sizes", help="Comma-separated sizes: small, default, medium, large, xl."),
    ] = "default,medium,large,xl",
    out: Annotated[Path, typer.Option("--out", help="Markdown results file.")] = Path(
        "benchmarks/RESULTS.md"
    ),
    batch_n: Annotated[
        int, typer.Option("--batch", help="Sweep size for the reuse test (0 = skip).")
    ] = 20,
    time_limit: Annotated[
        float, typer.Option("--time-limit", help="HiGHS time limit per solve (s).")
    ] = 900.0,
    xl_time_limit: Annotated[
        float, typer.Option("--xl-time-limit", help="HiGHS time limit at xl (s).")
    ] = 600.0,
) -> None:
    """Benchmark ours vs a highspy floor vs a linopy peer; write RESULTS.md.

    Needs a source checkout (the benchmarks/ folder). Exits 0 after writing the file
    (targets are printed, not asserted), 2 when benchmarks/ cannot be found.
    """
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
    "optimizer.risk.hedged_plan); at the default size it does not converge in useful time.\n\n"
    "Exit 0 when the plan is found (and within --tol of the reference), 1 otherwise."
)


@app.command(help=HEDGE_HELP)
def hedge(
    data: Annotated[Path, typer.Argument(help="Dataset directory.")] = Path("data"),
    samples: Annotated[int, typer.Option("--samples", "-n", min=1, help="Scenarios.")] = 10,
    seed: Annotated[int, typer.Option(help="Seed of the draws.")] = 0,
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
    tol: Annotated[float, typer.Option(help="Relative gap to stop at (L-shaped).")] = 1e-4,
    max_iter: Annotated[int, typer.Option("--max-iter", min=1, help="Iteration limit.")] = 300,
    reference: Annotated[
        bool, typer.Option("--reference/--no-reference", help="Also solve the extensive form.")
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Folder for iterations/per-scenario/first-stage CSV."),
    ] = None,
) -> None:
    """Solve the hedged plan (see HEDGE_HELP)."""
    from rich.console import Console

    require_highs("capacity hedge")

    from capacity.dataset import load_dataset
    from optimizer.decompose import extensive_form_objective, hedge_decomposed, sample_scenarios

    console = Console()
    names, dsets, notes = sample_scenarios(load_dataset(data), samples, seed, base=base)
    for n in notes:
        console.print(f"[yellow]note:[/yellow] {n}")
    if method == _HedgeMethod.extensive:
        obj, status, tm = extensive_form_objective(dsets, first_stage=first_stage.value)
        console.print(
            f"extensive form: {status}, RP = {obj} USD, build {tm['build']:.1f} s, "
            f"solve {tm['solve']:.1f} s"
        )
        raise typer.Exit(0 if obj is not None else 1)
    p = hedge_decomposed(
        dsets,
        names=names,
        workers=workers,
        scheduler=scheduler,
        tol=tol,
        max_iter=max_iter,
        progress=True,
        first_stage=first_stage.value,
    )
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
    ok = p.converged
    if reference:
        obj, status, _ = extensive_form_objective(dsets, first_stage=first_stage.value)
        diff = math.nan if obj is None else (p.expected_cost_usd - obj) / abs(obj)
        console.print(f"{'extensive form':>32}: {status}, {obj} USD, relative diff {diff:.2e}")
        ok = ok and obj is not None and abs(diff) <= max(tol, 1e-9)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        p.iterations.to_csv(out / "iterations.csv", index=False)
        p.per_scenario.to_csv(out / "per_scenario.csv", index=False)
        p.first_stage.to_csv(out / "first_stage.csv", index=False)
    raise typer.Exit(0 if ok else 1)
