"""The ``capacity`` command line.

Modules
-------
``commands``   the Typer app: every command registered in help order, ``main``.
``app``        ``capacity app`` (the Streamlit server).
``validate``   ``capacity validate`` and ``capacity diff``.
``solve``      ``capacity solve`` and its run folder.
``batch``      ``capacity batch`` (a sweep on Dask) and its cluster options.
``bench``      ``capacity bench`` (the checkout's benchmarks).
``hedge``      ``capacity hedge`` (the hedged plan, VSS and EVPI).
``hedge_options`` the risk options of ``capacity hedge`` (CVaR, chance rows).
``hedge_tree`` ``capacity hedge --tree`` (the multi-stage plan over a scenario tree).
``hedge_folder`` what ``capacity hedge --out`` writes (folder, manifest, CSVs; frontier).
``replan``     ``capacity replan`` (rolling replanning along truth paths, regret).
``alternatives`` ``capacity alternatives`` (near-optimal ranges and plans).
``pulp``       ``capacity solvers`` and ``capacity export-lp``.
``scenarios``  loading a dataset and applying the scenarios a command asks for.
``options``    options more than one command takes (``--solver``, ``--formulation``).
``printing``   the findings table printed for data that does not validate.
``checks``     option, solver and output checks shared by every command.
``option_needs`` options one mode of a command reads: refused without that mode.
"""
