"""Plotly figures of a plan's result tables (pure functions: tables in, figures out).

Each function takes the result tables of :mod:`optimizer` (see the table contract in
``optimizer.plan.results``) and returns a ``plotly.graph_objects.Figure``, or None when the
table it needs is missing or empty, so a page can show an info line instead. A chart of a
statistic the notebook API has (installed IT MW, supply utilisation, energy by power
source) is that API's figure (``plan.plot``, :mod:`optimizer.notebook.plots`), so the app
and a notebook draw it with the same code; the others are drawn here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from optimizer.notebook import Plan, PlanKeys
from optimizer.output.formatting import money_axis

HEIGHT = 340
MARGIN = {"l": 10, "r": 10, "t": 40, "b": 10}


def _get(tables: Mapping[str, pd.DataFrame], name: str) -> pd.DataFrame | None:
    df = tables.get(name)
    if df is None or not isinstance(df, pd.DataFrame) or df.empty:
        return None
    return df


def _layout(fig: go.Figure, title: str, periods: Sequence[str] | None = None) -> go.Figure:
    fig.update_layout(title=title, height=HEIGHT, margin=MARGIN, legend_title_text="")
    if periods:
        fig.update_xaxes(categoryorder="array", categoryarray=list(periods))
    return fig


def _plan(tables: Mapping[str, pd.DataFrame], periods: Sequence[str] | None) -> Plan:
    """Return the notebook API's plan of these tables (no dataset: site, chip, period)."""
    return Plan(tables, PlanKeys(periods=tuple(periods or ())))


def installed_it_mw(
    tables: Mapping[str, pd.DataFrame], periods: Sequence[str] | None = None
) -> go.Figure | None:
    """Stacked area: installed IT MW (fleet ``it_mw``) by chip generation over time.

    ``plan.plot.fleet(groupby=["period", "chip"], value="it_mw")`` of the notebook API.
    """
    if _get(tables, "fleet") is None:
        return None
    return _plan(tables, periods).plot.fleet(
        ["period", "chip"], "area", value="it_mw", title="Installed IT MW by chip generation"
    )


def site_utilisation(
    tables: Mapping[str, pd.DataFrame],
    periods: Sequence[str] | None = None,
    limits: Sequence[str] = ("power", "grid"),
) -> go.Figure | None:
    """Heatmap of site utilisation (used / capacity) for power and grid limits.

    ``plan.plot.utilisation(groupby=["site", "limit", "period"], kind="heatmap")`` of the
    notebook API for these limits, coloured 0-100% on one scale.
    """
    s = _get(tables, "site_utilisation")
    if s is None or not s["limit"].isin(list(limits)).any():
        return None
    fig = _plan(tables, periods).plot.utilisation(
        ["site", "limit", "period"],
        "heatmap",
        where={"limit": list(limits)},
        title="Site power and grid utilisation [%]",
    )
    heat = fig.data[0]
    fig.update_traces(colorscale="YlOrRd", zmin=0.0, zmax=1.0, colorbar={"tickformat": ".0%"})
    if len(heat.x) <= 12:
        fig.update_traces(texttemplate="%{z:.0%}")
    fig.update_layout(height=max(HEIGHT, 120 + 22 * len(heat.y)))
    return fig


def supply_utilisation(
    tables: Mapping[str, pd.DataFrame], periods: Sequence[str] | None = None
) -> go.Figure | None:
    """Lines: utilisation (used / capacity) of each supply resource over time.

    ``plan.plot.utilisation(groupby=["period", "limit"], kind="line")`` of the notebook
    API, restricted to the supply resources (wafers, CoWoS, HBM: no site).
    """
    if _get(tables, "supply_utilisation") is None:
        return None
    fig = _plan(tables, periods).plot.utilisation(
        ["period", "limit"], "line", where={"site": "n/a"}, title="Supply-chain utilisation"
    )
    fig.update_yaxes(rangemode="tozero")
    return fig


