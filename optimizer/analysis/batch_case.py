"""One batch case in a process: the per-process caches, the retained HiGHS session, the task.

:func:`run_case` is the Dask task of ``capacity batch``; :func:`solve_many` solves many
variants of one dataset in this process (the risk views use it). With reuse a case's
model is the cached base model patched (:func:`optimizer.analysis.batch_patch.patch_model`).

A patched model is then solved on one retained HiGHS instance per worker process and
base (:class:`optimizer.plan.highs_session.HighsSession`, cached by base dataset hash and options):
only the changed costs, bounds, objective constant and matrix entries are pushed and
the dual simplex restarts from the base model's optimal basis (the session opens by
solving the base), never from the last case's, so a case's plan does not depend on
the cases a worker solved before it. A rebuilt model is solved cold; a warm run that
does not end optimal is repeated cold so statuses stay those of a cold solve. Where
the optimum is not unique a warm start may return another tied plan than a cold solve
(same objective), the same one whatever the order; ``tests/test_batch.py`` compares
warm and cold case by case, and one case solved after others and first.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from capacity.scenarios import UnknownScenarioError, apply_overrides, apply_scenario
from capacity.validation import DataValidationError
from optimizer.analysis.batch_invalid import INVALID_DATA, error_text
from optimizer.analysis.batch_patch import patch_model
from optimizer.analysis.sweep_cases import SweepCase
from optimizer.output.progress import ProgressLike

__all__ = ["CRASH_ENV", "CaseResult", "run_case", "solve_many"]

#: Test-only hook: a worker that runs the case named by this environment variable
#: exits at once (``os._exit``), as if it were killed.
CRASH_ENV = "CAPACITY_BATCH_TEST_EXIT_ON"


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
    result : optimizer.plan.plan_result.PlanResult or None
        The plan (tables included); None on failure.
    error : str
        Exception text, or why the solve gave no optimal plan (the result's message);
        empty for an optimal plan.
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


# Per-process caches, keyed by dataset hash. Small: a batch has few bases.
_MODEL_CACHE: dict[tuple[str, str], Any] = {}  # (hash, formulation) -> PlanningModel (LP)
_REF_CACHE: dict[tuple[str, str | None], Any] = {}  # (hash, scenario) -> Dataset
#: (base hash, options) -> optimizer.plan.highs_session.HighsSession holding a patched base model
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
    (:class:`optimizer.plan.highs_session.HighsSession`): only changed costs and bounds are pushed
    and HiGHS restarts from the base's optimal basis; a warm run that is not optimal
    is re-solved cold. A rebuilt model (a change the patcher cannot make, a sampled
    scenario say) that has the base's shape is passed whole to the same instance and
    starts from that basis
    (:meth:`optimizer.plan.highs_session.HighsSession.can_start`); another is solved
    cold on its own, as before.
    """
    from optimizer.plan.model import build_model
    from optimizer.plan.pipeline import solve_model

    t0 = time.perf_counter()
    model = None
    exact_clusters = bool(getattr(options, "clusters", False))
    form = getattr(options, "formulation", "compact")
    goal = getattr(options, "objective", "cost")
    base_model = None
    if reuse and not options.integer_units and not exact_clusters:
        base_model = _memo(
            _MODEL_CACHE,
            (base_ds.hash, form, goal),
            lambda: build_model(base_ds, formulation=form, objective=goal),
        )
        model = patch_model(base_model, base_ds, ds)
    reused = model is not None
    if model is None:
        model = build_model(
            ds,
            integer_units=options.integer_units,
            clusters=exact_clusters,
            formulation=form,
            objective=goal,
        )
    build_s = time.perf_counter() - t0
    session = None
    if base_model is not None:
        session = _session_for(model, reused, base_model, base_ds, options)
    return solve_model(model, options, build_s=build_s, session=session)[0], reused


