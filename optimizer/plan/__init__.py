"""The centre: build one plan's LP, solve it, check it and read it back into tables.

The pipe is ``model`` (build) -> ``solve`` (solver seam, statuses, duals) -> ``check``
(independent re-check) -> ``results`` (result tables) -> :class:`PlanResult`.

Modules
-------
``model``          build the LP from the components: columns, rows, objective, matrix.
``coding``         input coding: every ID to an integer code, periods to positions.
``columns``        the column phase: first-stage keys, operating columns, component hooks.
``fixing``         first-stage columns fixed to a plan's values (VSS, EVPI).
``pulp_io``        the model as a PuLP problem: readable names, LP/MPS files.
``solvers``        the solver registry and the PuLP solve path.
``results``        read a solution back into the result tables.
``row_duals``      row duals on the result tables' keys (each family's shadow price).
``cost_tables``    the costs table: each objective term per period, and as cash.
``shadow_prices``  the shadow_prices table: every limit row's dual, slack, binding.
``check``          independent re-check of a plan against the input data.
``explain``        infeasibility wording (which limits conflict, and by how much).
``calibration``    the plan held against the public record (``public_record.csv``).
``solve``          run the solver, statuses, duals, :class:`PlanResult`; stochastic.
"""
