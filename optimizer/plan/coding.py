"""Input coding: every ID of a scenario's dataset to an integer code, periods to positions.

:func:`dataset_codes` collects the code tables (union over the scenarios, first-seen
order) and :func:`scenario_data` codes one scenario's tables into a
:class:`~optimizer.components.scenario.ScenarioData` every component reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from capacity.schema import period_index
from optimizer.components.capacity_online import pipeline_by_period
from optimizer.components.power_inputs import source_names
from optimizer.components.scenario import ScenarioData
from optimizer.lp.builder import expand
from optimizer.lp.frames import column_values
from optimizer.lp.join import merge

__all__ = [
    "CLUSTER_RULE_COLUMNS",
    "checked_coded",
    "code_ids",
    "dataset_codes",
    "discount_factors",
    "scenario_data",
]


def discount_factors(ds: Any) -> np.ndarray:
    """Return the discount factor per horizon period."""
    return ds.table("periods")["discount_factor"].to_numpy(dtype=float)


def _hours(ds: Any) -> np.ndarray:
    return ds.table("periods")["hours"].to_numpy(dtype=float)


def code_ids(values: pd.Series, ids: Sequence[str]) -> np.ndarray:
    """Map IDs to integer codes of ``ids`` (-1 when unknown)."""
    lookup = pd.Index(list(ids))
    return lookup.get_indexer(values.astype(str).to_numpy()).astype(np.int64)


def _period_position(labels: pd.Series, first_period_index: int) -> np.ndarray:
    """Period labels -> horizon position (may be negative or >= T)."""
    unique = pd.unique(labels.astype(str))
    position = {u: period_index(u) - first_period_index for u in unique}
    return labels.astype(str).map(position).to_numpy(dtype=np.int64)


def _frame(**columns: Any) -> pd.DataFrame:
    return pd.DataFrame(columns)


def _union_ids(datasets: Sequence[Any], tables: Sequence[str], column: str) -> tuple[str, ...]:
    """IDs of ``column`` over ``tables`` of every dataset, first-seen order."""
    seen: dict[str, None] = {}
    for ds in datasets:
        for table in tables:
            for v in ds.table(table)[column].astype(str):
                seen.setdefault(v, None)
    return tuple(seen)


def dataset_codes(datasets: Sequence[Any]) -> dict[str, tuple[str, ...]]:
    """Return the domain IDs per code letter over the scenarios (first-seen order)."""
    return {
        "s": _union_ids(datasets, ("sites",), "site"),
        "c": _union_ids(datasets, ("chips",), "chip"),
        "k": _union_ids(datasets, ("customers",), "customer"),
        "w": _union_ids(datasets, ("workloads", "demand"), "workload"),
        "r": _union_ids(
            datasets,
            (
                "supply_resources",
                "chip_bill_of_materials",
                "equipment_order_books",
                "power_bill_of_materials",
            ),
            "resource",
        ),
        "f": _union_ids(datasets, ("chips",), "family"),
        "o": _source_codes(datasets),
        "g": _group_ids(datasets),
        "e": _union_ids(datasets, ("sites",), "region"),
    }


def _source_codes(datasets: Sequence[Any]) -> tuple[str, ...]:
    """Power source names over the scenarios (``grid`` first; :mod:`optimizer.components.power`)."""
    seen: dict[str, None] = {}
    for ds in datasets:
        for name in source_names(ds):
            seen.setdefault(name, None)
    return tuple(seen)


def _group_ids(datasets: Sequence[Any]) -> tuple[str, ...]:
    """Demand region groups: "" (anywhere) first, then each ``demand.regions`` text."""
    seen: dict[str, None] = {"": None}
    for ds in datasets:
        d = ds.table("demand")
        if "regions" in d:
            for v in d["regions"].fillna("").astype(str).str.strip():
                seen.setdefault(v, None)
    return tuple(seen)


def _demand_groups(d: pd.DataFrame) -> pd.Series:
    """Return the stripped ``regions`` text of demand rows ("" when the column is absent)."""
    if "regions" not in d:
        return pd.Series("", index=d.index, dtype=object)
    return d["regions"].fillna("").astype(str).str.strip()


# --------------------------------------------------------------- coded scenario tables
def _coded_initial_fleet(
    ds: Any, codes: Mapping[str, tuple[str, ...]], chips: pd.DataFrame, p0: int, T: int
) -> pd.DataFrame:
    """Expand the initial fleet to ``c, s, t, chips`` for the periods each cohort is alive."""
    f0 = ds.table("initial_fleet")
    initial = _frame(
        c=code_ids(f0["chip"], codes["c"]),
        s=code_ids(f0["site"], codes["s"]),
        t_inst=_period_position(f0["install_period"], p0),
        chips=column_values(f0, "chips", dtype=float),
    )
    initial = initial[initial["chips"] > 0]
    if not len(initial):
        return _frame(c=[], s=[], t=[], chips=[]).astype({"c": int, "s": int, "t": int})
    life = chips["lifetime_periods"].reindex(initial["c"]).to_numpy(dtype=np.int64)
    start = np.maximum(column_values(initial, "t_inst"), 0)
    end = np.minimum(column_values(initial, "t_inst") + life, T)  # exclusive
    initial = expand(initial[["c", "s", "chips"]], start, end - start, "t")
    return initial.groupby(["c", "s", "t"], as_index=False)["chips"].sum()


def _coded_demand(ds: Any, codes: Mapping[str, tuple[str, ...]], p0: int, T: int) -> pd.DataFrame:
    """Positive demand rows inside the horizon: ``k, w, g, t, demand_h100e``."""
    d = ds.table("demand")
    demand = _frame(
        k=code_ids(d["customer"], codes["k"]),
        w=code_ids(d["workload"], codes["w"]),
        g=code_ids(_demand_groups(d), codes["g"]),
        t=_period_position(d["period"], p0),
        demand_h100e=column_values(d, "demand_h100e", dtype=float),
    )
    demand = demand[(demand["demand_h100e"] > 0) & (demand["t"] >= 0) & (demand["t"] < T)]
    return demand.reset_index(drop=True)


def _coded_eligibility(
    ds: Any, codes: Mapping[str, tuple[str, ...]], sites: pd.DataFrame
) -> pd.DataFrame:
    """Eligibility expanded to the allowed sites: ``k, c, s, derate``."""
    e = ds.table("eligibility")
    el = _frame(
        k=code_ids(e["customer"], codes["k"]),
        c=code_ids(e["chip"], codes["c"]),
        derate=column_values(e, "derate", dtype=float),
        regions=e["regions"].astype(str).to_numpy(),
    )
    el["region"] = el["regions"].str.split(";")
    el = el.explode("region")
    el["region"] = el["region"].astype(str).str.strip()
    site_region = _frame(s=sites.index.to_numpy(), region=sites["region"].astype(str).to_numpy())
    any_region = el[el["region"] == ""][["k", "c", "derate"]].drop_duplicates()
    any_region = any_region.merge(site_region[["s"]], how="cross")
    some = merge(el[el["region"] != ""], site_region, "region")[["k", "c", "derate", "s"]]
    elig = pd.concat([any_region, some], ignore_index=True).drop_duplicates(["k", "c", "s"])
    return elig[["k", "c", "s", "derate"]].reset_index(drop=True)


def _coded_commitments(
    ds: Any, codes: Mapping[str, tuple[str, ...]], p0: int, T: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Code the commitment rows (``j, k, f, t0, t1, min_it_mw, penalty``) and active periods."""
    cm = ds.table("commitments")
    commitments = _frame(
        j=np.arange(len(cm), dtype=np.int64),
        k=code_ids(cm["customer"], codes["k"]),
        f=code_ids(cm["family"], codes["f"]),
        t0=_period_position(cm["from_period"], p0),
        t1=_period_position(cm["to_period"], p0),
        min_it_mw=column_values(cm, "min_it_mw", dtype=float),
        penalty=column_values(cm, "breach_penalty_usd_per_mw", dtype=float),
    )
    active = commitments[commitments["min_it_mw"] > 0]
    start = np.maximum(column_values(active, "t0"), 0)
    end = np.minimum(column_values(active, "t1"), T - 1) + 1
    return commitments, expand(active, start, end - start, "t")


