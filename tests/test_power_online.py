"""MW online per site, source and period: the codes' sums equal pandas', frame for frame.

:mod:`optimizer.components.power_online` replaced a cross merge, a left merge and a
sorted ``groupby(...).sum()`` in the power tables and checks. The reference below is that
pandas code, unchanged: on random decisions (several per option, options without any,
text keys as object and as pandas' ``str``) the frames must be equal: the same rows, order
and dtypes, and sums to 1e-14 relative (Kahan sums in row order; pandas 3.1 adds some
groups another way and may differ in the last bit, :mod:`optimizer.lp.kahan`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from optimizer.components.power_online import online_per_decision, online_per_option

PERIODS = [f"{y}Q{q}" for y in (2026, 2027, 2028) for q in (1, 2, 3, 4)]


def _pandas_per_option(options, dec, t_on, periods):  # type: ignore[no-untyped-def]
    pos = {p: i for i, p in enumerate(periods)}
    keys = options[["site", "source"]].merge(pd.DataFrame({"period": periods}), how="cross")
    keys["t"] = keys["period"].map(pos)
    on = dec.assign(t_on=t_on)[["site", "source", "t_on", "value"]]
    m = keys.merge(on, on=["site", "source"], how="left")
    m["mw"] = np.where(m["t"] >= m["t_on"], m["value"], 0.0)
    return m.groupby(["site", "source", "period", "t"], as_index=False)["mw"].sum()


def _pandas_per_decision(d, t_on, periods):  # type: ignore[no-untyped-def]
    d = d.assign(t_on=t_on)
    grid = pd.DataFrame({"t": range(len(periods)), "p": periods})
    m = d.drop(columns="period").merge(grid, how="cross")
    alive = (m["t"] >= m["t_on"]).to_numpy()
    in_life = (m["t"] < m["t_on"] + m["lifetime_periods"]).to_numpy()
    m["mw"] = np.where(alive, m["value"], 0.0)
    m["rent"] = np.where(alive & in_life, m["value"] * m["rent_per_mw"], 0.0)
    m = m.rename(columns={"p": "period"})
    return m.groupby(["site", "source", "period"], as_index=False)[["mw", "rent"]].sum()


def _case(seed: int, text_kind: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    sites = [f"s{i}" for i in range(int(rng.integers(1, 5)))]
    sources = ["upgrade:a", "onsite:gas", "onsite:fuel_cell"]
    pairs = [(s, o) for s in sites for o in sources if rng.random() < 0.7] or [("s0", "onsite:gas")]
    options = pd.DataFrame(
        {
            "site": [s for s, _ in pairs],
            "source": [o for _, o in pairs],
            "lead_periods": rng.integers(0, 4, len(pairs)),
            "lifetime_periods": rng.integers(2, 12, len(pairs)).astype(float),
            "rent_per_mw": rng.lognormal(8, 2, len(pairs)),
        }
    )
    n = int(rng.integers(1, 30))
    pick = rng.integers(0, len(pairs), n)
    dec = pd.DataFrame(
        {
            "site": np.array([pairs[i][0] for i in pick], dtype=object),
            "source": np.array([pairs[i][1] for i in pick], dtype=object),
            "period": np.array(rng.choice(PERIODS, n), dtype=object),
            "value": rng.lognormal(3, 3, n) * rng.choice([1.0, 1e-3, 1e3], n),
        }
    )
    if text_kind == "str":  # the option tables are data tables: pandas' str keys
        options = options.astype({"site": "str", "source": "str"})
    return options, dec


@pytest.mark.parametrize("text_kind", ["object", "str"])
@pytest.mark.parametrize("seed", range(15))
def test_online_per_option_equals_pandas(seed: int, text_kind: str) -> None:
    options, dec = _case(seed, text_kind)
    pos = {p: i for i, p in enumerate(PERIODS)}
    lead = dec.merge(options, on=["site", "source"])["lead_periods"].to_numpy()
    dec = dec.merge(options[["site", "source"]], on=["site", "source"])  # each of an option
    t_on = dec["period"].map(pos).to_numpy(dtype=np.int64) + lead
    want = _pandas_per_option(options, dec, t_on, PERIODS)
    got = online_per_option(options, dec, t_on, PERIODS)
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-14, atol=0.0)
    assert len(got) == len(options) * len(PERIODS)


@pytest.mark.parametrize("text_kind", ["object", "str"])
@pytest.mark.parametrize("seed", range(15))
def test_online_per_decision_equals_pandas(seed: int, text_kind: str) -> None:
    options, dec = _case(100 + seed, text_kind)
    d = dec.merge(options, on=["site", "source"])
    pos = {p: i for i, p in enumerate(PERIODS)}
    t_on = (d["period"].map(pos) + d["lead_periods"]).to_numpy(dtype=float)
    want = _pandas_per_decision(d, t_on, PERIODS)
    got = online_per_decision(d, t_on, PERIODS)
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-14, atol=0.0)


def test_a_hand_case_of_two_builds_and_a_lifetime() -> None:
    """20 MW built in 2026Q1 with a lead of 1, 5 MW in 2026Q3 with the same lead."""
    d = pd.DataFrame(
        {
            "site": ["s1", "s1"],
            "source": ["onsite:gas", "onsite:gas"],
            "period": ["2026Q1", "2026Q3"],
            "value": [20.0, 5.0],
            "lead_periods": [1, 1],
            "lifetime_periods": [2.0, 2.0],
            "rent_per_mw": [10.0, 10.0],
        }
    )
    got = online_per_decision(d, np.array([1.0, 3.0]), PERIODS[:6])
    assert got["mw"].tolist() == [0.0, 20.0, 20.0, 25.0, 25.0, 25.0]
    # rent within each build's two periods of life: 200 in Q2-Q3, 50 in 2026Q4-2027Q1
    assert got["rent"].tolist() == [0.0, 200.0, 200.0, 50.0, 50.0, 0.0]
