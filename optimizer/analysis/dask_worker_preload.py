"""Dask worker preload of the local cluster: a worker process ignores Ctrl-C.

It also holds the worker's text as Python strings, as the command line does
(:mod:`capacity.text_storage`).

The batch, hedge, replan and alternatives runs start their own local Dask cluster. A
Ctrl-C typed in the terminal reaches every process of the terminal's process group,
the worker processes too; each then printed a ``KeyboardInterrupt`` traceback after
the command had already said "interrupted; re-run the same command to resume".
Blocking SIGINT while the cluster starts does not cover a worker process that Dask
spawns from a thread started earlier (its signal mask is that thread's), so each
worker process ignores SIGINT itself as it starts: the command that owns the cluster
handles Ctrl-C and closes the workers.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

from capacity.text_storage import use_python_text

use_python_text()  # a worker is the planner's own process (capacity.text_storage)


def dask_setup(worker: Any) -> None:
    """Ignore SIGINT in this worker process (Dask calls this as the worker starts).

    Parameters
    ----------
    worker : distributed.Worker
        The starting worker (unused).
    """
    del worker
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
