"""Plan page: solve the active dataset, see the summary and the charts."""

from __future__ import annotations

import math
import time

import streamlit as st

from capacity.csv_safe import to_safe_csv
from optimizer.output.binding_limits import missing_duals, no_duals_text
from optimizer.plan.objective_reads import unread_override_findings
from optimizer.plan.solvers import solver_label
from ui import charts
from ui.compose import (
    demand_summary,
    infeasibility_view,
    scenario_fallback_text,
    settings_changed_text,
)
from ui.findings_view import edits_left_out_text
from ui.formats import (
    MISSING,
    calibration_view,
    fmt_share,
    fmt_usd,
    show_table,
    status_note,
    status_words,
    usd_billions,
)
from ui.progress_view import click_to_result_text
from ui.state import (
    active_dataset,
    current_plan,
    flash,
    optimizer_status,
    scenario_label,
    show_flash,
    solve_and_record,
    solver_choices,
)

ss = st.session_state
st.title("Plan")
show_flash()
ds = active_dataset()
if ds is None:
    st.error("No valid dataset loaded. Open **Data** to upload one.")
    st.stop()

ok, why = optimizer_status()
st.markdown(f"**{ds.name}** · scenario **{ds.scenario}** · hash `{ds.hash[:12]}`")
fallback = scenario_fallback_text(
    scenario_label(ss["scenario_name"], ss["overrides"]), ss.get("scenario_error")
)
if fallback:
    st.warning(fallback)
# two rows, so each box is wide enough for its label and value at a laptop's width (the
# solver's label gives its name, version and how it is called)
c2, c3, c6 = st.columns([3, 2, 2], vertical_alignment="bottom")
c7, c5, c4 = st.columns([2, 2, 1], vertical_alignment="bottom")
solver_labels = dict(solver_choices())
solver = c2.selectbox(
    "Solver",
    list(solver_labels),
    format_func=solver_labels.__getitem__,
    help="HiGHS · bulk: HiGHS called directly (`--solver highs`, the fastest); "
    "HiGHS · PuLP: the same solver through PuLP (`--solver HiGHS`); CBC, GLPK, SCIP: "
    "through PuLP. The label gives the version and says when a solver returns no "
    "shadow prices.",
    key="solve_solver",
    persist_state="session",
)
limit = c3.number_input(
    "Time limit [s] (0 = none)",
    min_value=0,
    step=10,
    value=0,
    key="solve_time_limit",
    persist_state="session",
)
clusters = c5.checkbox(
    "Exact training clusters (MIP)",
    key="solve_clusters",
    persist_state="session",
    help="Enforce training_clusters.csv exactly (binary 'site hosts the customer's "
    "training' per quarter; slower, set a time limit: the MIP gap is reported). Off: "
    "the LP plan is solved and fragmented training is reported below.",
)
formulation = c6.selectbox(
    "Formulation",
    ["compact", "reference"],
    key="solve_formulation",
    persist_state="session",
    help="compact (default): busy chips per site and service per region or region pool, "
    "the smaller exact LP. reference: one column per chip, site, customer and quarter. "
    "Both reach the same optimal cost; where the optimum is not unique they may report "
    "different, equally optimal plans. Exact clusters always use the reference.",
)
objective = c7.selectbox(
    "Objective",
    ["cost", "margin"],
    key="solve_objective",
    persist_state="session",
    help="cost (default): minimum discounted cost; unserved demand pays each customer's "
    "unmet penalty. margin: maximum discounted margin = revenue of served H100e at the "
    "customers' prices minus every cost and breach penalty; unserved demand earns nothing.",
)
clicked = c4.button("Solve", type="primary", key="solve", disabled=not ok)
left_out = edits_left_out_text(ss["draft_findings"], "the plan is solved on")
if left_out:
    st.warning(left_out)
if not ok:
    st.info(f"The optimizer is not installed yet, so plans cannot be solved ({why}).")

