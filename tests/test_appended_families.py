"""Families appended to a built model: each record whole, each row binding at a hand value.

The row builders of :mod:`optimizer.components.appended` are solved here on hand-sized
LPs with SciPy's HiGHS (``linprog``, ``milp``): a base block of rows over a few columns,
the appended block after it, exactly as :func:`optimizer.plan.risk.append_rows` stacks them.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from optimizer.components import APPENDED, APPENDED_BY_NAME, BY_NAME
from optimizer.components.appended import (
    check_chance_cvar,
    check_chance_link,
    check_chance_probability,
    check_chance_shortfall,
    check_cvar_excess,
    check_mga_cost_cap,
    cvar,
    define_chance_cvar,
    define_chance_link,
    define_chance_probability,
    define_chance_shortfall,
    define_cvar_excess,
    define_mga_cost_cap,
)
from optimizer.components.docs import families_table
from optimizer.plan.chance import ChanceSpec, chance_wording

EXPECTED = (
    "mga_cost_cap",
    "cvar_excess",
    "chance_link",
    "chance_probability",
    "chance_shortfall",
    "chance_cvar",
)


def test_every_appended_family_is_whole() -> None:
    assert tuple(a.name for a in APPENDED) == EXPECTED
    assert not set(EXPECTED) & set(BY_NAME)
    table = families_table()
    for a in APPENDED:
        maths = (a.define.__doc__ or "").strip().splitlines()[0]
        assert maths.endswith(")") or maths.endswith("."), a.name
        assert callable(a.check) and a.check.__doc__, a.name
        assert "Returns" in inspect.getdoc(a.define), a.name  # type: ignore[operator]
        assert a.unit and a.wording and a.result and a.app, a.name
        assert f"| `{a.name}` |" in table, a.name


def _sense_rows(rows: object, block: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower and upper bounds of appended rows by their sense."""
    sense = rows["sense"].to_numpy()  # type: ignore[index]
    rhs = rows["rhs"].to_numpy(dtype=float)  # type: ignore[index]
    lo = np.where(sense == ">=", rhs, -np.inf)
    hi = np.where(sense == "<=", rhs, np.inf)
    return block.toarray(), lo, hi


def test_cost_cap_binds_at_its_hand_value() -> None:
    """Maximise x1 with cost 2 x1 + 3 x2, x2 >= 1 (a floor), C* = 3 and slack 1/3: cap 4.

    Within the cap 2 x1 + 3 <= 4, so x1 = 0.5 and the cap binds at 4 USD.
    """
    rows = define_mga_cost_cap([2.0, 3.0])
    assert rows.columns.empty and rows.rows["rhs"].iloc[0] == np.inf
    cap = 3.0 + (1 / 3) * 3.0
    a = rows.block.toarray()
    res = linprog([-1.0, 0.0], A_ub=a, b_ub=[cap], bounds=[(0, None), (1, None)], method="highs")
    assert res.status == 0 and res.x == pytest.approx([0.5, 1.0])
    assert float((a @ res.x)[0]) == pytest.approx(cap)  # binds
    assert check_mga_cost_cap(float((a @ res.x)[0]), cap).empty
    bad = check_mga_cost_cap(4.5, cap)
    assert list(bad["family"]) == ["mga_cost_cap"] and bad["violation"].iloc[0] == pytest.approx(
        0.5
    )


def test_cvar_rows_bind_at_the_hand_tail() -> None:
    """Three equal scenarios costing 100, 200 and 400 USD, alpha 0.5, L = 1.

    The worst half: 400 with weight 1/3 and 200 with 1/6, CVaR = (400/3 + 200/6) / 0.5
    = 333.33 USD; at the optimum eta = VaR = 200 and the excesses 0, 0, 200, so the rows
    of the two scenarios at or above the VaR bind (C_s - eta - u_s = 0).
    """
    costs = np.array([100.0, 200.0, 400.0])
    p = np.full(3, 1 / 3)
    rows = define_cvar_excess(sp.identity(3, format="csr"), np.zeros(3), p, 0.5, 1.0)
    assert list(rows.columns["kind"]) == ["cvar_var", "cvar_excess", "cvar_excess", "cvar_excess"]
    a, lo, hi = _sense_rows(rows.rows, rows.block)
    c = np.concatenate([np.zeros(3), rows.columns["cost"].to_numpy(dtype=float)])
    bounds = [(v, v) for v in costs] + list(zip(rows.columns["lb"], [None] * 4, strict=True))
    res = linprog(c, A_ub=a, b_ub=hi, bounds=bounds, method="highs")
    hand = (400 / 3 + 200 / 6) / 0.5
    assert res.status == 0 and res.fun == pytest.approx(hand, rel=1e-9)
    assert cvar(costs, p, 0.5) == pytest.approx(hand, rel=1e-12)
    eta, u = res.x[3], res.x[4:]
    assert eta == pytest.approx(200.0) and u == pytest.approx([0.0, 0.0, 200.0], abs=1e-7)
    assert (a @ res.x)[1:] == pytest.approx([0.0, 0.0], abs=1e-7)  # the tail rows bind
    assert check_cvar_excess(costs, p, 0.5, eta, u).empty
    bad = check_cvar_excess(costs, p, 0.5, eta, [0.0, 0.0, 150.0])
    assert set(bad["family"]) == {"cvar_excess", "cvar_value"}


