"""The ``capacity`` Typer app: the command group, every command registered, ``main``.

Each command's body lives in the module of this package named after it (the
package docstring lists them); this module only registers them, in the order
``capacity --help`` lists them. Exit codes mean something (0 ok, 1 data or plan
error, 2 usage error, 130 interrupted).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from optimizer.cli import alternatives, batch, bench, hedge, pulp, replan, solve, validate
from optimizer.cli import app as app_cmd
from optimizer.cli.checks import (
    INTERRUPTED,
    exit_on_interrupt,
    pipe_safe_stdout,
    sigterm_as_interrupt,
)
from optimizer.cli.option_needs import refuse_unread_options

__all__ = ["app", "main", "silent_interrupt"]


def _no_type(ctx: Any) -> None:
    """Show no value type for a flag in ``--help`` (a flag takes no value)."""
    return None


def _plain_flags(params: list[Any]) -> list[Any]:
    """Return ``params`` with the value type of every flag hidden in ``--help``.

    Typer prints ``<bool>`` after every flag (``--help <bool>``), as if it took a
    value; a flag takes none, so its type column is left empty.
    """
    for param in params:
        if getattr(param, "is_flag", False):
            setattr(param, "display_type_rich", _no_type)  # noqa: B010 - an instance's own
    return params


def refuse_repeated_options(params: list[Any], args: list[str]) -> None:
    """Raise a usage error for an option of one value given more than once.

    Click keeps the last (``export-lp --scenario neutral --scenario negative`` wrote the
    negative scenario only, without a word). Options taking several values
    (``solve --scenario a --scenario b``) and flags may repeat.

    Raises
    ------
    typer.BadParameter
        Naming the option and the values given (a usage error, exit 2).
    """
    single = {
        name: p
        for p in params
        if getattr(p, "param_type_name", "") == "option"
        and not (p.multiple or getattr(p, "is_flag", False) or getattr(p, "count", False))
        for name in p.opts
    }
    given: dict[str, list[str]] = {}
    i = 0
    while i < len(args) and args[i] != "--":
        name, eq, value = args[i].partition("=")
        if name in single:
            if not eq and i + 1 < len(args):
                value, i = args[i + 1], i + 1
            given.setdefault(single[name].name, []).append(value)
            p = single[name]
            if len(given[p.name]) > 1:
                shown = ", ".join(given[p.name])
                raise typer.BadParameter(
                    f"takes one value and was given {len(given[p.name])} times ({shown}): "
                    "give it once",
                    param_hint=" / ".join(f"'{o}'" for o in p.opts),
                )
        i += 1


class _Command(TyperCommand):
    """A ``capacity`` command: flags are listed without a value type in ``--help``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Refuse an option given twice, or given where its mode does not read it.

        See :func:`refuse_repeated_options` and
        :func:`optimizer.cli.option_needs.refuse_unread_options`.
        """
        refuse_repeated_options(self.get_params(ctx), list(args))
        rest = list(super().parse_args(ctx, args))
        refuse_unread_options(ctx)
        return rest

    def get_params(self, ctx: Any) -> list[Any]:
        """Return the command's parameters (flags with no type shown, see ``_plain_flags``)."""
        return _plain_flags(super().get_params(ctx))

    def invoke(self, ctx: Any) -> Any:
        """Run the command with text held as Python strings (:mod:`capacity.text_storage`).

        Set here, as the command starts and before it imports the model stack, not when
        the command line starts: ``--help`` and ``--version`` import no pandas.
        """
        from capacity.text_storage import use_python_text

        use_python_text()
        return super().invoke(ctx)


class _Commands(TyperGroup):
    """The ``capacity`` command group: Ctrl-C in any command is one line and exit 130."""

    def invoke(self, ctx: Any) -> Any:
        """Run the chosen command inside :func:`optimizer.cli.checks.exit_on_interrupt`.

        SIGTERM is a :class:`optimizer.cli.checks.Terminated` interrupt throughout
        (:func:`optimizer.cli.checks.sigterm_as_interrupt`): every command stops on it as
        on Ctrl-C, with its clean-up and one line, exit code 143.

        And :func:`optimizer.cli.checks.pipe_safe_stdout`: ``| head`` ends the output,
        not the run.
        """
        with pipe_safe_stdout(), exit_on_interrupt(), sigterm_as_interrupt():
            return super().invoke(ctx)

    def get_params(self, ctx: Any) -> list[Any]:
        """Return the group's parameters (flags with no type shown, see ``_plain_flags``)."""
        return _plain_flags(super().get_params(ctx))


