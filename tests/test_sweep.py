"""Sweep specification: parsing (BaseLoader semantics), errors naming fields, expansion."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from capacity.dataset import load_dataset
from capacity.validation import Finding
from optimizer.analysis.sweep import fill_level
from optimizer.analysis.sweep_cases import expand_sweep
from optimizer.analysis.sweep_errors import SweepSpecError
from optimizer.analysis.sweep_read import load_sweep, parse_sweep

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny_valid"

SPEC = """
data: {tiny}
scenarios:
  - neutral
  - name: no_region
    base: squeeze
    overrides:
      - {{op: set, table: sites, column: region, where: {{site: dc-1}}, value: NO}}
grid:
  base: neutral
  axes:
    - name: cowos
      override: {{op: scale, table: supply_resources, column: capacity,
                 where: {{resource: cowos_wafers}}}}
      levels: [0.5, 1e0, 1.5]
    - name: delay
      override: {{op: shift, table: site_grid, column: grid_mw}}
      levels: [0, 1]
monte_carlo:
  base: neutral
  samples: 8
  seed: 7
  parameters:
    - name: demand
      override: {{op: scale, table: demand, column: demand_h100e}}
      distribution: {{kind: uniform, low: 0.5, high: 1.5}}
    - name: grid
      override: {{op: shift, table: site_grid, column: grid_mw}}
      distribution: {{kind: triangular, low: 0, mode: 1, high: 3}}
