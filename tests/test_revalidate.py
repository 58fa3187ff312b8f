"""Re-validation of changed tables only (capacity.revalidate) equals a full validation.

``Dataset.replace`` re-parses only the columns a change touches and re-runs only the
cross-table checks that read them. Reference: ``Dataset.from_tables`` on the merged
tables (every table parsed, every check run). Both must give the same typed tables,
the same findings in the same order and the same content hash, or the same errors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from capacity.dataset import Dataset, load_dataset
from capacity.revalidate import CHECK_READS, CHECKS, STRUCTURAL_COLUMNS
from capacity.scenarios import apply_overrides, apply_scenario
from capacity.schema import SPECS, TABLE_NAMES
from capacity.validation import DataValidationError
from tests.conftest import DEFAULT_DATA


@pytest.fixture(scope="module")
def default_ds() -> Dataset:
    ds = load_dataset(DEFAULT_DATA)
    ds.replace()  # make its validation record once (as a batch worker does)
    return ds


def _full(ds: Dataset, **tables: pd.DataFrame) -> Any:
    """The reference: every table parsed and checked again."""
    try:
        return Dataset.from_tables(
            {**ds.tables, **tables}, name=ds.name, scenarios=ds.scenarios, meta=ds.meta
        )
    except DataValidationError as e:
        return [str(f) for f in e.findings]


def _fast(ds: Dataset, **tables: pd.DataFrame) -> Any:
    try:
        return ds.replace(**tables)
    except DataValidationError as e:
        return [str(f) for f in e.findings]


def _assert_same(a: Any, b: Any, what: str) -> None:
    if isinstance(a, list) or isinstance(b, list):
        assert a == b, what
        return
    assert a.hash == b.hash, what
    assert [str(f) for f in a.warnings] == [str(f) for f in b.warnings], what
    for t in TABLE_NAMES:
        pd.testing.assert_frame_equal(a.table(t), b.table(t), check_exact=True, obj=f"{what}: {t}")


def _changed(df: pd.DataFrame, column: str) -> pd.DataFrame:
    """Row 0 of ``column`` changed: numbers times -2 (a bound may break), text from row 1."""
    new = df.copy()
    v = new[column].to_numpy(copy=True)
    if v.dtype.kind in "fiu":
        v = v.astype(float)
        v[0] = -2.0 * v[0] if v[0] != 0 else -1.0
        new[column] = v if df[column].dtype.kind == "f" else v.astype(df[column].dtype)
    else:
        v[0] = v[1] if len(v) > 1 else "zz_changed"
        new[column] = v
    return new


@pytest.mark.slow  # about 200 full validations (30 s of CPU)
def test_every_column_change_revalidates_as_a_full_validation(default_ds: Dataset) -> None:
    n = 0
    for t in TABLE_NAMES:
        df = default_ds.table(t)
        if t == "periods" or not len(df):
            continue
        for c in df.columns:
            new = _changed(df, str(c))
            _assert_same(_fast(default_ds, **{t: new}), _full(default_ds, **{t: new}), f"{t}.{c}")
            n += 1
    assert n > 100  # every column of every non-empty table of the default dataset


def test_value_change_reuses_unchanged_checks_and_tables(default_ds: Dataset) -> None:
    """A scale of three value columns: tables untouched keep their frames; same result."""
    ovs = [
        {"op": "scale", "table": "demand", "column": "demand_h100e", "factor": 1.2},
        {"op": "scale", "table": "supply_resources", "column": "capacity", "factor": 0.9},
        {"op": "scale", "table": "sites", "column": "energy_price_usd_per_mwh", "factor": 1.1},
    ]
    ovs = [{**o, "source": "assumption: test"} for o in ovs]
    fast = apply_overrides(default_ds, ovs)
    tables = {o["table"]: fast.table(str(o["table"])) for o in ovs}
    _assert_same(fast, _full(default_ds, **tables), "three scaled columns")
    assert fast.table("chips") is default_ds.table("chips")
    assert fast.table("demand")["demand_h100e"].to_numpy() == pytest.approx(
        default_ds.table("demand")["demand_h100e"].to_numpy() * 1.2
    )
    # a chained change (a scenario, then a sweep case) matches too
    neg = apply_scenario(default_ds, "negative")
    _assert_same(
        apply_overrides(neg, ovs),
        _full(neg, **{t: apply_overrides(neg, ovs).table(t) for t in tables}),
        "negative then three scaled columns",
    )


def test_a_broken_value_is_still_an_error_naming_the_cell(default_ds: Dataset) -> None:
    sites = default_ds.table("sites").copy()
    sites.loc[1, "pue_air"] = 0.6
    with pytest.raises(DataValidationError) as e:
        default_ds.replace(sites=sites)
    f = next(f for f in e.value.findings if f.severity == "error")
    assert (f.file, f.row, f.column) == ("sites.csv", 3, "pue_air")


def test_raw_text_tables_are_parsed_whole(default_ds: Dataset) -> None:
    """A replaced table of text cells (as an app edit sends) is parsed like a load."""
    raw = default_ds.table("chips").astype(str).replace({"nan": ""})
    raw.loc[0, "capex_usd_per_chip"] = "1e3"
    _assert_same(_fast(default_ds, chips=raw), _full(default_ds, chips=raw), "raw chips")
    again = default_ds.replace(chips=raw)
    assert again.table("chips")["capex_usd_per_chip"].iat[0] == 1000.0
    other = again.table("sites").copy()
    other["energy_price_usd_per_mwh"] = other["energy_price_usd_per_mwh"] * 2
    _assert_same(_fast(again, sites=other), _full(again, sites=other), "after raw chips")


def test_check_reads_name_real_columns() -> None:
    assert {name for name, _ in CHECKS} == set(CHECK_READS)
    for reads in CHECK_READS.values():
        for t, c in reads:
            assert c == "*" or SPECS[t].has_column(c), (t, c)
    assert ("demand", "customer") in STRUCTURAL_COLUMNS
    assert ("demand", "demand_h100e") not in STRUCTURAL_COLUMNS
    assert np.all([SPECS[t].has_column(c) for t, c in STRUCTURAL_COLUMNS])


def test_column_digests_are_pandas_hashes_of_each_column_as_text(default_ds: Dataset) -> None:
    """One hash call for all columns gives each column's own hash, byte for byte."""
    from capacity.revalidate import column_digests

    odd = pd.DataFrame(
        {"x": [1.5, np.nan, 1e-5], "n": [3, 0, -2], "t": ["a", None, "b"], "b": [True, False, True]}
    )
    for df in [*default_ds.tables.values(), odd]:
        got = column_digests(df)
        assert list(got) == [str(c) for c in df.columns]
        for c in df.columns:
            one = pd.util.hash_pandas_object(df[c].astype(str), index=False).to_numpy()
            assert got[str(c)] == (one.tobytes() if len(df) else b""), c
    # a change re-hashes only the columns named
    known = column_digests(odd)
    changed = odd.assign(n=[9, 9, 9])
    again = column_digests(changed, known=known, changed=["n"])
    assert again["x"] is known["x"] and again["n"] != known["n"]
    assert again == column_digests(changed)
