"""Batch runs on Dask: equality with serial solves, re-runs, a killed worker, an
external scheduler, the output folder read by pyarrow.dataset and DuckDB, and model
reuse (patched model == rebuilt model, array for array)."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import pickle
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest

from capacity.dataset import load_dataset
from capacity.scenarios import apply_overrides
from capacity.validation import Finding
from optimizer.analysis.batch import run_batch
from optimizer.analysis.batch_case import CRASH_ENV, run_case, solve_many
from optimizer.analysis.batch_folder import BATCH_MANIFEST, read_batch_manifest
from optimizer.analysis.batch_invalid import validate_cases
from optimizer.analysis.batch_patch import patch_model
from optimizer.analysis.batch_render import render_batch, render_invalid
from optimizer.analysis.sweep_cases import cases_dataset, expand_sweep
from optimizer.analysis.sweep_read import load_sweep
from optimizer.output.parquet_tables import RESULT_SCHEMAS, open_table_dataset
from optimizer.plan.model import build_model
from optimizer.plan.options import SolveOptions
from optimizer.plan.pipeline import solve
from optimizer.plan.plan_result import PlanResult

TINY = Path(__file__).resolve().parents[1] / "tests" / "data" / "tiny_valid"

# 6 cases: two named scenarios, one that is infeasible (no water), a 3-level grid
SWEEP = f"""
data: {TINY}
scenarios:
  - neutral
  - squeeze
  - name: dry
    overrides:
      - {{op: scale, table: site_water, column: water_permit_m3, factor: 0.01}}
grid:
  base: neutral
  axes:
    - name: demand
      override: {{op: scale, table: demand, column: demand_h100e}}
      levels: [0.5, 1.2, 2.0]
