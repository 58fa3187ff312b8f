"""The builder's integer-code join gives pandas' merge: rows, order, columns, dtypes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from optimizer.lp.frames import frame
from optimizer.lp.join import _joinable, merge


def _key(rng: np.random.Generator, n: int, span: int, text: bool) -> np.ndarray:
    codes = rng.integers(0, span, n).astype(np.int64)
    return np.array([f"k{v}" for v in codes], dtype=object) if text else codes


def _frames(
    rng: np.random.Generator, nl: int, nr: int, keys: int, span: int, text: bool, as_str: bool
):
    names = ["s", "t", "c"][:keys]
    left = {k: _key(rng, nl, span, text and k == "s") for k in names}
    left["a"] = rng.normal(size=nl)
    left["name"] = np.array([f"n{i}" for i in rng.integers(0, 5, nl)], dtype=object)
    right = {k: _key(rng, nr, span, text and k == "s") for k in names}
    right["row"] = rng.integers(0, 1000, nr).astype(np.int64)
    right["mw"] = rng.normal(size=nr)
    right["flag"] = rng.integers(0, 2, nr).astype(bool)
    right["label"] = np.array([f"r{i}" for i in rng.integers(0, 5, nr)], dtype=object)
    if as_str:  # pandas' text dtype, as the data tables and result tables hold text
        return pd.DataFrame(left), pd.DataFrame(right), names
    # text as object columns, as the builders' frames hold it (optimizer.lp.frames)
    return frame(left), frame(right), names


def _merged_counting_pandas(
    monkeypatch: pytest.MonkeyPatch,
    left: pd.DataFrame,
    right: pd.DataFrame,
    on: list[str],
    how: str,
) -> tuple[pd.DataFrame, list[int]]:
    """``merge(left, right, on, how)`` and one entry per call it made of pandas' merge."""
    calls: list[int] = []
    pandas_merge = pd.DataFrame.merge

    def counted(self: pd.DataFrame, *args: object, **kwargs: object) -> pd.DataFrame:
        calls.append(1)
        return pandas_merge(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pd.DataFrame, "merge", counted)
    return merge(left, right, on, how=how), calls


