"""The planner's Python API for notebooks: load, solve, statistics, plots, reports.

Why a package of its own: ``capacity`` is the domain layer (schema, data, scenarios)
and must not depend on the model above it, not even through a lazy import
(``tests/test_architecture.py`` reads every import); the distribution is called
``capacity-planner``, so its import name is ``capacity_planner``. It sits on top,
beside the app and the command line, and only re-exports and joins their parts::

    import capacity_planner as cp

    plan = cp.solve("data", scenario="neutral")
    plan.statistics.capex(groupby=["year", "family"])
    plan.plot.capex(groupby=["year", "family"], kind="bar")

Entry points
------------
``load``             a validated dataset (a scenario applied).
``solve``            one plan (:class:`Plan`: its tables, ``statistics``, ``plot``).
``solve_scenarios``  several named scenarios as a :class:`PlanCollection`.
``read_report``      one scenario of a Parquet report back as a :class:`Plan`.
``read_run``         every scenario of a run or batch folder as a :class:`PlanCollection`.
``run_batch``        a sweep file's cases on Dask, into a folder (``read_run`` reads it).
``hedged_plan``      the two-stage hedged plan with VSS and EVPI.
``tornado``          one-at-a-time sensitivity; ``monte_carlo``: seeded re-solves.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from pathlib import Path

from capacity.dataset import Dataset, load_dataset
from capacity.scenarios import apply_scenario, diff_datasets
from optimizer.analysis.batch import run_batch
from optimizer.analysis.hedge import hedged_plan
from optimizer.analysis.monte_carlo import monte_carlo
from optimizer.analysis.tornado import tornado
from optimizer.notebook.plan import Plan, PlanCollection, read_report, read_run
from optimizer.plan.objective_reads import scenario_overrides, unread_override_findings
from optimizer.plan.options import SolveOptions
from optimizer.plan.pipeline import solve as solve_result

__all__ = [
    "Dataset",
    "Plan",
    "PlanCollection",
    "SolveOptions",
    "apply_scenario",
    "diff_datasets",
    "hedged_plan",
    "load",
    "monte_carlo",
    "read_report",
    "read_run",
    "run_batch",
    "solve",
    "solve_scenarios",
    "tornado",
]

DataArg = Dataset | str | os.PathLike[str]


def load(data: DataArg = "data", scenario: str | None = None) -> Dataset:
    """Return a validated dataset, with a named scenario applied.

    Parameters
    ----------
    data : Dataset or path-like
        A dataset folder (CSV tables, ``scenarios.yaml``) or a loaded dataset.
    scenario : str, optional
        A scenario of the data (``neutral``, ``negative`` ...); None keeps the tables
        as they are (``base``).

    Returns
    -------
    capacity.Dataset

    Raises
    ------
    TypeError
        When ``scenario`` is not a name (a str) or None, or ``data`` is neither a
        folder nor a Dataset.
    capacity.DataValidationError
        When the data has errors (every finding names file, row, column and value).
    KeyError
        When ``scenario`` is not defined by the data.
    ValueError
        When ``data`` is a dataset with another scenario already applied (its tables
        are not the base tables the scenario's overrides apply to).

    Notes
    -----
    A dataset that already has ``scenario`` applied (``load(load(path, "negative"),
    "negative")``) is returned as it is: a scenario is applied once.
    """
    if scenario is not None and not isinstance(scenario, str):  # 5, ["neutral"]
        raise TypeError(f"scenario: give one name (a str) or None, not {scenario!r}")
    if data is None or not isinstance(data, Dataset | str | os.PathLike):
        raise TypeError(f"data: give a dataset folder or a Dataset, not {data!r}")
    ds = data if isinstance(data, Dataset) else load_dataset(Path(data))
    if scenario is None or scenario == ds.scenario:  # "" is no name: refused as unknown
        return ds
    _refuse_on_applied(ds, scenario)
    return apply_scenario(ds, scenario)


def _refuse_on_applied(ds: Dataset, scenario: str) -> None:
    """Raise ValueError when ``ds`` has a scenario other than ``scenario`` applied."""
    if ds.scenario not in ("base", scenario):
        raise ValueError(
            f"the dataset given already has scenario {ds.scenario!r} applied; "
            f"{scenario!r} applies to the base data: pass cp.load(path) (or the path) "
            f"to solve {scenario!r}, or no scenario to solve {ds.scenario!r}"
        )


def solve(
    data: DataArg = "data",
    scenario: str | None = None,
    options: SolveOptions | None = None,
) -> Plan:
    """Solve one plan and return it with its statistics and figures.

    Parameters
    ----------
    data : Dataset or path-like
        As for :func:`load`.
    scenario : str, optional
        A scenario of the data; None solves ``data`` as it is.
    options : SolveOptions, optional
        Solver, time limit, formulation ... (default HiGHS, compact LP).

    Returns
    -------
    Plan
        ``plan.status``, ``plan.objective_usd`` (discounted USD), ``plan.tables``,
        ``plan.statistics``, ``plan.plot``; ``plan.result`` is the full
        :class:`optimizer.PlanResult` (message, violations, timings).

    Raises
    ------
    TypeError
        When ``options`` is not a :class:`SolveOptions` (a dict of them is not read).
    ValueError
        When ``data`` is a dataset with another scenario already applied (see
        :func:`load`).

    Warns
    -----
    UserWarning
        For each override of the scenario that the objective does not read (a price
        or contract term in the cost objective).
    """
    if options is not None and not isinstance(options, SolveOptions):  # {"solver": ...}
        raise TypeError(f"options: give cp.SolveOptions(...), not {type(options).__name__}")
    ds = load(data, scenario)
    objective = (options or SolveOptions()).objective
    name = scenario or ds.scenario  # a Dataset given with its scenario applied: that one
    for f in unread_override_findings(scenario_overrides(ds.scenarios, name), objective):
        warnings.warn(f"scenario {name!r}: {f.message}", UserWarning, stacklevel=2)
    return Plan.from_result(solve_result(ds, options), ds, name=scenario or ds.scenario)


def solve_scenarios(
    data: DataArg = "data",
    scenarios: str | Sequence[str] = ("optimistic", "neutral", "negative"),
    options: SolveOptions | None = None,
) -> PlanCollection:
    """Solve several named scenarios of one dataset, one plan each.

    Parameters
    ----------
    data : Dataset or path-like
        As for :func:`load`.
    scenarios : str or sequence of str
        Scenario names of the data, in display order; one name may be given alone,
        and ``"all"`` (alone or in the list) stands for every scenario the data
        defines, in file order, as on the command line. Names given twice are solved
        once.
    options : SolveOptions, optional

    Returns
    -------
    PlanCollection
        Scenario name -> plan; ``plans.statistics.capex(groupby="scenario")``.

    Raises
    ------
    ValueError
        When ``scenarios`` is empty, or ``data`` is a dataset with a scenario applied
        and ``scenarios`` names another (see :func:`load`).
    """
    from optimizer.cli.scenarios import scenario_names

    if scenarios is None or not isinstance(scenarios, str | Sequence):
        raise TypeError(f"scenarios: give a name, a list of names or 'all', not {scenarios!r}")
    requested = [scenarios] if isinstance(scenarios, str) else [str(n) for n in scenarios]
    if not requested:
        raise ValueError("scenarios: no scenario named (give a name, a list of names or 'all')")
    base = load(data)
    scenarios = scenario_names(list(base.scenarios), requested)
    for name in scenarios:  # every name checked before the first solve
        _refuse_on_applied(base, name)
    return PlanCollection({name: solve(base, name, options) for name in scenarios})
