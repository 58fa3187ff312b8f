"""Input tables of customers and their demand: demand, eligibility, commitments, clusters."""

from __future__ import annotations

from capacity.spec_types import (
    CHIP_REF,
    CUSTOMER_REF,
    WORKLOAD_REF,
    Column,
    TableSpec,
    id_col,
    num_col,
    period_col,
)

CUSTOMERS = TableSpec(
    "customers",
    "A customer served from the fleet.",
    (
        id_col("customer", "Customer ID."),
        Column("display_name", "str", "", "Name shown to people.", required=False, default=""),
        num_col(
            "price_training_usd_per_h100e_period",
            "USD/(H100e·quarter)",
            "Price the customer pays for one H100e of training for a quarter (the margin "
            "objective's revenue; no effect in the cost objective).",
        ),
        num_col(
            "price_inference_usd_per_h100e_period",
            "USD/(H100e·quarter)",
            "Price for one H100e of inference for a quarter (margin objective only).",
        ),
        num_col(
            "unmet_penalty_usd_per_h100e_period",
            "USD/(H100e·quarter)",
            "Cost of one H100e of demand left unserved for a quarter.",
        ),
    ),
    key=("customer",),
    when_empty=(
        "error",
        "there is no customer to serve; add one",
    ),
)

WORKLOADS = TableSpec(
    "workloads",
    "A kind of work and how hard it drives the chips.",
    (
        Column("workload", "choice", "", "Workload.", choices=("training", "inference")),
        num_col(
            "power_factor",
            "",
            "Average draw while serving, as a share of all-in IT kW.",
            max=1.0,
            min_exclusive=True,
        ),
    ),
    key=("workload",),
    when_empty=(
        "error",
        "demand has no workload (training, inference); add them",
    ),
)

