"""Group sums on integer codes equal pandas' answers bit for bit.

The checker and the result tables sum by key with :mod:`optimizer.lp.grouping`
instead of pandas ``groupby`` / ``merge`` (a reused sweep case spent most of its time
in that pandas overhead). The promise is the same numbers, not close ones: pandas adds
a group's values with Kahan summation in row order, and so must these helpers. Inputs
are random, with NaN values and magnitudes 1e-8 .. 1e8 where the summation order and
the compensation show in the last bits.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from optimizer.components.region import ASSIGN_COLUMNS, split_region_service
from optimizer.lp.grouping import (
    Groups,
    by_key,
    group_cumsum,
    group_sum,
    inner_pairs,
    left_pairs,
    positions,
    reindexed,
    rows_at,
    sorted_codes,
    sums_at,
    value_at,
)


def _frame(rng: np.random.Generator, n: int) -> pd.DataFrame:
    v = rng.lognormal(0.0, 6.0, n) * rng.choice([-1.0, 1.0], n)
    v[rng.random(n) < 0.05] = np.nan
    return pd.DataFrame(
        {
            "a": rng.choice(["x", "bb", "a", "zz", "b"], n),
            "b": rng.choice(["2026Q1", "2026Q2", "2025Q4"], n),
            "v": v,
        }
    )


@pytest.mark.parametrize("seed", range(20))
def test_group_sums_and_running_sums_equal_pandas(seed: int) -> None:
    rng = np.random.default_rng(seed)
    df = _frame(rng, int(rng.integers(0, 400)))
    ref = df.groupby(["a", "b"], as_index=False)["v"].sum()
    g = Groups([df["a"].to_numpy(), df["b"].to_numpy()])
    assert g.n == len(ref)
    assert list(g.key(0)) == list(ref["a"]) and list(g.key(1)) == list(ref["b"])
    assert np.array_equal(g.sum(df["v"].to_numpy()), ref["v"].to_numpy())  # bit for bit
    running = df.groupby(["a", "b"])["v"].cumsum().to_numpy()
    assert np.array_equal(group_cumsum(g.ids, df["v"].to_numpy()), running, equal_nan=True)


@pytest.mark.parametrize("seed", range(6))
def test_many_groups_of_skewed_sizes_sum_as_pandas(seed: int) -> None:
    """Hundreds of groups of 1 to 300 rows: the vectorised steps, then the row-by-row tail."""
    rng = np.random.default_rng(100 + seed)
    sizes = rng.integers(1, 300, 400) * (rng.random(400) < 0.3) + 1
    ids = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))
    v = rng.lognormal(0.0, 6.0, len(ids)) * rng.choice([-1.0, 1.0], len(ids))
    v[rng.random(len(v)) < 0.03] = np.nan
    ref = pd.Series(v).groupby(ids).sum().to_numpy()
    assert int(np.bincount(ids).max()) > 100 and len(sizes) > 300  # both phases run
    assert np.array_equal(group_sum(ids, v, len(sizes)), ref)  # bit for bit
    running = pd.Series(v).groupby(ids).cumsum().to_numpy()
    assert np.array_equal(group_cumsum(ids, v), running, equal_nan=True)


def test_an_overflowing_sum_is_summed_row_by_row_as_before() -> None:
    """A sum that overflows to infinity gives what the all-vectorised steps gave.

    Its compensation is reset row by row as for an infinite value (not pandas' answer
    here: pandas' own sum and running sum disagree on such rows; no plan has them).
    """
    ids = np.repeat(np.arange(30), 40)
    v = np.ones(len(ids))
    v[:2] = 1e308  # group 0 overflows at its second row
    with np.errstate(over="ignore", invalid="ignore"):
        got = group_sum(ids, v, 30)
    assert np.isnan(got[0]) and np.array_equal(got[1:], np.full(29, 40.0))


def test_kahan_compensation_shows() -> None:
    """1 + ten times 1e-16: a plain sum stays 1.0, pandas' (and ours) does not."""
    v = np.array([1.0] + [1e-16] * 10)
    g = Groups([np.zeros(len(v), dtype=np.int64)])
    assert g.sum(v)[0] == pd.Series(v).groupby(np.zeros(len(v))).sum().iloc[0]
    assert g.sum(v)[0] > 1.0 == np.bincount(np.zeros(len(v), dtype=np.int64), v)[0]


@pytest.mark.parametrize("seed", range(10))
def test_lookups_equal_left_and_inner_merges(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    left = _frame(rng, int(rng.integers(0, 60)))
    right = _frame(rng, int(rng.integers(0, 60)))
    keys = ["a", "b"]
    lk = [left[k].to_numpy() for k in keys]
    rk = [right[k].to_numpy() for k in keys]
    summed = right.groupby(keys, as_index=False)["v"].sum()
    ref = left[keys].merge(summed, on=keys, how="left")["v"].fillna(0.0).to_numpy()
    assert np.array_equal(sums_at(lk, rk, right["v"].to_numpy()), ref)
    unique = summed  # one row per key
    got = value_at(lk, [unique[k].to_numpy() for k in keys], unique["v"].to_numpy())
    ref = left[keys].merge(unique, on=keys, how="left")["v"].to_numpy()
    assert np.array_equal(got, ref, equal_nan=True)
    m = left.assign(li=np.arange(len(left))).merge(right.assign(ri=np.arange(len(right))), on=keys)
    li, ri = inner_pairs(lk, rk)
    assert list(li) == list(m["li"]) and list(ri) == list(m["ri"])
    m = left.assign(li=np.arange(len(left))).merge(
        right.assign(ri=np.arange(len(right))), on=keys, how="left"
    )
    li, ri = left_pairs(lk, rk)
    assert list(li) == list(m["li"]) and list(ri) == m["ri"].fillna(-1).astype(int).tolist()
    with pytest.raises(ValueError, match="repeats a key"):
        rows_at(lk, [np.array(["x", "x"], dtype=object), np.array(["1", "1"], dtype=object)])


@pytest.mark.parametrize("n", [0, 7, 1500, 2600, 9000])
def test_long_and_arrow_key_columns_group_as_pandas(n: int) -> None:
    """Above 2,000 rows each piece is factorized on its own (Arrow text as Arrow): same groups."""
    rng = np.random.default_rng(n)
    df = _frame(rng, n).astype({"a": "str", "b": "str"})  # pandas' Arrow-backed text
    ref = df.groupby(["a", "b"], as_index=False)["v"].sum()
    g = Groups([df["a"], df["b"]])
    assert list(g.key(0)) == list(ref["a"]) and list(g.key(1)) == list(ref["b"])
    assert np.array_equal(g.sum(df["v"].to_numpy()), ref["v"].to_numpy())  # bit for bit
    cut = n // 3
    parts = [df["a"].iloc[:cut], df["a"].iloc[cut:].to_numpy(dtype=object)]
    codes, values = sorted_codes(parts)
    want_codes, want_values = pd.factorize(df["a"].to_numpy(dtype=object), sort=True)
    assert list(values) == list(want_values)
    assert np.array_equal(np.concatenate(codes), want_codes)
    with pytest.raises(ValueError, match="missing value"):
        Groups([pd.Series(["x", None] * (n + 1), dtype="str")])


def test_factorized_pieces_and_lookups_per_distinct_key() -> None:
    """A (codes, values) piece reads as values[codes]; lookups match reindex, missing too."""
    piece = (np.array([2, 0, 2, 1]), np.array(["west", "east", "west"], dtype=object))
    (got, other), values = sorted_codes([piece, np.array(["north", "east"], dtype=object)])
    assert list(values) == ["east", "north", "west"]
    assert list(got) == [2, 2, 2, 0] and list(other) == [1, 0]  # west west west east
    with pytest.raises(ValueError, match="missing value"):
        sorted_codes([(np.array([0, 1]), np.array(["east", np.nan], dtype=object))])
    table = pd.Series([1.5, 2.5, 4.0], index=pd.Index(["s1", "s2", "s3"], dtype=object))
    keys = pd.Series(["s3", "s1", "s3", "s9", "s2"], dtype="str")
    want = table.reindex(keys.to_numpy()).to_numpy()
    assert np.array_equal(reindexed(table, keys, float), want, equal_nan=True)
    small, at = by_key(table, keys)
    assert len(small) == 4  # each distinct key once; s9, absent, reads NaN
    assert np.array_equal(small.to_numpy()[at], want, equal_nan=True)
    holes = pd.Series(["s2", None, "s2"], dtype="str")  # a missing key: rows looked up
    small, at = by_key(table, holes)
    assert len(small) == 3 and np.array_equal(
        small.to_numpy()[at], [2.5, np.nan, 2.5], equal_nan=True
    )
    clean = keys[keys != "s9"]
    small, at = by_key(table, clean)
    assert list(small.index) == ["s3", "s1", "s2"] and list(at) == [0, 1, 0, 2]
    assert list(positions(table.index, keys)) == [2, 0, 2, -1, 1]


# ----------------------------------------------------------- the region split, reference
def _reference_split(
    busy: pd.DataFrame, serve: pd.DataFrame, site_region: pd.Series
) -> pd.DataFrame:
    """The pandas north-west corner split this code base used before the codes."""
    group = ["chip", "region", "workload", "period"]
    b = busy[busy["value"] > 0].assign(
        region=site_region.reindex(busy.loc[busy["value"] > 0, "site"]).astype(str).to_numpy()
    )
    s = serve[serve["value"] > 0]
    if b.empty or s.empty:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in ASSIGN_COLUMNS}).astype(
            {"value": float}
        )
    b = b.assign(_order=np.arange(len(b)))
    s = s.assign(_order=np.arange(len(s)))
    scale = (b.groupby(group)["value"].sum() / s.groupby(group)["value"].sum()).rename("scale")
    s = s.merge(scale, left_on=group, right_index=True, how="inner")
    s = s.assign(value=s["value"] * s["scale"]).drop(columns="scale")

    def laid(f: pd.DataFrame, label: str) -> pd.DataFrame:
        f = f.sort_values([*group, "value", "_order"], ascending=[True] * 4 + [False, True])
        f = f.assign(end=f.groupby(group, sort=False)["value"].cumsum().to_numpy())
        return f.assign(side=label)

    b, s = laid(b, "b"), laid(s, "s")
    cols = [*group, "end", "side", "_order"]
    ends = pd.concat([b[cols], s[cols]], ignore_index=True).sort_values(
        [*group, "end"], kind="stable"
    )
    ends["b_at"] = np.where(ends["side"] == "b", ends["_order"], np.nan)
    ends["s_at"] = np.where(ends["side"] == "s", ends["_order"], np.nan)
    by = ends.groupby(group, sort=False)
    ends["b_at"] = by["b_at"].bfill()
    ends["s_at"] = by["s_at"].bfill()
    ends["start"] = by["end"].shift(1).fillna(0.0)
    piece = ends[ends["b_at"].notna() & ends["s_at"].notna()]
    piece = piece.assign(value=(piece["end"] - piece["start"]).clip(lower=0.0))
    piece = piece[piece["value"] > 0]
    bi, si = b.set_index("_order"), s.set_index("_order")
    out = pd.DataFrame(
        {
            "chip": bi["chip"].reindex(piece["b_at"]).to_numpy(),
            "site": bi["site"].reindex(piece["b_at"]).to_numpy(),
            "customer": si["customer"].reindex(piece["s_at"]).to_numpy(),
            "workload": bi["workload"].reindex(piece["b_at"]).to_numpy(),
            "demand_regions": si["demand_regions"].reindex(piece["s_at"]).to_numpy(),
            "period": bi["period"].reindex(piece["b_at"]).to_numpy(),
            "value": piece["value"].to_numpy(),
        }
    )
    keys = ASSIGN_COLUMNS[:-1]
    return out.groupby(keys, as_index=False, sort=False)["value"].sum()[ASSIGN_COLUMNS]


