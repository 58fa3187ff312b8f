"""Tests of the Parquet reports (optimizer.output), with a fake PlanResult.

The fake (also imported by test_cli_solve) has every result table.

The numbers are small and hand-checkable:

* demand: acme training 100 H100e in 2026Q1 (served 80) and 100 in 2026Q2 (served 100),
  so acme training is served 180 / 200 = 90 % over the horizon; beta inference
  50 + 50, served 50 + 25 = 75 %.
* energy: 2 sites x 2 periods, facility 1e6 MWh each -> 4 TWh; water 0.5e6 m3
  each -> 2 million m3.
* shadow prices: site_grid alpha binding at -1e6 and -2.5e6 USD/MW (rank 1, sum
  3.5e6), supply_resource cowos_wafers binding at -1.2e5 USD/wafer (rank 2);
  site_water beta not binding; demand_balance and the structural site_liquid_share
  row are not limits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

P = ["2026Q1", "2026Q2"]


def _tables() -> dict[str, pd.DataFrame]:
    build_out = pd.DataFrame(
        {
            "site": ["alpha", "alpha", "beta", "beta"],
            "period": P * 2,
            "build_mw": [10.0, 0.0, 5.0, 5.0],
            "liquid_build_mw": [10.0, 0.0, 0.0, 0.0],
            "retrofit_mw": [0.0, 0.0, 0.0, 0.0],
            "pipeline_mw": [0.0, 0.0, 0.0, 0.0],
            "online_mw": [10.0, 0.0, 5.0, 5.0],
            "it_capacity_mw": [110.0, 110.0, 55.0, 60.0],
            "liquid_capacity_mw": [10.0, 10.0, 0.0, 0.0],
            "decided_capacity_mw": [110.0, 110.0, 55.0, 60.0],
        }
    )
    fleet = pd.DataFrame(
        {
            "chip": ["h100", "h100", "trainium3", "trainium3"],
            "site": ["alpha", "alpha", "beta", "beta"],
            "period": P * 2,
            "installed_chips": [1000.0, 0.0, 0.0, 2000.0],
            "retired_chips": [0.0, 0.0, 0.0, 0.0],
            "fleet_chips": [5000.0, 5000.0, 0.0, 2000.0],
            "assigned_chips": [4000.0, 5000.0, 0.0, 1500.0],
            "idle_chips": [1000.0, 0.0, 0.0, 500.0],
            "it_mw": [8.5, 8.5, 0.0, 2.0],
        }
    )
    production = pd.DataFrame(
        {
            "chip": ["h100", "h100", "trainium3", "trainium3"],
            "period": P * 2,
            "produced_chips": [1000.0, 0.0, 1000.0, 1000.0],
            "installed_chips": [1000.0, 0.0, 0.0, 2000.0],
            "inventory_chips": [0.0, 0.0, 1000.0, 0.0],
        }
    )
    supply = pd.DataFrame(
        {
            "resource": ["cowos_wafers", "cowos_wafers"],
            "period": P,
            "unit": ["wafers", "wafers"],
            "used": [100.0, 80.0],
            "capacity": [100.0, 100.0],
            "utilisation": [1.0, 0.8],
            "shadow_price_usd_per_unit": [1.2e5, 0.0],
        }
    )
    assignment = pd.DataFrame(
        {
            "chip": ["h100", "h100", "trainium3"],
            "site": ["alpha", "alpha", "beta"],
            "customer": ["acme", "acme", "beta"],
            "workload": ["training", "training", "inference"],
            "period": ["2026Q1", "2026Q2", "2026Q2"],
            "chips": [4000.0, 5000.0, 1500.0],
            "h100e": [80.0, 100.0, 25.0],
            "it_mw": [6.8, 8.5, 1.5],
        }
    )
    demand = pd.DataFrame(
        {
            "customer": ["acme", "acme", "beta", "beta"],
            "workload": ["training", "training", "inference", "inference"],
            "period": P * 2,
            "regions": ["", "", "NO", "NO"],
            "demand_h100e": [100.0, 100.0, 50.0, 50.0],
            "served_h100e": [80.0, 100.0, 50.0, 25.0],
            "unmet_h100e": [20.0, 0.0, 0.0, 25.0],
            "served_share": [0.8, 1.0, 1.0, 0.5],
            "shadow_price_usd_per_h100e": [9e4, 3e4, 0.0, 9e4],
        }
    )
    site_util = pd.DataFrame(
        {
            "site": ["alpha", "alpha", "beta"],
            "period": ["2026Q2", "2026Q2", "2026Q2"],
            "limit": ["grid", "power", "water"],
            "used": [120.0, 110.0, 100.0],
            "capacity": [120.0, 110.0, 400.0],
            "unit": ["MW", "MW", "m3"],
            "utilisation": [1.0, 1.0, 0.25],
            "shadow_price_usd_per_unit": [2.5e6, 0.0, 0.0],
        }
    )
    commitments = pd.DataFrame(
        {
            "customer": ["acme", "acme", "beta", "beta"],
            "family": ["nvidia", "nvidia", "trainium", "trainium"],
            "period": P * 2,
            "min_it_mw": [5.0, 5.0, 2.0, 2.0],
            "delivered_it_mw": [6.8, 8.5, 0.0, 1.5],
            "breach_mw": [0.0, 0.0, 2.0, 0.5],
            "shadow_price_usd_per_mw": [0.0, 0.0, 1e6, 1e6],
        }
    )
    terms = ["chip_capex", "build_capex", "energy", "unmet_penalty", "breach_penalty"]
    costs = pd.DataFrame(
        {
            "period": [p for p in P for _ in terms],
            "term": terms * 2,
            "cost_usd": [1e9, 2e8, 5e7, 1e6, 2e6, 1e9, 1e8, 5e7, 1e6, 5e5],
            "undiscounted_cost_usd": [1e9, 2e8, 5e7, 1e6, 2e6, 1.02e9, 1.02e8, 5.1e7, 1e6, 5e5],
            "cash_usd": [4e10, 3e9, 5e7, 0.0, 0.0, 0.0, 0.0, 5.1e7, 0.0, 0.0],
            "cash_kind": ["capex", "capex", "opex", "none", "none"] * 2,
        }
    )
    energy = pd.DataFrame(
        {
            "site": ["alpha", "alpha", "beta", "beta"],
            "period": P * 2,
            "it_mwh": [8e5, 8e5, 8e5, 8e5],
            "facility_mwh": [1e6, 1e6, 1e6, 1e6],
            "water_m3": [5e5, 5e5, 5e5, 5e5],
            "energy_cost_usd": [5e7, 5e7, 5e7, 5e7],
            "carbon_t": [3e5, 3e5, 3e5, 3e5],
        }
    )
    shadow = pd.DataFrame(
        {
            "family": [
                "site_grid",
                "site_grid",
                "supply_resource",
                "site_water",
                "demand_balance",
                "site_liquid_share",
            ],
            "period": ["2026Q1", "2026Q2", "2026Q1", "2026Q2", "2026Q1", "2026Q1"],
            "key": ["alpha", "alpha", "cowos_wafers", "beta", "acme/training", "alpha"],
            "shadow_price": [-1.0e6, -2.5e6, -1.2e5, 0.0, 9e4, -9e6],
            "unit": ["USD/MW", "USD/MW", "USD/wafers", "USD/m3", "USD/H100e", "USD/MW"],
            "slack": [0.0, 0.0, 0.0, 300.0, 0.0, 0.0],
            "binding": [True, True, True, False, True, True],
        }
    )
    return {
        "build_out": build_out,
        "fleet": fleet,
        "production": production,
        "supply_utilisation": supply,
        "assignment": assignment,
        "demand": demand,
        "site_utilisation": site_util,
        "commitments": commitments,
        "costs": costs,
        "energy": energy,
        "shadow_prices": shadow,
    }


@dataclass
class FakeResult:
    """Duck-typed stand-in for optimizer.PlanResult."""

    status: Any = "optimal"
    objective_usd: float | None = 2.4045e9
    tables: dict[str, pd.DataFrame] = field(default_factory=_tables)
    violations: Any = None
    infeasibility: pd.DataFrame | None = None
    message: str = ""
    solver: str = "highs"
    dataset_hash: str = "0123456789abcdef" * 4
    dataset_name: str = "fake"
    timings_s: dict[str, float] = field(default_factory=lambda: {"build": 0.5, "solve": 1.25})
    n_variables: int = 123
    n_constraints: int = 45
    integer_units: bool = False
    duals_from: str | None = "lp"


def fake_result(**kw: Any) -> FakeResult:
    return FakeResult(**kw)


# ---------------------------------------------------------------------------------
# Tests

import json  # noqa: E402
import os  # noqa: E402
from pathlib import Path  # noqa: E402

import duckdb  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.dataset as pads  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import pytest  # noqa: E402

from optimizer.output import flush  # noqa: E402
from optimizer.output.atomic import ReportError  # noqa: E402
from optimizer.output.manifest import (  # noqa: E402
    package_version,
    read_manifest,
    scenario_is_complete,
)
from optimizer.output.parquet_tables import (  # noqa: E402
    RESULT_SCHEMAS,
    open_table_dataset,
    read_metadata,
    read_report,
    write_table_atomic,
)
from optimizer.output.report import write_report  # noqa: E402

RESULT_TABLE_NAMES = [
    "build_out",
    "fleet",
    "production",
    "supply_utilisation",
    "assignment",
    "demand",
    "site_utilisation",
    "commitments",
    "costs",
    "energy",
    "shadow_prices",
]


def _two_scenarios(tmp_path: Path) -> Path:
    """neutral: the full fake; negative: infeasible, no tables except an explanation."""
    write_report(fake_result(), tmp_path, scenario="neutral", run_id="run1")
    infeas = pd.DataFrame(
        {
            "scenario": [0],  # the explainer's position column: dropped, never stored
            "family": ["site_grid"],
            "key": ["alpha"],
            "period": ["2026Q2"],
            "amount": [120],  # int on purpose: must be written as float64
            "unit": ["MW"],
            "message": ["site alpha grid in 2026Q2 short by 120 MW"],
        }
    )
    bad = fake_result(status="infeasible", objective_usd=None, tables={}, infeasibility=infeas)
    return write_report(bad, tmp_path, scenario="negative", run_id="run1")


def test_schemas_cover_the_contract_and_carry_units() -> None:
    for name in RESULT_TABLE_NAMES:
        assert name in RESULT_SCHEMAS
        assert RESULT_SCHEMAS[name].names == list(_tables()[name].columns)
    for name in ("violations", "infeasibility", "summary"):
        assert name in RESULT_SCHEMAS
    f = RESULT_SCHEMAS["build_out"].field("build_mw")
    assert f.type == pa.float64() and f.metadata[b"unit"] == b"MW"
    assert RESULT_SCHEMAS["shadow_prices"].field("binding").type == pa.bool_()
    assert RESULT_SCHEMAS["energy"].field("water_m3").metadata[b"unit"] == b"m3"
    for schema in RESULT_SCHEMAS.values():
        assert "scenario" not in schema.names  # the partition lives in the path only


def test_round_trip_pandas_keeps_values_and_dtypes(tmp_path: Path) -> None:
    run = _two_scenarios(tmp_path)
    back = read_report(run / "scenario=neutral")
    assert set(back) == set(RESULT_SCHEMAS)
    for name, df in _tables().items():
        got = back[name]
        pd.testing.assert_frame_equal(got, df, check_dtype=False)
        for col in df.columns:
            if df[col].dtype == bool:
                assert got[col].dtype == bool
            elif pd.api.types.is_float_dtype(df[col]):
                assert got[col].dtype == np.float64
            else:
                assert pd.api.types.is_string_dtype(got[col])
    # the empty table of the infeasible scenario is present with the same Arrow types
    for name in RESULT_TABLE_NAMES:
        f = run / "scenario=negative" / f"{name}.parquet"
        assert f.is_file()
        assert pq.read_schema(f).remove_metadata() == RESULT_SCHEMAS[name].remove_metadata()
        assert pq.read_metadata(f).num_rows == 0
    infeas = read_report(run / "scenario=negative")["infeasibility"]
    assert infeas["amount"].tolist() == [120.0]
    assert infeas["amount"].dtype == np.float64


def test_run_folder_reads_with_pyarrow_dataset_and_duckdb(tmp_path: Path) -> None:
    run = _two_scenarios(tmp_path)
    # pyarrow.dataset with hive partitioning over the raw folder (no helper)
    dset = pads.dataset(
        [str(p) for p in sorted(run.glob("scenario=*/demand.parquet"))],
        format="parquet",
        partitioning="hive",
        partition_base_dir=str(run),
    )
    t = dset.to_table()
    assert t.num_rows == 4  # 4 rows neutral + 0 negative
    assert t.schema.field("demand_h100e").type == pa.float64()
    assert set(t.column("scenario").to_pylist()) == {"neutral"}
    # DuckDB: the whole folder, both scenarios, identical types
    con = duckdb.connect()
    q = f"read_parquet('{run}/scenario=*/demand.parquet', hive_partitioning=true)"
    rows = con.sql(f"SELECT scenario, count(*), sum(served_h100e) FROM {q} GROUP BY ALL").fetchall()
    assert rows == [("neutral", 4, 255.0)]
    types = {r[0]: r[1] for r in con.sql(f"DESCRIBE SELECT * FROM {q}").fetchall()}
    assert types["served_h100e"] == "DOUBLE" and types["scenario"] == "VARCHAR"
    sp = con.sql(
        f"SELECT scenario, count(*) FROM read_parquet('{run}/scenario=*/summary.parquet', "
        "hive_partitioning=true) GROUP BY ALL ORDER BY 1"
    ).fetchall()
    assert sp == [("negative", 1), ("neutral", 1)]
    # helper: every table over all scenarios with a str scenario column
    allt = read_report(run)
    assert sorted(allt["summary"]["scenario"]) == ["negative", "neutral"]
    assert allt["summary"].set_index("scenario").loc["negative", "status"] == "infeasible"
    assert np.isnan(allt["summary"].set_index("scenario").loc["negative", "objective_usd"])
    assert allt["shadow_prices"]["binding"].dtype == bool


def test_file_metadata_and_manifest(tmp_path: Path) -> None:
    run = _two_scenarios(tmp_path)
    meta = read_metadata(run / "scenario=neutral" / "costs.parquet")
    assert meta["scenario"] == "neutral"
    assert meta["status"] == "optimal"
    assert float(meta["objective_usd"]) == 2.4045e9
    assert meta["solver"] == "highs"
    assert meta["dataset_hash"] == "0123456789abcdef" * 4
    assert meta["table"] == "costs"
    assert meta["package_version"] == package_version() != ""
    assert json.loads(meta["units"])["cost_usd"] == "USD"
    assert "pandas" not in meta  # Arrow types are the truth, not a pandas dtype guess
    neg = read_metadata(run / "scenario=negative" / "demand.parquet")
    assert neg["status"] == "infeasible" and neg["objective_usd"] == ""

    man = json.loads((run / "manifest.json").read_text())
    assert man["run_id"] == "run1"
    assert man["dataset_hash"] == "0123456789abcdef" * 4
    assert man["package_version"] == package_version()
    assert man["created_utc"].endswith("Z")
    neutral = man["scenarios"]["neutral"]
    assert neutral["state"] == "complete"
    assert neutral["status"] == "optimal" and neutral["objective_usd"] == 2.4045e9
    assert neutral["solver"] == "highs"
    assert neutral["timings_s"] == {"build": 0.5, "solve": 1.25}
    assert "scenario=neutral/demand.parquet" in neutral["files"]
    assert len(neutral["files"]) == len(RESULT_SCHEMAS)
    assert all((run / f).is_file() for f in neutral["files"])
    assert man["scenarios"]["negative"]["objective_usd"] is None
    assert scenario_is_complete(run, "neutral") and not scenario_is_complete(run, "optimistic")


def test_default_run_id_and_rewrite_is_idempotent(tmp_path: Path) -> None:
    run = write_report(fake_result(), tmp_path, scenario="neutral")
    assert run.parent == tmp_path
    assert run.name.endswith("-01234567") and run.name[8] == "T"
    created = read_manifest(run)["created_utc"]
    before = read_report(run / "scenario=neutral")
    again = write_report(fake_result(), tmp_path, scenario="neutral", run_id=run.name)
    assert again == run
    after = read_report(run / "scenario=neutral")
    for name in before:
        pd.testing.assert_frame_equal(before[name], after[name])
    assert read_manifest(run)["created_utc"] == created
    assert list(read_manifest(run)["scenarios"]) == ["neutral"]
    assert not [p for p in run.rglob("*") if ".tmp-" in p.name]


def test_units_dictionary(tmp_path: Path) -> None:
    run = write_report(fake_result(), tmp_path, scenario="neutral", run_id="r", units=True)
    units = pd.read_csv(run / "units.csv")
    row = units[(units.table == "energy") & (units.column == "water_m3")].iloc[0]
    assert row["unit"] == "m3" and row["type"] == "double"
    assert read_metadata(run / "scenario=neutral" / "energy.parquet")["units_dictionary"] == "true"
    assert not (
        write_report(fake_result(), tmp_path, scenario="n", run_id="s") / "units.csv"
    ).exists()


def test_write_table_atomic_leaves_no_temp_and_casts(tmp_path: Path) -> None:
    schema = RESULT_SCHEMAS["costs"]
    df = pd.DataFrame(
        {
            "period": ["2026Q1"],
            "term": ["energy"],
            "cost_usd": [5],
            "undiscounted_cost_usd": [5],
            "cash_usd": [5],
            "cash_kind": ["opex"],
        }
    )
    path = write_table_atomic(df, tmp_path / "costs.parquet", schema, {"scenario": "x"})
    assert sorted(os.listdir(tmp_path)) == ["costs.parquet"]
    t = pq.read_table(path)
    assert t.schema.field("cost_usd").type == pa.float64()
    assert t.column("cost_usd").to_pylist() == [5.0]
    assert read_metadata(path)["scenario"] == "x"


def test_crash_midway_keeps_previous_file_and_no_partial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = write_report(fake_result(), tmp_path, scenario="neutral", run_id="r")
    sdir = run / "scenario=neutral"
    old_bytes = (sdir / "demand.parquet").read_bytes()
    real_write = pq.write_table
    calls: list[str] = []

    def crashing_write(table: pa.Table, where: object, **kw: object) -> None:
        calls.append(str(where))
        if table.schema.metadata[b"table"] == b"demand":
            Path(str(where)).write_bytes(b"PAR1 half a file")  # partial bytes, then die
            raise OSError(28, "No space left on device")
        real_write(table, where, **kw)

    monkeypatch.setattr(pq, "write_table", crashing_write)
    changed = fake_result(status="optimal", objective_usd=1.0)
    changed.tables["demand"] = changed.tables["demand"].assign(served_h100e=0.0)
    with pytest.raises(ReportError, match=r"demand\.parquet.*No space left"):
        write_report(changed, tmp_path, scenario="neutral", run_id="r")
    monkeypatch.setattr(pq, "write_table", real_write)
    # written inside the hidden staging folder beside the scenario, never in its place
    demand_at = [Path(c) for c in calls if c.endswith("demand.parquet")]
    assert [c.parent.name for c in demand_at] == [f".scenario=neutral.partial-{os.getpid()}"]
    assert demand_at[0].parent.parent == run
    assert (sdir / "demand.parquet").read_bytes() == old_bytes
    assert pq.read_table(sdir / "demand.parquet").column("served_h100e").to_pylist() == [
        80.0,
        100.0,
        50.0,
        25.0,
    ]
    assert not [p for p in run.rglob("*") if ".tmp-" in p.name]
    # the manifest says the scenario is not complete, so a batch re-run redoes it
    assert read_manifest(run)["scenarios"]["neutral"]["state"] == "writing"
    assert not scenario_is_complete(run, "neutral")
    from optimizer.notebook import read_report as read_plan

    with pytest.warns(UserWarning, match=r"manifest.json records state 'writing'.*'neutral'"):
        read_plan(run)  # the earlier write's files: read, but said to be so


def test_ctrl_c_while_writing_leaves_no_report_and_no_partial_scenario(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C part way through a scenario's files: nothing of that scenario stays.

    A new run (the first scenario of a ``capacity solve``) is removed whole, so the
    command's "no report was written" is true; a second scenario of a run leaves the
    first one complete and no trace of itself (no folder, no manifest entry).
    """
    real_write = pq.write_table
    written: list[str] = []

    def interrupted_write(table: pa.Table, where: object, **kw: object) -> None:
        if len(written) == 3:
            raise KeyboardInterrupt
        written.append(str(where))
        real_write(table, where, **kw)

    monkeypatch.setattr(pq, "write_table", interrupted_write)
    with pytest.raises(KeyboardInterrupt):
        write_report(fake_result(), tmp_path / "a", scenario="neutral")
    assert len(written) == 3  # three tables were on disk when Ctrl-C came
    assert list((tmp_path / "a").iterdir()) == []  # the reserved run folder is gone

    monkeypatch.setattr(pq, "write_table", real_write)
    run = write_report(fake_result(), tmp_path / "b", scenario="neutral")
    written.clear()
    monkeypatch.setattr(pq, "write_table", interrupted_write)
    with pytest.raises(KeyboardInterrupt):
        write_report(fake_result(), tmp_path / "b", scenario="negative", run_id=run.name)
    monkeypatch.setattr(pq, "write_table", real_write)
    assert sorted(p.name for p in run.iterdir() if p.is_dir()) == ["scenario=neutral"]
    assert list(read_manifest(run)["scenarios"]) == ["neutral"]
    assert scenario_is_complete(run, "neutral")
    assert len(list((run / "scenario=neutral").glob("*.parquet"))) == len(RESULT_SCHEMAS)


