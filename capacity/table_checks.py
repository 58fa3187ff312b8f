"""Cross-table rules of a dataset: duplicate keys, references, semantics and placement."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from capacity.fit_checks import check_fits
from capacity.period_order import period_order_problems
from capacity.schema import PERIOD_RE, SPECS, period_index
from capacity.spec_types import TableSpec
from capacity.validation import Finding, normalise_key, suggest

SMALL_TABLE_ROWS = 5_000
"""Tables up to this many rows have their keys checked row by row (:func:`check_keys`)."""


def check_keys(table: TableSpec, df: pd.DataFrame, file: str) -> list[Finding]:
    """Duplicate keys, also those that differ only by case or surrounding spaces.

    Up to :data:`SMALL_TABLE_ROWS` rows the keys are normalised row by row in one
    dictionary pass (about 0.5 ms for the 264 demand rows against 3 ms through pandas,
    and ``check_keys`` runs for every table of every validation); above it they are
    normalised column by column and grouped once, so 20,000 duplicate rows take
    milliseconds. Both give the same findings (each names the first row of its key):
    a cell's text is ``str`` of its value (what ``astype(str)`` makes of the typed
    columns), stripped of surrounding spaces and case-folded.
    """
    if df.empty:
        return []
    cols = list(table.key)
    if len(df) <= SMALL_TABLE_ROWS:
        texts = [[str(v) for v in df[c].tolist()] for c in cols]
        seen: dict[tuple[str, ...], int] = {}
        first_of = np.fromiter(
            (
                seen.setdefault(tuple(t.strip().casefold() for t in key), i)
                for i, key in enumerate(zip(*texts, strict=True))
            ),
            dtype=np.int64,
            count=len(df),
        )
        cells = lambda: np.array(texts, dtype=object).T  # noqa: E731 - only with duplicates
    else:
        raw = df[cols].astype(str)
        norm = pd.DataFrame({c: raw[c].str.strip().str.casefold() for c in cols})
        codes = norm.groupby(cols, sort=False, dropna=False).ngroup().to_numpy()
        _, first_index = np.unique(codes, return_index=True)
        first_of = first_index[codes]  # row position of each row's first occurrence
        cells = raw.to_numpy
    dups = np.flatnonzero(first_of != np.arange(len(df)))
    if not len(dups):
        return []
    values = cells()
    findings: list[Finding] = []
    names = ", ".join(cols)
    for i in dups:
        j = int(first_of[i])
        key, first = tuple(values[i]), tuple(values[j])
        msg = f"duplicate key ({names}): the same key as row {j + 2}"
        if first != key:
            msg = (
                f"duplicate key ({names}): same as {'/'.join(map(repr, first))} on row {j + 2} "
                "once case and surrounding spaces are ignored"
            )
        findings.append(Finding("error", file, int(i) + 2, cols[0], "/".join(key), msg))
    return findings


def check_references(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Every foreign key (site, chip, customer, resource, workload, period) must exist."""
    findings: list[Finding] = []
    for name, df in tables.items():
        table = SPECS[name]
        for col in table.columns:
            if col.references is None or df.empty:
                continue
            rt, rc = col.references
            if rt not in tables:
                continue
            known = set(tables[rt][rc].astype(str))
            vals = df[col.name].astype(str)
            bad = np.flatnonzero(~vals.isin(known).to_numpy() & (vals != "").to_numpy())
            hints: dict[str, str] = {}  # one "did you mean" per distinct unknown value
            for i in bad:
                v = vals.iat[i]
                if v not in hints:
                    hints[v] = suggest(v, known)
                msg = f"unknown {rc} {v!r}: not in {rt}." + hints[v]
                findings.append(Finding("error", files[name], int(i) + 2, col.name, v, msg))
    return findings