"""

COMPARE = ("demand", "assignment", "costs", "commitments", "build_out", "fleet")


@pytest.fixture
def sweep_file(tmp_path: Path) -> Path:
    p = tmp_path / "sweep.yaml"
    p.write_text(SWEEP)
    return p


def _serial(sweep: Path) -> dict[str, object]:
    spec = load_sweep(sweep)
    base = load_dataset(spec.data)
    return {c.name: solve(cases_dataset(base, c)) for c in expand_sweep(spec, list(base.scenarios))}


def _assert_same_tables(out: Path, name: str, res: object) -> None:
    sdir = out / f"scenario={name}"
    for t in COMPARE:
        got = pq.read_table(sdir / f"{t}.parquet").to_pandas()
        want = res.tables[t]
        assert list(got.columns) == list(RESULT_SCHEMAS[t].names)
        assert len(got) == len(want), (name, t)
        if len(want):
            keys = [c for c in got.columns if got[c].dtype == object]
            g = got.sort_values(keys).reset_index(drop=True)
            w = want[list(got.columns)].sort_values(keys).reset_index(drop=True)
            pd.testing.assert_frame_equal(g, w, check_dtype=False, rtol=1e-6, atol=1e-6)


def _no_temp_files(out: Path) -> None:
    leftovers = [p for p in out.rglob("*") if p.name.startswith(".") and "tmp" in p.name]
    assert leftovers == []


def test_local_cluster_equals_serial_and_rerun_skips(sweep_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    serial = _serial(sweep_file)
    r = run_batch(sweep_file, out, workers=2, progress=False)
    assert r.n_skipped == 0
    man = read_batch_manifest(out)
    assert set(man["scenarios"]) == set(serial)
    for name, res in serial.items():
        e = man["scenarios"][name]
        # a plan is done; the infeasible answer is written and verified, but no plan
        assert e["state"] == ("done" if res.objective_usd is not None else "no_plan")
        assert e["status"] == res.status.value
        if res.objective_usd is None:
            assert e["objective_usd"] is None
        else:
            assert e["objective_usd"] == pytest.approx(res.objective_usd, rel=1e-6)
            _assert_same_tables(out, name, res)
        assert len(e["files"]) == len(RESULT_SCHEMAS)
        # the worker solved the same data: the case's dataset hash is the serial one
        summ = pq.read_table(out / f"scenario={name}" / "summary.parquet").to_pandas()
        assert summ["dataset_hash"].tolist() == [res.dataset_hash]
        # the entry names that data too (its dataset_hash is the base data's: the manifest
        # said the base's hash where the case's files said its own, with no word of which)
        assert e["solved_dataset_hash"] == res.dataset_hash
        assert e["solved_tables_hash"] == res.tables_hash
        assert e["dataset_hash"] == man["dataset_hash"]
    # the infeasible case is written (its answer and explanation) but counts as failed
    assert man["scenarios"]["dry"]["status"] == "infeasible"
    assert r.n_failed == 1 and r.n_done == 5
    # the explainer's rows are written as they are (only the position column dropped)
    inf = pq.read_table(out / "scenario=dry" / "infeasibility.parquet").to_pandas()
    want_inf = serial["dry"].infeasibility.drop(columns="scenario")
    assert len(inf) >= 1 and list(inf.columns) == list(want_inf.columns)
    pd.testing.assert_frame_equal(
        inf.sort_values(["family", "period", "key"]).reset_index(drop=True),
        want_inf.sort_values(["family", "period", "key"]).reset_index(drop=True),
        check_dtype=False,
    )
    # every table of the infeasible case exists, typed
    for t, schema in RESULT_SCHEMAS.items():
        f = pq.read_table(out / "scenario=dry" / f"{t}.parquet")
        assert f.schema.remove_metadata().equals(schema.remove_metadata()), t
    # whole folder: pyarrow.dataset (hive) and DuckDB, same types in every scenario
    for t in ("demand", "assignment", "shadow_prices", "summary"):
        files = sorted(str(p) for p in out.glob(f"scenario=*/{t}.parquet"))
        dset = pads.dataset(
            files, format="parquet", partitioning="hive", partition_base_dir=str(out)
        )
        tab = dset.to_table()
        assert set(tab.column("scenario").to_pylist()) <= set(serial)
        assert {pq.read_schema(f).remove_metadata() for f in files} == {
            RESULT_SCHEMAS[t].remove_metadata()
        }
    import duckdb

    con = duckdb.connect()
    df = con.execute(
        f"SELECT scenario, sum(unmet_h100e) AS u, sum(served_h100e) AS s "
        f"FROM read_parquet('{out}/scenario=*/demand.parquet', hive_partitioning=true) "
        "GROUP BY scenario"
    ).df()
    got = dict(zip(df["scenario"], df["s"], strict=True))
    for name, res in serial.items():
        if res.objective_usd is not None:
            assert got[name] == pytest.approx(res.tables["demand"]["served_h100e"].sum(), rel=1e-9)
    # the whole folder at once (every table of every scenario, columns unified by name)
    whole = con.execute(
        f"SELECT scenario, count(*) AS n FROM read_parquet('{out}/scenario=*/*.parquet', "
        "hive_partitioning=true, union_by_name=true) GROUP BY scenario"
    ).df()
    rows = {
        name: sum(
            pq.read_metadata(f).num_rows for f in (out / f"scenario={name}").glob("*.parquet")
        )
        for name in serial
    }
    assert dict(zip(whole["scenario"], whole["n"], strict=True)) == rows
    assert rows["dry"] >= 1  # the infeasible case's summary (and explanation) rows
    # and the report module's reader treats the batch folder like a report run
    assert open_table_dataset(out, "costs").to_table().num_rows == sum(
        len(r.tables["costs"]) for r in serial.values() if r.objective_usd is not None
    )
    types = con.execute(
        f"DESCRIBE SELECT * FROM read_parquet('{out}/scenario=*/summary.parquet', "
        "hive_partitioning=true)"
    ).df()
    assert (
        dict(zip(types["column_name"], types["column_type"], strict=True))["objective_usd"]
        == "DOUBLE"
    )
    _no_temp_files(out)

    # re-run: the five plans skipped, nothing of theirs rewritten; the case without a
    # plan ("dry", infeasible) is redone and fails again, so the re-run exits 1 too
    plans = [p for p in out.rglob("*.parquet") if "scenario=dry" not in str(p)]
    mtimes = {p: p.stat().st_mtime_ns for p in plans}
    r2 = run_batch(sweep_file, out, workers=2, progress=False)
    assert (r2.n_skipped, r2.n_done, r2.n_failed) == (5, 0, 1)
    assert {p: p.stat().st_mtime_ns for p in plans} == mtimes
    # a changed sweep (one level) reruns exactly the changed case (and "dry")
    sweep_file.write_text(SWEEP.replace("levels: [0.5, 1.2, 2.0]", "levels: [0.5, 1.2, 2.5]"))
    r3 = run_batch(sweep_file, out, workers=1, progress=False)
    assert (r3.n_skipped, r3.n_done, r3.n_failed) == (4, 1, 1)
    assert "grid_demand-2.5" in read_batch_manifest(out)["scenarios"]
    # the earlier sweep's case is kept, not dropped while its files stay on disk
    kept = read_batch_manifest(out)["scenarios"]["grid_demand-2"]
    assert kept["state"] == "done" and (out / "scenario=grid_demand-2").is_dir()


def test_run_case_takes_and_returns_pickled_objects(sweep_file: Path) -> None:
    """What Dask ships: the Dataset itself (same hash) in, a PlanResult out."""
    spec = load_sweep(sweep_file)
    base = load_dataset(spec.data)
    shipped = pickle.loads(pickle.dumps(base))
    assert shipped.hash == base.hash and shipped.scenarios.keys() == base.scenarios.keys()
    cases = {c.name: c for c in expand_sweep(spec, list(base.scenarios))}
    for name in ("squeeze", "dry"):
        cr = pickle.loads(pickle.dumps(run_case(shipped, cases[name], SolveOptions(), True, "k")))
        want = solve(cases_dataset(base, cases[name]))
        assert isinstance(cr.result, PlanResult) and cr.key == "k"
        assert cr.status == want.status.value
        assert cr.error == ("" if cr.status == "optimal" else want.message)  # why, if no plan
        assert cr.result.dataset_hash == want.dataset_hash
        if want.objective_usd is None:
            assert cr.objective_usd is None and cr.outcomes == {}
            pd.testing.assert_frame_equal(cr.result.infeasibility, want.infeasibility)
        else:
            assert cr.objective_usd == pytest.approx(want.objective_usd, rel=1e-9)


def test_killed_worker_is_recorded_and_rerun_completes(
    sweep_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    victim = "grid_demand-1.2"
    monkeypatch.setenv(CRASH_ENV, victim)  # inherited by the worker processes
    r = run_batch(sweep_file, out, workers=2, progress=False)
    man = read_batch_manifest(out)
    e = man["scenarios"][victim]
    assert e["state"] == "failed"
    assert "KilledWorker" in e["error"] or "CommClosed" in e["error"]
    assert not (out / f"scenario={victim}").exists()
    others = [n for n in man["scenarios"] if n != victim]
    states = {n: man["scenarios"][n]["state"] for n in others}
    assert len(others) == 5 and states == {n: "no_plan" if n == "dry" else "done" for n in others}
    for n in others:
        for f in man["scenarios"][n]["files"]:
            pq.read_table(out / f)  # every written file is whole
    _no_temp_files(out)
    assert r.n_failed == 2  # the victim and the infeasible "dry"
    monkeypatch.delenv(CRASH_ENV)
    r2 = run_batch(sweep_file, out, workers=1, progress=False)
    # the victim is solved; the 4 plans are skipped; "dry" (no plan) is redone
    assert (r2.n_skipped, r2.n_done, r2.n_failed) == (4, 1, 1)
    assert read_batch_manifest(out)["scenarios"][victim]["state"] == "done"


# a grid level that takes the only site's air PUE (1.3) to 0.65: invalid data
INVALID_SWEEP = f"""
data: {TINY}
scenarios: [neutral]
grid:
  base: neutral
  axes:
    - name: pue
      override: {{op: scale, table: sites, column: pue_air}}
      levels: [0.5, 1.0]
