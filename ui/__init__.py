"""Streamlit app of the capacity planner (pages in ``ui/app_pages``)."""
