"""Scenarios page: pick a named scenario or compose overrides; see the diff against the base."""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from capacity.scenarios import BASE, UnknownScenarioError, diff_datasets, scenario_names
from capacity.validation import DataValidationError
from ui.compose import (
    LOST_SITES_KEY,
    compose_overrides,
    diff_with_units,
    lost_multipliers,
    prune_lost_sites,
    scenario_fallback_text,
    trainium_chips,
)
from ui.findings_view import show_findings
from ui.state import (
    active_dataset,
    build_scenario,
    scenario_label,
    show_flash,
)

ss = st.session_state
st.title("Scenarios")
show_flash()
base = ss["base_ds"]
if base is None:
    st.error("No valid dataset loaded. Open **Data** to upload one.")
    st.stop()


def kept(name: str) -> dict[str, Any]:
    """Key and session persistence of a composer widget (kept across page changes)."""
    return {"key": f"cmp_{name}", "persist_state": "session"}


names = scenario_names(base)
if ss["scenario_name"] not in names:
    ss["scenario_name"] = BASE
name = st.radio(
    "Named scenario",
    names,
    index=names.index(ss["scenario_name"]),
    **kept("scenario_name"),
    horizontal=True,
    format_func=lambda n: n if n == BASE else f"{n}",
    help="Scenarios defined in the dataset's scenarios.yaml; 'base' is the data as is.",
)
if name != BASE and base.scenarios.get(name) is not None:
    sc = base.scenarios[name]
    st.caption(f"{sc.description or ''} ({len(sc.overrides)} override(s))")

st.subheader("Compose overrides")
st.caption("Applied after the named scenario. 1.0 = unchanged.")
resources = sorted(set(base.table("supply_resources")["resource"].astype(str)))
customers = sorted(set(base.table("customers")["customer"].astype(str)))
sites = list(base.table("sites")["site"].astype(str))
trn = trainium_chips(base)

c1, c2, c3 = st.columns(3)
with c1:
    st.markdown("**Supply capacity multipliers**")
    supply = {
        r: st.number_input(
            r, min_value=0.0, max_value=10.0, step=0.05, value=1.0, **kept(f"supply_{r}")
        )
        for r in resources
    }
with c2:
    st.markdown("**Demand multipliers per customer**")
    demand = {
        k: st.number_input(
            k, min_value=0.0, max_value=10.0, step=0.05, value=1.0, **kept(f"demand_{k}")
        )
        for k in customers
    }
with c3:
    st.markdown("**Grid and migration**")
    delay = st.number_input(
        "Grid delay [quarters]",
        min_value=-8,
        max_value=12,
        step=1,
        value=0,
        **kept("grid_delay"),
        help="Shift every selected site's grid_mw schedule later.",
    )
    prune_lost_sites(ss, sites)  # chosen sites an edit renamed or deleted: not "all"
    grid_sites = st.multiselect(
        "Sites delayed (empty = all)",
        sites,
        default=[],
        **kept("grid_sites"),
        on_change=lambda: ss.pop(LOST_SITES_KEY, None),
    )
    derate = st.number_input(
        "Trainium migration derate factor",
        min_value=0.05,
        max_value=2.0,
        step=0.05,
        value=1.0,
        **kept("trainium_derate"),
        disabled=not trn,
        help="Multiplies eligibility.derate of the Trainium-family chips "
        f"({', '.join(trn) or 'none in this dataset'}); 0.8 = 20% performance lost to migration.",
    )

lost_sites = ss.get(LOST_SITES_KEY) or []
if lost_sites and int(delay) != 0:
    st.warning(
        f"The grid delay was chosen for {', '.join(lost_sites)}, no longer in the data "
        "(renamed or deleted by an edit): "
        + (
            "it applies to the sites still chosen only."
            if grid_sites
            else "it is off until you choose its sites again (an empty choice would "
            "delay every site)."
        )
    )
for what, gone in lost_multipliers(ss, resources, customers).items():
    st.warning(
        f"The {what} multiplier of {gone}, no longer in the data (renamed or deleted by "
        "an edit), is not applied: set it again on the new name."
    )

overrides = compose_overrides(
    base,
    supply=supply,
    demand=demand,
    grid_delay_periods=0 if lost_sites and not grid_sites else int(delay),
    grid_sites=grid_sites,
    trainium_derate_factor=float(derate),
)

changed = name != ss["scenario_name"] or json.dumps(overrides, sort_keys=True) != json.dumps(
    ss["overrides"], sort_keys=True
)
if changed:
    try:
        build_scenario(base, name, overrides)
    except (DataValidationError, UnknownScenarioError) as e:
        st.error(
            "This scenario does not validate, so **"
            + scenario_label(ss["scenario_name"], ss["overrides"])
            + "** stays active. Fix the settings:"
        )
        if isinstance(e, DataValidationError):
            show_findings(list(e.findings))
        else:
            st.write(str(e))
    else:
        ss["scenario_name"], ss["overrides"] = name, overrides

ds = active_dataset()
fallback = scenario_fallback_text(
    scenario_label(ss["scenario_name"], ss["overrides"]), ss.get("scenario_error")
)
if fallback:
    st.warning(fallback)
if overrides:
    with st.expander(f"{len(overrides)} composed override(s)"):
        st.json(overrides)

# base is the data as loaded: the diff holds the cell edits too (against the edited data
# it said "base -> edited: no cell differs" while edits were active)
origin = ss.get("origin_ds") or base
st.subheader(f"Diff: base (the data as loaded) → {ds.scenario}")
diff = diff_datasets(origin, ds)
edits = 0 if origin is base else len(diff_datasets(origin, base))
if diff.empty:
    st.info("No cell differs from the data as loaded.")
else:
    caption = f"{len(diff)} changed cell(s) in {diff['table'].nunique()} table(s)"
    st.caption(caption + (f", {edits} of them by edits on the Data page." if edits else "."))
    st.dataframe(diff_with_units(diff), hide_index=True, width="stretch", key="scenario_diff")
