"""Scenario batch runs on Dask, and model reuse across scenarios.

``capacity batch SWEEP.yaml`` expands a sweep (:mod:`optimizer.analysis.sweep`) into cases and
solves them on a Dask cluster: by default a ``distributed.LocalCluster`` of ``N``
single-threaded worker processes on this machine; with ``scheduler=ADDRESS`` the same
tasks go to an existing cluster (``Client(address)``). The client process writes each
case's tables as soon as it finishes (:func:`optimizer.analysis.dask_cluster.wait_each`)::

    <out>/batch_manifest.json                    (rewritten atomically after each case)
    <out>/batch_summary.csv                      (one row per case: outcomes)
    <out>/scenario=<case>/<table>.parquet        (every table of report.RESULT_SCHEMAS)

Tables are written by :func:`optimizer.output.report.write_scenario_tables` (one explicit
schema per table, temporary name then rename), so a case that serves nobody still
writes every table, typed and possibly empty, and no half file ever sits under a real
name. The folder reads with ``pyarrow.dataset`` and DuckDB
(``read_parquet('<out>/*/demand.parquet', hive_partitioning=true)``).

Invalid cases
-------------
Before anything is solved, every case still to run has its overrides applied to the base
dataset in the client (:func:`validate_cases`; only what the overrides touch is
re-validated, :mod:`capacity.revalidate`). A case whose data no longer validates (a grid
level that takes a PUE below 1) is not sent to the cluster: it is recorded at once with
``state: "failed"``, ``status: "invalid_data"``, its error findings under ``findings``
(file, row, column, value, message) and as text under ``error`` (no traceback: it is a
data error), and the valid cases still run. ``batch_summary.csv`` carries the first
finding in its ``error`` column. Tracebacks are kept only for unexpected exceptions.

Re-runs
-------
A case is keyed by its name and :meth:`optimizer.analysis.sweep.SweepCase.key` (sha256 of the
base dataset hash, the named scenario, the overrides and the solve options of
:func:`case_options`: solver, time limit, threads, integer units, clusters, MIP gap
and start, formulation ...; the entry records them under ``options``). A case is
recorded ``state: "done"`` only when it has a plan (status ``optimal`` or
``time_limit_feasible``) and its written files re-read and its figures recompute
(:func:`optimizer.analysis.case_check.case_problem`: every table present, a plan's costs sum
to its objective, its outcomes recompute); a case whose files verify but whose status
has no plan (infeasible, no solution within the time limit) is ``no_plan``, anything
else ``failed`` with the reason. A re-run skips a case whose manifest entry has the
same key (so the same options), ``state == "done"`` and files that still verify; it
redoes the rest, so a time-limited case without a plan is tried again, and a re-run
with another ``--time-limit``, solver or formulation redoes every case. Several
batches may write into one folder at once, and several sweeps may share one: the
manifest is merged under a lock and every sweep's cases are kept
(:mod:`optimizer.analysis.batch_folder`).
A case that fails (solver error, exception, a worker killed:
``KilledWorker``/``CommClosedError``) is recorded with ``state: "failed"`` and its
error, and the batch goes on. An infeasible case is written with its explanation
table, recorded ``no_plan`` and counted as failed. The local cluster is started with
``distributed.scheduler.allowed-failures = 0``: a task whose worker dies is not
retried by the scheduler. A dying worker also fails the tasks queued on it, so the
client retries each lost case (``KilledWorker``, ``CommClosedError``) once, alone,
after the main pass; only a case that loses its worker twice is marked failed
(``retried: true`` in its entry). Start an external scheduler with
``DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=0`` for the same behaviour.

Model reuse
-----------
Most sweep cases differ from their base scenario only in data *values*. With
``reuse=True`` each worker builds the base scenario's :class:`PlanningModel` once
(cached per process) and, for each case, patches the arrays that the changed values
feed (:func:`patch_model`) instead of rebuilding the model:

=====================================  ============================================
changed input                          patched
=====================================  ============================================
supply_resources.capacity              rhs of ``supply_resource`` rows
demand.demand_h100e (same >0 pattern)  rhs of ``demand_balance`` rows
site_grid.grid_mw                      rhs of ``site_grid`` rows (by the change) and
                                       of the power families' ``grid_energy`` rows
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

A patched model is then solved on one retained HiGHS instance per worker process and
base (:class:`optimizer.plan.solve.HighsSession`, cached by base dataset hash and options):
only the changed costs, bounds, objective constant and matrix entries are pushed and
the dual simplex restarts from the previous optimal basis. A rebuilt model is solved
cold; a warm run that does not end optimal is repeated cold so statuses stay those of
a cold solve. Where the optimum is not unique a warm start may return another tied
plan (same objective); ``tests/test_batch.py`` compares warm and cold case by case.
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import logging
import os
import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from capacity.scenarios import UnknownScenarioError, apply_overrides, apply_scenario
from capacity.schema import SPECS, TABLE_NAMES
from capacity.validation import DataValidationError, Finding
from optimizer.analysis.batch_folder import (
    BATCH_MANIFEST,
    folder_lock,
    merge_case,
    read_batch_manifest,
    remove_stale_temp_files,
    start_run,
    summary_row,
    sweep_id,
    write_summary_csv,
)
from optimizer.analysis.case_check import case_problem
from optimizer.analysis.dask_cluster import ClusterLost, ClusterOptions, open_client, wait_each
from optimizer.analysis.sweep import SweepCase, SweepSpec, expand_sweep, load_sweep
from optimizer.components.power import PPA_PREFIX
from optimizer.lp.reuse_cache import cached, patched_from
from optimizer.output.summary import OK_STATUSES

__all__ = [
    "BATCH_MANIFEST",
    "BatchResult",
    "CaseResult",
    "case_options",
    "patch_model",
    "run_batch",
    "render_invalid",
    "run_case",
    "solve_many",
    "validate_cases",
]

BATCH_SUMMARY = "batch_summary.csv"
BATCH_FORMAT = "capacity-batch/1"

#: Status of a case whose data does not validate (never solved).
INVALID_DATA = "invalid_data"

#: State of a case whose files are written and verify but whose status has no plan
#: (infeasible, unbounded, no solution within the time limit): redone by a re-run.
NO_PLAN = "no_plan"

#: Test-only hook: a worker that runs the case named by this environment variable
#: exits at once (``os._exit``), as if it were killed.
CRASH_ENV = "CAPACITY_BATCH_TEST_EXIT_ON"

log = logging.getLogger(__name__)

#: Dask errors that mean "the worker running the task died", not "the task failed".
_LOST_WORKER_ERRORS = frozenset({"KilledWorker", "CommClosedError", "FutureCancelledError"})


@dataclass
class CaseResult:
    """What a worker returns for one case.

    Attributes
    ----------
    name, key : str
        Case name and :meth:`SweepCase.key`.
    status : str
        Solve status, or ``"failed"`` when an exception was raised.
    objective_usd : float or None
    result : optimizer.plan.solve.PlanResult or None
        The plan (tables included); None on failure.
    error : str
        Exception text (empty when none).
    elapsed_s : float
        Wall time on the worker (dataset, model, solve, tables).
    reused : bool
        True when the model was patched rather than rebuilt.
    outcomes : dict
        :func:`optimizer.analysis.outcomes.plan_outcomes` plus ``binding_families``.
    """

    name: str
    key: str
    status: str
    objective_usd: float | None
    result: Any
    error: str = ""
    elapsed_s: float = 0.0
    reused: bool = False
    outcomes: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------- model reuse
def _changed_columns(a: pd.DataFrame, b: pd.DataFrame, key: Sequence[str]) -> list[str] | None:
    """Columns whose values differ between two frames with the same rows; None if rows differ."""
    if a is b:
        return []
    if len(a) != len(b) or list(a.columns) != list(b.columns):
        return None
    for k in key:
        if not _same_text(a[k], b[k]):
            return None
    out = []
    for c in a.columns:
        va, vb = a[c], b[c]
        if va.dtype.kind == "f" and vb.dtype.kind == "f":
            x, y = va.to_numpy(), vb.to_numpy()
            if not np.array_equal(x, y, equal_nan=True):
                out.append(c)
        elif not _same_text(va, vb):
            out.append(c)
    return out


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
        the caller then rebuilds.
    """
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
        (``grid_mw * hours``). A limit that is or becomes open (NaN, no row) rebuilds.
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
        if c == "grid_mw":
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


