"""Every command checks its options and its output before it computes.

Bad values are usage errors (exit 2, the option and its valid range named) found
while the command line is parsed; an unusable output folder or file, an unknown
scenario and bad data stop the command (exit 1) before anything is loaded or solved;
an infeasible plan is explained in every command as ``capacity solve`` explains it,
and no raw traceback reaches the terminal.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

import capacity.dataset
import optimizer.analysis.decompose
import optimizer.analysis.decompose_cuts
import optimizer.analysis.hedge
import optimizer.analysis.monte_carlo
from capacity.dataset import load_dataset
from capacity.scenarios import UnknownScenarioError, apply_scenario
from optimizer import SolveOptions, solve
from optimizer.cli.bench import BENCH_SIZES
from optimizer.cli.checks import check_out_file
from optimizer.cli.commands import app
from optimizer.output.formatting import text_column

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"
ENV = {"COLUMNS": "200"}

DARK = """  dark:
    description: the grid is almost gone (the initial fleet cannot be powered)
    overrides:
      - op: scale
        table: site_grid
        column: grid_mw
        factor: 0.01
        source: assumption
"""


def _run(args: list[str]) -> tuple[Result, str]:
    res = CliRunner().invoke(app, args, env=ENV)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res, " ".join(res.output.split())


def _forbid(monkeypatch: pytest.MonkeyPatch, *targets: tuple[Any, str]) -> None:
    """Make each ``(module, name)`` fail the test if it is called."""
    for module, name in targets:

        def boom(*_a: Any, _n: str = name, **_k: Any) -> Any:
            pytest.fail(f"{_n} was called: the command computed before refusing")

        monkeypatch.setattr(module, name, boom)


@pytest.fixture
def no_compute(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading, sampling, every hedge solve and the benchmark's run fail the test."""
    import subprocess

    _forbid(
        monkeypatch,
        (subprocess, "call"),
        (capacity.dataset, "load_dataset"),
        (optimizer.analysis.monte_carlo, "sample_scenarios"),
        (optimizer.analysis.decompose, "hedge_decomposed"),
        (optimizer.analysis.hedge, "extensive_form_objective"),
    )


@pytest.fixture
def dark_dir(tmp_path: Path) -> Path:
    """tiny_valid plus a scenario 'dark' whose grid cannot power the initial fleet."""
    dst = tmp_path / "dark_data"
    shutil.copytree(TINY, dst)
    with (dst / "scenarios.yaml").open("a", encoding="utf-8") as f:
        f.write(DARK)
    return dst


# --- hedge -------------------------------------------------------------------------


@pytest.mark.parametrize("tol", ["-1", "nan", "2", "0", "1", "inf"])
def test_hedge_refuses_a_tolerance_outside_0_1_before_any_solve(tol: str, no_compute: None) -> None:
    res, text = _run(["hedge", str(TINY), "--tol", tol])
    assert res.exit_code == 2
    assert "Invalid value for '--tol'" in text
    assert f"{float(tol):g} is not a relative tolerance: give a number in (0, 1)" in text


def test_hedge_refuses_a_negative_seed_and_base_all(no_compute: None) -> None:
    res, text = _run(["hedge", str(TINY), "--seed", "-1"])
    assert res.exit_code == 2 and "Invalid value for '--seed'" in text
    res, text = _run(["hedge", str(TINY), "--base", "all"])
    assert res.exit_code == 2 and "takes one scenario name, not 'all'" in text


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (
            ["--chance", "commitment:acme:0.9", "--risk", "cvar", "--frontier"],
            "--chance solves its own program (--chance-method): drop --risk cvar",
        ),
        (
            ["--method", "extensive", "--out", "OUT"],
            "--out writes the L-shaped run's tables",
        ),
        (["--weights", "0,1"], "Invalid value for '--weights': needs --frontier"),
        (["--fresh", "5"], "needs --chance"),
        (["--chance-method", "exact"], "needs --chance"),
    ],
)
def test_hedge_refuses_an_option_its_mode_would_drop(
    args: list[str], words: str, tmp_path: Path, no_compute: None
) -> None:
    """Each of these ran without the option's effect and exit 0 (a break test)."""
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    res, text = _run(["hedge", str(TINY), "-n", "2", "-w", "0", *args])
    assert res.exit_code == 2, text
    assert words in " ".join(text.split()), text
    assert not (tmp_path / "out").exists()


