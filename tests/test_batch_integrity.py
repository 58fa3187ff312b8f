"""Nothing lost, nothing false (issue 10): a resumed batch never records an empty or
unverifiable case as done, concurrent batches into one folder keep every entry, two
sweeps in one folder are both kept, and local clusters never share a fixed port."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from capacity.dataset import load_dataset
from optimizer.analysis.batch import run_batch
from optimizer.analysis.batch_case import solve_many
from optimizer.analysis.batch_folder import read_batch_manifest
from optimizer.analysis.case_check import case_problem
from optimizer.notebook import read_run
from optimizer.output.atomic import ReportError
from optimizer.output.parquet_tables import RESULT_SCHEMAS
from optimizer.output.run_folder import scenario_dir
from optimizer.plan import highs, highs_session
from optimizer.plan.highs_session import HighsSession
from optimizer.plan.model import build_model
from optimizer.plan.options import SolveOptions, Status
from optimizer.plan.pipeline import solve

TINY = Path(__file__).resolve().parents[1] / "tests" / "data" / "tiny_valid"

SWEEP = f"""
data: {TINY}
scenarios: [neutral, squeeze]
grid:
  base: neutral
  axes:
    - name: demand
      override: {{op: scale, table: demand, column: demand_h100e}}
      levels: [0.5, 1.2]
monte_carlo:
  base: neutral
  samples: 3
  seed: 7
  parameters:
    - name: demand
      override: {{op: scale, table: demand, column: demand_h100e}}
      distribution: {{kind: uniform, low: 0.8, high: 1.2}}
