"""Plausibility warnings for penalty columns (a penalty typed with extra zeros).

A penalty is a price the planner pays for not serving: far above anything a customer
pays, it silently dominates the objective and turns every shadow price into a
multiple of itself. These checks only warn (the data may be deliberate).

* ``customers.unmet_penalty_usd_per_h100e_period`` above :data:`UNMET_PRICE_RATIO`
  times the customer's highest price (or above :data:`UNMET_ABS_USD` when it has no
  price);
* ``commitments.breach_penalty_usd_per_mw`` above :data:`BREACH_ABS_USD` per
  MW-quarter.

Thresholds are assumptions of this check: an H100-equivalent rents for about 4-6k
USD a quarter (the bundled ``customers.csv``), so a penalty a hundred times that is
already extreme; a MW of IT holds about 600 H100e (1.7 kW each, CONTEXT), about 3M
USD of revenue a quarter, so 1e10 USD per MW-quarter is over a thousand times that.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from capacity.validation import Finding

__all__ = ["BREACH_ABS_USD", "UNMET_ABS_USD", "UNMET_PRICE_RATIO", "penalty_warnings"]

UNMET_PRICE_RATIO = 100.0
UNMET_ABS_USD = 1e7
BREACH_ABS_USD = 1e10

_PRICES = ("price_training_usd_per_h100e_period", "price_inference_usd_per_h100e_period")


def _unmet(customers: pd.DataFrame, file: str) -> list[Finding]:
    col = "unmet_penalty_usd_per_h100e_period"
    out = []
    for i, r in enumerate(customers.to_dict("records")):
        pen = float(r.get(col) or 0.0)
        price = max(float(r.get(c) or 0.0) for c in _PRICES)
        limit = UNMET_PRICE_RATIO * price if price > 0 else UNMET_ABS_USD
        if pen > limit:
            what = f"{pen / price:,.0f} times its highest price" if price > 0 else "no price"
            out.append(
                Finding(
                    "warning",
                    file,
                    i + 2,
                    col,
                    f"{pen:g}",
                    f"implausible penalty: {what} (above {limit:,.0f} USD per "
                    "H100e-quarter); check for extra zeros or a unit slip",
                )
            )
    return out


def _breach(commitments: pd.DataFrame, file: str) -> list[Finding]:
    col = "breach_penalty_usd_per_mw"
    out = []
    for i, v in enumerate(commitments[col].tolist() if col in commitments else []):
        if float(v or 0.0) > BREACH_ABS_USD:
            out.append(
                Finding(
                    "warning",
                    file,
                    i + 2,
                    col,
                    f"{float(v):g}",
                    f"implausible penalty: above {BREACH_ABS_USD:g} USD per MW-quarter "
                    "(over a thousand times the revenue of a MW); check for extra zeros",
                )
            )
    return out


def penalty_warnings(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    """Return warnings for penalties far beyond plausible values (see module docstring).

    Parameters
    ----------
    tables : mapping of str to DataFrame
        Typed tables (``customers``, ``commitments``).
    files : mapping of str to str
        File name per table.
    """
    out: list[Finding] = []
    if "customers" in tables:
        out += _unmet(tables["customers"], files.get("customers", "customers.csv"))
    if "commitments" in tables:
        out += _breach(tables["commitments"], files.get("commitments", "commitments.csv"))
    return out
