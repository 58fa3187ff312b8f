"""Shared building blocks of the constraint families.

Coded scenario data, the row builder, the per-scenario column frames, the family
record and the checker's inputs. Nothing here knows a particular family; each family module
(:mod:`optimizer.components.site`, ``supply``, ``chips``, ``demand``, ``fleet``) uses these
pieces to define its rows, check them and say how its dual reaches the result tables.
Code columns follow the model's index letters: ``s`` site, ``c`` chip, ``k`` customer,
``w`` workload, ``r`` resource, ``f`` chip family, ``j`` commitment row, ``g`` demand
region group (the demand row's ``regions`` text; 0 is "" = anywhere), ``e`` site region
(``sites.region``; ``r`` is taken by resources), ``t`` period position in the horizon.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.plan_context import CheckInputs

#: Code columns a constraint row may carry (-1 when not applicable).
ROW_CODE_COLUMNS = ("s", "c", "k", "w", "r", "j", "g", "t", "o", "e", "q")

#: Code columns a variable may carry (-1 when not applicable).
VARIABLE_CODE_COLUMNS = ("s", "c", "k", "w", "j", "g", "t", "o", "e", "q")

#: Result-table column of each code letter (``j`` stays the commitment row number).
CODE_NAMES = {
    "s": "site",
    "c": "chip",
    "k": "customer",
    "w": "workload",
    "r": "resource",
    "t": "period",
    "j": "j",
    "o": "source",
    "g": "regions",
    "e": "region",
    "q": "pool",
}


# ------------------------------------------------------------------------ array helpers
def expand(frame: pd.DataFrame, start: np.ndarray, count: np.ndarray, column: str) -> pd.DataFrame:
    """Repeat each row ``count`` times and add ``column`` = start, start+1, ...

    Parameters
    ----------
    frame : DataFrame
        Rows to repeat (n rows).
    start, count : ndarray, shape (n,)
        First value and number of repeats per row (negative counts read as 0).
    column : str
        Name of the added counter column.
    """
    count = np.maximum(count, 0).astype(np.int64)
    repeat = np.repeat(np.arange(len(frame)), count)
    out = frame.iloc[repeat].reset_index(drop=True)
    firsts = np.repeat(np.cumsum(count) - count, count)
    out[column] = np.repeat(start, count) + (np.arange(len(repeat)) - firsts)
    return out


def cumulative(columns: pd.DataFrame, n_periods: int) -> pd.DataFrame:
    """Pairs (keys..., t, col) where ``col`` is a variable of a period t' <= t."""
    v = columns.rename(columns={"t": "t_var"})
    return expand(v, v["t_var"].to_numpy(), n_periods - v["t_var"].to_numpy(), "t")


# ---------------------------------------------------------------------- scenario data
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


