"""Checks shared by every ``capacity`` command, run before it loads or computes.

Option checks are typer callbacks (a bad value is a usage error: exit 2, the option
and its valid range named); output checks find an unusable folder or file in a
second (exit 1) instead of after a long solve; solver checks find a solver that is
not installed (exit 1) before any data is loaded.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "INTERRUPTED",
    "SIGHUP_EXIT",
    "SIGTERM_EXIT",
    "HungUp",
    "Terminated",
    "check_out_dir",
    "check_out_file",
    "exit_on_interrupt",
    "interrupt_ending",
    "pipe_safe_stdout",
    "refuse_bad_files",
    "refuse_bad_out",
    "require_highs",
    "require_solver",
    "scheduler_option",
    "seconds_option",
    "sigterm_as_interrupt",
    "tolerance_option",
    "wait_seconds_option",
]


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
            # the system's reason may read oddly (/proc says "No such file or directory")
            problem = f"does not accept a new folder (creating one failed: {exc.strerror or exc})"
    if problem is None:
        return None
    if existing == path:
        return f"directory {path} {problem}"
    return f"{path} cannot be created: directory {existing} {problem}"


def check_out_file(path: Path) -> str | None:
    """Return why the file ``path`` cannot be written, or None when it can (nothing is made).

    The file may exist (it is replaced) but not be a directory; its folder must be
    usable as :func:`check_out_dir` says (an existing writable directory, or one that
    can be created).
    """
    target = path.expanduser()
    if target.is_dir():
        return f"{target} is a directory, not a file"
    return check_out_dir(target.parent)


def refuse_bad_out(console: Console, out: Path, option: str = "--out") -> None:
    """Exit 1 before any work when the folder ``out`` cannot hold the output.

    Every command that writes a folder calls this before it loads or computes
    anything, so a bad ``--out`` fails in a second, not after the solve.
    """
    problem = check_out_dir(out)
    if problem is not None:
        console.print(f"[red]error: {option} {out}:[/red] {problem}; nothing was solved.")
        raise typer.Exit(1)


def refuse_bad_files(
    console: Console, files: dict[str, Path | None], inputs: Sequence[Path | None] = ()
) -> None:
    """Exit before any work when one of the output files cannot or must not be written.

    ``files`` maps an option name (``--lp``) to its path (None: not asked for). Two
    options naming the same file are a usage error (exit 2): the second file written
    replaced the first (``--lp a.lp --mps a.lp`` left MPS text in ``a.lp``). So is a
    path naming no file (``""`` or ``.``), and one that is an existing file inside an
    ``inputs`` folder (the dataset) or is an ``inputs`` file (a scenarios file): the
    model file replaced the data it was built from (``--write-lp data/sites.csv``).
    """
    seen: dict[Path, str] = {}
    for option, path in files.items():
        if path is None:
            continue
        clash = _input_clash(path, inputs)
        if clash is not None:
            console.print(f"[red]error: {option} {path}:[/red] {clash}; nothing was written.")
            raise typer.Exit(2)
        same = seen.setdefault(Path(os.path.abspath(path)), option)
        if same != option:
            console.print(
                f"[red]error: {same} and {option} name the same file {path}:[/red] give each "
                "its own file; nothing was written."
            )
            raise typer.Exit(2)
    for option, path in files.items():
        problem = None if path is None else check_out_file(path)
        if problem is not None:
            console.print(f"[red]error: {option} {path}:[/red] {problem}; nothing was written.")
            raise typer.Exit(1)


def _input_clash(path: Path, inputs: Sequence[Path | None]) -> str | None:
    """Why the output file ``path`` must not be written over the run's inputs (None: fine)."""
    if str(path) in ("", "."):
        return "names no file (give a file name)"
    target = Path(os.path.realpath(path.expanduser()))
    for given in inputs:
        if given is None:
            continue
        src = Path(os.path.realpath(given.expanduser()))
        if target == src or (target.is_file() and src.is_dir() and src in target.parents):
            return f"is a file of the input {given}: give the output its own file"
        if src.is_dir() and target.parent == src and _read_as_data(target.name):
            return f"is a name {given} is read by (a table or its YAML): give another file"
    return None


