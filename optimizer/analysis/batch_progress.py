"""The batch's progress: cases done, failed and left, the last one, time to go.

One :class:`optimizer.output.progress.Progress`: a rich bar on a terminal, plain lines
when the output goes to a file or a pipe.
"""

from __future__ import annotations

from optimizer.output.progress import Progress

__all__ = ["BatchProgress"]


class BatchProgress(Progress):
    """Progress of a batch: cases done, failed and left, the last one, time to go.

    Parameters
    ----------
    total : int
        Cases to solve.
    enabled : bool
        Show the progress (``run_batch(progress=...)``).
    """

    def __init__(self, total: int, enabled: bool) -> None:
        super().__init__("batch", total, enabled=enabled)
