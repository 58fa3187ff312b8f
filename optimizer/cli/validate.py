"""``capacity validate`` (a dataset's findings) and ``capacity diff`` (changed cells)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from optimizer.cli.printing import DEFAULT_MAX_FINDINGS, print_findings

__all__ = ["diff", "validate"]


def validate(
    data_dir: Annotated[
        Path, typer.Argument(metavar="DATA_DIR", help="Dataset directory of CSV/Parquet tables.")
    ] = Path("data"),
    scenario: Annotated[
        list[str] | None,
        typer.Option(
            "--scenario",
            "-s",
            metavar="NAME",
            help="Also validate this scenario (repeatable; 'all' = every one).",
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
    if findings:
        print_findings(findings, limit=max_findings)
    checked = ", ".join(names) if names else "base data"
    if any(f.severity == "error" for f in findings):
        typer.echo(f"INVALID: {data_dir} ({checked})")
        raise typer.Exit(1)
    n_warn = len(findings)
    found = f"{n_warn} warning{'s' if n_warn != 1 else ''}" if n_warn else "no findings"
    typer.echo(f"OK: {data_dir} is valid, {found} ({checked})")


def diff(
    args: Annotated[
        list[str] | None,
        typer.Argument(
            help="[DATA_DIR] SCENARIO_A SCENARIO_B (DATA_DIR defaults to data; "
            "'base' = the data as is).",
            metavar="ARGS",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Show exactly which cells differ between two scenarios (table, key, column, old, new)."""
    from rich.console import Console
    from rich.table import Table

    from capacity.dataset import load_dataset
    from capacity.scenarios import UnknownScenarioError, apply_scenario, diff_datasets
    from capacity.validation import DataValidationError

    args = args or []
    if len(args) not in (2, 3):
        typer.echo("usage: capacity diff [DATA_DIR] SCENARIO_A SCENARIO_B", err=True)
        raise typer.Exit(2)
    if len(args) == 2 and Path(args[0]).is_dir():
        # "capacity diff data neutral": a folder and one scenario, not two scenarios
        typer.echo(
            f"error: {args[0]} is a data folder and {args[1]!r} one scenario; diff compares "
            f"two: capacity diff {args[0]} {args[1]} SCENARIO_B",
            err=True,
        )
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
    if d.empty:
        typer.echo(f"{scenario_a} -> {scenario_b}: no cell differs.")
        return
    table = Table(title=f"{scenario_a} -> {scenario_b}: {len(d)} changed cell(s)")
    for col in d.columns:
        table.add_column(col, overflow="fold")
    for row in d.itertuples(index=False):
        table.add_row(*map(str, row))
    Console(width=140).print(table)
