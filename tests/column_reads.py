"""A recorder of the input columns a piece of code reads from a Dataset.

:func:`recording` wraps a :class:`capacity.dataset.Dataset` so that every input table
it hands out is a :class:`TrackedFrame`: a DataFrame that notes each column taken
from it (``df["x"]``, ``df[["x", "y"]]``, ``df.x``, ``df.loc[:, "x"]``, ``df.get``)
under its input table's name. Frames derived from a tracked frame (copies, row
selections, ``set_index``, ``merge`` with it on the left, ``assign`` ...) stay
tracked, so a column read from ``ds.table("sites").copy().set_index("site")`` still
counts as a read of ``sites``. Whole-frame reads (``itertuples``, ``iterrows``,
``to_numpy``, ``values``) count every column of the table: the safe direction (a
column wrongly counted as read only costs a rebuild, never a stale plan).

What is not seen: a column renamed and read under its new name, and arithmetic on
whole frames. The reuse property test (``tests/test_reuse_columns.py``) perturbs
every numeric column and compares the plans, which a missed read cannot escape.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pandas as pd
from pandas.api.types import is_list_like

from capacity.schema import SPECS

Reads = set[tuple[str, str]]


def _note(frame: Any, key: Any) -> None:
    tag = getattr(frame, "_track", None)
    if not tag:
        return
    table, log = tag
    spec = SPECS[table]
    if isinstance(key, str):
        names: list[Any] = [key]
    elif isinstance(key, tuple) and len(key) == 2:  # .loc[rows, cols]
        return _note(frame, key[1])
    elif (
        is_list_like(key) and not isinstance(key, pd.Series | pd.Index) or isinstance(key, pd.Index)
    ):
        names = [k for k in key if isinstance(k, str)]
    else:
        names = []
    for n in names:
        if spec.has_column(n):
            log.add((table, n))


def _note_all(frame: Any) -> None:
    tag = getattr(frame, "_track", None)
    if tag:
        for c in frame.columns:
            _note(frame, str(c))


class _Loc:
    """``.loc`` of a tracked frame: notes the column part of the key."""

    def __init__(self, frame: TrackedFrame, inner: Any) -> None:
        self._frame, self._inner = frame, inner

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, tuple) and len(key) == 2:
            _note(self._frame, key[1])
        return self._inner[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._inner[key] = value


class TrackedFrame(pd.DataFrame):
    """A DataFrame that records the input-table columns read from it."""

    _metadata = ["_track"]

    @property
    def _constructor(self) -> Any:
        return TrackedFrame

    def __finalize__(self, other: Any, method: str | None = None, **kwargs: Any) -> Any:
        out = super().__finalize__(other, method=method, **kwargs)
        if getattr(out, "_track", None) is None and method == "merge":
            left = getattr(getattr(other, "left", None), "_track", None)
            object.__setattr__(out, "_track", left)
        return out

    def __getitem__(self, key: Any) -> Any:
        _note(self, key)
        return super().__getitem__(key)

    def get(self, key: Any, default: Any = None) -> Any:  # noqa: D102
        _note(self, key)
        return super().get(key, default)

    @property
    def loc(self) -> Any:  # type: ignore[override]  # noqa: D102
        return _Loc(self, super().loc)

    def itertuples(self, *args: Any, **kwargs: Any) -> Any:  # noqa: D102
        _note_all(self)
        return super().itertuples(*args, **kwargs)

    def iterrows(self) -> Any:  # noqa: D102
        _note_all(self)
        return super().iterrows()

    def to_numpy(self, *args: Any, **kwargs: Any) -> Any:  # noqa: D102
        _note_all(self)
        return super().to_numpy(*args, **kwargs)

    @property
    def values(self) -> Any:  # noqa: D102
        _note_all(self)
        return super().values


class RecordingDataset:
    """A Dataset whose tables record the columns read from them into ``reads``."""

    def __init__(self, ds: Any, reads: Reads) -> None:
        self._ds, self.reads = ds, reads
        self._frames: dict[str, TrackedFrame] = {}

    def table(self, name: str) -> pd.DataFrame:
        """Return input table ``name`` as a :class:`TrackedFrame`."""
        if name not in self._frames:
            frame = TrackedFrame(self._ds.table(name))
            object.__setattr__(frame, "_track", (name, self.reads))
            self._frames[name] = frame
        return self._frames[name]

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """Every input table, tracked."""
        return {t: self.table(t) for t in self._ds.tables}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ds, name)


@contextmanager
def recording(ds: Any) -> Iterator[tuple[RecordingDataset, Reads]]:
    """Yield a recording stand-in for ``ds`` and the set of ``(table, column)`` it saw read."""
    reads: Reads = set()
    yield RecordingDataset(ds, reads), reads
