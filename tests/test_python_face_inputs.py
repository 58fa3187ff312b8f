"""The Python face reads what a notebook user types as the command line does (break tests).

``solve_scenarios(data, "neutral")`` iterated over the letters of the name ("unknown
scenario 'n'") and an empty list gave an empty collection without a word.
"""

from __future__ import annotations

from typing import Any

import pytest

import capacity_planner as cp
from tests.conftest import TINY


def test_one_scenario_name_alone_is_one_scenario() -> None:
    plans = cp.solve_scenarios(TINY, "neutral")
    assert list(plans) == ["neutral"]
    assert plans["neutral"].status == "optimal"


def test_all_is_every_scenario_of_the_data_in_file_order() -> None:
    assert list(cp.solve_scenarios(TINY, "all")) == ["neutral", "squeeze"]
    assert list(cp.solve_scenarios(TINY, ["squeeze", "all"])) == ["squeeze", "neutral"]


def test_no_scenario_is_refused() -> None:
    with pytest.raises(ValueError, match="^scenarios: no scenario named"):
        cp.solve_scenarios(TINY, [])


@pytest.fixture(scope="module")
def tiny_plan() -> cp.Plan:
    return cp.solve(TINY)


def test_compare_names_what_it_needs(tiny_plan: cp.Plan) -> None:
    with pytest.raises(ValueError, match="^no statistic 'bogus': the statistics are capex, "):
        tiny_plan.compare(tiny_plan, "bogus")
    with pytest.raises(TypeError, match="^compare: other must be a Plan .*, not int$"):
        tiny_plan.compare(42, "demand")  # type: ignore[arg-type]


def test_compare_warns_on_plans_of_two_datasets(tiny_plan: cp.Plan) -> None:
    """tiny (2 quarters) against the bundled data (24): missing keys count 0, so say so."""
    from tests.conftest import ROOT

    other = cp.solve(ROOT / "data")
    with pytest.warns(UserWarning, match=r"cover other quarters \(2026Q1-2026Q2, 2 quarters; "):
        tiny_plan.compare(other, "demand", groupby="customer")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scenarios of one dataset: no warning
        tiny_plan.compare(tiny_plan, "demand", groupby="customer")


def test_statistics_keys_errors_list_every_key_and_name_the_argument(tiny_plan: cp.Plan) -> None:
    with pytest.raises(ValueError) as err:
        tiny_plan.statistics.capex(groupby="bogus")
    text = str(err.value)
    assert text.startswith("statistics.capex cannot group by ['bogus']: its keys are ")
    for key in ("chip", "family", "period", "region", "site", "vendor", "year"):
        assert key in text.split(": its keys are ")[1].split(", "), text
    with pytest.raises(ValueError, match=r"^statistics.capex cannot select by \['bogus'\]"):
        tiny_plan.statistics.capex(where={"bogus": 1})
    twice = tiny_plan.statistics.capex(groupby=["year", "year"])
    assert list(twice.columns).count("year") == 1


def test_a_where_value_matching_no_row_is_a_warning(tiny_plan: cp.Plan) -> None:
    with pytest.warns(UserWarning, match=r"where year=\['2026'\] matches no row; its values"):
        out = tiny_plan.statistics.capex(groupby="year", where={"year": "2026"})
    assert out.empty
    assert len(tiny_plan.statistics.capex(groupby="year", where={"year": 2026})) == 1


def test_a_collections_statistic_keeps_the_unit_each_plan_keeps() -> None:
    """utilisation by scenario added MW, wafers and m3 into one number; shadow prices
    took one maximum over USD/MW and USD/chips."""
    plans = cp.solve_scenarios(TINY, "all")
    got = plans.statistics.utilisation(groupby="scenario")
    one = plans["squeeze"].statistics.utilisation(groupby=[]).set_index("unit")
    mine = got[got["scenario"] == "squeeze"].set_index("unit")
    assert list(got.columns[:2]) == ["scenario", "unit"]
    assert mine["used"].to_dict() == pytest.approx(one["used"].to_dict())
    assert mine.loc["MW", "utilisation"] == pytest.approx(one.loc["MW", "utilisation"])
    prices = plans.statistics.shadow_prices(groupby="scenario")
    assert prices.groupby("scenario")["unit"].nunique().min() > 1


