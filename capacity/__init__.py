"""Domain layer of the planner: schema specs, dataset I/O, validation and scenarios.

Imports neither PuLP nor Streamlit.
"""

from capacity.dataset import Dataset, load_dataset
from capacity.scenarios import apply_overrides, apply_scenario, diff_datasets
from capacity.validation import DataValidationError, Finding

__all__ = [
    "DataValidationError",
    "Dataset",
    "Finding",
    "apply_overrides",
    "apply_scenario",
    "diff_datasets",
    "load_dataset",
]
