"""Tidy result tables of a solved plan, computed from decision values and the dataset.

Every table is long and tidy; text columns are ``str``, numbers ``float64`` (chips
too, as the LP is continuous), ``binding`` is bool. Tables always carry their columns,
even when empty. The tables are computed from the decision values mapped to domain
keys (:func:`solution_frames`) and the dataset, not from the LP rows; shadow prices
come from the row duals (sign convention: :mod:`optimizer.plan.solve`).

Tables and columns (contract with the report writer)
----------------------------------------------------
* build_out: site, period, build_mw (decided), liquid_build_mw (decided), retrofit_mw,
  pipeline_mw (pipeline coming online), online_mw (pipeline + builds decided
  ``lead_time_periods`` earlier coming online), it_capacity_mw and liquid_capacity_mw
  (online), decided_capacity_mw (initial + whole pipeline + cumulative decided)
* fleet: chip, site, period, installed_chips, retired_chips, fleet_chips,
  assigned_chips, idle_chips, it_mw (nameplate IT MW of the fleet)
* production: chip, period, produced_chips, installed_chips, inventory_chips
  (opening inventory + produced - installed, end of period: chips in transit
  under a delivery lag included)
* supply_utilisation: resource, period, used, capacity, utilisation,
  shadow_price_usd_per_unit
* assignment: chip, site, customer, workload, period, chips, h100e (after derate),
  it_mw (nameplate IT MW of the assigned chips); only non-zero rows
* demand: customer, workload, period, regions (the demand row's site regions, ""
  = anywhere), demand_h100e, served_h100e (sum of the
  assignment's h100e; may exceed demand when chips are assigned to meet a
  commitment), unmet_h100e, served_share (served / demand),
  shadow_price_usd_per_h100e
* site_utilisation: site, period, limit (power|liquid|grid|water), used, capacity,
  unit (MW|MW|MW|m3), utilisation, shadow_price_usd_per_unit
* commitments: customer, family, period, min_it_mw, delivered_it_mw, breach_mw,
  shadow_price_usd_per_mw
* costs: period, term (chip_capex|build_capex|retrofit_capex|energy|unmet_penalty|
  breach_penalty), cost_usd (discounted, as in the objective: capex as in-horizon
  rent), undiscounted_cost_usd; the sum of cost_usd is the objective; cash_usd
  (undiscounted cash out in the period: chips at full price when installed,
  buildings when decided, retrofits when done, energy as billed; penalties 0) and
  cash_kind (capex | opex | none)
* energy: site, period, it_mwh, facility_mwh, water_m3, energy_cost_usd
  (undiscounted), carbon_t
* shadow_prices: family, period, key, shadow_price, unit, slack, binding
* training_clusters: customer, period, site, it_mw, h100e, chips (the customer's
  training at the site, chips > 1e-6), chips_by_generation ("chip:chips;..."),
  min_cluster_mw, min_cluster_h100e (the rule, 0 = none), meets_minimum,
  sites_in_period (sites hosting the customer's training in the period), max_sites
  (0 = no limit), within_max_sites, cluster_start (the site did not host it in the
  previous period; False in the first period), enforced (True when the solve had
  exact cluster binaries; False: LP mode, the rule is only reported)

Utilisation is used / capacity (NaN when the capacity is 0). ``slack`` is
rhs - lhs for ``<=`` rows and lhs - rhs for ``>=`` rows; ``binding`` is
slack <= 1e-6 * (1 + |rhs|).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from capacity.schema import period_index
from optimizer.components import REGISTRY
from optimizer.components.base import ChipSiteWork, site_capacity_table
from optimizer.components.placement import cluster_rules
from optimizer.components.records import ConstraintFamily
from optimizer.components.region import split_region_service
from optimizer.lp.dimensions import CODE_NAMES
from optimizer.lp.frames import frame as object_frame
from optimizer.lp.frames import object_column, rows_frame
from optimizer.lp.grouping import (
    Groups,
    group_cumsum,
    group_sum,
    inner_pairs,
    positions,
    sums_at,
    take,
    value_at,
)
from optimizer.lp.reuse_cache import cached, cached_for
from optimizer.lp.tidy_numbers import snap_arrays
from optimizer.plan.model import COST_TERMS, DEFINITION_FAMILIES, FAMILIES, PlanningModel
from optimizer.plan.power_results import (
    POWER_DECISIONS_COLUMNS,
    POWER_SOURCES_COLUMNS,
    extra_facility_mw,
    power_decisions,
    power_sources,
)

TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "build_out": (
        "site",
        "period",
        "build_mw",
        "liquid_build_mw",
        "retrofit_mw",
        "pipeline_mw",
        "online_mw",
        "it_capacity_mw",
        "liquid_capacity_mw",
        "decided_capacity_mw",
    ),
    "fleet": (
        "chip",
        "site",
        "period",
        "installed_chips",
        "retired_chips",
        "fleet_chips",
        "assigned_chips",
        "idle_chips",
        "it_mw",
    ),
    "production": ("chip", "period", "produced_chips", "installed_chips", "inventory_chips"),
    "supply_utilisation": (
        "resource",
        "period",
        "used",
        "capacity",
        "utilisation",
        "shadow_price_usd_per_unit",
    ),
    "assignment": ("chip", "site", "customer", "workload", "period", "chips", "h100e", "it_mw"),
    "demand": (
        "customer",
        "workload",
        "period",
        "regions",
        "demand_h100e",
        "served_h100e",
        "unmet_h100e",
        "served_share",
        "shadow_price_usd_per_h100e",
    ),
    "site_utilisation": (
        "site",
        "period",
        "limit",
        "used",
        "capacity",
        "unit",
        "utilisation",
        "shadow_price_usd_per_unit",
    ),
    "commitments": (
        "customer",
        "family",
        "period",
        "min_it_mw",
        "delivered_it_mw",
        "breach_mw",
        "shadow_price_usd_per_mw",
    ),
    "costs": ("period", "term", "cost_usd", "undiscounted_cost_usd", "cash_usd", "cash_kind"),
    "energy": (
        "site",
        "period",
        "it_mwh",
        "facility_mwh",
        "water_m3",
        "energy_cost_usd",
        "carbon_t",
    ),
    "shadow_prices": ("family", "period", "key", "shadow_price", "unit", "slack", "binding"),
    "power_sources": POWER_SOURCES_COLUMNS,
    "power_decisions": POWER_DECISIONS_COLUMNS,
    "training_clusters": (
        "customer",
        "period",
        "site",
        "it_mw",
        "h100e",
        "chips",
        "chips_by_generation",
        "min_cluster_mw",
        "min_cluster_h100e",
        "meets_minimum",
        "sites_in_period",
        "max_sites",
        "within_max_sites",
        "cluster_start",
        "enforced",
    ),
}

#: Boolean result columns.
BOOL_COLUMNS = {"binding", "meets_minimum", "within_max_sites", "cluster_start", "enforced"}

TEXT_COLUMNS = {
    "site",
    "period",
    "chip",
    "resource",
    "customer",
    "workload",
    "limit",
    "unit",
    "family",
    "term",
    "key",
    "cash_kind",
    "source",
    "kind",
    "option",
    "decision_period",
    "online_period",
    "regions",
    "chips_by_generation",
}

_ZERO = 1e-9


#: The text dtype of the tables (what ``astype(str)`` gives).
_TEXT = pd.Series([], dtype=object).astype(str).dtype


def _typed(
    name: str,
    df: pd.DataFrame,
    tolerance: float | None = None,
    texts: dict[tuple[str, str], tuple[np.ndarray, Any]] | None = None,
) -> pd.DataFrame:
    """Table ``name`` with its schema's columns and dtypes, snapped when ``tolerance``.

    ``texts`` (per model structure) keeps the last text column made of each object
    key column: a sweep's case whose keys are the same cells reuses it.
    """
    cols = TABLE_COLUMNS[name]
    data: dict[str, Any] = {}
    n = len(df)
    present = set(df.columns)
    for c in cols:
        col = df[c] if c in present else None
        if c in TEXT_COLUMNS:
            if col is not None and col.dtype == _TEXT:
                data[c] = col.array  # already text: the same cells (astype(str) keeps NaN)
            else:
                # text once (str(x) of every cell, as a text column of the table schema)
                v = col.to_numpy() if col is not None else np.full(n, np.nan)
                data[c] = _text(v, texts, (name, c))
            continue
        v = col.to_numpy() if col is not None else np.full(n, np.nan)
        data[c] = np.asarray(v, dtype=bool if c in BOOL_COLUMNS else np.float64)
    if tolerance is not None and n:
        snap_arrays(data, tolerance)  # no -0.0, no -1e-10 chips (optimizer.lp.tidy_numbers)
    # one construction from arrays (no alignment, no column-by-column insert)
    return pd.DataFrame(data, index=pd.RangeIndex(n), columns=list(cols))


def _text(
    v: np.ndarray, texts: dict[tuple[str, str], tuple[np.ndarray, Any]] | None, key: tuple[str, str]
) -> Any:
    """``v`` as the tables' text dtype, reused from ``texts[key]`` when the same cells.

    Only an all-``str`` array is kept (no missing cell), so a later array equal to it
    cell by cell holds the same strings (no other built-in type equals a ``str``).
    """
    hit = None if texts is None else texts.get(key)
    if hit is not None and _same_arrays((hit[0],), (v,)):
        return hit[1]
    made = pd.array(v, dtype=_TEXT)
    if texts is not None and v.dtype == object and pd.api.types.infer_dtype(v) == "string":
        if len(v) and not made.isna().any():
            texts[key] = (v, made)
    return made


def empty_tables() -> dict[str, pd.DataFrame]:
    """Every result table with its columns and no rows."""
    return {n: _typed(n, pd.DataFrame()) for n in TABLE_COLUMNS}


# --------------------------------------------------------------------- domain values
def solution_frames(
    model: PlanningModel, x: np.ndarray, scenario: int = 0
) -> dict[str, pd.DataFrame]:
    """Decision values of one scenario mapped to domain keys.

    Parameters
    ----------
    model : PlanningModel
    x : ndarray, shape (n_variables,)
        Column values (column units; multiplied by ``scale`` here).
    scenario : int
        Scenario position.

    Returns
    -------
    dict of DataFrame
        ``build`` (site, period, value MW), ``liquid`` (site, period, MW),
        ``install`` (chip, site, period, chips), ``produce`` (chip, period, chips),
        ``assign`` (chip, site, customer, workload, demand_regions, period, chips),
        ``unmet`` (customer, workload, demand_regions, period, H100e), ``breach`` (j,
        customer, family, from_period, period, MW), ``cluster`` and ``cluster_start``
        (customer, site, period, 0-1; empty unless the model has exact clusters).
        ``demand_regions`` is the demand row's ``regions`` text ("" = anywhere).
        A compact-formulation model adds ``busy`` (chip, site, workload, period),
        ``pool_serve`` (chip, pool, customer, workload, demand_regions, period),
        ``pool_draw`` (chip, region, pool, workload, period) and ``serve`` (chip,
        region, customer, workload, demand_regions, period, pool): the serve columns
        and the pooled service split to regions
        (:func:`optimizer.components.pool.spread_pool_service`; ``pool`` is "" for a
        serve column); its ``assign`` is the split of busy and serve to sites
        (:func:`optimizer.components.region.split_region_service`).
    """
    val = np.asarray(x, dtype=float) * model.variables["scale"].to_numpy()
    out: dict[str, pd.DataFrame] = {}
    for k, (cols, keys) in _frame_keys(model, scenario).items():
        f = keys.copy(deep=False)  # copy-on-write: the cached key frame never changes
        f["value"] = val[cols]
        out[k] = f
    _add_compact_frames(model, x, scenario, out)  # value-dependent split: every time
    return out


def _frame_keys(model: PlanningModel, scenario: int) -> dict[str, tuple[np.ndarray, pd.DataFrame]]:
    """Columns of each decision kind and their domain keys (once per model structure)."""

    def make() -> dict[str, tuple[np.ndarray, pd.DataFrame]]:
        made = _make_frame_keys(model, scenario)
        return {k: (cols, object_frame(keys)) for k, (cols, keys) in made.items()}

    return cached(model, ("frame_keys", scenario), make)


def _make_frame_keys(
    model: PlanningModel, scenario: int
) -> dict[str, tuple[np.ndarray, dict[str, np.ndarray]]]:
    """Compute :func:`_frame_keys` (column ids, then key arrays, per decision kind)."""
    var = model.variables
    sc = var["scenario"].to_numpy()
    kind = var["kind"].to_numpy()
    per = np.asarray(model.periods, dtype=object)
    names = {k: np.asarray(v, dtype=object) for k, v in model.codes.items()}
    out: dict[str, tuple[np.ndarray, dict[str, np.ndarray]]] = {}
    spec = {
        "build": (("site", "s"),),
        "liquid": (("site", "s"),),
        "retrofit": (("site", "s"),),
        "install": (("chip", "c"), ("site", "s")),
        "produce": (("chip", "c"),),
        "assign": (
            ("chip", "c"),
            ("site", "s"),
            ("customer", "k"),
            ("workload", "w"),
            ("demand_regions", "g"),
        ),
        "unmet": (("customer", "k"), ("workload", "w"), ("demand_regions", "g")),
        "grid_upgrade": (("site", "s"), ("source", "o")),
        "onsite_build": (("site", "s"), ("source", "o")),
        "power_energy": (("site", "s"), ("source", "o")),
        "cluster": (("customer", "k"), ("site", "s")),
        "cluster_start": (("customer", "k"), ("site", "s")),
    }
    for k, cols in spec.items():
        sel = (kind == k) & ((sc == -1) | (sc == scenario))
        v = var.loc[sel]
        keys = {name: names[code][v[code].to_numpy()] for name, code in cols}
        keys["period"] = per[v["t"].to_numpy()]
        out[k] = (np.flatnonzero(sel), keys)
    sel = (kind == "breach") & (sc == scenario)
    v = var.loc[sel]
    com = model.commitments[scenario].reset_index(drop=True)
    j = v["j"].to_numpy()
    out["breach"] = (
        np.flatnonzero(sel),
        {
            "j": j,
            "customer": com["customer"].astype(str).to_numpy()[j],
            "family": com["family"].astype(str).to_numpy()[j],
            "from_period": com["from_period"].astype(str).to_numpy()[j],
            "period": per[v["t"].to_numpy()],
        },
    )
    return out


def _add_compact_frames(
    model: PlanningModel, x: np.ndarray, scenario: int, out: dict[str, pd.DataFrame]
) -> None:
    """Compact formulation: add ``busy``, ``serve`` and the pools, and their split to ``assign``."""
    if model.formulation != "compact":
        return
    val = np.asarray(x, dtype=float) * model.variables["scale"].to_numpy()
    for k, (cols, keys) in _compact_keys(model, scenario).items():
        f = keys.copy(deep=False)  # copy-on-write: the cached key frame never changes
        f["value"] = val[cols]
        out[k] = f
    direct = out["serve"]
    direct["pool"] = object_column(np.full(len(direct), "", dtype=object))
    pooled = _spread_pools(model, scenario, val)
    out["serve"] = pd.concat([direct, pooled], ignore_index=True) if len(pooled) else direct
    region = model.datasets[scenario].table("sites").set_index("site")["region"]
    split = split_region_service(out["busy"], out["serve"], region)
    out["assign"] = pd.concat([out["assign"], split], ignore_index=True)


def _spread_pools(model: PlanningModel, scenario: int, val: np.ndarray) -> pd.DataFrame:
    """Per-region service of the pooled pairs, on column positions cached per structure.

    The values of :func:`optimizer.components.pool.spread_pool_service` (the reference
    on frames, same rows in the same order): for each pool_serve column and each region
    of its pool, pool_serve x pool_draw / the pool's total draw, positive rows only.
    """
    ps_col, pd_col, gid, n_groups, draw_cols, draw_gid, keys = _pool_pairs(model, scenario)
    if not len(ps_col):
        return object_frame({**{k: v[:0] for k, v in keys.items()}, "value": np.zeros(0)})
    draw = val[draw_cols]
    total = np.bincount(draw_gid, weights=np.where(draw > 0, draw, 0.0), minlength=n_groups)
    xs, xd = val[ps_col], val[pd_col]
    ok = (xs > 0) & (xd > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(ok, xs * (xd / np.where(ok, total[gid], 1.0)), 0.0)
    keep = value > 0
    out = {k: v[keep] for k, v in keys.items() if k != "pool"}
    out["value"] = value[keep]
    out["pool"] = keys["pool"][keep]
    return object_frame(out)


def _pool_pairs(model: PlanningModel, scenario: int) -> tuple[Any, ...]:
    """(pool_serve column, pool_draw column) pairs of each pool and their domain keys."""

    def make() -> tuple[Any, ...]:
        var = model.variables
        sc, kind = var["scenario"].to_numpy(), var["kind"].to_numpy()
        code = ["c", "e", "k", "w", "g", "t", "q"]
        ps = var.loc[(kind == "pool_serve") & (sc == scenario), code]
        pdw = var.loc[(kind == "pool_draw") & (sc == scenario), code]
        ps = ps.assign(ps_col=ps.index.to_numpy()).drop(columns="e")
        pdw = pdw.assign(pd_col=pdw.index.to_numpy())[["c", "e", "q", "w", "t", "pd_col"]]
        pool = ["c", "q", "w", "t"]
        draw_gid, groups = pd.MultiIndex.from_frame(pdw[pool]).factorize()
        pdw = pdw.assign(gid=draw_gid)
        m = ps.merge(pdw, on=pool)  # left order: pool_serve columns, then draw order
        names = {k: np.asarray(v, dtype=object) for k, v in model.codes.items()}
        per = np.asarray(model.periods, dtype=object)
        keys = {
            "chip": names["c"][m["c"].to_numpy()],
            "region": names["e"][m["e"].to_numpy()],
            "customer": names["k"][m["k"].to_numpy()],
            "workload": names["w"][m["w"].to_numpy()],
            "demand_regions": names["g"][m["g"].to_numpy()],
            "period": per[m["t"].to_numpy()],
            "pool": names["q"][m["q"].to_numpy()] if len(m) else np.zeros(0, dtype=object),
        }
        return (
            m["ps_col"].to_numpy(),
            m["pd_col"].to_numpy(),
            m["gid"].to_numpy(),
            len(groups),
            pdw["pd_col"].to_numpy(),
            np.asarray(draw_gid),
            keys,
        )

    return cached(model, ("pool_pairs", scenario), make)


def _compact_keys(
    model: PlanningModel, scenario: int
) -> dict[str, tuple[np.ndarray, pd.DataFrame]]:
    """Columns and domain keys of ``busy`` and ``serve`` (once per model structure)."""

    def make() -> dict[str, tuple[np.ndarray, pd.DataFrame]]:
        var = model.variables
        sc, kind = var["scenario"].to_numpy(), var["kind"].to_numpy()
        per = np.asarray(model.periods, dtype=object)
        names = {k: np.asarray(v, dtype=object) for k, v in model.codes.items()}
        spec = {
            "busy": (("chip", "c"), ("site", "s"), ("workload", "w")),
            "serve": (
                ("chip", "c"),
                ("region", "e"),
                ("customer", "k"),
                ("workload", "w"),
                ("demand_regions", "g"),
            ),
            "pool_serve": (
                ("chip", "c"),
                ("pool", "q"),
                ("customer", "k"),
                ("workload", "w"),
                ("demand_regions", "g"),
            ),
            "pool_draw": (("chip", "c"), ("region", "e"), ("pool", "q"), ("workload", "w")),
        }
        made = {}
        for k, cols in spec.items():
            sel = (kind == k) & (sc == scenario)
            v = var.loc[sel]
            keys = {name: names[code][v[code].to_numpy()] for name, code in cols}
            keys["period"] = per[v["t"].to_numpy()]
            made[k] = (np.flatnonzero(sel), object_frame(keys))
        return made

    return cached(model, ("compact_keys", scenario), make)


def fleet_values(ds: Any, frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Fleet by (chip, site, period) from installs and the initial fleet.

    Returns
    -------
    DataFrame
        chip, site, period, installed_chips, retired_chips, fleet_chips (chips alive
        in the period: initial fleet with install_period <= p < install_period +
        lifetime, plus installs of the last lifetime_periods periods).
    """
    periods = list(ds.periods)
    pidx = {p: i for i, p in enumerate(periods)}
    p0 = period_index(periods[0])
    life = ds.table("chips").set_index("chip")["lifetime_periods"]
    ins = frames["install"]
    ins = ins[ins["value"].to_numpy(dtype=float) > 0]
    parts: list[dict[str, np.ndarray]] = []
    if len(ins):
        t = ins["period"].map(pidx).to_numpy(dtype=np.int64)
        L = life.reindex(ins["chip"]).to_numpy(dtype=np.int64)
        parts.append(
            {
                "chip": ins["chip"].to_numpy(),
                "site": ins["site"].to_numpy(),
                "t_in": t,
                "t_out": t + L,
                "chips": ins["value"].to_numpy(dtype=float),
                "new": np.ones(len(t), dtype=bool),
            }
        )
    f0 = ds.table("initial_fleet")
    if len(f0):
        t = np.array(
            [period_index(p) - p0 for p in f0["install_period"].astype(str)], dtype=np.int64
        )
        L = life.reindex(f0["chip"]).to_numpy(dtype=np.int64)
        parts.append(
            {
                "chip": f0["chip"].astype(str).to_numpy(),
                "site": f0["site"].astype(str).to_numpy(),
                "t_in": t,
                "t_out": t + L,
                "chips": f0["chips"].to_numpy(dtype=float),
                "new": np.zeros(len(t), dtype=bool),
            }
        )
    cols = ["chip", "site", "period", "installed_chips", "retired_chips", "fleet_chips"]
    if not parts:
        return pd.DataFrame(
            {c: pd.Series([], dtype=object if c in TEXT_COLUMNS else float) for c in cols}
        )
    cohorts = {c: np.concatenate([p[c] for p in parts]) for c in parts[0]}
    return _cohort_fleet(cohorts, periods)