"""
PUE_FINDING = Finding(
    "error",
    "sites.csv",
    2,
    "pue_air",
    "0.65",
    "PUE cannot be below 1: facility power includes the IT power",
)
PUE_TEXT = (
    "sites.csv, row 2, column 'pue_air' (value '0.65'): "
    "PUE cannot be below 1: facility power includes the IT power"
)


def test_invalid_case_is_reported_before_solving_and_valid_cases_run(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(INVALID_SWEEP)
    out = tmp_path / "out"
    events: list[tuple[str, object]] = []
    r = run_batch(
        sweep,
        out,
        workers=1,
        progress=False,
        on_invalid=lambda bad: events.append(("invalid", dict(bad))),
        on_case=lambda cr: events.append(("case", (cr.name, cr.status))),
    )
    # validated up front: the invalid case is known before any case is solved
    assert events[0] == ("case", ("grid_pue-0.5", "invalid_data"))
    assert events[1] == ("invalid", {"grid_pue-0.5": (PUE_FINDING,)})
    assert sorted(e[1] for e in events[2:]) == [
        ("grid_pue-1", "optimal"),
        ("neutral", "optimal"),
    ]
    assert (r.n_done, r.n_failed, r.invalid) == (2, 1, {"grid_pue-0.5": (PUE_FINDING,)})
    man = read_batch_manifest(out)
    e = man["scenarios"]["grid_pue-0.5"]
    assert (e["state"], e["status"], e["error"]) == ("failed", "invalid_data", PUE_TEXT)
    assert e["findings"] == [dataclasses.asdict(PUE_FINDING)]
    assert not (out / "scenario=grid_pue-0.5").exists()
    assert man["scenarios"]["grid_pue-1"]["state"] == "done"
    summ = pd.read_csv(out / "batch_summary.csv").set_index("scenario")
    assert summ.loc["grid_pue-0.5", "error"] == PUE_TEXT
    assert summ.loc["grid_pue-0.5", "status"] == "invalid_data"
    # console: one table row per finding, naming the case
    from rich.console import Console

    con = Console(width=200, record=True)
    render_invalid(r.invalid, con)
    render_batch(r, con)
    text = con.export_text()
    assert re.search(
        r"grid_pue-0\.5 +│ sites\.csv │ +2 │ pue_air +│ 0\.65 +│ PUE cannot be below 1", text
    )
    assert "2 solved, 1 failed or not optimal (1 with invalid data)" in text
    assert f"grid_pue-0.5: invalid_data {PUE_TEXT}" in text
    # a re-run skips the two done cases and reports the invalid one again
    r2 = run_batch(sweep, out, workers=1, progress=False)
    assert (r2.n_skipped, r2.n_done, r2.n_failed) == (2, 0, 1)


def test_validate_cases_and_run_case_report_data_errors_without_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(INVALID_SWEEP)
    spec = load_sweep(sweep)
    base = load_dataset(spec.data)
    cases = {c.name: c for c in expand_sweep(spec, list(base.scenarios))}
    assert validate_cases(base, list(cases.values())) == {"grid_pue-0.5": (PUE_FINDING,)}
    cr = run_case(base, cases["grid_pue-0.5"], SolveOptions(), True, "k")
    assert (cr.status, cr.error, cr.result) == ("invalid_data", PUE_TEXT, None)
    # an unexpected exception keeps its traceback
    from optimizer.analysis import batch_case

    def boom(*args: object) -> None:
        raise RuntimeError("solver exploded")

    monkeypatch.setattr(batch_case, "_solve_reusing", boom)
    cr = run_case(base, cases["neutral"], SolveOptions(), True, "k")
    assert cr.status == "failed" and "Traceback" in cr.error
    assert cr.error.startswith("RuntimeError: solver exploded\n")


@pytest.fixture
def dask_cluster(tmp_path: Path):
    """A real Dask scheduler and one worker, started as separate processes."""
    env = {**os.environ, "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0"}
    sfile = tmp_path / "scheduler.json"
    sched = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--dashboard-address",
            ":0",
            "--scheduler-file",
            str(sfile),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    procs = [sched]
    try:
        deadline = time.time() + 60
        while not sfile.exists() and time.time() < deadline:
            time.sleep(0.2)
        address = json.loads(sfile.read_text())["address"]
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_worker",
                address,
                "--nworkers",
                "1",
                "--nthreads",
                "1",
                "--no-dashboard",
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        procs.append(worker)
        from distributed import Client

        with Client(address, timeout="30s") as c:
            c.wait_for_workers(1, timeout=60)
        yield address
    finally:
        for p in reversed(procs):
            with_pg = p.pid
            try:
                os.killpg(with_pg, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)


def test_cli_batch_on_an_external_scheduler(
    sweep_file: Path, tmp_path: Path, dask_cluster: str
) -> None:
    from typer.testing import CliRunner

    from optimizer.cli.commands import app

    assert re.match(r"tcp://127\.0\.0\.1:\d+", dask_cluster)
    out = tmp_path / "out"
    res = CliRunner().invoke(
        app, ["batch", str(sweep_file), "--scheduler", dask_cluster, "--out", str(out)]
    )
    # exit 1: the "dry" case is infeasible; every other case is written
    assert res.exit_code == 1, res.output
    assert "5 solved, 1 failed" in res.output
    man = json.loads((out / BATCH_MANIFEST).read_text())
    assert sum(e["state"] == "done" for e in man["scenarios"].values()) == 5
    assert man["scenarios"]["dry"]["state"] == "no_plan"
    serial = _serial(sweep_file)
    for name, res_ in serial.items():
        if res_.objective_usd is not None:
            assert man["scenarios"][name]["objective_usd"] == pytest.approx(
                res_.objective_usd, rel=1e-6
            )


# ------------------------------------------------------------------------ model reuse
PATCHABLE = [
    {"op": "scale", "table": "supply_resources", "column": "capacity", "factor": 0.5},
    {"op": "scale", "table": "demand", "column": "demand_h100e", "factor": 1.5},
    {"op": "scale", "table": "site_grid", "column": "grid_mw", "factor": 0.8},
    {"op": "shift", "table": "site_grid", "column": "grid_mw", "periods": 1},
    {"op": "scale", "table": "site_water", "column": "water_permit_m3", "factor": 0.5},
    {"op": "scale", "table": "sites", "column": "energy_price_usd_per_mwh", "factor": 1.3},
    {"op": "scale", "table": "eligibility", "column": "derate", "factor": 0.9},
    {
        "op": "scale",
        "table": "customers",
        "column": "unmet_penalty_usd_per_h100e_period",
        "factor": 0.5,
    },
    {"op": "scale", "table": "commitments", "column": "min_it_mw", "factor": 2.0},
    {"op": "scale", "table": "commitments", "column": "breach_penalty_usd_per_mw", "factor": 2.0},
    {
        "op": "scale",
        "table": "customers",
        "column": "price_training_usd_per_h100e_period",
        "factor": 2.0,
    },
]


@pytest.mark.parametrize("ov", PATCHABLE, ids=lambda o: f"{o['table']}.{o['column']}.{o['op']}")
def test_patched_model_equals_rebuilt_model(ov: dict) -> None:
    ds = load_dataset(TINY)
    new = apply_overrides(ds, [ov])
    patched = patch_model(build_model(ds), ds, new)
    assert patched is not None
    want = build_model(new)
    np.testing.assert_allclose(patched.constraints["rhs"], want.constraints["rhs"], rtol=1e-12)
    np.testing.assert_allclose(patched.variables["cost"], want.variables["cost"], rtol=1e-12)
    assert abs(patched.matrix - want.matrix).max() <= 1e-12
    assert patched.objective_constant == pytest.approx(want.objective_constant, rel=1e-12)
    assert patched.datasets[0] is new


@pytest.mark.parametrize(
    "ov",
    [
        {"op": "scale", "table": "sites", "column": "pue_air", "factor": 1.1},
        {"op": "scale", "table": "demand", "column": "demand_h100e", "factor": 0.0},
        {"op": "shift", "table": "commitments", "column": "from_period", "periods": -1},
    ],
    ids=["pue", "demand_to_zero", "period_label"],
)
def test_unpatchable_changes_fall_back_to_rebuild(ov: dict) -> None:
    ds = load_dataset(TINY)
    assert patch_model(build_model(ds), ds, apply_overrides(ds, [ov])) is None


def test_solve_many_reuse_gives_the_same_plans() -> None:
    ds = load_dataset(TINY)
    items = [[ov] for ov in PATCHABLE[:4]] + [
        [{"op": "scale", "table": "sites", "column": "pue_air", "factor": 1.1}]
    ]
    a = solve_many(ds, items, reuse=True)
    b = solve_many(ds, items, reuse=False)
    for x, y in zip(a, b, strict=True):
        assert x.status == y.status
        assert x.objective_usd == pytest.approx(y.objective_usd, rel=1e-9)
        pd.testing.assert_frame_equal(x.tables["demand"], y.tables["demand"], rtol=1e-7, atol=1e-7)
    # a direct solve of the same data agrees too
    d = apply_overrides(ds, items[1])
    assert a[1].objective_usd == pytest.approx(solve(d).objective_usd, rel=1e-9)
    assert isinstance(pa.__version__, str)


# A sweep of patched cases solved on one retained HiGHS instance (warm starts), with a
# structural change (rebuilt, cold) and a case that becomes infeasible in between.
WARM_SWEEP: list[list[dict]] = [
    [{"op": "scale", "table": "demand", "column": "demand_h100e", "factor": 1.3}],
    [{"op": "scale", "table": "supply_resources", "column": "capacity", "factor": 0.7}],
    [{"op": "scale", "table": "sites", "column": "energy_price_usd_per_mwh", "factor": 1.5}],
    # structure changes: PUE is not patchable -> rebuilt, same shape: from the last basis
    [{"op": "scale", "table": "sites", "column": "pue_air", "factor": 1.1}],
    # no water at all: infeasible (the warm run is repeated cold for an honest status)
    [{"op": "scale", "table": "site_water", "column": "water_permit_m3", "factor": 0.01}],
    [
        {"op": "scale", "table": "demand", "column": "demand_h100e", "factor": 0.6},
        {"op": "scale", "table": "site_grid", "column": "grid_mw", "factor": 0.8},
    ],
    [{"op": "scale", "table": "eligibility", "column": "derate", "factor": 0.9}],
]


def test_warm_started_sweep_equals_cold_solves_case_by_case() -> None:
    from optimizer.analysis import batch_case

    ds = load_dataset(TINY)
    batch_case._SESSION_CACHE.clear()
    warm = solve_many(ds, WARM_SWEEP, reuse=True)
    flags = [r.timings_s.get("warm_start") for r in warm]
    # the session opens on the base model (cold) and every case starts from its basis:
    # PUE is rebuilt and passed whole, and of the same shape it starts there too; the
    # dry case's warm run is not optimal and is re-solved cold
    assert flags == [1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0]
    for items, w in zip(WARM_SWEEP, warm, strict=True):
        cold = solve(apply_overrides(ds, items))
        assert w.status == cold.status
        if cold.objective_usd is None:
            assert w.objective_usd is None
            assert w.status == "infeasible" and len(w.tables["demand"]) == 0
            continue
        assert w.objective_usd == pytest.approx(cold.objective_usd, rel=1e-9)
        assert len(w.violations) == 0
        for t in (*COMPARE, "energy", "site_utilisation", "supply_utilisation"):
            pd.testing.assert_frame_equal(w.tables[t], cold.tables[t], rtol=1e-7, atol=1e-6)
    # the infeasible case is really infeasible on its own
    assert solve(apply_overrides(ds, WARM_SWEEP[4])).status == "infeasible"
    session = next(iter(batch_case._SESSION_CACHE.values()))
    assert (session.n_warm, session.n_cold) == (6, 2)  # the base and the dry case cold


def test_highs_session_pushes_only_changes_and_matches_a_cold_solve() -> None:
    from optimizer.plan.highs_session import HighsSession
    from optimizer.plan.options import Status
    from optimizer.plan.raw_solve import run_solver

    ds = load_dataset(TINY)
    base = build_model(ds)
    s = HighsSession(SolveOptions())
    raw0, warm0 = s.run(base)
    assert not warm0 and raw0.status == Status.optimal
    new = apply_overrides(ds, WARM_SWEEP[0])
    pm = patch_model(base, ds, new)
    raw1, warm1 = s.run(pm)
    cold = run_solver(build_model(new), SolveOptions())
    assert warm1 and raw1.status == Status.optimal
    assert raw1.solver_objective == pytest.approx(cold.solver_objective, rel=1e-9)
    # HiGHS holds exactly the patched model's data now
    lp = s.highs.getLp()
    np.testing.assert_array_equal(np.asarray(lp.col_cost_), pm.variables["cost"].to_numpy())
    lo, hi = pm.row_bounds()
    np.testing.assert_array_equal(np.asarray(lp.row_lower_)[np.isfinite(lo)], lo[np.isfinite(lo)])
    np.testing.assert_array_equal(np.asarray(lp.row_upper_)[np.isfinite(hi)], hi[np.isfinite(hi)])
    # a model of another shape is passed to HiGHS again and solved cold
    shifted = [{"op": "shift", "table": "commitments", "column": "from_period", "periods": -1}]
    other = build_model(apply_overrides(ds, shifted))
    assert other.n_variables != base.n_variables
    raw2, warm2 = s.run(other)
    assert not warm2 and s.model is other
    assert raw2.solver_objective == pytest.approx(
        run_solver(other, SolveOptions()).solver_objective, rel=1e-9
    )
    assert (s.n_warm, s.n_cold) == (1, 2)
    with pytest.raises(ValueError, match="highs"):
        HighsSession(SolveOptions(solver="cbc"))


def test_solve_many_keeps_the_base_out_of_collections_then_returns_it(monkeypatch) -> None:
    """During a sweep the objects that outlive its cases are frozen; afterwards not."""
    import gc

    from optimizer.analysis import batch_case

    ds = load_dataset(TINY)
    seen: list[int] = []
    real = batch_case._solve_reusing

    def recording(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(gc.get_freeze_count())
        return real(*args, **kwargs)

    monkeypatch.setattr(batch_case, "_solve_reusing", recording)
    before = gc.get_freeze_count()
    out = solve_many(ds, [[ov] for ov in PATCHABLE[:3]], reuse=True)
    assert [r.status for r in out] == ["optimal"] * 3
    assert before == 0  # nothing of the test process is frozen
    assert all(count > 0 for count in seen)  # frozen during every case
    assert gc.get_freeze_count() == 0  # returned to the collector


def test_a_rebuilt_model_of_the_same_shape_starts_from_the_last_basis() -> None:
    # A sampled scenario of the bundled data changes columns the patcher does not
    # patch, so its model is rebuilt. It has the base model's shape: the session passes
    # it whole and starts the dual simplex from the base's optimal basis, scaled by
    # largest value (foreign_start_options), and reaches the cold solve's optimum in
    # fewer simplex iterations.
    from optimizer.analysis.monte_carlo import sample_scenarios
    from optimizer.plan.highs import foreign_start_options
    from optimizer.plan.highs_session import HighsSession
    from optimizer.plan.options import Status

    ds = load_dataset("data")
    _, sampled, _ = sample_scenarios(ds, 1, 0)
    base = build_model(ds)
    assert patch_model(base, ds, sampled[0]) is None
    model = build_model(sampled[0])
    assert (model.n_variables, model.n_constraints) == (base.n_variables, base.n_constraints)
    s = HighsSession(SolveOptions())
    assert not s.run(base)[1]
    raw, warm = s.run(model)
    assert warm and raw.status == Status.optimal and s.model is model
    for name, value in foreign_start_options().items():
        assert s.highs.getOptionValue(name)[1] == value
    started = s.highs.getInfo().simplex_iteration_count
    cold = HighsSession(SolveOptions())
    raw_cold, warm_cold = cold.run(model)
    assert not warm_cold and raw_cold.status == Status.optimal
    assert cold.highs.getOptionValue("simplex_scale_strategy")[1] == 2  # HiGHS's default
    assert raw.solver_objective == pytest.approx(raw_cold.solver_objective, rel=1e-9)
    assert started < 0.7 * cold.highs.getInfo().simplex_iteration_count
    assert (s.n_warm, s.n_cold) == (1, 1)


def test_a_rebuilt_case_of_another_shape_is_solved_alone_and_the_chain_goes_on() -> None:
    # Patched, then a case that changes the LP's shape (rebuilt: shifted commitment
    # windows), then patched again: the middle case is solved cold on its own (no
    # warm_start record), and the first and third start from the base's basis.
    from optimizer.analysis import batch_case

    ds = load_dataset(TINY)
    shifted = [{"op": "shift", "table": "commitments", "column": "from_period", "periods": -1}]
    items = [WARM_SWEEP[0], shifted, WARM_SWEEP[2]]
    assert build_model(apply_overrides(ds, shifted)).n_variables != build_model(ds).n_variables
    batch_case._SESSION_CACHE.clear()
    got = solve_many(ds, items, reuse=True)
    assert [r.timings_s.get("warm_start") for r in got] == [1.0, None, 1.0]
    for items_i, r in zip(items, got, strict=True):
        cold = solve(apply_overrides(ds, items_i))
        assert r.objective_usd == pytest.approx(cold.objective_usd, rel=1e-9)
    session = next(iter(batch_case._SESSION_CACHE.values()))
    assert (session.n_warm, session.n_cold) == (2, 1)  # the base's solve is the cold one


def test_cli_batch_names_the_folder_file_it_cannot_write(
    sweep_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk when the batch manifest is written: the file is named, not Dask.

    The error used to read "cannot start the batch on a local Dask cluster: [Errno 28]
    No space left on device".
    """
    from typer.testing import CliRunner

    from optimizer.cli.commands import app
    from optimizer.output import atomic

    real = atomic.write_json_atomic

    def full_disk(path: Any, doc: Any) -> Any:
        if Path(path).name == BATCH_MANIFEST:
            raise OSError(28, "No space left on device")
        return real(path, doc)

    monkeypatch.setattr(atomic, "write_json_atomic", full_disk)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["batch", str(sweep_file), "--out", str(out)])
    assert res.exit_code == 1, res.output
    text = " ".join(res.output.split())
    assert f"error: cannot write {out / BATCH_MANIFEST}: No space left on device" in text
    assert "Dask" not in text and "re-run the same command to resume" in text


