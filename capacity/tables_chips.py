"""Input tables of chips and their supply: chips, supply resources, bill of materials, fleet."""

from __future__ import annotations

from capacity.spec_types import (
    CHIP_REF,
    RESOURCE_REF,
    SITE_REF,
    Column,
    TableSpec,
    id_col,
    num_col,
    period_col,
)

CHIPS = TableSpec(
    "chips",
    "An accelerator generation that can be produced and installed.",
    (
        id_col("chip", "Chip ID."),
        Column("display_name", "str", "", "Name shown to people.", required=False, default=""),
        Column("vendor", "str", "", "Designer (nvidia, aws ...)."),
        Column(
            "family",
            "str",
            "",
            "Commitment family (nvidia, trainium ...); commitments are stated per family.",
        ),
        num_col(
            "it_kw_per_chip",
            "kW",
            "All-in IT power per accelerator: chip, host, network share.",
            min=0.0,
            min_exclusive=True,
            warn_min=0.1,  # MW typed for kW reads 0.0007-0.003
            warn_max=4.0,
        ),
        Column(
            "cooling",
            "choice",
            "",
            "Cooling the chip needs.",
            choices=("air", "liquid", "either"),
        ),
        period_col(
            "first_period",
            "First quarter of the sale window (may precede the horizon).",
            in_horizon=False,
        ),
        period_col("last_period", "Last quarter of the sale window.", in_horizon=False),
        num_col(
            "lifetime_periods",
            "quarters",
            "Service life after installation.",
            dtype="int",
            min=1.0,
        ),
        num_col(
            "capex_usd_per_chip",
            "USD/chip",
            "All-in capital cost per accelerator (chip, its server share and network).",
            warn_min=1e3,  # thousands of USD typed for USD read 4-110
            warn_max=2e5,
        ),
        num_col("training_h100e", "H100e/chip", "Training throughput in H100-equivalents."),
        num_col("inference_h100e", "H100e/chip", "Inference throughput in H100-equivalents."),
        num_col(
            "hbm_gb",
            "GB",
            "HBM capacity per chip.",
            warn_min=8.0,  # TB typed for GB reads 0.08-0.3
            warn_max=2048.0,  # MB typed for GB reads 80,000 and more
        ),
        Column(
            "unit_name",
            "str",
            "",
            "Deployment unit (HGX 8-GPU server, NVL72 rack, UltraServer ...).",
            required=False,
            default="chip",
        ),
        num_col(
            "chips_per_unit",
            "chips",
            "Accelerators per deployment unit (8 for HGX, "
            "72 for NVL72, 64/144 for Trainium UltraServers).",
            dtype="int",
            min=1.0,
            required=False,
            default=1,
        ),
        num_col(
            "idle_power_factor",
            "",
            "Draw of an installed chip serving no one, as a share of its all-in IT kW.",
            max=1.0,
            required=False,
            default=0.3,
        ),
        num_col(
            "delivery_lag_periods",
            "quarters",
            "Chips produced in period p can be installed from p + lag (server build "
            "and shipping); production runs lag quarters ahead of the sale window.",
            dtype="int",
            required=False,
            default=0,
            warn_max=8.0,
        ),
        num_col(
            "opening_inventory_chips",
            "chips",
            "Chips produced before the horizon and not yet installed at its start (in "
            "transit); installable from the first period.",
            required=False,
            default=0.0,
        ),
    ),
    key=("chip",),
    when_empty=(
        "error",
        "there is no chip to buy; add a chip",
    ),
)

SUPPLY_RESOURCES = TableSpec(
    "supply_resources",
    "Capacity of a supply-chain resource (wafers, CoWoS, HBM) in a period.",
    (
        id_col("resource", "Resource ID (tsmc_n3_wafers, cowos_wafers, hbm_stacks ...)."),
        period_col("period", "Period."),
        num_col(
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
    when_empty=(
        "warning",
        "no wafer, CoWoS or HBM supply limits the chips",
    ),
)

CHIP_BILL_OF_MATERIALS = TableSpec(
    "chip_bill_of_materials",
    "Units of a supply resource consumed per chip produced.",
    (
        id_col("chip", "Chip ID.", CHIP_REF),
        id_col("resource", "Resource ID.", RESOURCE_REF),
        num_col(
            "per_chip",
            "resource unit/chip",
            "Units of the resource per good chip "
            "(wafers per good die, CoWoS wafers per package, HBM stacks per chip).",
        ),
    ),
    key=("chip", "resource"),
    when_empty=(
        "warning",
        "no chip draws on a supply resource, so wafer, CoWoS and HBM limits do not apply",
    ),
)

INITIAL_FLEET = TableSpec(
    "initial_fleet",
    "Accelerators installed before the horizon.",
    (
        id_col("chip", "Chip ID.", CHIP_REF),
        id_col("site", "Site ID.", SITE_REF),
        num_col("chips", "chips", "Accelerators installed."),
        period_col(
            "install_period",
            "Quarter of installation (before the horizon "
            "normally); they retire lifetime_periods later.",
            in_horizon=False,
        ),
    ),
    key=("chip", "site", "install_period"),
    required=False,
)
