"""Input tables of the horizon and its evidence: periods, the public record, sources."""

from __future__ import annotations

from capacity.spec_types import Column, TableSpec, num_col, period_col

PERIODS = TableSpec(
    "periods",
    "One planning period (a calendar quarter) of the horizon, in time order.",
    (
        Column("period", "period", "quarter", "Quarter label, YYYYQn (e.g. 2026Q3)."),
        num_col(
            "hours",
            "h",
            "Hours in the period.",
            min=0.0,
            min_exclusive=True,
            warn_min=2100.0,
            warn_max=2300.0,
        ),
        num_col(
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
)

RECORD_METRICS: dict[str, str] = {
    "chips_in_service": "chips",
    "chips_serving": "chips",
    "chips_installed_two_years": "chips",
    "assigned_share": "share",
    "fleet_h100e": "H100e",
    "site_it_capacity_mw": "MW",
    "it_mw_in_use": "MW",
    "it_mw_serving": "MW",
    "it_mw_added_year": "MW",
    "fleet_pue_year": "ratio",
    "fleet_wue_year": "L/kWh",
    "capex_cash_year_usd": "USD",
    "served_share_on_family": "share",
    "supply_used_share_year": "share",
    "cowos_wafers_per_month": "wafers/month",
    "delivered_cost_ratio_vs_nvidia": "ratio",
}
"""Every metric a public-record row may name, with its unit (the formulas live in
``optimizer.plan.calibration.METRICS``; a test holds the two lists equal)."""

SCOPE_VALUES: dict[str, tuple[str, str]] = {
    "chip": ("chips", "chip"),
    "family": ("chips", "family"),
    "vendor": ("chips", "vendor"),
    "site": ("sites", "site"),
    "customer": ("customers", "customer"),
    "workload": ("workloads", "workload"),
    "resource": ("supply_resources", "resource"),
    "versus": ("chips", "chip"),
}
"""Each filter a public-record scope may name (``name:value``, parts joined by ``/``, a
value may list several names joined by ``|``), with the table column its names must be
found in."""

SCOPE_FILTERS: tuple[str, ...] = tuple(SCOPE_VALUES)
"""The filter names of :data:`SCOPE_VALUES`, in order."""


class ScopeError(ValueError):
    """A scope that cannot be read or that names a filter the metric lacks."""


def parse_scope(scope: str) -> dict[str, str]:
    """Return the filters of a scope (``fleet`` -> no filter).

    Parameters
    ----------
    scope : str
        ``fleet``, or ``name:value`` parts joined by ``/`` (``customer:bedrock/family:trainium``).

    Returns
    -------
    dict of str to str
        Filter name to value (a value may hold several names joined by ``|``).

    Raises
    ------
    ScopeError
        For a part that is not ``name:value`` or names an unknown filter.
    """
    text = str(scope).strip()
    if text in ("", "fleet"):
        return {}
    out: dict[str, str] = {}
    for part in text.split("/"):
        name, sep, value = part.partition(":")
        name, value = name.strip(), value.strip()
        if not sep or not value:
            raise ScopeError(f"scope part {part!r} is not name:value (e.g. chip:trainium2)")
        if name not in SCOPE_FILTERS:
            raise ScopeError(
                f"scope filter {name!r} is unknown; filters are {', '.join(SCOPE_FILTERS)}"
            )
        out[name] = value
    return out


RECORD_KINDS: tuple[str, ...] = ("plan", "input_check")
"""``plan``: the row tests a decision of the plan and is scored; ``input_check``: the
row restates an input (a first period, a supply capacity) and is shown, not scored."""

PUBLIC_RECORD = TableSpec(
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
            "'family:trainium', 'customer:anthropic/chip:trainium2', 'site:new_carlisle'; "
            "'versus:h200' names the NVIDIA chips a cost ratio is taken against.",
        ),
        period_col(
            "period",
            "Quarter the figure refers to (annual metrics: the last quarter of the year).",
            in_horizon=False,
        ),
        num_col("value", "column 'unit'", "The figure as reported.", min=None),
        Column("unit", "str", "", "Unit of value, low and high (must be the metric's unit)."),
        num_col("low", "column 'unit'", "Lowest plan value counted as agreeing.", min=None),
        num_col("high", "column 'unit'", "Highest plan value counted as agreeing.", min=None),
        Column("source", "str", "", "Public address (https://...) supporting the figure."),
        Column(
            "note",
            "str",
            "",
            "What the source says and how the band was set.",
            required=False,
            default="",
        ),
        num_col(
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
        Column(
            "kind",
            "choice",
            "",
            "'plan' when the row tests a decision of the plan (scored); 'input_check' "
            "when it restates an input such as a first period or a supply capacity "
            "(shown, never scored).",
            required=False,
            default="plan",
            choices=RECORD_KINDS,
        ),
        Column(
            "tests",
            "str",
            "",
            "What in the plan the row tests (the decision or input that moves its value).",
            required=False,
            default="",
        ),
    ),
    key=("metric", "scope", "period"),
    required=False,
)

SOURCES = TableSpec(
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
    when_empty=(
        "warning",
        "no figure of the data names its source",
    ),
)
