"""Model patching for batch reuse: which data changes a base model absorbs, and the patchers.

Most sweep cases differ from their base scenario only in data *values*. With
``reuse=True`` each worker builds the base scenario's :class:`PlanningModel` once
(cached per process, :mod:`optimizer.analysis.batch_case`) and, for each case, patches
the arrays that the changed values feed (:func:`patch_model`) instead of rebuilding the
model:

=====================================  ============================================
changed input                          patched
=====================================  ============================================
supply_resources.capacity              rhs of ``supply_resource`` rows
demand.demand_h100e (same >0 pattern)  rhs of ``demand_balance`` rows
site_grid.grid_mw                      rhs of ``site_grid`` and
                                       ``flexible_inference_sla`` rows (by the change)
                                       and of the power families' ``grid_energy`` rows
site_water.water_permit_m3             rhs of ``site_water`` rows (by the change)
commitments.min_it_mw (same pattern)   rhs of ``commitment`` rows
customers.unmet_penalty_usd_...        cost of ``unmet`` columns
commitments.breach_penalty_usd_per_mw  cost of ``breach`` columns
sites.energy_price_usd_per_mwh         grid-priced ``energy`` cost terms (per site
                                       ratio; a PPA's stay at its contract price;
                                       the initial-fleet constant needs one ratio
                                       for every site)
eligibility.derate                     matrix entries of ``assign`` columns in
                                       ``demand_balance`` rows
columns the LP never reads             nothing: the model keeps the new dataset,
(:data:`optimizer.plan.model.               which the result tables read
LP_UNREAD_COLUMNS`: customer prices,
display names, the calibration
record, sources)
=====================================  ============================================

Any other change (PUE, WUE, carbon intensities, shifts of period labels, a value moving
to or from zero, added or removed rows ...) falls back to
:func:`optimizer.plan.model.build_model`. The unread list is declared beside the builder and
held to it by ``tests/test_reuse_columns.py``: a recorder of the columns builds read
fails when a declared-unread column is read (or a column not declared is never read),
and a perturbation of every numeric input column, solved from a patched model and from
a rebuild, must give the same objective and result tables. A patched model equals the
rebuilt one array for array (``tests/test_batch.py`` checks it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from capacity.schema import SPECS, TABLE_NAMES
from optimizer.components.key_match import same_memory
from optimizer.components.power_inputs import PPA_PREFIX
from optimizer.lp.frames import column_array, column_values
from optimizer.lp.reuse_cache import cached, patched_from

__all__ = ["patch_model"]


def _changed_columns(a: pd.DataFrame, b: pd.DataFrame, key: Sequence[str]) -> list[str] | None:
    """Columns whose values differ between two frames with the same rows; None if rows differ."""
    if a is b:
        return []
    if len(a) != len(b) or list(a.columns) != list(b.columns):
        return None
    for k in key:
        if not _same_column(a, b, k):
            return None
    out = []
    for c, ta, tb in zip(a.columns, a.dtypes, b.dtypes, strict=True):
        if ta.kind == "f" and tb.kind == "f":
            x, y = column_values(a, c), column_values(b, c)
            if not np.array_equal(x, y, equal_nan=True):
                out.append(c)
        elif not _same_column(a, b, c):
            out.append(c)
    return out


def _same_column(a: pd.DataFrame, b: pd.DataFrame, column: str) -> bool:
    """Return True when column ``column`` of ``a`` and ``b`` reads the same as text.

    A column both frames hold in the same memory (a table copied without a change to
    it) is the same without a comparison.
    """
    x, y = column_array(a, column), column_array(b, column)
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.dtype == y.dtype:
        if x is y or (x.shape == y.shape and same_memory(x, y)):
            return True
    return _same_text(a[column], b[column])


def _same_text(a: pd.Series, b: pd.Series) -> bool:
    """Return True when two columns read the same as text (equal values need no text)."""
    if a is b or (a.dtype == b.dtype and a.equals(b)):
        return True
    return bool((a.astype(str).to_numpy() == b.astype(str).to_numpy()).all())


def _codes_of(values: pd.Series, ids: Sequence[str]) -> np.ndarray:
    return pd.Index(list(ids)).get_indexer(values.astype(str).to_numpy()).astype(np.int64)


def _row_lookup(con: pd.DataFrame, family: str, cols: Sequence[str]) -> pd.DataFrame:
    sel = con.index[(con["family"] == family).to_numpy()]
    df = con.loc[sel, list(cols)].copy()
    df["row"] = sel.to_numpy()
    return df


def patch_model(model: Any, base_ds: Any, ds: Any) -> Any | None:
    """Return ``model`` (built from ``base_ds``) patched to represent ``ds``, or None.

    Parameters
    ----------
    model : optimizer.plan.model.PlanningModel
        Deterministic model built by ``build_model(base_ds)`` (one scenario, LP).
    base_ds, ds : Dataset
        The dataset the model was built from, and the one wanted.

    Returns
    -------
    PlanningModel or None
        A new model whose rhs, costs and matrix equal ``build_model(ds)``'s; None when
        the change is not one this function can patch (see the module docstring) —
        the caller then rebuilds. A margin-mode model is patched only when the data
        are unchanged (its revenue reads prices and demand, which no patcher updates).
    """
    margin = getattr(model, "objective", "cost") == "margin"
    if margin and base_ds.hash != ds.hash:
        return None
    if (
        len(model.datasets) != 1
        or model.integer_units
        or getattr(model, "clusters", False)
        or ds.periods != base_ds.periods
    ):
        return None
    changes = _data_changes(base_ds, ds)
    if changes is None:
        return None
    if not changes:
        same = dataclasses.replace(model, datasets=(ds,), commitments=(ds.table("commitments"),))
        patched_from(same, model)
        return same
    patch = _ModelPatch(model)
    for t, cols in changes.items():
        old, new = base_ds.table(t), ds.table(t)
        for c in cols:
            if not _PATCHERS[(t, c)](patch, old, new, c):
                return None
    return patch.finish(ds)


def _data_changes(base_ds: Any, ds: Any) -> dict[str, list[str]] | None:
    """Return the changed columns per table that the LP reads (None: not patchable).

    A change to a column of :data:`optimizer.plan.model.LP_UNREAD_COLUMNS` (and any change,
    rows included, to a table of :data:`optimizer.plan.model.LP_UNREAD_TABLES`) leaves the
    model as it is: the result tables read such columns from the model's dataset,
    which the patched model carries (the new one). Any other changed column must have
    a patcher (:data:`_PATCHERS`), else the model is rebuilt.
    """
    from optimizer.plan.model import LP_UNREAD_COLUMNS, LP_UNREAD_TABLES

    changes: dict[str, list[str]] = {}
    for t in TABLE_NAMES:
        if t in LP_UNREAD_TABLES:
            continue
        cols = _changed_columns(base_ds.table(t), ds.table(t), SPECS[t].key)
        if cols is None:
            return None
        cols = [c for c in cols if (t, c) not in LP_UNREAD_COLUMNS]
        if any((t, c) not in _PATCHABLE for c in cols):
            return None
        if cols:
            changes[t] = cols
    return changes


class _ModelPatch:
    """The parts of a PlanningModel a data change rewrites: rhs, cost terms, matrix.

    One method per patchable ``(table, column)`` (see :data:`_PATCHERS`); each takes
    the old and new table and returns False when the change cannot be patched (the
    caller then rebuilds the model).
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self.codes = model.codes
        self.periods = pd.Index(list(model.periods))
        self.con = model.constraints
        self.rhs = self.con["rhs"].to_numpy(dtype=float).copy()
        self.var = model.variables
        self.cost_terms = model.cost_terms.copy()
        self.const_terms = model.const_terms.copy()
        self.matrix = model.matrix

    def _tidx(self, s: pd.Series) -> np.ndarray:
        return self.periods.get_indexer(s.astype(str).to_numpy())

    def _set_rows(
        self,
        family: str,
        keycols: list[str],
        keys: Callable[[], pd.DataFrame],
        values: np.ndarray,
        delta: bool,
        table: str,
    ) -> None:
        """Set (or add to) the rhs of ``family`` rows from the rows of input ``table``.

        Which LP row each table row feeds depends only on the model's rows and the
        table's keys, which a patchable change leaves alone (:func:`_data_changes`):
        it is computed once per base model (:func:`optimizer.lp.reuse_cache.cached`).
        """

        def match() -> tuple[np.ndarray, np.ndarray]:
            look = _row_lookup(self.con, family, keycols)
            k = keys().assign(_pos=np.arange(len(values)))
            m = look.merge(k, on=keycols, how="inner")
            return m["row"].to_numpy(), m["_pos"].to_numpy()

        rows, pos = cached(self.model, ("patch_rows", family, table), match)
        if delta:
            np.add.at(self.rhs, rows, values[pos])
        else:
            self.rhs[rows] = values[pos]

    def _term_cols(self, term: str, index: str) -> tuple[np.ndarray, np.ndarray]:
        """Rows of ``cost_terms`` of one term, and the ``index`` code of their column."""
        sel = (self.cost_terms["term"] == term).to_numpy()
        cols = self.cost_terms.loc[sel, "col"].to_numpy(np.int64)
        return sel, self.var[index].to_numpy()[cols]

    def supply_capacity(self, old: pd.DataFrame, new: pd.DataFrame, c: str) -> bool:
        """``supply_resources.capacity``: rhs of ``supply_resource`` rows."""

        def keys() -> pd.DataFrame:
            return pd.DataFrame(
                {"r": _codes_of(new["resource"], self.codes["r"]), "t": self._tidx(new["period"])}
            )

        values = new[c].to_numpy(float)
        self._set_rows("supply_resource", ["r", "t"], keys, values, False, "supply_resources")
        return True

    def demand(self, old: pd.DataFrame, new: pd.DataFrame, c: str) -> bool:
        """``demand.demand_h100e``: rhs of ``demand_balance`` rows (same cells > 0)."""
        if not np.array_equal(old[c].to_numpy() > 0, new[c].to_numpy() > 0):
            return False

        def keys() -> pd.DataFrame:
            regions = new["regions"] if "regions" in new else pd.Series("", index=new.index)
            return pd.DataFrame(
                {
                    "k": _codes_of(new["customer"], self.codes["k"]),
                    "w": _codes_of(new["workload"], self.codes["w"]),
                    "g": _codes_of(regions.fillna("").astype(str).str.strip(), self.codes["g"]),
                    "t": self._tidx(new["period"]),
                }
            )

        keycols = ["k", "w", "g", "t"]
        self._set_rows("demand_balance", keycols, keys, new[c].to_numpy(float), False, "demand")
        return True

    def site_limit(self, old: pd.DataFrame, new: pd.DataFrame, c: str) -> bool:
        """``site_grid.grid_mw`` / ``site_water.water_permit_m3``: rhs moves by the change.

        A grid level also sets the rhs of the power families' ``grid_energy`` rows
        (``grid_mw * hours``) and moves the inference SLA's firm supply by the change. A
        limit that is or becomes open (NaN, no row) rebuilds.
        """
        if not (np.isfinite(new[c].to_numpy(float)).all() and np.isfinite(old[c]).all()):
            return False
        fam = "site_grid" if c == "grid_mw" else "site_water"

        def keys() -> pd.DataFrame:
            return pd.DataFrame(
                {"s": _codes_of(new["site"], self.codes["s"]), "t": self._tidx(new["period"])}
            )

        d = new[c].to_numpy(float) - old[c].to_numpy(float)
        self._set_rows(fam, ["s", "t"], keys, d, True, fam)
        if c == "grid_mw":  # the firm supply of the inference SLA moves with the grid
            self._set_rows("flexible_inference_sla", ["s", "t"], keys, d, True, fam)
            hours = self.model.datasets[0].table("periods")["hours"].to_numpy(float)
            t = np.clip(keys()["t"].to_numpy(), 0, len(hours) - 1)
            mwh = new[c].to_numpy(float) * hours[t]  # rows of periods outside: no match
            self._set_rows("grid_energy", ["s", "t"], keys, mwh, False, fam)
        return True

    def commitment_mw(self, old: pd.DataFrame, new: pd.DataFrame, c: str) -> bool:
        """``commitments.min_it_mw``: rhs of ``commitment`` rows (same cells > 0)."""
        if not np.array_equal(old[c].to_numpy() > 0, new[c].to_numpy() > 0):
            return False
        look = _row_lookup(self.con, "commitment", ["j"])
        self.rhs[look["row"].to_numpy()] = new[c].to_numpy(float)[look["j"].to_numpy()]
        return True

    def breach_penalty(self, old: pd.DataFrame, new: pd.DataFrame, c: str) -> bool:
        """``commitments.breach_penalty_usd_per_mw``: coefficient of the breach term."""
        sel, j = self._term_cols("breach_penalty", "j")
        self.cost_terms.loc[sel, "coef"] = new[c].to_numpy(float)[j]
        return True

    def unmet_penalty(self, old: pd.DataFrame, new: pd.DataFrame, c: str) -> bool:
        """``customers.unmet_penalty_usd_per_h100e_period``: coefficient of unmet demand."""
        pen = pd.Series(new[c].to_numpy(float), index=_codes_of(new["customer"], self.codes["k"]))
        sel, k = self._term_cols("unmet_penalty", "k")
        self.cost_terms.loc[sel, "coef"] = pen.reindex(k).to_numpy()
        return True

    def energy_price(self, old: pd.DataFrame, new: pd.DataFrame, c: str) -> bool:
        """``sites.energy_price_usd_per_mwh``: grid-priced energy terms scale by new / old.

        The ``energy`` term of a PPA's energy column is its contract price and stays.
        """
        o, n = old[c].to_numpy(float), new[c].to_numpy(float)
        if (o <= 0).any():
            return False
        ratio = pd.Series(n / o, index=_codes_of(new["site"], self.codes["s"]))
        sel, s = self._term_cols("energy", "s")
        # a PPA's energy is priced at its contract, not at the site's grid price (the
        # trailing False is the code -1 of a column that is no power source)
        contract = np.array([n.startswith(PPA_PREFIX) for n in self.codes.get("o", ())] + [False])
        cols = self.cost_terms.loc[sel, "col"].to_numpy(np.int64)
        by_ppa = contract[self.var["o"].to_numpy()[cols]] if "o" in self.var else False
        scale = np.where(by_ppa, 1.0, ratio.reindex(s).to_numpy())
        self.cost_terms.loc[sel, "coef"] = self.cost_terms.loc[sel, "coef"].to_numpy() * scale
        csel = (self.const_terms["term"] == "energy").to_numpy()
        if csel.any():
            r = ratio.to_numpy()
            if not np.allclose(r, r[0], rtol=1e-15, atol=0):
                return False
            self.const_terms.loc[csel, "value"] = (
                self.const_terms.loc[csel, "value"].to_numpy() * r[0]
            )
        return True

    def derate(self, old: pd.DataFrame, new: pd.DataFrame, c: str) -> bool:
        """``eligibility.derate``: assign coefficients of ``demand_balance`` rows scale."""
        codes, con, var = self.codes, self.con, self.var
        ratio = pd.DataFrame(
            {
                "k": _codes_of(new["customer"], codes["k"]),
                "c": _codes_of(new["chip"], codes["c"]),
                "ratio": new[c].to_numpy(float) / old[c].to_numpy(float),
            }
        )
        ratio = ratio[ratio["ratio"] != 1.0]
        coo = self.matrix.tocoo()
        dem_rows = (con["family"] == "demand_balance").to_numpy()
        is_assign = var["kind"].isin(["assign", "serve", "pool_serve"]).to_numpy()  # serve: compact
        hit = dem_rows[coo.row] & is_assign[coo.col]
        ent = pd.DataFrame(
            {
                "i": np.flatnonzero(hit),
                "k": var["k"].to_numpy()[coo.col[hit]],
                "c": var["c"].to_numpy()[coo.col[hit]],
            }
        ).merge(ratio, on=["k", "c"])
        data = coo.data.copy()
        data[ent["i"].to_numpy()] *= ent["ratio"].to_numpy()
        self.matrix = sp.csr_matrix((data, (coo.row, coo.col)), shape=coo.shape)
        self.matrix.sum_duplicates()
        return True

    def finish(self, ds: Any) -> Any:
        """Return the patched model for ``ds`` (new rhs; column costs rebuilt from terms)."""
        model, cost_terms = self.model, self.cost_terms
        con = self.con.copy(deep=False)  # copy-on-write: the base keeps its rhs
        con["rhs"] = self.rhs
        var = self.var.copy(deep=False)
        disc = ds.table("periods")["discount_factor"].to_numpy(dtype=float)
        wv = np.asarray(model.weights)
        cc = (
            cost_terms["coef"].to_numpy(float)
            * disc[cost_terms["t"].to_numpy(np.int64)]
            * wv[cost_terms["scenario"].to_numpy(np.int64)]
        )
        cols = cost_terms["col"].to_numpy(np.int64)
        var["cost"] = np.bincount(cols, weights=cc, minlength=len(var))
        patched = dataclasses.replace(
            model,
            datasets=(ds,),
            commitments=(ds.table("commitments"),),
            constraints=con,
            variables=var,
            cost_terms=cost_terms,
            const_terms=self.const_terms,
            matrix=self.matrix,
        )
        patched_from(patched, model)
        return patched


#: The data changes :func:`patch_model` applies without a rebuild, and how.
_PATCHERS: dict[tuple[str, str], Callable[[_ModelPatch, pd.DataFrame, pd.DataFrame, str], bool]] = {
    ("supply_resources", "capacity"): _ModelPatch.supply_capacity,
    ("demand", "demand_h100e"): _ModelPatch.demand,
    ("site_grid", "grid_mw"): _ModelPatch.site_limit,
    ("site_water", "water_permit_m3"): _ModelPatch.site_limit,
    ("commitments", "min_it_mw"): _ModelPatch.commitment_mw,
    ("commitments", "breach_penalty_usd_per_mw"): _ModelPatch.breach_penalty,
    ("customers", "unmet_penalty_usd_per_h100e_period"): _ModelPatch.unmet_penalty,
    ("sites", "energy_price_usd_per_mwh"): _ModelPatch.energy_price,
    ("eligibility", "derate"): _ModelPatch.derate,
}
_PATCHABLE = frozenset(_PATCHERS)
