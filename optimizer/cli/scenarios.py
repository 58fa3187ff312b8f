"""Loading a dataset and applying the scenarios a command asks for (``solve``, ``hedge``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from optimizer.cli.printing import print_findings

if TYPE_CHECKING:  # pandas stays unloaded for --help
    from rich.console import Console

    from capacity.dataset import Dataset

__all__ = ["load_scenarios", "scenario_names", "warn_unread_overrides"]


def scenario_names(known: list[str], requested: list[str]) -> list[str]:
    """Return the scenarios to solve: ``all`` expands to every known one, in file order.

    Duplicates are dropped (first kept). The default ``["neutral"]`` on a dataset with
    no scenarios means the base data (``"base"``), and so does ``all`` (every scenario
    of a dataset that defines none is its base data: it solved nothing and exited 0).

    Examples
    --------
    >>> scenario_names(["optimistic", "neutral"], ["all", "neutral"])
    ['optimistic', 'neutral']
    >>> scenario_names([], ["neutral"])
    ['base']
    >>> scenario_names([], ["all"])
    ['base']
    """
    if requested == ["neutral"] and not known:
        return ["base"]
    names: list[str] = []
    for name in requested:
        for n in (known or ["base"]) if name == "all" else [name]:
            if n not in names:
                names.append(n)
    return names


def load_scenarios(
    console: Console,
    data_dir: Path,
    requested: list[str],
    scenarios_file: Path | None = None,
) -> list[tuple[str, Dataset]]:
    """Load ``data_dir`` and apply each requested scenario (exit 1 on bad data or a name).

    Every scenario is applied before anything is solved, so an unknown name or a
    scenario whose data does not validate stops the command in seconds. A dataset
    without scenarios is solved as its base data when the default ``neutral`` was
    asked for.

    Parameters
    ----------
    console : rich.console.Console
        Where the progress, the warnings count and an unknown name are printed.
    data_dir : Path
        Dataset directory.
    requested : list of str
        Scenario names as given (``all`` = every one, see :func:`scenario_names`).
    scenarios_file : Path, optional
        Take the scenarios from this file instead of the dataset's ``scenarios.yaml``
        (a report's ``inputs.yaml``, see :mod:`capacity.recorded_inputs`).

    Returns
    -------
    list of (str, Dataset)
        Each scenario's name and its dataset with the scenario applied, in order.

    Raises
    ------
    typer.Exit
        Code 1, after the findings or the message, on bad data or an unknown name.
    """
    from capacity.dataset import load_dataset
    from capacity.recorded_inputs import read_scenarios_file
    from capacity.scenarios import UnknownScenarioError, apply_scenario
    from capacity.validation import DataValidationError

    try:
        with console.status(f"Loading {data_dir} ..."):
            ds = load_dataset(data_dir)
        if scenarios_file is not None:
            ds = ds.with_scenarios(read_scenarios_file(scenarios_file), scenarios_file.name)
        own = [w for w in ds.warnings if scenarios_file and w.file == scenarios_file.name]
        if own:  # the scenarios file's warnings: validate does not read that file
            print_findings(own, title=f"Warnings in {scenarios_file}")
        if len(ds.warnings) > len(own):
            console.print(
                f"[yellow]{len(ds.warnings) - len(own)} data warning(s); run "
                f"'capacity validate {data_dir}' to see them.[/yellow]"
            )
        if requested in (["neutral"], ["all"]) and not ds.scenarios:
            console.print(f"[yellow]{data_dir} defines no scenarios: solving its base data.")
        out = []
        for name in scenario_names(list(ds.scenarios), requested):
            with console.status(f"Applying scenario {name!r} ..."):
                out.append((name, apply_scenario(ds, name)))
        if scenarios_file is not None:
            _warn_other_data(console, scenarios_file, out)
    except DataValidationError as e:
        print_findings(list(e.findings), title=f"Data errors in {data_dir}")
        raise typer.Exit(1) from None
    except UnknownScenarioError as e:
        console.print(f"[red]error:[/red] {e}")
        raise typer.Exit(1) from None
    return out


def _warn_other_data(console: Console, record: Path, solved: list[tuple[str, Dataset]]) -> None:
    """Warn when a report's inputs.yaml is re-solved on other data than it records.

    The file's header gives the content hash of the data as solved; the same overrides
    on other data (an edited folder, another dataset) make another plan, which would
    otherwise pass for the report's own.
    """
    from rich.markup import escape

    from capacity.recorded_inputs import recorded_hash, recorded_other_plan

    other = recorded_other_plan(record)
    if other is not None:  # an alternative's record: its data, not its objective
        console.print(
            f"[yellow]warning:[/yellow] {escape(str(record))} records a plan that is "
            f"{escape(other)}: this solve gives the cost optimum of its data, not that plan"
        )
    want = recorded_hash(record)
    for name, sds in solved:
        if want is not None and sds.tables_hash != want:
            console.print(
                f"[yellow]warning:[/yellow] {escape(str(record))} records its tables with "
                f"content hash {want[:12]}; {name!r} applied to this data has "
                f"{sds.tables_hash[:12]}: the plan is not the report's (the data differ)"
            )


def warn_unread_overrides(
    console: Console, prepared: list[tuple[str, Dataset]], objective: str
) -> None:
    """Print a warning for each scenario override the objective does not read.

    ``prepared`` is :func:`load_scenarios`'s list; ``objective`` is ``cost`` or
    ``margin`` (see :mod:`optimizer.plan.objective_reads`).
    """
    from rich.markup import escape

    from optimizer.plan.objective_reads import scenario_overrides, unread_override_findings

    for name, sds in prepared:
        overrides = scenario_overrides(sds.scenarios, name)
        for f in unread_override_findings(overrides, objective, f"scenario {name!r}"):
            console.print(f"[yellow]warning:[/yellow] {escape(f.file)}: {escape(f.message)}")