def check_semantics(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Domain rules across columns and tables.

    Periods are consecutive quarters; a sale window does not end before it begins
    (it may start before the horizon); initial liquid capacity fits initial capacity
    and both fit the site maximum, as do the pipeline's halls added to them; a PPA
    step does not end before it begins nor overlap another step of its contract; every
    site has a grid and water row for every
    period and every resource a capacity for every period; commitment families exist;
    a supply resource or order book keeps one unit.
    """
    out, horizon = _check_periods(tables, files)
    out += _check_sale_windows(tables, files)
    out += _check_initial_capacity(tables, files)
    out += check_fits(tables, files, horizon[0] if horizon else None)
    if horizon:
        out += _check_schedules(tables, files, horizon)
    out += _check_commitments(tables, files)
    if horizon:
        out += _check_initial_fleet_periods(tables, files, horizon)
    out += _check_regions(tables, files)
    out += _check_hosts(tables, files)
    out += _check_one_unit(tables, files)
    return out


def _most_common(units: pd.Series) -> str:
    """Return the most common value of ``units`` (the first of a tie)."""
    return str(units.value_counts(sort=True).index[0])


def _check_one_unit(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Check that a supply resource or order book keeps one unit over its rows.

    Its capacity is compared with one per-chip (or per-MW) use in every period, so a row
    in another unit (``kilowafers`` beside ``wafers``: a typo, or a figure never
    converted) would be read as the same unit without a word. Each row whose unit is not
    the resource's most common one (the first of a tie) is an error.
    """
    out: list[Finding] = []
    for name in ("supply_resources", "equipment_order_books"):
        df = tables.get(name)
        if df is None or not len(df) or "unit" not in df or "resource" not in df:
            continue
        units = df["unit"].astype(str).str.strip()
        usual = units.groupby(df["resource"].astype(str), sort=False).transform(_most_common)
        for i in (units != usual).to_numpy().nonzero()[0]:
            msg = (
                f"{df['resource'].iloc[i]} is in {usual.iloc[i]!r} on its other rows: give "
                "every row of a resource the same unit (convert the capacity)"
            )
            out.append(Finding("error", files[name], int(i) + 2, "unit", units.iloc[i], msg))
    return out


def _check_initial_fleet_periods(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str], horizon: list[str]
) -> list[Finding]:
    """Check that an initial-fleet cohort goes live by the horizon's last period.

    Cohorts are normally installed before the horizon; one installed inside it enters
    service in that period; one installed after its end would never be in the plan,
    so its chips would vanish without a word.
    """
    fleet = tables.get("initial_fleet")
    if fleet is None or not len(fleet) or "install_period" not in fleet:
        return []
    last = period_index(horizon[-1])
    out: list[Finding] = []
    for i, p in enumerate(fleet["install_period"].astype(str)):
        if PERIOD_RE.match(p) and period_index(p) > last:
            msg = (
                f"installed after the horizon ends ({horizon[-1]}), so these chips would "
                "never be in service in the plan; use a period up to the horizon's last"
            )
            out.append(Finding("error", files["initial_fleet"], i + 2, "install_period", p, msg))
    return out


def _check_periods(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]
) -> tuple[list[Finding], list[str]]:
    """Check periods are consecutive quarters; return findings and horizon (empty if bad)."""
    out: list[Finding] = []
    periods = tables["periods"]
    f = files["periods"]
    idx = [period_index(p) if PERIOD_RE.match(str(p)) else None for p in periods["period"]]
    ok = [i for i in idx if i is not None]
    if len(periods) == 0:
        out.append(Finding("error", f, None, "period", None, "the horizon has no periods"))
    labels = [str(p) for p in periods["period"]]
    for row, value, msg in period_order_problems(labels, idx, f):
        out.append(Finding("error", f, row, "period", value, msg))
    horizon = [str(p) for p in periods["period"]] if len(ok) == len(idx) else []
    if horizon and not out and "discount_factor" in periods:  # in time order only
        out += _check_discount_falls(periods["discount_factor"], f)
    return out, horizon


def _check_discount_falls(factors: pd.Series, file: str) -> list[Finding]:
    """Check that a discount factor ``1 / (1 + r)^t`` falls (or holds) quarter by quarter.

    One that rises (0.5 then 0.98) made a later quarter's costs weigh more than an
    earlier one's, and the plan optimal for that nonsense validated and solved.
    """
    v = pd.to_numeric(factors, errors="coerce").to_numpy(dtype=float)
    out = []
    for i in range(1, len(v)):
        if v[i] > v[i - 1] * (1 + 1e-12):
            msg = (
                f"rises from {v[i - 1]:g} (row {i + 1}) to {v[i]:g}: a present-value factor "
                "1 / (1 + r)^years falls over the horizon"
            )
            out.append(Finding("error", file, i + 2, "discount_factor", f"{v[i]:g}", msg))
    return out


def _check_sale_windows(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]
) -> list[Finding]:
    """Check that no chip's sale window ends before it begins."""
    out: list[Finding] = []
    chips = tables["chips"]
    for i, (a, b) in enumerate(zip(chips["first_period"], chips["last_period"], strict=True)):
        if (
            PERIOD_RE.match(str(a))
            and PERIOD_RE.match(str(b))
            and period_index(str(b)) < period_index(str(a))
        ):
            out.append(
                Finding(
                    "error",
                    files["chips"],
                    i + 2,
                    "last_period",
                    str(b),
                    f"sale window ends ({b}) before it begins ({a})",
                )
            )
    return out


