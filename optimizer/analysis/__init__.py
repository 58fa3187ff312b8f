"""Many plans: sweeps, batches on Dask, risk views and the hedged plan.

Modules
-------
``sweep``         sweep specs (scenarios, grid, Monte Carlo) read from YAML.
``outcomes``      the headline outcomes of one plan and their statistics.
``dask_cluster``  the Dask client: local cluster security, bounded wait on reconnects.
``case_check``    is a written batch case really done (reads report files).
``batch_folder``  the batch folder's manifest, merged under a lock.
``batch``         many solves: model patching, Dask batch with resume.
``tornado``           one-at-a-time sensitivity: parameter groups at low and high levels.
``monte_carlo``       seeded Monte Carlo re-solves, binding shares, sampled scenarios.
``hedge``             the hedged (two-stage) plan in extensive form with VSS and EVPI.
``decompose``         the hedged plan by L-shaped decomposition on Dask: the driver.
``decompose_cuts``    L-shaped cuts and the induced rows a scenario gives the master.
``decompose_blocks``  L-shaped scenario subproblems: blocks of scenario LPs as Dask actors.
``decompose_master``  the L-shaped master LP: cuts, level projection, retained scenarios.
``decompose_result``  the decomposed plan's result record and its first-stage table.
"""
