"""Session state of the app: the datasets, the editor drafts, the scenario and the plans.

Keys of ``st.session_state`` (all set by :func:`init_state`):

``origin_ds``
    The dataset as loaded or uploaded (the editors start from it).
``base_ds``
    The last *valid* dataset: ``origin_ds`` with every accepted edit.
``drafts``
    ``{table: DataFrame}``: what each editor holds now, valid or not; never dropped.
``draft_findings``
    Findings of the last validation of the drafts (empty when they are valid).
``scenario_name``, ``overrides``
    The named scenario and the composed overrides applied on top of ``base_ds``.
``plan``, ``runs``
    The latest :class:`PlanRun` and every run of this session, newest last.

Results live in session state, not in a button branch, so a rerun (a download
click, a page change) shows them again; they are shown only while their dataset
hash equals the active dataset's hash, so an edit never shows a stale plan.
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from capacity.dataset import Dataset, load_dataset
from capacity.scenarios import (
    BASE,
    UnknownScenarioError,
    apply_overrides,
    apply_scenario,
)
from capacity.schema import TABLE_NAMES
from capacity.validation import DataValidationError, Finding
from ui.compose import plan_metrics
from ui.dataio import validate_drafts
from ui.formats import error_text

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA_DIR = REPO_ROOT / "data"
DATA_ENV = "CAPACITY_DATA"
CACHE_ENTRIES = 32
DEFAULT_SCENARIO = "neutral"


@functools.cache
def solver_choices() -> tuple[tuple[str, str], ...]:
    """Solvers usable on this machine, as the Plan page offers them: ``(name, label)``.

    From :func:`optimizer.plan.solvers.available_solvers` (``highs`` first when highspy
    imports, then PuLP's available solvers, so GLPK and SCIP appear when installed);
    PuLP's bundled CBC is offered by its short name ``cbc``. The label is
    :func:`optimizer.plan.solvers.solver_label` (``HiGHS 1.11.0 · bulk``,
    ``CBC 2.10.3 · PuLP``, ``GLPK 5.0 · PuLP, no shadow prices``). Read once per process
    (it runs each solver binary once for its version).
    """
    from optimizer.plan.solvers import available_solvers, solver_label

    out = []
    for s in available_solvers():
        name = "cbc" if s.name == "PULP_CBC_CMD" else s.name
        out.append((name, solver_label(s.name, s.version, s.duals)))
    return tuple(out)


def data_dir() -> Path:
    """Dataset directory opened on first load: ``$CAPACITY_DATA`` or the repo's ``data/``."""
    env = os.environ.get(DATA_ENV, "").strip()
    return Path(env) if env else DEFAULT_DATA_DIR


def editor_key(table: str) -> str:
    """Widget key of a table's data editor (tests seed edits through it).

    ``editor_<table>`` until edits are discarded or another dataset is loaded; then
    ``editor_<table>_<n>``: a new key is a new widget, so the browser's copy of the
    old editor (which still holds the discarded cells) is dropped, not sent back.
    """
    gen = int(st.session_state.get("editor_generation", 0))
    return f"editor_{table}" if gen == 0 else f"editor_{table}_{gen}"


# --------------------------------------------------------------------------- init
def init_state() -> None:
    """Set every session key once and load the default dataset on first open."""
    ss = st.session_state
    for k, v in (
        ("origin_ds", None),
        ("base_ds", None),
        ("load_findings", []),
        ("load_error", ""),
        ("drafts", {}),
        ("editor_src", {}),
        ("draft_findings", []),
        ("scenario_name", BASE),
        ("overrides", []),
        ("scenario_error", None),
        ("plan", None),
        ("runs", []),
        ("report_zips", {}),
        ("risk_compare", None),
        ("risk_results", {}),
        ("flash", []),
    ):
        if k not in ss:
            ss[k] = v
    if "loaded_from" not in ss:
        d = data_dir()
        ss["loaded_from"] = str(d)
        try:
            ds = load_dataset(d)
        except DataValidationError as e:
            ss["load_findings"] = list(e.findings)
            ss["load_error"] = f"The dataset in {d} did not load."
        except Exception as e:  # noqa: BLE001 - any failure becomes a message, never a traceback
            ss["load_error"] = f"The dataset in {d} did not load: {error_text(e)}"
        else:
            set_dataset(ds)
            ss["scenario_name"] = default_scenario(ds)


def default_scenario(ds: Dataset) -> str:
    """Scenario the app starts on: ``neutral`` when the dataset defines it (as the CLI), else base.

    Returns
    -------
    str
        ``neutral`` or ``base``.
    """
    return DEFAULT_SCENARIO if DEFAULT_SCENARIO in ds.scenarios else BASE


def set_dataset(ds: Dataset, *, keep_composer: bool = False) -> None:
    """Make ``ds`` the loaded dataset: drafts, editors and scenario checks start over.

    The scenario composer starts over too (:func:`reset_composer`), unless
    ``keep_composer``: the data as loaded again after its edits are discarded, which the
    composer was made for (names an edit had changed are then handled as after an edit,
    :mod:`ui.compose`).
    """
    ss = st.session_state
    if ss.get("origin_ds") is not None:  # replacing: the browser's old editors are dropped
        new_editors()
        if not keep_composer:
            reset_composer(ds)
    ss["origin_ds"] = ds
    ss["base_ds"] = ds
    ss["drafts"] = {}
    ss["editor_src"] = {}
    ss["draft_findings"] = []
    if ss.get("scenario_name", BASE) not in (BASE, *ds.scenarios):
        ss["scenario_name"] = default_scenario(ds)


def reset_composer(ds: Dataset) -> None:
    """Start the scenario composer over for a newly loaded dataset.

    Its settings name the old data's resources, customers and sites: kept, a grid
    delay for a site the new data lacks would silently become a delay of every site
    (an empty site list means all). Every composer widget (keys ``cmp_*``) and the
    composed overrides are dropped; the named scenario is kept when the new data
    defines it.
    """
    ss = st.session_state
    had = bool(ss.get("overrides"))
    for k in [k for k in list(ss.keys()) if str(k).startswith("cmp_")]:
        if k != "cmp_scenario_name" or ss.get(k) not in (BASE, *ds.scenarios):
            del ss[k]
    ss["overrides"] = []
    if had:
        flash("info", "New data: the scenario composer was reset (it named the old data).")


def flash(kind: str, text: str) -> None:
    """Queue a message shown once on the next run (``kind``: success, info, warning, error)."""
    st.session_state["flash"].append((kind, text))


def show_flash() -> None:
    """Show and clear the queued messages."""
    for kind, text in st.session_state.get("flash", []):
        getattr(st, kind)(text)
    st.session_state["flash"] = []


# ------------------------------------------------------------------------ editing
def submit_draft(table: str, frame: pd.DataFrame) -> bool:
    """Record an editor's frame and re-validate every draft together.

    Returns
    -------
    bool
        True when the drafts validate (``base_ds`` becomes the new dataset); False
        when they do not (``base_ds`` stays, ``draft_findings`` lists why). The
        draft is kept either way, so an edit is never dropped.
    """
    ss = st.session_state
    ss["drafts"] = {**ss["drafts"], table: frame.reset_index(drop=True)}
    return revalidate_drafts()


def revalidate_drafts() -> bool:
    """Validate all drafts against ``origin_ds``; see :func:`submit_draft`."""
    ss = st.session_state
    origin: Dataset | None = ss["origin_ds"]
    if origin is None:
        return False
    try:
        ds = validate_drafts(origin, ss["drafts"])
    except DataValidationError as e:
        ss["draft_findings"] = list(e.findings)
        return False
    ss["base_ds"] = ds
    ss["draft_findings"] = []
    return True


def new_editors() -> None:
    """Start every table editor over from the drafts, as new widgets (keys and sources).

    For a new visit to the Data page: a cell typed but not entered when another page
    was opened reached the drafts, but the editor kept its old source and key; back on
    the page the browser drew the old value over the active edit and the grid no longer
    took clicks.
    """
    ss = st.session_state
    for t in TABLE_NAMES:
        ss.pop(editor_key(t), None)
    ss["editor_generation"] = int(ss.get("editor_generation", 0)) + 1
    ss["editor_src"] = {}


def discard_drafts() -> None:
    """Drop every edit: back to the dataset as loaded (the composed scenario is kept)."""
    origin = st.session_state["origin_ds"]
    if origin is not None:
        set_dataset(origin, keep_composer=True)


def table_findings() -> list[Finding]:
    """Return the findings shown next to the editors: drafts' errors or data warnings."""
    ss = st.session_state
    if ss["draft_findings"]:
        return list(ss["draft_findings"])
    base: Dataset | None = ss["base_ds"]
    return list(base.warnings) if base is not None else []


# ---------------------------------------------------------------------- scenario
#: The scenario name of the data as loaded plus the cell edits, with no scenario applied.
EDITED = "edited"


def scenario_label(name: str, overrides: list[dict[str, Any]]) -> str:
    """Label of a scenario + composed overrides (``negative``, ``negative+custom``)."""
    if not overrides:
        return name
    return "custom" if name == BASE else f"{name}+custom"


def build_scenario(base: Dataset, name: str, overrides: list[dict[str, Any]]) -> Dataset:
    """Apply a named scenario then composed overrides.

    Raises
    ------
    DataValidationError, UnknownScenarioError
        When the scenario is unknown or its data does not validate.
    """
    ds = apply_scenario(base, name)
    if overrides:
        ds = apply_overrides(ds, overrides, scenario=scenario_label(name, overrides))
    return ds


def active_dataset() -> Dataset | None:
    """Return the dataset the Plan page solves: ``base_ds`` with the scenario applied.

    Memoised on (base hash, scenario, overrides). When the scenario no longer
    applies to the edited data the base is used and ``scenario_error`` says why. Edited
    data with no scenario applied is named :data:`EDITED`, not ``base`` (the data as
    loaded), so a downloaded report's ``inputs.yaml`` re-solves it by that name.
    """
    ss = st.session_state
    base: Dataset | None = ss["base_ds"]
    if base is None:
        return None
    name, ovs = ss["scenario_name"], ss["overrides"]
    key = (base.hash, name, json.dumps(ovs, sort_keys=True, default=str))
    memo = ss.get("_active_memo")
    if memo is not None and memo[0] == key:
        return memo[1]
    try:
        ds = build_scenario(base, name, ovs)
        ss["scenario_error"] = None
    except (DataValidationError, UnknownScenarioError) as e:
        ss["scenario_error"] = e
        ds = base
    origin: Dataset | None = ss.get("origin_ds")
    if ds.scenario == BASE and origin is not None and base.tables_hash != origin.tables_hash:
        ds = ds.replace(scenario=EDITED)  # 'base' is the data as loaded (base_name_problem)
    ss["_active_memo"] = (key, ds)
    return ds


# ------------------------------------------------------------------------- solve
@dataclass(frozen=True)
class ErrorResult:
    """Stand-in result when the solve raised: status ``error`` and the message."""

    message: str
    status: str = "error"
    objective_usd: float | None = None
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    infeasibility: pd.DataFrame | None = None
    timings_s: dict[str, float] = field(default_factory=dict)
    dataset_hash: str = ""
    dataset_name: str = ""
    solver: str = ""


@dataclass
class PlanRun:
    """One solve of this session.

    ``solved_at`` (local HH:MM:SS) and ``seconds`` are those of the solve that computed
    the result; when ``cached`` is True the result came from the cache of an earlier
    solve of the same data, scenario and options, and was not recomputed.
    """

    run_id: str
    scenario: str
    ds_hash: str
    dataset_name: str
    solver: str
    result: Any
    solved_at: str
    seconds: float
    metrics: dict[str, Any]
    cached: bool = False
    inputs: Any = None  # SolvedInputs: the edits and overrides that made the data solved
    settings: dict[str, Any] = field(default_factory=dict)  # the Plan page's, when solved

    def timing_text(self) -> str:
        """``in 2.3 s`` or ``(cached result, solved in 2.3 s at 10:04)``."""
        if self.cached:
            return f"(cached result, solved in {self.seconds:.1f} s at {self.solved_at[:5]})"
        return f"in {self.seconds:.1f} s"


@dataclass(frozen=True)
class TimedResult:
    """A solve result with the wall time and clock time of the solve that computed it."""

    result: Any
    seconds: float
    solved_at: str
    cached: bool


def optimizer_status() -> tuple[bool, str]:
    """Return (True, "") when ``from optimizer import solve`` works, else (False, why)."""
    try:
        from optimizer import SolveOptions  # noqa: F401
    except Exception as e:  # noqa: BLE001 - a broken optimizer must not break the page
        return False, error_text(e)
    return True, ""


_CACHE_MISS = threading.local()


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False)
def _solve_cached(
    ds_hash: str,
    scenario: str,
    solver: str,
    time_limit_s: float | None,
    _ds: Dataset,
    clusters: bool = False,
    formulation: str = "compact",
    objective: str = "cost",
) -> tuple[Any, float, str]:
    from optimizer import SolveOptions, solve

    _CACHE_MISS.ran = True  # the body runs only on a cache miss
    t0 = time.perf_counter()
    settings = dict[str, Any](clusters=clusters, formulation=formulation, objective=objective)
    res = solve(_ds, SolveOptions(solver=solver, time_limit_s=time_limit_s, **settings))
    return res, time.perf_counter() - t0, datetime.now().strftime("%H:%M:%S")


