"""The solve's wall-clock budget: the deadline, the time left, and each stage's share of it.

One deadline (a ``time.monotonic()`` reading) covers the whole solve; each stage
(build, cluster warm start, LP or MIP, the LP with the integers fixed, the elastic
re-solve) gets what remains of it, at least :data:`MIN_STAGE_S`.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from optimizer.plan.options import SolveOptions

#: Share of the time left after the build that the cluster warm start may use (its
#: two LPs); the MIP gets the rest.
WARM_START_SHARE = 0.5


#: Share of the time left at the MIP's start kept for the LP with the integers fixed
#: (shadow prices), at least; with a warm start, at least 1.5 times its fixed LP.
DUALS_RESERVE_SHARE = 0.1


#: Shortest time limit handed to a solver (s): a stage reached at or after the deadline
#: still gets a call that stops at once and reports the time limit honestly.
MIN_STAGE_S = 0.01


def start_deadline(options: SolveOptions) -> float | None:
    """``time.monotonic()`` reading at which ``options.time_limit_s`` from now runs out.

    Parameters
    ----------
    options : SolveOptions

    Returns
    -------
    float or None
        Seconds on the monotonic clock; None without a time limit.
    """
    if options.time_limit_s is None:
        return None
    return time.monotonic() + float(options.time_limit_s)


def until(options: SolveOptions, deadline: float | None, reserve_s: float = 0.0) -> SolveOptions:
    """Options whose time limit is what remains before ``deadline`` (less ``reserve_s``).

    Parameters
    ----------
    options : SolveOptions
    deadline : float or None
        ``time.monotonic()`` reading; None leaves ``options`` as they are.
    reserve_s : float
        Seconds kept back for the stages after this one.

    Returns
    -------
    SolveOptions
        ``time_limit_s`` = remaining seconds, at least :data:`MIN_STAGE_S`.
    """
    if deadline is None:
        return options
    left = deadline - reserve_s - time.monotonic()
    return replace(options, time_limit_s=max(left, MIN_STAGE_S))


def time_left(deadline: float | None) -> float:
    """Seconds before ``deadline`` (``time.monotonic()``); infinite without one."""
    return np.inf if deadline is None else deadline - time.monotonic()


def process_started() -> float:
    """``time.monotonic()`` reading at which this process started (its imports included).

    Returns
    -------
    float
        Seconds on the monotonic clock; now when the start time cannot be read.
    """
    import psutil

    try:
        age = max(time.time() - psutil.Process().create_time(), 0.0)
    except (psutil.Error, OSError):
        age = 0.0
    return time.monotonic() - age
