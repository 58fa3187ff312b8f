"""The tutorial notebook (docs/tutorial.ipynb) executes from top to bottom.

It solves the three named scenarios of the default data, compares them and runs a
two-case sweep on Dask, so it takes about a minute: marked slow.
"""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import ROOT

TUTORIAL = ROOT / "docs" / "tutorial.ipynb"


@pytest.mark.slow
def test_the_tutorial_notebook_runs() -> None:
    nb = nbformat.read(TUTORIAL, as_version=4)
    client = NotebookClient(
        nb,
        timeout=900,
        kernel_name="python3",
        resources={"metadata": {"path": str(TUTORIAL.parent)}},
    )
    client.execute()  # a failing cell raises CellExecutionError with its traceback
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert errors == []
    charts = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "application/vnd.plotly.v1+json" in o.get("data", {})
    ]
    assert len(charts) == 3  # capex by family and year, energy by scenario, utilisation


def test_the_tutorial_is_stored_without_outputs() -> None:
    nb = nbformat.read(TUTORIAL, as_version=4)
    nbformat.validate(nb)
    assert all(c.get("outputs", []) == [] for c in nb.cells if c.cell_type == "code")
