"""Row duals of a solved plan on the result tables' keys (each family's shadow price).

Sign convention: :mod:`optimizer.plan.pipeline`; duals are divided by the scenario's
probability (conditional duals). A family with ``result`` routing
(:class:`~optimizer.components.records.ResultRows`) gets its dual in a domain table besides
``shadow_prices``; the row ids of each family are found once per model structure.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.components import REGISTRY
from optimizer.components.key_match import row_of, zero_where_no_row
from optimizer.components.records import ConstraintFamily
from optimizer.lp.dimensions import CODE_NAMES
from optimizer.lp.frames import frame as object_frame
from optimizer.lp.reuse_cache import cached
from optimizer.plan.model import PlanningModel

__all__ = ["RowDuals", "family_duals", "family_rows"]


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
    _, keys = family_rows(model, scenario, family)
    out: dict[str, Any] = dict(keys)
    out[family.result.dual_column] = _dual_values(model, row_dual, scenario, family)
    return object_frame(out)


def _dual_values(
    model: PlanningModel, row_dual: np.ndarray | None, scenario: int, family: ConstraintFamily
) -> np.ndarray:
    """Return the dual column of ``family_duals`` alone (row duals / scenario weight, no -0.0)."""
    rows, _ = family_rows(model, scenario, family)
    w = model.weights[scenario]
    dual = np.zeros(len(rows)) if row_dual is None else row_dual[rows] / (w if w > 0 else 1.0)
    out: np.ndarray = dual + 0.0  # turn -0.0 into 0.0
    return out


def _key_frame(model: PlanningModel, scenario: int, family: ConstraintFamily) -> pd.DataFrame:
    """Return the key columns of ``family_duals`` (once per model structure; read only)."""
    return cached(
        model,
        ("family_key_frame", family.name, scenario),
        lambda: object_frame(dict(family_rows(model, scenario, family)[1])),
    )


def family_rows(
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
        keys = [CODE_NAMES[c] for c in family.result.keys]
        key_frame = _key_frame(model, scenario, family)
        where = row_of(model, (table, family.name, scenario), frame, key_frame, keys)
        if where is None:  # keys not unique: the general merge
            d = family_duals(model, row_dual, scenario, family)
            merged = frame.merge(d, on=keys, how="left", indicator=True)
            frame = zero_where_no_row(merged, family.result.dual_column)
            continue
        price = _dual_values(model, row_dual, scenario, family)
        frame = frame.reset_index(drop=True)
        frame[family.result.dual_column] = np.where(
            where >= 0, price[np.maximum(where, 0)] if len(price) else 0.0, 0.0
        )
    return frame


def _names(model: PlanningModel, code: str, v: pd.Series) -> np.ndarray:
    return np.asarray(model.codes[code], dtype=object)[v.to_numpy(dtype=np.int64)]


class RowDuals:
    """The row duals of one scenario as the result tables read them.

    Parameters
    ----------
    model : PlanningModel
    row_dual : ndarray, shape (n_constraints,), or None
        d objective / d rhs per row (zeros when None).
    scenario : int
    """

    def __init__(self, model: PlanningModel, row_dual: np.ndarray | None, scenario: int) -> None:
        self.model, self.row_dual, self.scenario = model, row_dual, scenario

    def merge(self, frame: pd.DataFrame, table: str) -> pd.DataFrame:
        """Return ``frame`` with the dual column of every family routed to ``table``."""
        return _merge_duals(frame, self.model, self.row_dual, self.scenario, table)

    def routed(self, table: str) -> list[ConstraintFamily]:
        """Return the families whose dual lands in ``table``, in registry order."""
        return _routed(table)

    def family(self, family: ConstraintFamily) -> pd.DataFrame:
        """Return one family's conditional duals (:func:`family_duals`)."""
        return family_duals(self.model, self.row_dual, self.scenario, family)

    def site_period(self, name: str) -> pd.DataFrame:
        """Return the conditional duals of family ``name`` keyed by site and period.

        For a family without result routing whose rows are keyed ``s, t`` (such as
        ``grid_energy``): ``site, period, dual`` (USD per the family's unit), one row
        per row of the family in this scenario (row ids found once per structure).
        """

        def make() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            con = self.model.constraints
            sel = ((con["family"] == name) & (con["scenario"] == self.scenario)).to_numpy()
            site = _names(self.model, "s", con.loc[sel, "s"])
            t = con.loc[sel, "t"].to_numpy(dtype=np.int64)
            return np.flatnonzero(sel), site, np.asarray(self.model.periods, dtype=object)[t]

        rows, site, period = cached(self.model, ("site_period_rows", name, self.scenario), make)
        w = self.model.weights[self.scenario]
        dual = np.zeros(len(rows)) if self.row_dual is None else self.row_dual[rows] / (w or 1.0)
        return object_frame({"site": site, "period": period, "dual": dual + 0.0})

    def attach(
        self, rows: pd.DataFrame, block: dict[str, Any], family: ConstraintFamily
    ) -> dict[str, Any]:
        """Return ``block`` (columns on ``rows``) with the family's shadow price added.

        Keys with no row of the family get 0; when the family's keys repeat, the block
        becomes a general merge (``{"frame": ...}``).
        """
        assert family.result is not None
        column = family.result.dual_column
        keys = [CODE_NAMES[c] for c in family.result.keys]
        key_frame = _key_frame(self.model, self.scenario, family)
        where = row_of(
            self.model, (family.result.table, family.name, self.scenario), rows, key_frame, keys
        )
        if where is None:  # keys not unique: the general merge
            d = self.family(family)
            merged = rows.assign(**block).merge(d, on=keys, how="left", indicator=True)
            return {"frame": zero_where_no_row(merged, column)}
        price = _dual_values(self.model, self.row_dual, self.scenario, family)
        priced = np.where(where >= 0, price[np.maximum(where, 0)] if len(price) else 0.0, 0.0)
        return {**block, column: priced}
