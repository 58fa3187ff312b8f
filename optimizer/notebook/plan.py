"""A plan as analysts use it in a notebook: :class:`Plan`, :class:`PlanCollection`.

A :class:`Plan` wraps the result tables of one scenario (a fresh
:class:`~optimizer.plan.plan_result.PlanResult`, or a report folder read back with
:func:`read_report`) with the key maps of its dataset, and gives
``plan.statistics.<statistic>(groupby=...)`` and ``plan.plot.<statistic>(kind=...)``.
A :class:`PlanCollection` holds several named plans (scenarios, a batch's cases):
its statistics add a ``scenario`` key, so ``plans.statistics.capex(groupby="scenario")``
compares them.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from capacity.dataset import load_dataset
from capacity.recorded_inputs import INPUTS_FILE, read_scenarios_file, recorded_hash
from capacity.scenarios import apply_overrides, apply_scenario
from capacity.validation import DataValidationError
from optimizer.notebook.keys import PlanKeys, select_rows
from optimizer.notebook.plots import Plotter
from optimizer.notebook.run_checks import (
    warn_if_done_missing,
    warn_if_mixed_data,
    warn_if_not_recorded_data,
    warn_if_run_unfinished,
    warn_if_unfinished,
)
from optimizer.notebook.statistics import GroupBy, Statistics, Where
from optimizer.output.atomic import ReportError
from optimizer.output.parquet_tables import ReportTables
from optimizer.output.parquet_tables import read_report as read_tables
from optimizer.output.run_folder import scenario_name_from_dir

__all__ = ["Plan", "PlanCollection", "read_report", "read_run"]


class Plan:
    """One plan: its result tables, statistics and figures.

    Parameters
    ----------
    tables : Mapping of str to DataFrame
        The result tables (``PlanResult.tables``, or the tables of a report folder).
    keys : PlanKeys, optional
        The dataset's key maps (region, family, vendor, unit capex); without them,
        grouping by a derived key or splitting capex raises ``ValueError``.
    name : str
        The scenario's name.
    status : str
        The plan's status (``optimal`` ...).
    objective_usd : float or None
        Discounted total cost (USD).
    result : PlanResult, optional
        The solver's full result when the plan was just solved (None when read back).
    """

    def __init__(
        self,
        tables: Mapping[str, pd.DataFrame],
        keys: PlanKeys | None = None,
        *,
        name: str = "",
        status: str = "",
        objective_usd: float | None = None,
        result: Any = None,
    ) -> None:
        # a copy that keeps which of a report's tables its folder lacks
        self.tables: Mapping[str, pd.DataFrame] = ReportTables(
            tables, getattr(tables, "absent", None)
        )
        self.keys = keys or PlanKeys()
        self.name = name
        self.status = status
        self.objective_usd = objective_usd
        self.result = result
        if status and objective_usd is None:  # its statistics would read as zero cost
            warnings.warn(
                f"plan {name!r} has no solution ({status}): its tables hold no values, so "
                "its statistics read zero",
                stacklevel=2,
            )
        self.statistics = Statistics(self.tables, self.keys)
        self.plot = Plotter(self.statistics, _drawable(self.statistics), self.keys.periods)

    def __repr__(self) -> str:
        obj = "none" if self.objective_usd is None else f"{self.objective_usd:,.0f} USD"
        return f"Plan({self.name!r}, status={self.status!r}, objective={obj})"

    @classmethod
    def from_result(cls, result: Any, ds: Any, name: str = "") -> Plan:
        """Return the plan of a solve (``optimizer.solve(ds)``) with ``ds``'s key maps.

        Parameters
        ----------
        result : PlanResult
        ds : capacity.Dataset
            The dataset solved (after its scenario).
        name : str
            Scenario name (default: the dataset's scenario).
        """
        return cls(
            result.tables,
            PlanKeys.from_dataset(ds),
            name=name or str(getattr(ds, "scenario", "")),
            status=str(getattr(result.status, "value", result.status)),
            objective_usd=result.objective_usd,
            result=result,
        )

    def compare(
        self, other: Plan, statistic: str = "costs", groupby: GroupBy = None
    ) -> pd.DataFrame:
        """Return one statistic of both plans side by side, with the difference.

        Parameters
        ----------
        other : Plan
        statistic : str
            A statistic name (``costs``, ``capex``, ``energy`` ...).
        groupby : str or sequence of str, optional
            As for the statistic.

        Returns
        -------
        DataFrame
            The keys, then per value column ``<value>`` of this plan, of the other
            (suffixed with the plans' names, ``a`` and ``b`` when unnamed or equal)
            and ``<value>_change`` (other minus this).

        Raises
        ------
        TypeError
            When ``other`` is not a Plan.
        ValueError
            When ``statistic`` is not a statistic (the message lists them).

        Warns
        -----
        UserWarning
            When the plans cover other quarters, sites, chips or customers (plans of
            two datasets): a key one plan lacks counts 0 there, so its change is the
            other plan's whole value.
        """
        if not isinstance(other, Plan):
            raise TypeError(
                f"compare: other must be a Plan (cp.solve, read_run), not {type(other).__name__}"
            )
        return PlanCollection({"a": self, "b": other}).compare(
            statistic, groupby, first="a", second="b", names=(self.name, other.name)
        )


def _other_data(pa: Plan, pb: Plan) -> str:
    """Say how two plans' data differ in quarters, sites, chips or customers ("" if not)."""
    a, b, parts = pa.keys, pb.keys, []
    if a.periods and b.periods and tuple(a.periods) != tuple(b.periods):
        spans = [f"{p[0]}-{p[-1]}, {len(p)} quarters" for p in (a.periods, b.periods)]
        parts.append(f"cover other quarters ({spans[0]}; {spans[1]})")
    customers = [_column_set(p.tables.get("demand"), "customer") for p in (pa, pb)]
    for what, ta, tb in (
        ("sites", _column_set(a.sites, "site"), _column_set(b.sites, "site")),
        ("chips", _column_set(a.chips, "chip"), _column_set(b.chips, "chip")),
        ("customers", *customers),  # a renamed customer: same quarters, sites and chips
    ):
        if ta and tb and ta != tb:
            parts.append(f"have other {what}")
    return " and ".join(parts)


def _column_set(df: pd.DataFrame | None, col: str) -> set[str]:
    """Return the text values of ``df[col]`` (empty without the table or column)."""
    return set() if df is None or col not in df else set(df[col].astype(str))


def _drawable(statistics: Statistics) -> list[str]:
    """Return the statistics ``plot`` draws: all but calibration (record vs plan table)."""
    return [name for name in statistics.names() if name != "calibration"]


class PlanCollection(Mapping[str, Plan]):
    """Several named plans (scenarios, batch cases) with one statistics face.

    ``plans.statistics.<statistic>(groupby=...)`` computes the statistic of every plan
    and adds the ``scenario`` key: leave it out of ``groupby`` to sum over the plans.

    Parameters
    ----------
    plans : Mapping of str to Plan
        Scenario name -> plan, in display order.
    """

    def __init__(self, plans: Mapping[str, Plan]) -> None:
        self._plans = dict(plans)
        self.statistics = _CollectionStatistics(self._plans)
        first = next(iter(self._plans.values()), None)
        # every plan's quarters in order (another plan's were drawn at 'nan')
        periods = tuple(sorted({q for p in self._plans.values() for q in p.keys.periods}))
        names = _drawable(first.statistics) if first is not None else []
        self.plot = Plotter(self.statistics, names, periods)

    def __getitem__(self, name: str) -> Plan:
        return self._plans[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._plans)

    def __len__(self) -> int:
        return len(self._plans)

    def __repr__(self) -> str:
        return f"PlanCollection({list(self._plans)})"

    def compare(
        self,
        statistic: str,
        groupby: GroupBy = None,
        *,
        first: str,
        second: str,
        names: Sequence[str] = (),
    ) -> pd.DataFrame:
        """Return ``statistic`` of plans ``first`` and ``second`` side by side.

        See :meth:`Plan.compare`; ``names`` label the two plans' columns.
        """
        for name in (first, second):
            if name not in self._plans:
                raise KeyError(f"compare: no plan {name!r} in the collection ({', '.join(self)})")
        differ = _other_data(self._plans[first], self._plans[second])
        if differ:
            warnings.warn(
                f"compare: the plans {differ}, as plans of two datasets do; a key one plan "
                "lacks counts 0 there",
                stacklevel=3,
            )
        a = self._plans[first].statistics(statistic, groupby)
        b = self._plans[second].statistics(statistic, groupby)
        units = a.attrs.get("units", {})
        keys = [c for c in a.columns if c not in units]
        la, lb = (list(names) if len(set(names)) == 2 and all(names) else [first, second])[:2]
        if keys:
            merged = a.merge(b, on=keys, how="outer", suffixes=(f"_{la}", f"_{lb}"))
        else:  # totals (groupby=[]): one row each, side by side (a merge needs keys)
            merged = pd.concat([a.add_suffix(f"_{la}"), b.add_suffix(f"_{lb}")], axis=1)
        for v in units:
            for label in (la, lb):
                merged[f"{v}_{label}"] = merged[f"{v}_{label}"].fillna(0.0)
            merged[f"{v}_change"] = merged[f"{v}_{lb}"] - merged[f"{v}_{la}"]
        out = merged.sort_values(keys).reset_index(drop=True) if keys else merged
        out.attrs["statistic"] = statistic
        out.attrs["units"] = {f"{v}_{s}": u for v, u in units.items() for s in (la, lb, "change")}
        return out


class _CollectionStatistics:
    """The statistics of a collection: each plan's, with its ``scenario`` key."""

    def __init__(self, plans: Mapping[str, Plan]) -> None:
        self._plans = plans

    def __call__(self, name: str, groupby: GroupBy = None, where: Where = None) -> pd.DataFrame:
        wanted = [groupby] if isinstance(groupby, str) else groupby
        per_plan = None if wanted is None else [k for k in wanted if k != "scenario"]
        inner = {k: v for k, v in (where or {}).items() if k != "scenario"}
        frames = []
        for scenario, plan in self._plans.items():
            frame = plan.statistics(name, per_plan, inner or None)
            units = frame.attrs.get("units", {})
            frames.append(frame.assign(scenario=scenario))
        if not frames:
            raise ValueError("the collection holds no plan")
        out = pd.concat(frames, ignore_index=True)
        keys = [c for c in out.columns if c not in units and c != "scenario"]
        # a plan keeps keys of its own (utilisation's and shadow prices' unit): so does
        # the collection, which had added MW, wafers and m3 into one number
        keys = ["scenario", *keys] if wanted is None else [*wanted, *_new(keys, wanted)]
        if where and "scenario" in where:
            out = select_rows(out, {"scenario": where["scenario"]}, name)  # warns as a plan's
        if not units:  # a table (calibration): each plan's rows, with their scenario
            return out.reset_index(drop=True)
        out = _combine(out, keys, list(units))
        out.attrs["statistic"] = name
        out.attrs["units"] = dict(units)
        return out.reset_index(drop=True)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)

        def statistic(groupby: GroupBy = None, where: Where = None) -> pd.DataFrame:
            return self(name, groupby, where)

        statistic.__name__ = name
        return statistic


def _new(keys: Sequence[str], wanted: Sequence[str]) -> list[str]:
    """Return the ``keys`` not in ``wanted``, in their order."""
    return [k for k in keys if k not in wanted]


def _combine(rows: pd.DataFrame, keys: list[str], values: list[str]) -> pd.DataFrame:
    """Sum values over plans per key (largest price magnitude for prices; ratios recomputed)."""
    how = {v: "max" if v == "shadow_price_abs_max" else "sum" for v in values}
    if keys:
        out = rows.groupby(keys, as_index=False, sort=False, dropna=False).agg(how)
    else:
        out = pd.DataFrame([rows[values].agg(how)])
    if "utilisation" in values:
        cap = out["capacity"].astype(float)
        out["utilisation"] = (out["used"].astype(float) / cap.where(cap > 0)).fillna(0.0)
    return out[[*keys, *values]]


def _data_keys(
    data: Any, scenario: str, folder: Path | None = None, solved_hash: str = ""
) -> PlanKeys:
    """Key maps from ``data`` (a Dataset or a dataset folder) as the scenario was solved.

    The scenario folder's ``inputs.yaml`` (every override applied to the base data,
    a batch case's own included) is applied when present; otherwise the data's named
    scenario of that name, if any, and a warning when the data so made is not the data
    solved (``solved_hash``, the summary's ``dataset_hash``: a replan path's truth).
    """
    if data is None:
        return PlanKeys()
    ds = load_dataset(Path(data)) if isinstance(data, str | os.PathLike) else data
    record = folder / INPUTS_FILE if folder is not None else None
    if record is not None and record.is_file():
        if getattr(ds, "scenario", "base") != "base":  # applied already: check, not re-apply
            _warn_if_applied_elsewhere(ds, record)
            return PlanKeys.from_dataset(ds)
        return PlanKeys.from_dataset(_as_recorded(ds, scenario, record))
    if scenario in getattr(ds, "scenarios", {}) and getattr(ds, "scenario", "base") == "base":
        ds = apply_scenario(ds, scenario)
    if solved_hash and folder is not None and solved_hash != ds.hash:
        warnings.warn(
            f"{folder}: this plan records no inputs.yaml and was solved from data with "
            f"content hash {solved_hash[:12]}, not the data given ({ds.hash[:12]}): the "
            "statistics that read the data (unit capex, regions, families) are those of "
            "the data given.",
            UserWarning,
            stacklevel=4,
        )
    return PlanKeys.from_dataset(ds)


def _warn_if_applied_elsewhere(ds: Any, record: Path) -> None:
    """Warn when a dataset given with a scenario applied is not the data ``record`` solved."""
    given = f"the data given has scenario {ds.scenario!r} applied and tables with hash"
    hint = " Pass the data without a scenario (cp.load(folder)) to apply the recorded overrides."
    _warn_if_not_solved_from(ds, record, given, hint, stacklevel=6)


def _warn_if_not_solved_from(
    ds: Any, record: Path, given: str, hint: str = "", stacklevel: int = 5
) -> None:
    """Warn when ``ds``'s tables are not those ``record`` (an ``inputs.yaml``) was solved on."""
    want = recorded_hash(record)
    if want is not None and want != ds.tables_hash:
        warnings.warn(
            f"{record}: the plan was solved from data with content hash {want[:12]}; "
            f"{given} {ds.tables_hash[:12]}: the statistics that read the data (unit "
            f"capex, regions, families) are those of other data.{hint}",
            UserWarning,
            stacklevel=stacklevel,
        )


def _as_recorded(ds: Any, scenario: str, record: Path) -> Any:
    """Return ``ds`` with the overrides ``record`` (an ``inputs.yaml``) lists for ``scenario``.

    Warns, and returns ``ds`` as given, when the record cannot be applied; warns when
    the data so made is not the data the plan was solved from (the content hash in
    the record's header).
    """
    try:
        recorded = read_scenarios_file(record).get(scenario)
        solved = apply_overrides(ds, recorded.overrides if recorded else (), scenario=scenario)
    except DataValidationError as exc:
        warnings.warn(
            f"{record}: its overrides do not apply to the data given ({exc}); the "
            "statistics that read the data use it without them.",
            UserWarning,
            stacklevel=4,
        )
        return ds
    _warn_if_not_solved_from(solved, record, "the data given with these overrides has")
    return solved


def _plan_of(
    tables: Mapping[str, pd.DataFrame], name: str, data: Any, folder: Path | None = None
) -> Plan:
    summary = tables.get("summary")
    status, objective = "", None
    if summary is not None and len(summary):
        status = str(summary["status"].iloc[0])
        value = summary["objective_usd"].iloc[0]
        objective = None if pd.isna(value) else float(value)
    solved = ""
    if summary is not None and len(summary) and "dataset_hash" in summary:
        solved = str(summary["dataset_hash"].iloc[0] or "")
    keys = _data_keys(data, name, folder, solved)
    if not keys.periods and "costs" in tables and len(tables["costs"]):
        keys = PlanKeys(keys.sites, keys.chips, tuple(pd.unique(tables["costs"]["period"])))
    return Plan(tables, keys, name=name, status=status, objective_usd=objective)


def read_report(path: str | os.PathLike[str], data: Any = None) -> Plan:
    """Read one scenario of a Parquet report back as a :class:`Plan`.

    Parameters
    ----------
    path : path-like
        A scenario folder (``<run>/scenario=<name>``), or a run or batch folder that
        holds exactly one scenario.
    data : capacity.Dataset or path-like, optional
        The dataset the report was solved from: it names each site's region and each
        chip's family and vendor and gives the unit capex that splits capex by chip
        and site. A folder is loaded; the overrides the scenario folder's
        ``inputs.yaml`` records are applied (a batch case's own included; a warning
        when the data so made is not the data solved), else the data's scenario of
        that name. Without it those statistics raise ``ValueError``.

    Returns
    -------
    Plan

    Raises
    ------
    ReportError
        When ``path`` holds no report, or a run folder holds several scenarios (read
        those with :func:`read_run`).
    """
    path = Path(path)
    scenarios = sorted(p for p in path.glob("scenario=*") if p.is_dir())
    if scenarios:  # a run folder, even with run-level tables (alternatives_ranges.parquet)
        if len(scenarios) != 1:
            names = ", ".join(scenario_name_from_dir(p) for p in scenarios)
            raise ReportError(f"{path} holds {len(scenarios)} scenarios ({names}): use read_run")
        path = scenarios[0]
    name = scenario_name_from_dir(path) if path.name.startswith("scenario=") else path.name
    if path.name.startswith("scenario="):
        warn_if_unfinished(path, name)
        warn_if_run_unfinished(path.parent, [name])
    return _plan_of(read_tables(path), name, data, path)


def read_run(path: str | os.PathLike[str], data: Any = None) -> PlanCollection:
    """Read every scenario of a run or batch folder as a :class:`PlanCollection`.

    Parameters
    ----------
    path : path-like
        A run folder (``reports/<run_id>``) or a batch ``--out`` folder: its
        ``scenario=<name>`` sub-folders.
    data : capacity.Dataset or path-like, optional
        As for :func:`read_report` (one dataset for every scenario; each scenario's
        recorded overrides are applied to it).

    Returns
    -------
    PlanCollection
        Scenario name -> plan, in the folders' sorted order.

    Raises
    ------
    ReportError
        When the folder holds no scenario.
    """
    folders = sorted(p for p in Path(path).glob("scenario=*") if p.is_dir())
    if not folders:
        raise ReportError(f"no scenario=<name> folder with a report under {path}")
    plans = {}
    for folder in folders:
        name = scenario_name_from_dir(folder)
        warn_if_unfinished(folder, name)
        plans[name] = _plan_of(read_tables(folder), name, data, folder)
    warn_if_mixed_data(Path(path), list(plans))
    warn_if_run_unfinished(Path(path), list(plans))
    warn_if_done_missing(Path(path), list(plans))
    warn_if_not_recorded_data(Path(path), list(plans))
    return PlanCollection(plans)
