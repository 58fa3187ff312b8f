"""Bridge power: on-site capacity placed quickly and retired once the grid arrives.

An ``onsite_generation`` row with ``bridge = yes`` (fuel cells, mobile turbines,
batteries) is bought, not rented: its capex is paid in the decision period and its
``salvage_usd_per_mw`` comes back in the period it is retired, or at the end of the
horizon for capacity still standing (so a bridge kept to the end is not penalised
against one retired in the last quarter). Fixed cost runs while it stands. A lease is
the same record with capex 0 and the lease in the fixed cost.

Decisions: ``onsite_build[s,o,d]`` as for permanent plant and ``onsite_retire[s,o,p]``,
MW taken out of service from period p on. Capacity standing::

    bridge[s,o,p] = initial_mw + sum_{d + lead <= p} onsite_build[s,o,d]
                    - sum_{p' <= p} onsite_retire[s,o,p']

Retired MW do not free the site's permit cap (``onsite_cap`` counts MW built).

Family ``bridge_retire`` (MW): sum_{p' <= p} onsite_retire[s,o,p'] <=
initial_mw + sum_{d + lead <= p} onsite_build[s,o,d] (nothing is retired before it
stands). Retired MW leave the site's facility power (``site_grid``) and its on-site
energy (``onsite_energy``) from the retirement period on.

Costs (term ``onsite_power``, discounted like every term): capex at d, - salvage at
T-1 per MW built; - salvage at p + salvage at T-1 per MW retired in p (the salvage
arrives earlier, the end credit is gone); fixed cost x hours / 8760 per MW and period
standing. With a positive salvage or fixed cost a bridge that is no longer needed is
retired as soon as it is not: keeping it costs the fixed cost and the discount on the
salvage.

A battery (``storage_hours`` > 0) adds availability x MW to the site's facility power
but no energy: in the quarterly model it shaves the peak above the average load; the
energy still comes from the grid or generation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from optimizer.components.component import ColumnKind, Component
from optimizer.components.plan_context import once_per_plan
from optimizer.components.power_inputs import PowerData
from optimizer.components.power_online import online_per_option
from optimizer.components.records import ConstraintFamily
from optimizer.components.scenario import ScenarioColumns
from optimizer.lp.builder import ModelBuilder, expand
from optimizer.lp.frames import column_values
from optimizer.lp.join import merge
from optimizer.lp.violations import violations

__all__ = [
    "COMPONENT",
    "add_bridge_columns",
    "add_bridge_costs",
    "define_bridge_retire",
    "online_mw",
    "retired_mw",
    "retired_terms",
]

HOURS_PER_YEAR = 8760.0
_EMPTY = ("s", "o", "t", "col")


def _empty(*names: str) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series([], dtype=np.int64) for c in names})


def bridges(pw: PowerData) -> pd.DataFrame:
    """Return the bridge rows of the on-site options."""
    if pw.onsite.empty:
        return pw.onsite
    return pw.onsite[column_values(pw.onsite, "bridge", dtype=bool)]


def add_bridge_columns(builder: ModelBuilder, columns: ScenarioColumns, pw: PowerData) -> None:
    """Add ``onsite_retire[s,o,p]`` from the first period a bridge can stand.

    A bridge with initial MW can be retired from the first period; otherwise from its
    lead (its first possible online period). The frame goes to
    ``columns.power["onsite_retire"]`` (``s, o, t, col``).
    """
    T = columns.scenario.n_periods
    b = bridges(pw)
    if b.empty:
        keys = _empty("s", "o", "t")
    else:
        start = np.where(column_values(b, "init") > 0, 0, np.minimum(column_values(b, "lead"), T))
        keys = expand(b[["s", "o"]], start, T - start, "t").astype(np.int64)
    cols = builder.add_vars("onsite_retire", columns.scenario.index, keys)
    columns.power["onsite_retire"] = keys.assign(col=cols)


def retired_terms(power: dict[str, Any], n_periods: int) -> pd.DataFrame:
    """Pairs (s, o, t, col): MW retired by column ``col`` are out of service in period t."""
    r = power.get("onsite_retire")
    if r is None or r.empty:
        return _empty(*_EMPTY)
    start = column_values(r, "t")
    return expand(r[["s", "o", "col"]], start, n_periods - start, "t")


def add_bridge_costs(builder: ModelBuilder, columns: ScenarioColumns, pw: PowerData) -> None:
    """Capex at build, salvage at retirement or at the end, fixed cost while standing."""
    scenario = columns.scenario
    i, T, hours = scenario.index, scenario.n_periods, scenario.hours
    power = columns.power
    b = bridges(pw)
    if b.empty:
        return
    last = T - 1
    built = power["onsite_build"].merge(b[["s", "o", "capex", "salvage", "fixed", "lead"]])
    if len(built):
        builder.add_cost(i, "onsite_power", built["col"], built["t"], built["capex"])
        builder.add_cost(i, "onsite_power", built["col"], last, -column_values(built, "salvage"))
        start = column_values(built, "t") + column_values(built, "lead")
        on = expand(built[["col", "fixed"]], start, T - start, "t")
        fixed = column_values(on, "fixed") * hours[column_values(on, "t")] / HOURS_PER_YEAR
        builder.add_cost(i, "onsite_power", on["col"], on["t"], fixed)
    ret = power["onsite_retire"].merge(b[["s", "o", "salvage", "fixed"]])
    if len(ret):
        builder.add_cost(i, "onsite_power", ret["col"], ret["t"], -column_values(ret, "salvage"))
        builder.add_cost(i, "onsite_power", ret["col"], last, column_values(ret, "salvage"))
        on = merge(retired_terms(power, T), ret[["col", "fixed"]], "col")
        fixed = column_values(on, "fixed") * hours[column_values(on, "t")] / HOURS_PER_YEAR
        builder.add_cost(i, "onsite_power", on["col"], on["t"], -fixed)


def define_bridge_retire(builder: ModelBuilder, columns: ScenarioColumns) -> None:
    """Bridge retire: sum_{p'<=p} retire[s,o,p'] - sum_{d+lead<=p} build[s,o,d] <= initial_mw."""
    power = columns.power
    if not power or power.get("onsite_retire") is None or power["onsite_retire"].empty:
        return
    pw = power["data"]
    T = columns.scenario.n_periods
    keys = power["onsite_retire"][["s", "o", "t"]].sort_values(["s", "o", "t"])
    keys = merge(keys.reset_index(drop=True), pw.onsite[["s", "o", "init"]], ["s", "o"])
    rows = builder.add_rows(
        "bridge_retire", columns.scenario.index, keys, "<=", column_values(keys, "init")
    )
    row_of = keys[["s", "o", "t"]].assign(row=rows)
    out = merge(retired_terms(power, T), row_of, ["s", "o", "t"])
    builder.add_terms(out["row"], out["col"], 1.0)
    built = merge(power["onsite_build"], pw.onsite[["s", "o", "lead"]], ["s", "o"])
    start = column_values(built, "t") + column_values(built, "lead")
    on = merge(expand(built[["s", "o", "col"]], start, T - start, "t"), row_of, ["s", "o", "t"])
    builder.add_terms(on["row"], on["col"], -1.0)


# ----------------------------------------------------------------------------- checks
def online_mw(inputs: Any, kind: str, options: pd.DataFrame) -> pd.DataFrame:
    """MW online per (site, source, period): decisions of ``kind`` energised after their lead.

    Once per plan and set of options (keyed by their site, source and lead periods).
    """
    key = (
        "online_mw",
        kind,
        tuple(
            zip(
                column_values(options, "site"),
                column_values(options, "source"),
                column_values(options, "lead_periods"),
                strict=True,
            )
        ),
    )
    return once_per_plan(inputs, key, lambda: _online_mw(inputs, kind, options))


def _online_mw(inputs: Any, kind: str, options: pd.DataFrame) -> pd.DataFrame:
    """Compute :func:`online_mw`."""
    periods = inputs.periods
    pos = {p: i for i, p in enumerate(periods)}
    dec = inputs.frames.get(kind)
    if dec is None:
        dec = pd.DataFrame({"site": [], "source": [], "period": [], "value": []})
    dec = merge(
        dec[dec["value"].abs() > 0], options[["site", "source", "lead_periods"]], ["site", "source"]
    )
    t_on = dec["period"].map(pos).to_numpy(dtype=np.int64) + column_values(dec, "lead_periods")
    if dec.empty:
        keys = options[["site", "source"]].merge(pd.DataFrame({"period": periods}), how="cross")
        keys["t"] = keys["period"].map(pos)
        return keys.assign(mw=0.0)
    return online_per_option(options, dec, t_on, list(periods))  # summed on codes


def retired_mw(inputs: Any) -> pd.DataFrame:
    """Cumulative MW retired per (site, source, period), recomputed from ``onsite_retire``.

    Once per plan.

    Returns
    -------
    DataFrame
        ``site, source, period, retired_mw``: every period of the horizon for each
        (site, source) with a retirement; empty when nothing is retired.
    """
    return once_per_plan(inputs, "retired_mw", lambda: _retired_mw(inputs))


def _retired_mw(inputs: Any) -> pd.DataFrame:
    """Compute :func:`retired_mw`."""
    periods = list(inputs.periods)
    f = inputs.frames.get("onsite_retire")
    cols = {"site": object, "source": object, "period": object, "retired_mw": float}
    if f is None or f.empty:
        return pd.DataFrame({c: pd.Series([], dtype=d) for c, d in cols.items()})
    pos = pd.Index(periods)
    f = f.assign(t=pos.get_indexer(column_values(f, "period")))
    grid = pd.DataFrame({"period": periods, "tt": np.arange(len(periods))})
    m = f[["site", "source", "t", "value"]].merge(grid, how="cross")
    m["retired_mw"] = np.where(m["tt"] >= m["t"], m["value"], 0.0)
    return m.groupby(["site", "source", "period"], as_index=False, sort=False)["retired_mw"].sum()


def check_bridge_retire(inputs: Any) -> pd.DataFrame:
    """MW retired up to each period <= initial MW + MW built and online by then."""
    ret = retired_mw(inputs)
    if ret.empty:
        return violations("bridge_retire", pd.Series([], dtype=str), [], [], "<=", 0.0)
    g = inputs.dataset.table("onsite_generation").copy()
    g["source"] = "onsite:" + g["technology"].astype(str)
    on = online_mw(inputs, "onsite_build", g).merge(g[["site", "source", "initial_mw"]])
    m = merge(ret, on, ["site", "source", "period"], how="left").fillna({"mw": 0.0})
    m = m.fillna({"initial_mw": 0.0})
    keys = m["site"] + "/" + m["source"] + "," + m["period"]
    return violations(
        "bridge_retire", keys, m["retired_mw"], m["initial_mw"] + m["mw"], "<=", inputs.tolerance
    )


FAMILIES = (
    ConstraintFamily(
        "bridge_retire",
        "MW",
        define_bridge_retire,
        check_bridge_retire,
        "bridge power {key} retired up to {period} exceeds what stands by {amount} MW",
        "MW",
        ("s", "o"),
        summary_words="bridge power {1} standing at {0}",
    ),
)

COMPONENT = Component(
    "bridge",
    columns=(
        ColumnKind(
            "onsite_retire", "s/o/t", "MW", "bridge power taken out of service from period t"
        ),
    ),
    families=FAMILIES,
)
