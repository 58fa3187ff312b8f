"""Is a written batch case really done? Re-read its files and recompute its figures.

A batch case is recorded ``state: "done"`` only when this module finds nothing wrong
with what is on disk; otherwise it is recorded ``failed`` and redone by the next run
of the same command. The checks, in order:

1. every table of :data:`optimizer.output.parquet_tables.RESULT_SCHEMAS` has its file, and
   the files listed in the manifest entry exist, each of this case, run and dataset by its
   footer (as read_report checks them), and the dataset the one the entry records the case
   was solved on (``solved_dataset_hash``; an entry without it is redone);
2. ``summary.parquet`` holds one row whose status is the entry's status;
3. a status with a plan (``optimal``, ``time_limit_feasible``) has a finite
   objective, a non-empty ``costs`` table whose ``cost_usd`` sums to the objective
   (relative tolerance :data:`REL_TOL`), and a ``demand`` table with as many rows
   as the summary's demand says there are (non-empty when demand is positive);
4. the outcomes recorded in the manifest (``total_cost_usd``, ``unmet_h100e``,
   ``breach_mw``) recompute from the tables (``total_cost_usd`` in the margin
   objective: the costs less the rows of cash kind ``revenue``).

A status without a plan (infeasible, unbounded, no solution at the time limit) must
*not* carry an objective. This is what keeps an empty case (status "optimal",
objective null, 0-row tables) from being recorded as done, whatever produced it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

__all__ = ["REL_TOL", "case_problem"]

#: Relative tolerance of a recomputed figure against the recorded one.
REL_TOL = 1e-6

_PLAN_STATUSES = ("optimal", "time_limit_feasible")


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-6)


def _column_sum(path: Path, column: str) -> tuple[float, int]:
    """Return (sum of a numeric column, row count) of one Parquet file."""
    table = pq.read_table(path, columns=[column])
    total = pc.sum(table.column(column)).as_py()
    return float(total or 0.0), table.num_rows


def _costs_sums(path: Path) -> tuple[float, float, int]:
    """Return (sum of ``cost_usd``, its sum over cash kind ``revenue``, rows) of costs.parquet.

    One read of the two columns: the revenue rows (negative, income) are what the margin
    objective's total cost leaves out.
    """
    table = pq.read_table(path, columns=["cost_usd", "cash_kind"])
    cost = table.column("cost_usd")
    revenue = pc.sum(pc.filter(cost, pc.equal(table.column("cash_kind"), "revenue"))).as_py()
    return float(pc.sum(cost).as_py() or 0.0), float(revenue or 0.0), table.num_rows


def _missing_files(sdir: Path, out: Path, entry: Mapping[str, Any]) -> str | None:
    from optimizer.output.parquet_tables import RESULT_SCHEMAS

    listed = [out / f for f in entry.get("files") or []]
    absent = [p.name for p in listed if not p.is_file()]
    absent += [f"{t}.parquet" for t in RESULT_SCHEMAS if not (sdir / f"{t}.parquet").is_file()]
    if absent:
        return "missing table file(s): " + ", ".join(sorted(set(absent)))
    return None


def _other_plans_files(sdir: Path, entry: Mapping[str, Any]) -> str | None:
    """Say which file of the folder is another table's, scenario's, run's or data's (None: none).

    The footers read_report checks (:func:`optimizer.output.parquet_tables.check_one_plan`):
    a table copied from another case was kept as done on resume, then read_run refused
    the folder. Then the folder's data against the entry's ``solved_dataset_hash``: a case
    folder replaced by a solve of other data (costs within 1e-6 of the recorded
    objective) was kept as done. An entry without it (an older batch) cannot be checked:
    the case is redone.
    """
    from optimizer.output.atomic import ReportError
    from optimizer.output.parquet_tables import check_one_plan, check_table_file

    files = [p for p in sorted(sdir.glob("*.parquet")) if not p.name.startswith(".")]
    try:
        schemas = {p: check_table_file(p) for p in files}
        check_one_plan(sdir, schemas)  # one dataset among the files: any footer names it
    except ReportError as e:
        return str(e)
    want = entry.get("solved_dataset_hash")
    if not want:
        return "the manifest entry records no solved data (an older batch): solve it again"
    meta = schemas[sdir / "summary.parquet"].metadata or {}
    got = meta.get(b"dataset_hash", b"").decode()
    if got != want:
        return (
            f"its tables are a plan of data {got[:12] or 'unrecorded'}, the case was solved "
            f"on {str(want)[:12]} (a folder copied from another run)"
        )
    return None


def _plan_problem(sdir: Path, entry: Mapping[str, Any], summary: Mapping[str, Any]) -> str | None:
    """Run checks 3 and 4 for a status that has a plan."""
    obj = entry.get("objective_usd")
    if obj is None or not math.isfinite(float(obj)):
        return f"status {entry.get('status')!r} but no objective"
    cost, revenue, n_cost = _costs_sums(sdir / "costs.parquet")
    if n_cost == 0:
        return "costs table is empty"
    if not _close(cost, float(obj)):
        return f"costs sum to {cost:.9g} USD, objective says {float(obj):.9g}"
    unmet, n_dem = _column_sum(sdir / "demand.parquet", "unmet_h100e")
    if float(summary.get("demand_h100e") or 0.0) > 0 and n_dem == 0:
        return "demand table is empty while the summary has demand"
    breach, _ = _column_sum(sdir / "commitments.parquet", "breach_mw")
    outcomes = entry.get("outcomes") or {}
    margin = (entry.get("options") or {}).get("objective") == "margin"
    total = cost - revenue if margin else cost  # a margin plan's cost: revenue not netted
    for name, value in (("total_cost_usd", total), ("unmet_h100e", unmet), ("breach_mw", breach)):
        recorded = outcomes.get(name)
        if recorded is None or not _close(float(recorded), value):
            return f"outcome {name} {recorded!r} does not recompute ({value:.9g})"
    return None


def case_problem(out_dir: str | Path, case: str, entry: Mapping[str, Any] | None) -> str | None:
    """Return why a batch case written under ``out_dir`` is not verifiably done, or None.

    Parameters
    ----------
    out_dir : path
        The batch output folder (``<out>/scenario=<case>/<table>.parquet``).
    case : str
        Case name.
    entry : mapping or None
        The case's manifest entry (``status``, ``objective_usd``, ``files``,
        ``outcomes``).

    Returns
    -------
    str or None
        A one-line reason ("costs table is empty", "status 'optimal' but no
        objective" ...), or None when every check of the module docstring passes.
        Unreadable files are a reason, never an exception.
    """
    from optimizer.output.run_folder import scenario_dir

    if not entry:
        return "no manifest entry"
    out = Path(out_dir)
    sdir = scenario_dir(out, case)
    try:
        problem = _missing_files(sdir, out, entry) or _other_plans_files(sdir, entry)
        if problem:
            return problem
        rows = pq.read_table(sdir / "summary.parquet").to_pylist()
        if len(rows) != 1:
            return f"summary table has {len(rows)} rows, not 1"
        summary = rows[0]
        if summary.get("status") != entry.get("status"):
            return f"summary status {summary.get('status')!r} != {entry.get('status')!r}"
        if entry.get("status") in _PLAN_STATUSES:
            return _plan_problem(sdir, entry, summary)
        if entry.get("objective_usd") is not None:
            return f"status {entry.get('status')!r} carries an objective"
    except (OSError, ValueError, KeyError) as exc:  # pyarrow errors are OSError/ValueError
        return f"unreadable: {type(exc).__name__}: {exc}"
    return None
