"""The planning LP, built from the registered components as sparse arrays.

The model is built column-and-row-wise from pandas index tables (one row per column,
one row per constraint) and a sparse matrix, never from per-row Python loops, so a
1.5M-column model builds in seconds. :func:`optimizer.plan.pulp_io.to_pulp` turns the
same arrays into a PuLP problem; the HiGHS path of :mod:`optimizer.plan.highs` passes
them to ``highspy`` in bulk. The index tables map every column and row back to its
domain keys (the letters of :mod:`optimizer.lp.dimensions`).

Model statement
---------------
Minimise the discounted, probability-weighted sum of the cost terms subject to the
constraint families; every decision is >= 0 and only columns that can be non-zero
exist. Each part of the plan states its decisions, families (maths) and cost terms in
the docstring of the module that owns it, and ``docs/families.md`` lists every family
(:func:`optimizer.components.docs.families_table`):

* sites (:mod:`optimizer.components.site`, :mod:`~optimizer.components.construction`):
  ``build[s,p]``, ``liquid[s,p]``, ``retrofit[s,p]``; IT power, liquid, grid, build
  rate, campus maximum, water, lead time, pipeline and retrofit; build and retrofit
  capex;
* supply chain (:mod:`optimizer.components.supply`): resource limits on production;
* fleet (:mod:`optimizer.components.fleet`, :mod:`~optimizer.components.hosting`,
  :mod:`~optimizer.components.chips`): ``install[c,s,p]``, ``produce[c,p]``,
  ``fleet[c,s,p]``; hosting rules, inventory with the delivery lag, sale window,
  fleet definition and assignment; chip capex;
* demand (:mod:`optimizer.components.demand`): ``assign[c,s,k,w,g,p]``,
  ``unmet[k,w,g,p]``, ``breach[j,p]``; demand balance and commitments; the penalties;
* the compact service (:mod:`optimizer.components.service`): ``busy``, ``serve``,
  ``pool_serve``, ``pool_draw``; region and pool balances;
* placement (:mod:`optimizer.components.placement`): exact training clusters (cluster
  mode only); the switch cost;
* power (:mod:`optimizer.components.power`, :mod:`~optimizer.components.power_check`):
  grid upgrades, on-site generation, PPAs, carbon caps; energy and its sources.

Capital is charged as a straight-line rent per period of use inside the horizon, so
the periods after it are neither charged nor credited (no salvage value, no terminal
demand: plans near the end are myopic by design). Initial fleet and initial capacity
are sunk (no capex); their energy counts.

Formulations (``formulation="compact"`` by default, ``"reference"``)
---------------------------------------------------------------------
The *reference* formulation has ``assign[c,s,k,w,g,p]`` per chip, site, customer,
workload, demand region group and period. A customer reaches a site only through the
site's region, so per (chip, region, workload, period) those columns are a product of
sites and services; the *compact* formulation replaces each such product by its
margins where that saves columns (the service component). It is exact: every
reference plan maps to a compact plan of the same cost and back; the report's
per-site, per-customer ``assignment`` is the compact plan split back
(:func:`optimizer.components.region.split_region_service`). Cluster mode
(``clusters`` / ``integer_units``) always builds the reference. Only the chosen
optimal vertex may differ between the formulations (the objective does not).

Two-stage stochastic use
------------------------
:func:`build_stochastic_model` builds one problem over several scenario datasets
(same horizon): the first-stage columns (build, liquid, install, produce, retrofit,
or the facility kinds only) are shared; every other column is copied per scenario;
every scenario contributes all its rows and its whole cost, weighted by its
probability. A deterministic model is the one-scenario case with weight 1.
First-stage decisions can be fixed to a plan's values with
:func:`optimizer.plan.fixing.fix_first_stage`.

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

from capacity.schema import SPECS
from optimizer.components import DEFINITION_FAMILIES as _DEFINITION_FAMILIES
from optimizer.components import FAMILIES as _FAMILIES
from optimizer.components import REGISTRY
from optimizer.components.registry import SequenceView, active
from optimizer.components.scenario import ScenarioColumns, ScenarioData
from optimizer.lp.builder import ModelBuilder
from optimizer.lp.dimensions import ROW_CODE_COLUMNS
from optimizer.lp.frames import column_values
from optimizer.plan.coding import checked_coded, dataset_codes, discount_factors, scenario_data
from optimizer.plan.columns import FIRST_STAGE, add_columns, first_stage_keys, first_stage_kinds

#: Formulations of the operating columns (module docstring, "Formulations").
FORMULATIONS = ("compact", "reference")

#: Objective modes: minimum cost (penalties) or maximum margin (revenue minus cost).
OBJECTIVES = ("cost", "margin")

#: Why a compact request keeps the reference columns in cluster mode.
CLUSTER_REFERENCE_NOTE = (
    "reference formulation: exact training clusters (--clusters / --integer-units) "
    "need per-site, per-customer assign columns"
)

#: Decision column kinds of the active components, in registration order.
VAR_KINDS: SequenceView[str] = SequenceView(lambda r: r.kinds)

#: Column kinds bounded to [0, 1]; ``cluster`` is binary in cluster mode.
UNIT_INTERVAL_KINDS = ("cluster", "cluster_start")

#: Constraint families in the order of the registry, with the unit of their rhs.
FAMILIES = _FAMILIES

#: Definition rows (equalities of auxiliary columns); not limits, no shadow price shown.
DEFINITION_FAMILIES = _DEFINITION_FAMILIES

#: Input tables a linear build (:func:`build_model` without integer units, either
#: formulation) never reads: the calibration record and the provenance table.
LP_UNREAD_TABLES: tuple[str, ...] = ("public_record", "sources")

#: Input columns a linear build never reads, as ``(table, column)``: display text, a
#: resource's unit label, customer prices (read by a margin-mode build only: see
#: :data:`MARGIN_READ_COLUMNS`), the chips'
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
        ("equipment_order_books", "unit"),
    }
    | {(t, c.name) for t in LP_UNREAD_TABLES for c in SPECS[t].columns}
    # contract terms shape the margin objective only (the cost mode builds no contract rows)
    | {("contract_terms", c.name) for c in SPECS["contract_terms"].columns}
    # so does migration (the cost mode keeps the eligibility derate)
    | {("migration", c.name) for c in SPECS["migration"].columns}
)

#: Columns of :data:`LP_UNREAD_COLUMNS` a margin-mode build reads (the revenue term): a
#: margin-mode batch does not keep its base model across a change to them.
MARGIN_READ_COLUMNS: frozenset[tuple[str, str]] = frozenset(
    {
        ("customers", "price_training_usd_per_h100e_period"),
        ("customers", "price_inference_usd_per_h100e_period"),
    }
    | {("contract_terms", c.name) for c in SPECS["contract_terms"].columns}
    | {("migration", c.name) for c in SPECS["migration"].columns}
)

#: Objective terms of the active components (the ``term`` of the cost breakdown).
COST_TERMS: SequenceView[str] = SequenceView(lambda r: tuple(t.name for t in r.costs))


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
    objective : {"cost", "margin"}
        The objective mode the cost terms were built for (``margin``: the objective
        is cost - revenue, see :mod:`optimizer.components.revenue`).
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
    objective: str = "cost"

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
        df = discount_factors(self.datasets[0])
        ct = self.const_terms
        w = np.asarray(self.weights)[column_values(ct, "scenario")]
        return float((column_values(ct, "value") * df[column_values(ct, "t")] * w).sum())

    def row_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Row bounds (``+-inf`` open); a finite ``upper`` ranges a ``>=`` row (alternatives)."""
        rhs = column_values(self.constraints, "rhs", dtype=float)
        sense = column_values(self.constraints, "sense")
        lo = np.where(sense == "<=", -np.inf, rhs)
        hi = np.where(sense == ">=", np.inf, rhs)
        if "upper" in self.constraints:
            up = column_values(self.constraints, "upper", dtype=float)
            hi = np.where((sense == ">=") & np.isfinite(up), up, hi)
        return lo, hi


