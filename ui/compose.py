"""Scenario composer and plan metrics used by the app pages.

The composer turns a few widget values into the override dicts of
:mod:`capacity.scenario_spec` (the same format as ``scenarios.yaml``), so a composed
scenario is applied, validated and diffed by the same code as a named one. The
metrics condense a plan result into the few numbers the Plan and Risk pages show.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

import pandas as pd

from capacity.dataset import Dataset
from optimizer.output.formatting import clip_share

SOURCE = "app composer"
TRAINIUM_FAMILY = "trainium"


def trainium_chips(ds: Dataset, family: str = TRAINIUM_FAMILY) -> list[str]:
    """IDs of the chips of one family (default ``trainium``), in table order."""
    chips = ds.table("chips")
    return [str(c) for c in chips.loc[chips["family"].astype(str) == family, "chip"]]


#: Session key of the grid delay's chosen sites that an edit renamed or deleted.
LOST_SITES_KEY = "cmp_grid_sites_lost"


def prune_lost_sites(state: MutableMapping[str, Any], sites: Sequence[str]) -> list[str]:
    """Take the sites the data no longer has out of the grid delay's choice; remember them.

    The composer's multiselect (``cmp_grid_sites``) drops a chosen option the data
    lost, and an empty choice means every site: a site renamed by an edit would turn a
    one-site delay into a delay of every site without a word. The lost names are kept
    under :data:`LOST_SITES_KEY` until the choice is changed, so the page can say so
    and hold the delay off while no chosen site is left.

    Parameters
    ----------
    state : mutable mapping
        The app's session state.
    sites : sequence of str
        The sites of the data now.

    Returns
    -------
    list of str
        Every chosen site lost since the choice was last changed (sorted).
    """
    have = set(sites)
    chosen = [str(s) for s in state.get("cmp_grid_sites") or []]
    lost = [s for s in chosen if s not in have]
    if lost:
        state["cmp_grid_sites"] = [s for s in chosen if s in have]
        state[LOST_SITES_KEY] = sorted({*(state.get(LOST_SITES_KEY) or []), *lost})
    return list(state.get(LOST_SITES_KEY) or [])


def lost_multipliers(
    state: MutableMapping[str, Any], resources: Sequence[str], customers: Sequence[str]
) -> dict[str, str]:
    """Multipliers set for a resource or customer the data no longer has, in words.

    Each composer multiplier is a widget of its own (``cmp_supply_<resource>``,
    ``cmp_demand_<customer>``); after an edit renames a customer its multiplier has no
    widget and would be dropped from the composed scenario without a word. Those
    other than 1 are returned and their widget values removed (set again on the new
    name).

    Returns
    -------
    dict of str to str
        ``{"supply capacity": "n3_wafers (x1.5)", "demand": "acme (x0.8)"}``: only the
        kinds with a lost multiplier.
    """
    out: dict[str, str] = {}
    for prefix, names, what in (
        ("cmp_supply_", set(resources), "supply capacity"),
        ("cmp_demand_", set(customers), "demand"),
    ):
        gone = {}
        for key in [k for k in list(state.keys()) if str(k).startswith(prefix)]:
            name, value = str(key)[len(prefix) :], state[key]
            if name not in names:
                del state[key]
                if isinstance(value, int | float) and not math.isclose(float(value), 1.0):
                    gone[name] = float(value)
        if gone:
            out[what] = ", ".join(f"{n} (x{v:g})" for n, v in sorted(gone.items()))
    return out


def scenario_fallback_text(label: str, error: Exception | None) -> str | None:
    """Why the chosen scenario was replaced by the edited data, in words (None: it was not).

    An edit can make a scenario's overrides name what the data no longer has; the
    app then plans the edited data with no scenario (:func:`ui.state.active_dataset`).
    Every page that shows or solves the active data says so with this text.

    Parameters
    ----------
    label : str
        The chosen scenario's label (``squeeze``, ``negative+custom``).
    error : Exception or None
        The app's ``scenario_error``: a ``DataValidationError`` (its first three
        findings are quoted) or an ``UnknownScenarioError``.

    Returns
    -------
    str or None
        Markdown for a warning.
    """
    if error is None:
        return None
    findings = list(getattr(error, "findings", ()) or ())
    # located, as every other finding: file, row, column, value (the message alone did
    # not say which chip's sale window)
    why = "; ".join(str(f).removeprefix(f"{f.severity}: ") for f in findings[:3]) or str(error)
    more = f" (and {len(findings) - 3} more)" if len(findings) > 3 else ""
    return (
        f"The chosen scenario **{label}** does not apply to the edited data, so the "
        f"edited data with no scenario (**edited**) is planned: {why}{more}. Choose again "
        "on **Scenarios**, or undo the edit on **Data**."
    )


#: The Plan page's solver settings in words.
_SETTING_WORDS = {"time_limit_s": "time limit [s]", "clusters": "exact clusters"}


def _word(value: Any) -> str:
    """Return a setting's value in words (``none`` for no time limit, ``on``/``off``)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:g}" if isinstance(value, float) else str(value)


