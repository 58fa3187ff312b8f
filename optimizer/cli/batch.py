"""``capacity batch``: solve every case of a sweep on Dask, its cluster and TLS options."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from capacity.limits import MAX_PARALLEL
from optimizer.analysis.dask_cluster import NO_WORKER_TIMEOUT_S, ClusterOptions
from optimizer.analysis.dask_remote import TlsFiles
from optimizer.cli.checks import (
    interrupt_ending,
    refuse_bad_out,
    require_solver,
    seconds_option,
    wait_seconds_option,
)
from optimizer.cli.options import (
    Formulation,
    FormulationOpt,
    Objective,
    ObjectiveOpt,
    SchedulerOpt,
    SolverOpt,
)
from optimizer.cli.printing import print_findings

if TYPE_CHECKING:  # pandas stays unloaded for --help
    from rich.console import Console

    from optimizer.analysis.sweep_errors import SweepSpecError

__all__ = ["batch", "other_sweeps_note"]

#: ``capacity batch`` arguments and options (Typer reads the annotations).
_SweepArg = Annotated[
    Path,
    typer.Argument(metavar="SWEEP", help="Sweep YAML: data, scenarios, grid, monte_carlo."),
]
_WorkersOpt = Annotated[
    int,
    typer.Option(
        "--workers",
        "-w",
        min=1,
        max=MAX_PARALLEL,
        help="Worker processes of the local Dask cluster.",
    ),
]
_OutOpt = Annotated[Path, typer.Option("--out", "-o", help="Output folder.")]
_CaseTimeLimitOpt = Annotated[
    float | None,
    typer.Option(
        "--time-limit",
        callback=seconds_option,
        help="Solver time limit per case, seconds (finite, > 0).",
    ),
]
_ReuseOpt = Annotated[
    bool,
    typer.Option("--reuse/--no-reuse", help="Patch the base model per case instead of rebuilding."),
]
_SecureOption = Annotated[
    bool | None,
    typer.Option(
        "--secure/--insecure",
        help="Local cluster over TLS with a temporary certificate (default: on when "
        "'cryptography' is installed; --secure requires it, --insecure turns it off).",
    ),
]
#: A TLS file: it must exist and be readable (a usage error naming it otherwise).
_TLS_FILE = {"exists": True, "dir_okay": False, "readable": True}
_TlsCaOption = Annotated[
    Path | None,
    typer.Option(
        "--tls-ca-file", help="With --scheduler: CA file of a TLS Dask cluster.", **_TLS_FILE
    ),
]
_TlsCertOption = Annotated[
    Path | None,
    typer.Option("--tls-cert", help="With --scheduler: client certificate.", **_TLS_FILE),
]
_TlsKeyOption = Annotated[
    Path | None,
    typer.Option("--tls-key", help="With --scheduler: client private key.", **_TLS_FILE),
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


def _tls_files(
    scheduler: str | None, ca_file: Path | None, cert: Path | None, key: Path | None
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
    return TlsFiles(str(ca_file), *(None if f is None else str(f) for f in (cert, key)))


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


def batch(
    sweep: _SweepArg,
    workers: _WorkersOpt = 2,
    scheduler: SchedulerOpt = None,
    out: _OutOpt = Path("batch_out"),
    solver: SolverOpt = "highs",
    time_limit: _CaseTimeLimitOpt = None,
    reuse: _ReuseOpt = True,
    formulation: FormulationOpt = Formulation.compact,
    objective: ObjectiveOpt = Objective.cost,
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
    every case has its plan in the folder, 1 when some case failed, another batch wrote
    a case of the same name meanwhile, or the sweep/data is invalid.
    """
    from rich.markup import escape

    from capacity.validation import DataValidationError
    from optimizer import SolveOptions
    from optimizer.analysis.batch import run_batch
    from optimizer.analysis.batch_render import render_batch, render_invalid
    from optimizer.analysis.sweep_errors import SweepSpecError
    from optimizer.analysis.sweep_read import check_data_dir, load_sweep
    from optimizer.cli.printing import command_console

    console = command_console()
    tls = _tls_files(scheduler, tls_ca_file, tls_cert, tls_key)
    _refuse_bad_batch_out(console, out)
    settings = dict[str, Any](formulation=formulation, objective=objective.value)
    # before the try: its typer.Exit is a RuntimeError, which read as a Dask start error
    options = SolveOptions(require_solver(solver), time_limit, **settings)
    try:  # SIGTERM stops it as Ctrl-C does (the command group's sigterm_as_interrupt)
        spec = check_data_dir(load_sweep(sweep))
        result = run_batch(
            spec,
            out,
            workers=workers,
            scheduler=scheduler,
            options=options,
            reuse=reuse,
            on_invalid=lambda bad: render_invalid(bad, console),
            cluster=_cluster_options(secure, tls, worker_timeout),
            on_other_sweeps=lambda names: console.print(other_sweeps_note(out, names)),
            on_warnings=lambda found: _print_unread(console, found),
        )
    except typer.Exit:  # a RuntimeError too: the command's own exit, said already
        raise
    except (OSError, TimeoutError, RuntimeError) as e:
        console.print(f"[red]error:[/red] {escape(_start_error(e, scheduler))}")
        raise typer.Exit(1) from None
    except (SweepSpecError, DataValidationError) as e:
        _print_input_error(console, e)
        raise typer.Exit(1) from None
    except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM (Terminated): the same clean stop
        ended, code = interrupt_ending(e)
        console.print(f"{ended}; re-run the same command to resume.")
        raise typer.Exit(code) from None
    render_batch(result, console)
    raise typer.Exit(0 if result.n_failed == 0 and result.n_replaced == 0 else 1)


