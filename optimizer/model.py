"""The planning LP: index tables, constraint families and objective, as sparse arrays.

The model is built column-and-row-wise from pandas index tables (one row per
variable, one row per constraint) and a sparse matrix, never from per-row Python
loops, so a 1.5M-variable model builds in seconds. :func:`to_pulp` turns the same
arrays into a PuLP ``LpProblem`` (``x<col>`` variables, ``c<row>`` constraints, built
with ``LpAffineExpression``); the HiGHS path of :mod:`optimizer.solve` passes the
arrays to ``highspy`` in bulk. Names are integers because PuLP rewrites names and
data IDs may hold spaces, slashes or non-ASCII letters; the index tables map every
column and row back to its domain keys.

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
import pulp
import scipy.sparse as sp

from capacity.schema import period_index

#: Assumed facility life in quarters (15 years) for annualising build capex. Data-center
#: shells, power and cooling plant are commonly depreciated over 15-20 years (e.g.
#: Equinix 10-40-year building lives, hyperscaler 15-year facility assumptions);
#: 15 years is an assumption at the conservative end.
FACILITY_LIFE_PERIODS = 60

#: Tie-break cost per chip produced (USD), booked as chip capex; negligible against
#: chip prices (1e4-1e5 USD) and only stops idle production.
PRODUCE_TIE_BREAK_USD_PER_CHIP = 1e-3

FIRST_STAGE = ("build", "liquid", "install", "produce")
VAR_KINDS = ("build", "liquid", "install", "produce", "assign", "unmet", "breach", "fleet")

#: Constraint families in the order they are built, with the unit of their rhs.
FAMILIES: dict[str, str] = {
    "site_it_power": "MW",
    "site_liquid": "MW",
    "site_liquid_share": "MW",
    "site_grid": "MW",
    "site_build_rate": "MW",
    "site_max": "MW",
    "site_water": "m3",
    "supply_resource": "resource unit",
    "chip_inventory": "chips",
    "chip_window": "chips",
    "fleet_assignment": "chips",
    "demand_balance": "H100e",
    "commitment": "MW",
    "fleet_definition": "chips",
}

#: Definition rows (equalities of auxiliary columns); not limits, no shadow price shown.
DEFINITION_FAMILIES = ("fleet_definition",)

COST_TERMS = ("chip_capex", "build_capex", "energy", "unmet_penalty", "breach_penalty")

_CODE_COLS = ("s", "c", "k", "w", "r", "j", "t")


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


def _pidx(labels: pd.Series, p0: int) -> np.ndarray:
    """Period labels -> horizon index (may be negative or >= T)."""
    uniq = pd.unique(labels.astype(str))
    m = {u: period_index(u) - p0 for u in uniq}
    return labels.astype(str).map(m).to_numpy(dtype=np.int64)


def _expand(df: pd.DataFrame, start: np.ndarray, count: np.ndarray, col: str) -> pd.DataFrame:
    """Repeat each row ``count`` times and add ``col`` = start, start+1, ..."""
    count = np.maximum(count, 0).astype(np.int64)
    rep = np.repeat(np.arange(len(df)), count)
    out = df.iloc[rep].reset_index(drop=True)
    firsts = np.repeat(np.cumsum(count) - count, count)
    out[col] = np.repeat(start, count) + (np.arange(len(rep)) - firsts)
    return out


def _frame(**cols: Any) -> pd.DataFrame:
    return pd.DataFrame(cols)


@dataclass
class _Scen:
    """Coded per-scenario data."""

    i: int
    ds: Any
    T: int
    hours: np.ndarray
    disc: np.ndarray
    sites: pd.DataFrame  # indexed by s code
    chips: pd.DataFrame  # indexed by c code
    customers: pd.DataFrame  # indexed by k code
    pf: np.ndarray  # power factor by w code (nan if absent)
    grid: pd.DataFrame  # s, t, grid_mw
    water: pd.DataFrame  # s, t, water_permit_m3
    supply: pd.DataFrame  # r, t, capacity
    bom: pd.DataFrame  # c, r, per_chip
    init: pd.DataFrame  # c, s, t, chips (alive)
    demand: pd.DataFrame  # k, w, t, demand_h100e (>0)
    elig: pd.DataFrame  # k, c, s, derate
    com: pd.DataFrame  # j, k, f, t0, t1, min_it_mw, penalty
    com_periods: pd.DataFrame  # j, k, f, t, min_it_mw, penalty
    wnames: tuple[str, ...] = ()


def _union_ids(datasets: Sequence[Any], table: str, col: str) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for ds in datasets:
        for v in ds.table(table)[col].astype(str):
            seen.setdefault(v, None)
    return tuple(seen)


def _codes(datasets: Sequence[Any]) -> dict[str, tuple[str, ...]]:
    fams: dict[str, None] = {}
    for ds in datasets:
        for v in ds.table("chips")["family"].astype(str):
            fams.setdefault(v, None)
    wl: dict[str, None] = {}
    for ds in datasets:
        for t in ("workloads", "demand"):
            for v in ds.table(t)["workload"].astype(str):
                wl.setdefault(v, None)
    res: dict[str, None] = {}
    for ds in datasets:
        for t in ("supply_resources", "chip_bill_of_materials"):
            for v in ds.table(t)["resource"].astype(str):
                res.setdefault(v, None)
    return {
        "s": _union_ids(datasets, "sites", "site"),
        "c": _union_ids(datasets, "chips", "chip"),
        "k": _union_ids(datasets, "customers", "customer"),
        "w": tuple(wl),
        "r": tuple(res),
        "f": tuple(fams),
    }


def _prep(i: int, ds: Any, codes: Mapping[str, tuple[str, ...]]) -> _Scen:
    periods = ds.periods
    T = len(periods)
    p0 = period_index(periods[0])
    sites = ds.table("sites").copy()
    sites.index = _code(sites["site"], codes["s"])
    chips = ds.table("chips").copy()
    chips.index = _code(chips["chip"], codes["c"])
    chips["f"] = _code(chips["family"], codes["f"])
    chips["t_first"] = _pidx(chips["first_period"], p0)
    chips["t_last"] = _pidx(chips["last_period"], p0)
    customers = ds.table("customers").copy()
    customers.index = _code(customers["customer"], codes["k"])
    wl = ds.table("workloads")
    pf = np.full(len(codes["w"]), np.nan)
    pf[_code(wl["workload"], codes["w"])] = wl["power_factor"].to_numpy(dtype=float)

    g = ds.table("site_grid")
    grid = _frame(s=_code(g["site"], codes["s"]), t=_pidx(g["period"], p0), grid_mw=g["grid_mw"])
    wt = ds.table("site_water")
    water = _frame(
        s=_code(wt["site"], codes["s"]), t=_pidx(wt["period"], p0), permit=wt["water_permit_m3"]
    )
    su = ds.table("supply_resources")
    supply = _frame(
        r=_code(su["resource"], codes["r"]), t=_pidx(su["period"], p0), capacity=su["capacity"]
    )
    b = ds.table("chip_bill_of_materials")
    bom = _frame(
        c=_code(b["chip"], codes["c"]), r=_code(b["resource"], codes["r"]), per_chip=b["per_chip"]
    )
    bom = bom[bom["per_chip"] > 0]

    f0 = ds.table("initial_fleet")
    init = _frame(
        c=_code(f0["chip"], codes["c"]),
        s=_code(f0["site"], codes["s"]),
        t_inst=_pidx(f0["install_period"], p0),
        chips=f0["chips"].to_numpy(dtype=float),
    )
    init = init[init["chips"] > 0]
    if len(init):
        life = chips["lifetime_periods"].reindex(init["c"]).to_numpy(dtype=np.int64)
        start = np.maximum(init["t_inst"].to_numpy(), 0)
        end = np.minimum(init["t_inst"].to_numpy() + life, T)  # exclusive
        init = _expand(init[["c", "s", "chips"]], start, end - start, "t")
        init = init.groupby(["c", "s", "t"], as_index=False)["chips"].sum()
    else:
        init = _frame(c=[], s=[], t=[], chips=[]).astype({"c": int, "s": int, "t": int})

    d = ds.table("demand")
    demand = _frame(
        k=_code(d["customer"], codes["k"]),
        w=_code(d["workload"], codes["w"]),
        t=_pidx(d["period"], p0),
        demand_h100e=d["demand_h100e"].to_numpy(dtype=float),
    )
    demand = demand[(demand["demand_h100e"] > 0) & (demand["t"] >= 0) & (demand["t"] < T)]
    demand = demand.reset_index(drop=True)

    # eligibility expanded to allowed sites
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
    site_reg = _frame(s=sites.index.to_numpy(), region=sites["region"].astype(str).to_numpy())
    any_reg = el[el["region"] == ""][["k", "c", "derate"]].drop_duplicates()
    any_reg = any_reg.merge(site_reg[["s"]], how="cross")
    some = el[el["region"] != ""].merge(site_reg, on="region")[["k", "c", "derate", "s"]]
    elig = pd.concat([any_reg, some], ignore_index=True).drop_duplicates(["k", "c", "s"])
    elig = elig[["k", "c", "s", "derate"]].reset_index(drop=True)

    cm = ds.table("commitments")
    com = _frame(
        j=np.arange(len(cm), dtype=np.int64),
        k=_code(cm["customer"], codes["k"]),
        f=_code(cm["family"], codes["f"]),
        t0=_pidx(cm["from_period"], p0),
        t1=_pidx(cm["to_period"], p0),
        min_it_mw=cm["min_it_mw"].to_numpy(dtype=float),
        penalty=cm["breach_penalty_usd_per_mw"].to_numpy(dtype=float),
    )
    act = com[com["min_it_mw"] > 0]
    start = np.maximum(act["t0"].to_numpy(), 0)
    end = np.minimum(act["t1"].to_numpy(), T - 1) + 1
    com_periods = _expand(act, start, end - start, "t")
    return _Scen(
        i,
        ds,
        T,
        _hours(ds),
        _discount(ds),
        sites,
        chips,
        customers,
        pf,
        grid,
        water,
        supply,
        bom,
        init,
        demand,
        elig,
        com,
        com_periods,
        tuple(codes["w"]),
    )


# ----------------------------------------------------------------------------- builder
class _Builder:
    """Accumulates columns, rows, matrix terms and cost terms."""

    def __init__(self) -> None:
        self.var_frames: list[pd.DataFrame] = []
        self.n_cols = 0
        self.row_frames: list[pd.DataFrame] = []
        self.n_rows = 0
        self.terms: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.costs: list[pd.DataFrame] = []
        self.consts: list[pd.DataFrame] = []

    def add_vars(self, kind: str, scenario: int, keys: pd.DataFrame) -> np.ndarray:
        """Add one column per row of ``keys`` (code columns); return column ids."""
        n = len(keys)
        cols = np.arange(self.n_cols, self.n_cols + n, dtype=np.int64)
        f = pd.DataFrame({"col": cols})
        f["kind"] = kind
        f["scenario"] = scenario
        for cname in ("s", "c", "k", "w", "j", "t"):
            f[cname] = keys[cname].to_numpy(dtype=np.int64) if cname in keys else -1
        self.var_frames.append(f)
        self.n_cols += n
        return cols

    def add_rows(
        self, family: str, scenario: int, keys: pd.DataFrame, sense: str, rhs: np.ndarray
    ) -> np.ndarray:
        """Add one row per row of ``keys``; return row ids."""
        n = len(keys)
        rows = np.arange(self.n_rows, self.n_rows + n, dtype=np.int64)
        f = pd.DataFrame({"row": rows})
        f["family"] = family
        f["scenario"] = scenario
        for cname in _CODE_COLS:
            f[cname] = keys[cname].to_numpy(dtype=np.int64) if cname in keys else -1
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
class _Ctx:
    """Columns of one scenario, as code frames with a ``col`` column."""

    sc: _Scen
    build: pd.DataFrame
    liquid: pd.DataFrame
    install: pd.DataFrame
    produce: pd.DataFrame
    fleet_terms: pd.DataFrame = field(default_factory=pd.DataFrame)  # c, s, t, col
    fleet_keys: pd.DataFrame = field(default_factory=pd.DataFrame)  # c, s, t, init
    assign: pd.DataFrame = field(default_factory=pd.DataFrame)
    unmet: pd.DataFrame = field(default_factory=pd.DataFrame)
    breach: pd.DataFrame = field(default_factory=pd.DataFrame)


def _chip_attr(sc: _Scen, c: np.ndarray, col: str) -> np.ndarray:
    return sc.chips[col].reindex(c).to_numpy()


def _site_attr(sc: _Scen, s: np.ndarray, col: str) -> np.ndarray:
    return sc.sites[col].reindex(s).to_numpy()


def _cooling_split(sc: _Scen, c: np.ndarray, s: np.ndarray, air: str, liq: str) -> np.ndarray:
    """Per (chip, site) PUE or WUE: liquid-only chips at the liquid value, else air."""
    is_liq = _chip_attr(sc, c, "cooling") == "liquid"
    return np.where(is_liq, _site_attr(sc, s, liq), _site_attr(sc, s, air)).astype(float)


def _relevant_customers(sc: _Scen) -> np.ndarray:
    ks = set(sc.demand["k"].tolist()) | set(sc.com_periods["k"].tolist())
    return np.array(sorted(ks), dtype=np.int64)


def _can_build(sc: _Scen) -> pd.Index:
    st = sc.sites
    ok = (st["max_build_mw_per_period"] > 0) & (st["max_it_mw"] > st["initial_it_mw"] + 1e-12)
    return st.index[ok.to_numpy()]


def _usable_pairs(sc: _Scen) -> pd.DataFrame:
    """(c, s) where some relevant eligible customer may run the chip, cooling allowed."""
    el = sc.elig[sc.elig["k"].isin(_relevant_customers(sc))]
    pairs = el[["c", "s"]].drop_duplicates()
    liq_only = _chip_attr(sc, pairs["c"].to_numpy(), "cooling") == "liquid"
    st = sc.sites
    buildable = st.index.isin(_can_build(sc))
    liq_possible = (st["initial_liquid_mw"] > 0).to_numpy() | (
        buildable & (st["liquid_share_max"] > 0).to_numpy()
    )
    liq_ok = pd.Series(liq_possible, index=st.index).reindex(pairs["s"]).fillna(False)
    keep = ~liq_only | liq_ok.to_numpy(dtype=bool)
    return pairs[keep].reset_index(drop=True)


def _first_stage_keys(scens: Sequence[_Scen]) -> dict[str, pd.DataFrame]:
    """Union over scenarios of the first-stage variable keys."""
    T = scens[0].T
    tt = pd.DataFrame({"t": np.arange(T, dtype=np.int64)})
    b, lq, pr, ins = [], [], [], []
    for sc in scens:
        sb = _can_build(sc)
        bk = pd.DataFrame({"s": np.asarray(sb, dtype=np.int64)}).merge(tt, how="cross")
        b.append(bk)
        ls = sc.sites.loc[sb]
        ls = ls.index[(ls["liquid_share_max"] > 0).to_numpy()]
        lq.append(pd.DataFrame({"s": np.asarray(ls, dtype=np.int64)}).merge(tt, how="cross"))
        pairs = _usable_pairs(sc)
        ch = sc.chips.loc[sc.chips.index.isin(pairs["c"].unique())]
        t0 = np.maximum(ch["t_first"].to_numpy(), 0)
        t1 = np.minimum(ch["t_last"].to_numpy(), T - 1)
        cf = pd.DataFrame({"c": ch.index.to_numpy(dtype=np.int64), "t0": t0})
        prod = _expand(cf[["c"]], t0, t1 - t0 + 1, "t")
        pr.append(prod)
        first = prod.groupby("c", as_index=False)["t"].min().rename(columns={"t": "t0"})
        pp = pairs.merge(first, on="c")
        ins.append(_expand(pp[["c", "s"]], pp["t0"].to_numpy(), T - pp["t0"].to_numpy(), "t"))

    def u(frames: list[pd.DataFrame], cols: list[str]) -> pd.DataFrame:
        f = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)
        f = f[cols].astype(np.int64).drop_duplicates().sort_values(cols)
        return f.reset_index(drop=True)

    return {
        "build": u(b, ["s", "t"]),
        "liquid": u(lq, ["s", "t"]),
        "produce": u(pr, ["c", "t"]),
        "install": u(ins, ["c", "s", "t"]),
    }


def _cumulative(var: pd.DataFrame, keys: list[str], T: int) -> pd.DataFrame:
    """Pairs (key..., t, col) where col is a variable of period t' <= t."""
    v = var.rename(columns={"t": "t_var"})
    return _expand(v, v["t_var"].to_numpy(), T - v["t_var"].to_numpy(), "t")


