"""Plotly figures of a plan's statistics (``plan.plot.<statistic>(kind=...)``).

One drawing function, :func:`draw`, turns any statistic frame into a figure: the
time key (``period``, else ``year``, else ``scenario``) on the x axis, the other keys
as colours (joined by `` · ``), the statistic's first value column (or ``value=``) on
the y axis with its unit. ``kind`` is ``area`` (stacked), ``bar`` (stacked), ``line``
or ``heatmap`` (colour keys down, x across). The app's charts of the same statistics
call these functions, so a chart is drawn by one piece of code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from optimizer.notebook.statistics import GroupBy, Where
from optimizer.output.formatting import column_header

__all__ = ["KINDS", "Plotter", "draw"]

Kind = Literal["area", "bar", "line", "heatmap"]

KINDS: tuple[str, ...] = ("area", "bar", "line", "heatmap")
"""The chart kinds every statistic can be drawn as."""

HEIGHT = 340
MARGIN = {"l": 10, "r": 10, "t": 40, "b": 10}
_X_KEYS = ("period", "year", "scenario")


def _axes(frame: pd.DataFrame, value: str) -> tuple[str | None, list[str]]:
    """Return the x key and the colour keys of a statistic frame."""
    units = frame.attrs.get("units", {})
    keys = [c for c in frame.columns if c not in units and c != value]
    x = next((k for k in _X_KEYS if k in keys), keys[0] if keys else None)
    return x, [k for k in keys if k != x]


def _label(frame: pd.DataFrame, value: str) -> str:
    """Return the value's header with its unit, as the tables' headers read (``IT [MW]``).

    :func:`~optimizer.output.formatting.column_header` of the value and the statistic's
    unit: the unit suffix leaves the words (``energy_mwh`` reads ``energy [MWh]``, not
    ``energy_mwh [MWh]``); a share reads ``[%]``, as its ticks do (not ``[share]``).
    """
    unit = frame.attrs.get("units", {}).get(value, "")
    if unit == "share":
        head = column_header(value, "")
        return head if head.endswith("[%]") else f"{head} [%]"
    return column_header(value, unit)


def draw(
    frame: pd.DataFrame,
    kind: Kind = "area",
    *,
    value: str | None = None,
    title: str | None = None,
    order: Sequence[str] | None = None,
) -> go.Figure:
    """Draw a statistic frame as a plotly figure.

    Parameters
    ----------
    frame : DataFrame
        A statistic (:mod:`optimizer.notebook.statistics`): key columns, then value
        columns labelled in ``frame.attrs["units"]``.
    kind : {"area", "bar", "line", "heatmap"}
        Stacked area, stacked bars, lines, or a heatmap (colour keys by x).
    value : str, optional
        The value column drawn (default: the statistic's first).
    title : str, optional
        Figure title (default: the statistic's name and the value's unit).
    order : sequence of str, optional
        Order of the x values (the horizon's quarters), default sorted.

    Returns
    -------
    plotly.graph_objects.Figure
        ``area``/``bar``/``line``: one trace per colour group with a non-zero value
        (one trace when the frame has no colour key); ``heatmap``: one ``Heatmap``
        trace, colour groups down and x across.

    Raises
    ------
    ValueError
        When ``kind`` or ``value`` is not known, or the frame has no rows.
    """
    units = frame.attrs.get("units", {})
    value = value or next(iter(units), None)
    if value is None or value not in frame.columns or value not in units:  # not a key
        raise ValueError(f"value {value!r} is not a value column of {list(units)}")
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    if frame.empty:
        raise ValueError(
            f"statistics.{frame.attrs.get('statistic', '')} has no rows to draw (a plan "
            "without values, or a where= that keeps none)"
        )
    x, colours = _axes(frame, value)
    df = frame.copy()
    if x is None:
        x, df = "total", df.assign(total="total")
    df[x] = df[x].astype(str)
    colour = None
    if colours:
        colour = " · ".join(colours)
        # a key repeated in a row (a supply limit whose unit is its resource) shows once
        df[colour] = df[colours].astype(str).agg(lambda r: " · ".join(dict.fromkeys(r)), axis=1)
        if kind != "heatmap":  # a colour group that is zero throughout draws nothing
            drawn = df.groupby(colour)[value].transform(lambda v: bool((v.abs() > 0).any()))
            df = df[drawn.astype(bool)]
    xs = [str(v) for v in order] if order and x == "period" else []
    xs += sorted(set(df[x]) - set(xs))  # what the order lacks (another plan's quarters)
    xs = [v for v in xs if v in set(df[x])]
    if colour is None and kind == "heatmap":
        colour = "value" if x == "total" else "total"  # one row; x is "total" with no key
        df[colour] = value
    label = _label(frame, value)
    fig = _figure(df, kind, x, value, colour, xs, label)
    name = frame.attrs.get("statistic", "")
    fig.update_layout(
        title=title or f"{name}: {label}", height=HEIGHT, margin=MARGIN, legend_title_text=""
    )
    fig.update_xaxes(categoryorder="array", categoryarray=xs)
    if frame.attrs.get("units", {}).get(value) == "share":  # a ratio reads as a percentage
        if kind == "heatmap":
            fig.update_traces(colorbar={"tickformat": ".0%"})
        else:
            fig.update_yaxes(tickformat=".0%")
    return fig


def _figure(
    df: pd.DataFrame,
    kind: str,
    x: str,
    value: str,
    colour: str | None,
    xs: list[str],
    label: str,
) -> go.Figure:
    labels = {value: label, x: x}
    order = {x: xs}
    if kind == "heatmap":
        piv = df.pivot_table(
            index=colour or x, columns=x, values=value, aggfunc="sum", dropna=False
        ).reindex(columns=xs)
        return go.Figure(
            go.Heatmap(
                z=piv.to_numpy(dtype=float),
                x=list(piv.columns),
                y=[str(v) for v in piv.index],
                colorbar={"title": {"text": label}},
                hovertemplate="%{y}<br>%{x}: %{z:,.4g}<extra></extra>",
            )
        )
    df = df.assign(**{x: pd.Categorical(df[x], categories=xs, ordered=True)}).sort_values(x)
    common: dict[str, Any] = {"x": x, "y": value, "color": colour, "labels": labels}
    if kind == "area":
        return px.area(df, category_orders=order, **common)
    if kind == "bar":
        fig = px.bar(df, category_orders=order, **common)
        fig.update_layout(barmode="stack")
        return fig
    return px.line(df, markers=True, category_orders=order, **common)


class Plotter:
    """The figures of a plan or of many (``plan.plot``): one method per statistic.

    ``plan.plot.capex(groupby=["year", "family"], kind="bar")`` draws
    ``plan.statistics.capex(groupby=["year", "family"])`` with :func:`draw`.

    Parameters
    ----------
    statistic : callable
        ``statistic(name, groupby, where)`` returning a statistic frame.
    names : sequence of str
        The statistics that can be drawn (the methods of this object).
    periods : sequence of str
        The horizon's quarters in order (x axis order).
    """

    def __init__(
        self,
        statistic: Callable[[str, GroupBy, Where], pd.DataFrame],
        names: Sequence[str],
        periods: Sequence[str] = (),
    ) -> None:
        self._statistic = statistic
        self._names = tuple(names)
        self._periods = tuple(periods)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self._names})

    def __getattr__(self, name: str) -> Callable[..., go.Figure]:
        if name.startswith("_") or name not in self._names:
            raise AttributeError(f"plot has no statistic {name!r}; statistics: {self._names}")

        def plot(
            groupby: GroupBy = None,
            kind: Kind = "area",
            *,
            where: Where = None,
            value: str | None = None,
            title: str | None = None,
        ) -> go.Figure:
            return self.statistic(name, groupby, kind, where=where, value=value, title=title)

        plot.__name__ = plot.__qualname__ = name
        plot.__doc__ = (
            f"Draw ``statistics.{name}(groupby, where)`` as ``kind`` (area, bar, line or "
            "heatmap); see :meth:`Plotter.statistic`."
        )
        return plot

    def statistic(
        self,
        name: str,
        groupby: GroupBy = None,
        kind: Kind = "area",
        *,
        where: Where = None,
        value: str | None = None,
        title: str | None = None,
    ) -> go.Figure:
        """Draw statistic ``name`` grouped by ``groupby`` as ``kind`` (see :func:`draw`).

        Parameters
        ----------
        name : str
            The statistic (``capex``, ``energy`` ...).
        groupby : str or sequence of str, optional
            As for the statistic (None: its default keys).
        kind : {"area", "bar", "line", "heatmap"}
        where : mapping, optional
            Rows kept before grouping (``{"site": "ohio"}``).
        value : str, optional
            Value column to draw (default: the statistic's first).
        title : str, optional

        Returns
        -------
        plotly.graph_objects.Figure
        """
        if name not in self._names:  # calibration: "value None is not a value column of []"
            raise ValueError(
                f"plot has no statistic {name!r} (calibration is a table of record against "
                f"plan: read it with statistics('calibration')); statistics: {self._names}"
            )
        frame = self._statistic(name, groupby, where)
        return draw(frame, kind, value=value, title=title, order=self._periods)
