"""Display formats of the app: money in USD billions, tornado levels, table column configs.

Tables keep their numbers (so a column still sorts numerically); only the column
config and the column scale change for display. Money columns (suffix ``_usd``) are
shown in billions of USD as ``$123.72B``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from optimizer.output.formatting import fmt_usd as summary_fmt_usd

USD_BN_FORMAT = "$%.2fB"
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


def usd_billions(df: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Rescale every ``*_usd`` column to USD billions and return its column config.

    Parameters
    ----------
    df : DataFrame
        Any table; columns ending in ``_usd`` hold USD.

    Returns
    -------
    (DataFrame, dict)
        A copy where each ``x_usd`` column is divided by 1e9 and renamed ``x_usd_bn``
        (numeric, so it still sorts), and ``{column: NumberColumn}`` showing it as
        ``$123.72B`` under the label ``x [USD]``.
    """
    money = [c for c in df.columns if str(c).endswith("_usd")]
    out = df.copy()
    config: dict[str, Any] = {}
    for c in money:
        new = f"{c}_bn"
        values = pd.to_numeric(out[c], errors="coerce")
        if np.isinf(values.to_numpy(dtype=float)).any():
            # a number column would print "Infinity": show every cell as text instead
            out[c] = [fmt_usd(v) for v in values]
            out = out.rename(columns={c: new})
            config[new] = st.column_config.TextColumn(
                f"{str(c)[: -len('_usd')].replace('_', ' ')} [USD]"
            )
            continue
        out[c] = values / 1e9
        out = out.rename(columns={c: new})
        config[new] = st.column_config.NumberColumn(
            f"{str(c)[: -len('_usd')].replace('_', ' ')} [USD]", format=USD_BN_FORMAT
        )
    return out, config


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


#: Label and unit of each Monte Carlo outcome (rows of the percentiles table).
OUTCOME_LABELS = {
    "total_cost_usd": "total cost (discounted)",
    "unmet_h100e": "unmet demand [H100e-quarters]",
    "trainium_share": "Trainium share of served H100e",
    "breach_mw": "commitment breach [MW-quarters]",
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