# ---------------------------------------------------------------- operating variables
def _fleet(b: _Builder, ctx: _Ctx) -> None:
    """Columns ``fleet[c,s,p]`` = installs still alive, defined recursively.

    fleet_definition rows: new[c,s,p] - new[c,s,p-1] - install[c,s,p]
    + install[c,s,p-lifetime] == 0. The recursion keeps each install in two rows
    instead of ``lifetime`` rows per family, which keeps the matrix sparse (the
    normal equations of a lifetime-window sum fill in badly).
    """
    sc = ctx.sc
    ins = ctx.install
    cols = ["c", "s", "t", "col"]
    if len(ins):
        T = sc.T
        first = ins.groupby(["c", "s"], as_index=False)["t"].min()
        nk = _expand(first[["c", "s"]], first["t"].to_numpy(), T - first["t"].to_numpy(), "t")
        nk = nk.astype(np.int64)
        nk["col"] = b.add_vars("fleet", sc.i, nk)
        rows = b.add_rows("fleet_definition", sc.i, nk, "==", np.zeros(len(nk)))
        b.add_terms(rows, nk["col"], 1.0)
        rmap = nk[["c", "s", "t"]].assign(row=rows)
        prev = nk.assign(t=nk["t"] + 1).merge(rmap, on=["c", "s", "t"])
        b.add_terms(prev["row"], prev["col"], -1.0)
        m = ins.merge(rmap, on=["c", "s", "t"])
        b.add_terms(m["row"], m["col"], -1.0)
        life = _chip_attr(sc, ins["c"].to_numpy(), "lifetime_periods").astype(np.int64)
        m = ins.assign(t=ins["t"].to_numpy() + life).merge(rmap, on=["c", "s", "t"])
        b.add_terms(m["row"], m["col"], 1.0)
        ft = nk[cols]
    else:
        ft = pd.DataFrame({k: pd.Series([], dtype=np.int64) for k in cols})
    ctx.fleet_terms = ft
    keys = pd.concat([ft[["c", "s", "t"]], sc.init[["c", "s", "t"]]]).drop_duplicates()
    keys = keys.astype(np.int64).merge(sc.init, on=["c", "s", "t"], how="left")
    keys["init"] = keys["chips"].fillna(0.0)
    ctx.fleet_keys = keys.drop(columns="chips").sort_values(["c", "s", "t"]).reset_index(drop=True)


