"""Entry point of the ``capacity`` console script: a Ctrl-C while starting is one line.

Starting the command imports the model stack (numpy, pandas, PuLP, HiGHS), which
takes seconds; an interrupt then would arrive before any command runs and would
print a traceback of the imports. This launcher imports nothing of the project
until it is called, turns such an interrupt into one line and exit code 130, and
then hands over to :func:`optimizer.cli.commands.main`, where every command ends an
interrupt the same way (:func:`optimizer.cli.checks.exit_on_interrupt`).
"""

from __future__ import annotations

import sys

__all__ = ["STARTING_INTERRUPTED", "main"]

STARTING_INTERRUPTED = "interrupted while starting; nothing was run."
"""The line printed when Ctrl-C arrives before the command has started (exit 130)."""


def main() -> None:
    """Start the ``capacity`` command line (:func:`optimizer.cli.commands.main`).

    Raises
    ------
    SystemExit
        Code 130, after :data:`STARTING_INTERRUPTED` on stderr, when Ctrl-C arrives
        while the command line is being imported; otherwise the command's own code.
    """
    try:
        from optimizer.cli.commands import main as run
    except KeyboardInterrupt:
        print(STARTING_INTERRUPTED, file=sys.stderr)
        raise SystemExit(130) from None
    run()
