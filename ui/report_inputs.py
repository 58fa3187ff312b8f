"""What a report downloaded from the app records about its inputs (``inputs.yaml``).

The app's data is the data as loaded, then the cell edits, then the named scenario,
then the composed overrides; the report records all of them as one list of overrides
(:mod:`optimizer.output.inputs_record`), so the download re-solves outside the app.
"""

from __future__ import annotations

from typing import Any

from capacity.dataset import Dataset


def solved_app_inputs(ss: Any, ds: Dataset) -> Any:
    """Return what the app solved ``ds`` from, for the report (its ``inputs.yaml``).

    ``ss`` is the session state. The overrides, applied in order to the data as
    loaded (``origin_ds``), give ``ds``: the cell edits as ``set`` overrides, the
    named scenario's overrides, then the composed ones. None when the session holds
    no loaded data.
    """
    from capacity.recorded_inputs import edits_as_overrides
    from capacity.scenario_spec import Override
    from optimizer.output.inputs_record import SolvedInputs

    origin, base = ss.get("origin_ds"), ss.get("base_ds")
    if origin is None or base is None:
        return None
    edits, rows = edits_as_overrides(origin, base)
    named, composed = None, []
    if ss.get("scenario_error") is None:  # else the base data was solved (see active_dataset)
        named = base.scenarios.get(ss.get("scenario_name"))
        composed = [o if isinstance(o, Override) else Override(**o) for o in ss["overrides"]]
    own = tuple(named.overrides) if named is not None else ()
    return SolvedInputs(
        scenario=ds.scenario,
        overrides=(*edits, *own, *composed),
        description="" if named is None else named.description,
        dataset_name=origin.name,
        dataset_hash=ds.hash,
        edits=tuple(rows),
        tables_hash=str(ds.tables_hash),  # the CLI warns when a re-solve's tables differ
    )