def test_a_case_without_a_plan_says_why(sweep_file: Path) -> None:
    """A case that ended in error or without a plan read 'neutral: error ' (no reason)."""
    spec = load_sweep(sweep_file)
    base = load_dataset(spec.data)
    case = next(c for c in expand_sweep(spec, list(base.scenarios)) if c.name == "neutral")
    cr = run_case(base, case, SolveOptions(), True, "k")
    assert (cr.status, cr.error) == ("optimal", "")
    cr = run_case(base, case, SolveOptions(time_limit_s=1e-9), False, "k")
    assert cr.status == "time_limit_no_solution"
    assert cr.error == cr.result.message and "time limit" in cr.error


def test_glpk_gets_a_time_limit_in_whole_seconds() -> None:
    """glpsol --tmlim 4.98 is 'Invalid time limit': every case with --time-limit failed."""
    from optimizer.plan.pulp_solve import _pulp_solver

    for limit, sent in [(4.98, 5), (0.01, 1), (7.0, 7)]:
        solver = _pulp_solver("GLPK_CMD", SolveOptions(time_limit_s=limit), mip=False, folder=".")
        assert solver.timeLimit == sent
    solver = _pulp_solver("COIN_CMD", SolveOptions(time_limit_s=4.98), mip=False, folder=".")
    assert solver.timeLimit == 4.98


