"""The report keys a statistic groups by, and the dataset columns that name them.

A result table carries ``site``, ``chip``, ``customer``, ``workload`` and ``period``;
``region`` (of a site), ``family`` and ``vendor`` (of a chip) and ``year`` (of a
period) come from the dataset (:class:`PlanKeys`). The per-unit capital costs
(``capex_usd_per_chip``, ``build_capex_usd_per_mw``, ``retrofit_capex_usd_per_mw``)
travel with them so that capex can be split by chip and site exactly as the costs
table's cash view counts it.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["NONE_LABEL", "REPORT_KEYS", "PlanKeys", "select_rows", "with_keys"]

REPORT_KEYS = ("site", "region", "chip", "family", "vendor", "customer", "workload", "period")
"""The keys of the result tables a statistic may group by, plus ``year`` (see below)."""

NONE_LABEL = "n/a"
"""The key value of a row the key does not apply to (build capex has no chip)."""

_SITE_COLUMNS = ("site", "region", "build_capex_usd_per_mw", "retrofit_capex_usd_per_mw")
_CHIP_COLUMNS = ("chip", "vendor", "family", "capex_usd_per_chip")


def _empty(columns: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


@dataclass(frozen=True)
class PlanKeys:
    """What a plan's statistics need from its dataset: key maps and unit capex.

    Attributes
    ----------
    sites : DataFrame
        ``site, region, build_capex_usd_per_mw, retrofit_capex_usd_per_mw`` (USD/MW).
    chips : DataFrame
        ``chip, vendor, family, capex_usd_per_chip`` (USD per chip).
    periods : tuple of str
        The horizon's quarters in order (``2026Q1`` ...).
    """

    sites: pd.DataFrame = field(default_factory=lambda: _empty(_SITE_COLUMNS))
    chips: pd.DataFrame = field(default_factory=lambda: _empty(_CHIP_COLUMNS))
    periods: tuple[str, ...] = ()

    @property
    def known(self) -> bool:
        """True when the key maps come from a dataset (not an empty placeholder)."""
        return len(self.sites) > 0 or len(self.chips) > 0

    @classmethod
    def from_dataset(cls, ds: Any) -> PlanKeys:
        """Return the keys of a :class:`capacity.Dataset` (its sites, chips, periods).

        Parameters
        ----------
        ds : capacity.Dataset
            The dataset the plan was solved from (after its scenario).

        Returns
        -------
        PlanKeys
        """
        sites = ds.table("sites")
        chips = ds.table("chips")
        site_cols = [c for c in _SITE_COLUMNS if c in sites.columns]
        return cls(
            sites=sites[site_cols].reset_index(drop=True).copy(),
            chips=chips[list(_CHIP_COLUMNS)].reset_index(drop=True).copy(),
            periods=tuple(ds.periods),
        )

    def site_values(self, column: str, sites: pd.Series) -> np.ndarray:
        """Return ``column`` of the sites table for each site in ``sites`` (NaN if absent)."""
        return _lookup(self.sites, "site", column, sites)

    def chip_values(self, column: str, chips: pd.Series) -> np.ndarray:
        """Return ``column`` of the chips table for each chip in ``chips`` (NaN if absent)."""
        return _lookup(self.chips, "chip", column, chips)


def _lookup(table: pd.DataFrame, key: str, column: str, values: pd.Series) -> np.ndarray:
    if column not in table.columns:
        return np.full(len(values), np.nan)
    mapping = pd.Series(table[column].to_numpy(), index=table[key].astype(str).to_numpy())
    return values.astype(str).map(mapping).to_numpy()


#: Derived key -> (the key it is derived from, the key-map column that names it).
_DERIVED = {
    "region": ("site", "region"),
    "family": ("chip", "family"),
    "vendor": ("chip", "vendor"),
}


def derivable_keys(columns: Sequence[str]) -> list[str]:
    """Return the derived keys :func:`with_keys` can add to rows with these ``columns``.

    ``region`` from ``site``, ``family`` and ``vendor`` from ``chip``, ``year`` from
    ``period``: what a statistic can be grouped or selected by beyond its own columns.
    """
    have = set(columns)
    out = [name for name, (source, _) in _DERIVED.items() if source in have]
    return out + (["year"] if "period" in have else [])


def with_keys(df: pd.DataFrame, keys: PlanKeys, wanted: Sequence[str]) -> pd.DataFrame:
    """Return ``df`` with the derived keys in ``wanted`` added as columns.

    ``region`` comes from ``site``, ``family`` and ``vendor`` from ``chip`` (via
    ``keys``) and ``year`` (int) from ``period``; a row without the source key (a
    cost term with no site) gets :data:`NONE_LABEL`.

    Parameters
    ----------
    df : DataFrame
        A statistic's rows before grouping.
    keys : PlanKeys
    wanted : sequence of str
        The keys asked for.

    Returns
    -------
    DataFrame
        A copy with the missing derived keys added.

    Raises
    ------
    ValueError
        When a derived key is asked for but the plan has no dataset to map it
        (a report read without ``data=``).
    """
    out = df.copy()
    for name, (source, column) in _DERIVED.items():
        if name in wanted and name not in out.columns and source in out.columns:
            table = keys.sites if source == "site" else keys.chips
            if len(table) == 0:
                raise ValueError(
                    f"grouping by {name!r} needs the dataset's {source}s table; read the "
                    "report with read_report(path, data=DATA_DIR)"
                )
            lookup = keys.site_values if source == "site" else keys.chip_values
            mapped = pd.Series(lookup(column, out[source].fillna("")), index=out.index)
            out[name] = mapped.where(out[source].notna() & (out[source] != NONE_LABEL), NONE_LABEL)
            out[name] = out[name].fillna(NONE_LABEL).astype(str)
    if "year" in wanted and "period" in out.columns and "year" not in out.columns:
        out["year"] = out["period"].astype(str).str[:4].astype(int)
    return out


def select_rows(rows: pd.DataFrame, where: Any, name: str = "") -> pd.DataFrame:
    """Return the rows whose keys take one of the values in ``where`` (all when None).

    Parameters
    ----------
    rows : DataFrame
        A statistic's rows, its keys among the columns.
    where : mapping of str to a value or a list of values, optional
        One value (a str, a number, None) or a list per key.
    name : str
        The statistic, for the warning.

    Raises
    ------
    TypeError
        When ``where`` is not a mapping.

    Warns
    -----
    UserWarning
        For a value that matches no row (naming the values the key takes).
    """
    if where is not None and not isinstance(where, Mapping):  # ["site"]: no .items()
        raise TypeError(f"where: give a mapping of key to value(s), not {where!r}")
    keep = np.ones(len(rows), dtype=bool)
    for key, value in (where or {}).items():  # one value (None, 2026.0 too) or a list
        allowed = list(value) if isinstance(value, list | tuple | set | np.ndarray) else [value]
        hit = rows[key].isin(allowed).to_numpy()
        absent = [v for v in allowed if not rows[key].isin([v]).any()]
        if absent and len(rows):
            have = ", ".join(sorted(map(repr, rows[key].dropna().unique()))[:12])
            msg = f"where {key}={absent!r} matches no row; its values include {have}"
            warnings.warn(f"statistics.{name}: {msg}", stacklevel=4)
        keep &= hit
    return rows[keep]
