"""The Plan page shows the contract terms: billed, refunded and credited in the margin mode."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from tests.apptest_helpers import goto, open_app
from tests.lp_helpers import LP_DATA


def _data(tmp_path: Path) -> Path:
    # lp_two with a take-or-pay floor of 500 H100e: 2026Q2 asks 300, the 200 unused
    # are billed at 6,000 (tests/test_contract_terms.py solves it by hand)
    d = tmp_path / "ds"
    shutil.copytree(LP_DATA / "lp_two", d)
    row = {
        "customer": "a",
        "workload": "training",
        "from_period": "2026Q1",
        "to_period": "",
        "take_or_pay_h100e": 500,
    }
    pd.DataFrame([row]).to_csv(d / "contract_terms.csv", index=False)
    return d


def test_the_plan_page_shows_the_contracts_in_the_margin_mode(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    at = open_app(monkeypatch, _data(tmp_path))
    goto(at, "plan")
    at.selectbox(key="solve_objective").set_value("margin")
    at.run()
    at.button(key="solve").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["plan"].result.objective == "margin"
    frames = [df.value for df in at.dataframe if "take_or_pay_h100e" in df.value]
    assert len(frames) == 1
    shown = frames[0].set_index("period")
    assert shown.loc["2026Q2", "take_or_pay_unused_h100e"] == pytest.approx(200.0)
    captions = [c.value for c in at.caption]
    # billed: 500 H100e x 6,000 in each quarter, discount factor 1
    assert any("Billed under contract $6.000M" in c for c in captions), captions


def test_the_plan_page_shows_the_migration_in_the_margin_mode(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # lp_two with a 100,000 USD port onto family nv: paid once, in 2026Q1
    # (tests/test_migration.py solves it by hand)
    d = tmp_path / "ds"
    shutil.copytree(LP_DATA / "lp_two", d)
    row = {
        "customer": "a",
        "family": "nv",
        "from_period": "2026Q1",
        "migration_cost_usd": 100000,
        "derate_initial": 0,
        "recovery_periods": 0,
    }
    pd.DataFrame([row]).to_csv(d / "migration.csv", index=False)
    at = open_app(monkeypatch, d)
    goto(at, "plan")
    at.selectbox(key="solve_objective").set_value("margin")
    at.run()
    at.button(key="solve").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    frames = [df.value for df in at.dataframe if "ported_share" in df.value]
    assert len(frames) == 1
    shown = frames[0].set_index("period")
    assert shown.loc["2026Q1", "port_share"] == pytest.approx(1.0)
    captions = [c.value for c in at.caption]
    assert any("Porting cost $100.000k" in c for c in captions), captions
