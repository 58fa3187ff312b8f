"""AppTest tests of the Data page's upload: all or nothing, and what came from where.

Streamlit's uploader checks its ``max_upload_size`` in the browser and drops a larger
file before the app sees it (the widget's value lists only the files that arrived);
AppTest has no browser, so :func:`_browser_upload` drops those files the same way.
"""

from __future__ import annotations

import io
import zipfile

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from capacity.dataset import load_dataset
from capacity.limits import MAX_TRANSPORT_MB, MAX_UPLOAD_BYTES, MAX_UPLOAD_MB
from capacity.schema import SPECS, TABLE_NAMES
from optimizer.cli.app import app_command
from tests.apptest_helpers import open_app, rerun
from tests.conftest import TINY

DEMAND_42 = b"customer,workload,period,demand_h100e\nacme,training,2026Q1,42\n"


def _browser_upload(at: AppTest, files: list[tuple[str, bytes]]) -> list[str]:
    """Choose ``files`` in the uploader as a browser would, then press Load.

    The browser drops a file over the widget's ``max_upload_size`` (counted in
    decimal MB here, the stricter of the two units Streamlit's frontend uses) and
    tells the app nothing. Returns the names that reached the app.
    """
    widget = at.file_uploader(key="upload_files")
    cap = widget.proto.max_upload_size_mb * 1000 * 1000
    sent = [(n, b, "application/octet-stream") for n, b in files if len(b) <= cap]
    widget.set_value(sent)
    rerun(at)
    at.button(key="upload_load").click()
    rerun(at)
    return [n for n, _, _ in sent]


def _texts(elements) -> list[str]:  # noqa: ANN001
    return [str(e.value) for e in elements]


def _load_messages(at: AppTest) -> list[str]:
    """Success messages of an upload (the page also shows 'No findings' successes)."""
    return [t for t in _texts(at.success) if t.startswith(("Loaded ", "Replaced "))]


def test_the_uploader_and_the_server_carry_more_than_the_app_accepts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch)
    widget_cap = at.file_uploader(key="upload_files").proto.max_upload_size_mb
    cmd = app_command(8501, "localhost", True)
    server_cap = int(cmd[cmd.index("--server.maxUploadSize") + 1])
    assert widget_cap == server_cap == MAX_TRANSPORT_MB == 200
    assert MAX_UPLOAD_MB == 50 < widget_cap


def test_a_file_between_the_app_limit_and_the_transport_cap_refuses_the_whole_upload(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch)
    before = at.session_state["base_ds"]
    big = b"site,region\n" + b"x" * (MAX_UPLOAD_BYTES + 1024 * 1024)  # 51.0 MB
    arrived = _browser_upload(at, [("demand.csv", DEMAND_42), ("sites.csv", big)])
    assert arrived == ["demand.csv", "sites.csv"]  # the large file reached the app
    errors = _texts(at.error)
    assert any(
        "sites.csv is 51.0 MB; the limit is 50 MB per file" in t and "refused as a whole" in t
        for t in errors
    ), errors
    after = at.session_state["base_ds"]
    assert after.hash == before.hash  # demand.csv was not loaded either
    assert after.table("demand")["demand_h100e"].tolist() == [1500.0, 800.0]
    assert _load_messages(at) == []
    assert at.session_state["flash"] == []


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (("sites.csv", b"site,region\ndc-1,NO\n"), "error(s)"),  # columns missing
        (("notes.csv", b"a,b\n1,2\n"), "notes.csv: name a file <table>.csv"),
        (("demand.parquet", b"not parquet"), "Two uploaded files are for table 'demand'"),
    ],
)
def test_a_multi_file_upload_with_one_bad_file_loads_nothing(
    monkeypatch: pytest.MonkeyPatch, second: tuple[str, bytes], message: str
) -> None:
    at = open_app(monkeypatch)
    before = at.session_state["base_ds"].hash
    _browser_upload(at, [("demand.csv", DEMAND_42), second])
    errors = _texts(at.error)
    assert any(message in t and "nothing was loaded" in t for t in errors), errors
    assert at.session_state["base_ds"].hash == before
    assert at.session_state["base_ds"].table("demand")["demand_h100e"].tolist() == [1500.0, 800.0]
    assert _load_messages(at) == []


def test_a_single_table_upload_says_which_tables_it_replaced_and_which_it_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch)
    buf = io.BytesIO()
    pd.DataFrame({"customer": ["acme"], "display_name": ["ACME"]}).assign(
        price_training_usd_per_h100e_period=5000.0,
        price_inference_usd_per_h100e_period=6000.0,
        unmet_penalty_usd_per_h100e_period=20000.0,
    ).to_parquet(buf, index=False)
    _browser_upload(at, [("demand.csv", DEMAND_42), ("customers.parquet", buf.getvalue())])
    assert at.session_state["base_ds"].table("demand")["demand_h100e"].tolist() == [42.0]
    (msg,) = _load_messages(at)
    kept = [t for t in TABLE_NAMES if t not in ("demand", "customers")]
    assert msg.splitlines()[:4] == [
        f"Replaced 2 table(s) of **tiny_valid** with the files received: demand.csv (0.0 MB), "
        f"customers.parquet ({len(buf.getvalue()) / 1024 / 1024:.1f} MB).",
        "- Tables read (2): customers (customers.parquet), demand (demand.csv).",
        f"- Kept as they were ({len(kept)} tables of tiny_valid): {', '.join(kept)}.",
        "- Scenarios: kept from tiny_valid.",
    ]
    assert "never reached the app and is not included" in msg.splitlines()[-1]


