"""The planning LP: index tables, constraint families and objective, as sparse arrays.

The model is built column-and-row-wise from pandas index tables (one row per
variable, one row per constraint) and a sparse matrix, never from per-row Python
loops, so a 1.5M-variable model builds in seconds. :func:`optimizer.plan.pulp_io.to_pulp`
turns the same arrays into a PuLP ``LpProblem`` (readable names from the domain
keys, or ``x<col>`` / ``c<row>``); the HiGHS path of :mod:`optimizer.plan.solve` passes the
arrays to ``highspy`` in bulk. The index tables map every column and row back to its
domain keys.

Decisions (all >= 0; see ``shared/DESIGN.md``)
------------------------------------------------
``build[s,p]`` MW of new IT capacity; ``liquid[s,p]`` MW of it fitted for liquid
cooling; ``install[c,s,p]`` chips installed; ``produce[c,p]`` chips produced;
``assign[c,s,k,w,p]`` chips serving customer k workload w; ``unmet[k,w,p]`` H100e;
``breach[j,p]`` MW short on commitment row j. Only variables that can be non-zero
are created: no ``produce`` outside the sale window (this *is* family 8,
chip_window), no ``install`` before the chip's first producible period or at a site
where no eligible customer may use it or (liquid-only chips) no liquid capacity can
ever exist, no ``assign`` for a non-eligible customer/chip, a site outside the
eligibility regions, a period with no demand and no commitment, or a (chip, site,
period) with no possible fleet.

Expressions: ``fleet[c,s,p]`` = initial fleet still alive (``install_period <= p <
install_period + lifetime_periods``) + installs of the last ``lifetime_periods``
periods; ``it_capacity[s,p]`` = ``initial_it_mw`` + cumulative build;
``liquid_capacity[s,p]`` = ``initial_liquid_mw`` + cumulative liquid build. Built
capacity does not retire inside the horizon (facility life, below, is longer).

Constraint families (row ``family`` value; each row's dual is routed by it)
--------------------------------------------------------------------------
Each family's define function, independent check, infeasibility wording, unit and
result routing are one entry of :data:`optimizer.components.REGISTRY` (see that
module for how to add a family); :func:`build_stochastic_model` calls the define
functions in registry order.

1. ``site_it_power``: sum_c fleet*it_kw/1000 <= it_capacity[s,p]            (MW)
2. ``site_liquid``: sum_{c liquid-only} fleet*it_kw/1000 <= liquid_capacity  (MW);
   ``site_liquid_share``: liquid[s,p] <= liquid_share_max * build[s,p]       (MW)
3. ``site_grid``: sum_c fleet*it_kw/1000 * PUE(c,s) <= grid_mw[s,p]         (MW).
   Facility power is counted on the installed fleet's nameplate IT MW, split by
   cooling: liquid-only chips at ``pue_liquid``, air and either chips at ``pue_air``
   (conservative: an "either" chip may sit in an air hall). Empty built halls draw
   nothing, so the grid limits what is installed, not what is built.
4. ``site_build_rate``: build[s,p] <= max_build_mw_per_period                 (MW);
   ``site_max``: cumulative build <= max_it_mw - initial_it_mw                 (MW)
5. ``site_water``: sum IT MWh(c,s,p) * WUE(c,s) <= water_permit_m3            (m3),
   WUE split by cooling exactly like PUE (L/kWh == m3/MWh, no factor).
6. ``supply_resource``: sum_c produce*per_chip <= capacity[r,p]   (resource unit)
7. ``chip_inventory``: cumulative installs <= cumulative production        (chips)
8. ``chip_window``: no rows in a deterministic model (no produce variables outside
   the window); in a stochastic model a shared produce variable that lies outside
   one scenario's window gets a row ``produce <= 0`` for that scenario.
9. ``fleet_assignment``: sum_{k,w} assign <= fleet[c,s,p]                   (chips)
10. ``demand_balance``: sum assign*h100e[c,w]*derate[k,c] + unmet >= demand (H100e)
11. ``commitment``: sum_{c in f,s,w} assign*it_kw/1000 + breach >= min_it_mw  (MW),
    one row per commitment row and period in from_period..to_period.

Energy: IT MWh[c,s,p] = hours/1000 * (sum_{k,w} assign*it_kw*power_factor[w] +
(fleet - sum assign)*it_kw*idle_power_factor); facility MWh = IT MWh * PUE(c,s).

Formulations (``formulation="compact"`` by default, ``"reference"``)
---------------------------------------------------------------------
The *reference* formulation is the one above: ``assign[c,s,k,w,g,p]`` per chip, site,
customer, workload, demand region group and period. A customer reaches a site only
through the site's region (eligibility regions, the derate per customer and chip,
demand region groups; hosting, fleet, cooling, power and water are about chips, not
customers), so per (chip, region e, workload, period) the assign columns are the
product {sites of e with a fleet} x {(customer, group) served there}. The *compact*
formulation replaces each such product of ``n_b`` sites and ``n_s`` services by its
margins where that saves columns (``n_b * n_s > n_b + n_s``; other groups keep their
assign columns):

* ``busy[c,s,w,p]`` chips at work per site: fleet assignment (sum_w busy <= fleet),
  energy, water and power terms (the assign terms of
  :func:`~optimizer.components.scenario.energy_coefficients`);
* ``serve[c,e,k,w,g,p]`` chips of region e serving customer k: demand balance
  (x h100e x derate) and commitments (x it_kw / 1000);
* 12. ``region_balance``: sum_{k,g} serve[c,e,k,w,g,p] + sum_q pool_draw[c,e,q,w,p] =
  sum_{s in e} busy[c,s,w,p] (chips; :mod:`optimizer.components.region`);
* where n (customer, group) pairs of a (chip, workload, period) may all be served from
  the same m regions and n * m > n + m + 1, their serve columns are pooled:
  ``pool_serve[c,q,k,w,g,p]`` (demand balance and commitments read it like serve),
  ``pool_draw[c,e,q,w,p]`` per member region e of the pool q (region balance), and
  13. ``pool_balance``: sum_{e in q} pool_draw[c,e,q,w,p] = sum_{k,g}
  pool_serve[c,q,k,w,g,p] (chips; :mod:`optimizer.components.pool`).

It is exact: every reference plan maps to a compact plan of the same cost and back.
The report's per-site, per-customer ``assignment`` is the compact plan (pooled
service first split to regions in proportion to each region's draw,
:func:`optimizer.components.pool.spread_pool_service`) split by the north-west corner
rule (largest first) of :func:`optimizer.components.region.split_region_service`; the
checker verifies both balances and both margins of each split row by row, and every
other check runs on the split. The keys are derived from the reference keys and the
product structure is verified by counting
(:func:`~optimizer.components.region.compact_keys`); a scenario where it fails keeps the
reference columns (``formulation_note`` says so). Cluster
mode (``clusters`` / ``integer_units``) always builds the reference: its families
need per-site, per-customer training columns. Only the chosen optimal vertex may
differ between the formulations (the objective does not): e.g. the LP-mode
fragmentation counts of ``training_clusters``.

Objective (minimise, every term times ``periods.discount_factor``)
------------------------------------------------------------------
* chip capex: each installed chip costs ``capex_usd_per_chip / lifetime_periods``
  in every period it is alive *inside the horizon*;
* build capex: each MW built costs ``build_capex_usd_per_mw /
  FACILITY_LIFE_PERIODS`` in every period from its build period to the horizon end;
* energy: facility MWh * ``energy_price_usd_per_mwh`` (initial fleet included, as a
  constant);
* unmet penalty (H100e x ``unmet_penalty_usd_per_h100e_period``) and breach penalty
  (MW x ``breach_penalty_usd_per_mw``).

End of horizon: capital is charged as a straight-line rent per period of use, so
the periods after the horizon are neither charged nor credited: a chip installed in
the last period pays one period of rent. There is no salvage value and no terminal
demand; plans near the end are therefore myopic by design (extend the horizon to
see later needs). Initial fleet and initial capacity are sunk (no capex); their
energy counts.

Production carries a tie-break cost of ``PRODUCE_TIE_BREAK_USD_PER_CHIP`` (booked
as chip capex) so the solver does not produce chips nobody installs.

Two-stage stochastic use
------------------------
:func:`build_stochastic_model` builds one problem over several scenario datasets
(same horizon): the first-stage variables build, liquid, install, produce are
shared (index union over scenarios); assign, unmet and breach are copied per
scenario; every scenario contributes all its constraint rows (over the shared
first-stage variables) and its whole cost, weighted by its probability. A
deterministic model is the one-scenario case with weight 1. First-stage decisions
can be fixed to a plan's values with :func:`fix_first_stage` (for VSS and EVPI).

Integer units
-------------
With ``integer_units=True`` each install column counts deployment units (integer)
and carries the scale ``chips_per_unit``: install chips = scale * column value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np
import pandas as pd
import scipy.sparse as sp

from capacity.schema import SPECS, period_index
from optimizer.components import REGISTRY
from optimizer.components.base import pipeline_by_period
from optimizer.components.hosting import hosted_pairs
from optimizer.components.pool import pool_keys
from optimizer.components.power import POWER_KINDS, source_names
from optimizer.components.region import compact_keys
from optimizer.components.scenario import ScenarioColumns, ScenarioData, energy_coefficients
from optimizer.lp.builder import ModelBuilder, expand
from optimizer.lp.dimensions import ROW_CODE_COLUMNS

#: Assumed facility life in quarters (15 years) for annualising build capex. Data-center
#: shells, power and cooling plant are commonly depreciated over 15-20 years (e.g.
#: Equinix 10-40-year building lives, hyperscaler 15-year facility assumptions);
#: 15 years is an assumption at the conservative end.
FACILITY_LIFE_PERIODS = 60

#: Tie-break cost per chip produced (USD), booked as chip capex; negligible against
#: chip prices (1e4-1e5 USD) and only stops idle production.
PRODUCE_TIE_BREAK_USD_PER_CHIP = 1e-3

FIRST_STAGE = ("build", "liquid", "install", "produce", "retrofit")

#: Formulations of the operating columns (module docstring, "Formulations").
FORMULATIONS = ("compact", "reference")

#: Why a compact request keeps the reference columns in cluster mode.
CLUSTER_REFERENCE_NOTE = (
    "reference formulation: exact training clusters (--clusters / --integer-units) "
    "need per-site, per-customer assign columns"
)

#: First-stage definitions of the two-stage plan, by name. ``full``: every facility and
#: chip decision (build, liquid, install, produce, retrofit) is shared by the scenarios
#: and only operation (assign, unmet, breach, power) is per scenario. ``capacity``: only
#: the facility decisions (build, liquid, retrofit) are shared; chip production and
#: installs are recourse, decided per scenario once it is known.
FIRST_STAGE_SETS: Mapping[str, tuple[str, ...]] = {
    "full": FIRST_STAGE,
    "capacity": ("build", "liquid", "retrofit"),
}


def first_stage_kinds(first_stage: str | Sequence[str] = "full") -> tuple[str, ...]:
    """Return the first-stage column kinds of a named definition (or of a kind list).

    Parameters
    ----------
    first_stage : str or sequence of str
        A key of :data:`FIRST_STAGE_SETS` (``full`` or ``capacity``) or kinds of
        :data:`FIRST_STAGE`.

    Returns
    -------
    tuple of str
        The kinds, in :data:`FIRST_STAGE` order.

    Raises
    ------
    ValueError
        For an unknown name or kind.
    """
    if isinstance(first_stage, str):
        if first_stage not in FIRST_STAGE_SETS:
            raise ValueError(
                f"first stage must be one of {sorted(FIRST_STAGE_SETS)}, not {first_stage!r}"
            )
        return FIRST_STAGE_SETS[first_stage]
    bad = sorted(set(first_stage) - set(FIRST_STAGE))
    if bad:
        raise ValueError(f"first-stage kinds must be among {FIRST_STAGE}, not {bad}")
    return tuple(k for k in FIRST_STAGE if k in set(first_stage))


VAR_KINDS = (
    "build",
    "liquid",
    "install",
    "produce",
    "assign",
    "busy",
    "serve",
    "pool_serve",
    "pool_draw",
    "unmet",
    "breach",
    "fleet",
    "retrofit",
    *POWER_KINDS,
    "cluster",
    "cluster_start",
)

#: Column kinds bounded to [0, 1]; ``cluster`` is binary in cluster mode.
UNIT_INTERVAL_KINDS = ("cluster", "cluster_start")

#: Constraint families in the order of the registry, with the unit of their rhs
#: (derived from :data:`optimizer.components.REGISTRY`).
FAMILIES: dict[str, str] = {family.name: family.unit for family in REGISTRY}

#: Definition rows (equalities of auxiliary columns); not limits, no shadow price shown.
DEFINITION_FAMILIES = tuple(family.name for family in REGISTRY if family.definition)

#: Input tables a linear build (:func:`build_model` without integer units, either
#: formulation) never reads: the calibration record and the provenance table.
LP_UNREAD_TABLES: tuple[str, ...] = ("public_record", "sources")

#: Input columns a linear build never reads, as ``(table, column)``: display text, a
#: resource's unit label, customer prices (no objective reads them yet), the chips'
#: HBM size and deployment-unit size (``chips_per_unit`` is read in integer-unit mode
#: only, which is never reused), and every column of :data:`LP_UNREAD_TABLES`. Result
#: tables may read them, from the dataset the model carries. A batch keeps its base
#: model across a change to these alone (:func:`optimizer.analysis.batch.patch_model`); a change
#: to any other column is patched or rebuilt, so a new column is read until shown not
#: to be. ``tests/test_reuse_columns.py`` records the columns builds read and fails when
#: a column listed here is read, or when a non-key column not listed is never read.
LP_UNREAD_COLUMNS: frozenset[tuple[str, str]] = frozenset(
    {
        ("chips", "display_name"),
        ("chips", "unit_name"),
        ("chips", "hbm_gb"),
        ("chips", "chips_per_unit"),
        ("customers", "display_name"),
        ("customers", "price_training_usd_per_h100e_period"),
        ("customers", "price_inference_usd_per_h100e_period"),
        ("sites", "display_name"),
        ("supply_resources", "unit"),
    }
    | {(t, c.name) for t in LP_UNREAD_TABLES for c in SPECS[t].columns}
)

COST_TERMS = (
    "chip_capex",
    "build_capex",
    "retrofit_capex",
    "energy",
    "unmet_penalty",
    "breach_penalty",
    "grid_upgrade",
    "onsite_power",
    "carbon",
    "cluster_switch",
)


class DatasetLike(Protocol):
    """What the model needs of a :class:`capacity.dataset.Dataset`."""

    name: str
    hash: str

    def table(self, name: str) -> pd.DataFrame: ...  # noqa: D102

    @property
    def periods(self) -> tuple[str, ...]: ...  # noqa: D102


@dataclass(frozen=True, eq=False)
class PlanningModel:
    """A built planning LP: index tables, sparse matrix and objective.

    Attributes
    ----------
    datasets : tuple of Dataset
        One per scenario (one for a deterministic model).
    weights : tuple of float
        Scenario probabilities (sum 1).
    periods : tuple of str
        Horizon quarters.
    codes : Mapping[str, tuple of str]
        Domain IDs per code dimension: ``s`` sites, ``c`` chips, ``k`` customers,
        ``w`` workloads, ``r`` resources, ``f`` chip families.
    variables : DataFrame
        One row per column (position = column id): ``kind``, ``scenario`` (-1 for
        shared first-stage), codes ``s, c, k, w, j, t`` (-1 when not applicable),
        ``lb``, ``ub``, ``cost`` (weighted, discounted objective coefficient),
        ``integer`` (bool), ``scale`` (domain value = scale * column value).
    constraints : DataFrame
        One row per row (position = row id): ``family``, ``scenario``, codes
        ``s, c, k, w, r, j, t``, ``sense`` ("<=" or ">="), ``rhs`` (in the family's
        unit; constants of the initial fleet already moved to the right).
    matrix : scipy.sparse.csr_matrix
        Shape (n_constraints, n_variables).
    cost_terms : DataFrame
        ``col, scenario, term, t, coef``: undiscounted, unweighted cost per unit
        of column value, per cost term and period (the objective is
        sum weight * discount * coef * value).
    const_terms : DataFrame
        ``scenario, term, t, value``: undiscounted constant costs (initial fleet
        energy).
    commitments : tuple of DataFrame
        Per scenario, the commitments table (row j = position).
    integer_units : bool
        Install columns count deployment units.
    clusters : bool
        Exact training clusters: binary ``cluster[k,s,p]`` columns and the cluster
        families (:mod:`optimizer.components.placement`); on with ``--clusters`` or
        ``--integer-units``.
    formulation : {"compact", "reference"}
        The operating columns built: ``busy``/``serve`` with region balances, or
        ``assign`` (module docstring, "Formulations").
    formulation_note : str
        Why a requested compact formulation was not (fully) built, else "".
    unmatched_fixed : DataFrame
        Fixed first-stage values that have no column in this model (non-zero means
        the fixed plan cannot be applied: the solve reports infeasible).
    """

    datasets: tuple[Any, ...]
    weights: tuple[float, ...]
    periods: tuple[str, ...]
    codes: Mapping[str, tuple[str, ...]]
    variables: pd.DataFrame
    constraints: pd.DataFrame
    matrix: sp.csr_matrix
    cost_terms: pd.DataFrame
    const_terms: pd.DataFrame
    commitments: tuple[pd.DataFrame, ...]
    integer_units: bool = False
    unmatched_fixed: pd.DataFrame = field(default_factory=pd.DataFrame)
    clusters: bool = False
    formulation: str = "reference"
    formulation_note: str = ""

    @property
    def n_variables(self) -> int:
        """Number of columns."""
        return len(self.variables)

    @property
    def n_constraints(self) -> int:
        """Number of rows."""
        return len(self.constraints)

    @property
    def objective_constant(self) -> float:
        """Weighted, discounted constant part of the objective (USD)."""
        if self.const_terms.empty:
            return 0.0
        df = _discount(self.datasets[0])
        ct = self.const_terms
        w = np.asarray(self.weights)[ct["scenario"].to_numpy()]
        return float((ct["value"].to_numpy() * df[ct["t"].to_numpy()] * w).sum())

    def row_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Row lower and upper bounds (``-inf``/``inf`` for the open side)."""
        rhs = self.constraints["rhs"].to_numpy(dtype=float)
        sense = self.constraints["sense"].to_numpy()
        lo = np.where(sense == "<=", -np.inf, rhs)
        hi = np.where(sense == ">=", np.inf, rhs)
        return lo, hi


