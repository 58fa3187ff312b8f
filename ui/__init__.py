"""Streamlit app of the capacity planner (pages in ``ui/app_pages``).

Modules
-------
``app``            the entry point (``streamlit run ui/app.py``): the page navigation.
``state``          session state: the datasets, editor drafts, scenario and plans.
``upload``         reading an upload into a dataset (limits, zips, table files).
``dataio``         downloads and the table editor's schema helpers.
``findings_view``  findings as the pages show them (row numberings, knock-on errors).
``compose``        the scenario composer and plan metrics.
``report_inputs``  what a downloaded report records about its inputs (edits, overrides).
``charts``         Plotly figures of a plan's result tables.
``risk_view``      the Risk page's sections (tornado, Monte Carlo, hedged plan).
``formats``        display formats (USD billions, tornado levels, column configs).
``progress_view``  progress bars of long runs and the click-to-result time.
``alternatives_view``  the Risk page's near-optimal ranges (range chart and table).
``risk_aversion_view``  the Risk page's CVaR frontier and chance row (achieved probability).
"""