def _print_input_error(console: Any, e: Exception) -> None:
    """Print a sweep file's errors, or the data's findings."""
    from optimizer.analysis.sweep_errors import SweepSpecError

    if isinstance(e, SweepSpecError):
        _print_sweep_error(console, e)
    else:
        print_findings(list(getattr(e, "findings", ())))


def _refuse_bad_batch_out(console: Any, out: Path) -> None:
    """Exit 1 when ``out`` cannot hold a batch, or is another command's run folder.

    A batch writes its cases into ``out`` itself: into a run folder it replaced that
    run's plans of the same name (an alternatives optimum by a plan of other data, with
    no warning on read). Such a folder has a ``manifest.json`` and no batch manifest.
    """
    from optimizer.analysis.batch_folder import BATCH_MANIFEST

    refuse_bad_out(console, out)

    if (out / "manifest.json").is_file() and not (out / BATCH_MANIFEST).is_file():
        console.print(
            f"[red]error: --out {out}:[/red] is the run folder of another command (it has "
            "a manifest.json and no batch manifest); give the batch a folder of its own. "
            "Nothing was solved."
        )
        raise typer.Exit(1)


def _start_error(e: BaseException, scheduler: str | None) -> str:
    """Return the message of an error that stopped the batch: a folder file, or Dask."""
    from optimizer.output.atomic import ReportError

    if isinstance(e, ReportError):  # a file of the batch folder (manifest, summary)
        return f"{e}; re-run the same command to resume."
    target = f"the Dask scheduler {scheduler}" if scheduler else "a local Dask cluster"
    return f"cannot start the batch on {target}: {e}"


def _print_unread(console: Any, found: list[Any]) -> None:
    """Print the cases' overrides their objective does not read (one line each, at most 10)."""
    from rich.markup import escape

    for f in found[:10]:
        console.print(f"[yellow]warning:[/yellow] {escape(f.file)}: {escape(f.message)}")
    if len(found) > 10:
        console.print(f"[yellow]warning:[/yellow] ... and {len(found) - 10} more such overrides")
