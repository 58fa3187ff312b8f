"""Shared fixtures: paths to the bundled datasets and a writable copy of the tiny one."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from capacity.text_storage import use_python_text

# the tests run as the command line, the app and the Dask workers do; test_text_storage
# checks that a notebook's default (Arrow) text writes the same plan
use_python_text()

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"
DEFAULT_DATA = ROOT / "data"
DEFAULT_PLAN_PAGE = ROOT / "docs" / "guide" / "default-plan.md"
"""The docs page that tells the default plan's story (figures pinned by tests)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the modules that hold a ``slow`` test first, each module kept in one piece.

    pytest-xdist's ``worksteal`` hands each worker one contiguous share of this order and
    lets an idle worker take the tail of a busy one's share, so the long end-to-end tests
    (batches with their own Dask workers, CPU burners, subprocess CLIs) start early on one
    worker instead of ending the run or running two at once, and the short tests fill in
    around them. The order within a module is kept (its module fixtures are set up once).
    """
    slow = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow)  # a stable sort: modules stay whole


@pytest.fixture(autouse=True)
def _main_module_restored() -> Iterator[None]:
    """Put back the process's ``__main__`` module after a test that ran the app.

    Streamlit runs a script as the process's ``__main__`` and leaves it there, so after
    an ``AppTest`` every worker process that ``multiprocessing`` spawns later in the
    same test process (a local Dask cluster's) ran ``ui/app.py`` again before its
    work: measured over a whole run, 42 CPU s of streamlit imports and app runs.
    """
    main = sys.modules["__main__"]
    yield
    if sys.modules["__main__"] is not main:
        sys.modules["__main__"] = main


@pytest.fixture
def tiny_dir(tmp_path: Path) -> Path:
    """A writable copy of tests/data/tiny_valid."""
    dst = tmp_path / "tiny"
    shutil.copytree(TINY, dst)
    return dst


_DEFAULT_PLANS: dict[tuple[str, str], Any] = {}


@pytest.fixture(scope="session")
def default_plan(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., tuple[Any, Any]]:
    """Solve the bundled data once per (scenario, objective) for the whole test run.

    Returns a function ``get(scenario="neutral", objective="cost") -> (dataset, result)``;
    the dataset has the scenario applied and the result is ``optimizer.solve``'s with the
    default options but the objective. Tests read these plans and never change them (a
    test that needs other options or edited data solves its own). Under pytest-xdist the
    workers of one run share each plan: the first to need it solves it and pickles it
    into the run's common temporary folder under a file lock, the others read it (a
    plan is solved once per run, not once per worker).
    """
    from capacity import apply_scenario, load_dataset
    from optimizer import SolveOptions, solve

    shared = _run_shared_dir(tmp_path_factory)

    def solved(scenario: str, objective: str) -> tuple[Any, Any]:
        ds = apply_scenario(load_dataset(DEFAULT_DATA), scenario)
        return ds, solve(ds, SolveOptions(objective=objective))

    def get(scenario: str = "neutral", objective: str = "cost") -> tuple[Any, Any]:
        key = (scenario, objective)
        if key not in _DEFAULT_PLANS:
            if shared is None:
                _DEFAULT_PLANS[key] = solved(scenario, objective)
            else:
                _DEFAULT_PLANS[key] = _shared_plan(shared, key, solved)
        return _DEFAULT_PLANS[key]

    return get


def _run_shared_dir(factory: pytest.TempPathFactory) -> Path | None:
    """The temporary folder every xdist worker of this run shares (None without xdist)."""
    import os

    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run or not os.environ.get("PYTEST_XDIST_WORKER"):
        return None
    d = factory.getbasetemp().parent / f"shared-plans-{run}"
    d.mkdir(exist_ok=True)
    return d


def _shared_plan(
    shared: Path, key: tuple[str, str], solved: Callable[[str, str], tuple[Any, Any]]
) -> tuple[Any, Any]:
    """Read the plan of ``key`` another worker pickled, or solve and pickle it."""
    import pickle

    from filelock import FileLock

    path = shared / f"default-{key[0]}-{key[1]}.pickle"
    with FileLock(str(path) + ".lock"):
        if path.is_file():
            return pickle.loads(path.read_bytes())
        plan = solved(*key)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(pickle.dumps(plan, protocol=pickle.HIGHEST_PROTOCOL))
        tmp.replace(path)
        return plan


@pytest.fixture
def wall_clock_alone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Hold the run's wall-clock lock for the test (xdist workers take turns).

    The test that burns both cores on purpose and the tests that assert a command's
    wall-clock time limit must not run at the same moment on two workers: under the
    burn a 20 s limit took 67 s of wall time to start, solve and tabulate. Both take
    this lock, and so do the batch tests that start worker processes of their own (a
    2026-12-05 suite saw the 20 s integer-units limit take 76 s beside one of them);
    every other test runs beside them as before. Without xdist it does nothing.
    """
    shared = _run_shared_dir(tmp_path_factory)
    if shared is None:
        yield
        return
    from filelock import FileLock

    with FileLock(str(shared / "wall-clock.lock")):
        yield


@pytest.fixture(scope="module")
def scheduler_address() -> Iterator[str]:
    """A Dask scheduler with one in-process worker thread, shared by a module's batches.

    Starting a local cluster of worker processes costs about 3 s a batch; tests of
    what a batch writes and reads (not of worker processes dying) run their batches
    here, as ``run_batch(..., scheduler=scheduler_address)``: the product's external
    scheduler path.
    """
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0"
    ) as cluster:
        yield cluster.scheduler_address