def _check_initial_capacity(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]
) -> list[Finding]:
    """Check that initial liquid fits initial capacity, which fits the site maximum."""
    out: list[Finding] = []
    sites = tables["sites"]
    fs = files["sites"]
    for i, row in enumerate(sites.itertuples(index=False)):
        if row.initial_liquid_mw > row.initial_it_mw + 1e-9:
            out.append(
                Finding(
                    "error",
                    fs,
                    i + 2,
                    "initial_liquid_mw",
                    f"{row.initial_liquid_mw:g}",
                    f"exceeds initial_it_mw ({row.initial_it_mw:g} MW)",
                )
            )
        if row.initial_it_mw > row.max_it_mw + 1e-9:
            out.append(
                Finding(
                    "error",
                    fs,
                    i + 2,
                    "initial_it_mw",
                    f"{row.initial_it_mw:g}",
                    f"exceeds max_it_mw ({row.max_it_mw:g} MW)",
                )
            )
    return out


def _check_schedules(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str], horizon: list[str]
) -> list[Finding]:
    """Check every site has grid and water rows, every resource a capacity, per period."""
    out: list[Finding] = []
    sites = tables["sites"]
    for tname, keycol, label in (
        ("site_grid", "site", "grid"),
        ("site_water", "site", "water permit"),
    ):
        have = set(zip(tables[tname][keycol].astype(str), tables[tname]["period"], strict=True))
        # a site repeated under another case/spacing is already a duplicate-key
        # error: do not also report its missing schedules
        first_ids = {normalise_key(x): x for x in reversed(sites["site"].astype(str).tolist())}
        for s in first_ids.values():
            missing = [p for p in horizon if (s, p) not in have]
            if missing:
                out.append(
                    Finding(
                        "error",
                        files[tname],
                        None,
                        "period",
                        None,
                        f"site {s!r} has no {label} row for {len(missing)} period(s) "
                        f"({', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}); "
                        "every site needs one row per period",
                    )
                )
    res = tables["supply_resources"]
    have = set(zip(res["resource"].astype(str), res["period"], strict=True))
    for r in sorted(set(res["resource"].astype(str))):
        missing = [p for p in horizon if (r, p) not in have]
        if missing:
            out.append(
                Finding(
                    "error",
                    files["supply_resources"],
                    None,
                    "period",
                    None,
                    f"resource {r!r} has no capacity row for {len(missing)} period(s) "
                    f"({', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''})",
                )
            )
    out += _check_order_books(tables, files, horizon)
    return out


def _check_order_books(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str], horizon: list[str]
) -> list[Finding]:
    """Every order book a bill of materials draws on needs a row per period.

    A missing row is a capacity of 0 (no equipment that quarter), so a mistyped
    resource name would silently empty the real book's quarter: an error, as for
    ``supply_resources``. A book no bill of materials names is a warning.
    """
    books, bom = tables.get("equipment_order_books"), tables.get("power_bill_of_materials")
    if books is None or bom is None or books.empty or bom.empty:
        return []
    f = files.get("equipment_order_books", "equipment_order_books.csv")
    used = set(bom["resource"].astype(str))
    have = set(zip(books["resource"].astype(str), books["period"].astype(str), strict=True))
    out: list[Finding] = []
    for r in sorted(used & {b for b, _ in have}):
        missing = [p for p in horizon if (r, p) not in have]
        if missing:
            msg = (
                f"order book {r!r} has no row for {len(missing)} period(s) "
                f"({', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}); "
                "a missing row is no equipment that quarter, so every period needs one"
            )
            out.append(Finding("error", f, None, "period", None, msg))
    for i, r in enumerate(books["resource"].astype(str)):
        if r not in used:
            msg = "order book named by no power_bill_of_materials row, so the plan never reads it."
            out.append(Finding("warning", f, i + 2, "resource", r, msg + suggest(r, used)))
    return out


def _check_commitments(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]
) -> list[Finding]:
    """Check that a commitment names a chip family and does not end before it begins."""
    out: list[Finding] = []
    chips = tables["chips"]
    families = set(chips["family"].astype(str))
    com = tables.get("commitments")
    if com is not None:
        for i, row in enumerate(com.itertuples(index=False)):
            if str(row.family) not in families:
                out.append(
                    Finding(
                        "error",
                        files["commitments"],
                        i + 2,
                        "family",
                        str(row.family),
                        f"no chip has family {row.family!r}." + suggest(str(row.family), families),
                    )
                )
            start, end = str(row.from_period), str(row.to_period)
            if (
                PERIOD_RE.match(start)
                and PERIOD_RE.match(end)
                and period_index(end) < period_index(start)
            ):
                out.append(
                    Finding(
                        "error",
                        files["commitments"],
                        i + 2,
                        "to_period",
                        end,
                        f"commitment ends ({end}) before it begins ({start})",
                    )
                )
    return out


