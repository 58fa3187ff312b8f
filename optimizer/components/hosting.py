"""Site hosting: which chip families or vendors a site may host.

Maths: a chip c may be installed at site s only if ``hosts_s`` is empty or names
the chip's ``family`` or ``vendor`` (case-insensitive, ``;``-separated):
``install[c,s,p] = 0`` (no column) and so ``fleet[c,s,p] = 0`` for every other
(c, s). The rule is a mask on the install columns (:func:`hosted_pairs`, used by
:mod:`optimizer.plan.columns`), so ``site_hosting`` has no LP rows and no dual; the
checker recomputes it from the fleet (initial fleet included), and
:func:`hosting_exclusions` words the demand a hosting rule leaves with nowhere to go
in the infeasibility / unserved explanation.

Example: New Carlisle (Project Rainier) hosts ``trainium`` only, so GB200 or B300
never land there, whatever their price per H100e.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.plan_context import PlanContext
from optimizer.components.records import ConstraintFamily
from optimizer.components.scenario import ScenarioColumns, ScenarioData
from optimizer.lp.builder import ModelBuilder
from optimizer.lp.frames import column_values
from optimizer.lp.grouping import Groups, as_target
from optimizer.lp.violations import flagged


def parse_hosts(text: Any) -> frozenset[str]:
    """Return the lower-case families or vendors of a ``hosts`` cell (empty set = any)."""
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return frozenset()
    return frozenset(p.strip().lower() for p in str(text).split(";") if p.strip())


def may_host(hosts: frozenset[str], family: str, vendor: str) -> bool:
    """Return True when a site with ``hosts`` may host a chip of ``family`` or ``vendor``."""
    return not hosts or family.lower() in hosts or vendor.lower() in hosts


def _allowed(sites: pd.DataFrame, chips: pd.DataFrame, site_ids: Any, chip_ids: Any) -> np.ndarray:
    """Boolean per (site, chip) pair: the site may host the chip (both given by label)."""
    if "hosts" not in sites:
        return np.ones(len(site_ids), dtype=bool)
    hosts = sites["hosts"].map(parse_hosts).reindex(site_ids).to_numpy()
    family = chips["family"].astype(str).reindex(chip_ids).to_numpy()
    vendor = chips["vendor"].astype(str).reindex(chip_ids).to_numpy()
    return np.array(
        [
            may_host(h if isinstance(h, frozenset) else frozenset(), str(f), str(v))
            for h, f, v in zip(hosts, family, vendor, strict=True)
        ],
        dtype=bool,
    )


def hosted_pairs(scenario: ScenarioData, pairs: pd.DataFrame) -> pd.DataFrame:
    """Keep the (c, s) code pairs whose site may host the chip.

    Parameters
    ----------
    scenario : ScenarioData
    pairs : DataFrame
        ``c, s`` codes (any further columns are kept).

    Returns
    -------
    DataFrame
        The rows of ``pairs`` allowed by the site's ``hosts`` rule.
    """
    keep = _allowed(
        scenario.sites, scenario.chips, column_values(pairs, "s"), column_values(pairs, "c")
    )
    return pairs[keep]


def define_site_hosting(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Site hosting: install[c,s,p] = 0 unless hosts_s is empty or names family_c / vendor_c.

    A mask, not rows: :func:`hosted_pairs` removes the install columns when the model
    is built, so this adds nothing.
    """
    return None


def check_site_hosting(inputs: PlanContext) -> pd.DataFrame:
    """No fleet (initial or installed) of a chip at a site that may not host it."""
    fleet = inputs.fleet
    fleet = fleet[fleet["fleet_chips"].abs().to_numpy() > inputs.tolerance]
    pairs = Groups([fleet["site"], fleet["chip"]])  # each (site, chip) pair tested once
    sites, chips = inputs.sites, inputs.chips
    site, chip = as_target(sites.index, pairs.key(0)), as_target(chips.index, pairs.key(1))
    allowed = _allowed(sites, chips, site, chip)[pairs.ids]
    return flagged(
        "site_hosting",
        fleet,
        ~allowed,
        "fleet_chips",
        lambda b: b["site"] + "/" + b["chip"] + "," + b["period"],
        inputs.tolerance,
    )


def hosting_exclusions(dataset: Any, customer: str) -> list[str]:
    """Eligible (chip, site) pairs of ``customer`` that a hosting rule excludes.

    Returns
    -------
    list of str
        ``"trainium2 at atlanta (hosts nvidia)"`` per excluded pair whose site lies in
        the customer's allowed regions; empty when hosting excludes nothing.
    """
    sites = dataset.table("sites").set_index("site")
    chips = dataset.table("chips").set_index("chip")
    if "hosts" not in sites:
        return []
    el = dataset.table("eligibility")
    el = el[el["customer"].astype(str) == customer]
    out = []
    for row in el.itertuples():
        regions = {r.strip() for r in str(row.regions).split(";") if r.strip()}
        for site, srow in sites.iterrows():
            if regions and str(srow["region"]) not in regions:
                continue
            hosts = parse_hosts(srow["hosts"])
            chip = str(row.chip)
            if chip in chips.index and not may_host(
                hosts, str(chips.at[chip, "family"]), str(chips.at[chip, "vendor"])
            ):
                out.append(f"{chip} at {site} (hosts {';'.join(sorted(hosts))})")
    return out


FAMILIES = (
    ConstraintFamily(
        "site_hosting",
        "chips",
        define_site_hosting,
        check_site_hosting,
        "site/chip {key} hosts a forbidden chip in {period}: {amount} chips",
        "chips",
        ("s", "c"),
        summary_words="hosting rule for {1} at {0}",
    ),
)