#: Help is as wide as the terminal (click's own cap is 80 columns).
_CONTEXT = {"max_content_width": 10_000}

app = typer.Typer(
    cls=_Commands,
    name="capacity",
    help="Data-center capacity, power and supply-chain planner.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # click's plain help: wraps every option's text to the terminal (rich's panels gave
    # the help column 20 of 80 characters and cut long words with "…")
    rich_markup_mode=None,
    context_settings=_CONTEXT,
)


def _print_version(value: bool) -> None:
    """Print ``capacity-planner <version>`` and exit (``--version``; loads nothing else)."""
    if not value:
        return
    from importlib import metadata

    try:
        version = metadata.version("capacity-planner")
    except metadata.PackageNotFoundError:  # run from a checkout without installing it
        version = "0+unknown (not installed: pip install -e .)"
    typer.echo(f"capacity-planner {version}")
    raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Data-center capacity, power and supply-chain planner."""


#: One line per command in ``capacity --help`` (click cuts a docstring's first sentence
#: to the terminal with "..."; these fit 80 columns whole).
SHORT_HELP = {
    "app": "Start the Streamlit app on a dataset.",
    "validate": "Every finding of a dataset: file, row, column, value.",
    "diff": "The cells that differ between two scenarios.",
    "solve": "Solve scenarios: summary and Parquet report.",
    "solvers": "Every --solver name usable here, with version.",
    "export-lp": "Write the LP/MPS file with readable names.",
    "batch": "Solve every case of a sweep on Dask (resumable).",
    "bench": "Benchmark ours vs highspy floor vs linopy.",
    "hedge": "Hedged plan over N sampled scenarios (VSS, EVPI).",
    "replan": "Rolling replanning: regret vs perfect foresight.",
    "alternatives": "Near-optimal ranges of each plan quantity.",
}


def _register(name: str, func: Any, help_text: str | None = None) -> None:
    """Add ``func`` as command ``name`` with its one-line ``SHORT_HELP`` entry."""
    app.command(
        name,
        help=help_text,
        short_help=SHORT_HELP[name],
        cls=_Command,
        context_settings=_CONTEXT,
    )(func)


_register("app", app_cmd.app_)
_register("validate", validate.validate)
_register("diff", validate.diff)
_register("solve", solve.solve, solve.SOLVE_HELP)
_register("solvers", pulp.solvers)
_register("export-lp", pulp.export_lp)
_register("batch", batch.batch)
_register("bench", bench.bench)
_register("hedge", hedge.hedge, hedge.HEDGE_HELP)
_register("replan", replan.replan, replan.REPLAN_HELP)
_register("alternatives", alternatives.alternatives, alternatives.ALTERNATIVES_HELP)


def main() -> None:
    """Entry point of the ``capacity`` console script.

    Ctrl-C outside a command's own block (while click parses the arguments, just
    before or after the command runs) is turned by typer into exit code 130 with no
    word; the line every interrupt prints is added then. A Ctrl-C still earlier, while
    typer builds the command line from the functions' signatures (before click's own
    handling), ends the same way.
    """
    try:
        app()
    except KeyboardInterrupt:
        typer.echo(INTERRUPTED, err=True)
        raise SystemExit(130) from None
    except SystemExit as e:
        if e.code == 130 and silent_interrupt(e):
            typer.echo(INTERRUPTED, err=True)
        raise


def silent_interrupt(e: BaseException) -> bool:
    """Return True when ``e`` is typer's exit for a Ctrl-C that no one reported.

    typer ends an interrupt it catches with ``Exit(130)`` raised *from* the
    ``KeyboardInterrupt``; :func:`optimizer.cli.checks.exit_on_interrupt`, which has
    printed its line, raises its exit *from None*. The exit code alone cannot tell
    them apart; the exception chain can.
    """
    ctx = e.__context__
    return ctx is not None and isinstance(ctx.__cause__, KeyboardInterrupt)