def solve_timed(
    ds: Dataset,
    *,
    solver: str = "highs",
    time_limit_s: float | None = None,
    clusters: bool = False,
    formulation: str = "compact",
    objective: str = "cost",
) -> TimedResult:
    """Solve ``ds`` (cached on its content hash, scenario and options); never raises.

    ``clusters`` solves the exact training-cluster MIP (``--clusters``); ``formulation``
    is ``compact`` (the default) or ``reference`` (``--formulation``: the same optimum,
    per-site, per-customer columns); ``objective`` is ``cost`` (the default) or
    ``margin`` (``--objective``: revenue at the customers' prices minus cost).

    Returns
    -------
    TimedResult
        ``result`` is a PlanResult, or an :class:`ErrorResult` when the optimizer is
        missing or raised (errors are not cached). ``seconds`` and ``solved_at`` are
        those of the solve that computed the result; ``cached`` says it was reused.
    """
    ok, why = optimizer_status()
    now = datetime.now().strftime("%H:%M:%S")
    if not ok:
        err = ErrorResult(f"The optimizer is not available: {why}", dataset_hash=ds.hash)
        return TimedResult(err, 0.0, now, False)
    _CACHE_MISS.ran = False
    t0 = time.perf_counter()
    try:
        res, seconds, solved_at = _solve_cached(
            ds.hash, ds.scenario, solver, time_limit_s, ds, clusters, formulation, objective
        )
    except Exception as e:  # noqa: BLE001 - shown as an error status, never a traceback
        err = ErrorResult(
            f"The solve failed: {error_text(e)}",
            dataset_hash=ds.hash,
            dataset_name=ds.name,
            solver=solver,
        )
        return TimedResult(err, time.perf_counter() - t0, now, False)
    return TimedResult(res, seconds, solved_at, not _CACHE_MISS.ran)