def test_hedge_misspelt_base_says_did_you_mean_before_sampling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _forbid(monkeypatch, (optimizer.analysis.monte_carlo, "sample_scenarios"))
    res, text = _run(["hedge", str(ROOT / "data"), "--base", "negatvie"])
    assert res.exit_code == 1
    assert "unknown scenario 'negatvie'" in text
    assert "did you mean 'negative'" in text.lower()


def test_hedge_out_under_a_regular_file_is_refused_first(tmp_path: Path, no_compute: None) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    res, text = _run(["hedge", str(TINY), "--out", str(blocker / "out")])
    assert res.exit_code == 1
    assert f"--out {blocker / 'out'}: {blocker} exists and is not a directory" in text
    assert "nothing was solved" in text


def _first_draw_explanation(data: Path) -> list[str]:
    """The elastic explanation of the hedge's first draw, as ``capacity solve`` finds it."""
    start = apply_scenario(load_dataset(data), "dark")
    _, dsets, _ = optimizer.analysis.monte_carlo.sample_scenarios(start, 2, 0, base=None)
    result = solve(dsets[0])
    assert result.status.value == "infeasible"
    assert result.infeasibility is not None
    return [str(m) for m in result.infeasibility["message"]]


def test_hedge_explains_an_infeasible_draw_as_solve_does(dark_dir: Path) -> None:
    want = _first_draw_explanation(dark_dir)
    assert want and all(m.startswith("site dc-1 grid in 2026Q") for m in want)
    res, text = _run(["hedge", str(dark_dir), "--base", "dark", "-n", "2", "--workers", "0"])
    assert res.exit_code == 1
    assert "scenario mc_000 has no plan even on its own (Infeasible)" in text
    assert "Status: infeasible" in text
    assert "Infeasible: limits that had to give (elastic re-solve)" in text
    for message in want:
        assert message in text
    assert "Traceback" not in res.output and "RuntimeError" not in res.output


def test_hedge_extensive_says_why_there_is_no_rp(dark_dir: Path) -> None:
    want = _first_draw_explanation(dark_dir)
    res, text = _run(["hedge", str(dark_dir), "--base", "dark", "-n", "2", "--method", "extensive"])
    assert res.exit_code == 1
    assert "RP = None" not in text and "None USD" not in text
    assert "extensive form: infeasible, no RP (expected cost): no plan found" in text
    assert "scenario mc_000 has no plan even on its own" in text
    for message in want:
        assert message in text


def test_hedge_extensive_prints_rp_in_usd() -> None:
    start = apply_scenario(load_dataset(TINY), "neutral")
    _, dsets, _ = optimizer.analysis.monte_carlo.sample_scenarios(start, 2, 0, base=None)
    rp, status, _ = optimizer.analysis.hedge.extensive_form_objective(dsets, first_stage="capacity")
    assert status == "optimal" and rp is not None
    res, text = _run(["hedge", str(TINY), "-n", "2", "--method", "extensive"])
    assert res.exit_code == 0, text
    rp_text = text_column("rp_usd", [rp])[1][0]  # the tables' money format ($1.96M)
    assert rp_text.startswith("$") and f"extensive form: optimal, RP = {rp_text}" in text
    # the draws and the two steps of the extensive form report progress, also to a pipe
    assert "sampling: 2 to do" in text and "sampling: 2/2 done" in text
    assert "extensive form: 2 to do" in text
    assert "extensive form: 1/2 done, now solve (" in text or "extensive form: 2/2" in text
    extensive = [line for line in res.output.splitlines() if line.startswith("extensive form:")]
    assert any(line.startswith("extensive form: 2/2 done, elapsed") for line in extensive)
    assert not any("left" in line for line in extensive)


