"""The Python face reads what a notebook user types as the command line does (break tests).

``solve_scenarios(data, "neutral")`` iterated over the letters of the name ("unknown
scenario 'n'") and an empty list gave an empty collection without a word.
"""

from __future__ import annotations

import pytest

import capacity_planner as cp
from tests.conftest import TINY


def test_one_scenario_name_alone_is_one_scenario() -> None:
    plans = cp.solve_scenarios(TINY, "neutral")
    assert list(plans) == ["neutral"]
    assert plans["neutral"].status == "optimal"


def test_all_is_every_scenario_of_the_data_in_file_order() -> None:
    assert list(cp.solve_scenarios(TINY, "all")) == ["neutral", "squeeze"]
    assert list(cp.solve_scenarios(TINY, ["squeeze", "all"])) == ["squeeze", "neutral"]


def test_no_scenario_is_refused() -> None:
    with pytest.raises(ValueError, match="^scenarios: no scenario named"):
        cp.solve_scenarios(TINY, [])
