"""Many plans: sweeps, batches on Dask, risk views and the hedged plan.

Modules
-------
``sweep``         the sweep spec models (scenarios, grid, Monte Carlo, distributions).
``sweep_errors``  a sweep file's errors: SweepSpecError, pydantic errors as text.
``sweep_lines``   YAML line maps of a sweep file (key path -> line).
``sweep_read``    reading a sweep file: YAML to a validated spec, errors with lines.
``sweep_cases``   a sweep's cases: SweepCase and its key, expansion, a case's dataset.
``outcomes``      the headline outcomes of one plan and their statistics.
``dask_cluster``  the Dask client: local cluster security, bounded wait on reconnects.
``case_check``    is a written batch case really done (reads report files).
``batch_folder``  the batch folder's manifest, merged under a lock.
``batch``         many solves: model patching, Dask batch with resume.
``risk``          tornado, Monte Carlo, hedged (two-stage) plan with VSS and EVPI.
``decompose``     the hedged plan by L-shaped decomposition on Dask.
"""