def settings_changed_text(solved: Mapping[str, Any], now: Mapping[str, Any]) -> str | None:
    """Name the solver settings that differ from those a plan was solved with (None: none).

    Parameters
    ----------
    solved, now : mapping of str to Any
        Setting name -> value (solver, time limit, exact clusters, formulation,
        objective) of the plan shown, and of the Plan page's widgets now.

    Returns
    -------
    str or None
        A warning naming each change (``objective cost -> margin``).
    """
    changes = [
        f"{_SETTING_WORDS.get(k, k)} {_word(solved[k])} -> {_word(now.get(k))}"
        for k in solved
        if solved[k] != now.get(k)
    ]
    if not changes:
        return None
    return (
        "The solver settings changed since this plan was solved ("
        + ", ".join(changes)
        + "): the figures below are that plan's. Press **Solve** for a plan with these settings."
    )


def compose_overrides(
    ds: Dataset,
    *,
    supply: Mapping[str, float] | None = None,
    demand: Mapping[str, float] | None = None,
    grid_delay_periods: int = 0,
    grid_sites: Sequence[str] = (),
    trainium_derate_factor: float = 1.0,
) -> list[dict[str, Any]]:
    """Turn composer settings into override dicts for ``apply_overrides``.

    Parameters
    ----------
    ds : Dataset
        The dataset the overrides will patch (for the Trainium chip list).
    supply : Mapping[str, float], optional
        Multiplier of ``supply_resources.capacity`` per resource (1 = unchanged).
    demand : Mapping[str, float], optional
        Multiplier of ``demand.demand_h100e`` per customer (1 = unchanged).
    grid_delay_periods : int
        Quarters by which the ``site_grid.grid_mw`` schedule moves later (negative =
        earlier); vacated early quarters hold the first value.
    grid_sites : sequence of str
        Sites the delay applies to; empty = every site.
    trainium_derate_factor : float
        Multiplier of ``eligibility.derate`` on the Trainium-family chips (migration
        performance loss; 1 = unchanged). A result above 1 fails validation.

    Returns
    -------
    list of dict
        Overrides in application order; empty when every setting is neutral.
    """
    out: list[dict[str, Any]] = []
    for res, f in sorted((supply or {}).items()):
        if not math.isclose(float(f), 1.0):
            out.append(_scale("supply_resources", "capacity", {"resource": [res]}, f))
    for cust, f in sorted((demand or {}).items()):
        if not math.isclose(float(f), 1.0):
            out.append(_scale("demand", "demand_h100e", {"customer": [cust]}, f))
    if int(grid_delay_periods) != 0:
        ov: dict[str, Any] = {
            "op": "shift",
            "table": "site_grid",
            "column": "grid_mw",
            "periods": int(grid_delay_periods),
            "source": SOURCE,
        }
        if grid_sites:
            ov["where"] = {"site": list(grid_sites)}
        out.append(ov)
    chips = trainium_chips(ds)
    if chips and not math.isclose(float(trainium_derate_factor), 1.0):
        out.append(_scale("eligibility", "derate", {"chip": chips}, trainium_derate_factor))
    return out


def _scale(table: str, column: str, where: dict[str, list[str]], factor: float) -> dict[str, Any]:
    """Return a ``scale`` override of the composer (source: :data:`SOURCE`)."""
    return {
        "op": "scale",
        "table": table,
        "column": column,
        "where": where,
        "factor": float(factor),
        "source": SOURCE,
    }


