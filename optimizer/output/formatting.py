"""Compact number formats of the summary: USD, quantities with k/M/B/T, energy, water, MW."""

from __future__ import annotations

import math

__all__ = ["fmt_energy", "fmt_mw", "fmt_qty", "fmt_usd", "fmt_water"]


def fmt_usd(x: float | None, digits: int = 1) -> str:
    """Format USD compactly: ``412.3e9 -> "$412.3B"``, ``-2.5e6 -> "-$2.5M"``.

    Returns "n/a" for None or NaN and "∞" / "-∞" for an infinite amount (e.g. an
    unbounded value of the stochastic solution).
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    sign = "-" if x < 0 else ""
    return f"{sign}${fmt_qty(abs(x), digits)}"


def fmt_qty(x: float | None, digits: int = 1) -> str:
    """Format a quantity with a k/M/B/T suffix: ``1234567 -> "1.2M"``; small ones plain."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    a = abs(x)
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return f"{x / div:.{digits}f}{suffix}"
    if a == 0:
        return "0"
    return f"{x:.{digits}f}" if a < 10 else f"{x:.0f}"


def fmt_energy(mwh: float) -> str:
    """Format energy from MWh: ``2.589e8 -> "258.90 TWh"``, ``1200 -> "1.20 GWh"``."""
    if abs(mwh) >= 1e6:
        return f"{mwh / 1e6:,.2f} TWh"
    if abs(mwh) >= 1e3:
        return f"{mwh / 1e3:,.2f} GWh"
    return f"{mwh:,.1f} MWh"


def fmt_water(m3: float) -> str:
    """Format water from m3: ``1.05e8 -> "104.94 million m3"``, ``2500 -> "2,500 m3"``."""
    if abs(m3) >= 1e6:
        return f"{m3 / 1e6:,.2f} million m3"
    return f"{m3:,.0f} m3"


def fmt_mw(x: float) -> str:
    """Format MW: ``1234.5 -> "1,234"``, ``12.34 -> "12.3"``, ``0.1234 -> "0.12"``."""
    a = abs(x)
    if a >= 100:
        return f"{x:,.0f}"
    if a >= 1:
        return f"{x:,.1f}"
    return f"{x:.2g}"
