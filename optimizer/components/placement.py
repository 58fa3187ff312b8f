"""Placement: exact training clusters per customer, site and period.

A frontier training run needs its chips co-located: the ``training_clusters`` table
gives, per customer and period, the least size of the training cluster at each site
that hosts the customer's training (MW and/or H100e), the most sites one customer's
training may span, a switch cost per cluster start and a minimum duration. The rule
is exact only with binaries, so these families exist only in cluster mode
(``--clusters``, implied by ``--integer-units``): the model then has

* ``cluster[k,s,p]`` in {0, 1}: site s hosts customer k's training in p (a column
  exists where k has a rule in p and training assign columns at s);
* ``cluster_start[k,s,p]`` in [0, 1]: the cluster at s is new in p (not hosted in
  p-1); never in a period that begins a training run of k (the first of k's rule
  periods, or one after a period without training demand of k: a new run is placed
  freely). Continuous: the rows below make it max(0, y[p] - y[p-1]) at an optimum.

With ``TM[k,s,p] = sum_{c} assign[c,s,k,training,p] * it_kw[c] / 1000`` (training
IT MW) and ``TH[k,s,p] = sum_c assign[c,s,k,training,p] * training_h100e[c] *
derate[k,c]`` (training H100e):

* ``cluster_link``: TH[k,s,p] <= M[k,s,p] * cluster[k,s,p]                   (H100e)
  with M = min(D[k,p], 1000 * max(max_it_mw, initial_it_mw)[s] * best[k,s]): D the
  customer's training demand in p (H100e), best the highest training H100e per IT
  kW among the chips the customer can run at s. Both are real bounds, not arbitrary
  constants: the site can never hold more IT MW (site_max, site_it_power), and in
  cluster mode a customer's training at one site never exceeds its training demand
  (training chips beyond the demand have no use; a commitment's MW can still be met
  by chips assigned to the customer's inference). The tighter M is, the tighter the
  LP relaxation of the MIP.
* ``cluster_min_mw``: TM[k,s,p] >= min_cluster_mw[k,p] * cluster[k,s,p]          (MW)
* ``cluster_min_h100e``: TH[k,s,p] >= min_cluster_h100e[k,p] * cluster[k,s,p] (H100e)
* ``cluster_max_sites``: sum_s cluster[k,s,p] <= max_sites[k,p]               (sites)
* ``cluster_switch`` (definition): cluster_start[k,s,p] >= cluster[k,s,p] -
  cluster[k,s,p-1] (cluster[k,s,p-1] = 0 when it has no column); each start costs
  ``switch_cost_usd`` (cost term ``cluster_switch``, discounted like every term).
* ``cluster_min_duration``: sum_{q <= p < q + D[k,q]} cluster_start[k,s,q] <=
  cluster[k,s,p]                                                        (clusters)
  (a cluster started in q stays D periods; truncated at the horizon end).

In LP mode (no binaries) none of these rows exist; the rule is never silently
dropped: :func:`optimizer.plan.results` reports every training placement in the
``training_clusters`` table with ``meets_minimum`` and ``within_max_sites``, and the
solve message counts the fragments (:func:`fragmentation_message`).

The independent checks recompute the rule from the assignment values (training MW
and H100e per customer, site and period) and the cluster values: an occupied site
(training above the tolerance, or cluster = 1) must meet the minimum, the occupied
sites of a customer and period must not exceed ``max_sites``, and a cluster that
starts must stay occupied ``min_duration_periods`` periods. They run only when the
solution has cluster values (cluster mode).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from optimizer.components.component import ColumnKind, Component, CostTerm
from optimizer.components.contract_inputs import holds_beyond_demand
from optimizer.components.plan_context import PlanContext
from optimizer.components.records import ConstraintFamily
from optimizer.components.scenario import ScenarioColumns
from optimizer.lp.builder import ModelBuilder, expand
from optimizer.lp.frames import column_values
from optimizer.lp.join import merge
from optimizer.lp.violations import violations

_KST = ["k", "s", "t"]


# --------------------------------------------------------------------- model helpers
def _training_assign(columns: ScenarioColumns) -> pd.DataFrame:
    """Training assign columns with ``mw`` (IT MW per chip) and ``h`` (H100e per chip)."""
    scenario = columns.scenario
    training = [i for i, w in enumerate(scenario.workload_names) if w == "training"]
    a = columns.assign
    a = a[a["w"].isin(training).to_numpy()]
    c = column_values(a, "c")
    return a.assign(
        mw=scenario.it_mw_per_chip(c).astype(float),
        h=scenario.chip_attr(c, "training_h100e").astype(float) * column_values(a, "derate"),
    )


def _with_rule(cluster: pd.DataFrame, columns: ScenarioColumns) -> pd.DataFrame:
    """Cluster columns (``k, s, t, col``) with their rule columns."""
    return merge(cluster, columns.scenario.clusters, ["k", "t"])


def _size_rows(
    builder: ModelBuilder,
    columns: ScenarioColumns,
    family: str,
    sense: str,
    coef_y: np.ndarray,
    keep: np.ndarray,
    per_chip: str,
) -> None:
    """Rows sum assign * per_chip - coef_y * cluster (sense) 0 on the kept cluster columns."""
    cl = _with_rule(columns.cluster, columns)
    cl, coef_y = cl[keep], coef_y[keep]
    if cl.empty:
        return
    scenario = columns.scenario
    rows = builder.add_rows(family, scenario.index, cl, sense, np.zeros(len(cl)))
    builder.add_terms(rows, cl["col"], -coef_y)
    m = merge(_training_assign(columns), cl[_KST].assign(row=rows), _KST)
    builder.add_terms(m["row"], m["col"], m[per_chip].to_numpy())


def _keep_all(columns: ScenarioColumns) -> np.ndarray:
    return np.ones(len(_with_rule(columns.cluster, columns)), dtype=bool)


# ---------------------------------------------------------------------------- define
def link_bound_h100e(
    rules_demand: pd.DataFrame, site_max_it_mw: np.ndarray, best_h100e_per_kw: np.ndarray
) -> np.ndarray:
    """Big-M of ``cluster_link``: min(training demand, the site's most training H100e).

    Where the customer may hold chips beyond its demand (a commitment, a take-or-pay
    floor or a reservation, ``beyond``), the site's most training H100e alone: a bound
    at the demand made a plan that held a commitment's chips infeasible in exact mode.

    Parameters
    ----------
    rules_demand : DataFrame
        One row per cluster column with ``demand_h100e`` (the customer's training
        demand in the period, H100e) and ``beyond`` (bool, see above).
    site_max_it_mw : ndarray
        max(max_it_mw, initial_it_mw) of the row's site (MW).
    best_h100e_per_kw : ndarray
        Best training H100e per IT kW over the chips the customer may run there
        (``training_h100e * derate / it_kw_per_chip``).

    Returns
    -------
    ndarray
        M in H100e per row.
    """
    site_bound = site_max_it_mw * 1e3 * best_h100e_per_kw
    at_demand = np.minimum(column_values(rules_demand, "demand_h100e", dtype=float), site_bound)
    return np.where(column_values(rules_demand, "beyond", dtype=bool), site_bound, at_demand)


def define_cluster_link(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Cluster link: TH[k,s,p] <= min(D[k,p], 1000 * maxMW[s] * best H100e/kW) * cluster[k,s,p]."""
    if columns.cluster.empty:
        return
    scenario = columns.scenario
    cl = _with_rule(columns.cluster, columns)
    training = [i for i, w in enumerate(scenario.workload_names) if w == "training"]
    demand = scenario.demand[scenario.demand["w"].isin(training).to_numpy()]
    demand = demand.groupby(["k", "t"], as_index=False)["demand_h100e"].sum()
    cl = merge(cl, demand, ["k", "t"], how="left").fillna({"demand_h100e": 0.0})
    names = scenario.customers["customer"].reindex(cl["k"]).to_numpy(dtype=object)
    labels = np.asarray(scenario.dataset.periods, dtype=object)[column_values(cl, "t")]
    cl["beyond"] = holds_beyond_demand(scenario.dataset, names, labels)
    s = column_values(cl, "s")
    site_mw = np.maximum(
        scenario.site_attr(s, "max_it_mw").astype(float),
        scenario.site_attr(s, "initial_it_mw").astype(float),
    )
    ta = _training_assign(columns)
    best = (ta["h"] / (ta["mw"] * 1e3)).groupby([ta["k"], ta["s"]]).max().rename("best")
    per_kw = merge(cl, best.reset_index(), ["k", "s"], how="left")["best"].fillna(0.0)
    big_m = link_bound_h100e(cl, site_mw, per_kw.to_numpy(dtype=float))
    _size_rows(builder, columns, "cluster_link", "<=", big_m, _keep_all(columns), "h")


def define_cluster_min_mw(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Cluster minimum: TM[k,s,p] >= min_cluster_mw[k,p] * cluster[k,s,p] (where > 0)."""
    if columns.cluster.empty:
        return
    minimum = _with_rule(columns.cluster, columns)["min_mw"].to_numpy(dtype=float)
    _size_rows(builder, columns, "cluster_min_mw", ">=", minimum, minimum > 0, "mw")


def define_cluster_min_h100e(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Cluster minimum: TH[k,s,p] >= min_cluster_h100e[k,p] * cluster[k,s,p] (where > 0)."""
    if columns.cluster.empty:
        return
    minimum = _with_rule(columns.cluster, columns)["min_h100e"].to_numpy(dtype=float)
    _size_rows(builder, columns, "cluster_min_h100e", ">=", minimum, minimum > 0, "h")


def define_cluster_max_sites(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Most sites: sum_s cluster[k,s,p] <= max_sites[k,p] (where max_sites > 0)."""
    if columns.cluster.empty:
        return
    cl = _with_rule(columns.cluster, columns)
    cl = cl[column_values(cl, "max_sites") > 0]
    keys = cl[["k", "t", "max_sites"]].drop_duplicates(["k", "t"]).reset_index(drop=True)
    if keys.empty:
        return
    rows = builder.add_rows(
        "cluster_max_sites", columns.scenario.index, keys, "<=", column_values(keys, "max_sites")
    )
    m = merge(cl, keys[["k", "t"]].assign(row=rows), ["k", "t"])
    builder.add_terms(m["row"], m["col"], 1.0)


def define_cluster_switch(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Cluster start: cluster_start[k,s,p] - cluster[k,s,p] + cluster[k,s,p-1] >= 0."""
    start = columns.cluster_start
    if start.empty:
        return
    rows = builder.add_rows(
        "cluster_switch", columns.scenario.index, start, ">=", np.zeros(len(start))
    )
    builder.add_terms(rows, start["col"], 1.0)
    row_of = start[_KST].assign(row=rows)
    now = merge(columns.cluster, row_of, _KST)
    builder.add_terms(now["row"], now["col"], -1.0)
    before = merge(columns.cluster.assign(t=columns.cluster["t"] + 1), row_of, _KST)
    builder.add_terms(before["row"], before["col"], 1.0)


def define_cluster_min_duration(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Minimum duration: sum_{q <= p < q + D[k,q]} cluster_start[k,s,q] <= cluster[k,s,p]."""
    start = columns.cluster_start
    if start.empty:
        return
    scenario = columns.scenario
    st = merge(start, scenario.clusters[["k", "t", "min_duration"]], ["k", "t"])
    st = st[column_values(st, "min_duration") >= 2]
    if st.empty:
        return
    d = column_values(st, "min_duration", dtype=np.int64)
    q = column_values(st, "t", dtype=np.int64)
    span = np.minimum(q + d, scenario.n_periods) - q
    pairs = expand(st[["k", "s", "col"]].rename(columns={"col": "start_col"}), q, span, "t")
    keys = pairs[_KST].drop_duplicates().sort_values(_KST).reset_index(drop=True)
    rows = builder.add_rows("cluster_min_duration", scenario.index, keys, "<=", np.zeros(len(keys)))
    row_of = keys.assign(row=rows)
    m = merge(pairs, row_of, _KST)
    builder.add_terms(m["row"], m["start_col"], 1.0)
    m = merge(columns.cluster, row_of, _KST)
    builder.add_terms(m["row"], m["col"], -1.0)


# ----------------------------------------------------------------------------- check
def cluster_rules(dataset: object, periods: list[str]) -> pd.DataFrame:
    """Training-cluster rule per customer and period, in domain keys.

    Parameters
    ----------
    dataset : Dataset
        Its optional ``training_clusters`` table is read.
    periods : list of str
        Horizon quarters.

    Returns
    -------
    DataFrame
        ``customer, period, min_cluster_mw, min_cluster_h100e, max_sites,
        switch_cost_usd, min_duration_periods, first`` (``first``: the period begins a
        training run: the previous period has no rule or no positive training demand
        of the customer); no row where a customer has no rule.
    """
    from capacity.schema import period_index

    columns = [
        "customer",
        "period",
        "min_cluster_mw",
        "min_cluster_h100e",
        "max_sites",
        "switch_cost_usd",
        "min_duration_periods",
        "first",
    ]
    try:
        tc = dataset.table("training_clusters")  # type: ignore[attr-defined]
    except KeyError:
        tc = None
    if tc is None or not len(tc):
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in columns})
    pos = {period_index(p): p for p in periods}
    rows = []
    for r in tc.itertuples(index=False):
        lo, hi = period_index(str(r.from_period)), period_index(str(r.to_period))
        for i in range(lo, hi + 1):
            if i in pos:
                rows.append(
                    (
                        str(r.customer),
                        pos[i],
                        float(r.min_cluster_mw),
                        float(r.min_cluster_h100e),
                        float(r.max_sites),
                        float(r.switch_cost_usd),
                        int(r.min_duration_periods),
                        i,
                    )
                )
    out = pd.DataFrame(rows, columns=[*columns[:-1], "_i"]).sort_values(["customer", "_i"])
    dm = dataset.table("demand")  # type: ignore[attr-defined]
    dm = dm[(dm["workload"] == "training") & (dm["demand_h100e"] > 0)]
    pairs = zip(dm["customer"].astype(str), dm["period"].astype(str), strict=True)
    trained = {(k, period_index(p)) for k, p in pairs}
    ruled = set(zip(out["customer"], out["_i"], strict=True))
    out["first"] = [
        (k, i - 1) not in ruled or (k, i - 1) not in trained
        for k, i in zip(out["customer"], out["_i"], strict=True)
    ]
    return out.drop(columns="_i").reset_index(drop=True)


def training_by_site(assign: pd.DataFrame, dataset: object) -> pd.DataFrame:
    """Training IT MW, H100e and chips per customer, site and period from assignments.

    Parameters
    ----------
    assign : DataFrame
        ``chip, site, customer, workload, period, value`` (chips), with ``derate`` when
        the caller has it (:attr:`PlanContext.assigned`: the eligibility derate times a
        margin plan's migration schedule); without it, the eligibility derate.
    dataset : Dataset
        For the chips' IT kW and training H100e and the eligibility derate.

    Returns
    -------
    DataFrame
        ``customer, site, period, it_mw, h100e, chips`` (training only, rows with
        chips > 0).
    """
    chips = dataset.table("chips").set_index("chip")  # type: ignore[attr-defined]
    el = dataset.table("eligibility")[["customer", "chip", "derate"]]  # type: ignore[attr-defined]
    a = assign[(assign["workload"] == "training") & (assign["value"] > 0)]
    if "derate" not in a:
        a = merge(a, el, ["customer", "chip"], how="left")
    kw = chips["it_kw_per_chip"].reindex(a["chip"]).to_numpy(dtype=float)
    h = chips["training_h100e"].reindex(a["chip"]).to_numpy(dtype=float)
    a = a.assign(
        it_mw=column_values(a, "value") * kw / 1e3,
        h100e=column_values(a, "value") * h * a["derate"].fillna(0.0).to_numpy(),
        chips=column_values(a, "value"),
    )
    keys = ["customer", "site", "period"]
    return a.groupby(keys, as_index=False)[["it_mw", "h100e", "chips"]].sum()


def _occupancy(inputs: PlanContext) -> pd.DataFrame | None:
    """Per (customer, site, period) under a rule: training, cluster value, ``occupied``.

    None when the solution has no cluster values (LP mode: nothing to check).
    """
    cluster = inputs.frames.get("cluster")
    if cluster is None or cluster.empty:
        return None
    rules = cluster_rules(inputs.dataset, inputs.periods)
    # the H100e the model's link and minimum rows count: after a migration's derate
    train = training_by_site(inputs.assigned, inputs.dataset)
    keys = ["customer", "site", "period"]
    f = train.merge(cluster.rename(columns={"value": "y"}), on=keys, how="outer")
    f = merge(f, rules, ["customer", "period"])
    f[["it_mw", "h100e", "chips", "y"]] = f[["it_mw", "h100e", "chips", "y"]].fillna(0.0)
    tol = inputs.tolerance
    f["occupied"] = (
        (f["y"] > 0.5)
        | (f["it_mw"] > tol * (1 + f["min_cluster_mw"]))
        | (f["h100e"] > tol * (1 + f["min_cluster_h100e"]))
    )
    return f


def _key(f: pd.DataFrame) -> pd.Series:
    return f["customer"] + "/" + f["site"] + "," + f["period"]


def check_cluster_link(inputs: PlanContext) -> pd.DataFrame:
    """Training H100e at a site <= min(training demand, site's most H100e) * cluster value.

    (The site's most H100e alone where the customer may hold chips beyond its demand.)

    The site's most H100e is recomputed from the dataset: max(max_it_mw,
    initial_it_mw) x 1000 x the best training H100e per kW over the customer's
    eligible chips (a bound at least the model's, so the check never over-reports).
    """
    f = _occupancy(inputs)
    if f is None:
        return violations("cluster_link", pd.Series([], dtype=str), [], [], "<=", 0.0)
    sites, chips = inputs.sites, inputs.chips
    el = inputs.dataset.table("eligibility")
    kw = chips["it_kw_per_chip"].reindex(el["chip"]).to_numpy(dtype=float)
    per_kw = chips["training_h100e"].reindex(el["chip"]).to_numpy(dtype=float)
    best = (el.assign(b=per_kw * column_values(el, "derate", dtype=float) / kw)).groupby(
        "customer"
    )["b"]
    best_of = best.max().reindex(f["customer"]).fillna(0.0).to_numpy()
    dm = inputs.dataset.table("demand")
    dm = dm[dm["workload"] == "training"].groupby(["customer", "period"])["demand_h100e"].sum()
    demand = dm.reindex(pd.MultiIndex.from_frame(f[["customer", "period"]])).fillna(0.0)
    site_mw = np.maximum(
        sites["max_it_mw"].reindex(f["site"]).to_numpy(dtype=float),
        sites["initial_it_mw"].reindex(f["site"]).to_numpy(dtype=float),
    )
    beyond = holds_beyond_demand(inputs.dataset, f["customer"], f["period"])
    f = f.assign(demand_h100e=demand.to_numpy(), beyond=beyond)
    big_m = link_bound_h100e(f, site_mw, best_of)
    return violations(
        "cluster_link", _key(f), f["h100e"], big_m * column_values(f, "y"), "<=", inputs.tolerance
    )


def _check_minimum(inputs: PlanContext, family: str, used: str, minimum: str) -> pd.DataFrame:
    f = _occupancy(inputs)
    if f is None:
        return violations(family, pd.Series([], dtype=str), [], [], ">=", 0.0)
    f = f[column_values(f, "occupied") & (f[minimum].to_numpy(dtype=float) > 0)]
    return violations(family, _key(f), f[used], f[minimum], ">=", inputs.tolerance)


def check_cluster_min_mw(inputs: PlanContext) -> pd.DataFrame:
    """Every site hosting the customer's training holds at least min_cluster_mw of it."""
    return _check_minimum(inputs, "cluster_min_mw", "it_mw", "min_cluster_mw")


def check_cluster_min_h100e(inputs: PlanContext) -> pd.DataFrame:
    """Every site hosting the customer's training holds at least min_cluster_h100e of it."""
    return _check_minimum(inputs, "cluster_min_h100e", "h100e", "min_cluster_h100e")


def check_cluster_max_sites(inputs: PlanContext) -> pd.DataFrame:
    """Sites hosting a customer's training in a period <= max_sites."""
    f = _occupancy(inputs)
    if f is None:
        return violations("cluster_max_sites", pd.Series([], dtype=str), [], [], "<=", 0.0)
    f = f[column_values(f, "max_sites", dtype=float) > 0]
    g = f.groupby(["customer", "period"], as_index=False).agg(
        n=("occupied", "sum"), max_sites=("max_sites", "first")
    )
    key = g["customer"] + "," + g["period"]
    return violations("cluster_max_sites", key, g["n"], g["max_sites"], "<=", inputs.tolerance)


def check_cluster_min_duration(inputs: PlanContext) -> pd.DataFrame:
    """Check that a cluster starting at a site stays occupied min_duration_periods periods."""
    f = _occupancy(inputs)
    if f is None:
        return violations("cluster_min_duration", pd.Series([], dtype=str), [], [], "<=", 0.0)
    order = {p: i for i, p in enumerate(inputs.periods)}
    occupied = {
        (r.customer, r.site, order[r.period]): bool(r.occupied) for r in f.itertuples(index=False)
    }
    rules = f.drop_duplicates(["customer", "period"]).set_index(["customer", "period"])
    rows = []
    for (k, s, t), on in occupied.items():
        rule = rules.loc[(k, inputs.periods[t])]
        if not on or bool(rule["first"]) or occupied.get((k, s, t - 1), False):
            continue
        for u in range(t, min(t + int(rule["min_duration_periods"]), len(inputs.periods))):
            if not occupied.get((k, s, u), False):
                rows.append((f"{k}/{s},{inputs.periods[u]}", 1.0, 0.0))
    v = pd.DataFrame(rows, columns=["key", "lhs", "rhs"])
    return violations("cluster_min_duration", v["key"], v["lhs"], v["rhs"], "<=", inputs.tolerance)


FAMILIES = (
    ConstraintFamily(
        "cluster_link",
        "H100e",
        define_cluster_link,
        check_cluster_link,
        "training of {key} in {period} exceeds the bound of its cluster by {amount} H100e",
        "H100e",
        ("k", "s"),
        summary_words="training cluster bound of {0} at {1}",
    ),
    ConstraintFamily(
        "cluster_min_mw",
        "MW",
        define_cluster_min_mw,
        check_cluster_min_mw,
        "training cluster {key} in {period} below its minimum size by {amount} MW",
        "MW",
        ("k", "s"),
        summary_words="minimum training-cluster MW of {0} at {1}",
        policy=True,  # the user's cluster rule gives before the fleet it cannot fit
    ),
    ConstraintFamily(
        "cluster_min_h100e",
        "H100e",
        define_cluster_min_h100e,
        check_cluster_min_h100e,
        "training cluster {key} in {period} below its minimum size by {amount} H100e",
        "H100e",
        ("k", "s"),
        summary_words="minimum training-cluster H100e of {0} at {1}",
        policy=True,  # the user's cluster rule gives before the fleet it cannot fit
    ),
    ConstraintFamily(
        "cluster_max_sites",
        "sites",
        define_cluster_max_sites,
        check_cluster_max_sites,
        "training of {key} in {period} spans {amount} more site(s) than its cluster rule allows",
        "sites",
        ("k",),
        summary_words="most training sites of {0}",
        policy=True,  # the user's cluster rule gives before the fleet it cannot fit
    ),
    ConstraintFamily(
        "cluster_switch",
        "clusters",
        define_cluster_switch,
        # No check of its own: a start is a derived count (cost only); the checker
        # recomputes starts from the occupancy in check_cluster_min_duration.
        None,
        "",
        "clusters",
        ("k", "s"),
        definition=True,
    ),
    ConstraintFamily(
        "cluster_min_duration",
        "clusters",
        define_cluster_min_duration,
        check_cluster_min_duration,
        "training cluster {key} started too recently to leave in {period} "
        "(minimum duration short by {amount})",
        "clusters",
        ("k", "s"),
        summary_words="minimum cluster duration of {0} at {1}",
        policy=True,  # the user's cluster rule gives before the fleet it cannot fit
    ),
)


def _cluster_keys(columns: ScenarioColumns) -> pd.DataFrame:
    """``k, s, t, first``: a cluster column's keys, where a rule meets training assign columns."""
    scenario = columns.scenario
    rules = scenario.clusters
    training = [i for i, w in enumerate(scenario.workload_names) if w == "training"]
    a = columns.assign
    keys = a.loc[a["w"].isin(training).to_numpy(), ["k", "s", "t"]].drop_duplicates()
    keys = merge(keys, rules[["k", "t", "first"]], ["k", "t"]).sort_values(["k", "s", "t"])
    return keys.reset_index(drop=True)


def add_cluster_columns(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Add ``cluster[k,s,p]`` (binary) and ``cluster_start[k,s,p]`` columns (cluster mode).

    A cluster column exists where the customer has a cluster rule in the period and
    training assign columns at the site; a start column where the cluster column
    exists and the period is not the first of the customer's rule periods.
    """
    scenario = columns.scenario
    if not scenario.cluster_mode:
        return
    keys = _cluster_keys(columns)
    cluster = keys[["k", "s", "t"]].astype(np.int64)
    columns.cluster = cluster.assign(col=builder.add_vars("cluster", scenario.index, cluster))
    start = keys.loc[~column_values(keys, "first", dtype=bool), ["k", "s", "t"]].astype(np.int64)
    start = start.reset_index(drop=True)
    columns.cluster_start = start.assign(
        col=builder.add_vars("cluster_start", scenario.index, start)
    )


def price_cluster_switch(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """cluster_switch: switch_cost_usd of the customer's rule per cluster start."""
    scenario, start = columns.scenario, columns.cluster_start
    if len(start):
        cost = merge(start, scenario.clusters[["k", "t", "switch_cost_usd"]], ["k", "t"])
        builder.add_cost(
            scenario.index,
            "cluster_switch",
            cost["col"],
            cost["t"],
            column_values(cost, "switch_cost_usd", dtype=float),
        )


COMPONENT = Component(
    "placement",
    columns=(
        ColumnKind(
            "cluster",
            "k/s/t",
            "clusters",
            "site hosts the customer's training cluster (binary)",
            add=add_cluster_columns,
        ),
        ColumnKind("cluster_start", "k/s/t", "clusters", "the cluster is new in the period"),
    ),
    families=FAMILIES,
    costs=(
        CostTerm(
            "cluster_switch",
            "penalty",
            price_cluster_switch,
            "switch_cost_usd per cluster start (a training cluster moved to a new site)",
        ),
    ),
)
