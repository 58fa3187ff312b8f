"""The shadow_prices table: every limit row's dual, slack and binding flag, keyed in domain words.

``slack`` is rhs - lhs for ``<=`` rows and lhs - rhs for ``>=`` rows; ``binding`` is
slack <= 1e-6 * (1 + |rhs|). The rows, their matrix, key text and units are made once
per model structure (:mod:`optimizer.lp.reuse_cache`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.components import REGISTRY
from optimizer.components.table_columns import TEXT_DTYPE
from optimizer.lp.frames import column_values
from optimizer.lp.frames import frame as object_frame
from optimizer.lp.reuse_cache import cached, cached_for
from optimizer.plan.model import DEFINITION_FAMILIES, FAMILIES, PlanningModel

__all__ = ["row_keys", "shadow_prices", "warm_shadow_prices"]


def row_keys(model: PlanningModel, con: pd.DataFrame, scenario: int = 0) -> np.ndarray:
    """Domain key text of constraint rows (e.g. "new_carlisle", "openai/training").

    Each family's ``key_codes`` (:data:`optimizer.components.REGISTRY`) name the codes
    joined by "/"; ``j`` is the commitment's ``customer/family/from_period``.
    """
    fam = con["family"].astype(str).to_numpy()
    out = np.full(len(con), "", dtype=object)
    names = {k: np.asarray(v + ("",), dtype=object) for k, v in model.codes.items()}
    if "j" in con and (column_values(con, "j") >= 0).any():
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


def shadow_prices(
    model: PlanningModel, x: np.ndarray, row_dual: np.ndarray | None, scenario: int
) -> pd.DataFrame:
    """Build shadow_prices: every limit row's conditional dual, slack and binding flag.

    Parameters
    ----------
    model : PlanningModel
    x : ndarray, shape (n_variables,)
        Column values.
    row_dual : ndarray, shape (n_constraints,), or None
        d objective / d rhs per row (zeros when None).
    scenario : int

    Returns
    -------
    DataFrame
        ``family, period, key, shadow_price, unit, slack, binding``. In the margin
        mode the objective is cost - revenue, so ``-shadow_price`` is the marginal
        margin (:mod:`optimizer.components.revenue`).
    """
    con = model.constraints
    rows, fixed = _shadow_rows(model, scenario)
    lhs = _shadow_matrix(model, scenario) @ np.asarray(x)
    rhs = column_values(con, "rhs", dtype=float)[rows]
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
    """Return the unit text of each shadow_prices row (once per resource-unit tables)."""
    fixed = _shadow_rows(model, scenario)[1]
    tables = _resource_unit_tables(model.datasets[scenario])
    return cached_for(
        model,
        ("shadow_units", scenario),
        tables,
        lambda: pd.array(_shadow_units(model, tables, fixed), dtype=TEXT_DTYPE),
    )


RESOURCE_UNIT_TABLES = ("supply_resources", "equipment_order_books")
"""Input tables whose ``resource`` rows carry the ``unit`` of a resource-unit family's row
(supply: wafers, stacks; order books: MW, transformers)."""


def _resource_unit_tables(ds: Any) -> tuple[pd.DataFrame, ...]:
    """Return the :data:`RESOURCE_UNIT_TABLES` the dataset has (an optional one may be absent)."""
    out = []
    for name in RESOURCE_UNIT_TABLES:
        try:
            out.append(ds.table(name))
        except KeyError:
            continue
    return tuple(out)


def _shadow_rows(model: PlanningModel, scenario: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Rows of the shadow_prices table and their fixed columns (once per structure)."""

    def make() -> tuple[np.ndarray, dict[str, np.ndarray]]:
        con = model.constraints
        sel = ((con["scenario"] == scenario) & ~con["family"].isin(DEFINITION_FAMILIES)).to_numpy()
        c = con.loc[sel]
        fixed = {
            "family": c["family"].astype(str).to_numpy(),
            "r": column_values(c, "r"),
            "le": (c["sense"] == "<=").to_numpy(),
            "period": np.asarray(model.periods, dtype=object)[column_values(c, "t")],
            "key": row_keys(model, c, scenario),
        }
        # the table's text columns, made once: the same for every case of a sweep
        for k in ("family", "period", "key"):
            fixed[f"{k}_text"] = pd.array(fixed[k], dtype=TEXT_DTYPE)
        return np.flatnonzero(sel), fixed

    return cached(model, ("shadow_rows", scenario), make)


def _shadow_units(
    model: PlanningModel, tables: tuple[pd.DataFrame, ...], fixed: dict[str, np.ndarray]
) -> np.ndarray:
    """``USD/<unit>`` of each shadow-price row.

    A row of a family counted in ``resource unit`` (supply, equipment order books)
    takes its resource's ``unit`` from the input table that defines it (wafers,
    stacks, MW, transformers); the other rows take their family's unit.
    """
    fam = fixed["family"]
    names, at = np.unique(fam, return_inverse=True)  # a few dozen families, each looked up once
    units = np.array([FAMILIES[f] for f in names], dtype=object)[at.ravel()]
    per_resource = units == "resource unit"
    if per_resource.any():
        ru: dict[str, str] = {}
        for t in tables:
            if "unit" in t.columns:
                ru.update(zip(t["resource"].astype(str), t["unit"].astype(str), strict=True))
        rn = np.asarray(model.codes["r"], dtype=object)[fixed["r"][per_resource]]
        units[per_resource] = [ru.get(x_, "unit") for x_ in rn]
    out: np.ndarray = "USD/" + pd.Series(units, dtype=object).astype(str).to_numpy()
    return out


def warm_shadow_prices(model: PlanningModel, scenario: int) -> None:
    """Make the rows, matrix, key text and units of the table before the solve.

    Parameters
    ----------
    model : PlanningModel
    scenario : int
    """
    _shadow_matrix(model, scenario)
    _shadow_unit_text(model, scenario)
