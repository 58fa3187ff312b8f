"""The example sweep on a loaded machine: a slow machine costs time, never results.

Two cases of ``examples/sweep.yaml`` (its neutral scenario and its first Monte Carlo
sample, over the bundled data: one case per worker) run through ``capacity batch
--workers 2`` while CPU-burning processes keep every core busy. Every case must end optimal with
the objective of an idle-machine solve, every report file must be complete, and no
traceback may reach the terminal. Under such load Dask drops and re-opens its client
connection now and then; the batch waits for it and resubmits what it cancelled
(``tests/test_batch_reconnect.py`` forces that path on every run).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from optimizer.analysis.batch_folder import read_batch_manifest
from optimizer.analysis.case_check import case_problem
from optimizer.output.parquet_tables import RESULT_SCHEMAS

ROOT = Path(__file__).resolve().parents[1]
BURN_S = 600  # each burner stops itself after this, whatever happens to the test

BURNER = f"""
import time
end = time.monotonic() + {BURN_S}
while time.monotonic() < end:
    pass
"""


def _subset(tmp_path: Path) -> Path:
    """The example sweep cut to 2 cases: the neutral scenario, 1 Monte Carlo sample."""
    doc = yaml.safe_load((ROOT / "examples" / "sweep.yaml").read_text())
    doc["data"] = str(ROOT / "data")
    del doc["grid"]
    doc["scenarios"] = ["neutral"]
    doc["monte_carlo"]["samples"] = 1
    p = tmp_path / "sweep2.yaml"
    p.write_text(yaml.safe_dump(doc, sort_keys=False))
    return p


@pytest.fixture
def burning_cpus() -> Iterator[Callable[[], None]]:
    """Start one CPU-burning process per core (at least 2); yield what stops them."""
    n = max(2, os.cpu_count() or 2)
    procs = [
        subprocess.Popen([sys.executable, "-c", BURNER], start_new_session=True) for _ in range(n)
    ]

    def stop() -> None:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for p in procs:
            p.wait(timeout=30)

    try:
        yield stop
    finally:
        stop()


@pytest.mark.slow
@pytest.mark.usefixtures("wall_clock_alone")  # not beside the wall-clock time-limit tests
def test_example_sweep_under_a_cpu_burn_solves_every_case(
    tmp_path: Path, burning_cpus: Callable[[], None], default_plan: Callable[..., Any]
) -> None:
    sweep, out = _subset(tmp_path), tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [str(Path(sys.executable).parent / "capacity"), "batch", str(sweep)]
    res = subprocess.run(
        [*cmd, "--workers", "2", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    text = res.stdout + res.stderr
    assert res.returncode == 0, text
    assert "2 solved, 0 failed or not optimal, 0 skipped" in res.stdout, text
    assert "Traceback" not in text and "never retrieved" not in text, text
    man = read_batch_manifest(out)["scenarios"]
    assert len(man) == 2
    for name, e in man.items():
        assert (e["state"], e["status"]) == ("done", "optimal"), (name, e.get("error"))
        assert case_problem(out, name, e) is None
        assert len(e["files"]) == len(RESULT_SCHEMAS)
        for f in e["files"]:
            assert pq.read_metadata(out / f).num_rows >= 0  # whole, readable Parquet
    # the idle-machine objectives: the same cases solved one by one, burners stopped
    burning_cpus()
    _assert_idle_objectives(sweep, man, default_plan)


def _assert_idle_objectives(
    sweep: Path, man: dict[str, dict[str, object]], default_plan: Callable[..., Any]
) -> None:
    """Each case's objective is its idle solve's (a named scenario's is the session's)."""
    from capacity.dataset import load_dataset
    from optimizer.analysis.sweep_cases import cases_dataset, expand_sweep
    from optimizer.analysis.sweep_read import load_sweep
    from optimizer.plan.pipeline import solve

    spec = load_sweep(sweep)
    base = load_dataset(spec.data)
    cases = expand_sweep(spec, list(base.scenarios))
    assert len(cases) == len(man) == 2
    for c in cases:
        ds = cases_dataset(base, c)
        if c.name in base.scenarios:  # the session's solve of the same data
            named, want = default_plan(c.name)
            assert named.hash == ds.hash, c.name
        else:
            want = solve(ds)
        assert want.status.value == "optimal"
        assert man[c.name]["objective_usd"] == pytest.approx(want.objective_usd, rel=1e-6)
