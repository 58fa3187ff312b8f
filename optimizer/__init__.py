"""Planning optimiser: the LP model, solve, check, explain and result tables.

Public API::

    from optimizer import solve, SolveOptions, PlanResult, Status
    result = solve(load_dataset("data"), SolveOptions(solver="highs"))
"""

from optimizer.model import (
    FACILITY_LIFE_PERIODS,
    FAMILIES,
    PlanningModel,
    build_model,
    build_stochastic_model,
    fix_first_stage,
    to_pulp,
)
from optimizer.results import TABLE_COLUMNS, empty_tables
from optimizer.solve import (
    PlanResult,
    SolveOptions,
    Status,
    StochasticResult,
    solve,
    solve_model,
    solve_stochastic,
)

__all__ = [
    "FACILITY_LIFE_PERIODS",
    "FAMILIES",
    "PlanResult",
    "PlanningModel",
    "SolveOptions",
    "Status",
    "StochasticResult",
    "TABLE_COLUMNS",
    "build_model",
    "build_stochastic_model",
    "empty_tables",
    "fix_first_stage",
    "solve",
    "solve_model",
    "solve_stochastic",
    "to_pulp",
]
