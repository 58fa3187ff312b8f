"""A sweep's cases: SweepCase and its key, the expansion in a fixed order, a case's dataset.

Case names are stable and Hive-safe: the named scenario itself, ``grid_<axis>-<level>
_<axis>-<level>`` and ``mc_<nnn>``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from capacity.scenario_spec import Override, base_name_problem
from capacity.validation import Finding, suggest
from optimizer.analysis.sweep import GridSpec, MonteCarloSpec, SweepSpec, format_level
from optimizer.analysis.sweep_errors import SweepSpecError, pydantic_message
from optimizer.analysis.sweep_lines import field_text
from optimizer.output.run_folder import scenario_name_problem

__all__ = ["SweepCase", "cases_dataset", "expand_sweep"]


@dataclass(frozen=True)
class SweepCase:
    """One scenario of a sweep, ready to be applied to the base dataset.

    Attributes
    ----------
    name : str
        Case name (Hive partition value).
    kind : {"scenario", "grid", "monte_carlo"}
        Where the case comes from.
    base : str or None
        Named scenario of the dataset applied first (None: the data as is).
    overrides : tuple of Override
        Applied after ``base``.
    params : dict
        Axis or parameter name -> level (grid and Monte Carlo cases).
    objective : {"cost", "margin"} or None
        Objective mode the case solves in (None: the batch's).
    origins : tuple of (str, int or None, str)
        Where each override was written: ``(sweep file, line, field)`` such as
        ``("sweep.yaml", 14, "grid.axes[0] (cowos)")``; empty when not known. A finding
        about ``overrides[k]`` is reported there (:func:`located`).
    """

    name: str
    kind: Literal["scenario", "grid", "monte_carlo"]
    base: str | None = None
    overrides: tuple[Override, ...] = ()
    params: Mapping[str, float | str] = field(default_factory=dict)
    objective: str | None = None
    origins: tuple[tuple[str, int | None, str], ...] = ()

    def located(self, f: Finding) -> Finding:
        """Return ``f`` at the sweep line of the override it names (``overrides[k]...``).

        Findings of an override (a ``where`` that matches nothing) named the file
        ``overrides`` and ``overrides[k]``, counted over every axis: not the sweep file,
        its line or the axis.
        """
        m = re.match(r"^overrides\[(\d+)\](.*)$", str(f.column or ""))
        if f.file != "overrides" or m is None or int(m[1]) >= len(self.origins):
            return f
        file, line, where = self.origins[int(m[1])]
        return dataclasses.replace(f, file=file, row=line, column=f"{where}{m[2]}")

    def solve_options(self, options: Any) -> Any:
        """Return ``options`` (SolveOptions) with the case's objective mode, when it has one."""
        if self.objective is None or getattr(options, "objective", None) == self.objective:
            return options
        return dataclasses.replace(options, objective=self.objective)

    def key(self, base_hash: str, solve: Mapping[str, Any] | None = None, planner: str = "") -> str:
        """Return the case's identity: sha256 of its inputs, options and planner version.

        Parameters
        ----------
        base_hash : str
            Hash of the sweep's base dataset.
        solve : mapping, optional
            The solve options the case runs with (``capacity batch`` passes
            :func:`optimizer.analysis.batch_resume.key_options`: solver, formulation,
            integer units, clusters ...); None leaves them out of the key.
        planner : str, optional
            The planner's identity (``capacity batch`` passes
            :func:`optimizer.output.manifest.planner_fingerprint`: the version and a
            digest of the code).

        Returns
        -------
        str
            Hex sha256. Two runs of the same case over the same data with the same
            options and the same planner share the key; changing the data, the base
            scenario, an override, a solve option or the planner (its version or its
            code) changes it (so ``capacity batch`` redoes the case rather than
            keeping a plan an older model made beside the new ones).
        """
        doc: dict[str, Any] = {
            "name": self.name,
            "data": base_hash,
            "base": self.base,
            "overrides": [o.to_dict() for o in self.overrides],
            "planner": planner,
        }
        if solve is not None:
            doc["solve"] = dict(solve)
            if self.objective is not None:  # the case's own objective mode
                doc["solve"]["objective"] = self.objective
        return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


#: Most cases a grid may expand to (the Monte Carlo block's ``samples`` has the same cap).
MAX_GRID_CASES = 100_000


def expand_sweep(spec: SweepSpec, known_scenarios: Sequence[str] | None = None) -> list[SweepCase]:
    """List the cases of a sweep in a fixed order (scenarios, grid, Monte Carlo).

    Parameters
    ----------
    spec : SweepSpec
        The validated sweep.
    known_scenarios : sequence of str, optional
        Scenario names of the dataset; when given, unknown names raise.

    Returns
    -------
    list of SweepCase

    Raises
    ------
    SweepSpecError
        For an unknown scenario name (with the names the dataset defines and a "did you
        mean" hint), two cases with the same name, or a grid of more than
        :data:`MAX_GRID_CASES` cases (refused before any case is made); findings name
        the sweep file and line.
    """
    cases: list[SweepCase] = []
    errors: list[Finding] = []
    known = (
        None if known_scenarios is None else ["base", *(n for n in known_scenarios if n != "base")]
    )

    def fail(path: tuple[str | int, ...], value: str | None, msg: str) -> None:
        errors.append(Finding("error", spec.file, spec.line(*path), field_text(path), value, msg))

    def check(name: str | None, *path: str | int) -> None:
        if known is not None and name is not None and name not in known:
            fail(
                path,
                name,
                f"unknown scenario {name!r}; the dataset defines: {', '.join(known)}."
                + suggest(name, known),
            )

    for i, s in enumerate(spec.scenarios):
        if isinstance(s, str):
            check(s, "scenarios", i)
            cases.append(SweepCase(name=s, kind="scenario", base=s))
        else:
            check(s.base, "scenarios", i, "base")
            cases.append(
                SweepCase(
                    name=s.name,
                    kind="scenario",
                    base=s.base,
                    overrides=s.overrides,
                    objective=s.objective,
                )
            )
    if spec.grid is not None:
        check(spec.grid.base, "grid", "base")
        n_grid = math.prod(len(a.levels) for a in spec.grid.axes)
        if n_grid > MAX_GRID_CASES:  # refused before a case is made: memory stays small
            sizes = " x ".join(f"{a.name} {len(a.levels)}" for a in spec.grid.axes)
            fail(
                ("grid", "axes"),
                f"{n_grid:,} cases",
                f"the grid has {n_grid:,} cases ({sizes} levels), more than the "
                f"{MAX_GRID_CASES:,} a sweep may hold; use fewer axes or levels, or "
                "split the sweep (a Monte Carlo block samples a large space)",
            )
        else:
            grid = _origins(spec, "grid", spec.grid.axes)
            cases += [dataclasses.replace(c, origins=grid) for c in _grid_cases(spec.grid)]
    if spec.monte_carlo is not None:
        check(spec.monte_carlo.base, "monte_carlo", "base")
        mc = _origins(spec, "monte_carlo", spec.monte_carlo.parameters)
        cases += [
            dataclasses.replace(c, origins=mc) for c in _monte_carlo_cases(spec.monte_carlo, fail)
        ]
    _check_names(cases, fail)
    if errors:
        raise SweepSpecError(errors)
    return cases


def _origins(
    spec: SweepSpec, block: str, items: Sequence[Any]
) -> tuple[tuple[str, int | None, str], ...]:
    """Where each override of a case of ``block`` was written, in the cases' order."""
    field = "axes" if block == "grid" else "parameters"
    return tuple(
        (spec.file, spec.line(block, field, j), f"{block}.{field}[{j}] ({item.name})")
        for j, item in enumerate(items)
        for _ in (() if getattr(item, "switches_objective", False) else item.templates)
    )


def _check_names(
    cases: list[SweepCase], fail: Callable[[tuple[str | int, ...], str | None, str], None]
) -> None:
    """Report two cases of one name, and a name too long for its folder (before solving).

    Names are compared without letter case: ``scenario=neutral`` and ``scenario=Neutral``
    are one folder on a case-insensitive file system (macOS, Windows), where one case's
    files would replace the other's.
    """
    seen: dict[str, str] = {}
    for i, c in enumerate(cases):
        at: tuple[str | int, ...] = ("scenarios", i) if c.kind == "scenario" else (c.kind,)
        other = seen.get(c.name.casefold())
        if other == c.name:
            fail(at, c.name, f"two cases are named {c.name!r}")
        elif other is not None:
            fail(
                at,
                c.name,
                f"cases {other!r} and {c.name!r} differ only in letter case: their folders "
                "are one on macOS and Windows; rename one",
            )
        seen.setdefault(c.name.casefold(), c.name)
        problem = scenario_name_problem(c.name)
        if problem:
            fail(at, c.name, problem)
        # a case named 'base' that starts from another scenario records its overrides
        problem = base_name_problem(c.name, len(c.overrides) + (c.base not in (None, "base")))
        if problem:
            fail(at, c.name, problem)


def _grid_cases(g: GridSpec) -> list[SweepCase]:
    """One case per combination of the axes' levels, named ``grid_<axis>-<level>_...``."""
    cases = []
    for combo in itertools.product(*(a.levels for a in g.axes)):
        ovs: list[Override] = []
        for a, lv in zip(g.axes, combo, strict=True):
            ovs.extend(a.fill(lv))
        name = "grid_" + "_".join(
            f"{a.name}-{format_level(lv)}" for a, lv in zip(g.axes, combo, strict=True)
        )
        params: dict[str, float | str] = {a.name: lv for a, lv in zip(g.axes, combo, strict=True)}
        goal = [str(lv) for a, lv in zip(g.axes, combo, strict=True) if a.switches_objective]
        cases.append(
            SweepCase(
                name=name,
                kind="grid",
                base=g.base,
                overrides=tuple(ovs),
                params=params,
                objective=goal[0] if goal else None,
            )
        )
    return cases


def _monte_carlo_cases(
    mc: MonteCarloSpec, fail: Callable[[tuple[str | int, ...], str | None, str], None]
) -> list[SweepCase]:
    """One case per seeded sample, named ``mc_000``, ``mc_001`` ...

    A draw that makes an invalid override (an unclipped lognormal's 1.9e14 as a scale
    factor) is a finding naming the parameter, not pydantic's traceback; no case is made.
    """
    draws = mc.draw()
    width = max(3, len(str(mc.samples - 1)))
    cases = []
    for k in range(mc.samples):
        ovs: list[Override] = []
        params: dict[str, float | str] = {}
        for j, p in enumerate(mc.parameters):
            lv = float(draws[p.name][k])
            try:
                ovs.extend(p.fill(lv))
            except ValidationError as e:
                msg = "; ".join(pydantic_message(x, Override) for x in e.errors())
                fail(
                    ("monte_carlo", "parameters", j, "distribution"),
                    format_level(lv),
                    f"draw {k} of {p.name!r} is {format_level(lv)}, which gives an invalid "
                    f"override: {msg}; bound the distribution with low and high",
                )
                return []
            params[p.name] = lv
        cases.append(
            SweepCase(
                name=f"mc_{k:0{width}d}",
                kind="monte_carlo",
                base=mc.base,
                overrides=tuple(ovs),
                params=params,
            )
        )
    return cases


def cases_dataset(base: Any, case: SweepCase) -> Any:
    """Return the dataset of one case: ``base`` with the case's scenario and overrides.

    Parameters
    ----------
    base : capacity.dataset.Dataset
        The dataset named by the sweep's ``data``.
    case : SweepCase

    Returns
    -------
    capacity.dataset.Dataset
        Labelled with the case name as its scenario.

    Raises
    ------
    capacity.scenarios.UnknownScenarioError, capacity.validation.DataValidationError
    """
    from capacity.scenarios import apply_overrides, apply_scenario

    ds = apply_scenario(base, case.base)
    if case.overrides:
        return apply_overrides(ds, case.overrides, scenario=case.name)
    # relabel without re-validating (the tables are unchanged)
    return dataclasses.replace(ds, scenario=case.name) if ds.scenario != case.name else ds
