"""The PuLP face (issue 11): readable names, LP/MPS round trip, every available PuLP
solver on the default data, up-front solver check, MIP gap reporting, per-case time
limits of a retained HiGHS session, temp folders of PuLP solves."""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pulp
import pytest
from typer.testing import CliRunner

from capacity.dataset import load_dataset
from capacity.scenarios import apply_scenario
from optimizer import SolveOptions, Status, build_model, pulp_names, solve, to_pulp
from optimizer.cli.commands import app
from optimizer.cli.pulp import export_files
from optimizer.output.summary import status_line, summarize
from optimizer.plan.highs_session import HighsSession
from optimizer.plan.pulp_io import clean_token, unique_tokens, write_problem
from optimizer.plan.solvers import SolverUnavailableError, resolve_solver, solver_names
from tests.lp_helpers import LP_DATA

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "data"


@pytest.fixture(scope="module")
def neutral():
    return apply_scenario(load_dataset(DEFAULT), "neutral")


@pytest.fixture(scope="module")
def neutral_model(neutral):
    return build_model(neutral)


@pytest.fixture(scope="module")
def highs_neutral(default_plan):
    r = default_plan("neutral")[1]
    assert r.status == Status.optimal
    return r


# --------------------------------------------------------------------------- names
def test_clean_token_folds_and_replaces():
    assert clean_token("Zürich") == "Zurich"
    assert clean_token("Open AI/Inc. (US)") == "Open_AI_Inc._US_"
    assert clean_token("a+b-c[d] e>f") == "a_b_c_d_e_f"
    assert clean_token("東京") == "id"


def test_colliding_ids_get_unique_tokens():
    tok = unique_tokens(["Open AI/Inc. (US)", "Open AI-Inc. (US)", "Open_AI_Inc._US__2"])
    assert len(set(tok.values())) == 3
    # sorted raw order: "Open AI-Inc. (US)" < "Open AI/Inc. (US)"
    assert tok["Open AI-Inc. (US)"] == "Open_AI_Inc._US_"
    assert tok["Open AI/Inc. (US)"] == "Open_AI_Inc._US__3"  # _2 is another ID's token


def test_readable_names_on_default_model(neutral_model):
    names = pulp_names(neutral_model)
    v, c = names.variables, names.constraints
    assert v["name"].is_unique and c["name"].is_unique
    assert len(v) == neutral_model.n_variables and len(c) == neutral_model.n_constraints
    assert "build(new_carlisle,2027Q2)" in set(v["name"])
    col = int(v.loc[v["name"] == "build(new_carlisle,2027Q2)", "column"].iloc[0])
    row = neutral_model.variables.iloc[col]
    assert row["kind"] == "build"
    assert neutral_model.codes["s"][row["s"]] == "new_carlisle"
    assert neutral_model.periods[row["t"]] == "2027Q2"
    keys = names.keys("build(new_carlisle,2027Q2)")
    assert keys["site"] == "new_carlisle" and keys["period"] == "2027Q2"
    # PuLP keeps them as they are (no silent rewrite of - + [ ] space > /)
    prob, xs = to_pulp(neutral_model)
    assert [x.name for x in xs[:50]] == v["name"].head(50).tolist()
    legal = re.compile(r"^[A-Za-z0-9_.(),~]+$")
    assert v["name"].map(lambda s: bool(legal.match(s))).all()
    assert c["name"].map(lambda s: bool(legal.match(s))).all()