"""
CASES = {"neutral", "squeeze", "grid_demand-0.5", "grid_demand-1.2", "mc_000", "mc_001", "mc_002"}


class _NoSolutionInfo:
    """HiGHS info of a run that ends 'optimal' but holds no primal solution."""

    def __init__(self, info: Any) -> None:
        self._info = info
        self.primal_solution_status = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._info, name)


class _OptimalWithoutSolution:
    """A highspy.Highs proxy whose info says: model optimal, no primal solution."""

    def __init__(self, h: Any) -> None:
        self._h = h

    def getInfo(self) -> Any:  # noqa: N802 - highspy's name
        return _NoSolutionInfo(self._h.getInfo())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._h, name)


def test_warm_run_reported_optimal_without_values_is_solved_again_cold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Root cause of the empty 'done, optimal' case: a warm HiGHS run that says optimal
    but has no primal solution was accepted as optimal with no values (objective null,
    0-row tables). It must be re-solved cold and give the cold objective."""
    from optimizer.analysis import batch_case

    ds = load_dataset(TINY)
    items = [
        [{"op": "scale", "table": "demand", "column": "demand_h100e", "factor": 1.1}],
        [{"op": "scale", "table": "demand", "column": "demand_h100e", "factor": 0.9}],
    ]
    real = highs._read_highs
    calls = {"n": 0}

    def flaky(h: Any, ms: Any, *a: Any, **k: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:  # the first warm run of the session
            h = _OptimalWithoutSolution(h)
        return real(h, ms, *a, **k)

    monkeypatch.setattr(highs_session, "_read_highs", flaky)  # the session's runs
    monkeypatch.setattr(highs, "_read_highs", flaky)  # the cold solves
    batch_case._SESSION_CACHE.clear()
    got = solve_many(ds, items, reuse=True)
    from capacity.scenarios import apply_overrides

    for it, res in zip(items, got, strict=True):
        cold = solve(apply_overrides(ds, it))
        assert res.status == Status.optimal
        assert res.objective_usd == pytest.approx(cold.objective_usd, rel=1e-9)
        assert len(res.tables["costs"]) == len(cold.tables["costs"]) > 0
    # the session's first run is the base's (its anchor); the flaky first warm run is
    # the first case's, redone cold
    assert got[0].timings_s["warm_start"] == 0.0
    assert got[1].timings_s["warm_start"] == 1.0


def test_highs_optimal_without_values_is_an_error_not_optimal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = highs._read_highs

    def without_solution(h: Any, ms: Any, *a: Any, **k: Any) -> Any:
        return real(_OptimalWithoutSolution(h), ms, *a, **k)

    monkeypatch.setattr(highs, "_read_highs", without_solution)  # a solve
    monkeypatch.setattr(highs_session, "_read_highs", without_solution)  # a session's run
    res = solve(load_dataset(TINY))
    assert res.status == Status.error and res.objective_usd is None
    assert "without a primal solution" in res.message
    s = HighsSession(SolveOptions())
    raw, warm = s.run(build_model(load_dataset(TINY)))
    assert raw.status == Status.error and raw.x is None and not warm


def _write_sweep(tmp_path: Path, text: str = SWEEP, name: str = "sweep.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _assert_all_done_verify(out: Path, names: set[str]) -> None:
    man = read_batch_manifest(out)
    for n in names:
        e = man["scenarios"][n]
        assert e["state"] == "done", (n, e.get("error"))
        assert case_problem(out, n, e) is None
        if e["status"] == "optimal":
            assert e["objective_usd"] is not None and e["outcomes"]


def test_empty_done_case_from_an_earlier_run_is_redone(
    tmp_path: Path, scheduler_address: str
) -> None:
    """The reported state: a Monte Carlo case recorded done/optimal with a null
    objective and 0-row tables. A re-run must not skip it forever: it is redone."""
    sweep = _write_sweep(tmp_path)
    out = tmp_path / "out"
    run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    man = read_batch_manifest(out)
    good = dict(man["scenarios"]["mc_001"])
    # forge the empty "done" case: objective null, no outcomes, empty costs table
    costs = pq.read_table(out / "scenario=mc_001" / "costs.parquet")
    pq.write_table(costs.slice(0, 0), out / "scenario=mc_001" / "costs.parquet")
    man["scenarios"]["mc_001"] = {**good, "objective_usd": None, "outcomes": {}}
    (out / "batch_manifest.json").write_text(json.dumps(man))
    assert case_problem(out, "mc_001", man["scenarios"]["mc_001"]) is not None
    r = run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    assert r.n_done == 1 and r.n_skipped == len(CASES) - 1
    e = read_batch_manifest(out)["scenarios"]["mc_001"]
    assert e["objective_usd"] == pytest.approx(good["objective_usd"], rel=1e-9)
    _assert_all_done_verify(out, CASES)


def test_case_check_names_each_defect(tmp_path: Path, scheduler_address: str) -> None:
    sweep = _write_sweep(tmp_path)
    out = tmp_path / "out"
    run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    e = read_batch_manifest(out)["scenarios"]["neutral"]
    assert case_problem(out, "neutral", e) is None
    assert "no objective" in str(case_problem(out, "neutral", {**e, "objective_usd": None}))
    wrong = {**e, "objective_usd": e["objective_usd"] * 1.01}
    assert "costs sum to" in str(case_problem(out, "neutral", wrong))
    bad_outcome = {**e, "outcomes": {**e["outcomes"], "unmet_h100e": -1.0}}
    assert "unmet_h100e" in str(case_problem(out, "neutral", bad_outcome))
    (scenario_dir(out, "neutral") / "fleet.parquet").unlink()
    assert "fleet.parquet" in str(case_problem(out, "neutral", e))
    assert len(RESULT_SCHEMAS) == len(e["files"])


def _kill_resume_once(sweep: Path, out: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    cmd = [
        str(Path(sys.executable).parent / "capacity"),
        "batch",
        str(sweep),
        "-w",
        "2",
        "-o",
        str(out),
    ]
    p = subprocess.Popen(cmd, env=env, start_new_session=True, stdout=subprocess.DEVNULL)
    t0 = time.time()
    try:
        while time.time() - t0 < 120 and p.poll() is None:
            txt = (out / "batch_manifest.json").read_text() if out.exists() else ""
            if '"state": "done"' in txt:
                break
            time.sleep(0.02)
    except OSError:
        pass
    finally:
        os.killpg(p.pid, signal.SIGKILL)  # the batch and its Dask workers, at once
        p.wait()
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
@pytest.mark.usefixtures("wall_clock_alone")  # its worker processes: not beside them
def test_kill_and_resume_never_records_an_unverifiable_case(tmp_path: Path) -> None:
    """kill -9 the batch after its first case is written, then run the same command
    again; repeated (CAPACITY_KILL_RESUME_RUNS times, default 2)."""
    sweep = _write_sweep(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for i in range(int(os.environ.get("CAPACITY_KILL_RESUME_RUNS", "2"))):
        out = tmp_path / f"out{i}"
        second = _kill_resume_once(sweep, out, env)
        assert second.returncode == 0, second.stdout + second.stderr
        _assert_all_done_verify(out, CASES)


def test_two_concurrent_batches_into_one_folder_keep_every_case(tmp_path: Path) -> None:
    """Two different sweeps, same folder, same time: both sweeps' cases stay in the
    manifest and in batch_summary.csv (the folder keeps both sweeps, see batch_folder)."""
    a = _write_sweep(tmp_path, SWEEP.split("grid:")[0], "a.yaml")  # neutral, squeeze
    b_text = SWEEP.split("scenarios:")[0] + "grid:" + SWEEP.split("grid:")[1].split("monte")[0]
    b = _write_sweep(tmp_path, b_text, "b.yaml")  # the 2-level grid
    out = tmp_path / "out"
    errors: list[BaseException] = []

    def go(p: Path) -> None:
        try:
            run_batch(p, out, workers=1, progress=False)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(p,)) for p in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    want = {"neutral", "squeeze", "grid_demand-0.5", "grid_demand-1.2"}
    assert set(read_batch_manifest(out)["scenarios"]) == want
    _assert_all_done_verify(out, want)
    import pandas as pd

    assert set(pd.read_csv(out / "batch_summary.csv")["scenario"]) == want
    # re-running the first sweep keeps the second's entries
    r = run_batch(a, out, workers=1, progress=False)
    assert r.n_skipped == 2
    assert set(read_batch_manifest(out)["scenarios"]) == want
    assert set(pd.read_csv(out / "batch_summary.csv")["scenario"]) == want


def test_local_clusters_do_not_take_a_fixed_port() -> None:
    """Dask's HTTP server must not bind the fixed port 8787 (two runs would collide)."""
    import warnings

    from optimizer.analysis.dask_cluster import ClusterOptions, open_client

    opts = ClusterOptions(workers=1, security="none")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Port 8787 is already in use" would raise
        with open_client(opts) as c1, open_client(opts) as c2:
            ports = set()
            for c in (c1, c2):
                info = c.scheduler_info()
                ports.add(info["services"].get("dashboard"))
            assert 8787 not in ports and len(ports) == 2


def test_clusters_started_at_once_each_get_the_local_configuration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two threads start local clusters at the same time (two batches from one notebook):
    the starts do not overlap, each scheduler runs with the local configuration (no
    retried case) rather than the defaults the other thread's ``dask.config.set``
    restored, and the process's configuration is the same afterwards as before."""
    import dask
    import distributed

    from optimizer.analysis.dask_cluster import LOCAL_CLUSTER_CONFIG, ClusterOptions, open_client

    key = "distributed.scheduler.allowed-failures"
    before = dask.config.get(key)
    starting: list[int] = []
    overlap: list[int] = []
    config_at_start: list[int] = []
    real = distributed.LocalCluster

    class SlowStart(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            starting.append(1)
            overlap.append(len(starting))
            time.sleep(0.5)  # a loaded machine: the other thread gets in meanwhile
            config_at_start.append(dask.config.get(key))
            try:
                super().__init__(*args, **kwargs)
            finally:
                starting.pop()

    monkeypatch.setattr(distributed, "LocalCluster", SlowStart)
    opts = ClusterOptions(workers=1, security="none")
    seen: list[int] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def go() -> None:
        try:
            barrier.wait(timeout=30)
            with open_client(opts) as client:
                seen.append(
                    client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.allowed_failures)
                )
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=go) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    want = LOCAL_CLUSTER_CONFIG[key]
    assert max(overlap) == 1
    assert config_at_start == [want, want]
    assert seen == [want, want]
    assert dask.config.get(key) == before


# 3 cases on the tiny data; solved on one in-process cluster shared by the runs below
IDENTITY_SWEEP = f"""
data: {TINY}
scenarios: [neutral, squeeze]
grid:
  base: neutral
  axes:
    - name: demand
      override: {{op: scale, table: demand, column: demand_h100e}}
      levels: [1.2]
"""
IDENTITY_CASES = {"neutral", "squeeze", "grid_demand-1.2"}


def test_a_case_is_done_only_with_a_verified_plan_for_its_options(
    tmp_path: Path, scheduler_address: str
) -> None:
    """The reported run: a time-limited batch ended "0 solved, 10 failed" but marked its
    cases done, and a re-run with a longer limit skipped them all (no plan anywhere).
    A case without a plan is never done, and the solve options are part of its key."""
    sweep = _write_sweep(tmp_path, IDENTITY_SWEEP)
    out = tmp_path / "out"

    def run(options: SolveOptions) -> Any:
        return run_batch(sweep, out, scheduler=scheduler_address, options=options, progress=False)

    limited = SolveOptions(time_limit_s=1e-6)  # no solve finishes in a microsecond
    r = run(limited)
    assert (r.n_done, r.n_failed, r.n_skipped) == (0, 3, 0)
    man = read_batch_manifest(out)["scenarios"]
    for n in IDENTITY_CASES:
        e = man[n]
        assert (e["state"], e["status"], e["objective_usd"]) == (
            "no_plan",
            "time_limit_no_solution",
            None,
        )
        assert e["options"]["time_limit_s"] == 1e-6 and e["options"]["solver"] == "highs"
    # the same options again: nothing is skipped, the cases are tried again
    r = run(limited)
    assert (r.n_done, r.n_failed, r.n_skipped) == (0, 3, 0)
    # no time limit: every case is solved (before the fix: "0 solved, 0 failed,
    # 3 skipped (already done)", exit 0, and no plan)
    r = run(SolveOptions())
    assert (r.n_done, r.n_failed, r.n_skipped) == (3, 0, 0)
    _assert_all_done_verify(out, IDENTITY_CASES)
    want = {n: e["objective_usd"] for n, e in read_batch_manifest(out)["scenarios"].items()}
    ds = load_dataset(TINY)
    assert want["neutral"] == pytest.approx(solve(ds).objective_usd, rel=1e-9)
    # same options and an optimal plan: skipped
    r = run(SolveOptions(time_limit_s=None))
    assert (r.n_done, r.n_failed, r.n_skipped) == (0, 0, 3)
    # another formulation: a new case each, redone
    r = run(SolveOptions(formulation="reference"))
    assert (r.n_done, r.n_failed, r.n_skipped) == (3, 0, 0)
    # another time limit keeps the optimal plans: a re-run with a limit no solve meets
    # replaced each with "time_limit_no_solution" and exit 1 (the plans lost)
    for limit in (600.0, 1e-6):
        r = run(SolveOptions(formulation="reference", time_limit_s=limit))
        assert (r.n_done, r.n_failed, r.n_skipped) == (0, 0, 3)
        assert set(r.summary["status"]) == {"optimal"}
    man = read_batch_manifest(out)["scenarios"]
    assert {n: man[n]["objective_usd"] for n in IDENTITY_CASES} == pytest.approx(want, rel=1e-6)
    assert {man[n]["options"]["time_limit_s"] for n in IDENTITY_CASES} == {None}
    _assert_all_done_verify(out, IDENTITY_CASES)


def test_a_plan_the_time_limit_stopped_is_redone_under_another_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A feasible plan the limit stopped is redone under a longer limit only (a re-run with
    --time-limit 1 replaced it with no plan); an optimal plan is kept for any limit (the
    key leaves the limit out, so both reach this check)."""
    from optimizer.analysis import batch_resume

    monkeypatch.setattr(batch_resume, "case_problem", lambda *a: None)  # files verify
    stopped = {
        "state": "done",
        "key": "k",
        "status": "time_limit_feasible",
        "options": {"time_limit_s": 60.0},
    }
    optimal = {**stopped, "status": "optimal"}
    assert batch_resume.is_done(tmp_path, "c", stopped, "k", 60.0)
    # a shorter limit would replace the plan with a worse one or none: kept
    assert batch_resume.is_done(tmp_path, "c", stopped, "k", 1.0)
    # a longer one, or none, may get further: redone
    assert not batch_resume.is_done(tmp_path, "c", stopped, "k", 600.0)
    assert not batch_resume.is_done(tmp_path, "c", stopped, "k", None)
    assert all(batch_resume.is_done(tmp_path, "c", optimal, "k", t) for t in (60.0, 1.0, None))
    assert not batch_resume.is_done(tmp_path, "c", optimal, "other key", 60.0)


def test_case_key_changes_with_each_solve_option() -> None:
    from optimizer.analysis.batch_resume import case_options, key_options
    from optimizer.analysis.sweep_cases import SweepCase

    case = SweepCase("neutral", "scenario", base="neutral")

    def key(o: SolveOptions) -> str:
        return case.key("h", key_options(case_options(o)))

    base = key(SolveOptions())
    # the time limit is not the case's identity (an optimum is the same whatever the limit)
    assert base == key(SolveOptions(time_limit_s=60)) == key(SolveOptions(time_limit_s=1e-6))
    changed = [
        SolveOptions(solver="PULP_CBC_CMD"),
        SolveOptions(threads=2),
        SolveOptions(integer_units=True),
        SolveOptions(clusters=True),
        SolveOptions(mip_gap=1e-3),
        SolveOptions(mip_start=False),
        SolveOptions(explain_infeasible=False),
        SolveOptions(check_tolerance=1e-5),
        SolveOptions(formulation="reference"),
    ]
    keys = {key(o) for o in changed}
    assert len(keys) == len(changed) and base not in keys


def test_overlapping_quiet_log_windows_restore_the_levels() -> None:
    """Two runs silence Dask's client logs and end in the other order: the levels are
    silent while either runs and are the user's own once both have ended."""
    import logging

    from optimizer.analysis.dask_cluster import _quiet_dask_logs

    log = logging.getLogger("distributed.client")
    old = log.level
    log.setLevel(logging.WARNING)
    try:
        a, b = _quiet_dask_logs(), _quiet_dask_logs()
        a.__enter__()
        b.__enter__()
        a.__exit__(None, None, None)
        assert log.level == logging.CRITICAL  # b still runs
        b.__exit__(None, None, None)
        assert log.level == logging.WARNING
    finally:
        log.setLevel(old)


def test_session_takes_a_copied_matrix_with_equal_values_warm() -> None:
    """The reported failure: a model whose matrix is a new object with the same
    values (a tornado case that changes only bounds) made the session read zero
    changed coefficients, which scipy answers with a sparse matrix, and the batch
    case failed with "setting an array element with a sequence". It is pushed warm
    and solves to the cold optimum."""
    from dataclasses import replace

    model = build_model(load_dataset(TINY))
    s = HighsSession(SolveOptions())
    first, _ = s.run(model)
    again, warm = s.run(replace(model, matrix=model.matrix.copy()))
    assert warm and again.status == Status.optimal
    assert first.solver_objective is not None
    assert again.solver_objective == pytest.approx(first.solver_objective, rel=1e-9)


def test_a_case_rewritten_over_an_earlier_one_never_leaves_its_tables_mixed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scheduler_address: str
) -> None:
    """A re-solved case wrote its tables in place one by one: a write error at the
    fourth table left three new tables beside the earlier ones, and the folder read as
    one plan. Now the earlier folder is not touched (not one file replaced) while the
    new one is written, and when the write fails nothing of it is left and the earlier
    folder goes too: the case is failed, and a glob over scenario=* read the earlier
    run's plan as current."""
    sweep = _write_sweep(tmp_path, f"data: {TINY}\nscenarios: [neutral]\n")
    out = tmp_path / "out"
    run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    sdir = scenario_dir(out, "neutral")
    before = {p.name: p.stat().st_ino for p in sdir.iterdir()}
    man = read_batch_manifest(out)
    man["scenarios"]["neutral"]["key"] = "0" * 64  # the data changed: the case is redone
    (out / "batch_manifest.json").write_text(json.dumps(man))
    real_write = pq.write_table
    calls: list[object] = []

    def failing_write(table: Any, where: object, **kw: Any) -> None:
        calls.append(where)
        if len(calls) == 4:
            raise OSError(28, "No space left on device")
        real_write(table, where, **kw)

    monkeypatch.setattr(pq, "write_table", failing_write)
    r = run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    assert r.n_failed == 1 and len(calls) == 4
    e = read_batch_manifest(out)["scenarios"]["neutral"]
    assert e["state"] == "failed" and "No space left on device" in e["error"]
    assert not sdir.exists()  # neither the earlier plan nor a part of the new one
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".scenario")) == []
    monkeypatch.setattr(pq, "write_table", real_write)
    with pytest.raises(ReportError, match="no scenario=<name> folder"):
        read_run(out)
    r = run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    assert r.n_done == 1
    after = {p.name: p.stat().st_ino for p in sdir.iterdir()}
    assert after.keys() == before.keys()  # every table again (inode numbers may be reused)
    _assert_all_done_verify(out, {"neutral"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_run(out)["neutral"].objective_usd == pytest.approx(e["objective_usd"])


def test_what_a_killed_writer_left_is_cleared_and_a_set_aside_folder_put_back(
    tmp_path: Path,
) -> None:
    from optimizer.analysis.batch_folder import remove_stale_temp_files

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    gone, live = int(dead.stdout), os.getpid()
    out = tmp_path / "out"
    (out / "scenario=a").mkdir(parents=True)
    made = {
        "tmp": out / f".batch_manifest.json.tmp-{gone}-abc",
        "tmp_live": out / f".batch_manifest.json.tmp-{live}-abc",
        "in_case": out / "scenario=a" / f".costs.parquet.tmp-{gone}-ff",
    }
    for p in made.values():
        p.write_text("x")
    stage = out / f".scenario=a.partial-{gone}"
    stage_live = out / f".scenario=b.partial-{live}"
    old_beside = out / f".scenario=a.old-{gone}"  # the new folder moved in: old is spare
    old_alone = out / f".scenario=c.old-{gone}"  # killed between the renames
    for d in (stage, stage_live, old_beside, old_alone):
        d.mkdir()
        (d / "fleet.parquet").write_text("x")
    removed = remove_stale_temp_files(out)
    assert removed == sorted([made["tmp"], made["in_case"], stage, old_beside])
    assert made["tmp_live"].exists() and stage_live.exists()
    assert (out / "scenario=c" / "fleet.parquet").exists() and not old_alone.exists()


def test_a_new_planner_version_redoes_every_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scheduler_address: str
) -> None:
    """The case key left the planner out: after an upgrade (a model fix), a re-run kept
    every plan the older model made and reported the folder as one batch."""
    from optimizer.output import manifest

    sweep = _write_sweep(tmp_path, f"data: {TINY}\nscenarios: [neutral, squeeze]\n")
    out = tmp_path / "out"
    monkeypatch.setattr(manifest, "package_version", lambda: "1.0.0")
    assert run_batch(sweep, out, scheduler=scheduler_address, progress=False).n_done == 2
    again = run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    assert (again.n_done, again.n_skipped) == (0, 2)  # the same planner: skipped
    monkeypatch.setattr(manifest, "package_version", lambda: "1.1.0")
    upgraded = run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    assert (upgraded.n_done, upgraded.n_skipped) == (2, 0)
    # an editable install's code changes under the same version (a resumed batch kept
    # the plans of the code before a fix)
    monkeypatch.setattr(manifest, "code_digest", lambda: "0123456789ab")
    edited = run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    assert (edited.n_done, edited.n_skipped) == (2, 0)


def test_another_solver_version_redoes_every_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scheduler_address: str
) -> None:
    """On a tied optimum another HiGHS may return another plan: a resume after a solver
    upgrade kept the old solver's plans beside the new one's."""
    from optimizer.plan import solvers

    sweep = _write_sweep(tmp_path, f"data: {TINY}\nscenarios: [neutral, squeeze]\n")
    out = tmp_path / "out"
    assert run_batch(sweep, out, scheduler=scheduler_address, progress=False).n_done == 2
    monkeypatch.setattr(solvers, "solver_version", lambda name: "99.0.0")
    upgraded = run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    assert (upgraded.n_done, upgraded.n_skipped) == (2, 0)


