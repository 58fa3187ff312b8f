"""Risk views over the planning LP: tornado, Monte Carlo, hedged plan.

Every function here is pure: a Dataset and :class:`optimizer.plan.solve.SolveOptions` in,
frames and numbers out; every number comes from a real re-solve.

Outcomes of one plan
--------------------
:func:`optimizer.analysis.outcomes.plan_outcomes` (re-exported here): ``total_cost_usd``,
``unmet_h100e``, ``trainium_share``, ``breach_mw``; see :mod:`optimizer.analysis.outcomes`.

Hedged plan, VSS and EVPI (:func:`hedged_plan`)
-----------------------------------------------
The recourse problem (RP) is one two-stage stochastic LP
(:func:`optimizer.plan.solve.solve_stochastic`): build, liquid, install and produce are
shared; assign, unmet and breach are per scenario; the objective is the
probability-weighted cost. With the scenario optima ``z_s`` (wait-and-see, each
scenario solved alone) and the *expected-value problem* EV:

* ``WS = sum_s w_s z_s``;                       ``EVPI = RP - WS  (>= 0)``
* ``EEV = sum_s w_s z_s(first stage fixed to the EV plan)``; ``VSS = EEV - RP (>= 0)``

The EV problem used here is the **mean-value scenario**: every decimal input
averaged over the scenarios with their weights (``ev="mean"``), possible when all
scenario datasets have the same rows and the same non-decimal cells (a shift of a
period label, or an added row, breaks that). Otherwise, or with ``ev="neutral"``,
the EV plan is the plan of the scenario named ``neutral`` (or the heaviest one).
If the EV plan's first stage cannot be operated in some scenario (e.g. it installs
more than a delayed grid can power), EEV and VSS are infinite and the scenario is
named in ``HedgedPlan.notes``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from capacity.scenarios import Override
from optimizer.analysis.outcomes import (
    LIMIT_FAMILIES,
    OUTCOMES,
    binding_families,
    binding_limits,
    binding_shares,
    outcome_percentiles,
    plan_outcomes,
    plan_status,
)
from optimizer.analysis.sweep import MonteCarloSpec, fill_level
from optimizer.output.summary import OK_STATUSES, missing_duals, no_duals_text
from optimizer.plan.model import first_stage_kinds

__all__ = [
    "LIMIT_FAMILIES",
    "OUTCOMES",
    "SOCIAL_COST_OF_CARBON_USD_PER_T",
    "HedgedPlan",
    "MonteCarloResult",
    "TornadoParameter",
    "binding_families",
    "binding_limits",
    "binding_shares",
    "carbon_price_parameter",
    "default_tornado_parameters",
    "hedged_plan",
    "mean_value_dataset",
    "monte_carlo",
    "outcome_percentiles",
    "plan_outcomes",
    "tornado",
]


# ---------------------------------------------------------------------------- tornado
@dataclass(frozen=True)
class TornadoParameter:
    """One parameter group of the tornado: override templates and its low/high levels.

    Attributes
    ----------
    name : str
        Label (``cowos``, ``demand_openai`` ...).
    templates : tuple of dict
        Overrides without their level (see :func:`optimizer.analysis.sweep.fill_level`); the
        level fills ``factor`` (scale), ``periods`` (shift) or ``value`` (set) of each.
    low, high : float
        The two levels tried (the base is the data as is).
    """

    name: str
    templates: tuple[Mapping[str, Any], ...]
    low: float
    high: float

    def overrides(self, level: float) -> list[Override]:
        """Return the overrides at ``level``."""
        return [fill_level(t, level) for t in self.templates]


def uniform_monte_carlo(
    parameters: Sequence[TornadoParameter], samples: int, seed: int
) -> dict[str, Any]:
    """Return a Monte Carlo sweep mapping drawing each group uniformly between its levels.

    Parameters
    ----------
    parameters : sequence of TornadoParameter
        Parameter groups (templates plus low and high levels); every one is drawn.
    samples, seed : int
        Number of draws and the seed of ``numpy.random.default_rng``.

    Returns
    -------
    dict
        ``{"samples", "seed", "parameters": [{"name", "overrides", "distribution"}]}``,
        accepted by :class:`optimizer.analysis.sweep.MonteCarloSpec` (uniform on
        ``[min(low, high), max(low, high)]``).
    """
    return {
        "samples": int(samples),
        "seed": int(seed),
        "parameters": [
            {
                "name": p.name,
                "overrides": [dict(t) for t in p.templates],
                "distribution": {
                    "kind": "uniform",
                    "low": float(min(p.low, p.high)),
                    "high": float(max(p.low, p.high)),
                },
            }
            for p in parameters
        ],
    }


def _resources(ds: Any, pred: Callable[[str], bool]) -> list[str]:
    return sorted({r for r in ds.table("supply_resources")["resource"].astype(str) if pred(r)})


def default_tornado_parameters(ds: Any, family: str = "trainium") -> list[TornadoParameter]:
    """Default tornado parameter groups of a dataset (only the ones that exist in it).

    ====================  =============================================  ============
    group                 override                                       low / high
    ====================  =============================================  ============
    wafer_supply          scale capacity of *wafer* resources (not CoWoS)  0.7 / 1.3
    cowos                 scale capacity of *cowos* resources             0.7 / 1.3
    hbm                   scale capacity of *hbm* resources               0.7 / 1.3
    grid_delay            shift every site's grid_mw (quarters)          -2 / +4
    demand_<customer>     scale the customer's demand_h100e              0.7 / 1.3
    pue                   scale pue_air and pue_liquid of every site     0.95* / 1.10
    wue                   scale WUE (air and liquid) of every site       0.5 / 1.5
    energy_price          scale energy_price_usd_per_mwh of every site   0.7 / 1.3
    carbon_price          set carbon_price_usd_per_t of carbon_policy    0 / 210
    migration_derate      scale derate of every ``family`` chip row      0.8 / 1.2*
    ====================  =============================================  ============

    ``*``: clipped so the data stays valid (PUE >= 1, derate <= 1). Ranges are
    assumptions of this tool (roughly the spread of the public figures in
    ``shared/CONTEXT.md``: CoWoS 35k-130k wafers/month over two years, grid waits of
    3-5 years, PUE 1.1-1.56); pass your own list to :func:`tornado` to change them.
    ``carbon_price`` (only with a ``carbon_policy`` table) runs from no price to the EPA
    social cost of carbon, USD 210/t for 2025 emissions at a 2% discount rate
    (https://costofcarbon.org/epa-values-for-the-social-cost-of-greenhouse-gases, cited
    in ``data/sources.csv``).
    """
    sc = {"op": "scale", "table": "supply_resources", "column": "capacity"}
    out: list[TornadoParameter] = []
    wafers = _resources(ds, lambda r: "wafer" in r.lower() and "cowos" not in r.lower())
    cowos = _resources(ds, lambda r: "cowos" in r.lower())
    hbm = _resources(ds, lambda r: "hbm" in r.lower())
    for name, res in (("wafer_supply", wafers), ("cowos", cowos), ("hbm", hbm)):
        if res:
            out.append(TornadoParameter(name, ({**sc, "where": {"resource": res}},), 0.7, 1.3))
    if len(ds.table("site_grid")):
        out.append(
            TornadoParameter(
                "grid_delay", ({"op": "shift", "table": "site_grid", "column": "grid_mw"},), -2, 4
            )
        )
    for k in ds.table("customers")["customer"].astype(str):
        t = {"op": "scale", "table": "demand", "column": "demand_h100e", "where": {"customer": [k]}}
        out.append(TornadoParameter(f"demand_{k}", (t,), 0.7, 1.3))
    out += _site_parameters(ds)
    if len(ds.table("carbon_policy")):
        out.append(carbon_price_parameter())
    derate = _derate_parameter(ds, family)
    if derate is not None:
        out.append(derate)
    return out


#: EPA social cost of carbon, USD per t CO2 (2025 emissions, 2% discount rate):
#: https://costofcarbon.org/epa-values-for-the-social-cost-of-greenhouse-gases
SOCIAL_COST_OF_CARBON_USD_PER_T = 210.0


def carbon_price_parameter(
    low: float = 0.0, high: float = SOCIAL_COST_OF_CARBON_USD_PER_T
) -> TornadoParameter:
    """Tornado group setting ``carbon_policy.carbon_price_usd_per_t`` on every row.

    Parameters
    ----------
    low, high : float
        Carbon prices tried, USD per t CO2 (default 0 and the EPA social cost of
        carbon, :data:`SOCIAL_COST_OF_CARBON_USD_PER_T`).

    Returns
    -------
    TornadoParameter
        Named ``carbon_price``; the level is the price itself (``op: set``).
    """
    t = {"op": "set", "table": "carbon_policy", "column": "carbon_price_usd_per_t"}
    return TornadoParameter("carbon_price", (t,), low, high)


def _site_parameters(ds: Any) -> list[TornadoParameter]:
    """Tornado groups over every site: PUE, WUE and energy price."""
    out: list[TornadoParameter] = []
    sites = ds.table("sites")
    pue_min = float(min(sites["pue_air"].min(), sites["pue_liquid"].min()))
    out.append(
        TornadoParameter(
            "pue",
            tuple(
                {"op": "scale", "table": "sites", "column": c} for c in ("pue_air", "pue_liquid")
            ),
            max(0.95, 1.0 / pue_min),
            1.10,
        )
    )
    out.append(
        TornadoParameter(
            "wue",
            tuple(
                {"op": "scale", "table": "sites", "column": c}
                for c in ("wue_l_per_kwh_air", "wue_l_per_kwh_liquid")
            ),
            0.5,
            1.5,
        )
    )
    out.append(
        TornadoParameter(
            "energy_price",
            ({"op": "scale", "table": "sites", "column": "energy_price_usd_per_mwh"},),
            0.7,
            1.3,
        )
    )
    return out


def _derate_parameter(ds: Any, family: str) -> TornadoParameter | None:
    """Tornado group scaling the derate of the ``family`` chips (None without such rows)."""
    chips = ds.table("chips")
    fam_chips = sorted(chips.loc[chips["family"].astype(str) == family, "chip"].astype(str))
    el = ds.table("eligibility")
    el = el[el["chip"].astype(str).isin(fam_chips)]
    if len(el):
        hi = min(1.2, 1.0 / float(el["derate"].max()))
        t = {
            "op": "scale",
            "table": "eligibility",
            "column": "derate",
            "where": {"chip": fam_chips},
        }
        return TornadoParameter("migration_derate", (t,), 0.8, hi)
    return None


def tornado(
    ds: Any,
    options: Any = None,
    parameters: Sequence[TornadoParameter] | None = None,
    *,
    outcomes: Sequence[str] = OUTCOMES,
) -> pd.DataFrame:
    """One-at-a-time sensitivity: move each parameter group to its low and high level.

    Parameters
    ----------
    ds : Dataset
        Base dataset (scenario applied).
    options : SolveOptions, optional
    parameters : sequence of TornadoParameter, optional
        Default :func:`default_tornado_parameters`.
    outcomes : sequence of str
        Outcomes reported (names of :func:`plan_outcomes`).

    Returns
    -------
    DataFrame
        Tidy, one row per (parameter, side, outcome): ``parameter, side`` (low|high),
        ``level, outcome, base_value, value, change`` (value - base_value),
        ``swing_total_cost_usd`` (|cost at high - cost at low|, the ranking key),
        ``rank`` (1 = largest swing), ``status`` (of the re-solve). Sorted by rank.

    Raises
    ------
    RuntimeError
        When the base plan has no solution.
    """
    params = list(parameters) if parameters is not None else default_tornado_parameters(ds)
    variants: list[list[Override]] = [[]]
    for p in params:
        variants += [p.overrides(p.low), p.overrides(p.high)]
    results, datasets, errors = _solve_variants(ds, variants, options)
    base = results[0]
    if base is None or base.objective_usd is None:
        raise RuntimeError(f"base plan has no solution: {getattr(base, 'message', errors.get(0))}")
    base_out = plan_outcomes(base, ds)
    rows = []
    for n, p in enumerate(params):
        sides = {}
        for j, (side, level) in enumerate((("low", p.low), ("high", p.high))):
            i = 1 + 2 * n + j
            r = results[i]
            o = (
                plan_outcomes(r, datasets[i])
                if r is not None
                else dict.fromkeys(OUTCOMES, math.nan)
            )
            st = plan_status(r) if r is not None else f"invalid: {errors.get(i, '')}"
            if r is not None and plan_status(r) not in OK_STATUSES:
                o = dict.fromkeys(OUTCOMES, math.nan)
            sides[side] = (level, o, st)
        swing = abs(sides["high"][1]["total_cost_usd"] - sides["low"][1]["total_cost_usd"])
        for side, (level, o, st) in sides.items():
            for out in outcomes:
                rows.append(
                    {
                        "parameter": p.name,
                        "side": side,
                        "level": float(level),
                        "outcome": out,
                        "base_value": base_out[out],
                        "value": o[out],
                        "change": o[out] - base_out[out],
                        "swing_total_cost_usd": swing,
                        "status": st,
                    }
                )
    return _rank_by_swing(pd.DataFrame(rows))


def _solve_variants(
    ds: Any, variants: Sequence[Sequence[Override]], options: Any
) -> tuple[list[Any], dict[int, Any], dict[int, str]]:
    """Solve ``ds`` under each list of overrides: (results, datasets, errors) by index.

    A variant whose data no longer validates is not solved (result None) and its
    error text is kept, to be reported as "invalid" rather than raised.
    """
    from capacity.scenarios import apply_overrides
    from capacity.validation import DataValidationError
    from optimizer.analysis.batch import solve_many

    ok_idx: list[int] = []
    errors: dict[int, str] = {}
    datasets: dict[int, Any] = {}
    for i, v in enumerate(variants):
        try:
            datasets[i] = apply_overrides(ds, v) if v else ds
            ok_idx.append(i)
        except DataValidationError as e:
            errors[i] = "; ".join(f.message for f in e.findings[:2])
    solved = dict(
        zip(ok_idx, solve_many(ds, [datasets[i] for i in ok_idx], options, reuse=True), strict=True)
    )
    return [solved.get(i) for i in range(len(variants))], datasets, errors


def _rank_by_swing(df: pd.DataFrame) -> pd.DataFrame:
    """Add ``rank`` (1 = largest cost swing) and sort by rank, low side first."""
    if df.empty:
        return df.assign(rank=pd.Series(dtype="int64"))
    order = (
        df.drop_duplicates("parameter")
        .sort_values("swing_total_cost_usd", ascending=False, na_position="last", kind="stable")[
            "parameter"
        ]
        .tolist()
    )
    rank = {p: i + 1 for i, p in enumerate(order)}
    df["rank"] = df["parameter"].map(rank).astype("int64")
    side_order = df["side"].map({"low": 0, "high": 1})
    df = df.assign(_s=side_order).sort_values(["rank", "_s"], kind="stable").drop(columns="_s")
    return df.reset_index(drop=True)


# ------------------------------------------------------------------------ Monte Carlo
@dataclass(frozen=True)
class MonteCarloResult:
    """Monte Carlo over seeded parameter draws.

    Attributes
    ----------
    samples : DataFrame
        One row per sample: ``sample``, one column per parameter (its level),
        ``status``, the outcomes of :data:`OUTCOMES`, ``binding_families`` and
        ``binding_limits`` (``;``-joined, by non-zero shadow price).
    percentiles : DataFrame
        One row per outcome: ``outcome, p10, p50, p90, mean, n`` over samples with a
        plan (``numpy.percentile``, linear interpolation).
    binding : DataFrame
        One row per constraint family: ``family``, ``share_priced`` (share of samples
        where some row of the family has a non-zero shadow price), ``share_binding``
        (some row has ``binding == True``, i.e. no slack), ``n``.
    limits : DataFrame
        One row per limit of :func:`binding_limits` (``limit`` = ``family:key``):
        ``limit, share_priced, n, n_priced`` (share of samples where it has a non-zero
        shadow price in some period).
    duals_note : str
        When some samples have no shadow prices (their solver returns no duals):
        which solver, which ones give them, and for how many samples the priced
        shares are unknown (``share_priced`` is over the ``n_priced`` samples with
        prices, NaN when none has them; the samples' ``binding_families`` and
        ``binding_limits`` are null). "" when every sample has its duals.
    """

    samples: pd.DataFrame
    percentiles: pd.DataFrame
    binding: pd.DataFrame
    limits: pd.DataFrame = field(default_factory=pd.DataFrame)
    duals_note: str = ""


def monte_carlo(
    ds: Any,
    spec: MonteCarloSpec | Mapping[str, Any],
    options: Any = None,
    *,
    reuse: bool = True,
) -> MonteCarloResult:
    """Seeded Monte Carlo: draw the parameters, re-solve each sample, summarise.

    Parameters
    ----------
    ds : Dataset
        Base dataset; ``spec.base`` (a named scenario) is applied first when set.
    spec : MonteCarloSpec or mapping
        Samples, seed and parameters (see :mod:`optimizer.analysis.sweep`). The same seed
        gives the same draws and the same results.
    options : SolveOptions, optional
    reuse : bool
        Patch the base model per sample instead of rebuilding (same results).

    Returns
    -------
    MonteCarloResult
    """
    from capacity.scenarios import apply_overrides, apply_scenario
    from capacity.validation import DataValidationError
    from optimizer.analysis.batch import solve_many

    mc = spec if isinstance(spec, MonteCarloSpec) else MonteCarloSpec.model_validate(dict(spec))
    base = apply_scenario(ds, mc.base)
    draws = mc.draw()
    rows: list[dict[str, Any]] = []
    dsets: list[Any] = []
    idx: list[int] = []
    for k in range(mc.samples):
        ovs: list[Override] = []
        row: dict[str, Any] = {"sample": k}
        for p in mc.parameters:
            lv = float(draws[p.name][k])
            row[p.name] = lv
            ovs.extend(p.fill(lv))
        try:
            dsets.append(apply_overrides(base, ovs, scenario=f"mc_{k}"))
            idx.append(k)
            row["status"] = "pending"
        except DataValidationError as e:
            row["status"] = "invalid: " + "; ".join(f.message for f in e.findings[:2])
        rows.append(row)
    results = solve_many(base, dsets, options, reuse=reuse)
    return _summarise_samples(rows, dict(zip(idx, zip(dsets, results, strict=True), strict=True)))


def _summarise_samples(
    rows: list[dict[str, Any]], by_k: Mapping[int, tuple[Any, Any]]
) -> MonteCarloResult:
    """Fill each sample's row from its plan (``by_k``: sample -> (dataset, result)), summarise.

    Samples without shadow prices count as unknown in the priced shares (see
    :class:`MonteCarloResult`).
    """
    priced: list[set[str] | None] = []
    slack: list[set[str]] = []
    limits: list[set[str] | None] = []
    no_duals: list[Any] = []
    for k, row in enumerate(rows):
        if k not in by_k:
            row.update(dict.fromkeys(OUTCOMES, math.nan), binding_families="", binding_limits="")
            continue
        d, r = by_k[k]
        row["status"] = plan_status(r)
        if row["status"] in OK_STATUSES:
            row.update(plan_outcomes(r, d))
            bp, lim = binding_families(r), binding_limits(r)
            priced.append(bp)
            slack.append(binding_families(r, by="slack") or set())
            limits.append(lim)
            row["binding_families"] = None if bp is None else ";".join(sorted(bp))
            row["binding_limits"] = None if lim is None else ";".join(sorted(lim))
            if bp is None:
                no_duals.append(r)
        else:
            row.update(dict.fromkeys(OUTCOMES, math.nan), binding_families="", binding_limits="")
    samples = pd.DataFrame(rows)
    cols = ["limit", "share_priced", "n", "n_priced"]
    lim_df = binding_shares(limits).rename(columns={"family": "limit"})[cols]
    return MonteCarloResult(
        samples,
        outcome_percentiles(samples),
        binding_shares(priced, slack),
        lim_df,
        duals_note=_samples_duals_note(no_duals, len(priced)),
    )


def _samples_duals_note(no_duals: Sequence[Any], n_plans: int) -> str:
    """Note on the samples without shadow prices ("" when every plan has them).

    E.g. ``"shadow prices are not available from SCIP_PY (...); solve with highs or
    PULP_CBC_CMD for them: which limits bind by shadow price is unknown for 4 of 4
    samples with a plan"``.
    """
    if not no_duals:
        return ""
    r = no_duals[0]
    text = no_duals_text(str(getattr(r, "solver", "") or ""), missing_duals(r))
    return (
        f"{text}: which limits bind by shadow price is unknown for {len(no_duals)} of "
        f"{n_plans} samples with a plan"
    )


# ----------------------------------------------------------------------- hedged plan
def mean_value_dataset(datasets: Sequence[Any], weights: Sequence[float]) -> Any | None:
    """Return the mean-value dataset of scenarios, or None when it is not defined.

    Every decimal (float) column is replaced by its weighted mean over the scenarios.
    Defined only when all datasets have the same rows (same keys in the same order)
    and the same non-decimal cells.

    Returns
    -------
    Dataset or None
    """
    from capacity.schema import TABLE_NAMES

    first = datasets[0]
    w = np.asarray(weights, dtype=float)
    tables = {}
    for t in TABLE_NAMES:
        frames = [d.table(t) for d in datasets]
        f0 = frames[0]
        if any(len(f) != len(f0) or list(f.columns) != list(f0.columns) for f in frames):
            return None
        out = f0.copy()
        for c in f0.columns:
            if f0[c].dtype.kind == "f":
                stack = np.vstack([f[c].to_numpy(dtype=float) for f in frames])
                same = (stack == stack[0]) | (np.isnan(stack) & np.isnan(stack[0]))
                # a column no scenario changes keeps its values exactly (a weighted
                # mean of 100 equal shares can round to 1.0000000000000007 > 1)
                if not same.all():
                    out[c] = (w[:, None] * stack).sum(axis=0)
            elif any(
                not (f[c].astype(str).to_numpy() == f0[c].astype(str).to_numpy()).all()
                for f in frames[1:]
            ):
                return None
        tables[t] = out
    from capacity.dataset import Dataset

    return Dataset.from_tables(
        tables, name=first.name, scenarios=first.scenarios, scenario="mean_value"
    )


@dataclass(frozen=True)
class HedgedPlan:
    """The two-stage stochastic (hedged) plan with its VSS and EVPI.

    Attributes
    ----------
    scenarios : tuple of str
    weights : tuple of float
    status : str
        Status of the stochastic solve.
    expected_cost_usd : float
        RP: optimum of the two-stage LP (probability-weighted discounted cost).
    wait_and_see_usd : float
        WS = sum_s w_s z_s (each scenario solved alone).
    eev_usd : float
        Expected cost of the EV plan's first stage, re-solved per scenario
        (inf when it cannot be operated in some scenario).
    vss_usd, evpi_usd : float
        EEV - RP and RP - WS.
    ev_problem : str
        ``"mean_value"`` or the name of the scenario whose plan served as EV plan.
    per_scenario : DataFrame
        ``scenario, weight, hedged_cost_usd, ev_fixed_cost_usd, ev_fixed_status,
        wait_and_see_cost_usd`` plus the hedged plan's outcomes per scenario.
    first_stage : Mapping[str, DataFrame]
        The hedged plan's shared decisions: ``build_out``, ``fleet`` (installs) and
        ``production`` tables (from the first scenario's result; identical in all);
        ``build_out`` only with the ``capacity`` first stage.
    results : StochasticResult
        The stochastic solve (per-scenario PlanResults).
    notes : tuple of str
    """

    scenarios: tuple[str, ...]
    weights: tuple[float, ...]
    status: str
    expected_cost_usd: float
    wait_and_see_usd: float
    eev_usd: float
    vss_usd: float
    evpi_usd: float
    ev_problem: str
    per_scenario: pd.DataFrame
    first_stage: Mapping[str, pd.DataFrame]
    results: Any = None
    notes: tuple[str, ...] = field(default_factory=tuple)


#: Result tables of the shared decisions and the first-stage kind each one needs.
_SHARED_TABLES = (("build_out", "build"), ("fleet", "install"), ("production", "produce"))


def hedged_plan(
    ds: Any | None = None,
    scenarios: Sequence[str] | Mapping[str, Any] = ("optimistic", "neutral", "negative"),
    weights: Sequence[float] | None = None,
    options: Any = None,
    *,
    ev: str = "mean",
    first_stage: str | Sequence[str] = "full",
) -> HedgedPlan:
    """Solve the hedged (two-stage stochastic) plan and its VSS and EVPI.

    Parameters
    ----------
    ds : Dataset, optional
        Base dataset whose named scenarios are used (needed when ``scenarios`` are
        names).
    scenarios : sequence of str or mapping of str to Dataset
        Scenario names of ``ds`` (default the three named ones), or datasets by name.
    weights : sequence of float, optional
        Probabilities (default equal); normalised to sum 1.
    options : SolveOptions, optional
    ev : {"mean", "neutral"}
        Expected-value problem: the mean-value scenario (falls back to the neutral
        plan when the scenarios' rows differ) or directly the ``neutral`` scenario
        (the heaviest one when there is no ``neutral``). See the module docstring.
    first_stage : str or sequence of str
        The decisions shared by the scenarios (and imposed when the EV plan is
        re-operated): ``full`` (build, liquid, install, produce, retrofit; default)
        or ``capacity`` (build, liquid, retrofit; chips are recourse), see
        :data:`optimizer.plan.model.FIRST_STAGE_SETS`.

    Returns
    -------
    HedgedPlan

    Raises
    ------
    RuntimeError
        When the stochastic problem or a wait-and-see problem has no solution.
    ValueError
        For bad weights or an unknown ``ev``.
    """
    from optimizer.plan.options import SolveOptions
    from optimizer.plan.pipeline import solve
    from optimizer.plan.stochastic import solve_stochastic

    options = options or SolveOptions()
    names, dsets = _scenario_datasets(ds, scenarios)
    w = _probabilities(weights, len(names))
    if ev not in ("mean", "neutral"):
        raise ValueError(f"ev must be 'mean' or 'neutral', not {ev!r}")
    notes: list[str] = []

    kinds = first_stage_kinds(first_stage)
    sto = solve_stochastic(dsets, list(w), options, first_stage=kinds)
    if sto.expected_objective_usd is None:
        raise RuntimeError(f"stochastic plan has no solution: {sto.message}")
    rp = float(sto.expected_objective_usd)
    ws_res = _wait_and_see(names, dsets, options)
    ws = float(sum(wi * r.objective_usd for wi, r in zip(w, ws_res, strict=True)))

    ev_plan, ev_name = _ev_plan(ev, names, dsets, w, ws_res, options, notes)
    eev_res = [solve(d, options, fixed_first_stage=ev_plan, first_stage=kinds) for d in dsets]
    eev_parts = _fixed_plan_costs(names, eev_res, ev_name, notes)
    eev = float(sum(wi * c for wi, c in zip(w, eev_parts, strict=True)))
    first = sto.scenarios[0].tables
    fs = {t: first.get(t, pd.DataFrame()) for t, kind in _SHARED_TABLES if kind in kinds}
    return HedgedPlan(
        scenarios=names,
        weights=tuple(float(x) for x in w),
        status=plan_status(sto),
        expected_cost_usd=rp,
        wait_and_see_usd=ws,
        eev_usd=eev,
        vss_usd=eev - rp,
        evpi_usd=rp - ws,
        ev_problem=ev_name,
        per_scenario=_per_scenario_frame(names, dsets, w, sto, ws_res, eev_res, eev_parts),
        first_stage=fs,
        results=sto,
        notes=tuple(notes),
    )


def _scenario_datasets(
    ds: Any | None, scenarios: Sequence[str] | Mapping[str, Any]
) -> tuple[tuple[str, ...], list[Any]]:
    """Scenario names and their datasets (named scenarios of ``ds`` applied)."""
    from capacity.scenarios import apply_scenario

    if isinstance(scenarios, Mapping):
        names = tuple(str(n) for n in scenarios)
        return names, [scenarios[n] for n in names]
    if ds is None:
        raise ValueError("pass a dataset when scenarios are given by name")
    names = tuple(scenarios)
    return names, [apply_scenario(ds, n) for n in names]


def _probabilities(weights: Sequence[float] | None, n: int) -> np.ndarray:
    """Scenario weights normalised to sum 1 (equal by default); ValueError when bad."""
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if len(w) != n or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"need one non-negative weight per scenario, got {list(w)}")
    return np.asarray(w / w.sum(), dtype=float)


def _ev_plan(
    ev: str,
    names: Sequence[str],
    dsets: Sequence[Any],
    w: np.ndarray,
    ws_res: Sequence[Any],
    options: Any,
    notes: list[str],
) -> tuple[Any, str]:
    """Return the expected-value plan and its name (mean-value problem, else neutral)."""
    from optimizer.plan.pipeline import solve

    if ev == "mean":
        mv = mean_value_dataset(dsets, list(w))
        if mv is None:
            notes.append(
                "scenario rows differ: the mean-value problem is undefined; used the neutral plan"
            )
        else:
            ev_plan = solve(mv, options)
            if ev_plan.objective_usd is None:
                raise RuntimeError(f"mean-value problem has no solution: {ev_plan.message}")
            return ev_plan, "mean_value"
    i = names.index("neutral") if "neutral" in names else int(np.argmax(w))
    return ws_res[i], names[i]


def _fixed_plan_costs(
    names: Sequence[str], results: Sequence[Any], ev_name: str, notes: list[str]
) -> list[float]:
    """Cost per scenario of the fixed EV plan (inf, with a note, where it cannot run)."""
    costs = []
    for n, r in zip(names, results, strict=True):
        if r.objective_usd is None:
            costs.append(math.inf)
            notes.append(f"the {ev_name} plan cannot be operated in scenario {n}: {r.message}")
        else:
            costs.append(float(r.objective_usd))
    return costs


def _wait_and_see(names: Sequence[str], dsets: Sequence[Any], options: Any) -> list[Any]:
    """Each scenario solved alone; RuntimeError when one has no solution."""
    from optimizer.plan.pipeline import solve

    results = [solve(d, options) for d in dsets]
    for n, r in zip(names, results, strict=True):
        if r.objective_usd is None:
            raise RuntimeError(f"scenario {n} alone has no solution: {r.message}")
    return results


def _per_scenario_frame(
    names: Sequence[str],
    dsets: Sequence[Any],
    w: np.ndarray,
    sto: Any,
    ws_res: Sequence[Any],
    eev_res: Sequence[Any],
    eev_parts: Sequence[float],
) -> pd.DataFrame:
    """One row per scenario: hedged, EV-fixed and wait-and-see costs, hedged outcomes."""
    rows = [
        {
            "scenario": n,
            "weight": float(w[i]),
            "hedged_cost_usd": sto.scenarios[i].objective_usd,
            "ev_fixed_cost_usd": eev_parts[i],
            "ev_fixed_status": plan_status(eev_res[i]),
            "wait_and_see_cost_usd": ws_res[i].objective_usd,
            **{
                f"hedged_{k}": v
                for k, v in plan_outcomes(sto.scenarios[i], dsets[i]).items()
                if k != "total_cost_usd"
            },
        }
        for i, n in enumerate(names)
    ]
    return pd.DataFrame(rows)
