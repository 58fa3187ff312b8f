"""The batch's rich progress bar: cases done, failed and left, time to go."""

from __future__ import annotations

from typing import Any

__all__ = ["BatchProgress"]


class BatchProgress:
    """Rich progress bar: cases done, failed and left, time to go."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.enabled = enabled and total > 0
        self.done = self.failed = 0
        self.total = total
        self._p: Any = None
        self._task: Any = None

    def __enter__(self) -> BatchProgress:
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._p = Progress(
                TextColumn("[bold]batch"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[stats]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
            )
            self._p.__enter__()
            self._task = self._p.add_task("batch", total=self.total, stats=self._stats())
        return self

    def _stats(self) -> str:
        left = self.total - self.done - self.failed
        return f"done {self.done} | failed {self.failed} | left {left}"

    def advance(self, ok: bool) -> None:
        """Count one more case, done (``ok``) or failed, and redraw the bar."""
        if ok:
            self.done += 1
        else:
            self.failed += 1
        if self._p is not None:
            self._p.update(self._task, advance=1, stats=self._stats())

    def __exit__(self, *exc: object) -> None:
        if self._p is not None:
            self._p.__exit__(None, None, None)
