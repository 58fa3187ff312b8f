"""Tornado: one-at-a-time sensitivity of a plan to parameter groups at two levels.

Every function here is pure: a Dataset and :class:`optimizer.plan.options.SolveOptions` in,
frames and numbers out; every number comes from a real re-solve. The outcomes of one
plan are :func:`optimizer.analysis.outcomes.plan_outcomes` (``total_cost_usd``,
``unmet_h100e``, ``trainium_share``, ``breach_mw``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from capacity.scenario_spec import Override
from capacity.validation import refuse_path
from optimizer.analysis.outcomes import ALL_OUTCOMES, mode_outcomes, plan_outcomes, plan_status
from optimizer.analysis.sweep import fill_level
from optimizer.output.progress import ProgressLike, counted
from optimizer.output.summary import OK_STATUSES

__all__ = [
    "SOCIAL_COST_OF_CARBON_USD_PER_T",
    "TornadoParameter",
    "carbon_price_parameter",
    "default_tornado_parameters",
    "tornado",
]


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
    outcomes: Sequence[str] | None = None,
    progress: ProgressLike | None = None,
) -> pd.DataFrame:
    """One-at-a-time sensitivity: move each parameter group to its low and high level.

    Parameters
    ----------
    ds : Dataset
        Base dataset (scenario applied).
    options : SolveOptions, optional
    parameters : sequence of TornadoParameter, optional
        Default :func:`default_tornado_parameters`.
    outcomes : sequence of str, optional
        Outcomes reported (names of :func:`plan_outcomes`); default
        :func:`~optimizer.analysis.outcomes.mode_outcomes` of ``options`` (the margin
        objective adds ``margin_usd`` and ``revenue_usd``; the ranking key
        ``swing_total_cost_usd`` is then the swing of the objective, the margin).
    progress : ProgressLike, optional
        Counts the ``1 + 2 * len(parameters)`` solves (``base``, ``cowos low`` ...);
        a variant whose data does not validate counts as failed.

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

    Warns
    -----
    UserWarning
        For each parameter on a column the objective does not read (its swing is then
        zero): :func:`optimizer.plan.objective_reads.warn_unread_parameters`.
    """
    refuse_path(ds, "tornado")
    from optimizer.plan.objective_reads import warn_unread_parameters

    params = list(parameters) if parameters is not None else default_tornado_parameters(ds)
    warn_unread_parameters({p.name: p.overrides(p.low) for p in params}, options)
    outcomes = mode_outcomes(options) if outcomes is None else tuple(outcomes)
    variants: list[list[Override]] = [[]]
    names = ["base"]
    for p in params:
        variants += [p.overrides(p.low), p.overrides(p.high)]
        names += [f"{p.name} low", f"{p.name} high"]
    results, datasets, errors = _solve_variants(ds, variants, options, progress, names)
    base = results[0]
    if base is None or base.objective_usd is None:
        raise RuntimeError(f"base plan has no solution: {getattr(base, 'message', errors.get(0))}")
    base_out = plan_outcomes(base, ds)
    key = "margin_usd" if "margin_usd" in base_out else "total_cost_usd"  # the objective's
    rows = []
    for n, p in enumerate(params):
        sides = {}
        for j, (side, level) in enumerate((("low", p.low), ("high", p.high))):
            i = 1 + 2 * n + j
            r = results[i]
            o = (
                plan_outcomes(r, datasets[i])
                if r is not None
                else dict.fromkeys(ALL_OUTCOMES, math.nan)
            )
            st = plan_status(r) if r is not None else f"invalid: {errors.get(i, '')}"
            if r is not None and plan_status(r) not in OK_STATUSES:
                o = dict.fromkeys(ALL_OUTCOMES, math.nan)
            sides[side] = (level, o, st)
        swing = abs(sides["high"][1][key] - sides["low"][1][key])
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
    ds: Any,
    variants: Sequence[Sequence[Override]],
    options: Any,
    progress: ProgressLike | None = None,
    names: Sequence[str] = (),
) -> tuple[list[Any], dict[int, Any], dict[int, str]]:
    """Solve ``ds`` under each list of overrides: (results, datasets, errors) by index.

    A variant whose data no longer validates is not solved (result None) and its
    error text is kept, to be reported as "invalid" rather than raised.
    """
    from capacity.scenarios import apply_overrides
    from capacity.validation import DataValidationError
    from optimizer.analysis.batch_case import solve_many

    ok_idx: list[int] = []
    errors: dict[int, str] = {}
    datasets: dict[int, Any] = {}
    for i, v in enumerate(variants):
        try:
            datasets[i] = apply_overrides(ds, v) if v else ds
            ok_idx.append(i)
        except DataValidationError as e:
            errors[i] = "; ".join(f.message for f in e.findings[:2])
            counted(progress, names[i] if names else f"case {i + 1}", ok=False)
    ok_names = [names[i] for i in ok_idx] if names else None
    plans = solve_many(
        ds, [datasets[i] for i in ok_idx], options, reuse=True, progress=progress, names=ok_names
    )
    solved = dict(zip(ok_idx, plans, strict=True))
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
