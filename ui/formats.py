"""Display formats of the app: money in USD, tornado levels, table column configs.

Tables keep their numbers (so a column still sorts numerically); only the column
config and the column scale change for display. Money columns (suffix ``_usd``) are
shown in the scale their magnitude needs: ``$123.72B``, ``$1.96M`` or ``$532``.
:func:`show_table` is the one way a page shows a result table: every numeric column
gets a header with its unit and a format from :mod:`optimizer.output.formatting`
(thousands separators, the unit's decimals, shares as a percent clipped to [0, 1]),
missing cells read ``–``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from optimizer.analysis.outcomes import QUARTER_SUMS
from optimizer.output.formatting import (
    clip_share,
    column_header,
    column_unit,
    fmt_cell,
    fmt_number,
    is_share,
    money_scale,
    number_format,
)
from optimizer.output.formatting import fmt_usd as summary_fmt_usd

USD_BN_FORMAT = "$%,.2fB"
"""printf format of a column holding USD billions (Streamlit NumberColumn)."""


def error_text(exc: BaseException) -> str:
    """Return the words of an error for the page: its message, never class name or traceback.

    Parameters
    ----------
    exc : BaseException
        The error caught around a solve, a load, an upload or a report write.

    Returns
    -------
    str
        The message (a file error as "reason: file", a missing key as the key);
        a fixed sentence when the error carries no message.

    Examples
    --------
    >>> error_text(RuntimeError("stochastic plan has no solution: Infeasible"))
    'stochastic plan has no solution: Infeasible'
    >>> error_text(FileNotFoundError(2, "No such file or directory", "data/sites.csv"))
    'No such file or directory: data/sites.csv'
    >>> error_text(KeyError("site"))
    'no entry site'
    """
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else str(exc.strerror)
    if isinstance(exc, KeyError) and exc.args:
        return f"no entry {exc.args[0]}"
    text = str(exc).strip()
    return text or "it stopped without a message (an internal error; please report it)"


def fmt_usd(x: float | None, digits: int = 2) -> str:
    """Format a USD amount as ``$123.72B`` (the CLI summary's formatter, two digits).

    See :func:`optimizer.output.formatting.fmt_usd`: "n/a" for None/NaN, "∞" when infinite.
    """
    return summary_fmt_usd(x, digits)


def fmt_share(x: float | None, digits: int = 1) -> str:
    """Format a share (0-1) as ``99.7%``; :data:`MISSING` for None or NaN (no ``nan%``).

    A plan with no demand, or with no solution, has no served share.
    """
    if x is None or not math.isfinite(float(x)):
        return MISSING
    return f"{float(x):.{digits}%}"


def usd_billions(df: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Rescale every ``*_usd`` column to the scale its magnitude needs; return its config.

    Parameters
    ----------
    df : DataFrame
        Any table; columns ending in ``_usd`` hold USD.

    Returns
    -------
    (DataFrame, dict)
        A copy where each ``x_usd`` column is scaled by
        :func:`optimizer.output.formatting.money_scale` of its largest finite magnitude:
        billions as ``x_usd_bn`` (``$123.72B``), millions as ``x_usd_mn`` (``$1.96M``),
        smaller amounts kept in USD (``$532``); numeric, so it still sorts, unless a cell
        is negative or infinite (text: ``-$973.31B``, ``∞``; a number column printed
        ``$-973.31B``) or a non-zero amount would read 0.00 in the column's scale (text,
        each cell in its own scale: a $3.36M row of a billions column read ``$0.00B``).
        And
        ``{column: NumberColumn}`` with the label ``x [USD]`` and that format.
    """
    money = [c for c in df.columns if str(c).endswith("_usd")]
    out = df.copy()
    config: dict[str, Any] = {}
    for c in money:
        label = f"{str(c)[: -len('_usd')].replace('_', ' ')} [USD]"
        values = pd.to_numeric(out[c], errors="coerce")
        v = values.to_numpy(dtype=float)
        finite = np.abs(v[np.isfinite(v)])
        div, suffix, fmt = money_scale(float(finite.max()) if len(finite) else 0.0)
        if div > 1 and ((finite > 0) & (finite / div < 0.005)).any():
            # a non-zero amount would read $0.00B beside billions: each cell in its own
            # scale, as text ($109.60B, $3.54M)
            out[c] = [_own_scale(x) for x in values]
            config[c] = st.column_config.TextColumn(label, alignment="right")
            continue
        new = f"{c}{suffix}"
        if np.isinf(v).any() or (v < 0).any():
            # a number column prints "Infinity", and "$-973.31B" for a negative amount
            # (the format's "$" comes first): show every cell as text instead
            out[c] = [fmt_cell(None if pd.isna(x) else x / div, fmt) for x in values]
            out = out.rename(columns={c: new})
            config[new] = st.column_config.TextColumn(label, alignment="right")
            continue
        out[c] = values / div
        out = out.rename(columns={c: new})
        config[new] = st.column_config.NumberColumn(label, format=fmt)
    return out, config


def _own_scale(x: Any) -> str:
    """Return one amount in the scale of its own magnitude (``$109.60B``, ``$3.54M``)."""
    if pd.isna(x):
        return MISSING
    div, _, fmt = money_scale(abs(float(x)))
    return fmt_cell(float(x) / div, fmt)


def money_config(df: pd.DataFrame, column: str, label: str) -> dict[str, Any]:
    """Config giving the money column ``column`` of ``df`` the label ``label`` in any scale.

    A page that names a money column (``objective_usd``) does not know whether
    :func:`usd_billions` shows it in billions or millions; this gives the scaled
    column's config with the page's label (none when ``df`` has no such column).
    """
    if column not in df:
        return {}
    view, cfg = usd_billions(df[[column]])
    (name,) = view.columns
    return {name: {**cfg[name], "label": label}}


MISSING = "–"
"""What a missing cell of a result table reads (Streamlit's own default is ``None``)."""


def _whole(values: pd.Series) -> bool:
    """Tell whether every finite value of a numeric column is a whole number."""
    v = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    v = v[np.isfinite(v)]
    return bool(pd.api.types.is_integer_dtype(values) or (len(v) and (v == np.round(v)).all()))


def _noise_share(values: pd.Series) -> bool:
    """Tell whether a share column lies in [0, 1] up to float noise (a change may be < 0)."""
    v = values.to_numpy(dtype=float)
    v = v[np.isfinite(v)]
    return bool(len(v) and v.min() >= -1e-6 and v.max() <= 1 + 1e-6)


#: What an empty text cell of a result table shows (the speed-to-power table's site
#: without a grid bound or bridge option read as a blank cell).
NO_TEXT = "—"


def table_view(
    df: pd.DataFrame, config: Mapping[str, Any] | None = None
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Return a result table ready to show and its column config, every number formatted.

    Parameters
    ----------
    df : DataFrame
        Any result table; units come from the column names' suffixes
        (:func:`optimizer.output.formatting.column_unit`).
    config : mapping, optional
        Column configs of the caller; they win over the derived ones.

    Returns
    -------
    (DataFrame, dict)
        The frame with ``*_usd`` columns in USD billions (:func:`usd_billions`), share
        columns clipped to [0, 1] (when they lie there up to float noise: a change of
        a share may be negative), and numeric columns holding an infinity as text
        (``∞``), and empty text cells as a dash (:data:`NO_TEXT`); and
        ``{column: config}`` giving each numeric column its header with the unit
        (``build [MW]``) and its format
        (:func:`optimizer.output.formatting.number_format`), and each text column its
        header in words (``first grid bound period``), with its unit where it has one.
    """
    view, cfg = usd_billions(df)
    for c in view.columns:
        name = str(c)
        if c in cfg or pd.api.types.is_bool_dtype(view[c]):
            continue
        if pd.api.types.is_numeric_dtype(view[c]):
            values = pd.to_numeric(view[c], errors="coerce")
            if is_share(name) and _noise_share(values):
                view[c] = values.map(clip_share)
            if np.isinf(values.to_numpy(dtype=float)).any():
                unit = column_unit(name)
                view[c] = [fmt_number(v, unit) for v in values]
                cfg[c] = st.column_config.TextColumn(column_header(name))
                continue
            fmt = number_format(name, _whole(values))
            if fmt == "percent":
                # shown to 0.1 %: Streamlit's step cuts digits off (0.475972 read 47.5 %),
                # so the view holds the share rounded to that step (47.6 %)
                view[c] = pd.to_numeric(view[c], errors="coerce").round(3)
            cfg[c] = st.column_config.NumberColumn(
                column_header(name),
                format=fmt,
                step=0.001 if fmt == "percent" else None,  # percent: one decimal, 52.6%
            )
        else:  # words, not snake_case (first_grid_bound_period read as written)
            cfg[c] = st.column_config.TextColumn(column_header(name))
            # an empty text cell (no grid bound, no bridge option) reads as a dash, not blank
            view[c] = [NO_TEXT if isinstance(v, str) and not v else v for v in view[c]]
    cfg.update(config or {})
    return view, cfg


def quarter_sum_config(df: pd.DataFrame) -> dict[str, Any]:
    """Headers of a table's outcome columns that sum over quarters (``[H100e-quarters]``).

    Unit suffixes read ``unmet_h100e`` as H100e: a hedged plan's and the Monte Carlo
    samples' unmet demand and breach are sums over the horizon
    (:data:`optimizer.analysis.outcomes.QUARTER_SUMS`). Pass the result to
    :func:`show_table` as ``config``.
    """
    out: dict[str, Any] = {}
    for c in df.columns:
        for name, unit in QUARTER_SUMS.items():
            if str(c) == name or str(c).endswith(f"_{name}"):
                fmt = number_format(str(c), _whole(pd.to_numeric(df[c], errors="coerce")))
                header = column_header(str(c)).replace(f"[{column_unit(str(c))}]", f"[{unit}]")
                out[c] = st.column_config.NumberColumn(header, format=fmt)
    return out


def show_table(
    df: pd.DataFrame,
    config: Mapping[str, Any] | None = None,
    *,
    key: str | None = None,
    hide_index: bool = True,
) -> None:
    """Show a result table with :func:`table_view`'s formats; missing cells read ``–``.

    Parameters
    ----------
    df : DataFrame
        The table.
    config : mapping, optional
        Column configs that win over the derived ones (labels of the page).
    key : str, optional
        Element key.
    hide_index : bool
        Hide the frame's index (default).
    """
    view, cfg = table_view(df, config)
    st.dataframe(
        view,
        hide_index=hide_index,
        width="stretch",
        column_config=cfg,
        key=key,
        placeholder=MISSING,
    )


CALIBRATION_VALUES = ("record_value", "record_low", "record_high", "plan_value")
"""Columns of the calibration table whose unit is the row's ``unit``."""


def _in_row_units(df: pd.DataFrame, columns: Sequence[str], missing: str) -> pd.DataFrame:
    """Return a copy of ``df`` with ``columns`` as text in each row's unit (a share as %)."""
    out = df.copy()
    units = out["unit"].astype(str) if "unit" in out else pd.Series("", index=out.index)
    for c in columns:
        if c in out:
            out[c] = [
                missing
                if pd.isna(v)
                else f"{float(v):.1%}"
                if u == "share"
                else fmt_number(float(v), u)
                for v, u in zip(out[c], units, strict=True)
            ]
    return out


def calibration_view(cal: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Return the calibration table in one style and its column config.

    Parameters
    ----------
    cal : DataFrame
        :func:`optimizer.plan.calibration.calibration_table`: each row has its own unit
        (column ``unit``: chips, MW, USD, share ...).

    Returns
    -------
    (DataFrame, dict)
        Record, band and plan values as text in the row's unit with thousands
        separators (``1,400,000``, ``$25.0B``, ``52.6%``, ``n/a`` when the plan cannot
        match the row), the ratio plan / record as a number with two decimals.
    """
    out = _in_row_units(cal, CALIBRATION_VALUES, "n/a")
    cfg: dict[str, Any] = {
        "record_value": st.column_config.TextColumn("record [row's unit]"),
        "record_low": st.column_config.TextColumn("band low [row's unit]"),
        "record_high": st.column_config.TextColumn("band high [row's unit]"),
        "plan_value": st.column_config.TextColumn("plan [row's unit]"),
        "ratio": st.column_config.NumberColumn("plan / record", format="%.2f"),
        "inside_band": st.column_config.CheckboxColumn("inside band"),
    }
    return out, cfg


RANGE_VALUES = ("min", "max", "at_optimum")
"""Columns of the alternatives' ranges table whose unit is the row's ``unit``."""


def ranges_view(ranges: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Return the near-optimal ranges in the CLI's style and their column config.

    Each row's min, max and value at the optimum as text in its unit (``7,794,394``
    H100e, ``52.6%`` for a share), the slack as a percent, the cost cap in USD
    (``$146.06B``): the table showed six significant digits without separators.

    Parameters
    ----------
    ranges : DataFrame
        :attr:`optimizer.analysis.alternatives.AlternativesResult.ranges`.

    Returns
    -------
    (DataFrame, dict)
        The view and its ``st.dataframe`` column config.
    """
    out = _in_row_units(ranges, RANGE_VALUES, MISSING)
    if "cost_cap_usd" in out:
        out["cost_cap_usd"] = [
            MISSING if pd.isna(v) else fmt_usd(float(v)) for v in out["cost_cap_usd"]
        ]
    cfg: dict[str, Any] = {
        "min": st.column_config.TextColumn("min [row's unit]"),
        "max": st.column_config.TextColumn("max [row's unit]"),
        "at_optimum": st.column_config.TextColumn("at the optimum [row's unit]"),
        "slack": st.column_config.NumberColumn("cost slack [%]", format="percent"),
        "cost_cap_usd": st.column_config.TextColumn("cost cap [USD]"),
    }
    return out, cfg


def level_text(op: str, level: float) -> str:
    """Meaning of a tornado level: ``×1.03`` (scale), ``+4 quarters`` (shift), ``= 2.5`` (set)."""
    if op == "shift":
        n = int(round(level))
        return f"{n:+d} quarter{'s' if abs(n) != 1 else ''}"
    if op == "set":
        return f"= {level:.3g}"
    return f"×{level:.2f}"


def parameter_ops(parameters: Any) -> dict[str, str]:
    """``{parameter name: override op}`` of tornado parameter groups (first template's op)."""
    return {
        p.name: str(p.templates[0].get("op", "scale")) if p.templates else "scale"
        for p in parameters
    }


def levels_caption(parameters: Any) -> str:
    """``cowos ×0.70 / ×1.30; grid_delay −2 / +4 quarters`` for the tornado caption."""
    ops = parameter_ops(parameters)
    return "; ".join(
        f"{p.name}: {level_text(ops[p.name], p.low)} / {level_text(ops[p.name], p.high)}"
        for p in parameters
    )


def with_level_text(df: pd.DataFrame, ops: Mapping[str, str]) -> pd.DataFrame:
    """Add a ``level_text`` column (see :func:`level_text`) after ``level`` in a tornado table."""
    if df is None or df.empty or "level" not in df.columns:
        return df
    out = df.copy()
    txt = [
        level_text(ops.get(str(p), "scale"), float(v))
        for p, v in zip(out["parameter"], out["level"], strict=True)
    ]
    out.insert(list(out.columns).index("level") + 1, "level_text", txt)
    return out


#: Label and unit of each Monte Carlo or replanning outcome (rows of a percentiles table).
OUTCOME_LABELS = {
    "total_cost_usd": "total cost (discounted)",
    "unmet_h100e": f"unmet demand [{QUARTER_SUMS['unmet_h100e']}]",
    "trainium_share": "Trainium share of served H100e",
    "breach_mw": f"commitment breach [{QUARTER_SUMS['breach_mw']}]",
    "regret_usd": "regret (discounted)",
    "regret_share": "regret, share of perfect foresight's cost",
    "realised_cost_usd": "realised cost (discounted)",
    "perfect_foresight_cost_usd": "perfect-foresight cost (discounted)",
    "served_share": "served share of H100e demand",
    "perfect_foresight_served_share": "served share, perfect foresight",
}


def outcome_value_text(outcome: str, value: float) -> str:
    """One percentile of one outcome in its unit: ``$123.72B``, ``52.6%``, ``288,000``."""
    if value is None or pd.isna(value):
        return "n/a"
    if outcome.endswith("_usd"):
        return fmt_usd(float(value))
    if outcome.endswith("share"):
        return f"{float(value):.1%}"
    return "∞" if np.isinf(value) else f"{float(value):,.0f}"


def percentiles_view(pct: pd.DataFrame) -> pd.DataFrame:
    """Return the Monte Carlo percentiles table with each row in its own unit.

    Parameters
    ----------
    pct : DataFrame
        :func:`optimizer.analysis.outcomes.outcome_percentiles` (``outcome, p10, p50, p90,
        mean, n``); each row holds one outcome, so each row has its own unit.

    Returns
    -------
    DataFrame
        ``outcome, P10, P50, P90, mean, samples``: text cells (``$123.72B``, ``52.6%``).
    """
    rows = []
    for r in pct.to_dict("records"):
        o = str(r["outcome"])
        row = {"outcome": OUTCOME_LABELS.get(o, o)}
        for k, label in (("p10", "P10"), ("p50", "P50"), ("p90", "P90"), ("mean", "mean")):
            row[label] = outcome_value_text(o, r[k])
        row["samples"] = str(int(r.get("n") or 0))
        rows.append(row)
    return pd.DataFrame(rows)


#: A plan's status in words where its code name does not fit a metric box
#: (``time_limit_f…`` was cut off, and ``feasible at li…`` at 1,400 px), with the note
#: shown under it.
STATUS_WORDS = {
    "time_limit_feasible": ("feasible", "at the time limit"),  # not proven optimal
    "time_limit_no_solution": ("no plan", "by the time limit"),
}


def status_words(status: str) -> str:
    """Return a plan's status for a metric box: ``optimal``, ``feasible``, ``no plan`` ..."""
    return STATUS_WORDS.get(status, (str(status).replace("_", " "), ""))[0]


def status_note(status: str) -> str | None:
    """Return the note under a status metric (None: none), such as the time limit's."""
    return STATUS_WORDS.get(status, ("", ""))[1] or None
