"""Tidy result tables of a solved plan, computed from decision values and the dataset.

Every table is long and tidy; text columns are ``str``, numbers ``float64`` (chips
too, as the LP is continuous), ``binding`` is bool. Tables always carry their columns,
even when empty. The tables are computed from the decision values mapped to domain
keys (:func:`solution_frames`) and the dataset, not from the LP rows; shadow prices
come from the row duals (sign convention: :mod:`optimizer.plan.pipeline`).

Tables and columns (contract with the report writer)
----------------------------------------------------
Each table is declared once, with every column's dtype, unit and meaning, by the part
of the plan that owns it (:data:`optimizer.components.tables.SOLUTION_TABLES`; the list
at the end of this docstring is made from those records). A table whose record has a
``build`` is filled from the plan context
(:class:`~optimizer.components.plan_context.PlanContext`, the quantities the checker
reads too); costs (:mod:`optimizer.plan.cost_tables`) and shadow_prices
(:mod:`optimizer.plan.shadow_prices`) are read from the LP's cost rows and row duals.

Utilisation is used / capacity (NaN when the capacity is 0). ``slack`` is
rhs - lhs for ``<=`` rows and lhs - rhs for ``>=`` rows; ``binding`` is
slack <= 1e-6 * (1 + |rhs|).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from optimizer.components import REGISTRY
from optimizer.components.key_match import (
    reused_text,
)
from optimizer.components.plan_context import PlanContext, TableBuilder
from optimizer.components.region import split_region_service
from optimizer.components.registry import MappingView, Registry, active
from optimizer.components.table_columns import TEXT_DTYPE, column_names, is_flag, is_text
from optimizer.components.tables import SOLUTION_TABLES
from optimizer.lp.dimensions import CODE_NAMES
from optimizer.lp.frames import block_frame, column_array, column_values, indexed, object_column
from optimizer.lp.frames import frame as object_frame
from optimizer.lp.reuse_cache import cached
from optimizer.lp.tidy_numbers import snap_arrays
from optimizer.plan.cost_tables import cost_rows, costs_table
from optimizer.plan.model import PlanningModel
from optimizer.plan.row_duals import RowDuals, family_rows
from optimizer.plan.shadow_prices import shadow_prices, warm_shadow_prices

#: Columns of each result table, in order (the schemas of
#: :data:`optimizer.components.tables.SOLUTION_TABLES`).
TABLE_COLUMNS: MappingView[tuple[str, ...]] = MappingView(
    lambda r: r.memo("table_columns", lambda _: {t.name: column_names(t) for t in SOLUTION_TABLES})
)


def _table_list() -> str:
    """Return the docstring list of the tables: name, owning module, columns (unit)."""
    lines = []
    for table in SOLUTION_TABLES:
        owner = table.build.__module__ if table.build else "optimizer.components.plan_tables"
        cols = ", ".join(f"{c.name} ({c.unit})" if c.unit else c.name for c in table.columns)
        lines.append(f"* {table.name} (:mod:`{owner}`): {cols}")
    return "\n\nThe tables\n----------\n" + "\n".join(lines) + "\n"


__doc__ = (__doc__ or "") + _table_list()


#: Kind of each table's columns: "text", "flag" or "number" (float64).
def _column_kinds(r: Registry) -> dict[str, tuple[str, ...]]:
    return {
        t.name: tuple(
            "text" if is_text(c) else "flag" if is_flag(c) else "number" for c in t.columns
        )
        for t in SOLUTION_TABLES
    }


_KINDS: MappingView[tuple[str, ...]] = MappingView(lambda r: r.memo("column_kinds", _column_kinds))

_ZERO = 1e-9

_FLEET_KEYS = ("chip", "site", "period")


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
    for c, kind in zip(cols, _KINDS[name], strict=True):
        col = column_array(df, c) if c in present else None
        if kind == "text":
            if col is not None and col.dtype == TEXT_DTYPE:
                data[c] = col  # already text: the same cells (astype(str) keeps NaN)
            else:
                # text once (str(x) of every cell, as a text column of the table schema)
                v = np.asarray(col) if col is not None else np.full(n, np.nan)
                data[c] = reused_text(v, texts, (name, c))
            continue
        v = np.asarray(col) if col is not None else np.full(n, np.nan)
        data[c] = np.asarray(v, dtype=bool if kind == "flag" else np.float64)
    if tolerance is not None and n:
        snap_arrays(data, tolerance)  # no -0.0, no -1e-10 chips (optimizer.lp.tidy_numbers)
    # one construction from arrays, a block per dtype (no alignment, no inference)
    return block_frame({c: data[c] for c in cols}, n)


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
    val = np.asarray(x, dtype=float) * column_values(model.variables, "scale")
    out: dict[str, pd.DataFrame] = {}
    for k, (cols, keys) in _frame_keys(model, scenario).items():
        out[k] = block_frame({**keys, "value": val[cols]}, len(cols))  # keys copied
    _add_compact_frames(model, x, scenario, out)  # value-dependent split: every time
    return out


def _frame_keys(
    model: PlanningModel, scenario: int
) -> dict[str, tuple[np.ndarray, dict[str, np.ndarray]]]:
    """Columns of each decision kind and their domain key arrays (once per model structure)."""
    return cached(model, ("frame_keys", scenario), lambda: _make_frame_keys(model, scenario))


def _make_frame_keys(
    model: PlanningModel, scenario: int
) -> dict[str, tuple[np.ndarray, dict[str, np.ndarray]]]:
    """Compute :func:`_frame_keys` (column ids, then key arrays, per decision kind)."""
    var = model.variables
    sc = column_values(var, "scenario")
    kind = column_values(var, "kind")
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
        "onsite_retire": (("site", "s"), ("source", "o")),
        "flexible_upgrade": (("site", "s"), ("source", "o")),
        "power_energy": (("site", "s"), ("source", "o")),
        "cluster": (("customer", "k"), ("site", "s")),
        "cluster_start": (("customer", "k"), ("site", "s")),
    }
    spec.update(_added_kinds(spec))
    for k, cols in spec.items():
        sel = (kind == k) & ((sc == -1) | (sc == scenario))
        v = var.loc[sel]
        keys = {name: names[code][v[code].to_numpy()] for name, code in cols}
        keys["period"] = per[column_values(v, "t")]
        out[k] = (np.flatnonzero(sel), keys)
    sel = (kind == "breach") & (sc == scenario)
    v = var.loc[sel]
    com = model.commitments[scenario].reset_index(drop=True)
    j = column_values(v, "j")
    out["breach"] = (
        np.flatnonzero(sel),
        {
            "j": j,
            "customer": com["customer"].astype(str).to_numpy()[j],
            "family": com["family"].astype(str).to_numpy()[j],
            "from_period": com["from_period"].astype(str).to_numpy()[j],
            "period": per[column_values(v, "t")],
        },
    )
    return out


def _added_kinds(spec: Mapping[str, object]) -> dict[str, tuple[tuple[str, str], ...]]:
    """Key columns of every registered kind a component adds with its own hook.

    A kind's ``keys`` (``"c/s/t"``) name its index letters; each becomes its domain
    column (:data:`optimizer.lp.dimensions.CODE_NAMES`) and ``t`` the ``period``.
    """
    return {
        kind.name: tuple((CODE_NAMES[c], c) for c in kind.keys.split("/") if c != "t")
        for component in active().components
        for kind in component.columns
        if kind.add is not None and kind.name not in spec
    }


def _add_compact_frames(
    model: PlanningModel, x: np.ndarray, scenario: int, out: dict[str, pd.DataFrame]
) -> None:
    """Compact formulation: add ``busy``, ``serve`` and the pools, and their split to ``assign``."""
    if model.formulation != "compact":
        return
    val = np.asarray(x, dtype=float) * column_values(model.variables, "scale")
    for k, (cols, keys) in _compact_keys(model, scenario).items():
        out[k] = block_frame({**keys, "value": val[cols]}, len(cols))  # keys copied
    direct = out["serve"]
    direct["pool"] = object_column(np.full(len(direct), "", dtype=object))
    pooled = _spread_pools(model, scenario, val)
    out["serve"] = pd.concat([direct, pooled], ignore_index=True) if len(pooled) else direct
    region = indexed(model.datasets[scenario].table("sites"), "site")["region"]
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
        sc, kind = column_values(var, "scenario"), column_values(var, "kind")
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
            "chip": names["c"][column_values(m, "c")],
            "region": names["e"][column_values(m, "e")],
            "customer": names["k"][column_values(m, "k")],
            "workload": names["w"][column_values(m, "w")],
            "demand_regions": names["g"][column_values(m, "g")],
            "period": per[column_values(m, "t")],
            "pool": names["q"][column_values(m, "q")] if len(m) else np.zeros(0, dtype=object),
        }
        return (
            column_values(m, "ps_col"),
            column_values(m, "pd_col"),
            column_values(m, "gid"),
            len(groups),
            column_values(pdw, "pd_col"),
            np.asarray(draw_gid),
            keys,
        )

    return cached(model, ("pool_pairs", scenario), make)


def _compact_keys(
    model: PlanningModel, scenario: int
) -> dict[str, tuple[np.ndarray, dict[str, np.ndarray]]]:
    """Columns and domain key arrays of the compact kinds (once per model structure)."""

    def make() -> dict[str, tuple[np.ndarray, dict[str, np.ndarray]]]:
        var = model.variables
        sc, kind = column_values(var, "scenario"), column_values(var, "kind")
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
            keys["period"] = per[column_values(v, "t")]
            made[k] = (np.flatnonzero(sel), keys)
        return made

    return cached(model, ("compact_keys", scenario), make)


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
    context: PlanContext | None = None,
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
    context : PlanContext, optional
        :func:`plan_context` of the same arguments when the caller already has it (the
        checker of the same solve reads it too: the derived quantities are made once);
        ``frames``, ``fleet`` and ``capacity`` are then not used.

    Returns
    -------
    dict of DataFrame
        The tables of :data:`optimizer.components.tables.SOLUTION_TABLES`, in order.
    """
    ctx = context or plan_context(
        model, x, row_dual, scenario, frames, fleet=fleet, capacity=capacity
    )
    texts: dict[tuple[str, str], tuple[np.ndarray, Any]] = cached(model, ("texts", scenario), dict)
    return {t.name: _typed(t.name, ctx.table(t.name), tolerance, texts) for t in SOLUTION_TABLES}