def test_ctrl_c_after_the_folder_moved_in_but_before_the_manifest_said_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder in place is not the commit; the manifest entry is.

    A SIGTERM that came just after ``scenario=negative`` moved in, before its manifest
    entry said ``complete``, left the folder behind with no entry (CI: the solve test
    saw the files, sent SIGTERM, and found the run gone). A new scenario's folder now
    goes with its entry; the complete scenario before it stays.
    """
    import optimizer.output.report as report

    run = write_report(fake_result(), tmp_path / "b", scenario="neutral")
    real_update = report.update_manifest

    def update(run_dir: Path, **kw: Any) -> dict[str, Any]:
        if kw.get("entry", {}).get("state") == "complete":
            assert (Path(run_dir) / f"scenario={kw['scenario']}" / "fleet.parquet").exists()
            raise KeyboardInterrupt
        return real_update(run_dir, **kw)

    monkeypatch.setattr(report, "update_manifest", update)
    with pytest.raises(KeyboardInterrupt):
        write_report(fake_result(), tmp_path / "b", scenario="negative", run_id=run.name)
    assert sorted(p.name for p in run.iterdir() if p.is_dir()) == ["scenario=neutral"]
    assert list(read_manifest(run)["scenarios"]) == ["neutral"]
    with pytest.raises(KeyboardInterrupt):
        write_report(fake_result(), tmp_path / "c", scenario="neutral")
    assert list((tmp_path / "c").iterdir()) == []  # a solve's reserved run: gone whole


def _interrupt_once_written(monkeypatch: pytest.MonkeyPatch, state: str) -> None:
    """Make the manifest updates raise KeyboardInterrupt once an entry in ``state`` is in."""
    import optimizer.output.manifest as manifest
    import optimizer.output.report as report

    real_update = manifest.update_manifest

    def update(run_dir: Path, **kw: Any) -> dict[str, Any]:
        out = real_update(run_dir, **kw)
        if kw.get("entry", {}).get("state") == state:
            raise KeyboardInterrupt
        return out

    for module in (manifest, report):
        monkeypatch.setattr(module, "update_manifest", update)


def test_an_interrupt_after_the_manifest_said_complete_keeps_the_scenario(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The manifest's rename is the commit: an interrupt after it undoes nothing.

    CI once saw ``capacity solve`` find its run folder gone after a SIGTERM sent as soon
    as the manifest said the first scenario was complete: the signal came while the
    manifest's lock was let go, and the clean-up removed the committed scenario and the
    run it had reserved. Now both stay and the interrupt names the run.
    """
    _interrupt_once_written(monkeypatch, "complete")  # the rename has happened
    with pytest.raises(KeyboardInterrupt) as got:
        write_report(fake_result(), tmp_path / "a", scenario="neutral")
    (run,) = (tmp_path / "a").iterdir()
    assert got.value.committed_run_dir == run  # type: ignore[attr-defined]
    assert scenario_is_complete(run, "neutral")
    assert len(list((run / "scenario=neutral").glob("*.parquet"))) == len(RESULT_SCHEMAS)
    with pytest.raises(KeyboardInterrupt):  # a second scenario of the run: kept as well
        write_report(fake_result(), tmp_path / "a", scenario="negative", run_id=run.name)
    assert list(read_manifest(run)["scenarios"]) == ["neutral", "negative"]
    assert scenario_is_complete(run, "negative")


