"""``capacity hedge --risk/--frontier/--chance``: bad values refused before anything runs."""

from __future__ import annotations

import pytest

from tests.test_cli_checks import TINY, _run, no_compute  # noqa: F401 - fixture


@pytest.mark.parametrize(
    ("args", "option", "words"),
    [
        (
            ["--risk", "cvar", "--alpha", "1"],
            "--alpha",
            "1 is not a CVaR level: give a number in [0, 1)",
        ),
        (["--risk", "cvar", "--alpha", "-0.5"], "--alpha", "-0.5 is not a CVaR level"),
        (["--risk", "cvar", "--alpha", "nan"], "--alpha", "nan is not a CVaR level"),
        (
            ["--risk", "cvar", "--weight", "-1"],
            "--weight",
            "-1 is not a risk weight: give a number >= 0",
        ),
        (
            ["--risk", "cvar", "--frontier", "--weights", "0,-2"],
            "--weights",
            "-2 is not a risk weight >= 0",
        ),
        (["--risk", "cvar", "--frontier", "--weights", "0,x"], "--weights", "'x' is not a number"),
        (["--frontier"], "--frontier", "needs --risk cvar"),
        (["--chance", "commitment:openai:0"], "--chance", "probability 0.0 is not in (0, 1]"),
        (["--chance", "commitment:openai:1.2"], "--chance", "probability 1.2 is not in (0, 1]"),
        (["--chance", "openai:0.9"], "--chance", "is not FAMILY:CUSTOMER:PROBABILITY"),
        (["--chance", "supply:openai:0.9"], "--chance", "'supply' is not a floor family"),
    ],
)
def test_hedge_refuses_bad_risk_and_chance_values_before_any_solve(
    args: list[str],
    option: str,
    words: str,
    no_compute: None,  # noqa: F811
) -> None:
    res, text = _run(["hedge", str(TINY), *args])
    assert res.exit_code == 2, text
    assert f"Invalid value for '{option}'" in text, text
    assert words in text, text


def _money(pattern: str, text: str) -> float:
    """The USD value of a printed money cell (``$532``, ``$1.96M``, ``$123.72B``)."""
    import re

    m = re.search(pattern + r"\$([\d,.]+)([kMB]?)", text)
    assert m is not None, (pattern, text)
    scale = {"": 1.0, "k": 1e3, "M": 1e6, "B": 1e9}[m[2]]
    return float(m[1].replace(",", "")) * scale


def test_hedge_with_cvar_matches_its_extensive_reference() -> None:
    res, text = _run(
        ["hedge", str(TINY), "--samples", "2", "--risk", "cvar", "--workers", "0", "--reference"]
    )
    assert res.exit_code == 0, text
    # the cells are printed to 3 significant figures (the app's money format)
    rho = _money(r"rho = E \+ 1 CVaR \(RP\): ", text)
    ef = _money(r"extensive form: optimal, RP = ", text)
    assert rho == pytest.approx(ef, rel=1e-4)
    e = _money(r"expected cost of the plan: ", text)
    cv = _money(r"CVaR 0.9: ", text)
    assert rho == pytest.approx(e + cv, rel=5e-3)
    assert "relative diff to L-shaped" in text


def test_the_frontier_reads_in_the_scale_of_its_amounts() -> None:
    """A small dataset's frontier read 0.010 in a fixed USD B (its steps invisible)."""
    import pandas as pd
    from rich.console import Console

    from optimizer.analysis.hedge_risk import frontier_figure
    from optimizer.cli.hedge_folder import frontier_shown

    t = pd.DataFrame(
        {
            "risk_weight": [0.0, 1.0],
            "alpha": [0.9, 0.9],
            "expected_cost_usd": [9_612_345.0, 9_700_000.0],
            "var_usd": [12_000_000.0, 11_900_000.0],
            "cvar_usd": [12_500_000.0, 12_100_000.0],
            "risk_objective_usd": [9_612_345.0, 21_800_000.0],
            "status": ["optimal", "optimal"],
        }
    )
    console = Console(width=120, record=True, color_system=None)
    console.print(frontier_shown(t, 0.9))
    text = console.export_text()
    assert "(USD M)" in text and "USD B" not in text
    assert "9.612" in text and "12.100" in text and "21.800" in text
    fig = frontier_figure(t)
    assert fig.layout.xaxis.title.text == "expected cost (USD M, discounted)"
    assert list(fig.data[0].x) == [9.612345, 9.7]


def test_frontier_points_at_one_place_share_one_label() -> None:
    """Every weight gave the same plan on a small dataset: four labels overprinted."""
    import pandas as pd

    from optimizer.analysis.hedge_risk import frontier_figure

    t = pd.DataFrame(
        {
            "risk_weight": [0.0, 0.25, 1.0, 4.0],
            "alpha": [0.9] * 4,
            "expected_cost_usd": [1_960_463.52, 1_960_463.52, 1_960_463.52, 1_990_000.0],
            "cvar_usd": [2_500_000.0, 2_500_000.0, 2_500_000.0, 2_300_000.0],
        }
    )
    assert list(frontier_figure(t).data[0].text) == ["L=0, 0.25, 1", "", "", "L=4"]