def _session_for(model: Any, patched: bool, base_model: Any, base_ds: Any, options: Any) -> Any:
    """Return the retained HiGHS session to solve ``model`` on (None: cold, alone).

    The session of a base is opened by solving the base model itself, cold, and every
    case starts from that optimal basis (an anchored
    :class:`~optimizer.plan.highs_session.HighsSession`): a case's plan does not depend
    on which cases this process solved before it, so a batch reports the same tables
    whichever worker takes which case, under load or not. A patched model always takes
    the session; a rebuilt one (``patched`` False, a sampled scenario say) only when
    it would start there from the anchor
    (:meth:`~optimizer.plan.highs_session.HighsSession.can_start`: same shape, an LP the
    dual simplex solves); another is solved alone.
    """
    from optimizer.plan.highs_session import HighsSession

    if options.solver != "highs":
        return None
    key = (base_ds.hash, options)
    session = _SESSION_CACHE.get(key)
    if session is None:
        session = HighsSession(options, tuned=True, anchored=True)
        session.run(base_model)  # the anchor: the base's optimal basis
        _SESSION_CACHE[key] = session
    if not session.has_start:  # the base has no optimum to start from: each case cold
        return None
    if patched or session.can_start(model):
        return session
    return None


def solve_many(
    base_ds: Any,
    items: Sequence[Any],
    options: Any = None,
    reuse: bool = True,
    *,
    progress: ProgressLike | None = None,
    names: Sequence[str] | None = None,
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
        True: patch the base model's arrays for each variant
        (:func:`~optimizer.analysis.batch_patch.patch_model`) and solve it on this
        process's retained HiGHS instance from the base's optimal basis
        (``timings_s["warm_start"]`` is 1.0 for such a case); rebuild and solve cold
        when the change is not patchable, and re-solve cold when a warm run is not
        optimal. False: build and solve every model from scratch
        (the reference for benchmarks).
    progress : ProgressLike, optional
        Told each case's name before its solve and counted after it (done when the
        case has an objective), e.g. :class:`optimizer.output.progress.Progress`.
    names : sequence of str, optional
        The cases' names for ``progress`` (default ``case 1``, ``case 2`` ...).

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
            if progress is not None:
                progress.now(names[i] if names is not None else f"case {i + 1}")
            res, _ = _solve_reusing(base_ds, ds, options, reuse)
            out.append(res)
            if progress is not None:
                progress.advance(getattr(res, "objective_usd", None) is not None)
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
    Measured with ``gc.callbacks`` on a 20-case sweep at the default size:
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
    from optimizer.output.binding_limits import degenerate_limits

    t0 = time.perf_counter()
    if os.environ.get(CRASH_ENV) and os.environ.get(CRASH_ENV) == case.name:
        os._exit(17)  # test-only: behave like a worker killed mid-task
    try:
        ref = _memo(_REF_CACHE, (base.hash, case.base), lambda: apply_scenario(base, case.base))
        if case.overrides:  # same as sweep.cases_dataset(base, case), from the cached ref
            ds = apply_overrides(ref, case.overrides, scenario=case.name)
        else:
            ds = dataclasses.replace(ref, scenario=case.name)
        res, reused = _solve_reusing(ref, ds, case.solve_options(options), reuse)
        outcomes: dict[str, Any] = {}
        if res.objective_usd is not None:
            outcomes = dict(plan_outcomes(res, ds))
            fams, lims = binding_families(res), binding_limits(res)  # None: no duals
            outcomes["binding_families"] = None if fams is None else sorted(fams)
            outcomes["binding_limits"] = None if lims is None else sorted(lims)
            # limits used to the full at a zero price: the duals above are one of many
            outcomes["degenerate_limits"] = None if lims is None else degenerate_limits(res.tables)
        return CaseResult(
            case.name,
            key,
            res.status.value,
            res.objective_usd,
            res,
            error="" if res.status.value == "optimal" else res.message,  # why, when not
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
            error=error_text(exc),
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
