"""Risk sections of the Risk page: tornado, Monte Carlo, the hedged plan, near-optimal ranges.

Over :mod:`optimizer.analysis.tornado`, :mod:`optimizer.analysis.monte_carlo` and
:mod:`optimizer.analysis.hedge`; kept apart from the page so the page renders (with an
info box) when a risk module is missing. Every section stores its result in session
state with the hash of the dataset it was computed on, and shows it only while that
hash is still current, so an edit never shows a stale risk view. Errors become
messages, never tracebacks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from capacity.dataset import Dataset
from capacity.scenarios import scenario_names
from optimizer.analysis.outcomes import QUARTER_SUMS
from optimizer.output.formatting import money_axis
from ui.formats import (
    error_text,
    fmt_usd,
    level_text,
    levels_caption,
    parameter_ops,
    percentiles_view,
    quarter_sum_config,
    show_table,
    with_level_text,
)
from ui.progress_view import AppProgress
from ui.state import SolveChoice

OUTCOME_LABELS = {
    "total_cost_usd": "total cost [USD]",
    "unmet_h100e": f"unmet demand [{QUARTER_SUMS['unmet_h100e']}]",
    "trainium_share": "Trainium share of served H100e",
    "breach_mw": f"commitment breach [{QUARTER_SUMS['breach_mw']}]",
}


# ------------------------------------------------------------------- pure helpers
def monte_carlo_spec(
    parameters: Sequence[Any], names: Sequence[str], samples: int, seed: int
) -> dict[str, Any]:
    """Monte Carlo spec drawing each chosen tornado parameter uniformly in [low, high].

    Parameters
    ----------
    parameters : sequence of optimizer.analysis.tornado.TornadoParameter
        Parameter groups (templates plus low and high levels).
    names : sequence of str
        Names of the groups to draw; the others stay at the data's value.
    samples, seed : int
        Number of draws and the seed of ``numpy.random.default_rng``.

    Returns
    -------
    dict
        A mapping accepted by ``optimizer.analysis.monte_carlo.monte_carlo``.
    """
    from optimizer.analysis.monte_carlo import uniform_monte_carlo

    chosen = [p for p in parameters if p.name in set(names)]
    return uniform_monte_carlo(chosen, samples, seed)


def tornado_figure(
    df: pd.DataFrame, outcome: str = "total_cost_usd", ops: Mapping[str, str] | None = None
) -> go.Figure | None:
    """Horizontal tornado bars: change of ``outcome`` at each parameter's low and high level.

    Parameters are ordered by swing (the span of their bars, from the lowest to the
    highest change including the base's zero), the largest at the top. Levels are shown
    by meaning (``×1.03``, ``+4 quarters``, see :func:`ui.formats.level_text`; ``ops``
    maps a parameter to its override op, default scale). USD outcomes are drawn in USD
    billions, or millions when every change is below a billion
    (:func:`optimizer.output.formatting.money_axis`).
    """
    if df is None or df.empty or "outcome" not in df.columns:
        return None
    d = df[df["outcome"] == outcome].copy()
    if d.empty:
        return None
    ascending = _by_swing(d)
    money = outcome.endswith("_usd")
    op_of = dict(ops or {})
    d["level_text"] = [
        level_text(op_of.get(str(p), "scale"), float(v))
        for p, v in zip(d["parameter"], d["level"], strict=True)
    ]
    div, word, letter = money_axis(d["change"].tolist()) if money else (1.0, "", "")
    d["x"] = d["change"] / div
    label = OUTCOME_LABELS.get(outcome, outcome)
    fig = px.bar(
        d,
        y="parameter",
        x="x",
        color="side",
        orientation="h",
        barmode="overlay",
        custom_data=["level_text", "value", "status"],
        color_discrete_map={"low": "#1f77b4", "high": "#d62728"},
        category_orders={"side": ["low", "high"]},
        labels={"x": "change of " + (label.replace("[USD]", f"[USD {word}]") if word else label)},
    )
    fig.update_traces(
        hovertemplate="%{y} at %{customdata[0]}<br>change %{x:,.4g}"
        + (f" {letter} USD".replace("  ", " ") if money else "")
        + "<br>value %{customdata[1]:,.4g}<br>status %{customdata[2]}<extra></extra>"
    )
    _tornado_axes(fig, d, ascending, letter if money else None)
    fig.update_layout(
        title=f"Tornado: {label}",
        height=max(300, 80 + 28 * len(ascending)),
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend_title_text="level",
    )
    return fig


def tornado_table(df: pd.DataFrame, outcome: str, ops: Mapping[str, str]) -> pd.DataFrame:
    """Return the tornado rows of one outcome, its values named by the outcome's unit.

    Parameters
    ----------
    df : DataFrame
        :func:`optimizer.analysis.tornado.tornado` (one row per parameter, side and
        outcome; each outcome has its own unit).
    outcome : str
        The outcome shown (``total_cost_usd``, ``unmet_h100e`` ...).
    ops : mapping
        Parameter name to override op (for the level's meaning, :func:`level_text`).

    Returns
    -------
    DataFrame
        ``rank, parameter, side, level, level_text, base <outcome>, <outcome>, change
        <outcome>, swing_total_cost_usd, status``: the value columns carry the
        outcome's name, so its unit suffix gives their unit and format.
    """
    d = with_level_text(df[df["outcome"] == outcome], ops)
    d = d.rename(
        columns={
            "base_value": f"base_{outcome}",
            "value": outcome,
            "change": f"change_{outcome}",
        }
    )
    first = ["rank", "parameter", "side", "level", "level_text"]
    values = [f"base_{outcome}", outcome, f"change_{outcome}", "swing_total_cost_usd", "status"]
    return d[[c for c in first + values if c in d.columns]].reset_index(drop=True)


def _by_swing(d: pd.DataFrame) -> list[Any]:
    """Parameters of the tornado rows ``d`` by ascending swing (plotly's bottom first)."""
    # swing = the bar's span from the base: max(high, low, 0) - min(high, low, 0)
    swing = d.groupby("parameter")["change"].agg(
        lambda s: max(float(s.max()), 0.0) - min(float(s.min()), 0.0) if s.notna().any() else 0.0
    )
    # plotly draws the first category at the bottom: ascending swing puts the largest on top
    ascending: list[Any] = swing.sort_values(kind="stable").index.tolist()
    return ascending


def _tornado_axes(fig: go.Figure, d: pd.DataFrame, ascending: list[Any], money: str | None) -> None:
    """Label each parameter's bar with its low / high levels, in swing order."""
    ordered = d.sort_values("side", key=_side_key)
    ticks = {
        p: f"{p} ({' / '.join(ordered.loc[ordered['parameter'] == p, 'level_text'])})"
        for p in ascending
    }
    fig.update_yaxes(
        title_text="",
        categoryorder="array",
        categoryarray=ascending,
        tickmode="array",
        tickvals=ascending,
        ticktext=[ticks[p] for p in ascending],
        automargin=True,
    )
    if money is not None:  # the scale's letter: B, M or "" (plain dollars)
        # d3's currency format puts the sign first: -$2M (the prefix read $-2M)
        fig.update_xaxes(tickformat="$,~g", ticksuffix=money)


def _side_key(s: pd.Series) -> pd.Series:
    return s.map({"low": 0, "high": 1}).fillna(2)


def _fresh(key: str, ds_hash: str, settings: Any) -> Any | None:
    entry = st.session_state["risk_results"].get(key)
    if entry is None or entry["hash"] != ds_hash or entry["settings"] != settings:
        return None
    return entry["value"]


def _store(key: str, ds_hash: str, settings: Any, value: Any) -> None:
    st.session_state["risk_results"] = {
        **st.session_state["risk_results"],
        key: {"hash": ds_hash, "settings": settings, "value": value},
    }


# ---------------------------------------------------------------------- sections
def render_risk_sections(
    tornado: ModuleType,
    monte_carlo: ModuleType,
    hedge: ModuleType,
    ds: Dataset,
    base: Dataset,
    choice: SolveChoice,
) -> None:
    """Render tornado, Monte Carlo and hedged plan sections.

    Parameters
    ----------
    tornado, monte_carlo, hedge : module
        ``optimizer.analysis.tornado``, ``optimizer.analysis.monte_carlo`` and
        ``optimizer.analysis.hedge``.
    ds : Dataset
        The active dataset (scenario applied): tornado and Monte Carlo vary it.
    base : Dataset
        The base dataset whose named scenarios the hedged plan weighs.
    choice : SolveChoice
        The Plan page's solver, time limit and formulation: every solve here uses them,
        and a result is shown only while they are still the chosen ones.
    """
    opts = choice.options()
    st.caption(
        f"Every solve below uses the Plan page's settings: **{choice.text()}** "
        "(change them on the Plan page)."
    )
    # keyed: the chosen tab stays chosen when a run adds or removes elements above it
    tab_t, tab_mc, tab_h, tab_a, tab_r = st.tabs(
        [
            "Tornado",
            "Monte Carlo",
            "Hedged plan (VSS, EVPI)",
            "Near-optimal ranges",
            "Risk aversion (CVaR, chance)",
        ],
        key="risk_tabs",
    )
    try:
        params = list(tornado.default_tornado_parameters(ds))
    except Exception as e:  # noqa: BLE001
        st.error(f"Could not build the risk parameters: {error_text(e)}")
        return

    with tab_t:
        _tornado_tab(tornado, ds, params, opts)
    with tab_mc:
        _monte_carlo_tab(monte_carlo, ds, params, opts)
    with tab_h:
        _hedged_tab(hedge, base, opts)
    with tab_a:
        from ui.alternatives_view import alternatives_tab

        alternatives_tab(ds, opts)
    with tab_r:
        from ui.risk_aversion_view import risk_aversion_tab

        risk_aversion_tab(base, opts)


def _tornado_tab(tornado: ModuleType, ds: Dataset, params: list[Any], opts: Any) -> None:
    """Tornado tab: pick groups and outcome, run, show the chart and table."""
    all_p = [p.name for p in params]
    picked = st.multiselect(
        "Parameter groups", all_p, default=all_p, key="tornado_params", persist_state="session"
    )
    tparams = [p for p in params if p.name in set(picked)]
    st.caption(
        f"One-at-a-time sensitivity on **{ds.scenario}**: each parameter group at its "
        f"low and high level, {2 * len(tparams) + 1} solves. " + levels_caption(tparams)
    )
    outcome = st.selectbox(
        "Outcome",
        list(OUTCOME_LABELS),
        format_func=OUTCOME_LABELS.get,
        key="tornado_outcome",
        persist_state="session",
    )
    tsettings = (tuple(picked), opts)
    clicked = st.button("Run tornado", key="tornado_run", disabled=not tparams)
    slot = st.empty()  # the bar's place, kept on every run: the section is drawn once
    if clicked:
        try:
            with AppProgress("Tornado", 2 * len(tparams) + 1, slot) as bar:
                t = tornado.tornado(ds, opts, tparams, progress=bar)
            _store("tornado", ds.hash, tsettings, t)
        except Exception as e:  # noqa: BLE001
            st.error(f"The tornado failed: {error_text(e)}")
    t = _fresh("tornado", ds.hash, tsettings)
    if t is None:
        st.info("Press **Run tornado** to compute the sensitivities of the active data.")
    else:
        ops = parameter_ops(params)
        fig = tornado_figure(t, outcome, ops)
        if fig is not None:
            st.plotly_chart(fig, key="tornado_chart", width="stretch")
        with st.expander("Tornado table"):
            st.caption(f"Rows of the outcome chosen above: {OUTCOME_LABELS[outcome]}.")
            show_table(tornado_table(t, outcome, ops), key="tornado_table")


def _monte_carlo_tab(monte_carlo: ModuleType, ds: Dataset, params: list[Any], opts: Any) -> None:
    """Monte Carlo tab: pick parameters, samples and seed, run, show the results."""
    names = [p.name for p in params]
    default = [n for n in names if not n.startswith("demand_")][:6]
    c1, c2, c3 = st.columns([3, 1, 1])
    chosen = c1.multiselect(
        "Uncertain parameters (uniform between the tornado's low and high)",
        names,
        default=default,
        key="mc_params",
        persist_state="session",
    )
    samples = c2.number_input(
        "Samples",
        min_value=2,
        max_value=500,
        step=10,
        value=20,
        key="mc_samples",
        persist_state="session",
    )
    seed = c3.number_input(
        "Seed", min_value=0, step=1, value=0, key="mc_seed", persist_state="session"
    )
    settings = (tuple(chosen), int(samples), int(seed), opts)
    clicked = st.button("Run Monte Carlo", key="mc_run", disabled=not chosen)
    slot = st.empty()  # the bar's place, kept on every run
    if clicked:
        spec = monte_carlo_spec(params, chosen, int(samples), int(seed))
        try:
            with AppProgress("Monte Carlo", int(samples), slot, unit="sample") as bar:
                mc = monte_carlo.monte_carlo(ds, spec, opts, progress=bar)
            _store("mc", ds.hash, settings, mc)
        except Exception as e:  # noqa: BLE001
            st.error(f"The Monte Carlo failed: {error_text(e)}")
    mc = _fresh("mc", ds.hash, settings)
    if mc is None:
        st.info("Choose parameters and press **Run Monte Carlo**.")
    else:
        _monte_carlo_results(mc)


def _monte_carlo_results(mc: Any) -> None:
    """Percentiles, cost histogram, binding shares and samples of a Monte Carlo."""
    st.markdown("**Percentiles of the outcomes**")
    st.dataframe(percentiles_view(mc.percentiles), hide_index=True, width="stretch")
    s = mc.samples
    if "total_cost_usd" in s and s["total_cost_usd"].notna().any():
        st.plotly_chart(cost_histogram(s), key="mc_hist", width="stretch")
    st.markdown("**How often each constraint family binds**")
    note = str(getattr(mc, "duals_note", "") or "")
    if note:
        st.warning(f"Priced shares unknown: {note}.", icon=":material/info:")
    show_table(mc.binding, key="mc_binding")
    with st.expander("Samples"):
        show_table(s, quarter_sum_config(s), key="mc_samples_table")


def cost_histogram(samples: pd.DataFrame) -> Any:
    """Return the histogram of the Monte Carlo samples' ``total_cost_usd`` (plotly figure).

    The count axis is in whole samples: with a few samples plotly stepped it by 0.5.
    """
    div, word, letter = money_axis(samples["total_cost_usd"].tolist())
    fig = px.histogram(
        samples.assign(total_cost_scaled=samples["total_cost_usd"] / div),
        x="total_cost_scaled",
        nbins=min(30, max(5, len(samples) // 2)),
        labels={"total_cost_scaled": f"total cost [USD {word}]".replace(" ]", "]")},
        title="Distribution of the plan cost",
    )
    fig.update_xaxes(tickformat="$,~g", ticksuffix=letter)  # a sign before the $
    fig.update_yaxes(
        title_text="samples", rangemode="tozero", dtick=1 if len(samples) <= 12 else None
    )
    fig.update_layout(height=320, margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig


def _hedge_method() -> tuple[str, str]:
    """Show the EV problem and first-stage radios; return their choices."""
    ev = st.radio(
        "Expected-value problem",
        ["neutral", "mean"],  # neutral first: the mean is undefined on the bundled data
        horizontal=True,
        key="hedge_ev",
        persist_state="session",
        help="neutral: the plan of the scenario named neutral (the heaviest scenario "
        "when none is). mean: every decimal input averaged over the scenarios, defined "
        "only when the scenarios have the same rows (the bundled ones shift quarters, so "
        "it falls back to neutral there).",
    )
    first = st.radio(
        "First stage (decided before the scenario is known)",
        ["capacity", "full"],  # as capacity hedge: its EEV is finite on the bundled data
        horizontal=True,
        key="hedge_first_stage",
        persist_state="session",
        help="capacity: MW built, liquid-cooled share and retrofits are shared; chips are "
        "bought and installed per scenario (the default of capacity hedge). full: chip "
        "production and installs are shared too, so one fleet serves every scenario; on "
        "the bundled data the neutral plan's fleet cannot run in the negative scenario, "
        "so EEV and VSS are infinite there.",
    )
    return str(ev), str(first)


def _hedged_tab(hedge: ModuleType, base: Dataset, opts: Any) -> None:
    """Hedged-plan tab: pick scenarios, weights and EV problem, solve, show the results."""
    all_names = [n for n in scenario_names(base) if n != "base"]
    pref = [n for n in ("optimistic", "neutral", "negative") if n in all_names]
    chosen_s = st.multiselect(
        "Scenarios",
        all_names,
        default=pref if len(pref) >= 2 else all_names,
        key="hedge_scenarios",
        persist_state="session",
    )
    cols = st.columns(max(1, len(chosen_s)))
    weights = [
        col.number_input(
            f"weight {n}",
            min_value=0.0,
            step=0.05,
            value=1.0,
            key=f"hedge_w_{n}",
            persist_state="session",
        )
        for col, n in zip(cols, chosen_s, strict=False)
    ]
    ev, first = _hedge_method()
    settings_h = (tuple(chosen_s), tuple(float(w) for w in weights), ev, first, opts)
    # two scenarios of positive weight: one at weight 0 made a hedge over one scenario
    ok = sum(float(w) > 0 for w in weights) >= 2
    clicked = st.button("Solve the hedged plan", key="hedge_run", disabled=not ok)
    slot = st.empty()  # the bar's place, kept on every run
    if clicked:
        total = hedge.solve_count(len(chosen_s), ev)
        try:
            with AppProgress("Hedged plan", total, slot, unit="solve") as bar:
                h = hedge.hedged_plan(
                    base,
                    list(chosen_s),
                    list(weights),
                    opts,
                    ev=ev,
                    first_stage=first,
                    progress=bar,
                )
            _store("hedge", base.hash, settings_h, h)
        except Exception as e:  # noqa: BLE001
            st.error(f"The hedged plan failed: {error_text(e)}")
    h = _fresh("hedge", base.hash, settings_h)
    if h is None:
        st.info(  # shown (faded) while a run goes on too: true for the picks made
            "Press **Solve the hedged plan** to solve it over the scenarios picked."
            if ok
            else "Pick at least two scenarios with a positive weight and press **Solve the "
            "hedged plan**."
        )
    else:
        _hedged_results(h)


def infinite_eev_text(h: Any) -> str:
    """Say why EEV and VSS are infinite ("" when they are finite).

    Parameters
    ----------
    h : HedgedPlan
        :func:`optimizer.analysis.hedge.hedged_plan`; its ``per_scenario`` table holds the
        EV plan's cost and status in each scenario (``inf`` where it cannot be operated).

    Returns
    -------
    str
        E.g. ``"EEV and VSS are infinite: the neutral plan's first stage (what it decides
        before the scenario is known), fixed, cannot be operated in scenario negative
        (infeasible). ..."``
    """
    eev = h.eev_usd
    if eev is None or np.isfinite(eev):
        return ""
    ps = h.per_scenario
    bad = ps[~np.isfinite(ps["ev_fixed_cost_usd"].astype(float))]
    where = ", ".join(f"{r.scenario} ({r.ev_fixed_status})" for r in bad.itertuples())
    plural = "s" if len(bad) != 1 else ""
    return (
        f"EEV and VSS are infinite: the {h.ev_problem} plan's first stage (what it decides "
        f"before the scenario is known), fixed, cannot be operated in scenario{plural} "
        f"{where}. The hedged plan (RP), WS and EVPI are finite; the notes below give each "
        "scenario's reason. With the full first stage, try the capacity one."
    )


def _hedged_results(h: Any) -> None:
    """Metrics (RP, WS, EEV, VSS, EVPI), notes, per-scenario table and build-out chart."""
    m = st.columns(5)
    m[0].metric("Hedged expected cost (RP)", fmt_usd(h.expected_cost_usd))
    m[1].metric("Wait-and-see (WS)", fmt_usd(h.wait_and_see_usd))
    why = infinite_eev_text(h)
    m[2].metric("EV plan's expected cost (EEV)", fmt_usd(h.eev_usd) if not why else "infinite")
    m[3].metric("VSS = EEV − RP", fmt_usd(h.vss_usd) if not why else "infinite")
    m[4].metric("EVPI = RP − WS", fmt_usd(h.evpi_usd))
    st.caption(f"Status {h.status}; EV problem: {h.ev_problem}.")
    if why:
        st.warning(why)
    for note in h.notes:
        st.warning(note)
    show_table(h.per_scenario, quarter_sum_config(h.per_scenario), key="hedge_per_scenario")
    b = h.first_stage.get("build_out") if h.first_stage else None
    if b is not None and len(b):
        fig = px.bar(
            b,
            x="period",
            y="build_mw",
            color="site",
            title="Hedged plan: new IT capacity decided [MW] (online after its lead time)",
            labels={"build_mw": "MW"},
        )
        fig.update_layout(height=320, margin={"l": 10, "r": 10, "t": 40, "b": 10})
        st.plotly_chart(fig, key="hedge_build", width="stretch")
