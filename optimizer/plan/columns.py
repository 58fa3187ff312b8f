"""The column phase: shared first-stage columns, then per scenario every other kind.

First-stage keys are where a decision can matter (a site that can still build, a chip
and site some eligible customer may use); the operating columns come from
:func:`optimizer.components.demand.operating_keys` (and the compact formulation's
service, :mod:`optimizer.components.service`); kinds a component adds itself run
their :attr:`~optimizer.components.component.ColumnKind.add` hook last.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from optimizer.components import REGISTRY
from optimizer.components.demand import operating_keys
from optimizer.components.hosting import hosted_pairs
from optimizer.components.migration_inputs import coded_factor
from optimizer.components.pool import pool_keys
from optimizer.components.region import compact_keys
from optimizer.components.registry import active
from optimizer.components.scenario import ScenarioColumns, ScenarioData
from optimizer.lp.builder import ModelBuilder, expand
from optimizer.lp.frames import column_values
from optimizer.lp.join import merge

__all__ = [
    "FIRST_STAGE",
    "FIRST_STAGE_SETS",
    "add_columns",
    "first_stage_keys",
    "union_stage_keys",
    "first_stage_kinds",
]

#: Kinds that may be first-stage (shared by the scenarios of a two-stage plan).
FIRST_STAGE = ("build", "liquid", "install", "produce", "retrofit")

#: First-stage definitions of the two-stage plan, by name. ``full``: every facility and
#: chip decision (build, liquid, install, produce, retrofit) is shared by the scenarios
#: and only operation (assign, unmet, breach, power) is per scenario. ``capacity``: only
#: the facility decisions (build, liquid, retrofit) are shared; chip production and
#: installs are recourse, decided per scenario once it is known.
FIRST_STAGE_SETS: Mapping[str, tuple[str, ...]] = {
    "full": FIRST_STAGE,
    "capacity": ("build", "liquid", "retrofit"),
}


def first_stage_kinds(first_stage: str | Sequence[str] = "full") -> tuple[str, ...]:
    """Return the first-stage column kinds of a named definition (or of a kind list).

    Parameters
    ----------
    first_stage : str or sequence of str
        A key of :data:`FIRST_STAGE_SETS` (``full`` or ``capacity``) or kinds of
        :data:`FIRST_STAGE`.

    Returns
    -------
    tuple of str
        The kinds, in :data:`FIRST_STAGE` order.

    Raises
    ------
    ValueError
        For an unknown name or kind.
    """
    if isinstance(first_stage, str):
        if first_stage not in FIRST_STAGE_SETS:
            raise ValueError(
                f"first stage must be one of {sorted(FIRST_STAGE_SETS)}, not {first_stage!r}"
            )
        return FIRST_STAGE_SETS[first_stage]
    bad = sorted(set(first_stage) - set(FIRST_STAGE))
    if bad:
        raise ValueError(f"first-stage kinds must be among {FIRST_STAGE}, not {bad}")
    return tuple(k for k in FIRST_STAGE if k in set(first_stage))


def _relevant_customers(scenario: ScenarioData) -> np.ndarray:
    customers = set(scenario.demand["k"].tolist()) | set(scenario.commitment_periods["k"].tolist())
    return np.array(sorted(customers), dtype=np.int64)


def _can_build(scenario: ScenarioData) -> pd.Index:
    st = scenario.sites
    pipeline = scenario.pipeline.groupby("s")["it_mw"].sum().reindex(st.index).fillna(0.0)
    room = st["max_it_mw"] - st["initial_it_mw"] - pipeline
    ok = (st["max_build_mw_per_period"] > 0) & (room > 1e-12)
    ok &= scenario.lead(st.index.to_numpy()) < scenario.n_periods
    return st.index[ok.to_numpy()]


def _usable_pairs(scenario: ScenarioData) -> pd.DataFrame:
    """(c, s) where some relevant eligible customer may run the chip, cooling allowed."""
    el = scenario.eligibility[scenario.eligibility["k"].isin(_relevant_customers(scenario))]
    pairs = el[["c", "s"]].drop_duplicates()
    liquid_only = scenario.chip_attr(column_values(pairs, "c"), "cooling") == "liquid"
    st = scenario.sites
    buildable = st.index.isin(_can_build(scenario))
    liquid_possible = (st["initial_liquid_mw"] > 0).to_numpy() | (
        buildable & (st["liquid_share_max"] > 0).to_numpy()
    )
    retrofit_ok = (
        (st["retrofit_mw_per_period"] > 0).to_numpy() if "retrofit_mw_per_period" in st else False
    )
    liquid_possible = liquid_possible | retrofit_ok
    liquid_possible = liquid_possible | st.index.isin(
        scenario.pipeline.loc[scenario.pipeline["liquid_mw"] > 0, "s"]
    )
    liquid_ok = pd.Series(liquid_possible, index=st.index).reindex(pairs["s"]).fillna(False)
    keep = ~liquid_only | liquid_ok.to_numpy(dtype=bool)
    return hosted_pairs(scenario, pairs[keep]).reset_index(drop=True)


#: The kinds :func:`_site_stage_keys` and :func:`_chip_stage_keys` make.
_SITE_STAGE = frozenset({"build", "liquid", "retrofit"})
_CHIP_STAGE = frozenset({"produce", "install"})


def _site_stage_keys(scenario: ScenarioData) -> dict[str, pd.DataFrame]:
    """Keys of build, liquid and retrofit columns of one scenario.

    A build decided in p is online from p + lead: only decisions that come online
    inside the horizon get a column. Retrofit columns exist where the site's
    retrofit rate is positive.
    """
    T = scenario.n_periods
    all_periods = pd.DataFrame({"t": np.arange(T, dtype=np.int64)})
    buildable = _can_build(scenario)
    build_sites = pd.DataFrame({"s": np.asarray(buildable, dtype=np.int64)})
    build = build_sites.merge(all_periods, how="cross")
    build = build[column_values(build, "t") + scenario.lead(column_values(build, "s")) < T]
    ls = scenario.sites.loc[buildable]
    ls = ls.index[(ls["liquid_share_max"] > 0).to_numpy()]
    liquid = build[build["s"].isin(np.asarray(ls, dtype=np.int64))]
    st = scenario.sites
    rate = (
        st["retrofit_mw_per_period"] if "retrofit_mw_per_period" in st else st["initial_it_mw"] * 0
    )
    retro_sites = pd.DataFrame({"s": st.index[(rate > 0).to_numpy()].to_numpy(dtype=np.int64)})
    return {
        "build": build,
        "liquid": liquid,
        "retrofit": retro_sites.merge(all_periods, how="cross"),
    }


def _chip_stage_keys(scenario: ScenarioData) -> dict[str, pd.DataFrame]:
    """Keys of produce and install columns of one scenario.

    Production runs ``lag`` periods ahead of the sale window (chips produced in p are
    installed from p + lag, so installs fall inside first_period..last_period) and
    only inside the horizon; installs from the first delivery, or from the first
    period when the chip has an opening inventory (pre-horizon output in transit).
    """
    T = scenario.n_periods
    pairs = _usable_pairs(scenario)
    ch = scenario.chips.loc[scenario.chips.index.isin(pairs["c"].unique())]
    lag = scenario.delivery_lag(ch.index.to_numpy())
    t0 = np.maximum(column_values(ch, "t_first") - lag, 0)
    t1 = np.minimum(column_values(ch, "t_last") - lag, T - 1 - lag)
    on_sale = pd.DataFrame({"c": ch.index.to_numpy(dtype=np.int64)})
    produce = expand(on_sale, t0, t1 - t0 + 1, "t")
    opening = (
        ch["opening_inventory_chips"].fillna(0.0).to_numpy(dtype=float)
        if "opening_inventory_chips" in ch
        else np.zeros(len(ch))
    )
    first_delivery = np.where(t1 >= t0, t0 + lag, T)
    first = np.where(opening > 0, 0, first_delivery)
    starts = pd.DataFrame({"c": on_sale["c"], "t0": first})
    starts = starts[starts["t0"] < T]
    pp = merge(pairs, starts, "c")
    install = expand(pp[["c", "s"]], column_values(pp, "t0"), T - column_values(pp, "t0"), "t")
    return {"produce": produce, "install": install}


def first_stage_keys(
    scenarios: Sequence[ScenarioData], kinds: Sequence[str] = FIRST_STAGE
) -> dict[str, pd.DataFrame]:
    """Union over scenarios of the first-stage variable keys (of ``kinds``)."""
    collected: dict[str, list[pd.DataFrame]] = {kind: [] for kind in kinds}
    makers = [
        make
        for make, made in ((_site_stage_keys, _SITE_STAGE), (_chip_stage_keys, _CHIP_STAGE))
        if made & set(kinds)  # a capacity first stage needs no chip keys
    ]
    for scenario in scenarios:
        for make in makers:
            for kind, frame in make(scenario).items():
                if kind in collected:
                    collected[kind].append(frame)
    return {kind: _stage_key_frame(kind, collected[kind]) for kind in kinds}


def union_stage_keys(
    parts: Sequence[Mapping[str, pd.DataFrame]], kinds: Sequence[str] = FIRST_STAGE
) -> dict[str, pd.DataFrame]:
    """Union of first-stage keys made by :func:`first_stage_keys` over parts of the scenarios.

    Equal, frame for frame, to :func:`first_stage_keys` over all the parts' scenarios
    (the same distinct keys, sorted the same way), so the keys can be made where the
    scenarios are (the decomposed hedge's workers) and joined here.

    Parameters
    ----------
    parts : sequence of mapping
        Per part, the frames of :func:`first_stage_keys` (at least ``kinds``).
    kinds : sequence of str
        The first-stage kinds.

    Returns
    -------
    dict of str to DataFrame
    """
    return {kind: _stage_key_frame(kind, [p[kind] for p in parts]) for kind in kinds}


def _stage_key_frame(kind: str, frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Distinct, sorted keys of one facility or chip kind (``s, t``; ``c, s, t``; ``c, t``)."""
    cols = {"install": ["c", "s", "t"], "produce": ["c", "t"]}.get(kind, ["s", "t"])
    f = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)
    f = f[cols].astype(np.int64).drop_duplicates().sort_values(cols)
    return f.reset_index(drop=True)


