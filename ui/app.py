"""Streamlit entry point: ``streamlit run ui/app.py`` (or ``capacity app``).

The entry file sets up the session (default dataset, keys) and the sidebar, then
hands over to :func:`st.navigation`; the pages in ``ui/app_pages/`` stay thin.
"""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:  # `streamlit run ui/app.py` puts ui/ first, not the repo
    sys.path.insert(0, str(_ROOT))

import streamlit as st  # noqa: E402

from capacity.text_storage import use_python_text  # noqa: E402

use_python_text()  # the app is the planner's own process (capacity.text_storage)

from ui.state import active_dataset, current_plan, init_state  # noqa: E402

PAGES = Path(__file__).resolve().parent / "app_pages"
#: The favicon, a file of this package (works with no network).
PAGE_ICON = Path(__file__).resolve().parent / "page_icon.png"


def sidebar() -> None:
    """Dataset, scenario and plan status in the sidebar, on every page."""
    ss = st.session_state
    base = ss["base_ds"]
    with st.sidebar:
        if base is None:
            st.error("No valid dataset loaded. Open **Data** to upload one.")
            return
        ds = active_dataset()
        st.caption("Dataset")
        st.markdown(f"**{base.name}** · `{base.hash[:12]}`")
        if ss["drafts"]:
            if ss["draft_findings"]:
                st.warning("Edits have errors: the last valid data is used.")
            else:
                st.caption(f"Edited tables: {', '.join(sorted(ss['drafts']))}")
        st.caption("Scenario")
        st.markdown(f"**{ds.scenario if ds is not None else '-'}**")
        plan = current_plan(ds)
        st.caption("Plan")
        if plan is None:
            st.markdown("not solved for this data" if ss["plan"] is not None else "not solved yet")
        else:
            st.markdown(f"**{plan.metrics['status']}** at {plan.solved_at}")


def main() -> None:
    """Build the navigation and run the selected page."""
    # a local file: emoji and :material/...: favicons are fetched from a CDN (offline: none)
    st.set_page_config(page_title="Capacity planner", page_icon=str(PAGE_ICON), layout="wide")
    init_state()
    pages = [
        st.Page(str(PAGES / "data.py"), title="Data", icon=":material/table_chart:", default=True),
        st.Page(str(PAGES / "scenarios.py"), title="Scenarios", icon=":material/tune:"),
        st.Page(str(PAGES / "plan.py"), title="Plan", icon=":material/monitoring:"),
        st.Page(str(PAGES / "risk.py"), title="Risk", icon=":material/balance:"),
        st.Page(str(PAGES / "reports.py"), title="Reports", icon=":material/download:"),
    ]
    page = st.navigation(pages)
    ss = st.session_state  # which page ran before this run (a page can tell a new visit)
    ss["page_before"], ss["page_now"] = ss.get("page_now"), getattr(page, "title", None)
    try:
        page.run()
    finally:  # after the page: a scenario or edit it made this run shows (it lagged one run)
        sidebar()


if __name__ == "__main__":  # Streamlit's run; not a process that re-reads this file
    main()