def _read_as_data(name: str) -> bool:
    """Tell whether the loader reads a file of this name in a dataset folder.

    A table that is not there yet (``contract_terms.csv``, ``migration.parquet``) is read
    the next time the folder loads: a model file written under that name broke it.
    """
    from capacity.dataset import META_FILE, SCENARIOS_FILE
    from capacity.schema import TABLE_NAMES

    stem, _, suffix = name.lower().rpartition(".")
    tables = stem in TABLE_NAMES and suffix in ("csv", "parquet")
    return tables or name.lower() in (META_FILE, SCENARIOS_FILE)


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


# --- option checks shared by every command (typer callbacks: exit 2, the option named)


def seconds_option(value: float | None) -> float | None:
    """Check a time limit in seconds: a finite number above 0, or None for no limit.

    Typer callback of every ``--time-limit``: NaN, infinity, 0 and negative values
    are refused with exit 2 and a message naming the option and the valid range.

    Raises
    ------
    typer.BadParameter
        For a value outside (0, inf).
    """
    if value is not None and not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(
            f"{value:g} is not a time limit: give a finite number of seconds above 0"
        )
    return value


def wait_seconds_option(value: float) -> float:
    """Check a waiting time in seconds: a finite number >= 0 (0: do not wait).

    Raises
    ------
    typer.BadParameter
        For NaN, infinity or a negative value.
    """
    if not (math.isfinite(value) and value >= 0):
        raise typer.BadParameter(f"{value:g} is not a waiting time: give finite seconds >= 0")
    return value


def tolerance_option(value: float) -> float:
    """Check a relative tolerance (gap): a finite number strictly between 0 and 1.

    Raises
    ------
    typer.BadParameter
        For NaN, infinity, 0, 1 or a value outside (0, 1): at 1 or above every first
        plan "converges" and below 0 none ever does.
    """
    if not (math.isfinite(value) and 0 < value < 1):
        raise typer.BadParameter(
            f"{value:g} is not a relative tolerance: give a number in (0, 1), e.g. 1e-4"
        )
    return value


def scheduler_option(value: str | None) -> str | None:
    """Check a ``--scheduler`` address: ``[scheme://]host:port`` of a Dask scheduler.

    Raises
    ------
    typer.BadParameter
        For anything else (``notaurl``, ``tcp://``, an unknown scheme, ``inproc://``,
        which no other process reaches), with the form expected.
    """
    if value is None:
        return None
    from optimizer.analysis.dask_remote import check_scheduler_address

    try:
        return check_scheduler_address(value, inproc=False)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None


INTERRUPTED = "interrupted; nothing was written."
"""The line a command prints when Ctrl-C stops it (exit code 130)."""

SIGTERM_EXIT = 143
"""Exit code of a command ended by SIGTERM (128 + 15, as the shell reports it)."""


class Terminated(KeyboardInterrupt):
    """Raised on the main thread when SIGTERM arrives inside :func:`sigterm_as_interrupt`.

    A ``KeyboardInterrupt``, so every clean-up that Ctrl-C runs (the Dask cluster
    closed, the finished cases kept, partial files removed) runs for SIGTERM too.
    """


SIGHUP_EXIT = 129
"""Exit code of a command ended by SIGHUP (128 + 1): its terminal closed."""


class HungUp(Terminated):
    """Raised on the main thread when SIGHUP (the terminal closed) arrives: as SIGTERM."""


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Turn SIGTERM (and SIGHUP) into :class:`Terminated` on the main thread in the block.

    Without it SIGTERM kills the process at once: no message, no clean-up (a local
    Dask cluster's semaphores leak, a batch's summary is left as the previous run's).
    SIGHUP (the terminal closed) raises :class:`HungUp` the same way, unless it is
    ignored (``nohup``), which stays so. Off the main thread (no signal handlers there)
    the block runs unchanged; the previous handlers are restored at its end.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum: int, frame: object) -> None:
        raise HungUp if signum == signal.SIGHUP else Terminated

    old = signal.signal(signal.SIGTERM, on_term)
    hup = getattr(signal, "SIGHUP", None)
    old_hup = signal.getsignal(hup) if hup is not None else None
    if hup is not None and old_hup is not signal.SIG_IGN:
        signal.signal(hup, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)
        if hup is not None and old_hup is not signal.SIG_IGN and old_hup is not None:
            signal.signal(hup, old_hup)