def _operating_keys(ctx: _Ctx) -> dict[str, pd.DataFrame]:
    sc = ctx.sc
    el = sc.elig
    fk = ctx.fleet_keys[["c", "s", "t"]]
    # demand-driven assignment
    a = el.merge(sc.demand[["k", "w", "t"]], on="k")
    # commitment-driven assignment (customer/family/period with no demand there)
    if len(sc.com_periods):
        cp = sc.com_periods[["k", "f", "t"]].drop_duplicates()
        have = sc.demand[["k", "t"]].drop_duplicates()
        cp = cp.merge(have, on=["k", "t"], how="left", indicator=True)
        cp = cp[cp["_merge"] == "left_only"][["k", "f", "t"]]
        # use the workload with the lowest power factor when nothing is demanded
        wmin = int(np.nanargmin(np.where(np.isnan(sc.pf), np.inf, sc.pf)))
        elf = el.assign(f=_chip_attr(sc, el["c"].to_numpy(), "f").astype(np.int64))
        b = elf.merge(cp, on=["k", "f"]).drop(columns="f")
        b["w"] = wmin
        a = pd.concat([a, b], ignore_index=True)
    a = a.merge(fk, on=["c", "s", "t"])
    a = a[["c", "s", "k", "w", "t", "derate"]].drop_duplicates(["c", "s", "k", "w", "t"])
    a = a.sort_values(["c", "s", "k", "w", "t"]).reset_index(drop=True)
    unmet = sc.demand[["k", "w", "t", "demand_h100e"]].reset_index(drop=True)
    breach = sc.com_periods[["j", "k", "f", "t", "min_it_mw", "penalty"]].reset_index(drop=True)
    return {"assign": a, "unmet": unmet, "breach": breach}


