"""Fit rules: what is fixed before the plan decides anything must fit where it goes.

The pipeline's halls and the initial fleet in service at the start must fit each
site's halls, an on-site plant already built its cap, and a PPA's steps must each
begin before they end without overlapping. Each broken rule would otherwise reach the
solver and come back as an infeasible plan or a checker failure, or drop data silently.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from capacity.schema import PERIOD_RE, period_index
from capacity.validation import Finding

__all__ = ["check_fits"]


def check_fits(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str], first: str | None
) -> list[Finding]:
    """Return the findings of every fit rule (one per broken row).

    Parameters
    ----------
    tables : Mapping of str to DataFrame
        The typed tables (sites, chips, site_pipeline, initial_fleet,
        onsite_generation, ppas; absent optional tables are skipped).
    files : Mapping of str to str
        File name of each table, for the findings.
    first : str or None
        The horizon's first quarter (None when the periods table is bad: the initial
        fleet's fit is then not checked).

    Returns
    -------
    list of Finding
        Errors naming file, row, column and value.
    """
    out = _pipeline(tables, files) + _onsite_initial(tables, files) + _ppa_windows(tables, files)
    if first is not None:
        out += _initial_fleet_fits(tables, files, first)
    return out


def _initial_fleet_fits(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str], first: str
) -> list[Finding]:
    """Check the initial fleet in service at the start fits each site's halls then.

    Cohorts installed by the first period draw chips x ``it_kw_per_chip`` / 1000 MW
    of IT at their site from the start; the halls then are ``initial_it_mw`` plus the
    pipeline online by the first period (nothing can be built before it), so more
    would make the plan infeasible. The site's last such cohort row is named.
    """
    fleet, chips, sites = tables.get("initial_fleet"), tables["chips"], tables["sites"]
    if fleet is None or not len(fleet):
        return []
    kw = {str(c): float(k) for c, k in zip(chips["chip"], chips["it_kw_per_chip"], strict=True)}
    halls = {  # a site whose own initial_it_mw is bad is that cell's finding (no cascade)
        str(k): float(v)
        for k, v in zip(sites["site"], sites["initial_it_mw"], strict=True)
        if np.isfinite(v) and v >= 0
    }
    pipe = tables.get("site_pipeline")
    t0 = period_index(first)
    if pipe is not None and len(pipe):
        for site, p, mw in zip(pipe["site"], pipe["online_period"], pipe["it_mw"], strict=True):
            if str(site) in halls and PERIOD_RE.match(str(p)) and period_index(str(p)) <= t0:
                halls[str(site)] += float(mw)
    used: dict[str, float] = {}
    last: dict[str, int] = {}
    for i, (chip, site, n, p) in enumerate(
        zip(fleet["chip"], fleet["site"], fleet["chips"], fleet["install_period"], strict=True)
    ):
        p, site = str(p), str(site)
        if site in halls and str(chip) in kw and PERIOD_RE.match(p) and period_index(p) <= t0:
            used[site] = used.get(site, 0.0) + float(n) * kw[str(chip)] / 1000.0
            last[site] = i
    out: list[Finding] = []
    for site, mw in used.items():
        if np.isfinite(mw) and mw > halls[site] + 1e-6:
            i = last[site]
            msg = (
                f"the initial fleet at {site} draws {mw:,.1f} MW of IT in {first} (chips x "
                f"it_kw_per_chip), above its halls then ({halls[site]:,.1f} MW: initial_it_mw "
                "plus the pipeline online by then)"
            )
            n = fleet["chips"].iat[i]
            out.append(Finding("error", files["initial_fleet"], i + 2, "chips", f"{n:g}", msg))
    return out


def _pipeline(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Check each pipeline row's liquid MW fit its IT MW, and the halls fit the site.

    The pipeline's halls are fixed: initial IT MW plus the pipeline's IT MW online to
    a quarter can never exceed ``max_it_mw`` (the plan would be infeasible), and a
    row's ``liquid_mw`` is part of its ``it_mw``. The first row over the maximum is
    named (in online order), with the running total.
    """
    pipe, sites = tables.get("site_pipeline"), tables["sites"]
    if pipe is None or not len(pipe):
        return []
    f = files["site_pipeline"]
    out: list[Finding] = []
    for i, (it, liq) in enumerate(zip(pipe["it_mw"], pipe["liquid_mw"], strict=True)):
        if liq > it + 1e-9:
            msg = f"exceeds it_mw of the same row ({it:g} MW): a hall's liquid MW are part of it"
            out.append(Finding("error", f, i + 2, "liquid_mw", f"{liq:g}", msg))
    limits = {
        str(k): (float(a), float(b))
        for k, a, b in zip(sites["site"], sites["initial_it_mw"], sites["max_it_mw"], strict=True)
    }
    names = [str(x) for x in pipe["site"]]
    online = [str(x) for x in pipe["online_period"]]
    it = [float(x) for x in pipe["it_mw"]]
    when = [period_index(p) if PERIOD_RE.match(p) else 10**9 for p in online]
    total: dict[str, float] = {}
    for i in sorted(range(len(pipe)), key=lambda i: (names[i], when[i], i)):
        site = names[i]
        if site not in limits or total.get(site) == float("inf"):
            continue  # an unknown site is a reference finding; one finding per site
        start, cap = limits[site]
        if not np.isfinite(start) or start > cap:
            continue  # the site's own initial_it_mw is the finding (no cascade)
        total[site] = total.get(site, start) + it[i]
        if total[site] > cap + 1e-9:
            msg = (
                f"initial_it_mw plus the pipeline online by {online[i]} is "
                f"{total[site]:g} MW, above the site's max_it_mw ({cap:g} MW)"
            )
            out.append(Finding("error", f, i + 2, "it_mw", f"{it[i]:g}", msg))
            total[site] = float("inf")
    return out


