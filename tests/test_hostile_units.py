"""Issue 16: each kind of hostile or extreme input, fixed once, tested at its smallest case."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from capacity.dataset import load_dataset, validate_directory
from capacity.safe_yaml import MAX_YAML_NODES, YamlLimitError, compose_yaml, load_yaml
from capacity.schema import SOLVER_SAFE_MAX
from capacity.validation import DataValidationError
from optimizer.model import build_model
from optimizer.solve import SolveOptions, Status, run_solver, solve
from tests.lp_helpers import LP_DATA

BOMB = "\n".join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        *(
            f"{x}: &{x} [{', '.join([f'*{p}'] * 9)}]"
            for p, x in zip("abcdefgh", "bcdefghi", strict=True)
        ),
        "scenarios: *i",
    ]
)


# --------------------------------------------------------------------- HiGHS refusal
def _model_with_rhs(value: float):  # type: ignore[no-untyped-def]
    model = build_model(load_dataset(LP_DATA / "lp_one"))
    cons = model.constraints.copy()
    row = int(np.flatnonzero(cons["family"].to_numpy() == "demand_balance")[0])
    cons.loc[row, "rhs"] = value
    return dataclasses.replace(model, constraints=cons)


def test_highs_refusing_a_model_is_an_error_with_its_reason() -> None:
    """A demand row of 1e20 (HiGHS's infinity as a lower bound) is refused by passModel."""
    raw = run_solver(_model_with_rhs(1e20), SolveOptions())
    assert raw.status == Status.error
    assert raw.x is None
    assert "HiGHS refused the model" in raw.message
    assert "row lower bounds of +inf" in raw.message


def test_highs_refusal_never_reads_as_optimal_in_a_plan() -> None:
    from optimizer.solve import solve_model

    (res,) = solve_model(_model_with_rhs(1e20), SolveOptions())
    assert res.status == Status.error
    assert res.objective_usd is None
    assert "refused" in res.message


def test_highs_refusal_through_a_retained_session() -> None:
    from optimizer.solve import HighsSession

    session = HighsSession(SolveOptions())
    raw, warm = session.run(_model_with_rhs(1e20))
    assert raw.status == Status.error and not warm
    assert "row lower bounds of +inf" in raw.message


# ------------------------------------------------------------ solver-safe numeric range
def _write_cell(d: Path, file: str, column: str, value: str) -> None:
    p = d / file
    lines = p.read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[1].split(",")
    cells[header.index(column)] = value
    lines[1] = ",".join(cells)
    p.write_text("\n".join(lines) + "\n")


def test_demand_beyond_the_safe_range_is_refused_at_its_cell(tiny_dir: Path) -> None:
    _write_cell(tiny_dir, "demand.csv", "demand_h100e", "1e20")
    errors = [f for f in validate_directory(tiny_dir) if f.severity == "error"]
    assert len(errors) == 1
    (f,) = errors
    assert (f.file, f.row, f.column, f.value) == ("demand.csv", 2, "demand_h100e", "1e20")
    assert f"at most {SOLVER_SAFE_MAX:g}" in f.message


def test_the_safe_range_bound_itself_is_accepted(tiny_dir: Path) -> None:
    _write_cell(tiny_dir, "demand.csv", "demand_h100e", "1e12")
    assert not [f for f in validate_directory(tiny_dir) if f.severity == "error"]


def test_integer_beyond_64_bits_is_refused_with_the_value_as_written(tiny_dir: Path) -> None:
    _write_cell(tiny_dir, "chips.csv", "lifetime_periods", "99999999999999999999")
    errors = [f for f in validate_directory(tiny_dir) if f.severity == "error"]
    assert len(errors) == 1
    (f,) = errors
    assert (f.file, f.row, f.column) == ("chips.csv", 2, "lifetime_periods")
    assert f.value == "99999999999999999999"
    assert "too large for a 64-bit integer" in f.message


# ------------------------------------------------------------------------- YAML bombs
def test_alias_bomb_is_refused_quickly() -> None:
    with pytest.raises(YamlLimitError, match="expand to more than 100,000 items") as e:
        load_yaml(BOMB)
    assert e.value.line is not None
    with pytest.raises(YamlLimitError):
        compose_yaml(BOMB)


def test_recursive_alias_and_deep_nesting_are_refused() -> None:
    with pytest.raises(YamlLimitError, match="recursive"):
        load_yaml("a: &a [*a]\n")
    with pytest.raises(YamlLimitError, match="too deeply"):
        load_yaml("[" * 50_000)


def test_ordinary_aliases_still_load() -> None:
    doc = load_yaml("base: &b {source: assumption}\nx: *b\n")
    assert doc == {"base": {"source": "assumption"}, "x": {"source": "assumption"}}
    assert MAX_YAML_NODES >= 10_000


@pytest.mark.parametrize("file", ["scenarios.yaml", "dataset.yaml"])
def test_alias_bomb_in_a_dataset_yaml_is_a_finding(tiny_dir: Path, file: str) -> None:
    (tiny_dir / file).write_text(BOMB)
    with pytest.raises(DataValidationError) as e:
        load_dataset(tiny_dir)
    (f,) = e.value.errors
    assert f.file == file and f.row is not None
    assert "expand to more than" in f.message


def test_alias_bomb_in_a_sweep_file_is_a_finding(tmp_path: Path) -> None:
    from optimizer.sweep import SweepSpecError, load_sweep

    p = tmp_path / "sweep.yaml"
    p.write_text(BOMB)
    with pytest.raises(SweepSpecError, match="expand to more than"):
        load_sweep(p)


def test_non_utf8_sweep_file_is_a_finding(tmp_path: Path) -> None:
    from optimizer.sweep import SweepSpecError, load_sweep

    p = tmp_path / "sweep.yaml"
    p.write_bytes(b"data: \xff\xfe\n")
    with pytest.raises(SweepSpecError, match="not UTF-8"):
        load_sweep(p)


def test_solve_refused_model_end_to_end_is_not_optimal() -> None:
    """The whole pipeline on a valid dataset still solves (no false refusal)."""
    res = solve(load_dataset(LP_DATA / "lp_one"))
    assert res.status == Status.optimal


# ------------------------------------------------------------------ scenario overrides
SCALE_DEMAND = """scenarios:
  typo:
    description: an override
    overrides:
      - op: scale
        table: demand
        column: demand_h100e
        where: {{customer: {customer}}}
        factor: {factor}
        source: assumption
"""


def test_factor_nan_is_reported_once_at_its_yaml_line(tiny_dir: Path) -> None:
    (tiny_dir / "scenarios.yaml").write_text(SCALE_DEMAND.format(customer="acme", factor="nan"))
    findings = validate_directory(tiny_dir)
    assert len(findings) == 1, findings
    (f,) = findings
    assert (f.severity, f.file, f.row) == ("error", "scenarios.yaml", 9)
    assert f.column == "scenarios.typo.overrides[0].factor"
    assert "factor must be a finite number" in f.message


@pytest.mark.parametrize("factor", ["inf", "-inf", "1e400", "1e13"])
def test_factor_not_finite_or_beyond_the_safe_range_is_refused(tiny_dir: Path, factor: str) -> None:
    (tiny_dir / "scenarios.yaml").write_text(SCALE_DEMAND.format(customer="acme", factor=factor))
    (f,) = validate_directory(tiny_dir)
    assert f.row == 9 and "factor must be" in f.message


def test_shift_by_an_absurd_number_of_periods_is_refused(tiny_dir: Path) -> None:
    text = (tiny_dir / "scenarios.yaml").read_text()
    (tiny_dir / "scenarios.yaml").write_text(
        text.replace("periods: 1", "periods: 99999999999999999999")
    )
    (f,) = validate_directory(tiny_dir)
    assert f.file == "scenarios.yaml" and f.row == 18
    assert "periods must be within ±400 quarters" in f.message


def test_where_matching_no_row_is_a_finding_with_did_you_mean(tiny_dir: Path) -> None:
    (tiny_dir / "scenarios.yaml").write_text(SCALE_DEMAND.format(customer="ACME", factor="0.5"))
    (f,) = validate_directory(tiny_dir)
    assert (f.severity, f.file, f.row) == ("error", "scenarios.yaml", 8)
    assert f.value == "customer=ACME"
    assert "customer 'ACME' is not in demand" in f.message
    assert "Did you mean 'acme'?" in f.message


def test_applied_override_matching_no_row_raises_with_did_you_mean(tiny_dir: Path) -> None:
    from capacity.scenarios import apply_overrides

    ds = load_dataset(tiny_dir)
    ov = {
        "op": "scale",
        "table": "demand",
        "column": "demand_h100e",
        "where": {"customer": "acm"},
        "factor": 2,
    }
    with pytest.raises(DataValidationError) as e:
        apply_overrides(ds, [ov])
    (f,) = e.value.errors
    assert f.column == "overrides[0].where"
    assert "Did you mean 'acme'?" in f.message
    window = {**ov, "where": {"customer": "acme"}, "from_period": "2030Q1"}
    with pytest.raises(DataValidationError, match="no row of demand matches"):
        apply_overrides(ds, [window])
