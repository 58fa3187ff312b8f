"""Scenario overrides: scale, shift, set; YAML typing; diff lists exactly the changed cells."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from capacity.dataset import load_dataset
from capacity.scenarios import (
    UnknownScenarioError,
    apply_overrides,
    apply_scenario,
    diff_datasets,
)
from capacity.validation import DataValidationError
from tests.conftest import TINY


@pytest.fixture(scope="module")
def tiny():
    return load_dataset(TINY)


def test_yaml_values_come_out_as_meant(tiny) -> None:
    ov = tiny.scenarios["squeeze"].overrides
    assert ov[0].factor == 1e-1  # written "1e-1": YAML 1.1 would read it as text
    assert ov[2].value == "NO"  # the Norway region code, not False


def test_scale_shift_set_and_exact_diff(tiny) -> None:
    sq = apply_scenario(tiny, "squeeze")
    res = sq.table("supply_resources").set_index("period")["capacity"]
    assert res.to_dict() == {"2026Q1": pytest.approx(100.0), "2026Q2": pytest.approx(100.0)}
    # grid 30, 40 delayed one quarter, first value held: 30, 30
    assert sq.table("site_grid")["grid_mw"].tolist() == [30.0, 30.0]
    assert sq.table("sites")["region"].tolist() == ["NO"]
    d = diff_datasets(tiny, sq)
    assert d.to_dict("records") == [
        {"table": "site_grid", "key": "dc-1/2026Q2", "column": "grid_mw", "old": "40", "new": "30"},
        {
            "table": "supply_resources",
            "key": "cowos_wafers/2026Q1",
            "column": "capacity",
            "old": "1000",
            "new": "100",
        },
        {
            "table": "supply_resources",
            "key": "cowos_wafers/2026Q2",
            "column": "capacity",
            "old": "1000",
            "new": "100",
        },
    ]
    assert sq.hash != tiny.hash
    assert sq.scenario == "squeeze"
    # the base is untouched
    assert tiny.table("site_grid")["grid_mw"].tolist() == [30.0, 40.0]


def test_shift_with_zero_fill_and_advance(tiny) -> None:
    later = apply_overrides(
        tiny,
        [
            {
                "op": "shift",
                "table": "demand",
                "column": "demand_h100e",
                "where": {"customer": "acme", "workload": "training"},
                "periods": "1",
                "fill": "zero",
            }
        ],
    )
    # training demand only exists in 2026Q1: moving it later needs a 2026Q2 row to land on,
    # and the vacated 2026Q1 becomes zero
    dem = later.table("demand").set_index(["workload", "period"])["demand_h100e"]
    assert dem[("training", "2026Q1")] == 0.0
    earlier = apply_overrides(
        tiny, [{"op": "shift", "table": "site_grid", "column": "grid_mw", "periods": -1}]
    )
    assert earlier.table("site_grid")["grid_mw"].tolist() == [40.0, 40.0]


def test_shift_of_a_period_column_moves_the_dates(tiny) -> None:
    ds = apply_overrides(
        tiny, [{"op": "shift", "table": "commitments", "column": "from_period", "periods": -1}]
    )
    assert ds.table("commitments")["from_period"].tolist() == ["2026Q1"]
    # the shifted row is paired with its old self, so the diff reads as a move
    d = diff_datasets(tiny, ds)
    assert d.to_dict("records") == [
        {
            "table": "commitments",
            "key": "acme/trainium/2026Q2",
            "column": "from_period",
            "old": "2026Q2",
            "new": "2026Q1",
        },
    ]


def test_diff_lists_rows_present_on_one_side_only(tiny) -> None:
    fleet = tiny.table("initial_fleet")
    extra = fleet.assign(chip="trn2", chips=64.0)
    ds = tiny.replace(initial_fleet=pd.concat([fleet, extra], ignore_index=True))
    d = diff_datasets(tiny, ds)
    assert d.to_dict("records") == [
        {
            "table": "initial_fleet",
            "key": "trn2/dc-1/2024Q2",
            "column": "chips",
            "old": "(no row)",
            "new": "64",
        },
    ]


def test_scale_limited_to_periods(tiny) -> None:
    ds = apply_overrides(
        tiny,
        [
            {
                "op": "scale",
                "table": "site_grid",
                "column": "grid_mw",
                "from_period": "2026Q2",
                "factor": 2,
            }
        ],
    )
    assert ds.table("site_grid")["grid_mw"].tolist() == [30.0, 80.0]


def test_override_that_breaks_the_data_is_rejected(tiny) -> None:
    with pytest.raises(DataValidationError) as exc:
        apply_overrides(
            tiny, [{"op": "scale", "table": "sites", "column": "pue_air", "factor": 0.5}]
        )
    (f,) = exc.value.errors
    assert (f.file, f.row, f.column, f.value) == ("sites.csv", 2, "pue_air", "0.65")


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        (
            {"op": "scale", "table": "sites", "column": "pue_ar", "factor": 1},
            "Did you mean 'pue_air'?",
        ),
        (
            {"op": "scale", "table": "site", "column": "pue_air", "factor": 1},
            "Did you mean 'sites'?",
        ),
        ({"op": "scale", "table": "sites", "column": "pue_air"}, "scale needs a factor"),
        (
            {"op": "set", "table": "sites", "column": "pue_air", "value": "low"},
            "set: 'low' is not a number (pue_air is float)",
        ),
        (
            {"op": "scale", "table": "sites", "column": "pue_air", "factor": 1, "colour": 1},
            "unknown key 'colour'",
        ),
        ({"op": "grow", "table": "sites", "column": "pue_air"}, "'scale', 'shift' or 'set'"),
    ],
)
def test_malformed_overrides(tiny, override, needle) -> None:
    with pytest.raises(DataValidationError) as exc:
        apply_overrides(tiny, [override])
    assert any(needle in f.message for f in exc.value.errors), exc.value.errors


def test_unknown_scenario_lists_the_known_ones(tiny) -> None:
    with pytest.raises(UnknownScenarioError, match="defines: base, neutral, squeeze"):
        apply_scenario(tiny, "pessimistic")


def test_bad_scenarios_yaml_names_scenario_and_field(tiny_dir: Path) -> None:
    (tiny_dir / "scenarios.yaml").write_text(
        "scenarios:\n  bad:\n    overrides:\n"
        "      - {op: scale, table: sites, column: pue_air, factor: lots}\n"
    )
    with pytest.raises(DataValidationError) as exc:
        load_dataset(tiny_dir)
    (f,) = exc.value.errors
    assert (f.file, f.row) == ("scenarios.yaml", 4)  # the line of the override
    assert f.column == "scenarios.bad.overrides[0].factor"
    assert f.value == "lots"


def test_misspelt_override_key_suggests_the_field(tiny_dir: Path) -> None:
    text = (tiny_dir / "scenarios.yaml").read_text().replace("factor: 1e-1", "factr: 1e-1")
    (tiny_dir / "scenarios.yaml").write_text(text)
    with pytest.raises(DataValidationError) as exc:
        load_dataset(tiny_dir)
    (f,) = exc.value.errors
    assert f.row == 12  # the line of the misspelt key itself
    assert f.message == "unknown key 'factr'. Did you mean 'factor'?"


def test_default_dataset_scenarios_all_validate() -> None:
    from tests.conftest import DEFAULT_DATA

    ds = load_dataset(DEFAULT_DATA)
    assert {"optimistic", "neutral", "negative"} <= set(ds.scenarios)
    for name in ("optimistic", "neutral", "negative"):
        sc = apply_scenario(ds, name)
        assert sc.scenario == name
    assert len(diff_datasets(ds, apply_scenario(ds, "negative"))) > 0
    assert len(diff_datasets(ds, apply_scenario(ds, "neutral"))) == 0


def test_a_scenario_that_edits_a_contract_is_warned_at_its_line(tmp_path: Path) -> None:
    """Contracts are facts: an override of commitments is a warning that says why."""
    import shutil

    shutil.copytree(TINY, tmp_path / "d")
    (tmp_path / "d" / "scenarios.yaml").write_text(
        "scenarios:\n"
        "  halved:\n"
        "    overrides:\n"
        "      - op: scale\n"
        "        table: commitments\n"
        "        column: min_it_mw\n"
        "        factor: 0.5\n"
        "        source: 'assumption: a dispute'\n",
        encoding="utf-8",
    )
    ds = load_dataset(tmp_path / "d")
    found = [w for w in ds.warnings if w.file == "scenarios.yaml"]
    assert len(found) == 1
    w = found[0]
    assert (w.severity, w.row, w.column, w.value) == (
        "warning",
        5,
        "scenarios.halved.overrides[0].table",
        "commitments",
    )
    assert "should not rewrite a signed contract" in w.message
    assert "read the breach" in w.message


def test_an_override_without_a_source_is_warned_and_a_scenarios_file_keeps_its_warnings(
    tmp_path: Path,
) -> None:
    """Every override names its source (a warning otherwise), in scenarios.yaml or a file."""
    import shutil

    from capacity.recorded_inputs import read_scenarios_file

    shutil.copytree(TINY, tmp_path / "d")
    text = (
        "scenarios:\n"
        "  tight:\n"
        "    overrides:\n"
        "      - op: scale\n"
        "        table: demand\n"
        "        column: demand_h100e\n"
        "        factor: 1.1\n"
    )
    (tmp_path / "d" / "scenarios.yaml").write_text(text, encoding="utf-8")
    ds = load_dataset(tmp_path / "d")
    (w,) = [w for w in ds.warnings if w.file == "scenarios.yaml"]
    assert (w.severity, w.row, w.column, w.value) == (
        "warning",
        4,
        "scenarios.tight.overrides[0].source",
        "",
    )
    assert "override has no source" in w.message
    # a --scenarios-file replaces the scenarios: their warnings replace the old ones
    (tmp_path / "other.yaml").write_text(text.replace("tight", "loose"), encoding="utf-8")
    other = ds.with_scenarios(read_scenarios_file(tmp_path / "other.yaml"), "other.yaml")
    assert [w.column for w in other.warnings if w.file == "scenarios.yaml"] == []
    assert [w.column for w in other.warnings if w.file == "other.yaml"] == [
        "scenarios.loose.overrides[0].source"
    ]


def test_the_default_scenarios_leave_every_contract_alone() -> None:
    from tests.conftest import DEFAULT_DATA

    ds = load_dataset(DEFAULT_DATA)
    assert not [w for w in ds.warnings if "signed contract" in w.message]
    for name in ("neutral", "optimistic", "negative"):
        sc = ds.scenarios[name]
        assert all(ov.table != "commitments" for ov in sc.overrides), name


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"op": "scale", "factor": 1, "value": "0"}, "value is not read by op 'scale'"),
        ({"op": "set", "value": "0", "factor": 5}, "factor is not read by op 'set'"),
        ({"op": "scale", "factor": 2, "fill": "zero"}, "fill is not read by op 'scale'"),
        ({"op": "set", "value": "1", "periods": 1, "factor": 2}, "factor, periods are not read"),
    ],
)
def test_a_key_of_another_op_is_refused(override: dict[str, object], message: str) -> None:
    """scale with value: 0 validated, and its value was dropped without a word."""
    from pydantic import ValidationError

    from capacity.scenario_spec import Override

    with pytest.raises(ValidationError, match=message):
        Override(table="supply_resources", column="capacity", **override)  # type: ignore[arg-type]
    shift = Override(table="site_grid", column="grid_mw", op="shift", periods=1, fill="zero")
    assert Override(**shift.to_dict()) == shift  # the round trip keeps fill="hold"/"zero"


@pytest.mark.parametrize(
    ("name", "body", "words"),
    [
        # a list body was read as a scenario with no overrides: validate said OK, diff
        # "no cell differs", solve the base data
        ("cut", [{"op": "scale"}], "a scenario is a mapping with 'description' and 'overrides'"),
        ("cut", "text", "not the text 'text'"),
        ("all", {"overrides": []}, "the name 'all' is reserved"),
        # 'base' is the data as loaded: with overrides, --scenario base applied them
        (
            "base",
            {
                "overrides": [
                    {"op": "scale", "table": "demand", "column": "demand_h100e", "factor": 2}
                ]
            },
            "cannot carry overrides",
        ),
        # names no report folder can hold were refused only after the solve
        ("", {"overrides": []}, "scenario name must not be empty"),
        ("x" * 300, {"overrides": []}, "bytes in its folder name"),
    ],
)
def test_a_scenario_that_cannot_be_what_it_says_is_a_finding(
    name: str, body: object, words: str
) -> None:
    from capacity.scenario_spec import parse_scenarios

    scenarios, findings = parse_scenarios({"scenarios": {name: body}})
    assert name not in scenarios
    (f,) = findings
    assert f.severity == "error" and f.column == f"scenarios.{name}" and words in f.message


def test_an_empty_scenario_body_is_a_scenario_without_overrides() -> None:
    from capacity.scenario_spec import parse_scenarios

    for body in (None, "", "~", "null"):
        scenarios, findings = parse_scenarios({"scenarios": {"plain": body}})
        assert findings == [] and scenarios["plain"].overrides == ()
    # 'base' without overrides is the data as loaded: a report's record of such a plan
    scenarios, findings = parse_scenarios({"scenarios": {"base": {"overrides": []}}})
    assert findings == [] and scenarios["base"].overrides == ()


def test_a_shift_of_rows_without_a_period_is_an_error(tmp_path: Path) -> None:
    """A shift of carbon_policy's horizon-wide row (empty period) changed nothing and
    counted as applied: validate OK, diff 'no cell differs'."""
    import shutil

    from capacity.scenarios import apply_overrides

    d = tmp_path / "d"
    shutil.copytree(TINY, d)
    (d / "carbon_policy.csv").write_text("period,carbon_price_usd_per_t,carbon_cap_t\n,50,\n")
    ds = load_dataset(d)
    ov = {
        "op": "shift",
        "table": "carbon_policy",
        "column": "carbon_price_usd_per_t",
        "periods": 2,
        "fill": "zero",
        "source": "x",
    }
    with pytest.raises(DataValidationError) as e:
        apply_overrides(ds, [ov])
    (f,) = e.value.errors
    assert f.column == "carbon_policy.carbon_price_usd_per_t"
    assert "1 row(s) it matches in carbon_policy have no period" in f.message


def test_a_value_a_scenario_makes_invalid_names_the_scenario_and_its_override(tmp_path):
    """`set chips.cooling: water` was reported at chips.csv row 2 alone by `solve` (as if
    the CSV held it); `validate` named the scenario. Both now name it and the override."""
    import shutil

    from capacity.dataset import validate_directory

    shutil.copytree(Path(__file__).resolve().parents[1] / "data", tmp_path / "d")
    with open(tmp_path / "d" / "scenarios.yaml", "a") as fh:
        fh.write(
            "  wet:\n    overrides:\n"
            "      - {op: scale, table: demand, column: demand_h100e, factor: 1.1}\n"
            "      - {op: set, table: chips, column: cooling, where: {chip: h100}, "
            "value: water, source: test}\n"
        )
    with pytest.raises(DataValidationError) as e:
        apply_scenario(load_dataset(tmp_path / "d"), "wet")
    (f,) = e.value.findings
    assert (f.file, f.row, f.column, f.value) == ("chips.csv", 2, "cooling", "water")
    assert f.message.startswith("scenario 'wet' (overrides[1]: set chips.cooling): must be")
    (g,) = [x for x in validate_directory(tmp_path / "d", "wet") if x.severity == "error"]
    assert g.message == f.message  # named once, not twice


def test_a_check_across_columns_names_the_override_of_its_table(tmp_path):
    """An edit ends trainium4's sales in 2028Q1; the negative scenario's shift of its
    first_period to 2028Q3 inverts the window. The finding is on last_period, so no
    override of that column was named, and 2028Q3 appeared nowhere in the user's data."""
    import shutil

    shutil.copytree(Path(__file__).resolve().parents[1] / "data", tmp_path / "d")
    chips = pd.read_csv(tmp_path / "d" / "chips.csv", dtype=str, keep_default_na=False)
    chips.loc[chips["chip"] == "trainium4", "last_period"] = "2028Q1"
    chips.to_csv(tmp_path / "d" / "chips.csv", index=False)
    with pytest.raises(DataValidationError) as e:
        apply_scenario(load_dataset(tmp_path / "d"), "negative")
    (f,) = e.value.findings
    assert f.column == "last_period"
    assert "scenario 'negative' (overrides[3]: shift chips.first_period): sale window" in f.message