@pytest.mark.parametrize("seed", range(25))
def test_region_split_equals_the_pandas_reference(seed: int) -> None:
    """Random busy and serve values (ties, zeros, unequal totals): the same rows, bit for bit."""
    rng = np.random.default_rng(200 + seed)
    sites = pd.Series({"s1": "east", "s2": "east", "s3": "west", "s4": "west", "s5": "east"})
    rows_b, rows_s = [], []
    for chip in ("h100", "trn2"):
        for period in ("2026Q1", "2026Q2"):
            for site in sites.index:
                v = float(rng.choice([0.0, 1.0, 2.5, rng.uniform(0, 100)]))
                rows_b.append((chip, site, "training", period, v))
            for region in ("east", "west"):
                for k in ("openai", "anthropic", "meta"):
                    for g in ("", "east"):
                        v = float(rng.choice([0.0, 1.0, rng.uniform(0, 100)]))
                        rows_s.append((chip, region, k, "training", g, period, v))
    busy = pd.DataFrame(rows_b, columns=["chip", "site", "workload", "period", "value"])
    serve = pd.DataFrame(
        rows_s,
        columns=["chip", "region", "customer", "workload", "demand_regions", "period", "value"],
    )
    got = split_region_service(busy, serve, sites)
    ref = _reference_split(busy, serve, sites)
    assert len(got) > 0
    # keys stay object columns inside a solve (optimizer.lp.frames); same cells
    text = [c for c in ASSIGN_COLUMNS if c != "value"]
    assert all(got[c].dtype == object for c in text)
    got = got.astype({c: ref[c].dtype for c in text})
    pd.testing.assert_frame_equal(
        got.reset_index(drop=True), ref.reset_index(drop=True), check_exact=True
    )