def test_the_code_digest_follows_the_sources(tmp_path: Path) -> None:
    from optimizer.output.manifest import code_digest, planner_fingerprint

    assert planner_fingerprint().endswith("+" + code_digest())
    assert len(code_digest()) == 12 and int(code_digest(), 16) >= 0


def _tiny_copy(tmp_path: Path, name: str, demand_scale: float) -> Path:
    """A copy of the tiny dataset with every demand scaled (other data, other hash)."""
    import shutil

    import pandas as pd

    d = tmp_path / name
    shutil.copytree(TINY, d)
    dem = pd.read_csv(d / "demand.csv")
    dem["demand_h100e"] = dem["demand_h100e"] * demand_scale
    dem.to_csv(d / "demand.csv", index=False)
    return d


def test_an_interrupted_rerun_after_a_data_edit_is_not_read_as_one_dataset(
    tmp_path: Path, scheduler_address: str
) -> None:
    """The reported state: a re-run after a data edit, interrupted after its first
    case, left the other case as the old data's plan, still 'done'; batch_summary.csv
    kept the first run's rows; read_run read both as one batch without a word."""
    import pandas as pd

    data = _tiny_copy(tmp_path, "data", 1.0)
    sweep = _write_sweep(tmp_path, f"data: {data}\nscenarios: [neutral, squeeze]\n")
    out = tmp_path / "out"
    first = run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    old = first.summary.set_index("scenario")["objective_usd"]
    dem = pd.read_csv(data / "demand.csv")
    dem["demand_h100e"] = dem["demand_h100e"] * 0.5  # the edit
    dem.to_csv(data / "demand.csv", index=False)
    new_hash = load_dataset(data).hash

    def stop_after_first(cr: Any) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_batch(
            sweep,
            out,
            scheduler=scheduler_address,
            progress=False,
            reuse=False,
            on_case=stop_after_first,
        )
    man = read_batch_manifest(out)["scenarios"]
    redone = [n for n, e in man.items() if e.get("dataset_hash") == new_hash]
    assert len(redone) == 1  # the one case the interrupted run reached
    (kept,) = set(man) - set(redone)
    summary = pd.read_csv(out / "batch_summary.csv").set_index("scenario")
    assert summary.loc[kept, "state"] == "other_run"  # not the old data's plan as this run's
    assert pd.isna(summary.loc[kept, "objective_usd"])
    assert summary.loc[redone[0], "state"] == "done"
    assert summary.loc[redone[0], "objective_usd"] != pytest.approx(old[redone[0]], rel=1e-6)
    with pytest.warns(UserWarning, match="solved on different data") as caught:
        read_run(out)
    text = str(caught[0].message)
    new_tables = load_dataset(data).tables_hash
    assert f"data {new_tables[:12]}, options " in text and redone[0] in text and kept in text
    done = run_batch(
        sweep, out, scheduler=scheduler_address, progress=False
    )  # resumed: one plan, one data
    assert (done.n_done, done.n_skipped) == (1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_run(out)


def test_a_second_batch_with_other_data_is_not_reported_as_this_ones(
    tmp_path: Path, scheduler_address: str
) -> None:
    """Two batches with different data and the same case names, one folder: the first
    printed the second's plan of a case as its own result."""
    a_data, b_data = _tiny_copy(tmp_path, "a", 1.0), _tiny_copy(tmp_path, "b", 0.5)
    a = _write_sweep(tmp_path, f"data: {a_data}\nscenarios: [neutral, squeeze]\n", "a.yaml")
    b = _write_sweep(tmp_path, f"data: {b_data}\nscenarios: [neutral, squeeze]\n", "b.yaml")
    out = tmp_path / "out"
    inner: list[Any] = []

    def b_runs_meanwhile(cr: Any) -> None:  # B writes both cases after A's first
        if not inner:
            inner.append(
                run_batch(b, out, scheduler=scheduler_address, progress=False, reuse=False)
            )

    ra = run_batch(
        a, out, scheduler=scheduler_address, progress=False, reuse=False, on_case=b_runs_meanwhile
    )
    rb = inner[0]
    a_rows, b_rows = ra.summary.set_index("scenario"), rb.summary.set_index("scenario")
    man = read_batch_manifest(out)["scenarios"]
    a_hash, b_hash = load_dataset(a_data).hash, load_dataset(b_data).hash
    by_a = {n for n, e in man.items() if e["dataset_hash"] == a_hash}
    by_b = {n for n, e in man.items() if e["dataset_hash"] == b_hash}
    assert len(by_a) == len(by_b) == 1  # A's second case came after B's run
    (only_b,) = by_b
    assert a_rows.loc[only_b, "state"] == "other_run"  # not B's plan as A's result
    # which sweep wrote each row's plan: B's for the case B wrote last, A's for the other
    (only_a,) = by_a
    assert a_rows.loc[only_b, "sweep"] == b_rows.loc[only_b, "sweep"] == man[only_b]["sweep"]
    assert a_rows.loc[only_a, "sweep"] == man[only_a]["sweep"] != man[only_b]["sweep"]
    assert pd_isna(a_rows.loc[only_b, "objective_usd"])
    # A's run is not a success: one of its plans is B's (its summary said 2 solved, exit 0)
    assert (ra.n_done, ra.n_failed, ra.n_replaced) == (2, 0, 1)
    assert (rb.n_done, rb.n_replaced) == (2, 0)  # B ended before A wrote its second case
    from rich.console import Console

    from optimizer.analysis.batch_render import render_batch

    console = Console(record=True, width=300)
    render_batch(ra, console)
    line = " ".join(console.export_text().split())
    assert "2 solved, 0 failed or not optimal, 0 skipped (already done), 1 since replaced" in line
    assert b_rows.loc[only_b, "objective_usd"] == pytest.approx(man[only_b]["objective_usd"])
    with pytest.warns(UserWarning, match="solved on different data"):
        read_run(out)


def pd_isna(x: Any) -> bool:
    import pandas as pd

    return bool(pd.isna(x))


def test_a_written_case_is_checked_and_entered_while_the_folder_is_locked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scheduler_address: str
) -> None:
    """Two identical batches into one folder: 1 run in 4 recorded a false 'written case
    does not verify', its check having read the folder while the other batch swapped
    its own copy in. The check (and the entry) now run while the folder's lock is held:
    another process cannot take the lock during the check."""
    from filelock import FileLock, Timeout

    from optimizer.analysis import batch_record

    out = tmp_path / "out"
    held: list[bool] = []
    real = batch_record.verify_or_fail

    def check(out_dir: Path, name: str, entry: dict[str, Any]) -> None:
        other = FileLock(str(out_dir / ".batch.lock"))  # another writer's lock object
        try:
            other.acquire(timeout=0)
        except Timeout:
            held.append(True)
        else:
            other.release()
            held.append(False)
        real(out_dir, name, entry)

    monkeypatch.setattr(batch_record, "verify_or_fail", check)
    sweep = _write_sweep(tmp_path, f"data: {TINY}\nscenarios: [neutral, squeeze]\n")
    assert run_batch(sweep, out, scheduler=scheduler_address, progress=False).n_done == 2
    assert held == [True, True]


