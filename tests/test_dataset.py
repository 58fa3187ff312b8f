"""Dataset I/O: typed tables, content hash, Parquet, units table, CLI, and a property test."""

from __future__ import annotations

import csv
import functools
import re
import string
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from capacity.dataset import Dataset, load_dataset
from capacity.schema import SPECS, TABLES, units_markdown
from capacity.validation import DataValidationError
from optimizer.cli.commands import app
from tests.conftest import ROOT, TINY


def test_tables_are_typed_and_in_schema_order() -> None:
    ds = load_dataset(TINY)
    for t in TABLES:
        df = ds.table(t.name)
        assert list(df.columns) == t.column_names
        for c in t.columns:
            if c.dtype == "float":
                assert df[c.name].dtype == "float64", (t.name, c.name)
            elif c.dtype == "int":
                assert df[c.name].dtype == "int64", (t.name, c.name)
    assert ds.periods == ("2026Q1", "2026Q2")
    assert ds.table("sites").loc[0, "max_it_mw"] == 100.0


def test_hash_is_content_based(tmp_path: Path) -> None:
    a = load_dataset(TINY)
    b = load_dataset(TINY)
    assert a.hash == b.hash and len(a.hash) == 64
    sites = a.table("sites").copy()
    sites.loc[0, "energy_price_usd_per_mwh"] = 51.0
    c = a.replace(sites=sites)
    assert c.hash != a.hash
    assert a.table("sites").loc[0, "energy_price_usd_per_mwh"] == 50.0  # original untouched


def test_parquet_tables_load_the_same(tmp_path: Path) -> None:
    a = load_dataset(TINY)
    d = a.write(tmp_path / "pq", fmt="parquet")
    assert not list(d.glob("*.csv"))
    b = load_dataset(d)
    for name in SPECS:
        pd.testing.assert_frame_equal(a.table(name), b.table(name), check_dtype=True)
    assert a.hash == b.hash
    assert b.name == a.name == "tiny_valid"  # the name travels in dataset.yaml


def test_csv_write_round_trip(tmp_path: Path) -> None:
    a = load_dataset(TINY)
    b = load_dataset(a.write(tmp_path / "csv"))
    assert a.hash == b.hash
    assert set(b.scenarios) == {"neutral", "squeeze"}


def test_writing_over_an_earlier_copy_loads_back_what_was_written(tmp_path: Path) -> None:
    """Written as Parquet over a CSV copy, the CSV files stayed and won on load (the
    edit was read as the old value, with a warning); written without scenarios over a
    copy with them, the old scenarios.yaml came back."""
    a = load_dataset(TINY)
    d = a.write(tmp_path / "d")
    sites = a.table("sites").copy()
    sites.loc[0, "energy_price_usd_per_mwh"] = 51.0
    edited = a.replace(sites=sites)
    edited.write(d, fmt="parquet")
    b = load_dataset(d)
    assert b.hash == edited.hash and not list(d.glob("*.csv")) and not b.warnings
    assert b.table("sites").loc[0, "energy_price_usd_per_mwh"] == 51.0
    bare = edited.with_scenarios({}, "none")
    bare.write(d)
    c = load_dataset(d)
    assert c.scenarios.keys() <= {"base"} and not list(d.glob("*.parquet"))
    assert not [p for p in d.iterdir() if ".tmp" in p.name]
    with pytest.raises(ValueError, match="fmt must be"):
        a.write(tmp_path / "x", fmt="xlsx")
    assert not (tmp_path / "x").exists()


def test_the_data_guide_units_table_is_generated_from_the_schema() -> None:
    guide = (ROOT / "docs" / "guide" / "data.md").read_text(encoding="utf-8")
    assert units_markdown() in guide


def test_cli_validate_exit_codes(tiny_dir: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["validate", str(tiny_dir), "--scenario", "all"])
    assert ok.exit_code == 0, ok.output
    assert "valid" in ok.output
    df = pd.read_csv(tiny_dir / "sites.csv", dtype=str, keep_default_na=False)
    df.loc[0, "pue_air"] = "0.9"
    df.to_csv(tiny_dir / "sites.csv", index=False)
    bad = runner.invoke(app, ["validate", str(tiny_dir)])
    assert bad.exit_code == 1
    assert "pue_air" in bad.output and "0.9" in bad.output


