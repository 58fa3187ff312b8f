"""Plan-wide result tables: costs, shadow prices, violations, calibration, summary."""

from __future__ import annotations

from optimizer.components.component import ResultTable
from optimizer.components.table_columns import BOOL, DUAL, F64, I64, PERIOD, STR, col

__all__ = [
    "COSTS",
    "SHADOW_PRICES",
    "VIOLATIONS",
    "CALIBRATION",
    "INFEASIBILITY",
    "SUMMARY",
    "TABLES",
]


COSTS = ResultTable(
    "costs",
    (
        PERIOD,
        col(
            "term",
            STR,
            "",
            "Cost term (build_capex | retrofit_capex | chip_capex | unmet_penalty | "
            "breach_penalty | revenue | cluster_switch | energy | grid_upgrade | onsite_power | "
            "carbon | take_or_pay_refund | reservation_refund | sla_credit | "
            "take_or_pay_billing | reservation_fee | migration_cost | curtailment; revenue "
            "and billings are negative costs).",
        ),
        col(
            "cost_usd",
            F64,
            "USD",
            "Discounted cost as in the objective (capex as straight-line rent inside the horizon).",
        ),
        col("undiscounted_cost_usd", F64, "USD", "Objective cost before discounting."),
        col(
            "cash_usd",
            F64,
            "USD",
            "Undiscounted cash out in the period: chips at full price when installed, "
            "buildings when decided, retrofits when done, grid upgrades (normal and "
            "flexible MW) when requested, energy and on-site power as billed (bridge "
            "power bought and salvaged), revenue as earned (negative); penalties 0.",
        ),
        col(
            "cash_kind",
            STR,
            "",
            "capex | opex | revenue | none (penalties and cluster switches are not cash).",
        ),
    ),
)

SHADOW_PRICES = ResultTable(
    "shadow_prices",
    (
        col("family", STR, "", "Constraint family (site_grid, supply_resource ...)."),
        PERIOD,
        col("key", STR, "", "Row of the family, parts joined by '/' (site, chip/site ...)."),
        col("shadow_price", F64, "column 'unit'", DUAL + "in USD per unit of the row."),
        col("unit", STR, "", "Unit of shadow_price (USD/MW, USD/m3, USD/wafers ...)."),
        col(
            "slack",
            F64,
            "row unit (column 'unit' without 'USD/')",
            "Unused room of the constraint (rhs - lhs for <=, lhs - rhs for >=).",
        ),
        col("binding", BOOL, "", "True when slack <= 1e-6 * (1 + |rhs|)."),
    ),
)

VIOLATIONS = ResultTable(
    "violations",
    (
        col("family", STR, "", "Constraint family (or bounds / eligibility)."),
        col("constraint", STR, "", "Constraint row, e.g. site_grid[alpha|2026Q2]."),
        col("keys", STR, "", "Domain keys of the row."),
        col("lhs", F64, "constraint unit", "Left-hand side recomputed from the solution."),
        col("rhs", F64, "constraint unit", "Limit."),
        col("violation", F64, "constraint unit", "Amount by which the limit is exceeded."),
    ),
)

CALIBRATION = ResultTable(
    "calibration",
    (
        col("metric", STR, "", "Metric (formula in optimizer/plan/calibration.py)."),
        col("scope", STR, "", "What the figure covers ('fleet' or filters like chip:x)."),
        col("period", STR, "quarter", "Quarter (annual metrics: last quarter of the year)."),
        col("record_value", F64, "column 'unit'", "The publicly reported figure."),
        col("record_low", F64, "column 'unit'", "Lowest plan value counted as agreeing."),
        col("record_high", F64, "column 'unit'", "Highest plan value counted as agreeing."),
        col("plan_value", F64, "column 'unit'", "The plan's value (metric / plan_share)."),
        col("unit", STR, "", "Unit of the values."),
        col("ratio", F64, "", "plan_value / record_value (null when the record is 0)."),
        col("inside_band", BOOL, "", "record_low <= plan_value <= record_high."),
        col("matchable", BOOL, "", "True when the row is scored (model can match it)."),
        col("reason", STR, "", "Why the row is not matchable (empty when it is)."),
        col("source", STR, "", "Public address of the figure."),
        col("kind", STR, "", "'plan' (tests a decision, scored) or 'input_check' (not)."),
        col("tests", STR, "", "What in the plan the row tests."),
    ),
)

INFEASIBILITY = ResultTable(
    "infeasibility",
    (
        col("family", STR, "", "Constraint family."),
        col("period", STR, "quarter", "Period."),
        col("key", STR, "", "Row of the family (site, resource, chip ...)."),
        col("amount", F64, "column 'unit'", "Amount the limit had to give."),
        col("unit", STR, "", "Unit of the amount."),
        col("message", STR, "", "The shortfall in domain words."),
    ),
)

SUMMARY = ResultTable(
    "summary",
    (
        col("status", STR, "", "Solve status."),
        col("objective_usd", F64, "USD", "Discounted objective (null without a solution)."),
        col("solver", STR, "", "Solver that ran (a name capacity solvers lists)."),
        col("message", STR, "", "Solver or checker message."),
        col("dataset_name", STR, "", "Dataset name."),
        col("dataset_hash", STR, "", "sha256 of the solved dataset (scenario applied)."),
        col("integer_units", BOOL, "", "True when whole deployment units were enforced."),
        col("duals_from", STR, "", "Where the shadow prices come from."),
        col("mip_bound_usd", F64, "USD", "MIP best bound (null for an LP or when unknown)."),
        col("mip_gap", F64, "share", "MIP relative gap |objective - bound| / |objective|."),
        col("duals_note", STR, "", "Why shadow prices are null ('' when available)."),
        col("n_variables", I64, "", "LP variables."),
        col("n_constraints", I64, "", "LP constraints."),
        col("total_time_s", F64, "s", "Sum of the recorded timings."),
        col("timings_json", STR, "", "Timings of each step, JSON {step: seconds}."),
        col("demand_h100e", F64, "H100e", "Demand summed over the periods (null: no plan)."),
        col("served_h100e", F64, "H100e", "Served compute over the periods (null: no plan)."),
        col("served_share", F64, "share", "served_h100e / demand_h100e."),
        col("facility_mwh", F64, "MWh", "Facility energy over the horizon (null: no plan)."),
        col("water_m3", F64, "m3", "Water over the horizon (null: no plan)."),
        col("n_violations", I64, "", "Rows of the violations table."),
    ),
)

#: The tables of this part of the plan.
TABLES: tuple[ResultTable, ...] = (
    COSTS,
    SHADOW_PRICES,
    VIOLATIONS,
    CALIBRATION,
    INFEASIBILITY,
    SUMMARY,
)
