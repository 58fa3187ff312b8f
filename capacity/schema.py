"""Schema specs: one declarative spec per input table.

Every input table of the dataset is described once here: its columns, their dtype,
unit, bounds, default and meaning. The same spec drives

* parsing and validation (:mod:`capacity.dataset`, :mod:`capacity.validation`),
* the units table in the README (:func:`units_markdown`),
* the Streamlit app's column configuration.

Conventions (see ``shared/DESIGN.md``): a column's unit is its suffix (``_mw``,
``_usd``, ``_h100e`` ...). IDs are kept exactly as written (spaces, slashes,
parentheses and non-ASCII letters included); two IDs that differ only by case or
surrounding spaces are a duplicate-key error. A period is a calendar quarter written
``YYYYQn``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

DType = Literal["id", "str", "float", "int", "period", "choice"]

SOLVER_SAFE_MAX = 1e12
"""Largest magnitude of any numeric cell, on top of each column's own bounds.

HiGHS treats 1e20 as infinity and refuses matrix entries of 1e15 or more; the LP
multiplies cells together (IT kW x hours, capex / lifetime x discount factor), so
cells are held to 1e12, far above any real figure of the planner (a trillion USD,
H100e, MW or m3) and far below what the solver cannot represent.
"""

INT64_MAX = 2**63 - 1
"""Largest value an ``int`` column's storage (int64) can hold."""

SAFE_RANGE_NOTE = (
    f"Every numeric cell must also lie within ±{SOLVER_SAFE_MAX:g} (`SOLVER_SAFE_MAX`, the "
    "range the solver can take once cells are multiplied together); integers are checked "
    "as written, so a value beyond 64 bits is refused, never wrapped."
)
"""The safe-range rule as printed under the README's units table."""

PERIOD_RE = re.compile(r"^(\d{4})Q([1-4])$")


@dataclass(frozen=True)
class Column:
    """One column of an input table.

    Parameters
    ----------
    name : str
        Column name; its suffix is its unit (``_mw``, ``_usd`` ...).
    dtype : {"id", "str", "float", "int", "period", "choice"}
        ``id`` is a key or reference string kept exactly as written; ``period`` is a
        ``YYYYQn`` quarter; ``choice`` takes one of ``choices``.
    unit : str
        Human-readable unit ("MW", "USD per chip", "" for a ratio).
    description : str
        Meaning of the column, shown in the README and the app.
    required : bool
        When True an empty cell is an error. When False an empty cell takes
        ``default``; the default is documented here, never an implicit zero.
    default : Any
        Value of an empty optional cell.
    min, max : float or None
        Inclusive bounds; a value outside is an error.
    min_exclusive : bool
        When True the lower bound is strict (value must be > ``min``).
    warn_min, warn_max : float or None
        Plausibility bounds; a value outside is a warning, not an error.
    choices : tuple of str
        Allowed values of a ``choice`` column.
    references : tuple of (table, column) or None
        Foreign key: the value must exist in that table's column.
    """

    name: str
    dtype: DType
    unit: str
    description: str
    required: bool = True
    default: Any = None
    min: float | None = None
    max: float | None = None
    min_exclusive: bool = False
    warn_min: float | None = None
    warn_max: float | None = None
    choices: tuple[str, ...] = ()
    references: tuple[str, str] | None = None

    @property
    def is_numeric(self) -> bool:
        """True for ``float`` and ``int`` columns."""
        return self.dtype in ("float", "int")

    def bounds_text(self) -> str:
        """Bounds as text for documentation, e.g. ``[1, ∞)`` or ``(0, 1]``."""
        if self.dtype == "choice":
            return " | ".join(self.choices)
        if not self.is_numeric:
            return ""
        lo = "-∞" if self.min is None else f"{self.min:g}"
        hi = "∞" if self.max is None else f"{self.max:g}"
        left = "(" if (self.min is None or self.min_exclusive) else "["
        right = ")" if self.max is None else "]"
        return f"{left}{lo}, {hi}{right}"


