"""Batch reuse gives the plan of a rebuild whichever input column a case changes.

A batch with reuse keeps its base model across a case when the case changes only
columns the LP never reads (:data:`optimizer.plan.model.LP_UNREAD_COLUMNS`), and patches it
when they have a patcher (:data:`optimizer.analysis.batch_patch._PATCHERS`); any other change is
a rebuild. Three checks hold that true without a hand list to trust:

* the recorder (:mod:`tests.column_reads`) sees what builds read on the bundled data
  and the test datasets, in both formulations: no declared-unread column is read, and
  every non-key column not declared unread is read by some build;
* for every numeric column of every input table (from :data:`capacity.schema.SPECS`),
  a perturbed copy of the bundled data (at a carbon price, so carbon columns are
  priced) solved through :func:`optimizer.analysis.batch_patch.patch_model` gives the objective
  and every result table of a rebuild; the text columns declared unread, and a row
  dropped from a table the LP never reads, likewise;
* the reported case: halving the grid carbon intensity at USD 210/t.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from capacity.dataset import Dataset, load_dataset
from capacity.scenarios import apply_overrides
from capacity.schema import SPECS
from capacity.validation import DataValidationError
from optimizer.analysis.batch_case import solve_many
from optimizer.analysis.batch_patch import _PATCHABLE, patch_model
from optimizer.plan.highs import (
    _configure_highs,
    _highs_lp,
    _highs_pass,
    _highs_run,
    _read_highs,
    new_highs,
)
from optimizer.plan.highs_session import HighsSession
from optimizer.plan.model import FORMULATIONS, LP_UNREAD_COLUMNS, LP_UNREAD_TABLES, build_model
from optimizer.plan.options import RawSolution, SolveOptions, Status
from optimizer.plan.pipeline import solve_model
from optimizer.plan.plan_result import _scenario_result
from optimizer.plan.raw_solve import run_solver
from tests.column_reads import recording
from tests.conftest import DEFAULT_DATA, ROOT

SRC = "assumption: reuse test"
CARBON_PRICE = 210.0
OPTS = SolveOptions(solver="highs")

#: Every numeric input column, from the schema (not a hand list).
NUMERIC = [(t, c.name) for t, s in SPECS.items() for c in s.columns if c.is_numeric]
#: Declared-unread text columns that are not keys (a key change is a rebuild anyway).
#: Unread text columns whose value validation ties to another column, so free text
#: there is an error, not an edit: a record row's unit must be its metric's.
TIED_TEXT = {("public_record", "unit")}

UNREAD_TEXT = sorted(
    (t, c)
    for t, c in LP_UNREAD_COLUMNS
    if SPECS[t].column(c).dtype in ("str", "id")
    and c not in SPECS[t].key
    and (t, c) not in TIED_TEXT
)


def _priced(ds: Dataset) -> Dataset:
    """``ds`` with a carbon price of USD 210/t in every period."""
    ov = {
        "op": "set",
        "table": "carbon_policy",
        "column": "carbon_price_usd_per_t",
        "value": str(CARBON_PRICE),
        "source": SRC,
    }
    return apply_overrides(ds, [ov])


#: The base case: data, model, solution and optimal basis (the ``base`` fixture).
Base = tuple[Dataset, Any, Any, Any]


def _fresh_solve(model: Any, basis: Any = None) -> tuple[RawSolution, Any]:
    """Solve ``model`` passed whole to a new HiGHS, from ``basis`` when given.

    The reference of a case: the rebuild's every array goes to HiGHS as a cold solve's
    do (nothing is pushed into a retained instance, so a session that missed a change
    cannot agree with it by mistake), and HiGHS's dual simplex starts from the base
    model's optimal basis, a starting point only (the end is HiGHS's own optimality
    test on the rebuild). A run that does not end optimal is repeated cold by
    :func:`run_solver`, whose status is then the reference's. Returns the solution and
    its optimal basis (None when not optimal).
    """
    lp, _ = _highs_lp(model, lp_only=True)
    h = new_highs()
    _configure_highs(h, OPTS, is_mip=False, n=model.n_variables, basis=True)
    _highs_pass(h, lp)
    if basis is not None:
        h.setBasis(basis)
    ms = _highs_run(h)
    n, m = model.n_variables, model.n_constraints
    raw = _read_highs(h, ms, n, m, is_mip=False, handover_s=0.0, solve_s=0.0)
    if raw.status != Status.optimal:
        return run_solver(model, OPTS), None
    return raw, h.getBasis()


@pytest.fixture(scope="module")
def base() -> Base:
    """The bundled data at a carbon price, its (compact) model, its solution and basis.

    A carbon cap far above the plan's emissions (1e9 t a quarter) gives the cap column
    a value to perturb without binding. The model is solved cold.
    """
    cap = {"op": "set", "table": "carbon_policy", "column": "carbon_cap_t", "value": "1e9"}
    ds = apply_overrides(_priced(load_dataset(DEFAULT_DATA)), [{**cap, "source": SRC}])
    model = build_model(ds)
    raw, basis = _fresh_solve(model)
    assert raw.status == Status.optimal
    return ds, model, raw, basis


@pytest.fixture(scope="module")
def session(base: Base) -> HighsSession:
    """A retained HiGHS holding the base model's optimal basis, as a batch's reuse has.

    The reuse path's own solve of a patched model starts from it (the product's warm
    start); the reference each case is compared with is a rebuild passed whole to a
    new HiGHS (:func:`_fresh_solve`).
    """
    s = HighsSession(OPTS)
    raw, _ = s.run(base[1])
    assert raw.status.value == "optimal"
    return s


# ------------------------------------------------------------------ what builds read
def _reads_of(ds: Dataset, formulation: str) -> set[tuple[str, str]]:
    with recording(ds) as (rds, reads):
        build_model(rds, formulation=formulation)
    return reads


@pytest.fixture(scope="module")
def reads() -> set[tuple[str, str]]:
    """Columns read by linear builds of the bundled and test datasets, both formulations."""
    datasets = [_priced(load_dataset(DEFAULT_DATA)), load_dataset(DEFAULT_DATA)]
    for name in ("lp_base", "lp_clusters", "lp_one", "tiny_valid", "report_tiny"):
        datasets.append(load_dataset(ROOT / "tests" / "data" / name))
    out: set[tuple[str, str]] = set()
    for ds in datasets:
        for form in FORMULATIONS:
            out |= _reads_of(ds, form)
    return out


def test_the_recorder_sees_the_reads_the_builder_makes() -> None:
    ds = _priced(load_dataset(DEFAULT_DATA))
    with recording(ds) as (rds, got):
        recorded = build_model(rds)
    # read through a copy set_index'ed by code (ScenarioData.sites) and by the carbon term
    assert {
        ("sites", "pue_air"),
        ("sites", "carbon_t_per_mwh"),
        ("ppas", "price_usd_per_mwh"),
    } <= got
    assert _identical(recorded, build_model(ds))  # and the recorded build is the build


def test_the_recorder_catches_a_read_by_each_usual_path() -> None:
    ds = load_dataset(DEFAULT_DATA)
    paths = {
        "item": lambda f: f["display_name"],
        "list": lambda f: f[["customer", "price_training_usd_per_h100e_period"]],
        "attribute": lambda f: f.price_inference_usd_per_h100e_period,
        "loc": lambda f: f.loc[f.index[:1], "display_name"],
        "derived": lambda f: f.copy().set_index("customer")[["display_name"]],
        "merged": lambda f: f.merge(f[["customer"]], on="customer")["display_name"],
        "rows": lambda f: [r for r in f.itertuples()],
    }
    for name, read in paths.items():
        with recording(ds) as (rds, got):
            read(rds.table("customers"))
        assert got & LP_UNREAD_COLUMNS, name


def test_no_column_declared_unread_is_read_by_a_build(reads: set[tuple[str, str]]) -> None:
    assert sorted(reads & LP_UNREAD_COLUMNS) == []


def test_every_column_not_declared_unread_is_read_by_some_build(
    reads: set[tuple[str, str]],
) -> None:
    declared_read = {
        (t, c.name)
        for t, s in SPECS.items()
        for c in s.columns
        if (t, c.name) not in LP_UNREAD_COLUMNS and c.name not in s.key
    }
    assert sorted(declared_read - reads) == []
    assert all(
        set(SPECS[t].column_names) <= {c for u, c in LP_UNREAD_COLUMNS if u == t}
        for t in LP_UNREAD_TABLES
    )


def test_a_patchable_column_is_read_and_not_declared_unread() -> None:
    assert sorted(_PATCHABLE & LP_UNREAD_COLUMNS) == []


# ---------------------------------------------------------------- reuse vs rebuild
def _candidates(x: np.ndarray, is_int: bool) -> list[np.ndarray]:
    """Perturbed copies of the finite values of ``x``: scaled, else shifted."""
    if is_int:
        return [x + 1, x - 1]
    return [x * 0.99, x * 1.01, x * 0.9, x * 1.1, x + 0.05, x + 1.0]


def _perturbed(ds: Dataset, table: str, column: str) -> tuple[Dataset | None, str]:
    """``ds`` with ``table.column`` perturbed within the schema, or None and why not."""
    df = ds.table(table)
    if not len(df):
        return None, f"{table} has no rows in the bundled data"
    x = pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=float)
    finite = np.isfinite(x)
    if not finite.any():
        return None, f"{table}.{column} has no finite value in the bundled data"
    is_int = SPECS[table].column(column).dtype == "int"
    for cand in _candidates(x, is_int):
        new = np.where(finite, cand, x)
        if np.array_equal(new, x):
            continue
        values = pd.Series(new, index=df.index)
        if is_int:
            values = values.round().astype(df[column].dtype)
        try:
            return ds.replace(**{table: df.assign(**{column: values})}), ""
        except DataValidationError:
            continue
    return None, f"no perturbation of {table}.{column} validates"  # pragma: no cover


def _assert_same_arrays(patched: Any, rebuilt: Any, what: str) -> None:
    """The patched model's rows, columns, costs and matrix are the rebuild's."""
    for frame, cols in (("constraints", ["family", "sense"]), ("variables", ["kind", "lb", "ub"])):
        a, b = getattr(patched, frame), getattr(rebuilt, frame)
        pd.testing.assert_frame_equal(a[cols], b[cols], obj=f"{what}: {frame}")
    np.testing.assert_allclose(patched.constraints["rhs"], rebuilt.constraints["rhs"], rtol=1e-12)
    np.testing.assert_allclose(patched.variables["cost"], rebuilt.variables["cost"], rtol=1e-12)
    assert abs(patched.matrix - rebuilt.matrix).max() <= 1e-9 * abs(rebuilt.matrix).max(), what
    assert patched.objective_constant == pytest.approx(rebuilt.objective_constant, rel=1e-12)


def _assert_same_tables(a: Any, b: Any, what: str) -> None:
    assert (a.status, a.message) == (b.status, b.message), what
    assert a.objective_usd == pytest.approx(b.objective_usd, rel=1e-9), what
    assert set(a.tables) == set(b.tables), what
    for t in a.tables:
        pd.testing.assert_frame_equal(
            a.tables[t], b.tables[t], check_exact=False, rtol=1e-9, atol=1e-6, obj=f"{what}: {t}"
        )
    pd.testing.assert_frame_equal(a.violations, b.violations, obj=f"{what}: violations")


def _identical(a: Any, b: Any) -> bool:
    """True when two models have the same arrays bit for bit (their solves are one)."""
    return bool(
        a.constraints.equals(b.constraints)
        and a.variables.equals(b.variables)
        and a.cost_terms.equals(b.cost_terms)
        and a.const_terms.equals(b.const_terms)
        and (a.matrix != b.matrix).nnz == 0
    )


def _reuse_equals_rebuild(
    base: Base, new: Dataset, what: str, session: HighsSession | None = None
) -> bool:
    """Solve ``new`` by patching the base model and by a rebuild; True when patched.

    The reuse path's own solve must reach the rebuild's status and objective (where
    the optimum is not unique it may be another tied plan), and the rebuild's solution
    read through the patched model must give the rebuild's tables, checker verdict
    and message: the tables of a reused case are computed from the case's data. The
    patched model is solved in ``session`` when given (warm, as a batch's reuse
    solves it), else cold; the rebuild is passed whole to a new HiGHS that starts
    from the base's optimal basis (:func:`_fresh_solve`). When the rebuild has the
    base model's arrays bit for bit (a column the LP does not read), the base's
    solution is the solve of both.
    """
    ds, model, base_raw, base_basis = base
    patched = patch_model(model, ds, new)
    if patched is None:  # the reuse path rebuilds: the same build_model call
        return False
    assert patched.datasets[0] is new, what
    rebuilt = build_model(new)
    _assert_same_arrays(patched, rebuilt, what)
    if _identical(rebuilt, model):
        raw = base_raw
        ref = _scenario_result(rebuilt, raw, 0, OPTS, None, {})
    else:
        raw, _ = _fresh_solve(rebuilt, base_basis)
        ref = _scenario_result(rebuilt, raw, 0, OPTS, None, {})
        own = solve_model(patched, OPTS, session=session)[0]
        assert own.status == ref.status, what
        assert own.objective_usd == pytest.approx(ref.objective_usd, rel=1e-7), what
    _assert_same_tables(_scenario_result(patched, raw, 0, OPTS, None, {}), ref, what)
    return True


@pytest.mark.slow
@pytest.mark.parametrize(("table", "column"), NUMERIC, ids=[f"{t}.{c}" for t, c in NUMERIC])
def test_reuse_equals_rebuild_for_a_perturbed_numeric_column(
    base: Base, session: HighsSession, table: str, column: str
) -> None:
    new, why = _perturbed(base[0], table, column)
    if new is None:
        pytest.skip(why)
    patched = _reuse_equals_rebuild(base, new, f"{table}.{column}", session)
    if (table, column) in LP_UNREAD_COLUMNS:
        assert patched  # the base model is kept, with the new dataset


@pytest.mark.slow
@pytest.mark.parametrize(("table", "column"), UNREAD_TEXT, ids=[f"{t}.{c}" for t, c in UNREAD_TEXT])
def test_reuse_equals_rebuild_for_an_edited_unread_text_column(
    base: Base, table: str, column: str
) -> None:
    ds = base[0]
    df = ds.table(table)
    if not len(df):
        pytest.skip(f"{table} has no rows in the bundled data")
    edited = (
        df[column].astype(object).where(df[column].isna(), df[column].astype(str) + " (edited)")
    )
    new = ds.replace(**{table: df.assign(**{column: edited})})
    assert _reuse_equals_rebuild(base, new, f"{table}.{column}")


@pytest.mark.slow
@pytest.mark.parametrize("table", LP_UNREAD_TABLES)
def test_reuse_equals_rebuild_when_an_unread_table_loses_a_row(base: Base, table: str) -> None:
    ds = base[0]
    new = ds.replace(**{table: ds.table(table).iloc[:-1]})
    assert _reuse_equals_rebuild(base, new, f"{table} without its last row")


# ------------------------------------------------------------------- the reported case
def test_halved_grid_carbon_at_a_carbon_price_is_not_a_stale_plan() -> None:
    ds = _priced(load_dataset(DEFAULT_DATA))
    half = [
        {
            "op": "scale",
            "table": "sites",
            "column": "carbon_t_per_mwh",
            "factor": 0.5,
            "source": SRC,
        }
    ]
    first, reused = solve_many(ds, [[], half], OPTS, reuse=True)
    rebuilt = solve_many(ds, [half], OPTS, reuse=False)[0]
    assert reused.status.value == rebuilt.status.value == "optimal"
    assert reused.objective_usd == pytest.approx(rebuilt.objective_usd, rel=1e-9)
    assert reused.objective_usd < first.objective_usd - 1e9  # halving carbon saves billions
    # the carbon cost of each period is the price times the tonnes the report shows
    for res in (first, reused):
        costs = res.tables["costs"]
        carbon_usd = (
            costs[costs["term"] == "carbon"].groupby("period")["undiscounted_cost_usd"].sum()
        )
        tonnes = res.tables["energy"].groupby("period")["carbon_t"].sum()
        np.testing.assert_allclose(
            carbon_usd.to_numpy(),
            CARBON_PRICE * tonnes.reindex(carbon_usd.index).to_numpy(),
            rtol=1e-6,
        )
    # by hand: 2025Q1 grid carbon of the bundled data about halves, and its cost with it
    q1 = [r.tables["energy"].groupby("period")["carbon_t"].sum()["2025Q1"] for r in (first, reused)]
    assert q1[1] == pytest.approx(q1[0] / 2, rel=0.05)


#: (dataset, formulation): the small test datasets in both formulations, and the
#: bundled data in the one the property test above does not build.
BUILDS = [
    (n, f)
    for n in ("lp_base", "lp_clusters", "lp_one", "tiny_valid", "report_tiny")
    for f in FORMULATIONS
] + [("data", "reference")]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "formulation"), BUILDS, ids=[f"{n}-{f}" for n, f in BUILDS])
def test_a_patched_model_has_the_arrays_of_a_rebuild_for_every_patchable_column(
    name: str, formulation: str
) -> None:
    ds = load_dataset(ROOT / "tests" / "data" / name) if name != "data" else None
    ds = ds or _priced(load_dataset(DEFAULT_DATA))  # the small ones have no power tables
    model = build_model(ds, formulation=formulation)
    patched_any = False
    for table, column in sorted(_PATCHABLE):
        new, _ = _perturbed(ds, table, column)
        if new is None:
            continue
        patched = patch_model(model, ds, new)
        if patched is not None:
            patched_any = True
            rebuilt = build_model(new, formulation=formulation)
            _assert_same_arrays(patched, rebuilt, f"{name} {formulation} {table}.{column}")
    assert patched_any
