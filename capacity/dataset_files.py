"""What a dataset folder holds that the planner would not read, said instead of skipped.

Two kinds of silent loss, each turned into a finding naming the file (and key):

* a table saved under another extension or in other case (``carbon_policy.CSV``,
  ``carbon_policy.xlsx``, ``demand.tsv``): tables are read only as ``<table>.csv`` or
  ``<table>.parquet``, so the plan was made without it (an error when the table has no
  file that is read, a warning when one beside it is read);
* a ``dataset.yaml`` key the planner does not read (``discount_rate_per_year``,
  ``horizon``, ``currency``): editing it changed nothing. The file is informational:
  ``name``, ``description`` and ``license_notes``; the rest is a warning that says
  where the figure really lives.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from capacity.validation import Finding

__all__ = ["META_KEYS", "meta_findings", "misnamed_table_files", "table_of_file"]

#: The keys of ``dataset.yaml`` the planner reads (``name``) or keeps as notes.
META_KEYS = ("name", "description", "license_notes")

#: Where the figure a common but unread ``dataset.yaml`` key suggests is taken from.
_LIVES_IN = {
    "discount_rate_per_year": "the discount factors are periods.csv's discount_factor column",
    "discount_rate": "the discount factors are periods.csv's discount_factor column",
    "horizon": "the periods planned are the rows of periods.csv",
    "base_year": "the periods planned are the rows of periods.csv",
    "periods": "the periods planned are the rows of periods.csv",
    "currency": "every money column is in US dollars (its name ends in _usd)",
}


def meta_findings(meta: Mapping[str, Any], file: str = "dataset.yaml") -> list[Finding]:
    """Return a warning for each key of ``dataset.yaml`` the planner does not read.

    Parameters
    ----------
    meta : mapping
        The parsed ``dataset.yaml`` (text scalars).
    file : str
        Its file name, for the findings.

    Returns
    -------
    list of Finding
        One warning per key outside :data:`META_KEYS`, in file order; ``column`` is
        the key and ``value`` its value as written.
    """
    out = []
    for key, value in meta.items():
        if key in META_KEYS:
            continue
        where = _LIVES_IN.get(str(key), f"{file} holds only {', '.join(META_KEYS)}")
        msg = f"not read: the key {key!r} changes nothing in the plan ({where})"
        out.append(Finding("warning", file, None, str(key), str(value), msg))
    return out


def table_of_file(name: str) -> str:
    """Return the table a file name would name: up to its first dot, lower case, stripped."""
    return name.split(".", 1)[0].strip().lower()


def misnamed_table_files(directory: Path, tables: Iterable[str]) -> list[Finding]:
    """Return findings for files named as a table but not read as one.

    Parameters
    ----------
    directory : Path
        The dataset folder (existing).
    tables : iterable of str
        The table names (``carbon_policy``).

    Returns
    -------
    list of Finding
        For each file whose name up to its first dot is a table's name in any case
        (``CARBON_POLICY.csv``, ``carbon_policy.xlsx``, ``carbon_policy.csv.txt``,
        ``carbon_policy.csv.gz``) and that is not exactly ``<table>.csv`` or
        ``<table>.parquet``: an error when neither of those exists (the plan would be
        made without the table), else a warning.
    """
    names = set(tables)
    out: list[Finding] = []
    for p in sorted(directory.iterdir()):
        table = table_of_file(p.name)
        if p.name.startswith(".") or table not in names:
            continue
        if p.name in (f"{table}.csv", f"{table}.parquet"):  # read as it is
            continue
        read = [f for f in (f"{table}.csv", f"{table}.parquet") if (directory / f).is_file()]
        if read:
            msg = f"not read: {p.name} ({read[0]} beside it is the {table} table read)"
            out.append(Finding("warning", p.name, None, None, None, msg))
        else:
            msg = (
                f"not read: tables are read only as {table}.csv or {table}.parquet, so "
                f"the plan would be made without the {table} in {p.name}: save it as "
                f"{table}.csv (comma-separated, UTF-8) or {table}.parquet"
            )
            out.append(Finding("error", p.name, None, None, None, msg))
    return out