# ------------------------------------------------------------------------- objective
def define_objective(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Add the scenario's cost terms, component by component (:attr:`Component.costs`)."""
    for component in active().components:
        for term in component.costs:
            if term.define is not None:
                term.define(builder, columns)


# ------------------------------------------------------------------------ entry points
def build_model(
    ds: DatasetLike,
    *,
    integer_units: bool = False,
    clusters: bool = False,
    formulation: str = "compact",
    objective: str = "cost",
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
    objective : {"cost", "margin"}
        Minimum cost (default) or maximum margin (:data:`OBJECTIVES`).

    Returns
    -------
    PlanningModel
        Index tables, sparse matrix (rows x columns) and objective; see the module
        docstring for the maths.
    """
    return build_stochastic_model(
        [ds],
        [1.0],
        integer_units=integer_units,
        clusters=clusters,
        formulation=formulation,
        objective=objective,
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

    ``first_stage`` names the shared decisions
    (see :data:`~optimizer.plan.columns.FIRST_STAGE_SETS`).
    """
    kinds = first_stage_kinds(first_stage)
    codes = dataset_codes(datasets)
    scenarios = [scenario_data(i, ds, codes) for i, ds in enumerate(datasets)]
    return FirstStageUniverse(codes, first_stage_keys(scenarios, kinds), kinds)


def build_stochastic_model(
    datasets: Sequence[DatasetLike],
    weights: Sequence[float],
    *,
    integer_units: bool = False,
    clusters: bool = False,
    universe: FirstStageUniverse | None = None,
    formulation: str = "compact",
    first_stage: str | Sequence[str] = "full",
    objective: str = "cost",
    coded: Sequence[ScenarioData] | None = None,
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
        :data:`~optimizer.plan.columns.FIRST_STAGE_SETS`) or a list of first-stage kinds.
    objective : {"cost", "margin"}
        Minimum expected cost (default) or maximum expected margin.
    coded : sequence of ScenarioData, optional
        The datasets already coded (:func:`optimizer.plan.coding.scenario_data` of
        dataset ``i`` at position ``i``, with ``universe``'s codes, which are not
        checked, and without cluster mode), made once for the first-stage keys and
        reused here (the decomposed hedge's workers,
        :mod:`optimizer.analysis.decompose_blocks`).

    Returns
    -------
    PlanningModel

    Raises
    ------
    ValueError
        When the lists differ in length, the weights are not a distribution, the
        horizons differ, the formulation or the objective is unknown, or ``coded``
        does not match ``datasets`` (its length, a dataset, a position, cluster mode).
    """
    if formulation not in FORMULATIONS:
        raise ValueError(f"formulation must be one of {FORMULATIONS}, got {formulation!r}")
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    if len(datasets) == 0 or len(datasets) != len(weights):
        raise ValueError("need one weight per dataset and at least one dataset")
    probabilities = tuple(float(w) for w in weights)
    if min(probabilities) < 0 or abs(sum(probabilities) - 1.0) > 1e-9:
        raise ValueError(f"weights must be >= 0 and sum to 1, got {probabilities}")
    periods = tuple(datasets[0].periods)
    for ds in datasets[1:]:
        if tuple(ds.periods) != periods:
            raise ValueError("all scenario datasets must share the same horizon periods")
    codes = dataset_codes(datasets) if universe is None else universe.codes
    exact = clusters or integer_units
    scenarios = (
        [scenario_data(i, ds, codes, exact) for i, ds in enumerate(datasets)]
        if coded is None
        else checked_coded(coded, datasets, exact)
    )
    builder = ModelBuilder()
    builder.objective = objective
    kinds = first_stage_kinds(first_stage) if universe is None else universe.first_stage
    keys: Mapping[str, pd.DataFrame] = (
        first_stage_keys(scenarios, kinds) if universe is None else universe.keys
    )
    compact = formulation == "compact" and not exact
    all_columns = add_columns(builder, scenarios, keys, compact, kinds, codes["e"])
    for columns in all_columns:
        for family in REGISTRY:
            if not family.builds_columns:
                family.define(builder, columns)
        define_objective(builder, columns)
    model = _assemble(builder, scenarios, codes, probabilities, periods, integer_units)
    built, note = _formulation_built(formulation, exact, all_columns)
    return replace(
        model, clusters=exact, formulation=built, formulation_note=note, objective=objective
    )


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
        column_values(costs, "coef", dtype=float)
        * scale[column_values(costs, "col", dtype=np.int64)]
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
    scale = column_values(var, "scale")
    con = pd.concat(builder.row_frames, ignore_index=True) if builder.row_frames else None
    con = (_empty_constraints() if con is None else con).drop(columns="row")
    con["family"] = pd.Categorical(con["family"], categories=list(FAMILIES))
    mat = _matrix(builder, scale)
    costs, consts = _cost_tables(builder, scale)
    weighted = (
        column_values(costs, "coef")
        * scenarios[0].discount[column_values(costs, "t", dtype=np.int64)]
        * np.asarray(probabilities)[column_values(costs, "scenario", dtype=np.int64)]
    )
    cols = column_values(costs, "col", dtype=np.int64)
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
