"""The app's waits: ``st.progress`` fed by the CLI's progress mechanism; the click-to-result time.

:class:`AppProgress` is an :class:`optimizer.output.progress.Progress` (the same count,
current case, elapsed and remaining time as ``capacity batch`` prints) drawn as a
Streamlit progress bar: ``Tornado: case 4 of 27 (cowos high) · 3 done · elapsed 0:00:41
· about 0:05:10 left``. The tornado, the Monte Carlo, the hedged plan and the scenario
comparison pass it to their solves.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Self

import streamlit as st

from optimizer.output.progress import Progress, clock

if TYPE_CHECKING:
    from ui.state import PlanRun

__all__ = ["AppProgress", "click_to_result_text"]


class AppProgress(Progress):
    """Count, current case, elapsed and remaining time of a long app operation.

    Parameters
    ----------
    label : str
        What runs (``Tornado``, ``Monte Carlo``): the text's first word.
    total : int
        Solves to do.
    slot : Streamlit container, optional
        Where the bar is drawn (an ``st.empty()`` placed before the results, so the
        section below keeps its place while the bar runs); default the page.
    unit : str
        What one item is called in the text (``case``, ``sample``, ``solve``).
    """

    def __init__(self, label: str, total: int, slot: Any = None, *, unit: str = "case") -> None:
        super().__init__(label, total, enabled=False)  # draws itself, prints nothing
        self.slot = slot if slot is not None else st
        self.unit = unit
        self._el: Any = None
        self.texts: list[str] = []  # every text drawn (the tests read it)

    def __enter__(self) -> Self:
        self.started = time.monotonic()
        self._el = self.slot.progress(0.0, text=self.app_text())
        return self

    def __exit__(self, *exc: object) -> None:
        self._draw()  # the last state stays: "27 of 27 cases done in 0:02:40"

    def now(self, current: str) -> None:
        """Name the case being solved and redraw."""
        super().now(current)
        self._draw()

    def advance(self, ok: bool = True, *, last: str | None = None, current: str = "") -> None:
        """Count one more case, done (``ok``) or failed, and redraw."""
        super().advance(ok, last=last, current=current)
        self._draw()

    def app_text(self) -> str:
        """Return the bar's text: case k of N, the current one, done, elapsed, time left."""
        elapsed = clock(time.monotonic() - self.started)
        failed = f", {self.failed} failed" if self.failed else ""
        plural = "s" if self.total != 1 else ""
        if self.finished >= self.total:
            return (
                f"{self.label}: {self.finished} of {self.total} {self.unit}{plural} done"
                f"{failed} in {elapsed}"
            )
        k = self.finished + 1
        now = f" ({self.current})" if self.current else ""
        left = self.remaining_s()
        tail = f" · about {clock(left)} left" if left is not None else ""
        return (
            f"{self.label}: {self.unit} {k} of {self.total}{now} · {self.finished} done{failed}"
            f" · elapsed {elapsed}{tail}"
        )

    def _draw(self) -> None:
        text = self.app_text()
        self.texts.append(text)
        if self._el is not None:
            self._el.progress(min(1.0, self.finished / max(self.total, 1)), text=text)


def click_to_result_text(plan: PlanRun, ss: Any) -> str:
    """Say how long the user waited from the Solve click to the plan's numbers on the page.

    The first time the Plan page draws a plan after a click (``ss["plan_click"]``, a
    ``time.perf_counter()`` set by the click), the time since is stored with the run's
    id in ``ss["plan_waits"]``; later draws repeat it.

    Parameters
    ----------
    plan : PlanRun
        The plan shown.
    ss : mapping
        ``st.session_state``.

    Returns
    -------
    str
        ``"12.3 s from the click to these numbers (the solve took 9.2 s of it)"``
        (``a cached result`` when the solve was reused);
        ``"solve time only (no click measured)"`` for a plan not solved by a click here.
    """
    waits: dict[str, float] = ss.setdefault("plan_waits", {})
    click = ss.pop("plan_click", None) if "plan_click" in ss else None
    if click is not None and plan.run_id not in waits:
        waits[plan.run_id] = time.perf_counter() - float(click)
    wait = waits.get(plan.run_id)
    if wait is None:
        return "solve time only (no click measured)"
    of_it = "a cached result" if plan.cached else f"the solve took {plan.seconds:.1f} s of it"
    return f"{wait:.1f} s from the click to these numbers ({of_it})"
