"""Planning optimiser: the LP model, solve, check, explain and result tables.

Public API::

    from optimizer import solve, SolveOptions, PlanResult, Status
    result = solve(load_dataset("data"), SolveOptions(solver="highs"))

Layers
------
Sub-packages, lowest layer first; a module imports only modules of its own layer or
a lower one, never a higher one, and no import cycle forms
(``tests/test_architecture.py`` reads every import, lazy ones included). The package
imports :mod:`capacity` (schema, data, scenarios) and never :mod:`ui`. Each
sub-package's docstring lists its modules.

``lp``          the LP's generic machinery: index letters, builder, violations, group sums.
``components``  one module per part of the plan: columns, families, costs, tables.
``plan``        the pipe of one plan: build, solve, check, tables, result.
``output``      the report writer and the plan summary.
``analysis``    sweeps, batches on Dask, risk views, the hedged plan.
``notebook``    a plan's statistics and figures, plans read back from reports.
``cli``         the capacity command line.

The public names load on first use, so ``capacity --help`` imports no solver.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names below load on first use (``capacity --help`` loads none)
    from optimizer.components import FAMILIES
    from optimizer.components.construction import FACILITY_LIFE_PERIODS
    from optimizer.plan.fixing import fix_first_stage
    from optimizer.plan.model import PlanningModel, build_model, build_stochastic_model
    from optimizer.plan.options import SolveOptions, Status
    from optimizer.plan.pipeline import solve, solve_model
    from optimizer.plan.plan_result import PlanResult
    from optimizer.plan.pulp_io import PulpNames, pulp_names, to_pulp, write_problem
    from optimizer.plan.results import TABLE_COLUMNS, empty_tables
    from optimizer.plan.stochastic import StochasticResult, solve_stochastic

_HOMES = {
    "FACILITY_LIFE_PERIODS": "optimizer.components.construction",
    "FAMILIES": "optimizer.components",
    "PlanResult": "optimizer.plan.plan_result",
    "PlanningModel": "optimizer.plan.model",
    "PulpNames": "optimizer.plan.pulp_io",
    "SolveOptions": "optimizer.plan.options",
    "Status": "optimizer.plan.options",
    "StochasticResult": "optimizer.plan.stochastic",
    "TABLE_COLUMNS": "optimizer.plan.results",
    "build_model": "optimizer.plan.model",
    "build_stochastic_model": "optimizer.plan.model",
    "empty_tables": "optimizer.plan.results",
    "fix_first_stage": "optimizer.plan.fixing",
    "pulp_names": "optimizer.plan.pulp_io",
    "solve": "optimizer.plan.pipeline",
    "solve_model": "optimizer.plan.pipeline",
    "solve_stochastic": "optimizer.plan.stochastic",
    "to_pulp": "optimizer.plan.pulp_io",
    "write_problem": "optimizer.plan.pulp_io",
}
"""The module each public name comes from; imported on first use (PEP 562), so that
importing a sub-package (the command line) does not load the model stack."""

__all__ = [
    "FACILITY_LIFE_PERIODS",
    "FAMILIES",
    "PlanResult",
    "PlanningModel",
    "PulpNames",
    "SolveOptions",
    "Status",
    "StochasticResult",
    "TABLE_COLUMNS",
    "build_model",
    "build_stochastic_model",
    "empty_tables",
    "fix_first_stage",
    "pulp_names",
    "solve",
    "solve_model",
    "solve_stochastic",
    "to_pulp",
    "write_problem",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use (see ``_HOMES``)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'optimizer' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