if clicked:
    ss["plan_click"] = time.perf_counter()  # the click: the metrics below say how long since
    with st.status(f"Solving {ds.scenario} with {solver}…", expanded=True) as status:
        st.write("Building and solving the linear program (cached on the data's hash)…")
        run = solve_and_record(
            ds,
            solver=solver,
            time_limit_s=float(limit) or None,
            clusters=bool(clusters),
            formulation=str(formulation),
            objective=str(objective),
        )
        state = (
            "complete" if run.metrics["status"] in ("optimal", "time_limit_feasible") else "error"
        )
        status.update(
            label=f"{run.metrics['status']} {run.timing_text()}", state=state, expanded=False
        )
    flash(
        "success" if state == "complete" else "error",
        f"Solved {run.scenario}: {run.metrics['status']} {run.timing_text()}.",
    )
    st.rerun()  # redraw the sidebar and the page from the stored plan

plan = current_plan(ds)
if plan is None:
    if ss["plan"] is not None:
        st.warning(
            "The data or the scenario changed since the last plan "
            f"({ss['plan'].scenario}, solved at {ss['plan'].solved_at}); press **Solve** "
            "to plan the current data."
        )
    else:
        st.info("Press **Solve** to plan the current data and scenario.")
    st.stop()

res = plan.result
m = plan.metrics
now = {
    "solver": solver,
    "time_limit_s": float(limit) or None,
    "clusters": bool(clusters),
    "formulation": str(formulation),
    "objective": str(objective),
}
changed = settings_changed_text(plan.settings, now)
if changed:
    st.warning(changed)
for f in unread_override_findings(getattr(plan.inputs, "overrides", ()), res.objective):
    st.warning(f"{f.column}: {f.message}.")  # an edit or override the objective never reads
margin = getattr(res, "margin_usd", None)
if margin is not None:  # the margin objective: margin, revenue and cost side by side
    g1, g2, g3 = st.columns(3)
    g1.metric("Discounted margin", fmt_usd(margin, 3))
    g2.metric("Discounted revenue", fmt_usd(getattr(res, "revenue_usd", None), 3))
    g3.metric("Discounted cost", fmt_usd(getattr(res, "cost_usd", None), 3))
k1, k2, k3, k4 = st.columns(4)
k1.metric(
    "Status",
    status_words(m["status"]),
    status_note(m["status"]),
    delta_color="off",
    delta_arrow="off",
    help=f"status code: {m['status']}",
)
obj = m["objective_usd"]
has_obj = obj is not None and math.isfinite(obj)
k2.metric(
    "Objective: cost - revenue" if margin is not None else "Discounted cost",
    fmt_usd(obj, 3) if has_obj else "n/a",
)
share = m["served_share"]
k3.metric("Demand served", fmt_share(share))
trn = m["trainium_share"]
k4.metric("Trainium share of served H100e", fmt_share(trn))
solved = (
    f"cached result, solved at {plan.solved_at} in {plan.seconds:.2f} s"
    if plan.cached
    else f"solved at {plan.solved_at} in {plan.seconds:.2f} s"
)
obj_text = f"{obj:,.2f} USD (discounted)" if has_obj else f"n/a (status {m['status']})"
st.caption(
    f"Objective {obj_text} · solver {solver_label(plan.solver)} · {solved} · "
    f"{click_to_result_text(plan, ss)} · run `{plan.run_id}`"
)
msg = str(getattr(res, "message", "") or "")
if m["status"] not in ("optimal",):
    (st.warning if m["status"] == "time_limit_feasible" else st.error)(
        f"Status {m['status']}. {msg}"
    )
    inf = infeasibility_view(getattr(res, "infeasibility", None))
    if len(inf):
        st.markdown("**What had to give** (the limits an elastic re-solve had to relax):")
        st.dataframe(
            inf,
            hide_index=True,
            width="stretch",
            column_config={"amount": st.column_config.TextColumn("amount (with unit)")},
        )

tables = getattr(res, "tables", None) or {}
if not tables:
    st.stop()

