"""Scenarios applied to a dataset: overrides patched in, scenarios looked up, datasets diffed.

The overrides and scenarios themselves, and the reading of ``scenarios.yaml``, are in
:mod:`capacity.scenario_spec` (its docstring describes the operations). The
pseudo-scenario ``base`` (no overrides) always exists.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, Self, TypeVar, cast

import numpy as np
import pandas as pd
from pydantic import ValidationError

from capacity.scenario_spec import BASE, Override, Scenario, override_error_message
from capacity.schema import PERIOD_RE, SPECS, period_index, period_label, period_ordinals
from capacity.validation import DataValidationError, Finding, refuse_path, suggest

NO_ROW = "(no row)"
SPECS_COLUMN_DTYPE = {c.name: c.dtype for t in SPECS.values() for c in t.columns}


class ScenarioTarget(Protocol):
    """What scenarios are applied to: named tables that can be replaced.

    :class:`capacity.dataset.Dataset` is the one implementation. Scenarios sit below
    the dataset (a Dataset holds its parsed :class:`Scenario` objects), so this
    module names the few members it uses instead of importing ``Dataset``.
    """

    @property
    def tables(self) -> Mapping[str, pd.DataFrame]:
        """All input tables by name."""

    @property
    def scenarios(self) -> Mapping[str, Scenario]:
        """Named scenarios the dataset defines."""

    @property
    def scenario(self) -> str:
        """Name of the scenario applied to get these tables."""

    def table(self, name: str) -> pd.DataFrame:
        """Return input table ``name``."""

    def replace(self, *, scenario: str | None = None, **tables: pd.DataFrame) -> Self:
        """Return a new validated copy with some tables replaced."""


#: A Dataset (or any :class:`ScenarioTarget`): functions return the type they get.
DatasetT = TypeVar("DatasetT", bound=ScenarioTarget)


class UnknownScenarioError(ValueError):
    """Raised for a scenario name the dataset does not define; lists the known ones."""


def _mask(df: pd.DataFrame, ov: Override) -> np.ndarray:
    m = np.ones(len(df), dtype=bool)
    for col, vals in ov.where.items():
        m &= df[col].astype(str).isin(vals).to_numpy()
    if "period" in df.columns and (ov.from_period or ov.to_period):
        idx = period_ordinals(df["period"])  # NaN (never matched): a malformed period
        if ov.from_period:
            m &= idx >= period_index(ov.from_period)
        if ov.to_period:
            m &= idx <= period_index(ov.to_period)
    return m


def unmatched_override(df: pd.DataFrame, ov: Override) -> str | None:
    """Say what in ``ov``'s ``where`` matches nothing in ``df``; None when every value matches.

    Parameters
    ----------
    df : DataFrame
        The table the override patches (typed, as in a Dataset).
    ov : Override
        The override.

    Returns
    -------
    str or None
        A message naming each ``where`` value absent from its column, with a "did you
        mean" (also when another value of the same list matches rows: a misspelt
        ``cowos_wafrs`` in ``[tsmc_n3_wafers, cowos_wafrs]`` would otherwise leave the
        CoWoS rows unchanged without a word), or the period window that leaves no row.
    """
    if not len(df):
        return f"changes nothing: table {ov.table} has no rows"
    parts: list[str] = []
    for col, vals in ov.where.items():
        known = pd.unique(df[col].astype(str))
        present = set(known)
        for v in vals:
            if v not in present:
                parts.append(f"{col} {v!r} is not in {ov.table}." + suggest(v, list(known)))
    matched = bool(_mask(df, ov).any())
    if parts and matched:  # one value of a list misspelt: the rest would apply silently
        return "changes only part of what it names: " + " ".join(parts)
    if matched:
        return None
    if not parts:
        window = ""
        if ov.from_period or ov.to_period:
            a, b = ov.from_period, ov.to_period
            window = f" from {a} to {b}" if a and b else f" from {a} on" if a else f" up to {b}"
        said = " and ".join(
            f"{col} {vals[0]!r}" if len(vals) == 1 else f"{col} in {list(vals)!r}"
            for col, vals in ov.where.items()
        )
        parts.append(f"no row of {ov.table} matches where {said or 'any row'}{window}")
    return "changes nothing: " + " ".join(parts)


def _apply_one(df: pd.DataFrame, ov: Override) -> pd.DataFrame:
    spec = SPECS[ov.table]
    col = spec.column(ov.column)
    df = df.copy()
    m = _mask(df, ov)
    if ov.op == "scale":
        vals = df[ov.column].to_numpy(dtype="float64", copy=True)
        vals[m] *= float(ov.factor or 0.0)
        df[ov.column] = vals
    elif ov.op == "set":
        if col.is_numeric:
            try:
                v: Any = float(str(ov.value))
            except ValueError as exc:
                raise _override_error(ov, ov.value, "set: not a number") from exc
            df[ov.column] = df[ov.column].astype("float64")
            df.loc[m, ov.column] = v
        else:
            df[ov.column] = df[ov.column].astype(object)
            df.loc[m, ov.column] = str(ov.value)
    elif ov.op == "shift":
        n = int(ov.periods or 0)
        if col.dtype == "period":
            df[ov.column] = df[ov.column].astype(object)
            df.loc[m, ov.column] = [
                period_label(period_index(str(p)) + n) if PERIOD_RE.match(str(p)) else p
                for p in df.loc[m, ov.column]
            ]
        else:
            _refuse_rows_without_a_quarter(df, ov, m)
            df[ov.column] = _shift_values(df, ov, m, n, spec.key)
    return df


def _refuse_rows_without_a_quarter(df: pd.DataFrame, ov: Override, m: np.ndarray) -> None:
    """Refuse a shift whose matched rows include one without a quarter (no period).

    A carbon policy row with an empty period (a horizon-wide price) was left as it was,
    and the override counted as applied (validate OK, diff "no cell differs").
    """
    # empty only: a malformed period is the schema's finding, named with its value
    period = df["period"]
    blank = m & (period.isna() | (period.astype(str).str.strip() == "")).to_numpy()
    if blank.any():
        raise _override_error(
            ov,
            None,
            f"shift moves values between quarters, but {int(blank.sum())} row(s) it matches "
            f"in {ov.table} have no period (a value for the whole horizon): it would change "
            "nothing there; use scale or set",
        )


def _override_error(ov: Override, value: str | None, message: str) -> DataValidationError:
    """Return the error of one override that cannot apply (file ``overrides``)."""
    finding = Finding("error", "overrides", None, f"{ov.table}.{ov.column}", value, message)
    return DataValidationError([finding])


def _shift_values(
    df: pd.DataFrame, ov: Override, m: np.ndarray, n: int, key: tuple[str, ...]
) -> np.ndarray:
    group_cols = [k for k in key if k != "period"]
    vals = df[ov.column].to_numpy(dtype="float64", copy=True)
    new: np.ndarray = vals.copy()
    pidx = period_ordinals(df["period"])
    cells = zip(*(df[c].astype(str).tolist() for c in group_cols), strict=True)
    groups = (
        np.array(["\x1f".join(row) for row in cells], dtype=object)
        if group_cols
        else np.zeros(len(df))
    )
    readable = ~np.isnan(pidx)  # a malformed period stays as it is (the schema reports it)
    for g in pd.unique(groups[m & readable]):
        rows = np.flatnonzero((groups == g) & readable)
        order = rows[np.argsort(pidx[rows])]
        lookup = {int(pidx[r]): vals[r] for r in order}
        first, last = vals[order[0]], vals[order[-1]]
        for r in order:
            if not m[r]:
                continue
            src = int(pidx[r]) - n
            if src in lookup:
                new[r] = lookup[src]
            elif ov.fill == "zero":
                new[r] = 0.0
            else:
                new[r] = first if n > 0 else last
    return new


def apply_overrides(
    ds: DatasetT, overrides: Sequence[Override | Mapping[str, Any]], *, scenario: str | None = None
) -> DatasetT:
    """Apply overrides in order and return a new validated Dataset.

    Parameters
    ----------
    ds : Dataset
        Base dataset (unchanged).
    overrides : sequence of Override or mapping
        Patches; mappings are validated into :class:`Override` first.
    scenario : str, optional
        Label of the resulting dataset's scenario.

    Returns
    -------
    Dataset

    Raises
    ------
    DataValidationError
        When an override is malformed, or the patched data no longer validates
        (e.g. a scale that makes a PUE fall below 1).
    """
    tables = dict(ds.tables)
    parsed: list[Override] = []
    for i, ov in enumerate(overrides):
        if isinstance(ov, Override):
            parsed.append(ov)
            continue
        try:
            parsed.append(Override.model_validate(ov))
        except ValidationError as e:
            raise DataValidationError(
                [
                    Finding(
                        "error",
                        "overrides",
                        None,
                        f"overrides[{i}]." + ".".join(map(str, err["loc"])),
                        None,
                        override_error_message(err, ".".join(map(str, err["loc"]))),
                    )
                    for err in e.errors()
                ]
            ) from e
    unmatched: list[Finding] = []
    for i, ov in enumerate(parsed):
        msg = unmatched_override(tables[ov.table], ov)
        if msg is not None:
            unmatched.append(
                Finding("error", "overrides", None, f"overrides[{i}].where", None, msg)
            )
        tables[ov.table] = _apply_one(tables[ov.table], ov)
    if unmatched:
        raise DataValidationError(unmatched)
    return ds.replace(
        scenario=scenario or ds.scenario, **{t: tables[t] for t in {o.table for o in parsed}}
    )


def scenario_names(ds: ScenarioTarget) -> list[str]:
    """Names of the scenarios a dataset defines (``base`` first when not redefined)."""
    names = list(ds.scenarios)
    return names if BASE in names else [BASE, *names]


def in_scenario(f: Finding, sc: Scenario) -> Finding:
    """Return ``f`` with its message naming scenario ``sc`` and the override that set it.

    A value a scenario makes invalid (``set chips.cooling`` to ``water``) was reported at
    the data cell alone, as if the CSV held it. The override is the one of ``sc`` on the
    finding's table and column (the last, when several), else those on its table (a
    check across columns, such as a sale window a shift of first_period inverted); a
    finding of no override's table names the scenario only.
    """
    table = str(f.file).removesuffix(".csv").removesuffix(".parquet")
    on_table = [i for i, o in enumerate(sc.overrides) if o.table == table]
    hits = [i for i in on_table if sc.overrides[i].column == str(f.column)][-1:] or on_table
    at = f"scenario {sc.name!r}"
    if hits:  # the override of the cell, else those of its table (a check across columns)
        named = [
            f"overrides[{i}]: {sc.overrides[i].op} {table}.{sc.overrides[i].column}" for i in hits
        ]
        at += f" ({'; '.join(named[:3])}{'; ...' if len(named) > 3 else ''})"
    return Finding(f.severity, f.file, f.row, f.column, f.value, f"{at}: {f.message}")


def apply_scenario(ds: DatasetT, name: str | None) -> DatasetT:
    """Apply a named scenario of ``ds`` and return the new validated Dataset.

    Parameters
    ----------
    ds : Dataset
        Base dataset with its ``scenarios``.
    name : str or None
        Scenario name; None or ``"base"`` return ``ds`` unchanged.

    Raises
    ------
    UnknownScenarioError
        When the dataset does not define ``name``; the message lists the known ones.
    DataValidationError
        When the scenario's data does not validate.

    Notes
    -----
    Both datasets are immutable, so the result is kept on ``ds``: applying the same
    scenario to the same Dataset again returns the same validated Dataset.
    """
    refuse_path(ds, "apply_scenario")
    if name is None or (name == BASE and BASE not in ds.scenarios):
        return ds
    if name not in ds.scenarios:
        raise UnknownScenarioError(
            f"unknown scenario {name!r}; this dataset defines: {', '.join(scenario_names(ds))}."
            + suggest(name, ds.scenarios)
        )
    memo = getattr(ds, "_derived", None)  # a Dataset keeps what was applied to it
    if memo is not None and ("scenario", name) in memo:
        return cast("DatasetT", memo[("scenario", name)])
    sc = ds.scenarios[name]
    if sc.overrides:
        try:
            out = apply_overrides(ds, sc.overrides, scenario=name)
        except DataValidationError as e:
            raise DataValidationError([in_scenario(f, sc) for f in e.findings]) from None
    else:
        out = ds.replace(scenario=name)
    if memo is not None:
        memo[("scenario", name)] = out
    return out


def diff_datasets(a: ScenarioTarget, b: ScenarioTarget) -> pd.DataFrame:
    """List exactly which cells differ between two datasets.

    Rows are matched on their key. In tables whose key holds a start date
    (``commitments.from_period``, ``initial_fleet.install_period``) a shifted schedule
    changes the keys themselves, so there rows are matched by their order within the
    group of the other key columns when both sides have as many rows: a commitment
    delayed two quarters and halved then reads ``from_period 2027Q1 -> 2027Q3`` and
    ``min_it_mw 500 -> 250`` on one row.

    Returns
    -------
    DataFrame
        Columns table, key (the old row's key values joined by "/"), column, old, new
        (text). A row that exists on one side only lists each of its values against
        ``"(no row)"`` on the other side.
    """
    refuse_path(a, "diff_datasets")
    refuse_path(b, "diff_datasets")
    rows: list[tuple[str, str, str, str, str]] = []
    for name, spec in SPECS.items():
        pairs, only_a, only_b = _match_rows(a.table(name), b.table(name), spec.key)
        value_cols = [c for c in spec.column_names if c not in spec.key]
        for k, r in only_a:
            rows.extend((name, k, c, _fmt(r[c]), NO_ROW) for c in value_cols)
        for k, r in only_b:
            rows.extend((name, k, c, NO_ROW, _fmt(r[c])) for c in value_cols)
        for k, ra, rb in pairs:
            for c in spec.column_names:
                va, vb = ra[c], rb[c]
                if isinstance(va, float) and isinstance(vb, float):
                    if np.isclose(va, vb, rtol=1e-12, atol=0) or (np.isnan(va) and np.isnan(vb)):
                        continue
                elif str(va) == str(vb):
                    continue
                rows.append((name, k, c, _fmt(va), _fmt(vb)))
    df = pd.DataFrame(rows, columns=["table", "key", "column", "old", "new"])
    return df.sort_values(["table", "key", "column"], kind="stable").reset_index(drop=True)


Row = dict[str, Any]


def _match_rows(
    da: pd.DataFrame, db: pd.DataFrame, key: tuple[str, ...]
) -> tuple[list[tuple[str, Row, Row]], list[tuple[str, Row]], list[tuple[str, Row]]]:
    """Pair the rows of two versions of a table: (pairs, only in a, only in b)."""
    ka, kb = _keyed(da, key), _keyed(db, key)
    date_keys = [k for k in key if SPECS_COLUMN_DTYPE.get(k) == "period" and k != "period"]
    pairs: list[tuple[str, Row, Row]] = []
    if date_keys:
        group_cols = [k for k in key if k not in date_keys]

        def groups(keyed: dict[str, Row]) -> dict[tuple[str, ...], list[tuple[str, Row]]]:
            out: dict[tuple[str, ...], list[tuple[str, Row]]] = {}
            for k, r in keyed.items():
                out.setdefault(tuple(str(r[c]) for c in group_cols), []).append((k, r))
            for rows in out.values():
                rows.sort(key=lambda kr: tuple(period_index(str(kr[1][d])) for d in date_keys))
            return out

        ga, gb = groups(ka), groups(kb)
        for g in ga.keys() & gb.keys():
            ra, rb = ga[g], gb[g]
            if len(ra) == len(rb) and [k for k, _ in ra] != [k for k, _ in rb]:
                for (k1, r1), (k2, r2) in zip(ra, rb, strict=True):
                    pairs.append((k1, r1, r2))
                    del ka[k1], kb[k2]
    common = ka.keys() & kb.keys()
    pairs += [(k, ka[k], kb[k]) for k in common]
    only_a = [(k, r) for k, r in ka.items() if k not in common]
    only_b = [(k, r) for k, r in kb.items() if k not in common]
    return pairs, only_a, only_b


def _keyed(df: pd.DataFrame, key: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    return {"/".join(str(r[k]) for k in key): r for r in df.to_dict("records")}


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.10g}"
    return str(v)
