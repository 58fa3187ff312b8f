"""The hedged-plan tab: a default that works on the bundled data, and an infinite EEV explained.

On the bundled data the mean-value problem is undefined (the scenarios shift period
labels, so their rows differ) and ``mean`` falls back to the neutral plan; and with the
``full`` first stage the neutral plan's fleet cannot run in the negative scenario. The
tab therefore starts on ``neutral`` with the ``capacity`` first stage (as ``capacity
hedge``), whose EEV and VSS are finite on the bundled data. When the EV plan's first
stage cannot be operated in a scenario, EEV and VSS are infinite: the tab says which
scenario and why instead of showing ``∞``.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pandas as pd
import pytest

from capacity.dataset import load_dataset
from capacity.scenarios import apply_scenario
from optimizer.analysis.hedge import mean_value_dataset
from tests.apptest_helpers import goto, open_app
from tests.conftest import DEFAULT_DATA, TINY
from ui.risk_view import infinite_eev_text


def test_the_mean_value_problem_is_undefined_on_the_bundled_data() -> None:
    ds = load_dataset(DEFAULT_DATA)
    dsets = [apply_scenario(ds, n) for n in ("optimistic", "neutral", "negative")]
    assert mean_value_dataset(dsets, [1 / 3] * 3) is None


def test_the_tab_starts_on_the_neutral_plan_and_the_capacity_first_stage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch, TINY)
    goto(at, "risk")
    assert at.radio(key="hedge_ev").value == "neutral"
    assert at.radio(key="hedge_first_stage").value == "capacity"


def _plan(costs: list[float], statuses: list[str]) -> SimpleNamespace:
    per = pd.DataFrame(
        {
            "scenario": ["optimistic", "neutral", "negative"],
            "ev_fixed_cost_usd": costs,
            "ev_fixed_status": statuses,
        }
    )
    return SimpleNamespace(eev_usd=sum(costs) / 3, ev_problem="neutral", per_scenario=per)


def test_an_infinite_eev_names_the_scenario_the_ev_plan_cannot_run_in() -> None:
    h = _plan([1.8e11, 1.2e11, math.inf], ["optimal", "optimal", "infeasible"])
    text = infinite_eev_text(h)
    assert text.startswith("EEV and VSS are infinite: the neutral plan's first stage")
    assert "cannot be operated in scenario negative (infeasible)." in text
    assert "optimistic" not in text
    assert infinite_eev_text(_plan([1.0, 2.0, 3.0], ["optimal"] * 3)) == ""