def _cohort_fleet(cohorts: dict[str, np.ndarray], periods: list[str]) -> pd.DataFrame:
    """Installed, retired and alive chips per (chip, site, period) from install cohorts.

    ``cohorts``: arrays ``chip, site, t_in, t_out, chips, new`` (one row per cohort).
    Every (chip, site) with a cohort gets every period, pairs in sorted order; the sums
    over the cohorts of a pair run in cohort order, as pandas' ``groupby`` sums them
    (:func:`optimizer.lp.grouping.group_sum`).
    """
    T = len(periods)
    keep = cohorts["chips"] > 0
    c = {k: v[keep] for k, v in cohorts.items()}
    pairs = Groups([c["chip"], c["site"]])
    tt = np.arange(T)[None, :]
    t_in, t_out = c["t_in"][:, None], c["t_out"][:, None]
    chips, new = c["chips"][:, None], c["new"][:, None]
    ids = (pairs.ids[:, None] * T + tt).ravel()  # cohort-major, period within
    n = pairs.n * T

    def total(v: np.ndarray) -> np.ndarray:
        return group_sum(ids, v.ravel(), n)

    return object_frame(
        {
            "chip": np.repeat(pairs.key(0), T),
            "site": np.repeat(pairs.key(1), T),
            "period": np.tile(np.asarray(periods, dtype=object), pairs.n),
            "installed_chips": total(np.where(new & (t_in == tt), chips, 0.0)),
            "retired_chips": total(np.where(t_out == tt, chips, 0.0)),
            "fleet_chips": total(np.where((t_in <= tt) & (tt < t_out), chips, 0.0)),
        }
    )


