"""Built-to-date columns: the running totals of the site builds, defined recursively.

Maths (``L_s`` = ``sites.lead_time_periods``, ``p`` the period):

* ``site_built``: ``built[s,p] - built[s,p-1] - build[s,p] = 0``                    (MW)
* ``site_liquid_built``: ``liquid_built[s,p] - liquid_built[s,p-1] - liquid[s,p] = 0`` (MW)

so ``built[s,p] = sum_{p'<=p} build[s,p']`` (IT MW decided up to p) and likewise for
the liquid-fitted part, from the site's first build period to its last (``built`` is
not defined before the first, and from the last on it does not change). The site rows
that hold running sums of the builds read one of these columns instead of every
earlier build: ``site_max`` reads ``built[s,p]``, ``site_it_power`` and
``site_retrofit_pool`` read ``built[s, p - L_s]`` (the builds online by p), ``site_liquid``
and ``site_retrofit_pool`` read ``liquid_built[s, p - L_s]`` (:func:`running_terms`).

The substitution keeps every row's meaning, right-hand side and shadow price; it only
moves the running sums (their terms grow with sites x periods^2) into one row per site
and period. It is built only above :data:`RECURSIVE_CAPACITY_MIN_TERMS` running-sum
terms (:func:`capacity_running_terms`): below it the rows keep their running sums, so
small models, the default data's among them, are the same LP as without it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from optimizer.components.records import ConstraintFamily
from optimizer.components.scenario import ScenarioColumns, ScenarioData
from optimizer.lp.builder import ModelBuilder, cumulative, expand
from optimizer.lp.join import merge

#: Running-sum terms of the site rows (:func:`capacity_running_terms`) above which they
#: read built-to-date columns. The default data have about 5,700 such terms, the
#: generated medium size about 31,000, the large size 83,000 (a quarter of its matrix),
#: where the recursion takes a fifth of the matrix away (``benchmarks/RESULTS.md``).
RECURSIVE_CAPACITY_MIN_TERMS = 50_000


def _no_totals() -> pd.DataFrame:
    return pd.DataFrame({k: pd.Series([], dtype=np.int64) for k in ("s", "t", "col")})


def online_cumulative(columns: pd.DataFrame, scenario: ScenarioData) -> pd.DataFrame:
    """Pairs (s, t, col): ``col`` is a build-like column decided in a period <= t - L_s.

    Parameters
    ----------
    columns : DataFrame
        ``s, t, col`` (decision period ``t``).
    scenario : ScenarioData

    Returns
    -------
    DataFrame
        ``s, t, col`` for every horizon period t at which the decision is online.
    """
    online = columns.assign(t=columns["t"].to_numpy() + scenario.lead(columns["s"].to_numpy()))
    online = online[online["t"] < scenario.n_periods]
    return cumulative(online, scenario.n_periods)


def capacity_running_terms(columns: ScenarioColumns) -> int:
    """Terms the site rows' running sums of builds hold without built-to-date columns.

    ``site_max`` holds one term per build column and later period, ``site_it_power``
    one per build column and period from its online period on, ``site_liquid`` the
    same for the liquid columns (``site_retrofit_pool`` adds more where sites retrofit).

    Returns
    -------
    int
        Number of matrix entries, summed over the three families.
    """
    scenario = columns.scenario
    n = scenario.n_periods

    def after(frame: pd.DataFrame, lag: bool) -> int:
        t = frame["t"].to_numpy(dtype=np.int64)
        if lag:
            t = t + scenario.lead(frame["s"].to_numpy())
        return int(np.maximum(n - t, 0).sum())

    build, liquid = columns.build, columns.liquid
    return after(build, False) + after(build, True) + after(liquid, True)


def _running_totals(
    builder: ModelBuilder, scenario: ScenarioData, frame: pd.DataFrame, kind: str, family: str
) -> pd.DataFrame:
    """Columns ``kind[s,p]`` = running total of ``frame``'s columns, one ``family`` row each."""
    if frame.empty:
        return _no_totals()
    span = frame.groupby("s", as_index=False)["t"].agg(first="min", last="max")
    first = span["first"].to_numpy()
    keys = expand(span[["s"]], first, span["last"].to_numpy() - first + 1, "t").astype(np.int64)
    keys["col"] = builder.add_vars(kind, scenario.index, keys)
    rows = builder.add_rows(family, scenario.index, keys[["s", "t"]], "==", np.zeros(len(keys)))
    builder.add_terms(rows, keys["col"], 1.0)
    row_of = keys[["s", "t"]].assign(row=rows)
    previous = merge(keys.assign(t=keys["t"] + 1), row_of, ["s", "t"])
    builder.add_terms(previous["row"], previous["col"], -1.0)
    m = merge(frame, row_of, ["s", "t"])
    builder.add_terms(m["row"], m["col"], -1.0)
    return keys[["s", "t", "col"]]