def test_scenario_names_that_differ_only_in_letter_case_are_an_error() -> None:
    """scenario=neutral and scenario=Neutral are one report folder on macOS and Windows."""
    from capacity.scenario_spec import parse_scenarios

    doc = {"scenarios": {"neutral": {"overrides": []}, "Neutral": {"overrides": []}}}
    scenarios, findings = parse_scenarios(doc)
    assert list(scenarios) == ["neutral"]
    assert [f.severity for f in findings] == ["error"]
    assert "'neutral' and 'Neutral' differ only in letter case" in findings[0].message


def test_a_reserved_scenario_name_is_reported_at_its_line() -> None:
    """The errors of a scenario named 'all', or 'base' with overrides, had no line."""
    from capacity.scenario_spec import override_lines, parse_scenarios

    text = (
        "scenarios:\n"
        "  neutral:\n"
        "    overrides: []\n"
        "  all:\n"
        "    overrides: []\n"
        "  base:\n"
        "    overrides:\n"
        "      - {op: scale, table: demand, column: demand_h100e, factor: 2, source: x}\n"
    )
    import yaml

    _, findings = parse_scenarios(yaml.safe_load(text), lines=override_lines(text))
    rows = {f.value: f.row for f in findings}
    assert rows == {"all": 4, "base": 6}
