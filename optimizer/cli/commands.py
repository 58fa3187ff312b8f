"""The ``capacity`` Typer app: the command group, every command registered, ``main``.

Each command's body lives in the module of this package named after it (the
package docstring lists them); this module only registers them, in the order
``capacity --help`` lists them. Exit codes mean something (0 ok, 1 data or plan
error, 2 usage error, 130 interrupted).
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup

from optimizer.cli import app as app_cmd
from optimizer.cli import batch, bench, hedge, pulp, solve, validate
from optimizer.cli.checks import exit_on_interrupt

__all__ = ["app", "main"]


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

app.command("app")(app_cmd.app_)
app.command()(validate.validate)
app.command()(validate.diff)
app.command(help=solve.SOLVE_HELP)(solve.solve)
app.command("solvers")(pulp.solvers)
app.command("export-lp")(pulp.export_lp)
app.command()(batch.batch)
app.command()(bench.bench)
app.command(help=hedge.HEDGE_HELP)(hedge.hedge)


def main() -> None:
    """Entry point of the ``capacity`` console script."""
    app()