def _zip(skip: tuple[str, ...] = (), extra: dict[str, bytes] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for p in sorted(TINY.iterdir()):
            if p.stem not in skip and p.name not in skip:
                zf.write(p, arcname=f"mydata/{p.name}")
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_a_zip_upload_lists_its_tables_the_optional_ones_left_empty_and_ignored_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch)
    blob = _zip(skip=("scenarios.yaml",), extra={"mydata/README.md": b"notes"})
    _browser_upload(at, [("mydata.zip", blob)])
    (msg,) = _load_messages(at)
    lines = msg.splitlines()
    present = sorted(p.stem for p in TINY.glob("*.csv"))
    read = [t for t in TABLE_NAMES if t in present]
    empty = [t for t in TABLE_NAMES if t not in present]
    # every table the tiny data leaves out is optional, and there is at least one
    assert empty and all(not SPECS[t].required for t in empty)
    assert lines[0] == f"Loaded **mydata** from mydata.zip ({len(blob) / 1024 / 1024:.1f} MB)."
    assert (
        lines[1]
        == f"- Tables read ({len(read)}): "
        + ", ".join(f"{t} (mydata.zip: mydata/{t}.csv)" for t in read)
        + "."
    )
    assert lines[2] == (
        f"- Not in the upload, so empty (optional tables, {len(empty)}): {', '.join(empty)}."
    )
    assert lines[3] == "- Scenarios: kept from tiny_valid (the zip holds no scenarios.yaml)."
    assert lines[4] == "- Ignored (not a dataset file): mydata/README.md."
    assert at.session_state["base_ds"].name == "mydata"


def test_a_zip_missing_a_required_table_names_it_and_loads_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch)
    before = at.session_state["base_ds"].hash
    _browser_upload(at, [("partial.zip", _zip(skip=("sites", "demand")))])
    errors = _texts(at.error)
    assert any(
        "partial.zip lacks the required table(s) sites, demand" in t
        and "upload those table files on their own" in t
        and "nothing was loaded" in t
        for t in errors
    ), errors
    assert at.session_state["base_ds"].hash == before
    assert _load_messages(at) == []


def test_a_misspelt_file_in_a_zip_is_refused_with_the_name_it_meant(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_app(monkeypatch)
    blob = _zip(extra={"mydata/site_pipline.csv": b"site\n"})
    _browser_upload(at, [("typo.zip", blob)])
    errors = _texts(at.error)
    assert any(
        "typo.zip: mydata/site_pipline.csv" in t and "did you mean site_pipeline.csv" in t
        for t in errors
    ), errors
    assert at.session_state["base_ds"].name == load_dataset(TINY).name


# ----------------------------------------------------------------- without the app
def test_every_file_over_the_limit_is_named_with_its_size() -> None:
    from ui.upload import UploadError, check_upload_sizes

    sizes = [("a.csv", 10), ("b.csv", MAX_UPLOAD_BYTES + 1), ("c.zip", 3 * MAX_UPLOAD_BYTES)]
    with pytest.raises(UploadError) as e:
        check_upload_sizes(sizes)
    assert str(e.value).startswith(
        "b.csv is 50.0 MB; c.zip is 150.0 MB; the limit is 50 MB per file. The upload is "
        "refused as a whole"
    )
    check_upload_sizes([("a.csv", MAX_UPLOAD_BYTES)])  # exactly at the limit is accepted


def test_a_zip_with_one_table_as_csv_and_parquet_is_refused() -> None:
    from ui.upload import UploadedFile, UploadError, upload_dataset

    buf = io.BytesIO()
    pd.read_csv(TINY / "sites.csv").to_parquet(buf, index=False)
    blob = _zip(extra={"sites.parquet": buf.getvalue()})
    with pytest.raises(UploadError, match="both sites.csv and sites.parquet; keep one"):
        upload_dataset([UploadedFile("two.zip", blob)], None)


def test_an_upload_names_the_errors_of_every_file_at_once() -> None:
    """A ;-separated customers.csv beside a demand.csv with 'lots' in a number cell: the
    upload named the customers file's error alone ("1 error(s) (1 in customers.csv)"),
    and the demand file's on the next try."""
    from capacity.validation import DataValidationError
    from ui.upload import UploadedFile, upload_dataset

    tiny = load_dataset(TINY)
    customers = (TINY / "customers.csv").read_text().replace(",", ";").encode()
    demand = b"customer,workload,period,demand_h100e\nacme,training,2026Q1,lots\n"
    files = [UploadedFile("customers.csv", customers), UploadedFile("demand.csv", demand)]
    with pytest.raises(DataValidationError) as e:
        upload_dataset(files, tiny)
    by_file = {f.file for f in e.value.errors}
    assert by_file == {"customers.csv", "demand.csv"}, [str(f) for f in e.value.errors]
    (bad,) = [f for f in e.value.errors if f.file == "demand.csv"]
    assert (bad.row, bad.column, bad.value) == (2, "demand_h100e", "lots")
