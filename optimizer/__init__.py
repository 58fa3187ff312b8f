"""Planning optimiser: the LP model, solve, check, explain and result tables.

Public API::

    from optimizer import solve, SolveOptions, PlanResult, Status
    result = solve(load_dataset("data"), SolveOptions(solver="highs"))

Module map
----------
Grouped by kind, lowest layer first; a module imports only modules above it in this
list or beside it in its group, never below (``tests/test_architecture.py`` reads
every import, lazy ones included, and enforces this order and the absence of cycles).
The package imports :mod:`capacity` (schema, data, scenarios) and never :mod:`ui`.

The LP
    ``families``     the constraint-family registry: one unit per family with its
                     define, check, explain and result rows (``families/*.py``).
    ``model``        build the LP: index sets, variables, the registered families,
                     objective.
    ``reuse_cache``  index work cached per model structure (a sweep's patched models
                     share their base's: row lookups, result-table joins).
    ``results``      read a solution back into the result tables.
    ``check``        independent re-check of a plan against the input data.
    ``explain``      infeasibility wording (which limits conflict, and by how much).
    ``calibration``  the plan held against the public record (``public_record.csv``).
    ``solve``        run HiGHS/CBC, statuses, duals, :class:`PlanResult`; stochastic.
Output
    ``report``       Parquet report writer: result-table schema with units, manifest.
    ``summary``      the ten-second summary of a plan and its rich rendering.
Scenario analysis
    ``sweep``        sweep specs (scenarios, grid, Monte Carlo) read from YAML.
    ``outcomes``     the headline outcomes of one plan and their statistics.
    ``batch``        many solves: model patching, Dask batch with resume.
    ``risk``         tornado, Monte Carlo, hedged (two-stage) plan with VSS and EVPI.
The command line
    ``cli``          ``capacity validate | diff | solve | batch | bench | app``.
"""

from optimizer.model import (
    FACILITY_LIFE_PERIODS,
    FAMILIES,
    PlanningModel,
    build_model,
    build_stochastic_model,
    fix_first_stage,
)
from optimizer.pulp_io import PulpNames, pulp_names, to_pulp, write_problem
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
