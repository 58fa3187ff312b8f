"""Equipment order books: on-site plant and grid upgrades limited by vendor slots.

Gas turbines are sold out to about 2030 and large power transformers take years, so a
campus's on-site generation and grid upgrades are capped by the slots a vendor class
can deliver, not only by permits. The order books are supply resources of the same
kind as wafers and CoWoS (:mod:`optimizer.components.supply`): a capacity per period
(``equipment_order_books``) and a bill of materials (``power_bill_of_materials``: units
per MW of a technology or upgrade option), drawn in the period the MW come online.

Family ``equipment_order_book`` (resource unit; rows per order book ``r`` and period p)::

    sum_{s,o,d : d + lead_o = p} per_mw[o,r] * (onsite_build[s,o,d] + grid_upgrade[s,o,d]
        + flexible_upgrade[s,o,d] at its own lead) <= capacity[r,p]

A period without a capacity row has no slots (capacity 0), as for wafers. The dual is
USD per unit of the order book in that period (``equipment_orders`` table).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.component import Component, ResultTable
from optimizer.components.plan_context import PlanContext
from optimizer.components.records import ConstraintFamily, ResultRows
from optimizer.components.scenario import ScenarioColumns
from optimizer.components.table_columns import DUAL, F64, PERIOD, STR, col
from optimizer.lp.builder import ModelBuilder
from optimizer.lp.frames import column_values
from optimizer.lp.grouping import value_at
from optimizer.lp.join import merge
from optimizer.lp.violations import violations

__all__ = ["COMPONENT", "order_book_use"]

_PREFIXES = ("onsite:", "upgrade:")


def _bom(ds: Any) -> pd.DataFrame:
    """Bill of materials by source name: ``source, resource, per_mw`` (both prefixes)."""
    try:
        bom = ds.table("power_bill_of_materials")
    except KeyError:
        bom = pd.DataFrame()
    if bom.empty:
        return pd.DataFrame(
            {
                "source": pd.Series([], dtype=object),
                "resource": pd.Series([], dtype=object),
                "per_mw": pd.Series([], dtype=float),
            }
        )
    parts = [
        pd.DataFrame(
            {
                "source": p + bom["technology"].astype(str),
                "resource": bom["resource"].astype(str),
                "per_mw": column_values(bom, "per_mw", dtype=float),
            }
        )
        for p in _PREFIXES
    ]
    return pd.concat(parts, ignore_index=True)


def _draw_columns(columns: ScenarioColumns) -> pd.DataFrame:
    """Power decision columns with their online period: ``s, o, t_on, col``."""
    power = columns.power
    pw = power["data"]
    parts = []
    for kind, options in (("onsite_build", pw.onsite), ("grid_upgrade", pw.upgrades)):
        d = merge(power[kind], options[["s", "o", "lead"]], ["s", "o"])
        parts.append(d.assign(t_on=d["t"] + d["lead"])[["s", "o", "t_on", "col"]])
    flex = power.get("flexible_upgrade")
    if flex is not None and len(flex):
        parts.append(flex.assign(t_on=flex["t"] + flex["flex_lead"])[["s", "o", "t_on", "col"]])
    return pd.concat(parts, ignore_index=True)


def define_equipment_order_book(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Order book: sum per_mw[o,r] * MW coming online in p <= capacity[r,p] (resource unit)."""
    scenario = columns.scenario
    if not columns.power:
        return
    bom = _bom(scenario.dataset)
    if bom.empty:
        return
    names = pd.Index(list(scenario.source_names))
    bom = bom.assign(o=names.get_indexer(column_values(bom, "source")))
    bom = bom[bom["o"] >= 0]
    rnames = pd.Index(list(scenario.resource_names))
    bom = bom.assign(r=rnames.get_indexer(column_values(bom, "resource")))
    draws = merge(_draw_columns(columns), bom[["o", "r", "per_mw"]], "o")
    draws = draws[draws["t_on"] < scenario.n_periods].rename(columns={"t_on": "t"})
    if draws.empty:
        return
    books = scenario.dataset.table("equipment_order_books")
    p0 = list(scenario.dataset.periods)
    cap = pd.DataFrame(
        {
            "r": rnames.get_indexer(books["resource"].astype(str).to_numpy()),
            "t": pd.Index(p0).get_indexer(books["period"].astype(str).to_numpy()),
            "capacity": column_values(books, "capacity", dtype=float),
        }
    )
    keys = merge(draws[["r", "t"]].drop_duplicates(), cap, ["r", "t"], how="left")
    keys = keys.sort_values(["r", "t"]).reset_index(drop=True)
    rows = builder.add_rows(
        "equipment_order_book",
        scenario.index,
        keys,
        "<=",
        keys["capacity"].fillna(0.0).to_numpy(),
    )
    m = merge(draws, keys[["r", "t"]].assign(row=rows), ["r", "t"])
    builder.add_terms(m["row"], m["col"], column_values(m, "per_mw"))