def test_an_interrupt_as_the_lock_is_taken_still_cleans_up_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ctrl-C landing as filelock's acquire returns leaves the manifest lock held.

    The clean-up's manifest edit then took a second lock object on the same file:
    filelock 4 refused it ("Deadlock" RuntimeError, a traceback and exit 1 in place of
    the interrupt; found by a helper session's injected signals), filelock 3 would wait
    forever. The lock object is now one per file, so the clean-up re-enters it.
    """
    from filelock import BaseFileLock

    run = write_report(fake_result(), tmp_path / "a", scenario="neutral")
    real_acquire = BaseFileLock.acquire
    calls: list[int] = []

    def acquire(self: BaseFileLock, *a: Any, **k: Any) -> Any:
        out = real_acquire(self, *a, **k)
        calls.append(1)
        if len(calls) == 2:  # the commit's lock: held, and the signal lands
            raise KeyboardInterrupt
        return out

    monkeypatch.setattr(BaseFileLock, "acquire", acquire)
    with pytest.raises(KeyboardInterrupt):
        write_report(fake_result(), tmp_path / "a", scenario="negative", run_id=run.name)
    assert len(calls) == 3  # the clean-up took the lock again
    assert sorted(p.name for p in run.iterdir() if p.is_dir()) == ["scenario=neutral"]
    assert list(read_manifest(run)["scenarios"]) == ["neutral"]


def test_an_interrupt_before_the_first_entry_removes_the_run_it_reserved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while a solve's first scenario is turned into tables left an empty run.

    The command said "no report was written" beside a run folder that read_run refused
    ("no scenario=<name> folder"); only a schema error removed it.
    """
    import optimizer.output.report as report

    monkeypatch.setattr(
        report, "scenario_tables", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt)
    )
    with pytest.raises(KeyboardInterrupt):
        write_report(fake_result(), tmp_path / "a", scenario="neutral")
    assert list((tmp_path / "a").iterdir()) == []