@pytest.mark.parametrize("how", ["inner", "left"])
@pytest.mark.parametrize("seed", range(40))
def test_merge_equals_pandas_on_random_frames(
    how: str, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(seed)
    nl, nr = (int(v) for v in rng.integers(0, 60, 2))
    keys = int(rng.integers(1, 4))
    span = int(rng.choice([3, 8, 10**9]))  # dense codes, and sparse ones
    text = seed % 3 == 0  # a text key column (numbered before the match)
    left, right, on = _frames(rng, nl, nr, keys, span, text, as_str=seed % 4 == 1)
    if how == "left" and seed % 2:
        right = right.drop(columns="flag")  # a flag with a missing match goes to pandas
    want = left.merge(right, on=on, how=how)
    assert _joinable(left, right, on, how) is not None
    got, calls = _merged_counting_pandas(monkeypatch, left, right, on, how)
    pd.testing.assert_frame_equal(got, want)
    # joined here, unless a flag column would take a missing match (pandas: objects)
    unmatched = how == "left" and len(want) and want["row"].isna().any()
    assert len(calls) == int(bool(unmatched and "flag" in right))


@pytest.mark.parametrize("how", ["inner", "left"])
@pytest.mark.parametrize("seed", range(12))
def test_object_text_keys_join_str_keys_as_pandas(
    how: str, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Object text keys on one side, pandas' ``str`` on the other: joined here, as pandas.

    The builders' frames hold text as object columns and the data tables as ``str``;
    pandas matches them as text and gives the key column the ``str`` dtype. Such a
    join went to pandas' merge (about 2-4 ms each, 30 of them in a reused case of the
    bundled data).
    """
    rng = np.random.default_rng(500 + seed)
    nl, nr = (int(v) for v in rng.integers(1, 60, 2))
    nl, nr = (0, nr) if seed == 4 else (nl, 0) if seed == 5 else (nl, nr)  # an empty side
    keys = int(rng.integers(1, 4))
    left, right, on = _frames(rng, nl, nr, keys, int(rng.choice([3, 8])), True, as_str=False)
    if how == "left":
        right = right.drop(columns="flag")
    str_side = right if seed % 2 else left  # the other side keeps object text
    str_side["s"] = str_side["s"].astype("str")
    assert left["s"].dtype != right["s"].dtype
    want = left.merge(right, on=on, how=how)
    assert _joinable(left, right, on, how) is not None  # (asks pandas the key dtype once)
    got, calls = _merged_counting_pandas(monkeypatch, left, right, on, how)
    pd.testing.assert_frame_equal(got, want)
    assert not calls  # joined here (the key dtype: pandas' for this text storage)


def test_object_keys_that_are_not_all_text_go_to_pandas() -> None:
    """A missing value or a number among object keys: pandas' merge, and its answer."""
    right = pd.DataFrame({"s": pd.array(["a", "b"], dtype="str"), "v": [1.0, 2.0]})
    for keys in (["a", None, "b"], ["a", 1, "b"], ["a", np.nan, "b"]):
        left = frame({"s": np.array(keys, dtype=object), "x": [1.0, 2.0, 3.0]})
        assert _joinable(left, right, ["s"], "left") is None
        pd.testing.assert_frame_equal(
            merge(left, right, "s", how="left"), left.merge(right, on="s", how="left")
        )


def test_merge_hand_case_order_and_missing() -> None:
    left = pd.DataFrame({"s": np.array([2, 1, 2, 3]), "x": [1.0, 2.0, 3.0, 4.0]})
    right = pd.DataFrame({"s": np.array([2, 1, 2]), "row": np.array([10, 11, 12])})
    inner = merge(left, right, "s")
    assert inner["s"].tolist() == [2, 2, 1, 2, 2]
    assert inner["row"].tolist() == [10, 12, 11, 10, 12]
    assert inner["x"].tolist() == [1.0, 1.0, 2.0, 3.0, 3.0]
    lj = merge(left, right, "s", how="left")
    assert lj["row"].dtype == np.float64  # a missing match makes the ints float, as pandas
    assert np.isnan(lj["row"].iloc[-1]) and lj["x"].iloc[-1] == 4.0
    pd.testing.assert_frame_equal(lj, left.merge(right, on="s", how="left"))


def test_merge_falls_back_to_pandas_outside_integer_keys() -> None:
    left = pd.DataFrame({"site": ["a", "b"], "v": [1.0, 2.0]})  # pandas' str dtype
    right = pd.DataFrame({"site": ["b", "a"], "w": [3.0, 4.0]})
    pd.testing.assert_frame_equal(
        merge(left, right, "site", how="left"), left.merge(right, on="site", how="left")
    )
    missing = np.array(["a", None, np.nan], dtype=object)  # missing keys match as pandas'
    lm = frame({"site": missing, "v": np.array([1.0, 2.0, 3.0])})
    rm = frame({"site": missing[::-1].copy(), "w": np.array([4.0, 5.0, 6.0])})
    pd.testing.assert_frame_equal(merge(lm, rm, "site"), lm.merge(rm, on="site"))
    big = pd.DataFrame({"s": np.arange(60_000) % 7, "v": np.ones(60_000)})
    small = pd.DataFrame({"s": np.arange(5), "w": np.arange(5.0)})
    pd.testing.assert_frame_equal(merge(big, small, "s"), big.merge(small, on="s"))
    a = pd.DataFrame({"s": np.array([1, 2], dtype=np.int32)})
    b = pd.DataFrame({"s": np.array([1, 2], dtype=np.int64), "v": [1.0, 2.0]})
    pd.testing.assert_frame_equal(merge(a, b, "s"), a.merge(b, on="s"))
    c = pd.DataFrame({"s": np.array([1, 2]), "v": [5.0, 6.0]})
    pd.testing.assert_frame_equal(merge(c, b, "s"), c.merge(b, on="s"))  # v_x, v_y
    pd.testing.assert_frame_equal(merge(c, b, "s", how="outer"), c.merge(b, on="s", how="outer"))
