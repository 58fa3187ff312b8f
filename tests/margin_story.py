"""The margin story of the default data, as docs/guide/margin.md quotes it.

:func:`story` renders the figures of one margin-mode plan of the default data as the
Markdown block between the guide's ``margin-story`` markers; ``tests/test_margin_guide.py``
compares the page with a fresh solve and prints the fresh block when they differ, so
the page is refreshed by pasting it.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

START = "<!-- margin-story:start -->"
END = "<!-- margin-story:end -->"


def _b(usd: float) -> str:
    """Return USD in billions with one decimal, e.g. ``$545.9B``."""
    return f"${usd / 1e9:,.1f}B"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(r) + " |" for r in rows]


def _customers(t: dict[str, pd.DataFrame]) -> list[str]:
    rev = t["customer_revenue"].groupby("customer")[["revenue_usd", "unserved_revenue_usd"]].sum()
    rev = rev.sort_values("revenue_usd", ascending=False)
    rows = [[k, _b(r.revenue_usd), _b(r.unserved_revenue_usd)] for k, r in rev.iterrows()]
    return _table(["customer", "revenue", "revenue left unserved"], rows)


def _chips(t: dict[str, pd.DataFrame]) -> list[str]:
    nr = t["net_revenue"].groupby("chip")[["revenue_usd", "cost_usd", "margin_usd"]].sum()
    ue = t["unit_economics"].groupby("chip")[["cost_usd", "served_h100e_hours"]].sum()
    unit = ue["cost_usd"] / ue["served_h100e_hours"]
    nr = nr.sort_values("margin_usd", ascending=False)
    rows = [
        [
            c,
            _b(r.revenue_usd),
            _b(r.cost_usd),
            _b(r.margin_usd),
            f"${unit.get(c, float('nan')):.2f}",
        ]
        for c, r in nr.iterrows()
    ]
    header = ["chip", "revenue", "chip rent + energy", "margin", "delivered USD per H100e-hour"]
    return _table(header, rows)


def _limits(t: dict[str, pd.DataFrame]) -> list[str]:
    sp = t["shadow_prices"]
    sp = sp[
        sp["binding"].astype(bool)
        & (sp["family"].isin(["site_it_power", "site_grid", "supply_resource", "site_water"]))
    ]
    worth = (-sp.groupby(["family", "key", "unit"])["shadow_price"].sum()) / 1e6
    worth = worth.sort_values(ascending=False).head(5)
    rows = [
        [f, k, f"+${v:,.1f}M per {str(u).removeprefix('USD/')}"] for (f, k, u), v in worth.items()
    ]
    return _table(["limit", "at", "margin of one more unit in every binding quarter"], rows)


def _calibration(t: dict[str, pd.DataFrame]) -> list[str]:
    cal = t["calibration"]
    cal = cal[cal["metric"] == "delivered_cost_ratio_vs_nvidia"]
    rows = [
        [r.scope, r.period, f"{r.plan_value:.2f}", f"{r.record_low:.2f}-{r.record_high:.2f}"]
        for r in cal.itertuples()
    ]
    return _table(["scope", "period", "modelled ratio", "vendor claim"], rows)


def story(result: Any) -> str:
    """Return the guide's figures of a margin-mode plan as Markdown (between the markers)."""
    t = result.tables
    con = t["contracts"]
    lines = [
        START,
        "```text",
        f"margin {_b(result.margin_usd)} = revenue {_b(result.revenue_usd)} "
        f"- cost {_b(result.cost_usd)} (discounted)",
        f"billed under contracts {_b(con['billed_usd'].sum())} (usage, unused take-or-pay "
        "floors, reservation fees), "
        f"refunds and SLA credits {_b(con['credits_usd'].sum())}",
        "```",
        "",
        "Revenue by customer (discounted):",
        "",
        *_customers(t),
        "",
        "Revenue, cost and margin by chip generation (net_revenue, discounted) and the "
        "delivered cost per H100e-hour (unit_economics, undiscounted):",
        "",
        *_chips(t),
        "",
        "What the five most valuable limits are worth in margin (minus the summed shadow "
        "prices of their binding quarters):",
        "",
        *_limits(t),
        "",
        "Trainium against NVIDIA, delivered cost per H100e-hour (calibration; vendor "
        "claims, not measurements):",
        "",
        *_calibration(t),
        END,
    ]
    return "\n".join(lines)