# ----------------------------------------------------------------------------- builder
class ModelBuilder:
    """Accumulates columns, rows, matrix terms and cost terms of the LP."""

    def __init__(self) -> None:
        self.var_frames: list[pd.DataFrame] = []
        self.n_cols = 0
        self.row_frames: list[pd.DataFrame] = []
        self.n_rows = 0
        self.terms: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.costs: list[pd.DataFrame] = []
        self.consts: list[pd.DataFrame] = []
        #: Region pool name -> code ``q`` (:func:`optimizer.components.pool.pool_keys`).
        self.pools: dict[str, int] = {}

    def add_vars(self, kind: str, scenario: int, keys: pd.DataFrame) -> np.ndarray:
        """Add one column per row of ``keys`` (code columns); return column ids."""
        n = len(keys)
        cols = np.arange(self.n_cols, self.n_cols + n, dtype=np.int64)
        f = pd.DataFrame({"col": cols})
        f["kind"] = kind
        f["scenario"] = scenario
        for name in VARIABLE_CODE_COLUMNS:
            f[name] = keys[name].to_numpy(dtype=np.int64) if name in keys else -1
        self.var_frames.append(f)
        self.n_cols += n
        return cols

    def add_rows(
        self, family: str, scenario: int, keys: pd.DataFrame, sense: str, rhs: np.ndarray
    ) -> np.ndarray:
        """Add one row of ``family`` per row of ``keys``; return row ids."""
        n = len(keys)
        rows = np.arange(self.n_rows, self.n_rows + n, dtype=np.int64)
        f = pd.DataFrame({"row": rows})
        f["family"] = family
        f["scenario"] = scenario
        for name in ROW_CODE_COLUMNS:
            f[name] = keys[name].to_numpy(dtype=np.int64) if name in keys else -1
        f["sense"] = sense
        f["rhs"] = np.asarray(rhs, dtype=float)
        self.row_frames.append(f)
        self.n_rows += n
        return rows

    def add_terms(self, row: Any, col: Any, coef: Any) -> None:
        """Add matrix coefficients (duplicates are summed)."""
        r = np.asarray(row, dtype=np.int64)
        c = np.asarray(col, dtype=np.int64)
        v = np.broadcast_to(np.asarray(coef, dtype=float), r.shape).copy()
        if len(r):
            self.terms.append((r, c, v))

    def add_cost(self, scenario: int, term: str, col: Any, t: Any, coef: Any) -> None:
        """Add undiscounted cost coefficients of ``term`` in period ``t``."""
        col = np.asarray(col, dtype=np.int64)
        if not len(col):
            return
        f = pd.DataFrame({"col": col})
        f["scenario"] = scenario
        f["term"] = term
        f["t"] = np.broadcast_to(np.asarray(t, dtype=np.int64), col.shape)
        f["coef"] = np.broadcast_to(np.asarray(coef, dtype=float), col.shape)
        self.costs.append(f)

    def add_const(self, scenario: int, term: str, t: Any, value: Any) -> None:
        """Add an undiscounted constant cost."""
        t = np.asarray(t, dtype=np.int64)
        if not len(t):
            return
        f = pd.DataFrame({"scenario": scenario, "term": term, "t": t})
        f["value"] = np.asarray(value, dtype=float)
        self.consts.append(f)


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
    assign: pd.DataFrame = field(default_factory=pd.DataFrame)  # c, s, k, w, t, derate, col
    unmet: pd.DataFrame = field(default_factory=pd.DataFrame)  # k, w, t, demand_h100e, col
    breach: pd.DataFrame = field(default_factory=pd.DataFrame)  # j, k, f, t, min_it_mw, ..., col
    retrofit: pd.DataFrame = field(  # s, t, col
        default_factory=lambda: pd.DataFrame(
            {k: pd.Series([], dtype=np.int64) for k in "stc"}
        ).rename(columns={"c": "col"})
    )
    power: dict[str, Any] = field(default_factory=dict)  # power columns (families.power)
    cluster: pd.DataFrame = field(default_factory=pd.DataFrame)  # k, s, t, col (binary)
    cluster_start: pd.DataFrame = field(default_factory=pd.DataFrame)  # k, s, t, col
    busy: pd.DataFrame = field(default_factory=pd.DataFrame)  # c, s, w, t, e, col (compact)
    serve: pd.DataFrame = field(default_factory=pd.DataFrame)  # c, e, k, w, g, t, derate, col
    pool_serve: pd.DataFrame = field(default_factory=pd.DataFrame)  # c, q, k, w, g, t, derate, col
    pool_draw: pd.DataFrame = field(default_factory=pd.DataFrame)  # c, e, q, w, t, col
    #: The scenario's operating columns are busy and serve (no assign).
    compact: bool = False

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
    idle, kw = idle_and_kw(fleet["c"].to_numpy())
    fleet_it = fleet[["c", "s", "t", "col"]].assign(
        it=hours[fleet["t"].to_numpy()] / 1e3 * kw * idle
    )
    assign = columns.site_work
    idle, kw = idle_and_kw(assign["c"].to_numpy())
    power_factor = scenario.power_factor[assign["w"].to_numpy()]
    assign_it = assign[["c", "s", "t", "col"]].assign(
        it=hours[assign["t"].to_numpy()] / 1e3 * kw * (power_factor - idle)
    )
    initial = columns.fleet_keys
    initial = initial[initial["init"] > 0]
    idle, kw = idle_and_kw(initial["c"].to_numpy())
    initial_it = initial[["c", "s", "t"]].assign(
        it=hours[initial["t"].to_numpy()] / 1e3 * kw * idle * initial["init"].to_numpy()
    )
    return fleet_it, assign_it, initial_it


# ------------------------------------------------------------------------- the checker
VIOLATION_COLUMNS = ("family", "constraint", "keys", "lhs", "rhs", "violation")