def add_columns(
    builder: ModelBuilder,
    scenarios: Sequence[ScenarioData],
    keys: Mapping[str, pd.DataFrame],
    compact: bool = False,
    kinds: Sequence[str] = FIRST_STAGE,
    region_names: tuple[str, ...] = (),
) -> list[ScenarioColumns]:
    """Add the columns: shared first stage (``keys`` of ``kinds``), then per scenario the rest.

    Per scenario: its own copies of the facility and chip kinds outside the first
    stage, the column-building families (fleet definition), then the operating
    columns (assign, unmet, breach; ``compact``: busy and serve instead of assign,
    where :func:`optimizer.components.region.compact_keys` finds them exact, and
    pool_serve and pool_draw instead of the serve columns
    :func:`optimizer.components.pool.pool_keys` pools; ``builder.pools`` collects the
    region pools' names and codes, ``region_names`` is the name of each region code).
    """
    first = {kind: keys[kind].assign(col=builder.add_vars(kind, -1, keys[kind])) for kind in kinds}
    all_columns = []
    for scenario in scenarios:
        stage = dict(first)
        if len(stage) < len(FIRST_STAGE):
            own = {**_site_stage_keys(scenario), **_chip_stage_keys(scenario)}
            for kind in FIRST_STAGE:
                if kind not in stage:
                    k = _stage_key_frame(kind, [own[kind]])
                    stage[kind] = k.assign(col=builder.add_vars(kind, scenario.index, k))
        columns = ScenarioColumns(
            scenario, stage["build"], stage["liquid"], stage["install"], stage["produce"]
        )
        columns.retrofit = stage["retrofit"]
        for family in REGISTRY:
            if family.builds_columns:
                family.define(builder, columns)
        operating = operating_keys(columns)
        if builder.objective == "margin":  # the migration schedule scales the derate
            a = operating["assign"]
            factor = coded_factor(scenario, *(a[x].to_numpy() for x in "kct"))
            operating["assign"] = a.assign(derate=column_values(a, "derate") * factor)
        split = compact_keys(operating["assign"], scenario.site_regions) if compact else None
        if split is not None:
            columns.compact = True
            kept, pool_serve, pool_draw = pool_keys(split[1], region_names, builder.pools)
            operating = {
                **operating,
                "assign": split[2],
                "busy": split[0],
                "serve": kept,
                "pool_serve": pool_serve,
                "pool_draw": pool_draw,
            }
        for kind, frame in operating.items():
            col = builder.add_vars(kind, scenario.index, frame)
            setattr(columns, kind, frame.assign(col=col))
        for component in active().components:
            for column_kind in component.columns:
                if column_kind.add is not None:
                    column_kind.add(builder, columns)
        all_columns.append(columns)
    return all_columns
