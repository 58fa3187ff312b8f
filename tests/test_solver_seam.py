"""The solver seam: the time limit is a wall-clock budget of the whole solve, every
listed solver name selects exactly that solver, interrupts and SIGTERM leave no solver
program or temp folder behind, a missing highspy or a broken CBC binary is one line."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pulp
import pytest
from typer.testing import CliRunner

import optimizer.plan.highs_session as highs_session
import optimizer.plan.pipeline as pipeline
import optimizer.plan.pulp_solve as pulp_solve
import optimizer.plan.pulp_status as pulp_status
import optimizer.plan.raw_solve as raw_solve
import optimizer.plan.solver_watch as solver_watch
import optimizer.plan.solvers as solvers
import optimizer.plan.warm_start as warm_start
from capacity.dataset import load_dataset
from capacity.scenarios import apply_scenario
from optimizer import SolveOptions, Status, build_model, solve
from optimizer.cli.commands import app
from optimizer.output.binding_limits import fixed_integers_note
from optimizer.output.parquet_tables import read_metadata
from optimizer.plan.options import RawSolution
from tests.lp_helpers import LP_DATA

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
TINY = ROOT / "tests" / "data" / "tiny_valid"
ENV = {"COLUMNS": "160", "NO_COLOR": "1", "TERM": "dumb"}


def _env(tmp: Path | None = None) -> dict[str, str]:
    env = {**os.environ, **ENV, "PYTHONPATH": str(ROOT)}
    if tmp is not None:
        env["TMPDIR"] = str(tmp)
    return env


def _capacity(*args: str) -> list[str]:
    return [sys.executable, "-c", "from optimizer.cli.commands import main; main()", *args]


# ------------------------------------------------------------------ time limit
@pytest.mark.slow
@pytest.mark.parametrize(
    ("flags", "limit", "statuses", "note"),
    [
        (["--clusters"], 20.0, ("time limit: feasible", "time_limit_no_solution"), "cluster"),
        (["--integer-units"], 20.0, ("time limit: feasible", "time_limit_no_solution"), "unit"),
        (["--solver", "cbc", "--clusters"], 10.0, ("time limit: feasible", "time_limit_no"), ""),
        ([], 1.0, ("time_limit_no_solution",), ""),
    ],
    ids=["clusters", "integer-units", "cbc-clusters", "lp"],
)
@pytest.mark.usefixtures("wall_clock_alone")  # not beside the test that burns both cores
def test_time_limit_is_the_wall_clock_of_the_whole_command(
    flags: list[str], limit: float, statuses: tuple[str, ...], note: str
) -> None:
    t0 = time.monotonic()
    r = subprocess.run(
        _capacity("solve", str(DATA), *flags, "--time-limit", f"{limit:g}", "--no-report"),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=limit + 120,
    )
    elapsed = time.monotonic() - t0
    out = re.sub(r"\s+", " ", r.stdout)
    assert elapsed <= limit + 5, f"{elapsed:.1f} s for --time-limit {limit:g}"
    status = re.search(r"Status: (.+?) (Objective|$)", out)
    assert status is not None, out[-2000:]
    assert status.group(1).startswith(statuses), status.group(1)
    assert r.returncode == (0 if status.group(1).startswith("time limit: feasible") else 1)
    assert "Traceback" not in r.stderr
    # duals come from the LP with the integers fixed, or the summary says why none
    # came (on a slow machine the MIP can use the whole limit)
    fixed = "Shadow prices come from the LP with the integers fixed" in out
    if status.group(1).startswith("time_limit_no_solution"):
        # no incumbent within the limit (a loaded machine): no plan, so no integers to fix
        assert "The time limit was reached before any feasible plan was found" in out, out
    elif note and not fixed:
        assert "LP with the integers fixed" in out, out[-2000:]
    if note == "cluster" and fixed:
        assert "training-cluster choices of the MIP (which sites host" in out
        assert "whole-unit installs" not in out
    if note == "unit" and fixed:
        assert "the whole-unit installs and the training-cluster choices" in out


@pytest.fixture
def limits_seen(monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    """Record the time limit (s) of every bulk HiGHS call, in call order."""
    seen: list[float | None] = []
    real = raw_solve._run_highs

    def spy(model: Any, options: Any, **kw: Any) -> Any:
        seen.append(options.time_limit_s)
        return real(model, options, **kw)

    monkeypatch.setattr(raw_solve, "_run_highs", spy)  # the LP or MIP, the fixed LP
    monkeypatch.setattr(warm_start, "_run_highs", spy)  # the two LPs of the warm start
    return seen


def test_every_stage_of_a_cluster_solve_gets_what_remains(limits_seen: list[Any]) -> None:
    ds = load_dataset(LP_DATA / "lp_clusters")
    r = solve(ds, SolveOptions(clusters=True, time_limit_s=30.0))
    assert r.status == Status.optimal
    # relaxation, LP with rounded clusters, MIP with the start, LP with the integers fixed
    assert len(limits_seen) == 4 and None not in limits_seen, limits_seen
    relaxation, rounded, mip, fixed = limits_seen
    assert relaxation <= 0.5 * 30.0 and rounded <= relaxation  # the warm start: half at most
    assert mip <= 0.9 * 30.0  # the MIP leaves a reserve for the LP of the shadow prices
    assert 0.1 * 30.0 * 0.9 <= fixed < 30.0  # which gets what remains, not a fresh limit
    assert r.duals_from == "lp_with_integers_fixed" and not r.duals_note


def test_the_elastic_re_solve_of_an_infeasible_model_has_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.lp_helpers import edit

    ds = load_dataset(LP_DATA / "lp_base")
    ds = edit(ds, "demand", demand_h100e=1e12)  # unmet is priced: still feasible
    seen: list[float | None] = []
    real = raw_solve.run_solver

    def spy(model: Any, options: Any, **kw: Any) -> Any:
        seen.append(options.time_limit_s)
        raw = real(model, options, **kw)
        if len(seen) == 1:  # the plan itself: pretend the solver proved it infeasible
            return RawSolution(Status.infeasible, None, None, None, "x", 0.0, 0.0)
        return raw

    monkeypatch.setattr(pipeline, "run_solver", spy)
    r = solve(ds, SolveOptions(time_limit_s=30.0))
    assert r.status == Status.infeasible
    # the plan, then one elastic LP per relax tier present: each gets what remains
    elastic = seen[1:]
    assert len(elastic) >= 1 and all(t is not None and 0 < t <= 30.0 for t in elastic)
    assert elastic == sorted(elastic, reverse=True)  # the same deadline, never a fresh limit


def test_a_deadline_passed_before_the_build_reports_the_time_limit() -> None:
    ds = load_dataset(LP_DATA / "lp_base")
    r = solve(ds, SolveOptions(time_limit_s=5.0), deadline=time.monotonic() - 1.0)
    assert r.status == Status.time_limit_no_solution
    assert r.message == "highs: the time limit ran out before the model was built"
    assert r.objective_usd is None


def test_cbc_infeasible_after_its_time_limit_is_no_proof() -> None:
    watch = solver_watch.SolverWatch("/nonexistent", None)
    late = pulp_solve._after_limit(Status.infeasible, "Integer infeasible", watch, 9.0, 8.0)
    assert late == (
        Status.time_limit_no_solution,
        "Integer infeasible, after the time limit: no proof of infeasibility",
    )
    early = pulp_solve._after_limit(Status.infeasible, "Integer infeasible", watch, 1.0, 8.0)
    assert early == (Status.infeasible, "Integer infeasible")


# ------------------------------------------------------------------ solver names
def test_every_listed_name_selects_exactly_that_solver() -> None:
    names = solvers.solver_names()
    assert {"highs", "HiGHS", "PULP_CBC_CMD"} <= set(names)
    for n in names:
        assert solvers.resolve_solver(n) == n
    assert solvers.resolve_solver("cbc") == "PULP_CBC_CMD"
    assert solvers.resolve_solver("pulp_cbc_cmd") == "PULP_CBC_CMD"
    with pytest.raises(solvers.SolverUnavailableError) as e:
        solvers.resolve_solver("HIGHS")
    msg = str(e.value)
    assert "'highs' (highspy, bulk) and 'HiGHS' (PuLP HiGHS)" in msg and "\n" not in msg


@pytest.mark.parametrize("name", ["highs", "HiGHS", "PULP_CBC_CMD", "cbc"])
def test_the_report_names_the_solver_that_ran(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []
    real_pulp, real_highs = pulp_solve.run_pulp, raw_solve._run_highs

    def via_pulp(model: Any, options: Any, **kw: Any) -> Any:
        ran.append(f"pulp:{options.solver}")
        return real_pulp(model, options, **kw)

    def via_bulk(model: Any, options: Any, **kw: Any) -> Any:
        ran.append("bulk")
        return real_highs(model, options, **kw)

    monkeypatch.setattr(pulp_solve, "run_pulp", via_pulp)
    monkeypatch.setattr(raw_solve, "_run_highs", via_bulk)
    out = tmp_path / "r"
    r = CliRunner().invoke(app, ["solve", str(TINY), "--solver", name, "--out", str(out)], env=ENV)
    assert r.exit_code == 0, r.output
    listed = solvers.resolve_solver(name)
    assert ran == (["bulk"] if listed == "highs" else [f"pulp:{listed}"])
    (costs,) = out.glob("*/scenario=neutral/costs.parquet")
    assert read_metadata(costs)["solver"] == listed


def test_an_ambiguous_name_is_one_line_naming_both(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["solve", str(TINY), "--solver", "HIGHS", "--no-report"], env=ENV)
    assert r.exit_code == 1
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: solver 'HIGHS' matches 'highs'")


# ------------------------------------------------------------------ interrupts, SIGTERM
def _pulp_folders(root: Path) -> list[str]:
    return sorted(p.name for p in root.glob("capacity-pulp-*"))


def _cbc_solving(parent: psutil.Process) -> list[psutil.Process]:
    """CBC children solving a model in a ``capacity-pulp-*`` folder (not the probe)."""
    out = []
    for c in parent.children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if c.name() == "cbc" and any("capacity-pulp-" in a for a in c.cmdline()):
                out.append(c)
    return out


@pytest.fixture(scope="module")
def default_model() -> Any:
    return build_model(apply_scenario(load_dataset(DATA), "neutral"))


@contextlib.contextmanager
def _when_cbc_runs(action: Any) -> Iterator[None]:
    """Run ``action(cbc_process)`` on a thread as soon as a CBC child appears."""

    def wait() -> None:
        for _ in range(1200):
            kids = _cbc_solving(psutil.Process())
            if kids:
                time.sleep(0.3)
                action(kids[0])
                return
            time.sleep(0.05)

    t = threading.Thread(target=wait, daemon=True)
    t.start()
    try:
        yield
    finally:
        t.join()


def test_sigint_to_this_process_stops_cbc_and_raises_keyboardinterrupt(
    default_model: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    cbc: list[psutil.Process] = []

    def interrupt(p: psutil.Process) -> None:
        cbc.append(p)
        os.kill(os.getpid(), signal.SIGINT)  # Python only: CBC must be stopped by us

    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt), _when_cbc_runs(interrupt):
        pulp_solve.run_pulp(default_model, SolveOptions(solver="PULP_CBC_CMD"))
    assert cbc and (not cbc[0].is_running() or cbc[0].status() == "zombie")
    assert time.monotonic() - t0 < 60
    assert _pulp_folders(tmp_path) == []


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_to_capacity_solve_leaves_no_temp_file_nor_solver(
    tmp_path: Path, sig: int, code: int
) -> None:
    p = subprocess.Popen(
        _capacity("solve", str(DATA), "--solver", "cbc", "--no-report"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
        start_new_session=True,
    )
    cbc: list[psutil.Process] = []
    for _ in range(1200):
        cbc = _cbc_solving(psutil.Process(p.pid))
        if cbc or p.poll() is not None:
            break
        time.sleep(0.05)
    assert cbc, "CBC never started"
    assert _pulp_folders(tmp_path)  # the MPS file is there while CBC runs
    if sig == signal.SIGINT:
        os.killpg(p.pid, sig)  # Ctrl-C: the whole foreground group
    else:
        os.kill(p.pid, sig)  # SIGTERM: the capacity process only
    out, err = p.communicate(timeout=60)
    assert p.returncode == code, (out, err)
    assert "Traceback" not in err and "Traceback" not in out
    if sig == signal.SIGINT:
        assert "interrupted" in out and "Status:" not in out
    assert _pulp_folders(tmp_path) == []
    assert not cbc[0].is_running() or cbc[0].status() == "zombie"


# ------------------------------------------------------------------ missing or broken solvers
@pytest.fixture
def no_highspy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "highspy", None)  # ``import highspy`` fails


def test_without_highspy_solve_and_hedge_say_pip_install_highspy(no_highspy: None) -> None:
    assert "highs" not in solvers.solver_names()
    for args in (["solve", str(TINY), "--no-report"], ["hedge", str(TINY), "-n", "2"]):
        r = CliRunner().invoke(app, args, env=ENV)
        lines = [ln for ln in r.output.splitlines() if ln.strip()]
        assert r.exit_code == 1 and r.exception is None or isinstance(r.exception, SystemExit)
        assert len(lines) == 1, r.output
        assert "pip install highspy" in lines[0] and lines[0].startswith("error: ")


@pytest.fixture
def broken_cbc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    from pulp.apis.coin_api import PULP_CBC_CMD

    fake = tmp_path / "cbc"
    fake.write_bytes(b"\x7fELF not really a program\n")
    fake.chmod(0o755)
    monkeypatch.setattr(PULP_CBC_CMD, "pulp_cbc_path", str(fake))
    solvers._pulp_listed.cache_clear()
    solvers.probe_binary.cache_clear()
    yield fake
    solvers._pulp_listed.cache_clear()
    solvers.probe_binary.cache_clear()


def test_a_cbc_binary_that_cannot_run_is_not_listed_and_is_one_line(broken_cbc: Path) -> None:
    assert "PULP_CBC_CMD" in pulp.listSolvers(onlyAvailable=True)  # PuLP only checks the x bit
    assert "PULP_CBC_CMD" not in solvers.solver_names()
    listing = CliRunner().invoke(app, ["solvers"], env=ENV)
    assert listing.exit_code == 0 and "PULP_CBC_CMD" not in listing.output
    r = CliRunner().invoke(app, ["solve", str(TINY), "--solver", "cbc", "--no-report"], env=ENV)
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert r.exit_code == 1 and len(lines) == 1, r.output
    assert f"its program {broken_cbc} does not start: Exec format error" in lines[0]


def test_a_cbc_binary_that_breaks_after_the_probe_is_an_error_status(
    broken_cbc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(solvers, "binary_problem", lambda name: None)
    r = solve(load_dataset(LP_DATA / "lp_base"), SolveOptions(solver="PULP_CBC_CMD"))
    assert r.status == Status.error
    assert r.message.startswith("PULP_CBC_CMD: PULP_CBC_CMD could not be run: Exec format error")


# ------------------------------------------------------------------ the shadow-price note
def test_the_fixed_integer_note_names_the_integers_of_the_mode() -> None:
    clusters = fixed_integers_note(False)
    units = fixed_integers_note(True)
    assert "training-cluster choices of the MIP (which sites host" in clusters
    assert "whole-unit" not in clusters
    assert "the whole-unit installs and the training-cluster choices of the MIP" in units


def test_a_pulp_incumbent_at_the_time_limit_is_not_called_optimal() -> None:
    class Prob:
        status, sol_status = pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible

    class Built:
        prob = Prob()

    got = pulp_status._status_of("HiGHS", Built(), None, "/nonexistent", is_mip=True, limited=True)
    assert got == (
        Status.time_limit_feasible,
        True,
        "stopped at the time limit with a feasible plan, not proven optimal",
    )


# ------------------------------------------------------------ SCIP at its MIP gap
def test_scip_stopped_at_the_requested_gap_is_optimal_not_time_limited() -> None:
    assert pulp_status.generic_status(
        pulp.LpStatusOptimal,
        pulp.LpSolutionIntegerFeasible,
        is_mip=True,
        time_limited=False,
        note=pulp_status.SCIP_GAP_REACHED,
    ) == (Status.optimal, True)
    # without that note an incumbent PuLP calls "integer feasible" stays time-limited
    assert pulp_status.generic_status(
        pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible, is_mip=True, time_limited=True
    ) == (Status.time_limit_feasible, True)
    if "SCIP_PY" not in solvers.solver_names():
        pytest.skip("pyscipopt not installed")
    ds = load_dataset(TINY)
    r = solve(ds, SolveOptions(solver="SCIP_PY", integer_units=True))
    h = solve(ds, SolveOptions(solver="highs", integer_units=True))
    # SCIP ends this MIP with status gaplimit (PuLP: integer feasible), no time limit given
    assert r.status == Status.optimal and pulp_status.SCIP_GAP_REACHED in r.message
    assert r.objective_usd == pytest.approx(h.objective_usd, rel=1e-4)


def test_a_solve_given_no_time_is_not_run_even_when_the_model_is_built() -> None:
    """A batch solves built (or patched) models: a deadline already passed at the
    solver's start is the time limit, never a plan HiGHS happened to finish in its
    shortest stage (a tiny LP can be solved before HiGHS first looks at the clock)."""
    ds = load_dataset(LP_DATA / "lp_base")
    model = build_model(ds)
    past = time.monotonic() - 1.0
    for session in (None, highs_session.HighsSession(SolveOptions(time_limit_s=1e-6))):
        (r,) = pipeline.solve_model(model, SolveOptions(), session=session, deadline=past)
        assert r.status == Status.time_limit_no_solution and r.objective_usd is None
        assert "ran out before the solver started" in r.message
    (ok,) = pipeline.solve_model(model, SolveOptions(time_limit_s=60.0))
    assert ok.status == Status.optimal
    assert ok.objective_usd == pytest.approx(solve(ds).objective_usd, rel=1e-9)


def test_a_ctrl_c_after_the_solver_ended_is_not_swallowed(tmp_path: Path) -> None:
    """Ctrl-C lands after the solver program ended but before the solve's handler is
    restored (a loaded machine): the solve still raises KeyboardInterrupt."""
    from optimizer.plan.solver_watch import watch_solver

    with pytest.raises(KeyboardInterrupt):
        with watch_solver(str(tmp_path), None, signals=True) as watch:
            # the program has ended; the solve's own check of interrupted has passed
            assert not watch.interrupted
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)  # the handler runs on the main thread and records it
            assert watch.interrupted
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
