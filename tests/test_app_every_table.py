"""Every table of the bundled data opens in the Data page's editor.

A schema default of NaN (``carbon_policy.carbon_cap_t``: empty = no cap) once reached
the editor's column configuration, which Streamlit sends as JSON: NaN is not JSON, so
the page showed a StreamlitAPIException for that one table.
"""

from __future__ import annotations

import json
import math

import pytest
from streamlit.testing.v1 import AppTest

from capacity.dataset import load_dataset
from capacity.schema import SPECS, TABLE_NAMES
from tests.apptest_helpers import goto, open_app, rerun
from tests.conftest import DEFAULT_DATA
from ui.dataio import column_config, column_help, editor_frame


@pytest.mark.parametrize("table", TABLE_NAMES)
def test_the_column_config_of_every_table_is_json(table: str) -> None:
    cfg = column_config(table)
    json.dumps(cfg, allow_nan=False)  # raises ValueError on NaN or infinity
    assert set(cfg) == {c.name for c in SPECS[table].columns}


def test_a_nan_default_reads_as_the_description_says() -> None:
    spec = SPECS["carbon_policy"]
    cap = next(c for c in spec.columns if c.name == "carbon_cap_t")
    assert math.isnan(cap.default)
    assert column_config("carbon_policy")["carbon_cap_t"].get("default") is None
    text = column_help(cap, spec)
    assert "nan" not in text and "empty: no cap" in text and text.endswith("Optional.")


def test_every_bundled_table_opens_in_the_editor(monkeypatch: pytest.MonkeyPatch) -> None:
    ds = load_dataset(DEFAULT_DATA)
    at = open_app(monkeypatch, DEFAULT_DATA)
    goto(at, "data")
    opened = []
    for table in TABLE_NAMES:
        at.selectbox(key="data_table").set_value(table)
        rerun(at)  # fails on any exception the page raised
        assert not at.error, (table, [e.value for e in at.error])
        (editor,) = at.data_editor
        assert editor.key == f"editor_{table}"
        want = editor_frame(ds, table)
        assert len(editor.value) == len(want), table
        assert list(editor.value.columns) == list(want.columns), table
        opened.append(table)
    assert opened == list(TABLE_NAMES) and "carbon_policy" in opened


def test_the_carbon_policy_editor_shows_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    at: AppTest = open_app(monkeypatch, DEFAULT_DATA)
    goto(at, "data")
    at.selectbox(key="data_table").set_value("carbon_policy")
    rerun(at)
    value = at.data_editor[0].value
    assert value["carbon_price_usd_per_t"].tolist() == ["0"]  # numbers edited as text
    assert value["carbon_cap_t"].isna().tolist() == [True]  # empty: no cap