def test_sample_scenarios_refuses_an_unknown_base_and_a_negative_seed() -> None:
    ds = load_dataset(TINY)
    with pytest.raises(UnknownScenarioError, match="unknown scenario 'neutrl'"):
        optimizer.analysis.monte_carlo.sample_scenarios(ds, 1, base="neutrl")
    with pytest.raises(ValueError, match="seed must be >= 0, got -3"):
        optimizer.analysis.monte_carlo.sample_scenarios(ds, 1, seed=-3)


# --- solve, batch, bench, export-lp --------------------------------------------------


def test_batch_refuses_another_commands_run_folder(tmp_path: Path, no_compute: None) -> None:
    """A batch into an alternatives run folder replaced its optimum's plan by a plan of
    other data, and read_run warned of nothing."""
    run = tmp_path / "run"
    (run / "scenario=neutral").mkdir(parents=True)
    (run / "manifest.json").write_text('{"run_id": "x", "scenarios": {}}')
    sweep = tmp_path / "s.yaml"
    sweep.write_text(f"data: {TINY}\nscenarios: [neutral]\n")
    res, text = _run(["batch", str(sweep), "-o", str(run)])
    assert res.exit_code == 1
    assert "is the run folder of another command" in text and "Nothing was solved" in text
    assert sorted(p.name for p in run.iterdir()) == ["manifest.json", "scenario=neutral"]


def test_an_unknown_solver_is_said_once_by_batch(tmp_path: Path) -> None:
    """The solver check's exit is a RuntimeError: the batch's Dask handler caught it and
    added "cannot start the batch on a local Dask cluster: 1"."""
    sweep = tmp_path / "s.yaml"
    sweep.write_text(f"data: {TINY}\nscenarios: [neutral]\n")
    res, text = _run(["batch", str(sweep), "--solver", "nope", "-o", str(tmp_path / "out")])
    assert res.exit_code != 0
    assert "solver 'nope' is not available" in text
    assert "cannot start the batch" not in text


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf"])
@pytest.mark.parametrize("command", ["solve", "batch", "bench"])
def test_time_limits_are_finite_and_above_zero(command: str, value: str, no_compute: None) -> None:
    target = {"solve": [str(TINY)], "batch": ["sweep.yaml"], "bench": []}[command]
    res, text = _run([command, *target, "--time-limit", value])
    assert res.exit_code == 2
    assert "Invalid value for '--time-limit'" in text
    assert f"{float(value):g} is not a time limit: give a finite number of seconds above 0" in text


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["batch", "s.yaml", "--worker-timeout", "nan"], "--worker-timeout"),
        (["batch", "s.yaml", "--worker-timeout", "-1"], "--worker-timeout"),
        (["batch", "s.yaml", "--workers", "0"], "--workers"),
        (["bench", "--batch", "-1"], "--batch"),
        (["bench", "--xl-time-limit", "nan"], "--xl-time-limit"),
        (["solve", str(TINY), "--threads", "0"], "--threads"),
    ],
)
def test_other_bad_numbers_are_usage_errors(args: list[str], option: str, no_compute: None) -> None:
    res, text = _run(args)
    assert res.exit_code == 2
    assert f"Invalid value for '{option}'" in text


def test_bench_sizes_are_checked_with_a_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    _forbid(monkeypatch, (subprocess, "call"))
    res, text = _run(["bench", "--sizes", "default,smal"])
    assert res.exit_code == 2
    sizes = "small, default, medium, large, xl, xxl, xxl96"
    assert f"unknown size 'smal'; the sizes are {sizes}." in text
    assert "Did you mean 'small'?" in text


def test_bench_size_names_are_the_generator_sizes() -> None:
    from benchmarks.generate import SIZES

    assert tuple(SIZES) == BENCH_SIZES


def test_bench_out_under_a_regular_file_is_refused_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    _forbid(monkeypatch, (subprocess, "call"))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    res, text = _run(["bench", "--out", str(blocker / "r.md")])
    assert res.exit_code == 1
    assert f"--out {blocker / 'r.md'}: {blocker} exists and is not a directory" in text


