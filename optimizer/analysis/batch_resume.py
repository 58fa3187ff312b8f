"""Which cases a re-run skips: the solve options in a case's key, and a verified plan.

A case is keyed by its name and :meth:`optimizer.analysis.sweep_cases.SweepCase.key` (sha256 of the
base dataset hash, the named scenario, the overrides, the solve options of
:func:`key_options`: solver, threads, integer units, clusters, MIP gap and start,
formulation ..., every option but the time limit; the entry records them all under
``options``; and the installed planner's version, so a case an older model solved is
redone, not kept beside new ones). A case is
recorded ``state: "done"`` only when it has a plan (status ``optimal`` or
``time_limit_feasible``) and its written files re-read and its figures recompute
(:func:`optimizer.analysis.case_check.case_problem`: every table present, a plan's costs sum
to its objective, its outcomes recompute); a case whose files verify but whose status
has no plan (infeasible, no solution within the time limit) is ``no_plan``, anything
else ``failed`` with the reason. A re-run skips a case whose manifest entry has the
same key (so the same options), ``state == "done"`` and files that still verify; it
redoes the rest, so a time-limited case without a plan is tried again, and a re-run
with another solver or formulation redoes every case. The time limit is left out of the
key because an optimal plan is the same whatever the limit: a re-run with another
``--time-limit`` keeps the optimal plans (a tighter limit replaced them with "no
solution") and redoes the plans the old limit stopped (``time_limit_feasible``) only
under a longer limit.
Several batches may write into one folder at once, and several sweeps may share one: the
manifest is merged under a lock and every sweep's cases are kept
(:mod:`optimizer.analysis.batch_folder`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from optimizer.analysis.case_check import case_problem
from optimizer.analysis.sweep_cases import SweepCase
from optimizer.output.summary import OK_STATUSES

__all__ = ["NO_PLAN", "case_options", "is_done", "key_options", "split_done", "verify_or_fail"]

#: State of a case whose files are written and verify but whose status has no plan
#: (infeasible, unbounded, no solution within the time limit): redone by a re-run.
NO_PLAN = "no_plan"

log = logging.getLogger(__name__)


def case_options(options: Any) -> dict[str, Any]:
    """Return the solve options a batch case's entry records (its key: :func:`key_options`).

    Every field of :class:`optimizer.plan.options.SolveOptions`: the solver, the time limit,
    threads, integer units, clusters, the MIP gap and start, the infeasibility
    explanation, the checker's tolerance, the formulation and the objective. Each but the
    time limit can change an optimal plan, its status or its verification (threads and the
    formulation only among tied optima), so a re-run with any of them changed redoes the
    case; the time limit only stops a solve before its optimum (:func:`is_done`).
    Numbers are written as floats (a time limit of 60 and 60.0 are one limit).
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


def key_options(solve_doc: Mapping[str, Any]) -> dict[str, Any]:
    """Return the solve options of a case's key: :func:`case_options` less the time limit.

    An optimal plan is the same whatever the time limit, so a limit alone does not make a
    case new; :func:`is_done` redoes a plan that the limit stopped when the limit changes.
    """
    return {k: v for k, v in solve_doc.items() if k != "time_limit_s"}


def is_done(
    out_dir: Path,
    name: str,
    entry: Mapping[str, Any] | None,
    key: str,
    time_limit_s: float | None = None,
) -> bool:
    """Return True when a case has a verified plan for this key (solve options included).

    Done means: the entry has this key, ``state == "done"`` (a plan: status optimal
    or time_limit_feasible, recorded only after its files verified), a plan status,
    and files that still verify; a plan the time limit stopped (not ``optimal``) only
    when ``time_limit_s`` (seconds, None: no limit; as :func:`case_options` writes it)
    is no longer than the limit that stopped it: a longer one may get further, a shorter
    one would replace the plan with a worse one or none. A case without a plan
    (:data:`NO_PLAN`), a failed one, or one run with other options is redone.
    """
    if not entry or entry.get("state") != "done" or entry.get("key") != key:
        return False
    if entry.get("status") not in OK_STATUSES:
        return False
    limit = (entry.get("options") or {}).get("time_limit_s")
    longer = limit is not None and (time_limit_s is None or time_limit_s > limit)
    if entry.get("status") != "optimal" and longer:
        return False  # stopped by a shorter limit: this run's may get further
    return case_problem(out_dir, name, entry) is None


def verify_or_fail(out_dir: Path, name: str, entry: dict[str, Any]) -> None:
    """Re-read a case just written; mark it failed (to be redone) when it does not verify."""
    problem = case_problem(out_dir, name, entry)
    if problem is not None:
        entry["state"] = "failed"
        entry["error"] = f"written case does not verify: {problem}"
        log.warning("case %s: %s", name, entry["error"])


def split_done(
    out: Path,
    cases: Sequence[SweepCase],
    manifest: Mapping[str, Any],
    keys: Mapping[str, str],
    time_limit_s: float | None = None,
) -> tuple[list[SweepCase], list[SweepCase]]:
    """Return (cases to run, cases already done: same key and files that verify).

    ``time_limit_s`` is this run's limit (:func:`is_done`).
    """
    entries = dict(manifest.get("scenarios") or {})
    todo = [
        c
        for c in cases
        if not is_done(out, c.name, entries.get(c.name), keys[c.name], time_limit_s)
    ]
    return todo, [c for c in cases if c not in todo]
