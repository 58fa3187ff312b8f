"""``capacity hedge --tree TREE``: the multi-stage plan over a scenario tree."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from optimizer.cli.scenarios import load_scenarios

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["hedge_tree"]


def hedge_tree(
    console: Console,
    data: Path,
    base: str,
    tree_file: Path,
    first_stage: str,
    out: Path | None,
    replan_leaves: bool = False,
) -> int:
    """Solve the tree plan, print its cost, value over the two-stage hedge and node plan.

    With ``replan_leaves`` also replan quarterly along each leaf and print the tree, the
    two-stage hedge and rolling replanning side by side
    (:func:`optimizer.analysis.tree_replan.compare_tree_replan`), written as
    ``comparison.parquet`` and ``leaves_replan.parquet`` under ``--out``.

    Returns the exit code: 0 solved, 1 no plan or bad data; a bad tree file exits 2
    with the file, line and value.
    """
    from rich.markup import escape

    from capacity.validation import DataValidationError
    from optimizer.analysis.tree import tree_plan
    from optimizer.analysis.tree_spec import TreeFileError, early_overrides, read_tree

    ((_, ds),) = load_scenarios(console, data, [base])
    try:
        tree = read_tree(tree_file, ds.periods)
    except TreeFileError as e:
        console.print(f"[red]error:[/red] {escape(str(e))}")
        raise typer.Exit(2) from None
    for line in early_overrides(tree):
        console.print(f"[yellow]warning:[/yellow] {escape(line)}")
    try:
        with console.status("Solving the tree's extensive form ..."):
            plan = tree_plan(ds, tree, first_stage=first_stage)
    except DataValidationError as e:
        msg = "; ".join(f.message for f in e.findings[:3])
        console.print(f"[red]error:[/red] {tree_file}: a branch's overrides: {escape(msg)}")
        return 1
    except typer.Exit:  # a RuntimeError too: the command's own exit, said already
        raise
    except RuntimeError as e:
        console.print(f"[red]error:[/red] {escape(str(e))}")
        return 1
    _print_tree(console, plan)
    comparison = _replan_leaves(console, ds, tree, plan, first_stage) if replan_leaves else None
    if out is not None:
        return _write_tree(console, plan, out, ds.hash, comparison, tuple(tree.nodes))
    return 0


def _replan_leaves(console: Console, ds: Any, tree: Any, plan: Any, first_stage: str) -> Any:
    """Replan along each leaf and print the side-by-side table; return the comparison."""
    from rich.table import Table

    from optimizer.analysis.tree_replan import compare_tree_replan

    with console.status("Replanning quarterly along each leaf ..."):
        c = compare_tree_replan(ds, tree, plan=plan, first_stage=first_stage)
    t = Table(title="The tree's leaves, planned three ways (expected discounted cost)")
    for col in ("plan", "expected USD", "over perfect foresight USD", "over the tree USD"):
        t.add_column(col, justify="right")
    for r in c.table.itertuples():
        t.add_row(
            r.plan,
            f"{r.expected_cost_usd:,.0f}",
            f"{r.over_perfect_foresight_usd:,.0f}",
            f"{r.over_tree_usd:,.0f}",
        )
    console.print(t)
    given = int(c.leaves["locks_given_way"].sum())
    console.print(
        f"replanned {len(c.leaves)} leaves every {c.every} quarter(s) in "
        f"{c.timings_s['replan']:.0f} s; locks given way: {given}"
    )
    return c


def _print_tree(console: Console, plan: Any) -> None:
    from rich.table import Table

    console.print(f"{'tree plan (expected cost)':>32}: {plan.expected_cost_usd:,.0f} USD")
    if plan.two_stage_cost_usd is not None:
        console.print(f"{'two-stage hedge, same leaves':>32}: {plan.two_stage_cost_usd:,.0f} USD")
        console.print(f"{'value of the tree':>32}: {plan.value_of_tree_usd:,.0f} USD")
    t = Table(title="MW built per node (every kind: node_plan in --out)")
    for c in ("stage", "node", "kind", "site", "MW"):
        t.add_column(c, justify="right")
    np_ = plan.node_plan
    g = np_.groupby(["stage", "node", "kind", "site"], as_index=False, sort=False)["value"].sum()
    g = g[(g["kind"] == "build") & (g["value"].abs() >= 0.05)]  # MW shown to one decimal
    for r in g.itertuples():
        t.add_row(str(r.stage), r.node, r.kind, r.site, f"{r.value:,.1f}")
    console.print(t)


def _write_tree(
    console: Console,
    plan: Any,
    out: Path,
    dataset_hash: str,
    comparison: Any = None,
    nodes: tuple[str, ...] = (),
) -> int:
    """Write ``leaves`` and ``node_plan`` Parquet files (``node=`` partitions) in a run folder.

    With a comparison also ``comparison.parquet`` and ``leaves_replan.parquet``. Each file's
    metadata names its table, the run, the package version and the data's hash;
    ``tree.json`` has them too, with every node of the tree (a node that decided nothing
    has no ``node_plan`` partition, which could not be told from a lost file).
    """
    import pyarrow as pa

    from optimizer.output.atomic import ReportError, ensure_dir, write_json_atomic
    from optimizer.output.manifest import package_version
    from optimizer.output.parquet_tables import write_arrow_atomic
    from optimizer.output.run_folder import claimed_run_dir, default_run_id

    def arrow(df: Any, table: str, run_id: str) -> pa.Table:
        t = pa.Table.from_pandas(df, preserve_index=False)
        meta = {"table": table, "run_id": run_id, "package_version": package_version()}
        return t.replace_schema_metadata({**meta, "dataset_hash": dataset_hash})

    try:
        with claimed_run_dir(out, "tree-" + default_run_id(dataset_hash)) as run_dir:
            for node, part in plan.node_plan.groupby("node", sort=False):
                d = run_dir / "node_plan" / f"node={node}"
                ensure_dir(d)
                t = arrow(part.drop(columns="node"), "node_plan", run_dir.name)
                write_arrow_atomic(t, d / "plan.parquet")
            write_arrow_atomic(
                arrow(plan.leaves, "leaves", run_dir.name), run_dir / "leaves.parquet"
            )
            if comparison is not None:
                tables = {"comparison": comparison.table, "leaves_replan": comparison.leaves}
                for name, df in tables.items():
                    write_arrow_atomic(arrow(df, name, run_dir.name), run_dir / f"{name}.parquet")
            fields = ("status", "expected_cost_usd", "two_stage_cost_usd", "value_of_tree_usd")
            doc = {f: getattr(plan, f) for f in fields}
            doc.update(run_id=run_dir.name, package_version=package_version())
            doc.update(dataset_hash=dataset_hash, nodes=list(nodes))
            doc["nodes_with_decisions"] = sorted(set(plan.node_plan["node"]))
            write_json_atomic(run_dir / "tree.json", doc)
    except (OSError, ReportError) as e:
        console.print(f"[red]error: --out {out}:[/red] the tables were not written: {e}")
        return 1
    console.print(f"Run folder: {run_dir}/ (node_plan/node=*/plan.parquet, leaves.parquet)")
    return 0
