"""What ``capacity hedge --out`` writes, and the frontier's table: folders, manifest, CSVs.

The hedge's folder (``hedge-<run_id>/``: the L-shaped tables, ``manifest.json``, each
sampled scenario's ``inputs.yaml``), the frontier's and the chance row's CSV files, and
the frontier as a rich table in the USD scale of its amounts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich and pandas stay unloaded for --help
    from rich.console import Console

__all__ = [
    "drawn_settings",
    "frontier_shown",
    "write_chance",
    "write_frontier",
    "write_hedge_folder",
]


def drawn_settings(base: str, base_hash: str, samples: int, seed: int, spec: Any) -> dict[str, Any]:
    """Return the settings of the draws that a hedge folder's manifest records.

    ``risk`` is ``{"alpha": ..., "weight": ...}`` (None without --risk cvar): it was the
    text ``"RiskSpec(alpha=0.9, weight=1.0)"``, which a reader had to parse.
    """
    risk = None if spec is None else {"alpha": float(spec.alpha), "weight": float(spec.weight)}
    return {
        "base": base,
        "base_dataset_hash": base_hash,
        "samples": samples,
        "seed": seed,
        "risk": risk,
    }


def write_hedge_folder(
    console: Console, p: Any, out: Path, inputs: list[Any], settings: dict[str, Any]
) -> int:
    """Write the hedge's three CSV tables, its manifest and its scenarios' inputs under ``out``.

    ``manifest.json`` (:func:`_hedge_manifest`) says what was run and with which code and
    data; the folder held CSV files only. Its run ID names the data drawn on (it named
    the first draw's).

    Each sampled scenario's overrides are recorded as ``capacity solve`` and
    ``capacity batch`` record theirs, in ``scenario=<name>/inputs.yaml``
    (:func:`optimizer.output.inputs_record.write_inputs`), so each scenario can be
    solved again alone.

    The folder ``<out>/hedge-<run_id>`` is claimed exclusively
    (:func:`optimizer.output.report.claim_run_dir`: a new ID when another run holds it) and
    each table is written to a temporary name and renamed, so two hedges into one
    ``--out`` keep both results and a crash leaves no half file. Returns 1 (with a
    message) when the folder or a table cannot be written, else 0.
    """
    from optimizer.output.atomic import ReportError, write_csv_atomic, write_json_atomic
    from optimizer.output.inputs_record import write_inputs
    from optimizer.output.run_folder import claimed_run_dir, default_run_id

    run_id = "hedge-" + default_run_id(settings["base_dataset_hash"])
    try:
        with claimed_run_dir(out, run_id) as run_dir:
            for name in ("iterations", "per_scenario", "first_stage"):
                write_csv_atomic(run_dir / f"{name}.csv", getattr(p, name))
            write_json_atomic(
                run_dir / "manifest.json", _hedge_manifest(p, run_dir, inputs, settings)
            )
            for rec in inputs:
                folder = run_dir / f"scenario={rec.scenario}"
                folder.mkdir(exist_ok=True)
                write_inputs(rec, folder, run_dir)
    except (OSError, ReportError) as e:
        console.print(f"[red]error: --out {out}:[/red] the tables were not written: {e}")
        return 1
    console.print(
        f"Tables: {run_dir}/ (iterations.csv, per_scenario.csv, first_stage.csv, manifest.json)"
    )
    console.print(f"Inputs of each scenario: {run_dir}/scenario=<name>/inputs.yaml")
    return 0


def _hedge_manifest(
    p: Any, run_dir: Path, inputs: list[Any], settings: dict[str, Any]
) -> dict[str, Any]:
    """Return the hedge folder's ``manifest.json``: code, data, settings, result, scenarios."""
    from optimizer.output.manifest import package_version
    from optimizer.output.run_folder import utc_stamp

    numbers = "expected_cost_usd lower_bound_usd gap_rel wait_and_see_usd eev_usd vss_usd evpi_usd"
    # EEV and VSS are inf when a scenario cannot run the EV plan: JSON has no inf (null)
    result: dict[str, Any] = {k: _finite(getattr(p, k)) for k in numbers.split()}
    result.update(converged=bool(p.converged), ev_problem=str(p.ev_problem))
    weight = dict(zip(p.scenarios, p.weights, strict=True))
    scenarios = {
        rec.scenario: {
            "weight": _finite(weight.get(rec.scenario)),
            "inputs": f"scenario={rec.scenario}/inputs.yaml",
            "dataset_hash": rec.dataset_hash,
        }
        for rec in inputs
    }
    return {
        "kind": "hedge",
        "run_id": run_dir.name,
        "created_utc": utc_stamp(),
        "package_version": package_version(),
        "dataset_name": inputs[0].dataset_name if inputs else "",
        "method": "lshaped",
        "settings": settings,
        # master iterations: row 0 of the table is the EV plan's evaluation (the CLI's count)
        "result": {**result, "iterations": len(p.iterations) - 1},
        "scenarios": scenarios,
    }


def frontier_shown(table: Any, alpha: float) -> Any:
    """Return the frontier as a rich table, in the USD scale of its largest amount.

    Three decimals of that scale (the steps of a frontier are small against its costs);
    a small dataset's frontier read 0.010 in a fixed USD B, its VaR and CVaR alike.
    """
    import math

    from rich.table import Table

    from optimizer.output.formatting import money_axis

    money = ("expected_cost_usd", "var_usd", "cvar_usd", "risk_objective_usd")
    div, _, letter = money_axis([v for c in money for v in table[c] if math.isfinite(float(v))])
    unit = f"USD {letter}".rstrip()
    shown = Table(title=f"Frontier: expected cost against CVaR {alpha:g} ({unit})")
    for c in ("L", "expected", "VaR", "CVaR", "E + L CVaR", "status"):
        shown.add_column(c, justify="right")
    for r in table.itertuples():
        cells = (f"{float(getattr(r, c)) / div:,.3f}" for c in money)
        shown.add_row(f"{r.risk_weight:g}", *cells, str(r.status))
    return shown


def write_frontier(console: Console, table: Any, out: Path, settings: dict[str, Any]) -> int:
    """Write ``frontier.csv``, the chart ``frontier.html`` and a manifest into a run folder.

    ``settings`` are the draws' (:func:`drawn_settings`) plus the frontier's own (alpha,
    weights); the run ID names the base data (it named the first draw's), and the
    manifest records seed, samples and base (the folder held the two files alone).
    """
    from optimizer.analysis.hedge_risk import frontier_figure
    from optimizer.output.atomic import write_csv_atomic

    def fill(run_dir: Path) -> None:
        write_csv_atomic(run_dir / "frontier.csv", table)
        frontier_figure(table).write_html(run_dir / "frontier.html", include_plotlyjs=True)

    return _write_run(console, out, "hedge-frontier", settings, fill, "frontier.csv, frontier.html")


def write_chance(console: Console, c: Any, out: Path, settings: dict[str, Any]) -> int:
    """Write ``chance.csv`` (per scenario, in and out of sample) and a manifest (as above)."""
    from optimizer.output.atomic import write_csv_atomic

    def fill(run_dir: Path) -> None:
        write_csv_atomic(run_dir / "chance.csv", c.per_scenario)

    return _write_run(console, out, "hedge-chance", settings, fill, "chance.csv")


def _write_run(
    console: Console,
    out: Path,
    kind: str,
    settings: dict[str, Any],
    fill: Any,
    files: str,
) -> int:
    """Claim ``<out>/<kind>-<run_id>``, ``fill`` it and add its ``manifest.json``; 1 on error."""
    from optimizer.output.atomic import ReportError, write_json_atomic
    from optimizer.output.manifest import package_version
    from optimizer.output.run_folder import claimed_run_dir, default_run_id, utc_stamp

    run_id = f"{kind}-" + default_run_id(settings["base_dataset_hash"])
    try:
        with claimed_run_dir(out, run_id) as run_dir:
            fill(run_dir)
            doc = {
                "kind": kind,
                "run_id": run_dir.name,
                "created_utc": utc_stamp(),
                "package_version": package_version(),
                "settings": settings,
            }
            write_json_atomic(run_dir / "manifest.json", doc)
    except (OSError, ReportError) as e:
        console.print(f"[red]error: --out {out}:[/red] the tables were not written: {e}")
        return 1
    console.print(f"Tables: {run_dir}/ ({files}, manifest.json)")
    return 0


def _finite(x: Any) -> float | None:
    """Return ``x`` as a float, None when it is missing or not finite (JSON has no inf)."""
    import math

    f = None if x is None else float(x)
    return f if f is not None and math.isfinite(f) else None
