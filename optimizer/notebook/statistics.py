"""Tidy, unit-labelled statistics of a plan, each summed from its result tables.

Every statistic is one method of :class:`Statistics` (``plan.statistics``): it takes the
rows of the result tables it summarises, adds the derived keys
(:func:`optimizer.notebook.keys.with_keys`) and groups by ``groupby``. Nothing is
re-solved or recomputed from the model: a statistic is a sum (or, for shadow prices, the
largest magnitude) over the rows of a report table, so grouping by every key of that
table gives the table back.

Flows and stocks
----------------
Capex, cash, costs, opex, energy, water and carbon are *flows*: grouping by ``year``
sums the year's quarters. Fleet, H100e in service, demand and utilisation are
*stocks* (what stands in a quarter): grouping by ``year`` takes the year's last
quarter of the horizon, as the public record counts chips at year end. A stock grouped
by neither ``period`` nor ``year`` sums over the quarters (H100e-quarters).

Returned frames
---------------
One row per group: the ``groupby`` columns (in the order asked), then the value
columns, whose suffix is their unit (``_usd``, ``_mwh``, ``_h100e`` ...).
``frame.attrs["statistic"]`` names the statistic and ``frame.attrs["units"]`` maps
each value column to its unit. ``groupby=[]`` gives one row, the total.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from optimizer.components.power_tables import upgrade_requests
from optimizer.notebook.keys import NONE_LABEL, PlanKeys, derivable_keys, select_rows, with_keys

__all__ = ["STATISTICS", "StatSpec", "Statistics", "statistic_frame"]

GroupBy = str | Sequence[str] | None
Where = Mapping[str, str | int | Sequence[str | int]] | None


@dataclass(frozen=True)
class StatSpec:
    """What one statistic is: its value columns with units, default keys, kind.

    Attributes
    ----------
    name : str
        The method name (``capex``, ``energy`` ...).
    units : Mapping[str, str]
        Value column -> unit, in display order (the first is the one drawn).
    default : tuple of str
        Keys grouped by when ``groupby`` is None.
    stock : bool
        A stock (year = the year's last quarter) or a flow (year = sum of quarters).
    always : tuple of str
        Keys always kept (the ``unit`` of a utilisation: MW and wafers never add).
    meaning : str
        One line: what the value is and which table it comes from.
    """

    name: str
    units: Mapping[str, str]
    default: tuple[str, ...]
    stock: bool
    always: tuple[str, ...] = ()
    meaning: str = ""


def _table(tables: Mapping[str, pd.DataFrame], name: str) -> pd.DataFrame:
    # a report's table its folder lacks is an error (ReportTables.require), not empty
    require = getattr(tables, "require", tables.get)
    df = require(name)
    if df is None:
        return pd.DataFrame()
    return df.drop(columns=["scenario"], errors="ignore")


def _capex_rows(tables: Mapping[str, pd.DataFrame], keys: PlanKeys) -> pd.DataFrame:
    """Cash capex rows: chips by chip and site, buildings, retrofits, upgrades by site.

    Chips at ``capex_usd_per_chip`` when installed (``fleet.installed_chips``),
    buildings at ``build_capex_usd_per_mw`` when decided (``build_out.build_mw``),
    retrofits at ``retrofit_capex_usd_per_mw`` (``build_out.retrofit_mw``) and grid
    upgrades at their ``capex_usd_per_mw`` when requested (``power_decisions`` and the MW
    taken as ``flexible_interconnection``), as the
    costs table's ``cash_usd`` counts them; any other capex term comes from the costs
    table by period only.
    """
    costs = _table(tables, "costs")
    fleet, build = _table(tables, "fleet"), _table(tables, "build_out")
    split = {"chip_capex", "build_capex", "retrofit_capex", "grid_upgrade"}
    if (len(fleet) or len(build)) and not keys.known:
        raise ValueError(
            "statistics.capex splits capex by chip and site, which needs the dataset's unit "
            "capex (chips.capex_usd_per_chip, sites.build_capex_usd_per_mw): read the report "
            "with read_report(path, data=DATA_DIR) or read_run(path, data=DATA_DIR); "
            "statistics.cash(groupby=['period', 'cash_kind']) gives capex by quarter without it"
        )
    parts = []
    if len(fleet):
        price = keys.chip_values("capex_usd_per_chip", fleet["chip"])
        parts.append(
            fleet[["chip", "site", "period"]].assign(
                term="chip_capex", capex_usd=fleet["installed_chips"].to_numpy() * price
            )
        )
    for term, column in (("build_capex", "build_mw"), ("retrofit_capex", "retrofit_mw")):
        if len(build) and column in build.columns:
            per_mw = np.nan_to_num(keys.site_values(f"{term}_usd_per_mw", build["site"]))
            parts.append(
                build[["site", "period"]].assign(
                    chip=NONE_LABEL, term=term, capex_usd=build[column].to_numpy() * per_mw
                )
            )
    parts.append(
        _upgrade_rows(
            upgrade_requests(
                _table(tables, "power_decisions"), _table(tables, "flexible_interconnection")
            )
        )
    )
    columns = ["term", "site", "chip", "period", "capex_usd"]
    rows = pd.concat([p[columns] for p in parts if len(p)] or [pd.DataFrame(columns=columns)])
    if len(costs):
        # other capex terms by period; a (period, term) of the costs table without a
        # row above gets a zero row, so every pair of the costs table is present
        capex = costs[costs["cash_kind"] == "capex"]
        seen = pd.MultiIndex.from_frame(rows[["period", "term"]].astype(str))
        pairs = pd.MultiIndex.from_frame(capex[["period", "term"]].astype(str))
        rest = capex[~capex["term"].isin(split) | ~pairs.isin(seen)]
        value = np.where(rest["term"].isin(split), 0.0, rest["cash_usd"].to_numpy(dtype=float))
        rest = rest[["period", "term"]].assign(site=NONE_LABEL, chip=NONE_LABEL, capex_usd=value)
        rows = pd.concat([rows, rest[columns]])
    return rows.reset_index(drop=True)


def _upgrade_rows(up: pd.DataFrame) -> pd.DataFrame:
    """Grid upgrade requests in cash: MW x USD/MW in the period requested, by site.

    ``up`` is :func:`optimizer.components.power_tables.upgrade_requests` (normal and
    flexible requests).
    """
    return pd.DataFrame(
        {
            "term": "grid_upgrade",
            "site": up["site"].to_numpy(),
            "chip": NONE_LABEL,
            "period": up["decision_period"].to_numpy(),
            "capex_usd": up["mw"].to_numpy(dtype=float)
            * up["capex_usd_per_mw"].to_numpy(dtype=float),
        }
    )


def _cost_rows(
    tables: Mapping[str, pd.DataFrame], column: str, out: str, kind: str | None = None
) -> pd.DataFrame:
    costs = _table(tables, "costs")
    if len(costs) == 0:
        return pd.DataFrame(columns=["period", "term", "cash_kind", out])
    if kind is not None:
        costs = costs[costs["cash_kind"] == kind]
    return costs[["period", "term", "cash_kind"]].assign(**{out: costs[column].to_numpy()})


def _energy_rows(tables: Mapping[str, pd.DataFrame], column: str) -> pd.DataFrame:
    p = _table(tables, "power_sources")
    if len(p) == 0:
        return pd.DataFrame(columns=["site", "period", "source", column])
    return p[["site", "period", "source", column]]


def _utilisation_rows(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Site limits (power, liquid, grid, water) and supply resources in one frame."""
    site = _table(tables, "site_utilisation")
    supply = _table(tables, "supply_utilisation")
    parts = []
    if len(site):
        parts.append(site[["site", "period", "limit", "unit", "used", "capacity"]])
    if len(supply):
        parts.append(
            supply[["resource", "period", "used", "capacity"]]
            .rename(columns={"resource": "limit"})
            .assign(site=NONE_LABEL, unit=supply["resource"].astype(str))
        )
    columns = ["limit", "site", "period", "unit", "used", "capacity"]
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat([p[columns] for p in parts], ignore_index=True)


def _columns(df: pd.DataFrame, names: Sequence[str]) -> pd.DataFrame:
    if len(df) == 0:
        return pd.DataFrame(columns=list(names))
    return df[list(names)]


ROWS: dict[str, Callable[[Mapping[str, pd.DataFrame], PlanKeys], pd.DataFrame]] = {
    "capex": _capex_rows,
    "cash": lambda t, k: _cost_rows(t, "cash_usd", "cash_usd"),
    "costs": lambda t, k: _cost_rows(t, "cost_usd", "cost_usd"),
    "opex": lambda t, k: _cost_rows(t, "cash_usd", "opex_usd", kind="opex"),
    "energy": lambda t, k: _energy_rows(t, "energy_mwh"),
    "carbon": lambda t, k: _energy_rows(t, "carbon_t"),
    "water": lambda t, k: _columns(_table(t, "energy"), ["site", "period", "water_m3"]),
    "fleet": lambda t, k: _columns(
        _table(t, "fleet"),
        ["chip", "site", "period", "fleet_chips", "it_mw"],
    ),
    "h100e": lambda t, k: _columns(
        _table(t, "assignment").rename(columns={"chips": "chips_serving"}),
        ["chip", "site", "customer", "workload", "period", "h100e", "chips_serving"],
    ),
    "demand": lambda t, k: _columns(
        _table(t, "demand"),
        ["customer", "workload", "period", "demand_h100e", "served_h100e", "unmet_h100e"],
    ),
    "utilisation": lambda t, k: _utilisation_rows(t),
    "revenue": lambda t, k: _columns(
        _table(t, "customer_revenue"),
        [
            "customer",
            "workload",
            "period",
            "revenue_usd",
            "undiscounted_revenue_usd",
            "unserved_revenue_usd",
        ],
    ),
}
"""Statistic -> the function giving its rows (before grouping) from the result tables."""


STATISTICS: dict[str, StatSpec] = {
    s.name: s
    for s in (
        StatSpec(
            "capex",
            {"capex_usd": "USD"},
            ("period", "term"),
            stock=False,
            meaning="capital spent (cash, undiscounted) when chips are installed, "
            "buildings decided, retrofits done (fleet, build_out, costs)",
        ),
        StatSpec(
            "cash",
            {"cash_usd": "USD"},
            ("period", "cash_kind"),
            stock=False,
            meaning="money spent, undiscounted, per cost term (costs.cash_usd)",
        ),
        StatSpec(
            "costs",
            {"cost_usd": "USD"},
            ("period", "term"),
            stock=False,
            meaning="discounted cost as in the objective, per term (costs.cost_usd)",
        ),
        StatSpec(
            "opex",
            {"opex_usd": "USD"},
            ("period", "term"),
            stock=False,
            meaning="operating cash (energy, on-site power, carbon), undiscounted (costs)",
        ),
        StatSpec(
            "energy",
            {"energy_mwh": "MWh"},
            ("period", "source"),
            stock=False,
            meaning="facility energy by power source (power_sources.energy_mwh)",
        ),
        StatSpec(
            "carbon",
            {"carbon_t": "t CO2"},
            ("period", "source"),
            stock=False,
            meaning="CO2 emitted by power source (power_sources.carbon_t)",
        ),
        StatSpec(
            "water",
            {"water_m3": "m3"},
            ("period", "site"),
            stock=False,
            meaning="cooling water used (energy.water_m3)",
        ),
        StatSpec(
            "fleet",
            {"fleet_chips": "chips", "it_mw": "MW"},
            ("period", "chip"),
            stock=True,
            meaning="chips in service and their nameplate IT MW (fleet)",
        ),
        StatSpec(
            "h100e",
            {"h100e": "H100e", "chips_serving": "chips"},
            ("period", "chip"),
            stock=True,
            meaning="H100e in service for customers, after derate (assignment)",
        ),
        StatSpec(
            "demand",
            {"served_h100e": "H100e", "unmet_h100e": "H100e", "demand_h100e": "H100e"},
            ("period", "customer"),
            stock=True,
            meaning="demand served and unmet (demand)",
        ),
        StatSpec(
            "utilisation",
            {"utilisation": "share", "used": "unit", "capacity": "unit"},
            ("period", "limit"),
            stock=True,
            always=("unit",),
            meaning="use of every site and supply limit: used / capacity "
            "(site_utilisation, supply_utilisation)",
        ),
        StatSpec(
            "revenue",
            {
                "revenue_usd": "USD",
                "undiscounted_revenue_usd": "USD",
                "unserved_revenue_usd": "USD",
            },
            ("period", "customer"),
            stock=False,
            meaning="what served demand earns at the customers' prices, discounted and "
            "not, and what unserved demand would have earned (customer_revenue)",
        ),
    )
}
"""Every statistic summed from the result tables, by method name."""


def _keys_of(groupby: GroupBy, spec: StatSpec) -> list[str]:
    if groupby is None:
        wanted = list(spec.default)
    elif isinstance(groupby, str):
        wanted = [groupby]
    elif not isinstance(groupby, Sequence):  # 3 failed as "'int' object is not iterable"
        raise TypeError(f"groupby: give a key, a list of keys or None, not {groupby!r}")
    else:
        wanted = list(dict.fromkeys(groupby))  # a key named twice is one column
    return wanted + [k for k in spec.always if k not in wanted]


def _check_keys(rows: pd.DataFrame, wanted: Sequence[str], spec: StatSpec, verb: str) -> None:
    """Raise naming the keys the rows cannot be grouped (or selected) by, and theirs."""
    values = set(spec.units)
    missing = [k for k in wanted if k not in rows.columns or k in values]
    if missing:
        own = [c for c in rows.columns if c not in values]
        known = sorted({*own, *derivable_keys(own)})
        raise ValueError(
            f"statistics.{spec.name} cannot {verb} {missing}: its keys are {', '.join(known)}"
        )


def statistic_frame(
    name: str,
    tables: Mapping[str, pd.DataFrame],
    keys: PlanKeys,
    groupby: GroupBy = None,
    where: Where = None,
) -> pd.DataFrame:
    """Return statistic ``name`` of a plan's result tables, grouped by ``groupby``.

    Parameters
    ----------
    name : str
        A key of :data:`STATISTICS`.
    tables : Mapping of str to DataFrame
        The plan's result tables (a ``scenario`` column, as in a run read back, is
        dropped).
    keys : PlanKeys
        The dataset's key maps (region, family, vendor, unit capex).
    groupby : str or sequence of str, optional
        Keys among ``site, region, chip, family, vendor, customer, workload, period,
        year`` and the statistic's own (``term``, ``source``, ``limit`` ...); None:
        the statistic's default; ``[]``: the total.
    where : mapping of str to value or list of values, optional
        Keep only rows whose key has one of these values before grouping
        (``{"site": "ohio"}``, ``{"year": [2027, 2028]}``).

    Returns
    -------
    DataFrame
        The ``groupby`` columns then the value columns (unit suffixes), sorted by key;
        ``attrs["statistic"]`` and ``attrs["units"]`` label it.

    Raises
    ------
    ValueError
        When ``name`` is not a statistic (the message lists them), a key of
        ``groupby`` or ``where`` does not apply to it (the message lists its keys), or
        a derived key needs a dataset the plan does not have.

    Warns
    -----
    UserWarning
        When a value of ``where`` matches no row (``{"year": "2026"}``, a text where
        the years are numbers; a site the plan does not have), naming the values it has.
    """
    if name not in STATISTICS:
        raise ValueError(f"no statistic {name!r}: the statistics are {', '.join(STATISTICS)}")
    spec = STATISTICS[name]
    wanted = _keys_of(groupby, spec)
    rows = with_keys(ROWS[name](tables, keys), keys, [*wanted, *(where or {})])
    _check_keys(rows, wanted, spec, "group by")
    _check_keys(rows, list(where or {}), spec, "select by")
    rows = select_rows(rows, where, spec.name)
    out = _aggregate(rows, wanted, spec)
    if name == "utilisation":
        cap = out["capacity"].astype(float)
        out["utilisation"] = np.where(cap > 0, out["used"].astype(float) / cap.where(cap > 0), 0.0)
    out = out[[*wanted, *spec.units]]
    out.attrs["statistic"] = name
    out.attrs["units"] = dict(spec.units)
    return out


def _aggregate(rows: pd.DataFrame, wanted: list[str], spec: StatSpec) -> pd.DataFrame:
    """Sum the value columns per group (a stock's year: its last quarter's sum)."""
    values = [v for v in spec.units if v in rows.columns]
    rows = rows.assign(**{v: pd.to_numeric(rows[v], errors="coerce") for v in values})
    for v in spec.units:
        if v not in rows.columns:
            rows[v] = 0.0
    values = list(spec.units)
    if spec.stock and "year" in wanted and "period" not in wanted and len(rows):
        last = rows.groupby("year")["period"].max()  # the year's last quarter in the plan
        rows = rows[rows["period"] == rows["year"].map(last)]
    if not wanted:
        return pd.DataFrame([rows[values].sum()]).reset_index(drop=True)
    out = rows.groupby(wanted, dropna=False, as_index=False, sort=True)[values].sum()
    return out.reset_index(drop=True)


def shadow_price_frame(
    tables: Mapping[str, pd.DataFrame], groupby: GroupBy, where: Where = None
) -> pd.DataFrame:
    """Return the largest magnitude of the shadow price per group, one unit per row.

    Parameters
    ----------
    tables : Mapping of str to DataFrame
        Uses ``shadow_prices`` (family, period, key, shadow_price, unit, binding).
    groupby : str or sequence of str, optional
        Keys among ``family, key, period, year`` (``unit`` is always kept); None:
        ``family, period``.
    where : mapping, optional
        Rows kept before grouping, as in :func:`statistic_frame`.

    Returns
    -------
    DataFrame
        The keys, ``unit`` and ``shadow_price_abs_max`` (USD per the row's unit, the
        objective's discounted USD) and ``binding_rows`` (rows binding in the group).
        Null prices (a solver without duals) stay null, never 0.
    """
    spec = StatSpec("shadow_prices", {}, ("family", "period"), stock=False, always=("unit",))
    wanted = _keys_of(groupby, spec)
    s = _table(tables, "shadow_prices")
    if len(s) == 0:
        s = pd.DataFrame(columns=["family", "period", "key", "shadow_price", "unit", "binding"])
    s = with_keys(s, PlanKeys(), [*wanted, *(where or {})])
    _check_keys(s, wanted, spec, "group by")
    _check_keys(s, list(where or {}), spec, "select by")
    s = select_rows(s, where, spec.name)
    s = s.assign(
        shadow_price_abs_max=pd.to_numeric(s["shadow_price"], errors="coerce").abs(),
        binding_rows=s["binding"].fillna(False).astype(bool).astype(int),
    )
    out = s.groupby(wanted, dropna=False, as_index=False).agg(
        shadow_price_abs_max=("shadow_price_abs_max", lambda v: v.max(skipna=True)),
        binding_rows=("binding_rows", "sum"),
    )
    out.attrs["statistic"] = "shadow_prices"
    out.attrs["units"] = {"shadow_price_abs_max": "USD per unit", "binding_rows": "rows"}
    return out


class Statistics:
    """The statistics of one plan (``plan.statistics``): one method per statistic.

    Parameters
    ----------
    tables : Mapping of str to DataFrame
        The plan's result tables.
    keys : PlanKeys
        The dataset's key maps.
    """

    def __init__(self, tables: Mapping[str, pd.DataFrame], keys: PlanKeys) -> None:
        self._tables = tables
        self._keys = keys

    def __call__(self, name: str, groupby: GroupBy = None, where: Where = None) -> pd.DataFrame:
        """Return statistic ``name`` (see :meth:`names`) grouped by ``groupby``."""
        if name == "shadow_prices":
            return self.shadow_prices(groupby, where)
        if name == "calibration" and (groupby is not None or where is not None):
            raise ValueError("calibration is the public-record table: no groupby or where")
        if name == "calibration":
            return self.calibration()
        return statistic_frame(name, self._tables, self._keys, groupby, where)

    def capex(self, groupby: GroupBy = None, where: Where = None) -> pd.DataFrame:
        """Capital spent, cash (USD, undiscounted, when spent); default by period, term.

        Chips count at ``capex_usd_per_chip`` when installed, buildings at
        ``build_capex_usd_per_mw`` when decided, retrofits when done, grid upgrades when
        requested (their ``chip`` reads ``n/a``).
        Grouped by period and term it equals the costs table's ``cash_usd`` of the
        capex terms.
        """
        return statistic_frame("capex", self._tables, self._keys, groupby, where)

    def cash(self, groupby: GroupBy = None, where: Where = None) -> pd.DataFrame:
        """Cash out, undiscounted (USD): ``costs.cash_usd``; default by period, cash_kind.

        In the margin objective the ``revenue`` rows are cash in, so they are negative.
        """
        return statistic_frame("cash", self._tables, self._keys, groupby, where)

    def costs(self, groupby: GroupBy = None, where: Where = None) -> pd.DataFrame:
        """Discounted cost as in the objective (USD): ``costs.cost_usd`` by period, term.

        Its total equals the plan's objective.
        """
        return statistic_frame("costs", self._tables, self._keys, groupby, where)

    def opex(self, groupby: GroupBy = None, where: Where = None) -> pd.DataFrame:
        """Operating cash, undiscounted (USD): the costs of cash kind opex by period, term."""
        return statistic_frame("opex", self._tables, self._keys, groupby, where)

    def energy(self, groupby: GroupBy = None, where: Where = None) -> pd.DataFrame:
        """Facility energy (MWh) by power source: ``power_sources.energy_mwh``."""
        return statistic_frame("energy", self._tables, self._keys, groupby, where)

    def carbon(self, groupby: GroupBy = None, where: Where = None) -> pd.DataFrame:
        """CO2 emitted (t) by power source: ``power_sources.carbon_t``."""
        return statistic_frame("carbon", self._tables, self._keys, groupby, where)

    def water(self, groupby: GroupBy = None, where: Where = None) -> pd.DataFrame:
        """Cooling water (m3): ``energy.water_m3``; default by period, site."""
        return statistic_frame("water", self._tables, self._keys, groupby, where)

    def fleet(self, groupby: GroupBy = None, where: Where = None) -> pd.DataFrame:
        """Chips in service (``fleet_chips``) and their nameplate IT MW (stock)."""
        return statistic_frame("fleet", self._tables, self._keys, groupby, where)

    def h100e(self, groupby: GroupBy = None, where: Where = None) -> pd.DataFrame:
        """H100e in service for customers, after derate, and the chips serving (stock)."""
        return statistic_frame("h100e", self._tables, self._keys, groupby, where)

    def demand(self, groupby: GroupBy = None, where: Where = None) -> pd.DataFrame:
        """Return served, unmet and asked H100e (stock); default by period, customer."""
        return statistic_frame("demand", self._tables, self._keys, groupby, where)

    def utilisation(self, groupby: GroupBy = None, where: Where = None) -> pd.DataFrame:
        """Use of every limit: used, capacity (the limit's unit) and their ratio (stock).

        Site limits (``power``, ``liquid``, ``grid``, ``water``) and supply resources
        (``limit`` is the resource, ``site`` reads ``n/a``); ``unit`` is always a key.
        """
        return statistic_frame("utilisation", self._tables, self._keys, groupby, where)

    def revenue(self, groupby: GroupBy = None, where: Where = None) -> pd.DataFrame:
        """Revenue of served H100e at the customers' prices (USD); default by period, customer.

        ``revenue_usd`` is discounted (in the margin objective it is minus the costs
        table's ``revenue`` term), ``undiscounted_revenue_usd`` is billed in the quarter,
        ``unserved_revenue_usd`` is what the unmet demand would have earned (discounted).
        Margin = ``revenue_usd`` total - the other costs (``plan.result.margin_usd``).
        """
        return statistic_frame("revenue", self._tables, self._keys, groupby, where)

    def shadow_prices(self, groupby: GroupBy = None, where: Where = None) -> pd.DataFrame:
        """Return the largest shadow price magnitude per group (:func:`shadow_price_frame`)."""
        return shadow_price_frame(self._tables, groupby, where)

    def calibration(self) -> pd.DataFrame:
        """Return the plan against the public record: the ``calibration`` table."""
        return _table(self._tables, "calibration").reset_index(drop=True)

    def names(self) -> list[str]:
        """Every statistic's name (the methods that take ``groupby``)."""
        return [*STATISTICS, "shadow_prices", "calibration"]
