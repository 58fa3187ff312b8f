"""What reading a report folder back warns of: unfinished, mixed or missing scenarios.

:func:`~optimizer.notebook.plan.read_report` and :func:`~optimizer.notebook.plan.read_run`
read the files as they are; these checks compare them with the manifests beside them
(the run's ``manifest.json``, a batch's ``batch_manifest.json``) and warn where the
folder holds something other than one finished run's plans.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from optimizer.analysis.batch_folder import BATCH_MANIFEST
from optimizer.output.manifest import MANIFEST_NAME
from optimizer.output.run_folder import scenario_dir, unfinished_note

__all__ = [
    "warn_if_done_missing",
    "warn_if_mixed_data",
    "warn_if_not_recorded_data",
    "warn_if_run_unfinished",
    "warn_if_unfinished",
]


#: The manifest beside a scenario folder, and the state it gives a finished scenario.
_FINISHED = ((MANIFEST_NAME, "complete"), (BATCH_MANIFEST, "done"))


def _warn(text: str) -> None:
    """Warn the reader of a report folder: at the line that called read_report or read_run."""
    warnings.warn(text, UserWarning, stacklevel=4)


def warn_if_unfinished(folder: Path, name: str) -> None:
    """Warn when the run's or batch's manifest does not call scenario ``name`` finished.

    The folder may then hold an earlier write's files (its re-solve failed or was
    interrupted) or files no manifest vouches for: read as they are, they are a stale
    plan. A folder with neither manifest beside it (copied out) is read without a word.
    """
    for manifest, finished in _FINISHED:
        path = folder.parent / manifest
        if not path.is_file():
            continue
        try:
            entry = json.loads(path.read_text(encoding="utf-8")).get("scenarios", {}).get(name)
        except (OSError, ValueError, AttributeError):
            entry = {"state": "unreadable"}
        if entry is not None and not isinstance(entry, dict):  # hand-edited: "complete"
            entry = {"state": f"unreadable ({entry!r})"}
        state = "no entry" if not entry else f"state {entry.get('state')!r}"
        if not entry or entry.get("state") != finished:
            _warn(
                f"{folder}: {manifest} records {state} for scenario {name!r}, not "
                f"{finished!r}; these files may be an earlier or unfinished write's. "
                "Re-run the solve or batch to write it again.",
            )
        return


def _batch_entries(path: Path) -> dict[str, Any] | None:
    """Return the scenario entries of the batch manifest in ``path`` (None: unreadable)."""
    try:
        entries = json.loads((path / BATCH_MANIFEST).read_text(encoding="utf-8"))["scenarios"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return entries if isinstance(entries, dict) else None


def warn_if_mixed_data(path: Path, names: Sequence[str]) -> None:
    """Warn when a batch folder's cases were solved on different data or options.

    An interrupted re-run after a data edit (or with another objective) leaves the
    cases it had not reached as the earlier run's plans, each still ``done``: read
    together they compare plans of two datasets, or of cost and margin objectives, as
    if of one. The batch manifest records each case's data (``tables_hash``, the tables
    alone, so an unrelated scenario added to scenarios.yaml is the same data; every
    entry is compared by ``dataset_hash`` when one was written before it), its solve
    ``options`` (the time limit left out: a re-run keeps optimal plans whatever the limit;
    the objective left out of a case that names its own, as an objective
    axis does: that is the sweep's design); a case entry without them counts as its
    own, unknown, data.
    """
    entries = _batch_entries(path)
    if entries is None:
        return
    done = {
        n: e for n in names if isinstance(e := entries.get(n), dict) and e.get("state") == "done"
    }
    # one kind of hash for every entry: an entry written before tables_hash has only the other
    field = "tables_hash" if all(e.get("tables_hash") for e in done.values()) else "dataset_hash"
    # the objective of the cases that do not name their own: one run has one
    plain = {
        (e.get("options") or {}).get("objective")
        for e in done.values()
        if not e.get("own_objective")
    }
    groups: dict[tuple[str, str], list[str]] = {}
    for name, entry in done.items():
        data = str(entry.get(field) or "unrecorded")
        options = dict(entry.get("options") or {})
        options.pop("time_limit_s", None)  # not the plan's problem: a re-run keeps optima
        if entry.get("own_objective"):  # an objective axis: the sweep's design, not a mix-up
            options.pop("objective", None)
            if len(plain) == 1 and None not in plain:  # as the run's other cases
                options["objective"] = next(iter(plain))
        groups.setdefault((data, json.dumps(options, sort_keys=True)), []).append(name)
    if len(groups) > 1:
        parts = "; ".join(
            f"data {d[:12]}, options {o}: {', '.join(n)}" for (d, o), n in sorted(groups.items())
        )
        _warn(
            f"{path}: the cases of this batch folder were solved on different data or "
            f"options ({parts}); they are not plans of one run. Re-run the batch to "
            "solve every case on the current data and options.",
        )
        return
    _warn_if_scenario_edited(path, done)


def _warn_if_scenario_edited(path: Path, done: dict[str, Any]) -> None:
    """Warn when cases that start from one scenario were solved on two of its versions.

    An interrupted re-run after an edit of a scenario's overrides (the tables the same)
    left the cases it had not reached as the old scenario's plans, each ``done``: the
    entries' ``data_key`` (the tables and the starting scenario's overrides) differ.
    """
    by_base: dict[str, dict[str, list[str]]] = {}
    for name, entry in done.items():
        if entry.get("data_key"):
            base = str(entry.get("base") or "base")
            by_base.setdefault(base, {}).setdefault(entry["data_key"], []).append(name)
    mixed = {b: v for b, v in by_base.items() if len(v) > 1}
    if mixed:
        parts = "; ".join(
            f"{b}: " + " / ".join(", ".join(sorted(n)) for n in v.values())
            for b, v in sorted(mixed.items())
        )
        _warn(
            f"{path}: cases that start from one scenario were solved on different versions "
            f"of its overrides ({parts}); they are not plans of one run. Re-run the batch "
            "to solve every case on the current scenarios.",
        )


def warn_if_done_missing(path: Path, names: Sequence[str]) -> None:
    """Warn when the batch manifest records cases as done whose folders are gone.

    A case folder deleted after its case was recorded (by hand, or by another process
    while the batch ran) left read_run with fewer plans than the manifest's done
    count, without a word.
    """
    entries = _batch_entries(path) or {}
    here = set(names)
    gone = sorted(
        n
        for n, e in entries.items()
        if isinstance(e, dict) and e.get("state") == "done" and n not in here
    )
    if gone:
        _warn(
            f"{path}: the batch manifest records {len(gone)} case(s) as done whose folders "
            f"are missing ({', '.join(gone[:10])}{', ...' if len(gone) > 10 else ''}); "
            "re-run the batch to solve them again.",
        )


def _footer_dataset(folder: Path) -> str:
    """Return the ``dataset_hash`` in ``summary.parquet``'s footer ("" when unreadable)."""
    import pyarrow.parquet as pq

    try:
        meta = pq.read_schema(folder / "summary.parquet").metadata or {}
    except (OSError, ValueError):
        return ""
    return meta.get(b"dataset_hash", b"").decode()


