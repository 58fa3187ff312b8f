"""The run folder of a rolling replan: one partition per path, readable by DuckDB.

Layout of ``<out>/replan-<run_id>/`` (claimed exclusively, every file written to a
temporary name and renamed, so a crash leaves no half file)::

    manifest.json                       run and per-path entries (the report writer's)
    scenario=path_000/<table>.parquet   the realised plan of path 0, every result table
    replan/path=0/regret.parquet        the path's row of the regret table
    replan/path=0/decisions.parquet     decisions as taken (decided_in, kind, ..., value)
    replan/path=0/forecasts.parquet     forecasts per epoch (epoch, quarter, parameter ...)
    replan/path=0/shortfall.parquet     per quarter, delivered_short_<kind>_<unit> of the
                                        locks the truth could not honour (zero when all held)
    replan/path=0/give_way.parquet      those locks, locked vs delivered (only when any)
    replan/spread.parquet               p10/p50/p90/mean of the per-path figures
    replan/settings.json                paths, seed, every, revision, volatility, locks
    replan_regret.html                  the chart (:func:`replan_figure`)

``capacity_planner.read_run(folder)`` reads the realised plans (one per path);
:func:`read_replan` reads the replanning tables back; in DuckDB::

    SELECT * FROM read_parquet('<run>/replan/path=*/regret.parquet', hive_partitioning=true)
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from optimizer.analysis.replan_setup import KIND_UNITS
from optimizer.components.registry import active
from optimizer.output.atomic import ReportError, ensure_dir, write_json_atomic, write_text_atomic
from optimizer.output.manifest import package_version, update_manifest
from optimizer.output.parquet_tables import check_table_file, write_arrow_atomic
from optimizer.output.report import write_report
from optimizer.output.run_folder import claimed_run_dir, default_run_id, unfinished_note

__all__ = [
    "give_way_table",
    "read_replan",
    "replan_figure",
    "shortfall_by_quarter",
    "write_replan",
]

#: Tables written per path under ``replan/path=<k>/``.
PATH_TABLES = ("regret", "decisions", "forecasts", "shortfall", "give_way")


def _arrow(df: pd.DataFrame, meta: Mapping[str, str]) -> pa.Table:
    t = pa.Table.from_pandas(df.reset_index(drop=True), preserve_index=False)
    return t.replace_schema_metadata({k: str(v) for k, v in meta.items()})


def write_replan(result: Any, out: str | os.PathLike[str], dataset_hash: str) -> Path:
    """Write a :class:`~optimizer.analysis.replan_run.ReplanResult` into a new run folder.

    Parameters
    ----------
    result : ReplanResult
    out : path-like
        Report root; the run folder ``replan-<run_id>`` is claimed under it.
    dataset_hash : str
        Hash of the dataset solved (names the run and goes into the manifest).

    Returns
    -------
    pathlib.Path
        The run folder.

    Raises
    ------
    optimizer.output.atomic.ReportError
        When the folder or a file cannot be written (the folder is removed whole: an
        error, or Ctrl-C, leaves no half run).
    """
    paths = [f"path_{o.path:03d}" for o in result.outcomes]
    with claimed_run_dir(out, "replan-" + default_run_id(dataset_hash), paths) as run_dir:
        _fill_run(result, out, run_dir, dataset_hash)  # an error removes the folder whole
    return run_dir


def _fill_run(result: Any, out: str | os.PathLike[str], run_dir: Path, dataset_hash: str) -> None:
    """Write every path's plan and tables, the spread, the settings and the chart."""
    rdir = run_dir / "replan"
    ensure_dir(rdir)
    run = {
        "dataset_hash": dataset_hash,
        "run_id": run_dir.name,
        "package_version": package_version(),
    }
    for o in result.outcomes:
        write_report(o.realised, out, scenario=f"path_{o.path:03d}", run_id=run_dir.name)
        pdir = rdir / f"path={o.path}"
        ensure_dir(pdir)
        meta = {"path": str(o.path), **run}
        frames = {
            "regret": pd.DataFrame([o.summary]).drop(columns="path"),
            "decisions": o.decisions,
            "forecasts": o.forecasts,
            "shortfall": o.shortfall,
        }
        if len(o.give_way):
            frames["give_way"] = o.give_way
        for name, df in frames.items():
            write_arrow_atomic(_arrow(df, {**meta, "table": name}), pdir / f"{name}.parquet")
    write_arrow_atomic(_arrow(result.spread, {"table": "spread", **run}), rdir / "spread.parquet")
    write_json_atomic(rdir / "settings.json", dict(result.settings))
    # the run is of the data given: each path's entry is of its truth data, and the first
    # path's write had set the run's dataset_hash to that path's truth data
    fields = {"dataset_hash": dataset_hash, "kind": "replan", "overwrite": ["dataset_hash"]}
    update_manifest(run_dir, run_fields=fields)
    html = replan_figure(result.paths).to_html(include_plotlyjs=True, full_html=True)
    write_text_atomic(run_dir / "replan_regret.html", html)