def _onsite_initial(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Check an on-site plant's ``initial_mw`` fits its ``max_mw`` (else infeasible)."""
    g = tables.get("onsite_generation")
    if g is None or not len(g) or "initial_mw" not in g:
        return []
    out: list[Finding] = []
    for i, (ini, cap) in enumerate(zip(g["initial_mw"], g["max_mw"], strict=True)):
        if np.isfinite(ini) and np.isfinite(cap) and ini > cap + 1e-9:
            msg = f"exceeds max_mw ({cap:g} MW): the plant already built cannot be above its cap"
            out.append(
                Finding("error", files["onsite_generation"], i + 2, "initial_mw", f"{ini:g}", msg)
            )
    return out


def _ppa_windows(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Check no PPA step ends before it begins and no two steps of a contract overlap.

    An empty ``to_period`` runs to the horizon's end. A reversed step would never be
    active (its energy dropped without a word); overlapping steps would count the
    contract's MW twice in the shared quarters.
    """
    ppas = tables.get("ppas")
    if ppas is None or not len(ppas):
        return []
    f = files["ppas"]
    out: list[Finding] = []
    spans: dict[str, list[tuple[int, int, int]]] = {}
    rows = zip(ppas["contract"], ppas["from_period"], ppas["to_period"], strict=True)
    for i, (c, a, b) in enumerate(rows):
        a, b = str(a).strip(), str(b).strip() if isinstance(b, str) else ""
        if not PERIOD_RE.match(a) or (b and not PERIOD_RE.match(b)):
            continue  # a bad period is a cell finding already
        lo, hi = period_index(a), period_index(b) if b else 10**9
        if hi < lo:
            msg = f"this step ends ({b}) before it begins ({a}), so it would never deliver"
            out.append(Finding("error", f, i + 2, "to_period", b, msg))
            continue
        for lo2, hi2, j in spans.get(str(c), []):
            if lo <= hi2 and lo2 <= hi and lo != lo2:  # the same start: a duplicate key
                msg = (
                    f"overlaps row {j + 2} of contract {c!r}; its MW would count twice in "
                    "the shared quarters: give each step its own quarters"
                )
                out.append(Finding("error", f, i + 2, "from_period", a, msg))
                break
        spans.setdefault(str(c), []).append((lo, hi, i))
    return out