def test_an_interrupt_after_a_new_scenario_s_writing_entry_leaves_no_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second scenario's "writing" entry in, then Ctrl-C: the run is as it was.

    A helper session's injected signals left ``{'neutral': 'complete', 'negative':
    'writing'}`` with no ``scenario=negative`` folder: only a run the call had reserved
    was cleaned before the scenario's files began.
    """
    run = write_report(fake_result(), tmp_path / "a", scenario="neutral")
    _interrupt_once_written(monkeypatch, "writing")  # the entry is in
    with pytest.raises(KeyboardInterrupt):
        write_report(fake_result(), tmp_path / "a", scenario="negative", run_id=run.name)
    assert list(read_manifest(run)["scenarios"]) == ["neutral"]
    assert sorted(p.name for p in run.iterdir() if p.is_dir()) == ["scenario=neutral"]


def test_schema_mismatch_writes_nothing(tmp_path: Path) -> None:
    broken = fake_result()
    broken.tables["fleet"] = broken.tables["fleet"].drop(columns=["idle_chips"])
    with pytest.raises(ValueError, match=r"'fleet'.*idle_chips"):
        write_report(broken, tmp_path / "out", scenario="neutral", run_id="r")
    assert not (tmp_path / "out").exists()


def test_bad_output_directory_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "reports"
    blocker.write_text("not a directory")
    with pytest.raises(ReportError, match=f"{blocker}.*not a directory"):
        write_report(fake_result(), blocker, scenario="neutral", run_id="r")
    assert blocker.read_text() == "not a directory"


def test_unwritable_output_directory_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    if os.geteuid() == 0:  # root ignores permissions: make mkdir fail as it would
        real_mkdir = Path.mkdir

        def mkdir(self: Path, *a: object, **kw: object) -> None:
            if ro in self.parents:
                raise PermissionError(13, "Permission denied", str(self))
            real_mkdir(self, *a, **kw)

        monkeypatch.setattr(Path, "mkdir", mkdir)
    try:
        with pytest.raises(ReportError, match=f"cannot create report directory {ro}/r"):
            write_report(fake_result(), ro, scenario="neutral", run_id="r")
        assert os.listdir(ro) == []
    finally:
        ro.chmod(0o700)


def test_violations_as_list_of_dicts(tmp_path: Path) -> None:
    v = [
        {
            "family": "site_grid",
            "constraint": "site_grid[alpha|2026Q1]",
            "keys": "alpha|2026Q1",
            "lhs": 121.0,
            "rhs": 120.0,
            "violation": 1.0,
        }
    ]
    run = write_report(fake_result(violations=v), tmp_path, scenario="x", run_id="r")
    back = read_report(run / "scenario=x")
    assert back["violations"]["violation"].tolist() == [1.0]
    assert back["violations"]["constraint"].tolist() == ["site_grid[alpha|2026Q1]"]
    assert back["summary"]["n_violations"].tolist() == [1]


def test_real_plan_two_scenarios_read_together(tmp_path: Path) -> None:
    """The real LP on tests/data/report_tiny (see test_cli_solve for the hand numbers):
    neutral serves 70 %, tight (half the wafers) 35 %; both written to one run."""
    from capacity.dataset import load_dataset
    from capacity.scenarios import apply_scenario
    from optimizer import SolveOptions, solve

    base = load_dataset(Path(__file__).parent / "data" / "report_tiny")
    for name in ("neutral", "tight"):
        res = solve(apply_scenario(base, name), SolveOptions(solver="highs"))
        assert res.status == "optimal"
        write_report(res, tmp_path, scenario=name, run_id="real")
    run = tmp_path / "real"
    con = duckdb.connect()
    rows = con.sql(
        f"SELECT scenario, sum(served_h100e) / sum(demand_h100e) FROM read_parquet("
        f"'{run}/scenario=*/demand.parquet', hive_partitioning=true) GROUP BY ALL ORDER BY 1"
    ).fetchall()
    assert rows == [("neutral", pytest.approx(0.7)), ("tight", pytest.approx(0.35))]
    for name, schema in RESULT_SCHEMAS.items():
        t = open_table(run, name)
        assert (
            t.schema.remove_metadata()
            == schema.append(pa.field("scenario", pa.string())).remove_metadata()
        )
        # the same table from both scenarios has byte-identical Arrow schemas
        a, b = (
            pq.read_schema(run / f"scenario={s}" / f"{name}.parquet") for s in ("neutral", "tight")
        )
        assert a.remove_metadata() == b.remove_metadata() == schema.remove_metadata()
    # commitments are empty in this dataset and still carry their types
    com = read_report(run)["commitments"]
    assert len(com) == 0 and com["min_it_mw"].dtype == np.float64
    man = read_manifest(run)
    assert [man["scenarios"][s]["status"] for s in ("neutral", "tight")] == ["optimal"] * 2
    assert man["scenarios"]["neutral"]["objective_usd"] == pytest.approx(2_410_000.4)


def open_table(run: Path, name: str) -> pa.Table:
    return open_table_dataset(run, name).to_table()


def test_metadata_says_where_shadow_prices_come_from(tmp_path: Path) -> None:
    res = fake_result(integer_units=True, duals_from="lp_with_integers_fixed")
    run = write_report(res, tmp_path, scenario="neutral", run_id="int")
    for name in ("shadow_prices", "demand", "summary"):
        meta = read_metadata(run / "scenario=neutral" / f"{name}.parquet")
        assert meta["duals_from"] == "lp_with_integers_fixed"
        assert meta["integer_units"] == "true"
    assert read_report(run / "scenario=neutral")["summary"]["duals_from"].tolist() == [
        "lp_with_integers_fixed"
    ]
    lp = write_report(fake_result(), tmp_path, scenario="neutral", run_id="lp")
    meta = read_metadata(lp / "scenario=neutral" / "costs.parquet")
    assert (meta["duals_from"], meta["integer_units"]) == ("lp", "false")


def test_to_arrow_text_and_flags_whatever_the_pandas_dtype() -> None:
    """Text: missing -> null, else str(cell); flags: missing -> null (every path)."""
    import numpy as np
    import pyarrow as pa

    from optimizer.output.parquet_tables import to_arrow

    schema = pa.schema(
        [pa.field("t", pa.string()), pa.field("f", pa.bool_())], metadata={"table": "x"}
    )
    want_t = ["a", None, "b", None]
    cases = {
        "text dtype": pd.Series(["a", np.nan, "b", None], dtype="str"),
        "object text": pd.Series(["a", None, "b", np.nan], dtype=object),
    }
    for label, text in cases.items():
        flags = pd.Series([True, False, True, False])
        got = to_arrow(pd.DataFrame({"t": text, "f": flags}), schema)
        assert got.column("t").to_pylist() == want_t, label
        assert got.column("f").to_pylist() == [True, False, True, False], label
        assert got.schema.field("t").type == pa.string()
    mixed = pd.DataFrame({"t": pd.Series([1.5, "x", None], dtype=object), "f": [True, None, False]})
    got = to_arrow(mixed, schema)
    assert got.column("t").to_pylist() == ["1.5", "x", None]  # str() of a non-text cell
    assert got.column("f").to_pylist() == [True, None, False]


def test_scenario_folder_files_are_flushed_before_the_folder_moves_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Off the local file systems, each table file is fsynced, then the folders themselves.

    The files are written under their own names inside the hidden staging folder (no
    per-file temporary name), so durability rests on these flushes: each file's data
    before the move, the staging folder's entries, then the parent's after the rename.
    """
    from optimizer.output.report import file_metadata, write_scenario_folder

    real_fsync = os.fsync
    flushed: list[str] = []

    def recording_fsync(fd: int) -> None:
        flushed.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    # a file system where one syncfs may not reach the storage: each file on its own
    monkeypatch.setattr(flush, "filesystem_type", lambda path: "nfs4")
    result = fake_result()
    sdir = tmp_path / "scenario=neutral"
    files = write_scenario_folder(result, sdir, file_metadata(result, scenario="neutral"))
    monkeypatch.setattr(os, "fsync", real_fsync)
    stage = str(tmp_path / f".scenario=neutral.partial-{os.getpid()}")
    assert sorted(files) == sorted(RESULT_SCHEMAS)
    staged_files = sorted(f for f in flushed if f.startswith(stage + "/"))
    assert staged_files == sorted(f"{stage}/{n}.parquet" for n in RESULT_SCHEMAS)
    # the staging folder is flushed after its last file, the parent after the move
    assert flushed.index(stage) > max(flushed.index(f) for f in staged_files)
    assert flushed[-1] == str(tmp_path)
    assert sorted(p.name for p in sdir.iterdir()) == sorted(f"{n}.parquet" for n in RESULT_SCHEMAS)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_hidden_leftover_folder_is_not_read_by_the_documented_queries(tmp_path: Path) -> None:
    """What a killed writer may leave (a staging or set-aside copy) stays out of the sums.

    The documented DuckDB glob is ``<run>/scenario=*/<table>.parquet``: a hidden
    ``.scenario=<name>.partial-<pid>`` or ``.old-<pid>`` folder beside the scenario
    folders, holding table files, neither breaks the hive partitioning (``<run>/*/``
    did: "Hive partition mismatch") nor counts a scenario twice.
    """
    run = _two_scenarios(tmp_path)
    q = f"read_parquet('{run}/scenario=*/demand.parquet', hive_partitioning=true)"
    want = duckdb.sql(f"SELECT scenario, count(*), sum(served_h100e) FROM {q} GROUP BY ALL")
    want_rows = want.fetchall()
    for kind in ("partial", "old"):
        left = run / f".scenario=neutral.{kind}-99999"
        left.mkdir()
        (left / "demand.parquet").write_bytes(
            (run / "scenario=neutral/demand.parquet").read_bytes()
        )
    got = duckdb.sql(f"SELECT scenario, count(*), sum(served_h100e) FROM {q} GROUP BY ALL")
    assert got.fetchall() == want_rows == [("neutral", 4, 255.0)]