def warn_if_not_recorded_data(path: Path, names: Sequence[str]) -> None:
    """Warn when a case folder holds a plan of other data than its manifest entry records.

    The batch manifest records the data each case was solved on (``solved_dataset_hash``);
    a case folder replaced by a solve of other data, or by the same case of another batch
    folder, read as the recorded plan without a word (its costs within 1e-6 of the
    recorded objective).
    """
    entries = _batch_entries(path) or {}
    bad = []
    for n in names:
        e = entries.get(n)
        if not isinstance(e, dict) or e.get("state") != "done":
            continue
        want = e.get("solved_dataset_hash")
        if not want:
            continue
        got = _footer_dataset(scenario_dir(path, n))
        if got and got != want:
            bad.append(f"{n} (tables of data {got[:12]}, solved on {str(want)[:12]})")
    if bad:
        _warn(
            f"{path}: {len(bad)} case folder(s) hold a plan of other data than the batch "
            f"recorded: {', '.join(bad[:10])}{', ...' if len(bad) > 10 else ''}; a folder "
            "copied from another run. Re-run the batch to solve them again.",
        )


def warn_if_run_unfinished(run_dir: Path, names: Sequence[str]) -> None:
    """Warn when the run folder's writer has not finished it (or died part way)."""
    note = unfinished_note(run_dir, names)
    if note:
        _warn(
            f"{note}. Re-run the command that wrote it to have every scenario.",
        )