def test_cli_diff_lists_changed_cells() -> None:
    res = CliRunner().invoke(app, ["diff", str(TINY), "base", "squeeze"])
    assert res.exit_code == 0, res.output
    assert "3 changed cell(s)" in res.output
    assert re.search(r"grid_mw\s*│\s*40\s*│\s*30", res.output)


def test_cli_diff_with_a_folder_and_one_scenario_says_two_are_needed() -> None:
    res = CliRunner().invoke(app, ["diff", str(TINY), "squeeze"])
    assert res.exit_code == 2
    assert f"diff compares two: capacity diff {TINY} squeeze SCENARIO_B" in res.output
    assert "unknown scenario" not in res.output


def test_cli_diff_without_arguments_shows_its_usage_and_same_scenarios_say_so() -> None:
    res = CliRunner().invoke(app, ["diff"])
    assert res.exit_code == 2
    assert "usage: capacity diff [DATA_DIR] SCENARIO_A SCENARIO_B" in res.output
    assert "Missing argument" not in res.output
    same = CliRunner().invoke(app, ["diff", str(TINY), "base", "base"])
    assert same.exit_code == 0, same.output
    assert same.output.strip() == "base -> base: no cell differs."


def test_default_data_validates_for_all_scenarios() -> None:
    res = CliRunner().invoke(app, ["validate", str(ROOT / "data"), "--scenario", "all"])
    assert res.exit_code == 0, res.output


# ------------------------------------------------------------------ property test
_cells = st.one_of(
    st.text(alphabet=string.printable + "äöüß€ ", max_size=12),
    st.sampled_from(["", "n/a", "NaN", "inf", "-1", "1e3", "1e400", "NO", "0x1F", " 5 ", "2026Q3"]),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
)


@functools.cache
def _tiny() -> Dataset:
    """The tiny dataset, loaded once for the 60 examples below (each writes it anew)."""
    return load_dataset(TINY)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    table=st.sampled_from(["sites", "chips", "demand", "eligibility", "periods", "commitments"]),
    row=st.integers(min_value=0, max_value=0),
    col_pick=st.integers(min_value=0, max_value=20),
    value=_cells,
)
def test_arbitrary_cells_never_crash_the_loader(
    tmp_path_factory, table, row, col_pick, value
) -> None:
    d = tmp_path_factory.mktemp("prop")
    _tiny().write(d)
    path = d / f"{table}.csv"
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    col = col_pick % len(rows[0])
    rows[1 + row][col] = value
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    try:
        ds = load_dataset(d)
    except DataValidationError as e:
        assert e.errors, "a validation error must carry at least one error finding"
        for f in e.errors:
            assert f.file.endswith((".csv", ".yaml"))
    else:
        assert isinstance(ds, Dataset)
        assert list(ds.table(table).columns) == SPECS[table].column_names


def test_every_default_figure_is_sourced() -> None:
    ds = load_dataset(ROOT / "data")
    unsourced = [f for f in ds.warnings if "sources.csv" in f.message or f.column == "source"]
    assert unsourced == []
    src = ds.table("sources")
    assert src["source"].str.startswith(("https://", "http://", "assumption")).all()
    assert (src["source"].str.startswith("https://")).sum() >= 20


def test_an_unsourced_figure_is_flagged(tiny_dir: Path) -> None:
    src = pd.read_csv(tiny_dir / "sources.csv", dtype=str, keep_default_na=False)
    src = src[src["table"] != "chips"]
    src.loc[len(src)] = ["chips", "h100", "capex_usd_per_chip", "40000", "vendor brochure", ""]
    src.to_csv(tiny_dir / "sources.csv", index=False)
    ds = load_dataset(tiny_dir)
    by_col = {(f.file, f.column): f for f in ds.warnings}
    assert by_col[("sources.csv", "source")].value == "vendor brochure"
    # h100's capex is covered, trn2's is not: the first uncovered row is named
    assert by_col[("chips.csv", "capex_usd_per_chip")].value == "trn2"
    assert by_col[("chips.csv", "vendor")].value == "h100"