# ----------------------------------------------------------------------------- helpers
def _discount(ds: DatasetLike) -> np.ndarray:
    return ds.table("periods")["discount_factor"].to_numpy(dtype=float)


def _hours(ds: DatasetLike) -> np.ndarray:
    return ds.table("periods")["hours"].to_numpy(dtype=float)


def _code(values: pd.Series, ids: Sequence[str]) -> np.ndarray:
    """Map IDs to integer codes of ``ids`` (-1 when unknown)."""
    lookup = pd.Index(list(ids))
    return lookup.get_indexer(values.astype(str).to_numpy()).astype(np.int64)


def _period_position(labels: pd.Series, first_period_index: int) -> np.ndarray:
    """Period labels -> horizon position (may be negative or >= T)."""
    unique = pd.unique(labels.astype(str))
    position = {u: period_index(u) - first_period_index for u in unique}
    return labels.astype(str).map(position).to_numpy(dtype=np.int64)


def _frame(**columns: Any) -> pd.DataFrame:
    return pd.DataFrame(columns)


def _union_ids(datasets: Sequence[Any], tables: Sequence[str], column: str) -> tuple[str, ...]:
    """IDs of ``column`` over ``tables`` of every dataset, first-seen order."""
    seen: dict[str, None] = {}
    for ds in datasets:
        for table in tables:
            for v in ds.table(table)[column].astype(str):
                seen.setdefault(v, None)
    return tuple(seen)