"""


AX = "grid:\n  axes:\n    - name: a\n"


def _doc(text: str) -> object:
    return yaml.load(text, Loader=yaml.BaseLoader)


def _spec(**fmt: str):
    return parse_sweep(_doc(SPEC.format(tiny=TINY, **fmt)))


def test_parse_and_expand_full_spec() -> None:
    spec = _spec()
    ds = load_dataset(TINY)
    cases = expand_sweep(spec, list(ds.scenarios))
    names = [c.name for c in cases]
    # 2 scenarios + 3 x 2 grid + 8 Monte Carlo samples, in that order
    assert len(cases) == 2 + 6 + 8
    assert names[:2] == ["neutral", "no_region"]
    assert names[2:8] == [
        "grid_cowos-0.5_delay-0",
        "grid_cowos-0.5_delay-1",
        "grid_cowos-1_delay-0",
        "grid_cowos-1_delay-1",
        "grid_cowos-1.5_delay-0",
        "grid_cowos-1.5_delay-1",
    ]
    assert names[8:] == [f"mc_{k:03d}" for k in range(8)]
    # YAML text "1e0" is the number 1.0 and "NO" stays the string "NO"
    g = cases[4]
    assert g.params == {"cowos": 1.0, "delay": 0.0}
    assert g.overrides[0].factor == 1.0 and g.overrides[1].periods == 0
    assert cases[1].overrides[0].value == "NO" and cases[1].base == "squeeze"


def test_monte_carlo_draws_are_seeded_and_follow_scipy() -> None:
    spec = _spec()
    a = spec.monte_carlo.draw()
    b = _spec().monte_carlo.draw()
    np.testing.assert_array_equal(a["demand"], b["demand"])
    rng = np.random.default_rng(7)
    want_u = stats.uniform(loc=0.5, scale=1.0).rvs(size=8, random_state=rng)
    want_t = stats.triang(c=1 / 3, loc=0, scale=3).rvs(size=8, random_state=rng)
    np.testing.assert_allclose(a["demand"], want_u)
    # shift levels are whole quarters
    np.testing.assert_array_equal(a["grid"], np.round(want_t))
    cases = expand_sweep(spec)
    mc = [c for c in cases if c.kind == "monte_carlo"]
    assert [c.overrides[0].factor for c in mc] == pytest.approx(list(want_u))
    other = spec.monte_carlo.model_copy(update={"seed": 8}).draw()
    assert not np.allclose(other["demand"], a["demand"])


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ("data: x\nscenarios: [a]\ncolour: red\n", "colour", "unknown key 'colour'."),
        (
            AX + "      override: {op: scale, table: demand, column: demand_h100e}\n"
            "      levels: [1]\n      step: 2\n",
            "grid.axes[0].step",
            "unknown key 'step'.",
        ),
        (
            AX + "      override: {op: scale, table: demand, column: demand_h100e}\n"
            "      levels: [-1]\n",
            "grid.axes[0].levels[0]",
            "factor must not be negative",
        ),
        (
            AX + "      override: {op: scale, table: demand, column: demand_h100e, factor: 2}\n"
            "      levels: [1]\n",
            "grid.axes[0].override.factor",
            "leave 'factor' out",
        ),
        (
            "monte_carlo:\n  samples: 5\n  parameters:\n    - name: a\n"
            "      override: {op: scale, table: demand, column: demand_h100e}\n"
            "      distribution: {kind: triangular, low: 0, high: 1}\n",
            "monte_carlo.parameters[0].distribution",
            "missing mode",
        ),
        (
            "monte_carlo:\n  samples: many\n  parameters: []\n",
            "monte_carlo.samples",
            "valid integer",
        ),
        (
            "scenarios:\n  - name: x\n    overrides:\n"
            "      - {op: scale, table: nope, column: a, factor: 1}\n",
            "scenarios[0].overrides[0]",
            "unknown table",
        ),
        (  # a case named grid_d-1.5 would be solved as a 2-quarter shift
            AX + "      override: {op: shift, table: site_grid, column: grid_mw}\n"
            "      levels: [0, 1.5]\n",
            "grid.axes[0].levels[1]",
            "level 1.5 shifts by whole quarters only: use 1 or 2",
        ),
        (  # a range that allows a negative scale factor: found on reading, not at a draw
            "monte_carlo:\n  samples: 2\n  parameters:\n    - name: hbm\n"
            "      override: {op: scale, table: supply_resources, column: capacity}\n"
            "      distribution: {kind: uniform, low: -1, high: 0.5}\n",
            "monte_carlo.parameters[0].distribution.low",
            "low -1 gives an invalid override: factor must not be negative",
        ),
    ],
)
def test_errors_name_the_field(text: str, field: str, message: str) -> None:
    with pytest.raises(SweepSpecError) as ei:
        parse_sweep(_doc(text))
    locs = [loc for loc, _ in ei.value.errors]
    msgs = " ".join(m for _, m in ei.value.errors)
    assert any(loc.startswith(field) for loc in locs), ei.value.errors
    assert message in msgs, ei.value.errors


def test_unknown_scenario_and_duplicate_names_are_rejected() -> None:
    spec = parse_sweep(_doc(f"data: {TINY}\nscenarios: [neutral, pessimistic, neutral]\n"))
    with pytest.raises(SweepSpecError) as ei:
        expand_sweep(spec, ["neutral", "squeeze"])
    errs = dict(ei.value.errors)
    assert "unknown scenario 'pessimistic'" in errs["scenarios[1]"]
    assert "two cases are named 'neutral'" in str(ei.value)


def test_a_case_named_base_must_be_the_base_data() -> None:
    """A case named 'base' records its overrides as scenario 'base', which reads back as
    the data as loaded: refused before solving, unless it is the base data itself."""
    text = f"data: {TINY}\nscenarios:\n  - name: base\n    base: squeeze\n"
    with pytest.raises(SweepSpecError) as ei:
        expand_sweep(parse_sweep(_doc(text)), ["neutral", "squeeze"])
    assert "cannot carry overrides" in dict(ei.value.errors)["scenarios[0]"]
    (case,) = expand_sweep(parse_sweep(_doc(f"data: {TINY}\nscenarios: [base]\n")), ["neutral"])
    assert (case.name, case.overrides) == ("base", ())


def test_a_case_name_too_long_for_its_folder_is_rejected_before_solving() -> None:
    """A 240-character name: ``scenario=<name>`` would fit, its staging folder would not.

    ``.scenario=<name>.partial-<pid>`` must fit one file name (255 bytes); such a case
    used to be solved, then fail with "[Errno 36] File name too long".
    """
    from optimizer.output.run_folder import MAX_SCENARIO_NAME_BYTES, scenario_dir

    long, fits = "a" * 240, "b" * MAX_SCENARIO_NAME_BYTES
    text = f"data: {TINY}\nscenarios:\n  - name: {long}\n    base: neutral\n  - name: {fits}\n"
    text += "    base: neutral\n"
    with pytest.raises(SweepSpecError) as ei:
        expand_sweep(parse_sweep(_doc(text)), ["neutral"])
    errs = dict(ei.value.errors)
    assert list(errs) == ["scenarios[0]"]  # the 229-byte name is accepted
    assert (
        f"240 bytes in its folder name, more than the {MAX_SCENARIO_NAME_BYTES}"
        in errs["scenarios[0]"]
    )
    assert MAX_SCENARIO_NAME_BYTES == 229
    with pytest.raises(ValueError, match="shorten it"):
        scenario_dir("out", long)
    # an escaped character counts as written: 77 "/" are 231 bytes of "%2F"
    with pytest.raises(ValueError, match="231 bytes"):
        scenario_dir("out", "/" * 77)


def test_case_key_changes_with_data_and_overrides() -> None:
    spec = _spec()
    cases = expand_sweep(spec)
    k = cases[2].key("hash-a")
    assert k == expand_sweep(_spec())[2].key("hash-a")
    assert k != cases[2].key("hash-b")
    assert k != cases[3].key("hash-a")


def test_fill_level_fills_the_right_field() -> None:
    assert (
        fill_level({"op": "scale", "table": "demand", "column": "demand_h100e"}, 0.5).factor == 0.5
    )
    assert fill_level({"op": "shift", "table": "site_grid", "column": "grid_mw"}, 2.4).periods == 2
    ov = fill_level({"op": "set", "table": "eligibility", "column": "derate"}, 1.0)
    assert ov.value == "1"


def test_load_sweep_reports_bad_yaml(tmp_path: Path) -> None:
    p = tmp_path / "s.yaml"
    p.write_text("scenarios: [a\n")
    with pytest.raises(SweepSpecError, match="not valid YAML"):
        load_sweep(p)
    with pytest.raises(SweepSpecError, match="cannot read"):
        load_sweep(tmp_path / "missing.yaml")


def test_shipped_example_expands_over_default_data() -> None:
    spec = load_sweep(ROOT / "examples" / "sweep.yaml")
    ds = load_dataset(ROOT / spec.data if not spec.data.is_absolute() else spec.data)
    cases = expand_sweep(spec, list(ds.scenarios))
    kinds = [c.kind for c in cases]
    assert kinds.count("scenario") == 3
    assert kinds.count("grid") == 12  # CoWoS x OpenAI demand x carbon price
    assert kinds.count("monte_carlo") == 50


def test_a_carbon_price_axis_sets_the_policy_price_per_case(tmp_path: Path) -> None:
    from optimizer.analysis.sweep_cases import cases_dataset

    p = tmp_path / "carbon.yaml"
    p.write_text(
        f"data: {ROOT / 'data'}\n"
        "grid:\n"
        "  base: neutral\n"
        "  axes:\n"
        "    - name: carbon_price   # USD/t: none, EPA social cost of carbon\n"
        "      override: {op: set, table: carbon_policy, column: carbon_price_usd_per_t}\n"
        "      levels: [0, 210]\n"
    )
    spec = load_sweep(p)
    ds = load_dataset(spec.data)
    cases = expand_sweep(spec, list(ds.scenarios))
    assert [c.name for c in cases] == ["grid_carbon_price-0", "grid_carbon_price-210"]
    prices = [
        cases_dataset(ds, c).table("carbon_policy")["carbon_price_usd_per_t"].tolist()
        for c in cases
    ]
    assert prices == [[0.0], [210.0]]


# --------------------------------------------------- findings: file, line, did you mean
def _load_error(tmp_path: Path, text: str, known: list[str] | None = None) -> SweepSpecError:
    p = tmp_path / "x.yaml"
    p.write_text(text)
    with pytest.raises(SweepSpecError) as ei:
        spec = load_sweep(p)
        expand_sweep(spec, known)
    return ei.value


def test_unknown_key_names_file_line_and_suggests(tmp_path: Path) -> None:
    text = (
        "data: data\n"
        "grid:\n"
        "  axes:\n"
        "    - name: pue\n"
        "      overide: {op: scale, table: sites, column: pue_air}\n"
        "      levels: [0.5, 1.0]\n"
    )
    err = _load_error(tmp_path, text)
    f = str(tmp_path / "x.yaml")
    # one finding: the typo; not also "grid.axes: Tuple should have at least 1 item"
    assert err.findings == [
        Finding(
            "error",
            f,
            5,
            "grid.axes[0].overide",
            None,
            "unknown key 'overide'. Did you mean 'override'?",
        )
    ]
    assert str(err) == (
        "invalid sweep specification\n"
        f"{f} line 5: grid.axes[0].overide: unknown key 'overide'. Did you mean 'override'?"
    )


def test_errors_are_reported_by_line_with_follow_ons_dropped(tmp_path: Path) -> None:
    text = (
        "data: data\n"  # 1
        "scenarios:\n"  # 2
        "  - name: x\n"  # 3
        "    colour: red\n"  # 4
        "    overrides:\n"  # 5
        "      - op: scale\n"  # 6
        "        table: demand\n"  # 7
        "        column: demand_h100e\n"  # 8
        "        factr: 2\n"  # 9
        "grid:\n"  # 10
        "  axes:\n"  # 11
        "    - name: a\n"  # 12
        "      override: {op: scale, table: demand, column: demand_h100e,\n"  # 13
        "                 wher: {customer: acme}}\n"  # 14
        "      levels: [1]\n"  # 15
        "    - name: b\n"  # 16
        "      override: {op: scale, table: demand, column: demand_h100e}\n"  # 17
        "      levels:\n"  # 18
        "        - 1\n"  # 19
        "        - -2\n"  # 20
        "monte_carlo:\n"  # 21
        "  samples: 5\n"  # 22
        "  parameters:\n"  # 23
        "    - name: q\n"  # 24
        "      override: {op: scale, table: demand, column: demand_h100e}\n"  # 25
        "      distribution: {kind: uniform, low: 0, hgh: 1}\n"  # 26
    )
    err = _load_error(tmp_path, text)
    got = [(f.row, f.column, f.value, f.message) for f in err.findings]
    assert got == [
        (4, "scenarios[0].colour", None, "unknown key 'colour'."),
        (9, "scenarios[0].overrides[0].factr", None, "unknown key 'factr'. Did you mean 'factor'?"),
        (14, "grid.axes[0].override.wher", None, "unknown key 'wher'. Did you mean 'where'?"),
        (
            20,
            "grid.axes[1].levels[1]",
            None,
            "level -2 gives an invalid override: factor must not be negative, got -2",
        ),
        (
            26,
            "monte_carlo.parameters[0].distribution.hgh",
            None,
            "unknown key 'hgh'. Did you mean 'high'?",
        ),
    ]


def test_unknown_scenario_names_file_line_and_suggests(tmp_path: Path) -> None:
    text = "data: data\nscenarios:\n  - neutral\n  - sqeeze\ngrid:\n  base: neutrl\n" + (
        "  axes:\n    - name: a\n"
        "      override: {op: scale, table: demand, column: demand_h100e}\n"
        "      levels: [1]\n"
    )
    err = _load_error(tmp_path, text, known=["neutral", "squeeze"])
    f = str(tmp_path / "x.yaml")
    defines = "the dataset defines: base, neutral, squeeze."
    assert err.findings == [
        Finding(
            "error",
            f,
            4,
            "scenarios[1]",
            "sqeeze",
            f"unknown scenario 'sqeeze'; {defines} Did you mean 'squeeze'?",
        ),
        Finding(
            "error",
            f,
            6,
            "grid.base",
            "neutrl",
            f"unknown scenario 'neutrl'; {defines} Did you mean 'neutral'?",
        ),
    ]
    assert f"{f} line 4: scenarios[1]: unknown scenario 'sqeeze'" in str(err)


def test_yaml_syntax_error_names_its_line(tmp_path: Path) -> None:
    err = _load_error(tmp_path, "data: data\nscenarios: [a\n")
    assert err.findings[0].row == 3 and err.findings[0].message.startswith("not valid YAML")


_CLI = [sys.executable, "-c", "from optimizer.cli.commands import main; main()"]


def test_a_grid_too_large_to_expand_is_refused_before_any_case_is_made(tmp_path: Path) -> None:
    """8 axes of 20 levels (2.56e10 cases) were expanded in memory: a MemoryError
    traceback, or the machine out of memory. The count is checked first."""
    import resource
    import subprocess

    axes = "".join(
        f"    - name: a{i}\n      override: {{op: scale, table: demand, column: demand_h100e}}\n"
        f"      levels: [{', '.join(str(1 + j / 100) for j in range(20))}]\n"
        for i in range(8)
    )
    text = "data: data\ngrid:\n  axes:\n" + axes
    err = _load_error(tmp_path, text)
    sizes = " x ".join(f"a{i} 20" for i in range(8))
    assert [(f.row, f.column, f.value) for f in err.findings] == [
        (3, "grid.axes", "25,600,000,000 cases")
    ]
    assert f"the grid has 25,600,000,000 cases ({sizes} levels), more than the 100,000" in str(err)
    # the command says so in a second, with 1 GB of address space
    sweep = tmp_path / "huge.yaml"
    sweep.write_text(f"data: {TINY}\n" + text.split("\n", 1)[1])

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2**30 * 3, 2**30 * 3))

    res = subprocess.run(
        [*_CLI, "batch", str(sweep), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=cap,
    )
    assert res.returncode != 0 and "Traceback" not in res.stderr + res.stdout
    assert "25,600,000,000 cases" in " ".join((res.stdout + res.stderr).split())


_CARBON = "{op: set, table: carbon_policy, column: carbon_price_usd_per_t}"
_COWOS = "{op: scale, table: supply_resources, column: capacity, where: {resource: [%s]}}"


@pytest.mark.parametrize(
    ("axes", "line", "field", "words"),
    [
        # two axes setting one cell: both cases ran at the second axis's value while the
        # summary recorded the first axis's levels 0 and 210
        (
            f"    - {{name: carbon, override: {_CARBON}, levels: [0, 210]}}\n"
            f"    - {{name: again, override: {_CARBON}, levels: [50]}}\n",
            5,
            "grid.axes[1]",
            "axis 'again' sets carbon_policy.carbon_price_usd_per_t where axis 'carbon' also",
        ),
        # a scale then a set of the same cells: the scale's level took no effect
        (
            f"    - {{name: cw, override: {_COWOS % 'cowos_wafers'}, levels: [0.5]}}\n"
            "    - {name: cw2, override: {op: set, table: supply_resources, column: capacity},"
            " levels: [9]}\n",
            5,
            "grid.axes[1]",
            "axis 'cw2' sets supply_resources.capacity where axis 'cw' also changes it",
        ),
        # overrides: [] made cases that changed nothing, recorded with their levels
        (
            "    - {name: a, overrides: [], levels: [1, 2]}\n",
            4,
            "grid.axes[0].overrides",
            "needs at least one override",
        ),
    ],
)
def test_axes_that_would_not_run_as_recorded_are_refused(
    tmp_path: Path, axes: str, line: int, field: str, words: str
) -> None:
    err = _load_error(tmp_path, f"data: data\ngrid:\n  axes:\n{axes}")
    (f,) = err.findings
    assert (f.row, f.column) == (line, field) and words in f.message, f


def test_axes_on_disjoint_cells_or_composing_scales_are_kept() -> None:
    text = (
        "data: data\ngrid:\n  axes:\n"
        f"    - {{name: cw, override: {_COWOS % 'cowos_wafers'}, levels: [0.5, 1]}}\n"
        f"    - {{name: cw_again, override: {_COWOS % 'cowos_wafers'}, levels: [2]}}\n"
        "    - {name: hbm, override: {op: set, table: supply_resources, column: capacity,"
        " where: {resource: [hbm_stacks]}}, levels: [9]}\n"
    )
    cases = expand_sweep(parse_sweep(yaml.safe_load(text), "x.yaml"))
    assert len(cases) == 2 and all(len(c.overrides) == 3 for c in cases)


@pytest.mark.parametrize(
    ("mc", "field", "words"),
    [
        ("seed: -1", "monte_carlo.seed", "greater than or equal to 0"),
        ("seed: 0", "monte_carlo.parameters[0].distribution", "sd inf: the parameters must be"),
    ],
)
def test_monte_carlo_inputs_that_crashed_at_the_draw_are_findings(
    tmp_path: Path, mc: str, field: str, words: str
) -> None:
    """seed -1 was numpy's ValueError and sd inf scipy's 'Domain error' at the draw."""
    sd = "inf" if "0" == mc.split()[-1] else "0.1"
    text = (
        "data: data\nmonte_carlo:\n  samples: 3\n"
        f"  {mc}\n"
        "  parameters:\n"
        f"    - {{name: cw, override: {_COWOS % 'cowos_wafers'},\n"
        f"       distribution: {{kind: truncnorm, mean: 1, sd: {sd}, low: 0.5, high: 1.5}}}}\n"
    )
    err = _load_error(tmp_path, text)
    (f,) = err.findings
    assert f.column == field and words in f.message, f


def test_a_draw_that_makes_an_invalid_override_is_a_finding(tmp_path: Path) -> None:
    """An unclipped lognormal with sigma 40 drew a scale factor of 1.9e14: pydantic's
    'factor must be at most 1e+12' traceback in the middle of expanding the sweep."""
    text = (
        "data: data\nmonte_carlo:\n  samples: 20\n  seed: 0\n  parameters:\n"
        f"    - {{name: cw, override: {_COWOS % 'cowos_wafers'},\n"
        "       distribution: {kind: lognormal, median: 1, sigma: 40}}\n"
    )
    err = _load_error(tmp_path, text)
    (f,) = err.findings
    assert f.column == "monte_carlo.parameters[0].distribution" and f.row == 7
    assert "of 'cw' is" in f.message and "bound the distribution with low and high" in f.message


def test_set_levels_of_a_text_column_are_the_values_as_written() -> None:
    """Levels ["007", "1e3", "NaN"] of a set of sites.region were applied as '7', '1000'
    and 'nan'; a numeric column's levels are still numbers."""
    text = (
        "data: data\ngrid:\n  axes:\n"
        "    - {name: r, override: {op: set, table: sites, column: region,"
        " where: {site: [norway]}}, levels: ['007', '1e3', 'NaN']}\n"
        "    - {name: p, override: {op: set, table: carbon_policy,"
        " column: carbon_price_usd_per_t}, levels: ['050']}\n"
    )
    cases = expand_sweep(parse_sweep(yaml.safe_load(text), "x.yaml"))
    assert [c.overrides[0].value for c in cases] == ["007", "1e3", "NaN"]
    assert {c.overrides[1].value for c in cases} == {"50"}
    assert [c.name for c in cases][0] == "grid_r-007_p-50"


