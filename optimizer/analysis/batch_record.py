"""Recording each finished case: its tables, then its manifest entry under the folder lock.

A case is recorded ``state: "done"`` only when its written files re-read and verify
(:func:`optimizer.analysis.batch_resume.verify_or_fail`) and it has a plan; an
infeasible case is written with its explanation table, recorded ``no_plan`` and
counted as failed; a case without a result (an exception, a worker killed, invalid
data) is recorded ``failed`` with its error, its folder removed (an earlier run's plan
would read as current), and the batch goes on.

The write (staging folder moved in), its check and the manifest entry happen while
the folder's lock is held: a second batch writing the same case into the folder
cannot swap its folder in between, so a check never reads another writer's files
(a false "does not verify") and an entry never vouches for them. Each entry carries
the ``dataset_hash`` and ``tables_hash`` of the base data the sweep applies its cases to
(and its solve ``options``), so a folder whose cases come from different data or options
(an interrupted re-run after an edit, or with another objective) is told apart; and the
``solved_dataset_hash`` and ``solved_tables_hash`` of the data the case itself was solved
on (its overrides applied), as its Parquet files' metadata and its ``inputs.yaml`` record.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from capacity.recorded_inputs import INPUTS_FILE
from capacity.scenario_spec import Override
from capacity.validation import Finding
from optimizer.analysis.batch_case import CaseResult
from optimizer.analysis.batch_folder import BATCH_MANIFEST, folder_lock, merge_case, sweep_id
from optimizer.analysis.batch_invalid import INVALID_DATA, finding_text
from optimizer.analysis.batch_progress import BatchProgress
from optimizer.analysis.batch_resume import NO_PLAN, verify_or_fail
from optimizer.analysis.sweep import format_level
from optimizer.analysis.sweep_cases import SweepCase
from optimizer.output.inputs_record import SolvedInputs, solve_flags
from optimizer.output.summary import OK_STATUSES

__all__ = ["BatchRecorder", "iso_now"]


def iso_now() -> str:
    """Return the time now in UTC as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class BatchRecorder:
    """Writes each finished case (tables, then its manifest entry) and counts them."""

    def __init__(
        self,
        out: Path,
        manifest: dict[str, Any],
        keys: Mapping[str, str],
        on_case: Callable[[CaseResult], None] | None,
        solve_doc: Mapping[str, Any] | None = None,
        base: Any = None,
        data_keys: Mapping[str, str] | None = None,
    ) -> None:
        self.out = out
        self.data_keys = dict(data_keys or {})  # per case: its tables and scenario's overrides
        # the base data every case is solved from, its tables alone, its named scenarios
        self.dataset_hash = str(getattr(base, "hash", ""))
        self.tables_hash = str(getattr(base, "tables_hash", ""))
        self.scenarios = dict(getattr(base, "scenarios", {}) or {})
        self.solve_doc = dict(solve_doc or {})
        self.manifest = manifest
        self.manifest_path = out / BATCH_MANIFEST
        self.keys = keys
        self.sweep = sweep_id(keys)
        self.on_case = on_case
        self.counts = {"done": 0, "failed": 0}

    def record(
        self,
        case: SweepCase,
        cr: CaseResult,
        bar: BatchProgress | None,
        *,
        retried: bool,
        findings: Sequence[Finding] = (),
    ) -> None:
        """Write a case's tables and manifest entry; advance the bar; call ``on_case``."""
        entry: dict[str, Any] = {
            "key": self.keys[case.name],
            "sweep": self.sweep,
            "kind": case.kind,
            "base": case.base,
            "params": dict(case.params),
            "options": (
                self.solve_doc
                if case.objective is None
                else {**self.solve_doc, "objective": case.objective}
            ),
            "own_objective": case.objective is not None,  # an objective axis or scenario
            "dataset_hash": self.dataset_hash,
            "tables_hash": self.tables_hash,
            # the tables and the starting scenario's overrides (the key's data)
            "data_key": self.data_keys.get(case.name, ""),
            "finished_utc": iso_now(),
            "retried": retried,
        }
        with folder_lock(self.out):  # write, check and entry: no other writer between
            self._write_and_enter(case, cr, entry, findings)
        ok = entry["state"] == "done" and cr.status in OK_STATUSES
        self.counts["done" if ok else "failed"] += 1
        if bar is not None:
            bar.advance(ok, last=case.name)
        if self.on_case is not None:
            self.on_case(cr)

    def _write_and_enter(
        self,
        case: SweepCase,
        cr: CaseResult,
        entry: dict[str, Any],
        findings: Sequence[Finding],
    ) -> None:
        """Write the case's files, check them and merge its entry (caller holds the lock)."""
        if cr.result is not None:
            entry.update(self._write_tables(case, cr, entry))
        else:
            entry["state"] = "failed"
        entry.update(
            status=cr.status,
            objective_usd=cr.objective_usd,
            time_s=round(cr.elapsed_s, 4),
            reused_model=cr.reused,
            error=entry.get("error") or cr.error,
            outcomes=cr.outcomes,
        )
        if findings:
            entry["findings"] = [dataclasses.asdict(f) for f in findings]
        if entry["state"] == "done":
            verify_or_fail(self.out, case.name, entry)
        if entry["state"] == "done" and cr.status not in OK_STATUSES:
            entry["state"] = NO_PLAN  # written and verified, but no plan: redone by a re-run
        if entry["state"] == "failed":
            _drop_case_folder(self.out, case.name)
        # merged under the folder's lock: entries of concurrent batches are kept
        self.manifest = merge_case(self.out, case.name, entry, iso_now())

    def record_invalid(self, case: SweepCase, found: Sequence[Finding]) -> None:
        """Record a case whose data does not validate (not solved) with its findings."""
        text = "\n".join(finding_text(f) for f in found)
        cr = CaseResult(case.name, self.keys[case.name], INVALID_DATA, None, None, error=text)
        self.record(case, cr, None, retried=False, findings=found)

    def _write_tables(
        self, case: SweepCase, cr: CaseResult, entry: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Write the tables of a solved case; the entry fields ``state``, ``files``/``error``."""
        from optimizer.output.report import file_metadata, write_scenario_folder
        from optimizer.output.run_folder import scenario_dir

        sdir = scenario_dir(self.out, case.name)
        merge_case(self.out, case.name, {**entry, "state": "writing"}, iso_now())
        inputs = self._inputs(case, cr)
        try:
            meta = file_metadata(cr.result, scenario=case.name, run_id=self.out.name)
            written = write_scenario_folder(cr.result, sdir, meta, inputs, self.out)
        except Exception as exc:  # noqa: BLE001 - recorded; the batch goes on
            return {"state": "failed", "error": f"writing the case's files: {exc}"}
        files = sorted(p.relative_to(self.out).as_posix() for p in written.values())
        flags = solve_flags(cr.result)
        fields = {**inputs.manifest_fields(self.out, sdir / INPUTS_FILE), "solve_flags": flags}
        # the case's own data (its files' dataset_hash); dataset_hash is the base data's
        solved = {
            "solved_dataset_hash": inputs.dataset_hash,
            "solved_tables_hash": inputs.tables_hash,
        }
        return {"state": "done", "files": files, "inputs": fields, **solved}

    def _inputs(self, case: SweepCase, cr: CaseResult) -> SolvedInputs:
        """Return a case's solved inputs: its base scenario's overrides, then its own."""
        named = self.scenarios.get(case.base) if case.base else None
        own = tuple(named.overrides) if named is not None else ()
        return SolvedInputs(
            scenario=case.name,
            overrides=own + sourced_case_overrides(case),
            description=f"{case.kind} case of a sweep, on {case.base or 'the base data'}",
            dataset_name=str(getattr(cr.result, "dataset_name", "") or ""),
            dataset_hash=str(getattr(cr.result, "dataset_hash", "") or ""),
            tables_hash=str(getattr(cr.result, "tables_hash", "") or ""),
        )


def _drop_case_folder(out: Path, name: str) -> None:
    """Remove a failed case's folder: an earlier run's plan, or files that did not verify.

    A case whose re-run failed (its data invalid now, its solve raised, its files not
    written or not verified) kept the earlier run's folder, which a glob over
    ``scenario=*`` read as current beside the manifest's ``failed``.
    """
    import shutil

    from optimizer.output.run_folder import scenario_dir

    sdir = scenario_dir(out, name)
    if sdir.is_dir():
        shutil.rmtree(sdir, ignore_errors=True)


def sourced_case_overrides(case: SweepCase) -> tuple[Override, ...]:
    """Return a case's overrides, each without a ``source`` given the sweep's as its source.

    A sweep's axis or Monte Carlo template usually carries no ``source`` (the sweep file
    is the source), so the recorded ``inputs.yaml`` names it: ``assumption: sweep grid
    case grid_cowos-0.6 (cowos=0.6)``. Re-solving the record then warns of nothing the
    tool wrote itself; an override that has a source keeps it.

    Parameters
    ----------
    case : SweepCase
        The case whose ``overrides`` and ``params`` (parameter name to level) are read.

    Returns
    -------
    tuple of Override
        In the case's order.
    """
    levels = ", ".join(f"{k}={format_level(v)}" for k, v in case.params.items())
    text = f"assumption: sweep {case.kind.replace('_', ' ')} case {case.name}"
    source = f"{text} ({levels})" if levels else text
    return tuple(o if o.source else o.model_copy(update={"source": source}) for o in case.overrides)
