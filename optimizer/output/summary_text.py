"""The summary in words: commitments title, cluster and calibration lines, cash, duals notes.

Plain text (rich markup at most) that the rich rendering prints and the app can show;
:func:`violation_rows` puts the checker's violations in domain words.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd

from optimizer.output.binding_limits import degenerate_note, describe_limit, fixed_integers_note
from optimizer.output.formatting import fmt_mw, fmt_qty, fmt_usd
from optimizer.output.summary import PlanSummary

__all__ = [
    "SMALL_SHORTFALL_SHARE",
    "calibration_headline",
    "cash_line",
    "clusters_text",
    "commitments_title",
    "dual_notes",
    "fleet_line",
    "small_shortfall",
    "violation_rows",
    "violations_by_family",
]

#: A commitment breach of at most this share of its MW floor reads as "met except
#: a small shortfall" (whole deployment units cannot hit a MW floor exactly).
SMALL_SHORTFALL_SHARE = 0.01


def small_shortfall(max_breach_mw: float, min_it_mw: float) -> bool:
    """Return True when a breach is at most :data:`SMALL_SHORTFALL_SHARE` of its MW floor.

    Parameters
    ----------
    max_breach_mw : float
        Largest breach of the commitment, MW.
    min_it_mw : float
        Its floor, MW (floors under 1 MW count as 1 MW).
    """
    return max_breach_mw <= SMALL_SHORTFALL_SHARE * max(min_it_mw, 1.0)


def commitments_title(s: PlanSummary) -> str:
    """Return the title of the commitments section, naming the largest shortfall.

    ``"Commitments: all 2 met in every period"``; in ``--integer-units`` mode, when the
    breached ones fall short only by small amounts (at most
    :data:`SMALL_SHORTFALL_SHARE` of their MW floor: whole deployment units cannot hit
    a MW floor exactly) ``"Commitments: all 2 met to within 0.2 MW (0.01% of the
    floor): whole deployment units cannot hit a MW floor exactly"``; otherwise
    ``"Commitments: 1 of 2 met in every period; largest shortfall openai 352 MW of its
    1,500 MW floor in 2028Q1 (23% short)"``, with the largest shortfall by share after
    it when another commitment is short by a larger share of its floor. A shortfall is
    measured against the floor in force in its quarter. In LP mode a breach of any
    size is the plan's choice (its penalty is below the cost of meeting the floor) and
    is named as one.
    """
    c = s.commitments
    n = len(c)
    met = int(c["met"].sum()) if n else 0
    if met == n:
        return f"Commitments: all {n} met in every period"
    unmet = c[~c["met"].astype(bool)].reset_index(drop=True)
    breach = pd.to_numeric(unmet["max_breach_mw"]).astype(float)
    floor = pd.to_numeric(unmet["worst_floor_mw"]).astype(float).clip(lower=1.0)
    share = breach / floor

    def pct(x: float) -> str:
        return f"{100 * x:.0f}%" if x >= 0.1 else f"{100 * x:.2g}%"

    if s.integer_units and all(small_shortfall(b, m) for b, m in zip(breach, floor, strict=True)):
        return (
            f"Commitments: all {n} met to within {fmt_mw(s.max_shortfall_mw)} MW "
            f"({pct(float(share.max()))} of the floor): "
            "whole deployment units cannot hit a MW floor exactly"
        )

    def named(i: int) -> str:
        r = unmet.iloc[i]
        gap = pct(float(share.iloc[i]))
        return (
            f"{r['customer']} {fmt_mw(float(breach.iloc[i]))} MW of its "
            f"{fmt_mw(float(floor.iloc[i]))} MW floor in {r['worst_period']} ({gap} short)"
        )

    by_mw, by_share = int(np.argmax(breach.to_numpy())), int(np.argmax(share.to_numpy()))
    title = f"Commitments: {met} of {n} met in every period; largest shortfall {named(by_mw)}"
    if by_share != by_mw:
        title += f"; largest by share {named(by_share)}"
    return title


def clusters_text(s: PlanSummary) -> list[str]:
    """Lines on the training clusters: runs per customer, or the LP-mode fragmentation.

    E.g. ``"Training clusters (exact, MIP gap 1.2%): openai: west_texas 2025Q4-2030Q4
    (mean 812 MW), ..."``; in LP mode the rule is not enforced and the lines say how
    many placements (customer, site, quarter: the app's count) are below the minimum,
    and in how many runs. Empty when no customer has a rule.
    """
    runs = s.training_clusters
    if runs is None or runs.empty:
        return []
    if s.clusters_enforced:
        gap = "" if s.mip_gap is None else f", MIP gap {s.mip_gap:.2%}"
        head = f"Training clusters (exact rule{gap}):"
    else:
        bad = runs[~runs["meets_minimum"].astype(bool)]
        below = int(bad["periods_below"].sum())  # the app's count of placements
        head = (
            "Training clusters (LP mode: rule reported, not enforced; "
            f"{below} placement(s) (customer, site, quarter) below the minimum size, in "
            f"{len(bad)} run(s) of consecutive quarters; solve with --clusters):"
        )
    lines = [head]
    for customer, g in runs.groupby("customer", sort=True):
        parts = [
            f"{r.site} {r.first_period}-{r.last_period} (mean {fmt_qty(float(r.mean_it_mw))} MW"
            + (
                ""
                if r.meets_minimum
                else f"; {r.periods_below} of {r.periods} quarters below the minimum"
            )
            + ")"
            for r in g.itertuples(index=False)
        ]
        lines.append(f"  {customer}: " + ", ".join(parts))
    return lines


def calibration_headline(cal: pd.DataFrame) -> str:
    """One line: how many scored public-record rows the plan matches.

    E.g. ``"Calibration: 14 of 20 scored rows inside their band (5 input checks and 2
    more not matchable yet)"``; "" when the dataset has no public record. Input checks
    (rows of kind ``input_check``: they restate an input) are counted apart.
    """
    if cal is None or cal.empty or "matchable" not in cal.columns:
        return ""
    scored = cal[cal["matchable"].astype(bool)]
    inside = int(scored["inside_band"].astype(bool).sum())
    checks = int((cal["kind"] == "input_check").sum()) if "kind" in cal.columns else 0
    rest = len(cal) - len(scored) - checks
    parts = [f"{checks} input check{'s' if checks != 1 else ''}"] if checks else []
    parts += [f"{rest} more not matchable yet"] if rest else []
    extra = f" ({' and '.join(parts)})" if parts else ""
    return f"Calibration: {inside} of {len(scored)} scored rows inside their band{extra}"


def fleet_line(chips: pd.DataFrame, last_period: str, most: int = 5) -> str:
    """One line on the fleet at the end of the horizon, largest generations first.

    E.g. ``"Fleet at end of 2030Q4: 3.6M chips, 7,727 MW IT (trainium4 1.4M,
    trainium3 1.1M, rubin 606.6k, and 2 more generations)"``; the brief summary's
    stand-in for the chips table (``chips``: the PlanSummary's ``chips`` frame).
    """
    if chips is None or chips.empty:
        return "Fleet: no chips in this plan"
    live = chips[chips["fleet_chips_end"].astype(float) > 0]
    if live.empty:  # chips served, then left the fleet (an initial fleet retired, say)
        return _retired_line(chips, last_period, most)
    live = live.sort_values("fleet_chips_end", ascending=False, kind="stable")
    total = float(live["fleet_chips_end"].astype(float).sum())
    it_mw = float(live["it_mw_end"].astype(float).sum())
    parts = _generations(live, "fleet_chips_end", most)
    detail = f" ({', '.join(parts)})" if parts else ""
    return f"Fleet at end of {last_period}: {fmt_qty(total)} chips, {it_mw:,.0f} MW IT{detail}"


def _generations(rows: pd.DataFrame, column: str, most: int) -> list[str]:
    """Return ``"<chip> <count>"`` of the first ``most`` rows, then "and N more generations"."""
    parts = [f"{r.chip} {fmt_qty(float(getattr(r, column)))}" for r in rows.head(most).itertuples()]
    if len(rows) > most:
        more = len(rows) - most
        parts.append(f"and {more} more generation{'s' if more > 1 else ''}")
    return parts


def _retired_line(chips: pd.DataFrame, last_period: str, most: int) -> str:
    """Return the fleet line of a plan whose chips are all gone by its last period."""
    past = chips.sort_values("fleet_chips_max", ascending=False, kind="stable")
    parts = _generations(past, "fleet_chips_max", most)
    installed = float(chips["installed_chips"].astype(float).sum())
    new = f"{fmt_qty(installed)} chips installed" if installed > 0 else "no chips installed"
    return (
        f"Fleet at end of {last_period}: no chips in service; largest fleet earlier: "
        f"{', '.join(parts)} ({new})"
    )


def cash_line(costs: pd.DataFrame, facility_twh: float, n_periods: int) -> str:
    """Cash view line: undiscounted capex when spent and opex, plus the plan's energy a year.

    Every term of the ``costs`` table with cash is named under its ``cash_kind``
    (capex, opex; the revenue terms as cash in), so a new cost component's cash shows
    without editing this line: e.g. ``"Cash (undiscounted, when spent): capex $330.2B
    (chips at full price when installed $252.1B, buildings when decided $73.5B,
    retrofits $4.6B, grid upgrades $39.2M), opex $18.2B (energy $16.3B, on-site power
    $1.8B, curtailment $3.0M); ..."`` (the neutral default plan). Terms with no cash in
    the plan are left out. ``costs`` is :func:`optimizer.output.summary_frames.costs_frame`'s
    (one row per term, with ``cash_usd`` and ``cash_kind``).
    """
    if "cash_usd" not in costs:
        return ""
    kinds = costs["cash_kind"].astype(str).to_numpy()
    first = list(CASH_TERM_NAMES)  # the named terms first, in this order; then the rest
    parts = []
    for kind in ("capex", "opex", "revenue"):
        rows = costs[(kinds == kind) & (costs["cash_usd"].abs() > 0).to_numpy()]
        if rows.empty:
            continue
        rank = [first.index(t) if t in first else len(first) for t in rows["term"]]
        rows = rows.iloc[np.argsort(rank, kind="stable")]
        sign = -1.0 if kind == "revenue" else 1.0  # revenue is cash in: negative cash_usd
        named = ", ".join(
            f"{CASH_TERM_NAMES.get(t, t.replace('_', ' '))} {fmt_usd(sign * float(v))}"
            for t, v in zip(rows["term"], rows["cash_usd"], strict=True)
        )
        total = fmt_usd(sign * float(rows["cash_usd"].sum()))
        parts.append(f"{'revenue in' if kind == 'revenue' else kind} {total} ({named})")
    years = n_periods / 4 if n_periods else 0.0
    per_year = (
        f"; the plan's computed facility energy {facility_twh / years:,.1f} TWh a year"
        if years
        else ""
    )
    return "Cash (undiscounted, when spent): " + ", ".join(parts) + per_year


CASH_TERM_NAMES = {
    "chip_capex": "chips at full price when installed",
    "build_capex": "buildings when decided",
    "retrofit_capex": "retrofits",
    "grid_upgrade": "grid upgrades",
    "energy": "energy",
    "onsite_power": "on-site power",
}
"""Reading names of cost terms in the cash line (other terms: the name, spaces for ``_``)."""


def dual_notes(s: PlanSummary) -> list[str]:
    """Return the notes under the binding limits: degenerate duals, duals of a fixed MIP."""
    if s.duals_note:
        return []  # no shadow prices: the binding line already says so
    notes = [degenerate_note(s.degenerate_limits)] if s.degenerate_limits else []
    if s.duals_from == "lp_with_integers_fixed":
        notes.append(fixed_integers_note(s.integer_units))
    return notes


_PERIOD = re.compile(r"^\d{4}Q[1-4]$")


def _num(x: Any) -> str:
    """Round a checker number for reading: ``655.5801399 -> "655.6"``, ``0.01234 -> "0.0123"``."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(v):
        return "n/a"
    if abs(v) >= 1 or v == 0:
        return f"{v:,.1f}"
    return f"{v:.3g}"


def violation_rows(df: pd.DataFrame, top: int = 10) -> pd.DataFrame:
    """Return the ``top`` largest checker violations in domain words, rounded.

    Parameters
    ----------
    df : pandas.DataFrame
        ``family, constraint, keys, lhs, rhs, violation`` (:mod:`optimizer.plan.check`;
        keys such as ``"new_carlisle,2025Q4"``).
    top : int
        Rows to keep, largest ``violation`` first.

    Returns
    -------
    pandas.DataFrame
        Columns ``constraint`` (e.g. "IT power capacity at new_carlisle"), ``period``,
        ``value`` (the row's left-hand side), ``limit`` (right-hand side) and
        ``violated_by``, all strings.
    """
    d = df.copy()
    if "violation" in d.columns:
        d["_v"] = pd.to_numeric(d["violation"], errors="coerce").fillna(0.0)
        d = d.sort_values("_v", ascending=False, kind="stable")
    rows = []
    for r in d.head(top).to_dict(orient="records"):
        parts = [p for p in re.split(r"[,/|]", str(r.get("keys", ""))) if p]
        period = ",".join(p for p in parts if _PERIOD.match(p))
        key = "/".join(p for p in parts if not _PERIOD.match(p))
        rows.append(
            {
                "constraint": describe_limit(str(r.get("family", "")), key),
                "period": period,
                "value": _num(r.get("lhs")),
                "limit": _num(r.get("rhs")),
                "violated_by": _num(r.get("violation")),
            }
        )
    return pd.DataFrame(rows, columns=["constraint", "period", "value", "limit", "violated_by"])


def violations_by_family(df: pd.DataFrame) -> str:
    """Return ``"Violations by family: site grid 3, ..."`` ("" without violations).

    Parameters
    ----------
    df : pandas.DataFrame
        The checker's violations (``family`` is read).
    """
    if "family" not in df.columns or df.empty:
        return ""
    counts = df["family"].astype(str).value_counts()
    return "Violations by family: " + ", ".join(
        f"{f.replace('_', ' ')} {n}" for f, n in counts.items()
    )
