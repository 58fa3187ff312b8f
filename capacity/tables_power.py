"""Input tables of speed to power: equipment order books and their bill of materials.

* ``equipment_order_books``: slots a vendor class can deliver to this planner per
  period (MW of gas turbines or engines, units of large power transformers);
* ``power_bill_of_materials``: slots one MW of an on-site technology or of a grid
  upgrade option draws, in the period it comes online;
* ``flexible_interconnection``: a grid upgrade energised earlier when the site accepts
  curtailment of a share of hours.

:func:`capacity.power_checks.check_power_equipment` holds the cross-table rules (a
bill-of-materials row for an unknown technology, a curtailment share outside [0, 1), a
flexible lead longer than the normal lead).
"""

from __future__ import annotations

from capacity.spec_types import SITE_REF, Column, TableSpec, id_col, num_col, period_col

__all__ = [
    "EQUIPMENT_ORDER_BOOKS",
    "FLEXIBLE_INTERCONNECTION",
    "POWER_BILL_OF_MATERIALS",
]

EQUIPMENT_ORDER_BOOKS = TableSpec(
    "equipment_order_books",
    "Power equipment a vendor class can deliver to this planner in a period (its open "
    "order book): MW of turbines or engines, units of large power transformers.",
    (
        id_col("resource", "Order-book ID (heavy_duty_gas_turbine_mw, large_transformers ...)."),
        period_col("period", "Period the equipment is delivered (capacity comes online)."),
        num_col("capacity", "resource unit", "Units the vendor class can deliver in the period."),
        Column(
            "unit",
            "str",
            "",
            "The order book's own unit (MW, transformers ...).",
            required=False,
            default="units",
        ),
    ),
    key=("resource", "period"),
    required=False,
)

POWER_BILL_OF_MATERIALS = TableSpec(
    "power_bill_of_materials",
    "Order-book units one MW of an on-site technology or of a grid upgrade option draws "
    "in the period it comes online.",
    (
        id_col(
            "technology",
            "An onsite_generation technology or a grid_upgrades option.",
        ),
        id_col("resource", "Order-book ID (equipment_order_books.resource)."),
        num_col("per_mw", "resource unit/MW", "Units of the order book per MW online."),
    ),
    key=("technology", "resource"),
    required=False,
)

FLEXIBLE_INTERCONNECTION = TableSpec(
    "flexible_interconnection",
    "A flexible offer on a grid upgrade option: its MW are energised after "
    "flexible_lead_periods instead of lead_periods if the site accepts curtailment of "
    "curtailment_share of the hours until the normal lead has passed.",
    (
        id_col("site", "Site ID.", SITE_REF),
        id_col("option", "Grid upgrade option (grid_upgrades.option at that site)."),
        num_col(
            "flexible_lead_periods",
            "quarters",
            "Lead from the request to first (curtailable) power; at most lead_periods.",
            dtype="int",
        ),
        num_col(
            "curtailment_share",
            "",
            "Share of the hours of a quarter in which the flexible MW may be cut, in [0, 1).",
            max=1.0,
        ),
        num_col(
            "checkpoint_cost_usd_per_mwh",
            "USD/MWh",
            "Cost of pausing training at a checkpoint, per MWh curtailed.",
            required=False,
            default=0.0,
        ),
        num_col(
            "inference_sla_share",
            "",
            "Share of the site's inference load that must stay up in curtailed hours "
            "(it must fit the firm, non-curtailable supply).",
            max=1.0,
            required=False,
            default=1.0,
        ),
    ),
    key=("site", "option"),
    required=False,
)