_READ_ONLY_REWRITE = """
import sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_report import fake_result
from optimizer.output.report import write_report
out = Path({out!r})
run = write_report(fake_result(), out, scenario="neutral", run_id="r")
(run / "scenario=neutral").chmod(0o555)
write_report(fake_result(), out, scenario="neutral", run_id="r")
"""


def test_a_read_only_earlier_copy_is_removed_when_a_scenario_is_written_again(
    tmp_path: Path,
) -> None:
    """Its owner made the scenario folder read-only: the write still leaves no old copy.

    The earlier folder is set aside, the new one moved in, and the set-aside copy made
    writable and removed (it stayed, hidden, with every table). Run as a user without
    root's permission override (``setpriv`` drops it when the tests run as root).
    """
    import shutil
    import subprocess
    import sys

    script = _READ_ONLY_REWRITE.format(tests=str(Path(__file__).parent), out=str(tmp_path))
    cmd = [sys.executable, "-c", script]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: a read-only folder binds nobody")
        drop = "-dac_override,-dac_read_search,-fowner"
        setpriv = ["setpriv", f"--bounding-set={drop}", f"--inh-caps={drop}"]
        probe = subprocess.run([*setpriv, "true"], capture_output=True, text=True, timeout=30)
        if probe.returncode != 0:  # a sandbox that may not drop capabilities
            pytest.skip(f"running as root and setpriv cannot drop: {probe.stderr.strip()}")
        cmd = [*setpriv, *cmd]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    run = tmp_path / "r"
    sdir = run / "scenario=neutral"
    try:
        assert done.returncode == 0, done.stderr
        assert sorted(p.name for p in run.iterdir() if p.name.startswith(".scenario")) == []
        assert len(list(sdir.glob("*.parquet"))) == len(RESULT_SCHEMAS)
    finally:
        for d in (sdir, *run.glob(".scenario=*")):
            d.chmod(0o755)