def demand_served(
    tables: Mapping[str, pd.DataFrame], periods: Sequence[str] | None = None
) -> go.Figure | None:
    """Stacked bars: served vs unmet H100e per period, one panel per customer · workload."""
    d = _get(tables, "demand")
    if d is None:
        return None
    d = d.copy()
    d["series"] = d["customer"].astype(str) + " · " + d["workload"].astype(str)
    long = d.melt(
        id_vars=["series", "period"],
        value_vars=["served_h100e", "unmet_h100e"],
        var_name="kind",
        value_name="h100e",
    )
    long["kind"] = long["kind"].map({"served_h100e": "served", "unmet_h100e": "unmet"})
    n = long["series"].nunique()
    wrap = min(4, max(1, n))
    fig = px.bar(
        long,
        x="period",
        y="h100e",
        color="kind",
        facet_col="series",
        facet_col_wrap=wrap,
        facet_col_spacing=0.05,
        facet_row_spacing=0.12,
        barmode="stack",
        color_discrete_map={"served": "#2ca02c", "unmet": "#d62728"},
        labels={"h100e": "H100e"},
    )
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=")[-1]))
    fig.update_yaxes(matches=None, showticklabels=True, rangemode="tozero")
    fig = _layout(fig, "Demand served vs unmet [H100e]", periods)
    rows = int(np.ceil(n / wrap))
    fig.update_layout(height=max(HEIGHT, 60 + 220 * rows))
    return fig


def shadow_price_heatmap(
    tables: Mapping[str, pd.DataFrame], periods: Sequence[str] | None = None
) -> go.Figure | None:
    """Heatmap of the largest |shadow price| per constraint family, unit and period.

    One row per (family, unit): supply limits in wafers and in HBM stacks are two
    rows, never one. Colour is the cell's share of its row's largest |price| (0-1),
    so colours compare quarters within a row and never one unit with another; the
    cell text (up to :data:`MAX_TEXT_PERIODS` quarters) and hover give the price in the
    row's own unit. None when the table is
    missing or every price is null (the solver returned no duals).
    """
    s = _get(tables, "shadow_prices")
    if s is None or s["shadow_price"].isna().all():
        return None  # no duals from the solver: nothing to draw, not a row of zeros
    s = s.copy()
    s["abs"] = s["shadow_price"].astype(float).abs()
    g = s.groupby(["family", "unit", "period"], as_index=False).agg(price=("abs", "max"))
    g["label"] = g["family"].astype(str) + " [" + g["unit"].astype(str) + "]"
    piv = g.pivot_table(index="label", columns="period", values="price", aggfunc="max")
    if periods:
        piv = piv.reindex(columns=[p for p in periods if p in piv.columns])
    z = piv.to_numpy(dtype=float)
    row_max = np.nanmax(np.where(np.isfinite(z), z, np.nan), axis=1, initial=0.0)
    share = np.nan_to_num(z) / np.where(row_max > 0, row_max, 1.0)[:, None]
    text = [[_price_text(v) for v in row] for row in z]
    fig = go.Figure(
        go.Heatmap(
            z=share,
            x=list(piv.columns),
            y=list(piv.index),
            customdata=z,
            text=text,
            # beyond 12 quarters the cell text shrinks to a few pixels: the hover has it
            texttemplate="%{text}" if piv.shape[1] <= MAX_TEXT_PERIODS else None,
            zmin=0.0,
            zmax=1.0,
            colorscale="Viridis",
            hovertemplate="%{y}<br>%{x}: %{customdata:,.4g}<extra></extra>",
            colorbar={"title": {"text": "share of the row's max", "side": "right"}},
        )
    )
    fig = _layout(fig, "Shadow prices: max |price| by constraint family (one unit per row)")
    # period labels at 45 degrees below the cells, with room kept for them
    fig.update_xaxes(type="category", tickangle=-45, automargin=True, title_text="period")
    fig.update_yaxes(type="category", automargin=True)
    fig.update_layout(
        height=max(HEIGHT, 160 + 28 * piv.shape[0]), margin={**MARGIN, "b": 90, "l": 10}
    )
    return fig


#: Most periods a heatmap writes its cells' values in (more: hover only).
MAX_TEXT_PERIODS = 12


def _price_text(value: float) -> str:
    """Short text of one |shadow price| in its row's unit: ``14.9M``, ``393k``, ``27``.

    A price below a cent (the tie-break costs' traces, 1.67e-05) reads ``<0.01``.
    """
    if not np.isfinite(value) or value == 0:
        return ""
    if value < 0.01:
        return "<0.01"
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


