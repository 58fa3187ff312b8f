"""First-stage columns fixed to a plan's values (the value of the stochastic solution, EVPI)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from optimizer.lp.frames import column_values
from optimizer.plan.coding import code_ids
from optimizer.plan.columns import first_stage_kinds
from optimizer.plan.model import PlanningModel

__all__ = ["fix_first_stage"]


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
        retrofit; chips stay free) or a list of kinds
        (see :data:`~optimizer.plan.columns.FIRST_STAGE_SETS`).

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
    specs: tuple[tuple[str, str, str, list[str], list[str]], ...] = (
        ("build", "build_out", "build_mw", ["site"], ["s"]),
        ("liquid", "build_out", "liquid_build_mw", ["site"], ["s"]),
        ("retrofit", "build_out", "retrofit_mw", ["site"], ["s"]),
        ("install", "fleet", "installed_chips", ["chip", "site"], ["c", "s"]),
        ("produce", "production", "produced_chips", ["chip"], ["c"]),
    )
    per = pd.Index(list(model.periods))
    for spec in specs:
        if spec[0] not in kinds:
            continue
        t = tables.get(spec[1]) if hasattr(tables, "get") else tables[spec[1]]
        if t is None or len(t) == 0 or spec[2] not in t:
            continue
        miss = _fix_kind(var, codes, per, t, spec, fixed)
        if miss is not None:
            unmatched.append(miss)
    fs = var["kind"].isin(kinds).to_numpy()
    var.loc[fs, "lb"] = fixed[fs]
    var.loc[fs, "ub"] = fixed[fs]
    var.loc[fs, "integer"] = False
    um = pd.concat(unmatched, ignore_index=True) if unmatched else model.unmatched_fixed
    return replace(model, variables=var, unmatched_fixed=um)


def _fix_kind(
    var: pd.DataFrame,
    codes: Mapping[str, tuple[str, ...]],
    per: pd.Index,
    table: pd.DataFrame,
    spec: tuple[str, str, str, list[str], list[str]],
    fixed: np.ndarray,
) -> pd.DataFrame | None:
    """Set ``fixed`` for one kind's columns from its plan table; return the unmatched values."""
    kind, _, vcol, idcols, ccols = spec
    letter_ids = {"site": "s", "chip": "c"}
    t = table.groupby([*idcols, "period"], as_index=False)[vcol].sum()
    pairs = zip(idcols, ccols, strict=True)
    key = pd.DataFrame({cc: code_ids(t[ic], codes[letter_ids[ic]]) for ic, cc in pairs})
    key["t"] = per.get_indexer(t["period"].astype(str).to_numpy())
    key["value"] = t[vcol].to_numpy(dtype=float)
    sel = var[var["kind"] == kind]
    cols = sel.reset_index()[["index", *ccols, "t"]]
    m = key.merge(cols, on=[*ccols, "t"], how="left")
    hit = m["index"].notna().to_numpy()
    idx = m.loc[hit, "index"].to_numpy(dtype=np.int64)
    fixed[idx] = m.loc[hit, "value"].to_numpy() / column_values(var, "scale")[idx]
    miss = m[~hit & (np.abs(m["value"]) > 1e-9)]
    if not len(miss):
        return None
    return pd.DataFrame(
        {
            "kind": kind,
            "key": t.loc[~hit & (np.abs(column_values(m, "value")) > 1e-9), idcols]
            .astype(str)
            .agg("/".join, axis=1)
            .to_numpy(),
            "period": t.loc[miss.index, "period"].astype(str).to_numpy(),
            "value": column_values(miss, "value"),
        }
    )
