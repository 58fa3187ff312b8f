"""The ``capacity`` command line.

Modules
-------
``commands``  ``capacity validate | diff | solve | batch | hedge | bench | app``.
``checks``    option and output checks shared by every command.
``pulp``      ``capacity solvers`` and ``capacity export-lp``.
"""
