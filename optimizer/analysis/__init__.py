"""Many plans: sweeps, batches on Dask, risk views and the hedged plan.

Modules
-------
``sweep``         sweep specs (scenarios, grid, Monte Carlo) read from YAML.
``outcomes``      the headline outcomes of one plan and their statistics.
``dask_cluster``  the Dask client: local cluster security, bounded wait on reconnects.
``case_check``    is a written batch case really done (reads report files).
``batch_folder``  the batch folder's manifest, merged under a lock.
``batch``         many solves: model patching, Dask batch with resume.
``risk``          tornado, Monte Carlo, hedged (two-stage) plan with VSS and EVPI.
``decompose``     the hedged plan by L-shaped decomposition on Dask.
"""