# ----------------------------------------------------------------------- metrics
def _table(result: Any, name: str) -> pd.DataFrame | None:
    tables = getattr(result, "tables", None) or {}
    df = tables.get(name)
    return df if isinstance(df, pd.DataFrame) else None


def status_text(result: Any) -> str:
    """Return the result status as plain text (``optimal``, ``infeasible`` ...)."""
    s = getattr(result, "status", "")
    return str(getattr(s, "value", s))


def served_by_customer(result: Any) -> pd.DataFrame:
    """Demand, served and unmet H100e summed over periods, per customer and workload.

    Returns
    -------
    DataFrame
        Columns customer, workload, demand_h100e, served_h100e, unmet_h100e,
        served_share (served / demand; NaN when there is no demand).
    """
    cols = ["customer", "workload", "demand_h100e", "served_h100e", "unmet_h100e"]
    d = _table(result, "demand")
    if d is None or d.empty:
        return pd.DataFrame(columns=[*cols, "served_share"])
    g = d.groupby(["customer", "workload"], as_index=False)[cols[2:]].sum()
    g["served_share"] = g["served_h100e"] / g["demand_h100e"].where(g["demand_h100e"] > 0)
    return g


def demand_summary(result: Any, n_periods: int) -> pd.DataFrame:
    """Per customer and workload: mean and peak demand per quarter, mean served and unmet.

    Parameters
    ----------
    result : PlanResult
        A solve result with a ``demand`` table (customer, workload, period,
        demand_h100e, served_h100e, unmet_h100e; H100e in each quarter).
    n_periods : int
        Quarters in the horizon; the means divide the horizon sums by it, so a
        quarter without a demand row counts as zero.

    Returns
    -------
    DataFrame
        Columns customer, workload, served_share (served / demanded H100e·quarters;
        NaN without demand), mean_demand_h100e, peak_demand_h100e, mean_served_h100e,
        mean_unmet_h100e (H100e per quarter, rounded to whole H100e).
    """
    cols = [
        "customer",
        "workload",
        "served_share",
        "mean_demand_h100e",
        "peak_demand_h100e",
        "mean_served_h100e",
        "mean_unmet_h100e",
    ]
    d = _table(result, "demand")
    if d is None or d.empty:
        return pd.DataFrame(columns=cols)
    n = max(int(n_periods), 1)
    per_q = d.groupby(["customer", "workload", "period"], as_index=False)[
        ["demand_h100e", "served_h100e", "unmet_h100e"]
    ].sum()
    g = per_q.groupby(["customer", "workload"], as_index=False).agg(
        dem=("demand_h100e", "sum"),
        peak_demand_h100e=("demand_h100e", "max"),
        srv=("served_h100e", "sum"),
        unm=("unmet_h100e", "sum"),
    )
    # clipped: served can exceed demand by float noise (1.0000000002 reads 100%)
    g["served_share"] = (g["srv"] / g["dem"].where(g["dem"] > 0)).clip(0.0, 1.0)
    g["mean_demand_h100e"] = g["dem"] / n
    g["mean_served_h100e"] = g["srv"] / n
    g["mean_unmet_h100e"] = g["unm"] / n
    num = ["mean_demand_h100e", "peak_demand_h100e", "mean_served_h100e", "mean_unmet_h100e"]
    g[num] = g[num].round(0)
    return g[cols]


def without_equal_objective(df: pd.DataFrame) -> pd.DataFrame:
    """Return ``df`` without ``objective_usd`` when it equals ``cost_usd`` in every row.

    Plans of the cost objective have objective = cost: one column says it. A frame
    holding a plan of the margin objective (objective = cost - revenue) keeps both.
    """
    if "objective_usd" not in df or "cost_usd" not in df:
        return df
    a, b = df["objective_usd"].astype(float), df["cost_usd"].astype(float)
    if bool(((a == b) | (a.isna() & b.isna())).all()):
        return df.drop(columns=["objective_usd"])
    return df


def _cost_usd(result: Any, objective: float | None) -> float:
    """Return the plan's discounted cost (``PlanResult.cost_usd``; else the objective)."""
    cost = getattr(result, "cost_usd", objective)
    return float("nan") if cost is None else float(cost)