def test_a_second_interrupt_during_the_clean_up_still_removes_the_staging_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C part way through a scenario's files, then again while its staging folder goes.

    ``timeout`` signals the process and its group, so a batch may get two; the second
    used to cut the removal short and leave table files under the hidden folder.
    """
    import shutil

    real_write, real_rmtree = pq.write_table, shutil.rmtree
    rm_calls: list[int] = []

    def interrupted_write(table: pa.Table, where: object, **kw: object) -> None:
        if table.schema.metadata[b"table"] == b"demand":
            raise KeyboardInterrupt
        real_write(table, where, **kw)

    def interrupted_rmtree(path: object, *args: object, **kw: object) -> None:
        rm_calls.append(1)
        if len(rm_calls) == 1:  # the second Ctrl-C, once a file has gone
            first = sorted(Path(str(path)).iterdir())[0]
            first.unlink()
            raise KeyboardInterrupt
        real_rmtree(path, *args, **kw)  # type: ignore[arg-type]

    run = write_report(fake_result(), tmp_path, scenario="neutral", run_id="r")
    monkeypatch.setattr(pq, "write_table", interrupted_write)
    monkeypatch.setattr(shutil, "rmtree", interrupted_rmtree)
    with pytest.raises(KeyboardInterrupt):
        write_report(fake_result(), tmp_path, scenario="neutral", run_id="r")
    monkeypatch.setattr(shutil, "rmtree", real_rmtree)
    monkeypatch.setattr(pq, "write_table", real_write)
    assert len(rm_calls) >= 2  # interrupted once, then finished
    assert sorted(p.name for p in run.iterdir() if p.name.startswith(".scenario")) == []
    assert len(list((run / "scenario=neutral").glob("*.parquet"))) == len(RESULT_SCHEMAS)


def test_a_first_scenario_whose_manifest_cannot_be_written_leaves_no_run_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk when the manifest is written: the error names it, no empty run stays.

    The run folder this call reserved used to stay behind holding only its lock file.
    """
    from optimizer.output import manifest

    def full_disk(path: Any, doc: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(manifest, "write_json_atomic", full_disk)
    with pytest.raises(ReportError, match=r"cannot update manifest .*No space left on device"):
        write_report(fake_result(), tmp_path / "a", scenario="neutral")
    assert list((tmp_path / "a").iterdir()) == []


def test_the_summary_of_a_result_with_no_plan_has_no_demand_figure(tmp_path: Path) -> None:
    """Infeasible: no tables, so demand, served, energy and water are null, not 0.

    A summary row of 0 H100e demand read as if the data held no demand.
    """
    from optimizer.output.report import summary_frame

    none = summary_frame(fake_result(status="infeasible", objective_usd=None, tables={}))
    for column in ("demand_h100e", "served_h100e", "served_share", "facility_mwh", "water_m3"):
        assert np.isnan(none.loc[0, column]), column
    planned = summary_frame(fake_result())  # the fake plan's demand table: 255 H100e served
    assert planned.loc[0, "served_h100e"] == 255.0 and planned.loc[0, "demand_h100e"] > 0
    empty = {**fake_result().tables, "demand": fake_result().tables["demand"].iloc[:0]}
    assert (
        summary_frame(fake_result(tables=empty)).loc[0, "demand_h100e"] == 0.0
    )  # a plan, no demand