def test_read_run_with_data_applies_each_cases_own_overrides(
    tmp_path: Path, scheduler_address: str
) -> None:
    """read_run(out, data=...) applied only named scenarios: a grid case with chip capex
    x3 was read with the base data's unit capex, its capex statistic a third of the
    cash the plan spent. Each case's inputs.yaml is now applied; other data warns."""
    sweep = _write_sweep(
        tmp_path,
        f"""
data: {TINY}
grid:
  base: neutral
  axes:
    - name: capex
      override: {{op: scale, table: chips, column: capex_usd_per_chip}}
      levels: [1, 3]
""",
    )
    out = tmp_path / "out"
    assert run_batch(sweep, out, scheduler=scheduler_address, progress=False).n_done == 2
    plans = read_run(out, data=TINY)
    for name in ("grid_capex-1", "grid_capex-3"):
        plan = plans[name]
        stat = plan.statistics.capex(groupby=["term"]).set_index("term")["capex_usd"]
        costs = plan.tables["costs"]
        cash = costs[costs["term"] == "chip_capex"]["cash_usd"].sum()
        assert cash > 0
        assert stat["chip_capex"] == pytest.approx(cash, rel=1e-9)
    other = _tiny_copy(tmp_path, "other", 0.5)
    with pytest.warns(UserWarning, match="solved from data with content hash"):
        read_run(out, data=other)
    with warnings.catch_warnings():  # the same tables, other scenarios: the same data
        warnings.simplefilter("error")
        read_run(out, data=load_dataset(TINY).with_scenarios({}, "none.yaml"))
    # a dataset with a scenario applied is not re-applied: the x3 case is other data
    from capacity.scenarios import apply_scenario

    applied = apply_scenario(load_dataset(TINY), "neutral")
    with pytest.warns(UserWarning, match="has scenario 'neutral' applied") as caught:
        read_run(out, data=applied)
    assert len(caught) == 1 and "grid_capex-3" in str(caught[0].message)