def _codes(datasets: Sequence[Any]) -> dict[str, tuple[str, ...]]:
    return {
        "s": _union_ids(datasets, ("sites",), "site"),
        "c": _union_ids(datasets, ("chips",), "chip"),
        "k": _union_ids(datasets, ("customers",), "customer"),
        "w": _union_ids(datasets, ("workloads", "demand"), "workload"),
        "r": _union_ids(datasets, ("supply_resources", "chip_bill_of_materials"), "resource"),
        "f": _union_ids(datasets, ("chips",), "family"),
        "o": _source_codes(datasets),
        "g": _group_ids(datasets),
        "e": _union_ids(datasets, ("sites",), "region"),
    }


def _source_codes(datasets: Sequence[Any]) -> tuple[str, ...]:
    """Power source names over the scenarios (``grid`` first; :mod:`optimizer.components.power`)."""
    seen: dict[str, None] = {}
    for ds in datasets:
        for name in source_names(ds):
            seen.setdefault(name, None)
    return tuple(seen)


def _group_ids(datasets: Sequence[Any]) -> tuple[str, ...]:
    """Demand region groups: "" (anywhere) first, then each ``demand.regions`` text."""
    seen: dict[str, None] = {"": None}
    for ds in datasets:
        d = ds.table("demand")
        if "regions" in d:
            for v in d["regions"].fillna("").astype(str).str.strip():
                seen.setdefault(v, None)
    return tuple(seen)


def _demand_groups(d: pd.DataFrame) -> pd.Series:
    """Return the stripped ``regions`` text of demand rows ("" when the column is absent)."""
    if "regions" not in d:
        return pd.Series("", index=d.index, dtype=object)
    return d["regions"].fillna("").astype(str).str.strip()


# --------------------------------------------------------------- coded scenario tables
def _coded_initial_fleet(
    ds: Any, codes: Mapping[str, tuple[str, ...]], chips: pd.DataFrame, p0: int, T: int
) -> pd.DataFrame:
    """Expand the initial fleet to ``c, s, t, chips`` for the periods each cohort is alive."""
    f0 = ds.table("initial_fleet")
    initial = _frame(
        c=_code(f0["chip"], codes["c"]),
        s=_code(f0["site"], codes["s"]),
        t_inst=_period_position(f0["install_period"], p0),
        chips=f0["chips"].to_numpy(dtype=float),
    )
    initial = initial[initial["chips"] > 0]
    if not len(initial):
        return _frame(c=[], s=[], t=[], chips=[]).astype({"c": int, "s": int, "t": int})
    life = chips["lifetime_periods"].reindex(initial["c"]).to_numpy(dtype=np.int64)
    start = np.maximum(initial["t_inst"].to_numpy(), 0)
    end = np.minimum(initial["t_inst"].to_numpy() + life, T)  # exclusive
    initial = expand(initial[["c", "s", "chips"]], start, end - start, "t")
    return initial.groupby(["c", "s", "t"], as_index=False)["chips"].sum()


def _coded_demand(ds: Any, codes: Mapping[str, tuple[str, ...]], p0: int, T: int) -> pd.DataFrame:
    """Positive demand rows inside the horizon: ``k, w, g, t, demand_h100e``."""
    d = ds.table("demand")
    demand = _frame(
        k=_code(d["customer"], codes["k"]),
        w=_code(d["workload"], codes["w"]),
        g=_code(_demand_groups(d), codes["g"]),
        t=_period_position(d["period"], p0),
        demand_h100e=d["demand_h100e"].to_numpy(dtype=float),
    )
    demand = demand[(demand["demand_h100e"] > 0) & (demand["t"] >= 0) & (demand["t"] < T)]
    return demand.reset_index(drop=True)