def solve_dataset(
    ds: Dataset,
    *,
    solver: str = "highs",
    time_limit_s: float | None = None,
    formulation: str = "compact",
    objective: str = "cost",
) -> Any:
    """Solve ``ds`` (cached); return only the result. See :func:`solve_timed`."""
    settings = dict[str, Any](formulation=formulation, objective=objective)
    return solve_timed(ds, solver=solver, time_limit_s=time_limit_s, **settings).result


@dataclass(frozen=True)
class SolveChoice:
    """The solver settings chosen on the Plan page, used by every solve of the Risk page.

    Attributes
    ----------
    solver : str
        Solver name as the Plan page offers it (``highs``, ``cbc``, ``GLPK_CMD`` ...).
    time_limit_s : float or None
        Time limit of each solve, seconds (None: none).
    formulation, objective : str
        ``compact`` or ``reference``; ``cost`` or ``margin``.
    """

    solver: str = "highs"
    time_limit_s: float | None = None
    formulation: str = "compact"
    objective: str = "cost"

    def options(self) -> Any:
        """Return these settings as :class:`optimizer.SolveOptions` (an LP, no clusters)."""
        from optimizer import SolveOptions

        return SolveOptions(**asdict(self))  # the fields are SolveOptions' own

    def text(self) -> str:
        """Return the settings in words: ``HiGHS · bulk, no time limit, compact formulation``."""
        from optimizer.plan.solvers import solver_label

        limit = "no time limit" if self.time_limit_s is None else f"{self.time_limit_s:g} s limit"
        text = f"{solver_label(self.solver)}, {limit}, {self.formulation} formulation"
        return text if self.objective == "cost" else f"{text}, {self.objective} objective"


