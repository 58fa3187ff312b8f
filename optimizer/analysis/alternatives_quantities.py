"""Plan quantities the near-optimal alternatives minimise and maximise, as linear forms.

Each :class:`Quantity` is ``sum_j coef_j * x_j`` over columns of a built
:class:`~optimizer.plan.model.PlanningModel`, derived from the model's own index tables
(no hand-kept list of columns):

====================================  =======  ============================================
quantity (group)                      unit     linear form
====================================  =======  ============================================
``fleet_h100e:<family>`` (fleet)      h100e    sum_{c in family, s} fleet[c,s,T] * training_h100e[c]
                                               (the family's fleet alive in the last period)
``build_mw:<site>`` (site_build)      mw       sum_p build[s,p] (new IT MW over the horizon)
``onsite_twh`` (onsite)               twh      sum_{s, on-site o, p} power_energy[s,o,p] / 1e6
``trainium_share_of_demand``          share    H100e of demand served on Trainium chips
(trainium_share_of_demand)                     (``assign``/``serve`` columns' demand_balance
                                               coefficients) / total demand H100e (not of
                                               the H100e served, which the summary's
                                               Trainium share divides by: a ratio of two
                                               decisions is not linear)
====================================  =======  ============================================

A group without columns in the model (no on-site generation, no Trainium family) gives
no quantity. Random directions weight the selected quantities with seeded normal
weights, each quantity divided by its scale (its value at the optimum, at least 1), so
that MW and H100e weigh alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "GROUPS",
    "Quantity",
    "check_focus",
    "default_quantities",
    "quantity_names",
    "quantity_value",
    "random_directions",
    "select_quantities",
]

#: Quantity groups, in report order.
GROUPS = ("fleet", "site_build", "onsite", "trainium_share_of_demand", "direction")


@dataclass(frozen=True)
class Quantity:
    """A linear plan quantity ``sum_j coef_j * x_j``.

    Attributes
    ----------
    name : str
    group : str
        One of :data:`GROUPS`.
    unit : str
    cols : ndarray of int
        Column positions.
    coef : ndarray of float
        Coefficients, same length as ``cols`` (domain unit per column value).
    offset : float
        A constant part no column holds: the initial fleet alive in a fleet quantity's
        quarter (the ``fleet`` columns count installs only).
    """

    name: str
    group: str
    unit: str
    cols: np.ndarray
    coef: np.ndarray
    offset: float = 0.0

    def dense(self, n: int) -> np.ndarray:
        """Coefficients as a dense vector over ``n`` columns."""
        out = np.zeros(n)
        np.add.at(out, self.cols, self.coef)
        return out


def quantity_value(q: Quantity, x: np.ndarray) -> float:
    """Value of ``q`` at the column values ``x`` (its unit), its offset included."""
    return float(np.dot(q.coef, np.asarray(x, dtype=float)[q.cols])) + q.offset


def default_quantities(model: Any) -> list[Quantity]:
    """Every default quantity of ``model`` (see the module table), in :data:`GROUPS` order.

    Parameters
    ----------
    model : PlanningModel
        A deterministic model (one scenario).

    Returns
    -------
    list of Quantity
    """
    ds = model.datasets[0]
    v = model.variables
    kind = v["kind"].to_numpy()
    scale = v["scale"].to_numpy(dtype=float)
    codes = model.codes
    chips = ds.table("chips").set_index("chip")
    c_family = chips["family"].reindex(list(codes["c"])).astype(str).to_numpy()
    c_h100e = chips["training_h100e"].reindex(list(codes["c"])).to_numpy(dtype=float)
    out: list[Quantity] = []
    last = len(model.periods) - 1
    fleet = np.flatnonzero((kind == "fleet") & (v["t"].to_numpy() == last))
    fc = v["c"].to_numpy()[fleet]
    initial = _initial_h100e_alive(ds, model.periods[-1])  # the fleet columns lack it
    for fam in sorted(set(c_family)):
        cols = fleet[c_family[fc] == fam]
        coef = scale[cols] * c_h100e[v["c"].to_numpy()[cols]]
        off = initial.get(fam, 0.0)
        out.append(Quantity(f"fleet_h100e:{fam}", "fleet", "H100e", cols, coef, off))
    build = np.flatnonzero(kind == "build")
    bs = v["s"].to_numpy()[build]
    for i, site in enumerate(codes["s"]):
        cols = build[bs == i]
        out.append(Quantity(f"build_mw:{site}", "site_build", "MW", cols, scale[cols]))
    onsite_o = [i for i, o in enumerate(codes.get("o", ())) if str(o).startswith("onsite:")]
    cols = np.flatnonzero((kind == "power_energy") & np.isin(v["o"].to_numpy(), onsite_o))
    if len(cols):
        out.append(Quantity("onsite_twh", "onsite", "TWh", cols, scale[cols] / 1e6))
    share = _trainium_share(model, c_family)
    if share is not None:
        out.append(share)
    return out


def _initial_h100e_alive(ds: Any, period: str) -> dict[str, float]:
    """H100e of the initial fleet alive in ``period``, by chip family.

    A cohort installed in quarter ``i`` lives ``lifetime_periods`` quarters: alive in
    ``t`` when ``i <= t < i + lifetime`` (as :mod:`optimizer.plan.coding` expands it).
    The alternatives left it out of ``fleet_h100e``: 0 H100e at the optimum beside a
    report of 1,000 initial H100 chips alive.
    """
    from capacity.schema import period_index

    f0 = ds.table("initial_fleet")
    if not len(f0):
        return {}
    chips = ds.table("chips").set_index("chip")
    t = period_index(period)
    start = np.array([period_index(str(p)) for p in f0["install_period"]])
    life = chips["lifetime_periods"].reindex(f0["chip"]).to_numpy(dtype=float)
    alive = (start <= t) & (t < start + life)
    h100e = f0["chips"].to_numpy(dtype=float) * chips["training_h100e"].reindex(
        f0["chip"]
    ).to_numpy(dtype=float)
    fam = chips["family"].reindex(f0["chip"]).astype(str).to_numpy()
    return {f: float(h100e[alive & (fam == f)].sum()) for f in set(fam[alive])}


def _trainium_share(model: Any, c_family: np.ndarray) -> Quantity | None:
    """Share of the horizon's demand H100e served on Trainium chips (None without any)."""
    cons = model.constraints
    rows = np.flatnonzero((cons["family"] == "demand_balance").to_numpy())
    total = float(cons["rhs"].to_numpy(dtype=float)[rows].sum())
    if not len(rows) or total <= 0 or "trainium" not in set(c_family):
        return None
    sub = model.matrix[rows].tocsc()
    v = model.variables
    serving = np.isin(v["kind"].to_numpy(), ("assign", "serve"))
    c = v["c"].to_numpy()
    on_trn = serving & (c >= 0) & (c_family[np.clip(c, 0, None)] == "trainium")
    cols = np.flatnonzero(on_trn & (np.diff(sub.indptr) > 0))
    coef = np.asarray(sub[:, cols].sum(axis=0)).ravel() * v["scale"].to_numpy()[cols] / total
    return Quantity("trainium_share_of_demand", "trainium_share_of_demand", "share", cols, coef)