#: Share of a family's largest |lhs| or |rhs| below which a row's own rhs is not
#: taken as its scale: a solver's feasibility tolerance is relative to the scaled
#: problem, so a row with rhs 0 in a family of million-chip rows may come back a few
#: micro-chips off (HiGHS after a warm start: 2e-6 chips) without being violated.
FAMILY_SCALE_SHARE = 1e-3


def violations(
    family: str, keys: pd.Series, lhs: Any, rhs: Any, sense: str, tolerance: float
) -> pd.DataFrame:
    """Rows of ``family`` violated by more than ``tolerance * (1 + scale)``.

    ``scale`` is the row's ``|rhs|``, but at least :data:`FAMILY_SCALE_SHARE` times
    the family's largest ``|lhs|`` or ``|rhs|``: with the default tolerance of 1e-6 a
    fleet-assignment row of rhs 0 in a family whose largest row is 1M chips may be
    off by 1e-3 chips, while a 1 MW limit in a family of MW-sized rows is held to
    about 1e-6 MW.

    Parameters
    ----------
    family : str
        Family name (or ``bounds`` / ``eligibility``).
    keys : Series of str, or callable
        Row keys, e.g. ``"new_carlisle,2027Q2"``; or a function of the boolean mask of
        violated rows returning their keys only (text is made for violated rows only).
    lhs, rhs : array-like
        Left- and right-hand side per row, in the family's unit.
    sense : {"<=", ">="}
    tolerance : float

    Returns
    -------
    DataFrame
        ``family, constraint, keys, lhs, rhs, violation`` of the violated rows.
    """
    lhs = np.asarray(lhs, dtype=float)
    rhs = np.asarray(rhs, dtype=float)
    excess = lhs - rhs if sense == "<=" else rhs - lhs
    magnitude = np.concatenate([np.abs(lhs), np.abs(rhs)])
    magnitude = magnitude[np.isfinite(magnitude)]
    family_scale = FAMILY_SCALE_SHARE * float(magnitude.max()) if len(magnitude) else 0.0
    bad = excess > tolerance * (1.0 + np.maximum(np.abs(rhs), family_scale))
    if not bad.any():  # the usual answer: the family's empty frame, made once
        if family not in _NO_VIOLATIONS:
            _NO_VIOLATIONS[family] = _violation_rows(family, keys, lhs, rhs, excess, bad)
        return _NO_VIOLATIONS[family].copy()
    return _violation_rows(family, keys, lhs, rhs, excess, bad)


def equal_violations(
    family: str, keys: Any, lhs: np.ndarray, rhs: np.ndarray, tolerance: float
) -> list[pd.DataFrame]:
    """Rows of an equality family violated either way (:func:`violations` for both senses)."""
    return [
        violations(family, keys, lhs, rhs, "<=", tolerance),
        violations(family, keys, lhs, rhs, ">=", tolerance),
    ]


def flagged(
    family: str,
    frame: pd.DataFrame,
    mask: np.ndarray,
    value: str,
    text: Callable[[pd.DataFrame], pd.Series],
    tolerance: float,
) -> pd.DataFrame:
    """Violations of the rows of ``frame`` that ``mask`` flags: column ``value`` <= 0.

    Parameters
    ----------
    family : str
    frame : DataFrame
    mask : ndarray of bool, shape (len(frame),)
        Rows that may not carry a value (an ineligible pair, a chip outside its window).
    value : str
        Column holding the row's value (its lhs; the rhs is 0).
    text : callable
        Key text of some rows of ``frame`` (a Series of str); called on the violated
        rows only, so nothing is concatenated when every row is clean.
    tolerance : float

    Returns
    -------
    DataFrame
        As :func:`violations`.
    """
    bad = frame[mask] if mask.any() else frame.iloc[:0]  # the usual answer: no row

    def keys(over: np.ndarray) -> np.ndarray:
        out: np.ndarray = text(bad[over]).astype(str).to_numpy()
        return out

    return violations(family, keys, bad[value], np.zeros(len(bad)), "<=", tolerance)


#: The empty violations frame of each family (copied out, never handed out itself).
_NO_VIOLATIONS: dict[str, pd.DataFrame] = {}


def _violation_rows(
    family: str,
    keys: Any,
    lhs: np.ndarray,
    rhs: np.ndarray,
    excess: np.ndarray,
    bad: np.ndarray,
) -> pd.DataFrame:
    """Return the violations frame of the rows marked ``bad``."""
    if callable(keys):
        k = np.asarray(keys(bad), dtype=object)
    else:
        k = pd.Series(keys)[bad].astype(str).to_numpy()  # text of the violated rows only
    return pd.DataFrame(
        {
            "family": family,
            "constraint": [f"{family}[{x}]" for x in k],
            "keys": k,
            "lhs": lhs[bad],
            "rhs": rhs[bad],
            "violation": excess[bad],
        }
    )


