"""The centre: build one plan's LP, solve it, check it and read it back into tables.

The pipe (``pipeline``) is ``model`` (build) -> ``raw_solve`` (solver seam, statuses,
duals) -> ``check`` (independent re-check) -> ``results`` (result tables) ->
:class:`PlanResult` (``plan_result``).

Modules
-------
``model``          build the LP from the components: columns, rows, objective, matrix.
``coding``         input coding: every ID to an integer code, periods to positions.
``columns``        the column phase: first-stage keys, operating columns, component hooks.
``fixing``         first-stage columns fixed to a plan's values (VSS, EVPI).
``pulp_io``        the model as a PuLP problem: readable names, LP/MPS files.
``options``        what a solve is asked and a solver returns: options, statuses, raw solutions.
``objective_reads``  overrides the objective never reads (a price in cost mode): warnings.
``deadline``       the solve's wall-clock budget: deadline, time left, each stage's share.
``highs``          the HiGHS bulk seam: the model's arrays handed to highspy in one call.
``highs_session``  a retained HiGHS instance that re-solves LP variants from the last basis.
``warm_start``     the cluster-mode MIP start from the LP relaxation.
``solvers``        the solver registry: names, availability, versions, duals.
``pulp_status``    a PuLP solver's outcome as a status (CBC, GLPK, SCIP, HiGHS).
``solver_watch``   the solver program of a PuLP solve: its folder, watch and signals.
``pulp_solve``     the PuLP solve path: build, run under a watch, read values and duals.
``raw_solve``      run the chosen solver on a built model; MIP start, fixed-integer duals.
``results``        read a solution back into the result tables.
``row_duals``      row duals on the result tables' keys (each family's shadow price).
``cost_tables``    the costs table: each objective term per period, and as cash.
``shadow_prices``  the shadow_prices table: every limit row's dual, slack, binding.
``check``          independent re-check of a plan against the input data.
``explain``        infeasibility wording (which limits conflict, and by how much).
``calibration``    the plan held against the public record (``public_record.csv``).
``plan_result``    :class:`PlanResult` and its assembly from a raw solution.
``pipeline``       the pipe: build -> solve -> check -> tables -> :class:`PlanResult`.
``stochastic``     the two-stage stochastic solve over weighted scenarios.
``risk``           CVaR rows (Rockafellar-Uryasev) of E + L CVaR over the scenario costs.
``chance``         chance rows: a floor met with a required probability (MIP or CVaR).
``appended``       solve a model with cross-scenario rows appended; tables of the base.
"""
