"""The default-plan page's size of the exact-cluster MIP matches the model built from data/."""

from __future__ import annotations

import re

from capacity.dataset import load_dataset
from capacity.scenarios import apply_scenario
from optimizer.plan.model import build_model
from tests.conftest import DEFAULT_PLAN_PAGE, ROOT


def test_readme_counts_the_binaries_columns_and_rows_of_capacity_solve_clusters() -> None:
    readme = DEFAULT_PLAN_PAGE.read_text(encoding="utf-8")
    text = readme[readme.index("**Exact clusters (`--clusters`)") :]
    sizes = re.findall(r"(\d[\d,]*)\s+(?:binaries|columns|rows|non-zeros)", text[:700])
    nums = [int(n.replace(",", "")) for n in sizes]
    binaries, mip_cols, mip_rows, mip_nnz, lp_cols, lp_rows, compact_cols, compact_rows = nums[:8]
    ds = apply_scenario(load_dataset(ROOT / "data"), "neutral")  # `capacity solve`'s default
    mip = build_model(ds, clusters=True)
    lp = build_model(ds, formulation="reference")  # the formulation cluster mode uses
    compact = build_model(ds)  # the default LP
    cluster = mip.variables[mip.variables["kind"] == "cluster"]
    assert binaries == int(mip.variables["integer"].sum()) == len(cluster) == 405
    per_customer = cluster.groupby("k").size().to_dict()
    openai, anthropic = (mip.codes["k"].index(n) for n in ("openai", "anthropic"))
    assert per_customer == {openai: 9 * 21, anthropic: 9 * 24}
    built = (
        mip.n_variables,
        mip.n_constraints,
        mip.matrix.nnz,
        lp.n_variables,
        lp.n_constraints,
        compact.n_variables,
        compact.n_constraints,
    )
    stated = (mip_cols, mip_rows, mip_nnz, lp_cols, lp_rows, compact_cols, compact_rows)
    assert stated == built, (
        "docs/guide/default-plan.md's `--clusters` model size is stale; the models built "
        "from data/ now have "
        "{:,} columns, {:,} rows, {:,} non-zeros (reference LP: {:,} columns, {:,} rows; "
        "compact LP: {:,} columns, {:,} rows)".format(*built)
    )