def plan_context(
    model: PlanningModel,
    x: np.ndarray,
    row_dual: np.ndarray | None,
    scenario: int = 0,
    frames: Mapping[str, pd.DataFrame] | None = None,
    *,
    fleet: pd.DataFrame | None = None,
    capacity: pd.DataFrame | None = None,
    tolerance: float = 1e-6,
) -> PlanContext:
    """Return the plan context of one scenario's solution: what the tables and checker read.

    Parameters
    ----------
    model : PlanningModel
    x : ndarray, shape (n_variables,)
        Column values.
    row_dual : ndarray, shape (n_constraints,), or None
        d objective / d rhs per row (zeros used when None).
    scenario : int
    frames : Mapping[str, DataFrame], optional
        ``solution_frames(model, x, scenario)`` when the caller already has them.
    fleet, capacity : DataFrame, optional
        The fleet and the capacity online of ``frames`` when the caller has them.
    tolerance : float
        Relative tolerance of the checks
        (:func:`optimizer.plan.check.check_frames`).

    Returns
    -------
    PlanContext
        With the row duals and the builders of every result table.
    """
    fr = solution_frames(model, x, scenario) if frames is None else frames
    return PlanContext(
        model.datasets[scenario],
        fr,
        fleet,
        tolerance,
        capacity=capacity,
        cache=model,
        duals=RowDuals(model, row_dual, scenario),
        commitments=model.commitments[scenario],
        scenario=scenario,
        exact_clusters=model.clusters,
        builders={**_BUILDERS, **_centre_builders(model, x, row_dual, scenario)},
    )


