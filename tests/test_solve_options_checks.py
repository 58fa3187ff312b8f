"""SolveOptions refuses numbers no solve can mean, naming the option (as the CLI does).

Found by a break test: NaN as a time limit was read as no limit, -1 as a limit already
passed, and a NaN check tolerance passed every plan as checked (a violation of 9 MW
against a tolerance of NaN is not ``> tol``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from optimizer import SolveOptions


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("time_limit_s", math.nan, "time_limit_s: nan is not a time limit"),
        ("time_limit_s", -1.0, "time_limit_s: -1.0 is not a time limit"),
        ("time_limit_s", 0, "time_limit_s: 0 is not a time limit"),
        ("time_limit_s", math.inf, "time_limit_s: inf is not a time limit"),
        ("threads", 0, "threads: 0 is not a number of threads"),
        ("threads", -2, "threads: -2 is not a number of threads"),
        ("mip_gap", -1.0, "mip_gap: -1.0 is not a relative gap"),
        ("mip_gap", math.nan, "mip_gap: nan is not a relative gap"),
        ("check_tolerance", math.nan, "check_tolerance: nan is not a tolerance"),
        ("check_tolerance", 0.0, "check_tolerance: 0.0 is not a tolerance"),
    ],
)
def test_a_nonsense_option_is_refused_by_name(field: str, value: float, words: str) -> None:
    with pytest.raises(ValueError, match=f"^{words}"):
        SolveOptions(**{field: value})


def test_sensible_options_pass() -> None:
    o = SolveOptions(time_limit_s=0.5, threads=1, mip_gap=0.0, check_tolerance=1e-9)
    assert (o.time_limit_s, o.threads, o.mip_gap, o.check_tolerance) == (0.5, 1, 0.0, 1e-9)
    assert SolveOptions().time_limit_s is None


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"integer_units": "no"}, TypeError, "integer_units: 'no' is not True or False"),
        ({"clusters": 1}, TypeError, "clusters: 1 is not True or False"),
        ({"explain_infeasible": "no"}, TypeError, "explain_infeasible: 'no' is not True"),
        ({"solver": None}, TypeError, "solver: None is not a name"),
        ({"threads": 2.5}, ValueError, "threads: 2.5 is not a number of threads"),
        ({"threads": "2"}, ValueError, "threads: '2' is not a number of threads"),
    ],
)
def test_flags_and_names_of_another_type_are_refused(
    kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    """integer_units="no" solved the MIP (a str is true); threads=2.5 ran as 2."""
    with pytest.raises(error, match=message):
        SolveOptions(**kwargs)  # type: ignore[arg-type]
    assert SolveOptions(integer_units=np.bool_(True)).integer_units  # numpy's bool is one