def _newsvendor_base() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two equal scenarios, a floor of 10 each: columns d0, d1 (delivered), b0, b1 (breach).

    Rows d_s + b_s >= 10; delivering costs 1 USD a unit in scenario 0 and 5 in scenario 1,
    a breach nothing (the chance rows alone make the plan deliver).
    """
    a = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    return a, np.array([10.0, 10.0]), np.array([0.5 * 1.0, 0.5 * 5.0, 0.0, 0.0])


@pytest.mark.parametrize(
    ("beta", "hand_cost", "delivered"), [(0.5, 5.0, [10, 0]), (1.0, 30.0, [10, 10])]
)
def test_exact_chance_rows_bind_at_the_hand_newsvendor(
    beta: float, hand_cost: float, delivered: list[float]
) -> None:
    """Exact rows: at beta 0.5 the cheap scenario is met and the dear one flagged missed
    (0.5 x 10 x 1 = 5 USD; the probability row binds at 0.5); at 1 both are met (30 USD)."""
    a, floor, cost = _newsvendor_base()
    slack = sp.csr_matrix(a * np.array([0, 0, 1, 1]))
    link = define_chance_link(slack, [0, 1], floor, 2)
    prob = define_chance_probability(4, [0.5, 0.5], beta)
    block = sp.vstack([link.block, prob.block]).toarray()
    full = np.hstack([a, np.zeros((2, 2))])
    cons = [
        LinearConstraint(full, floor, np.inf),
        LinearConstraint(block, -np.inf, np.r_[link.rows["rhs"], prob.rows["rhs"]]),
    ]
    res = milp(
        np.r_[cost, 0.0, 0.0],
        constraints=cons,
        integrality=np.r_[np.zeros(4), 1, 1],
        bounds=Bounds(np.zeros(6), np.r_[np.full(4, np.inf), 1, 1]),
    )
    assert res.status == 0 and res.fun == pytest.approx(hand_cost)
    assert res.x[:2] == pytest.approx(delivered)
    assert float(block[-1] @ res.x) == pytest.approx(1.0 - beta)  # the probability row binds
    met = res.x[2:4] <= 1e-9
    assert check_chance_link(met, res.x[4:]).empty
    assert check_chance_probability(met, [0.5, 0.5], beta).empty
    assert list(check_chance_link([False, True], [0.0, 0.0])["keys"]) == ["0"]
    assert not check_chance_probability([True, False], [0.5, 0.5], 0.9).empty


def test_cvar_approximation_is_conservative_by_hand() -> None:
    """The approximation at beta 0.5 over two equal scenarios: CVaR_0.5 of the relative
    shortfall is the worse scenario's, so both floors must hold: 30 USD, as at beta 1,
    against 5 USD for the exact rows. The shortfall rows bind at 1 (d_s / 10 + e_s + t = 1
    with t = e_s = 0) and the CVaR row at 0."""
    a, floor, cost = _newsvendor_base()
    delivered = sp.csr_matrix(a * np.array([1, 1, 0, 0]))
    short = define_chance_shortfall(delivered, [0, 1], floor, 2, 0.5)
    row = define_chance_cvar(4, [0.5, 0.5], 0.5)
    block = sp.vstack([short.block, row.block]).toarray()
    lo = np.r_[short.rows["rhs"], -np.inf]
    hi = np.r_[np.full(2, np.inf), row.rows["rhs"]]
    full = np.hstack([a, np.zeros((2, 3))])
    cons = [LinearConstraint(full, floor, np.inf), LinearConstraint(block, lo, hi)]
    bounds = Bounds(np.r_[np.zeros(4), -np.inf, 0, 0], np.full(7, np.inf))
    res = milp(np.r_[cost, 0, 0, 0], constraints=cons, integrality=np.zeros(7), bounds=bounds)
    assert res.status == 0 and res.fun == pytest.approx(30.0)
    assert (block @ res.x)[:2] == pytest.approx([1.0, 1.0]) and float(block[2] @ res.x) <= 1e-9
    met = res.x[2:4] <= 1e-9
    assert check_chance_shortfall(met, res.x[4], res.x[5:]).empty
    assert check_chance_cvar(res.x[4], res.x[5:], [0.5, 0.5], 0.5).empty
    assert not check_chance_cvar(0.1, [0.0, 0.0], [0.5, 0.5], 0.5).empty
    assert not check_chance_shortfall([False, True], -1.0, [0.0, 0.0]).empty
    # at beta 1 the rows are the floors themselves, no new column
    exact = define_chance_shortfall(delivered, [0, 1], floor, 2, 1.0)
    assert exact.columns.empty and list(exact.rows["rhs"]) == [10.0, 10.0]


def test_chance_wording_is_the_records() -> None:
    said = chance_wording(ChanceSpec("commitment", "openai", 0.9, "exact"))
    assert said.startswith("no plan meets openai's commitment floors in at least 90% of")
    assert "chance_probability" in said
    cv = chance_wording(ChanceSpec("demand", "openai", 0.9))
    assert "CVaR at 90%" in cv and "chance_cvar" in cv
    one = chance_wording(ChanceSpec("demand", "openai", 1.0))
    assert "every scenario (probability 1)" in one
    assert APPENDED_BY_NAME["cvar_excess"].wording.startswith("never infeasible")
