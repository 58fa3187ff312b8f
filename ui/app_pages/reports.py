"""Reports page: download the current run's Parquet report; list this session's runs."""

from __future__ import annotations

import tempfile

import streamlit as st

from ui.dataio import directory_zip_bytes
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
        f"**{plan.metrics['status']}** · solved at {plan.solved_at}"
    )
    zips: dict[str, bytes | str] = ss["report_zips"]
    if plan.run_id not in zips:
        try:
            from optimizer.report import write_report

            with tempfile.TemporaryDirectory(prefix="capacity_report_") as tmp:
                run_dir = write_report(plan.result, tmp, scenario=plan.scenario, run_id=plan.run_id)
                zips[plan.run_id] = directory_zip_bytes(run_dir)
        except Exception as e:  # noqa: BLE001 - message, never a traceback
            zips[plan.run_id] = f"{type(e).__name__}: {e}"
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
            "`manifest.json`; reads with pandas, pyarrow.dataset and DuckDB."
        )
        m = plan.metrics
        c1, c2 = st.columns(2)
        c1.metric("Objective [USD]", f"{m['objective_usd']:,.0f}")
        c2.metric("Demand served", f"{m['served_share']:.1%}")

st.subheader("Runs in this session")
runs = runs_frame()
if runs.empty:
    st.caption("None yet.")
else:
    st.dataframe(
        runs.iloc[::-1],
        hide_index=True,
        width="stretch",
        column_config={
            "objective_usd": st.column_config.NumberColumn("objective [USD]", format="%.4e"),
            "served_share": st.column_config.NumberColumn("served share", format="percent"),
        },
    )
