"""``capacity solvers`` and ``capacity export-lp``: the PuLP face of the command line.

Registered on the ``capacity`` Typer app by :mod:`optimizer.cli.commands`. Imports of
pandas and the model are deferred so ``--help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer


def solvers() -> None:
    """List every solver --solver accepts here (highs bulk + PuLP's available ones) with version.

    Exits 0. PuLP's names are the solvers PuLP finds installed and usable.
    """
    from rich.console import Console
    from rich.table import Table

    from optimizer.plan.solvers import available_solvers, solver_label

    table = Table(title="Solvers available on this machine")
    for col in ("--solver", "solver (as the app names it)", "version", "duals"):
        table.add_column(col)
    for s in available_solvers():
        table.add_row(s.name, solver_label(s.name), s.version, "yes" if s.duals else "no")
    Console(width=120).print(table)


def export_files(
    sds: Any,
    lp: Path | None,
    mps: Path | None,
    *,
    integer_units: bool = False,
    console: Any = None,
    formulation: str = "compact",
    objective: str = "cost",
    clusters: bool = False,
    label: str = "",
) -> None:
    """Build the model of a (scenario-applied) dataset and write its LP and/or MPS file.

    Parameters
    ----------
    sds : Dataset
        Validated dataset with the scenario applied.
    lp, mps : Path, optional
        Files to write (readable names, see :mod:`optimizer.plan.pulp_io`).
    integer_units : bool
        Keep the install columns integer (MIP) in the files.
    console : rich.console.Console, optional
        Where to print the paths written.
    formulation : {"compact", "reference"}
        LP formulation (:func:`optimizer.plan.model.build_model`).
    objective : {"cost", "margin"}
        The objective the files hold (the margin objective's LP minimises minus the
        margin).
    clusters : bool
        Exact training clusters (binary cluster columns), as the solve has them.
    label : str
        Said in the "Wrote" line (the scenario and objective the file holds).

    Raises
    ------
    typer.Exit
        Code 1 (after one line on stderr) when a file cannot be written.

    Notes
    -----
    Each file is written to a temporary name beside it and renamed once both are
    complete, so an interrupt or a full disk never leaves a half LP/MPS file.
    """
    from optimizer.plan.model import build_model

    model = build_model(
        sds,
        integer_units=integer_units,
        clusters=clusters,
        formulation=formulation,
        objective=objective,
    )
    try:
        _write_atomic(model, lp, mps)
    except OSError as e:
        typer.echo(f"error: cannot write {e.filename or lp or mps}: {e.strerror or e}", err=True)
        raise typer.Exit(1) from None
    for path in (lp, mps):
        if path is not None and console is not None:
            what = f"{label}, " if label else ""
            console.print(
                f"Wrote {path} ({what}{model.n_variables} variables, "
                f"{model.n_constraints} constraints)"
            )


def _write_atomic(model: Any, lp: Path | None, mps: Path | None) -> None:
    """Write ``lp`` / ``mps`` through temporary names beside them, then rename both."""
    import os
    import uuid

    from optimizer.plan.pulp_io import write_problem

    tag = f".tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    temps = {p: p.parent / f".{p.name}{tag}" for p in (lp, mps) if p is not None}
    try:
        write_problem(model, lp=temps.get(lp) if lp else None, mps=temps.get(mps) if mps else None)
        for final, tmp in temps.items():
            os.replace(tmp, final)
    except OSError as e:  # name the file asked for, not its temporary name
        final = next((f for f, t in temps.items() if str(t) == str(e.filename)), e.filename)
        raise OSError(e.errno, e.strerror, str(final)) from e
    finally:
        for tmp in temps.values():
            tmp.unlink(missing_ok=True)


def export_lp(
    data_dir: Annotated[Path, typer.Argument(metavar="DATA_DIR", help="Dataset directory.")] = Path(
        "data"
    ),
    scenario: Annotated[
        str, typer.Option("--scenario", "-s", metavar="NAME", help="Scenario to apply.")
    ] = "neutral",
    lp: Annotated[
        Path | None, typer.Option("--lp", metavar="FILE", help="CPLEX LP file to write.")
    ] = None,
    mps: Annotated[
        Path | None, typer.Option("--mps", metavar="FILE", help="Free MPS file to write.")
    ] = None,
    integer_units: Annotated[
        bool, typer.Option("--integer-units", help="Whole deployment units (MIP).")
    ] = False,
) -> None:
    """Write the plan's LP and/or MPS file with readable names, without solving.

    Names come from the domain keys, e.g. build(new_carlisle,2027Q2); the objective
    constant (initial fleet energy) is a column objective_constant fixed at 1,
    so any solver reading the file reports the objective in USD. Exits 1 on bad
    data, an unknown scenario or a file that cannot be written (checked before the
    build), 2 when neither --lp nor --mps is given or one names a file of DATA_DIR.
    """
    from rich.console import Console

    from capacity.dataset import load_dataset
    from capacity.scenarios import UnknownScenarioError, apply_scenario
    from capacity.validation import DataValidationError
    from optimizer.cli.checks import refuse_bad_files

    if lp is None and mps is None:
        typer.echo("error: give --lp FILE and/or --mps FILE", err=True)
        raise typer.Exit(2)
    console = Console(width=140)
    refuse_bad_files(console, {"--lp": lp, "--mps": mps}, [data_dir])  # before loading
    try:
        ds = load_dataset(data_dir)
        if scenario == "neutral" and not ds.scenarios:
            scenario = "base"
        sds = apply_scenario(ds, scenario)
    except DataValidationError as e:
        for f in e.findings:
            where = f.file + ("" if f.row is None else f" row {f.row}")
            col = f" column {f.column}" if f.column else ""
            val = "" if f.value is None else f" value {f.value!r}"
            typer.echo(f"{f.severity}: {where}{col}{val}: {f.message}", err=True)
        raise typer.Exit(1) from None
    except UnknownScenarioError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    export_files(sds, lp, mps, integer_units=integer_units, console=console)
