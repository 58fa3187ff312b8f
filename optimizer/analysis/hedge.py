"""The hedged plan: the two-stage stochastic LP in extensive form, with its VSS and EVPI.

The recourse problem (RP) is one two-stage stochastic LP
(:func:`optimizer.plan.stochastic.solve_stochastic`): build, liquid, install and produce are
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

:func:`extensive_form_objective` builds and solves the extensive form alone, the
reference of the L-shaped decomposition (:mod:`optimizer.analysis.decompose`).

Risk aversion (``risk=RiskSpec(alpha, L)``): the two-stage plan minimises
``rho(C) = E[C] + L * CVaR_alpha(C)`` over the scenario costs ``C_s``
(:mod:`optimizer.plan.risk`, the Rockafellar-Uryasev rows). RP, WS and EEV are then
values of ``rho``: ``RP = rho(C(x_hedged))``, ``WS = rho(z)`` (each scenario alone),
``EEV = rho(C(x_EV))``; ``VSS = EEV - RP`` and ``EVPI = RP - WS`` stay >= 0 (``rho`` is
monotone). With ``L = 0`` every figure is today's expected-cost one.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from optimizer.analysis.outcomes import plan_outcomes, plan_status
from optimizer.output.progress import ProgressLike, counted
from optimizer.plan.columns import first_stage_kinds
from optimizer.plan.model import build_stochastic_model
from optimizer.plan.risk import RiskSpec, check_cvar, risk_summary, risk_value, with_cvar

__all__ = [
    "HedgedPlan",
    "extensive_form_objective",
    "hedged_plan",
    "mean_value_dataset",
    "solve_count",
]


def solve_count(n_scenarios: int, ev: str = "mean") -> int:
    """Return the number of solves of :func:`hedged_plan`.

    The two-stage plan, each scenario alone (WS), the EV plan (``mean`` only: the
    ``neutral`` one is a WS solve) and each scenario with the EV plan's first stage
    fixed (EEV).

    Examples
    --------
    >>> solve_count(3, "mean"), solve_count(3, "neutral")
    (8, 7)
    """
    return 1 + 2 * n_scenarios + (1 if ev == "mean" else 0)


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
        if not _same_cells(frames, [c for c in f0.columns if f0[c].dtype.kind != "f"]):
            return None
        for c in f0.columns:
            if f0[c].dtype.kind == "f":
                stack = np.vstack([f[c].to_numpy(dtype=float) for f in frames])
                same = (stack == stack[0]) | (np.isnan(stack) & np.isnan(stack[0]))
                # a cell no scenario changes keeps its value exactly, and a mean stays
                # within its cell's range: a weighted mean of 100 equal shares of 1.0
                # can round to 1.0000000000000007 > 1, an invalid derate
                if not same.all():
                    mean = (w[:, None] * stack).sum(axis=0)
                    mean = np.clip(mean, stack.min(axis=0), stack.max(axis=0))
                    out[c] = np.where(same.all(axis=0), stack[0], mean)
        tables[t] = out
    from capacity.dataset import Dataset

    return Dataset.from_tables(
        tables, name=first.name, scenarios=first.scenarios, scenario="mean_value"
    )


def _same_cells(frames: Sequence[pd.DataFrame], columns: Sequence[str]) -> bool:
    """Whether every frame has the first one's cells in ``columns``, compared as text.

    A frame that is the first one's (a draw leaves most tables as they are) and a
    column of a typed dtype equal as it is (``equals``: same dtype and values, missing
    cells equal) need no text comparison; object columns are always compared as text,
    where ``equals`` would take ``1`` for ``1.0``. Turning every cell to text took 3 of
    the 3.9 s of a mean-value dataset over 100 draws of the default data (2026-12-04).
    """
    first = frames[0]
    base = {c: first[c] for c in columns}
    for f in frames[1:]:
        if f is first:
            continue
        for c in columns:
            a, b = f[c], base[c]
            typed = a.dtype != object and b.dtype != object
            if typed and a.equals(b):
                continue
            if not (a.astype(str).to_numpy() == b.astype(str).to_numpy()).all():
                return False
    return True


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
        RP: optimum of the two-stage LP (probability-weighted discounted cost); with a
        risk weight, the hedged plan's expected cost (its ``rho``:
        ``risk["risk_objective_usd"]``).
    wait_and_see_usd : float
        WS = sum_s w_s z_s (each scenario solved alone); ``rho(z)`` with a risk weight.
    eev_usd : float
        Expected cost of the EV plan's first stage, re-solved per scenario
        (inf when it cannot be operated in some scenario); ``rho`` of those costs with
        a risk weight.
    vss_usd, evpi_usd : float
        EEV - RP and RP - WS (RP the risk objective with a risk weight).
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
    risk : dict
        :func:`optimizer.plan.risk.risk_summary` of the hedged plan's scenario costs:
        ``alpha, risk_weight, expected_cost_usd, var_usd, cvar_usd, risk_objective_usd``.
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
    risk: Mapping[str, float] = field(default_factory=dict)


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
    progress: ProgressLike | None = None,
    risk: RiskSpec | None = None,
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
    progress : ProgressLike, optional
        Counts the :func:`solve_count` solves by name (``two-stage plan``,
        ``neutral alone``, ``mean-value plan``, ``negative with the EV plan`` ...).
    risk : RiskSpec, optional
        Minimise ``E + L * CVaR_alpha`` of the scenario costs (module docstring).

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

    options = options or SolveOptions()
    names, dsets = _scenario_datasets(ds, scenarios)
    w = _probabilities(weights, len(names))
    if ev not in ("mean", "neutral"):
        raise ValueError(f"ev must be 'mean' or 'neutral', not {ev!r}")
    notes: list[str] = []

    kinds = first_stage_kinds(first_stage)
    step = _Steps(progress)
    sto, hedged_costs, checker = _two_stage(dsets, w, options, kinds, risk, step)
    rp = risk_value(hedged_costs, w, risk)
    notes += checker
    ws_res = _wait_and_see(names, dsets, options, step)
    ws = risk_value([float(r.objective_usd) for r in ws_res], w, risk)

    ev_plan, ev_name = _ev_plan(ev, names, dsets, w, ws_res, options, notes, step)
    eev_res = [
        step(
            f"{n} with the EV plan",
            lambda d=d: solve(d, options, fixed_first_stage=ev_plan, first_stage=kinds),
        )
        for n, d in zip(names, dsets, strict=True)
    ]
    eev_parts = _fixed_plan_costs(names, eev_res, ev_name, notes)
    eev = risk_value(eev_parts, w, risk)
    first = sto.scenarios[0].tables
    fs = {t: first.get(t, pd.DataFrame()) for t, kind in _SHARED_TABLES if kind in kinds}
    return HedgedPlan(
        scenarios=names,
        weights=tuple(float(x) for x in w),
        status="error" if checker else plan_status(sto),
        expected_cost_usd=float(sto.expected_objective_usd),
        wait_and_see_usd=ws,
        eev_usd=eev,
        vss_usd=eev - rp,
        evpi_usd=rp - ws,
        ev_problem=ev_name,
        per_scenario=_per_scenario_frame(names, dsets, w, sto, ws_res, eev_res, eev_parts),
        first_stage=fs,
        results=sto,
        notes=tuple(notes),
        risk=risk_summary(hedged_costs, w, risk),
    )


def _two_stage(
    dsets: Sequence[Any],
    w: np.ndarray,
    options: Any,
    kinds: Sequence[str],
    risk: RiskSpec | None,
    step: _Steps,
) -> tuple[Any, list[float], list[str]]:
    """Solve the two-stage plan (with the CVaR rows when ``risk`` weighs); costs, checker notes."""
    from optimizer.plan.stochastic import solve_stochastic

    extend = None if risk is None or risk.weight == 0 else partial(with_cvar, spec=risk)
    sto = step(
        "two-stage plan",
        lambda: solve_stochastic(dsets, list(w), options, first_stage=kinds, extend=extend),
    )
    if sto.expected_objective_usd is None:
        raise RuntimeError(f"stochastic plan has no solution: {sto.message}")
    hedged_costs = [float(r.objective_usd) for r in sto.scenarios]
    return sto, hedged_costs, _cvar_check_notes(hedged_costs, w, risk, sto.extra)


def _cvar_check_notes(
    costs: Sequence[float], w: np.ndarray, risk: RiskSpec | None, extra: Any
) -> list[str]:
    """Checker rows of the CVaR term (:func:`optimizer.plan.risk.check_cvar`), as notes."""
    if risk is None or risk.weight == 0 or extra is None:
        return []
    bad = check_cvar(costs, w, risk, float(extra[0]), extra[1 : 1 + len(costs)])
    return [
        f"checker: {r.family} {r.keys}: {r.lhs:,.0f} against {r.rhs:,.0f} USD"
        for r in bad.itertuples()
    ]


class _Steps:
    """Run one named solve of the hedged plan and count it on a progress report."""

    def __init__(self, progress: ProgressLike | None) -> None:
        self.progress = progress

    def __call__(self, name: str, solve: Any) -> Any:
        if self.progress is not None:
            self.progress.now(name)
        res = solve()
        if self.progress is not None:
            ok = getattr(res, "objective_usd", getattr(res, "expected_objective_usd", None))
            self.progress.advance(ok is not None)
        return res

    def skip(self, name: str) -> None:
        """Count a solve that is not needed (the mean-value plan when it is undefined)."""
        counted(self.progress, name)


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
    if isinstance(scenarios, str):  # one name was read letter by letter ('n', 'e', ...)
        raise ValueError(f"scenarios: give a list of names, e.g. [{scenarios!r}, ...], not one")
    names = tuple(scenarios)
    return names, [apply_scenario(ds, n) for n in names]


def _probabilities(weights: Sequence[float] | None, n: int) -> np.ndarray:
    """Scenario weights normalised to sum 1 (equal by default); ValueError when bad."""
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if len(w) != n or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise ValueError(  # NaN had gone on to a dataset error; [0, 0] was "non-negative"
            f"need one finite, non-negative weight per scenario ({n}), not all zero; "
            f"got {w.tolist()}"
        )
    return np.asarray(w / w.sum(), dtype=float)


def _ev_plan(
    ev: str,
    names: Sequence[str],
    dsets: Sequence[Any],
    w: np.ndarray,
    ws_res: Sequence[Any],
    options: Any,
    notes: list[str],
    step: _Steps | None = None,
) -> tuple[Any, str]:
    """Return the expected-value plan and its name (mean-value problem, else neutral)."""
    from optimizer.plan.pipeline import solve

    if ev == "mean":
        mv = mean_value_dataset(dsets, list(w))
        if mv is None:
            notes.append(
                "scenario rows differ: the mean-value problem is undefined; used the neutral plan"
            )
            if step is not None:
                step.skip("mean-value plan (undefined)")
        else:
            ev_plan = (step or _Steps(None))("mean-value plan", lambda: solve(mv, options))
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


def _wait_and_see(
    names: Sequence[str], dsets: Sequence[Any], options: Any, step: _Steps | None = None
) -> list[Any]:
    """Each scenario solved alone; RuntimeError when one has no solution."""
    from optimizer.plan.pipeline import solve

    run = step or _Steps(None)
    results = [
        run(f"{n} alone", lambda d=d: solve(d, options)) for n, d in zip(names, dsets, strict=True)
    ]
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


def extensive_form_objective(
    datasets: Sequence[Any],
    weights: Sequence[float] | None = None,
    options: Any = None,
    first_stage: str | Sequence[str] = "full",
    risk: RiskSpec | None = None,
    progress: ProgressLike | None = None,
) -> tuple[float | None, str, dict[str, float]]:
    """Build and solve the extensive form only (the reference; no result tables).

    ``first_stage`` is the shared decisions' definition, as in :func:`hedge_decomposed`;
    with ``risk`` the objective is ``E + L * CVaR_alpha`` (:func:`with_cvar`).
    ``progress`` counts two steps, the build of the N scenarios' LP and its solve.

    Returns
    -------
    (objective USD or None, status, timings)
        Timings ``build`` and ``solve`` (s); the solver options are
        :mod:`optimizer.plan.highs`'s (dual simplex, interior point above 50,000 columns).
    """
    from optimizer.plan.options import SolveOptions
    from optimizer.plan.raw_solve import run_solver

    n = len(datasets)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    w = w / w.sum()
    options = options or SolveOptions()
    t0 = time.perf_counter()
    if progress is not None:
        progress.now(f"build ({n} scenarios)")
    model = build_stochastic_model(
        datasets,
        list(w),
        formulation=options.formulation,
        first_stage=first_stage,
        objective=options.objective,
    )
    model = with_cvar(model, risk)
    t1 = time.perf_counter()
    if progress is not None:
        progress.advance(current=f"solve ({model.n_variables:,} columns)")
    raw = run_solver(model, options, lp_only=True)
    t2 = time.perf_counter()
    if progress is not None:
        progress.advance(raw.solver_objective is not None)
    return raw.solver_objective, raw.status.value, {"build": t1 - t0, "solve": t2 - t1}