# Per-process caches, keyed by dataset hash. Small: a batch has few bases.
_MODEL_CACHE: dict[tuple[str, str], Any] = {}  # (hash, formulation) -> PlanningModel (LP)
_REF_CACHE: dict[tuple[str, str | None], Any] = {}  # (hash, scenario) -> Dataset
#: (base hash, options) -> optimizer.plan.solve.HighsSession holding a patched base model
_SESSION_CACHE: dict[tuple[str, Any], Any] = {}
_CACHE_MAX = 8


def _memo(cache: dict[Any, Any], key: Any, make: Callable[[], Any]) -> Any:
    """Return ``cache[key]``, computing it with ``make()`` (oldest entry evicted)."""
    if key not in cache:
        if len(cache) >= _CACHE_MAX:
            cache.pop(next(iter(cache)))
        cache[key] = make()
    return cache[key]


def _solve_reusing(base_ds: Any, ds: Any, options: Any, reuse: bool) -> tuple[Any, bool]:
    """Solve ``ds``, patching ``base_ds``'s cached model when possible.

    A patched model is solved on the process's retained HiGHS instance for this base
    (:class:`optimizer.plan.solve.HighsSession`): only changed costs and bounds are pushed
    and HiGHS restarts from the previous optimal basis; a warm run that is not optimal
    is re-solved cold. A rebuilt model (unpatchable change) is solved cold.
    """
    from optimizer.plan.highs_session import HighsSession
    from optimizer.plan.model import build_model
    from optimizer.plan.pipeline import solve_model

    t0 = time.perf_counter()
    model = None
    exact_clusters = bool(getattr(options, "clusters", False))
    form = getattr(options, "formulation", "compact")
    if reuse and not options.integer_units and not exact_clusters:
        base_model = _memo(
            _MODEL_CACHE, (base_ds.hash, form), lambda: build_model(base_ds, formulation=form)
        )
        model = patch_model(base_model, base_ds, ds)
    reused = model is not None
    if model is None:
        model = build_model(
            ds, integer_units=options.integer_units, clusters=exact_clusters, formulation=form
        )
    build_s = time.perf_counter() - t0
    session = None
    if reused and options.solver == "highs":
        session = _memo(_SESSION_CACHE, (base_ds.hash, options), lambda: HighsSession(options))
    return solve_model(model, options, build_s=build_s, session=session)[0], reused