@dataclass(frozen=True)
class TableSpec:
    """Spec of one input table.

    Parameters
    ----------
    name : str
        Table name; the file is ``<name>.csv`` (or ``<name>.parquet``).
    description : str
        What one row means.
    columns : tuple of Column
        Columns in canonical order.
    key : tuple of str
        Columns whose values identify a row; unique after ignoring case and
        surrounding spaces.
    required : bool
        When False a missing file means an empty table.
    """

    name: str
    description: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    required: bool = True
    _by_name: dict[str, Column] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {c.name: c for c in self.columns})

    @property
    def column_names(self) -> list[str]:
        """Column names in canonical order."""
        return [c.name for c in self.columns]

    @property
    def filename(self) -> str:
        """CSV file name of the table."""
        return f"{self.name}.csv"

    def column(self, name: str) -> Column:
        """Return the spec of column ``name``; raises KeyError when unknown."""
        return self._by_name[name]

    def has_column(self, name: str) -> bool:
        """Return True when ``name`` is a column of this table."""
        return name in self._by_name


def _id(name: str, description: str, references: tuple[str, str] | None = None) -> Column:
    return Column(name, "id", "", description, references=references)


def _period(
    name: str, description: str, *, in_horizon: bool = True, required: bool = True
) -> Column:
    ref = ("periods", "period") if in_horizon else None
    return Column(name, "period", "quarter", description, required=required, references=ref)


def _num(
    name: str,
    unit: str,
    description: str,
    *,
    dtype: DType = "float",
    min: float | None = 0.0,
    max: float | None = None,
    min_exclusive: bool = False,
    warn_min: float | None = None,
    warn_max: float | None = None,
    required: bool = True,
    default: Any = None,
) -> Column:
    return Column(
        name,
        dtype,
        unit,
        description,
        required=required,
        default=default,
        min=min,
        max=max,
        min_exclusive=min_exclusive,
        warn_min=warn_min,
        warn_max=warn_max,
    )


SITE_REF = ("sites", "site")
CHIP_REF = ("chips", "chip")
CUSTOMER_REF = ("customers", "customer")
RESOURCE_REF = ("supply_resources", "resource")
WORKLOAD_REF = ("workloads", "workload")

