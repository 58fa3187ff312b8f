"""Risk page: scenarios side by side; tornado, Monte Carlo and hedged plan.

The views come from optimizer.analysis.tornado, .monte_carlo and .hedge."""

from __future__ import annotations

import importlib

import pandas as pd
import streamlit as st

from capacity.scenarios import UnknownScenarioError, apply_scenario, scenario_names
from capacity.validation import DataValidationError
from ui import charts
from ui.compose import plan_metrics, scenario_fallback_text, without_equal_objective
from ui.formats import money_config, quarter_sum_config, show_table
from ui.progress_view import AppProgress
from ui.state import (
    active_dataset,
    optimizer_status,
    plan_solve_choice,
    scenario_label,
    show_flash,
    solve_dataset,
)

ss = st.session_state
st.title("Risk")
show_flash()
base = ss["base_ds"]
if base is None:
    st.error("No valid dataset loaded. Open **Data** to upload one.")
    st.stop()
ok, why = optimizer_status()
choice = plan_solve_choice()  # the Plan page's solver, time limit, formulation, objective
active = active_dataset() or base  # the tools below run on it: say when it is not the choice
fallback = scenario_fallback_text(
    scenario_label(ss["scenario_name"], ss["overrides"]), ss.get("scenario_error")
)
if fallback:
    st.warning(fallback)

# ------------------------------------------------------------- scenario comparison
st.subheader("Scenario comparison")
names = scenario_names(base)
preferred = [n for n in ("optimistic", "neutral", "negative") if n in names]
chosen = st.multiselect(
    "Scenarios",
    names,
    default=preferred or names,
    key="risk_scenarios",
    persist_state="session",
)
compare_clicked = st.button(
    "Solve and compare", key="risk_compare_btn", disabled=not (ok and chosen)
)
compare_slot = st.empty()  # the bar's place on every run: what follows keeps its position
if compare_clicked:
    rows = []
    bar = AppProgress("Scenario comparison", len(chosen), compare_slot, unit="scenario")
    bar.__enter__()
    for n in chosen:
        bar.now(n)
        try:
            sds = apply_scenario(base, n)
        except (DataValidationError, UnknownScenarioError) as e:
            rows.append({"scenario": n, "status": "invalid data", "message": str(e)[:300]})
            bar.advance(False)
            continue
        res = solve_dataset(
            sds,
            solver=choice.solver,
            time_limit_s=choice.time_limit_s,
            formulation=choice.formulation,
            objective=choice.objective,
        )
        rows.append(
            {
                "scenario": n,
                **plan_metrics(res, sds),
                "message": str(getattr(res, "message", "") or ""),
            }
        )
        bar.advance(getattr(res, "objective_usd", None) is not None)
    ss["risk_compare"] = {"hash": base.hash, "frame": pd.DataFrame(rows), "choice": choice}
if not ok:
    st.info(f"The optimizer is not installed yet, so scenarios cannot be solved ({why}).")

cmp = ss.get("risk_compare")
if cmp is not None:
    if cmp["hash"] != base.hash:
        st.warning("The data changed since this comparison; press **Solve and compare** again.")
    elif cmp.get("choice") != choice:
        st.warning(
            "The Plan page's solver settings changed since this comparison; press "
            "**Solve and compare** again."
        )
    else:
        st.caption(f"Solved with the Plan page's settings: **{choice.text()}**.")
        df = without_equal_objective(cmp["frame"])
        show_table(
            df,
            {
                **money_config(df, "objective_usd", "objective [USD]"),
                **money_config(df, "cost_usd", "discounted cost [USD]"),
                **quarter_sum_config(df),  # unmet demand summed over quarters
            },
            key="risk_compare_table",
        )
        fig = charts.scenario_costs(
            df.dropna(subset=["cost_usd"]) if "cost_usd" in df else df.iloc[0:0]
        )
        if fig is not None:
            st.plotly_chart(fig, key="risk_cost_chart", width="stretch")

# ------------------------------------- optimizer.analysis.tornado, .monte_carlo and .hedge
st.subheader("Tornado, Monte Carlo and hedged plan")
try:
    risk = [
        importlib.import_module(f"optimizer.analysis.{name}")
        for name in ("tornado", "monte_carlo", "hedge")
    ]
except Exception:  # noqa: BLE001 - a missing or broken module is an info box, not a traceback
    risk = None
if risk is None:
    st.info(
        "The risk modules (`optimizer.analysis.tornado`, `.monte_carlo`, `.hedge`) are not "
        "installed yet. Tornado sensitivity, Monte Carlo percentiles and the hedged "
        "two-stage plan (VSS, EVPI) will appear here when they are."
    )
else:
    if not ok:
        st.info(f"The optimizer is not available ({why}).")
    else:
        from ui.risk_view import render_risk_sections

        render_risk_sections(*risk, active, base, choice)

# ------------------------------- optimizer.analysis.replan_run and .tree (ui/replan_view)
st.subheader("Rolling replanning and scenario tree")
if not ok:
    st.info(f"The optimizer is not available ({why}).")
else:
    from ui.replan_view import render_replan_sections

    render_replan_sections(active, choice)