def define_site_built(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Built-to-date columns: built[s,p] - built[s,p-1] - build[s,p] == 0.

    ``built[s,p]`` (MW) is the IT MW decided at site s in periods up to p. Built only
    when :func:`capacity_running_terms` exceeds :data:`RECURSIVE_CAPACITY_MIN_TERMS`.
    Sets ``columns.built`` (s, t, col; empty when not built).
    """
    columns.built = _no_totals()
    if capacity_running_terms(columns) > RECURSIVE_CAPACITY_MIN_TERMS:
        columns.built = _running_totals(
            builder, columns.scenario, columns.build, "built", "site_built"
        )


def define_site_liquid_built(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Liquid built-to-date columns: liquid_built[s,p] - liquid_built[s,p-1] - liquid[s,p] == 0.

    ``liquid_built[s,p]`` (MW) is the liquid-fitted IT MW decided at site s up to p;
    built under the same condition as :func:`define_site_built`. Sets
    ``columns.liquid_built`` (s, t, col; empty when not built).
    """
    columns.liquid_built = _no_totals()
    if capacity_running_terms(columns) > RECURSIVE_CAPACITY_MIN_TERMS:
        columns.liquid_built = _running_totals(
            builder, columns.scenario, columns.liquid, "liquid_built", "site_liquid_built"
        )


def running_terms(
    frame: pd.DataFrame,
    totals: pd.DataFrame,
    row_of: pd.DataFrame,
    scenario: ScenarioData,
    online: bool,
) -> pd.DataFrame:
    """Terms (s, t, col, row) of ``frame``'s columns decided up to t (or t - L_s) in each row.

    Parameters
    ----------
    frame : DataFrame
        Build-like columns ``s, t, col`` (decision period ``t``).
    totals : DataFrame
        Their running-total columns ``s, t, col`` (:func:`define_site_built`), or empty:
        then every earlier column is a term (the running sum).
    row_of : DataFrame
        ``s, t, row``: the rows, one per site and period.
    scenario : ScenarioData
    online : bool
        Count decisions online by t (decided by ``t - L_s``) rather than decided by t.

    Returns
    -------
    DataFrame
        ``row, col`` pairs (and ``s, t``), every coefficient 1: with ``totals``, one
        term per row, ``totals[s, min(t', last_s)]`` at ``t' = t - L_s`` (or t) when
        ``t' >= first_s``.
    """
    if totals.empty:
        pairs = (
            online_cumulative(frame, scenario) if online else cumulative(frame, scenario.n_periods)
        )
        return merge(pairs, row_of, ["s", "t"])
    span = totals.groupby("s", as_index=False)["t"].agg(first="min", last="max")
    r = merge(row_of, span, "s")
    t = r["t"].to_numpy(dtype=np.int64)
    if online:
        t = t - scenario.lead(r["s"].to_numpy())
    ok = t >= r["first"].to_numpy()
    r = r.assign(t=np.minimum(t, r["last"].to_numpy()))[ok]
    return merge(r[["s", "t", "row"]], totals, ["s", "t"])


FAMILIES = (
    ConstraintFamily(
        "site_built",
        "MW",
        define_site_built,
        # No check of its own: the site checks recompute the running sums of the
        # builds from the build frame, which is this definition.
        None,
        "",
        "MW",
        ("s",),
        definition=True,
        builds_columns=True,
    ),
    ConstraintFamily(
        "site_liquid_built",
        "MW",
        define_site_liquid_built,
        None,
        "",
        "MW",
        ("s",),
        definition=True,
        builds_columns=True,
    ),
)