def test_calibration_is_a_table_it_takes_no_grouping(default_plan: Any) -> None:
    from optimizer.notebook import Plan

    ds, result = default_plan("neutral")  # the bundled data: 29 public-record rows
    plan = Plan.from_result(result, ds, name="neutral")
    with pytest.raises(ValueError, match="calibration is the public-record table"):
        plan.statistics("calibration", where={"period": "nope"})  # the where was ignored
    plans = cp.PlanCollection({"a": plan, "b": plan})
    table = plans.statistics("calibration")  # every plan's rows (the collection had none)
    assert len(table) == 2 * len(plan.statistics("calibration")) > 0
    assert table["scenario"].tolist().count("b") == len(ds.table("public_record"))


def test_plans_of_two_datasets_are_named_as_such_wherever_they_meet(tmp_path: Any) -> None:
    """A renamed customer (same quarters, sites and chips) compared without a word; a
    collection's compare never warned; its plot drew the second plan's quarters at nan."""
    import shutil
    import warnings

    renamed = tmp_path / "tiny2"
    shutil.copytree(TINY, renamed)
    for f in renamed.glob("*.csv"):
        f.write_text(f.read_text(encoding="utf-8").replace("acme", "beta"), encoding="utf-8")
    a, b = cp.solve(TINY), cp.solve(renamed)
    with pytest.warns(UserWarning, match="the plans have other customers"):
        a.compare(b, "demand", groupby="customer")
    with pytest.warns(UserWarning, match="the plans have other customers"):
        cp.PlanCollection({"a": a, "b": b}).compare("demand", "customer", first="a", second="b")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # two scenarios of one dataset: no warning
        squeeze = cp.solve(TINY, "squeeze")
        a.compare(squeeze, "capex")
    with pytest.raises(KeyError, match="no plan 'nope' in the collection"):
        cp.PlanCollection({"a": a, "b": b}).compare("capex", first="nope", second="a")


def test_a_collection_plot_keeps_every_plans_quarters(default_plan: Any) -> None:
    from optimizer.notebook import Plan

    ds, result = default_plan("neutral")
    mixed = cp.PlanCollection(
        {"tiny": cp.solve(TINY), "data": Plan.from_result(result, ds, name="data")}
    )
    fig = mixed.plot.capex(groupby=["period", "scenario"], kind="bar")
    xs = {str(x) for t in fig.data for x in t.x}
    assert "nan" not in xs and set(ds.periods) <= xs and {"2026Q1", "2026Q2"} <= xs


@pytest.mark.parametrize(
    ("scenarios", "weights", "message"),
    [
        ("neutral", None, "give a list of names, e.g. \\['neutral', ...\\], not one"),
        (["neutral", "squeeze"], [float("nan"), 1.0], "need one finite, non-negative weight"),
        (["neutral", "squeeze"], [0.0, 0.0], "not all zero; got \\[0.0, 0.0\\]"),
        (["neutral", "squeeze"], [1.0], "per scenario \\(2\\)"),
    ],
)
def test_the_hedged_plan_names_bad_scenarios_and_weights(
    scenarios: Any, weights: Any, message: str
) -> None:
    """'neutral' was read letter by letter ('unknown scenario n'); NaN weights ended in a
    dataset error about site_grid.csv; [0, 0] was refused as not non-negative."""
    ds = cp.load(TINY)
    with pytest.raises(ValueError, match=message):
        cp.hedged_plan(ds, scenarios, weights=weights)


def test_compare_of_totals_is_one_row() -> None:
    """groupby=[] was an IndexError inside pandas' merge (no keys to merge on)."""
    plans = cp.solve_scenarios(TINY, "all")
    got = plans["neutral"].compare(plans["squeeze"], "capex", groupby=[])
    a = float(plans["neutral"].statistics.capex(groupby=[])["capex_usd"].iloc[0])
    b = float(plans["squeeze"].statistics.capex(groupby=[])["capex_usd"].iloc[0])
    assert got.to_dict("records") == [
        {"capex_usd_neutral": a, "capex_usd_squeeze": b, "capex_usd_change": b - a}
    ]


