"""The Plan page offers every solver usable on this machine, and each one solves."""

from __future__ import annotations

import pytest

from optimizer.plan.solvers import available_solvers, solver_label, solver_names
from tests.apptest_helpers import goto, open_app, rerun


def test_the_solver_box_lists_the_solvers_available_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch)
    goto(at, "plan")
    box = at.selectbox(key="solve_solver")
    expected = ["cbc" if n == "PULP_CBC_CMD" else n for n in solver_names()]
    infos = {("cbc" if s.name == "PULP_CBC_CMD" else s.name): s for s in available_solvers()}
    assert box.options == [
        solver_label(infos[n].name, infos[n].version, infos[n].duals) for n in expected
    ]
    assert expected[:1] == ["highs"] and "cbc" in expected  # the two the box had before
    assert box.options[0] == f"HiGHS {infos['highs'].version} · bulk"
    if "HiGHS" in infos:  # the two HiGHS paths differ by more than letter case
        assert box.options[expected.index("HiGHS")] == f"HiGHS {infos['HiGHS'].version} · PuLP"
    assert box.value == "highs"


@pytest.mark.parametrize("name", ["GLPK_CMD", "SCIP_PY"])
def test_a_solver_beyond_highs_and_cbc_is_offered_and_solves(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    if name not in solver_names():
        pytest.skip(f"{name} is not installed here")
    at = open_app(monkeypatch)
    goto(at, "plan")
    box = at.selectbox(key="solve_solver")
    label = next(o for o in box.options if o.startswith(name.split("_")[0] + " "))
    assert label.endswith(" · PuLP, no shadow prices")  # GLPK and SCIP return no duals
    box.set_value(name)
    rerun(at)
    at.button(key="solve").click()
    rerun(at)
    plan = at.session_state["plan"]
    assert plan.solver == name
    assert plan.metrics["status"] == "optimal", plan.result.message
    goto(at, "plan")
    at.selectbox(key="solve_solver").set_value("highs")
    rerun(at)
    at.button(key="solve").click()
    rerun(at)
    highs = at.session_state["plan"]
    assert highs.solver == "highs"
    assert float(plan.result.objective_usd) == pytest.approx(
        float(highs.result.objective_usd), rel=1e-9
    )


def test_the_pulp_highs_choice_runs_pulp_highs_not_the_bulk_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import optimizer.plan.pulp_solve as pulp_solve

    if "HiGHS" not in solver_names():
        pytest.skip("PuLP's HiGHS is not available here")
    ran: list[str] = []
    real = pulp_solve.run_pulp

    def spy(model: object, options: object, **kw: object) -> object:
        ran.append(str(getattr(options, "solver", "")))
        return real(model, options, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(pulp_solve, "run_pulp", spy)
    at = open_app(monkeypatch)
    goto(at, "plan")
    at.selectbox(key="solve_solver").set_value("HiGHS")
    rerun(at)
    at.button(key="solve").click()
    rerun(at)
    plan = at.session_state["plan"]
    assert ran == ["HiGHS"]  # before: "HiGHS" folded to the bulk "highs" and PuLP never ran
    assert plan.result.solver == "HiGHS"
    assert plan.metrics["status"] == "optimal", plan.result.message
