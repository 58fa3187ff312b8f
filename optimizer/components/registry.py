"""The active component registry and the views the centre reads it through.

:data:`optimizer.components.COMPONENTS` is the default registry; :func:`registered`
adds components for the length of a ``with`` block (a toy component in a test, a
feature tried before it is registered). The views below (families in build order,
families by name, cost terms, column kinds) always read the active registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TypeVar, overload

from optimizer.components.component import Component, CostTerm, ResultTable
from optimizer.components.records import AppendedFamily

__all__ = ["MappingView", "Registry", "SequenceView", "activate", "active", "registered"]

T = TypeVar("T")
V = TypeVar("V")


class Registry:
    """Registered components and what the centre derives from them, once per registry.

    Parameters
    ----------
    components : sequence of Component
        In registration order: the build order of the families, the order the column
        hooks run in and the order the objective's cost terms are added in.

    Raises
    ------
    ValueError
        When two components register a family (per scenario or appended), a cost term,
        a column kind or a result table of the same name.
    """

    def __init__(self, components: Sequence[Component]) -> None:
        self.components = tuple(components)
        self.families = tuple(f for c in self.components for f in c.families)
        self.by_name = {f.name: f for f in self.families}
        if len(self.by_name) != len(self.families):
            raise ValueError("a constraint family is registered twice")
        self.units = {f.name: f.unit for f in self.families}
        self.appended: tuple[AppendedFamily, ...] = tuple(
            a for c in self.components for a in c.appended
        )
        self.appended_by_name = {a.name: a for a in self.appended}
        if len(self.appended_by_name) != len(self.appended) or set(self.appended_by_name) & set(
            self.by_name
        ):
            raise ValueError("an appended constraint family is registered twice")
        self.costs: tuple[CostTerm, ...] = tuple(t for c in self.components for t in c.costs)
        self.kinds = tuple(k.name for c in self.components for k in c.columns)
        #: Unit of each column kind's value (``build``: MW, ``install``: chips).
        self.kind_units = {k.name: k.unit for c in self.components for k in c.columns}
        self.tables: tuple[ResultTable, ...] = tuple(t for c in self.components for t in c.tables)
        self._memo: dict[str, object] = {}
        checks = (
            ("cost term", [t.name for t in self.costs]),
            ("kind", self.kinds),
            ("result table", [t.name for t in self.tables]),
        )
        for what, names in checks:
            if len(set(names)) != len(names):
                raise ValueError(f"a {what} is registered twice: {sorted(names)}")

    def memo(self, key: str, make: Callable[[Registry], T]) -> T:
        """Return ``make(self)``, computed once per registry under ``key``."""
        if key not in self._memo:
            self._memo[key] = make(self)
        return self._memo[key]  # type: ignore[return-value]


_STACK: list[Registry] = []


def activate(components: Sequence[Component]) -> None:
    """Make ``components`` the default registry (called once, by the package)."""
    _STACK[:] = [Registry(tuple(components))]


def active() -> Registry:
    """Return the active registry."""
    return _STACK[-1]


@contextmanager
def registered(*extra: Component) -> Iterator[Registry]:
    """Register ``extra`` components after the active ones for the ``with`` block.

    The registry is the process's: a Dask worker in another process builds with the
    default one.

    Examples
    --------
    >>> from optimizer.components import registered
    >>> with registered(toy.COMPONENT):  # doctest: +SKIP
    ...     result = solve(dataset)
    """
    _STACK.append(Registry(active().components + tuple(extra)))
    try:
        yield _STACK[-1]
    finally:
        _STACK.pop()


class SequenceView(Sequence[T]):
    """A tuple-like view of one part of the active registry."""

    def __init__(self, items: Callable[[Registry], tuple[T, ...]]) -> None:
        self._items = items

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...
    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        return self._items(active())[index]

    def __len__(self) -> int:
        return len(self._items(active()))

    def __iter__(self) -> Iterator[T]:
        return iter(self._items(active()))

    def __repr__(self) -> str:
        return repr(self._items(active()))

    def __eq__(self, other: object) -> bool:
        """Equal to a tuple (or a view) of the same items, like the tuple it stands for."""
        if isinstance(other, SequenceView | tuple):
            return self._items(active()) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class MappingView(Mapping[str, V]):
    """A dict-like view of one part of the active registry, keyed by family name."""

    def __init__(self, items: Callable[[Registry], Mapping[str, V]]) -> None:
        self._items = items

    def __getitem__(self, key: str) -> V:
        return self._items(active())[key]

    def __len__(self) -> int:
        return len(self._items(active()))

    def __iter__(self) -> Iterator[str]:
        return iter(self._items(active()))

    def __repr__(self) -> str:
        return repr(dict(self._items(active())))
