"""What stays the same between the cases of one sweep, computed once per model structure.

A batch with model reuse (:mod:`optimizer.analysis.batch`) patches one base model per case:
the patched models share the base's columns, rows and codes; only bounds, costs,
matrix values and data values change. Index work that depends on that structure
alone (which rows a table row feeds, where each decision lands in a result table)
is cached here under the base model, and :func:`patched_from` makes a patched model
find its base's cache.

Only structure goes in: a cached value must not depend on rhs, costs, matrix values,
decision values or duals. Values that also depend on a data table are keyed by that
table too (:func:`cached_for`), and a patched dataset keeps the very frame of every
table it did not change (:meth:`capacity.dataset.Dataset.replace`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "cached",
    "cached_for",
    "cached_on_cells",
    "cached_on_tables",
    "patched_from",
    "structure_of",
]

T = TypeVar("T")

_OWNER: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_CACHE: weakref.WeakKeyDictionary[Any, dict[Hashable, Any]] = weakref.WeakKeyDictionary()


def patched_from(patched: Any, base: Any) -> None:
    """Record that ``patched`` has the structure (columns, rows, codes) of ``base``."""
    _OWNER[patched] = structure_of(base)


def structure_of(model: Any) -> Any:
    """Return the model whose cache ``model`` shares (itself unless patched)."""
    return _OWNER.get(model, model)


def cached(model: Any, key: Hashable, make: Callable[[], T]) -> T:
    """Return ``make()`` computed once per model structure and ``key``.

    Parameters
    ----------
    model : PlanningModel
        The model (a patched one shares its base's cache).
    key : hashable
        What is cached (e.g. ``("rows", "demand_balance")``).
    make : callable
        Computes the value from the model's structure only.
    """
    store = _CACHE.setdefault(structure_of(model), {})
    if key not in store:
        store[key] = make()
    value: T = store[key]
    return value


def cached_for(model: Any, key: Hashable, tables: tuple[Any, ...], make: Callable[[], T]) -> T:
    """Like :func:`cached`, but recomputed when any of ``tables`` is another object.

    ``tables`` are the data frames the value is computed from besides the model's
    structure; frames are compared by identity (an unchanged table of a patched
    dataset is the same object).
    """
    store = _CACHE.setdefault(structure_of(model), {})
    hit = store.get(key)
    if hit is not None and len(hit[0]) == len(tables):
        if all(a is b for a, b in zip(hit[0], tables, strict=True)):
            value: T = hit[1]
            return value
    made = make()
    store[key] = (tables, made)
    return made


def cached_on_cells(
    model: Any, key: Hashable, arrays: tuple[np.ndarray, ...], make: Callable[[], T]
) -> T:
    """Like :func:`cached`, but recomputed unless ``arrays`` hold the same cells as last time.

    For a value made from a few key columns of a data table (the sites' names) rather
    than from the whole table: a case that scales a number of the table (an energy
    price) makes a new table object with the same key cells, and keeps the value; a
    case with other key cells (or another dtype or length) recomputes it.

    Parameters
    ----------
    model : PlanningModel
        The model (a patched one shares its base's cache).
    key : hashable
        What is cached.
    arrays : tuple of ndarray
        The key columns the value is made from besides the model's structure (kept
        by the cache as copies, compared cell by cell).
    make : callable
        Computes the value.
    """
    store = _CACHE.setdefault(structure_of(model), {})
    hit = store.get(key)
    if hit is not None and len(hit[0]) == len(arrays):
        if all(_same_cells(a, b) for a, b in zip(hit[0], arrays, strict=True)):
            value: T = hit[1]
            return value
    made = make()
    store[key] = (tuple(np.array(a, copy=True) for a in arrays), made)
    return made


def _same_cells(a: np.ndarray, b: np.ndarray) -> bool:
    """Return True when ``a`` and ``b`` have the same dtype, shape and cells."""
    return a.dtype == b.dtype and a.shape == b.shape and bool((a == b).all())


#: Values made from data tables alone (no model), by key: the tables (weakly) and the value.
_ON_TABLES: dict[Hashable, tuple[tuple[weakref.ref[Any], ...], Any]] = {}


def cached_on_tables(key: Hashable, tables: tuple[Any, ...], make: Callable[[], T]) -> T:
    """Return ``make()``, kept while ``tables`` are the very same objects (no model needed).

    For a value made from a dataset's tables only, read where no model is at hand (a
    PPA's steps per period): a sweep's cases keep every table they do not change
    (:meth:`capacity.dataset.Dataset.replace`), so the value is made once per sweep,
    and the several readers of one plan share it. One value per key, held while its
    tables live; a DataFrame is handed out as a shallow copy (copy-on-write: a reader
    that changes its copy never changes the kept value).

    Parameters
    ----------
    key : hashable
        What is kept (the function's name and any other argument, e.g. the periods).
    tables : tuple of DataFrame
        The data tables the value is made from, compared by identity.
    make : callable
        Computes the value from those tables.
    """
    hit = _ON_TABLES.get(key)
    if hit is not None and len(hit[0]) == len(tables):
        if all(ref() is t for ref, t in zip(hit[0], tables, strict=True)):
            return _shallow(hit[1])
    made = make()
    _ON_TABLES[key] = (tuple(weakref.ref(t) for t in tables), made)
    if len(_ON_TABLES) > 256:  # keys carry arguments: keep the newest
        del _ON_TABLES[next(iter(_ON_TABLES))]
    return _shallow(made)


def _shallow(value: T) -> T:
    copy = getattr(value, "copy", None)
    if copy is not None and hasattr(value, "columns"):
        out: T = copy(deep=False)
        return out
    return value
