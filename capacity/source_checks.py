"""Provenance rules: every figure is traced in sources, and the public record cites its figures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from capacity.schema import SPECS
from capacity.tables_record import RECORD_METRICS, SCOPE_VALUES, ScopeError, parse_scope
from capacity.validation import Finding, suggest


def check_sources(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Every figure of the dataset must be traced in the sources table.

    A sources row covers the cells of ``table`` whose key (key values joined by
    "/") matches its ``key`` pattern (``*`` matches anything, so ``openai/*`` covers
    every row of customer openai and ``*`` a whole column) in ``column`` (or every
    column with ``*``). Its ``source`` is a public address (http...) or starts with
    the word ``assumption``.

    Returns
    -------
    list of Finding
        A warning per (table, column) with uncovered figures (naming the first
        uncovered row), and a warning per sources row whose source is neither an
        address nor an assumption. The sources table itself and display names are
        exempt.
    """
    src = tables.get("sources")
    if src is None or src.empty:
        return []
    out: list[Finding] = []
    for i, s in enumerate(src["source"].astype(str)):
        text = s.strip().lower()
        if not (text.startswith(("http://", "https://")) or text.startswith("assumption")):
            out.append(
                Finding(
                    "warning",
                    files["sources"],
                    i + 2,
                    "source",
                    s,
                    "a source is a public address (https://...) or the word 'assumption'",
                )
            )
    patterns: dict[str, list[tuple[str, str]]] = {}
    for t, k, c in zip(
        src["table"].astype(str), src["key"].astype(str), src["column"].astype(str), strict=True
    ):
        patterns.setdefault(t, []).append((k, c))
    for name, df in tables.items():
        if name in ("sources", "public_record") or df.empty:
            # public_record carries its own source column (check_public_record)
            continue
        table = SPECS[name]
        pats = patterns.get(name, [])
        cells = zip(*(df[k].tolist() for k in table.key), strict=True)
        keys = ["/".join(map(str, r)) for r in cells]
        where: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            where.setdefault(key, []).append(i)
        covers: dict[str, np.ndarray] = {}  # pattern -> the keys it covers, read once
        for col in table.columns:
            if col.name in table.key or col.name == "display_name":
                continue
            hit = np.zeros(len(keys), dtype=bool)
            for k in dict.fromkeys(k for k, c in pats if c in (col.name, "*")):
                if k not in covers:
                    covers[k] = _covered(keys, where, k)
                hit |= covers[k]
            missing = np.flatnonzero(~hit)
            if len(missing):  # the first uncovered row names the column's gap
                i = int(missing[0])
                out.append(
                    Finding(
                        "warning",
                        files[name],
                        i + 2,
                        col.name,
                        keys[i],
                        f"figure {name}.{col.name} for {keys[i]!r} has no row in "
                        "sources.csv (give a public address or 'assumption')",
                    )
                )
    return out


def _covered(keys: list[str], where: Mapping[str, list[int]], pattern: str) -> np.ndarray:
    """Return which of ``keys`` a sources row's ``key`` pattern covers (bool, shape (n,)).

    ``where`` maps each key to its positions in ``keys``: a pattern without a wildcard
    (``*``, ``?``, ``[``) covers the rows of that one key.
    """
    from fnmatch import fnmatchcase

    hit = np.zeros(len(keys), dtype=bool)
    if pattern == "*":  # fnmatch's * matches any text, "/" included
        hit[:] = True
    elif not any(ch in pattern for ch in "*?["):
        hit[where.get(pattern, [])] = True
    else:
        hit[:] = [fnmatchcase(key, pattern) for key in keys]
    return hit