def solve_many(
    base_ds: Any,
    items: Sequence[Any],
    options: Any = None,
    reuse: bool = True,
) -> list[Any]:
    """Solve many variants of one dataset in this process, reusing the base model.

    Parameters
    ----------
    base_ds : Dataset
        The dataset the variants derive from; its model is built once.
    items : sequence of Dataset, or sequence of override lists
        Each item is either a Dataset (same horizon) or a list of overrides
        (``Override`` or mappings) applied to ``base_ds``.
    options : SolveOptions, optional
    reuse : bool
        True: patch the base model's arrays for each variant (:func:`patch_model`)
        and solve it on this process's retained HiGHS instance from the previous
        optimal basis (``timings_s["warm_start"]`` is 1.0 for such a case); rebuild
        and solve cold when the change is not patchable, and re-solve cold when a
        warm run is not optimal. False: build and solve every model from scratch
        (the reference for benchmarks).

    Returns
    -------
    list of PlanResult
        In the order of ``items``.
    """
    from capacity.scenarios import apply_overrides
    from optimizer.plan.options import SolveOptions

    options = options or SolveOptions()
    out = []
    with _collector_skips_what_lasts() as frozen:
        for i, it in enumerate(items):
            ds = it if hasattr(it, "table") else apply_overrides(base_ds, list(it))
            res, _ = _solve_reusing(base_ds, ds, options, reuse)
            out.append(res)
            if i == 0 and frozen:
                gc.freeze()  # the base model and HiGHS session the first case cached
    return out


@contextmanager
def _collector_skips_what_lasts() -> Iterator[bool]:
    """Keep the objects that outlive every case out of the garbage collector's scans.

    Python's full collections scan every tracked object; during a sweep most of them
    are the cached base model, its dataset and the caches of its structure, which
    live through the sweep. ``gc.freeze`` moves the objects present now into the
    permanent generation, so a full collection inside a case scans only what the
    sweep made since; ``gc.unfreeze`` at the end returns them to the collector.
    Measured with ``gc.callbacks`` on a 20-case sweep at the default size (issue 13):
    time in the collector 0.100 -> 0.042 s reused, 0.294 -> 0.096 s rebuilt.
    """
    if gc.get_freeze_count():  # the process freezes objects itself: leave it be
        yield False
        return
    gc.freeze()
    try:
        yield True
    finally:
        gc.unfreeze()


# --------------------------------------------------------------------- worker task
def run_case(
    base: Any,
    case: SweepCase,
    options: Any,
    reuse: bool = True,
    key: str = "",
) -> CaseResult:
    """Solve one sweep case (the Dask task; top-level and pickle-friendly).

    Parameters
    ----------
    base : Dataset
        The sweep's base dataset (pickled with the task; same hash on the worker).
    case : SweepCase
    options : SolveOptions
    reuse : bool
        Patch the case's base-scenario model instead of rebuilding (see module doc).
    key : str
        The case key, echoed in the result.

    Returns
    -------
    CaseResult
        Never raises for a bad case: exceptions become ``status == "failed"``.
    """
    from optimizer.analysis.outcomes import binding_families, binding_limits, plan_outcomes

    t0 = time.perf_counter()
    if os.environ.get(CRASH_ENV) and os.environ.get(CRASH_ENV) == case.name:
        os._exit(17)  # test-only: behave like a worker killed mid-task
    try:
        ref = _memo(_REF_CACHE, (base.hash, case.base), lambda: apply_scenario(base, case.base))
        if case.overrides:  # same as sweep.cases_dataset(base, case), from the cached ref
            ds = apply_overrides(ref, case.overrides, scenario=case.name)
        else:
            ds = dataclasses.replace(ref, scenario=case.name)
        res, reused = _solve_reusing(ref, ds, options, reuse)
        outcomes: dict[str, Any] = {}
        if res.objective_usd is not None:
            outcomes = dict(plan_outcomes(res, ds))
            fams, lims = binding_families(res), binding_limits(res)  # None: no duals
            outcomes["binding_families"] = None if fams is None else sorted(fams)
            outcomes["binding_limits"] = None if lims is None else sorted(lims)
        return CaseResult(
            case.name,
            key,
            res.status.value,
            res.objective_usd,
            res,
            elapsed_s=time.perf_counter() - t0,
            reused=reused,
            outcomes=outcomes,
        )
    except (DataValidationError, UnknownScenarioError) as exc:
        # routine data errors: the findings as text, no traceback
        return CaseResult(
            case.name,
            key,
            INVALID_DATA,
            None,
            None,
            error=_error_text(exc),
            elapsed_s=time.perf_counter() - t0,
        )
    except Exception as exc:  # noqa: BLE001 - a failing case must not stop the batch
        return CaseResult(
            case.name,
            key,
            "failed",
            None,
            None,
            error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}",
            elapsed_s=time.perf_counter() - t0,
        )


