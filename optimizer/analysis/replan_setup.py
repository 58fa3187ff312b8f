"""What a rolling replan is given: truth paths, forecast revisions, locks and epochs.

A *truth path* is one Monte Carlo draw of the uncertain groups (the levels of
:func:`optimizer.analysis.tornado.default_tornado_parameters`, uniform in [low, high],
drawn by :class:`optimizer.analysis.sweep.MonteCarloSpec` exactly as
:func:`optimizer.analysis.monte_carlo.sample_scenarios` draws them). Replanning keeps
the groups whose outcome is learnt over time: supply (``wafer_supply``, ``cowos``,
``hbm``), grid dates (``grid_delay``) and demand (``demand_<customer>``)
(:data:`REVEALED_GROUPS`).

A *forecast* is one level per group, made at a replan epoch. Two revision models say
how forecasts move from one epoch to the next:

* :class:`RandomWalkRevision` (the default): the forecast of group ``p`` is an additive
  random walk over the epochs whose last value is the truth,
  ``f_p(r) = m_p - sigma_p * sum_{u=r+1}^{R-1} eps_{p,u}``, ``eps ~ N(0, 1)``, so
  ``f_p(r+1) - f_p(r) = sigma_p * eps_{p,r+1}`` (volatility ``sigma_p`` per epoch) and
  the last epoch forecasts the truth. ``sigma_p = volatility * (high_p - low_p)``; the
  default volatility 0.05 gives a first forecast whose error has a standard deviation
  of ``0.05 * sqrt(23) = 0.24`` of the group's range at the default 24 quarterly
  epochs (an assumption of this tool, not a measured figure). Forecasts are clipped
  to [low, high] (so the data stays valid) and shifts are rounded to whole quarters.
  Volatility 0 forecasts the truth at every epoch (perfect foresight).
* :class:`FileRevision`: forecasts the user supplies in a CSV file with the columns
  ``quarter, parameter, level`` and optionally ``path``: the level of ``parameter``
  forecast at the replan made in ``quarter`` (a row without a path applies to every
  path; a path's own row wins). An epoch with no row for a group keeps the group's
  latest earlier forecast, and the truth before the first one.

Locks: every decision of :data:`LOCK_KINDS` taken in a quarter that has passed is
fixed (construction started, chips ordered, contracts signed). ``--lock KIND:N`` makes
a kind firm ``N`` quarters further ahead (e.g. ``produce:2``: chip orders are firm two
quarters before their quarter).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from optimizer.analysis.tornado import TornadoParameter, default_tornado_parameters

__all__ = [
    "KIND_UNITS",
    "LOCK_KINDS",
    "REPLANNED_KINDS",
    "REVEALED_GROUPS",
    "FileRevision",
    "RandomWalkRevision",
    "ReplanInputError",
    "draw_truths",
    "level_dataset",
    "levelled",
    "parse_locks",
    "read_forecast_file",
    "replan_epochs",
    "revealed_dataset",
    "revealed_parameters",
]

#: Decision kinds that are locked once their quarter is due: construction started,
#: chips ordered and installed, power contracted (grid upgrades and flexible requests,
#: on-site plant built or a bridge retired). A flexible request left unlocked was placed
#: in past quarters after the truth was known, and the regret read 0 where a planner who
#: learned the truth a quarter late lost 12.2M (tests/test_replan_locks.py).
LOCK_KINDS = (
    "build",
    "liquid",
    "retrofit",
    "produce",
    "install",
    "grid_upgrade",
    "onsite_build",
    "onsite_retire",
    "flexible_upgrade",
)

#: Decision kinds every replan decides again: running totals defined by the locked
#: kinds, the quarter's operation (which chip serves whom, energy dispatched, demand
#: unmet, floors short), and choices keyed by customer that the locks' (site, chip,
#: option, quarter) keys cannot hold (training clusters, migration porting). Every kind
#: of the model is in this tuple or in :data:`LOCK_KINDS` (tests/test_replan_locks.py).
REPLANNED_KINDS = (
    "built",
    "liquid_built",
    "fleet",
    "installed",
    "assign",
    "busy",
    "serve",
    "pool_serve",
    "pool_draw",
    "power_energy",
    "unmet",
    "breach",
    "take_or_pay_short",
    "reservation_short",
    "sla_short",
    "cluster",
    "cluster_start",
    "migration_port",
)


def _kind_units() -> dict[str, str]:
    """Return the unit suffix of each lockable kind from the model's units (``MW``: ``mw``)."""
    from optimizer.components.registry import active

    units = active().kind_units
    return {k: units[k].lower() for k in LOCK_KINDS}