def _coded_limits(
    ds: Any, codes: Mapping[str, tuple[str, ...]], p0: int
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Code the limit tables.

    Grid (``s, t, grid_mw``), water (``s, t, permit``), supply (``r, t, capacity``)
    and bill of materials (``c, r, per_chip`` > 0).
    """
    g = ds.table("site_grid")
    grid = _frame(
        s=code_ids(g["site"], codes["s"]), t=_period_position(g["period"], p0), grid_mw=g["grid_mw"]
    )
    wt = ds.table("site_water")
    water = _frame(
        s=code_ids(wt["site"], codes["s"]),
        t=_period_position(wt["period"], p0),
        permit=wt["water_permit_m3"],
    )
    su = ds.table("supply_resources")
    supply = _frame(
        r=code_ids(su["resource"], codes["r"]),
        t=_period_position(su["period"], p0),
        capacity=su["capacity"],
    )
    bm = ds.table("chip_bill_of_materials")
    bom = _frame(
        c=code_ids(bm["chip"], codes["c"]),
        r=code_ids(bm["resource"], codes["r"]),
        per_chip=bm["per_chip"],
    )
    return grid, water, supply, bom[bom["per_chip"] > 0]


def _coded_group_sites(codes: Mapping[str, tuple[str, ...]], sites: pd.DataFrame) -> pd.DataFrame:
    """Sites each demand region group may be served at: ``g, s`` (group "" = every site)."""
    site_region = sites["region"].astype(str).str.strip()
    parts = []
    for g, text in enumerate(codes["g"]):
        allowed = {r.strip() for r in text.split(";") if r.strip()}
        ok = np.ones(len(sites), dtype=bool) if not allowed else site_region.isin(allowed)
        parts.append(_frame(g=g, s=sites.index.to_numpy(dtype=np.int64)[np.asarray(ok)]))
    return pd.concat(parts, ignore_index=True).astype(np.int64)


CLUSTER_RULE_COLUMNS = ["min_mw", "min_h100e", "max_sites", "switch_cost_usd", "min_duration"]


def _coded_clusters(
    ds: Any, codes: Mapping[str, tuple[str, ...]], p0: int, T: int, demand: pd.DataFrame
) -> pd.DataFrame:
    """Training-cluster rule per customer and horizon period (``k, t, ..., first``).

    Reads the optional ``training_clusters`` table. ``first`` marks a period that
    begins a training run of the customer: the previous period has no rule or no
    positive training demand of the customer (``demand``: coded ``k, w, t``). No
    cluster start is counted (and no switch cost paid) in such a period: a new run
    is placed freely.
    """
    columns = ["k", "t", *CLUSTER_RULE_COLUMNS, "first"]
    try:
        tc = ds.table("training_clusters")
    except KeyError:  # a dataset-like object without the optional table
        tc = None
    if tc is None or not len(tc):
        return pd.DataFrame({c: pd.Series([], dtype=float) for c in columns}).astype(
            {"k": np.int64, "t": np.int64, "first": bool}
        )
    rules = _frame(
        k=code_ids(tc["customer"], codes["k"]),
        t0=_period_position(tc["from_period"], p0),
        t1=_period_position(tc["to_period"], p0),
        min_mw=column_values(tc, "min_cluster_mw", dtype=float),
        min_h100e=column_values(tc, "min_cluster_h100e", dtype=float),
        max_sites=column_values(tc, "max_sites", dtype=float),
        switch_cost_usd=column_values(tc, "switch_cost_usd", dtype=float),
        min_duration=column_values(tc, "min_duration_periods", dtype=np.int64),
    )
    start = np.maximum(column_values(rules, "t0"), 0)
    end = np.minimum(column_values(rules, "t1"), T - 1) + 1
    out = expand(rules.drop(columns=["t0", "t1"]), start, end - start, "t")
    out = out.sort_values(["k", "t"]).drop_duplicates(["k", "t"]).reset_index(drop=True)
    training = [i for i, w in enumerate(codes["w"]) if w == "training"]
    trained = demand.loc[demand["w"].isin(training).to_numpy(), ["k", "t"]].drop_duplicates()
    previous = merge(out[["k", "t"]], trained, ["k", "t"])
    previous = previous.assign(t=previous["t"] + 1, _p=True)
    out = merge(out, previous, ["k", "t"], how="left")
    out["first"] = out["_p"].isna().to_numpy()
    return out[columns]


def scenario_data(
    index: int, ds: Any, codes: Mapping[str, tuple[str, ...]], cluster_mode: bool = False
) -> ScenarioData:
    """Code one scenario's dataset (every ID -> integer code, periods -> positions)."""
    periods = ds.periods
    T = len(periods)
    p0 = period_index(periods[0])
    sites = ds.table("sites").copy()
    sites.index = code_ids(sites["site"], codes["s"])
    chips = ds.table("chips").copy()
    chips.index = code_ids(chips["chip"], codes["c"])
    chips["f"] = code_ids(chips["family"], codes["f"])
    chips["t_first"] = _period_position(chips["first_period"], p0)
    chips["t_last"] = _period_position(chips["last_period"], p0)
    customers = ds.table("customers").copy()
    customers.index = code_ids(customers["customer"], codes["k"])
    wl = ds.table("workloads")
    power_factor = np.full(len(codes["w"]), np.nan)
    power_factor[code_ids(wl["workload"], codes["w"])] = column_values(
        wl, "power_factor", dtype=float
    )
    grid, water, supply, bom = _coded_limits(ds, codes, p0)
    commitments, commitment_periods = _coded_commitments(ds, codes, p0, T)
    demand = _coded_demand(ds, codes, p0, T)
    return ScenarioData(
        index=index,
        dataset=ds,
        n_periods=T,
        hours=_hours(ds),
        discount=discount_factors(ds),
        sites=sites,
        chips=chips,
        customers=customers,
        power_factor=power_factor,
        grid=grid,
        water=water,
        supply=supply,
        bill_of_materials=bom,
        initial_fleet=_coded_initial_fleet(ds, codes, chips, p0, T),
        demand=demand,
        eligibility=_coded_eligibility(ds, codes, sites),
        commitments=commitments,
        commitment_periods=commitment_periods,
        workload_names=tuple(codes["w"]),
        pipeline=_coded_pipeline(ds, codes),
        source_names=tuple(codes["o"]),
        resource_names=tuple(codes["r"]),
        group_sites=_coded_group_sites(codes, sites),
        clusters=_coded_clusters(ds, codes, p0, T, demand),
        cluster_mode=cluster_mode,
        site_regions=pd.Series(code_ids(sites["region"], codes["e"]), index=sites.index),
    )


def _coded_pipeline(ds: Any, codes: Mapping[str, tuple[str, ...]]) -> pd.DataFrame:
    """Pipeline ``s, t, it_mw, liquid_mw`` (t clipped at 0; t >= T: online after the horizon)."""
    pipe = pipeline_by_period(ds)
    return pipe.assign(s=code_ids(pipe["site"], codes["s"]))[["s", "t", "it_mw", "liquid_mw"]]


def checked_coded(
    coded: Sequence[ScenarioData], datasets: Sequence[Any], cluster_mode: bool
) -> list[ScenarioData]:
    """Return ``coded`` when it codes ``datasets`` in order, for a build without cluster mode.

    Parameters
    ----------
    coded : sequence of ScenarioData
        :func:`scenario_data` of ``datasets[i]`` at position ``i`` (the same objects).
    datasets : sequence of Dataset
        The datasets of the build.
    cluster_mode : bool
        Whether the build is in cluster mode (coded scenarios are not reused there).

    Raises
    ------
    ValueError
        When the lengths differ, a dataset or a position does not match, or either is
        in cluster mode.
    """
    pairs = enumerate(zip(coded, datasets, strict=False))
    if (
        cluster_mode
        or len(coded) != len(datasets)
        or not all(c.dataset is ds and c.index == i and not c.cluster_mode for i, (c, ds) in pairs)
    ):
        raise ValueError("coded scenarios must code the datasets in order, without cluster mode")
    return list(coded)