def finding_text(f: Finding) -> str:
    """One line for a finding: ``sites.csv, row 2, column 'pue_air' (value '0.65'): msg``."""
    return str(f).removeprefix(f"{f.severity}: ")


def _error_text(exc: Exception) -> str:
    """Readable text of a data error: one finding per line (errors first)."""
    if isinstance(exc, DataValidationError):
        found = exc.errors or list(exc.findings)
        return "\n".join(finding_text(f) for f in found)
    return str(exc)


def validate_cases(base: Any, cases: Sequence[SweepCase]) -> dict[str, tuple[Finding, ...]]:
    """Apply each case's scenario and overrides to ``base`` and collect data errors.

    Parameters
    ----------
    base : Dataset
        The sweep's base dataset.
    cases : sequence of SweepCase

    Returns
    -------
    dict of str to tuple of Finding
        Case name -> its error findings, for the cases whose data does not validate
        only (a valid case is absent). A base scenario that does not validate makes
        every case built on it invalid, with the scenario's findings.

    Notes
    -----
    Costs one :func:`capacity.scenarios.apply_overrides` per case (re-validation of
    the overridden columns and of the checks that read them, about 0.013 s of CPU a
    case on the default data); named base scenarios are applied once each.
    """
    refs: dict[str | None, Any] = {}
    out: dict[str, tuple[Finding, ...]] = {}
    for case in cases:
        try:
            if case.base not in refs:
                try:
                    refs[case.base] = apply_scenario(base, case.base)
                except (DataValidationError, UnknownScenarioError) as exc:
                    refs[case.base] = exc
            ref = refs[case.base]
            if isinstance(ref, Exception):
                raise ref
            if case.overrides:
                apply_overrides(ref, case.overrides, scenario=case.name)
        except DataValidationError as exc:
            out[case.name] = tuple(exc.errors or exc.findings)
        except UnknownScenarioError as exc:
            out[case.name] = (Finding("error", "sweep", None, "base", case.base, str(exc)),)
    return out


def render_invalid(
    invalid: Mapping[str, Sequence[Finding]], console: Any = None, *, per_case: int = 5
) -> None:
    """Print the cases whose data does not validate as one rich table.

    Parameters
    ----------
    invalid : mapping of str to sequence of Finding
        From :func:`validate_cases` (or :attr:`BatchResult.invalid`).
    console : rich.console.Console, optional
    per_case : int
        Findings shown per case; the rest are counted (all are in the manifest).
    """
    from rich.console import Console
    from rich.table import Table

    if not invalid:
        return
    console = console or Console(width=140)
    t = Table(title=f"{len(invalid)} case(s) with invalid data: not solved")
    for c in ("case", "file", "row", "column", "value", "message"):
        t.add_column(c, overflow="fold", justify="right" if c == "row" else "left")
    for name, found in invalid.items():
        for f in list(found)[:per_case]:
            t.add_row(
                name,
                f.file,
                "" if f.row is None else str(f.row),
                f.column or "",
                "" if f.value is None else str(f.value),
                f.message,
            )
        if len(found) > per_case:
            t.add_row(name, "", "", "", "", f"... and {len(found) - per_case} more (see manifest)")
    console.print(t)


# ---------------------------------------------------------------------- the batch
@dataclass
class BatchResult:
    """Outcome of :func:`run_batch`.

    Attributes
    ----------
    out_dir : Path
    manifest : dict
        The final batch manifest.
    summary : DataFrame
        One row per case: name, kind, params (one column per axis/parameter), state,
        status, objective_usd, the plan outcomes, elapsed_s, skipped, error.
    n_done, n_failed, n_skipped : int
        ``n_failed`` includes the invalid cases.
    invalid : dict of str to tuple of Finding
        Cases whose data does not validate (not solved) and their error findings.
    """

    out_dir: Path
    manifest: dict[str, Any]
    summary: pd.DataFrame
    n_done: int
    n_failed: int
    n_skipped: int
    invalid: dict[str, tuple[Finding, ...]] = field(default_factory=dict)


def _iso_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def case_options(options: Any) -> dict[str, Any]:
    """Return the solve options that are part of a batch case's identity (and its entry).

    Every field of :class:`optimizer.plan.solve.SolveOptions`: the solver, the time limit,
    threads, integer units, clusters, the MIP gap and start, the infeasibility
    explanation, the checker's tolerance and the formulation. Each can change the
    written plan, its status or its verification (threads and the formulation only
    among tied optima), so a re-run with any of them changed redoes the case.
    Numbers are written as floats (a time limit of 60 and 60.0 are one case).
    ``reuse`` is not an option of the solve: a patched model solves to the same
    optimum as a rebuilt one.

    Parameters
    ----------
    options : SolveOptions

    Returns
    -------
    dict
        Field name -> value (JSON-ready: str, float, bool or None).
    """
    out: dict[str, Any] = {}
    for f in dataclasses.fields(options):
        v = getattr(options, f.name)
        if isinstance(v, int | float) and not isinstance(v, bool):
            v = float(v)
        elif v is not None and not isinstance(v, str | bool):
            v = str(v)
        out[f.name] = v
    return out


