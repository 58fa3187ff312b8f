"""Input tables of sites and their power: campus, pipeline, grid, water, generation, PPAs."""

from __future__ import annotations

from capacity.spec_types import SITE_REF, Column, TableSpec, id_col, num_col, period_col

SITES = TableSpec(
    "sites",
    "A data-center campus that can host accelerators.",
    (
        id_col("site", "Site ID."),
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
        num_col("initial_it_mw", "MW", "IT capacity built before the horizon."),
        num_col(
            "initial_liquid_mw",
            "MW",
            "Part of the initial IT capacity fitted for liquid cooling.",
            required=False,
            default=0.0,
        ),
        num_col("max_it_mw", "MW", "Largest IT capacity the campus can ever hold."),
        num_col(
            "max_build_mw_per_period",
            "MW",
            "Most new IT MW that can be built in one period (construction rate).",
        ),
        num_col(
            "liquid_share_max",
            "",
            "Largest share of new capacity that can be fitted for liquid cooling.",
            max=1.0,
            required=False,
            default=1.0,
        ),
        num_col(
            "pue_air",
            "",
            "Power usage effectiveness of air-cooled halls (facility power / IT power).",
            min=1.0,
            warn_max=2.0,
        ),
        num_col("pue_liquid", "", "PUE of liquid-cooled halls.", min=1.0, warn_max=2.0),
        num_col(
            "wue_l_per_kwh_air",
            "L/kWh",
            "Water usage effectiveness of air-cooled halls "
            "(litres per IT kWh, equal to m3 per IT MWh).",
            warn_max=5.0,
        ),
        num_col("wue_l_per_kwh_liquid", "L/kWh", "WUE of liquid-cooled halls.", warn_max=5.0),
        num_col(
            "build_capex_usd_per_mw",
            "USD/MW",
            "Capital cost of one MW of new IT capacity (shell, power and cooling).",
            warn_min=1e6,
            warn_max=6e7,
        ),
        num_col(
            "energy_price_usd_per_mwh",
            "USD/MWh",
            "Price of facility energy.",
            warn_min=10.0,  # USD/kWh typed for USD/MWh reads 0.04-0.1
            warn_max=500.0,
        ),
        num_col(
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
        num_col(
            "lead_time_periods",
            "quarters",
            "Construction lead time: IT MW decided in period p is usable from p + lead.",
            dtype="int",
            required=False,
            default=0,
            warn_max=16.0,
        ),
        num_col(
            "retrofit_mw_per_period",
            "MW",
            "Most air-cooled IT MW that can be converted to liquid cooling in one period "
            "(0: no retrofit).",
            required=False,
            default=0.0,
        ),
        num_col(
            "retrofit_capex_usd_per_mw",
            "USD/MW",
            "Capital cost of converting one air-cooled IT MW to liquid cooling.",
            required=False,
            default=0.0,
            warn_max=2e7,
        ),
        num_col(
            "retrofit_downtime_share",
            "",
            "Share of the period a converted MW is out of service in its retrofit period.",
            max=1.0,
            required=False,
            default=0.0,
        ),
    ),
    key=("site",),
    when_empty=(
        "error",
        "there is nowhere to build or install; add a site",
    ),
)

SITE_PIPELINE = TableSpec(
    "site_pipeline",
    "IT capacity already under construction at a site before the horizon, with the "
    "quarter it comes online (usable from then on; its capex is sunk).",
    (
        id_col("site", "Site ID.", SITE_REF),
        period_col("online_period", "Quarter the capacity comes online.", in_horizon=False),
        num_col("it_mw", "MW", "IT MW coming online."),
        num_col(
            "liquid_mw",
            "MW",
            "Part of it fitted for liquid cooling.",
            required=False,
            default=0.0,
        ),
    ),
    key=("site", "online_period"),
    required=False,
)

SITE_GRID = TableSpec(
    "site_grid",
    "Grid interconnect available to a site in a period (a schedule: a delay shifts rows).",
    (
        id_col("site", "Site ID.", SITE_REF),
        period_col("period", "Period."),
        num_col(
            "grid_mw",
            "MW",
            "Facility power the grid can deliver (IT power x PUE must fit).",
            warn_max=1e4,  # 10 GW at one site: kW typed for MW reads 1000x
        ),
    ),
    key=("site", "period"),
)

SITE_WATER = TableSpec(
    "site_water",
    "Water a site may draw in a period under its permits.",
    (
        id_col("site", "Site ID.", SITE_REF),
        period_col("period", "Period."),
        num_col("water_permit_m3", "m3", "Water permitted in the period."),
    ),
    key=("site", "period"),
)

GRID_UPGRADES = TableSpec(
    "grid_upgrades",
    "An option to raise a site's grid interconnection beyond the granted site_grid "
    "schedule: MW requested in a decision period are energised lead_periods later.",
    (
        id_col("site", "Site ID.", SITE_REF),
        id_col("option", "Upgrade option ID (e.g. substation_expansion)."),
        num_col("cost_usd_per_mw", "USD/MW", "Cost of one MW of added interconnection."),
        num_col(
            "lead_periods",
            "quarters",
            "Queue and construction time from the decision to energisation.",
            dtype="int",
        ),
        num_col(
            "max_mw_per_period",
            "MW",
            "Most MW that can be requested in one decision period (one request).",
        ),
        num_col("max_mw_total", "MW", "Most MW the option can add over the horizon."),
        num_col(
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
)

ONSITE_GENERATION = TableSpec(
    "onsite_generation",
    "An on-site generation technology a site may build (gas turbines, reciprocating "
    "engines, fuel cells): firm capacity adds to the site's facility power.",
    (
        id_col("site", "Site ID.", SITE_REF),
        id_col("technology", "Technology ID (e.g. recip_engine, fuel_cell)."),
        num_col("capex_usd_per_mw", "USD/MW", "Capital cost of one MW of nameplate capacity."),
        num_col(
            "fixed_cost_usd_per_mw_year",
            "USD/(MW·year)",
            "Fixed operating cost per MW of capacity online.",
            required=False,
            default=0.0,
        ),
        num_col(
            "variable_cost_usd_per_mwh",
            "USD/MWh",
            "Variable cost per MWh generated (O&M; or an all-in cost per MWh).",
            required=False,
            default=0.0,
        ),
        num_col(
            "fuel_price_usd_per_mmbtu",
            "USD/MMBtu",
            "Fuel price; fuel cost per MWh = fuel price x heat rate.",
            required=False,
            default=0.0,
        ),
        num_col(
            "heat_rate_mmbtu_per_mwh",
            "MMBtu/MWh",
            "Fuel burnt per MWh generated.",
            required=False,
            default=0.0,
        ),
        num_col("carbon_t_per_mwh", "t CO2/MWh", "CO2 emitted per MWh generated."),
        num_col(
            "lead_periods",
            "quarters",
            "Delivery and build time from the decision to first power.",
            dtype="int",
        ),
        num_col(
            "availability",
            "",
            "Firm share of nameplate (derating for outages and N+1 redundancy); the "
            "MWh per period are at most availability x MW x hours.",
            min=0.0,
            max=1.0,
        ),
        num_col("max_mw", "MW", "Most nameplate MW at the site (air permit, gas supply)."),
        num_col(
            "initial_mw",
            "MW",
            "Capacity already built before the horizon.",
            required=False,
            default=0.0,
        ),
        num_col(
            "lifetime_periods",
            "quarters",
            "Life over which capex is charged as rent.",
            dtype="int",
            min=1.0,
            required=False,
            default=80,
        ),
        Column(
            "bridge",
            "choice",
            "",
            "'yes': bridge power (fuel cells, mobile turbines, batteries): capex paid when "
            "built, salvage_usd_per_mw back when retired (or at the end of the horizon), "
            "so the plan can retire it once the grid arrives; 'no': permanent plant, "
            "capex charged as rent over lifetime_periods.",
            required=False,
            default="no",
            choices=("yes", "no"),
        ),
        num_col(
            "salvage_usd_per_mw",
            "USD/MW",
            "Bridge only: value recovered per MW retired (resale, lease return).",
            required=False,
            default=0.0,
        ),
        num_col(
            "storage_hours",
            "hours",
            "Battery duration at full MW (0: a generator). A battery adds its MW to the "
            "site's facility power but no energy: in the quarterly model it only covers "
            "peaks, the energy still comes from the grid or generation.",
            required=False,
            default=0.0,
        ),
    ),
    key=("site", "technology"),
    required=False,
)

PPAS = TableSpec(
    "ppas",
    "One step of a power purchase agreement: MW available from from_period at a price; "
    "a contract is one or more steps (a ramp).",
    (
        id_col("contract", "Contract ID."),
        period_col("from_period", "First period of this step.", in_horizon=False),
        period_col(
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
            references=("sites", "site"),
        ),
        Column(
            "region",
            "str",
            "",
            "Region whose sites may take the energy (when site is empty).",
            required=False,
            default="",
        ),
        num_col("mw", "MW", "Contracted MW available in the step."),
        num_col("price_usd_per_mwh", "USD/MWh", "Price of the contract's energy."),
        num_col("carbon_t_per_mwh", "t CO2/MWh", "CO2 per MWh of the contract's energy."),
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
        num_col(
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
)

CARBON_POLICY = TableSpec(
    "carbon_policy",
    "Carbon price and cap of the scenario: a row with an empty period applies to the "
    "whole horizon (its price to every period without a row of its own, its cap to "
    "the horizon total); a row with a period sets that period's price and cap.",
    (
        period_col(
            "period",
            "Period of the row (empty: the whole horizon).",
            required=False,
        ),
        num_col(
            "carbon_price_usd_per_t",
            "USD/t CO2",
            "Carbon price charged in the objective on every t emitted.",
            required=False,
            default=0.0,
        ),
        num_col(
            "carbon_cap_t",
            "t CO2",
            "Most CO2 emitted (in the period, or over the horizon); empty: no cap.",
            required=False,
            default=float("nan"),
        ),
    ),
    key=("period",),
    required=False,
)
