"""Values kept while their data tables are the same objects (optimizer.lp.reuse_cache)."""

from __future__ import annotations

import pandas as pd

from capacity.dataset import load_dataset
from capacity.scenarios import apply_overrides
from optimizer.components.power_steps import ppa_steps
from optimizer.lp.reuse_cache import cached_on_tables
from tests.conftest import DEFAULT_DATA


def test_a_value_is_made_once_while_its_tables_are_the_same_objects() -> None:
    a = pd.DataFrame({"x": [1.0, 2.0]})
    made: list[int] = []

    def make() -> pd.DataFrame:
        made.append(1)
        return a.assign(y=a["x"] * 10)

    first = cached_on_tables(("test_value",), (a,), make)
    first.loc[0, "y"] = -1.0  # a reader changes its copy ...
    first["z"] = 0.0
    again = cached_on_tables(("test_value",), (a,), make)
    assert len(made) == 1
    assert again["y"].tolist() == [10.0, 20.0] and "z" not in again  # ... never the kept one
    b = a.copy()  # the same cells in another object: made again
    assert cached_on_tables(("test_value",), (b,), make)["y"].tolist() == [10.0, 20.0]
    assert len(made) == 2


def test_ppa_steps_follow_a_changed_ppas_table() -> None:
    """A case that scales the PPAs' price gets its own steps; the base keeps its own."""
    ds = load_dataset(DEFAULT_DATA)
    periods = list(ds.periods)
    base = ppa_steps(ds, periods)
    assert len(base) and ppa_steps(ds, periods) is not base  # a copy of the kept value
    scaled = apply_overrides(
        ds,
        [
            {
                "op": "scale",
                "table": "ppas",
                "column": "price_usd_per_mwh",
                "factor": 2.0,
                "source": "assumption: test",
            }
        ],
    )
    steps = ppa_steps(scaled, periods)
    assert (steps["price_usd_per_mwh"] == 2.0 * base["price_usd_per_mwh"]).all()
    assert ppa_steps(ds, periods)["price_usd_per_mwh"].tolist() == (
        base["price_usd_per_mwh"].tolist()
    )
