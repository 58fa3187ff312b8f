"""A fast, readable command line: light imports for help, plain help text, a brief summary."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import typer
from rich.console import Console
from test_report import fake_result
from typer.testing import CliRunner

from optimizer.cli.commands import app
from optimizer.output.summary import summarize
from optimizer.output.summary_render import BRIEF_LIMITS, VERBOSE_HINT, render_summary

ROOT = Path(__file__).resolve().parents[1]
ENV = {"COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
HEAVY = ("highspy", "pandas", "numpy", "pulp", "dask", "distributed", "streamlit", "pyarrow")

_PROBE = """
import contextlib, io, json, sys
sys.argv = ["capacity", *json.loads(sys.argv[1])]
from capacity_cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        main()
    except SystemExit as e:
        code = e.code
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def _probe(argv: list[str]) -> dict[str, object]:
    run = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argv)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "100", "TERM": "dumb"},
    )
    assert run.returncode == 0, run.stderr
    result: dict[str, object] = json.loads(run.stdout)
    return result


@pytest.mark.parametrize(
    "argv", [["--help"], ["validate", "--help"], ["solve", "--help"], ["alternatives", "--help"]]
)
def test_help_imports_no_solver_dataframe_cluster_or_app(argv: list[str]) -> None:
    found = _probe(argv)
    assert found["code"] == 0
    assert "Usage: capacity" in str(found["out"])
    modules = set(found["modules"])  # type: ignore[call-overload]
    assert not [m for m in HEAVY if m in modules]
    # the probe sees the real stack: importing the package's public names loads it
    assert "optimizer" in modules and "optimizer.plan" not in modules


def test_version_prints_the_installed_version_and_loads_nothing_heavy() -> None:
    from importlib import metadata

    found = _probe(["--version"])
    assert found["code"] == 0
    assert str(found["out"]).strip() == f"capacity-planner {metadata.version('capacity-planner')}"
    assert not [m for m in HEAVY if m in set(found["modules"])]  # type: ignore[call-overload]


_CASE_IMPORTS = """
import sys
import optimizer.analysis.batch, optimizer.analysis.batch_case, optimizer.analysis.batch_dask
import optimizer.analysis.sweep, optimizer.cli.commands, optimizer.plan.pipeline
before = "scipy.stats" in sys.modules
from optimizer.analysis.sweep import Distribution
d = Distribution(kind="uniform", low=0.8, high=1.2).frozen()
after = "scipy.stats" in sys.modules
print(before, after, round(float(d.mean()), 12), round(float(d.ppf(0.25)), 12))
"""


