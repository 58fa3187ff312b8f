"""Risk aversion on the Risk page: the CVaR frontier and a chance-constrained floor.

Over the named scenarios of the active data (equal weights), in the extensive form:
:func:`optimizer.analysis.hedge_risk.extensive_frontier` (expected cost against CVaR per
risk weight, with its chart) and :func:`optimizer.analysis.hedge_chance.chance_plan`
(a customer's commitment or demand floors met with a required probability, the achieved
probability shown in sample). Results are kept in session state with the dataset hash
and the settings (as the other risk sections); errors are messages, not tracebacks.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from capacity.dataset import Dataset
from optimizer.output.formatting import fmt_usd
from ui.formats import error_text, fmt_share, show_table

__all__ = ["risk_aversion_tab"]


def risk_aversion_tab(base: Dataset, opts: Any) -> None:
    """CVaR frontier and chance-row sections over the named scenarios of ``base``."""
    from capacity.scenarios import apply_scenario, scenario_names

    names = [n for n in scenario_names(base) if n != "base"]
    chosen = st.multiselect(
        "Scenarios (equal weights)",
        names,
        default=names,
        key="ra_scenarios",
        persist_state="session",
    )
    if len(chosen) < 2:
        st.info("Pick at least two scenarios.")
        return
    st.markdown("**Frontier: E[cost] + L CVaR_alpha(cost)**")
    alpha = st.number_input("alpha", 0.0, 0.99, 0.5, 0.05, key="ra_alpha", persist_state="session")
    text = st.text_input("Risk weights L", "0,0.25,1,4", key="ra_weights", persist_state="session")
    try:
        from optimizer.analysis.hedge_risk import parse_weights

        lams = parse_weights(text, "risk weights")
    except ValueError as e:
        st.error(str(e))
        return
    settings = (tuple(chosen), float(alpha), lams, opts)
    if st.button("Solve the frontier", key="ra_frontier_run"):
        try:
            from optimizer.analysis.hedge_risk import extensive_frontier

            dsets = [apply_scenario(base, n) for n in chosen]
            with st.spinner(f"Solving {len(lams)} risk-averse plans…"):
                table = extensive_frontier(dsets, lams, float(alpha), options=opts)
            _store("frontier", base.hash, settings, table)
        except Exception as e:  # noqa: BLE001 - a failed run is a message
            st.error(f"The frontier failed: {error_text(e)}")
    _show_frontier(base.hash, settings)
    _chance_section(base, tuple(chosen), opts)


def _show_frontier(ds_hash: str, settings: Any) -> None:
    from optimizer.analysis.hedge_risk import frontier_figure, frontier_notes

    table = _fresh("frontier", ds_hash, settings)
    if table is None:
        st.info("Press **Solve the frontier**.")
        return
    st.plotly_chart(frontier_figure(table), key="ra_frontier_chart", width="stretch")
    show_table(table, key="ra_frontier_table")  # money in $M/$B, headers with units
    for n in frontier_notes(table):
        st.warning(n)


def _chance_section(base: Dataset, chosen: tuple[str, ...], opts: Any) -> None:
    """Chance row: customer, family, probability, method; the achieved probability."""
    from capacity.scenarios import apply_scenario

    st.markdown("**Chance row: meet a floor with a required probability**")
    customers = list(base.table("customers")["customer"].astype(str))
    c1, c2, c3, c4 = st.columns(4)
    customer = c1.selectbox("customer", customers, key="ra_customer", persist_state="session")
    family = c2.selectbox(
        "floor", ["commitment", "demand"], key="ra_family", persist_state="session"
    )
    beta = c3.number_input(
        "probability", 0.01, 1.0, 0.9, 0.05, key="ra_beta", persist_state="session"
    )
    method = c4.selectbox("method", ["cvar", "exact"], key="ra_method", persist_state="session")
    settings = (chosen, customer, family, float(beta), method, opts)
    if st.button("Solve with the chance row", key="ra_chance_run"):
        try:
            from optimizer.analysis.hedge_chance import chance_plan
            from optimizer.plan.chance import ChanceSpec

            spec = ChanceSpec(family, customer, float(beta), method)
            dsets = [apply_scenario(base, n) for n in chosen]
            with st.spinner("Solving the chance-constrained plan…"):
                res = chance_plan(dsets, spec, names=list(chosen), options=opts)
            _store("chance", base.hash, settings, res)
        except Exception as e:  # noqa: BLE001 - a failed run is a message
            st.error(f"The chance-constrained plan failed: {error_text(e)}")
    res = _fresh("chance", base.hash, settings)
    if res is None:
        st.info("Press **Solve with the chance row**.")
        return
    for n in res.notes:
        st.warning(n)
    if res.expected_cost_usd is None:
        return
    gap = "" if res.mip_gap is None else f", MIP gap {res.mip_gap:.1e}"
    st.metric("achieved probability (in sample)", fmt_share(res.in_sample, 0))
    st.caption(
        f"status {res.status}{gap}; expected cost {fmt_usd(res.expected_cost_usd, 2)}. "
        "Out of sample: `capacity hedge --chance ... --fresh N` operates the plan in new draws."
    )
    show_table(res.per_scenario, key="ra_chance_table")


def _store(key: str, ds_hash: str, settings: Any, value: Any) -> None:
    st.session_state["risk_results"] = {
        **st.session_state["risk_results"],
        f"risk_aversion_{key}": {"hash": ds_hash, "settings": settings, "value": value},
    }


def _fresh(key: str, ds_hash: str, settings: Any) -> Any:
    entry = st.session_state["risk_results"].get(f"risk_aversion_{key}")
    if entry is None or entry["hash"] != ds_hash or entry["settings"] != settings:
        return None
    return entry["value"]