# ------------------------------------------------------------------ constraint families
def define_site_it_power(b: _Builder, ctx: _Ctx) -> None:
    """Site IT power: sum_c fleet[c,s,p] * it_kw_c / 1000 <= initial_it_mw_s + cum build[s,p]."""
    sc, fk = ctx.sc, ctx.fleet_keys
    if fk.empty:
        return
    kw = _chip_attr(sc, fk["c"].to_numpy(), "it_kw_per_chip") / 1000.0
    fk = fk.assign(mw0=fk["init"] * kw)
    keys = fk.groupby(["s", "t"], as_index=False)["mw0"].sum()
    rhs = _site_attr(sc, keys["s"].to_numpy(), "initial_it_mw") - keys["mw0"].to_numpy()
    rows = b.add_rows("site_it_power", sc.i, keys, "<=", rhs)
    rmap = keys[["s", "t"]].assign(row=rows)
    ft = ctx.fleet_terms.merge(rmap, on=["s", "t"])
    b.add_terms(ft["row"], ft["col"], _chip_attr(sc, ft["c"].to_numpy(), "it_kw_per_chip") / 1e3)
    cb = _cumulative(ctx.build, ["s"], sc.T).merge(rmap, on=["s", "t"])
    b.add_terms(cb["row"], cb["col"], -1.0)


def define_site_liquid(b: _Builder, ctx: _Ctx) -> None:
    """Liquid: sum_{c liquid} fleet*kw/1e3 <= initial_liquid + cum liquid; liquid <= share*build."""
    sc = ctx.sc
    if len(ctx.liquid):
        lq = ctx.liquid.merge(ctx.build[["s", "t", "col"]], on=["s", "t"], suffixes=("", "_b"))
        rows = b.add_rows("site_liquid_share", sc.i, lq, "<=", np.zeros(len(lq)))
        b.add_terms(rows, lq["col"], 1.0)
        b.add_terms(rows, lq["col_b"], -_site_attr(sc, lq["s"].to_numpy(), "liquid_share_max"))
    fk = ctx.fleet_keys
    liq = _chip_attr(sc, fk["c"].to_numpy(), "cooling") == "liquid"
    fk = fk[liq]
    if fk.empty:
        return
    kw = _chip_attr(sc, fk["c"].to_numpy(), "it_kw_per_chip") / 1000.0
    keys = fk.assign(mw0=fk["init"] * kw).groupby(["s", "t"], as_index=False)["mw0"].sum()
    rhs = _site_attr(sc, keys["s"].to_numpy(), "initial_liquid_mw") - keys["mw0"].to_numpy()
    rows = b.add_rows("site_liquid", sc.i, keys, "<=", rhs)
    rmap = keys[["s", "t"]].assign(row=rows)
    ft = ctx.fleet_terms
    ft = ft[_chip_attr(sc, ft["c"].to_numpy(), "cooling") == "liquid"].merge(rmap, on=["s", "t"])
    b.add_terms(ft["row"], ft["col"], _chip_attr(sc, ft["c"].to_numpy(), "it_kw_per_chip") / 1e3)
    cl = _cumulative(ctx.liquid, ["s"], sc.T).merge(rmap, on=["s", "t"])
    b.add_terms(cl["row"], cl["col"], -1.0)