def plan_metrics(result: Any, ds: Dataset | None = None) -> dict[str, Any]:
    """Headline numbers of a plan.

    Returns
    -------
    dict
        ``status``; ``objective_usd`` (the discounted objective, USD: the cost, or in
        the margin objective cost - revenue); ``cost_usd`` (the plan's discounted cost,
        USD, every term but revenue: the objective in the cost objective); ``served_share``
        (served / demanded H100e over the horizon, clipped to [0, 1]); ``unmet_h100e``
        (H100e-periods);
        ``trainium_share`` (share of served H100e delivered by Trainium-family chips,
        from the assignment table; NaN without a dataset or assignments).
    """
    obj = getattr(result, "objective_usd", None)
    out: dict[str, Any] = {
        "status": status_text(result),
        "objective_usd": float("nan") if obj is None else float(obj),
        "cost_usd": _cost_usd(result, obj),
        "served_share": float("nan"),
        "unmet_h100e": float("nan"),
        "trainium_share": float("nan"),
    }
    d = _table(result, "demand")
    if d is not None and not d.empty:
        dem = float(d["demand_h100e"].sum())
        share = float(d["served_h100e"].sum()) / dem if dem > 0 else float("nan")
        out["served_share"] = clip_share(share)  # float noise can put it above 1
        out["unmet_h100e"] = float(d["unmet_h100e"].sum())
    a = _table(result, "assignment")
    if ds is not None and a is not None and not a.empty:
        tot = float(a["h100e"].sum())
        trn = set(trainium_chips(ds))
        if tot > 0:
            out["trainium_share"] = (
                float(a.loc[a["chip"].astype(str).isin(trn), "h100e"].sum()) / tot
            )
    return out


INFEASIBILITY_COLUMNS = ("family", "period", "key", "amount", "message")


def infeasibility_view(inf: pd.DataFrame | None) -> pd.DataFrame:
    """Return the "what had to give" table of an infeasible plan, ready to show.

    Parameters
    ----------
    inf : DataFrame or None
        ``optimizer.plan.explain.explain_infeasible`` rows: ``scenario, family, period, key,
        amount, unit, message``; ``scenario`` is the model's internal scenario position
        (always 0 for one plan) and means nothing to the user.

    Returns
    -------
    DataFrame
        ``family, period, key, amount, message``, largest amount first as given, where
        ``amount`` is text with its unit (``"375.92 m3"``, ``"120 MW"``). Empty (with
        these columns) for None or an empty table.
    """
    if inf is None or len(inf) == 0:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in INFEASIBILITY_COLUMNS})
    units = inf["unit"] if "unit" in inf.columns else pd.Series("", index=inf.index)
    amount = [
        f"{float(a):,.6g} {u}".strip() if pd.notna(a) else ""
        for a, u in zip(inf["amount"], units.fillna("").astype(str), strict=True)
    ]
    out = inf.reindex(columns=[c for c in INFEASIBILITY_COLUMNS if c != "amount"]).copy()
    out.insert(3, "amount", amount)
    return out.reset_index(drop=True)


def diff_with_units(diff: pd.DataFrame) -> pd.DataFrame:
    """Return :func:`capacity.scenarios.diff_datasets`'s rows with each cell's unit.

    ``unit`` (after ``column``) is the schema's unit of the changed column (``H100e``,
    ``MW``, ``quarter``; empty for text): old and new mix the units of many columns. A
    number of a column with a unit reads with thousands separators (``480,000``; the
    diff's text is ``480000``); text, ``(no row)`` and non-finite values are as written.
    """
    from capacity.schema import SPECS

    def unit(table: str, column: str) -> str:
        spec = SPECS.get(table)
        col = next((c for c in spec.columns if c.name == column), None) if spec else None
        return str(getattr(col, "unit", "") or "")

    units = [unit(t, c) for t, c in zip(diff["table"], diff["column"], strict=True)]
    out = diff.copy()
    for side in ("old", "new"):
        out[side] = [
            _grouped(v) if u else v for v, u in zip(out[side].astype(str), units, strict=True)
        ]
    out.insert(list(out.columns).index("column") + 1, "unit", units)
    return out


def _grouped(text: str) -> str:
    """Return a number's text with thousands separators (``480000`` -> ``480,000``)."""
    try:
        value = float(text)
    except ValueError:
        return text
    return format(value, ",.10g") if math.isfinite(value) else text
