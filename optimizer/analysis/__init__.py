"""Many plans: sweeps, batches on Dask, risk views and the hedged plan.

Modules
-------
``sweep``         the sweep spec models (scenarios, grid, Monte Carlo, distributions).
``sweep_errors``  a sweep file's errors: SweepSpecError, pydantic errors as text.
``sweep_lines``   YAML line maps of a sweep file (key path -> line).
``sweep_read``    reading a sweep file: YAML to a validated spec, errors with lines.
``sweep_cases``   a sweep's cases: SweepCase and its key, expansion, a case's dataset.
``outcomes``      the headline outcomes of one plan and their statistics.
``dask_remote``   an external Dask scheduler: its address, TLS files, the connection.
``dask_cluster``  the Dask client: local cluster security, bounded wait on reconnects.
``dask_worker_preload``  what each local worker runs as it starts: it ignores Ctrl-C.
``case_check``    is a written batch case really done (reads report files).
``batch_folder``  the batch folder's manifest, merged under a lock.
``batch_invalid``  cases whose data does not validate, found before solving.
``batch_resume``  which cases a re-run skips: case identity (options) and verified plans.
``batch_patch``   model patching for reuse: data-change detection and the patchers.
``batch_case``    one case in a process: caches, retained HiGHS session, run_case, solve_many.
``batch_progress``  the batch's rich progress bar.
``batch_record``  recording each finished case: its tables, then its manifest entry.
``batch_dask``    solving the cases on Dask: bounded wait, one lone retry of a lost case.
``batch``         the batch driver: ``capacity batch``, a sweep's cases into one folder.
``batch_render``  printing a batch's findings and its invalid cases with rich.
``tornado``           one-at-a-time sensitivity: parameter groups at low and high levels.
``monte_carlo``       seeded Monte Carlo re-solves, binding shares, sampled scenarios.
``hedge``             the hedged (two-stage) plan in extensive form with VSS and EVPI.
``decompose``         the hedged plan by L-shaped decomposition on Dask: the driver.
``decompose_cuts``    L-shaped cuts and the induced rows a scenario gives the master.
``decompose_blocks``  L-shaped scenario subproblems: a live HiGHS per scenario, on Dask actors.
``decompose_dispatch`` the first solves, each scenario handed to whichever block is free.
``decompose_master``  the L-shaped master LP: cuts, the cut pool, level projection, retained rows.
``decompose_setup``   L-shaped inputs: weights and names, the EV plan, retained scenarios.
``decompose_result``  the decomposed plan's result record and its first-stage table.
``hedge_risk``        the CVaR frontier: expected cost against CVaR per risk weight.
``hedge_chance``      the chance-constrained hedged plan; achieved probability in and out of sample.
``alternatives_quantities``  the plan quantities of the alternatives as linear forms.
``alternatives``      near-optimal alternatives (MGA): ranges under a cost cap, their plans.
``alternatives_dask``  the alternatives on Dask: the quantities split over workers.
``replan_setup``      rolling replanning's inputs: truth draws, forecast revisions, locks.
``replan``            replanning along one truth path: solve, lock, reveal, replan; regret.
``replan_run``        rolling replanning over many paths, here or on Dask, and the spread.
``replan_folder``     the replan run folder (one partition per path) and its chart.
``tree_spec``         the scenario-tree file: stages, nodes, branch probabilities, errors.
``tree``              the multi-stage plan over a tree: extensive form, plan per node.
``tree_replan``       the tree plan, the hedge and rolling replanning priced on the tree's leaves.
"""