def define_site_grid(b: _Builder, ctx: _Ctx) -> None:
    """Site grid: sum_c fleet*it_kw/1000 * PUE(c,s) <= grid_mw[s,p] (liquid chips: pue_liquid)."""
    sc, fk = ctx.sc, ctx.fleet_keys
    if fk.empty:
        return
    c, s = fk["c"].to_numpy(), fk["s"].to_numpy()
    fac = (
        _chip_attr(sc, c, "it_kw_per_chip")
        / 1e3
        * _cooling_split(sc, c, s, "pue_air", "pue_liquid")
    )
    keys = fk.assign(mw0=fk["init"] * fac).groupby(["s", "t"], as_index=False)["mw0"].sum()
    keys = keys.merge(sc.grid, on=["s", "t"], how="left")
    rhs = keys["grid_mw"].fillna(np.inf).to_numpy() - keys["mw0"].to_numpy()
    keep = np.isfinite(rhs)
    keys, rhs = keys[keep], rhs[keep]
    rows = b.add_rows("site_grid", sc.i, keys, "<=", rhs)
    rmap = keys[["s", "t"]].assign(row=rows)
    ft = ctx.fleet_terms.merge(rmap, on=["s", "t"])
    c, s = ft["c"].to_numpy(), ft["s"].to_numpy()
    b.add_terms(
        ft["row"],
        ft["col"],
        _chip_attr(sc, c, "it_kw_per_chip")
        / 1e3
        * _cooling_split(sc, c, s, "pue_air", "pue_liquid"),
    )


def define_site_build(b: _Builder, ctx: _Ctx) -> None:
    """Build: build[s,p] <= max_build_mw_per_period; cum build[s,p] <= max_it_mw - initial_it_mw."""
    sc, bv = ctx.sc, ctx.build
    if bv.empty:
        return
    s = bv["s"].to_numpy()
    rows = b.add_rows(
        "site_build_rate", sc.i, bv, "<=", _site_attr(sc, s, "max_build_mw_per_period")
    )
    b.add_terms(rows, bv["col"], 1.0)
    room = _site_attr(sc, s, "max_it_mw") - _site_attr(sc, s, "initial_it_mw")
    rows = b.add_rows("site_max", sc.i, bv[["s", "t"]], "<=", room)
    rmap = bv[["s", "t"]].assign(row=rows)
    cb = _cumulative(bv, ["s"], sc.T).merge(rmap, on=["s", "t"])
    b.add_terms(cb["row"], cb["col"], 1.0)


