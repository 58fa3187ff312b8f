"""docs/guide/margin.md quotes a real margin-mode run of the default data: re-solve and compare.

On a mismatch the failure prints the fresh block (between the page's margin-story
markers), to paste into the page after a deliberate change of the data or the model.
"""

from __future__ import annotations

import pytest

from optimizer import Status
from tests.conftest import ROOT
from tests.margin_story import END, START, story

pytestmark = pytest.mark.slow  # one solve of the default data (about 20 s)

PAGE = ROOT / "docs" / "guide" / "margin.md"


def test_the_guide_quotes_a_fresh_margin_run(default_plan) -> None:  # noqa: ANN001
    plan = default_plan("neutral", "margin")[1]
    assert plan.status == Status.optimal and len(plan.violations) == 0
    text = PAGE.read_text(encoding="utf-8")
    quoted = text[text.index(START) : text.index(END) + len(END)]
    fresh = story(plan)
    assert quoted == fresh, "docs/guide/margin.md is stale; paste this block:\n" + fresh
