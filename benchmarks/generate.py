"""Synthetic planning instances of the real schema, with scale knobs.

:func:`generate_tables` returns one frame per input table (the contract of
``capacity/schema.py``); :func:`generate` validates them with
:meth:`capacity.dataset.Dataset.from_tables`. Every instance is feasible by
construction (unmet demand and commitment breach are priced slacks; the initial
fleet fits its site's initial IT capacity, grid and water at every period) and
deterministic for a given seed.

Figures are the default dataset's orders of magnitude (``data/``): chips of 0.8-2.6
kW all-in IT power and 0.6-7 H100e, sites of 300-2,200 MW, PUE 1.06-1.35, WUE
0.05-2.2 L/kWh, build capex 11-15 M USD/MW. They are synthetic (assumption), for
timing only.

The LP's size is dominated by ``assign[c, s, k, w, p]`` (chips x eligible sites x
customers x 2 workloads x periods where the chip can be in the fleet), so
``n_variables`` grows roughly as ``customers * chips * sites * eligibility *
periods``. :data:`SIZES` holds the named sizes, calibrated against the real model
builder (``optimizer.plan.model.build_model``); ``benchmarks/RESULTS.md`` records the
measured counts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from capacity.dataset import Dataset
from capacity.schema import period_index, period_label

WORKLOADS = ("training", "inference")
RESOURCES = ("tsmc_n4_wafers", "tsmc_n3_wafers", "cowos_wafers", "hbm_stacks")
FAMILIES = ("nvidia", "trainium", "custom")


@dataclass(frozen=True)
class Size:
    """Scale knobs of a synthetic instance.

    Attributes
    ----------
    periods : int
        Horizon length in quarters (starting 2025Q1).
    sites : int
        Number of sites.
    chips : int
        Number of chip generations (sale windows staggered over the horizon).
    customers : int
        Number of customers (each has training and inference demand).
    eligibility : float
        Share (0-1] of (customer, chip) pairs that are eligible.
    regions : int
        Number of regions sites are spread over (some eligibility rows restrict
        to a subset of regions).
    seed : int
        Random seed.
    """

    periods: int = 24
    sites: int = 9
    chips: int = 9
    customers: int = 4
    eligibility: float = 0.9
    regions: int = 5
    seed: int = 0


#: Named sizes. ``default`` has the default dataset's dimensions (24 quarters, 9
#: sites, 9 chips, 4 customers); ``large`` is >= 400k LP columns and ``xl`` about
#: 1.6M in the reference formulation (measured counts in benchmarks/RESULTS.md).
#: ``xxl`` is four times ``xl``'s sites over the same 48-quarter horizon (an instance
#: "about 4x xl ... over the same horizon"; the schema's periods are quarters, so
#: monthly steps cannot be generated): 3.1x xl's compact columns, 3.5x its rows, 3.4x
#: its nonzeros. ``xxl96`` is the earlier xxl: twice xl's sites, a third more chip
#: generations and a doubled (24-year) horizon, on which HiGHS's interior point method
#: stops with "no progress" (benchmarks/RESULTS.md).
SIZES: dict[str, Size] = {
    "small": Size(periods=6, sites=3, chips=3, customers=2, eligibility=1.0, regions=2),
    "default": Size(),
    "medium": Size(periods=32, sites=20, chips=12, customers=10, eligibility=0.8, regions=6),
    "large": Size(periods=40, sites=36, chips=14, customers=24, eligibility=0.8, regions=8),
    "xl": Size(periods=48, sites=60, chips=18, customers=40, eligibility=0.75, regions=10),
    "xxl": Size(periods=48, sites=240, chips=18, customers=40, eligibility=0.75, regions=10),
    "xxl96": Size(periods=96, sites=120, chips=24, customers=40, eligibility=0.75, regions=10),
}


def generate_tables(size: Size) -> dict[str, pd.DataFrame]:
    """Build the input tables of a synthetic instance.

    Parameters
    ----------
    size : Size
        Scale knobs.

    Returns
    -------
    dict of str to DataFrame
        One frame per input table, columns as in ``capacity/schema.py``.

    Raises
    ------
    ValueError
        When a knob is out of range (fewer than 2 periods, no site/chip/customer,
        eligibility outside (0, 1]).
    """
    if size.periods < 2 or min(size.sites, size.chips, size.customers, size.regions) < 1:
        raise ValueError(f"need >= 2 periods and >= 1 site, chip, customer, region: {size}")
    if not 0 < size.eligibility <= 1:
        raise ValueError(f"eligibility must be in (0, 1], got {size.eligibility}")
    rng = np.random.default_rng(size.seed)
    T, S, C, K = size.periods, size.sites, size.chips, size.customers
    p0 = period_index("2025Q1")
    periods = [period_label(p0 + t) for t in range(T)]
    q_hours = {1: 2160.0, 2: 2184.0, 3: 2208.0, 4: 2208.0}
    tables: dict[str, pd.DataFrame] = {}
    tables["periods"] = pd.DataFrame(
        {
            "period": periods,
            "hours": [q_hours[int(p[-1])] for p in periods],
            "discount_factor": np.round(1.08 ** (-np.arange(T) / 4.0), 6),
        }
    )

    # --- sites
    regions = [f"region_{i}" for i in range(size.regions)]
    site_ids = [f"site_{i:03d}" for i in range(S)]
    max_it = rng.uniform(300, 2200, S).round(0)
    init_it = (max_it * rng.uniform(0.0, 0.4, S)).round(0)
    init_liq = (init_it * rng.uniform(0.0, 0.3, S)).round(0)
    pue_air = rng.uniform(1.15, 1.35, S).round(3)
    pue_liq = np.minimum(pue_air, rng.uniform(1.06, 1.15, S)).round(3)
    wue_air = rng.uniform(0.1, 2.2, S).round(3)
    wue_liq = (wue_air * rng.uniform(0.05, 0.3, S)).round(3)
    sites = pd.DataFrame(
        {
            "site": site_ids,
            "display_name": [f"Synthetic site {i}" for i in range(S)],
            "region": [regions[i % size.regions] for i in range(S)],
            "initial_it_mw": init_it,
            "initial_liquid_mw": init_liq,
            "max_it_mw": max_it,
            "max_build_mw_per_period": (max_it * rng.uniform(0.05, 0.12, S)).round(0),
            "liquid_share_max": rng.choice([0.0, 0.5, 0.7, 0.9, 1.0], S),
            "pue_air": pue_air,
            "pue_liquid": pue_liq,
            "wue_l_per_kwh_air": wue_air,
            "wue_l_per_kwh_liquid": wue_liq,
            "build_capex_usd_per_mw": rng.uniform(11e6, 15e6, S).round(-4),
            "energy_price_usd_per_mwh": rng.uniform(40, 90, S).round(1),
            "carbon_t_per_mwh": rng.uniform(0.03, 0.7, S).round(2),
        }
    )
    sites.loc[0, "liquid_share_max"] = 1.0  # at least one site can host liquid-only chips
    tables["sites"] = sites

    # --- chips: staggered sale windows; the first two start before the horizon
    fam = [FAMILIES[i % len(FAMILIES)] for i in range(C)]
    start = np.round(np.linspace(-6, T - 4, C)).astype(int)
    length = rng.integers(6, 13, C)
    gen = (start + 6) / max(T, 1)  # later chips are stronger and hungrier
    kw = (0.85 + 1.6 * gen + rng.uniform(-0.1, 0.1, C)).round(2)
    h100e_tr = (0.7 + 4.0 * gen + rng.uniform(-0.1, 0.1, C)).round(2)
    cooling = np.where(gen > 0.5, "liquid", rng.choice(["air", "either"], C))
    chip_ids = [f"chip_{i:02d}" for i in range(C)]
    tables["chips"] = pd.DataFrame(
        {
            "chip": chip_ids,
            "display_name": [f"Synthetic chip {i}" for i in range(C)],
            "vendor": ["aws" if f == "trainium" else "vendor" for f in fam],
            "family": fam,
            "it_kw_per_chip": np.maximum(kw, 0.5),
            "cooling": cooling,
            "first_period": [period_label(p0 + s) for s in start],
            "last_period": [period_label(p0 + s + n) for s, n in zip(start, length, strict=True)],
            "lifetime_periods": rng.integers(16, 25, C),
            "capex_usd_per_chip": (14000 + 70000 * gen * rng.uniform(0.8, 1.2, C)).round(-2),
            "training_h100e": np.maximum(h100e_tr, 0.5),
            "inference_h100e": np.maximum((h100e_tr * rng.uniform(1.0, 1.4, C)).round(2), 0.5),
            "hbm_gb": rng.choice([80.0, 141.0, 192.0, 288.0], C),
            "unit_name": "synthetic server",
            "chips_per_unit": rng.choice([8, 64, 72, 144], C),
            "idle_power_factor": 0.3,
        }
    )

    # --- grid and water: room for the initial fleet, growing towards the maximum
    growth = np.linspace(0.0, 1.0, T)
    grid = (init_it[:, None] + (max_it - init_it)[:, None] * growth[None, :] * 0.9) * pue_air[
        :, None
    ] + 10.0
    tables["site_grid"] = pd.DataFrame(
        {
            "site": np.repeat(site_ids, T),
            "period": np.tile(periods, S),
            "grid_mw": grid.ravel().round(1),
        }
    )
    hours = tables["periods"]["hours"].to_numpy()
    water = grid / pue_air[:, None] * hours[None, :] * wue_air[:, None] * 0.8 + 1000.0
    tables["site_water"] = pd.DataFrame(
        {
            "site": np.repeat(site_ids, T),
            "period": np.tile(periods, S),
            "water_permit_m3": water.ravel().round(0),
        }
    )

    # --- demand: H100e per customer, workload and period, growing; total sized to
    # about half of the sites' maximum IT power at ~900 H100e per MW
    total_h100e = max_it.sum() * 900.0 * 0.5
    share = rng.dirichlet(np.ones(K)) * total_h100e
    grow = np.linspace(0.35, 1.0, T)
    cust_ids = [f"cust_{i:03d}" for i in range(K)]
    rows = []
    for k in range(K):
        for w, frac in zip(WORKLOADS, (0.6, 0.4), strict=True):
            vals = share[k] * frac * grow * rng.uniform(0.9, 1.1, T)
            rows.append(
                pd.DataFrame(
                    {
                        "customer": cust_ids[k],
                        "workload": w,
                        "period": periods,
                        "demand_h100e": vals.round(0),
                    }
                )
            )
    tables["demand"] = pd.concat(rows, ignore_index=True)
    tables["customers"] = pd.DataFrame(
        {
            "customer": cust_ids,
            "display_name": [f"Synthetic customer {i}" for i in range(K)],
            "price_training_usd_per_h100e_period": rng.uniform(4000, 6000, K).round(0),
            "price_inference_usd_per_h100e_period": rng.uniform(5000, 7000, K).round(0),
            "unmet_penalty_usd_per_h100e_period": rng.uniform(8000, 12000, K).round(0),
        }
    )
    tables["workloads"] = pd.DataFrame({"workload": list(WORKLOADS), "power_factor": [0.85, 0.6]})

    # --- eligibility: a share of (customer, chip) pairs; a fifth restricted to regions
    er = []
    for k in range(K):
        ok = rng.random(C) < size.eligibility
        ok[rng.integers(C)] = True  # every customer can use some chip
        for c in np.flatnonzero(ok):
            reg = ""
            if size.regions > 1 and rng.random() < 0.2:
                pick = rng.choice(size.regions, size=min(2, size.regions), replace=False)
                reg = ";".join(regions[i] for i in sorted(pick))
            derate = 1.0 if fam[c] == "nvidia" else round(float(rng.uniform(0.8, 1.0)), 3)
            er.append((cust_ids[k], chip_ids[c], derate, reg))
    tables["eligibility"] = pd.DataFrame(er, columns=["customer", "chip", "derate", "regions"])

    # --- supply: each chip uses one logic node, CoWoS and HBM
    bom = []
    for c in range(C):
        node = "tsmc_n3_wafers" if gen[c] > 0.5 else "tsmc_n4_wafers"
        bom += [
            (chip_ids[c], node, round(0.02 + 0.03 * gen[c], 4)),
            (chip_ids[c], "cowos_wafers", round(0.034 + 0.05 * gen[c], 4)),
            (chip_ids[c], "hbm_stacks", float(4 + 4 * (gen[c] > 0.4))),
        ]
    tables["chip_bill_of_materials"] = pd.DataFrame(bom, columns=["chip", "resource", "per_chip"])
    # chips needed per period ~ demand growth / ~2.5 H100e per chip, spread over nodes
    chips_per_period = total_h100e / 2.5 / T * 2.0
    cap = {
        "tsmc_n4_wafers": 0.035 * chips_per_period,
        "tsmc_n3_wafers": 0.05 * chips_per_period,
        "cowos_wafers": 0.06 * chips_per_period,
        "hbm_stacks": 6.0 * chips_per_period,
    }
    unit = {
        "tsmc_n4_wafers": "wafers",
        "tsmc_n3_wafers": "wafers",
        "cowos_wafers": "wafers",
        "hbm_stacks": "stacks",
    }
    ramp = np.linspace(0.6, 1.4, T)
    tables["supply_resources"] = pd.DataFrame(
        [
            (
                r,
                periods[t],
                round(cap[r] * ramp[t] * (0.2 if r == "tsmc_n3_wafers" and t < T // 4 else 1.0), 0),
                unit[r],
            )
            for r in RESOURCES
            for t in range(T)
        ],
        columns=["resource", "period", "capacity", "unit"],
    )

    # --- initial fleet: the pre-horizon chips fill at most 60% of initial IT MW
    fl = []
    old = [c for c in range(C) if start[c] < 0 and cooling[c] != "liquid"] or [0]
    for s in range(S):
        if init_it[s] <= 0:
            continue
        c = old[s % len(old)]
        if cooling[c] == "liquid" and init_liq[s] <= 0:
            continue
        cap_mw = (init_liq[s] if cooling[c] == "liquid" else init_it[s]) * 0.6
        n = float(np.floor(cap_mw * 1000.0 / kw[c]))
        if n > 0:
            fl.append((chip_ids[c], site_ids[s], n, period_label(p0 - int(rng.integers(1, 6)))))
    tables["initial_fleet"] = pd.DataFrame(fl, columns=["chip", "site", "chips", "install_period"])

    # --- commitments: a third of the customers commit to a family from mid-horizon
    com = []
    for k in range(0, K, 3):
        f = fam[(k + 1) % C] if C > 1 else fam[0]
        com.append(
            (
                cust_ids[k],
                f,
                periods[T // 3],
                periods[2 * T // 3],
                round(float(rng.uniform(50, 400)), 0),
                1.5e6,
            )
        )
        com.append(
            (
                cust_ids[k],
                f,
                periods[2 * T // 3 + 1] if 2 * T // 3 + 1 < T else periods[-1],
                "",
                round(float(rng.uniform(100, 600)), 0),
                1.5e6,
            )
        )
    tables["commitments"] = pd.DataFrame(
        com,
        columns=[
            "customer",
            "family",
            "from_period",
            "to_period",
            "min_it_mw",
            "breach_penalty_usd_per_mw",
        ],
    )
    tables["sources"] = pd.DataFrame(
        [("*", "*", "*", "", "assumption", f"synthetic benchmark instance {asdict(size)}")],
        columns=["table", "key", "column", "value", "source", "note"],
    )
    return tables


def generate(size: Size | str = "default", **overrides: int | float) -> Dataset:
    """Generate and validate a synthetic Dataset.

    Parameters
    ----------
    size : Size or str
        Knobs, or the name of one of :data:`SIZES`.
    **overrides
        Knob values replacing those of ``size`` (e.g. ``seed=3``).

    Returns
    -------
    capacity.dataset.Dataset
        Named ``synthetic-<periods>p-<sites>s-<chips>c-<customers>k``.

    Raises
    ------
    capacity.validation.DataValidationError
        If the generated tables do not validate (a generator bug).
    """
    base = SIZES[size] if isinstance(size, str) else size
    knobs = {**asdict(base), **overrides}
    sz = Size(**knobs)
    name = f"synthetic-{sz.periods}p-{sz.sites}s-{sz.chips}c-{sz.customers}k-e{sz.eligibility:g}"
    return Dataset.from_tables(generate_tables(sz), name=name)
