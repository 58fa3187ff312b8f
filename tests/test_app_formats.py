"""One number formatter for every app table: units in headers, readable numbers, shares clipped.

The AppTest scan solves the tiny dataset (with a public record, so the calibration table
shows), runs the scenario comparison, tornado, Monte Carlo and hedged plan, visits every
page and fails on any rendered table with an unformatted float (no format and digits
after the point), a long decimal written into a text cell, a column whose name
carries a unit while its header does not, or missing cells that would read ``None``.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from optimizer.output.formatting import (
    UNIT_SUFFIXES,
    clip_share,
    column_header,
    column_unit,
    fmt_number,
    number_format,
)
from optimizer.output.table_schema import RESULT_TABLES
from tests.apptest_helpers import goto, open_app, rerun
from tests.conftest import TINY
from ui.formats import calibration_view, table_view

PAGES = ("data", "scenarios", "plan", "risk", "reports")
LONG_DECIMAL = re.compile(r"\d\.\d{4,}")


# ------------------------------------------------------------------ pure formatter
def test_the_suffix_units_are_the_result_schemas_units() -> None:
    checked = 0
    for table, cols in RESULT_TABLES.items():
        for c in cols:
            unit = column_unit(c.name)
            if unit and c.unit in {u for _, u in UNIT_SUFFIXES}:
                assert unit == c.unit, (table, c.name, unit, c.unit)
                checked += 1
            elif unit:
                # a suffix unit the schema words differently: it must name the same unit
                assert unit.split("/")[0] in c.unit, (table, c.name, unit, c.unit)
    assert checked > 30


def test_headers_decimals_and_shares() -> None:
    assert column_header("build_mw") == "build [MW]"
    assert column_header("energy_usd_per_mwh") == "energy [USD/MWh]"
    assert column_header("served_share") == "served share [%]"
    assert column_header("scenario") == "scenario"
    # headers that kept their unit as words ("price usd per h100e period")
    assert column_header("price_usd_per_h100e_period") == "price [USD/H100e-quarter]"
    assert column_header("shadow_price_usd_per_unit") == "shadow price [USD/unit]"
    assert column_header("it_mw") == "IT [MW]" and column_header("pue_air") == "PUE air"
    assert column_header("chips") == "chips" and column_header("h100e") == "H100e"
    assert number_format("build_mw") == "%,.1f"
    assert number_format("served_h100e") == "%,.0f"
    assert number_format("served_share") == "percent"
    assert number_format("n", integer=True) == "%,d"
    assert clip_share(1.0000000002) == 1.0 and clip_share(-1e-12) == 0.0
    assert math.isnan(clip_share(float("nan")))  # type: ignore[arg-type]
    assert fmt_number(1_400_000.0) == "1,400,000" and fmt_number(1.1534) == "1.15"
    assert fmt_number(float("inf")) == "∞" and fmt_number(None) == "n/a"


def test_table_view_clips_noise_shares_keeps_changes_and_writes_infinity() -> None:
    df = pd.DataFrame(
        {
            "scenario": ["a", "b"],
            "served_share": [1.0000000002, 0.5],
            "change_trainium_share": [-0.25, 0.1],
            "breach_mw": [float("inf"), 2.0],
            "cost_usd": [2.5e10, float("inf")],
            "n": [3, 4],
        }
    )
    view, cfg = table_view(df)
    assert view["served_share"].tolist() == [1.0, 0.5]
    assert view["change_trainium_share"].tolist() == [-0.25, 0.1]  # a change is not clipped
    assert view["breach_mw"].tolist() == ["∞", "2"]
    assert view["cost_usd_bn"].tolist() == ["$25.00B", "∞"]
    assert cfg["served_share"]["label"] == "served share [%]"
    assert cfg["served_share"]["type_config"]["format"] == "percent"
    assert cfg["breach_mw"]["label"] == "breach [MW]"
    assert cfg["n"]["type_config"]["format"] == "%,d"


def test_a_share_is_rounded_to_the_shown_tenth_of_a_percent() -> None:
    """Streamlit's NumberColumn step cuts digits off (seen in a browser: 0.475972 read
    47.5 % while the CLI says 47.6 %), so the view holds the share rounded to 0.1 %."""
    view, cfg = table_view(pd.DataFrame({"trainium_share": [0.475972, 0.398954, 0.4759]}))
    assert view["trainium_share"].tolist() == [0.476, 0.399, 0.476]
    assert cfg["trainium_share"]["type_config"]["step"] == 0.001


def test_calibration_view_writes_each_row_in_its_unit() -> None:
    cal = pd.DataFrame(
        {
            "metric": ["chips_in_service", "capex_cash", "served_share", "pue"],
            "unit": ["chips", "USD", "share", "ratio"],
            "record_value": [1_400_000.0, 2.5e10, 0.5, 1.15],
            "record_low": [1_250_000.0, 2.0e10, 0.4, 1.1],
            "record_high": [1_650_000.0, 3.0e10, 0.6, 1.2],
            "plan_value": [1_512_345.678, np.nan, 0.52631, 1.1234567],
            "ratio": [1.0802469, np.nan, 1.05262, 0.9769],
            "inside_band": [True, False, True, True],
        }
    )
    view, cfg = calibration_view(cal)
    assert view["plan_value"].tolist() == ["1,512,346", "n/a", "52.6%", "1.12"]
    assert view["record_value"].tolist() == ["1,400,000", "$25.0B", "50.0%", "1.15"]
    assert cfg["ratio"]["type_config"]["format"] == "%.2f"


# ------------------------------------------------------------------- AppTest scan
def unformatted(element) -> list[str]:  # noqa: ANN001 - a streamlit.testing Dataframe
    """Problems of one rendered table: raw floats, long decimals in text, unitless headers."""
    value: pd.DataFrame = element.value
    cfg = json.loads(element.proto.columns) if element.proto.columns else {}
    problems = []
    if value.isna().any().any() and element.proto.placeholder != "–":
        problems.append(f"{element.key or '?'}: missing cells read 'None' (no placeholder)")
    for c in value.columns:
        conf = cfg.get(str(c), {})
        label = conf.get("label") or str(c)
        col = value[c]
        where = f"{element.key or '?'}.{c}"
        if pd.api.types.is_float_dtype(col):
            v = col.to_numpy(dtype=float)
            v = v[np.isfinite(v)]
            fmt = (conf.get("type_config") or {}).get("format")
            if (v != np.round(v)).any() and not fmt:
                problems.append(f"{where}: floats without a format")
        elif col.dtype == object or pd.api.types.is_string_dtype(col):
            long = [x for x in col.dropna().astype(str) if LONG_DECIMAL.search(x)]
            if long:
                problems.append(f"{where}: long decimals in text {long[:2]}")
        unit = column_unit(str(c).removesuffix("_bn"))
        if unit and "[" not in label and label != unit:
            problems.append(f"{where}: header {label!r} without its unit {unit}")
    return problems


def _public_record(d: Path) -> None:
    (d / "public_record.csv").write_text(
        "metric,scope,period,value,unit,low,high,source,note,plan_share,matchable,reason\n"
        "chips_in_service,chip:trn2,2026Q1,1200,chips,900,1500,https://example.org/a,test,1,yes,\n"
        "it_mw_added_year,fleet,2026Q4,12.5,MW,10,15,https://example.org/b,test,1,yes,\n",
        encoding="utf-8",
    )


def test_no_table_on_any_page_shows_an_unformatted_number(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    data = tmp_path / "tiny"
    shutil.copytree(TINY, data)
    _public_record(data)
    at: AppTest = open_app(monkeypatch, data)
    goto(at, "plan")
    at.button(key="solve").click()
    rerun(at)
    assert at.metric[0].value == "optimal"
    goto(at, "risk")
    at.button(key="risk_compare_btn").click()
    rerun(at)
    at.multiselect(key="tornado_params").set_value(["cowos", "demand_acme"])
    at.button(key="tornado_run").click()
    rerun(at)
    at.multiselect(key="mc_params").set_value(["cowos"])
    at.number_input(key="mc_samples").set_value(3)
    at.button(key="mc_run").click()
    rerun(at)
    at.button(key="hedge_run").click()
    rerun(at)
    shown: set[str] = set()
    for page in PAGES:
        goto(at, page)
        for el in at.dataframe:
            if el.editing_mode == "read_only":
                shown |= {str(c) for c in el.value.columns}
                assert unformatted(el) == [], page
    # the tables of the issue, each known by a column of its own
    for column in (
        "inside_band",  # calibration
        "meets_minimum",  # training clusters
        "trainium_share",  # scenario comparison
        "level_text",  # tornado
        "share_binding",  # Monte Carlo binding
        "ev_fixed_status",  # hedged plan per scenario
        "run_id",  # the session's runs
    ):
        assert column in shown, column


def test_an_upload_error_never_shows_none_as_a_row(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(monkeypatch, TINY)
    # an empty table file: a finding about the whole file, with no row
    at.file_uploader(key="upload_files").set_value([("demand.csv", b"", "text/csv")])
    rerun(at)
    at.button(key="upload_load").click()
    rerun(at)
    frames = [d for d in at.dataframe if "message" in d.value.columns]
    assert frames, [e.value for e in at.error]
    rows = frames[0].value["row"]
    assert rows.isna().any()  # a finding without a row ...
    assert frames[0].proto.placeholder == "–"  # ... reads "–", not "None"
    assert unformatted(frames[0]) == []


def test_money_is_shown_in_the_scale_its_magnitude_needs() -> None:
    """$1.96M read "$0.00B" when every money column was in billions."""
    from ui.formats import usd_billions

    df = pd.DataFrame(
        {
            "objective_usd": [1.2372e11, 9.8e10],
            "switch_cost_usd": [1.96e6, 2.5e5],
            "fee_usd": [532.0, -12.0],
            "empty_usd": [float("nan"), float("nan")],
        }
    )
    view, cfg = usd_billions(df)
    assert list(view.columns) == ["objective_usd_bn", "switch_cost_usd_mn", "fee_usd", "empty_usd"]
    assert view["switch_cost_usd_mn"].tolist() == pytest.approx([1.96, 0.25])
    # a negative amount is text: a number column printed "$-12" ("$" first in the format)
    assert view["fee_usd"].tolist() == ["$532", "-$12"]
    fmts = {c: cfg[c]["type_config"].get("format") for c in view.columns}
    assert fmts == {
        "objective_usd_bn": "$%,.2fB",
        "switch_cost_usd_mn": "$%,.2fM",
        "fee_usd": None,
        "empty_usd": "$%,.0f",
    }
    assert {cfg[c]["label"] for c in view.columns} == {
        "objective [USD]",
        "switch cost [USD]",
        "fee [USD]",
        "empty [USD]",
    }


def test_a_small_amount_beside_billions_does_not_read_zero() -> None:
    """The money table's grid upgrade ($3.36M) read "$0.00B" beside $144B of chips: such a
    column shows each amount in its own scale (text)."""
    from ui.formats import usd_billions

    df = pd.DataFrame(
        {"cost_usd": [144.61e9, 3.36e6, 0.0, -2.5e6], "cash_usd": [1.2e9, 6e6, 0.0, 1e9]}
    )
    view, cfg = usd_billions(df)
    assert list(view.columns) == ["cost_usd", "cash_usd_bn"]
    assert view["cost_usd"].tolist() == ["$144.61B", "$3.36M", "$0", "-$2.50M"]
    assert cfg["cost_usd"]["label"] == "cost [USD]"
    assert view["cash_usd_bn"].tolist() == pytest.approx([1.2, 0.006, 0.0, 1.0])  # $0.01B


def test_the_terminal_cells_follow_the_app_formats() -> None:
    """`text_column` (the CLI's tables) applies the same header and format as the app."""
    from optimizer.output.formatting import text_column
    from ui.formats import table_view

    df = pd.DataFrame(
        {
            "cost_usd": [1.96e6, 2.5e5],
            "build_mw": [1234.56, 0.5],
            "served_share": [1.0000000002, 0.4759],
            "n": [3, 4],
        }
    )
    view, cfg = table_view(df)
    got = {c: text_column(c, df[c].tolist()) for c in df.columns}
    assert got == {
        "cost_usd": ("cost [USD]", ["$1.96M", "$0.25M"]),
        "build_mw": ("build [MW]", ["1,234.6", "0.5"]),
        "served_share": ("served share [%]", ["100.0%", "47.6%"]),
        "n": ("n", ["3", "4"]),
    }
    labels = {c: cfg[c]["label"] for c in view.columns}
    assert [h for h, _ in got.values()] == list(labels.values())


def _two_cases() -> pd.DataFrame:
    """Two rows of a batch summary, both done (neutral and negative)."""
    return pd.DataFrame(
        {
            "scenario": ["neutral", "negative"],
            "status": ["optimal", "optimal"],
            "state": ["done", "done"],
            "total_cost_usd": [1.086e11, 1.188e11],
            "unmet_h100e": [587_000.0, 1_740_000.0],
            "trainium_share": [0.476, 0.399],
            "breach_mw": [0.0, 214.0],
            "time_s": [12.34, 15.0],
        }
    )


def test_the_batch_tables_of_the_cli_use_the_same_formats() -> None:
    """`capacity batch` prints the scenario and Monte Carlo tables with `text_column`."""
    from rich.console import Console

    from optimizer.analysis.batch_render import _fixed_cases_table, _monte_carlo_table

    fixed = _two_cases()
    console = Console(width=200, record=True)
    console.print(_fixed_cases_table(fixed))
    mc = fixed.assign(scenario=["mc_000", "mc_001"])
    console.print(_monte_carlo_table(mc))
    text = console.export_text()
    for cell in ("$108.60B", "587,000", "47.6%", "214.0", "12.3", "total cost [USD]", "time [s]"):
        assert cell in text, cell
    assert "bn" not in text  # the old "cost in USD bn" columns
    # unmet and breach add every quarter's value, and the headers say so
    assert "unmet Σ quarters [H100e]" in text and "breach Σ quarters [MW]" in text
    long = fixed.assign(scenario=["grid_cowos-0.6_carbon-0", "grid_cowos-0.6_carbon-210"])
    narrow = Console(width=90, record=True)
    narrow.print(_fixed_cases_table(long))
    first = "".join(
        ln.split("│")[1].strip() for ln in narrow.export_text().splitlines() if ln.startswith("│")
    )
    assert "…" not in narrow.export_text()  # folded onto more lines, never cut
    assert first == "grid_cowos-0.6_carbon-0grid_cowos-0.6_carbon-210"


def test_every_text_column_of_a_result_table_reads_in_words() -> None:
    """Text columns without a unit kept their snake_case names (first_grid_bound_period,
    bridge_options, ev_fixed_status) on the Plan and Risk pages."""
    import pandas as pd

    from ui.formats import table_view

    df = pd.DataFrame(
        {"site": ["ohio"], "first_grid_bound_period": ["2026Q1"], "bridge_options": ["battery"]}
    )
    _, cfg = table_view(df)
    labels = {c: cfg[c]["label"] for c in df.columns}
    assert labels == {
        "site": "site",
        "first_grid_bound_period": "first grid bound period",
        "bridge_options": "bridge options",
    }


def test_a_status_fits_its_metric_box_in_words() -> None:
    """`time_limit_feasible` was cut off as `time_limit_f…` in the Plan page's box."""
    from ui.formats import status_note, status_words

    # "feasible at li…" was cut off at 1,400 px: the limit is said under the value
    assert status_words("time_limit_feasible") == "feasible"
    assert status_note("time_limit_feasible") == "at the time limit"  # fits the note's chip
    assert status_words("time_limit_no_solution") == "no plan"
    assert status_note("time_limit_no_solution") == "by the time limit"
    assert status_words("optimal") == "optimal" and status_note("optimal") is None


def test_the_monte_carlo_histogram_counts_whole_samples() -> None:
    """With a few samples plotly stepped the count axis by 0.5 (half a sample)."""
    from ui.risk_view import cost_histogram

    few = cost_histogram(pd.DataFrame({"total_cost_usd": [1.20e11, 1.25e11, 1.31e11, 1.4e11]}))
    assert few.layout.yaxis.dtick == 1 and few.layout.yaxis.title.text == "samples"
    assert few.layout.xaxis.ticksuffix == "B"
    many = cost_histogram(pd.DataFrame({"total_cost_usd": [1e11 + 1e9 * i for i in range(40)]}))
    assert many.layout.yaxis.dtick is None


def test_a_branch_probability_reads_as_a_percent() -> None:
    """The scenario tree's leaves showed a probability of 0.35 beside shares in percent."""
    from optimizer.output.formatting import text_column

    assert text_column("probability", [0.35, 0.65]) == ("probability [%]", ["35.0%", "65.0%"])


def test_an_empty_text_cell_reads_as_a_dash() -> None:
    """The speed-to-power table showed blank cells for a site the grid never binds."""
    from ui.formats import NO_TEXT, table_view

    df = pd.DataFrame(
        {"site": ["norway", "west_texas"], "bridge_options": ["", "battery, mobile_gt"]}
    )
    view, _ = table_view(df)
    assert view["bridge_options"].tolist() == [NO_TEXT, "battery, mobile_gt"]
    assert df["bridge_options"].tolist() == ["", "battery, mobile_gt"]  # the table as it was


def test_a_case_whose_files_failed_shows_no_plan_in_the_cases_table() -> None:
    """On a full disk a case whose files were not written still showed 'optimal' and its
    cost in the table above the line saying it failed."""
    from rich.console import Console

    from optimizer.analysis.batch_render import _fixed_cases_table

    fixed = _two_cases().assign(state=["done", "failed"])
    console = Console(width=200, record=True)
    console.print(_fixed_cases_table(fixed))
    text = console.export_text()
    row = next(line for line in text.splitlines() if "negative" in line)
    assert "failed (optimal)" in row and "$118.80B" not in text and "1,740,000" not in text
    assert "$108.60B" in text and "15.0" in row  # the other case, and the time spent


def test_outcome_sums_over_quarters_are_labelled_so() -> None:
    """The hedged plan's table read "hedged unmet [H100e]" (386,537: a sum over quarters)
    beside "[H100e·quarters]" in the scenario comparison."""
    import pandas as pd

    from ui.formats import quarter_sum_config

    df = pd.DataFrame(
        {
            "scenario": ["neutral"],
            "hedged_unmet_h100e": [386537.0],
            "breach_mw": [12.5],
            "total_cost_usd": [1e11],
            "installed_h100e": [5.0],
        }
    )
    cfg = quarter_sum_config(df)
    assert {c: v["label"] for c, v in cfg.items()} == {
        "hedged_unmet_h100e": "hedged unmet [H100e-quarters]",
        "breach_mw": "breach [MW-quarters]",
    }