def test_a_solver_without_threads_says_it_does_not_use_them() -> None:
    """SolveOptions(solver="GLPK_CMD", threads=4) ran without a word."""
    from optimizer.plan.pulp_solve import _pulp_solver

    with pytest.warns(UserWarning, match="GLPK_CMD takes no thread count through PuLP"):
        _pulp_solver("GLPK_CMD", SolveOptions(threads=4), mip=False, folder=".")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _pulp_solver("HiGHS", SolveOptions(threads=2), mip=False, folder=".")


def test_the_cases_table_keeps_a_grid_name_on_one_line_where_it_fits() -> None:
    """At the non-terminal width of 140 a grid case's name of 49 characters was cut into
    three lines mid-word ('grid_cowos-0.6_op' / 'enai_demand-0.5_c' ...) while the number
    headers kept their full width; on a narrow terminal the names still fold."""
    from rich.console import Console

    from optimizer.analysis.batch_render import _fixed_cases_table

    name = "grid_cowos-0.6_openai_demand-0.5_carbon_price-210"
    fixed = pd.DataFrame(
        {
            "scenario": ["neutral", name],
            "status": ["optimal", "optimal"],
            "state": ["done", "done"],
            "total_cost_usd": [1.4461e11, 1.5353e11],
            "unmet_h100e": [563_388.0, 850_377.0],
            "trainium_share": [0.41, 0.448],
            "breach_mw": [1.6, 1065.7],
            "time_s": [4.7, 7.1],
        }
    )
    for width, whole in ((140, True), (80, False)):
        console = Console(width=width, record=True, color_system=None, file=io.StringIO())
        console.print(_fixed_cases_table(fixed, width))
        lines = console.export_text().splitlines()
        assert max(len(line) for line in lines) <= width
        assert any(name in line for line in lines) is whole
        row = next(line for line in lines if "$153.53B" in line)  # every number whole
        assert "850,377" in row and "44.8%" in row and "1,065.7" in row


