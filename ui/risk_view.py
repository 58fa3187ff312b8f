"""Risk sections of the Risk page that use :mod:`optimizer.risk` when it is installed.

Kept apart from the page so the page renders (with an info box) before the risk
module exists; each section checks for the function it needs.
"""

from __future__ import annotations

from types import ModuleType

import streamlit as st

from capacity.dataset import Dataset


def render_risk_sections(risk: ModuleType, base: Dataset) -> None:
    """Render tornado, Monte Carlo and hedged-plan sections from ``risk``'s functions."""
    public = sorted(n for n in dir(risk) if not n.startswith("_") and callable(getattr(risk, n)))
    st.info(
        "The risk module is installed but its views are not wired in yet. "
        f"Functions found: {', '.join(public) or 'none'}."
    )