def _energy_coefs(ctx: _Ctx) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Compute IT MWh per unit: fleet columns (idle), assign columns (extra), initial fleet.

    Returns frames with ``s, t, col``/``value`` and ``it_mwh`` per unit, plus ``c``.
    """
    sc = ctx.sc
    ft = ctx.fleet_terms
    c = ft["c"].to_numpy()
    idle = _chip_attr(sc, c, "idle_power_factor").astype(float)
    kw = _chip_attr(sc, c, "it_kw_per_chip").astype(float)
    f_it = ft[["c", "s", "t", "col"]].assign(it=sc.hours[ft["t"].to_numpy()] / 1e3 * kw * idle)
    a = ctx.assign
    c = a["c"].to_numpy()
    idle = _chip_attr(sc, c, "idle_power_factor").astype(float)
    kw = _chip_attr(sc, c, "it_kw_per_chip").astype(float)
    pf = sc.pf[a["w"].to_numpy()]
    a_it = a[["c", "s", "t", "col"]].assign(it=sc.hours[a["t"].to_numpy()] / 1e3 * kw * (pf - idle))
    fk = ctx.fleet_keys
    fk = fk[fk["init"] > 0]
    c = fk["c"].to_numpy()
    idle = _chip_attr(sc, c, "idle_power_factor").astype(float)
    kw = _chip_attr(sc, c, "it_kw_per_chip").astype(float)
    i_it = fk[["c", "s", "t"]].assign(
        it=sc.hours[fk["t"].to_numpy()] / 1e3 * kw * idle * fk["init"].to_numpy()
    )
    return f_it, a_it, i_it


def define_site_water(b: _Builder, ctx: _Ctx) -> None:
    """Site water: sum IT MWh(c,s,p) * WUE(c,s) <= water_permit_m3[s,p] (WUE split by cooling)."""
    sc = ctx.sc
    if ctx.fleet_keys.empty:
        return
    f_it, a_it, i_it = _energy_coefs(ctx)
    wue = ("wue_l_per_kwh_air", "wue_l_per_kwh_liquid")
    i_w = i_it.assign(
        m3=i_it["it"] * _cooling_split(sc, i_it["c"].to_numpy(), i_it["s"].to_numpy(), *wue)
    )
    keys = ctx.fleet_keys[["s", "t"]].drop_duplicates()
    keys = keys.merge(
        i_w.groupby(["s", "t"], as_index=False)["m3"].sum(), on=["s", "t"], how="left"
    )
    keys = keys.merge(sc.water, on=["s", "t"], how="left").sort_values(["s", "t"])
    rhs = keys["permit"].fillna(np.inf).to_numpy() - keys["m3"].fillna(0.0).to_numpy()
    keep = np.isfinite(rhs)
    keys, rhs = keys[keep], rhs[keep]
    rows = b.add_rows("site_water", sc.i, keys, "<=", rhs)
    rmap = keys[["s", "t"]].assign(row=rows)
    for f in (f_it, a_it):
        m = f.merge(rmap, on=["s", "t"])
        w = _cooling_split(sc, m["c"].to_numpy(), m["s"].to_numpy(), *wue)
        b.add_terms(m["row"], m["col"], m["it"].to_numpy() * w)


def define_supply_resource(b: _Builder, ctx: _Ctx) -> None:
    """Supply resource: sum_c produce[c,p] * per_chip[c,r] <= capacity[r,p]."""
    sc = ctx.sc
    pr = ctx.produce.merge(sc.bom, on="c")
    if pr.empty:
        return
    keys = pr[["r", "t"]].drop_duplicates().merge(sc.supply, on=["r", "t"], how="left")
    keys = keys.sort_values(["r", "t"]).reset_index(drop=True)
    rows = b.add_rows("supply_resource", sc.i, keys, "<=", keys["capacity"].fillna(0.0).to_numpy())
    m = pr.merge(keys[["r", "t"]].assign(row=rows), on=["r", "t"])
    b.add_terms(m["row"], m["col"], m["per_chip"].to_numpy())


def define_chip_inventory(b: _Builder, ctx: _Ctx) -> None:
    """Chip inventory: sum_{s, p'<=p} install[c,s,p'] - sum_{p'<=p} produce[c,p'] <= 0."""
    sc = ctx.sc
    ins = ctx.install
    if ins.empty:
        return
    first = ins.groupby("c", as_index=False)["t"].min()
    keys = _expand(first[["c"]], first["t"].to_numpy(), sc.T - first["t"].to_numpy(), "t")
    rows = b.add_rows("chip_inventory", sc.i, keys, "<=", np.zeros(len(keys)))
    rmap = keys.assign(row=rows)
    ci = _cumulative(ins, ["c", "s"], sc.T).merge(rmap, on=["c", "t"])
    b.add_terms(ci["row"], ci["col"], 1.0)
    cp = _cumulative(ctx.produce, ["c"], sc.T).merge(rmap, on=["c", "t"])
    b.add_terms(cp["row"], cp["col"], -1.0)


def define_chip_window(b: _Builder, ctx: _Ctx) -> None:
    """Chip window: produce[c,p] <= 0 outside the sale window (rows only for shared columns)."""
    sc, pr = ctx.sc, ctx.produce
    if pr.empty:
        return
    t0 = _chip_attr(sc, pr["c"].to_numpy(), "t_first")
    t1 = _chip_attr(sc, pr["c"].to_numpy(), "t_last")
    t = pr["t"].to_numpy()
    out = pr[~((t >= t0) & (t <= t1))]
    if out.empty:
        return
    rows = b.add_rows("chip_window", sc.i, out, "<=", np.zeros(len(out)))
    b.add_terms(rows, out["col"], 1.0)


def define_fleet_assignment(b: _Builder, ctx: _Ctx) -> None:
    """Fleet assignment: sum_{k,w} assign[c,s,k,w,p] <= fleet[c,s,p] (initial + installs alive)."""
    sc, a = ctx.sc, ctx.assign
    if a.empty:
        return
    keys = a[["c", "s", "t"]].drop_duplicates().merge(ctx.fleet_keys, on=["c", "s", "t"])
    keys = keys.sort_values(["c", "s", "t"]).reset_index(drop=True)
    rows = b.add_rows("fleet_assignment", sc.i, keys, "<=", keys["init"].to_numpy())
    rmap = keys[["c", "s", "t"]].assign(row=rows)
    m = a.merge(rmap, on=["c", "s", "t"])
    b.add_terms(m["row"], m["col"], 1.0)
    m = ctx.fleet_terms.merge(rmap, on=["c", "s", "t"])
    b.add_terms(m["row"], m["col"], -1.0)


def define_demand_balance(b: _Builder, ctx: _Ctx) -> None:
    """Demand balance: sum assign * h100e[c,w] * derate[k,c] + unmet[k,w,p] >= demand[k,w,p]."""
    sc, u = ctx.sc, ctx.unmet
    if u.empty:
        return
    rows = b.add_rows("demand_balance", sc.i, u, ">=", u["demand_h100e"].to_numpy())
    b.add_terms(rows, u["col"], 1.0)
    rmap = u[["k", "w", "t"]].assign(row=rows)
    m = ctx.assign.merge(rmap, on=["k", "w", "t"])
    wname = np.asarray(sc.wnames, dtype=object)[m["w"].to_numpy()]
    c = m["c"].to_numpy()
    tr = _chip_attr(sc, c, "training_h100e").astype(float)
    inf = _chip_attr(sc, c, "inference_h100e").astype(float)
    h = np.where(wname == "training", tr, inf)
    b.add_terms(m["row"], m["col"], h * m["derate"].to_numpy())


def define_commitment(b: _Builder, ctx: _Ctx) -> None:
    """Commit IT MW: sum_{c in f, s, w} assign[c,s,k,w,p] * kw/1000 + breach[j,p] >= min_it_mw."""
    sc, br = ctx.sc, ctx.breach
    if br.empty:
        return
    rows = b.add_rows("commitment", sc.i, br, ">=", br["min_it_mw"].to_numpy())
    b.add_terms(rows, br["col"], 1.0)
    rmap = br[["j", "k", "f", "t"]].assign(row=rows)
    a = ctx.assign
    a = a.assign(f=_chip_attr(sc, a["c"].to_numpy(), "f").astype(np.int64))
    m = a.merge(rmap, on=["k", "f", "t"])
    b.add_terms(m["row"], m["col"], _chip_attr(sc, m["c"].to_numpy(), "it_kw_per_chip") / 1e3)


def define_objective(b: _Builder, ctx: _Ctx, shared_done: bool) -> None:
    """Add the scenario's cost terms: capex rents, energy, unmet and breach penalties."""
    sc = ctx.sc
    T = sc.T
    # chip capex rent on every alive in-horizon period
    ft = ctx.fleet_terms
    c = ft["c"].to_numpy()
    rent = _chip_attr(sc, c, "capex_usd_per_chip") / _chip_attr(sc, c, "lifetime_periods")
    b.add_cost(sc.i, "chip_capex", ft["col"], ft["t"], rent.astype(float))
    b.add_cost(
        sc.i, "chip_capex", ctx.produce["col"], ctx.produce["t"], PRODUCE_TIE_BREAK_USD_PER_CHIP
    )
    # build capex rent
    bv = ctx.build
    if len(bv):
        cnt = np.minimum(FACILITY_LIFE_PERIODS, T - bv["t"].to_numpy())
        e = _expand(bv[["s", "col"]], bv["t"].to_numpy(), cnt, "t")
        rent = _site_attr(sc, e["s"].to_numpy(), "build_capex_usd_per_mw") / FACILITY_LIFE_PERIODS
        b.add_cost(sc.i, "build_capex", e["col"], e["t"], rent.astype(float))
    # energy
    f_it, a_it, i_it = _energy_coefs(ctx)
    for f in (f_it, a_it):
        c, s = f["c"].to_numpy(), f["s"].to_numpy()
        pue = _cooling_split(sc, c, s, "pue_air", "pue_liquid")
        price = _site_attr(sc, s, "energy_price_usd_per_mwh").astype(float)
        b.add_cost(sc.i, "energy", f["col"], f["t"], f["it"].to_numpy() * pue * price)
    if len(i_it):
        c, s = i_it["c"].to_numpy(), i_it["s"].to_numpy()
        pue = _cooling_split(sc, c, s, "pue_air", "pue_liquid")
        price = _site_attr(sc, s, "energy_price_usd_per_mwh").astype(float)
        b.add_const(sc.i, "energy", i_it["t"], i_it["it"].to_numpy() * pue * price)
    u = ctx.unmet
    pen = sc.customers["unmet_penalty_usd_per_h100e_period"].reindex(u["k"]).to_numpy(dtype=float)
    b.add_cost(sc.i, "unmet_penalty", u["col"], u["t"], pen)
    br = ctx.breach
    b.add_cost(sc.i, "breach_penalty", br["col"], br["t"], br["penalty"].to_numpy(dtype=float))