def order_book_use(
    ds: Any, frames: dict[str, pd.DataFrame], data: tuple[pd.DataFrame, pd.DataFrame] | None = None
) -> pd.DataFrame:
    """Order-book units drawn per (resource, period), recomputed from the decisions.

    Parameters
    ----------
    ds : Dataset
    frames : dict of DataFrame
        Decision frames ``onsite_build``, ``grid_upgrade`` and ``flexible_upgrade``
        (``site, source, period, value``; MW decided in the period).
    data : (DataFrame, DataFrame), optional
        ``(_lead_table(ds), _bom(ds))`` when the caller already has them (they read
        the dataset only).

    Returns
    -------
    DataFrame
        ``resource, period, used`` (units of the order book), periods in the horizon.
    """
    periods = list(ds.periods)
    pos = {p: i for i, p in enumerate(periods)}
    lead, bom = (_lead_table(ds), _bom(ds)) if data is None else data
    decided = []
    for kind in ("onsite_build", "grid_upgrade", "flexible_upgrade"):
        f = frames.get(kind)
        if f is not None and len(f):
            decided.append(f.assign(kind=kind))
    empty = pd.DataFrame(
        {
            "resource": pd.Series([], dtype=object),
            "period": pd.Series([], dtype=object),
            "used": pd.Series([], dtype=float),
        }
    )
    if not decided:
        return empty
    d = merge(pd.concat(decided, ignore_index=True), lead, ["kind", "site", "source"])
    t_on = d["period"].map(pos).to_numpy(dtype=np.int64) + column_values(d, "lead", dtype=np.int64)
    d = d.assign(t_on=t_on)
    d = merge(d[d["t_on"] < len(periods)], bom, "source")
    if d.empty:
        return empty
    d = d.assign(period=[periods[t] for t in d["t_on"]], used=d["value"] * d["per_mw"])
    return d.groupby(["resource", "period"], as_index=False)["used"].sum()


def _lead_table(ds: Any) -> pd.DataFrame:
    """Lead time of every power decision: ``kind, site, source, lead`` (periods)."""
    leads = []
    g = ds.table("onsite_generation")
    leads.append(
        pd.DataFrame(
            {
                "kind": "onsite_build",
                "site": g["site"].astype(str),
                "source": "onsite:" + g["technology"].astype(str),
                "lead": column_values(g, "lead_periods", dtype=np.int64),
            }
        )
    )
    up = ds.table("grid_upgrades")
    leads.append(
        pd.DataFrame(
            {
                "kind": "grid_upgrade",
                "site": up["site"].astype(str),
                "source": "upgrade:" + up["option"].astype(str),
                "lead": column_values(up, "lead_periods", dtype=np.int64),
            }
        )
    )
    fx = ds.table("flexible_interconnection")
    leads.append(
        pd.DataFrame(
            {
                "kind": "flexible_upgrade",
                "site": fx["site"].astype(str),
                "source": "upgrade:" + fx["option"].astype(str),
                "lead": column_values(fx, "flexible_lead_periods", dtype=np.int64),
            }
        )
    )
    return pd.concat(leads, ignore_index=True)


#: Dataset tables :func:`_lead_table` and :func:`_bom` read.
_ORDER_DATA = (
    "onsite_generation",
    "grid_upgrades",
    "flexible_interconnection",
    "power_bill_of_materials",
)


def context_order_book_use(ctx: PlanContext) -> pd.DataFrame:
    """:func:`order_book_use` of a plan context, made once per context.

    The lead and bill-of-materials tables read the dataset only: they are kept per model
    structure while their dataset tables are the same objects (:meth:`PlanContext.reuse`).
    """

    def use() -> pd.DataFrame:
        ds = ctx.dataset
        tables = tuple(_table_or_none(ds, n) for n in _ORDER_DATA)
        data = ctx.reuse(("order_book_data",), tables, lambda: (_lead_table(ds), _bom(ds)))
        return order_book_use(ds, ctx.frames, data)

    made: pd.DataFrame = ctx.once("order_book_use", use)
    return made