def test_dataset_pickles_for_worker_processes() -> None:
    import pickle

    a = load_dataset(TINY)
    b = pickle.loads(pickle.dumps(a))
    assert b.hash == a.hash
    assert b.scenarios["squeeze"] == a.scenarios["squeeze"]
    pd.testing.assert_frame_equal(a.table("chips"), b.table("chips"))


def test_an_unpickled_dataset_keeps_its_validation_and_hashes_no_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The validation record travels with the tables: the hash comes from its digests
    # (hashing every table took 40 of the 43 ms of unpickling a sampled default dataset),
    # and the same record is there for a later revalidation.
    import pickle

    import capacity.dataset as dataset_module

    loaded = load_dataset(TINY)
    a = loaded.replace(sites=loaded.table("sites"))  # a dataset made in memory keeps one
    assert a._validation is not None
    payload = pickle.dumps(a)

    def no_digest(*args: object) -> bytes:
        raise AssertionError("a table was hashed again")

    monkeypatch.setattr(dataset_module, "table_digest", no_digest)
    b = pickle.loads(payload)
    assert (b.hash, b.tables_hash) == (a.hash, a.tables_hash)
    assert b._validation == a._validation and b._validation is not None


# ---------------------------------------------------------------------------------
# Notes of sources.csv agree with the tables they document

_NUM = re.compile(r"(?<![A-Za-z0-9.])\d[\d,]*(?:\.\d+)?(?![A-Za-z0-9])")
_CHAIN = re.compile(
    r"(\d[\d,]*(?:\.\d+)?(?:\s*[x*/+-]\s*\d[\d,]*(?:\.\d+)?)+)\s*=\s*(\d[\d,]*(?:\.\d+)?)"
)
_SCALES = (1.0, 1e3, 1e6, 1e-3, 1e-6)
_ROUNDED = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*,?\s*rounded(?:\s+to)?\s+(\d[\d,]*(?:\.\d+)?)")
_CONTEXT = re.compile(r"context:.*?(?=;|\)|\.\s|\.$|$)", re.IGNORECASE)


def _nums(text: str) -> list[float]:
    return [float(t.replace(",", "")) for t in _NUM.findall(str(text))]


def _known(x: float, allowed: set[float]) -> bool:
    return any(abs(x * k - a) <= 5e-3 * max(abs(a), 1e-12) for k in _SCALES for a in allowed) or (
        x.is_integer() and 2000 <= x <= 2035
    )


def _eval_chain(expr: str) -> float:
    toks = re.findall(r"\d[\d,]*(?:\.\d+)?|[x*/+-]", expr)
    val = float(toks[0].replace(",", ""))
    for op, num in zip(toks[1::2], toks[2::2], strict=True):
        v = float(num.replace(",", ""))
        val = val * v if op in "x*" else val / v if op == "/" else val + v if op == "+" else val - v
    return val


def _note_numbers_accounted(note: str, allowed: set[float]) -> list[float]:
    """Numbers of ``note`` neither in ``allowed`` nor in a derivation ending in it."""
    allowed = set(allowed)
    grew = True
    while grew:
        grew = False
        for expr, result in _CHAIN.findall(note):
            r = float(result.replace(",", ""))
            ok = abs(_eval_chain(expr) - r) <= 0.02 * abs(r)
            if ok and _known(r, allowed):
                new = set(_nums(expr)) | {r}
                if not new <= allowed:
                    allowed |= new
                    grew = True
        for a, b in re.findall(r"(\d[\d,]*(?:\.\d+)?)\s*\w*\s*=\s*(\d[\d,]*(?:\.\d+)?)", note):
            x, y = float(a.replace(",", "")), float(b.replace(",", ""))
            if _known(x, allowed) != _known(y, allowed):
                allowed |= {x, y}
                grew = True
        for a, b in _ROUNDED.findall(note):
            x, y = float(a.replace(",", "")), float(b.replace(",", ""))
            if _known(y, allowed) and not _known(x, allowed) and abs(x - y) <= 0.05 * abs(y):
                allowed.add(x)
                grew = True
    return [x for x in _nums(note) if not _known(x, allowed)]