# ------------------------------------------------------------------------ entry points
def build_model(ds: DatasetLike, *, integer_units: bool = False) -> PlanningModel:
    """Build the deterministic planning LP of one dataset.

    Parameters
    ----------
    ds : Dataset
        Validated dataset (scenario already applied).
    integer_units : bool
        When True, installs are whole deployment units (``chips_per_unit`` chips).

    Returns
    -------
    PlanningModel
        Index tables, sparse matrix (rows x columns) and objective; see the module
        docstring for the maths.
    """
    return build_stochastic_model([ds], [1.0], integer_units=integer_units)


def build_stochastic_model(
    datasets: Sequence[DatasetLike],
    weights: Sequence[float],
    *,
    integer_units: bool = False,
) -> PlanningModel:
    """Build a two-stage stochastic planning LP over weighted scenario datasets.

    build, liquid, install and produce are shared first-stage columns (union of
    the scenarios' index sets); assign, unmet and breach are copied per scenario.
    Each scenario adds all its rows (over the shared columns) and its full cost
    times its weight, so the objective is the expected cost.

    Parameters
    ----------
    datasets : sequence of Dataset
        Scenario datasets over the same horizon (same ``periods`` table).
    weights : sequence of float
        Probabilities, same length, >= 0, summing to 1 (within 1e-9).
    integer_units : bool
        Install in whole deployment units.

    Returns
    -------
    PlanningModel

    Raises
    ------
    ValueError
        When the lists differ in length, the weights are not a distribution or the
        horizons differ.
    """
    if len(datasets) == 0 or len(datasets) != len(weights):
        raise ValueError("need one weight per dataset and at least one dataset")
    wts = tuple(float(w) for w in weights)
    if min(wts) < 0 or abs(sum(wts) - 1.0) > 1e-9:
        raise ValueError(f"weights must be >= 0 and sum to 1, got {wts}")
    periods = tuple(datasets[0].periods)
    for ds in datasets[1:]:
        if tuple(ds.periods) != periods:
            raise ValueError("all scenario datasets must share the same horizon periods")
    codes = _codes(datasets)
    scens = [_prep(i, ds, codes) for i, ds in enumerate(datasets)]
    b = _Builder()
    fs = _first_stage_keys(scens)
    cols = {k: b.add_vars(k, -1, fs[k]) for k in FIRST_STAGE}
    first = {k: fs[k].assign(col=cols[k]) for k in FIRST_STAGE}
    ctxs = []
    for sc in scens:
        ctx = _Ctx(sc, first["build"], first["liquid"], first["install"], first["produce"])
        _fleet(b, ctx)
        ok = _operating_keys(ctx)
        for kind in ("assign", "unmet", "breach"):
            setattr(ctx, kind, ok[kind].assign(col=b.add_vars(kind, sc.i, ok[kind])))
        ctxs.append(ctx)
    for ctx in ctxs:
        define_site_it_power(b, ctx)
        define_site_liquid(b, ctx)
        define_site_grid(b, ctx)
        define_site_build(b, ctx)
        define_site_water(b, ctx)
        define_supply_resource(b, ctx)
        define_chip_inventory(b, ctx)
        define_chip_window(b, ctx)
        define_fleet_assignment(b, ctx)
        define_demand_balance(b, ctx)
        define_commitment(b, ctx)
        define_objective(b, ctx, shared_done=False)
    return _assemble(b, scens, codes, wts, periods, integer_units)


