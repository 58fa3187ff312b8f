"""A run folder is claimed exclusively: two runs asking for one ID get two folders.

Two ``capacity solve`` runs into one ``--out`` in the same second used to print the
same report path, the later one replacing the other's files (a HiGHS report replaced
by a CBC one). The claim (:func:`optimizer.output.run_folder.claim_run_dir`) is an exclusive
``mkdir`` with a new ID on collision, and every run folder goes through it.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from optimizer.cli.commands import app
from optimizer.output import run_folder
from optimizer.output.atomic import ReportError
from optimizer.output.manifest import read_manifest
from optimizer.output.parquet_tables import read_report
from optimizer.output.run_folder import claim_run_dir, reserve_run_dir

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"
ENV = {"COLUMNS": "200"}
FIXED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_two_claims_with_one_clock_get_two_folders(tmp_path: Path) -> None:
    first = reserve_run_dir(tmp_path, "abcdef0123456789", now=FIXED)
    second = reserve_run_dir(tmp_path, "abcdef0123456789", now=FIXED)
    assert first.name == "20260102T030405Z-abcdef01"
    assert second.name == "20260102T030405Z-abcdef01-2"
    assert first.is_dir() and second.is_dir()
    assert claim_run_dir(tmp_path, first.name).name == "20260102T030405Z-abcdef01-3"


def test_threads_racing_for_one_id_each_get_their_own_folder(tmp_path: Path) -> None:
    n = 8
    barrier = threading.Barrier(n)
    got: list[Path] = []
    lock = threading.Lock()

    def claim() -> None:
        barrier.wait()
        path = claim_run_dir(tmp_path / "out", "run")
        with lock:
            got.append(path)

    threads = [threading.Thread(target=claim) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(p.name for p in got) == sorted(["run"] + [f"run-{k}" for k in range(2, n + 1)])
    assert len(set(got)) == n and all(p.is_dir() for p in got)


def test_claim_under_a_regular_file_names_it(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ReportError, match=r"file exists and is not a directory"):
        claim_run_dir(blocker / "out", "run")


def test_two_solves_in_one_second_into_one_out_keep_both_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_folder, "_utc_now", lambda: FIXED)  # the same second, for sure
    out = tmp_path / "reports"
    paths = []
    for solver in ("highs", "cbc"):
        res = CliRunner().invoke(
            app, ["solve", str(TINY), "--solver", solver, "--out", str(out)], env=ENV
        )
        assert res.exit_code == 0, res.output
        (line,) = [ln for ln in res.output.splitlines() if ln.startswith("Report: ")]
        paths.append(Path(line.split()[1]))
    assert paths[0] != paths[1]
    assert paths[0].parent.name.startswith("20260102T030405Z-")
    assert paths[1].parent.name == paths[0].parent.name + "-2"
    runs = sorted(p for p in out.iterdir() if p.is_dir())
    assert runs == sorted(p.parent for p in paths)
    solvers = [read_manifest(p.parent)["scenarios"]["neutral"]["solver"] for p in paths]
    assert solvers[0] == "highs" and solvers[1] != "highs"
    for p in paths:
        tables = read_report(p)
        assert len(tables["demand"]) > 0


def _fake_hedge(cost_usd: float) -> object:
    """A converged hedged plan whose tables carry ``cost_usd`` (to tell two runs apart)."""
    import types

    import pandas as pd

    return types.SimpleNamespace(
        expected_cost_usd=cost_usd,
        lower_bound_usd=cost_usd,
        wait_and_see_usd=cost_usd,
        ev_problem="mean",
        eev_usd=cost_usd,
        vss_usd=0.0,
        evpi_usd=0.0,
        gap_rel=0.0,
        converged=True,
        iterations=pd.DataFrame({"iteration": [0, 1], "upper_bound_usd": [cost_usd] * 2}),
        per_scenario=pd.DataFrame({"scenario": ["mc_000"], "cost_usd": [cost_usd]}),
        first_stage=pd.DataFrame({"column": ["build(a,2026Q1)"], "value": [1.0]}),
        timings_s={"total": 0.1},
    )


def test_two_hedges_in_one_second_into_one_out_keep_both_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import optimizer.analysis.decompose

    monkeypatch.setattr(run_folder, "_utc_now", lambda: FIXED)  # the same second, for sure
    out = tmp_path / "hedges"
    printed = []
    for cost in (111.0, 222.0):
        monkeypatch.setattr(
            optimizer.analysis.decompose,
            "hedge_decomposed",
            lambda *_a, _c=cost, **_k: _fake_hedge(_c),
        )
        args = ["hedge", str(TINY), "-n", "2", "--workers", "0", "--out", str(out)]
        res = CliRunner().invoke(app, args, env=ENV)
        assert res.exit_code == 0, res.output
        printed.append(" ".join(res.output.split()))
    runs = sorted(p for p in out.iterdir())
    assert runs[0].name.startswith("hedge-20260102T030405Z-")
    assert [p.name for p in runs] == [runs[0].name, runs[0].name + "-2"]
    import pandas as pd

    costs = [pd.read_csv(p / "per_scenario.csv")["cost_usd"].tolist() for p in runs]
    assert costs == [[111.0], [222.0]]
    # the three tables, and each sampled scenario's recorded inputs (scenario=<name>/)
    assert all(
        sorted(f.name for f in p.iterdir() if f.is_file())
        == ["first_stage.csv", "iterations.csv", "per_scenario.csv"]
        and all(f.name.startswith("scenario=") for f in p.iterdir() if f.is_dir())
        for p in runs
    )
    assert f"Tables: {runs[0]}/" in printed[0] and f"Tables: {runs[1]}/" in printed[1]


def test_a_claimed_run_folder_goes_whole_when_its_block_fails(tmp_path: Path) -> None:
    from optimizer.output.run_folder import claimed_run_dir

    with pytest.raises(KeyboardInterrupt), claimed_run_dir(tmp_path, "r") as run:
        (run / "scenario=a").mkdir()
        (run / "scenario=a" / "fleet.parquet").write_bytes(b"x")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []
    with claimed_run_dir(tmp_path, "r") as run:
        (run / "leaves.parquet").write_bytes(b"x")
    assert [p.name for p in tmp_path.iterdir()] == ["r"] and (run / "leaves.parquet").exists()
