"""Dataset I/O: load a directory of CSV (or Parquet) tables plus YAML into a `Dataset`.

A dataset directory holds one ``<table>.csv`` (or ``<table>.parquet``) per input
table of :mod:`capacity.schema`, an optional ``scenarios.yaml`` (named lists of
overrides, see :mod:`capacity.scenario_spec`) and an optional ``dataset.yaml`` (name and
description). Loading validates everything at once and raises
:class:`capacity.validation.DataValidationError` listing every error.

The :class:`Dataset` is immutable: changing it (an edit, a scenario) returns a new
validated one with a new content hash, so the hash can key caches and reports.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pandas as pd
import yaml

from capacity.csv_read import read_table_file
from capacity.csv_safe import to_safe_csv
from capacity.dataset_files import meta_findings, misnamed_table_files, table_of_file
from capacity.load_cache import cached_load
from capacity.override_checks import scenario_match_findings
from capacity.revalidate import Validation, revalidate, table_digest, validate_parts
from capacity.safe_yaml import YamlLimitError, load_yaml
from capacity.scenario_spec import Scenario, override_lines, parse_scenarios
from capacity.schema import SPECS, TABLE_NAMES
from capacity.validation import DataValidationError, Finding, merge_findings

SCENARIOS_FILE = "scenarios.yaml"
META_FILE = "dataset.yaml"


@dataclass(frozen=True, eq=False)
class Dataset:
    """A validated, immutable planning dataset.

    Build one with :func:`load_dataset` or :meth:`Dataset.from_tables`; never
    mutate the frames it returns.

    Attributes
    ----------
    name : str
        Dataset name (from ``dataset.yaml`` or the directory name).
    scenarios : Mapping[str, Scenario]
        Named scenarios; ``base`` (no overrides) is always available.
    warnings : tuple of Finding
        Warning findings of the last validation.
    hash : str
        SHA-256 of the tables' contents and the scenarios (hex).
    tables_hash : str
        SHA-256 of the tables' contents alone (hex): equal for equal tables whatever
        scenarios the data defines (a report's inputs re-solved from another file).
    scenario : str
        Name of the scenario applied to get this dataset ("base" when none).
    """

    _tables: Mapping[str, pd.DataFrame]
    name: str = ""
    scenarios: Mapping[str, Scenario] = field(default_factory=dict)
    warnings: tuple[Finding, ...] = ()
    scenario: str = "base"
    meta: Mapping[str, Any] = field(default_factory=dict)
    _validation: Validation | None = field(default=None, repr=False)
    _derived: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False, init=False)
    hash: str = field(default="", init=False)
    tables_hash: str = field(default="", init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_tables", MappingProxyType(dict(self._tables)))
        object.__setattr__(self, "scenarios", MappingProxyType(dict(self.scenarios)))
        digests = None if self._validation is None else self._validation.digests
        both = _content_hash(self._tables, self.scenarios, digests)
        object.__setattr__(self, "hash", both[0])
        object.__setattr__(self, "tables_hash", both[1])

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Mapping proxies do not pickle: rebuild from plain dicts (already validated,
        # so no re-validation), e.g. when Dask ships a Dataset to a worker process. The
        # validation record travels too: its table digests give the hash without
        # hashing every table again (40 of the 43 ms of unpickling a sampled default
        # dataset, 2026-12-05), and a later revalidation reuses it as here.
        tables, scenarios, meta = dict(self._tables), dict(self.scenarios), dict(self.meta)
        args = (tables, self.name, scenarios, self.warnings, self.scenario, meta)
        return _restore, (*args, self._validation)

    # ------------------------------------------------------------------ accessors
    def table(self, name: str) -> pd.DataFrame:
        """Return input table ``name`` (typed, schema column order; treat as read-only).

        Raises
        ------
        KeyError
            When ``name`` is not an input table.
        """
        if name not in SPECS:
            raise KeyError(f"unknown table {name!r}; tables are {', '.join(TABLE_NAMES)}")
        return self._tables[name]

    @property
    def tables(self) -> Mapping[str, pd.DataFrame]:
        """All input tables by name (read-only mapping)."""
        return self._tables

    @property
    def periods(self) -> tuple[str, ...]:
        """Horizon quarters in time order."""
        return tuple(str(p) for p in self._tables["periods"]["period"])

    # ---------------------------------------------------------------- constructors
    @classmethod
    def from_tables(
        cls,
        tables: Mapping[str, pd.DataFrame],
        *,
        name: str = "",
        scenarios: Mapping[str, Scenario] | None = None,
        scenario: str = "base",
        meta: Mapping[str, Any] | None = None,
        files: Mapping[str, str] | None = None,
    ) -> Dataset:
        """Validate frames and build a Dataset.

        Parameters
        ----------
        tables : Mapping[str, DataFrame]
            One frame per input table (text cells or typed values). A missing
            optional table (initial_fleet, commitments) is empty; a missing
            required one is an error.
        name : str
            Dataset name.
        scenarios : Mapping[str, Scenario], optional
            Named scenarios.
        scenario : str
            Name of the scenario these tables represent.
        meta : Mapping, optional
            Contents of ``dataset.yaml``.
        files : Mapping[str, str], optional
            File name per table for findings (default ``<table>.csv``).

        Returns
        -------
        Dataset

        Raises
        ------
        DataValidationError
            With every error found (warnings ride along in ``findings``).
        """
        files = {t: (files or {}).get(t, SPECS[t].filename) for t in TABLE_NAMES}
        typed, record = validate_parts(tables, files)
        findings = record.findings()
        if any(f.severity == "error" for f in findings):
            raise DataValidationError(findings)
        default_files = all(files[t] == SPECS[t].filename for t in TABLE_NAMES)
        return cls(
            typed,
            name=name,
            scenarios=dict(scenarios or {}),
            warnings=tuple(findings),
            scenario=scenario,
            meta=dict(meta or {}),
            _validation=record if default_files else None,
        )

    def replace(self, *, scenario: str | None = None, **tables: pd.DataFrame) -> Dataset:
        """Return a new validated Dataset with some tables replaced.

        Parameters
        ----------
        scenario : str, optional
            New scenario label (default: keep).
        **tables : DataFrame
            Replacement tables by name.

        Raises
        ------
        KeyError
            For an unknown table name.
        TypeError
            For a table that is not a DataFrame.
        DataValidationError
            When the new tables do not validate.
        """
        for t, df in tables.items():
            if t not in SPECS:
                raise KeyError(f"unknown table {t!r}; tables are {', '.join(TABLE_NAMES)}")
            if not isinstance(df, pd.DataFrame):  # None failed deep in the revalidation
                raise TypeError(f"{t}: give a pandas DataFrame, not {type(df).__name__}")
        label = self.scenario if scenario is None else scenario
        files = {t: SPECS[t].filename for t in TABLE_NAMES}
        done = revalidate(self._tables, self._record(), tables, files)
        if done is None:  # the horizon changed: validate everything
            merged = {**self._tables, **tables}
            return Dataset.from_tables(
                merged, name=self.name, scenarios=self.scenarios, scenario=label, meta=self.meta
            )
        typed, record = done
        findings = record.findings()
        if any(f.severity == "error" for f in findings):
            raise DataValidationError(findings)
        return Dataset(
            typed,
            name=self.name,
            scenarios=self.scenarios,
            warnings=tuple(findings),
            scenario=label,
            meta=self.meta,
            _validation=record,
        )

    def with_scenarios(self, scenarios: Mapping[str, Scenario], file: str) -> Dataset:
        """Return this dataset with other named scenarios (the tables stay as validated).

        Parameters
        ----------
        scenarios : Mapping[str, Scenario]
            Replaces ``scenarios`` (e.g. read from a report's ``inputs.yaml``).
        file : str
            Name of the file they came from, for findings.

        Raises
        ------
        DataValidationError
            When an override's ``where`` matches no row of these tables. Warnings of
            the new scenarios (:mod:`capacity.override_checks`) join the dataset's.
        """
        found = scenario_match_findings(self._tables, scenarios, file)
        if any(f.severity == "error" for f in found):
            raise DataValidationError(found)
        # the tables' warnings stay; those of the replaced scenarios.yaml go, and the new
        # scenarios' own (an override of a contract, one without a source) are kept
        kept = [w for w in self.warnings if w.file != SCENARIOS_FILE]
        return Dataset(
            self._tables,
            name=self.name,
            scenarios=scenarios,
            warnings=(*kept, *(f for f in found if f.severity == "warning")),
            scenario=self.scenario,
            meta=self.meta,
            _validation=self._validation,
        )

    def _record(self) -> Validation:
        """Return this dataset's validation by parts (made once, from its typed tables)."""
        if self._validation is None or len(self._validation.reusable) < len(TABLE_NAMES):
            # made from raw cells: validate the typed tables once, as a replace would
            files = {t: SPECS[t].filename for t in TABLE_NAMES}
            object.__setattr__(self, "_validation", validate_parts(self._tables, files)[1])
        assert self._validation is not None
        return self._validation

    def write(self, directory: str | Path, *, fmt: str = "csv") -> Path:
        """Write the dataset as ``<table>.csv`` (or ``.parquet``) plus its YAML files.

        ``dataset.yaml`` (name, description ...) and ``scenarios.yaml`` are written too,
        so the copy loads with the same name, scenarios and content hash. Written over
        an earlier copy, it replaces it: each table's file in the other format, and a
        ``dataset.yaml`` or ``scenarios.yaml`` this dataset has no content for, are
        removed (they would load back instead of, or beside, what was written). Each
        file goes to a temporary name first and is renamed into place.

        Parameters
        ----------
        directory : str or Path
            Target directory (created).
        fmt : {"csv", "parquet"}
            Table file format.

        Returns
        -------
        Path
            The directory.

        Raises
        ------
        ValueError
            When ``fmt`` is neither ``"csv"`` nor ``"parquet"`` (nothing is written).
        """
        if fmt not in ("csv", "parquet"):
            raise ValueError(f"fmt must be 'csv' or 'parquet', not {fmt!r}")
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        other = "parquet" if fmt == "csv" else "csv"
        for name, df in self._tables.items():
            tmp = d / f".{name}.{fmt}.tmp-{os.getpid()}"
            if fmt == "csv":
                to_safe_csv(df, tmp)  # formula-like text cells escaped, see capacity.csv_safe
            else:
                df.to_parquet(tmp, index=False)
            tmp.replace(d / f"{name}.{fmt}")
            # a copy in the other format would be read instead (CSV wins) or beside it
            (d / f"{name}.{other}").unlink(missing_ok=True)
        meta = dict(self.meta) or ({"name": self.name} if self.name else {})
        doc = {"scenarios": {k: v.to_dict() for k, v in self.scenarios.items() if k != "base"}}
        for file, content in ((META_FILE, meta), (SCENARIOS_FILE, doc if doc["scenarios"] else {})):
            if not content:  # an earlier file would load back what this dataset does not hold
                (d / file).unlink(missing_ok=True)
                continue
            tmp = d / f".{file}.tmp-{os.getpid()}"
            tmp.write_text(yaml.safe_dump(content, sort_keys=False, allow_unicode=True), "utf-8")
            tmp.replace(d / file)
        return d


def _restore(
    tables: dict[str, pd.DataFrame],
    name: str,
    scenarios: dict[str, Scenario],
    warnings: tuple[Finding, ...],
    scenario: str,
    meta: dict[str, Any],
    validation: Validation | None = None,
) -> Dataset:
    return Dataset(
        tables,
        name=name,
        scenarios=scenarios,
        warnings=warnings,
        scenario=scenario,
        meta=meta,
        _validation=validation,
    )


def _content_hash(
    tables: Mapping[str, pd.DataFrame],
    scenarios: Mapping[str, Scenario],
    digests: Mapping[str, bytes] | None = None,
) -> tuple[str, str]:
    """Return (hash of the tables and scenarios, hash of the tables alone), SHA-256 hex."""
    h, t = hashlib.sha256(), hashlib.sha256()
    for name in sorted(tables):
        known = None if digests is None else digests.get(name)
        digest = table_digest(name, tables[name]) if known is None else known
        h.update(digest)
        t.update(digest)
    for name in sorted(scenarios):
        h.update(json.dumps(scenarios[name].to_dict(), sort_keys=True, default=str).encode())
    return h.hexdigest(), t.hexdigest()


def validate_tables(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]
) -> tuple[dict[str, pd.DataFrame], list[Finding]]:
    """Parse and check every table; return typed tables and all findings.

    Parameters
    ----------
    tables : Mapping[str, DataFrame]
        Raw or typed frames by table name.
    files : Mapping[str, str]
        File name per table, used in findings.

    Returns
    -------
    (dict of DataFrame, list of Finding)
    """
    typed, record = validate_parts(tables, files)
    return typed, record.findings()


def read_yaml_file(path: Path) -> Any:
    """Read a YAML file of the dataset (scenarios, metadata) as text scalars.

    Raises
    ------
    DataValidationError
        When the file is not valid YAML or exceeds the alias-expansion cap (one
        finding naming the file and the line).
    """
    return _read_yaml(path)


def _read_yaml(path: Path) -> Any:
    # BaseLoader keeps every scalar as text: "1e3" and "NO" stay as written; the
    # scenario models convert each field to the type its schema column needs.
    try:
        return load_yaml(path.read_text(encoding="utf-8"))
    except YamlLimitError as exc:
        raise DataValidationError(
            [Finding("error", path.name, exc.line, None, None, f"refused: {exc}")]
        ) from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else int(mark.line) + 1
        raise DataValidationError(
            [Finding("error", path.name, line, None, None, f"not valid YAML: {exc}")]
        ) from exc


def _not_a_dataset_folder(d: Path) -> str | None:
    """Say why ``d`` cannot be a dataset folder (None when it is a folder).

    The message names the absolute path looked at, and for a table file given in
    place of its folder, the folder to give instead.
    """
    if d.is_dir():
        return None
    where = d.absolute()
    if d.is_file():
        return (
            f"this is a file ({where}); give its folder, {d.absolute().parent}, "
            "which holds every table of the dataset"
        )
    return (
        f"dataset directory not found: {where} does not exist; "
        "give a folder of CSV tables such as data/"
    )


def unknown_table_files(directory: Path) -> list[Finding]:
    """Return findings for the ``.csv`` / ``.parquet`` files of ``directory`` naming no table.

    A table file is read only under its own name (``initial_fleet.csv``), so a file
    named close to a table (``initial_fleets.csv``) would be skipped without a word and
    the plan made without that table. Such a near name is an error when the table's own
    file is absent (the data meant for it would be lost), a warning when both exist;
    any other unknown table file is a warning (it is not read). A YAML file named close
    to ``scenarios.yaml`` or ``dataset.yaml`` (``scenarios.yml``) while that file is
    absent is an error too: its scenarios would be dropped without a word.

    Parameters
    ----------
    directory : Path
        The dataset folder (existing).

    Returns
    -------
    list of Finding
        One per unknown file, in file-name order; ``file`` is the file's name.
    """
    import difflib

    present = {p.stem for p in directory.iterdir() if p.suffix in (".csv", ".parquet")}
    out: list[Finding] = []
    for p in sorted(directory.iterdir()):
        if p.name.startswith(".") or p.stem in TABLE_NAMES and p.suffix in (".csv", ".parquet"):
            continue
        if table_of_file(p.name) in TABLE_NAMES:  # CARBON_POLICY.csv: misnamed_table_files
            continue
        # a near name under any extension (carbon-policy.CSV, carbon-policy.csv.txt)
        near = difflib.get_close_matches(table_of_file(p.name), TABLE_NAMES, n=1, cutoff=0.8)
        if not near and p.suffix not in (".csv", ".parquet"):
            continue  # README.md, notes.txt: not table files
        ext = p.suffix if p.suffix in (".csv", ".parquet") else ".csv"
        if near and near[0] not in present:
            msg = (
                f"not read: {p.name} names no table; did you mean {near[0]}{ext}? "
                f"Without {near[0]}{ext} the plan is made without that table: rename the file"
            )
            out.append(Finding("error", p.name, None, None, None, msg))
        elif near:
            msg = f"not read: {p.name} names no table ({near[0]}{ext} beside it is read)"
            out.append(Finding("warning", p.name, None, None, None, msg))
        else:
            msg = f"not read: {p.name} names no table; the tables are {', '.join(TABLE_NAMES)}"
            out.append(Finding("warning", p.name, None, None, None, msg))
    out.extend(misnamed_table_files(directory, TABLE_NAMES))  # carbon_policy.xlsx ...
    for name in (SCENARIOS_FILE, META_FILE):  # scenarios.yml, scenario.yaml ...
        if (directory / name).exists():
            continue
        stem = Path(name).stem
        for p in sorted(directory.iterdir()):  # scenarios.yml, scenarios.YAML, .yaml.txt
            if p.name.startswith(".") or p.suffix.lower() in (".csv", ".parquet"):
                continue
            if difflib.get_close_matches(table_of_file(p.name), [stem], n=1, cutoff=0.8):
                msg = f"not read: the file must be named {name}; rename {p.name}"
                out.append(Finding("error", p.name, None, None, None, msg))
    return out


def load_dataset(directory: str | Path = "data") -> Dataset:
    """Load and validate a dataset directory.

    Parameters
    ----------
    directory : str or Path
        Directory with ``<table>.csv`` or ``<table>.parquet`` files (CSV wins when
        both exist), optional ``scenarios.yaml`` and ``dataset.yaml``.

    Returns
    -------
    Dataset

    Raises
    ------
    DataValidationError
        Every problem found: missing files or columns, bad cells, duplicate keys,
        unknown references, bad scenarios. Each finding names file, row, column, value.

    Notes
    -----
    The last :data:`capacity.load_cache.LOAD_CACHE_SIZE` folders loaded are kept by
    :func:`capacity.load_cache.folder_key`
    (their name and every file's bytes): loading a folder whose files are byte for byte
    the ones read before returns that same immutable Dataset (and the scenarios
    already applied to it, :func:`capacity.scenarios.apply_scenario`) without parsing
    and validating again; any edit reads and validates the folder afresh. A folder
    that changed while it was read is not kept.
    """
    d = Path(directory)
    problem = _not_a_dataset_folder(d)
    if problem is not None:
        raise DataValidationError([Finding("error", str(d), None, None, None, problem)])
    return cached_load(d, _load_folder)


def _load_folder(d: Path) -> Dataset:
    """Read and validate dataset folder ``d`` (what :func:`load_dataset` caches)."""
    raw: dict[str, pd.DataFrame] = {}
    files: dict[str, str] = {}
    findings: list[Finding] = []
    findings.extend(unknown_table_files(d))
    for name in TABLE_NAMES:
        for ext in (".csv", ".parquet"):
            p = d / f"{name}{ext}"
            if p.is_symlink() and not p.exists():  # read as missing, the file being there
                msg = f"{p.name} is a link to nothing readable (a broken or looping symlink)"
                findings.append(Finding("error", p.name, None, None, None, msg))
            if p.exists():
                other = d / f"{name}.parquet"
                if ext == ".csv" and other.exists():  # CSV wins: say so, never silently
                    msg = f"{p.name} is read and {other.name} beside it is ignored; remove one"
                    findings.append(Finding("warning", other.name, None, None, None, msg))
                files[name] = p.name
                try:
                    raw[name] = read_table_file(p, findings)
                except DataValidationError as e:
                    findings.extend(e.findings)
                break
        else:
            files[name] = SPECS[name].filename
    meta: dict[str, Any] = {}
    if (d / META_FILE).exists():
        m = _read_yaml(d / META_FILE)
        meta = m if isinstance(m, dict) else {}
        findings.extend(meta_findings(meta, META_FILE))
        if m is not None and not isinstance(m, dict):  # a list or a bare string
            msg = "not read: dataset.yaml must be keys and values (name: ..., description: ...)"
            findings.append(Finding("warning", META_FILE, None, None, str(m)[:80], msg))
    scenarios: dict[str, Scenario] = {}
    lines: dict[tuple[Any, ...], int] = {}
    if (d / SCENARIOS_FILE).exists():
        scen_doc = _read_yaml(d / SCENARIOS_FILE)
        lines = override_lines((d / SCENARIOS_FILE).read_text(encoding="utf-8"))
        scenarios, fs = parse_scenarios(scen_doc, SCENARIOS_FILE, lines)
        findings.extend(fs)
    if any(f.severity == "error" for f in findings):
        # An unreadable file or a bad scenarios.yaml: report those first, since
        # checks across tables would only repeat them.
        raise DataValidationError(findings)
    typed, fs = validate_tables(raw, files)
    findings.extend(fs)
    if not any(f.severity == "error" for f in findings):
        findings.extend(scenario_match_findings(typed, scenarios, SCENARIOS_FILE, lines))
    if any(f.severity == "error" for f in findings):
        raise DataValidationError(findings)
    name = str(meta.get("name") or d.resolve().name)
    return Dataset(typed, name=name, scenarios=scenarios, warnings=tuple(findings), meta=meta)


def validate_directory(directory: str | Path, scenario: str | None = None) -> list[Finding]:
    """Return every finding for a dataset directory (and optionally one scenario).

    Never raises for bad data: the findings carry the errors. Used by
    ``capacity validate``.
    """
    try:
        ds = load_dataset(directory)
    except DataValidationError as e:
        return list(e.findings)
    findings = list(ds.warnings)
    if scenario is not None:
        from capacity.scenarios import UnknownScenarioError, apply_scenario

        try:
            sc = apply_scenario(ds, scenario)
        except UnknownScenarioError as e:
            return findings + [Finding("error", "scenarios.yaml", None, None, scenario, str(e))]
        except DataValidationError as e:  # each names the scenario (apply_scenario)
            return findings + list(e.findings)
        findings = merge_findings(findings, sc.warnings)
    return findings