def quantity_names(ds: Any) -> set[str]:
    """Return the quantity names and groups ``--focus`` may name, from the data alone.

    The names :func:`default_quantities` gives the model built from ``ds`` (a test
    holds the two equal), known before the model is built, so a misspelt focus is
    refused in a second instead of after the build and the optimum.

    Parameters
    ----------
    ds : Dataset
        The scenario's data.

    Returns
    -------
    set of str
        ``fleet_h100e:<family>``, ``build_mw:<site>``, ``onsite_twh`` (with on-site
        generation), ``trainium_share_of_demand`` (with a Trainium family and demand)
        and their groups.
    """
    families = sorted(set(ds.table("chips")["family"].astype(str)))
    names = {f"fleet_h100e:{f}" for f in families} | {"fleet"}
    names |= {f"build_mw:{s}" for s in ds.table("sites")["site"].astype(str)} | {"site_build"}
    if len(ds.table("onsite_generation")):
        names |= {"onsite_twh", "onsite"}
    if "trainium" in families and float(ds.table("demand")["demand_h100e"].sum()) > 0:
        names.add("trainium_share_of_demand")
    return names


def check_focus(ds: Any, focus: Sequence[str]) -> None:
    """Raise ValueError naming each focus entry that names no quantity of ``ds``.

    The same message as :func:`select_quantities`, from :func:`quantity_names`.
    """
    names = quantity_names(ds)
    unknown = [f for f in focus if f not in names]
    if unknown:
        known = ", ".join(sorted(names))
        raise ValueError(f"focus: {', '.join(unknown)} names no quantity (known: {known})")


def select_quantities(quantities: Sequence[Quantity], focus: Sequence[str]) -> list[Quantity]:
    """Keep the quantities whose group or name is in ``focus`` (all when empty).

    Raises
    ------
    ValueError
        Naming each focus entry that names no quantity, and the names there are.
    """
    if not focus:
        return list(quantities)
    names = {q.name for q in quantities} | {q.group for q in quantities}
    unknown = [f for f in focus if f not in names]
    if unknown:
        known = ", ".join(sorted(names))
        raise ValueError(f"focus: {', '.join(unknown)} names no quantity (known: {known})")
    return [q for q in quantities if q.name in focus or q.group in focus]


def random_directions(
    quantities: Sequence[Quantity], n: int, seed: int, x: np.ndarray
) -> list[Quantity]:
    """``n`` seeded random directions over ``quantities`` (normal weights / scale).

    Parameters
    ----------
    quantities : sequence of Quantity
    n : int
        Number of directions (0: none).
    seed : int
        Seed of ``numpy.random.default_rng``.
    x : ndarray
        Column values of the optimum; each quantity's scale is ``max(|value|, 1)`` there.

    Returns
    -------
    list of Quantity
        Named ``direction_1 .. direction_n``, unit ``"scaled"``.
    """
    if n <= 0 or not quantities:
        return []
    rng = np.random.default_rng(seed)
    scales = np.array([max(abs(quantity_value(q, x)), 1.0) for q in quantities])
    cols = np.concatenate([q.cols for q in quantities])
    out = []
    for i in range(n):
        w = rng.standard_normal(len(quantities)) / scales
        coef = np.concatenate([wi * q.coef for wi, q in zip(w, quantities, strict=True)])
        out.append(Quantity(f"direction_{i + 1}", "direction", "scaled", cols, coef))
    return out