def energy_water(
    tables: Mapping[str, pd.DataFrame], periods: Sequence[str] | None = None
) -> go.Figure | None:
    """Facility energy (MWh, left axis) and water (m3, right axis) over time."""
    e = _get(tables, "energy")
    if e is None:
        return None
    g = e.groupby("period", as_index=False)[["facility_mwh", "water_m3"]].sum()
    if periods:
        g["period"] = pd.Categorical(g["period"], categories=list(periods), ordered=True)
        g = g.sort_values("period")
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(
        go.Bar(x=g["period"].astype(str), y=g["facility_mwh"], name="facility energy [MWh]"),
        secondary_y=False,
    )
    fig.add_trace(
        go.Scatter(
            x=g["period"].astype(str), y=g["water_m3"], name="water [m3]", mode="lines+markers"
        ),
        secondary_y=True,
    )
    fig.update_yaxes(title_text="MWh", secondary_y=False, rangemode="tozero")
    # its own round ticks (synced to the energy axis's grid they read 0.359M, 0.719M ...)
    fig.update_yaxes(
        title_text="m3", secondary_y=True, rangemode="tozero", tickmode="auto", showgrid=False
    )
    fig = _layout(fig, "Facility energy and water")
    # the legend under the plot: on the title's line it met "water" at a laptop's width
    fig.update_layout(
        legend={"orientation": "h", "y": -0.25, "yanchor": "top", "x": 0.0, "xanchor": "left"}
    )
    return fig


