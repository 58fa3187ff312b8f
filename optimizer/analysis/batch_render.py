"""Printing a batch with rich: scenario and grid cases, Monte Carlo percentiles, invalid cases."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from capacity.validation import Finding
from optimizer.output.summary import OK_STATUSES

if TYPE_CHECKING:
    from optimizer.analysis.batch import BatchResult

__all__ = ["degenerate_cases_note", "render_batch", "render_invalid"]


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
        console.print(_fixed_cases_table(fixed, console.width))
    mc = s[(s["kind"] == "monte_carlo") & (s["state"] != "failed")]  # the plans written
    if len(mc):
        console.print(_monte_carlo_table(mc))
        binding = _binding_shares_table(mc, str(result.manifest.get("solver") or ""))
        if binding is not None:
            console.print(binding)
    n_bad = len(result.invalid)
    console.print(
        f"{result.n_done} solved, {result.n_failed} failed or not optimal"
        + (f" ({n_bad} with invalid data)" if n_bad else "")
        + f", {result.n_skipped} skipped (already done)"
        + (
            f", {result.n_replaced} since replaced by another run's plan of the same name "
            "(other_run below: a batch into this folder at the same time)"
            if result.n_replaced
            else ""
        )
        + f". Output: {result.out_dir}"
    )
    bad = s[(s["state"] != "done") | (~s["status"].isin(OK_STATUSES))]
    for r in bad.itertuples(index=False):
        console.print(f"[red]{r.scenario}[/red]: {r.status or r.state} {r.error}")
    note = degenerate_cases_note(s)
    if note:
        console.print(note)


def degenerate_cases_note(summary: pd.DataFrame) -> str:
    """Return the note on non-unique shadow prices of a batch ("" when none is).

    A case with limits used to the full at a zero shadow price (``degenerate_limits``
    > 0) has many equal sets of duals: which one a case reports depends on the warm
    start its worker reused, so its binding limits can differ between two runs of the
    same batch for the same plan (the single solve's note, per batch).
    """
    if "degenerate_limits" not in summary:
        return ""
    n = int((pd.to_numeric(summary["degenerate_limits"], errors="coerce") > 0).sum())
    if not n:
        return ""
    return (
        f"Note: {n} case(s) have limits used to the full with a zero shadow price, so "
        "their shadow prices and binding limits are not unique: another solver, or "
        "`capacity solve` of a case (a cold start), can report the same plans with other "
        "binding limits (batch_summary.csv: degenerate_limits)."
    )


SUMMED_OVER_QUARTERS = ("unmet_h100e", "breach_mw")
"""Batch outcome columns that add every quarter's value (H100e- or MW-quarters)."""


#: Least width of the fixed cases table's columns but the name (status, five numbers,
#: their padding and rules).
_NUMBER_COLUMNS_WIDTH = 72


def _fixed_cases_table(fixed: pd.DataFrame, width: int = 140) -> Any:
    """Rich table of the scenario and grid cases (cost discounted), in the app tables' formats.

    ``width`` is the console's: names are kept on one line when the number columns keep
    their least widths beside them (about 70 characters), else they fold.
    """
    from rich.markup import escape
    from rich.table import Table

    from optimizer.output.formatting import text_column

    t = Table(title="Scenarios and grid (cost discounted; unmet and breach summed over quarters)")
    # whole names (cut ones looked the same), on one line where they fit beside the number
    # columns: their headers wrap at spaces instead of the names mid-word
    longest = max((len(str(n)) for n in fixed["scenario"]), default=8)
    t.add_column("scenario", overflow="fold", no_wrap=longest <= width - _NUMBER_COLUMNS_WIDTH)
    t.add_column("status")
    cells = []
    # a case recorded failed (its files not written or not verified) has no plan here:
    # its row showed "optimal" and the solve's cost above the lines saying it failed
    failed = (fixed["state"] == "failed").to_numpy()
    for c in ("total_cost_usd", "unmet_h100e", "trainium_share", "breach_mw", "time_s"):
        pairs = zip(fixed[c], failed, strict=True)
        values = [None if bad and c != "time_s" else _value(v) for v, bad in pairs]
        header, texts = text_column(c, values)
        if c in SUMMED_OVER_QUARTERS:
            header = header.replace(c.split("_")[0], f"{c.split('_')[0]} Σ quarters", 1)
        t.add_column(escape(header), justify="right")  # "[s]" is not rich markup
        cells.append(texts)
    for i, r in enumerate(fixed.itertuples(index=False)):
        status = f"failed ({r.status})" if failed[i] and r.status else str(r.status or r.state)
        t.add_row(r.scenario, status, *(col[i] for col in cells))
    return t


def _value(x: Any) -> float | None:
    """Return a cell as a float, None when missing (the formatter's ``–``)."""
    return None if x is None or pd.isna(x) else float(x)


def _monte_carlo_table(mc: pd.DataFrame) -> Any:
    """Rich table of the P10/P50/P90/mean of each outcome over the Monte Carlo samples."""
    from rich.markup import escape
    from rich.table import Table

    from optimizer.analysis.outcomes import ALL_OUTCOMES, outcome_percentiles
    from optimizer.output.formatting import text_column

    pct = outcome_percentiles(mc, [o for o in ALL_OUTCOMES if o in mc])
    n_ok = int(mc["status"].isin(OK_STATUSES).sum())
    t = Table(title=f"Monte Carlo: {len(mc)} samples, {n_ok} with a plan")
    for c in ("outcome", "P10", "P50", "P90", "mean"):
        t.add_column(c, justify="left" if c == "outcome" else "right")
    for r in pct.itertuples(index=False):
        # each row is one outcome in its own unit: the row is one column of the formatter
        header, texts = text_column(r.outcome, [_value(getattr(r, k)) for k in _PCT])
        t.add_row(escape(header), *texts)
    return t


_PCT = ("p10", "p50", "p90", "mean")


#: The limits cell of a family whose rows are balances or definitions, not limits.
STRUCTURAL_NOTE = "(balance or definition rows: priced in every plan, not limits)"


def _binding_shares_table(mc: pd.DataFrame, solver: str = "") -> Any | None:
    """Rich table of how often each family and limit binds (None without a plan).

    A sample whose solver returned no duals (null ``binding_families``) counts as
    unknown, never as "binds nowhere"; the caption says so and names solvers with duals.
    """
    from rich.table import Table

    from optimizer.analysis.outcomes import binding_shares
    from optimizer.output.binding_limits import LIMIT_FAMILIES, no_duals_text

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
        if not txt and r.family not in LIMIT_FAMILIES:  # an empty cell read as "none"
            txt = STRUCTURAL_NOTE
        t.add_row(r.family, "unknown" if pd.isna(r.share_priced) else f"{r.share_priced:.0%}", txt)
    return t


def render_invalid(
    invalid: Mapping[str, Sequence[Finding]], console: Any = None, *, per_case: int = 5
) -> None:
    """Print the cases whose data does not validate as one rich table.

    Parameters
    ----------
    invalid : mapping of str to sequence of Finding
        From :func:`optimizer.analysis.batch_invalid.validate_cases` (or
        :attr:`optimizer.analysis.batch.BatchResult.invalid`).
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