def test_batch_cases_carry_the_non_unique_duals_count_and_the_note(
    tmp_path: Path, scheduler_address: str
) -> None:
    """Two runs of one batch listed different binding limits for the same plans (the
    duals of a degenerate plan depend on the warm start), and the batch output, unlike a
    single solve, said nothing. Each case now counts its limits used to the full at a
    zero shadow price, and the printed summary carries the note."""
    import pandas as pd

    from optimizer.analysis.batch_render import degenerate_cases_note
    from optimizer.output.binding_limits import LIMIT_FAMILIES

    sweep = _write_sweep(tmp_path, f"data: {TINY}\nscenarios: [neutral, squeeze]\n")
    out = tmp_path / "out"
    r = run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    rows = r.summary.set_index("scenario")
    for name in ("neutral", "squeeze"):
        sp = pd.read_parquet(out / f"scenario={name}" / "shadow_prices.parquet")
        zero = (
            sp["binding"] & sp["family"].isin(LIMIT_FAMILIES) & (sp["shadow_price"].abs() <= 1e-6)
        )
        assert rows.loc[name, "degenerate_limits"] == int(zero.sum())
    summary = pd.DataFrame({"degenerate_limits": [0, 3, None, 1]})
    assert degenerate_cases_note(summary).startswith("Note: 2 case(s) have limits")
    assert degenerate_cases_note(summary.iloc[[0, 2]]) == ""


