"""Validation by parts, so a changed dataset re-checks only what the change touches.

:func:`validate_parts` runs every check of :func:`capacity.dataset.validate_tables`
and keeps its findings by part: the parse and duplicate-key findings of each table,
and the findings of each cross-table check. :func:`revalidate` then takes a validated
dataset's typed tables, that record and some replaced tables (a scenario's
overrides), and re-runs

* the parse of only the columns whose values changed (a column is parsed from its
  own cells, :func:`capacity.parsing.typed_columns`), or of the whole table when
  its rows, columns, dtypes, keys or references changed;
* the duplicate-key check of a table whose key columns changed;
* each cross-table check that reads a changed column (:data:`CHECK_READS`), and every
  one of them after a structural change (rows, keys, references).

The result equals a full :func:`capacity.dataset.validate_tables` of the new tables:
the same typed tables and the same findings in the same order
(``tests/test_revalidate.py`` compares both on every column of the default dataset).
A change of the ``periods`` table (the horizon) is not handled here: the caller
validates everything again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from capacity.contract_checks import check_contracts, check_migration
from capacity.parsing import no_rows_findings, parse_table, typed_columns
from capacity.plausibility import penalty_warnings
from capacity.power_checks import check_power_equipment
from capacity.schema import SPECS, TABLE_NAMES
from capacity.source_checks import check_public_record, check_sources
from capacity.table_checks import check_keys, check_placement, check_references, check_semantics
from capacity.validation import Finding

CheckFn = Callable[[Mapping[str, pd.DataFrame], Mapping[str, str]], list[Finding]]

#: The cross-table checks, in the order :func:`validate_tables` reports them.
CHECKS: tuple[tuple[str, CheckFn], ...] = (
    ("references", check_references),
    ("semantics", check_semantics),
    ("placement", check_placement),
    ("contracts", check_contracts),
    ("migration", check_migration),
    ("power_equipment", check_power_equipment),
    ("sources", check_sources),
    ("public_record", check_public_record),
    ("penalties", penalty_warnings),
)


def _reference_columns() -> frozenset[tuple[str, str]]:
    """Every key column, every reference column and every column referred to."""
    out: set[tuple[str, str]] = set()
    for name, spec in SPECS.items():
        out.update((name, c) for c in spec.key)
        for col in spec.columns:
            if col.references is not None:
                out.add((name, col.name))
                out.add(col.references)
    return frozenset(out)


#: Columns whose change is structural: row identities or links between tables move,
#: so the table is parsed whole and every cross-table check runs again.
STRUCTURAL_COLUMNS = _reference_columns()

#: Columns each cross-table check reads besides :data:`STRUCTURAL_COLUMNS` (a change
#: of those re-runs every check); ``"*"`` is every column of the table. A check that
#: starts reading another value column must list it here (the test of this module
#: changes every column and compares with a full validation).
CHECK_READS: dict[str, frozenset[tuple[str, str]]] = {
    "references": frozenset(),
    "semantics": frozenset(
        {
            ("periods", "*"),
            ("chips", "first_period"),
            ("chips", "last_period"),
            ("chips", "family"),
            ("chips", "vendor"),
            ("sites", "initial_liquid_mw"),
            ("sites", "initial_it_mw"),
            ("sites", "max_it_mw"),
            ("sites", "region"),
            ("sites", "hosts"),
            ("commitments", "*"),
            ("eligibility", "regions"),
            ("initial_fleet", "install_period"),
        }
    ),
    "placement": frozenset(
        {
            ("sites", "region"),
            ("demand", "regions"),
            ("ppas", "region"),
            ("training_clusters", "*"),
        }
    ),
    "contracts": frozenset({("contract_terms", "*"), ("demand", "demand_h100e")}),
    "migration": frozenset({("migration", "*"), ("chips", "family")}),
    "power_equipment": frozenset(
        {
            ("power_bill_of_materials", "*"),
            ("equipment_order_books", "*"),
            ("flexible_interconnection", "*"),
            ("grid_upgrades", "lead_periods"),
        }
    ),
    "sources": frozenset({("sources", "*")}),
    "public_record": frozenset({("public_record", "*"), ("chips", "family"), ("chips", "vendor")}),
    "penalties": frozenset({("customers", "*"), ("commitments", "*")}),
}


def table_digest(name: str, df: pd.DataFrame) -> bytes:
    """Return the bytes one table adds to :attr:`capacity.dataset.Dataset.hash`.

    Table name, column names (JSON) and, column by column, pandas' hashes of the
    cells as text (:func:`column_digests`).
    """
    return _joined(name, df, column_digests(df))


def column_digests(
    df: pd.DataFrame, known: Mapping[str, bytes] | None = None, changed: Sequence[str] = ()
) -> dict[str, bytes]:
    """Return pandas' hashes of each column's cells as text, as bytes, by column.

    Parameters
    ----------
    df : DataFrame
    known : Mapping[str, bytes], optional
        Digests of an earlier version of ``df``: reused for every column not in
        ``changed`` (a value change re-hashes only the columns it touched).
    changed : sequence of str
        Columns whose cells differ from the version ``known`` was made of.

    Returns
    -------
    dict of str to bytes
        One entry per column (empty bytes for a table without rows).
    """
    out: dict[str, bytes] = {}
    todo: list[str] = []
    for c in map(str, df.columns):
        if known is not None and c in known and c not in changed:
            out[c] = known[c]
        elif len(df):
            todo.append(c)
        else:
            out[c] = b""
    if todo:  # one hash call for every column to do: pandas hashes cell by cell
        cells = np.concatenate([df[c].astype(str).to_numpy(dtype=object) for c in todo])
        hashes = pd.util.hash_array(cells, categorize=True)
        n = len(df)
        for i, c in enumerate(todo):
            out[c] = hashes[i * n : (i + 1) * n].tobytes()
    return {c: out[c] for c in map(str, df.columns)}


def _joined(name: str, df: pd.DataFrame, columns: Mapping[str, bytes]) -> bytes:
    """Table digest from its column digests (:func:`table_digest`)."""
    head = [name.encode(), json.dumps(list(map(str, df.columns))).encode()]
    return b"".join([*head, *(columns[str(c)] for c in df.columns)])


@dataclass(frozen=True)
class Validation:
    """The findings of one validation, by part (see the module docstring).

    Attributes
    ----------
    parse, keys : Mapping[str, tuple of Finding]
        Parse and duplicate-key findings per table.
    checks : Mapping[str, tuple of Finding] or None
        Findings per cross-table check (:data:`CHECKS`); None when they did not run
        (an error on a whole table or its header stops them).
    reusable : frozenset of str
        Tables whose parse and key findings equal those of their typed frame (the
        frame given was typed already); the others are parsed again by
        :func:`revalidate`.
    digests : Mapping[str, bytes]
        :func:`table_digest` of each typed table.
    columns : Mapping[str, Mapping[str, bytes]]
        :func:`column_digests` of each typed table (what a value change reuses).
    """

    parse: Mapping[str, tuple[Finding, ...]]
    keys: Mapping[str, tuple[Finding, ...]]
    checks: Mapping[str, tuple[Finding, ...]] | None
    reusable: frozenset[str]
    digests: Mapping[str, bytes]
    columns: Mapping[str, Mapping[str, bytes]]

    def findings(self) -> list[Finding]:
        """All findings in the order of :func:`capacity.dataset.validate_tables`.

        One cause, one finding: a cross-table or cross-column error on a row whose
        own cell is already an error (a negative ``initial_it_mw`` would also make
        ``initial_liquid_mw`` "exceed" it; ``inf`` would also "exceed" ``max_it_mw``)
        is left out; it is reported again, if still true, once the cell is fixed.
        """
        out: list[Finding] = []
        for name in TABLE_NAMES:
            out.extend(self.parse[name])
            out.extend(self.keys[name])
        if self.checks is not None:
            bad_rows = {
                (f.file, f.row)
                for fs in self.parse.values()
                for f in fs
                if f.severity == "error" and f.row is not None
            }
            checks = [
                f
                for check, _ in CHECKS
                for f in self.checks[check]
                if not (f.severity == "error" and (f.file, f.row) in bad_rows)
            ]
            own = (*self.parse["periods"], *self.keys["periods"])
            if any(f.severity == "error" for f in own) or any(
                f.severity == "error" and str(f.file).split(".")[0] == "periods" for f in checks
            ):
                checks = _one_per_unknown_period(checks)
            out.extend(checks)
        return out


def _one_per_unknown_period(findings: list[Finding]) -> list[Finding]:
    """Fold the rows naming a quarter a broken periods table lacks into one finding each.

    A quarter deleted from (or misspelt in) ``periods.csv`` makes every row of every
    table that names it an "unknown period": dozens of findings of one cause. Each
    (file, column, quarter) keeps one finding, at its first row, that counts the rows,
    lists the first twelve and points at ``periods.csv``.
    """
    groups: dict[tuple[str, object, object], list[Finding]] = {}
    out: list[Finding | tuple[str, object, object]] = []
    for f in findings:
        if f.severity == "error" and f.message.startswith("unknown period "):
            key = (f.file, f.column, f.value)
            if key not in groups:
                groups[key] = []
                out.append(key)
            groups[key].append(f)
        else:
            out.append(f)
    folded: list[Finding] = []
    for item in out:
        if isinstance(item, Finding):
            folded.append(item)
            continue
        fs = groups[item]
        if len(fs) == 1:
            folded.append(fs[0])
            continue
        rows = [int(f.row) for f in fs if f.row is not None]
        listed = ", ".join(map(str, rows[:12])) + (", ..." if len(rows) > 12 else "")
        first = fs[0]
        msg = (
            f"unknown period {first.value!r} in {len(fs)} rows of {first.file} (rows {listed}): "
            "not in periods; periods.csv has an error of its own: fix it first"
        )
        folded.append(Finding("error", first.file, first.row, first.column, first.value, msg))
    return folded


def _blocks_checks(
    parse: Mapping[str, tuple[Finding, ...]], keys: Mapping[str, tuple[Finding, ...]]
) -> bool:
    """Return True when a table-wide or header error stops the cross-table checks."""
    return any(
        f.severity == "error" and f.row in (None, 1)
        for part in (parse, keys)
        for fs in part.values()
        for f in fs
    )


def _horizon_last(tables: Mapping[str, pd.DataFrame]) -> str | None:
    """Return the latest quarter of the periods table (not its last row), or None."""
    if "periods" in tables and len(tables["periods"]) and "period" in tables["periods"]:
        return max(str(p) for p in tables["periods"]["period"])
    return None


def _empty_raw(name: str, files: Mapping[str, str]) -> tuple[pd.DataFrame, list[Finding]]:
    """Return an empty frame for a missing table (and an error when it is required)."""
    spec = SPECS[name]
    found = []
    if spec.required:
        found.append(
            Finding(
                "error",
                files[name],
                None,
                None,
                None,
                f"missing table {name!r} ({spec.description}); expected file {spec.filename}",
            )
        )
    return pd.DataFrame({c: pd.Series([], dtype=object) for c in spec.column_names}), found


def _run_checks(
    typed: Mapping[str, pd.DataFrame],
    files: Mapping[str, str],
    old: Mapping[str, tuple[Finding, ...]] | None = None,
    touched: frozenset[tuple[str, str]] | None = None,
) -> dict[str, tuple[Finding, ...]]:
    """Run the cross-table checks; with ``old`` and ``touched``, only those that read a change."""
    out: dict[str, tuple[Finding, ...]] = {}
    for check, fn in CHECKS:
        if old is not None and touched is not None:
            reads = CHECK_READS[check]
            if not any((t, c) in reads or (t, "*") in reads for t, c in touched):
                out[check] = old[check]
                continue
        out[check] = tuple(fn(typed, files))
    return out


def validate_parts(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]
) -> tuple[dict[str, pd.DataFrame], Validation]:
    """Parse and check every table; return the typed tables and the findings by part.

    Parameters
    ----------
    tables : Mapping[str, DataFrame]
        Raw or typed frames by table name (a missing optional table is empty).
    files : Mapping[str, str]
        File name per table, used in findings.

    Returns
    -------
    (dict of DataFrame, Validation)
    """
    horizon_last = _horizon_last(tables)
    typed: dict[str, pd.DataFrame] = {}
    parse: dict[str, tuple[Finding, ...]] = {}
    keys: dict[str, tuple[Finding, ...]] = {}
    reusable = set()
    for name in TABLE_NAMES:
        spec = SPECS[name]
        raw = tables.get(name)
        missing: list[Finding] = []
        if raw is None:
            raw, missing = _empty_raw(name, files)
        df, fs = parse_table(spec, raw, files[name], horizon_last)
        if not missing:  # a missing file is its own finding
            fs = no_rows_findings(spec, len(raw), files[name]) + fs
        parse[name] = (*missing, *fs)
        keys[name] = tuple(check_keys(spec, df, files[name]))
        typed[name] = df
        if not missing and raw.equals(df):
            reusable.add(name)
    checks = None if _blocks_checks(parse, keys) else _run_checks(typed, files)
    columns = {n: column_digests(df) for n, df in typed.items()}
    digests = {n: _joined(n, typed[n], columns[n]) for n in typed}
    return typed, Validation(parse, keys, checks, frozenset(reusable), digests, columns)


def _value_changes(name: str, base: pd.DataFrame, new: pd.DataFrame) -> list[str] | None:
    """Columns of ``new`` whose values differ from ``base``; None for a structural change."""
    if (
        list(new.columns) != list(base.columns)
        or len(new) != len(base)
        or not new.index.equals(base.index)
        or list(new.dtypes) != list(base.dtypes)
    ):
        return None
    out = []
    for c in base.columns:
        a, b = base[c], new[c]
        if a.dtype.kind == "f":
            same = np.array_equal(a.to_numpy(), b.to_numpy(), equal_nan=True)
        else:
            same = a.equals(b)
        if not same:
            if (name, str(c)) in STRUCTURAL_COLUMNS:
                return None
            out.append(str(c))
    return out


def _spliced_findings(
    name: str, old: tuple[Finding, ...], cols: list[str], new: list[Finding]
) -> tuple[Finding, ...]:
    """Parse findings with those of ``cols`` replaced, in parse order (column by column)."""
    order = {c: i for i, c in enumerate(SPECS[name].column_names)}
    kept = [f for f in old if f.column not in cols]
    return tuple(sorted([*kept, *new], key=lambda f: order.get(str(f.column), -1)))


def revalidate(
    typed: Mapping[str, pd.DataFrame],
    record: Validation,
    changed: Mapping[str, pd.DataFrame],
    files: Mapping[str, str],
) -> tuple[dict[str, pd.DataFrame], Validation] | None:
    """Validate ``typed`` with ``changed`` tables replaced, re-checking only what changed.

    Parameters
    ----------
    typed : Mapping[str, DataFrame]
        Typed tables of a validated dataset (every table present).
    record : Validation
        Their validation (:func:`validate_parts`).
    changed : Mapping[str, DataFrame]
        Replacement frames by table name (raw or typed).
    files : Mapping[str, str]
        File name per table (those ``record`` was made with).

    Returns
    -------
    (dict of DataFrame, Validation) or None
        As :func:`validate_parts` of the merged tables would return; None when the
        horizon (``periods``) changed, where the caller validates everything.
    """
    if "periods" in changed and changed["periods"] is not typed["periods"]:
        return None
    horizon_last = _horizon_last(typed)
    out, parse, keys = dict(typed), dict(record.parse), dict(record.keys)
    digests, reusable = dict(record.digests), set(record.reusable)
    columns = dict(record.columns)
    touched: set[tuple[str, str]] = set()
    structural = record.checks is None
    for name in TABLE_NAMES:
        spec, base = SPECS[name], typed[name]
        new = changed.get(name, base)
        if new is base and name in record.reusable:
            continue
        cols = None if name not in record.reusable else _value_changes(name, base, new)
        if cols is None:  # parse the whole table (structural change, or raw cells)
            df, fs = parse_table(spec, new, files[name], horizon_last)
            fs = no_rows_findings(spec, len(new), files[name]) + fs
            out[name], parse[name] = df, tuple(fs)
            keys[name] = tuple(check_keys(spec, df, files[name]))
            reusable.discard(name)
            if new.equals(df):
                reusable.add(name)
            structural = True
        elif cols:
            values, fs = typed_columns(spec, new, cols, files[name], horizon_last)
            df = base.copy(deep=False)
            for c in cols:
                df[c] = values[c]
            out[name] = df
            parse[name] = _spliced_findings(name, record.parse[name], cols, fs)
            if not all(new[c].equals(df[c]) for c in cols):
                reusable.discard(name)
            touched.update((name, c) for c in cols)
        else:
            continue  # same values: keep the validated frame
        known = record.columns.get(name) if cols is not None else None
        columns[name] = column_digests(out[name], known, cols or ())
        digests[name] = _joined(name, out[name], columns[name])
    if _blocks_checks(parse, keys):
        checks = None
    elif structural or record.checks is None:
        checks = _run_checks(out, files)
    else:
        checks = _run_checks(out, files, record.checks, frozenset(touched))
    return out, Validation(parse, keys, checks, frozenset(reusable), digests, columns)