def test_a_case_process_imports_scipy_stats_only_when_it_samples() -> None:
    # a batch's Dask worker and CLI processes import the sweep model but sample nothing:
    # scipy.stats (about 0.9 s of each such process's start) waits for a distribution
    run = subprocess.run(
        [sys.executable, "-c", _CASE_IMPORTS], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert run.returncode == 0, run.stderr
    # uniform on [0.8, 1.2]: mean 1.0, first quartile 0.9
    assert run.stdout.split() == ["False", "True", "1.0", "0.9"]


def test_the_package_names_still_load_on_first_use() -> None:
    import capacity
    import optimizer

    assert optimizer.solve.__module__ == "optimizer.plan.pipeline"
    assert optimizer.SolveOptions.__name__ == "SolveOptions"
    for name in optimizer.__all__:
        assert getattr(optimizer, name) is not None
    for name in capacity.__all__:
        assert getattr(capacity, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = optimizer.nope  # type: ignore[attr-defined]


def _command_names() -> list[str]:
    group = typer.main.get_command(app)
    return ["", *sorted(group.commands)]  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", _command_names())
def test_help_has_no_type_after_flags_markup_or_internal_names(command: str) -> None:
    argv = [command, "--help"] if command else ["--help"]
    r = CliRunner().invoke(app, argv, env=ENV)
    assert r.exit_code == 0, r.output
    text = r.output
    assert "<bool>" not in text
    assert "``" not in text and ":func:" not in text and ":class:" not in text
    assert "os.execve" not in text and "optimizer." not in text
    assert "--help" in text and "Show this message and exit." in text


def test_the_value_type_of_an_option_that_takes_one_is_still_shown() -> None:
    r = CliRunner().invoke(app, ["validate", "--help"], env=ENV)
    assert "<int range>" in r.output or "INTEGER" in r.output


def _rendered(verbose: bool) -> list[str]:
    con = Console(record=True, width=120, color_system=None)
    render_summary(summarize(fake_result(), scenario="neutral"), con, verbose=verbose)
    return con.export_text().splitlines()


def test_the_brief_summary_fits_a_screen_and_says_what_verbose_adds() -> None:
    brief, full = _rendered(False), _rendered(True)
    assert len(brief) <= 40 and len(brief) < len(full)
    text = "\n".join(brief)
    assert VERBOSE_HINT.split(";")[0] in " ".join(brief[-3:])
    # acme is 90% served, beta 75%: both rows with unmet demand stay in the brief form
    assert "90.0%" in text and "75.0%" in text and "(rows with unmet demand)" in text
    # the unmet H100e beside demand and served (1.8M beside 1.8M hid 23.5k short)
    assert "acme │ training │ 100 │ 90 │ 10 │ 90.0%" in " ".join(text.split())
    assert "Fleet at end of" in text and "Chips by generation" not in text
    assert "Chips by generation" in "\n".join(full) and VERBOSE_HINT not in "\n".join(full)


def test_the_brief_summary_lists_only_the_top_binding_limits() -> None:
    s = summarize(fake_result(), scenario="neutral")
    copies = BRIEF_LIMITS // len(s.binding) + 1  # more limits than the brief form lists
    many = pd.concat([s.binding] * copies, ignore_index=True)
    s = replace(s, binding=many)
    con = Console(record=True, width=160, color_system=None)
    render_summary(s, con, verbose=False)
    text = con.export_text()
    assert f"(top {BRIEF_LIMITS};" in text
    con = Console(record=True, width=160, color_system=None)
    render_summary(s, con, verbose=True)
    assert f"(top {len(many)};" in con.export_text()


def test_each_public_name_has_one_home_and_is_exported() -> None:
    import capacity
    import optimizer

    for pkg in (capacity, optimizer):
        assert pkg.__all__ == sorted(pkg._HOMES)  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", sorted(typer.main.get_command(app).commands))  # type: ignore[attr-defined]
def test_help_fits_80_columns_and_cuts_no_word(command: str) -> None:
    """Every option's text wraps at 80 columns; none is cut with an ellipsis."""
    r = CliRunner().invoke(app, [command, "--help"], env={**ENV, "COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    long = [line for line in r.output.splitlines() if len(line) > 80]
    assert long == [] and "…" not in r.output, long or r.output
    assert "(training_clusters.csv)" in r.output or command != "solve"


def _command_names() -> list[str]:
    """Every subcommand of the CLI, from the Typer app (not a hand list)."""
    group = typer.main.get_command(app)
    return sorted(group.commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", _command_names())
def test_help_shows_no_python_types_and_one_name_for_the_dataset(command: str) -> None:
    """``--scenario <list[str]>`` and ``{sweep}`` leaked Typer's types into the help.

    (Typer prints a variadic argument's type, ``diff``'s ``ARGS <list[str]>``, whatever
    its metavar: options only are checked for it.)
    """
    r = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    options = [line for line in r.output.splitlines() if " --" in line]
    assert options and not [line for line in options if "list[" in line]
    assert "{sweep}" not in r.output
    usage = r.output.splitlines()[0]
    assert "[data]" not in usage and "[data_dir]" not in usage, usage


def test_the_command_list_shows_every_command_whole_at_80_columns() -> None:
    from optimizer.cli.commands import SHORT_HELP

    names = {c.name for c in app.registered_commands}
    assert names == set(SHORT_HELP)
    r = CliRunner().invoke(app, ["--help"], env={**ENV, "COLUMNS": "80"})
    assert r.exit_code == 0
    listing = r.output.split("Commands:", 1)[1].splitlines()
    for name, text in SHORT_HELP.items():
        line = next(ln for ln in listing if ln.split()[:1] == [name])
        assert line.rstrip().endswith(text) and len(line) <= 80, line
    assert not [ln for ln in listing if ln.rstrip().endswith("...")]


def test_validate_of_clean_data_says_valid_once(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["validate", str(ROOT / "data")], env=ENV)
    assert r.exit_code == 0, r.output
    assert r.output.strip().splitlines() == [
        f"OK: {ROOT / 'data'} is valid, no findings (base data)"
    ]