def test_names_unique_when_ids_collide_after_cleaning(neutral_model):
    m = neutral_model
    weird = ("Open AI/Inc. (US)", "Open AI-Inc. (US)", "Zürich", "a b", "a/b", "a+b")
    codes = dict(m.codes)
    nk, ns = len(m.codes["k"]), len(m.codes["s"])
    assert nk >= 2 and ns >= 2
    codes["k"] = tuple(weird[i % 6] + ("" if i < 6 else str(i)) for i in range(nk))
    codes["s"] = tuple(weird[i % 2] + "x" * (i // 2) for i in range(ns))
    m2 = replace(m, codes=codes)
    names = pulp_names(m2)
    assert names.variables["name"].is_unique and names.constraints["name"].is_unique
    v = names.variables
    a = v.loc[v["customer"] == "Open AI/Inc. (US)", "name"]
    b = v.loc[v["customer"] == "Open AI-Inc. (US)", "name"]
    assert len(a) and len(b) and not set(a) & set(b)
    assert names.keys(a.iloc[0])["customer"] == "Open AI/Inc. (US)"
    _, xs = to_pulp(m2)
    assert len({x.name for x in xs}) == len(xs)


def test_index_names_still_available(neutral_model):
    _, xs = to_pulp(neutral_model, names="index")
    assert xs[0].name == "x0" and xs[-1].name == f"x{neutral_model.n_variables - 1}"


# ------------------------------------------------------------------- LP/MPS round trip
def test_written_files_round_trip_to_the_same_optimum(tmp_path, neutral_model, highs_neutral):
    import highspy

    lp, mps = tmp_path / "plan.lp", tmp_path / "plan.mps"
    write_problem(neutral_model, lp=lp, mps=mps)
    assert "site_grid(" in lp.read_text()
    ref = highs_neutral.objective_usd
    for path in (lp, mps):
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.readModel(str(path))
        h.run()
        assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
        obj = h.getInfo().objective_function_value
        assert obj == pytest.approx(ref, rel=1e-6), path.name
    # PuLP reads the MPS back too, with the readable names
    _, prob = pulp.LpProblem.fromMPS(str(mps))
    assert "build(new_carlisle,2027Q2)" in {v.name for v in prob.variables()}
    prob.solve(pulp.HiGHS(msg=False))
    assert pulp.value(prob.objective) == pytest.approx(ref, rel=1e-6)


def test_cli_export_lp_writes_without_solving(tmp_path):
    res = CliRunner().invoke(
        app,
        [
            "export-lp",
            str(DEFAULT),
            "--lp",
            str(tmp_path / "a.lp"),
            "--mps",
            str(tmp_path / "a.mps"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "a.lp").stat().st_size > 0 and (tmp_path / "a.mps").stat().st_size > 0
    # the initial fleet's energy is a constant unless power is a decision (issue 12), where
    # it sits on the energy-by-source balance's right-hand side
    const = build_model(load_dataset(DEFAULT)).objective_constant
    assert ("objective_constant" in (tmp_path / "a.lp").read_text()) == (const != 0.0)
    res = CliRunner().invoke(app, ["export-lp", str(DEFAULT)])
    assert res.exit_code == 2


# ------------------------------------------------------------- solvers end to end
PULP_SOLVERS = [n for n in ("PULP_CBC_CMD", "GLPK_CMD", "SCIP_PY", "HiGHS")]


@pytest.mark.parametrize("name", PULP_SOLVERS)
def test_default_plan_agrees_on_every_pulp_solver(name, neutral, highs_neutral):
    if name not in solver_names():
        pytest.skip(f"{name} not available here ({', '.join(solver_names())})")
    r = solve(neutral, SolveOptions(solver=name))
    assert r.status == Status.optimal, r.message
    assert r.violations.empty
    assert r.objective_usd == pytest.approx(highs_neutral.objective_usd, rel=1e-6)
    sp = r.tables["shadow_prices"]["shadow_price"]
    if name in ("GLPK_CMD", "SCIP_PY"):
        assert sp.isna().all() and "no duals" in r.duals_note
        # the domain tables' prices are null too (never 0.0), except where no row exists
        for table in ("site_utilisation", "supply_utilisation", "demand", "commitments"):
            col = [c for c in r.tables[table].columns if c.startswith("shadow_price")][0]
            assert r.tables[table][col].isna().any(), table
    else:
        assert sp.notna().all() and r.duals_note == ""


def test_at_least_three_pulp_solvers_and_bulk_highs_are_here():
    names = solver_names()
    assert names[0] == "highs"
    assert {"PULP_CBC_CMD", "HiGHS"} <= set(names)
    if shutil.which("glpsol") is None and "SCIP_PY" not in names:
        pytest.skip("neither glpsol (apt glpk-utils) nor pyscipopt installed")
    assert len(names) >= 4


def test_solver_names_resolve_and_unknown_is_one_clear_line():
    assert resolve_solver("cbc") == "PULP_CBC_CMD"
    assert resolve_solver("pulp_cbc_cmd") == "PULP_CBC_CMD"
    assert resolve_solver("highs") == "highs" and resolve_solver("HiGHS") == "HiGHS"
    with pytest.raises(SolverUnavailableError, match=r"'HIGHS' matches 'highs'.*and 'HiGHS'"):
        resolve_solver("HIGHS")  # both HiGHS names fold to it: neither is guessed
    with pytest.raises(
        SolverUnavailableError, match=r"'CPLEX_PY' is not available.*available: highs"
    ):
        resolve_solver("CPLEX_PY")


def test_cli_unavailable_solver_exits_1_with_one_line(tmp_path):
    res = CliRunner().invoke(
        app, ["solve", str(DEFAULT), "--solver", "GUROBI_CMD", "-o", str(tmp_path)]
    )
    assert res.exit_code == 1
    out = res.output.strip()
    assert "Traceback" not in out and len(out.splitlines()) == 1
    assert "GUROBI_CMD" in out and "PULP_CBC_CMD" in out and "highs" in out


def test_cli_solvers_lists_versions():
    res = CliRunner().invoke(app, ["solvers"])
    assert res.exit_code == 0
    assert "PULP_CBC_CMD" in res.output and "HiGHS · bulk" in res.output  # the app's label
    assert re.search(r"PULP_CBC_CMD.*\d+\.\d+", res.output)


def test_cli_solve_writes_lp_and_mps(tmp_path):
    tiny = str(LP_DATA / "lp_base")
    res = CliRunner().invoke(
        app,
        [
            "solve",
            tiny,
            "--no-report",
            "--solver",
            "cbc",
            "--write-lp",
            str(tmp_path / "p.lp"),
            "--write-mps",
            str(tmp_path / "p.mps"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "p.lp").exists() and (tmp_path / "p.mps").exists()


# --------------------------------------------------------------- temp folders
def _pulp_folders() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("capacity-pulp-*")}


def test_pulp_solves_leave_no_temp_folder(monkeypatch):
    ds = load_dataset(LP_DATA / "lp_base")
    before = _pulp_folders()
    assert solve(ds, SolveOptions(solver="cbc")).status == Status.optimal
    assert _pulp_folders() == before
    seen: list[str] = []

    def boom(self, solver=None, **kw):
        seen.append(solver.tmpDir)
        assert Path(solver.tmpDir).is_dir()
        raise KeyboardInterrupt

    monkeypatch.setattr(pulp.LpProblem, "solve", boom)
    with pytest.raises(KeyboardInterrupt):
        solve(ds, SolveOptions(solver="cbc"))
    assert seen and not Path(seen[0]).exists()
    assert _pulp_folders() == before


# --------------------------------------------------------------- MIP and time limits
def test_mip_gap_in_status_line_summary_table_and_metadata():
    from optimizer.output.report import file_metadata, summary_frame

    ds = load_dataset(LP_DATA / "lp_base")
    r = solve(ds, SolveOptions(solver="highs", integer_units=True))
    assert r.status == Status.optimal and r.mip_bound_usd is not None
    assert r.mip_gap is not None and r.mip_gap <= 1e-4 + 1e-12
    assert r.duals_from == "lp_with_integers_fixed"
    fake = replace(r, status=Status.time_limit_feasible, mip_gap=0.032)
    assert status_line(summarize(fake)) == "time limit: feasible, gap 3.2%"
    row = summary_frame(fake).iloc[0]
    assert row["mip_gap"] == pytest.approx(0.032) and row["mip_bound_usd"] == r.mip_bound_usd
    meta = file_metadata(fake, scenario="base")
    assert float(meta["mip_gap"]) == pytest.approx(0.032)
    assert float(meta["mip_bound_usd"]) == pytest.approx(r.mip_bound_usd)


def test_time_limited_mip_reports_incumbent_and_gap(neutral):
    r = solve(neutral, SolveOptions(solver="highs", integer_units=True, time_limit_s=3.0))
    if r.status == Status.time_limit_no_solution:
        pytest.skip("no incumbent within 3 s on this (loaded) machine")
    assert r.status in (Status.time_limit_feasible, Status.optimal), r.message
    assert r.mip_bound_usd is not None and r.mip_gap is not None
    # the objective is the incumbent's, rebuilt from the tables (no mismatch note)
    assert "differs from tables" not in r.message
    assert r.objective_usd == pytest.approx(r.tables["costs"]["cost_usd"].sum(), rel=1e-9)
    assert r.mip_gap == pytest.approx(
        abs(r.objective_usd - r.mip_bound_usd) / abs(r.objective_usd), rel=1e-6
    )
    assert r.duals_from == "lp_with_integers_fixed"
    s = summarize(r)
    if r.status == Status.time_limit_feasible:
        assert status_line(s).startswith("time limit: feasible, gap ")


def test_highs_session_gives_each_case_its_own_time_limit():
    """HiGHS's run clock keeps counting over the session; without the offset, every
    run after the clock passed the limit stopped at once and fell back to cold."""
    ds = load_dataset(LP_DATA / "lp_base")
    m = build_model(ds)
    limit = 0.5
    s = HighsSession(SolveOptions(time_limit_s=limit))
    raw, warm = s.run(m)
    assert raw.status == Status.optimal and not warm
    n = 0
    while s.highs.getRunTime() < 2 * limit and n < 20000:
        s.highs.clearSolver()  # every case starts from scratch: real run time
        raw, warm = s.run(m)
        assert raw.status == Status.optimal and warm, (n, raw.message)
        n += 1
    assert s.highs.getRunTime() >= 2 * limit
    assert s.n_cold == 1
    raw, warm = s.run(m)
    assert raw.status == Status.optimal and warm
    assert np.isfinite(raw.solver_objective)


# ------------------------------------------------ the model guide's PuLP session
def test_the_model_guide_pulp_session_runs(tmp_path, monkeypatch, capsys):
    text = (ROOT / "docs" / "guide" / "model.md").read_text()
    section = text.split("## The plan as a PuLP problem", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(ROOT)
    code = code.replace('"plan.lp"', repr(str(tmp_path / "plan.lp")))
    exec(compile(code, "docs/guide/model.md", "exec"), {})
    out = capsys.readouterr().out
    assert "site_grid(new_carlisle,2027Q2)" in out
    assert "'site': 'new_carlisle'" in out and "Optimal" in out
    assert (tmp_path / "plan.lp").stat().st_size > 0


def test_write_lp_holds_the_model_each_scenario_is_solved_as(tmp_path):
    """--write-lp wrote the cost LP under --objective margin, and with two scenarios only
    the first one's, without saying which."""
    tiny = str(LP_DATA / "tiny_valid")

    def written(*flags: str) -> str:
        res = CliRunner().invoke(app, ["solve", tiny, "--no-report", *flags])
        assert res.exit_code == 0, res.output
        return " ".join(res.output.split())

    out = written("--objective", "margin", "--write-lp", str(tmp_path / "m.lp"))
    assert "scenario neutral, margin objective" in out
    written("--write-lp", str(tmp_path / "c.lp"))
    margin, cost = (tmp_path / "m.lp").read_text(), (tmp_path / "c.lp").read_text()
    assert margin != cost  # the same file before
    direct = apply_scenario(load_dataset(tiny), "neutral")
    export_files(direct, tmp_path / "d.lp", None, objective="margin")
    assert margin == (tmp_path / "d.lp").read_text()  # the margin objective's LP
    out = written("-s", "squeeze", "-s", "neutral", "--write-lp", str(tmp_path / "s.lp"))
    assert not (tmp_path / "s.lp").exists()
    for name in ("squeeze", "neutral"):
        assert f"Wrote {tmp_path / f's-{name}.lp'} (scenario {name}, cost objective" in out
    assert (tmp_path / "s-squeeze.lp").read_text() != (tmp_path / "s-neutral.lp").read_text()
