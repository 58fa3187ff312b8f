"""Options only one mode of a command reads: given without that mode, a usage error.

``capacity hedge --alpha 0.5`` without ``--risk cvar``, ``--tol`` with ``--method
extensive``, ``capacity alternatives --seed 9`` without ``--directions`` and ``capacity
solve --units --no-report`` each ran with exit 0 and without the option's effect. Each
command lists here the options that a mode of it reads; an option given on the command
line (whatever its value) while that mode is off is refused (exit 2) with what it
needs. :class:`optimizer.cli.commands._Command` checks it once the line is parsed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import typer

__all__ = ["NEEDS", "Need", "refuse_unread_options"]


class Need(NamedTuple):
    """An option read only when ``reads(params)`` holds: with ``needs``; ``fix`` says how."""

    option: str
    reads: Callable[[Mapping[str, Any]], bool]
    needs: str
    fix: str


def _v(params: Mapping[str, Any], name: str) -> Any:
    """Return a parsed parameter's plain value (an enum's value)."""
    value = params.get(name)
    return getattr(value, "value", value)


def _cvar(p: Mapping[str, Any]) -> bool:
    return bool(_v(p, "risk") == "cvar")


def _lshaped(p: Mapping[str, Any]) -> bool:
    return _v(p, "method") == "lshaped" and p.get("chance") is None and p.get("tree") is None


def _no_tree(p: Mapping[str, Any]) -> bool:
    return p.get("tree") is None


def _local(p: Mapping[str, Any]) -> bool:
    return p.get("scheduler") is None


def _chance(p: Mapping[str, Any]) -> bool:
    return p.get("chance") is not None


_CVAR = ("--risk cvar", "add --risk cvar")
_LSHAPED = ("the L-shaped run", "drop --method extensive, --chance or --tree")
_REPORT = ("a report", "drop --no-report")
_SAMPLED = ("sampled scenarios", "drop --tree (the tree file names its scenarios)")
_LOCAL = ("a local cluster", "drop --scheduler (its workers are the cluster's)")
_CHANCE = ("--chance", "add --chance FAMILY:CUSTOMER:P")

#: Command name -> its options read by one mode only.
NEEDS: dict[str, tuple[Need, ...]] = {
    "hedge": (
        Need("alpha", _cvar, *_CVAR),
        # --frontier sweeps --weights: its one --weight is not read
        Need(
            "weight",
            lambda p: _cvar(p) and not p.get("frontier"),
            "--risk cvar without --frontier",
            "add --risk cvar, or drop --frontier (it sweeps --weights)",
        ),
        Need("tol", _lshaped, *_LSHAPED),
        Need("max_iter", _lshaped, *_LSHAPED),
        Need("reference", _lshaped, *_LSHAPED),
        # the other modes solve in this process: -w 0 (no Dask) is true of them too
        Need(
            "workers",
            lambda p: (_lshaped(p) and _local(p)) or p.get("workers") == 0,
            "the L-shaped run on a local cluster",
            "drop --scheduler, --method extensive, --chance or --tree",
        ),
        Need("scheduler", _lshaped, *_LSHAPED),
        Need("samples", _no_tree, *_SAMPLED),
        Need("seed", _no_tree, *_SAMPLED),
        Need("method", _no_tree, *_SAMPLED),
        Need("frontier", _cvar, *_CVAR),
        Need("weights", lambda p: bool(p.get("frontier")), "--frontier", "add --frontier"),
        Need("chance_method", _chance, *_CHANCE),
        Need("fresh", _chance, *_CHANCE),
        Need("replan_leaves", lambda p: not _no_tree(p), "--tree", "add --tree TREE.yaml"),
    ),
    # batch ran 20 s against the scheduler, then failed (or exited 0 if every case was done)
    "batch": (Need("workers", _local, *_LOCAL),),
    "alternatives": (
        Need("seed", lambda p: (p.get("directions") or 0) > 0, "--directions", "add -n N"),
        Need("workers", _local, *_LOCAL),
    ),
    "replan": (
        Need(
            "volatility",
            lambda p: p.get("revision") == "random-walk",
            "--revision random-walk",
            "drop --revision FILE.csv (its forecasts are given)",
        ),
        Need("workers", _local, *_LOCAL),
    ),
    "bench": (
        Need(
            "xl_time_limit",
            lambda p: "xl" in [x.strip() for x in str(p.get("sizes") or "").split(",")],
            "the xl size",
            "add xl to --sizes",
        ),
    ),
    "solve": (
        Need("units", lambda p: bool(p.get("report")), *_REPORT),
        Need("out", lambda p: bool(p.get("report")), *_REPORT),
    ),
}


def refuse_unread_options(ctx: Any) -> None:
    """Raise a usage error for an option given on the command line that its mode ignores.

    Parameters
    ----------
    ctx : click.Context
        The command's context once its line is parsed (``ctx.params`` filled).

    Raises
    ------
    typer.BadParameter
        Naming the option and what it needs (exit 2).
    """
    params = {p.name: p for p in ctx.command.params}
    for need in NEEDS.get(ctx.info_name or "", ()):
        source = ctx.get_parameter_source(need.option)
        if getattr(source, "name", "") != "COMMANDLINE" or need.reads(ctx.params):
            continue
        opts = params[need.option].opts if need.option in params else [need.option]
        raise typer.BadParameter(
            f"needs {need.needs} (read only there): drop it, or {need.fix}",
            param_hint=f"'{max(opts, key=len)}'",
        )