def _without_context(note: str) -> str:
    """``note`` with its ``context: ...`` clauses removed (up to ``;``, ``)`` or a full stop)."""
    return _CONTEXT.sub("", note)


def test_notes_quote_only_numbers_of_their_rows() -> None:
    """Demand, grid-schedule, commitment, chip and site notes agree with their tables.

    Every number in the note is in the row's value, in the table cells the row
    covers (for chips and sites: any numeric cell of the chip's or site's table
    row), or in an arithmetic derivation (``a x b = c``, ``x, rounded y``) whose
    result is; a value written as anchors (``2025Q4=800000; ...``) equals the
    table at those quarters. Numbers inside a ``context: ...`` clause are
    background from the cited page and are not checked.
    """
    ds = load_dataset(ROOT / "data")
    src = ds.table("sources")
    keys = {
        "demand": ["customer", "workload"],
        "site_grid": ["site"],
        "commitments": ["customer"],
        "chips": ["chip"],
        "sites": ["site"],
    }
    cols = {"demand": "demand_h100e", "site_grid": "grid_mw", "commitments": "min_it_mw"}
    checked = 0
    for r in src.itertuples(index=False):
        if r.table not in keys or (r.table in cols and r.column != cols[r.table]):
            continue
        df = ds.table(r.table)
        parts = str(r.key).split("/")
        sel = df
        if parts != ["*"]:
            for k, v in zip(keys[r.table], parts, strict=False):
                if v != "*":
                    sel = sel[sel[k].astype(str) == v]
        if r.table in cols:
            col = cols[r.table]
        elif r.column in df.columns:
            col = str(r.column)
        else:  # '*' column rows document the whole table
            col = ""
        if r.table == "demand" and parts == ["*"]:
            cells = set(df.groupby("period")["demand_h100e"].sum())
        elif r.table in cols:
            cells = set(pd.to_numeric(sel[col]))
        else:
            # the documented column everywhere it is covered, plus the entity's other cells
            cover = sel if parts != ["*"] else df
            num = cover.apply(pd.to_numeric, errors="coerce")
            cells = set(num[col].dropna()) if col else set()
            if parts != ["*"]:
                cells |= set(num.stack().dropna())
        for anchor in re.findall(r"(\d{4}Q[1-4])=(\d+)", str(r.value)):
            period, v = anchor
            if r.table == "demand" and parts == ["*"]:
                got = float(df[df["period"] == period]["demand_h100e"].sum())
            else:
                # demand rows of one customer and workload may be split by region:
                # the anchor is their total
                got = float(sel[sel["period"] == period][col].sum())
            assert got == pytest.approx(float(v), rel=5e-3), (r.table, r.key, period)
        note = _without_context(str(r.note))
        stray = _note_numbers_accounted(note, set(_nums(str(r.value))) | cells)
        assert stray == [], f"{r.table} {r.key} {r.column}: note numbers {stray} not in the row"
        checked += 1
    assert checked >= 100


def test_note_check_skips_context_and_accepts_rounding() -> None:
    """The note checker's two escapes: ``context:`` clauses and ``x, rounded y``."""
    note = "FP8 4.5 / 1.98 = 2.27, rounded 2.25 (context: vendor page lists 3.35 TB/s)."
    assert _note_numbers_accounted(_without_context(note), {2.25}) == []
    assert _note_numbers_accounted(note, {2.25}) == [3.35]
    assert _note_numbers_accounted("2.6, rounded 2.25", {2.25}) == [2.6]