def power_sites(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """Sites with energy in the ``power_sources`` table, sorted (empty when none)."""
    p = _get(tables, "power_sources")
    if p is None:
        return []
    return sorted(p.loc[p["energy_mwh"].abs() > 0, "site"].astype(str).unique())


def power_sources(
    tables: Mapping[str, pd.DataFrame], periods: Sequence[str] | None = None, site: str = ""
) -> go.Figure | None:
    """Stacked bars: energy of one site by power source per period (``power_sources``).

    Parameters
    ----------
    tables : Mapping of str to DataFrame
        Result tables; uses ``power_sources`` (site, period, source, energy_mwh ...).
    periods : sequence of str, optional
        Horizon quarters, in order (x axis order).
    site : str
        The site to show; "" shows the first site of :func:`power_sites`.

    Returns
    -------
    plotly Figure or None
        ``plan.plot.energy(groupby=["period", "source"], kind="bar", where={"site":
        site})`` of the notebook API: bars in MWh per quarter, one colour per source
        (``grid``, ``ppa:<contract>``, ``onsite:<technology>``); None when the table is
        missing or the site has no energy.
    """
    sites = power_sites(tables)
    if not sites:
        return None
    site = site or sites[0]
    if site not in sites:
        return None
    return _plan(tables, periods).plot.energy(
        ["period", "source"], "bar", where={"site": site}, title=f"Energy by power source at {site}"
    )


def scenario_costs(compare: pd.DataFrame) -> go.Figure | None:
    """Bars: total cost per scenario from a frame (scenario, cost_usd).

    ``cost_usd`` is the plan's cost (:func:`ui.compose.plan_metrics`), also for a plan of
    the margin objective, whose objective is cost - revenue.

    In USD billions, or millions when every cost is below a billion
    (:func:`optimizer.output.formatting.money_axis`: a $1.96M plan read "$0.00B").
    """
    if compare is None or compare.empty:
        return None
    div, word, letter = money_axis(compare["cost_usd"].tolist())
    label = f"discounted cost [USD {word}]" if word else "discounted cost [USD]"
    fig = px.bar(
        compare.assign(objective_scaled=compare["cost_usd"] / div),
        x="scenario",
        y="objective_scaled",
        color="scenario",
        labels={"objective_scaled": label},
    )
    fig.update_traces(texttemplate=f"$%{{y:,.2f}}{letter}", textposition="outside")
    fig.update_yaxes(tickformat="$,~g", ticksuffix=letter)  # a sign before the $
    fig.update_layout(showlegend=False)
    return _layout(fig, "Plan cost by scenario")


def _quarter_start(period: str) -> pd.Timestamp:
    year, q = int(period[:4]), int(period[-1])
    return pd.Timestamp(year=year, month=3 * (q - 1) + 1, day=1)


def _cluster_rule(runs: pd.DataFrame, has_minimum: np.ndarray) -> np.ndarray:
    """Label each cluster run: no minimum size, meets it, below it in some quarters or all.

    ``has_minimum`` (one bool per run) says whether the run's customer has a minimum
    cluster size (MW or H100e above 0): without one a run "meets" nothing.
    """
    out: np.ndarray = np.select(
        [
            ~has_minimum,
            runs["meets_minimum"].astype(bool).to_numpy(),
            (runs["periods_below"] == runs["periods"]).to_numpy(),
        ],
        [NO_MINIMUM, "meets minimum", "below minimum in every quarter"],
        "below minimum in some quarters",
    )
    return out


#: The label of a cluster run whose customer has no minimum cluster size.
NO_MINIMUM = "no minimum size"


def _has_minimum(t: pd.DataFrame, runs: pd.DataFrame) -> np.ndarray:
    """Whether each run's customer has a minimum cluster size (MW or H100e above 0)."""
    if "min_cluster_mw" not in t or "min_cluster_h100e" not in t:  # a table of old reports
        return np.ones(len(runs), dtype=bool)
    rule = (t["min_cluster_mw"] > 0) | (t["min_cluster_h100e"] > 0)
    by_customer = rule.groupby(t["customer"]).any()
    return runs["customer"].map(by_customer).fillna(False).to_numpy(dtype=bool)


def training_clusters_timeline(
    tables: Mapping[str, pd.DataFrame], periods: Sequence[str] | None = None
) -> go.Figure | None:
    """Timeline: each customer's training clusters per site (bars span the quarters hosted).

    One bar per run of consecutive quarters in which a site hosts a customer's
    training (:func:`optimizer.output.summary_frames.cluster_spans`), one row per customer and site,
    coloured by whether every quarter of the run meets the customer's minimum cluster
    size, only some do, or none (a 24-quarter run with one small first quarter is not
    drawn like a run that never reaches the minimum), grey where the customer has no
    minimum size; hover shows the mean and peak
    training IT MW of the run and how many of its quarters are below the minimum.
    """
    from optimizer.output.summary_frames import cluster_spans

    t = _get(tables, "training_clusters")
    if t is None:
        return None
    order = list(periods) if periods else sorted(t["period"].unique())
    runs = cluster_spans(t, order)
    runs = runs.assign(
        start=[_quarter_start(p) for p in runs["first_period"]],
        end=[_quarter_start(p) + pd.DateOffset(months=3) for p in runs["last_period"]],
        cluster=runs["customer"] + " · " + runs["site"],
        rule=_cluster_rule(runs, _has_minimum(t, runs)),
    )
    fig = px.timeline(
        runs,
        x_start="start",
        x_end="end",
        y="cluster",
        color="rule",
        color_discrete_map={
            NO_MINIMUM: "#adb5bd",
            "meets minimum": "#2a9d8f",
            "below minimum in some quarters": "#e9c46a",
            "below minimum in every quarter": "#e76f51",
        },
        hover_data={
            "start": False,
            "end": False,
            "first_period": True,
            "last_period": True,
            "mean_it_mw": ":,.0f",
            "max_it_mw": ":,.0f",
            "periods": True,
            "periods_below": True,
        },
        labels={
            "cluster": "customer · site",
            "first_period": "from",
            "last_period": "to",
            "mean_it_mw": "mean training IT [MW]",
            "max_it_mw": "peak training IT [MW]",
            "periods": "quarters",
            "periods_below": "quarters below the minimum",
        },
    )
    fig.update_yaxes(autorange="reversed", categoryorder="category ascending")
    # the axis reads in the plan's quarters, not calendar dates: a tick at each year's Q1
    ticks = [p for p in order if p.endswith("Q1")] or order
    fig.update_xaxes(
        tickvals=[_quarter_start(p) for p in ticks], ticktext=ticks, title_text="quarter"
    )
    fig = _layout(fig, "Training clusters per customer (site hosting its training)")
    fig.update_layout(height=max(HEIGHT, 22 * runs["cluster"].nunique() + 120))
    return fig


PLAN_CHARTS = (
    (("installed", installed_it_mw), ("site_util", site_utilisation)),
    (("supply", supply_utilisation), ("energy", energy_water)),
    (("demand", demand_served),),
    (("clusters", training_clusters_timeline),),
    (("shadow", shadow_price_heatmap),),
)
"""Rows of (key, figure function) of the Plan page, in display order."""
