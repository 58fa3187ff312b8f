"""Cross-table rules of the speed-to-power tables (:mod:`capacity.tables_power`)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from capacity.validation import Finding

__all__ = ["check_power_equipment"]


def _table(tables: Mapping[str, pd.DataFrame], name: str) -> pd.DataFrame:
    """Table ``name``, or an empty frame when the dataset lacks it."""
    df = tables.get(name)
    return pd.DataFrame() if df is None else df


def _blank(df: pd.DataFrame) -> bool:
    return df.empty


def check_power_equipment(
    tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]
) -> list[Finding]:
    """Cross-table rules of the speed-to-power tables.

    A bill-of-materials row names a technology that no ``onsite_generation`` row and
    no ``grid_upgrades`` option has, or an order book with no capacity row; a flexible
    offer has a curtailment share outside [0, 1), names an option the site does not
    have, or a flexible lead longer than the option's lead.

    Returns
    -------
    list of Finding
        Errors naming file, row (header = 1), column and value.
    """
    out: list[Finding] = []
    bom = _table(tables, "power_bill_of_materials")
    onsite = _table(tables, "onsite_generation")
    upgrades = _table(tables, "grid_upgrades")
    known = set()
    for df, col in ((onsite, "technology"), (upgrades, "option")):
        if not _blank(df) and col in df:
            known |= set(df[col].astype(str))
    if not _blank(bom):
        f = files.get("power_bill_of_materials", "power_bill_of_materials.csv")
        books = _table(tables, "equipment_order_books")
        have = set() if _blank(books) else set(books["resource"].astype(str))
        for i, (tech, res) in enumerate(
            zip(bom["technology"].astype(str), bom["resource"].astype(str), strict=True)
        ):
            if tech not in known:
                msg = (
                    f"unknown technology {tech!r}: not an onsite_generation technology "
                    "or a grid_upgrades option."
                )
                out.append(Finding("error", f, i + 2, "technology", tech, msg))
            if res not in have:
                msg = f"unknown order book {res!r}: not in equipment_order_books."
                out.append(Finding("error", f, i + 2, "resource", res, msg))
    out += _check_flexible(tables, files)
    return out


def _check_flexible(tables: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Finding]:
    flex = _table(tables, "flexible_interconnection")
    if _blank(flex):
        return []
    out: list[Finding] = []
    f = files.get("flexible_interconnection", "flexible_interconnection.csv")
    upgrades = _table(tables, "grid_upgrades")
    lead: dict[tuple[str, str], float] = {}
    if not _blank(upgrades):
        for s, o, n in zip(
            upgrades["site"].astype(str),
            upgrades["option"].astype(str),
            upgrades["lead_periods"],
            strict=True,
        ):
            lead[(s, o)] = float(pd.to_numeric(n, errors="coerce"))
    for i, r in enumerate(flex.itertuples(index=False)):
        row = i + 2
        share = pd.to_numeric(pd.Series([r.curtailment_share]), errors="coerce").iat[0]
        if pd.notna(share) and not 0.0 <= float(share) < 1.0:
            msg = "curtailment_share must lie in [0, 1): a share of 1 would cut every hour."
            out.append(Finding("error", f, row, "curtailment_share", str(r.curtailment_share), msg))
        key = (str(r.site), str(r.option))
        if key not in lead:
            msg = f"no grid_upgrades row for site {key[0]!r} and option {key[1]!r}."
            out.append(Finding("error", f, row, "option", key[1], msg))
            continue
        early = pd.to_numeric(pd.Series([r.flexible_lead_periods]), errors="coerce").iat[0]
        if pd.notna(early) and float(early) > lead[key]:
            msg = (
                f"flexible_lead_periods {early:g} is longer than the option's lead_periods "
                f"{lead[key]:g}: a flexible offer comes earlier, never later."
            )
            out.append(
                Finding("error", f, row, "flexible_lead_periods", str(r.flexible_lead_periods), msg)
            )
    return out
