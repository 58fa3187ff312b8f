"""Reports page: download the current run's Parquet report; list this session's runs."""

from __future__ import annotations

import tempfile

import streamlit as st

from ui.compose import without_equal_objective
from ui.dataio import directory_zip_bytes
from ui.formats import error_text, fmt_share, fmt_usd, money_config, show_table
from ui.state import active_dataset, current_plan, runs_frame, show_flash

ss = st.session_state
st.title("Reports")
show_flash()
ds = active_dataset()
plan = current_plan(ds) or ss.get("plan")

st.subheader("Current run")
if plan is None:
    st.info("No plan yet: solve one on the **Plan** page.")
else:
    if current_plan(ds) is None:
        st.warning("This run was solved on other data or another scenario than the active one.")
    st.markdown(
        f"Run `{plan.run_id}` · scenario **{plan.scenario}** · status "
        f"**{plan.metrics['status']}** · "
        + (
            f"cached result, solved in {plan.seconds:.1f} s at {plan.solved_at}"
            if plan.cached
            else f"solved at {plan.solved_at} in {plan.seconds:.1f} s"
        )
    )
    zips: dict[str, bytes | str] = ss["report_zips"]
    if plan.run_id not in zips:
        try:
            from optimizer.output.report import write_report
            from optimizer.output.run_folder import claim_run_dir

            with tempfile.TemporaryDirectory(prefix="capacity_report_") as tmp:
                run_id = claim_run_dir(tmp, plan.run_id).name  # the one run-folder claim
                run_dir = write_report(
                    plan.result, tmp, scenario=plan.scenario, run_id=run_id, inputs=plan.inputs
                )
                zips[plan.run_id] = directory_zip_bytes(run_dir)
        except Exception as e:  # noqa: BLE001 - message, never a traceback
            zips[plan.run_id] = error_text(e)
    data = zips[plan.run_id]
    if isinstance(data, str):
        st.error(f"The report could not be written: {data}")
    else:
        st.download_button(
            "Download the Parquet report (zip)",
            data=data,
            file_name=f"capacity_report_{plan.run_id}.zip",
            mime="application/zip",
            key="report_download",
            type="primary",
        )
        st.caption(
            f"{len(data) / 1024:.0f} kB: `<run_id>/scenario=<name>/<table>.parquet` plus "
            "`manifest.json`; reads with pandas, pyarrow.dataset and DuckDB. "
            "`scenario=<name>/inputs.yaml` lists your cell edits and the scenario's "
            "overrides: `capacity solve DATA --scenarios-file inputs.yaml --scenario NAME` "
            "solves it again. Rows added or deleted and numbers cleared cannot be written as "
            "overrides: its header lists them, and the re-solve warns that its data differ."
        )
        m = plan.metrics
        c1, c2 = st.columns(2)
        c1.metric("Discounted cost", fmt_usd(m["cost_usd"]))
        c2.metric("Demand served", fmt_share(m["served_share"]))

st.subheader("Runs in this session")
runs = runs_frame()
if runs.empty:
    st.caption("None yet.")
else:
    show_table(
        without_equal_objective(runs.iloc[::-1]),
        {
            **money_config(runs, "objective_usd", "objective [USD]"),
            **money_config(runs, "cost_usd", "discounted cost [USD]"),
            "solve_s": st.column_config.NumberColumn(
                "solve time [s]", format="%.2f", help="Of the solve that computed the result."
            ),
            "cached": st.column_config.CheckboxColumn(
                "cached", help="The result came from the cache of an earlier identical solve."
            ),
        },
        key="report_runs",
    )