def check_public_record(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]
) -> list[Finding]:
    """Rules of the public-record table (the figures the plan is calibrated against).

    Every row cites a public address (``https://...``; neither an assumption nor a
    file of this repository), names a known metric
    (:data:`capacity.tables_record.RECORD_METRICS`) in that metric's unit, its band
    holds its value
    (``low <= value <= high``) and a row marked ``matchable = no`` says why in
    ``reason``. A row that does not say in ``tests`` what in the plan it tests is a
    warning.

    Returns
    -------
    list of Finding
        One error per broken rule, naming the row, column and value.
    """
    df = tables.get("public_record")
    if df is None or df.empty:
        return []
    f = files["public_record"]
    out: list[Finding] = []
    known = _scope_names(tables)
    for i, r in enumerate(df.itertuples(index=False)):
        row = i + 2
        src = str(r.source).strip()
        if not src.lower().startswith(("https://", "http://")):
            out.append(
                Finding(
                    "error",
                    f,
                    row,
                    "source",
                    src,
                    "a public-record figure needs a public address (https://...) that "
                    "supports it; assumptions belong in sources.csv",
                )
            )
        out.extend(_metric_findings(f, row, r))
        lo, val, hi = float(r.low), float(r.value), float(r.high)
        if not lo <= val <= hi:
            out.append(
                Finding(
                    "error",
                    f,
                    row,
                    "low" if val < lo else "high",
                    f"{lo:g}..{hi:g}",
                    f"the band low..high must hold the value {val:g}",
                )
            )
        out.extend(_scope_findings(f, row, str(r.scope), known))
        if str(r.matchable) == "no" and not str(r.reason).strip():
            out.append(
                Finding(
                    "error",
                    f,
                    row,
                    "reason",
                    "",
                    "a row marked matchable = no must say why in 'reason'",
                )
            )
    return out


def _scope_names(tables: Mapping[str, pd.DataFrame]) -> dict[str, set[str]]:
    """Return the names each scope filter may list (:data:`SCOPE_VALUES`), by filter."""
    out: dict[str, set[str]] = {}
    for name, (table, column) in SCOPE_VALUES.items():
        df = tables.get(table)
        out[name] = set() if df is None or column not in df else set(df[column].astype(str))
    return out


def _scope_findings(file: str, row: int, scope: str, known: dict[str, set[str]]) -> list[Finding]:
    """Return an error when a record row's scope cannot be read or names what is not there.

    The scope must follow :func:`capacity.tables_record.parse_scope`, and every name a
    filter lists must be in its table (:data:`capacity.tables_record.SCOPE_VALUES`): a
    chip, site or customer the data do not hold would make the row measure nothing.
    """
    try:
        filters = parse_scope(scope)
    except ScopeError as exc:
        return [Finding("error", file, row, "scope", scope, str(exc))]
    out: list[Finding] = []
    for name, value in filters.items():
        table, column = SCOPE_VALUES[name]
        for item in (v.strip() for v in value.split("|")):
            if item not in known[name]:
                msg = f"scope {name}:{item} names no {column} of {table}."
                msg += suggest(item, known[name])
                out.append(Finding("error", file, row, "scope", scope, msg))
    return out


def _metric_findings(file: str, row: int, r: Any) -> list[Finding]:
    """Return the findings about a record row's metric, unit and ``tests``.

    Errors for an unknown metric or a unit that is not the metric's; a warning for an
    empty ``tests`` (the row is still computed, but nobody can tell what it checks).
    """
    metric = str(r.metric).strip()
    if metric not in RECORD_METRICS:
        return [
            Finding(
                "error",
                file,
                row,
                "metric",
                metric,
                f"unknown metric.{suggest(metric, RECORD_METRICS)} Metrics are "
                + ", ".join(RECORD_METRICS),
            )
        ]
    out: list[Finding] = []
    if str(r.unit).strip() != RECORD_METRICS[metric]:
        out.append(
            Finding(
                "error",
                file,
                row,
                "unit",
                str(r.unit),
                f"metric {metric} is measured in {RECORD_METRICS[metric]!r}",
            )
        )
    if not str(getattr(r, "tests", "")).strip():
        out.append(
            Finding(
                "warning",
                file,
                row,
                "tests",
                "",
                "say what in the plan the row tests (the decision or input that moves it)",
            )
        )
    return out