def _assemble(
    b: _Builder,
    scens: Sequence[_Scen],
    codes: Mapping[str, tuple[str, ...]],
    wts: tuple[float, ...],
    periods: tuple[str, ...],
    integer_units: bool,
) -> PlanningModel:
    n, m = b.n_cols, b.n_rows
    var = pd.concat(b.var_frames, ignore_index=True) if b.var_frames else pd.DataFrame()
    var = var.drop(columns="col")
    var["kind"] = pd.Categorical(var["kind"], categories=list(VAR_KINDS))
    scale = np.ones(n)
    is_int = np.zeros(n, dtype=bool)
    if integer_units:
        ins = (var["kind"] == "install").to_numpy()
        cpu = scens[0].chips["chips_per_unit"].reindex(var.loc[ins, "c"]).to_numpy(dtype=float)
        scale[ins] = cpu
        is_int[ins] = True
    var["lb"] = 0.0
    var["ub"] = np.inf
    var["integer"] = is_int
    var["scale"] = scale
    con = (
        pd.concat(b.row_frames, ignore_index=True)
        if b.row_frames
        else pd.DataFrame(
            {
                "row": pd.Series([], dtype=np.int64),
                "family": pd.Series([], dtype=str),
                "scenario": pd.Series([], dtype=np.int64),
                **{c: pd.Series([], dtype=np.int64) for c in _CODE_COLS},
                "sense": pd.Series([], dtype=str),
                "rhs": pd.Series([], dtype=float),
            }
        )
    )
    con = con.drop(columns="row")
    con["family"] = pd.Categorical(con["family"], categories=list(FAMILIES))
    if b.terms:
        r = np.concatenate([t[0] for t in b.terms])
        c = np.concatenate([t[1] for t in b.terms])
        v = np.concatenate([t[2] for t in b.terms]) * scale[c]
    else:
        r = c = np.zeros(0, dtype=np.int64)
        v = np.zeros(0)
    mat = sp.csr_matrix((v, (r, c)), shape=(m, n))
    mat.sum_duplicates()
    costs = (
        pd.concat(b.costs, ignore_index=True)
        if b.costs
        else pd.DataFrame({"col": [], "scenario": [], "term": [], "t": [], "coef": []})
    )
    costs["coef"] = (
        costs["coef"].to_numpy(dtype=float) * scale[costs["col"].to_numpy(dtype=np.int64)]
    )
    consts = (
        pd.concat(b.consts, ignore_index=True)
        if b.consts
        else pd.DataFrame(
            {
                "scenario": pd.Series([], dtype=np.int64),
                "term": pd.Series([], dtype=str),
                "t": pd.Series([], dtype=np.int64),
                "value": pd.Series([], dtype=float),
            }
        )
    )
    disc = scens[0].disc
    wv = np.asarray(wts)
    cc = (
        costs["coef"].to_numpy()
        * disc[costs["t"].to_numpy(dtype=np.int64)]
        * wv[costs["scenario"].to_numpy(dtype=np.int64)]
    )
    var["cost"] = np.bincount(costs["col"].to_numpy(dtype=np.int64), weights=cc, minlength=n)
    return PlanningModel(
        datasets=tuple(sc.ds for sc in scens),
        weights=wts,
        periods=periods,
        codes=codes,
        variables=var,
        constraints=con,
        matrix=mat,
        cost_terms=costs,
        const_terms=consts,
        commitments=tuple(sc.ds.table("commitments") for sc in scens),
        integer_units=integer_units,
        unmatched_fixed=pd.DataFrame(columns=["kind", "key", "period", "value"]),
    )


# ------------------------------------------------------------------ first-stage fixing
def fix_first_stage(model: PlanningModel, plan: Mapping[str, pd.DataFrame] | Any) -> PlanningModel:
    """Return a copy of ``model`` with first-stage columns fixed to a plan's values.

    Parameters
    ----------
    model : PlanningModel
        Model to fix.
    plan : Mapping[str, DataFrame] or PlanResult
        Result tables (or a result with ``.tables``): ``build_out`` (build_mw,
        liquid_build_mw), ``fleet`` (installed_chips), ``production``
        (produced_chips). Columns absent from the plan are fixed at 0.

    Returns
    -------
    PlanningModel
        With ``lb == ub`` on every first-stage column; plan values that have no
        column in this model are listed in ``unmatched_fixed`` (a non-zero one
        makes the solve report infeasible).
    """
    tables = getattr(plan, "tables", plan)
    var = model.variables.copy()
    codes = model.codes
    fixed = np.zeros(len(var))
    unmatched = []
    specs = (
        ("build", "build_out", "build_mw", ["site"], ["s"]),
        ("liquid", "build_out", "liquid_build_mw", ["site"], ["s"]),
        ("install", "fleet", "installed_chips", ["chip", "site"], ["c", "s"]),
        ("produce", "production", "produced_chips", ["chip"], ["c"]),
    )
    per = pd.Index(list(model.periods))
    letter_ids = {"site": "s", "chip": "c"}
    for kind, tname, vcol, idcols, ccols in specs:
        t = tables.get(tname) if hasattr(tables, "get") else tables[tname]
        if t is None or len(t) == 0:
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
    fs = var["kind"].isin(FIRST_STAGE).to_numpy()
    var.loc[fs, "lb"] = fixed[fs]
    var.loc[fs, "ub"] = fixed[fs]
    var.loc[fs, "integer"] = False
    um = pd.concat(unmatched, ignore_index=True) if unmatched else model.unmatched_fixed
    return replace(model, variables=var, unmatched_fixed=um)


# ------------------------------------------------------------------------------ PuLP
def to_pulp(
    model: PlanningModel, *, relax_integers: bool = False
) -> tuple[pulp.LpProblem, list[pulp.LpVariable]]:
    """Build the PuLP problem of a model (``x<col>`` variables, ``c<row>`` rows).

    Parameters
    ----------
    model : PlanningModel
        The model.
    relax_integers : bool
        Make integer columns continuous.

    Returns
    -------
    (LpProblem, list of LpVariable)
        The problem and its variables in column order. The objective constant
        (initial fleet energy) is part of the objective expression.
    """
    prob = pulp.LpProblem("capacity_plan", pulp.LpMinimize)
    var = model.variables
    lb = var["lb"].to_numpy()
    ub = var["ub"].to_numpy()
    is_int = var["integer"].to_numpy() & (not relax_integers)
    xs = []
    for j in range(len(var)):
        xs.append(
            prob.add_variable(
                f"x{j}",
                lowBound=float(lb[j]),
                upBound=None if not np.isfinite(ub[j]) else float(ub[j]),
                cat=pulp.LpInteger if is_int[j] else pulp.LpContinuous,
            )
        )
    cost = var["cost"].to_numpy()
    nz = np.flatnonzero(cost)
    prob.setObjective(
        pulp.LpAffineExpression(
            [(xs[j], float(cost[j])) for j in nz], constant=model.objective_constant
        )
    )
    mat = model.matrix
    rhs = model.constraints["rhs"].to_numpy()
    sense = model.constraints["sense"].to_numpy()
    indptr, indices, data = mat.indptr, mat.indices, mat.data
    for i in range(mat.shape[0]):
        a, z = indptr[i], indptr[i + 1]
        expr = pulp.LpAffineExpression(
            [(xs[j], float(v)) for j, v in zip(indices[a:z], data[a:z], strict=True)]
        )
        s = {"<=": pulp.LpConstraintLE, ">=": pulp.LpConstraintGE, "==": pulp.LpConstraintEQ}[
            sense[i]
        ]
        prob.addConstraint(pulp.LpConstraint(expr, s, name=f"c{i}", rhs=float(rhs[i])))
    return prob, xs