def interrupt_ending(e: KeyboardInterrupt) -> tuple[str, int]:
    """Return how an interrupt ended a command: its word and exit code.

    ``("hung up (SIGHUP)", 129)`` for :class:`HungUp`, ``("terminated (SIGTERM)", 143)``
    for :class:`Terminated`, ``("interrupted", 130)`` for Ctrl-C.
    """
    if isinstance(e, HungUp):
        return "hung up (SIGHUP)", SIGHUP_EXIT
    if isinstance(e, Terminated):
        return "terminated (SIGTERM)", SIGTERM_EXIT
    return "interrupted", 130


@contextmanager
def exit_on_interrupt(console: Console | None = None, message: str = INTERRUPTED) -> Iterator[None]:
    """Turn Ctrl-C (``KeyboardInterrupt``) in the block into one line and exit code 130.

    SIGTERM (:class:`Terminated`, raised inside :func:`sigterm_as_interrupt`) gives the
    same line with "terminated (SIGTERM)" for "interrupted", and exit code 143.

    Every ``capacity`` command runs inside this block (the command group's
    ``invoke``), so an interrupt never shows a traceback; a command that knows more
    (what it had written so far) wraps its work in its own block with that message.

    Parameters
    ----------
    console : rich.console.Console, optional
        Where to print the line (default: stderr).
    message : str
        The line printed.

    Raises
    ------
    typer.Exit
        Code 130, after the line, when the block is interrupted.
    """
    try:
        yield
    except KeyboardInterrupt as e:
        ended, code = interrupt_ending(e)  # SIGTERM: the same clean stop, said as such
        message = message.replace("interrupted", ended, 1)
        if console is None:
            typer.echo(message, err=True)
        else:
            console.print(message)
        raise typer.Exit(code) from None


class _PipeSafeStdout:
    """``sys.stdout`` that, once its reader has gone, writes to the null device instead.

    ``capacity solve data -s all | head`` closes the pipe after a few lines; the next
    write raised ``BrokenPipeError``, which click turns into exit code 1 with no word
    and no report written. The summary is a view of the run; the report is the
    product: after the reader goes, the run goes on silently and writes its report.
    """

    def __init__(self, stream: object) -> None:
        self._stream = stream

    def _gone(self) -> None:
        null = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives with the process
        try:  # the descriptor too, so that the interpreter's flush at exit is quiet
            os.dup2(null.fileno(), self._stream.fileno())  # type: ignore[attr-defined]
        except (OSError, ValueError, AttributeError):
            pass
        self._stream = null

    def write(self, text: str) -> int:
        """Write ``text``; after a broken pipe, to the null device."""
        try:
            return int(self._stream.write(text))  # type: ignore[attr-defined]
        except BrokenPipeError:
            self._gone()
            return len(text)

    def flush(self) -> None:
        """Flush; a broken pipe switches to the null device."""
        try:
            self._stream.flush()  # type: ignore[attr-defined]
        except BrokenPipeError:
            self._gone()

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


@contextmanager
def pipe_safe_stdout() -> Iterator[None]:
    """Run the block with ``sys.stdout`` safe against a closed pipe (``| head``).

    Every ``capacity`` command runs inside it (the command group's ``invoke``): when
    the reader of the output goes, the rest of the output goes to the null device
    and the command finishes its work (solves, reports) with its own exit code.
    """
    real = sys.stdout
    if real is None or isinstance(real, _PipeSafeStdout):
        yield
        return
    sys.stdout = _PipeSafeStdout(real)
    try:
        yield
    finally:
        sys.stdout = real