def test_a_case_gets_the_same_plan_whatever_was_solved_before_it() -> None:
    """Chained from the previous case's basis, a sweep of the bundled data solved in
    another order gave the same costs with other fleets, assignments and shadow prices
    (tied optima): a batch's tables hung on which worker took which case, so on the
    load. Every case now starts from the base's optimal basis."""
    from optimizer.analysis import batch_case

    ds = load_dataset("data")
    items = [
        [{"op": "scale", "table": "demand", "column": "demand_h100e", "factor": f}]
        for f in (0.9, 1.1, 1.2)
    ]

    def plans(order: list[int]) -> dict[int, Any]:
        batch_case._SESSION_CACHE.clear()
        got = solve_many(ds, [items[i] for i in order], reuse=True)
        return dict(zip(order, got, strict=True))

    first, second = plans([0, 1, 2]), plans([2, 1, 0])
    for i in range(3):
        assert first[i].objective_usd == second[i].objective_usd
        for name in ("fleet", "assignment", "build_out", "shadow_prices"):
            pd.testing.assert_frame_equal(first[i].tables[name], second[i].tables[name])
        assert first[i].timings_s.get("warm_start") == 1.0  # warm, from the base's basis


def test_a_case_that_fails_on_a_rerun_leaves_no_earlier_plan(tmp_path: Path) -> None:
    """A composed case solved, then made invalid and run again: it was recorded failed
    but its folder kept the earlier plan, which a glob over scenario=* read as current."""
    sweep = tmp_path / "sweep.yaml"
    hot = (
        "  - name: hot\n    base: neutral\n    overrides:\n"
        "      - {{op: scale, table: sites, column: pue_air, factor: {f}, source: test}}\n"
    )
    sweep.write_text(f"data: {TINY}\nscenarios:\n  - neutral\n" + hot.format(f=1.1))
    out = tmp_path / "out"
    assert run_batch(sweep, out, workers=1, progress=False).n_done == 2
    assert (out / "scenario=hot" / "costs.parquet").is_file()
    sweep.write_text(f"data: {TINY}\nscenarios:\n  - neutral\n" + hot.format(f=0.5))
    r = run_batch(sweep, out, workers=1, progress=False)
    assert (r.n_skipped, r.n_failed) == (1, 1) and "hot" in r.invalid
    assert read_batch_manifest(out)["scenarios"]["hot"]["state"] == "failed"
    assert not (out / "scenario=hot").exists()
    costs = pads.dataset(list(out.glob("scenario=*/costs.parquet")), format="parquet")
    assert costs.count_rows() == len(pq.read_table(out / "scenario=neutral" / "costs.parquet"))
