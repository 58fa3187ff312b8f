"""Monte Carlo: seeded draws of the tornado groups, a re-solve per sample, binding shares.

:func:`monte_carlo` re-solves every sample and summarises the outcomes' percentiles and
how often each constraint family and each limit binds (:class:`MonteCarloResult`);
:func:`sample_scenarios` draws the scenarios of the hedged plan at scale
(:mod:`optimizer.analysis.decompose`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from capacity.scenario_spec import Override
from capacity.validation import refuse_path
from optimizer.analysis.outcomes import (
    OUTCOMES,
    binding_families,
    binding_limits,
    binding_shares,
    mode_outcomes,
    outcome_percentiles,
    plan_outcomes,
    plan_status,
)
from optimizer.analysis.sweep import MonteCarloSpec
from optimizer.analysis.tornado import TornadoParameter, default_tornado_parameters
from optimizer.output.binding_limits import missing_duals, no_duals_text
from optimizer.output.progress import ProgressLike, counted
from optimizer.output.summary import OK_STATUSES

__all__ = [
    "MonteCarloResult",
    "draw_overrides",
    "monte_carlo",
    "sample_scenarios",
    "uniform_monte_carlo",
]


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
    progress: ProgressLike | None = None,
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
    progress : ProgressLike, optional
        Counts the ``samples`` solves (``sample 0`` ...); a sample whose data does not
        validate counts as failed.

    Returns
    -------
    MonteCarloResult

    Warns
    -----
    UserWarning
        For each parameter on a column the objective does not read (its spread is then
        zero): :func:`optimizer.plan.objective_reads.warn_unread_parameters`.
    """
    refuse_path(ds, "monte_carlo")
    from capacity.scenarios import apply_overrides, apply_scenario
    from capacity.validation import DataValidationError
    from optimizer.analysis.batch_case import solve_many
    from optimizer.plan.objective_reads import warn_unread_parameters

    mc = spec if isinstance(spec, MonteCarloSpec) else MonteCarloSpec.model_validate(dict(spec))
    base = apply_scenario(ds, mc.base)
    draws = mc.draw()
    # samples >= 1 (MonteCarloSpec): the first draw's overrides name each parameter's columns
    warn_unread_parameters(
        {p.name: p.fill(float(draws[p.name][0])) for p in mc.parameters}, options
    )
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
            counted(progress, f"sample {k}", ok=False)
        rows.append(row)
    names = [f"sample {k}" for k in idx]
    results = solve_many(base, dsets, options, reuse=reuse, progress=progress, names=names)
    by_k = dict(zip(idx, zip(dsets, results, strict=True), strict=True))
    return _summarise_samples(rows, by_k, mode_outcomes(options))


