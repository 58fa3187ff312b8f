"""Domain layer of the planner: schema specs, dataset I/O, validation and scenarios.

Imports neither PuLP nor Streamlit.

Modules
-------
``spec_types``       the Column and TableSpec records and the column builders.
``tables_record``    specs of periods, public_record and sources.
``tables_sites``     specs of sites and their pipeline, grid, water and power tables.
``tables_chips``     specs of chips, supply resources, bill of materials, initial fleet.
``tables_demand``    specs of customers, workloads, demand, eligibility, commitments, clusters.
``schema``           every spec in canonical order, quarter labels, the units table.
``validation``       the Finding record, DataValidationError and the finding helpers.
``parsing``          one table's cells, read as text, into typed columns.
``period_order``     the order of the periods table (one cause, one finding).
``table_checks``     cross-table rules: duplicate keys, references, semantics, placement.
``fit_checks``       fit rules: pipeline, initial fleet and on-site plants fit; PPA steps.
``source_checks``    provenance rules: sources and the public record.
``plausibility``     plausibility warnings for penalty columns.
``revalidate``       validation by parts: a change re-checks only what it touches.
``scenario_spec``    the Override and Scenario records and the reading of scenarios.yaml.
``scenarios``        applying overrides and scenarios, diffing datasets.
``override_checks``  an override whose ``where`` matches no row is a finding.
``safe_yaml``        the one YAML reader (alias-expansion cap).
``yaml_keys``        YAML mapping keys: duplicates refused, merge keys applied.
``csv_read``         one table file read as raw cells, as a spreadsheet saves it.
``dataset``          the immutable Dataset, load_dataset, validate_directory.
``recorded_inputs``  a report's inputs.yaml: the overrides of a solved scenario.
``limits``           size limits on accepted input (uploads).
``csv_safe``         CSV output with formula-like text cells escaped.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names below load on first use (``capacity --help`` loads none)
    from capacity.dataset import Dataset, load_dataset
    from capacity.scenarios import apply_overrides, apply_scenario, diff_datasets
    from capacity.validation import DataValidationError, Finding

_HOMES = {
    "DataValidationError": "capacity.validation",
    "Dataset": "capacity.dataset",
    "Finding": "capacity.validation",
    "apply_overrides": "capacity.scenarios",
    "apply_scenario": "capacity.scenarios",
    "diff_datasets": "capacity.scenarios",
    "load_dataset": "capacity.dataset",
}
"""The module each public name comes from; imported on first use (PEP 562), so that
importing one module of the package (``capacity.limits``) does not load pandas."""

__all__ = [
    "DataValidationError",
    "Dataset",
    "Finding",
    "apply_overrides",
    "apply_scenario",
    "diff_datasets",
    "load_dataset",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use (see ``_HOMES``)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'capacity' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
