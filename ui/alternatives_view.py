"""Near-optimal ranges on the Risk page: how far each plan quantity can move within a cost slack.

Over :func:`optimizer.analysis.alternatives.near_optimal_ranges`; the result is kept in
session state with the dataset hash and settings it was computed with (as the other
risk sections), and errors become messages, never tracebacks.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from capacity.dataset import Dataset
from ui.formats import error_text, ranges_view

__all__ = ["alternatives_tab", "ranges_figure"]

_KEY = "alternatives"


def ranges_figure(ranges: pd.DataFrame) -> go.Figure | None:
    """Range chart: per quantity, one bar from min to max per slack, the optimum marked.

    Parameters
    ----------
    ranges : DataFrame
        :data:`optimizer.analysis.alternatives.RANGE_COLUMNS` rows.

    Returns
    -------
    plotly Figure or None
        None without rows. Quantities have different units, so each is drawn as a
        percentage of its largest absolute value over the table (its maximum at the
        widest slack, or the optimum); the hover gives the values in their unit.
    """
    if ranges is None or not len(ranges):
        return None
    d = ranges.copy()
    top = d.groupby("quantity")[["min", "max", "at_optimum"]].transform(lambda s: s.abs().max())
    scale = top.max(axis=1).where(lambda s: s > 0, 1.0)
    for c in ("min", "max", "at_optimum"):
        d[f"{c}_pct"] = 100 * d[c] / scale
    order = list(dict.fromkeys(d["quantity"]))
    fig = go.Figure()
    for slack, g in d.groupby("slack", sort=True):
        fig.add_bar(
            y=g["quantity"],
            x=(g["max_pct"] - g["min_pct"]).clip(lower=0.2),
            base=g["min_pct"],
            orientation="h",
            name=f"slack {slack:.0%}" if slack >= 0.01 else f"slack {slack:g}",
            customdata=g[["min", "max", "unit"]].to_numpy(),
            hovertemplate="%{y}: %{customdata[0]:,.4g} to %{customdata[1]:,.4g} "
            "%{customdata[2]}<extra>%{fullData.name}</extra>",
        )
    opt = d.drop_duplicates("quantity")
    fig.add_scatter(
        y=opt["quantity"],
        x=opt["at_optimum_pct"],
        mode="markers",
        marker={"symbol": "line-ns-open", "size": 14, "color": "black"},
        name="optimum",
        customdata=opt[["at_optimum", "unit"]].to_numpy(),
        hovertemplate="%{y} at the optimum: %{customdata[0]:,.4g} %{customdata[1]}<extra></extra>",
    )
    fig.update_layout(
        title="Near-optimal ranges (share of each quantity's largest value)",
        barmode="group",
        xaxis={"title": "% of the quantity's largest value", "ticksuffix": "%"},
        yaxis={"categoryorder": "array", "categoryarray": order[::-1]},
        height=max(300, 40 * len(order) + 120),
        margin={"l": 10, "r": 10, "t": 50, "b": 40},
    )
    return fig


def alternatives_tab(ds: Dataset, opts: Any) -> None:
    """Near-optimal ranges tab: slacks and directions, run, the range chart and table."""
    from optimizer.analysis.alternatives import near_optimal_ranges, parse_slacks
    from optimizer.output.progress import step_callback
    from ui.progress_view import AppProgress

    st.caption(
        "After the optimum C*, the plan may cost at most (1 + slack) C*: each quantity is "
        "minimised and maximised inside that cap. A wide range is a decision the cost "
        "does not force; a narrow one is forced."
    )
    text = st.text_input(
        "Cost slacks (shares, comma-separated)",
        "0.01,0.05",
        key="alt_slacks",
        persist_state="session",
    )
    directions = st.number_input(
        "Random directions per slack",
        min_value=0,
        max_value=50,
        value=0,
        key="alt_directions",
        persist_state="session",
    )
    try:
        slacks = parse_slacks(text, "cost slacks")
    except ValueError as e:
        st.error(str(e))
        return
    settings = (slacks, int(directions), opts)
    clicked = st.button("Run alternatives", key="alt_run")
    slot = st.empty()  # the bar's place, kept on every run
    if clicked:
        try:
            with (
                # the whole run: the optimum, then the capped solves the bar counts (it
                # said "Solving the optimum" to the end)
                st.spinner("Solving the optimum, then each quantity's minimum and maximum…"),
                step_callback(lambda total: AppProgress("Alternatives", total, slot)) as progress,
            ):
                res = near_optimal_ranges(
                    ds, slacks, directions=int(directions), options=opts, progress=progress
                )
            _store(ds.hash, settings, res.ranges)
        except Exception as e:  # noqa: BLE001 - a failed run is a message
            st.error(f"The alternatives failed: {error_text(e)}")
    entry = st.session_state["risk_results"].get(_KEY)
    if entry is None or entry["hash"] != ds.hash or entry["settings"] != settings:
        st.info("Press **Run alternatives** to compute the near-optimal ranges of the active data.")
        return
    ranges = entry["value"]
    fig = ranges_figure(ranges)
    if fig is not None:
        st.plotly_chart(fig, key="alt_chart", width="stretch")
    view, cfg = ranges_view(ranges)
    st.dataframe(view, hide_index=True, width="stretch", column_config=cfg)


def _store(ds_hash: str, settings: Any, value: Any) -> None:
    st.session_state["risk_results"] = {
        **st.session_state["risk_results"],
        _KEY: {"hash": ds_hash, "settings": settings, "value": value},
    }
