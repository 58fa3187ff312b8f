"""One progress report for every long command-line operation: count, current case, times.

On a terminal it is a rich progress bar; when the output goes to a file or a pipe it
is plain lines (one per finished item, at most one every :data:`LINE_EVERY_S` seconds
but always the first and the last), so a long run written to a log says what it is
doing: ``batch: 3/10 done (1 failed), now negative, elapsed 0:01:05, about 0:02:31
left``.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import IO, Any, Protocol, Self

__all__ = ["LINE_EVERY_S", "Progress", "ProgressLike", "clock", "counted", "step_callback"]

LINE_EVERY_S = 5.0
"""Least seconds between two plain progress lines (the first and last always print)."""


def clock(seconds: float) -> str:
    """Format seconds as ``H:MM:SS``: ``clock(3725.2) -> "1:02:05"``."""
    s = max(0, round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class ProgressLike(Protocol):
    """What a long operation calls on its progress report (:class:`Progress` is one).

    The app's ``st.progress`` report (``ui/progress_view.py``) is another: the tornado,
    the Monte Carlo and the hedged plan take either.
    """

    def now(self, current: str) -> None:
        """Name the item being worked on."""

    def advance(self, ok: bool = True, *, last: str | None = None, current: str = "") -> None:
        """Count one more item, done (``ok``) or failed."""


def counted(progress: ProgressLike | None, name: str, ok: bool = True) -> None:
    """Count one item that needed no work (``ok`` False: it failed before its solve)."""
    if progress is not None:
        progress.now(name)
        progress.advance(ok)


class Progress:
    """Count, current item, elapsed and remaining time of a long operation.

    Use as a context manager; call :meth:`now` when an item starts and
    :meth:`advance` when it ends. Remaining time is the mean time per finished item
    times the items left (unknown before the first ends).

    Parameters
    ----------
    label : str
        What is counted (``batch``, ``solve``): the line's first word.
    total : int
        Items to do (0: nothing is shown).
    enabled : bool
        False shows nothing (library calls, tests).
    stream : text stream, optional
        Where to write (default ``sys.stderr``, as a log or pipe of the output
        keeps the results alone); a terminal gets the rich bar, any
        other stream plain lines.
    every_s : float
        Least seconds between plain lines (:data:`LINE_EVERY_S`).
    limit : bool
        ``total`` is a most, not a count (iterations that stop on convergence): the
        lines say "at most" for the total and the time left.
    bar : bool
        False: plain lines on a terminal too (for a command that prints its own
        output between the items, as ``capacity solve`` prints each summary).
    estimate : bool
        False: no time left is shown (steps of very unequal length, such as the
        extensive form's build and its one solve); elapsed time only.
    """

    def __init__(
        self,
        label: str,
        total: int,
        *,
        enabled: bool = True,
        stream: IO[str] | None = None,
        every_s: float = LINE_EVERY_S,
        limit: bool = False,
        bar: bool = True,
        estimate: bool = True,
    ) -> None:
        self.label, self.total = label, total
        self.enabled = enabled and total > 0
        self.stream = stream if stream is not None else sys.stderr
        self.every_s = every_s
        self.bar = bar
        self.estimate = estimate
        self.limit = limit
        self.done = self.failed = 0
        self.current = ""
        self.last = ""
        self.started = time.monotonic()
        self._last_line = -float("inf")
        self._shown = 0  # the count the last plain line showed
        self._exiting = False
        self._bar: Any = None
        self._task: Any = None

    @property
    def interactive(self) -> bool:
        """True when the stream is a terminal (a rich bar), else plain lines."""
        isatty = getattr(self.stream, "isatty", None)
        return bool(isatty and isatty())

    def __enter__(self) -> Self:
        self.started = time.monotonic()
        if self.enabled and self.bar and self.interactive:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as Bar

            self._bar = Bar(
                TextColumn(f"[bold]{self.label}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[stats]}"),
                TimeElapsedColumn(),
                *((TextColumn("left"), TimeRemainingColumn()) if self.estimate else ()),
                console=Console(file=self.stream),
            )
            self._bar.__enter__()
            self._task = self._bar.add_task(self.label, total=self.total, stats=self._stats())
        elif self.enabled:
            most = "at most " if self.limit else ""
            self._line(f"{self.label}: {most}{self.total} to do", force=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None
        elif self.enabled and self.finished and self._shown != self.finished:
            self._exiting = True
            # ended early (converged, interrupted) or its last line fell in the spacing
            self._line(self.text(), force=True)

    @property
    def finished(self) -> int:
        """Items finished so far (done or failed)."""
        return self.done + self.failed

    def remaining_s(self) -> float | None:
        """Seconds left at the mean time per finished item (None before the first).

        None too when the report makes no estimate (``estimate=False``).
        """
        if self.finished == 0 or not self.estimate:
            return None
        per = (time.monotonic() - self.started) / self.finished
        return per * (self.total - self.finished)

    def now(self, current: str) -> None:
        """Name the item being worked on (shown with the count)."""
        self.current = current
        if self._bar is not None:
            self._bar.update(self._task, stats=self._stats())

    def advance(self, ok: bool = True, *, last: str | None = None, current: str = "") -> None:
        """Count one more item, done (``ok``) or failed.

        ``current`` names the next item when the items run one after the other; when
        they run in parallel (a batch on Dask) ``last`` names the one that ended,
        shown as ``last negative``.
        """
        if ok:
            self.done += 1
        else:
            self.failed += 1
        self.current = current
        if last is not None:
            self.last = last
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, advance=1, stats=self._stats())
        elif self._line(self.text(), force=self.finished in (1, self.total)):
            self._shown = self.finished

    def _stats(self) -> str:
        failed = f" ({self.failed} failed)" if self.failed else ""
        now = f", now {self.current}" if self.current and self.finished < self.total else ""
        last = f", last {self.last}" if self.last and not now else ""
        return f"done{failed}{now}{last}"

    def text(self) -> str:
        """Return the plain progress line: count, failures, current item, elapsed, left."""
        left = self.remaining_s()
        elapsed = clock(time.monotonic() - self.started)
        most = "at most" if self.limit else "about"
        tail = "" if left is None else f", {most} {clock(left)} left"
        if self.finished >= self.total:
            tail = ", finished"
        elif self._bar is None and self._exiting:
            tail = ", ended"
        return (
            f"{self.label}: {self.finished}/{self.total} {self._stats()}, elapsed {elapsed}{tail}"
        )

    def _line(self, text: str, *, force: bool = False) -> bool:
        """Print ``text`` unless the last line was less than ``every_s`` ago; True if printed."""
        now = time.monotonic()
        if not force and now - self._last_line < self.every_s:
            return False
        self._last_line = now
        print(text, file=self.stream, flush=True)
        return True


@contextlib.contextmanager
def step_callback(make: Callable[[int], Any]) -> Iterator[Callable[[str, int, int], None]]:
    """Yield a ``progress(name, i, total)`` callback drawing on a report opened on first use.

    For operations that learn their total only once they run (the near-optimal
    alternatives build the model first): the first call opens ``make(total)`` (a
    :class:`Progress` or the app's report, as a context manager); a call with ``i > 0``
    counts item ``i - 1`` done and names the next, ``i == total`` counts the last. The
    report is closed when the block ends.
    """
    opened: list[Any] = []

    def progress(name: str, i: int, total: int) -> None:
        if not opened:
            opened.append(make(total).__enter__())
        if i:
            opened[0].advance(True, current=name)
        else:
            opened[0].now(name)

    try:
        yield progress
    finally:
        if opened:
            opened[0].__exit__(None, None, None)