def _check_regions(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Check eligibility regions are regions of some site (a warning otherwise)."""
    out: list[Finding] = []
    sites = tables["sites"]
    regions = set(sites["region"].astype(str))
    elig = tables["eligibility"]
    for i, txt in enumerate(elig["regions"].astype(str)):
        for reg in [r.strip() for r in txt.split(";") if r.strip()]:
            if reg not in regions:
                out.append(
                    Finding(
                        "warning",
                        files["eligibility"],
                        i + 2,
                        "regions",
                        txt,
                        f"region {reg!r} is not the region of any site." + suggest(reg, regions),
                    )
                )
    return out


def _check_hosts(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Check that each ``sites.hosts`` entry names a chip family or vendor (a warning).

    An entry that matches nothing forbids no more than it allows: a site whose every
    entry is unknown hosts no chip at all. That may be deliberate (a campus reserved
    for a family not in the dataset), so it is a warning, with a did-you-mean for a
    typo ("trainum"), at the site's row.
    """
    sites = tables["sites"]
    if "hosts" not in sites:
        return []
    chips = tables["chips"]
    known = set(chips["family"].astype(str)) | set(chips["vendor"].astype(str))
    out: list[Finding] = []
    for i, txt in enumerate(sites["hosts"].fillna("").astype(str)):
        for entry in [h.strip() for h in txt.split(";") if h.strip()]:
            if entry not in known:
                out.append(
                    Finding(
                        "warning",
                        files["sites"],
                        i + 2,
                        "hosts",
                        txt,
                        f"{entry!r} is neither a chip family nor a vendor of chips.csv; "
                        "the site could host no chip." + suggest(entry, known),
                    )
                )
    return out


def _check_ppa_regions(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str], regions: set[str]
) -> list[Finding]:
    """Check that a PPA's region is the region of some site (its site is a reference)."""
    ppas = tables.get("ppas")
    if ppas is None or not len(ppas) or "region" not in ppas:
        return []
    out: list[Finding] = []
    for i, reg in enumerate(ppas["region"].astype(str)):
        reg = reg.strip()
        if reg and reg not in regions:
            msg = f"region {reg!r} is not the region of any site, so this contract's energy "
            msg += "could be delivered nowhere." + suggest(reg, regions)
            out.append(Finding("error", files["ppas"], i + 2, "region", reg, msg))
    return out


def check_placement(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Placement rules: demand and PPA regions and training-cluster rows.

    A region named in ``demand.regions`` or ``ppas.region`` must be the region of some
    site (else the demand could be served nowhere, or the contract's energy go
    nowhere: an error naming the row); a training-cluster rule
    must not end before it begins, and two rules of one customer must not overlap.

    Returns
    -------
    list of Finding
        Errors naming file, row, column and value.
    """
    out: list[Finding] = []
    regions = set(tables["sites"]["region"].astype(str))
    demand = tables["demand"]
    if "regions" in demand:
        for i, txt in enumerate(demand["regions"].astype(str)):
            for reg in [r.strip() for r in txt.split(";") if r.strip()]:
                if reg not in regions:
                    msg = f"region {reg!r} is not the region of any site, so this demand could "
                    msg += "be served nowhere." + suggest(reg, regions)
                    out.append(Finding("error", files["demand"], i + 2, "regions", txt, msg))
    out += _check_ppa_regions(tables, files, regions)
    rules = tables.get("training_clusters")
    if rules is None or not len(rules):
        return out
    seen: dict[str, list[tuple[int, int, int]]] = {}
    for i, row in enumerate(rules.itertuples(index=False)):
        start, end = str(row.from_period), str(row.to_period)
        if not PERIOD_RE.match(start):
            continue
        lo = period_index(start)
        hi = period_index(end) if PERIOD_RE.match(end) else 10**9
        if hi < lo:
            msg = f"training-cluster rule ends ({end}) before it begins ({start})"
            out.append(Finding("error", files["training_clusters"], i + 2, "to_period", end, msg))
            continue
        for j, a, b in seen.get(str(row.customer), []):
            if lo <= b and a <= hi:
                msg = f"rule overlaps the rule of row {j} for customer {row.customer!r}"
                out.append(
                    Finding("error", files["training_clusters"], i + 2, "from_period", start, msg)
                )
        seen.setdefault(str(row.customer), []).append((i + 2, lo, hi))
    return out
