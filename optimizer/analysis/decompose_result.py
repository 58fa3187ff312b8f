"""The decomposed hedged plan's result: bounds, VSS and EVPI, and its first-stage table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from optimizer.plan.model import FirstStageUniverse

__all__ = ["DecomposedPlan", "first_stage_table"]


@dataclass(frozen=True)
class DecomposedPlan:
    """The hedged plan found by the L-shaped method, with its bounds, VSS and EVPI.

    Attributes
    ----------
    scenarios : tuple of str
    weights : tuple of float
    expected_cost_usd : float
        RP: the best plan's expected cost (the upper bound; USD, discounted).
    lower_bound_usd : float
        The last master optimum (a lower bound on RP).
    gap_rel : float
        ``(UB - LB) / |UB|``.
    converged : bool
        ``gap_rel <= tol`` within ``max_iter`` iterations.
    wait_and_see_usd, eev_usd, vss_usd, evpi_usd : float
        WS, EEV (inf when the EV plan cannot be operated in some scenario),
        ``EEV - RP`` and ``RP - WS``.
    ev_problem : str
        ``"mean_value"`` or the name of the scenario whose plan served as EV plan.
    iterations : DataFrame
        ``iteration, lower_bound_usd, upper_bound_usd, gap_rel, cuts, master_rows,
        master_s, subproblems_s, solve_cpu_s, busiest_block_s, simplex_iterations,
        halvings``; iteration 0 is the EV plan's evaluation. ``cuts`` counts every cut
        made, ``master_rows`` those in the master after the round (the others are
        pooled); ``master_s`` and ``subproblems_s`` are wall seconds, ``solve_cpu_s``
        the round's subproblem solves' CPU seconds summed over the workers and
        ``busiest_block_s`` the busiest worker's (the round's wall time less it is
        communication and waiting).
    per_scenario : DataFrame
        ``scenario, weight, hedged_cost_usd, ev_fixed_cost_usd, wait_and_see_cost_usd``.
    first_stage : DataFrame
        ``kind, site, chip, period, value`` (MW for build/liquid, chips otherwise) of
        the hedged plan's non-zero first-stage decisions.
    timings_s : Mapping[str, float]
        Wall seconds: ``setup`` (the blocks started, the datasets coded and the
        universe made on them), ``mean_value`` (the mean-value problem in this process,
        while the workers build their first scenario models: part of ``wait_and_see``
        on a cluster), ``wait_and_see`` (the builds and the scenarios alone on the
        workers), ``ev`` (the EV plan evaluated in every scenario: iteration 0; about 0
        when each scenario's call ran both, then counted in ``wait_and_see``),
        ``iterations``, ``total``.
    work : Mapping[str, float]
        Work of the first solves (:class:`optimizer.analysis.decompose_setup.StartedRun`):
        ``<phase>_cpu_s``, ``<phase>_busiest_cpu_s`` and ``<phase>_simplex_iterations``
        for ``mean_value`` (CPU of this process), ``wait_and_see`` and ``ev`` (the
        workers' solves).
    peak_mb : Mapping[str, float]
        ``client`` and ``workers`` (sum over the block processes) ``ru_maxrss``.
    notes : tuple of str
    risk : Mapping[str, float]
        :func:`optimizer.plan.risk.risk_summary` of the plan's scenario costs (``alpha,
        risk_weight, expected_cost_usd, var_usd, cvar_usd, risk_objective_usd``). With a
        risk weight, ``expected_cost_usd`` above (RP), WS, EEV and the bounds are values
        of ``rho = E + L * CVaR``; ``risk["expected_cost_usd"]`` is the plain expectation.
    """

    scenarios: tuple[str, ...]
    weights: tuple[float, ...]
    expected_cost_usd: float
    lower_bound_usd: float
    gap_rel: float
    converged: bool
    wait_and_see_usd: float
    eev_usd: float
    vss_usd: float
    evpi_usd: float
    ev_problem: str
    iterations: pd.DataFrame
    per_scenario: pd.DataFrame
    first_stage: pd.DataFrame
    timings_s: Mapping[str, float]
    peak_mb: Mapping[str, float]
    notes: tuple[str, ...] = field(default_factory=tuple)
    risk: Mapping[str, float] = field(default_factory=dict)
    work: Mapping[str, float] = field(default_factory=dict)


def first_stage_table(
    table: pd.DataFrame, universe: FirstStageUniverse, periods: Sequence[str], x: np.ndarray
) -> pd.DataFrame:
    """Decode first-stage columns into ``kind, site, chip, period, value`` (non-zero).

    Parameters
    ----------
    table : DataFrame
        The first-stage variables (``kind, s, c, t, scale``), in column order.
    universe : FirstStageUniverse
        The run's codes (site and chip ids by code).
    periods : sequence of str
        Period labels by code.
    x : ndarray
        The first-stage point (column units).

    Returns
    -------
    DataFrame
        ``kind, site, chip, period, value`` (MW for build/liquid, chips otherwise) of
        the non-zero decisions.
    """
    out = table.assign(value=x * table["scale"].to_numpy())
    out = out[np.abs(out["value"]) > 1e-9]

    def decode(codes: np.ndarray, ids: Sequence[str]) -> list[str]:
        return [ids[int(c)] if c >= 0 else "" for c in codes]

    return pd.DataFrame(
        {
            "kind": out["kind"].astype(str).to_numpy(),
            "site": decode(out["s"].to_numpy(), universe.codes["s"]),
            "chip": decode(out["c"].to_numpy(), universe.codes["c"]),
            "period": decode(out["t"].to_numpy(), periods),
            "value": out["value"].to_numpy(dtype=float),
        }
    )