#: ``build(context)`` of each table a component fills from the plan context.
_BUILDERS: MappingView[TableBuilder] = MappingView(
    lambda r: r.memo(
        "table_builders", lambda _: {t.name: t.build for t in SOLUTION_TABLES if t.build}
    )
)


def _centre_builders(
    model: PlanningModel, x: np.ndarray, row_dual: np.ndarray | None, scenario: int
) -> dict[str, TableBuilder]:
    """Builders of the tables read from the LP itself (cost terms, row duals and slacks)."""
    return {
        "costs": lambda ctx: costs_table(model, x, scenario, ctx),
        "shadow_prices": lambda ctx: shadow_prices(model, x, row_dual, scenario),
    }


def warm_structure(model: PlanningModel) -> None:
    """Do the result tables' per-structure index work before the model is solved.

    The key frames of every decision kind, the rows, matrix, text and units of the
    shadow_prices table, the cost-term rows and the rows of every family whose dual
    lands in a table depend on the model's columns, rows and data only, not on the
    solution (:mod:`optimizer.lp.reuse_cache`): :func:`optimizer.plan.pipeline.solve_model` runs
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
        warm_shadow_prices(model, i)
        cost_rows(model, i)
        for family in REGISTRY:
            if family.result is not None:
                family_rows(model, i, family)
