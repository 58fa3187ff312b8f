"""Calibration: the solved plan held against the public record.

Every metric the plan can be compared with is defined here, once, as a formula over
the result tables (:mod:`optimizer.plan.results`) and the dataset. ``data/public_record.csv``
lists publicly reported figures (metric, scope, period, value, band, source); the
``calibration`` table puts each beside the plan's value of the same metric.

Scopes
------
A scope is ``fleet`` (everything) or filters joined by ``/``, each ``name:value``
with name one of ``chip``, ``family`` (``chips.family``), ``vendor``, ``site``,
``customer``, ``workload``, ``resource`` and ``versus`` (the NVIDIA chips a cost ratio is
taken against); a value may list alternatives joined by
``|`` (``site:new_carlisle|pennsylvania|mississippi``: Project Rainier's campuses). A
metric accepts the filters its table has (e.g. ``customer:anthropic/chip:trainium2``
for chips serving a customer). Annual metrics (suffix ``_year``) cover the four
quarters ending at the record's period, ``_two_years`` the eight.

Metrics (plan value at period p for the rows matching the scope)
----------------------------------------------------------------
* ``chips_in_service`` [chips] = sum fleet_chips of the fleet table at p
* ``chips_serving`` [chips] = sum chips of the assignment table at p
* ``chips_installed_two_years`` [chips] = sum installed_chips (fleet table) over the
  eight quarters ending at p
* ``assigned_share`` [share] = sum assigned_chips / sum fleet_chips (fleet table) at p
  (1 = every chip in service is sold: "fully subscribed")
* ``fleet_h100e`` [H100e] = sum fleet_chips x chips.training_h100e at p
* ``site_it_capacity_mw`` [MW] = sum it_capacity_mw of the build_out table at p
* ``it_mw_in_use`` [MW] = sum it_mw (nameplate all-in IT MW of installed chips) at p
* ``it_mw_serving`` [MW] = sum chips x chips.it_kw_per_chip / 1000 of the assignment
  table at p (the all-in IT MW serving the scope, e.g. a customer on a family)
* ``it_mw_added_year`` [MW] = sum build_mw over the four quarters ending at p
* ``fleet_pue_year`` [ratio] = sum facility_mwh / sum it_mwh over the four quarters
* ``fleet_wue_year`` [L/kWh] = sum water_m3 / sum it_mwh over the four quarters
  (m3 per MWh = L per kWh)
* ``capex_cash_year_usd`` [USD] = sum installed_chips x chips.capex_usd_per_chip +
  sum build_mw x sites.build_capex_usd_per_mw over the four quarters (undiscounted
  cash when spent, chips at full price when installed)
* ``served_share_on_family`` [share] = served H100e of the customer on chips of the
  scope's family / all served H100e of the customer at p
* ``supply_used_share_year`` [share] = sum used / sum capacity of the scope's resources
  (supply_utilisation table) over the four quarters ending at p (1 = sold out to the
  planner; a year, because chips can wait in inventory, so a single quarter's share
  is one of many equal-cost timings)
* ``delivered_cost_ratio_vs_nvidia`` [ratio] = delivered cost per H100e-hour of the
  scope's chips / that of the NVIDIA-vendor chips at p (unit_economics table: sum
  cost_usd / sum served_h100e_hours, chip rent and energy); a ``versus`` filter names
  the NVIDIA chips of the comparison (``chip:trainium2/versus:h200``: against the H200
  only, as a claim made against H200 instances), all NVIDIA chips without it; the
  record rows holding it are vendor claims (price-performance), not measurements
* ``cowos_wafers_per_month`` [wafers/month] = capacity of resource ``cowos_wafers``
  at p / 3 (the planner's allocation; an input check rather than a decision)

Comparison: ``plan_value = metric / plan_share`` (the share of the reported figure
the planner covers, 1 by default); ``ratio = plan_value / record_value`` (NaN when the
record is 0); ``inside_band = low <= plan_value <= high`` with a relative tolerance
of 1e-6. A row is scored (``matchable``) when it is of kind ``plan``, the record marks
it matchable and the metric could be computed; otherwise ``reason`` says why (an
``input_check`` row restates an input, such as a first period or a supply capacity,
and is shown but never scored). ``tests`` carries the record's statement of what in
the plan the row tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from capacity.schema import PERIOD_RE, period_index, period_label
from capacity.tables_record import ScopeError, parse_scope
from optimizer.lp.frames import indexed

__all__ = [
    "CALIBRATION_COLUMNS",
    "METRICS",
    "Metric",
    "ScopeError",
    "calibration_table",
    "empty_calibration",
    "parse_scope",
    "worst_rows",
]

CALIBRATION_COLUMNS: tuple[str, ...] = (
    "metric",
    "scope",
    "period",
    "record_value",
    "record_low",
    "record_high",
    "plan_value",
    "unit",
    "ratio",
    "inside_band",
    "matchable",
    "reason",
    "source",
    "kind",
    "tests",
)
"""Columns of the ``calibration`` result table, in order."""

_TOL = 1e-6


Tables = Mapping[str, pd.DataFrame]
Compute = Callable[[Tables, Any, dict[str, str], str], float]


@dataclass(frozen=True)
class Metric:
    """One calibration metric.

    Parameters
    ----------
    name : str
        Metric name as written in ``public_record.metric``.
    unit : str
        Unit of the value (the record's ``unit`` must be the same).
    formula : str
        The formula in words, over the result tables.
    filters : tuple of str
        Scope filters the metric accepts.
    compute : callable
        ``compute(tables, dataset, filters, period) -> float``.
    """

    name: str
    unit: str
    formula: str
    filters: tuple[str, ...]
    compute: Compute


class _PeriodRows(Mapping[str, pd.DataFrame]):
    """The result tables, each table's rows of a set of periods picked once.

    :func:`calibration_table` holds 20-30 records against a few tables and periods;
    picking a big table's rows (every column) per record was most of its time.
    """

    def __init__(self, tables: Tables) -> None:
        self._tables = tables
        self._rows: dict[tuple[str, tuple[str, ...]], pd.DataFrame] = {}

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self._tables[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tables)

    def __len__(self) -> int:
        return len(self._tables)

    def at(self, name: str, periods: tuple[str, ...]) -> pd.DataFrame:
        """Rows of table ``name`` whose period is one of ``periods`` (kept for reuse)."""
        key = (name, periods)
        if key not in self._rows:
            self._rows[key] = _period_rows(self._tables[name], periods)
        return self._rows[key]


def _period_rows(df: pd.DataFrame, periods: tuple[str, ...]) -> pd.DataFrame:
    return df[df["period"].isin(periods)]


def _at(tables: Tables, name: str, periods: Sequence[str]) -> pd.DataFrame:
    """Rows of result table ``name`` in ``periods`` (picked once per calibration table)."""
    if isinstance(tables, _PeriodRows):
        return tables.at(name, tuple(periods))
    return _period_rows(tables[name], tuple(periods))


def _chip_attr(ds: Any, chips: pd.Series, column: str) -> pd.Series:
    table = indexed(ds.table("chips"), "chip")[column]
    return pd.Series(table.reindex(chips.astype(str)).to_numpy(), index=chips.index)


class _Rows:
    """Rows of a table picked by a mask, each column taken only when read.

    ``rows[column]`` is ``df[mask][column]`` (the same values, index and dtype), without
    taking every column of a wide table for the one or two a metric sums.
    """

    def __init__(self, df: pd.DataFrame, mask: pd.Series) -> None:
        self._df, self._mask = df, mask

    def __getitem__(self, column: str) -> pd.Series:
        out: pd.Series = self._df[column][self._mask]
        return out


def _select(df: pd.DataFrame, ds: Any, filters: Mapping[str, str]) -> _Rows:
    mask = pd.Series(True, index=df.index)
    for name, value in filters.items():
        if name in ("family", "vendor"):
            col = _chip_attr(ds, df["chip"], name).astype(str)
        else:
            col = df[name].astype(str)
        mask &= col.isin(value.split("|"))
    return _Rows(df, mask)


def _year(period: str, quarters: int = 4) -> list[str]:
    end = period_index(period)
    return [period_label(i) for i in range(end - quarters + 1, end + 1)]


def _installed_two_years(tables: Tables, ds: Any, filters: dict[str, str], period: str) -> float:
    df = _select(_at(tables, "fleet", _year(period, 8)), ds, filters)
    return float(df["installed_chips"].sum())


def _assigned_share(tables: Tables, ds: Any, filters: dict[str, str], period: str) -> float:
    df = _select(_at(tables, "fleet", [period]), ds, filters)
    total = float(df["fleet_chips"].sum())
    return float(df["assigned_chips"].sum()) / total if total > 0 else float("nan")


def _it_mw_serving(tables: Tables, ds: Any, filters: dict[str, str], period: str) -> float:
    df = _select(_at(tables, "assignment", [period]), ds, filters)
    return float((df["chips"] * _chip_attr(ds, df["chip"], "it_kw_per_chip")).sum()) / 1000.0


def _supply_used_share(tables: Tables, ds: Any, filters: dict[str, str], period: str) -> float:
    if "resource" not in filters:
        raise ScopeError("supply_used_share_year needs a resource:... filter")
    df = _select(_at(tables, "supply_utilisation", _year(period)), ds, filters)
    cap = float(df["capacity"].sum())
    return float(df["used"].sum()) / cap if cap > 0 else float("nan")


def _sum_at(table: str, column: str) -> Compute:
    def compute(tables: Tables, ds: Any, filters: dict[str, str], period: str) -> float:
        df = _select(_at(tables, table, [period]), ds, filters)
        return float(df[column].sum())

    return compute


def _fleet_h100e(tables: Tables, ds: Any, filters: dict[str, str], period: str) -> float:
    df = _select(_at(tables, "fleet", [period]), ds, filters)
    return float((df["fleet_chips"] * _chip_attr(ds, df["chip"], "training_h100e")).sum())


def _it_mw_added_year(tables: Tables, ds: Any, filters: dict[str, str], period: str) -> float:
    df = _select(_at(tables, "build_out", _year(period)), ds, filters)
    return float(df["build_mw"].sum())


def _energy_ratio(column: str) -> Compute:
    def compute(tables: Tables, ds: Any, filters: dict[str, str], period: str) -> float:
        df = _select(_at(tables, "energy", _year(period)), ds, filters)
        it = float(df["it_mwh"].sum())
        return float(df[column].sum()) / it if it > 0 else float("nan")

    return compute


def _capex_cash_year(tables: Tables, ds: Any, filters: dict[str, str], period: str) -> float:
    year = _year(period)
    fl = _select(_at(tables, "fleet", year), ds, filters)
    chips = float((fl["installed_chips"] * _chip_attr(ds, fl["chip"], "capex_usd_per_chip")).sum())
    bo = _select(
        _at(tables, "build_out", year), ds, {k: v for k, v in filters.items() if k == "site"}
    )
    capex = indexed(ds.table("sites"), "site")["build_capex_usd_per_mw"]
    build = float((bo["build_mw"] * capex.reindex(bo["site"]).to_numpy()).sum())
    return chips + build


def _served_share_on_family(tables: Tables, ds: Any, filters: dict[str, str], period: str) -> float:
    if "family" not in filters:
        raise ScopeError("served_share_on_family needs a family:... filter")
    a = _at(tables, "assignment", [period])
    rest = {k: v for k, v in filters.items() if k != "family"}
    total = float(_select(a, ds, rest)["h100e"].sum())
    part = float(_select(a, ds, filters)["h100e"].sum())
    return part / total if total > 0 else float("nan")


def _cost_ratio_vs_nvidia(tables: Tables, ds: Any, filters: dict[str, str], period: str) -> float:
    ue = tables.get("unit_economics")
    if ue is None or not len(ue):
        return float("nan")
    ue = ue[ue["period"] == period]
    own = {k: v for k, v in filters.items() if k != "versus"}
    nvidia = {k: v for k, v in filters.items() if k == "workload"} | {"vendor": "nvidia"}
    if "versus" in filters:
        named = filters["versus"].split("|")
        vendor = indexed(ds.table("chips"), "chip")["vendor"].reindex(named)
        other = [c for c in named if vendor.get(c) != "nvidia"]
        if other:
            raise ScopeError(f"versus names chips that are not NVIDIA chips: {', '.join(other)}")
        nvidia["chip"] = filters["versus"]

    def unit_cost(rows: _Rows) -> float:
        hours = float(rows["served_h100e_hours"].sum())
        return float(rows["cost_usd"].sum()) / hours if hours > 0 else float("nan")

    return unit_cost(_select(ue, ds, own)) / unit_cost(_select(ue, ds, nvidia))


def _cowos_per_month(tables: Tables, ds: Any, filters: dict[str, str], period: str) -> float:
    su = tables["supply_utilisation"]
    row = su[(su["resource"] == "cowos_wafers") & (su["period"] == period)]
    return float(row["capacity"].sum()) / 3.0


_FLEET = ("chip", "family", "vendor", "site")
_ASSIGN = ("chip", "family", "vendor", "site", "customer", "workload")

METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric(
            "chips_in_service",
            "chips",
            "chips in service = sum of fleet_chips (fleet table) at the period",
            _FLEET,
            _sum_at("fleet", "fleet_chips"),
        ),
        Metric(
            "chips_serving",
            "chips",
            "chips serving = sum of assigned chips (assignment table) at the period",
            _ASSIGN,
            _sum_at("assignment", "chips"),
        ),
        Metric(
            "chips_installed_two_years",
            "chips",
            "chips installed = sum of installed_chips (fleet table) over the eight "
            "quarters ending at the period",
            _FLEET,
            _installed_two_years,
        ),
        Metric(
            "assigned_share",
            "share",
            "assigned share = sum assigned_chips / sum fleet_chips (fleet table) at the period",
            _FLEET,
            _assigned_share,
        ),
        Metric(
            "it_mw_serving",
            "MW",
            "IT MW serving = sum of assigned chips x chips.it_kw_per_chip / 1000 "
            "(assignment table) at the period",
            _ASSIGN,
            _it_mw_serving,
        ),
        Metric(
            "supply_used_share_year",
            "share",
            "supply used = sum used / sum capacity of the scope's resources "
            "(supply_utilisation table) over the four quarters ending at the period",
            ("resource",),
            _supply_used_share,
        ),
        Metric(
            "fleet_h100e",
            "H100e",
            "fleet H100e = sum of fleet_chips x chips.training_h100e at the period",
            _FLEET,
            _fleet_h100e,
        ),
        Metric(
            "site_it_capacity_mw",
            "MW",
            "site IT capacity = sum of it_capacity_mw (build_out table) at the period",
            ("site",),
            _sum_at("build_out", "it_capacity_mw"),
        ),
        Metric(
            "it_mw_in_use",
            "MW",
            "IT MW in use = sum of it_mw (all-in IT MW of installed chips, fleet table)",
            _FLEET,
            _sum_at("fleet", "it_mw"),
        ),
        Metric(
            "it_mw_added_year",
            "MW",
            "IT MW added = sum of build_mw over the four quarters ending at the period",
            ("site",),
            _it_mw_added_year,
        ),
        Metric(
            "fleet_pue_year",
            "ratio",
            "PUE = sum facility_mwh / sum it_mwh (energy table) over the four quarters",
            ("site",),
            _energy_ratio("facility_mwh"),
        ),
        Metric(
            "fleet_wue_year",
            "L/kWh",
            "WUE = sum water_m3 / sum it_mwh (energy table) over the four quarters",
            ("site",),
            _energy_ratio("water_m3"),
        ),
        Metric(
            "capex_cash_year_usd",
            "USD",
            "cash capex = sum installed_chips x capex_usd_per_chip + sum build_mw x "
            "build_capex_usd_per_mw over the four quarters (undiscounted)",
            _FLEET,
            _capex_cash_year,
        ),
        Metric(
            "served_share_on_family",
            "share",
            "share on family = served H100e on the family's chips / all served H100e of "
            "the scope's customer at the period",
            _ASSIGN,
            _served_share_on_family,
        ),
        Metric(
            "delivered_cost_ratio_vs_nvidia",
            "ratio",
            "delivered cost per H100e-hour (chip rent + energy, unit_economics) of the "
            "scope's chips / that of the NVIDIA chips at the period (those named by "
            "versus:..., or all)",
            ("chip", "family", "vendor", "workload", "versus"),
            _cost_ratio_vs_nvidia,
        ),
        Metric(
            "cowos_wafers_per_month",
            "wafers/month",
            "CoWoS per month = capacity of cowos_wafers (supply_utilisation) at the period / 3",
            (),
            _cowos_per_month,
        ),
    )
}
"""Every calibration metric by name: the one place the formulas live."""


def empty_calibration() -> pd.DataFrame:
    """Return the calibration table with its columns and no rows (a new frame each call)."""
    return _EMPTY.copy()


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame(index=range(len(df)))
    for c in CALIBRATION_COLUMNS:
        v = df[c].to_numpy() if c in df else np.full(len(df), np.nan)
        if c in ("inside_band", "matchable"):
            out[c] = np.asarray(v, dtype=bool)
        elif c in ("record_value", "record_low", "record_high", "plan_value", "ratio"):
            out[c] = np.asarray(v, dtype=np.float64)
        else:
            out[c] = pd.Series(v, dtype=object).astype(str).to_numpy()
    return out


def _plan_value(tables: Tables, ds: Any, rec: Any, horizon: tuple[str, ...]) -> tuple[float, str]:
    """Return (plan value before the share, reason it could not be computed or "")."""
    metric = METRICS.get(str(rec.metric))
    if metric is None:
        return float("nan"), f"unknown metric {rec.metric!r}; metrics are {', '.join(METRICS)}"
    if str(rec.unit) != metric.unit:
        return float("nan"), f"unit {rec.unit!r} differs from the metric's unit {metric.unit!r}"
    period = str(rec.period)
    if not PERIOD_RE.match(period) or period not in horizon:
        return float("nan"), f"period {period} is outside the plan's horizon"
    if metric.name.endswith("_year") and _year(period)[0] not in horizon:
        return float("nan"), f"the year ending {period} starts before the plan's horizon"
    try:
        filters = parse_scope(str(rec.scope))
        bad = [k for k in filters if k not in metric.filters]
        if bad:
            raise ScopeError(
                f"metric {metric.name} takes no {', '.join(bad)} filter "
                f"(filters: {', '.join(metric.filters) or 'none'})"
            )
        return metric.compute(tables, ds, filters, period), ""
    except ScopeError as exc:
        return float("nan"), str(exc)


def calibration_table(tables: Tables, ds: Any) -> pd.DataFrame:
    """Hold a solved plan against every row of the dataset's public record.

    Parameters
    ----------
    tables : Mapping[str, DataFrame]
        Result tables of one scenario (:func:`optimizer.plan.results.make_tables`).
    ds : Dataset
        The solved dataset (scenario applied); its ``public_record`` table lists
        the figures.

    Returns
    -------
    pandas.DataFrame
        One row per public-record row with the columns :data:`CALIBRATION_COLUMNS`:
        ``plan_value`` is the metric divided by ``plan_share``; ``ratio`` is
        plan / record (NaN for a zero record); ``inside_band`` is
        ``low <= plan_value <= high`` (relative tolerance 1e-6); ``matchable`` is
        False when the record marks the row so, the row is an input check or the
        metric cannot be computed, and ``reason`` then says why; ``kind`` and
        ``tests`` repeat the record's. Empty when the dataset has no public record.
    """
    if "public_record" not in ds.tables:
        return empty_calibration()
    rec = ds.table("public_record")
    if rec.empty:
        return empty_calibration()
    horizon = tuple(ds.periods)
    picked = _PeriodRows(tables)
    rows = []
    for r in rec.itertuples(index=False):
        raw, why = _plan_value(picked, ds, r, horizon)
        plan = raw / float(r.plan_share)
        value, lo, hi = float(r.value), float(r.low), float(r.high)
        tol = _TOL * max(abs(lo), abs(hi), 1.0)
        inside = bool(np.isfinite(plan) and lo - tol <= plan <= hi + tol)
        kind = str(getattr(r, "kind", "plan") or "plan")
        tests = str(getattr(r, "tests", "") or "")
        marked = str(r.matchable) != "no"
        reason = str(r.reason).strip() if not marked else why
        if marked and why:
            reason = why
        elif marked and kind != "plan":
            reason = f"input check, not scored: {tests}".strip()
        rows.append(
            {
                "metric": str(r.metric),
                "scope": str(r.scope),
                "period": str(r.period),
                "record_value": value,
                "record_low": lo,
                "record_high": hi,
                "plan_value": plan,
                "unit": str(r.unit),
                "ratio": plan / value if value != 0 and np.isfinite(plan) else float("nan"),
                "inside_band": inside,
                "matchable": marked and not why and kind == "plan",
                "reason": reason,
                "source": str(r.source),
                "kind": kind,
                "tests": tests,
            }
        )
    return _typed(pd.DataFrame(rows))


def worst_rows(cal: pd.DataFrame, top: int = 3) -> pd.DataFrame:
    """Return the matchable rows furthest outside their band, worst first.

    Distance is the relative gap to the nearest band edge,
    ``max(low - plan, plan - high) / max(|record|, 1e-9)``; rows inside their band
    come last (distance <= 0).
    """
    m = cal[cal["matchable"]].copy()
    if m.empty:
        return m
    lo, hi, plan = m["record_low"], m["record_high"], m["plan_value"]
    gap = np.maximum(lo - plan, plan - hi) / np.maximum(m["record_value"].abs(), 1e-9)
    m["gap"] = gap.fillna(np.inf)
    return m.sort_values("gap", ascending=False, kind="stable").head(top).drop(columns="gap")


#: The empty calibration table, made once (:func:`empty_calibration` hands out copies).
_EMPTY = _typed(pd.DataFrame(columns=list(CALIBRATION_COLUMNS)))