# ----------------------------------------------------------------------- family record
DefineFn = Callable[[ModelBuilder, ScenarioColumns], None]
CheckFn = Callable[[CheckInputs], pd.DataFrame]


@dataclass(frozen=True)
class ResultRows:
    """Where a family's dual (and usage) lands in the result tables.

    Attributes
    ----------
    table : str
        Result table holding the family's shadow price per row key, e.g.
        ``site_utilisation`` (see :data:`optimizer.plan.results.TABLE_COLUMNS`).
    dual_column : str
        Column of that table receiving the conditional dual.
    keys : tuple of str
        Row code letters the dual is matched on (their result-table columns are
        :data:`CODE_NAMES`), e.g. ``("s", "t")`` -> ``site, period``.
    limit : str
        ``site_utilisation`` only: the ``limit`` label of the family's rows.
    used : str
        ``site_utilisation`` only: column of the per-(site, period) load frame with
        what the limit's rows use (``it_mw``, ``liq_mw``, ``fac_mw``, ``water_m3``).
    capacity : str
        ``site_utilisation`` only: column of the per-(site, period) capacity frame
        with the limit's value.
    """

    table: str
    dual_column: str
    keys: tuple[str, ...]
    limit: str = ""
    used: str = ""
    capacity: str = ""


@dataclass(frozen=True)
class ConstraintFamily:
    """Everything about one constraint family, findable from its name.

    Attributes
    ----------
    name : str
        Row ``family`` value, e.g. ``site_grid``.
    unit : str
        Unit of the rhs (and of the slack); shadow prices are in USD per this unit.
    define : callable
        ``define(builder, columns)`` adds the family's rows of one scenario
        (vectorised; returns early when nothing applies). Its docstring states the
        maths in one line.
    check : callable or None
        ``check(inputs)`` recomputes lhs and rhs from the decision frames with plain
        pandas and returns the violated rows (:func:`violations`); None only for
        definition rows whose meaning the checker recomputes from the inputs.
    explain_template : str
        Infeasibility wording of a relaxed row, with ``{key}``, ``{period}``,
        ``{amount}`` placeholders ("" for soft and definition families, which are
        never relaxed).
    explain_unit : str
        Unit shown with the explanation's amount.
    key_codes : tuple of str
        Code letters whose names make the row's key text, joined by "/" (``j`` is
        the commitment's ``customer/family/from_period``).
    soft : bool
        The family already has a priced slack (unmet, breach): never infeasible.
    definition : bool
        Equality rows defining auxiliary columns: no limit, no shadow price shown.
    builds_columns : bool
        ``define`` also creates columns and runs in the column phase of the build,
        before the other scenarios' operating columns.
    result : ResultRows or None
        Where the dual lands besides the ``shadow_prices`` table.
    summary_words : str
        Domain words for one row in the plan summary and the risk views, with ``{0}``,
        ``{1}`` ... for the parts of the row key (``chip/site``) and ``{key}`` for the
        whole key, e.g. ``"grid interconnect at {0}"``. Required for every family that
        is not a definition family (``tests/test_families_registry.py``).
    limit : bool
        A physical or supply limit of the plan (grid, IT power, water, wafers ...): its
        binding rows are listed among the summary's "binding limits" and in the
        Monte Carlo binding shares. Bookkeeping rows (inventory, fleet assignment) and
        rows with their own summary section (demand, commitments) are not limits.
    policy : bool
        A limit the user sets as a policy choice (a carbon cap, a training-cluster rule:
        minimum size, most sites, minimum duration), not a physical or supply fact.
        When the model is infeasible the explanation lets policy rows
        give before physical limits, and both before bookkeeping rows
        (:func:`optimizer.plan.explain.relax_tier`), so it names the limit the user set.
    """

    name: str
    unit: str
    define: DefineFn
    check: CheckFn | None
    explain_template: str
    explain_unit: str
    key_codes: tuple[str, ...]
    soft: bool = False
    definition: bool = False
    builds_columns: bool = False
    result: ResultRows | None = None
    summary_words: str = ""
    limit: bool = False
    policy: bool = False