def test_a_folder_of_cost_and_margin_plans_or_of_one_data_reads_as_it_is(
    tmp_path: Path, scheduler_address: str
) -> None:
    """Two kinds the per-case data hash missed or over-flagged: a re-run with the margin
    objective, interrupted, left cost plans beside margin ones and read_run said
    nothing; an unrelated scenario added to scenarios.yaml (the same tables) was
    called other data."""
    import shutil

    from optimizer.plan.options import SolveOptions

    data = tmp_path / "data"
    shutil.copytree(TINY, data)
    sweep = _write_sweep(tmp_path, f"data: {data}\nscenarios: [neutral, squeeze]\n")
    out = tmp_path / "out"
    run_batch(sweep, out, scheduler=scheduler_address, progress=False)

    def stop_after_first(cr: Any) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        margin = SolveOptions(objective="margin")
        run_batch(
            sweep,
            out,
            scheduler=scheduler_address,
            progress=False,
            options=margin,
            on_case=stop_after_first,
        )
    with pytest.warns(UserWarning, match="different data or options") as caught:
        read_run(out)
    assert '"objective": "margin"' in str(caught[0].message)
    assert '"objective": "cost"' in str(caught[0].message)
    again = tmp_path / "again"
    run_batch(sweep, again, scheduler=scheduler_address, progress=False)
    with (data / "scenarios.yaml").open("a", encoding="utf-8") as f:
        f.write("  unrelated:\n    description: x\n    overrides: []\n")
    more = _write_sweep(tmp_path, f"data: {data}\nscenarios: [unrelated]\n", "more.yaml")
    run_batch(more, again, scheduler=scheduler_address, progress=False)
    with warnings.catch_warnings():  # the same tables: one dataset, whatever its scenarios
        warnings.simplefilter("error")
        assert len(read_run(again)) == 3