n_q = len(ds.periods)
served = demand_summary(res, n_q)
per_q = "H100e per quarter"
with st.expander("Demand served per customer and workload", expanded=True):
    st.caption(
        f"Mean and peak per quarter over the {n_q} quarters of the horizon, in {per_q} (the "
        "CSV holds every quarter); the served share is of the H100e·quarters summed over the "
        "horizon."
    )
    # short headers (the unit per quarter is in the caption and each header's help), so the
    # seven columns fit a laptop's width without scrolling sideways (1400 px: checked in a
    # browser, the headers "[H100e per quarter]" needed 1,144 px of 904)
    st.dataframe(
        served,
        hide_index=True,
        width="stretch",
        column_config={
            "mean_demand_h100e": st.column_config.NumberColumn(
                "mean demand [H100e]", format="localized", help=f"Mean demand, {per_q}."
            ),
            "peak_demand_h100e": st.column_config.NumberColumn(
                "peak demand [H100e]", format="localized", help=f"Largest quarter, {per_q}."
            ),
            "mean_served_h100e": st.column_config.NumberColumn(
                "mean served [H100e]", format="localized", help=f"Mean served, {per_q}."
            ),
            "mean_unmet_h100e": st.column_config.NumberColumn(
                "mean unmet [H100e]", format="localized", help=f"Mean unmet, {per_q}."
            ),
            "served_share": st.column_config.ProgressColumn(
                "served share", min_value=0.0, max_value=1.0, format="percent", width="small"
            ),
        },
    )
    st.download_button(
        "Download demand table (CSV)",
        data=(to_safe_csv(tables["demand"]) or "") if "demand" in tables else "",
        file_name=f"demand_{plan.run_id}.csv",
        mime="text/csv",
        key="plan_demand_csv",
    )

tc = tables.get("training_clusters")
if tc is not None and len(tc):
    enforced = bool(getattr(res, "clusters", False))
    gap = getattr(res, "mip_gap", None)
    frag = tc[~tc["meets_minimum"].astype(bool)]
    if enforced:
        gap_text = "" if gap is None else f" (MIP gap {gap:.2%})"
        st.caption(f"Training clusters: exact rule{gap_text}; no site below its minimum.")
    elif len(frag):
        st.warning(
            f"LP mode: {len(frag)} training placements (customer, site, quarter) sit below "
            "the customer's minimum cluster size. Tick **Exact training clusters** and "
            "solve again to enforce the rule."
        )
    with st.expander("Training clusters per customer, site and quarter"):
        show_table(tc, key="plan_training_clusters")

contracts = tables.get("contracts")
if contracts is not None and len(contracts):
    with st.expander("Contract terms per customer, workload and quarter"):
        if margin is None:
            st.caption(
                "Cost objective: the terms are reported against this plan but not priced "
                "in it; choose the margin objective to plan for take-or-pay floors, "
                "reservations and service tiers."
            )
        else:
            billed = float(contracts["billed_usd"].sum())
            credits = float(contracts["credits_usd"].sum())
            st.caption(
                f"Billed under contract {fmt_usd(billed, 3)}; refunds and SLA credits "
                f"{fmt_usd(credits, 3)} (discounted)."
            )
        show_table(contracts, key="plan_contracts")

moves = tables.get("migration")
if moves is not None and len(moves):
    with st.expander("Migration to a new chip family per customer and quarter"):
        paid = float(moves["migration_cost_usd"].sum())
        st.caption(
            f"Porting cost {fmt_usd(paid, 3)} (discounted): the customer's peak demand x "
            "the largest share the family holds for it, paid as the share grows; "
            "derate_factor is the performance the customer gets on the family that "
            "quarter (1 once recovered)."
        )
        show_table(moves, key="plan_migration")

periods = list(ds.periods)
no_duals = missing_duals(res)
for row in charts.PLAN_CHARTS:
    cols = st.columns(len(row))
    for col, (k, make) in zip(cols, row, strict=True):
        fig = None if k == "shadow" and no_duals else make(tables, periods)
        with col:
            if k == "shadow" and no_duals:
                st.warning(
                    f"Binding limits unknown: {no_duals_text(plan.solver, no_duals)}.",
                    icon=":material/info:",
                )
            elif fig is None:
                st.info(f"No data for the {k} chart in this plan.")
            else:
                st.plotly_chart(fig, key=f"chart_{k}", width="stretch")

