"""Size limits on input the product accepts from people it does not control.

Also the most solver threads and local worker processes a run may ask for
(:data:`MAX_PARALLEL`): ``--threads 2147483647`` made HiGHS allocate until the kernel
killed the process, and ``--workers 1000`` started a thousand Dask processes on a
laptop that then solved nothing.

One place for each limit, so the app's message, the Streamlit server's setting
(``server.maxUploadSize``) and the checks agree.

And the longest scenario name a report folder can hold (:func:`scenario_name_problem`),
read where a scenario is named (scenarios.yaml, a sweep's cases) and where it is written.

Two limits, on purpose. :data:`MAX_UPLOAD_MB` is the application's limit: the app
refuses a larger file itself, with a message naming the file and its size, and then
refuses the *whole* upload (the previous data stays). :data:`MAX_TRANSPORT_MB` is
the larger cap given to Streamlit (the uploader widget's ``max_upload_size`` and the
server's ``server.maxUploadSize``): Streamlit's uploader checks that cap in the
browser and drops a larger file *before the app sees it*, without telling the app
that a file was dropped (the widget's value lists only the files that arrived). So a
file between the two limits reaches the app and is refused by name; only a file
beyond the transport cap can go missing silently, and the Data page says so next to
the uploader.
"""

from __future__ import annotations

import os
from numbers import Integral
from urllib.parse import quote

MAX_PARALLEL = 4 * (os.cpu_count() or 1)
"""Most solver threads (``--threads``) or local worker processes (``--workers``) a run
may ask for: four per core of this machine (``os.cpu_count()``); more only queue.
"""


def check_parallel(n: int, what: str) -> int:
    """Return ``n`` if it is a whole count (numpy's too) from 1 to :data:`MAX_PARALLEL`.

    Raises
    ------
    ValueError
        Naming ``what`` (``"workers"``), the value and the range.
    """
    if isinstance(n, bool) or not isinstance(n, Integral) or not 1 <= n <= MAX_PARALLEL:
        raise ValueError(  # 2.5 ran as 2 threads, "2" failed late, 1000 workers hung
            f"{what}: {n!r} is not a number of {what} (1 to {MAX_PARALLEL}, four per core "
            "of this machine)"
        )
    return n


MAX_UPLOAD_MB = 50
"""Largest accepted upload, per file and for a zip's unpacked contents (MiB).

The app checks it on the size of every uploaded file before reading any of them,
and refuses the whole upload when one file is larger.
"""

MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024
""":data:`MAX_UPLOAD_MB` in bytes."""

MAX_TRANSPORT_MB = 200
"""Largest file Streamlit carries to the app (MiB): the uploader widget's
``max_upload_size`` and ``capacity app``'s ``--server.maxUploadSize``.

Four times :data:`MAX_UPLOAD_MB` (and Streamlit's own default), so a file that is
too large by a plausible margin reaches the app and is refused by name instead of
being dropped in the browser. Streamlit holds each uploaded file in memory until
the widget is cleared, so this is also the most memory one file can take.
"""

MAX_TRANSPORT_BYTES = MAX_TRANSPORT_MB * 1024 * 1024
""":data:`MAX_TRANSPORT_MB` in bytes."""


#: Longest scenario name, in bytes as written in its folder's name (URI-escaped), whose
#: hidden staging folder ``.scenario=<name>.partial-<pid>`` still fits one file name
#: (255 bytes on Linux and macOS file systems) with a process id of up to 7 digits.
MAX_SCENARIO_NAME_BYTES = 255 - len(".scenario=") - len(".partial-") - 7


def scenario_name_problem(scenario: str) -> str | None:
    """Say why ``scenario`` cannot name a scenario folder (None when it can).

    Parameters
    ----------
    scenario : str
        The scenario's or batch case's name.

    Returns
    -------
    str or None
        The reason: empty, or too long for its staging folder's file name.
    """
    if not scenario:
        return "scenario name must not be empty"
    size = len(quote(scenario, safe="").encode())
    if size > MAX_SCENARIO_NAME_BYTES:
        return (
            f"scenario name is {size} bytes in its folder name, more than the "
            f"{MAX_SCENARIO_NAME_BYTES} its staging folder's file name leaves; shorten it"
        )
    return None