def family_duals(
    model: PlanningModel, row_dual: np.ndarray | None, scenario: int, family: ConstraintFamily
) -> pd.DataFrame:
    """Conditional duals of one family's rows, keyed by domain names.

    Parameters
    ----------
    model : PlanningModel
    row_dual : ndarray, shape (n_constraints,), or None
        d objective / d rhs per row (zeros when None).
    scenario : int
    family : ConstraintFamily
        A family with ``result`` routing (its ``keys`` name the key columns).

    Returns
    -------
    DataFrame
        The key columns (``site``, ``period``, ...; ``j`` stays the commitment row)
        and ``family.result.dual_column`` (USD per the family's unit, divided by the
        scenario's probability).
    """
    assert family.result is not None
    rows, keys = _family_rows(model, scenario, family)
    w = model.weights[scenario]
    dual = np.zeros(len(rows)) if row_dual is None else row_dual[rows] / (w if w > 0 else 1.0)
    out: dict[str, Any] = dict(keys)
    out[family.result.dual_column] = dual + 0.0  # turn -0.0 into 0.0
    return object_frame(out)


def _family_rows(
    model: PlanningModel, scenario: int, family: ConstraintFamily
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Row ids of one family in one scenario and their key columns (once per structure)."""

    def make() -> tuple[np.ndarray, dict[str, np.ndarray]]:
        assert family.result is not None
        con = model.constraints
        sel = ((con["family"] == family.name) & (con["scenario"] == scenario)).to_numpy()
        out: dict[str, np.ndarray] = {}
        for code in family.result.keys:
            values = con.loc[sel, code]
            if code == "t":
                out[CODE_NAMES[code]] = np.asarray(model.periods, dtype=object)[values.to_numpy()]
            elif code == "j":
                out[CODE_NAMES[code]] = values.to_numpy()
            else:
                out[CODE_NAMES[code]] = _names(model, code, values)
        return np.flatnonzero(sel), out

    return cached(model, ("family_rows", family.name, scenario), make)


def _routed(table: str) -> list[ConstraintFamily]:
    """Families whose dual lands in result table ``table``, in registry order."""
    return [f for f in REGISTRY if f.result is not None and f.result.table == table]


def _merge_duals(
    frame: pd.DataFrame,
    model: PlanningModel,
    row_dual: np.ndarray | None,
    scenario: int,
    table: str,
) -> pd.DataFrame:
    """Merge the duals of every family routed to ``table`` into ``frame``.

    A key with no row of the family (the limit cannot bind there) gets 0; a row whose
    dual the solver did not return (NaN, see ``PlanResult.duals_note``) stays null.
    """
    for family in _routed(table):
        assert family.result is not None
        d = family_duals(model, row_dual, scenario, family)
        keys = [CODE_NAMES[c] for c in family.result.keys]
        where = _row_of(model, (table, family.name, scenario), frame, d, keys)
        if where is None:  # keys not unique: the general merge
            merged = frame.merge(d, on=keys, how="left", indicator=True)
            frame = _zero_where_no_row(merged, family.result.dual_column)
            continue
        price = d[family.result.dual_column].to_numpy(dtype=float)
        frame = frame.reset_index(drop=True)
        frame[family.result.dual_column] = np.where(
            where >= 0, price[np.maximum(where, 0)] if len(price) else 0.0, 0.0
        )
    return frame


def _row_of(
    model: PlanningModel,
    key: tuple[Any, ...],
    frame: pd.DataFrame,
    rows: pd.DataFrame,
    keys: list[str],
) -> np.ndarray | None:
    """Position in ``rows`` of each ``frame`` row with the same ``keys`` (-1: none).

    What ``frame.merge(rows, on=keys, how="left")`` pairs, as an index array: computed
    once per model structure and reused while ``frame``'s key columns stay the same
    (compared cell by cell). None when ``rows`` repeats a key (a left merge would then
    repeat ``frame`` rows).
    """
    left = tuple(frame[k].to_numpy() for k in keys)
    right = tuple(rows[k].to_numpy() for k in keys)
    store: dict[str, Any] = cached(model, ("row_of", key), dict)
    hit = store.get("keys")
    if hit is not None and _same_arrays(hit, (*left, *right)):
        found: np.ndarray | None = store["where"]
        return found
    look = rows[keys].assign(_pos=np.arange(len(rows)))
    where: np.ndarray | None = None
    if not look.duplicated(keys).any():
        m = frame[keys].merge(look, on=keys, how="left")
        where = m["_pos"].fillna(-1).to_numpy(dtype=np.int64)
    store["keys"], store["where"] = (*left, *right), where
    return where


def _same_arrays(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> bool:
    """Return True when two tuples of key columns hold the same cells (same dtypes).

    Two arrays over the same memory (same address, shape and strides: a cached key
    frame's column read again) are equal without a cell-by-cell comparison; the
    arrays of ``a`` are held by the cache, so their memory cannot have been reused.
    """
    return len(a) == len(b) and all(
        x is y
        or (
            x.dtype == y.dtype
            and x.shape == y.shape
            and (_same_memory(x, y) or bool((x == y).all()))
        )
        for x, y in zip(a, b, strict=True)
    )


def _same_memory(x: np.ndarray, y: np.ndarray) -> bool:
    """Return True when ``x`` and ``y`` view the same cells of the same buffer."""
    ax, ay = x.__array_interface__, y.__array_interface__
    return bool(ax["data"] == ay["data"] and ax["strides"] == ay["strides"])


def _gather(
    model: PlanningModel,
    key: tuple[Any, ...],
    frame: pd.DataFrame,
    source: pd.DataFrame,
    column: str,
    keys: list[str],
) -> np.ndarray:
    """``source[column]`` on ``frame``'s rows matched by ``keys`` (NaN where no row).

    Same as ``source.set_index(keys)[column].reindex(frame keys)`` for unique keys.
    """
    where = _row_of(model, key, frame, source, keys)
    if where is None:
        idx = pd.MultiIndex.from_frame(frame[keys])
        return source.set_index(keys)[column].reindex(idx).to_numpy(dtype=float)
    vals = source[column].to_numpy(dtype=float)
    if not len(vals):
        return np.full(len(frame), np.nan)
    return np.where(where >= 0, vals[np.maximum(where, 0)], np.nan)


def _zero_where_no_row(merged: pd.DataFrame, price_col: str) -> pd.DataFrame:
    """Set ``price_col`` of a ``merge(..., indicator=True)`` to 0 where no row matched.

    Rows that matched keep their dual, NaN included: a dual the solver did not return
    stays null (``PlanResult.duals_note`` says why), never 0.
    """
    absent = (merged.pop("_merge") == "left_only").to_numpy()
    price = merged[price_col].to_numpy(dtype=float).copy()
    price[absent] = 0.0
    merged[price_col] = price
    return merged


def _names(model: PlanningModel, code: str, v: pd.Series) -> np.ndarray:
    return np.asarray(model.codes[code], dtype=object)[v.to_numpy(dtype=np.int64)]


class _Inputs:
    """What the result tables of one scenario share: dataset, decision frames, duals."""

    def __init__(
        self,
        model: PlanningModel,
        x: np.ndarray,
        row_dual: np.ndarray | None,
        scenario: int,
        frames: Mapping[str, pd.DataFrame],
        fleet: pd.DataFrame | None = None,
        capacity: pd.DataFrame | None = None,
    ) -> None:
        self.model, self.x, self.row_dual, self.scenario = model, x, row_dual, scenario
        self.capacity = capacity
        self.frames = frames
        self.ds = model.datasets[scenario]
        self.periods = list(model.periods)
        sites = self.ds.table("sites")
        self.sites = sites.set_index("site")
        self.chips = self.ds.table("chips").set_index("chip")
        self.site_periods = cached_for(
            model,
            ("site_periods",),
            (sites,),
            lambda: sites[["site"]].merge(object_frame({"period": self.periods}), how="cross"),
        )
        self.fleet = fleet_values(self.ds, frames) if fleet is None else fleet

    def with_duals(self, frame: pd.DataFrame, table: str) -> pd.DataFrame:
        return _merge_duals(frame, self.model, self.row_dual, self.scenario, table)


def _build_out_table(inp: _Inputs) -> pd.DataFrame:
    """Build build_out: MW decided, coming online and online capacity per site and period."""
    made = inp.capacity
    cap = site_capacity_table(inp.ds, inp.frames) if made is None else made.copy(deep=False)
    cap["online_mw"] = cap["online_build_mw"] + cap["pipeline_mw"]
    return cap


def _fleet_table(inp: _Inputs) -> pd.DataFrame:
    """Build fleet: installs, retirements, fleet, assigned and idle chips, nameplate IT MW.

    Assigned chips per (chip, site, period) summed as pandas' ``groupby`` sums them
    (:func:`optimizer.lp.grouping.sums_at`).
    """
    fl = inp.fleet.reset_index(drop=True)
    keys = ("chip", "site", "period")
    asg = inp.frames["assign"]
    assigned = sums_at(
        [fl[k].to_numpy() for k in keys],
        [asg[k].to_numpy() for k in keys],
        asg["value"].to_numpy(dtype=float),
    )
    fleet = fl["fleet_chips"].to_numpy(dtype=float)
    kw = take(
        inp.chips["it_kw_per_chip"].to_numpy(dtype=float),
        positions(inp.chips.index, fl["chip"].to_numpy()),
    )
    out: dict[str, Any] = {c: fl[c].array for c in fl.columns}  # text stays text
    out["assigned_chips"] = assigned
    out["idle_chips"] = np.maximum(fleet - assigned, 0.0)
    out["it_mw"] = fleet * kw / 1e3
    counts = ("installed_chips", "retired_chips", "fleet_chips", "assigned_chips")
    keep = np.zeros(len(fl), dtype=bool)
    for c in counts:
        keep |= np.abs(np.asarray(out[c], dtype=float)) > _ZERO
    return object_frame({c: v[keep] for c, v in out.items()}, index=pd.RangeIndex(keep.sum()))


def _production_table(inp: _Inputs) -> pd.DataFrame:
    """Build production: chips produced, installed and in inventory per chip and period.

    Every chip that is produced or installed gets every period (chips in sorted order);
    inventory = opening + running produced - running installed, the running sums as
    pandas' ``groupby(...).cumsum()`` computes them.
    """
    fr, periods = inp.frames, inp.periods
    T = len(periods)
    produce, install = fr["produce"], fr["install"]
    chips = Groups([np.concatenate([produce["chip"].to_numpy(), install["chip"].to_numpy()])])
    names = chips.key(0)
    pos = pd.Index(periods)

    def per_chip_period(frame: pd.DataFrame, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = pos.get_indexer(frame["period"].to_numpy())
        return ids[t >= 0] * T + t[t >= 0], frame["value"].to_numpy(dtype=float)[t >= 0]

    ids, v = per_chip_period(install, chips.ids[len(produce) :])
    installed = group_sum(ids, v, chips.n * T)
    ids, v = per_chip_period(produce, chips.ids[: len(produce)])
    produced = value_at([np.arange(chips.n * T)], [ids], v)
    produced = np.where(np.isnan(produced), 0.0, produced)
    pr = object_frame(
        {
            "chip": np.repeat(names, T),
            "period": np.tile(np.asarray(periods, dtype=object), chips.n),
            "produced_chips": produced,
            "installed_chips": installed,
        }
    )
    opening = (
        inp.chips["opening_inventory_chips"].reindex(pr["chip"]).fillna(0.0).to_numpy(dtype=float)
        if "opening_inventory_chips" in inp.chips
        else 0.0
    )
    by_chip = np.repeat(np.arange(chips.n), T)
    pr["inventory_chips"] = (
        opening + group_cumsum(by_chip, produced) - group_cumsum(by_chip, installed)
    )
    return pr


def _supply_utilisation_table(inp: _Inputs) -> pd.DataFrame:
    """Build supply_utilisation: resource use, capacity, utilisation and shadow price.

    Use per (resource, period) summed as pandas' ``groupby`` sums it
    (:mod:`optimizer.lp.grouping`).
    """
    bom = inp.ds.table("chip_bill_of_materials")
    su = inp.ds.table("supply_resources")[["resource", "period", "capacity"]]
    su = su.reset_index(drop=True)
    produce = inp.frames["produce"]
    pi, bi = inner_pairs([produce["chip"].to_numpy()], [bom["chip"].to_numpy()])
    used = produce["value"].to_numpy(dtype=float)[pi] * bom["per_chip"].to_numpy(dtype=float)[bi]
    su["used"] = sums_at(
        [su["resource"].to_numpy(), su["period"].to_numpy()],
        [bom["resource"].to_numpy()[bi], produce["period"].to_numpy()[pi]],
        used,
    )
    su["utilisation"] = np.where(
        su["capacity"] > 0, su["used"] / su["capacity"].where(su["capacity"] > 0, 1.0), np.nan
    )
    return inp.with_duals(su, "supply_utilisation")


def _assignment_table(inp: _Inputs) -> pd.DataFrame:
    """Build assignment: non-zero assignments with H100e (after derate) and nameplate IT MW.

    The derate is the eligibility row's of the (customer, chip) (a left merge on
    unique keys, by index arrays).
    """
    chips = inp.chips
    a = inp.frames["assign"]
    nz = np.abs(a["value"].to_numpy(dtype=float)) > _ZERO
    out: dict[str, Any] = {c: a[c].array[nz] for c in a.columns if c != "value"}
    n = int(nz.sum())
    el = inp.ds.table("eligibility")
    derate = value_at(
        [np.asarray(out["customer"], dtype=object), np.asarray(out["chip"], dtype=object)],
        [el["customer"].to_numpy(), el["chip"].to_numpy()],
        el["derate"].to_numpy(dtype=float),
    )
    count = a["value"].to_numpy(dtype=float)[nz]
    c = positions(chips.index, np.asarray(out["chip"], dtype=object))
    training = take(chips["training_h100e"].to_numpy(dtype=float), c)
    inference = take(chips["inference_h100e"].to_numpy(dtype=float), c)
    h = np.where(np.asarray(out["workload"], dtype=object) == "training", training, inference)
    out["chips"] = count
    out["derate"] = derate
    out["h100e"] = count * h * np.where(np.isnan(derate), 0.0, derate)
    out["it_mw"] = count * take(chips["it_kw_per_chip"].to_numpy(dtype=float), c) / 1e3
    return object_frame(out, index=pd.RangeIndex(n))


def _demand_table(inp: _Inputs, assignment: pd.DataFrame) -> pd.DataFrame:
    """Build demand: demand, served and unmet H100e, served share and shadow price."""
    keys = ["customer", "workload", "period", "regions"]
    dm = inp.ds.table("demand")
    regions = dm["regions"] if "regions" in dm else pd.Series("", index=dm.index)
    text = np.array([str(r).strip() for r in regions.fillna("")], dtype=object)
    dm = dm.assign(regions=object_column(text, dm.index))[[*keys, "demand_h100e"]]
    dm = dm.reset_index(drop=True)
    target = [dm[k].to_numpy() for k in keys]
    by = ["customer", "workload", "period", "demand_regions"]
    served = sums_at(target, [assignment[k].to_numpy() for k in by], assignment["h100e"].to_numpy())
    unmet = inp.frames["unmet"]
    u = value_at(target, [unmet[k].to_numpy() for k in by], unmet["value"].to_numpy())
    dm["served_h100e"] = served
    dm["unmet_h100e"] = np.where(np.isnan(u), 0.0, u)
    dmv = dm["demand_h100e"].to_numpy(dtype=float)
    dm["served_share"] = np.where(dmv > 0, dm["served_h100e"] / np.where(dmv > 0, dmv, 1.0), np.nan)
    return inp.with_duals(dm, "demand")


def _energy_table(inp: _Inputs) -> pd.DataFrame:
    """Build energy per site and period, plus the site loads (``fac_mw``, ``liq_mw``, ``it_mw``)."""
    ds, chips, sites = inp.ds, inp.chips, inp.sites
    hours = ds.table("periods").set_index("period")["hours"]
    wl = ds.table("workloads").set_index("workload")["power_factor"]
    fe = ChipSiteWork(inp.fleet, inp.frames["assign"], wl)
    c, s = positions(chips.index, fe.chip), positions(sites.index, fe.site)
    kw = take(chips["it_kw_per_chip"].to_numpy(dtype=float), c)
    idle = take(chips["idle_power_factor"].to_numpy(dtype=float), c)
    liq = take(chips["cooling"].to_numpy(), c) == "liquid"
    hrs = take(hours.to_numpy(dtype=float), positions(hours.index, fe.period))
    it_mwh = hrs / 1e3 * kw * (fe.pfx + idle * (fe.fleet_chips - fe.assigned))

    def by_cooling(air: str, liquid: str) -> np.ndarray:
        return np.where(liq, take(sites[liquid].to_numpy(), s), take(sites[air].to_numpy(), s))

    pue = by_cooling("pue_air", "pue_liquid")
    mw = fe.fleet_chips * kw / 1e3
    es = fe.by_site_period(
        {
            "it_mwh": it_mwh,
            "facility_mwh": it_mwh * pue,
            "water_m3": it_mwh * by_cooling("wue_l_per_kwh_air", "wue_l_per_kwh_liquid"),
            "fac_mw": mw * pue,
            "liq_mw": np.where(liq, mw, 0.0),
            "it_mw": mw,
        }
    )
    es = _on_site_periods(inp, es)
    s = positions(sites.index, es["site"].to_numpy())
    fac = es["facility_mwh"].to_numpy()
    es["energy_cost_usd"] = fac * take(sites["energy_price_usd_per_mwh"].to_numpy(), s)
    es["carbon_t"] = fac * take(sites["carbon_t_per_mwh"].to_numpy(), s)
    return es


def _on_site_periods(inp: _Inputs, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (unique site, period keys) on every (site, period) pair, 0 where absent.

    ``site_periods.merge(frame, how="left").fillna(0.0)``, by an index array (a NaN
    value of ``frame`` becomes 0 too, as with ``fillna``).
    """
    sp = inp.site_periods
    keys = ["site", "period"]
    n = len(sp)
    g = Groups([np.concatenate([sp[k].to_numpy(), frame[k].to_numpy()]) for k in keys])
    pos = np.full(g.n, -1, dtype=np.int64)
    pos[g.ids[n:]] = np.arange(len(frame))
    where = pos[g.ids[:n]]
    out = sp.reset_index(drop=True).copy(deep=False)
    for c in frame.columns:
        if c in keys:
            continue
        v = frame[c].to_numpy(dtype=float)
        got = np.where(where >= 0, v[np.maximum(where, 0)] if len(v) else 0.0, 0.0)
        out[c] = np.where(np.isnan(got), 0.0, got)
    return out


def _site_utilisation_table(
    inp: _Inputs, build_out: pd.DataFrame, energy: pd.DataFrame
) -> pd.DataFrame:
    """Build site_utilisation: one block per site limit family routed here in the registry.

    ``used`` comes from the energy table's load columns, ``capacity`` from the
    build-out capacities or the dataset's grid / water limits (the family's
    ``ResultRows.used`` / ``ResultRows.capacity`` name the columns). Each block is
    every (site, period) pair in ``site_periods`` order.
    """
    sp, model, keys = inp.site_periods, inp.model, ["site", "period"]
    sources = {
        "build_out": build_out,
        "site_grid": inp.ds.table("site_grid"),
        "site_water": inp.ds.table("site_water"),
    }
    blocks: list[dict[str, Any]] = []
    for family in _routed("site_utilisation"):
        result = family.result
        assert result is not None
        used = _gather(model, ("su_used", family.name), sp, energy, result.used, keys)
        src = next((n for n, df in sources.items() if result.capacity in df), None)
        if src is None:
            raise KeyError(result.capacity)
        block: dict[str, Any] = {
            "limit": result.limit,
            "used": np.where(np.isnan(used), 0.0, used),
            "capacity": _gather(
                model, ("su_capacity", family.name), sp, sources[src], result.capacity, keys
            ),
            "unit": family.unit,
        }
        d = family_duals(inp.model, inp.row_dual, inp.scenario, family)
        where = _row_of(model, ("site_utilisation", family.name, inp.scenario), sp, d, keys)
        if where is None:  # keys not unique: the general merge
            f = sp.assign(**block)
            merged = f.merge(d, on=keys, how="left", indicator=True)
            blocks.append({"frame": _zero_where_no_row(merged, "shadow_price_usd_per_unit")})
            continue
        price = d["shadow_price_usd_per_unit"].to_numpy(dtype=float)
        block["shadow_price_usd_per_unit"] = np.where(
            where >= 0, price[np.maximum(where, 0)] if len(price) else 0.0, 0.0
        )
        blocks.append(block)
    out = _stack_site_blocks(sp, blocks)
    capv = out["capacity"].to_numpy(dtype=float)
    out["utilisation"] = np.where(capv > 0, out["used"] / np.where(capv > 0, capv, 1.0), np.nan)
    return out


def _stack_site_blocks(sp: pd.DataFrame, blocks: list[dict[str, Any]]) -> pd.DataFrame:
    """Blocks of columns on ``sp``'s (site, period) rows, one under the other."""
    if any("frame" in b for b in blocks):
        frames = [b["frame"] if "frame" in b else sp.assign(**b) for b in blocks]
        return pd.concat(frames, ignore_index=True)
    n, k = len(sp), len(blocks)
    rows = np.tile(np.arange(n), k)
    out: dict[str, Any] = {c: sp[c].array.take(rows) for c in sp.columns}
    for c in ("limit", "used", "capacity", "unit", "shadow_price_usd_per_unit"):
        parts = [np.broadcast_to(np.asarray(b[c]), (n,)) for b in blocks]
        out[c] = np.concatenate(parts) if parts else np.zeros(0)
    return object_frame(out, index=pd.RangeIndex(n * k))


def _commitment_periods(inp: _Inputs) -> pd.DataFrame:
    """List each commitment row j per horizon period it covers.

    Columns: j, customer, family, period, min_it_mw. Made once per model structure
    and commitments table (a patched ``min_it_mw`` is another table).
    """
    com = inp.model.commitments[inp.scenario]
    return cached_for(
        inp.model,
        ("commitment_periods", inp.scenario),
        (com,),
        lambda: _make_commitment_periods(com.reset_index(drop=True), inp.periods),
    ).copy(deep=False)


def _make_commitment_periods(com: pd.DataFrame, periods: list[str]) -> pd.DataFrame:
    """Compute :func:`_commitment_periods` (``com`` with a fresh 0..n-1 index)."""
    p0 = period_index(periods[0])
    rows = []
    for j, r in com.iterrows():
        t0 = max(period_index(str(r["from_period"])) - p0, 0)
        t1 = min(period_index(str(r["to_period"])) - p0, len(periods) - 1)
        for t in range(t0, t1 + 1):
            rows.append(
                (j, str(r["customer"]), str(r["family"]), periods[t], float(r["min_it_mw"]))
            )
    names = ("customer", "family", "period")
    return rows_frame(rows, {"j": np.int64, **dict.fromkeys(names, object), "min_it_mw": float})


def _commitments_table(inp: _Inputs, assignment: pd.DataFrame) -> pd.DataFrame:
    """Build commitments: committed, delivered and breached IT MW with the shadow price.

    Delivered MW per (customer, family, period) summed as pandas' ``groupby`` does
    (:func:`optimizer.lp.grouping.sums_at`).
    """
    cm = _commitment_periods(inp)
    c = positions(inp.chips.index, assignment["chip"].to_numpy())
    family = take(inp.chips["family"].astype(str).to_numpy(), c)
    target = [cm[k].to_numpy() for k in ("customer", "family", "period")]
    source = [assignment["customer"].to_numpy(), family, assignment["period"].to_numpy()]
    cm["delivered_it_mw"] = sums_at(target, source, assignment["it_mw"].to_numpy())
    br = inp.frames["breach"]
    got = value_at(
        [cm["j"].to_numpy(), cm["period"].to_numpy()],
        [br["j"].to_numpy(), br["period"].to_numpy()],
        br["value"].to_numpy(),
    )
    cm["breach_mw"] = np.where(np.isnan(got), 0.0, got)
    return inp.with_duals(cm, "commitments")


#: Training smaller than this (chips) at a site is solver noise, not a placement.
CLUSTER_CHIPS_MIN = 1e-6


def _training_clusters_table(inp: _Inputs, assignment: pd.DataFrame) -> pd.DataFrame:
    """Build training_clusters: each customer's training per site and period vs its rule.

    Sums per (customer, period, site) and per chip on integer group codes
    (:class:`optimizer.lp.grouping.Groups`, the sums pandas gives).
    """
    a = assignment[assignment["workload"].to_numpy() == "training"]
    keys = ["customer", "period", "site"]
    cols = {k: a[k].to_numpy() for k in [*keys, "chip"]}
    g = Groups([cols[k] for k in keys])
    sums = {c: g.sum(a[c].to_numpy(dtype=float)) for c in ("it_mw", "h100e", "chips")}
    keep = sums["chips"] > CLUSTER_CHIPS_MIN
    t: dict[str, Any] = {k: g.key(i)[keep] for i, k in enumerate(keys)}
    t.update({c: v[keep] for c, v in sums.items()})
    t["chips_by_generation"] = _chips_by_generation(g, cols["chip"], a["chips"])[keep]
    limits = _rule_limits(inp)
    rule = [limits.get((k, p)) for k, p in zip(t["customer"], t["period"], strict=True)]
    for i, c in enumerate(("min_cluster_mw", "min_cluster_h100e", "max_sites")):
        t[c] = np.array([0.0 if r is None else r[i] for r in rule], dtype=float)
    tol = 1e-6
    t["meets_minimum"] = (t["it_mw"] >= t["min_cluster_mw"] * (1 - tol) - tol) & (
        t["h100e"] >= t["min_cluster_h100e"] * (1 - tol) - tol
    )
    kp = Groups([t["customer"], t["period"]])
    t["sites_in_period"] = np.bincount(kp.ids, minlength=kp.n)[kp.ids]
    t["within_max_sites"] = (t["max_sites"] <= 0) | (t["sites_in_period"] <= t["max_sites"])
    order = {p: i for i, p in enumerate(inp.periods)}
    ti = np.array([order.get(p, -1) for p in t["period"]], dtype=np.int64)
    hosted = set(zip(t["customer"], t["site"], ti, strict=True))
    t["cluster_start"] = np.array(
        [
            bool(i > 0) and (k, s, i - 1) not in hosted
            for k, s, i in zip(t["customer"], t["site"], ti, strict=True)
        ],
        dtype=bool,
    )
    t["enforced"] = np.full(len(ti), inp.model.clusters, dtype=bool)
    # customer, period position, site: a stable sort as ``sort_values`` does
    rank = np.lexsort((_rank(t["site"]), ti, _rank(t["customer"])))
    return object_frame({c: np.asarray(v)[rank] for c, v in t.items()})


def _rank(values: np.ndarray) -> np.ndarray:
    """Sorted rank of each text value (equal values, equal ranks)."""
    out: np.ndarray = pd.factorize(values, sort=True)[0]
    return out


def _chips_by_generation(g: Groups, chip: np.ndarray, chips: pd.Series) -> np.ndarray:
    """``"chip:chips;..."`` per group of ``g`` (chips > 1e-6, chip order; NaN: none)."""
    by = Groups([g.ids, chip])
    total = by.sum(chips.to_numpy(dtype=float))
    count = np.round(total).astype(np.int64)
    parts: dict[int, list[str]] = {}
    for p, n, c, v in zip(by.key(0), by.key(1), count, total, strict=True):
        if v > CLUSTER_CHIPS_MIN:
            parts.setdefault(int(p), []).append(f"{n}:{c}")
    out = np.full(g.n, np.nan, dtype=object)
    for p, texts in parts.items():
        out[p] = ";".join(texts)
    return out


def _rule_limits(inp: _Inputs) -> dict[tuple[str, str], tuple[float, float, float]]:
    """``(min_cluster_mw, min_cluster_h100e, max_sites)`` per (customer, period) rule."""
    rules = cluster_rules(inp.ds, inp.periods)
    cols = ("min_cluster_mw", "min_cluster_h100e", "max_sites")
    keys = zip(rules["customer"], rules["period"], strict=True)
    values = zip(*(rules[c].astype(float) for c in cols), strict=True)
    out = dict(zip(keys, values, strict=True))
    if len(out) != len(rules):  # validation rejects overlapping rules of a customer
        raise ValueError("training_clusters: overlapping rules of one customer")
    return out


def fragmentation_message(table: pd.DataFrame, *, exact: bool) -> str:
    """Say which customers' training breaks the cluster rule in an LP-mode plan.

    Parameters
    ----------
    table : DataFrame
        The ``training_clusters`` result table.
    exact : bool
        The solve had exact cluster binaries (then the checker enforces the rule and
        nothing is said).

    Returns
    -------
    str
        E.g. "LP mode: training below the minimum cluster size at 12 site-periods
        (openai 8, anthropic 4) and over max_sites in 3 periods; solve with --clusters
        for the exact rule"; "" when the plan keeps the rule or the solve was exact.
    """
    if exact or table.empty:
        return ""
    small = table[~table["meets_minimum"].astype(bool)]
    over = table[~table["within_max_sites"].astype(bool)].drop_duplicates(["customer", "period"])
    if small.empty and over.empty:
        return ""
    parts = []
    if len(small):
        per = small.groupby("customer").size().sort_values(ascending=False)
        who = ", ".join(f"{k} {n}" for k, n in per.items())
        parts.append(
            f"training below the minimum cluster size at {len(small)} site-periods ({who})"
        )
    if len(over):
        parts.append(f"over max_sites in {len(over)} customer-periods")
    return "LP mode: " + " and ".join(parts) + "; solve with --clusters for the exact rule"


def make_tables(
    model: PlanningModel,
    x: np.ndarray,
    row_dual: np.ndarray | None,
    scenario: int = 0,
    *,
    frames: Mapping[str, pd.DataFrame] | None = None,
    fleet: pd.DataFrame | None = None,
    capacity: pd.DataFrame | None = None,
    tolerance: float | None = None,
) -> dict[str, pd.DataFrame]:
    """Build every result table of one scenario.

    Parameters
    ----------
    model : PlanningModel
    x : ndarray, shape (n_variables,)
        Column values.
    row_dual : ndarray, shape (n_constraints,), or None
        d objective / d rhs per row (zeros used when None).
    scenario : int
    frames : Mapping[str, DataFrame], optional
        ``solution_frames(model, x, scenario)`` when the caller already has them
        (read only, not modified).
    fleet : DataFrame, optional
        ``fleet_values(model.datasets[scenario], frames)`` when the caller already has
        it (read only; the checker of the same solve shares it).
    capacity : DataFrame, optional
        ``site_capacity_table(model.datasets[scenario], frames)`` when the caller
        already has it (read only; shared with the checker likewise).
    tolerance : float, optional
        When given, every quantity column is snapped as
        :func:`optimizer.lp.tidy_numbers.tidy_tables` does with this tolerance (the
        same values, without a second pass over the tables).

    Returns
    -------
    dict of DataFrame
        The tables listed in the module docstring.
    """
    fr = solution_frames(model, x, scenario) if frames is None else frames
    inp = _Inputs(model, x, row_dual, scenario, fr, fleet, capacity)
    out: dict[str, pd.DataFrame] = {}
    out["build_out"] = _build_out_table(inp)
    out["fleet"] = _fleet_table(inp)
    out["production"] = _production_table(inp)
    out["supply_utilisation"] = _supply_utilisation_table(inp)
    out["assignment"] = _assignment_table(inp)
    out["demand"] = _demand_table(inp, out["assignment"])
    out["energy"] = _energy_table(inp)
    out["site_utilisation"] = _site_utilisation_table(inp, out["build_out"], out["energy"])
    out["commitments"] = _commitments_table(inp, out["assignment"])
    _power_tables(inp, out)
    out["costs"] = _with_cash(_costs(model, x, scenario), inp, out)
    out["shadow_prices"] = _shadow_prices(model, x, row_dual, scenario)
    out["training_clusters"] = _training_clusters_table(inp, out["assignment"])
    texts: dict[tuple[str, str], tuple[np.ndarray, Any]] = cached(model, ("texts", scenario), dict)
    return {n: _typed(n, out[n], tolerance, texts) for n in TABLE_COLUMNS}


#: Cash kind of each cost term: capex and opex are cash out; penalties are not cash.
CASH_KIND = {
    "chip_capex": "capex",
    "build_capex": "capex",
    "retrofit_capex": "capex",
    "energy": "opex",
    "unmet_penalty": "none",
    "breach_penalty": "none",
    "grid_upgrade": "capex",
    "onsite_power": "opex",
    "carbon": "opex",
}


def _with_cash(
    costs: pd.DataFrame, inp: _Inputs, tables: Mapping[str, pd.DataFrame]
) -> pd.DataFrame:
    """Add the undiscounted cash view to the costs table.

    ``cash_usd`` per (period, term): chips at their full ``capex_usd_per_chip`` in
    the period they are installed; buildings at ``build_capex_usd_per_mw`` in the
    period they are decided (construction lead time or not); retrofits at
    ``retrofit_capex_usd_per_mw`` in the period they are done; energy as billed
    (undiscounted, initial fleet included); penalties are not cash (0). Initial
    fleet, initial capacity and the pipeline are sunk (no cash).
    """
    chips, sites = inp.chips, inp.sites
    fleet = tables["fleet"]
    chip_cash = fleet["installed_chips"].to_numpy() * take(
        chips["capex_usd_per_chip"].to_numpy(dtype=float),
        positions(chips.index, fleet["chip"].to_numpy()),
    )
    build = tables["build_out"]
    site_pos = positions(sites.index, build["site"].to_numpy())

    def per_mw(column: str) -> np.ndarray:
        if column not in sites:
            return np.zeros(len(build))
        v = take(sites[column].to_numpy(dtype=float), site_pos)
        return np.where(np.isnan(v), 0.0, v)

    periods = pd.Index(inp.periods)

    def by_period(period: pd.Series, values: np.ndarray) -> np.ndarray:
        t = periods.get_indexer(period.to_numpy())
        return group_sum(t[t >= 0], values[t >= 0], len(periods))

    parts = {
        "chip_capex": by_period(fleet["period"], chip_cash),
        "build_capex": by_period(
            build["period"], build["build_mw"].to_numpy() * per_mw("build_capex_usd_per_mw")
        ),
        "retrofit_capex": by_period(
            build["period"], build["retrofit_mw"].to_numpy() * per_mw("retrofit_capex_usd_per_mw")
        ),
    }
    term, t = costs["term"].to_numpy(), costs["t"].to_numpy(dtype=np.int64)
    cash = np.zeros(len(costs))
    for name, per_period in parts.items():
        sel = term == name
        cash[sel] = per_period[t[sel]]
    decisions = tables.get("power_decisions")
    if decisions is not None and len(decisions):
        up = decisions[decisions["kind"] == "grid_upgrade"]
        upgrade = (
            pd.Series(up["mw"].to_numpy() * up["capex_usd_per_mw"].to_numpy())
            .groupby(up["decision_period"].to_numpy())
            .sum()
        )
        sel = term == "grid_upgrade"
        cash[sel] = upgrade.reindex(costs.loc[sel, "period"]).fillna(0.0).to_numpy()
    # on-site power counts as billed (capex rent + fixed + fuel and O&M) and carbon as paid
    opex = np.isin(term, ["energy", "onsite_power", "carbon"])
    cash[opex] = costs["undiscounted_cost_usd"].to_numpy()[opex]
    kind = np.array([CASH_KIND.get(str(x), "none") for x in term], dtype=object)
    return costs.assign(cash_usd=cash, cash_kind=kind)


def _power_tables(inp: _Inputs, out: dict[str, pd.DataFrame]) -> None:
    """Add power_sources and power_decisions; count power beyond the grant in the grid limit.

    When power is a decision (:mod:`optimizer.components.power`) the energy table's cost
    and carbon are the sums over sources, and the grid limit's capacity in
    site_utilisation adds upgrades, firm on-site MW and firm PPA MW to the grant.
    """
    sources = power_sources(inp.ds, inp.frames, out["energy"])
    out["power_sources"] = sources
    out["power_decisions"] = power_decisions(inp.ds, inp.frames)
    extra = extra_facility_mw(inp.ds, sources)
    if extra.empty:
        return
    by = sources.groupby(["site", "period"])[["cost_usd", "carbon_t"]].sum()
    e = out["energy"]
    key = pd.MultiIndex.from_frame(e[["site", "period"]])
    e["energy_cost_usd"] = by["cost_usd"].reindex(key).fillna(0.0).to_numpy()
    e["carbon_t"] = by["carbon_t"].reindex(key).fillna(0.0).to_numpy()
    su = out["site_utilisation"]
    su["capacity"] = su["capacity"].astype(float)
    grid = (su["limit"] == "grid").to_numpy()
    add = extra.set_index(["site", "period"])["extra_mw"]
    key = pd.MultiIndex.from_frame(su.loc[grid, ["site", "period"]])
    extra_mw = np.zeros(len(su))
    extra_mw[grid] = add.reindex(key).fillna(0.0).to_numpy(dtype=float)
    su["capacity"] = su["capacity"].to_numpy(dtype=float) + extra_mw
    capv = su["capacity"].to_numpy(dtype=float)
    su["utilisation"] = np.where(capv > 0, su["used"] / np.where(capv > 0, capv, 1.0), np.nan)


def _costs(model: PlanningModel, x: np.ndarray, scenario: int) -> pd.DataFrame:
    """Cost per (period, term) of :data:`COST_TERMS`, every pair (0 where no term).

    Sums of cost-term and constant rows per (period, term) as pandas' ``groupby``
    gives them (:func:`optimizer.lp.grouping.group_sum`); which rows feed which
    pair is computed once per model structure.
    """
    ds = model.datasets[scenario]
    disc = ds.table("periods")["discount_factor"].to_numpy(dtype=float)
    rows, col, krows, ids = _cost_rows(model, scenario)
    ct, k = model.cost_terms, model.const_terms
    v = ct["coef"].to_numpy(dtype=float)[rows] * np.asarray(x)[col]
    kv = k["value"].to_numpy(dtype=float)[krows]
    T, n = len(model.periods), len(COST_TERMS)
    vals = np.concatenate([v, kv])
    keep = ids >= 0
    u = group_sum(ids[keep], vals[keep], T * n)
    t = np.repeat(np.arange(T), n)
    return object_frame(
        {
            "t": t,
            "term": np.tile(np.asarray(COST_TERMS, dtype=object), T),
            "u": u,
            "period": np.asarray(model.periods, dtype=object)[t],
            "undiscounted_cost_usd": u,
            "cost_usd": u * disc[t],
        }
    )


def _cost_rows(
    model: PlanningModel, scenario: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cost-term rows, their columns, constant rows, and each row's (period, term) pair.

    The pair number is ``t * len(COST_TERMS) + term position`` (-1: a term outside
    :data:`COST_TERMS`), cost-term rows first; once per model structure (a patch
    changes coefficients and constant values, not these rows).
    """

    def make() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        ct, k = model.cost_terms, model.const_terms
        rows = np.flatnonzero((ct["scenario"] == scenario).to_numpy())
        krows = np.flatnonzero((k["scenario"] == scenario).to_numpy())
        term_pos = {term: i for i, term in enumerate(COST_TERMS)}
        n = len(COST_TERMS)

        def pair(frame: pd.DataFrame, sel: np.ndarray) -> np.ndarray:
            pos = np.array([term_pos.get(str(x), -1) for x in frame["term"].to_numpy()[sel]])
            t = frame["t"].to_numpy(dtype=np.int64)[sel]
            return np.where(pos >= 0, t * n + pos, -1).astype(np.int64)

        col = ct["col"].to_numpy(dtype=np.int64)[rows]
        return rows, col, krows, np.concatenate([pair(ct, rows), pair(k, krows)])

    return cached(model, ("cost_rows", scenario), make)


def row_keys(model: PlanningModel, con: pd.DataFrame, scenario: int = 0) -> np.ndarray:
    """Domain key text of constraint rows (e.g. "new_carlisle", "openai/training").

    Each family's ``key_codes`` (:data:`optimizer.components.REGISTRY`) name the codes
    joined by "/"; ``j`` is the commitment's ``customer/family/from_period``.
    """
    fam = con["family"].astype(str).to_numpy()
    out = np.full(len(con), "", dtype=object)
    names = {k: np.asarray(v + ("",), dtype=object) for k, v in model.codes.items()}
    if "j" in con and (con["j"].to_numpy() >= 0).any():
        com = model.commitments[scenario].reset_index(drop=True)
        text = (
            com["customer"].astype(str)
            + "/"
            + com["family"].astype(str)
            + "/"
            + com["from_period"].astype(str)
        )
        names["j"] = np.asarray((*text.to_numpy(dtype=object), ""), dtype=object)
    for family in REGISTRY:
        m = fam == family.name
        if not family.key_codes or not m.any():
            continue
        parts = [names[code][con[code].to_numpy()[m]] for code in family.key_codes]
        key = parts[0]
        for part in parts[1:]:
            # an empty part (the "" demand region group: anywhere) adds no separator
            key = np.where(part == "", key, key + "/" + part)
        out[m] = key
    return out


def _shadow_prices(
    model: PlanningModel, x: np.ndarray, row_dual: np.ndarray | None, scenario: int
) -> pd.DataFrame:
    con = model.constraints
    rows, fixed = _shadow_rows(model, scenario)
    lhs = _shadow_matrix(model, scenario) @ np.asarray(x)
    rhs = con["rhs"].to_numpy(dtype=float)[rows]
    slack = np.where(fixed["le"], rhs - lhs, lhs - rhs)
    w = model.weights[scenario]
    dual = np.zeros(len(rows)) if row_dual is None else row_dual[rows] / (w if w > 0 else 1.0)
    dual = dual + 0.0  # turn -0.0 into 0.0
    unit = _shadow_unit_text(model, scenario)
    return object_frame(
        {
            "family": fixed["family_text"],
            "period": fixed["period_text"],
            "key": fixed["key_text"],
            "shadow_price": dual,
            "unit": unit,
            "slack": slack,
            "binding": slack <= 1e-6 * (1 + np.abs(rhs)),
        }
    )


def _shadow_matrix(model: PlanningModel, scenario: int) -> Any:
    """Return the matrix rows of the shadow_prices table (once per matrix)."""
    rows = _shadow_rows(model, scenario)[0]
    return cached_for(
        model, ("shadow_matrix", scenario), (model.matrix,), lambda: model.matrix[rows]
    )


def _shadow_unit_text(model: PlanningModel, scenario: int) -> Any:
    """Return the unit text of each shadow_prices row (once per supply_resources table)."""
    fixed = _shadow_rows(model, scenario)[1]
    su = model.datasets[scenario].table("supply_resources")
    return cached_for(
        model,
        ("shadow_units", scenario),
        (su,),
        lambda: pd.array(_shadow_units(model, su, fixed), dtype=_TEXT),
    )


def warm_structure(model: PlanningModel) -> None:
    """Do the result tables' per-structure index work before the model is solved.

    The key frames of every decision kind, the rows, matrix, text and units of the
    shadow_prices table, the cost-term rows and the rows of every family whose dual
    lands in a table depend on the model's columns, rows and data only, not on the
    solution (:mod:`optimizer.lp.reuse_cache`): :func:`optimizer.plan.solve.solve_model` runs
    this on a second thread while HiGHS (which releases the GIL) solves a large model,
    and :func:`make_tables` then finds them made.

    Parameters
    ----------
    model : PlanningModel
    """
    for i in range(len(model.datasets)):
        _frame_keys(model, i)
        if model.formulation == "compact":
            _compact_keys(model, i)
        _shadow_matrix(model, i)
        _shadow_unit_text(model, i)
        _cost_rows(model, i)
        for family in REGISTRY:
            if family.result is not None:
                _family_rows(model, i, family)


def _shadow_rows(model: PlanningModel, scenario: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Rows of the shadow_prices table and their fixed columns (once per structure)."""

    def make() -> tuple[np.ndarray, dict[str, np.ndarray]]:
        con = model.constraints
        sel = ((con["scenario"] == scenario) & ~con["family"].isin(DEFINITION_FAMILIES)).to_numpy()
        c = con.loc[sel]
        fixed = {
            "family": c["family"].astype(str).to_numpy(),
            "r": c["r"].to_numpy(),
            "le": (c["sense"] == "<=").to_numpy(),
            "period": np.asarray(model.periods, dtype=object)[c["t"].to_numpy()],
            "key": row_keys(model, c, scenario),
        }
        # the table's text columns, made once: the same for every case of a sweep
        for k in ("family", "period", "key"):
            fixed[f"{k}_text"] = pd.array(fixed[k], dtype=_TEXT)
        return np.flatnonzero(sel), fixed

    return cached(model, ("shadow_rows", scenario), make)


def _shadow_units(
    model: PlanningModel, su: pd.DataFrame, fixed: dict[str, np.ndarray]
) -> np.ndarray:
    """``USD/<unit>`` of each shadow-price row (a supply resource's own unit)."""
    fam = fixed["family"]
    units = (
        np.array([FAMILIES[f] for f in fam], dtype=object)
        if len(fam)
        else np.zeros(0, dtype=object)
    )
    if (fam == "supply_resource").any():
        ru = dict(zip(su["resource"].astype(str), su["unit"].astype(str), strict=True))
        rn = np.asarray(model.codes["r"], dtype=object)[fixed["r"][fam == "supply_resource"]]
        units[fam == "supply_resource"] = [ru.get(x_, "unit") for x_ in rn]
    out: np.ndarray = "USD/" + pd.Series(units, dtype=object).astype(str).to_numpy()
    return out