def _is_done(out_dir: Path, name: str, entry: Mapping[str, Any] | None, key: str) -> bool:
    """Return True when a case has a verified plan for this key (solve options included).

    Done means: the entry has this key, ``state == "done"`` (a plan: status optimal
    or time_limit_feasible, recorded only after its files verified), a plan status,
    and files that still verify. A case without a plan (:data:`NO_PLAN`), a failed
    one, or one run with other options is redone.
    """
    if not entry or entry.get("state") != "done" or entry.get("key") != key:
        return False
    if entry.get("status") not in OK_STATUSES:
        return False
    return case_problem(out_dir, name, entry) is None


def _verify_or_fail(out_dir: Path, name: str, entry: dict[str, Any]) -> None:
    """Re-read a case just written; mark it failed (to be redone) when it does not verify."""
    problem = case_problem(out_dir, name, entry)
    if problem is not None:
        entry["state"] = "failed"
        entry["error"] = f"written case does not verify: {problem}"
        log.warning("case %s: %s", name, entry["error"])


class _Progress:
    """Rich progress bar: cases done, failed and left, time to go."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.enabled = enabled and total > 0
        self.done = self.failed = 0
        self.total = total
        self._p: Any = None
        self._task: Any = None

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._p = Progress(
                TextColumn("[bold]batch"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[stats]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
            )
            self._p.__enter__()
            self._task = self._p.add_task("batch", total=self.total, stats=self._stats())
        return self

    def _stats(self) -> str:
        left = self.total - self.done - self.failed
        return f"done {self.done} | failed {self.failed} | left {left}"

    def advance(self, ok: bool) -> None:
        if ok:
            self.done += 1
        else:
            self.failed += 1
        if self._p is not None:
            self._p.update(self._task, advance=1, stats=self._stats())

    def __exit__(self, *exc: object) -> None:
        if self._p is not None:
            self._p.__exit__(None, None, None)


def run_batch(
    sweep: SweepSpec | str | Path,
    out_dir: str | Path,
    *,
    workers: int = 2,
    scheduler: str | None = None,
    options: Any = None,
    reuse: bool = True,
    progress: bool = True,
    on_case: Callable[[CaseResult], None] | None = None,
    on_invalid: Callable[[dict[str, tuple[Finding, ...]]], None] | None = None,
    cluster: ClusterOptions | None = None,
    on_other_sweeps: Callable[[list[str]], None] | None = None,
) -> BatchResult:
    """Run every case of a sweep on Dask and write each one as soon as it finishes.

    Parameters
    ----------
    sweep : SweepSpec or path
        The sweep (a YAML path is read with :func:`optimizer.analysis.sweep.load_sweep`).
    out_dir : path
        Output folder (created): ``scenario=<case>/<table>.parquet``, the batch
        manifest and summary.
    workers : int
        Worker processes of the local cluster (ignored with ``scheduler``).
    scheduler : str, optional
        Address of an existing Dask scheduler (``tcp://host:port``).
    options : SolveOptions, optional
    reuse : bool
        Patch models instead of rebuilding them (see the module docstring).
    progress : bool
        Show the rich progress bar.
    on_case : callable, optional
        Called with each finished :class:`CaseResult` (invalid ones too: ``invalid_data``).
    on_invalid : callable, optional
        Called once, before any solve, with the cases whose data does not validate
        (case name -> error findings); not called when every case is valid.
    cluster : ClusterOptions, optional
        TLS and the bounded wait (:mod:`optimizer.analysis.dask_cluster`); ``workers``,
        ``scheduler`` win.
    on_other_sweeps : callable, optional
        Called before any solve with the folder's cases of other sweeps (kept).

    Returns
    -------
    BatchResult

    Raises
    ------
    optimizer.analysis.sweep.SweepSpecError
        When the sweep is invalid or names an unknown scenario.
    capacity.validation.DataValidationError
        When the base dataset does not validate (an invalid case is recorded failed).
    """
    from capacity.dataset import load_dataset
    from optimizer.plan.options import SolveOptions

    spec = load_sweep(sweep) if isinstance(sweep, str | Path) else sweep
    options, out = options or SolveOptions(), Path(out_dir)
    base = load_dataset(spec.data)
    cases = expand_sweep(spec, list(base.scenarios))
    out.mkdir(parents=True, exist_ok=True)  # only once the sweep is known to be valid
    solve_doc = case_options(options)
    keys = {c.name: c.key(base.hash, solve_doc) for c in cases}
    fields = (_run_fields(spec, base, options, reuse), _sweep(spec, options, keys))
    manifest = _start_folder(out, fields, keys, on_other_sweeps)
    todo, skipped = _split_done(out, cases, manifest, keys)
    invalid = validate_cases(base, todo)
    todo = [c for c in todo if c.name not in invalid]
    run = _BatchRecorder(out, manifest, keys, on_case, solve_doc)
    for case in cases:
        if case.name in invalid:
            run.record_invalid(case, invalid[case.name])
    if invalid and on_invalid is not None:
        on_invalid(dict(invalid))
    if todo:
        _solve_on_dask(run, base, todo, options, reuse, _on(cluster, workers, scheduler), progress)
    summary = batch_summary(manifest := read_batch_manifest(out), cases, {c.name for c in skipped})
    write_summary_csv(out, summary, BATCH_SUMMARY)
    n_done, n_failed = run.counts["done"], run.counts["failed"]
    return BatchResult(out, manifest, summary, n_done, n_failed, len(skipped), dict(invalid))


def _split_done(
    out: Path, cases: Sequence[SweepCase], manifest: Mapping[str, Any], keys: Mapping[str, str]
) -> tuple[list[SweepCase], list[SweepCase]]:
    """Return (cases to run, cases already done: same key and files that verify)."""
    entries = dict(manifest.get("scenarios") or {})
    todo = [c for c in cases if not _is_done(out, c.name, entries.get(c.name), keys[c.name])]
    return todo, [c for c in cases if c not in todo]


def _start_folder(
    out: Path,
    fields: tuple[Mapping[str, Any], Mapping[str, Any]],
    keys: Mapping[str, str],
    on_other_sweeps: Callable[[list[str]], None] | None,
) -> dict[str, Any]:
    """Clear killed writers' temp files and register this run in the folder's manifest.

    ``fields`` is (top-level run fields, this sweep's description).
    """
    with folder_lock(out):
        remove_stale_temp_files(out)
    manifest, others = start_run(out, fields[0], fields[1], keys)
    if others and on_other_sweeps is not None:
        on_other_sweeps(others)
    return manifest


def _run_fields(spec: SweepSpec, base: Any, options: Any, reuse: bool) -> dict[str, Any]:
    """Top-level manifest fields of this run (the folder's last run)."""
    return {
        "format": BATCH_FORMAT,
        "created_utc": _iso_now(),
        "updated_utc": _iso_now(),
        "data": str(spec.data),
        "dataset_name": base.name,
        "dataset_hash": base.hash,
        "solver": options.solver,
        "time_limit_s": options.time_limit_s,
        "reuse": reuse,
    }


def _sweep(spec: SweepSpec, options: Any, keys: Mapping[str, str]) -> dict[str, Any]:
    """Return the sweep's entry under the manifest's ``sweeps``.

    See :mod:`optimizer.analysis.batch_folder`.
    """
    return {
        "data": str(spec.data),
        "solver": options.solver,
        "options": case_options(options),
        "updated_utc": _iso_now(),
        "cases": list(keys),
    }


class _BatchRecorder:
    """Writes each finished case (tables, then its manifest entry) and counts them."""

    def __init__(
        self,
        out: Path,
        manifest: dict[str, Any],
        keys: Mapping[str, str],
        on_case: Callable[[CaseResult], None] | None,
        solve_doc: Mapping[str, Any] | None = None,
    ) -> None:
        self.out = out
        self.solve_doc = dict(solve_doc or {})
        self.manifest = manifest
        self.manifest_path = out / BATCH_MANIFEST
        self.keys = keys
        self.sweep = sweep_id(keys)
        self.on_case = on_case
        self.counts = {"done": 0, "failed": 0}

    def record(
        self,
        case: SweepCase,
        cr: CaseResult,
        bar: _Progress | None,
        *,
        retried: bool,
        findings: Sequence[Finding] = (),
    ) -> None:
        """Write a case's tables and manifest entry; advance the bar; call ``on_case``."""
        entry: dict[str, Any] = {
            "key": self.keys[case.name],
            "sweep": self.sweep,
            "kind": case.kind,
            "base": case.base,
            "params": dict(case.params),
            "options": self.solve_doc,
            "finished_utc": _iso_now(),
            "retried": retried,
        }
        if cr.result is not None:
            entry.update(self._write_tables(case, cr, entry))
        else:
            entry["state"] = "failed"
        entry.update(
            status=cr.status,
            objective_usd=cr.objective_usd,
            time_s=round(cr.elapsed_s, 4),
            reused_model=cr.reused,
            error=entry.get("error") or cr.error,
            outcomes=cr.outcomes,
        )
        if findings:
            entry["findings"] = [dataclasses.asdict(f) for f in findings]
        if entry["state"] == "done":
            _verify_or_fail(self.out, case.name, entry)
        if entry["state"] == "done" and cr.status not in OK_STATUSES:
            entry["state"] = NO_PLAN  # written and verified, but no plan: redone by a re-run
        # merged under the folder's lock: entries of concurrent batches are kept
        self.manifest = merge_case(self.out, case.name, entry, _iso_now())
        ok = entry["state"] == "done" and cr.status in OK_STATUSES
        self.counts["done" if ok else "failed"] += 1
        if bar is not None:
            bar.advance(ok)
        if self.on_case is not None:
            self.on_case(cr)

    def record_invalid(self, case: SweepCase, found: Sequence[Finding]) -> None:
        """Record a case whose data does not validate (not solved) with its findings."""
        text = "\n".join(finding_text(f) for f in found)
        cr = CaseResult(case.name, self.keys[case.name], INVALID_DATA, None, None, error=text)
        self.record(case, cr, None, retried=False, findings=found)

    def _write_tables(
        self, case: SweepCase, cr: CaseResult, entry: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Write the tables of a solved case; the entry fields ``state``, ``files``/``error``."""
        from optimizer.output.report import file_metadata, scenario_dir, write_scenario_tables

        sdir = scenario_dir(self.out, case.name)
        merge_case(self.out, case.name, {**entry, "state": "writing"}, _iso_now())
        try:
            meta = file_metadata(cr.result, scenario=case.name, run_id=self.out.name)
            written = write_scenario_tables(cr.result, sdir, meta)
        except Exception as exc:  # noqa: BLE001 - recorded; the batch goes on
            return {"state": "failed", "error": f"writing tables: {exc}"}
        files = sorted(p.relative_to(self.out).as_posix() for p in written.values())
        return {"state": "done", "files": files}

    def outcome(self, fut: Any, case: SweepCase) -> tuple[CaseResult, bool]:
        """Return the case result, and True when the task was lost with its worker."""
        try:
            return fut.result(), False
        except Exception as exc:  # noqa: BLE001 - KilledWorker, CommClosedError ...
            lost = type(exc).__name__ in _LOST_WORKER_ERRORS
            err = f"{type(exc).__name__}: {exc}"
            key = self.keys[case.name]
            return CaseResult(case.name, key, "failed", None, None, error=err), lost
        finally:
            fut.release()


def _on(cluster: ClusterOptions | None, workers: int, scheduler: str | None) -> ClusterOptions:
    """Return ``cluster`` (default options) with the batch's workers and scheduler."""
    return dataclasses.replace(cluster or ClusterOptions(), workers=workers, scheduler=scheduler)


def _solve_on_dask(
    run: _BatchRecorder,
    base: Any,
    todo: Sequence[SweepCase],
    options: Any,
    reuse: bool,
    cluster: ClusterOptions,
    progress: bool,
) -> None:
    """Solve the cases on a Dask cluster, recording each as it finishes.

    The wait is bounded (:func:`optimizer.analysis.dask_cluster.wait_each`): a client that
    reconnects to its scheduler is waited for and the cases the reconnect cancelled
    are submitted again; when the scheduler is gone, or no worker comes back in time,
    every unfinished case is recorded failed at once, so the batch exits 1 and a
    re-run redoes exactly those cases.
    """
    with open_client(cluster) as client, _Progress(len(todo), progress) as bar:
        # The base dataset travels with each task (not scattered): scattered data
        # dies with the last worker holding it, and a restarted worker would lack it.
        tag = uuid.uuid4().hex[:8]
        finished: set[str] = set()
        serial = itertools.count()
        futures: dict[Any, SweepCase] = {}

        def submit(c: SweepCase, attempt: int) -> Any:
            fut = client.submit(
                run_case,
                base,
                c,
                options,
                reuse,
                run.keys[c.name],
                key=f"case-{c.name}-{tag}-{attempt}-{next(serial)}",
                pure=False,
                retries=0,
            )
            futures[fut] = c
            return fut

        def resubmit(old: Any) -> Any:
            """Submit a case again whose future a reconnect of the client cancelled."""
            return submit(futures.pop(old), 0)

        def on_done(case: SweepCase, first: CaseResult | None) -> Callable[[Any], None]:
            def done(fut: Any) -> None:
                cr, was_lost = run.outcome(fut, case)
                if was_lost and first is None:
                    lost.append((case, cr))  # retried alone below
                    return
                if was_lost and first is not None:
                    cr.error = f"{cr.error} (lost its worker twice; first: {first.error})"
                finished.add(case.name)
                run.record(case, cr, bar, retried=first is not None)

            return done

        first_pass = [submit(c, 0) for c in todo]
        lost: list[tuple[SweepCase, CaseResult]] = []
        try:
            wait_each(client, first_pass, lambda f: on_done(futures[f], None)(f), cluster, resubmit)
            # A dying worker also fails the tasks queued on it; retry each lost case
            # once, alone, so only a case that kills its worker twice is marked failed.
            for case, first in lost:
                wait_each(client, [submit(case, 1)], on_done(case, first), cluster, resubmit)
        except ClusterLost as exc:
            for case in todo:
                if case.name not in finished:
                    err = f"{exc}; not finished (re-run the command to redo it)"
                    cr = CaseResult(case.name, run.keys[case.name], "failed", None, None, error=err)
                    run.record(case, cr, bar, retried=False)


def batch_summary(
    manifest: Mapping[str, Any], cases: Sequence[SweepCase], skipped: set[str] | None = None
) -> pd.DataFrame:
    """Return one row per case from a batch manifest (outcomes flattened).

    Columns: ``scenario, kind, <param columns>, state, status, objective_usd,
    total_cost_usd, unmet_h100e, trainium_share, breach_mw, binding_families,
    binding_limits, time_s, skipped, error``.
    """
    rows = []
    skipped = skipped or set()
    for c in cases:
        e = (manifest.get("scenarios") or {}).get(c.name, {})
        rows.append(summary_row(c.name, c.kind, c.params, e, skipped=c.name in skipped))
    return pd.DataFrame(rows)


def render_batch(result: BatchResult, console: Any = None) -> None:
    """Print a batch's findings with rich: scenarios, grid, Monte Carlo percentiles.

    Parameters
    ----------
    result : BatchResult
    console : rich.console.Console, optional
    """
    from rich.console import Console

    console = console or Console(width=140)
    s = result.summary
    fixed = s[s["kind"].isin(["scenario", "grid"])]
    if len(fixed):
        console.print(_fixed_cases_table(fixed))
    mc = s[s["kind"] == "monte_carlo"]
    if len(mc):
        console.print(_monte_carlo_table(mc))
        binding = _binding_shares_table(mc, str(result.manifest.get("solver") or ""))
        if binding is not None:
            console.print(binding)
    n_bad = len(result.invalid)
    console.print(
        f"{result.n_done} solved, {result.n_failed} failed or not optimal"
        + (f" ({n_bad} with invalid data)" if n_bad else "")
        + f", {result.n_skipped} skipped (already done). Output: {result.out_dir}"
    )
    bad = s[(s["state"] != "done") | (~s["status"].isin(OK_STATUSES))]
    for r in bad.itertuples(index=False):
        console.print(f"[red]{r.scenario}[/red]: {r.status or r.state} {r.error}")


def _money_bn(x: Any) -> str:
    return "" if x is None or pd.isna(x) else f"{float(x) / 1e9:,.3f}"


def _num(x: Any, f: str = ",.0f") -> str:
    return "" if x is None or pd.isna(x) else format(float(x), f)


def _fixed_cases_table(fixed: pd.DataFrame) -> Any:
    """Rich table of the scenario and grid cases (cost in USD bn, discounted)."""
    from rich.table import Table

    t = Table(title="Scenarios and grid (cost in USD bn, discounted)")
    for c in (
        "scenario",
        "status",
        "cost_bn_usd",
        "unmet_h100e",
        "trainium_share",
        "breach_mw",
        "time_s",
    ):
        t.add_column(c, justify="left" if c in ("scenario", "status") else "right")
    for r in fixed.itertuples(index=False):
        t.add_row(
            r.scenario,
            str(r.status or r.state),
            _money_bn(r.total_cost_usd),
            _num(r.unmet_h100e),
            _num(r.trainium_share, ".1%"),
            _num(r.breach_mw),
            _num(r.time_s, ".2f"),
        )
    return t


def _monte_carlo_table(mc: pd.DataFrame) -> Any:
    """Rich table of the P10/P50/P90/mean of each outcome over the Monte Carlo samples."""
    from rich.table import Table

    from optimizer.analysis.outcomes import OUTCOMES, outcome_percentiles

    pct = outcome_percentiles(mc, OUTCOMES)
    n_ok = int(mc["status"].isin(OK_STATUSES).sum())
    t = Table(title=f"Monte Carlo: {len(mc)} samples, {n_ok} with a plan")
    for c in ("outcome", "P10", "P50", "P90", "mean"):
        t.add_column(c, justify="left" if c == "outcome" else "right")
    for r in pct.itertuples(index=False):
        f = (
            (lambda x: _money_bn(x) + " bn")
            if r.outcome == "total_cost_usd"
            else ((lambda x: _num(x, ".1%")) if r.outcome == "trainium_share" else _num)
        )
        t.add_row(r.outcome, f(r.p10), f(r.p50), f(r.p90), f(r.mean))
    return t


def _binding_shares_table(mc: pd.DataFrame, solver: str = "") -> Any | None:
    """Rich table of how often each family and limit binds (None without a plan).

    A sample whose solver returned no duals (null ``binding_families``) counts as
    unknown, never as "binds nowhere"; the caption says so and names solvers with duals.
    """
    from rich.table import Table

    from optimizer.analysis.outcomes import binding_shares
    from optimizer.output.summary import no_duals_text

    ok = mc[mc["status"].isin(OK_STATUSES)]

    def sets(col: str) -> list[set[str] | None]:
        return [None if pd.isna(b) else set(filter(None, str(b).split(";"))) for b in ok[col]]

    fams, lims = sets("binding_families"), sets("binding_limits")
    if not fams:
        return None
    bs = binding_shares(fams)
    ls = binding_shares(lims)  # one set per sample, like fams
    unknown = sum(f is None for f in fams)
    t = Table(
        title="How often each constraint binds (non-zero shadow price, share of samples)",
        caption=f"{no_duals_text(solver)}: unknown for {unknown} of {len(fams)} samples"
        if unknown
        else None,
    )
    t.add_column("family")
    t.add_column("any row", justify="right")
    t.add_column("limits that bind (share of samples)", overflow="fold")
    for r in bs.itertuples(index=False):
        mine = ls[ls["family"].str.startswith(r.family + ":")].head(6)
        txt = ", ".join(
            f"{f.split(':', 1)[1]} {v:.0%}"
            for f, v in zip(mine["family"], mine["share_priced"], strict=True)
        )
        t.add_row(r.family, "unknown" if pd.isna(r.share_priced) else f"{r.share_priced:.0%}", txt)
    return t