def test_a_scenario_that_is_no_name_is_refused() -> None:
    """'' solved the base data under the name ''; 5 and ['neutral'] failed in difflib or
    as unhashable; None as the scenarios failed iterating it."""
    from capacity.scenarios import UnknownScenarioError

    with pytest.raises(UnknownScenarioError, match="unknown scenario ''"):
        cp.load(TINY, "")
    with pytest.raises(UnknownScenarioError, match="unknown scenario ''"):
        cp.solve_scenarios(TINY, "")
    for bad in (5, ["neutral"]):
        with pytest.raises(TypeError, match="scenario: give one name"):
            cp.load(TINY, bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="scenarios: give a name, a list of names or 'all'"):
        cp.solve_scenarios(TINY, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="data: give a dataset folder or a Dataset"):
        cp.load(None)  # type: ignore[arg-type]
    assert cp.load(TINY, None).scenario == "base"


def test_a_plan_without_a_solution_says_its_statistics_read_zero() -> None:
    """Its costs statistic read 0 USD beside status time_limit_no_solution, without a word."""
    with pytest.warns(UserWarning, match="has no solution \\(time_limit_no_solution\\)"):
        p = cp.solve(TINY, options=cp.SolveOptions(time_limit_s=1e-9))
    assert p.objective_usd is None


def test_groupby_and_where_of_another_shape_are_named() -> None:
    """groupby=3, where=['site'] and where values None or 2026.0 failed inside Python
    ('int' object is not iterable, 'list' object has no attribute 'items')."""
    p = cp.solve(TINY)
    with pytest.raises(TypeError, match="groupby: give a key, a list of keys or None, not 3"):
        p.statistics.capex(groupby=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="where: give a mapping of key to value"):
        p.statistics.capex(where=["site"])  # type: ignore[arg-type]
    by_year = p.statistics.capex(groupby="year")
    year = int(by_year["year"].iloc[0])
    one = p.statistics.capex(groupby="year", where={"year": year})
    assert one["capex_usd"].tolist() == by_year["capex_usd"].iloc[:1].tolist()
    with pytest.warns(UserWarning, match="matches no row"):
        assert p.statistics.capex(where={"site": None}).empty