power_sites = charts.power_sites(tables)
if power_sites:
    site = st.selectbox(
        "Site for the power-source chart",
        power_sites,
        key="plan_power_site",
        persist_state="session",
    )
    fig = charts.power_sources(tables, periods, site)
    if fig is not None:
        st.plotly_chart(fig, key="chart_power_sources", width="stretch")

speed = tables.get("speed_to_power")
if speed is not None and len(speed):
    with st.expander("Speed to power: grid delays, bridge power, flexible interconnection"):
        st.caption(
            "Per campus: the quarters its grid interconnect binds, bridge power placed (or "
            "that it has no bridge option), MW taken early under a flexible offer and the "
            "energy curtailed for it; below, the equipment order books (turbine, engine "
            "and transformer slots) with their use and shadow price."
        )
        show_table(speed, key="plan_speed_to_power")
        for name in ("bridge_power", "flexible_interconnection", "equipment_orders"):
            t = tables.get(name)
            if t is not None and len(t):
                st.markdown(f"**{name.replace('_', ' ')}**")
                show_table(t, key=f"plan_{name}")

costs = tables.get("costs")
if costs is not None and len(costs) and "cash_usd" in costs:
    with st.expander("Money: discounted cost (the objective) and cash (when spent)", expanded=True):
        st.caption(
            "Discounted cost is what the plan minimises: capex as straight-line rent inside "
            "the horizon, discounted. Cash is undiscounted money out in the quarter it is "
            "spent: chips at full price when installed, buildings when decided, retrofits "
            "when done, energy as billed; penalties are not cash."
        )
        money = costs.groupby(["term", "cash_kind"], as_index=False, sort=False)[
            ["cost_usd", "cash_usd"]
        ].sum()
        view, cfg = usd_billions(  # $16.19B, not 16,186,706,293 (as the Risk page reads)
            money.rename(columns={"cost_usd": "discounted_cost_usd", "cash_usd": "cash_usd"})
        )
        cfg = {
            k: {**v, "label": v["label"].replace("cash [", "cash, undiscounted [")}
            for k, v in cfg.items()
        }
        st.dataframe(view, hide_index=True, width="stretch", key="plan_money", column_config=cfg)
        cash = costs[costs["cash_kind"] != "none"]  # penalties are not cash
        if margin is None:  # revenue is cash only in the margin objective
            cash = cash[cash["cash_kind"] != "revenue"]
        per_year = cash.assign(year=cash["period"].astype(str).str[:4])
        per_year = per_year.pivot_table(
            index="year", columns="cash_kind", values="cash_usd", aggfunc="sum"
        ).reset_index()
        kinds = [c for c in per_year.columns if c != "year"]
        st.markdown("**Cash per year** (USD, undiscounted)")
        view, cfg = usd_billions(per_year.rename(columns={c: f"{c}_usd" for c in kinds}))
        st.dataframe(
            view, hide_index=True, width="stretch", key="plan_cash_year", column_config=cfg
        )

calibration = tables.get("calibration")
if calibration is not None and len(calibration):
    with st.expander("Calibration against the public record", expanded=False):
        scored = calibration[calibration["matchable"].astype(bool)]
        st.caption(
            f"{int(scored['inside_band'].sum())} of {len(scored)} scored rows inside their "
            "band; input checks (rows that restate an input) and rows the model cannot "
            "match yet are listed with their reason; 'tests' says what each row tests "
            "(formulas in optimizer/plan/calibration.py)."
        )
        cal_view, cal_cfg = calibration_view(calibration)
        st.dataframe(
            cal_view,
            hide_index=True,
            width="stretch",
            key="plan_calibration",
            column_config=cal_cfg,
            placeholder=MISSING,
        )
