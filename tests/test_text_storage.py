"""Text held as Python strings (the planner's processes) or in Arrow (a notebook's
default): the same plan, written to the same Parquet tables.

``capacity.text_storage.use_python_text`` runs as the command line, the app, the local
Dask workers and this test suite start. A notebook keeps pandas' default, so a
subprocess that never calls it solves the default data and writes its report, and every
table must equal this process's, value for value and type for type.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from capacity.text_storage import TEXT_STORAGE
from optimizer.output.report import write_report
from tests.conftest import DEFAULT_DATA, ROOT

NOTEBOOK = textwrap.dedent(
    """
    import sys
    import pandas as pd
    import capacity_planner as cp
    from optimizer.output.report import write_report
    from optimizer.components.table_columns import TEXT_DTYPE

    assert pd.get_option("mode.string_storage") == "auto"
    plan = cp.solve(sys.argv[1], "neutral")
    assert TEXT_DTYPE.storage == "pyarrow", TEXT_DTYPE
    write_report(plan.result, sys.argv[2], scenario="neutral", run_id="arrow")
    print(repr(plan.objective_usd))
    """
)


def test_a_notebooks_arrow_text_writes_the_same_plan(default_plan, tmp_path: Path) -> None:
    from optimizer.components.table_columns import TEXT_DTYPE

    assert pd.get_option("mode.string_storage") == TEXT_STORAGE == "python"
    assert TEXT_DTYPE.storage == "python"
    _, ours = default_plan("neutral")
    run = write_report(ours, tmp_path, scenario="neutral", run_id="python")
    out = subprocess.run(
        [sys.executable, "-c", NOTEBOOK, str(DEFAULT_DATA), str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.strip()) == ours.objective_usd
    mine = sorted(p.name for p in (run / "scenario=neutral").glob("*.parquet"))
    theirs = tmp_path / "arrow" / "scenario=neutral"
    assert mine == sorted(p.name for p in theirs.glob("*.parquet"))
    assert len(mine) > 20
    text_columns = 0
    for name in mine:
        a = pq.read_table(run / "scenario=neutral" / name)
        b = pq.read_table(theirs / name)
        if name == "summary.parquet":  # the stage clocks differ from run to run
            clocks = ["total_time_s", "timings_json"]
            assert set(clocks) <= set(a.column_names)
            a, b = a.drop_columns(clocks), b.drop_columns(clocks)
        assert a.schema.equals(b.schema, check_metadata=False), name
        assert a.equals(b), name
        text_columns += sum(str(f.type) in ("string", "large_string") for f in a.schema)
    assert text_columns > 50


def test_a_command_holds_text_as_python_strings_and_help_imports_no_pandas() -> None:
    script = textwrap.dedent(
        """
        import sys
        import pandas as pd
        import capacity_cli

        data = sys.argv[1]

        def run(*argv):
            sys.argv = ["capacity", *argv]
            try:
                capacity_cli.main()
            except SystemExit:
                pass
            return pd.get_option("mode.string_storage")

        print(run("--help"), run("validate", data))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(ROOT / "tests" / "data" / "tiny_valid")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1].split() == ["auto", TEXT_STORAGE]