def _table_or_none(ds: Any, name: str) -> pd.DataFrame | None:
    """``ds.table(name)``, None when the dataset has no such table."""
    try:
        return ds.table(name)
    except KeyError:
        return None


def _capacity(ds: Any) -> pd.DataFrame:
    books = ds.table("equipment_order_books")
    return books[["resource", "period", "capacity", "unit"]].astype(
        {"resource": str, "period": str}
    )


def check_equipment_order_book(inputs: PlanContext) -> pd.DataFrame:
    """Units drawn per order book and period (decided MW x per_mw at online) <= capacity."""
    used = context_order_book_use(inputs)
    m = merge(used, _books(inputs), ["resource", "period"], how="left")
    m = m.fillna({"capacity": 0.0})
    return violations(
        "equipment_order_book",
        m["resource"].astype(str) + "," + m["period"].astype(str),
        m["used"],
        m["capacity"],
        "<=",
        inputs.tolerance,
    )


def _books(ctx: PlanContext) -> pd.DataFrame:
    """:func:`_capacity` of the context's dataset, kept while its order books are unchanged."""
    books = ctx.dataset.table("equipment_order_books")
    made: pd.DataFrame = ctx.reuse(("order_books",), (books,), lambda: _capacity(ctx.dataset))
    return made


def _sorted_books(ctx: PlanContext) -> pd.DataFrame:
    """Return the order books by resource, then period in horizon order (kept while unchanged)."""

    def make() -> pd.DataFrame:
        cap = _capacity(ctx.dataset).reset_index(drop=True)
        pos = {p: i for i, p in enumerate(ctx.periods)}
        cap = cap.assign(_t=cap["period"].map(pos)).sort_values(["resource", "_t"])
        return cap.drop(columns="_t").reset_index(drop=True)

    books = ctx.dataset.table("equipment_order_books")
    made: pd.DataFrame = ctx.reuse(("sorted_order_books", tuple(ctx.periods)), (books,), make)
    return made


def _equipment_orders(ctx: PlanContext) -> pd.DataFrame:
    """Build equipment_orders: units drawn, capacity, utilisation and shadow price.

    One row per order book and period (resource, then period in horizon order); the
    books' rows and order read the dataset only and are kept while it is unchanged.
    """
    m = _sorted_books(ctx)
    used = context_order_book_use(ctx)
    got = np.zeros(len(m))
    if len(used) and len(m):
        at = value_at(
            [m["resource"], m["period"]],
            [used["resource"], used["period"]],
            column_values(used, "used", dtype=float),
        )
        got = np.where(np.isnan(at), 0.0, at)
    c = column_values(m, "capacity", dtype=float)
    out = {k: m[k].to_numpy() for k in ("resource", "period", "unit")}
    out["used"] = got
    out["capacity"] = c
    out["utilisation"] = np.where(c > 0, got / np.where(c > 0, c, 1.0), np.nan)
    return ctx.with_duals(pd.DataFrame(out), "equipment_orders")


EQUIPMENT_ORDERS = ResultTable(
    "equipment_orders",
    (
        col(
            "resource", STR, "", "Order-book ID (vendor class of turbines, engines, transformers)."
        ),
        PERIOD,
        col("unit", STR, "", "The order book's unit (MW, transformers)."),
        col("used", F64, "resource unit", "Units delivered for capacity coming online."),
        col("capacity", F64, "resource unit", "Units the vendor class can deliver."),
        col("utilisation", F64, "share", "used / capacity (0-1; NaN when capacity is 0)."),
        col(
            "shadow_price_usd_per_unit",
            F64,
            "USD per resource unit",
            DUAL + "per unit of the order book.",
        ),
    ),
    build=_equipment_orders,
)

FAMILIES = (
    ConstraintFamily(
        "equipment_order_book",
        "resource unit",
        define_equipment_order_book,
        check_equipment_order_book,
        "equipment order book {key} in {period} short by {amount} units "
        "(no vendor slot for the plant or upgrade the plan needs)",
        "units",
        ("r",),
        result=ResultRows("equipment_orders", "shadow_price_usd_per_unit", ("r", "t")),
        summary_words="equipment order book {0}",
        limit=True,
    ),
)

COMPONENT = Component("equipment", families=FAMILIES, tables=(EQUIPMENT_ORDERS,))