def read_replan(run_dir: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Read a replan run folder's tables: those of :data:`PATH_TABLES` and ``spread``.

    Each per-path table gets its ``path`` column from the folder name (hive partition).

    Raises
    ------
    ReportError
        When a table file is no Parquet, or holds another table or another path's table
        (a file copied over another read as rows of nulls, or as the wrong path's).
    """
    import pyarrow.dataset as pads

    rdir = Path(run_dir) / "replan"
    held = [f"path_{int(p.name.split('=', 1)[1]):03d}" for p in rdir.glob("path=*")]
    note = unfinished_note(run_dir, held)
    if note:  # a replan killed part way: some paths only
        warnings.warn(f"{note}. Run the replan again.", UserWarning, stacklevel=2)
    part = pads.partitioning(pa.schema([("path", pa.int64())]), flavor="hive")
    out: dict[str, pd.DataFrame] = {}
    for name in PATH_TABLES:
        files = sorted(str(p) for p in rdir.glob(f"path=*/{name}.parquet"))
        if not files:
            out[name] = pd.DataFrame()
            continue
        for f in files:  # another table's or path's file read as rows of nulls, or another's
            _check_path_file(Path(f))
        frame = (
            pads.dataset(files, format="parquet", partitioning=part, partition_base_dir=str(rdir))
            .to_table()
            .to_pandas()
        )
        out[name] = frame.sort_values("path", kind="stable").reset_index(drop=True)
    spread = rdir / "spread.parquet"
    if spread.exists():
        check_table_file(spread)
    out["spread"] = pd.read_parquet(spread) if spread.exists() else pd.DataFrame()
    return out


def _check_path_file(f: Path) -> None:
    """ReportError unless ``f`` is a readable table of its name and of its ``path=`` folder."""
    meta = check_table_file(f).metadata or {}
    written = meta.get(b"path", b"").decode()
    folder = f.parent.name.split("=", 1)[1]
    if written and written != folder:
        raise ReportError(
            f"{f}: holds path {written}'s {f.stem} table, not path {folder}'s (a file copied "
            "from another folder); run the replan again"
        )


def replan_figure(paths: pd.DataFrame) -> Any:
    """Regret per path (bars, in its largest value's USD scale) and served share.

    The served share is realised against perfect foresight.

    Parameters
    ----------
    paths : DataFrame
        The regret table: ``path``, ``regret_usd``, ``served_share``,
        ``perfect_foresight_served_share``.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from optimizer.output.formatting import money_axis

    div, word, _ = money_axis(list(paths["regret_usd"]))
    unit = f"USD {word}" if word else "USD"
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=(f"Regret per path ({unit})", "Served share")
    )
    x = [f"path {int(p)}" for p in paths["path"]]
    fig.add_trace(  # the bars' colour and title say what they are: no legend entry
        go.Bar(x=x, y=paths["regret_usd"] / div, name="regret", marker_color="#c0392b"),
        row=1,
        col=1,
    )
    fig.data[0].showlegend = False
    for col, name, color in (
        ("served_share", "replanned", "#2e86c1"),
        ("perfect_foresight_served_share", "perfect foresight", "#7f8c8d"),
    ):
        fig.add_trace(
            go.Scatter(x=x, y=paths[col], mode="markers", name=name, marker_color=color),
            row=1,
            col=2,
        )
    fig.update_yaxes(title_text=f"regret [{unit}]", row=1, col=1)
    # a percent, as the table beside it (it read 0.96-0.99); one decimal when the shares
    # span less than 5 points (ticks read 89%, 89%, 89%, 90% over 88.6-89.9%)
    shares = pd.concat([paths["served_share"], paths["perfect_foresight_served_share"]])
    narrow = float(shares.max() - shares.min()) < 0.05 if len(shares) else False
    fig.update_yaxes(
        title_text="served share [%]", tickformat=".1%" if narrow else ".0%", row=1, col=2
    )
    fig.update_layout(height=380, margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return fig


#: A shortfall at or below this share of its lock, or at or below
#: :data:`SHORT_REPORTED_ABS`, is the solver's tolerance, not a lock giving way: it is
#: not reported.
SHORT_REPORTED = 1e-6

#: Smallest shortfall reported, chips or MW: the deliverable LP's feasibility tolerance
#: (1e-7 on columns scaled to thousands of chips) left shortfalls of 3e-5 to 1e-4 chips
#: that the app listed as locks the truth could not honour.
SHORT_REPORTED_ABS = 0.01


def give_way_table(held: pd.DataFrame | None, codes: Any, periods: Sequence[str]) -> pd.DataFrame:
    """Locks that gave way, with domain names (one row each).

    A shortfall of at most :data:`SHORT_REPORTED` of its lock, or of at most
    :data:`SHORT_REPORTED_ABS` (a hundredth of a chip or MW), is solver tolerance and
    left out.

    Returns
    -------
    DataFrame
        ``decided_in, kind, site, chip, option, period, unit, locked_value,
        delivered_value, delivered_short`` (chips or MW, as ``unit`` says).
    """
    cols = [
        "decided_in",
        "kind",
        "site",
        "chip",
        "option",
        "period",
        "unit",
        "locked_value",
        "delivered_value",
        "delivered_short",
    ]
    if held is None or held.empty:
        return pd.DataFrame(columns=cols)
    short = held["delivered_short"].to_numpy(dtype=float)
    lock = np.abs(held["locked_value"].to_numpy(dtype=float))
    d = held[short > np.maximum(SHORT_REPORTED * lock, SHORT_REPORTED_ABS)].copy()

    def names(dim: str) -> list[str]:
        ids = codes.get(dim, ())
        return [ids[int(i)] if int(i) >= 0 else "" for i in d[dim]]

    d["site"], d["chip"], d["option"] = names("s"), names("c"), names("o")
    d["period"] = [periods[int(t)] for t in d["t"]]
    d["unit"] = d["kind"].astype(str).map(active().kind_units)  # MW or chips, as decisions
    # what is delivered within the solver's band of nothing is nothing (it read 0.0000739)
    delivered = d["value"].to_numpy(dtype=float)
    d["delivered_value"] = np.where(np.abs(delivered) <= SHORT_REPORTED_ABS, 0.0, delivered)
    return d[cols].reset_index(drop=True)


def shortfall_by_quarter(give_way: pd.DataFrame, periods: Sequence[str]) -> pd.DataFrame:
    """Shortfall per quarter: ``period`` and ``delivered_short_<kind>_<unit>``.

    Every quarter of the horizon and every lockable kind has its row and column (zero
    where nothing gave way).
    """
    out = pd.DataFrame({"period": list(periods)})
    for kind, unit in KIND_UNITS.items():
        g = give_way[give_way["kind"].astype(str) == kind]
        per = g.groupby("period")["delivered_short"].sum()
        out[f"delivered_short_{kind}_{unit}"] = out["period"].map(per).fillna(0.0).astype(float)
    return out