def test_dataset_yaml_keys_the_planner_does_not_read_are_warned(tmp_path: Path) -> None:
    """dataset.yaml took discount_rate_per_year, horizon and currency without a word:
    editing them changed nothing. Each now is a warning naming the key, its value and
    where the figure really lives; the informational keys pass."""
    import shutil

    d = tmp_path / "d"
    shutil.copytree(TINY, d)
    (d / "dataset.yaml").write_text(
        "name: t\ndescription: x\nlicense_notes: y\n"
        "discount_rate_per_year: 0.12\nhorizon: 2025Q1..2040Q4\ncurrency: EUR\nowner: me\n"
    )
    found = {f.column: f for f in load_dataset(d).warnings if f.file == "dataset.yaml"}
    assert set(found) == {"discount_rate_per_year", "horizon", "currency", "owner"}
    assert found["discount_rate_per_year"].value == "0.12"
    assert "periods.csv's discount_factor" in found["discount_rate_per_year"].message
    assert "_usd" in found["currency"].message and found["currency"].value == "EUR"
    assert "name, description, license_notes" in found["owner"].message
    assert not [f for f in load_dataset(ROOT / "data").warnings if f.file == "dataset.yaml"]
    for text in ("- name: t\n", "just a name\n"):  # a list, a bare string: said, not dropped
        (d / "dataset.yaml").write_text(text)
        (found,) = [f for f in load_dataset(d).warnings if f.file == "dataset.yaml"]
        assert "must be keys and values" in found.message


@pytest.mark.parametrize(
    "name",
    [
        "carbon_policy.CSV",
        "carbon_policy.xlsx",
        "Carbon_Policy.tsv",
        "CARBON_POLICY.csv",  # was only "names no table": too far from a near name
        "carbon_policy.csv.txt",  # were not found at all: a second extension
        "carbon_policy.csv.gz",
        "carbon-policy.CSV",  # near names under another extension (were not found)
        "carbon-policy.csv.txt",
    ],
)
def test_an_optional_table_under_another_extension_is_an_error_not_skipped(
    tmp_path: Path, name: str
) -> None:
    """An optional table saved as carbon_policy.CSV, .xlsx or .tsv was skipped without
    a word (only lower-case .csv/.parquet near names were checked): the plan was made
    with no carbon price. It is an error naming the file when no carbon_policy.csv
    is read, a warning when one is."""
    import shutil

    d = tmp_path / "d"
    shutil.copytree(TINY, d)
    (d / name).write_text("region,period,carbon_price_usd_per_t\n")
    with pytest.raises(DataValidationError) as e:
        load_dataset(d)
    (bad,) = [f for f in e.value.findings if f.file == name]
    assert bad.severity == "error" and "carbon_policy.csv" in bad.message
    (d / "carbon_policy.csv").write_text((d / name).read_text())
    try:
        ds = load_dataset(d)
    except DataValidationError as e2:  # the empty table may not validate: not our subject
        warned = [f for f in e2.findings if f.file == name]
    else:
        warned = [f for f in ds.warnings if f.file == name]
    assert [f.severity for f in warned] == ["warning"]


@pytest.mark.parametrize("name", ["scenarios.YAML", "scenarios.yaml.txt"])
def test_a_scenarios_file_under_another_extension_is_an_error(tmp_path: Path, name: str) -> None:
    """scenarios.YAML or scenarios.yaml.txt was not read and not flagged: --scenario all
    then solved nothing and exited 0 (the second break-it pass)."""
    import shutil

    d = tmp_path / "d"
    shutil.copytree(TINY, d)
    (d / "scenarios.yaml").rename(d / name)
    with pytest.raises(DataValidationError) as e:
        load_dataset(d)
    (bad,) = [f for f in e.value.findings if f.file == name]
    assert "must be named scenarios.yaml" in bad.message


def test_scenario_all_on_data_without_scenarios_solves_the_base_data(tmp_path: Path) -> None:
    """--scenario all on a dataset with no scenarios printed nothing, wrote nothing and
    exited 0; it now solves the base data and says so."""
    import shutil

    d = tmp_path / "d"
    shutil.copytree(TINY, d)
    (d / "scenarios.yaml").unlink()
    res = CliRunner().invoke(app, ["solve", str(d), "--scenario", "all", "--no-report"])
    assert res.exit_code == 0, res.output
    assert "defines no scenarios: solving its base data" in res.output
    assert "Status: optimal" in " ".join(res.output.split())
