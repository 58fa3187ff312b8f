"""The planning model as a PuLP ``LpProblem``: readable names, their keys, LP/MPS files.

:func:`to_pulp` turns a built :class:`~optimizer.plan.model.PlanningModel` into a PuLP
problem. With ``names="readable"`` (the default) every variable and constraint is
named from its domain keys, e.g. ``build(new_carlisle,2027Q2)``,
``assign(trainium2,new_carlisle,anthropic,training,2026Q3)`` or
``site_grid(west_texas,2026Q3)``; ``names="index"`` keeps the fast integer names
``x<col>`` / ``c<row>``. :func:`pulp_names` returns the mapping from every name back
to its column or row and keys.

Name rules (safe for PuLP, the CPLEX LP format and free MPS)
-----------------------------------------------------------
PuLP silently rewrites ``- + [ ] space > /`` to ``_``, LP readers stop at operators
and some readers take only ASCII, so each domain ID is cleaned to a *token*:
letters are folded to ASCII (``Zürich`` -> ``Zurich``), every character outside
``A-Z a-z 0-9 _ .`` becomes ``_``, runs of ``_`` collapse, and an empty token
becomes ``id``. Distinct IDs of one dimension that clean to the same token
(``"Open AI/Inc. (US)"`` and ``"Open AI-Inc. (US)"`` both give ``Open_AI_Inc._US_``)
get the suffixes ``_2``, ``_3``, ... in sorted order of the raw IDs, so tokens are
unique per dimension. A name is ``kind(token,token,...)``: parentheses and commas
are legal in LP and MPS names and never appear in tokens, so names are unique
whenever tokens are; a final check appends ``_dup<n>`` to any name that still
repeats (defensive: scenario models put the scenario index first). Names longer
than :data:`MAX_NAME_LENGTH` (the CPLEX LP limit is 255) are cut and completed by a
short hash of the full name.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import pulp

from optimizer.lp.frames import column_values
from optimizer.plan.model import PlanningModel

#: Longest name written (characters); the CPLEX LP format allows 255.
MAX_NAME_LENGTH = 200

NameStyle = Literal["readable", "index"]

# (code column of the index tables, key column of the mapping, model.codes dimension)
_VAR_DIMS = (
    ("c", "chip", "c"),
    ("s", "site", "s"),
    ("k", "customer", "k"),
    ("w", "workload", "w"),
    ("o", "source", "o"),  # power source
    ("e", "region", "e"),  # site region (serve columns, region_balance rows)
    ("q", "pool", "q"),  # region pool (pool columns, pool_balance rows)
)
_ROW_DIMS = (*_VAR_DIMS, ("r", "resource", "r"))
_UNSAFE = re.compile(r"[^A-Za-z0-9_.]+")


def clean_token(raw: str) -> str:
    """Return ``raw`` made safe for LP/MPS names (ASCII letters, digits, ``_`` and ``.``).

    Parameters
    ----------
    raw : str
        A domain ID (site, chip, customer ...), possibly with spaces, slashes,
        ``+``/``-``, brackets or non-ASCII letters.

    Returns
    -------
    str
        Accents dropped (NFKD), other characters outside ``A-Za-z0-9_.`` replaced
        by ``_`` (runs collapsed); ``"id"`` when nothing is left.
    """
    folded = unicodedata.normalize("NFKD", str(raw)).encode("ascii", "ignore").decode()
    token = _UNSAFE.sub("_", folded)
    return token or "id"


def unique_tokens(ids: Sequence[str]) -> dict[str, str]:
    """Map each distinct ID to a cleaned token, unique among ``ids``.

    Parameters
    ----------
    ids : sequence of str
        IDs of one dimension (e.g. all customers).

    Returns
    -------
    dict
        ``{raw_id: token}``; IDs whose cleaned form collides get ``_2``, ``_3`` ...
        in sorted order of the raw IDs (the first keeps the bare token), skipping
        suffixes that are themselves tokens of other IDs.
    """
    distinct = sorted({str(i) for i in ids})
    base = {i: clean_token(i) for i in distinct}
    taken = set(base.values())
    out: dict[str, str] = {}
    used: set[str] = set()
    for raw in distinct:
        tok = base[raw]
        if tok in used:
            n = 2
            while f"{tok}_{n}" in taken or f"{tok}_{n}" in used:
                n += 1
            tok = f"{tok}_{n}"
        used.add(tok)
        out[raw] = tok
    return out


@dataclass(frozen=True)
class PulpNames:
    """Readable names of a model's columns and rows and the keys behind them.

    Attributes
    ----------
    variables : DataFrame
        One row per column, in column order: ``name``, ``column`` (position),
        ``kind``, ``scenario`` (-1 shared), ``chip``, ``site``, ``customer``,
        ``workload``, ``commitment`` (row of the commitments table), ``period``
        (raw domain IDs; None where the dimension does not apply).
    constraints : DataFrame
        One row per row, in row order: ``name``, ``row``, ``family``, ``scenario``
        and the same key columns plus ``resource``.
    """

    variables: pd.DataFrame
    constraints: pd.DataFrame

    def keys(self, name: str) -> dict[str, object]:
        """Return the keys of a variable or constraint name (``KeyError`` if unknown)."""
        for df in (self.variables, self.constraints):
            hit = df.index[df["name"] == name]
            if len(hit):
                row = df.loc[hit[0]]
                return {k: v for k, v in row.items() if v is not None and k != "name"}
        raise KeyError(f"no variable or constraint is named {name!r}")


def _dim_tokens(model: PlanningModel) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for dim, ids in model.codes.items():
        tok = unique_tokens(ids)
        out[dim] = [tok[str(i)] for i in ids]
    out["t"] = [clean_token(p) for p in model.periods]
    return out


def _commitment_labels(model: PlanningModel) -> list[list[str]]:
    """Per scenario, a raw label and a token per commitments row (customer, family, from)."""
    labels = []
    for cm in model.commitments:
        raw = [
            f"{k},{f},from_{p}"
            for k, f, p in zip(cm["customer"], cm["family"], cm["from_period"], strict=True)
        ]
        labels.append(raw)
    return labels


def _name_frame(
    model: PlanningModel,
    index: pd.DataFrame,
    head: str,
    dims: Sequence[tuple[str, str, str]],
    tokens: Mapping[str, list[str]],
) -> pd.DataFrame:
    """Names and raw keys of the rows of an index table (variables or constraints)."""
    n = len(index)
    scen = column_values(index, "scenario")
    multi = len(model.datasets) > 1
    parts: list[np.ndarray] = []
    if multi:
        parts.append(np.where(scen >= 0, np.char.add("scen", scen.astype(str)), "shared"))
    out = pd.DataFrame({head: index[head].astype(str).to_numpy(), "scenario": scen})
    for code, col, dim in dims:
        codes = index[code].to_numpy()
        has = codes >= 0
        ids = np.asarray(model.codes[dim], dtype=object)
        toks = np.asarray(tokens[dim], dtype=object)
        safe = np.where(has, codes, 0)
        raw: list[object] = [ids[c] if h else None for c, h in zip(safe, has, strict=True)]
        out[col] = raw
        parts.append(np.where(has, toks[safe] if len(toks) else "", ""))
    j = column_values(index, "j")
    raw_j = _commitment_labels(model)
    tok_j = [unique_tokens(r) for r in raw_j]
    cj: list[object] = [None] * n
    pj = np.full(n, "", dtype=object)
    for i in np.flatnonzero(j >= 0):
        sc, row = max(int(scen[i]), 0), int(j[i])
        if sc < len(raw_j) and row < len(raw_j[sc]):
            label = raw_j[sc][row]
            cj[i], pj[i] = label, tok_j[sc][label]
        else:  # a row without a commitments entry (e.g. an elastic slack's index)
            cj[i], pj[i] = f"row_{row}", f"row_{row}"
    out["commitment"] = cj
    parts.append(pj)
    t = column_values(index, "t")
    periods = np.asarray(model.periods, dtype=object)
    out["period"] = [periods[p] if p >= 0 else None for p in t]
    ptok = np.asarray(tokens["t"], dtype=object)
    parts.append(np.where(t >= 0, ptok[np.where(t >= 0, t, 0)], ""))
    names = [
        f"{h}({','.join(p for p in ps if p)})"
        for h, ps in zip(out[head], zip(*parts, strict=True), strict=True)
    ]
    out.insert(0, "name", _finalise(names))
    return out


def _finalise(names: list[str]) -> list[str]:
    """Shorten over-long names (hash suffix) and make every name unique."""
    out = []
    seen: set[str] = set()
    for name in names:
        if len(name) > MAX_NAME_LENGTH:
            digest = hashlib.sha1(name.encode()).hexdigest()[:10]
            name = name[: MAX_NAME_LENGTH - 12] + "~" + digest + ")"
        if name in seen:
            n = 2
            while f"{name}_dup{n}" in seen:
                n += 1
            name = f"{name}_dup{n}"
        seen.add(name)
        out.append(name)
    return out


def pulp_names(model: PlanningModel) -> PulpNames:
    """Readable, unique, LP/MPS-safe names of every column and row of a model.

    Parameters
    ----------
    model : PlanningModel
        A built model (deterministic or stochastic).

    Returns
    -------
    PulpNames
        Names in column / row order with their raw domain keys (see the module
        docstring for the rules).
    """
    tokens = _dim_tokens(model)
    var = _name_frame(model, model.variables, "kind", _VAR_DIMS, tokens)
    var.insert(1, "column", np.arange(len(var)))
    con = model.constraints
    rows = _name_frame(model, con, "family", _ROW_DIMS, tokens)
    rows.insert(1, "row", np.arange(len(rows)))
    # column names and row names live in different namespaces of LP/MPS files, but
    # PuLP keeps both in one problem: a clash between them is harmless.
    return PulpNames(var, rows)


@dataclass(frozen=True)
class PulpBuild:
    """A PuLP problem with its variables and constraints in model order.

    Attributes
    ----------
    prob : pulp.LpProblem
    variables : list of LpVariable
        Column order of the model.
    constraints : list of LpConstraint
        Row order of the model (duals are read back by position, not by name).
    names : PulpNames or None
        The mapping back to keys (None with ``names="index"``).
    """

    prob: pulp.LpProblem
    variables: list[pulp.LpVariable]
    constraints: list[pulp.LpConstraint]
    names: PulpNames | None


_SENSE = {"<=": pulp.LpConstraintLE, ">=": pulp.LpConstraintGE, "==": pulp.LpConstraintEQ}


def build_pulp(
    model: PlanningModel, *, names: NameStyle = "readable", relax_integers: bool = False
) -> PulpBuild:
    """Build the PuLP problem of a model (see :func:`to_pulp`) and keep its parts.

    Parameters
    ----------
    model : PlanningModel
    names : {"readable", "index"}
        Domain-key names (:func:`pulp_names`) or ``x<col>`` / ``c<row>``.
    relax_integers : bool
        Make integer columns continuous.

    Returns
    -------
    PulpBuild
    """
    nm = pulp_names(model) if names == "readable" else None
    if nm is not None:
        vnames = nm.variables["name"].tolist()
        cnames = nm.constraints["name"].tolist()
    else:
        vnames = [f"x{j}" for j in range(model.n_variables)]
        cnames = [f"c{i}" for i in range(model.n_constraints)]
    prob = pulp.LpProblem("capacity_plan", pulp.LpMinimize)
    var = model.variables
    lb = column_values(var, "lb", dtype=float)
    ub = column_values(var, "ub", dtype=float)
    is_int = column_values(var, "integer", dtype=bool) & (not relax_integers)
    xs = [
        prob.add_variable(
            vnames[j],
            lowBound=float(lb[j]),
            upBound=float(ub[j]) if np.isfinite(ub[j]) else None,
            cat=pulp.LpInteger if is_int[j] else pulp.LpContinuous,
        )
        for j in range(len(var))
    ]
    cost = column_values(var, "cost", dtype=float)
    prob.setObjective(
        pulp.LpAffineExpression(
            [(xs[j], float(cost[j])) for j in np.flatnonzero(cost)],
            constant=model.objective_constant,
        )
    )
    mat = model.matrix
    rhs = column_values(model.constraints, "rhs", dtype=float)
    sense = column_values(model.constraints, "sense")
    indptr, indices, data = mat.indptr, mat.indices, mat.data
    cons = []
    for i in range(mat.shape[0]):
        a, z = indptr[i], indptr[i + 1]
        expr = pulp.LpAffineExpression(
            [(xs[j], float(v)) for j, v in zip(indices[a:z], data[a:z], strict=True)]
        )
        c = pulp.LpConstraint(expr, _SENSE[sense[i]], name=cnames[i], rhs=float(rhs[i]))
        prob.addConstraint(c)
        cons.append(c)
    return PulpBuild(prob, xs, cons, nm)


def to_pulp(
    model: PlanningModel, *, names: NameStyle = "readable", relax_integers: bool = False
) -> tuple[pulp.LpProblem, list[pulp.LpVariable]]:
    """Build the PuLP problem of a model.

    Parameters
    ----------
    model : PlanningModel
        The model.
    names : {"readable", "index"}
        ``"readable"``: names from the domain keys (``build(new_carlisle,2027Q2)``,
        ``site_grid(west_texas,2026Q3)``; :func:`pulp_names` maps them back);
        ``"index"``: ``x<col>`` / ``c<row>`` (fastest).
    relax_integers : bool
        Make integer columns continuous.

    Returns
    -------
    (LpProblem, list of LpVariable)
        The problem and its variables in column order. The objective constant
        (initial fleet energy) is part of the objective expression.
    """
    b = build_pulp(model, names=names, relax_integers=relax_integers)
    return b.prob, b.variables


def write_problem(
    model: PlanningModel,
    *,
    lp: str | Path | None = None,
    mps: str | Path | None = None,
    relax_integers: bool = False,
) -> PulpNames:
    """Write the model with readable names as a CPLEX LP and/or a free MPS file.

    Parameters
    ----------
    model : PlanningModel
    lp, mps : path-like, optional
        Files to write (parent folders are created).
    relax_integers : bool
        Write integer columns as continuous.

    Returns
    -------
    PulpNames
        The names written and their keys.

    Notes
    -----
    PuLP drops the objective's constant (initial fleet energy, USD) when it writes
    LP and MPS files, so it is written as a column ``objective_constant`` fixed at 1
    whose cost is the constant: any solver reading the file back reports the same
    objective in USD as :func:`optimizer.plan.pipeline.solve`.
    """
    b = build_pulp(model, names="readable", relax_integers=relax_integers)
    const = float(b.prob.objective.constant or 0.0)
    if const != 0.0:
        one = b.prob.add_variable("objective_constant", lowBound=1.0, upBound=1.0)
        b.prob.objective.addterm(one, const)
        b.prob.objective.constant = 0.0
    for path, write in ((lp, b.prob.writeLP), (mps, b.prob.writeMPS)):
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            write(str(path))
    assert b.names is not None
    return b.names