def plan_solve_choice() -> SolveChoice:
    """Return the Plan page's solver, time limit, formulation and objective (or defaults).

    Read from the Plan page's widgets in session state (``solve_solver``,
    ``solve_time_limit``, ``solve_formulation``, ``solve_objective``); a solver no
    longer available falls back to the first one offered (``highs``).
    """
    ss = st.session_state
    names = [n for n, _ in solver_choices()] or ["highs"]
    solver = str(ss.get("solve_solver") or names[0])
    limit = float(ss.get("solve_time_limit") or 0.0)
    return SolveChoice(
        solver=solver if solver in names else names[0],
        time_limit_s=limit if limit > 0 else None,
        formulation=str(ss.get("solve_formulation") or "compact"),
        objective=str(ss.get("solve_objective") or "cost"),
    )


def record_run(
    ds: Dataset,
    result: Any,
    solver: str,
    seconds: float,
    *,
    solved_at: str | None = None,
    cached: bool = False,
    settings: dict[str, Any] | None = None,
) -> PlanRun:
    """Store a solve as the current plan and append it to the session's run list."""
    from ui.report_inputs import solved_app_inputs

    run = PlanRun(
        run_id=datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6],
        scenario=ds.scenario,
        ds_hash=ds.hash,
        dataset_name=ds.name,
        solver=solver,
        result=result,
        solved_at=solved_at or datetime.now().strftime("%H:%M:%S"),
        seconds=seconds,
        metrics=plan_metrics(result, ds),
        cached=cached,
        inputs=solved_app_inputs(st.session_state, ds),
        settings=dict(settings or {}),
    )
    st.session_state["plan"] = run
    st.session_state["runs"] = [*st.session_state["runs"], run]
    return run


