"""``capacity hedge``: the hedged (two-stage) plan over sampled scenarios, VSS and EVPI."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from capacity.limits import MAX_PARALLEL
from optimizer.cli.checks import exit_on_interrupt, refuse_bad_out, require_highs, tolerance_option
from optimizer.cli.hedge_folder import (
    drawn_settings,
    frontier_shown,
    write_chance,
    write_frontier,
    write_hedge_folder,
)
from optimizer.cli.hedge_options import (
    _AlphaOpt,
    _ChanceMethod,
    _ChanceMethodOpt,
    _ChanceOpt,
    _FirstStage,
    _FreshOpt,
    _FrontierOpt,
    _HedgeMethod,
    _refuse_mixed_modes,
    _ReplanLeavesOpt,
    _Risk,
    _RiskOpt,
    _TimeLimitOpt,
    _WeightOpt,
    _WeightsOpt,
)
from optimizer.cli.options import Objective, ObjectiveOpt, SchedulerOpt
from optimizer.cli.scenarios import load_scenarios

if TYPE_CHECKING:  # pandas stays unloaded for --help
    from rich.console import Console

    from capacity.dataset import Dataset

__all__ = ["HEDGE_HELP", "hedge"]


HEDGE_HELP = (
    "Hedged (two-stage) plan over N Monte Carlo scenarios, with VSS and EVPI.\n\n"
    "Scenarios: every default tornado parameter (supply, grid delay, demand, PUE, WUE, "
    "energy price, migration derate) drawn uniformly in its range on top of BASE.\n\n"
    "--method lshaped (default) solves it by an L-shaped decomposition whose scenario "
    "subproblems run on Dask (a local cluster of --workers processes, or --scheduler); "
    "--method extensive solves the one extensive-form LP (memory grows with N). "
    "--reference also solves the extensive form and prints the difference.\n\n"
    "--first-stage capacity (default) shares only the facility decisions (build, liquid, "
    "retrofit) across the scenarios: chip production and installs are recourse, chosen per "
    "scenario. --first-stage full also shares production and installs; at the default size it "
    "does not converge in useful time.\n\n"
    "--tree TREE.yaml solves the multi-stage plan over a scenario tree (stages at chosen "
    "quarters, branch probabilities, overrides per branch) as one extensive form with "
    "non-anticipativity per node, and its value over the two-stage hedge on the same leaves; "
    "--replan-leaves adds rolling replanning along each leaf beside them.\n\n"
    "--risk cvar minimises E[cost] + L * CVaR_alpha(cost) over the scenarios (--alpha, "
    "--weight L); VSS and EVPI are then differences of that risk objective. --frontier "
    "solves it for each of --weights and prints expected cost against CVaR (with --out, "
    "frontier.csv and the chart frontier.html).\n\n"
    "--chance commitment:openai:0.9 asks that the customer's floors are met in at least "
    "that share of the scenarios (--chance-method cvar: a convex approximation, an LP; "
    "exact: one binary per scenario, a MIP with its gap), solved in the extensive form; "
    "the achieved probability is reported in sample and over --fresh new draws.\n\n"
    "Options and --out are checked before anything is solved. A sampled scenario with no "
    "plan on its own is explained as 'capacity solve' explains an infeasible plan.\n\n"
    "Exit 0 when the plan is found (and within --tol of the reference), 1 otherwise, 2 "
    "for a bad option."
)
"""The help ``capacity hedge --help`` prints."""

#: ``capacity hedge`` arguments and options (Typer reads the annotations).
_DataArg = Annotated[Path, typer.Argument(metavar="DATA_DIR", help="Dataset directory.")]
_SamplesOpt = Annotated[int, typer.Option("--samples", "-n", min=1, help="Scenarios.")]
_SeedOpt = Annotated[int, typer.Option(min=0, help="Seed of the draws.")]
_BaseOpt = Annotated[str, typer.Option(help="Named scenario the draws start from.")]
_MethodOpt = Annotated[_HedgeMethod, typer.Option(help="Solution method.")]
_WorkersOpt = Annotated[
    int,
    typer.Option(
        "--workers", "-w", min=0, max=MAX_PARALLEL, help="Local Dask workers (0: no Dask)."
    ),
]
_FirstStageOpt = Annotated[
    _FirstStage, typer.Option("--first-stage", help="Decisions shared by the scenarios.")
]
_TolOpt = Annotated[
    float,
    typer.Option(callback=tolerance_option, help="Relative gap to stop at (L-shaped), in (0, 1)."),
]
_MaxIterOpt = Annotated[int, typer.Option("--max-iter", min=1, help="Iteration limit.")]
_ReferenceOpt = Annotated[
    bool, typer.Option("--reference/--no-reference", help="Also solve the extensive form.")
]
_TreeOpt = Annotated[
    Path | None,
    typer.Option(
        "--tree",
        help="Scenario-tree YAML file: solve the multi-stage plan over its leaves instead "
        "(extensive form; --samples, --method and --reference are then not used).",
    ),
]


_OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="Root folder of the CSV tables (iterations, per-scenario, first-stage), "
        "written to a new OUT/hedge-<run_id>/ per run, so runs never overwrite each other.",
    ),
]


def hedge(
    data: _DataArg = Path("data"),
    samples: _SamplesOpt = 10,
    seed: _SeedOpt = 0,
    base: _BaseOpt = "neutral",
    method: _MethodOpt = _HedgeMethod.lshaped,
    workers: _WorkersOpt = 2,
    scheduler: SchedulerOpt = None,
    first_stage: _FirstStageOpt = _FirstStage.capacity,
    tol: _TolOpt = 1e-4,
    max_iter: _MaxIterOpt = 300,
    limit_s: _TimeLimitOpt = None,
    reference: _ReferenceOpt = False,
    risk: _RiskOpt = _Risk.none,
    alpha: _AlphaOpt = 0.9,
    weight: _WeightOpt = 1.0,
    frontier: _FrontierOpt = False,
    weights: _WeightsOpt = None,
    chance: _ChanceOpt = None,
    chance_method: _ChanceMethodOpt = _ChanceMethod.cvar,
    fresh: _FreshOpt = 30,
    out: _OutOpt = None,
    tree: _TreeOpt = None,
    replan_leaves: _ReplanLeavesOpt = False,
    objective: ObjectiveOpt = Objective.cost,
) -> None:
    """Solve the hedged plan (see HEDGE_HELP)."""
    from optimizer.cli.printing import command_console
    from optimizer.plan.risk import RiskSpec

    require_highs("capacity hedge")
    spec = RiskSpec(alpha, weight) if risk == _Risk.cvar else None
    console = command_console()
    if out is not None:
        refuse_bad_out(console, out)
    modes = (console, tree, objective == Objective.margin, spec, chance, method, limit_s)
    _refuse_mixed_modes(*modes, out=None if tree is not None else out, frontier=frontier)
    lshaped = {"workers": workers, "scheduler": scheduler, "tol": tol, "max_iter": max_iter}
    lshaped.update(first_stage=first_stage.value, objective=objective.value, time_limit_s=limit_s)
    if tree is not None:
        _run_tree(console, (data, base, tree, first_stage.value, out, replan_leaves))
    with exit_on_interrupt(console):
        names, dsets, inputs, base_hash = _hedge_scenarios(console, data, base, samples, seed)
        drawn = drawn_settings(base, base_hash, samples, seed, spec)
        if chance is not None:
            spec_c = (chance, chance_method.value, fresh, first_stage.value)
            raise typer.Exit(_chance(console, data, base, seed, names, dsets, spec_c, (out, drawn)))
        if frontier:
            at = (out, drawn)
            raise typer.Exit(
                _frontier(console, dsets, names, method, alpha, weights, at, **lshaped)
            )
        if method == _HedgeMethod.extensive:
            kind, goal = first_stage.value, objective.value
            rp = _extensive_rp(console, names, dsets, kind, risk=spec, objective=goal)
            raise typer.Exit(0 if rp is not None else 1)
        written = (out, inputs, drawn)
        code = _run_lshaped(console, names, dsets, spec, lshaped, reference, written)
    raise typer.Exit(code)


def _run_tree(console: Console, args: tuple[Any, ...]) -> None:
    """Solve the scenario tree (``--tree``) and exit with its code."""
    from optimizer.cli.hedge_tree import hedge_tree

    with exit_on_interrupt(console):
        raise typer.Exit(hedge_tree(console, *args))


def _run_lshaped(
    console: Console,
    names: list[str],
    dsets: list[Dataset],
    spec: Any,
    lshaped: dict[str, Any],
    reference: bool,
    written: tuple[Path | None, Any, dict[str, Any]],
) -> int:
    """Solve the L-shaped hedge, print it (and the reference), write ``--out``; the exit code.

    ``written`` is ``(--out, the scenarios' recorded inputs, the run's settings)``.
    """
    tol = lshaped["tol"]
    p = _hedge_plan(console, names, dsets, progress=True, risk=spec, **lshaped)
    margin = lshaped.get("objective") == "margin"
    ok = _print_hedge(console, p, tol, margin)
    if reference:
        kind, objective = lshaped["first_stage"], lshaped.get("objective", "cost")
        rp = _extensive_rp(console, names, dsets, kind, p.expected_cost_usd, objective, spec)
        ok = ok and rp is not None and abs(p.expected_cost_usd - rp) <= max(tol, 1e-9) * abs(rp)
    code = 0 if ok else 1
    out, inputs, settings = written
    if out is not None:
        settings = {**settings, **{k: v for k, v in lshaped.items() if k != "scheduler"}}
        code = max(code, write_hedge_folder(console, p, out, inputs, settings))
    return code


def _hedge_scenarios(
    console: Console, data: Path, base: str, samples: int, seed: int
) -> tuple[list[str], list[Dataset], list[Any], str]:
    """Load ``data``, apply ``--base`` as ``capacity solve`` applies ``--scenario``, draw.

    Returns the names, datasets and recorded inputs
    (:class:`optimizer.output.inputs_record.SolvedInputs`: the base's overrides, then
    the draw's) of the valid draws, and the content hash of the data drawn on (``--base``
    applied). An unknown ``--base`` stops with the solve
    command's "unknown scenario, did you mean" message (exit 1); bad data prints its
    findings (exit 1); ``--base all`` is a usage error (exit 2).
    """
    from dataclasses import replace

    from optimizer.analysis.monte_carlo import draw_overrides, sample_scenarios
    from optimizer.output.inputs_record import solved_inputs
    from optimizer.output.progress import Progress

    if base == "all":
        raise typer.BadParameter("takes one scenario name, not 'all'", param_hint="'--base'")
    ((_, start),) = load_scenarios(console, data, [base])
    with Progress("sampling", samples) as report:
        names, dsets, notes = sample_scenarios(start, samples, seed, base=None, progress=report)
    for n in notes:
        console.print(f"[yellow]note:[/yellow] {n}")
    if not dsets:
        console.print("[red]error:[/red] every draw made the data invalid; nothing was solved.")
        raise typer.Exit(1)
    drawn = draw_overrides(start, samples, seed)
    inputs = [
        replace(
            solved_inputs(start, base, extra=drawn[name]),
            scenario=name,
            description=f"Monte Carlo draw {name} (seed {seed}) on {base}",
            dataset_hash=str(ds.hash),
            tables_hash=str(ds.tables_hash),
        )
        for name, ds in zip(names, dsets, strict=True)
    ]
    return names, dsets, inputs, str(start.hash)


def _hedge_plan(console: Console, names: list[str], dsets: list[Dataset], **kw: Any) -> Any:
    """Run :func:`optimizer.analysis.decompose.hedge_decomposed`; exit 1 with a message on failure.

    A scenario with no plan even on its own is explained as ``capacity solve``
    explains an infeasible plan (its own solve and elastic re-solve); a Dask cluster
    that cannot start, or a decomposition that finds no operable plan, is one line.
    """
    from rich.markup import escape

    from optimizer.analysis.decompose import hedge_decomposed, hedge_frontier
    from optimizer.analysis.decompose_cuts import ScenarioInfeasibleError

    try:
        if "risk_weights" in kw:
            return hedge_frontier(dsets, names=names, **kw)
        return hedge_decomposed(dsets, names=names, **kw)
    except ScenarioInfeasibleError as e:
        console.print(
            f"[red]error:[/red] scenario {e.scenario} has no plan even on its own "
            f"({e.status}), so no plan can hedge it. Its own solve:"
        )
        if not _explain_alone(console, e.scenario, dsets[e.position]):
            console.print(
                f"solved alone as 'capacity solve' solves it, {e.scenario} has a plan: the "
                "decomposition's subproblem failed numerically; try --method extensive."
            )
    except (OSError, TimeoutError) as e:
        target = f"the Dask scheduler {kw.get('scheduler')}" if kw.get("scheduler") else "Dask"
        console.print(f"[red]error:[/red] cannot run the hedge on {escape(target)}: {e}")
    except typer.Exit:  # a RuntimeError too: the command's own exit, said already
        raise
    except RuntimeError as e:
        console.print(f"[red]error:[/red] no hedged plan was found: {escape(str(e))}")
    raise typer.Exit(1)


def _explain_alone(console: Console, name: str, ds: Dataset) -> bool:
    """Solve one scenario as ``capacity solve`` does and print its summary when it fails.

    Returns True when the scenario has no acceptable plan on its own (its summary,
    with the elastic re-solve's "limits that had to give", was printed).
    """
    from optimizer import SolveOptions
    from optimizer import solve as solve_plan
    from optimizer.output.summary import exit_code, summarize
    from optimizer.output.summary_render import render_summary

    with console.status(f"Solving scenario {name!r} alone ..."):
        result = solve_plan(ds, SolveOptions())
    summary = summarize(result, scenario=name, periods=ds.periods)
    if exit_code(summary) == 0:
        return False
    render_summary(summary, console)
    return True


def _extensive_rp(
    console: Console,
    names: list[str],
    dsets: list[Dataset],
    first_stage: str,
    lshaped_usd: float | None = None,
    objective: str = "cost",
    risk: Any = None,
) -> float | None:
    """Solve the extensive form and print RP (or why there is none); return RP in USD.

    With ``lshaped_usd`` (``--reference``) the relative difference to it is printed.
    When the extensive form is infeasible, the first scenario with no plan on its own
    is explained as ``capacity solve`` explains it; if each has one, the message says
    that no single first stage operates them all.
    """
    from optimizer.analysis.hedge import extensive_form_objective
    from optimizer.output.progress import Progress
    from optimizer.plan.options import SolveOptions

    options = SolveOptions(objective=objective)
    with Progress("extensive form", 2, estimate=False) as report:
        obj, status, tm = extensive_form_objective(
            dsets, options=options, first_stage=first_stage, risk=risk, progress=report
        )
    took = f"build {tm['build']:.1f} s, solve {tm['solve']:.1f} s"
    if obj is not None and math.isfinite(obj) and objective == "margin":
        # the objective is cost - revenue (the revenue constant included): margin = -obj
        console.print(f"extensive form: {status}, expected margin = {-obj:,.0f} USD, {took}")
        if lshaped_usd is not None:
            diff = (lshaped_usd - obj) / max(abs(obj), 1.0)
            console.print(f"{'relative diff to L-shaped':>32}: {diff:.2e}")
        return obj
    if obj is not None and math.isfinite(obj):
        from optimizer.output.formatting import text_column

        rp_text = text_column("rp_usd", [obj])[1][0]
        console.print(f"extensive form: {status}, RP = {rp_text}, {took}")
        if lshaped_usd is not None:
            diff = (lshaped_usd - obj) / max(abs(obj), 1.0)
            console.print(f"{'relative diff to L-shaped':>32}: {diff:.2e}")
        return obj
    console.print(
        f"[red]extensive form: {status}, no RP (expected cost): no plan found[/red], {took}"
    )
    if status == "infeasible":
        for name, ds in zip(names, dsets, strict=True):
            if _explain_alone(console, name, ds):
                console.print(f"[red]scenario {name} has no plan even on its own.[/red]")
                return None
        console.print(
            f"every scenario has a plan on its own, but no one first stage ({first_stage}) "
            "operates them all."
        )
    return None


def _print_hedge(console: Console, p: Any, tol: float, margin: bool = False) -> bool:
    """Print the hedged plan's bounds, VSS, EVPI and gap; return whether it converged.

    With ``margin`` the plan's figures are cost less revenue: they are printed as
    margins (their negatives), the bounds swapped; VSS and EVPI keep their values.
    """
    rows = [
        ("expected cost RP (upper bound)", p.expected_cost_usd),
        ("lower bound", p.lower_bound_usd),
        ("wait-and-see WS", p.wait_and_see_usd),
        (f"EEV ({p.ev_problem} plan)", p.eev_usd),
        ("VSS = EEV - RP", p.vss_usd),
        ("EVPI = RP - WS", p.evpi_usd),
    ]
    if margin:
        labels = ("expected margin RP (lower bound)", "upper bound", *(k for k, _ in rows[2:4]))
        rows = [(k, -v) for k, (_, v) in zip(labels, rows, strict=False)]
        rows += [("VSS = RP - EEV", p.vss_usd), ("EVPI = WS - RP", p.evpi_usd)]
    r = getattr(p, "risk", None)
    if r and r.get("risk_weight", 0.0) > 0:
        rows = [
            (f"rho = E + {r['risk_weight']:g} CVaR (RP)", p.expected_cost_usd),
            ("expected cost of the plan", r["expected_cost_usd"]),
            (f"VaR {r['alpha']:g}", r["var_usd"]),
            (f"CVaR {r['alpha']:g}", r["cvar_usd"]),
            *[(k.replace("RP", "rho"), v) for k, v in rows[1:]],
        ]
    from optimizer.output.formatting import text_column

    # one money column, in one scale (the app's and the other tables' formatter)
    _, cells = text_column("cost_usd", [v for _, v in rows])
    for (label, _), cell in zip(rows, cells, strict=True):
        console.print(f"{label:>32}: {cell}")
    console.print(
        f"{'gap':>32}: {p.gap_rel:.2e} ({'converged' if p.converged else 'NOT converged'} "
        f"at tol {tol:g}, {len(p.iterations) - 1} iterations, {p.timings_s['total']:.1f} s)"
    )
    from rich.markup import escape

    for note in getattr(p, "notes", ()):
        console.print(f"[yellow]note:[/yellow] {escape(note)}")
    return bool(p.converged)


def _frontier(
    console: Console,
    dsets: list[Dataset],
    names: list[str],
    method: _HedgeMethod,
    alpha: float,
    weights: str | None,
    written: tuple[Path | None, dict[str, Any]],
    **kw: Any,
) -> int:
    """Solve and print the frontier (expected cost against CVaR); write it under ``--out``.

    ``written`` is ``--out`` and the draws' settings its manifest records (with alpha
    and the weights).
    """
    from optimizer.analysis.hedge_risk import (
        DEFAULT_FRONTIER_WEIGHTS,
        extensive_frontier,
        frontier_notes,
        frontier_table,
        parse_weights,
    )

    lams = DEFAULT_FRONTIER_WEIGHTS if weights is None else parse_weights(weights)
    if method == _HedgeMethod.extensive:
        from optimizer.output.progress import Progress

        with Progress("frontier (extensive form)", len(lams)) as report:
            table = extensive_frontier(
                dsets, lams, alpha, first_stage=kw["first_stage"], progress=report
            )
    else:
        plans = _hedge_plan(console, names, dsets, risk_weights=lams, alpha=alpha, **kw)
        table = frontier_table(plans)
    console.print(frontier_shown(table, alpha))
    for n in frontier_notes(table):
        console.print(f"[yellow]note:[/yellow] {n}")
    ok = bool(table["expected_cost_usd"].notna().all())
    code = 0 if ok else 1
    out, drawn = written
    if out is not None:
        settings = {**drawn, "alpha": alpha, "weights": weights}
        code = max(code, write_frontier(console, table, out, settings))
    return code


def _chance(
    console: Console,
    data: Path,
    base: str,
    seed: int,
    names: list[str],
    dsets: list[Dataset],
    spec_c: tuple[str, str, int, str],
    written: tuple[Path | None, dict[str, Any]],
) -> int:
    """Solve the chance-constrained plan; print its cost, gap and achieved probabilities.

    ``written`` is ``--out`` and the settings its manifest records.
    """
    from rich.markup import escape

    from optimizer.analysis.hedge_chance import chance_plan
    from optimizer.plan.chance import parse_chance

    text, method, n_fresh, first_stage = spec_c
    spec = parse_chance(text, method)
    fresh_names: list[str] = []
    fresh: list[Dataset] = []
    if n_fresh:
        # other draws: a seed far from the plan's
        fresh_names, fresh, _, _ = _hedge_scenarios(console, data, base, n_fresh, seed + 1_000_003)
    try:
        with console.status(f"Solving the chance-constrained plan ({method}) ..."):
            c = chance_plan(
                dsets,
                spec,
                names=names,
                fresh=fresh,
                fresh_names=fresh_names,
                first_stage=first_stage,
            )
    except ValueError as e:
        console.print(f"[red]error:[/red] {escape(str(e))}")
        return 2
    for n in c.notes:
        console.print(f"[yellow]note:[/yellow] {escape(n)}")
    if c.expected_cost_usd is None:
        return 1
    gap = "-" if c.mip_gap is None else f"{c.mip_gap:.2e}"
    oos = "-" if c.out_of_sample is None else f"{c.out_of_sample:.3f} over {len(fresh)} new draws"
    rows = [
        ("chance row", f"{spec.family} floors of {spec.customer} with p >= {spec.probability:g}"),
        ("method", f"{method} (status {c.status}, MIP gap {gap})"),
        ("expected cost", f"{c.expected_cost_usd:,.0f} USD"),
        ("achieved in sample", f"{c.in_sample:.3f} over {len(dsets)} scenarios"),
        ("achieved out of sample", oos),
        ("time", f"{c.elapsed_s:.1f} s"),
    ]
    for label, v in rows:
        console.print(f"{label:>32}: {v}")
    code = 0 if c.status == "optimal" else 1
    out, drawn = written
    if out is not None:
        settings = {**drawn, "chance": text, "chance_method": method}
        code = max(code, write_chance(console, c, out, settings))
    return code
