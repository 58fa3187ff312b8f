"""Rich rendering of a plan's summary: the ten-second report ``capacity solve`` prints."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table

from optimizer.output.binding_limits import no_duals_text
from optimizer.output.formatting import fmt_energy, fmt_mw, fmt_qty, fmt_usd, fmt_water
from optimizer.output.summary import PlanSummary, status_line
from optimizer.output.summary_text import (
    calibration_headline,
    cash_line,
    clusters_text,
    commitments_title,
    dual_notes,
    fleet_line,
    small_shortfall,
    violation_rows,
    violations_by_family,
)

__all__ = ["render_summary"]

_STATUS_STYLE = {
    "optimal": "bold green",
    "time_limit_feasible": "bold yellow",
}


def _solver_notes(s: PlanSummary, con: Console) -> None:
    """Print the MIP best bound, when the solver reports one."""
    if s.mip_bound_usd is not None:
        con.print(f"MIP best bound: {fmt_usd(s.mip_bound_usd)}")


BRIEF_LIMITS = 5
"""Binding limits the brief summary lists (``--verbose`` lists the summary's ``top``)."""

VERBOSE_HINT = (
    "More: --verbose lists every customer and workload, the top 10 limits, the chips, "
    "commitments and cluster runs in full; the report holds every table."
)
"""The last line of the brief summary: what ``--verbose`` adds."""


def render_summary(
    summary: PlanSummary, console: Console | None = None, *, verbose: bool = True
) -> None:
    """Print a summary with rich, readable in ten seconds.

    Sections: status and objective, costs by term, demand served per customer and
    workload, binding limits ranked by shadow price, energy and water, chips by
    generation, commitments; for a plan without a usable solution, the reason and the
    elastic re-solve's explanation rows instead.

    Parameters
    ----------
    summary : PlanSummary
        From :func:`optimizer.output.summary.summarize`.
    console : rich.console.Console, optional
        Where to print (default: a new console on stdout).
    verbose : bool
        Every section in full (the default). False prints the brief form that fits a
        screen (about 40 lines on the default data): demand rows only where some is
        unmet, the top :data:`BRIEF_LIMITS` limits, the fleet in one line, the
        commitments table only when one is breached, the cluster and calibration
        headlines, then :data:`VERBOSE_HINT`. Problems (violations, infeasibility)
        are printed in full either way.
    """
    con = console or Console()
    _print_head(con, summary)
    _print_problems(con, summary)
    if not summary.ok:
        return
    _print_costs(con, summary)
    con.print(_served_table(summary, short=not verbose))
    _print_binding(con, summary, None if verbose else BRIEF_LIMITS)
    _print_resources(con, summary, verbose)
    _print_clusters_and_calibration(con, summary, verbose)
    if not verbose:
        con.print(VERBOSE_HINT, style="dim")


def _print_head(con: Console, s: PlanSummary) -> None:
    """Print the plan's title line, status and objective, solver notes and warnings."""
    style = _STATUS_STYLE.get(s.status, "bold red")
    title = f"Plan {s.scenario!r}" if s.scenario else "Plan"
    horizon = f"{s.first_period}-{s.last_period}" if s.first_period else "no periods"
    con.print(
        f"[bold]{title}[/bold] on {s.dataset_name or 'dataset'} ({horizon}, "
        f"{s.n_periods} quarters), solver {s.solver or '?'}"
        + (f", {sum(s.timings_s.values()):.1f} s" if s.timings_s else "")
    )
    objective = fmt_usd(s.objective_usd)
    if s.n_violations:
        objective = "n/a — the solution failed the independent check"
    if s.objective == "margin" and s.margin_usd is not None and not s.n_violations:
        con.print(
            f"Status: [{style}]{status_line(s)}[/{style}]   "
            f"Margin (discounted): [bold]{fmt_usd(s.margin_usd)}[/bold] = "
            f"revenue {fmt_usd(s.revenue_usd)} - cost {fmt_usd(s.cost_usd)}"
        )
    else:
        con.print(
            f"Status: [{style}]{status_line(s)}[/{style}]   "
            f"Objective (discounted): [bold]{objective}[/bold]"
        )
    _solver_notes(s, con)
    if s.status == "time_limit_feasible":
        con.print("[yellow]Warning: time limit reached; the plan is feasible, not proven optimal.")
    if s.status == "time_limit_no_solution":
        con.print("[red]The time limit was reached before any feasible plan was found.")
    if s.message and not s.ok:
        con.print(f"[red]{s.message}")


def _print_problems(con: Console, s: PlanSummary) -> None:
    """Print the checker's violations and the infeasibility explanation, when there are any."""
    if s.n_violations:
        con.print(
            f"[bold red]{s.n_violations} constraint violation(s) found by the independent "
            "check: the plan is not trusted."
        )
        if s.violations is not None:
            con.print(_violations_table(s.violations))
            con.print(violations_by_family(s.violations))
    if s.infeasibility is not None:
        con.print(_infeasibility_table(s.infeasibility))


def _print_costs(con: Console, s: PlanSummary) -> None:
    """Print the discounted cost terms and the cash line (nothing without costs)."""
    if not s.costs.empty:
        from optimizer.plan.cost_tables import CASH_KIND

        # the cost mode has no revenue terms (revenue, contract billing, refunds, credits)
        parts = ", ".join(
            f"{t.replace('_', ' ')} {fmt_usd(v)}"
            for t, v in zip(s.costs["term"], s.costs["cost_usd"], strict=True)
            if CASH_KIND.get(str(t)) != "revenue" or s.objective == "margin"
        )
        con.print(f"Costs (discounted; capex as in-horizon rent, the objective): {parts}")
        con.print(cash_line(s.costs, s.facility_twh, s.n_periods))


def _print_binding(con: Console, s: PlanSummary, top: int | None = None) -> None:
    """Print the binding limits (the first ``top``, default all) and the notes on the duals."""
    if s.duals_note:
        con.print(f"[yellow]Binding limits: unknown, {no_duals_text(s.solver, s.duals_note)}.")
    elif s.binding.empty:
        con.print("Binding limits: no plant or supply limit binds with a non-zero shadow price")
    else:
        con.print(_binding_table(s, top))
    for note in dual_notes(s):
        con.print(note)
    if s.power_notes:
        con.print("Speed to power (grid, bridge power, flexible interconnection):")
        for line in s.power_notes:
            con.print(f"  {line}", markup=False)


def _print_resources(con: Console, s: PlanSummary, verbose: bool = True) -> None:
    """Print energy, water and carbon, the chips and the commitments (brief: in lines)."""
    con.print(
        f"Energy: [bold]{fmt_energy(s.facility_twh * 1e6)}[/bold] facility "
        f"({fmt_energy(s.it_twh * 1e6)} IT)   Water: [bold]{fmt_water(s.water_million_m3 * 1e6)}"
        f"[/bold]   Carbon: {fmt_qty(s.carbon_mt * 1e6)} t CO2   (over the horizon)"
    )
    con.print(_chips_table(s) if verbose else fleet_line(s.chips, s.last_period))
    if s.commitments.empty:
        con.print("Commitments: none in this dataset")
    elif verbose or not s.commitments["met"].astype(bool).all():
        con.print(_commitments_table(s))
    else:
        con.print(commitments_title(s))


def _print_clusters_and_calibration(con: Console, s: PlanSummary, verbose: bool = True) -> None:
    """Print the training-cluster lines, then the calibration section (brief: headlines)."""
    lines = clusters_text(s)
    if not verbose:  # the headline only
        lines = [lines[0].rstrip(":") + "; --verbose lists the runs"] if lines else []
    for line in lines:
        con.print(line)
    if verbose:
        _print_calibration(con, s.calibration)
    elif line := calibration_headline(s.calibration):
        con.print(line)


def _cal_num(x: float) -> str:
    v = float(x)
    return fmt_qty(v, 2) if math.isnan(v) or abs(v) >= 1000 else f"{v:.3g}"


def _print_calibration(con: Console, cal: pd.DataFrame) -> None:
    from optimizer.plan.calibration import worst_rows

    line = calibration_headline(cal)
    if not line:
        return
    con.print(line)
    worst = worst_rows(cal, 3)
    worst = worst[~worst["inside_band"].astype(bool)]
    if worst.empty:
        return
    t = Table(title="Furthest outside their band (worst three)", title_justify="left")
    for c in ("metric", "scope", "period", "record (low-high)", "plan", "unit"):
        t.add_column(c, justify="right" if c in ("plan", "record (low-high)") else "left")
    for r in worst.itertuples(index=False):
        t.add_row(
            str(r.metric),
            str(r.scope),
            str(r.period),
            f"{_cal_num(r.record_value)} ({_cal_num(r.record_low)}-{_cal_num(r.record_high)})",
            _cal_num(r.plan_value),
            str(r.unit),
        )
    con.print(t)


def _pct(x: float) -> str:
    """``0.9974 -> "99.7%"``; a share short of 1 that rounds to 100.0% reads ``">99.9%"``."""
    if math.isnan(x):
        return "n/a"
    if x < 1 - 1e-6 and round(100 * x, 1) >= 100.0:
        return ">99.9%"
    return f"{100 * x:.1f}%"


def _served_table(s: PlanSummary, short: bool = False) -> Table | str:
    """Return the demand table; ``short``: only the rows with unmet demand (a line if none)."""
    if math.isnan(s.served_share):
        return "Demand served over the horizon: the data hold no demand (0 H100e in every row)"
    title = f"Demand served over the horizon: {_pct(s.served_share)} of H100e demand"
    rows = s.served
    if short:
        rows = rows[rows["served_share"].astype(float) < 1 - 1e-6]
        if rows.empty:
            return title + " (every customer and workload in full)"
        title += " (rows with unmet demand)"
    t = Table(title=title, title_justify="left")
    t.add_column("customer")
    t.add_column("workload")
    t.add_column("demand (H100e, avg/quarter)", justify="right")
    t.add_column("served (H100e, avg/quarter)", justify="right")
    t.add_column("unmet (H100e, avg/quarter)", justify="right")
    t.add_column("served share", justify="right")
    for r in rows.itertuples(index=False):
        share = float(r.served_share)
        colour = "green" if share >= 1 - 1e-6 else ("yellow" if share >= 0.9 else "red")
        demand, served = float(r.demand_h100e), float(r.served_h100e)
        t.add_row(
            str(r.customer),
            str(r.workload),
            fmt_qty(demand),
            fmt_qty(served),
            fmt_qty(max(demand - served, 0.0)),  # 1.8M beside 1.8M hid 23.5k short
            f"[{colour}]{_pct(share)}[/{colour}]",
        )
    return t


def _singular(unit: str) -> str:
    """'wafers' -> 'wafer', 'stacks' -> 'stack'; units like 'MW' or 'm3' unchanged."""
    if len(unit) > 3 and unit.isalpha() and unit.islower() and unit.endswith("s"):
        return unit[:-1]
    return unit


def _price(value: float, unit: str) -> str:
    """``(534137.2, "USD/MW") -> "$534.1k/MW"``; ``"USD/wafers"`` -> ``"/wafer"``."""
    per = unit[4:] if unit.startswith("USD/") else unit
    return f"{fmt_usd(value)}/{_singular(per)}"


def _binding_table(s: PlanSummary, top: int | None = None) -> Table:
    binding = s.binding if top is None else s.binding.head(top)
    # the margin objective minimises cost - revenue: same sign convention, other words
    obj, what = ("cost - revenue", "adds margin") if s.objective == "margin" else ("cost", "")
    meaning = f"one more unit of the limit {what or 'lowers the cost'}" + (
        "; the marginal margin is minus it" if what else ""
    )
    t = Table(
        title=f"Binding limits, by |shadow price| (top {len(binding)}; shadow price = "
        f"d(discounted {obj})/d(limit) in USD per unit, as in the reports: negative when "
        f"{meaning})",
        title_justify="left",
    )
    t.add_column("#", justify="right")
    t.add_column("limit")
    t.add_column("binding quarters", justify="right")
    t.add_column("from")
    t.add_column(f"shadow price, d({obj})/d(limit) (peak quarter)", justify="right")
    t.add_column(f"{obj} change, +1 unit in every binding quarter", justify="right")
    for i, r in enumerate(binding.itertuples(index=False), start=1):
        t.add_row(
            str(i),
            str(r.limit),
            str(r.periods),
            str(r.first_period),
            _price(float(r.shadow_price), str(r.unit)),
            fmt_usd(float(r.shadow_price_sum)),
        )
    return t


def _chips_table(s: PlanSummary) -> Table:
    t = Table(title=f"Chips by generation (fleet at end of {s.last_period})", title_justify="left")
    t.add_column("chip")
    t.add_column("installed over horizon (chips)", justify="right")
    t.add_column("fleet at end (chips)", justify="right")
    t.add_column("assigned at end (chips)", justify="right")
    t.add_column("IT at end (MW)", justify="right")
    for r in s.chips.itertuples(index=False):
        t.add_row(
            str(r.chip),
            fmt_qty(float(r.installed_chips)),
            fmt_qty(float(r.fleet_chips_end)),
            fmt_qty(float(r.assigned_chips_end)),
            f"{float(r.it_mw_end):,.0f}",
        )
    return t


def _commitments_table(s: PlanSummary) -> Table:
    t = Table(title=commitments_title(s), title_justify="left")
    t.add_column("customer")
    t.add_column("family")
    t.add_column("floor IT (MW)", justify="right")
    t.add_column("result")
    for r in s.commitments.itertuples(index=False):
        if r.met:
            result = f"[green]met in all {r.periods} periods[/green]"
        else:
            colour = (
                "yellow"
                if small_shortfall(float(r.max_breach_mw), float(r.worst_floor_mw))
                else "red"
            )
            result = (
                f"[{colour}]breached in {r.breached_periods} of {r.periods} periods "
                f"(up to {fmt_mw(float(r.max_breach_mw))} MW short, of the "
                f"{float(r.worst_floor_mw):,.0f} MW floor in {r.worst_period})[/{colour}]"
            )
        t.add_row(str(r.customer), str(r.family), _floor_range(r), result)
    return t


def _floor_range(r: Any) -> str:
    """Return a commitment's floor: one figure, or first - last for a ramp (500 - 2,000)."""
    lo, hi = float(r.first_floor_mw), float(r.min_it_mw)
    return f"{hi:,.0f}" if abs(hi - lo) < 0.5 else f"{lo:,.0f} - {hi:,.0f}"


def _infeasibility_table(df: pd.DataFrame) -> Table:
    t = Table(title="Infeasible: limits that had to give (elastic re-solve)", title_justify="left")
    if "message" in df.columns:
        t.add_column("what had to give")
        for m in df["message"]:
            t.add_row(str(m))
        return t
    return _frame_table(df, "Infeasible: limits that had to give")


def _violations_table(df: pd.DataFrame, top: int = 10) -> Table:
    rows = violation_rows(df, top)
    t = Table(
        title=f"Violations: the {len(rows)} largest of {len(df)} (row value vs its limit)",
        title_justify="left",
    )
    t.add_column("#", justify="right")
    t.add_column("constraint")
    t.add_column("period")
    t.add_column("value", justify="right")
    t.add_column("limit", justify="right")
    t.add_column("violated by", justify="right")
    for i, r in enumerate(rows.itertuples(index=False), start=1):
        t.add_row(str(i), r.constraint, r.period, r.value, r.limit, r.violated_by)
    return t


def _frame_table(df: pd.DataFrame, title: str) -> Table:
    t = Table(title=title, title_justify="left")
    for c in df.columns:
        t.add_column(str(c), overflow="fold")
    for row in df.itertuples(index=False):
        t.add_row(*[str(v) for v in row])
    return t