@pytest.mark.parametrize(
    ("command", "option"),
    [("export-lp", "--lp"), ("export-lp", "--mps"), ("solve", "--write-lp")],
)
def test_model_files_are_checked_before_loading(
    command: str, option: str, tmp_path: Path, no_compute: None
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    target = blocker / "model.lp"
    extra = ["--no-report"] if command == "solve" else []
    res, text = _run([command, str(TINY), option, str(target), *extra])
    assert res.exit_code == 1
    assert f"{option} {target}: {blocker} exists and is not a directory; nothing was written" in (
        text
    )


def test_check_out_file_says_what_is_wrong(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert check_out_file(tmp_path / "new" / "m.lp") is None
    assert check_out_file(blocker) is None  # an existing file is replaced
    assert check_out_file(tmp_path) == f"{tmp_path} is a directory, not a file"
    assert check_out_file(blocker / "m.lp") == f"{blocker} exists and is not a directory"


@pytest.mark.parametrize(
    ("error", "code", "message"),
    [
        (KeyboardInterrupt(), 130, "interrupted; nothing was written."),
        (
            RuntimeError("iteration 3: no operable plan yet; mc_001 (Infeasible)"),
            1,
            "error: no hedged plan was found: iteration 3: no operable plan yet; mc_001",
        ),
        (OSError("address in use"), 1, "error: cannot run the hedge on Dask: address in use"),
        (
            optimizer.analysis.decompose_cuts.ScenarioInfeasibleError("mc_000", 0, "Infeasible"),
            1,
            "solved alone as 'capacity solve' solves it, mc_000 has a plan: the "
            "decomposition's subproblem failed numerically",
        ),
    ],
)
def test_hedge_failures_are_one_message_and_an_exit_code(
    error: BaseException, code: int, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*_a: Any, **_k: Any) -> Any:
        raise error

    monkeypatch.setattr(optimizer.analysis.decompose, "hedge_decomposed", fail)
    res, text = _run(["hedge", str(TINY), "-n", "2", "--workers", "0"])
    assert res.exit_code == code
    assert message in text
    assert "Traceback" not in res.output


def test_bench_runs_the_checkouts_benchmarks_there(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import subprocess

    calls: list[tuple[list[str], Any]] = []
    monkeypatch.setattr(subprocess, "call", lambda cmd, cwd=None: calls.append((cmd, cwd)) or 0)
    res, text = _run(["bench", "--sizes", "small", "--out", str(tmp_path / "R.md")])
    assert res.exit_code == 0, text
    ((cmd, cwd),) = calls
    assert cmd[1:3] == ["-m", "benchmarks.run"] and Path(cwd) == ROOT


@pytest.mark.parametrize(
    ("args", "first", "second"),
    [
        (["export-lp", str(TINY), "--lp", "F", "--mps", "F"], "--lp", "--mps"),
        (["solve", str(TINY), "--write-lp", "F", "--write-mps", "F"], "--write-lp", "--write-mps"),
    ],
)
def test_two_outputs_naming_one_file_are_a_usage_error(
    args: list[str], first: str, second: str, tmp_path: Path, no_compute: None
) -> None:
    """The second file written replaced the first (a break test): refused before loading."""
    path = tmp_path / "a.lp"
    res, text = _run([str(path) if a == "F" else a for a in args])
    assert res.exit_code == 2, text
    assert f"error: {first} and {second} name the same file" in " ".join(text.split())
    assert not path.exists()


def test_hedge_iterations_csv_counts_are_whole_numbers(tmp_path: Path) -> None:
    """iteration, cuts, master rows, simplex iterations and halvings read 0, 1, 9 (not 1.0)."""
    import pandas as pd

    res, text = _run(["hedge", str(TINY), "-n", "3", "-w", "0", "--out", str(tmp_path)])
    assert res.exit_code == 0, text
    (run,) = tmp_path.glob("hedge-*")
    lines = (run / "iterations.csv").read_text().splitlines()
    header = lines[0].split(",")
    it = pd.read_csv(run / "iterations.csv")
    for c in ("iteration", "cuts", "master_rows", "simplex_iterations", "halvings"):
        cells = [line.split(",")[header.index(c)] for line in lines[1:]]
        assert all("." not in v for v in cells), (c, cells)
    assert it["iteration"].tolist() == list(range(len(it)))


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (
            ["export-lp", str(TINY), "--scenario", "neutral", "--scenario", "squeeze", "--lp", "F"],
            "'--scenario' / '-s': takes one value and was given 2 times (neutral, squeeze)",
        ),
        (
            ["alternatives", str(TINY), "-s", "neutral", "--scenario=squeeze"],
            "'--scenario' / '-s': takes one value and was given 2 times (neutral, squeeze)",
        ),
        (
            ["hedge", str(TINY), "-n", "2", "--samples", "3"],
            "'--samples' / '-n': takes one value and was given 2 times (2, 3)",
        ),
    ],
)
def test_an_option_of_one_value_given_twice_is_a_usage_error(
    args: list[str], words: str, tmp_path: Path, no_compute: None
) -> None:
    """Click kept the last value: export-lp wrote the second scenario only (a break test)."""
    res, text = _run([str(tmp_path / "a.lp") if a == "F" else a for a in args])
    assert res.exit_code == 2, text
    assert words in " ".join(text.split()), text
    assert not (tmp_path / "a.lp").exists()


def test_an_option_of_several_values_may_repeat() -> None:
    from typer.main import get_command

    from optimizer.cli.commands import app, refuse_repeated_options

    solve = get_command(app).commands["solve"]  # type: ignore[attr-defined]
    params = solve.get_params(solve.make_context("solve", [str(TINY)]))
    refuse_repeated_options(params, ["--scenario", "neutral", "--scenario", "squeeze"])


@pytest.mark.parametrize(
    "command", ["batch s.yaml", "hedge DATA", "replan DATA", "alternatives DATA"]
)
@pytest.mark.parametrize(
    "address", ["notaurl", "", "tcp://", "foo://h:1", "tcp://h:0", "tcp://h:x", "inproc://h/1/2"]
)
def test_a_scheduler_that_is_not_an_address_is_a_usage_error(
    command: str, address: str, no_compute: None
) -> None:
    """Dask's ValueError ('missing port number') was a traceback after the data loaded."""
    args = command.replace("DATA", str(TINY)).split() + ["--scheduler", address]
    res, text = _run(args)
    assert res.exit_code == 2
    assert f"Invalid value for '--scheduler': {address!r} is not a Dask scheduler address" in text
    assert "e.g. tcp://127.0.0.1:8786" in text
    assert "Traceback" not in text


def test_scheduler_addresses_dask_takes_are_kept() -> None:
    from optimizer.analysis.dask_cluster import ClusterOptions, open_client
    from optimizer.analysis.dask_remote import check_scheduler_address

    for address in ["tcp://127.0.0.1:8786", "127.0.0.1:8786", "tls://h:1", "tcp://[::1]:65535"]:
        assert check_scheduler_address(address) == address
    with (
        pytest.raises(ValueError, match="'h:65536' is not a Dask scheduler address"),
        open_client(ClusterOptions(scheduler="h:65536")),
    ):
        pass
    # a scheduler of this process (the tests' in-process clusters) is one for Python
    assert check_scheduler_address("inproc://10.0.0.1/1/2") == "inproc://10.0.0.1/1/2"


def test_a_tls_file_that_does_not_exist_is_a_usage_error(tmp_path: Path, no_compute: None) -> None:
    """It was read only when the client connected ("encryption required ...", exit 1)."""
    missing = tmp_path / "ca.pem"
    args = ["batch", "s.yaml", "--scheduler", "tls://127.0.0.1:1", "--tls-ca-file", str(missing)]
    res, text = _run(args)
    assert res.exit_code == 2
    assert "Invalid value for '--tls-ca-file'" in text and "does not exist" in text


def test_a_tls_scheduler_without_a_certificate_says_which_files_to_give() -> None:
    """Dask's TypeError ("TLS expects a `ssl_context`") was a traceback, exit 1."""
    from optimizer.analysis.dask_cluster import ClusterOptions, open_client

    with (
        pytest.raises(OSError, match="speaks TLS and this client has no certificate") as e,
        open_client(ClusterOptions(scheduler="tls://127.0.0.1:1")),
    ):
        pass
    assert "--tls-ca-file, --tls-cert and --tls-key" in str(e.value)


def test_batch_on_a_tls_scheduler_without_a_certificate_is_one_line(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(f"data: {TINY}\nscenarios: [base]\n", encoding="utf-8")
    out = str(tmp_path / "o")
    res, text = _run(["batch", str(sweep), "--scheduler", "tls://127.0.0.1:1", "-o", out])
    assert res.exit_code == 1
    assert (
        "error: cannot start the batch on the Dask scheduler tls://127.0.0.1:1: the scheduler "
        "tls://127.0.0.1:1 speaks TLS and this client has no certificate" in text
    )
    assert "Traceback" not in text


@pytest.mark.parametrize(
    ("args", "victim"),
    [
        (["solve", "D", "--no-report", "--write-lp", "D/sites.csv"], "sites.csv"),
        (["solve", "D", "--no-report", "--write-mps", "D/scenarios.yaml"], "scenarios.yaml"),
        (["export-lp", "D", "--mps", "D/demand.csv"], "demand.csv"),
        (["solve", "D", "--no-report", "--scenarios-file", "S", "--write-lp", "S"], None),
        # a table the folder lacks yet is read the next time it loads
        (["export-lp", "D", "--lp", "D/contract_terms.csv"], None),
        (["solve", "D", "--no-report", "--write-mps", "D/Migration.parquet"], None),
    ],
)
def test_a_model_file_over_the_runs_inputs_is_refused(
    args: list[str], victim: str | None, tmp_path: Path, no_compute: None
) -> None:
    """The LP/MPS text replaced the dataset's CSV it was built from, exit 0."""
    data = tmp_path / "d"
    shutil.copytree(TINY, data)
    scen = tmp_path / "s.yaml"
    scen.write_text("scenarios: {}\n", encoding="utf-8")
    before = {p.name: p.read_bytes() for p in data.iterdir()} | {"s": scen.read_bytes()}
    res, text = _run([a.replace("D", str(data)).replace("S", str(scen)) for a in args])
    assert res.exit_code == 2
    assert "is a file of the input" in text or "is a name" in text, text
    assert "nothing was written" in text
    after = {p.name: p.read_bytes() for p in data.iterdir()} | {"s": scen.read_bytes()}
    assert after == before


def test_a_new_model_file_in_the_data_folder_and_an_empty_name(tmp_path: Path) -> None:
    data = tmp_path / "d"
    shutil.copytree(TINY, data)
    res, text = _run(["export-lp", str(data), "--lp", ""])
    assert res.exit_code == 2 and "--lp .: names no file (give a file name)" in text
    res, text = _run(["export-lp", str(data), "--lp", str(data / "model.lp")])
    assert res.exit_code == 0, text  # a new file beside the data is none of its inputs
    assert (data / "model.lp").read_text(encoding="utf-8").startswith("\\* capacity_plan")


@pytest.mark.parametrize(
    ("args", "option", "needs"),
    [
        (["hedge", "DATA", "--alpha", "0.5"], "--alpha", "--risk cvar"),
        (["hedge", "DATA", "--weight", "3"], "--weight", "--risk cvar"),
        (["hedge", "DATA", "--method", "extensive", "--tol", "0.5"], "--tol", "the L-shaped run"),
        (
            ["hedge", "DATA", "--chance", "commitment:a:0.9", "--max-iter", "5"],
            "--max-iter",
            "the L",
        ),
        (["hedge", "DATA", "--method", "extensive", "-w", "1"], "--workers", "the L-shaped"),
        (["hedge", "DATA", "--tree", "t.yaml", "--scheduler", "h:1"], "--scheduler", "the L"),
        (["hedge", "DATA", "--tree", "t.yaml", "-n", "5"], "--samples", "sampled scenarios"),
        (["hedge", "DATA", "--tree", "t.yaml", "--seed", "3"], "--seed", "sampled scenarios"),
        (["hedge", "DATA", "--method", "extensive", "--reference"], "--reference", "the L"),
        (
            ["hedge", "DATA", "--risk", "cvar", "--frontier", "--weight", "2"],
            "--weight",
            "--risk cvar without --frontier",
        ),
        (["replan", "DATA", "--revision", "f.csv", "--volatility", "0.3"], "--volatility", "--"),
        (["replan", "DATA", "-w", "3", "--scheduler", "h:1"], "--workers", "a local cluster"),
        (["alternatives", "DATA", "-w", "2", "--scheduler", "h:1"], "--workers", "a local"),
        # batch waited 20 s on the scheduler, then failed (or exited 0, every case done)
        (["batch", "s.yaml", "-w", "1", "--scheduler", "h:1"], "--workers", "a local cluster"),
        (["bench", "--sizes", "default", "--xl-time-limit", "5"], "--xl-time-limit", "the xl"),
        (["alternatives", "DATA", "--seed", "9"], "--seed", "--directions"),
        (["solve", "DATA", "--no-report", "--units"], "--units", "a report"),
    ],
)
def test_an_option_its_mode_does_not_read_is_a_usage_error(
    args: list[str], option: str, needs: str, no_compute: None
) -> None:
    """Each ran with exit 0 and without the option's effect."""
    res, text = _run([str(TINY) if a == "DATA" else a for a in args])
    assert res.exit_code == 2, text
    assert f"Invalid value for '{option}': needs {needs}" in text


def test_every_mode_bound_option_is_an_option_of_its_command() -> None:
    """A renamed parameter would leave its check reading nothing (never refusing)."""
    import typer

    from optimizer.cli.option_needs import NEEDS

    group = typer.main.get_command(app)
    for command, needs in NEEDS.items():
        names = {p.name for p in group.commands[command].params}  # type: ignore[attr-defined]
        assert {n.option for n in needs} <= names, command


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["solve", "DATA", "--threads", "2147483647"], "'--threads'"),
        (["batch", "s.yaml", "-w", "1000"], "'--workers' / '-w'"),
        (["hedge", "DATA", "-w", "1000"], "'--workers' / '-w'"),
        (["replan", "DATA", "-w", "1000"], "'--workers' / '-w'"),
        (["alternatives", "DATA", "-w", "1000"], "'--workers' / '-w'"),
    ],
)
def test_threads_and_workers_stop_at_four_per_core(
    args: list[str], option: str, no_compute: None
) -> None:
    """--threads 2147483647 was killed for memory; -w 1000 started 1000 processes."""
    from capacity.limits import MAX_PARALLEL

    assert MAX_PARALLEL == 4 * (os.cpu_count() or 1)
    res, text = _run([str(TINY) if a == "DATA" else a for a in args])
    assert res.exit_code == 2
    assert (
        f"Invalid value for {option}: Input should be less than or equal to {MAX_PARALLEL}" in text
    )
    with pytest.raises(ValueError, match=f"threads: {MAX_PARALLEL + 1} is not a number of threads"):
        SolveOptions(threads=MAX_PARALLEL + 1)


def test_a_scenarios_file_that_is_a_folder_is_called_one(tmp_path: Path) -> None:
    """It was reported 'scenarios file not found' though the path exists."""
    from capacity.recorded_inputs import read_scenarios_file
    from capacity.validation import DataValidationError

    with pytest.raises(DataValidationError) as e:
        read_scenarios_file(tmp_path)
    assert e.value.findings[0].message == f"is a directory, not a scenarios file: {tmp_path}"
    with pytest.raises(DataValidationError) as e:
        read_scenarios_file(tmp_path / "none.yaml")
    assert e.value.findings[0].message.startswith("scenarios file not found: ")


def test_the_python_batch_refuses_a_thousand_local_workers(tmp_path: Path) -> None:
    """run_batch(workers=1000) started a local cluster of a thousand processes."""
    from capacity.limits import MAX_PARALLEL
    from optimizer.analysis.batch import run_batch

    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(f"data: {TINY}\nscenarios: [base]\n", encoding="utf-8")
    with pytest.raises(
        ValueError, match=f"workers: 1000 is not a number of workers \\(1 to {MAX_PARALLEL}"
    ):
        run_batch(sweep, tmp_path / "out", workers=1000, progress=False)