def test_options_and_tables_of_another_type_are_named() -> None:
    """options={"solver": "highs"} and ds.replace(chips=None) failed as AttributeErrors."""
    with pytest.raises(TypeError, match="options: give cp.SolveOptions"):
        cp.solve(TINY, options={"solver": "highs"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="chips: give a pandas DataFrame, not NoneType"):
        cp.load(TINY).replace(chips=None)  # type: ignore[arg-type]


def test_a_hand_edited_manifest_entry_is_read_as_unfinished(tmp_path: Any) -> None:
    """An entry that is a string ("complete") was an AttributeError from read_report."""
    import json

    from typer.testing import CliRunner

    from optimizer.cli.commands import app

    out = tmp_path / "r"
    res = CliRunner().invoke(app, ["solve", str(TINY), "-s", "neutral", "--out", str(out)])
    assert res.exit_code == 0, res.output
    (run,) = [d for d in out.iterdir() if d.is_dir()]
    manifest = run / "manifest.json"
    doc = json.loads(manifest.read_text(encoding="utf-8"))
    doc["scenarios"]["neutral"] = "complete"
    manifest.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.warns(UserWarning, match="records state \"unreadable \\('complete'\\)\""):
        plan = cp.read_report(run / "scenario=neutral", data=TINY)
    assert plan.objective_usd is not None or plan.tables


@pytest.mark.parametrize(
    ("call", "where"),
    [
        (lambda: cp.tornado(str(TINY)), "tornado"),
        (lambda: cp.apply_scenario(str(TINY), "neutral"), "apply_scenario"),
        (lambda: cp.diff_datasets(cp.load(TINY), None), "diff_datasets"),
        (lambda: cp.monte_carlo(str(TINY), {}), "monte_carlo"),
    ],
)
def test_a_path_where_a_dataset_is_needed_is_named(call: Any, where: str) -> None:
    """Each failed as "'str' object has no attribute 'table'" (cp.solve takes a path)."""
    with pytest.raises(TypeError, match=f"{where}: give a loaded Dataset \\(cp.load\\(path\\)\\)"):
        call()


def test_a_collection_where_on_an_unknown_scenario_warns() -> None:
    """It gave an empty frame without a word (one plan's where warns)."""
    plans = cp.solve_scenarios(TINY, "all")
    with pytest.warns(UserWarning, match="where scenario=\\[.nope.\\] matches no row"):
        got = plans.statistics.capex(groupby="scenario", where={"scenario": "nope"})
    assert got.empty
    kept = plans.statistics.capex(groupby="scenario", where={"scenario": ["squeeze"]})
    assert kept["scenario"].tolist() == ["squeeze"]


def test_a_report_file_of_another_table_or_no_parquet_is_named(tmp_path: Any) -> None:
    """demand.parquet copied over costs.parquet read on and failed as a pandas KeyError;
    a garbage file as pyarrow's ArrowInvalid."""
    import shutil

    from typer.testing import CliRunner

    from optimizer.cli.commands import app
    from optimizer.output.atomic import ReportError

    out = tmp_path / "r"
    res = CliRunner().invoke(app, ["solve", str(TINY), "-s", "neutral", "--out", str(out)])
    assert res.exit_code == 0, res.output
    (run,) = [d for d in out.iterdir() if d.is_dir()]
    sd = run / "scenario=neutral"
    assert cp.read_report(sd, data=TINY).objective_usd is not None
    shutil.copyfile(sd / "demand.parquet", sd / "costs.parquet")
    with pytest.raises(ReportError, match="costs.parquet: holds the demand table, not costs"):
        cp.read_report(sd, data=TINY)
    (sd / "costs.parquet").write_bytes(b"not parquet")
    with pytest.raises(ReportError, match="costs.parquet: not a readable Parquet table"):
        cp.read_report(sd, data=TINY)


def test_a_run_folders_file_of_another_table_or_no_parquet_is_named(tmp_path: Any) -> None:
    """The run folder's tables go through pyarrow datasets with each table's schema:
    demand.parquet copied over costs.parquet read as the run's costs, every row null
    (a total cost of 0 with no word); a garbage file was pyarrow's ArrowInvalid."""
    import shutil

    from typer.testing import CliRunner

    from optimizer.cli.commands import app
    from optimizer.output.atomic import ReportError
    from optimizer.output.parquet_tables import open_table_dataset, read_report

    out = tmp_path / "r"
    res = CliRunner().invoke(app, ["solve", str(TINY), "-s", "all", "--out", str(out)])
    assert res.exit_code == 0, res.output
    (run,) = [d for d in out.iterdir() if d.is_dir()]
    whole = read_report(run)["costs"]
    assert whole["cost_usd"].notna().all() and whole["cost_usd"].sum() > 0
    sd = run / "scenario=neutral"
    shutil.copyfile(sd / "demand.parquet", sd / "costs.parquet")
    for read in (lambda: read_report(run), lambda: cp.read_run(run, data=TINY)):
        with pytest.raises(ReportError, match="costs.parquet: holds the demand table, not costs"):
            read()
    (sd / "costs.parquet").write_bytes(b"not parquet")
    with pytest.raises(ReportError, match="costs.parquet: not a readable Parquet table"):
        open_table_dataset(run, "costs")


def test_a_table_copied_from_another_scenario_or_run_is_named(tmp_path: Any) -> None:
    """negative's demand.parquet copied into neutral's folder read as neutral's demand
    (its unmet H100e) without a word, in a scenario folder and across the run; a table
    of the same scenario from another run read as this one's."""
    import shutil

    from typer.testing import CliRunner

    from optimizer.cli.commands import app
    from optimizer.output.atomic import ReportError
    from optimizer.output.parquet_tables import read_report

    out = tmp_path / "r"
    for _ in range(2):
        res = CliRunner().invoke(app, ["solve", str(TINY), "-s", "all", "--out", str(out)])
        assert res.exit_code == 0, res.output
    first, second = sorted(d for d in out.iterdir() if d.is_dir())
    sd = first / "scenario=neutral"
    read_report(sd)  # whole: reads
    shutil.copyfile(first / "scenario=squeeze" / "demand.parquet", sd / "demand.parquet")
    for read in (lambda: read_report(sd), lambda: read_report(first), lambda: cp.read_run(first)):
        with pytest.raises(
            ReportError, match="holds the demand table of scenario 'squeeze', not of 'neutral'"
        ):
            read()
    shutil.copyfile(second / "scenario=neutral" / "demand.parquet", sd / "demand.parquet")
    with pytest.raises(ReportError, match=r"scenario=neutral: its tables come from 2 runs"):
        read_report(sd)
