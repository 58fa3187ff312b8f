"""The plan context: one scenario's decision values in domain keys and what derives from them.

:class:`PlanContext` holds the dataset, the decision frames and the quantities derived
from them (:mod:`optimizer.components.quantities`: fleet, chips at work, capacity
online, site loads, IT and facility energy), each computed once; the result tables
and the independent checker both read them (the checker never reads LP rows).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from functools import cached_property
from typing import Any, Protocol, TypeVar

import numpy as np
import pandas as pd

from optimizer.components.capacity_online import site_capacity_table
from optimizer.components.migration_inputs import plan_factor
from optimizer.components.quantities import ChipSiteWork, fleet_values, site_energy
from optimizer.lp.frames import column_values, indexed
from optimizer.lp.frames import frame as object_frame
from optimizer.lp.grouping import rows_at, take
from optimizer.lp.reuse_cache import cached_for, cached_on_cells

__all__ = ["Duals", "PlanContext", "TableBuilder", "site_period_keys"]

T = TypeVar("T")

#: ``build(context)`` fills one result table from the plan context.
TableBuilder = Callable[["PlanContext"], pd.DataFrame]


class Duals(Protocol):
    """The LP's row duals as the result tables read them (the plan side provides it)."""

    def merge(self, frame: pd.DataFrame, table: str) -> pd.DataFrame:
        """Return ``frame`` with the dual column of every family routed to ``table``."""

    def routed(self, table: str) -> list[Any]:
        """Return the constraint families whose dual lands in ``table``, in registry order."""

    def family(self, family: Any) -> pd.DataFrame:
        """Return one family's conditional duals keyed by domain names."""

    def attach(self, rows: pd.DataFrame, block: dict[str, Any], family: Any) -> dict[str, Any]:
        """Return ``block`` (columns on ``rows``) with the family's shadow price added."""

    def site_period(self, name: str) -> pd.DataFrame:
        """Return family ``name``'s conditional duals as ``site, period, dual``."""


def once_per_plan(inputs: Any, key: Hashable, make: Callable[[], T]) -> T:
    """Return ``make()``, computed once per plan when ``inputs`` is a :class:`PlanContext`.

    For quantities that several result tables and checks derive from the same decision
    values (the MW online, standing and flexible per period, the MW beyond the grid
    grant). Callers read the value and never change it in place. Without a context
    (hand-made inputs) it is made each time.
    """
    once = getattr(inputs, "once", None)
    return make() if once is None else once(key, make)