def test_the_summary_is_rewritten_before_the_first_solve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scheduler_address: str
) -> None:
    """A batch killed outright (kill -9, or a hang-up before it was handled) after a
    data edit left batch_summary.csv with the earlier data's results as current. The
    summary is now written before any solve: the cases to redo read other_run."""
    import pandas as pd

    from optimizer.analysis import batch as batch_module

    data = _tiny_copy(tmp_path, "data", 1.0)
    sweep = _write_sweep(tmp_path, f"data: {data}\nscenarios: [neutral, squeeze]\n")
    out = tmp_path / "out"
    run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    assert set(pd.read_csv(out / "batch_summary.csv")["state"]) == {"done"}
    dem = pd.read_csv(data / "demand.csv")
    dem["demand_h100e"] = dem["demand_h100e"] * 0.5
    dem.to_csv(data / "demand.csv", index=False)
    seen: list[pd.DataFrame] = []

    def killed(*args: Any, **kw: Any) -> None:  # what the file says when the solves start
        seen.append(pd.read_csv(out / "batch_summary.csv"))
        raise KeyboardInterrupt

    monkeypatch.setattr(batch_module, "solve_on_dask", killed)
    with pytest.raises(KeyboardInterrupt):
        run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    (at_start,) = seen
    assert set(at_start["state"]) == {"other_run"}
    assert at_start["objective_usd"].isna().all()


def test_read_run_names_done_cases_whose_folders_are_gone(
    tmp_path: Path, scheduler_address: str
) -> None:
    """A case folder deleted after it was recorded done (by hand, or mid-run by another
    process) left read_run one plan short of the manifest, without a word."""
    import shutil

    sweep = _write_sweep(tmp_path, f"data: {TINY}\nscenarios: [neutral, squeeze]\n")
    out = tmp_path / "out"
    run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    shutil.rmtree(out / "scenario=squeeze")
    with pytest.warns(UserWarning, match=r"records 1 case\(s\) as done whose folders are missing"):
        back = read_run(out)
    assert list(back) == ["neutral"]
    with warnings.catch_warnings():  # every done case has its folder: nothing to say
        warnings.simplefilter("error")
        run_batch(sweep, out, scheduler=scheduler_address, progress=False)
        assert list(read_run(out)) == ["neutral", "squeeze"]


def test_a_table_copied_from_another_case_is_redone_on_resume(
    tmp_path: Path, scheduler_address: str
) -> None:
    """A resume kept a case holding another case's build_out as done (its own checks
    passed), and read_run then refused the folder: the resume reads the footers too."""
    import shutil

    sweep = _write_sweep(tmp_path, f"data: {TINY}\nscenarios: [neutral, squeeze]\n")
    out = tmp_path / "out"
    run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    shutil.copy(out / "scenario=neutral" / "build_out.parquet", out / "scenario=squeeze")
    problem = case_problem(out, "squeeze", read_batch_manifest(out)["scenarios"]["squeeze"])
    assert problem is not None and "of scenario 'neutral', not of 'squeeze'" in problem
    run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    back = read_run(out)
    assert list(back) == ["neutral", "squeeze"]
    assert case_problem(out, "squeeze", read_batch_manifest(out)["scenarios"]["squeeze"]) is None