DEMAND = TableSpec(
    "demand",
    "Compute a customer wants in a period.",
    (
        id_col("customer", "Customer ID.", CUSTOMER_REF),
        Column(
            "workload",
            "choice",
            "",
            "Workload.",
            choices=("training", "inference"),
            references=WORKLOAD_REF,
        ),
        period_col("period", "Period."),
        num_col("demand_h100e", "H100e", "Compute wanted, in H100-equivalents."),
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
    when_empty=(
        "warning",
        "there is no demand to plan for, so the plan builds and buys nothing for it",
    ),
)

ELIGIBILITY = TableSpec(
    "eligibility",
    "A chip a customer may run on, with the migration derate (absent row: not allowed).",
    (
        id_col("customer", "Customer ID.", CUSTOMER_REF),
        id_col("chip", "Chip ID.", CHIP_REF),
        num_col(
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
    when_empty=(
        "error",
        "no chip may serve any customer, so every H100e of demand would go unmet; "
        "list the chips each customer runs on",
    ),
)

COMMITMENTS = TableSpec(
    "commitments",
    "Contracted minimum IT power a customer must get on a chip family.",
    (
        id_col("customer", "Customer ID.", CUSTOMER_REF),
        Column("family", "str", "", "Chip family (matches chips.family)."),
        period_col("from_period", "First period the commitment applies."),
        period_col(
            "to_period",
            "Last period it applies (empty: end of horizon).",
            in_horizon=False,
            required=False,
        ),
        num_col("min_it_mw", "MW", "IT MW that must serve the customer on the family."),
        num_col(
            "breach_penalty_usd_per_mw",
            "USD/(MW·quarter)",
            "Cost of each MW short for a quarter.",
        ),
    ),
    key=("customer", "family", "from_period"),
    required=False,
)

MIGRATION = TableSpec(
    "migration",
    "What moving a customer onto a chip family it has not used costs (margin objective): "
    "a one-off engineering cost, and a performance derate that starts at "
    "derate_initial in from_period and recovers linearly to none over "
    "recovery_periods quarters (on top of the eligibility derate).",
    (
        id_col("customer", "Customer ID.", CUSTOMER_REF),
        Column("family", "str", "", "Chip family the customer moves to (matches chips.family)."),
        period_col(
            "from_period",
            "Quarter the port starts: the derate is derate_initial up to it and recovers from it.",
            in_horizon=False,
        ),
        num_col(
            "migration_cost_usd",
            "USD",
            "One-off cost of the port (engineering, kernels, validation), paid in full once "
            "the family holds the customer's peak quarterly demand (pro rata to the largest "
            "share it holds).",
        ),
        num_col(
            "derate_initial",
            "share",
            "Share of performance lost on the family when the port starts, in [0, 1): the "
            "effective H100e per chip is (1 - derate_initial) x the eligibility derate.",
            max=1.0,
        ),
        num_col(
            "recovery_periods",
            "quarters",
            "Quarters after from_period by which the derate has recovered to none "
            "(linearly; 0: recovered at the start).",
            dtype="int",
        ),
    ),
    key=("customer", "family"),
    required=False,
)

TRAINING_CLUSTERS = TableSpec(
    "training_clusters",
    "Cluster rule of a customer's training from a period on: the minimum size of "
    "the training cluster at each site that hosts it, the most sites it may span, "
    "and what keeps a cluster at the same site over time (exact with --clusters or "
    "--integer-units; reported as fragmentation in LP mode).",
    (
        id_col("customer", "Customer ID.", CUSTOMER_REF),
        period_col("from_period", "First period the rule applies."),
        period_col(
            "to_period",
            "Last period it applies (empty: end of horizon).",
            in_horizon=False,
            required=False,
        ),
        num_col(
            "min_cluster_mw",
            "MW",
            "Least nameplate IT MW of the customer's training chips at a site that "
            "hosts its training (0: no MW minimum).",
            required=False,
            default=0.0,
        ),
        num_col(
            "min_cluster_h100e",
            "H100e",
            "Least training H100e (after derate) at a site that hosts the customer's "
            "training (0: no H100e minimum).",
            required=False,
            default=0.0,
        ),
        num_col(
            "max_sites",
            "sites",
            "Most sites the customer's training may span in a period (0: no limit).",
            dtype="int",
            required=False,
            default=0,
        ),
        num_col(
            "switch_cost_usd",
            "USD per cluster start",
            "Cost of starting the customer's training at a site that did not host it "
            "the period before (migration, re-validation, idle time).",
            required=False,
            default=0.0,
        ),
        num_col(
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
)

CONTRACT_TERMS = TableSpec(
    "contract_terms",
    "Terms of a customer's contract for a workload from its start to its end: the "
    "price and its escalator, a take-or-pay floor, a capacity reservation with its fee "
    "and a service tier with its credit (terms absent outside every contract: the "
    "customers table's price, no floor, no reservation, no tier).",
    (
        id_col("customer", "Customer ID.", CUSTOMER_REF),
        Column(
            "workload",
            "choice",
            "",
            "Workload the terms price.",
            choices=("training", "inference"),
            references=WORKLOAD_REF,
        ),
        period_col("from_period", "Contract start: first period the terms apply."),
        period_col(
            "to_period",
            "Contract end: last period the terms apply (empty: end of horizon).",
            in_horizon=False,
            required=False,
        ),
        num_col(
            "price_usd_per_h100e_period",
            "USD/(H100e·quarter)",
            "Contract price in the start period (empty: the customers table's price "
            "for the workload).",
            required=False,
        ),
        num_col(
            "price_escalator_per_period",
            "",
            "Price growth per quarter after the start: the price in period p is "
            "price x (1 + escalator)^(quarters since from_period); negative for a "
            "price that falls.",
            min=-0.5,
            max=1.0,
            required=False,
            default=0.0,
        ),
        num_col(
            "take_or_pay_h100e",
            "H100e",
            "Take-or-pay floor per quarter: the customer pays the price for at least "
            "this many H100e whether it uses them or not; the provider holds them "
            "(a floor not held is refunded at the price). At most the contract's "
            "largest demand.",
            required=False,
            default=0.0,
        ),
        num_col(
            "reservation_h100e",
            "H100e",
            "Capacity reserved for the customer per quarter (held whether used or not).",
            required=False,
            default=0.0,
        ),
        num_col(
            "reservation_fee_usd_per_h100e_period",
            "USD/(H100e·quarter)",
            "Fee per reserved H100e-quarter, on top of the price of what is used "
            "(refunded for reserved H100e not held).",
            required=False,
            default=0.0,
        ),
        num_col(
            "sla_served_share",
            "share",
            "Service tier: the share of the demand that must be served (0 = no tier).",
            max=1.0,
            required=False,
            default=0.0,
        ),
        num_col(
            "sla_credit_usd_per_h100e",
            "USD/H100e",
            "Credit owed per H100e served below the tier in a quarter.",
            required=False,
            default=0.0,
        ),
    ),
    key=("customer", "workload", "from_period"),
    required=False,
)