def solve_and_record(
    ds: Dataset,
    *,
    solver: str = "highs",
    time_limit_s: float | None = None,
    clusters: bool = False,
    formulation: str = "compact",
    objective: str = "cost",
) -> PlanRun:
    """Solve ``ds`` (cached) and record it; see :func:`solve_timed`."""
    settings = dict[str, Any](clusters=clusters, formulation=formulation, objective=objective)
    t = solve_timed(ds, solver=solver, time_limit_s=time_limit_s, **settings)
    settings.update(solver=solver, time_limit_s=time_limit_s)
    kw = dict[str, Any](solved_at=t.solved_at, cached=t.cached, settings=settings)
    return record_run(ds, t.result, solver, t.seconds, **kw)


def current_plan(ds: Dataset | None) -> PlanRun | None:
    """Return the latest plan when it was solved on exactly ``ds`` (same hash), else None."""
    plan: PlanRun | None = st.session_state.get("plan")
    if plan is None or ds is None or plan.ds_hash != ds.hash:
        return None
    return plan


def runs_frame() -> pd.DataFrame:
    """Return the session's runs, one row each.

    Columns run_id, scenario, status, objective_usd, cost_usd, served_share, solver, solved_at,
    solve_s (of the solve that computed the result), cached, dataset_hash.
    """
    rows = [
        {
            "run_id": r.run_id,
            "scenario": r.scenario,
            "status": r.metrics.get("status"),
            "objective_usd": r.metrics.get("objective_usd"),
            "cost_usd": r.metrics.get("cost_usd"),
            "served_share": r.metrics.get("served_share"),
            "solver": r.solver,
            "solved_at": r.solved_at,
            "solve_s": round(r.seconds, 2),
            "cached": r.cached,
            "dataset_hash": r.ds_hash[:12],
        }
        for r in st.session_state.get("runs", [])
    ]
    columns = "run_id scenario status objective_usd cost_usd served_share solver solved_at solve_s"
    return pd.DataFrame(rows, columns=[*columns.split(), "cached", "dataset_hash"])
