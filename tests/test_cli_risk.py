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


def test_hedge_with_cvar_matches_its_extensive_reference() -> None:
    import re

    res, text = _run(
        ["hedge", str(TINY), "--samples", "2", "--risk", "cvar", "--workers", "0", "--reference"]
    )
    assert res.exit_code == 0, text
    rho = float(re.search(r"rho = E \+ 1 CVaR \(RP\): ([\d,]+) USD", text)[1].replace(",", ""))
    ef = float(re.search(r"extensive form: optimal, RP = ([\d,]+) USD", text)[1].replace(",", ""))
    assert rho == pytest.approx(ef, rel=1e-4)
    e = float(re.search(r"expected cost of the plan: ([\d,]+) USD", text)[1].replace(",", ""))
    cv = float(re.search(r"CVaR 0.9: ([\d,]+) USD", text)[1].replace(",", ""))
    assert rho == pytest.approx(e + cv, abs=2.0)  # printed to the dollar