#: Unit of each lockable kind (suffix of the ``delivered_short_<kind>_<unit>`` columns).
KIND_UNITS = _kind_units()

#: Tornado groups whose outcome is revealed quarter by quarter (prefix ``demand_``).
REVEALED_GROUPS = ("wafer_supply", "cowos", "hbm", "grid_delay", "demand_")


class ReplanInputError(ValueError):
    """Bad replanning input: the message names the file (or option), line and value."""


def revealed_parameters(ds: Any) -> tuple[TornadoParameter, ...]:
    """Return the tornado groups of ``ds`` that replanning draws (:data:`REVEALED_GROUPS`)."""
    return tuple(
        p
        for p in default_tornado_parameters(ds)
        if p.name in REVEALED_GROUPS or p.name.startswith("demand_")
    )


def _is_shift(p: TornadoParameter) -> bool:
    return any(str(t.get("op")) == "shift" for t in p.templates)


def _bounds(p: TornadoParameter) -> tuple[float, float]:
    return float(min(p.low, p.high)), float(max(p.low, p.high))


def draw_truths(
    parameters: Sequence[TornadoParameter], paths: int, seed: int
) -> list[dict[str, float]]:
    """Draw ``paths`` truth paths: one level per group, uniform in its range.

    Parameters
    ----------
    parameters : sequence of TornadoParameter
    paths : int
        Number of paths (>= 1).
    seed : int
        Seed of ``numpy.random.default_rng`` (>= 0); the same seed gives the draws of
        :class:`~optimizer.analysis.sweep.MonteCarloSpec` over these groups.

    Returns
    -------
    list of dict
        Per path, group name -> level (factor, or quarters for a shift).

    Raises
    ------
    ReplanInputError
        For ``paths`` < 1 or a negative ``seed`` (names the option and value).
    """
    from optimizer.analysis.monte_carlo import uniform_monte_carlo
    from optimizer.analysis.sweep import MonteCarloSpec

    if int(paths) < 1:
        raise ReplanInputError(f"--paths: {paths} is not a number of paths (need >= 1)")
    if int(seed) < 0:
        raise ReplanInputError(f"--seed: {seed} is negative (need >= 0)")
    spec = MonteCarloSpec.model_validate(uniform_monte_carlo(parameters, paths, seed))
    draws = spec.draw()
    return [{p.name: float(draws[p.name][k]) for p in parameters} for k in range(paths)]


def replan_epochs(n_periods: int, every: int) -> tuple[int, ...]:
    """Quarter indices at which a replan is made: ``0, every, 2 * every, ...``.

    Raises
    ------
    ReplanInputError
        For ``every`` < 1.
    """
    if int(every) < 1:
        raise ReplanInputError(f"--every: {every} is not a number of quarters (need >= 1)")
    return tuple(range(0, int(n_periods), int(every)))


def parse_locks(texts: Sequence[str], known: Sequence[str] = LOCK_KINDS) -> dict[str, int]:
    """Parse ``KIND[:N]`` lock options into quarters of firm window per kind.

    Parameters
    ----------
    texts : sequence of str
        Each ``KIND`` or ``KIND:N`` (``N`` >= 0 quarters ahead); several may be
        comma-separated.
    known : sequence of str
        The decision kinds that can be locked.

    Returns
    -------
    dict of str to int
        Every kind of ``known`` with its firm window (0 unless given).

    Raises
    ------
    ReplanInputError
        For a lock naming no decision kind, a bad window, or a kind locked twice,
        naming the value.
    """
    out = dict.fromkeys(known, 0)
    given: dict[str, str] = {}
    for text in texts:
        for item in (s.strip() for s in str(text).split(",")):
            if not item:
                continue
            kind, _, ahead = item.partition(":")
            if kind not in out:
                raise ReplanInputError(
                    f"--lock {item!r}: {kind!r} names no decision; the decisions that can "
                    f"be locked are {', '.join(known)}"
                )
            try:
                n = int(ahead) if ahead else 0
            except ValueError:
                n = -1
            if n < 0:
                raise ReplanInputError(
                    f"--lock {item!r}: {ahead!r} is not a number of quarters (need >= 0)"
                )
            if kind in given:  # the last had won without a word
                raise ReplanInputError(
                    f"--lock {item!r}: {kind} is already locked by {given[kind]!r}; give "
                    "each decision one window"
                )
            given[kind], out[kind] = item, n
    return out


