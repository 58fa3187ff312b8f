"""Result-table schema: every column of every result table with its Arrow type, unit and meaning.

:data:`RESULT_TABLES` lists, per table, its :class:`ResultColumn` records in file order;
:mod:`optimizer.output.parquet_tables` turns them into the Arrow schemas the report
writes.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

__all__ = ["RESULT_TABLES", "ResultColumn"]

_STR = pa.string()
_F64 = pa.float64()
_I64 = pa.int64()
_BOOL = pa.bool_()


@dataclass(frozen=True)
class ResultColumn:
    """One column of a result table.

    Parameters
    ----------
    name : str
        Column name; its suffix is its unit where it has one.
    type : pyarrow.DataType
        Arrow type written to Parquet (``string``, ``float64``, ``int64``, ``bool``).
    unit : str
        Human unit ("MW", "USD", "" for text or a ratio).
    description : str
        Meaning of the column.
    """

    name: str
    type: pa.DataType
    unit: str
    description: str


def _c(name: str, type_: pa.DataType, unit: str, description: str) -> ResultColumn:
    return ResultColumn(name, type_, unit, description)


_SITE = _c("site", _STR, "", "Site ID.")
_PERIOD = _c("period", _STR, "quarter", "Period (YYYYQn).")
_CHIP = _c("chip", _STR, "", "Chip ID.")
_CUSTOMER = _c("customer", _STR, "", "Customer ID.")
_WORKLOAD = _c("workload", _STR, "", "Workload (training | inference).")
_PER_UNIT = "USD per unit of column 'unit'"
_DUAL = "Discounted shadow price: d(objective)/d(limit), "

RESULT_TABLES: dict[str, tuple[ResultColumn, ...]] = {
    "build_out": (
        _SITE,
        _PERIOD,
        _c("build_mw", _F64, "MW", "New IT capacity decided in the period (online lead later)."),
        _c("liquid_build_mw", _F64, "MW", "Part of the decided capacity fitted for liquid."),
        _c("retrofit_mw", _F64, "MW", "Air-cooled IT MW converted to liquid in the period."),
        _c("pipeline_mw", _F64, "MW", "Pipeline capacity (under way before the horizon) online."),
        _c("online_mw", _F64, "MW", "IT capacity coming online in the period (pipeline + builds)."),
        _c("it_capacity_mw", _F64, "MW", "IT capacity online (usable) in the period."),
        _c("liquid_capacity_mw", _F64, "MW", "Liquid-cooled IT capacity online in the period."),
        _c(
            "decided_capacity_mw",
            _F64,
            "MW",
            "IT capacity decided so far: initial + whole pipeline + cumulative build_mw.",
        ),
    ),
    "fleet": (
        _CHIP,
        _SITE,
        _PERIOD,
        _c("installed_chips", _F64, "chips", "Accelerators installed in the period."),
        _c("retired_chips", _F64, "chips", "Accelerators reaching end of life in the period."),
        _c("fleet_chips", _F64, "chips", "Accelerators in service in the period."),
        _c("assigned_chips", _F64, "chips", "Accelerators serving a customer."),
        _c("idle_chips", _F64, "chips", "Accelerators in service serving no one."),
        _c("it_mw", _F64, "MW", "All-in IT power of the fleet (rated)."),
    ),
    "production": (
        _CHIP,
        _PERIOD,
        _c("produced_chips", _F64, "chips", "Accelerators produced in the period."),
        _c("installed_chips", _F64, "chips", "Accelerators installed in the period."),
        _c("inventory_chips", _F64, "chips", "Produced but not yet installed, end of period."),
    ),
    "supply_utilisation": (
        _c("resource", _STR, "", "Supply resource ID."),
        _PERIOD,
        _c("used", _F64, "resource unit", "Units of the resource consumed."),
        _c("capacity", _F64, "resource unit", "Units of the resource available."),
        _c("utilisation", _F64, "share", "used / capacity (0-1; NaN when capacity is 0)."),
        _c(
            "shadow_price_usd_per_unit",
            _F64,
            "USD per resource unit",
            _DUAL + "per unit of the resource.",
        ),
    ),
    "assignment": (
        _CHIP,
        _SITE,
        _CUSTOMER,
        _WORKLOAD,
        _PERIOD,
        _c("chips", _F64, "chips", "Accelerators serving the customer's workload."),
        _c("h100e", _F64, "H100e", "Effective compute delivered (after derate)."),
        _c("it_mw", _F64, "MW", "All-in IT power of the assigned chips (rated)."),
    ),
    "demand": (
        _CUSTOMER,
        _WORKLOAD,
        _PERIOD,
        _c(
            "regions",
            _STR,
            "",
            "Site regions that may serve the demand, ';'-separated ('' = anywhere).",
        ),
        _c("demand_h100e", _F64, "H100e", "Compute wanted."),
        _c("served_h100e", _F64, "H100e", "Compute delivered."),
        _c("unmet_h100e", _F64, "H100e", "Compute not delivered (penalised)."),
        _c("served_share", _F64, "share", "served / demand (0-1; NaN when demand is 0)."),
        _c(
            "shadow_price_usd_per_h100e",
            _F64,
            "USD/H100e",
            _DUAL + "per H100e of demand in the period.",
        ),
    ),
    "site_utilisation": (
        _SITE,
        _PERIOD,
        _c("limit", _STR, "", "Limit (power | liquid | grid | water)."),
        _c("used", _F64, "column 'unit'", "Amount of the limit used."),
        _c("capacity", _F64, "column 'unit'", "Amount available."),
        _c("unit", _STR, "", "Unit of used and capacity (MW, m3 ...)."),
        _c("utilisation", _F64, "share", "used / capacity (0-1; NaN when capacity is 0)."),
        _c("shadow_price_usd_per_unit", _F64, _PER_UNIT, _DUAL + "per unit of the limit."),
    ),
    "commitments": (
        _CUSTOMER,
        _c("family", _STR, "", "Chip family of the commitment."),
        _PERIOD,
        _c("min_it_mw", _F64, "MW", "Contracted minimum IT power."),
        _c("delivered_it_mw", _F64, "MW", "IT power delivered on the family."),
        _c("breach_mw", _F64, "MW", "Shortfall below the commitment (penalised)."),
        _c("shadow_price_usd_per_mw", _F64, "USD/MW", _DUAL + "per MW of commitment."),
    ),
    "costs": (
        _PERIOD,
        _c(
            "term",
            _STR,
            "",
            "Cost term (chip_capex | build_capex | retrofit_capex | energy | unmet_penalty | "
            "breach_penalty | grid_upgrade | onsite_power | carbon | cluster_switch).",
        ),
        _c(
            "cost_usd",
            _F64,
            "USD",
            "Discounted cost as in the objective (capex as straight-line rent inside the horizon).",
        ),
        _c("undiscounted_cost_usd", _F64, "USD", "Objective cost before discounting."),
        _c(
            "cash_usd",
            _F64,
            "USD",
            "Undiscounted cash out in the period: chips at full price when installed, "
            "buildings when decided, retrofits when done, energy as billed; penalties 0.",
        ),
        _c("cash_kind", _STR, "", "capex | opex | none (penalties are not cash)."),
    ),
    "energy": (
        _SITE,
        _PERIOD,
        _c("it_mwh", _F64, "MWh", "IT energy."),
        _c("facility_mwh", _F64, "MWh", "Facility energy (IT energy x PUE)."),
        _c("water_m3", _F64, "m3", "Water drawn (IT MWh x WUE)."),
        _c("energy_cost_usd", _F64, "USD", "Undiscounted cost of facility energy."),
        _c("carbon_t", _F64, "t CO2", "Emissions of facility energy."),
    ),
    "shadow_prices": (
        _c("family", _STR, "", "Constraint family (site_grid, supply_resource ...)."),
        _PERIOD,
        _c("key", _STR, "", "Row of the family, parts joined by '/' (site, chip/site ...)."),
        _c("shadow_price", _F64, "column 'unit'", _DUAL + "in USD per unit of the row."),
        _c("unit", _STR, "", "Unit of shadow_price (USD/MW, USD/m3, USD/wafers ...)."),
        _c(
            "slack",
            _F64,
            "row unit (column 'unit' without 'USD/')",
            "Unused room of the constraint (rhs - lhs for <=, lhs - rhs for >=).",
        ),
        _c("binding", _BOOL, "", "True when slack <= 1e-6 * (1 + |rhs|)."),
    ),
    # Power as a decision (issue 12; optimizer.plan.power_results).
    "power_sources": (
        _SITE,
        _PERIOD,
        _c("source", _STR, "", "Power source: grid, onsite:<technology> or ppa:<contract>."),
        _c(
            "capacity_mw",
            _F64,
            "MW",
            "Grid: granted + energised upgrades; on-site: nameplate online; PPA: contracted.",
        ),
        _c("energy_mwh", _F64, "MWh", "Facility energy bought from the source."),
        _c(
            "cost_usd",
            _F64,
            "USD",
            "Undiscounted cost: energy at its price plus upgrade rent (grid) or capex rent "
            "and fixed cost (on-site).",
        ),
        _c("carbon_t", _F64, "t CO2", "Emissions of the energy."),
    ),
    "power_decisions": (
        _SITE,
        _c("kind", _STR, "", "grid_upgrade | onsite | ppa."),
        _c("option", _STR, "", "Upgrade option, technology or contract ID."),
        _c("decision_period", _STR, "quarter", "Quarter the request, order or contract is made."),
        _c("online_period", _STR, "quarter", "First quarter the MW are available."),
        _c("mw", _F64, "MW", "MW requested or built; PPA: largest average MW taken."),
        _c("capex_usd_per_mw", _F64, "USD/MW", "Upgrade cost or on-site capex per MW."),
        _c(
            "energy_usd_per_mwh",
            _F64,
            "USD/MWh",
            "Energy cost of the source (fuel + O&M, or PPA price).",
        ),
        _c("grid_price_usd_per_mwh", _F64, "USD/MWh", "The site's grid price, for comparison."),
        _c("carbon_t_per_mwh", _F64, "t CO2/MWh", "Emissions per MWh of the source."),
    ),
    # One row per customer, period and site hosting the customer's training (issue 14).
    "training_clusters": (
        _CUSTOMER,
        _PERIOD,
        _SITE,
        _c("it_mw", _F64, "MW", "All-in IT power of the customer's training chips at the site."),
        _c("h100e", _F64, "H100e", "Training compute there (after derate)."),
        _c("chips", _F64, "chips", "Training accelerators there."),
        _c("chips_by_generation", _STR, "chips", "Chips per generation, 'chip:chips;...'."),
        _c("min_cluster_mw", _F64, "MW", "Minimum cluster size of the rule (0: none)."),
        _c("min_cluster_h100e", _F64, "H100e", "Minimum cluster size of the rule (0: none)."),
        _c("meets_minimum", _BOOL, "", "True when the site's training meets both minimums."),
        _c("sites_in_period", _F64, "sites", "Sites hosting the customer's training then."),
        _c("max_sites", _F64, "sites", "Most sites of the rule (0: no limit)."),
        _c("within_max_sites", _BOOL, "", "True when sites_in_period <= max_sites."),
        _c("cluster_start", _BOOL, "", "True when the site did not host it the period before."),
        _c(
            "enforced",
            _BOOL,
            "",
            "True when the solve had exact cluster binaries (--clusters / --integer-units); "
            "False: LP mode, the rule is reported, not enforced.",
        ),
    ),
    # Rows of the independent checker (optimizer.plan.check.VIOLATION_COLUMNS): one per
    # constraint recomputed from the solution and violated beyond tolerance.
    "violations": (
        _c("family", _STR, "", "Constraint family (or bounds / eligibility)."),
        _c("constraint", _STR, "", "Constraint row, e.g. site_grid[alpha|2026Q2]."),
        _c("keys", _STR, "", "Domain keys of the row."),
        _c("lhs", _F64, "constraint unit", "Left-hand side recomputed from the solution."),
        _c("rhs", _F64, "constraint unit", "Limit."),
        _c("violation", _F64, "constraint unit", "Amount by which the limit is exceeded."),
    ),
    # The plan held against the public record (optimizer.plan.calibration defines metrics).
    "calibration": (
        _c("metric", _STR, "", "Metric (formula in optimizer/plan/calibration.py)."),
        _c("scope", _STR, "", "What the figure covers ('fleet' or filters like chip:x)."),
        _c("period", _STR, "quarter", "Quarter (annual metrics: last quarter of the year)."),
        _c("record_value", _F64, "column 'unit'", "The publicly reported figure."),
        _c("record_low", _F64, "column 'unit'", "Lowest plan value counted as agreeing."),
        _c("record_high", _F64, "column 'unit'", "Highest plan value counted as agreeing."),
        _c("plan_value", _F64, "column 'unit'", "The plan's value (metric / plan_share)."),
        _c("unit", _STR, "", "Unit of the values."),
        _c("ratio", _F64, "", "plan_value / record_value (null when the record is 0)."),
        _c("inside_band", _BOOL, "", "record_low <= plan_value <= record_high."),
        _c("matchable", _BOOL, "", "True when the row is scored (model can match it)."),
        _c("reason", _STR, "", "Why the row is not matchable (empty when it is)."),
        _c("source", _STR, "", "Public address of the figure."),
    ),
    # Rows of the elastic re-solve of an infeasible model (optimizer.plan.explain): which
    # limits had to give. The explainer's ``scenario`` position column is dropped.
    "infeasibility": (
        _c("family", _STR, "", "Constraint family."),
        _c("period", _STR, "quarter", "Period."),
        _c("key", _STR, "", "Row of the family (site, resource, chip ...)."),
        _c("amount", _F64, "column 'unit'", "Amount the limit had to give."),
        _c("unit", _STR, "", "Unit of the amount."),
        _c("message", _STR, "", "The shortfall in domain words."),
    ),
    # One row per scenario: the plan's headline numbers.
    "summary": (
        _c("status", _STR, "", "Solve status."),
        _c("objective_usd", _F64, "USD", "Discounted objective (null without a solution)."),
        _c("solver", _STR, "", "Solver that ran (a name capacity solvers lists)."),
        _c("message", _STR, "", "Solver or checker message."),
        _c("dataset_name", _STR, "", "Dataset name."),
        _c("dataset_hash", _STR, "", "sha256 of the solved dataset (scenario applied)."),
        _c("integer_units", _BOOL, "", "True when whole deployment units were enforced."),
        _c("duals_from", _STR, "", "Where the shadow prices come from."),
        _c("mip_bound_usd", _F64, "USD", "MIP best bound (null for an LP or when unknown)."),
        _c("mip_gap", _F64, "share", "MIP relative gap |objective - bound| / |objective|."),
        _c("duals_note", _STR, "", "Why shadow prices are null ('' when available)."),
        _c("n_variables", _I64, "", "LP variables."),
        _c("n_constraints", _I64, "", "LP constraints."),
        _c("total_time_s", _F64, "s", "Sum of the recorded timings."),
        _c("timings_json", _STR, "", "Timings of each step, JSON {step: seconds}."),
        _c("demand_h100e", _F64, "H100e", "Demand summed over the periods."),
        _c("served_h100e", _F64, "H100e", "Served compute summed over the periods."),
        _c("served_share", _F64, "share", "served_h100e / demand_h100e."),
        _c("facility_mwh", _F64, "MWh", "Facility energy over the horizon."),
        _c("water_m3", _F64, "m3", "Water over the horizon."),
        _c("n_violations", _I64, "", "Rows of the violations table."),
    ),
}