def test_a_case_folder_of_other_data_is_redone_on_resume(
    tmp_path: Path, scheduler_address: str
) -> None:
    """Two batches with the same --out name (so one run_id) over data A and B: B's case
    folder copied over A's, or one table of it, was kept as done on resume (the costs
    within 1e-6 of A's objective), and read_run said nothing."""
    import shutil

    runs = {}
    for name, scale in (("a", 1.0), ("b", 1.0000001)):  # costs within 1e-6
        (tmp_path / name).mkdir()
        data = _tiny_copy(tmp_path, f"data_{name}", scale)
        sweep = _write_sweep(tmp_path / name, f"data: {data}\nscenarios: [neutral, squeeze]\n")
        out = tmp_path / name / "batch_out"
        run_batch(sweep, out, scheduler=scheduler_address, progress=False)
        runs[name] = (sweep, out)
    (sweep_a, out_a), (_, out_b) = runs["a"], runs["b"]
    entries = read_batch_manifest(out_a)["scenarios"]
    # B's whole neutral folder in place of A's: one dataset, not the one A solved on
    shutil.rmtree(out_a / "scenario=neutral")
    shutil.copytree(out_b / "scenario=neutral", out_a / "scenario=neutral")
    problem = case_problem(out_a, "neutral", entries["neutral"])
    assert problem is not None and "the case was solved on" in problem
    with pytest.warns(UserWarning, match=r"1 case folder\(s\) hold a plan of other data"):
        read_run(out_a)
    # one table of B's in A's squeeze folder: one run_id, two datasets
    shutil.copy(out_b / "scenario=squeeze" / "fleet.parquet", out_a / "scenario=squeeze")
    problem = case_problem(out_a, "squeeze", entries["squeeze"])
    assert problem is not None and "plans of 2 datasets" in problem
    again = run_batch(sweep_a, out_a, scheduler=scheduler_address, progress=False)
    assert (again.n_done, again.n_skipped) == (2, 0)
    for case in ("neutral", "squeeze"):
        entry = read_batch_manifest(out_a)["scenarios"][case]
        assert case_problem(out_a, case, entry) is None


def test_a_scenario_edit_redoes_only_the_cases_that_start_from_it(
    tmp_path: Path, scheduler_address: str
) -> None:
    """Keyed on the whole dataset's hash, editing a description in scenarios.yaml, or
    the overrides of one scenario, redid every case of the folder."""
    data = _tiny_copy(tmp_path, "data", 1.0)
    sweep = _write_sweep(tmp_path, f"data: {data}\nscenarios: [neutral, squeeze]\n")
    out = tmp_path / "out"
    assert run_batch(sweep, out, scheduler=scheduler_address, progress=False).n_done == 2
    yaml = data / "scenarios.yaml"
    yaml.write_text(yaml.read_text().replace("less CoWoS, later grid", "a squeeze"))
    again = run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    assert (again.n_done, again.n_skipped) == (0, 2)  # a description: nothing to redo
    before = read_batch_manifest(out)["scenarios"]
    yaml.write_text(yaml.read_text().replace("factor: 1e-1", "factor: 2e-1"))
    edited = run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    assert (edited.n_done, edited.n_skipped) == (1, 1)
    after = read_batch_manifest(out)["scenarios"]
    for field in ("key", "finished_utc", "files"):  # neutral is not solved again
        assert after["neutral"][field] == before["neutral"][field]
    assert after["squeeze"]["key"] != before["squeeze"]["key"]
    # the tables themselves: every case again
    import pandas as pd

    dem = pd.read_csv(data / "demand.csv")
    dem["demand_h100e"] = dem["demand_h100e"] * 1.1
    dem.to_csv(data / "demand.csv", index=False)
    tables = run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    assert (tables.n_done, tables.n_skipped) == (2, 0)


def test_an_interrupted_rerun_after_a_scenario_edit_is_not_read_as_one_run(
    tmp_path: Path, scheduler_address: str
) -> None:
    """A case's key holds the overrides of the scenario it starts from, so an edit of
    'squeeze' redoes its cases only; interrupted after the first, the other kept the
    old squeeze's plan, 'done', and read_run (grouping by the tables alone) said nothing."""
    data = _tiny_copy(tmp_path, "data", 1.0)
    grid = (
        "grid:\n  base: squeeze\n  axes:\n    - name: pue\n"
        "      override: {op: scale, table: sites, column: pue_air}\n      levels: [1.0, 1.1]\n"
    )
    sweep = _write_sweep(tmp_path, f"data: {data}\nscenarios: [neutral]\n" + grid)
    out = tmp_path / "out"
    assert run_batch(sweep, out, scheduler=scheduler_address, progress=False).n_done == 3
    yaml = data / "scenarios.yaml"
    yaml.write_text(yaml.read_text().replace("factor: 1e-1", "factor: 2e-1"))

    def stop_after_first(cr: Any) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_batch(sweep, out, scheduler=scheduler_address, progress=False, on_case=stop_after_first)
    with pytest.warns(UserWarning, match="different versions of its overrides") as caught:
        read_run(out)
    assert "squeeze: grid_pue-1" in str(caught[0].message)
    again = run_batch(sweep, out, scheduler=scheduler_address, progress=False)
    assert (again.n_done, again.n_skipped) == (1, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_run(out)