def _coded_eligibility(
    ds: Any, codes: Mapping[str, tuple[str, ...]], sites: pd.DataFrame
) -> pd.DataFrame:
    """Eligibility expanded to the allowed sites: ``k, c, s, derate``."""
    e = ds.table("eligibility")
    el = _frame(
        k=_code(e["customer"], codes["k"]),
        c=_code(e["chip"], codes["c"]),
        derate=e["derate"].to_numpy(dtype=float),
        regions=e["regions"].astype(str).to_numpy(),
    )
    el["region"] = el["regions"].str.split(";")
    el = el.explode("region")
    el["region"] = el["region"].astype(str).str.strip()
    site_region = _frame(s=sites.index.to_numpy(), region=sites["region"].astype(str).to_numpy())
    any_region = el[el["region"] == ""][["k", "c", "derate"]].drop_duplicates()
    any_region = any_region.merge(site_region[["s"]], how="cross")
    some = el[el["region"] != ""].merge(site_region, on="region")[["k", "c", "derate", "s"]]
    elig = pd.concat([any_region, some], ignore_index=True).drop_duplicates(["k", "c", "s"])
    return elig[["k", "c", "s", "derate"]].reset_index(drop=True)


def _coded_commitments(
    ds: Any, codes: Mapping[str, tuple[str, ...]], p0: int, T: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Code the commitment rows (``j, k, f, t0, t1, min_it_mw, penalty``) and active periods."""
    cm = ds.table("commitments")
    commitments = _frame(
        j=np.arange(len(cm), dtype=np.int64),
        k=_code(cm["customer"], codes["k"]),
        f=_code(cm["family"], codes["f"]),
        t0=_period_position(cm["from_period"], p0),
        t1=_period_position(cm["to_period"], p0),
        min_it_mw=cm["min_it_mw"].to_numpy(dtype=float),
        penalty=cm["breach_penalty_usd_per_mw"].to_numpy(dtype=float),
    )
    active = commitments[commitments["min_it_mw"] > 0]
    start = np.maximum(active["t0"].to_numpy(), 0)
    end = np.minimum(active["t1"].to_numpy(), T - 1) + 1
    return commitments, expand(active, start, end - start, "t")


def _coded_limits(
    ds: Any, codes: Mapping[str, tuple[str, ...]], p0: int
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Code the limit tables.

    Grid (``s, t, grid_mw``), water (``s, t, permit``), supply (``r, t, capacity``)
    and bill of materials (``c, r, per_chip`` > 0).
    """
    g = ds.table("site_grid")
    grid = _frame(
        s=_code(g["site"], codes["s"]), t=_period_position(g["period"], p0), grid_mw=g["grid_mw"]
    )
    wt = ds.table("site_water")
    water = _frame(
        s=_code(wt["site"], codes["s"]),
        t=_period_position(wt["period"], p0),
        permit=wt["water_permit_m3"],
    )
    su = ds.table("supply_resources")
    supply = _frame(
        r=_code(su["resource"], codes["r"]),
        t=_period_position(su["period"], p0),
        capacity=su["capacity"],
    )
    bm = ds.table("chip_bill_of_materials")
    bom = _frame(
        c=_code(bm["chip"], codes["c"]),
        r=_code(bm["resource"], codes["r"]),
        per_chip=bm["per_chip"],
    )
    return grid, water, supply, bom[bom["per_chip"] > 0]


def _coded_group_sites(codes: Mapping[str, tuple[str, ...]], sites: pd.DataFrame) -> pd.DataFrame:
    """Sites each demand region group may be served at: ``g, s`` (group "" = every site)."""
    site_region = sites["region"].astype(str).str.strip()
    parts = []
    for g, text in enumerate(codes["g"]):
        allowed = {r.strip() for r in text.split(";") if r.strip()}
        ok = np.ones(len(sites), dtype=bool) if not allowed else site_region.isin(allowed)
        parts.append(_frame(g=g, s=sites.index.to_numpy(dtype=np.int64)[np.asarray(ok)]))
    return pd.concat(parts, ignore_index=True).astype(np.int64)


CLUSTER_RULE_COLUMNS = ["min_mw", "min_h100e", "max_sites", "switch_cost_usd", "min_duration"]


def _coded_clusters(
    ds: Any, codes: Mapping[str, tuple[str, ...]], p0: int, T: int, demand: pd.DataFrame
) -> pd.DataFrame:
    """Training-cluster rule per customer and horizon period (``k, t, ..., first``).

    Reads the optional ``training_clusters`` table. ``first`` marks a period that
    begins a training run of the customer: the previous period has no rule or no
    positive training demand of the customer (``demand``: coded ``k, w, t``). No
    cluster start is counted (and no switch cost paid) in such a period: a new run
    is placed freely.
    """
    columns = ["k", "t", *CLUSTER_RULE_COLUMNS, "first"]
    try:
        tc = ds.table("training_clusters")
    except KeyError:  # a dataset-like object without the optional table
        tc = None
    if tc is None or not len(tc):
        return pd.DataFrame({c: pd.Series([], dtype=float) for c in columns}).astype(
            {"k": np.int64, "t": np.int64, "first": bool}
        )
    rules = _frame(
        k=_code(tc["customer"], codes["k"]),
        t0=_period_position(tc["from_period"], p0),
        t1=_period_position(tc["to_period"], p0),
        min_mw=tc["min_cluster_mw"].to_numpy(dtype=float),
        min_h100e=tc["min_cluster_h100e"].to_numpy(dtype=float),
        max_sites=tc["max_sites"].to_numpy(dtype=float),
        switch_cost_usd=tc["switch_cost_usd"].to_numpy(dtype=float),
        min_duration=tc["min_duration_periods"].to_numpy(dtype=np.int64),
    )
    start = np.maximum(rules["t0"].to_numpy(), 0)
    end = np.minimum(rules["t1"].to_numpy(), T - 1) + 1
    out = expand(rules.drop(columns=["t0", "t1"]), start, end - start, "t")
    out = out.sort_values(["k", "t"]).drop_duplicates(["k", "t"]).reset_index(drop=True)
    training = [i for i, w in enumerate(codes["w"]) if w == "training"]
    trained = demand.loc[demand["w"].isin(training).to_numpy(), ["k", "t"]].drop_duplicates()
    previous = out[["k", "t"]].merge(trained, on=["k", "t"])
    previous = previous.assign(t=previous["t"] + 1, _p=True)
    out = out.merge(previous, on=["k", "t"], how="left")
    out["first"] = out["_p"].isna().to_numpy()
    return out[columns]


def _scenario_data(
    index: int, ds: Any, codes: Mapping[str, tuple[str, ...]], cluster_mode: bool = False
) -> ScenarioData:
    """Code one scenario's dataset (every ID -> integer code, periods -> positions)."""
    periods = ds.periods
    T = len(periods)
    p0 = period_index(periods[0])
    sites = ds.table("sites").copy()
    sites.index = _code(sites["site"], codes["s"])
    chips = ds.table("chips").copy()
    chips.index = _code(chips["chip"], codes["c"])
    chips["f"] = _code(chips["family"], codes["f"])
    chips["t_first"] = _period_position(chips["first_period"], p0)
    chips["t_last"] = _period_position(chips["last_period"], p0)
    customers = ds.table("customers").copy()
    customers.index = _code(customers["customer"], codes["k"])
    wl = ds.table("workloads")
    power_factor = np.full(len(codes["w"]), np.nan)
    power_factor[_code(wl["workload"], codes["w"])] = wl["power_factor"].to_numpy(dtype=float)
    grid, water, supply, bom = _coded_limits(ds, codes, p0)
    commitments, commitment_periods = _coded_commitments(ds, codes, p0, T)
    demand = _coded_demand(ds, codes, p0, T)
    return ScenarioData(
        index=index,
        dataset=ds,
        n_periods=T,
        hours=_hours(ds),
        discount=_discount(ds),
        sites=sites,
        chips=chips,
        customers=customers,
        power_factor=power_factor,
        grid=grid,
        water=water,
        supply=supply,
        bill_of_materials=bom,
        initial_fleet=_coded_initial_fleet(ds, codes, chips, p0, T),
        demand=demand,
        eligibility=_coded_eligibility(ds, codes, sites),
        commitments=commitments,
        commitment_periods=commitment_periods,
        workload_names=tuple(codes["w"]),
        pipeline=_coded_pipeline(ds, codes),
        source_names=tuple(codes["o"]),
        group_sites=_coded_group_sites(codes, sites),
        clusters=_coded_clusters(ds, codes, p0, T, demand),
        cluster_mode=cluster_mode,
        site_regions=pd.Series(_code(sites["region"], codes["e"]), index=sites.index),
    )


def _coded_pipeline(ds: Any, codes: Mapping[str, tuple[str, ...]]) -> pd.DataFrame:
    """Pipeline ``s, t, it_mw, liquid_mw`` (t clipped at 0; t >= T: online after the horizon)."""
    pipe = pipeline_by_period(ds)
    return pipe.assign(s=_code(pipe["site"], codes["s"]))[["s", "t", "it_mw", "liquid_mw"]]


# ----------------------------------------------------------------- first-stage columns
def _relevant_customers(scenario: ScenarioData) -> np.ndarray:
    customers = set(scenario.demand["k"].tolist()) | set(scenario.commitment_periods["k"].tolist())
    return np.array(sorted(customers), dtype=np.int64)


def _can_build(scenario: ScenarioData) -> pd.Index:
    st = scenario.sites
    pipeline = scenario.pipeline.groupby("s")["it_mw"].sum().reindex(st.index).fillna(0.0)
    room = st["max_it_mw"] - st["initial_it_mw"] - pipeline
    ok = (st["max_build_mw_per_period"] > 0) & (room > 1e-12)
    ok &= scenario.lead(st.index.to_numpy()) < scenario.n_periods
    return st.index[ok.to_numpy()]


def _usable_pairs(scenario: ScenarioData) -> pd.DataFrame:
    """(c, s) where some relevant eligible customer may run the chip, cooling allowed."""
    el = scenario.eligibility[scenario.eligibility["k"].isin(_relevant_customers(scenario))]
    pairs = el[["c", "s"]].drop_duplicates()
    liquid_only = scenario.chip_attr(pairs["c"].to_numpy(), "cooling") == "liquid"
    st = scenario.sites
    buildable = st.index.isin(_can_build(scenario))
    liquid_possible = (st["initial_liquid_mw"] > 0).to_numpy() | (
        buildable & (st["liquid_share_max"] > 0).to_numpy()
    )
    retrofit_ok = (
        (st["retrofit_mw_per_period"] > 0).to_numpy() if "retrofit_mw_per_period" in st else False
    )
    liquid_possible = liquid_possible | retrofit_ok
    liquid_possible = liquid_possible | st.index.isin(
        scenario.pipeline.loc[scenario.pipeline["liquid_mw"] > 0, "s"]
    )
    liquid_ok = pd.Series(liquid_possible, index=st.index).reindex(pairs["s"]).fillna(False)
    keep = ~liquid_only | liquid_ok.to_numpy(dtype=bool)
    return hosted_pairs(scenario, pairs[keep]).reset_index(drop=True)


def _site_stage_keys(scenario: ScenarioData) -> dict[str, pd.DataFrame]:
    """Keys of build, liquid and retrofit columns of one scenario.

    A build decided in p is online from p + lead: only decisions that come online
    inside the horizon get a column. Retrofit columns exist where the site's
    retrofit rate is positive.
    """
    T = scenario.n_periods
    all_periods = pd.DataFrame({"t": np.arange(T, dtype=np.int64)})
    buildable = _can_build(scenario)
    build_sites = pd.DataFrame({"s": np.asarray(buildable, dtype=np.int64)})
    build = build_sites.merge(all_periods, how="cross")
    build = build[build["t"].to_numpy() + scenario.lead(build["s"].to_numpy()) < T]
    ls = scenario.sites.loc[buildable]
    ls = ls.index[(ls["liquid_share_max"] > 0).to_numpy()]
    liquid = build[build["s"].isin(np.asarray(ls, dtype=np.int64))]
    st = scenario.sites
    rate = (
        st["retrofit_mw_per_period"] if "retrofit_mw_per_period" in st else st["initial_it_mw"] * 0
    )
    retro_sites = pd.DataFrame({"s": st.index[(rate > 0).to_numpy()].to_numpy(dtype=np.int64)})
    return {
        "build": build,
        "liquid": liquid,
        "retrofit": retro_sites.merge(all_periods, how="cross"),
    }


def _chip_stage_keys(scenario: ScenarioData) -> dict[str, pd.DataFrame]:
    """Keys of produce and install columns of one scenario.

    Production runs ``lag`` periods ahead of the sale window (chips produced in p are
    installed from p + lag, so installs fall inside first_period..last_period) and
    only inside the horizon; installs from the first delivery, or from the first
    period when the chip has an opening inventory (pre-horizon output in transit).
    """
    T = scenario.n_periods
    pairs = _usable_pairs(scenario)
    ch = scenario.chips.loc[scenario.chips.index.isin(pairs["c"].unique())]
    lag = scenario.delivery_lag(ch.index.to_numpy())
    t0 = np.maximum(ch["t_first"].to_numpy() - lag, 0)
    t1 = np.minimum(ch["t_last"].to_numpy() - lag, T - 1 - lag)
    on_sale = pd.DataFrame({"c": ch.index.to_numpy(dtype=np.int64)})
    produce = expand(on_sale, t0, t1 - t0 + 1, "t")
    opening = (
        ch["opening_inventory_chips"].fillna(0.0).to_numpy(dtype=float)
        if "opening_inventory_chips" in ch
        else np.zeros(len(ch))
    )
    first_delivery = np.where(t1 >= t0, t0 + lag, T)
    first = np.where(opening > 0, 0, first_delivery)
    starts = pd.DataFrame({"c": on_sale["c"], "t0": first})
    starts = starts[starts["t0"] < T]
    pp = pairs.merge(starts, on="c")
    install = expand(pp[["c", "s"]], pp["t0"].to_numpy(), T - pp["t0"].to_numpy(), "t")
    return {"produce": produce, "install": install}


def _first_stage_keys(
    scenarios: Sequence[ScenarioData], kinds: Sequence[str] = FIRST_STAGE
) -> dict[str, pd.DataFrame]:
    """Union over scenarios of the first-stage variable keys (of ``kinds``)."""
    collected: dict[str, list[pd.DataFrame]] = {kind: [] for kind in kinds}
    for scenario in scenarios:
        for kind, frame in {**_site_stage_keys(scenario), **_chip_stage_keys(scenario)}.items():
            if kind in collected:
                collected[kind].append(frame)
    return {kind: _stage_key_frame(kind, collected[kind]) for kind in kinds}


def _stage_key_frame(kind: str, frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Distinct, sorted keys of one facility or chip kind (``s, t``; ``c, s, t``; ``c, t``)."""
    cols = {"install": ["c", "s", "t"], "produce": ["c", "t"]}.get(kind, ["s", "t"])
    f = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)
    f = f[cols].astype(np.int64).drop_duplicates().sort_values(cols)
    return f.reset_index(drop=True)


# ---------------------------------------------------------------- operating variables
def _operating_keys(columns: ScenarioColumns) -> dict[str, pd.DataFrame]:
    """Keys of the scenario's assign, unmet and breach columns."""
    scenario = columns.scenario
    el = scenario.eligibility
    # demand-driven assignment, at the sites of the demand's region group
    assign = el.merge(scenario.demand[["k", "w", "g", "t"]], on="k")
    assign = assign.merge(scenario.group_sites, on=["g", "s"])
    # commitment-driven assignment (customer/family/period with no demand there)
    if len(scenario.commitment_periods):
        committed = scenario.commitment_periods[["k", "f", "t"]].drop_duplicates()
        demanded = scenario.demand[["k", "t"]].drop_duplicates()
        committed = committed.merge(demanded, on=["k", "t"], how="left", indicator=True)
        committed = committed[committed["_merge"] == "left_only"][["k", "f", "t"]]
        # use the workload with the lowest power factor when nothing is demanded
        pf = scenario.power_factor
        w_min = int(np.nanargmin(np.where(np.isnan(pf), np.inf, pf)))
        el_family = el.assign(f=scenario.chip_attr(el["c"].to_numpy(), "f").astype(np.int64))
        by_commitment = el_family.merge(committed, on=["k", "f"]).drop(columns="f")
        by_commitment["w"] = w_min
        by_commitment["g"] = 0
        assign = pd.concat([assign, by_commitment], ignore_index=True)
    assign = assign.merge(columns.fleet_keys[["c", "s", "t"]], on=["c", "s", "t"])
    keys = ["c", "s", "k", "w", "g", "t"]
    assign = assign[[*keys, "derate"]].drop_duplicates(keys)
    assign = assign.sort_values(keys).reset_index(drop=True)
    unmet = scenario.demand[["k", "w", "g", "t", "demand_h100e"]].reset_index(drop=True)
    breach = scenario.commitment_periods[["j", "k", "f", "t", "min_it_mw", "penalty"]]
    return {"assign": assign, "unmet": unmet, "breach": breach.reset_index(drop=True)}


# ------------------------------------------------------------------------- objective
def define_objective(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Add the scenario's cost terms: capex rents, energy, unmet and breach penalties."""
    scenario = columns.scenario
    i = scenario.index
    # chip capex rent on every alive in-horizon period
    fleet = columns.fleet_columns
    c = fleet["c"].to_numpy()
    rent = scenario.chip_attr(c, "capex_usd_per_chip") / scenario.chip_attr(c, "lifetime_periods")
    builder.add_cost(i, "chip_capex", fleet["col"], fleet["t"], rent.astype(float))
    produce = columns.produce
    builder.add_cost(i, "chip_capex", produce["col"], produce["t"], PRODUCE_TIE_BREAK_USD_PER_CHIP)
    # build capex rent
    build = columns.build
    if len(build):
        count = np.minimum(FACILITY_LIFE_PERIODS, scenario.n_periods - build["t"].to_numpy())
        e = expand(build[["s", "col"]], build["t"].to_numpy(), count, "t")
        capex = scenario.site_attr(e["s"].to_numpy(), "build_capex_usd_per_mw")
        rent = capex / FACILITY_LIFE_PERIODS
        builder.add_cost(i, "build_capex", e["col"], e["t"], rent.astype(float))
    retrofit = columns.retrofit
    if len(retrofit):
        count = np.minimum(FACILITY_LIFE_PERIODS, scenario.n_periods - retrofit["t"].to_numpy())
        e = expand(retrofit[["s", "col"]], retrofit["t"].to_numpy(), count, "t")
        capex = scenario.site_attr(e["s"].to_numpy(), "retrofit_capex_usd_per_mw")
        rent = capex.astype(float) / FACILITY_LIFE_PERIODS
        builder.add_cost(i, "retrofit_capex", e["col"], e["t"], rent)
    # energy
    fleet_it, assign_it, initial_it = energy_coefficients(columns)

    def energy_usd(per_unit: pd.DataFrame) -> np.ndarray:
        c, s = per_unit["c"].to_numpy(), per_unit["s"].to_numpy()
        pue = scenario.cooling_split(c, s, "pue_air", "pue_liquid")
        price = scenario.site_attr(s, "energy_price_usd_per_mwh").astype(float)
        return np.asarray(per_unit["it"].to_numpy() * pue * price)

    for per_unit in (fleet_it, assign_it):
        if columns.power:  # energy by source is priced by the power families
            break
        builder.add_cost(i, "energy", per_unit["col"], per_unit["t"], energy_usd(per_unit))
    if len(initial_it) and not columns.power:
        builder.add_const(i, "energy", initial_it["t"], energy_usd(initial_it))
    unmet = columns.unmet
    penalty = scenario.customers["unmet_penalty_usd_per_h100e_period"].reindex(unmet["k"])
    builder.add_cost(i, "unmet_penalty", unmet["col"], unmet["t"], penalty.to_numpy(dtype=float))
    breach = columns.breach
    penalty = breach["penalty"].to_numpy(dtype=float)
    builder.add_cost(i, "breach_penalty", breach["col"], breach["t"], penalty)
    start = columns.cluster_start
    if len(start):
        cost = start.merge(scenario.clusters[["k", "t", "switch_cost_usd"]], on=["k", "t"])
        builder.add_cost(
            i, "cluster_switch", cost["col"], cost["t"], cost["switch_cost_usd"].to_numpy(float)
        )


# ------------------------------------------------------------------------ entry points
def build_model(
    ds: DatasetLike,
    *,
    integer_units: bool = False,
    clusters: bool = False,
    formulation: str = "compact",
) -> PlanningModel:
    """Build the deterministic planning LP of one dataset.

    Parameters
    ----------
    ds : Dataset
        Validated dataset (scenario already applied).
    integer_units : bool
        When True, installs are whole deployment units (``chips_per_unit`` chips).
    clusters : bool
        Exact training clusters (binary cluster columns); implied by ``integer_units``.
    formulation : {"compact", "reference"}
        Operating columns: per-site busy chips and per-region service linked by
        region balances (exact, fewer columns; the default), or today's per-site,
        per-customer assign columns. Cluster mode always builds the reference.

    Returns
    -------
    PlanningModel
        Index tables, sparse matrix (rows x columns) and objective; see the module
        docstring for the maths.
    """
    return build_stochastic_model(
        [ds], [1.0], integer_units=integer_units, clusters=clusters, formulation=formulation
    )


@dataclass(frozen=True)
class FirstStageUniverse:
    """Codes and first-stage column keys shared by scenario models built one by one.

    A scenario model built with a universe has the same code tables and the same
    first-stage columns, in the same positions (``0 .. n_first - 1``), as the
    extensive form over all the universe's scenarios: the decomposition of
    :mod:`optimizer.analysis.decompose` relies on it.

    Attributes
    ----------
    codes : Mapping[str, tuple of str]
        Domain IDs per code dimension (union over the scenarios).
    keys : Mapping[str, DataFrame]
        Per first-stage kind, its column keys (union over the scenarios).
    """

    codes: Mapping[str, tuple[str, ...]]
    keys: Mapping[str, pd.DataFrame]
    first_stage: tuple[str, ...] = FIRST_STAGE


def first_stage_universe(
    datasets: Sequence[DatasetLike], first_stage: str | Sequence[str] = "full"
) -> FirstStageUniverse:
    """Return the codes and first-stage keys of the extensive form over ``datasets``.

    ``first_stage`` names the shared decisions (see :data:`FIRST_STAGE_SETS`).
    """
    kinds = first_stage_kinds(first_stage)
    codes = _codes(datasets)
    scenarios = [_scenario_data(i, ds, codes) for i, ds in enumerate(datasets)]
    return FirstStageUniverse(codes, _first_stage_keys(scenarios, kinds), kinds)


def build_stochastic_model(
    datasets: Sequence[DatasetLike],
    weights: Sequence[float],
    *,
    integer_units: bool = False,
    clusters: bool = False,
    universe: FirstStageUniverse | None = None,
    formulation: str = "compact",
    first_stage: str | Sequence[str] = "full",
) -> PlanningModel:
    """Build a two-stage stochastic planning LP over weighted scenario datasets.

    The first-stage kinds (by default build, liquid, install, produce and retrofit)
    are shared columns (union of the scenarios' index sets); every other column
    (assign, unmet, breach, power, and the facility or chip kinds left out of the
    first stage, on the scenario's own index set) is copied per scenario. Each
    scenario adds all its rows (over the shared columns) and its full cost times its
    weight, so the objective is the expected cost.

    Parameters
    ----------
    datasets : sequence of Dataset
        Scenario datasets over the same horizon (same ``periods`` table).
    weights : sequence of float
        Probabilities, same length, >= 0, summing to 1 (within 1e-9).
    integer_units : bool
        Install in whole deployment units (implies ``clusters``).
    clusters : bool
        Exact training clusters: binary ``cluster[k,s,p]`` columns per scenario and
        the cluster families of :mod:`optimizer.components.placement`.
    universe : FirstStageUniverse, optional
        Codes and first-stage keys to use instead of the ones of ``datasets`` (a
        scenario model of a larger extensive form, see :func:`first_stage_universe`);
        its first-stage definition then replaces ``first_stage``.
    formulation : {"compact", "reference"}
        Operating columns (see :func:`build_model`); cluster mode builds the
        reference whatever is asked (``formulation_note`` says so).
    first_stage : str or sequence of str
        ``full`` (default), ``capacity`` (build, liquid and retrofit only; see
        :data:`FIRST_STAGE_SETS`) or a list of first-stage kinds.

    Returns
    -------
    PlanningModel

    Raises
    ------
    ValueError
        When the lists differ in length, the weights are not a distribution, the
        horizons differ or the formulation is unknown.
    """
    if formulation not in FORMULATIONS:
        raise ValueError(f"formulation must be one of {FORMULATIONS}, got {formulation!r}")
    if len(datasets) == 0 or len(datasets) != len(weights):
        raise ValueError("need one weight per dataset and at least one dataset")
    probabilities = tuple(float(w) for w in weights)
    if min(probabilities) < 0 or abs(sum(probabilities) - 1.0) > 1e-9:
        raise ValueError(f"weights must be >= 0 and sum to 1, got {probabilities}")
    periods = tuple(datasets[0].periods)
    for ds in datasets[1:]:
        if tuple(ds.periods) != periods:
            raise ValueError("all scenario datasets must share the same horizon periods")
    codes = _codes(datasets) if universe is None else universe.codes
    exact = clusters or integer_units
    scenarios = [_scenario_data(i, ds, codes, exact) for i, ds in enumerate(datasets)]
    builder = ModelBuilder()
    kinds = first_stage_kinds(first_stage) if universe is None else universe.first_stage
    keys: Mapping[str, pd.DataFrame] = (
        _first_stage_keys(scenarios, kinds) if universe is None else universe.keys
    )
    compact = formulation == "compact" and not exact
    all_columns = _add_columns(builder, scenarios, keys, compact, kinds, codes["e"])
    for columns in all_columns:
        for family in REGISTRY:
            if not family.builds_columns:
                family.define(builder, columns)
        define_objective(builder, columns)
    model = _assemble(builder, scenarios, codes, probabilities, periods, integer_units)
    built, note = _formulation_built(formulation, exact, all_columns)
    return replace(model, clusters=exact, formulation=built, formulation_note=note)


def _formulation_built(
    requested: str, exact: bool, all_columns: Sequence[ScenarioColumns]
) -> tuple[str, str]:
    """Return the formulation built and why it differs from the one requested ("" if not)."""
    if requested == "reference":
        return "reference", ""
    if exact:
        return "reference", CLUSTER_REFERENCE_NOTE
    kept = [c.scenario.index for c in all_columns if not c.compact]
    if not kept:
        return "compact", ""
    note = (
        f"reference columns kept for scenario(s) {kept}: their assign keys are not a "
        "product of sites and regional service (a derate or eligibility differs "
        "between sites of one region)"
    )
    return ("reference" if len(kept) == len(all_columns) else "compact"), note


def _add_columns(
    builder: ModelBuilder,
    scenarios: Sequence[ScenarioData],
    keys: Mapping[str, pd.DataFrame],
    compact: bool = False,
    kinds: Sequence[str] = FIRST_STAGE,
    region_names: tuple[str, ...] = (),
) -> list[ScenarioColumns]:
    """Add the columns: shared first stage (``keys`` of ``kinds``), then per scenario the rest.

    Per scenario: its own copies of the facility and chip kinds outside the first
    stage, the column-building families (fleet definition), then the operating
    columns (assign, unmet, breach; ``compact``: busy and serve instead of assign,
    where :func:`optimizer.components.region.compact_keys` finds them exact, and
    pool_serve and pool_draw instead of the serve columns
    :func:`optimizer.components.pool.pool_keys` pools; ``builder.pools`` collects the
    region pools' names and codes, ``region_names`` is the name of each region code).
    """
    first = {kind: keys[kind].assign(col=builder.add_vars(kind, -1, keys[kind])) for kind in kinds}
    all_columns = []
    for scenario in scenarios:
        stage = dict(first)
        if len(stage) < len(FIRST_STAGE):
            own = {**_site_stage_keys(scenario), **_chip_stage_keys(scenario)}
            for kind in FIRST_STAGE:
                if kind not in stage:
                    k = _stage_key_frame(kind, [own[kind]])
                    stage[kind] = k.assign(col=builder.add_vars(kind, scenario.index, k))
        columns = ScenarioColumns(
            scenario, stage["build"], stage["liquid"], stage["install"], stage["produce"]
        )
        columns.retrofit = stage["retrofit"]
        for family in REGISTRY:
            if family.builds_columns:
                family.define(builder, columns)
        operating = _operating_keys(columns)
        split = compact_keys(operating["assign"], scenario.site_regions) if compact else None
        if split is not None:
            columns.compact = True
            kept, pool_serve, pool_draw = pool_keys(split[1], region_names, builder.pools)
            operating = {
                **operating,
                "assign": split[2],
                "busy": split[0],
                "serve": kept,
                "pool_serve": pool_serve,
                "pool_draw": pool_draw,
            }
        for kind, frame in operating.items():
            col = builder.add_vars(kind, scenario.index, frame)
            setattr(columns, kind, frame.assign(col=col))
        if scenario.cluster_mode:
            _add_cluster_columns(builder, columns)
        all_columns.append(columns)
    return all_columns


def _add_cluster_columns(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Add ``cluster[k,s,p]`` (binary) and ``cluster_start[k,s,p]`` columns of one scenario.

    A cluster column exists where the customer has a cluster rule in the period and
    training assign columns at the site; a start column where the cluster column
    exists and the period is not the first of the customer's rule periods.
    """
    scenario = columns.scenario
    rules = scenario.clusters
    training = [i for i, w in enumerate(scenario.workload_names) if w == "training"]
    a = columns.assign
    keys = a.loc[a["w"].isin(training).to_numpy(), ["k", "s", "t"]].drop_duplicates()
    keys = keys.merge(rules[["k", "t", "first"]], on=["k", "t"]).sort_values(["k", "s", "t"])
    keys = keys.reset_index(drop=True)
    cluster = keys[["k", "s", "t"]].astype(np.int64)
    columns.cluster = cluster.assign(col=builder.add_vars("cluster", scenario.index, cluster))
    start = keys.loc[~keys["first"].to_numpy(dtype=bool), ["k", "s", "t"]].astype(np.int64)
    start = start.reset_index(drop=True)
    columns.cluster_start = start.assign(
        col=builder.add_vars("cluster_start", scenario.index, start)
    )


def _empty_constraints() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "row": pd.Series([], dtype=np.int64),
            "family": pd.Series([], dtype=str),
            "scenario": pd.Series([], dtype=np.int64),
            **{c: pd.Series([], dtype=np.int64) for c in ROW_CODE_COLUMNS},
            "sense": pd.Series([], dtype=str),
            "rhs": pd.Series([], dtype=float),
        }
    )


def _variable_table(
    builder: ModelBuilder, scenarios: Sequence[ScenarioData], integer_units: bool
) -> pd.DataFrame:
    """One row per column: kind, scenario, codes, lb, ub, integer, scale (no cost yet)."""
    n = builder.n_cols
    var = pd.concat(builder.var_frames, ignore_index=True) if builder.var_frames else pd.DataFrame()
    var = var.drop(columns="col")
    var["kind"] = pd.Categorical(var["kind"], categories=list(VAR_KINDS))
    scale = np.ones(n)
    is_integer = np.zeros(n, dtype=bool)
    if integer_units:
        install = (var["kind"] == "install").to_numpy()
        chips_per_unit = scenarios[0].chips["chips_per_unit"].reindex(var.loc[install, "c"])
        scale[install] = chips_per_unit.to_numpy(dtype=float)
        is_integer[install] = True
    var["lb"] = 0.0
    var["ub"] = np.where(var["kind"].isin(UNIT_INTERVAL_KINDS).to_numpy(), 1.0, np.inf)
    is_integer |= (var["kind"] == "cluster").to_numpy()
    var["integer"] = is_integer
    var["scale"] = scale
    return var


def _matrix(builder: ModelBuilder, scale: np.ndarray) -> sp.csr_matrix:
    """Sparse rows x columns matrix (coefficients per column unit, duplicates summed)."""
    if builder.terms:
        r = np.concatenate([t[0] for t in builder.terms])
        c = np.concatenate([t[1] for t in builder.terms])
        v = np.concatenate([t[2] for t in builder.terms]) * scale[c]
    else:
        r = c = np.zeros(0, dtype=np.int64)
        v = np.zeros(0)
    mat = sp.csr_matrix((v, (r, c)), shape=(builder.n_rows, builder.n_cols))
    mat.sum_duplicates()
    return mat


def _cost_tables(builder: ModelBuilder, scale: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cost terms per column unit and constant costs (both undiscounted, unweighted)."""
    costs = (
        pd.concat(builder.costs, ignore_index=True)
        if builder.costs
        else pd.DataFrame({"col": [], "scenario": [], "term": [], "t": [], "coef": []})
    )
    costs["coef"] = (
        costs["coef"].to_numpy(dtype=float) * scale[costs["col"].to_numpy(dtype=np.int64)]
    )
    consts = (
        pd.concat(builder.consts, ignore_index=True)
        if builder.consts
        else pd.DataFrame(
            {
                "scenario": pd.Series([], dtype=np.int64),
                "term": pd.Series([], dtype=str),
                "t": pd.Series([], dtype=np.int64),
                "value": pd.Series([], dtype=float),
            }
        )
    )
    return costs, consts


def _assemble(
    builder: ModelBuilder,
    scenarios: Sequence[ScenarioData],
    codes: Mapping[str, tuple[str, ...]],
    probabilities: tuple[float, ...],
    periods: tuple[str, ...],
    integer_units: bool,
) -> PlanningModel:
    var = _variable_table(builder, scenarios, integer_units)
    scale = var["scale"].to_numpy()
    con = pd.concat(builder.row_frames, ignore_index=True) if builder.row_frames else None
    con = (_empty_constraints() if con is None else con).drop(columns="row")
    con["family"] = pd.Categorical(con["family"], categories=list(FAMILIES))
    mat = _matrix(builder, scale)
    costs, consts = _cost_tables(builder, scale)
    weighted = (
        costs["coef"].to_numpy()
        * scenarios[0].discount[costs["t"].to_numpy(dtype=np.int64)]
        * np.asarray(probabilities)[costs["scenario"].to_numpy(dtype=np.int64)]
    )
    cols = costs["col"].to_numpy(dtype=np.int64)
    var["cost"] = np.bincount(cols, weights=weighted, minlength=builder.n_cols)
    return PlanningModel(
        datasets=tuple(scenario.dataset for scenario in scenarios),
        weights=probabilities,
        periods=periods,
        codes={**codes, "q": tuple(builder.pools)},  # region pools, in order of first use
        variables=var,
        constraints=con,
        matrix=mat,
        cost_terms=costs,
        const_terms=consts,
        commitments=tuple(scenario.dataset.table("commitments") for scenario in scenarios),
        integer_units=integer_units,
        unmatched_fixed=pd.DataFrame(columns=["kind", "key", "period", "value"]),
    )


# ------------------------------------------------------------------ first-stage fixing
def fix_first_stage(
    model: PlanningModel,
    plan: Mapping[str, pd.DataFrame] | Any,
    first_stage: str | Sequence[str] = "full",
) -> PlanningModel:
    """Return a copy of ``model`` with first-stage columns fixed to a plan's values.

    Parameters
    ----------
    model : PlanningModel
        Model to fix.
    plan : Mapping[str, DataFrame] or PlanResult
        Result tables (or a result with ``.tables``): ``build_out`` (build_mw,
        liquid_build_mw), ``fleet`` (installed_chips), ``production``
        (produced_chips). Columns absent from the plan are fixed at 0.
    first_stage : str or sequence of str
        Which kinds to fix: ``full`` (default), ``capacity`` (build, liquid,
        retrofit; chips stay free) or a list of kinds (see :data:`FIRST_STAGE_SETS`).

    Returns
    -------
    PlanningModel
        With ``lb == ub`` on every first-stage column; plan values that have no
        column in this model are listed in ``unmatched_fixed`` (a non-zero one
        makes the solve report infeasible).
    """
    kinds = first_stage_kinds(first_stage)
    tables = getattr(plan, "tables", plan)
    var = model.variables.copy()
    codes = model.codes
    fixed = np.zeros(len(var))
    unmatched = []
    specs = (
        ("build", "build_out", "build_mw", ["site"], ["s"]),
        ("liquid", "build_out", "liquid_build_mw", ["site"], ["s"]),
        ("retrofit", "build_out", "retrofit_mw", ["site"], ["s"]),
        ("install", "fleet", "installed_chips", ["chip", "site"], ["c", "s"]),
        ("produce", "production", "produced_chips", ["chip"], ["c"]),
    )
    per = pd.Index(list(model.periods))
    letter_ids = {"site": "s", "chip": "c"}
    for kind, tname, vcol, idcols, ccols in specs:
        if kind not in kinds:
            continue
        t = tables.get(tname) if hasattr(tables, "get") else tables[tname]
        if t is None or len(t) == 0 or vcol not in t:
            continue
        t = t.groupby([*idcols, "period"], as_index=False)[vcol].sum()
        key = pd.DataFrame(
            {cc: _code(t[ic], codes[letter_ids[ic]]) for ic, cc in zip(idcols, ccols, strict=True)}
        )
        key["t"] = per.get_indexer(t["period"].astype(str).to_numpy())
        key["value"] = t[vcol].to_numpy(dtype=float)
        sel = var[var["kind"] == kind]
        cols = sel.reset_index()[["index", *ccols, "t"]]
        m = key.merge(cols, on=[*ccols, "t"], how="left")
        hit = m["index"].notna().to_numpy()
        idx = m.loc[hit, "index"].to_numpy(dtype=np.int64)
        fixed[idx] = m.loc[hit, "value"].to_numpy() / var["scale"].to_numpy()[idx]
        miss = m[~hit & (np.abs(m["value"]) > 1e-9)]
        if len(miss):
            unmatched.append(
                pd.DataFrame(
                    {
                        "kind": kind,
                        "key": t.loc[~hit & (np.abs(m["value"].to_numpy()) > 1e-9), idcols]
                        .astype(str)
                        .agg("/".join, axis=1)
                        .to_numpy(),
                        "period": t.loc[miss.index, "period"].astype(str).to_numpy(),
                        "value": miss["value"].to_numpy(),
                    }
                )
            )
    fs = var["kind"].isin(kinds).to_numpy()
    var.loc[fs, "lb"] = fixed[fs]
    var.loc[fs, "ub"] = fixed[fs]
    var.loc[fs, "integer"] = False
    um = pd.concat(unmatched, ignore_index=True) if unmatched else model.unmatched_fixed
    return replace(model, variables=var, unmatched_fixed=um)