def test_an_override_finding_names_the_sweep_line_and_axis(tmp_path: Path) -> None:
    """A where typo on an axis was reported per case as file 'overrides', no line,
    column 'overrides[1].where' (counted over every axis), not the sweep's line or axis."""
    from optimizer.analysis.batch_invalid import validate_cases

    TINY_DATA = Path(__file__).resolve().parent / "data" / "tiny_valid"
    text = (
        "data: data\ngrid:\n  axes:\n"
        "    - {name: dem, override: {op: scale, table: demand, column: demand_h100e},"
        " levels: [1.1]}\n"
        "    - {name: cw, override: {op: scale, table: supply_resources, column: capacity,\n"
        "       where: {resource: [cowos_wafer]}}, levels: [0.5]}\n"
    )
    p = tmp_path / "s.yaml"
    p.write_text(text)
    cases = expand_sweep(load_sweep(p))
    found = validate_cases(load_dataset(TINY_DATA), cases)
    (f,) = found["grid_dem-1.1_cw-0.5"]
    assert (f.file, f.row, f.column) == (str(p), 5, "grid.axes[1] (cw).where"), f
    assert "cowos_wafer" in f.message


def test_a_shift_range_that_rounds_to_one_level_is_refused(tmp_path: Path) -> None:
    """A Monte Carlo shift in [-0.4, 0.4] rounded every draw to 0 quarters without a word."""
    text = (
        "data: data\nmonte_carlo:\n  samples: 3\n  parameters:\n"
        "    - {name: delay, override: {op: shift, table: site_grid, column: grid_mw},\n"
        "       distribution: {kind: uniform, low: -0.4, high: 0.4}}\n"
    )
    (f,) = _load_error(tmp_path, text).findings
    assert f.column == "monte_carlo.parameters[0].distribution"
    assert "every draw in [-0.4, 0.4] rounds to 0" in f.message


def test_case_names_that_differ_only_in_letter_case_are_rejected() -> None:
    """scenario=neutral and scenario=Neutral are one folder on macOS and Windows."""
    text = f"data: {TINY}\nscenarios:\n  - neutral\n  - {{name: Neutral, base: squeeze}}\n"
    spec = parse_sweep(_doc(text))
    with pytest.raises(SweepSpecError) as ei:
        expand_sweep(spec, ["neutral", "squeeze"])
    assert "cases 'neutral' and 'Neutral' differ only in letter case" in str(ei.value)
