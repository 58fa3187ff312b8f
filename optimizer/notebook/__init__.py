"""The notebook face of a plan: statistics, figures, plans read back from reports.

``Plan(...).statistics.capex(groupby=["year", "family"])`` gives a tidy,
unit-labelled frame summed from the result tables; ``plan.plot.capex(kind="bar")``
draws it with plotly (the app's charts of the same statistics call the same code);
:func:`~optimizer.notebook.plan.read_report` and
:func:`~optimizer.notebook.plan.read_run` give the same objects from a report folder.
The public entry points are re-exported by the ``capacity_planner`` package.

Modules
-------
``keys``        the report keys (region, family, vendor, year) and the dataset's key maps.
``statistics``  tidy statistics of a plan summed from its result tables, with groupby.
``plots``       plotly figures of the statistics: area, bar, line, heatmap.
``plan``        Plan, PlanCollection, compare, and reading a report folder back.
``run_checks``  what reading a folder back warns of: unfinished, mixed, missing cases.
"""

from optimizer.notebook.keys import PlanKeys
from optimizer.notebook.plan import Plan, PlanCollection, read_report, read_run
from optimizer.notebook.plots import draw
from optimizer.notebook.statistics import STATISTICS, Statistics

__all__ = [
    "STATISTICS",
    "Plan",
    "PlanCollection",
    "PlanKeys",
    "Statistics",
    "draw",
    "read_report",
    "read_run",
]