TABLES: tuple[TableSpec, ...] = (
    TableSpec(
        "periods",
        "One planning period (a calendar quarter) of the horizon, in time order.",
        (
            Column("period", "period", "quarter", "Quarter label, YYYYQn (e.g. 2026Q3)."),
            _num(
                "hours",
                "h",
                "Hours in the period.",
                min=0.0,
                min_exclusive=True,
                warn_min=2100.0,
                warn_max=2300.0,
            ),
            _num(
                "discount_factor",
                "",
                "Present-value factor applied to every cost of "
                "the period: 1 / (1 + r)^(years from the start).",
                min=0.0,
                max=1.0,
                min_exclusive=True,
            ),
        ),
        key=("period",),
    ),
    TableSpec(
        "sites",
        "A data-center campus that can host accelerators.",
        (
            _id("site", "Site ID."),
            Column(
                "display_name",
                "str",
                "",
                "Name shown to people; never reaches the LP.",
                required=False,
                default="",
            ),
            Column(
                "region",
                "str",
                "",
                "Region code (e.g. us-east, NO); eligibility can restrict customers to regions.",
            ),
            _num("initial_it_mw", "MW", "IT capacity built before the horizon."),
            _num(
                "initial_liquid_mw",
                "MW",
                "Part of the initial IT capacity fitted for liquid cooling.",
                required=False,
                default=0.0,
            ),
            _num("max_it_mw", "MW", "Largest IT capacity the campus can ever hold."),
            _num(
                "max_build_mw_per_period",
                "MW",
                "Most new IT MW that can be built in one period (construction rate).",
            ),
            _num(
                "liquid_share_max",
                "",
                "Largest share of new capacity that can be fitted for liquid cooling.",
                max=1.0,
                required=False,
                default=1.0,
            ),
            _num(
                "pue_air",
                "",
                "Power usage effectiveness of air-cooled halls (facility power / IT power).",
                min=1.0,
                warn_max=2.0,
            ),
            _num("pue_liquid", "", "PUE of liquid-cooled halls.", min=1.0, warn_max=2.0),
            _num(
                "wue_l_per_kwh_air",
                "L/kWh",
                "Water usage effectiveness of air-cooled halls "
                "(litres per IT kWh, equal to m3 per IT MWh).",
                warn_max=5.0,
            ),
            _num("wue_l_per_kwh_liquid", "L/kWh", "WUE of liquid-cooled halls.", warn_max=5.0),
            _num(
                "build_capex_usd_per_mw",
                "USD/MW",
                "Capital cost of one MW of new IT capacity (shell, power and cooling).",
                warn_min=1e6,
                warn_max=6e7,
            ),
            _num(
                "energy_price_usd_per_mwh", "USD/MWh", "Price of facility energy.", warn_max=500.0
            ),
            _num(
                "carbon_t_per_mwh",
                "t CO2/MWh",
                "Grid carbon intensity (reported, not in the objective).",
                warn_max=1.5,
            ),
            Column(
                "hosts",
                "str",
                "",
                "Chip families or vendors the site may host, separated by ';' (empty: any); "
                "a chip may be installed only where its family or vendor is listed.",
                required=False,
                default="",
            ),
            _num(
                "lead_time_periods",
                "quarters",
                "Construction lead time: IT MW decided in period p is usable from p + lead.",
                dtype="int",
                required=False,
                default=0,
                warn_max=16.0,
            ),
            _num(
                "retrofit_mw_per_period",
                "MW",
                "Most air-cooled IT MW that can be converted to liquid cooling in one period "
                "(0: no retrofit).",
                required=False,
                default=0.0,
            ),
            _num(
                "retrofit_capex_usd_per_mw",
                "USD/MW",
                "Capital cost of converting one air-cooled IT MW to liquid cooling.",
                required=False,
                default=0.0,
                warn_max=2e7,
            ),
            _num(
                "retrofit_downtime_share",
                "",
                "Share of the period a converted MW is out of service in its retrofit period.",
                max=1.0,
                required=False,
                default=0.0,
            ),
        ),
        key=("site",),
    ),
    TableSpec(
        "site_pipeline",
        "IT capacity already under construction at a site before the horizon, with the "
        "quarter it comes online (usable from then on; its capex is sunk).",
        (
            _id("site", "Site ID.", SITE_REF),
            _period("online_period", "Quarter the capacity comes online.", in_horizon=False),
            _num("it_mw", "MW", "IT MW coming online."),
            _num(
                "liquid_mw",
                "MW",
                "Part of it fitted for liquid cooling.",
                required=False,
                default=0.0,
            ),
        ),
        key=("site", "online_period"),
        required=False,
    ),
    TableSpec(
        "site_grid",
        "Grid interconnect available to a site in a period (a schedule: a delay shifts rows).",
        (
            _id("site", "Site ID.", SITE_REF),
            _period("period", "Period."),
            _num("grid_mw", "MW", "Facility power the grid can deliver (IT power x PUE must fit)."),
        ),
        key=("site", "period"),
    ),
    TableSpec(
        "site_water",
        "Water a site may draw in a period under its permits.",
        (
            _id("site", "Site ID.", SITE_REF),
            _period("period", "Period."),
            _num("water_permit_m3", "m3", "Water permitted in the period."),
        ),
        key=("site", "period"),
    ),
    TableSpec(
        "chips",
        "An accelerator generation that can be produced and installed.",
        (
            _id("chip", "Chip ID."),
            Column("display_name", "str", "", "Name shown to people.", required=False, default=""),
            Column("vendor", "str", "", "Designer (nvidia, aws ...)."),
            Column(
                "family",
                "str",
                "",
                "Commitment family (nvidia, trainium ...); commitments are stated per family.",
            ),
            _num(
                "it_kw_per_chip",
                "kW",
                "All-in IT power per accelerator: chip, host, network share.",
                min=0.0,
                min_exclusive=True,
                warn_max=4.0,
            ),
            Column(
                "cooling",
                "choice",
                "",
                "Cooling the chip needs.",
                choices=("air", "liquid", "either"),
            ),
            _period(
                "first_period",
                "First quarter of the sale window (may precede the horizon).",
                in_horizon=False,
            ),
            _period("last_period", "Last quarter of the sale window.", in_horizon=False),
            _num(
                "lifetime_periods",
                "quarters",
                "Service life after installation.",
                dtype="int",
                min=1.0,
            ),
            _num(
                "capex_usd_per_chip",
                "USD/chip",
                "All-in capital cost per accelerator (chip, its server share and network).",
                warn_max=2e5,
            ),
            _num("training_h100e", "H100e/chip", "Training throughput in H100-equivalents."),
            _num("inference_h100e", "H100e/chip", "Inference throughput in H100-equivalents."),
            _num("hbm_gb", "GB", "HBM capacity per chip."),
            Column(
                "unit_name",
                "str",
                "",
                "Deployment unit (HGX 8-GPU server, NVL72 rack, UltraServer ...).",
                required=False,
                default="chip",
            ),
            _num(
                "chips_per_unit",
                "chips",
                "Accelerators per deployment unit (8 for HGX, "
                "72 for NVL72, 64/144 for Trainium UltraServers).",
                dtype="int",
                min=1.0,
                required=False,
                default=1,
            ),
            _num(
                "idle_power_factor",
                "",
                "Draw of an installed chip serving no one, as a share of its all-in IT kW.",
                max=1.0,
                required=False,
                default=0.3,
            ),
            _num(
                "delivery_lag_periods",
                "quarters",
                "Chips produced in period p can be installed from p + lag (server build "
                "and shipping); production runs lag quarters ahead of the sale window.",
                dtype="int",
                required=False,
                default=0,
                warn_max=8.0,
            ),
            _num(
                "opening_inventory_chips",
                "chips",
                "Chips produced before the horizon and not yet installed at its start (in "
                "transit); installable from the first period.",
                required=False,
                default=0.0,
            ),
        ),
        key=("chip",),
    ),
    TableSpec(
        "supply_resources",
        "Capacity of a supply-chain resource (wafers, CoWoS, HBM) in a period.",
        (
            _id("resource", "Resource ID (tsmc_n3_wafers, cowos_wafers, hbm_stacks ...)."),
            _period("period", "Period."),
            _num(
                "capacity",
                "resource unit",
                "Units of the resource available to this planner in the period.",
            ),
            Column(
                "unit",
                "str",
                "",
                "The resource's own unit (wafers, stacks ...).",
                required=False,
                default="units",
            ),
        ),
        key=("resource", "period"),
    ),
    TableSpec(
        "chip_bill_of_materials",
        "Units of a supply resource consumed per chip produced.",
        (
            _id("chip", "Chip ID.", CHIP_REF),
            _id("resource", "Resource ID.", RESOURCE_REF),
            _num(
                "per_chip",
                "resource unit/chip",
                "Units of the resource per good chip "
                "(wafers per good die, CoWoS wafers per package, HBM stacks per chip).",
            ),
        ),
        key=("chip", "resource"),
    ),
    TableSpec(
        "initial_fleet",
        "Accelerators installed before the horizon.",
        (
            _id("chip", "Chip ID.", CHIP_REF),
            _id("site", "Site ID.", SITE_REF),
            _num("chips", "chips", "Accelerators installed."),
            _period(
                "install_period",
                "Quarter of installation (before the horizon "
                "normally); they retire lifetime_periods later.",
                in_horizon=False,
            ),
        ),
        key=("chip", "site", "install_period"),
        required=False,
    ),
    TableSpec(
        "customers",
        "A customer served from the fleet.",
        (
            _id("customer", "Customer ID."),
            Column("display_name", "str", "", "Name shown to people.", required=False, default=""),
            _num(
                "price_training_usd_per_h100e_period",
                "USD/(H100e·quarter)",
                "Price "
                "the customer pays for one H100e of training for a quarter (revenue, "
                "reported).",
            ),
            _num(
                "price_inference_usd_per_h100e_period",
                "USD/(H100e·quarter)",
                "Price for one H100e of inference for a quarter.",
            ),
            _num(
                "unmet_penalty_usd_per_h100e_period",
                "USD/(H100e·quarter)",
                "Cost of one H100e of demand left unserved for a quarter.",
            ),
        ),
        key=("customer",),
    ),
    TableSpec(
        "workloads",
        "A kind of work and how hard it drives the chips.",
        (
            Column("workload", "choice", "", "Workload.", choices=("training", "inference")),
            _num(
                "power_factor",
                "",
                "Average draw while serving, as a share of all-in IT kW.",
                max=1.0,
                min_exclusive=True,
            ),
        ),
        key=("workload",),
    ),
    TableSpec(
        "demand",
        "Compute a customer wants in a period.",
        (
            _id("customer", "Customer ID.", CUSTOMER_REF),
            Column(
                "workload",
                "choice",
                "",
                "Workload.",
                choices=("training", "inference"),
                references=WORKLOAD_REF,
            ),
            _period("period", "Period."),
            _num("demand_h100e", "H100e", "Compute wanted, in H100-equivalents."),
            Column(
                "regions",
                "str",
                "",
                "Site regions that may serve this demand, separated by ';' (empty: any "
                "region). Rows of one customer, workload and period with different regions "
                "are separate demands (e.g. US and European inference).",
                required=False,
                default="",
            ),
        ),
        key=("customer", "workload", "period", "regions"),
    ),
    TableSpec(
        "eligibility",
        "A chip a customer may run on, with the migration derate (absent row: not allowed).",
        (
            _id("customer", "Customer ID.", CUSTOMER_REF),
            _id("chip", "Chip ID.", CHIP_REF),
            _num(
                "derate",
                "",
                "Effective performance after migration (1 = full H100e rating).",
                max=1.0,
                min_exclusive=True,
            ),
            Column(
                "regions",
                "str",
                "",
                "Regions the customer may use for this chip, separated by ';' (empty: any region).",
                required=False,
                default="",
            ),
        ),
        key=("customer", "chip"),
    ),
    TableSpec(
        "commitments",
        "Contracted minimum IT power a customer must get on a chip family.",
        (
            _id("customer", "Customer ID.", CUSTOMER_REF),
            Column("family", "str", "", "Chip family (matches chips.family)."),
            _period("from_period", "First period the commitment applies."),
            _period(
                "to_period",
                "Last period it applies (empty: end of horizon).",
                in_horizon=False,
                required=False,
            ),
            _num("min_it_mw", "MW", "IT MW that must serve the customer on the family."),
            _num(
                "breach_penalty_usd_per_mw",
                "USD/(MW·quarter)",
                "Cost of each MW short for a quarter.",
            ),
        ),
        key=("customer", "family", "from_period"),
        required=False,
    ),
    TableSpec(
        "grid_upgrades",
        "An option to raise a site's grid interconnection beyond the granted site_grid "
        "schedule: MW requested in a decision period are energised lead_periods later.",
        (
            _id("site", "Site ID.", SITE_REF),
            _id("option", "Upgrade option ID (e.g. substation_expansion)."),
            _num("cost_usd_per_mw", "USD/MW", "Cost of one MW of added interconnection."),
            _num(
                "lead_periods",
                "quarters",
                "Queue and construction time from the decision to energisation.",
                dtype="int",
            ),
            _num(
                "max_mw_per_period",
                "MW",
                "Most MW that can be requested in one decision period (one request).",
            ),
            _num("max_mw_total", "MW", "Most MW the option can add over the horizon."),
            _num(
                "lifetime_periods",
                "quarters",
                "Life over which the cost is charged as rent (160 = 40 years).",
                dtype="int",
                min=1.0,
                required=False,
                default=160,
            ),
        ),
        key=("site", "option"),
        required=False,
    ),
    TableSpec(
        "onsite_generation",
        "An on-site generation technology a site may build (gas turbines, reciprocating "
        "engines, fuel cells): firm capacity adds to the site's facility power.",
        (
            _id("site", "Site ID.", SITE_REF),
            _id("technology", "Technology ID (e.g. recip_engine, fuel_cell)."),
            _num("capex_usd_per_mw", "USD/MW", "Capital cost of one MW of nameplate capacity."),
            _num(
                "fixed_cost_usd_per_mw_year",
                "USD/(MW·year)",
                "Fixed operating cost per MW of capacity online.",
                required=False,
                default=0.0,
            ),
            _num(
                "variable_cost_usd_per_mwh",
                "USD/MWh",
                "Variable cost per MWh generated (O&M; or an all-in cost per MWh).",
                required=False,
                default=0.0,
            ),
            _num(
                "fuel_price_usd_per_mmbtu",
                "USD/MMBtu",
                "Fuel price; fuel cost per MWh = fuel price x heat rate.",
                required=False,
                default=0.0,
            ),
            _num(
                "heat_rate_mmbtu_per_mwh",
                "MMBtu/MWh",
                "Fuel burnt per MWh generated.",
                required=False,
                default=0.0,
            ),
            _num("carbon_t_per_mwh", "t CO2/MWh", "CO2 emitted per MWh generated."),
            _num(
                "lead_periods",
                "quarters",
                "Delivery and build time from the decision to first power.",
                dtype="int",
            ),
            _num(
                "availability",
                "",
                "Firm share of nameplate (derating for outages and N+1 redundancy); the "
                "MWh per period are at most availability x MW x hours.",
                min=0.0,
                max=1.0,
            ),
            _num("max_mw", "MW", "Most nameplate MW at the site (air permit, gas supply)."),
            _num(
                "initial_mw",
                "MW",
                "Capacity already built before the horizon.",
                required=False,
                default=0.0,
            ),
            _num(
                "lifetime_periods",
                "quarters",
                "Life over which capex is charged as rent.",
                dtype="int",
                min=1.0,
                required=False,
                default=80,
            ),
        ),
        key=("site", "technology"),
        required=False,
    ),
    TableSpec(
        "ppas",
        "One step of a power purchase agreement: MW available from from_period at a price; "
        "a contract is one or more steps (a ramp).",
        (
            _id("contract", "Contract ID."),
            _period("from_period", "First period of this step.", in_horizon=False),
            _period(
                "to_period",
                "Last period of this step (empty: end of horizon).",
                in_horizon=False,
                required=False,
            ),
            Column(
                "site",
                "id",
                "",
                "Site the contract serves (empty: every site of the region).",
                required=False,
                default="",
            ),
            Column(
                "region",
                "str",
                "",
                "Region whose sites may take the energy (when site is empty).",
                required=False,
                default="",
            ),
            _num("mw", "MW", "Contracted MW available in the step."),
            _num("price_usd_per_mwh", "USD/MWh", "Price of the contract's energy."),
            _num("carbon_t_per_mwh", "t CO2/MWh", "CO2 per MWh of the contract's energy."),
            Column(
                "firm",
                "choice",
                "",
                "'yes': delivered behind the meter, its MW add to the site's facility power "
                "(needs a site); 'no': delivered through the grid, so it must be matched by "
                "grid capacity and only displaces grid energy.",
                required=False,
                default="no",
                choices=("yes", "no"),
            ),
            _num(
                "availability",
                "",
                "Share of the MW available on average (capacity factor of the plant).",
                min=0.0,
                max=1.0,
                required=False,
                default=1.0,
            ),
        ),
        key=("contract", "from_period"),
        required=False,
    ),
    TableSpec(
        "carbon_policy",
        "Carbon price and cap of the scenario: a row with an empty period applies to the "
        "whole horizon (its price to every period without a row of its own, its cap to "
        "the horizon total); a row with a period sets that period's price and cap.",
        (
            _period(
                "period",
                "Period of the row (empty: the whole horizon).",
                required=False,
            ),
            _num(
                "carbon_price_usd_per_t",
                "USD/t CO2",
                "Carbon price charged in the objective on every t emitted.",
                required=False,
                default=0.0,
            ),
            _num(
                "carbon_cap_t",
                "t CO2",
                "Most CO2 emitted (in the period, or over the horizon); empty: no cap.",
                required=False,
                default=float("nan"),
            ),
        ),
        key=("period",),
        required=False,
    ),
    TableSpec(
        "training_clusters",
        "Cluster rule of a customer's training from a period on: the minimum size of "
        "the training cluster at each site that hosts it, the most sites it may span, "
        "and what keeps a cluster at the same site over time (exact with --clusters or "
        "--integer-units; reported as fragmentation in LP mode).",
        (
            _id("customer", "Customer ID.", CUSTOMER_REF),
            _period("from_period", "First period the rule applies."),
            _period(
                "to_period",
                "Last period it applies (empty: end of horizon).",
                in_horizon=False,
                required=False,
            ),
            _num(
                "min_cluster_mw",
                "MW",
                "Least nameplate IT MW of the customer's training chips at a site that "
                "hosts its training (0: no MW minimum).",
                required=False,
                default=0.0,
            ),
            _num(
                "min_cluster_h100e",
                "H100e",
                "Least training H100e (after derate) at a site that hosts the customer's "
                "training (0: no H100e minimum).",
                required=False,
                default=0.0,
            ),
            _num(
                "max_sites",
                "sites",
                "Most sites the customer's training may span in a period (0: no limit).",
                dtype="int",
                required=False,
                default=0,
            ),
            _num(
                "switch_cost_usd",
                "USD per cluster start",
                "Cost of starting the customer's training at a site that did not host it "
                "the period before (migration, re-validation, idle time).",
                required=False,
                default=0.0,
            ),
            _num(
                "min_duration_periods",
                "quarters",
                "A cluster that starts at a site stays there at least this many periods "
                "(1: no minimum).",
                dtype="int",
                min=1.0,
                required=False,
                default=1,
            ),
        ),
        key=("customer", "from_period"),
        required=False,
    ),
    TableSpec(
        "public_record",
        "One publicly reported figure the plan is held against (calibration; see "
        "optimizer.plan.calibration for the metric formulas).",
        (
            Column(
                "metric",
                "str",
                "",
                "Metric name (chips_in_service, site_it_capacity_mw, fleet_pue ...); its "
                "formula over the result tables is in optimizer/plan/calibration.py.",
            ),
            Column(
                "scope",
                "str",
                "",
                "What the figure covers: 'fleet', or filters joined by '/' such as "
                "'family:trainium', 'customer:anthropic/chip:trainium2', 'site:new_carlisle'.",
            ),
            _period(
                "period",
                "Quarter the figure refers to (annual metrics: the last quarter of the year).",
                in_horizon=False,
            ),
            _num("value", "column 'unit'", "The figure as reported.", min=None),
            Column("unit", "str", "", "Unit of value, low and high (must be the metric's unit)."),
            _num("low", "column 'unit'", "Lowest plan value counted as agreeing.", min=None),
            _num("high", "column 'unit'", "Highest plan value counted as agreeing.", min=None),
            Column("source", "str", "", "Public address (https://...) supporting the figure."),
            Column(
                "note",
                "str",
                "",
                "What the source says and how the band was set.",
                required=False,
                default="",
            ),
            _num(
                "plan_share",
                "",
                "Share of the reported figure the planner covers (e.g. 0.1: the planner "
                "holds 10% of world CoWoS); the plan value is divided by it.",
                min=0.0,
                max=1.0,
                min_exclusive=True,
                required=False,
                default=1.0,
            ),
            Column(
                "matchable",
                "choice",
                "",
                "'yes' when the model can be expected to match the figure; 'no' keeps the "
                "row in the calibration table, unscored, with its reason.",
                required=False,
                default="yes",
                choices=("yes", "no"),
            ),
            Column(
                "reason",
                "str",
                "",
                "Why the model cannot match the figure yet (required when matchable is 'no').",
                required=False,
                default="",
            ),
        ),
        key=("metric", "scope", "period"),
        required=False,
    ),
    TableSpec(
        "sources",
        "Where a figure of the dataset comes from.",
        (
            Column("table", "str", "", "Table the figure belongs to."),
            Column("key", "str", "", "Row key of the figure ('*' for a whole column)."),
            Column("column", "str", "", "Column of the figure."),
            Column("value", "str", "", "The figure as used.", required=False, default=""),
            Column("source", "str", "", "Public address, or the word 'assumption'."),
            Column("note", "str", "", "How the figure was derived.", required=False, default=""),
        ),
        key=("table", "key", "column"),
    ),
)