def _with_demand_regions(frames: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Frames with a ``demand_regions`` column on assign and unmet ("" when absent).

    Frames built by hand (tests, other tools) may predate demand region groups; their
    demand is the one served anywhere.
    """
    out = dict(frames)
    for kind in ("assign", "unmet"):
        f = out.get(kind)
        if f is not None and "demand_regions" not in f:
            out[kind] = f.assign(demand_regions="")
    return out


class PlanContext:
    """One scenario's plan: the dataset, the decision values and the quantities derived.

    Parameters
    ----------
    dataset : Dataset
        The scenario's dataset.
    frames : dict of DataFrame
        Decision values by kind (:func:`optimizer.plan.results.solution_frames`).
    fleet : DataFrame, optional
        Fleet from installs and the initial fleet
        (:func:`optimizer.components.quantities.fleet_values`; computed when None).
    tolerance : float
        Relative tolerance of every check.
    capacity : DataFrame, optional
        :func:`optimizer.components.capacity_online.site_capacity_table` of the frames
        when the caller already has it (read only).
    cache : object, optional
        The planning model: per-structure work (the site-period keys) is kept in its
        reuse cache (:mod:`optimizer.lp.reuse_cache`).
    duals : Duals, optional
        The row duals, for the shadow-price columns of the result tables.
    commitments : DataFrame, optional
        The scenario's commitment rows (row j = position; the dataset's when None).
    scenario : int
        The scenario's position in the model (a key of its reuse cache).
    exact_clusters : bool
        The solve had exact training-cluster binaries.
    builders : mapping of str to callable, optional
        ``build(context)`` of each result table :meth:`table` may be asked for.
    """

    def __init__(
        self,
        dataset: Any,
        frames: Mapping[str, pd.DataFrame],
        fleet: pd.DataFrame | None = None,
        tolerance: float = 1e-6,
        *,
        capacity: pd.DataFrame | None = None,
        cache: Any = None,
        duals: Duals | None = None,
        commitments: pd.DataFrame | None = None,
        scenario: int = 0,
        exact_clusters: bool = False,
        builders: Mapping[str, TableBuilder] | None = None,
    ) -> None:
        self.dataset = dataset
        self.frames = _with_demand_regions(frames)
        self.fleet = fleet_values(dataset, self.frames) if fleet is None else fleet
        self.tolerance = tolerance
        if capacity is not None:
            self.capacity = capacity  # the cached property, set from the caller's copy
        self.cache, self.duals, self.scenario = cache, duals, scenario
        self.exact_clusters = exact_clusters
        self.commitments = dataset.table("commitments") if commitments is None else commitments
        self.periods = list(dataset.periods)
        # by name, kept per model structure while the table is the same object (read only)
        self.sites = self._by_name("sites", "site")
        self.chips = self._by_name("chips", "chip")
        self._builders = dict(builders or {})
        self._once: dict[Any, Any] = {}

    def _by_name(self, table: str, key: str) -> pd.DataFrame:
        """Return the dataset's ``table`` indexed by ``key`` (kept while the same table)."""
        frame = self.dataset.table(table)
        return self.reuse(("by_name", table, key), (frame,), lambda: frame.set_index(key))

    def table(self, name: str) -> pd.DataFrame:
        """Return result table ``name``, built once (before its typing to the schema)."""
        return self.once(("table", name), lambda: self._builders[name](self))

    def once(self, key: Any, make: Callable[[], Any]) -> Any:
        """Return ``make()``, computed once per context and ``key``."""
        if key not in self._once:
            self._once[key] = make()
        return self._once[key]

    def reuse(self, key: Any, tables: tuple[Any, ...], make: Callable[[], T]) -> T:
        """Return ``make()``, kept per model structure while ``tables`` are the same objects.

        A sweep's cases share the work (:func:`optimizer.lp.reuse_cache.cached_for`);
        without a model (the checker on hand-made frames) it is made each time.
        """
        return make() if self.cache is None else cached_for(self.cache, key, tables, make)

    def with_duals(self, frame: pd.DataFrame, table: str) -> pd.DataFrame:
        """Return ``frame`` with the shadow prices of the families routed to ``table``."""
        return frame if self.duals is None else self.duals.merge(frame, table)

    @cached_property
    def site_periods(self) -> pd.DataFrame:
        """Every (site, period) pair, site-major (once per model structure and site names).

        Kept while the sites' names are the same cells (a case that changes a number of
        the sites table keeps it); never changed by its readers.
        """
        sites = self.dataset.table("sites")
        if self.cache is None:
            return _site_periods(sites, self.periods)
        names = column_values(sites, "site")
        return cached_on_cells(
            self.cache,
            ("site_periods", tuple(self.periods)),
            (names,),
            lambda: _site_periods(sites, self.periods),
        )

    @cached_property
    def capacity(self) -> pd.DataFrame:
        """Decided and online MW per (site, period) (:func:`site_capacity_table`)."""
        return site_capacity_table(self.dataset, self.frames)

    def _built(self, value: str, capacity: str) -> pd.DataFrame:
        f = self.capacity[["site", "period", value, capacity]]
        return f.rename(columns={value: "value", capacity: "capacity"})

    @cached_property
    def build(self) -> pd.DataFrame:
        """``site, period, value`` (MW decided), ``capacity`` (online IT MW) and ``decided``."""
        f = self._built("build_mw", "it_capacity_mw")
        return f.assign(decided=column_values(self.capacity, "decided_capacity_mw"))

    @cached_property
    def liquid(self) -> pd.DataFrame:
        """``site, period, value`` (liquid MW decided), ``capacity`` (online liquid MW)."""
        return self._built("liquid_build_mw", "liquid_capacity_mw")

    @cached_property
    def work(self) -> ChipSiteWork:
        """Fleet and assigned chips per (chip, site, period), at the workload's power factor."""
        power_factor = indexed(self.dataset.table("workloads"), "workload")["power_factor"]
        return ChipSiteWork(self.fleet, self.frames["assign"], power_factor)

    @cached_property
    def site_energy(self) -> pd.DataFrame:
        """Loads, IT / facility MWh, water, grid cost and carbon per (site, period) pair.

        See :func:`optimizer.components.quantities.site_energy`.
        """
        return site_energy(self.dataset, self.work, self.site_periods)

    @cached_property
    def site_load(self) -> pd.DataFrame:
        """Fleet load per (site, period): ``mw`` IT, ``liq_mw`` liquid-only, ``fac_mw`` grid.

        Every pair, site-major, 0 where no fleet (from :attr:`site_energy`).
        """
        e = self.site_energy
        return object_frame(
            {
                "site": column_values(e, "site"),
                "period": column_values(e, "period"),
                "mw": column_values(e, "it_mw"),
                "liq_mw": column_values(e, "liq_mw"),
                "fac_mw": column_values(e, "fac_mw"),
            }
        )

    @cached_property
    def assigned(self) -> pd.DataFrame:
        """Non-zero assignments with the eligibility row (``derate``, ``regions``) merged.

        ``derate`` is the eligibility derate times the migration schedule of a margin
        plan (:func:`optimizer.components.migration_inputs.plan_factor`).
        """
        asg = self.frames["assign"]
        el = self.dataset.table("eligibility")
        a = asg[asg["value"].abs().to_numpy() > self.tolerance].reset_index(drop=True)
        keys = ["customer", "chip"]
        if any(c in a and c not in keys for c in el.columns):  # the merge names both
            out = a.merge(el, on=keys, how="left")  # pandas' suffixes for the shared names
        else:
            # the eligibility row of each (customer, chip): a left merge on unique keys
            at = rows_at([column_values(a, k) for k in keys], [column_values(el, k) for k in keys])
            out = a.assign(**{c: take(el[c].to_numpy(), at) for c in el.columns if c not in keys})
        # a margin plan's migration schedule scales the derate (1 elsewhere)
        factor = plan_factor(self.dataset, self.frames, out)
        return out.assign(derate=column_values(out, "derate", dtype=float) * factor)


def site_period_keys(frame: pd.DataFrame) -> Callable[[np.ndarray], np.ndarray]:
    """``"site,period"`` key text of the rows a mask selects (for :func:`violations`).

    The text is made only for the rows asked for (the violated ones).
    """
    site, period = frame["site"], frame["period"]

    def keys(bad: np.ndarray) -> np.ndarray:
        out: np.ndarray = (site[bad] + "," + period[bad]).astype(str).to_numpy()
        return out

    return keys


def _site_periods(sites: pd.DataFrame, periods: list[str]) -> pd.DataFrame:
    """Every (site, period) pair of ``sites`` x ``periods``, site-major."""
    return sites[["site"]].merge(object_frame({"period": periods}), how="cross")
