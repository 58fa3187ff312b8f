"""The findings table every ``capacity`` command prints for data that does not validate."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas stays unloaded for --help
    from rich.console import Console

    from capacity.validation import Finding

__all__ = ["DEFAULT_MAX_FINDINGS", "command_console", "print_findings"]

#: Width of a command's tables when its output goes to a file or a pipe (a terminal's own
#: width otherwise): rich's 80 columns cut headers ("perfect foresig...") and folded case
#: names mid-word in a log.
FILE_WIDTH = 140


def command_console() -> Console:
    """Return the console a command prints to: the terminal's width, or 140 in a file."""
    import sys

    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=FILE_WIDTH)


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
    left out, and the totals. A lone finding about a whole file or path (a folder
    that does not exist) is one line instead of a table.
    """
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from capacity.validation import left_out_text

    console = Console(width=max(120, Console().width))
    if not findings:
        console.print("[green]No findings: the data is valid.[/green]")
        return
    if len(findings) == 1 and findings[0].row is None and findings[0].column is None:
        # one finding about a whole file or path (a wrong folder): one line, no table
        only = findings[0]
        colour = "red" if only.severity == "error" else "yellow"
        console.print(
            f"[{colour}]{only.severity}[/{colour}]: {escape(only.file)}: {escape(only.message)}",
            markup=True,
            highlight=False,
            soft_wrap=True,
        )
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
