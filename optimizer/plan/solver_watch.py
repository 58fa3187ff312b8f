"""The solver program of a PuLP solve: its own temporary folder, its watch and its signals.

Each PuLP solve runs in its own temporary folder (``capacity-pulp-*`` under the
system temp directory, :func:`solve_folder`), given to the solver as ``tmpDir``: no
file names are shared between threads or processes, and the folder is removed when
the solve returns, fails or is interrupted (``finally``; on the main thread SIGTERM
is turned into ``SystemExit`` for the length of the solve, so the folder goes then too).

Interrupts and the wall clock
-----------------------------
A solver run as a program is watched (:func:`watch_solver`): at the time limit it
gets SIGINT (CBC then stops and writes its best point), and
:data:`STOP_GRACE_S` later it is killed if it still runs (CBC looks at SIGINT only
between its phases; measured on the default data in cluster mode: 224 s after the
signal). A Ctrl-C on the main thread during the solve is recorded by a handler,
passed on to the solver, and raised as ``KeyboardInterrupt`` when the solver has
stopped, whatever status the solver wrote: an interrupted solve is never reported
as a solver result.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any


@contextlib.contextmanager
def solve_folder() -> Iterator[str]:
    """Yield a fresh temporary folder for one solve; remove it on success, error or interrupt."""
    folder = tempfile.mkdtemp(prefix="capacity-pulp-")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


#: Seconds a solver program gets, after its time limit or an interrupt, to stop by
#: itself and write its best point before it is killed.
STOP_GRACE_S = 2.0


class SolverWatch:
    """Stops the solver program of one PuLP solve at a wall-clock time or on request.

    The program is found among this process's children by its command line, which
    names the solve's own folder, so concurrent solves never stop each other's.

    Attributes
    ----------
    interrupted : bool
        SIGINT reached this process while the solve ran (main thread only).
    stopped : bool
        The time limit passed and the program was asked to stop (SIGINT).
    killed : bool
        The program still ran :data:`STOP_GRACE_S` after that and was killed.
    """

    def __init__(self, folder: str, stop_at: float | None) -> None:
        self.folder, self.stop_at = folder, stop_at
        self.interrupted = self.stopped = self.killed = False
        self._asked_at: float | None = None
        self.done = threading.Event()

    def _signal(self, sig: int) -> None:
        import psutil

        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error, OSError, ValueError):
                if any(self.folder in arg for arg in child.cmdline()):
                    child.kill() if sig == signal.SIGKILL else child.send_signal(sig)

    def ask_stop(self) -> None:
        """Send SIGINT to the program (once); the watch kills it after the grace."""
        if self._asked_at is None:
            self._asked_at = time.monotonic()
            self._signal(signal.SIGINT)

    def kill(self) -> None:
        """Kill the program now (a solve left by an exception)."""
        self._signal(signal.SIGKILL)

    def run(self) -> None:
        """Watch until :attr:`done` is set (the body of the watch thread)."""
        while not self.done.wait(0.1):
            now = time.monotonic()
            if self._asked_at is None and self.stop_at is not None and now >= self.stop_at:
                self.stopped = True
                self.ask_stop()
            if self._asked_at is not None and now >= self._asked_at + STOP_GRACE_S:
                self.killed = True
                self.kill()
                self._asked_at = now


def _on_main_thread_signals(watch: SolverWatch) -> Callable[[], None]:
    """Install the solve's SIGINT and SIGTERM handlers; return what restores the old ones.

    Only on the main thread, and only over Python's default handlers (an ignored
    SIGINT stays ignored): SIGINT marks the solve interrupted and stops the program;
    SIGTERM kills the program and raises ``SystemExit(143)``, so ``finally`` blocks
    remove the temporary folder.
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    old_int, old_term = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)

    def on_int(signum: int, frame: Any) -> None:
        watch.interrupted = True
        watch.ask_stop()

    def on_term(signum: int, frame: Any) -> None:
        watch.kill()
        raise SystemExit(128 + signum)

    if old_int is signal.default_int_handler:
        signal.signal(signal.SIGINT, on_int)
    if old_term == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, on_term)

    def restore() -> None:
        if old_int is signal.default_int_handler:
            signal.signal(signal.SIGINT, old_int)
        if old_term == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, old_term)

    return restore


@contextlib.contextmanager
def watch_solver(
    folder: str, stop_at: float | None, *, signals: bool = True
) -> Iterator[SolverWatch]:
    """Watch the solver program of a solve in ``folder`` until the block ends.

    Parameters
    ----------
    folder : str
        The solve's temporary folder (named on the program's command line).
    stop_at : float or None
        ``time.monotonic()`` reading at which the program is stopped (SIGINT, then
        killed :data:`STOP_GRACE_S` later); None: never for time.
    signals : bool
        Hold SIGINT and SIGTERM on the main thread meanwhile (a solver program); off
        for a solver inside this process, which Python's own Ctrl-C handling stops.

    Yields
    ------
    SolverWatch
        Says afterwards whether the solve was interrupted, stopped or killed. A
        program still running when the block ends (an exception) is killed.

    Raises
    ------
    KeyboardInterrupt
        When a Ctrl-C reached the handler at any time in the block, also after the
        program had ended (the block's own check of ``interrupted`` may have run
        before it): a Ctrl-C is never swallowed.
    """
    watch = SolverWatch(folder, stop_at)
    thread = threading.Thread(target=watch.run, name="solver-watch", daemon=True)
    restore = _on_main_thread_signals(watch) if signals else (lambda: None)
    thread.start()
    try:
        yield watch
    finally:
        watch.done.set()
        restore()
        thread.join()
        watch.kill()
    if watch.interrupted:  # the block ended normally (or returned) after a Ctrl-C
        raise KeyboardInterrupt
