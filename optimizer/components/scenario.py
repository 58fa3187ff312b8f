"""One scenario's coded data and its decision columns, the frames every component reads.

Code columns follow the index letters of :mod:`optimizer.lp.dimensions` (``s`` site,
``c`` chip, ``k`` customer, ``w`` workload, ``r`` resource, ``j`` commitment row,
``g`` demand region group, ``e`` site region, ``q`` region pool, ``o`` power source,
``t`` period position; ``f`` codes a chip family).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from optimizer.lp.frames import column_values

__all__ = ["ScenarioColumns", "ScenarioData", "energy_coefficients"]


@dataclass
class ScenarioData:
    """One scenario's dataset with every ID replaced by its integer code.

    Attributes
    ----------
    index : int
        Scenario position in the model.
    dataset : Dataset
        The scenario's dataset.
    n_periods : int
        Horizon length T (quarters).
    hours, discount : ndarray, shape (T,)
        Hours and discount factor per period.
    sites, chips, customers : DataFrame
        Input tables indexed by ``s``, ``c``, ``k`` code; chips also carry ``f``
        (family code), ``t_first`` and ``t_last`` (sale window, horizon positions).
    power_factor : ndarray, shape (n_workloads,)
        Power factor by ``w`` code (NaN if the workload has no row).
    grid : DataFrame
        ``s, t, grid_mw``.
    water : DataFrame
        ``s, t, permit`` (m3).
    supply : DataFrame
        ``r, t, capacity`` (resource unit).
    bill_of_materials : DataFrame
        ``c, r, per_chip`` (positive rows only).
    initial_fleet : DataFrame
        ``c, s, t, chips`` alive in period t.
    demand : DataFrame
        ``k, w, g, t, demand_h100e`` (positive, inside the horizon; ``g`` the demand
        region group).
    eligibility : DataFrame
        ``k, c, s, derate`` expanded to the allowed sites.
    commitments : DataFrame
        ``j, k, f, t0, t1, min_it_mw, penalty``.
    commitment_periods : DataFrame
        Active commitments expanded to one row per period ``t`` in the horizon.
    workload_names : tuple of str
        Workload ID by ``w`` code.
    group_sites : DataFrame
        ``g, s``: the sites each demand region group may be served at (group "" =
        every site).
    clusters : DataFrame
        Training-cluster rule per customer and period: ``k, t, min_mw, min_h100e,
        max_sites, switch_cost_usd, min_duration, first`` (``first``: the period is
        the first of the customer's rule periods; no cluster start is counted there).
    cluster_mode : bool
        Build the exact cluster binaries (``--clusters`` or ``--integer-units``).
    """

    index: int
    dataset: Any
    n_periods: int
    hours: np.ndarray
    discount: np.ndarray
    sites: pd.DataFrame
    chips: pd.DataFrame
    customers: pd.DataFrame
    power_factor: np.ndarray
    grid: pd.DataFrame
    water: pd.DataFrame
    supply: pd.DataFrame
    bill_of_materials: pd.DataFrame
    initial_fleet: pd.DataFrame
    demand: pd.DataFrame
    eligibility: pd.DataFrame
    commitments: pd.DataFrame
    commitment_periods: pd.DataFrame
    workload_names: tuple[str, ...] = ()
    group_sites: pd.DataFrame = field(default_factory=pd.DataFrame)
    clusters: pd.DataFrame = field(default_factory=pd.DataFrame)
    cluster_mode: bool = False
    pipeline: pd.DataFrame = field(default_factory=pd.DataFrame)  # s, t, it_mw, liquid_mw
    #: Region code ``e`` of each site, indexed by site code ``s``.
    site_regions: pd.Series = field(default_factory=lambda: pd.Series([], dtype=np.int64))

    def lead(self, s: np.ndarray) -> np.ndarray:
        """Return the construction lead time in periods of site codes ``s`` (0 if absent)."""
        if "lead_time_periods" not in self.sites:
            return np.zeros(len(s), dtype=np.int64)
        return self.sites["lead_time_periods"].reindex(s).fillna(0).to_numpy(dtype=np.int64)

    def delivery_lag(self, c: np.ndarray) -> np.ndarray:
        """Return the delivery lag in periods of chip codes ``c`` (0 if absent)."""
        if "delivery_lag_periods" not in self.chips:
            return np.zeros(len(c), dtype=np.int64)
        return self.chips["delivery_lag_periods"].reindex(c).fillna(0).to_numpy(dtype=np.int64)

    source_names: tuple[str, ...] = ()
    #: Supply resource and equipment order-book IDs by ``r`` code.
    resource_names: tuple[str, ...] = ()

    def chip_attr(self, c: np.ndarray, column: str) -> np.ndarray:
        """Chip attribute ``column`` for chip codes ``c``."""
        return self.chips[column].reindex(c).to_numpy()

    def site_attr(self, s: np.ndarray, column: str) -> np.ndarray:
        """Site attribute ``column`` for site codes ``s``."""
        return self.sites[column].reindex(s).to_numpy()

    def cooling_split(self, c: np.ndarray, s: np.ndarray, air: str, liquid: str) -> np.ndarray:
        """Per (chip, site) PUE or WUE: liquid-only chips at the liquid value, else air."""
        is_liquid = self.chip_attr(c, "cooling") == "liquid"
        return np.where(is_liquid, self.site_attr(s, liquid), self.site_attr(s, air)).astype(float)

    def it_mw_per_chip(self, c: np.ndarray) -> np.ndarray:
        """Nameplate IT MW per chip (``it_kw_per_chip / 1000``)."""
        return self.chip_attr(c, "it_kw_per_chip") / 1e3


@dataclass
class ScenarioColumns:
    """Columns of one scenario, as code frames with a ``col`` column (the column id)."""

    scenario: ScenarioData
    build: pd.DataFrame  # s, t, col
    liquid: pd.DataFrame  # s, t, col
    install: pd.DataFrame  # c, s, t, col
    produce: pd.DataFrame  # c, t, col
    fleet_columns: pd.DataFrame = field(default_factory=pd.DataFrame)  # c, s, t, col
    fleet_keys: pd.DataFrame = field(default_factory=pd.DataFrame)  # c, s, t, init
    installed: pd.DataFrame = field(default_factory=pd.DataFrame)  # c, t, col (chip_installed)
    built: pd.DataFrame = field(default_factory=pd.DataFrame)  # s, t, col (site_built)
    liquid_built: pd.DataFrame = field(default_factory=pd.DataFrame)  # s, t, col
    assign: pd.DataFrame = field(default_factory=pd.DataFrame)  # c, s, k, w, t, derate, col
    unmet: pd.DataFrame = field(default_factory=pd.DataFrame)  # k, w, t, demand_h100e, col
    breach: pd.DataFrame = field(default_factory=pd.DataFrame)  # j, k, f, t, min_it_mw, ..., col
    retrofit: pd.DataFrame = field(  # s, t, col
        default_factory=lambda: pd.DataFrame(
            {k: pd.Series([], dtype=np.int64) for k in "stc"}
        ).rename(columns={"c": "col"})
    )
    power: dict[str, Any] = field(default_factory=dict)  # power columns (components.power)
    cluster: pd.DataFrame = field(default_factory=pd.DataFrame)  # k, s, t, col (binary)
    cluster_start: pd.DataFrame = field(default_factory=pd.DataFrame)  # k, s, t, col
    busy: pd.DataFrame = field(default_factory=pd.DataFrame)  # c, s, w, t, e, col (compact)
    serve: pd.DataFrame = field(default_factory=pd.DataFrame)  # c, e, k, w, g, t, derate, col
    pool_serve: pd.DataFrame = field(default_factory=pd.DataFrame)  # c, q, k, w, g, t, derate, col
    pool_draw: pd.DataFrame = field(default_factory=pd.DataFrame)  # c, e, q, w, t, col
    #: The scenario's operating columns are busy and serve (no assign).
    compact: bool = False
    #: Columns of the kinds a component adds itself (:attr:`ColumnKind.add`), by kind.
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)

    @property
    def site_work(self) -> pd.DataFrame:
        """Columns of chips at work per site: ``c, s, w, t, col`` (assign, and busy).

        Everything that depends on the site (fleet assignment, energy, water, power)
        reads these columns.
        """
        if not self.compact:
            return self.assign
        keys = ["c", "s", "w", "t", "col"]
        return pd.concat([self.assign[keys], self.busy[keys]], ignore_index=True)

    @property
    def customer_work(self) -> pd.DataFrame:
        """Columns of chips serving a customer: ``c, k, w, g, t, derate, col``.

        ``assign`` (per site) and, in the compact formulation, ``serve`` (per region)
        and ``pool_serve`` (per region pool); everything that depends on the customer
        (demand balance, commitments) reads these columns.
        """
        if not self.compact:
            return self.assign
        keys = ["c", "k", "w", "g", "t", "derate", "col"]
        parts = [self.assign[keys], self.serve[keys]]
        if not self.pool_serve.empty:
            parts.append(self.pool_serve[keys])
        return pd.concat(parts, ignore_index=True)


def energy_coefficients(
    columns: ScenarioColumns,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Compute IT MWh per unit of the fleet, assign and initial-fleet terms.

    Fleet columns draw at the idle factor, assign columns (busy columns in the compact
    formulation: :attr:`ScenarioColumns.site_work`) the extra draw above idle, and the
    initial fleet is a constant.

    Returns
    -------
    (DataFrame, DataFrame, DataFrame)
        ``c, s, t, col, it`` for fleet and assign columns, ``c, s, t, it`` for the
        initial fleet; ``it`` in MWh per chip (per the whole initial cohort for the
        last).
    """
    scenario = columns.scenario
    hours = scenario.hours

    def idle_and_kw(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        idle = scenario.chip_attr(c, "idle_power_factor").astype(float)
        return idle, scenario.chip_attr(c, "it_kw_per_chip").astype(float)

    fleet = columns.fleet_columns
    idle, kw = idle_and_kw(column_values(fleet, "c"))
    fleet_it = fleet[["c", "s", "t", "col"]].assign(
        it=hours[column_values(fleet, "t")] / 1e3 * kw * idle
    )
    assign = columns.site_work
    idle, kw = idle_and_kw(column_values(assign, "c"))
    power_factor = scenario.power_factor[column_values(assign, "w")]
    assign_it = assign[["c", "s", "t", "col"]].assign(
        it=hours[column_values(assign, "t")] / 1e3 * kw * (power_factor - idle)
    )
    initial = columns.fleet_keys
    initial = initial[initial["init"] > 0]
    idle, kw = idle_and_kw(column_values(initial, "c"))
    initial_it = initial[["c", "s", "t"]].assign(
        it=hours[column_values(initial, "t")] / 1e3 * kw * idle * column_values(initial, "init")
    )
    return fleet_it, assign_it, initial_it