@dataclass(frozen=True)
class RandomWalkRevision:
    """Forecasts as a random walk per group that ends on the truth (module docstring).

    Attributes
    ----------
    volatility : float
        Standard deviation of one epoch's revision, as a share of the group's range
        (>= 0; default 0.05, an assumption).
    seed : int
        Seed of the revisions (path ``k`` uses ``default_rng([seed, k])``).
    """

    volatility: float = 0.05
    seed: int = 0
    name: str = "random-walk"  # as --revision names it

    def __post_init__(self) -> None:
        if not (self.volatility >= 0 and math.isfinite(self.volatility)):
            raise ReplanInputError(
                f"--volatility: {self.volatility} is not a volatility (need >= 0)"
            )

    def forecasts(
        self,
        parameters: Sequence[TornadoParameter],
        truth: Mapping[str, float],
        periods: Sequence[str],
        epochs: Sequence[int],
        path: int,
    ) -> np.ndarray:
        """Forecast levels, shape (len(epochs), len(parameters)), epoch by epoch."""
        rng = np.random.default_rng([int(self.seed), int(path)])
        n = len(epochs)
        out = np.empty((n, len(parameters)))
        for j, p in enumerate(parameters):
            lo, hi = _bounds(p)
            eps = rng.standard_normal(n)
            # the error still to come at epoch r: the shocks of epochs r+1 .. n-1
            tail = np.concatenate([np.cumsum(eps[:0:-1])[::-1], [0.0]])
            f = truth[p.name] - self.volatility * (hi - lo) * tail
            f = np.clip(f, lo, hi)
            out[:, j] = np.round(f) if _is_shift(p) else f
        return out


@dataclass(frozen=True)
class FileRevision:
    """Forecasts read from a user's CSV file (module docstring).

    Attributes
    ----------
    table : DataFrame
        ``path`` (-1: every path), ``quarter``, ``parameter``, ``level``.
    source : str
        The file's name, for messages.
    """

    table: pd.DataFrame
    source: str = ""
    name: str = field(default="file")

    def forecasts(
        self,
        parameters: Sequence[TornadoParameter],
        truth: Mapping[str, float],
        periods: Sequence[str],
        epochs: Sequence[int],
        path: int,
    ) -> np.ndarray:
        """Forecast levels, shape (len(epochs), len(parameters)), epoch by epoch."""
        t = self.table
        t = t[(t["path"] == -1) | (t["path"] == path)].sort_values("path", kind="stable")
        pos = {q: i for i, q in enumerate(periods)}
        out = np.empty((len(epochs), len(parameters)))
        for j, p in enumerate(parameters):
            rows = t[t["parameter"] == p.name]
            made = {pos[q]: float(v) for q, v in zip(rows["quarter"], rows["level"], strict=True)}
            level = truth[p.name]
            for r, tau in enumerate(epochs):
                for q in sorted(k for k in made if k <= tau):
                    level = made[q]
                out[r, j] = level
        return out


def read_forecast_file(
    path: str | Path,
    periods: Sequence[str],
    parameters: Sequence[TornadoParameter],
    paths: int | None = None,
) -> FileRevision:
    """Read and check a forecast file (``quarter, parameter, level[, path]``).

    ``paths`` (the run's number of truth paths) refuses a row of a path the run does
    not have (it was ignored without a word).

    Raises
    ------
    ReplanInputError
        For a missing column, a quarter outside the horizon, an unknown parameter, a
        level that is not a number or outside the group's range, a bad path or one
        at or above ``paths``, or two rows of the same path, quarter and parameter
        (the last had won): the message names the file, the line and the value.
    """
    path = Path(path)
    try:  # utf-8-sig: a spreadsheet's "CSV UTF-8" starts with a byte-order mark
        with path.open(newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.DictReader(fh))
    except OSError as e:
        raise ReplanInputError(f"{path}: cannot read the forecast file: {e}") from e
    except UnicodeDecodeError as e:
        raise ReplanInputError(
            f"{path}: not UTF-8 text ({e.reason} at byte {e.start}): save it as CSV UTF-8"
        ) from None
    need = {"quarter", "parameter", "level"}
    header = set(rows[0]) if rows else set()
    if not need <= header:
        raise ReplanInputError(f"{path}, line 1: need the columns {sorted(need)}")
    known = {p.name: p for p in parameters}
    recs = [_forecast_row(path, i + 2, r, set(periods), known) for i, r in enumerate(rows)]
    first: dict[tuple[int, str, str], int] = {}
    for line, (k, q, name, _) in enumerate(recs, start=2):
        at = first.setdefault((k, q, name), line)
        if at != line:
            raise ReplanInputError(
                f"{path}, line {line}: a second forecast of {name} made in {q}"
                + ("" if k < 0 else f" on path {k}")
                + f" (line {at} has one): keep one"
            )
        if paths is not None and k >= paths:
            raise ReplanInputError(
                f"{path}, line {line}, column path: {k} is not a path of this run "
                f"(0 to {paths - 1}; --paths {paths})"
            )
    table = pd.DataFrame(recs, columns=["path", "quarter", "parameter", "level"])
    return FileRevision(table, str(path))