def _summarise_samples(
    rows: list[dict[str, Any]],
    by_k: Mapping[int, tuple[Any, Any]],
    outcomes: tuple[str, ...] = OUTCOMES,
) -> MonteCarloResult:
    """Fill each sample's row from its plan (``by_k``: sample -> (dataset, result)), summarise.

    ``outcomes`` get percentiles (:func:`~optimizer.analysis.outcomes.mode_outcomes`: the
    margin objective adds ``margin_usd`` and ``revenue_usd``).

    Samples without shadow prices count as unknown in the priced shares (see
    :class:`MonteCarloResult`).
    """
    priced: list[set[str] | None] = []
    slack: list[set[str]] = []
    limits: list[set[str] | None] = []
    no_duals: list[Any] = []
    for k, row in enumerate(rows):
        if k not in by_k:
            row.update(dict.fromkeys(outcomes, math.nan), binding_families="", binding_limits="")
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
            row.update(dict.fromkeys(outcomes, math.nan), binding_families="", binding_limits="")
    samples = pd.DataFrame(rows)
    cols = ["limit", "share_priced", "n", "n_priced"]
    lim_df = binding_shares(limits).rename(columns={"family": "limit"})[cols]
    return MonteCarloResult(
        samples,
        outcome_percentiles(samples, outcomes),
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


def draw_overrides(start: Any, samples: int, seed: int = 0) -> dict[str, list[Any]]:
    """Return the overrides of each Monte Carlo draw on ``start``, ``{mc_<k>: overrides}``.

    The draws of :func:`sample_scenarios` (same parameters, same seed, same order),
    for a report to record what each sampled scenario applied on top of its base.

    Parameters
    ----------
    start : Dataset
        The data the draws apply to (the base scenario already applied).
    samples, seed : int
        Number of draws (>= 1) and seed (>= 0).

    Returns
    -------
    dict
        Name ``mc_000`` ... to its list of :class:`capacity.scenario_spec.Override`. Each
        has the draw as its ``source`` (``assumption: Monte Carlo draw mc_003 (seed 0) of
        the default ranges, cowos=0.83``), as a batch case's overrides name the sweep: a
        recorded draw re-solved warned "override has no source" once per override.
    """
    params = default_tornado_parameters(start)
    spec = MonteCarloSpec.model_validate(uniform_monte_carlo(params, samples, seed))
    draws = spec.draw()
    out: dict[str, list[Any]] = {}
    for k in range(samples):
        name, ovs = f"mc_{k:03d}", []
        for p in spec.parameters:
            level = float(draws[p.name][k])
            why = f"assumption: Monte Carlo draw {name} (seed {seed}) of the default ranges"
            why = f"{why}, {p.name}={level:.6g}"
            ovs += [o if o.source else o.model_copy(update={"source": why}) for o in p.fill(level)]
        out[name] = ovs
    return out


def sample_scenarios(
    ds: Any,
    samples: int,
    seed: int = 0,
    *,
    base: str | None = "neutral",
    progress: ProgressLike | None = None,
) -> tuple[list[str], list[Any], list[str]]:
    """Draw ``samples`` Monte Carlo scenarios from the default tornado parameters.

    Every group of :func:`optimizer.analysis.tornado.default_tornado_parameters` is drawn
    uniformly in its [low, high] range (independently, one
    ``numpy.random.default_rng(seed)``, see :class:`optimizer.analysis.sweep.MonteCarloSpec`), on
    top of the named scenario ``base`` when the dataset has it.

    Parameters
    ----------
    ds : Dataset
        The validated base dataset.
    samples : int
        Number of draws (>= 1).
    seed : int
        Seed of the draws (>= 0).
    base : str or None
        Scenario the draws start from; None or ``"base"``: the bare tables. The
        default ``"neutral"`` on a dataset that defines no scenario is the bare tables.
    progress : ProgressLike, optional
        Counts each draw as its dataset is made and validated (a draw that makes the
        data invalid counts as failed).

    Returns
    -------
    (names, datasets, notes)
        ``mc_<k>`` names and validated datasets of the valid draws (equal weights are
        implied), and one note per draw whose overrides made the data invalid.

    Raises
    ------
    ValueError
        For ``samples`` < 1 or a negative ``seed``.
    capacity.scenarios.UnknownScenarioError
        When ``base`` names no scenario of the dataset (with a "did you mean" hint).
    """
    from capacity.scenarios import apply_overrides, apply_scenario
    from capacity.validation import DataValidationError

    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    bare = not base or (base == "neutral" and not ds.scenarios)
    start = ds if bare else apply_scenario(ds, base)
    drawn = draw_overrides(start, samples, seed)
    names, dsets, notes = [], [], []
    for k, (name, ovs) in enumerate(drawn.items()):
        if progress is not None:
            progress.now(name)
        try:
            dsets.append(apply_overrides(start, ovs, scenario=name))
            names.append(name)
        except DataValidationError as e:
            notes.append(f"{name} skipped: {e.findings[0].message}")
        if progress is not None:
            following = f"mc_{k + 1:03d}" if k + 1 < samples else ""
            progress.advance(len(names) > 0 and names[-1] == name, current=following)
    return names, dsets, notes