SPECS: dict[str, TableSpec] = {t.name: t for t in TABLES}
TABLE_NAMES: tuple[str, ...] = tuple(SPECS)


def spec(name: str) -> TableSpec:
    """Return the spec of table ``name``.

    Raises
    ------
    KeyError
        When ``name`` is not an input table.
    """
    return SPECS[name]


def iter_columns() -> Iterator[tuple[TableSpec, Column]]:
    """Yield every (table, column) pair of the schema in canonical order."""
    for t in TABLES:
        for c in t.columns:
            yield t, c


def period_index(label: str) -> int:
    """Return a quarter's ordinal (year * 4 + quarter - 1) for sorting and shifting.

    Raises
    ------
    ValueError
        When ``label`` is not ``YYYYQn``.
    """
    m = PERIOD_RE.match(label)
    if not m:
        raise ValueError(f"{label!r} is not a quarter like 2026Q3")
    return int(m.group(1)) * 4 + int(m.group(2)) - 1


def period_label(index: int) -> str:
    """Inverse of :func:`period_index`."""
    return f"{index // 4}Q{index % 4 + 1}"


def units_markdown() -> str:
    """Render the schema as a Markdown units table (one row per column).

    Returns
    -------
    str
        The table, used verbatim in the README's "Data and units" section.
    """
    lines = [
        "| table | column | type | unit | bounds | required (default) | meaning |",
        "|---|---|---|---|---|---|---|",
    ]
    for t, c in iter_columns():
        req = "yes" if c.required else f"no ({'' if c.default is None else c.default})"
        if not c.required and c.default is None:
            req = "no (end of horizon)" if c.name == "to_period" else "no"
        lines.append(
            f"| {t.name} | `{c.name}` | {c.dtype} | {c.unit} | {c.bounds_text()} | {req} "
            f"| {c.description} |"
        )
    return "\n".join(lines) + "\n\n" + SAFE_RANGE_NOTE