def _forecast_row(
    path: Path, line: int, row: Mapping[str, str], periods: set[str], known: Mapping[str, Any]
) -> tuple[int, str, str, float]:
    """One checked forecast row (path -1 when the row applies to every path)."""
    q, name, lv = (str(row.get(c) or "").strip() for c in ("quarter", "parameter", "level"))
    where = f"{path}, line {line}"
    if q not in periods:
        raise ReplanInputError(f"{where}, column quarter: {q!r} is not a quarter of the horizon")
    if name not in known:
        raise ReplanInputError(
            f"{where}, column parameter: {name!r} is not a revealed group "
            f"({', '.join(sorted(known))})"
        )
    try:
        level = float(lv)
    except ValueError:
        level = math.nan
    lo, hi = _bounds(known[name])
    if not (lo <= level <= hi):
        raise ReplanInputError(
            f"{where}, column level: {lv!r} is not a level of {name} in [{lo:g}, {hi:g}]"
        )
    shift = any(str(t.get("op", "")) == "shift" for t in getattr(known[name], "templates", ()))
    if shift and level != round(level):  # 1.5 was recorded as 1.5 and planned on as 2
        raise ReplanInputError(
            f"{where}, column level: {lv!r} is not a whole number of quarters ({name} "
            "shifts the data by quarters)"
        )
    ptext = str(row.get("path") or "").strip()
    if ptext and not ptext.isdigit():
        raise ReplanInputError(f"{where}, column path: {ptext!r} is not a path number")
    return (int(ptext) if ptext else -1), q, name, level


def level_dataset(
    base: Any, parameters: Sequence[TornadoParameter], levels: Sequence[float], name: str
) -> Any:
    """Return ``base`` with every group's overrides at its level (a validated Dataset)."""
    from capacity.scenarios import apply_overrides

    ovs = [o for p, lv in zip(parameters, levels, strict=True) for o in p.overrides(float(lv))]
    return apply_overrides(base, ovs, scenario=name)


def revealed_dataset(truth: Any, forecast: Any, reveal: int, name: str) -> Any:
    """Return the data known at an epoch: ``truth`` before quarter ``reveal``, then ``forecast``.

    Only tables with a ``period`` column whose rows match between the two (same
    keys, same order) are mixed; any other difference keeps the forecast's table.
    """
    periods = list(truth.periods)
    known = set(periods[: max(0, reveal)])
    if not known:
        return forecast
    if len(known) == len(periods):
        return truth
    changed: dict[str, pd.DataFrame] = {}
    for t, ft in forecast.tables.items():
        tt = truth.table(t)
        if tt is ft or "period" not in ft.columns or len(tt) != len(ft):
            continue
        if not (tt["period"].astype(str).to_numpy() == ft["period"].astype(str).to_numpy()).all():
            continue
        past = ft["period"].astype(str).isin(known).to_numpy()
        mixed = ft.copy()
        for c in ft.columns:
            if ft[c].dtype.kind == "f" and not ft[c].equals(tt[c]):
                mixed[c] = np.where(past, tt[c].to_numpy(dtype=float), ft[c].to_numpy())
        changed[t] = mixed
    return forecast.replace(scenario=name, **changed) if changed else forecast


def levelled(
    base: Any, params: Sequence[TornadoParameter], levels: Sequence[float], name: str, what: str
) -> Any:
    """Return :func:`level_dataset`; a level that makes the data invalid is a ReplanInputError.

    The message names ``what`` (the path and the quarter), the levels drawn and the data's
    first error: a traceback of ``DataValidationError`` named neither.
    """
    from capacity.validation import DataValidationError

    try:
        return level_dataset(base, params, levels, name)
    except DataValidationError as e:
        drawn = ", ".join(f"{p.name} {float(lv):.4g}" for p, lv in zip(params, levels, strict=True))
        errors = [f for f in e.findings if f.severity == "error"] or list(e.findings)
        first = errors[0].message if errors else str(e)
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ReplanInputError(
            f"{what} ({drawn}) makes the data invalid: {first}{more}. Fix the data so every "
            "level of the groups' ranges is valid, or forecast levels it can take "
            "(--revision FILE.csv, or that file's rows)"
        ) from None
