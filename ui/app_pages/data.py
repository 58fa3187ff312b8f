"""Data page: every input table editable in place, validation next to it, upload/download."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from capacity.dataset import Dataset
from capacity.limits import MAX_TRANSPORT_MB, MAX_UPLOAD_MB
from capacity.schema import SPECS, TABLE_NAMES
from capacity.validation import DataValidationError, Finding
from ui.compose import scenario_fallback_text
from ui.dataio import (
    column_config,
    dataset_zip_bytes,
    editor_frame,
    editor_view,
    frames_equal,
    from_editor,
)
from ui.findings_view import (
    ROW_NUMBERING,
    edits_left_out_text,
    errors_by_file,
    findings_column_config,
    findings_for_table,
    findings_table,
    highlight_rows,
    knock_on_summary,
    order_findings,
    show_findings,
    table_of_file,
)
from ui.formats import MISSING, error_text
from ui.state import (
    discard_drafts,
    editor_key,
    flash,
    new_editors,
    revalidate_drafts,
    scenario_label,
    set_dataset,
    show_flash,
    submit_draft,
    table_findings,
)
from ui.upload import (
    REFUSED_WHOLE,
    UploadedFile,
    UploadError,
    check_upload_sizes,
    release_memory,
    upload_dataset,
)

ss = st.session_state


def _zip_of(ds: Dataset) -> bytes:
    memo = ss.get("_zip_memo")
    if memo is None or memo[0] != ds.hash:
        memo = (ds.hash, dataset_zip_bytes(ds))
        ss["_zip_memo"] = memo
    return memo[1]


st.title("Data")
show_flash()


# ---------------------------------------------------------------- upload / download
def carry_pending(pending: dict[str, pd.DataFrame], kept: tuple[str, ...]) -> str:
    """Keep the edits that did not validate yet of the tables an upload kept; say so.

    Valid edits are part of the data the upload merged into; edits that did not
    validate were not, and set_dataset starts the drafts over. Those of a table the
    upload kept are put back (and validated against the new data); those of a table
    it replaced are gone, and the message says which. Returns the message's addition.
    """
    carried = {t: f for t, f in pending.items() if t in kept}
    replaced = sorted(set(pending) - set(carried))
    notes = []
    if carried:
        ss["drafts"] = carried
        valid = revalidate_drafts()
        notes.append(
            f"Your edits of {', '.join(sorted(carried))} are kept"
            + (
                " and now validate."
                if valid
                else " and still do not validate: see the findings beside the editor."
            )
        )
    if replaced:
        notes.append(
            f"Your edits of {', '.join(replaced)}, which did not validate, were replaced by "
            "the uploaded tables."
        )
    return "\n\n" + " ".join(notes) if notes else ""


with st.expander("Upload or download the dataset", expanded=ss["base_ds"] is None):
    st.caption(
        f"Upload one **.zip** of a whole dataset (every required table as `<table>.csv` or "
        f"`<table>.parquet`, optional tables, optional `scenarios.yaml`), or single tables "
        f"named `<table>.csv` / `<table>.parquet` that replace only those tables. "
        f"**Limit {MAX_UPLOAD_MB} MB per file**: one larger file refuses the whole upload. "
        f"The uploader's own {MAX_TRANSPORT_MB} MB is what the browser carries: a file over "
        f"{MAX_TRANSPORT_MB} MB is marked in red in the list and **never reaches the app**, "
        "which cannot tell it was chosen, so remove it before loading and compare the files "
        "received (below) with the files you chose."
    )
    uploads = st.file_uploader(
        "Dataset files",
        type=["zip", "csv", "parquet"],
        accept_multiple_files=True,
        key="upload_files",
        max_upload_size=MAX_TRANSPORT_MB,
    )
    if uploads:
        st.caption(
            f"Received by the app ({len(uploads)} file(s)): "
            + ", ".join(f"`{u.name}` ({u.size / 1024 / 1024:.1f} MB)" for u in uploads)
        )
    if st.button("Load uploaded files", key="upload_load", disabled=not uploads):
        files: list[UploadedFile] = []
        try:
            check_upload_sizes((u.name, u.size) for u in uploads or [])  # before reading any
            files = [UploadedFile(u.name, u.getvalue()) for u in uploads or []]
            report = upload_dataset(files, ss["base_ds"])
        except UploadError as e:
            ss["upload_error"] = (str(e), [])
        except DataValidationError as e:
            ss["upload_error"] = (
                f"The upload has {len(e.errors)} error(s) ({errors_by_file(e.findings)}). "
                + REFUSED_WHOLE,
                list(e.findings),
            )
        except Exception as e:  # noqa: BLE001 - no traceback on the page
            ss["upload_error"] = (f"The upload could not be read: {error_text(e)}", [])
        else:
            ss["upload_error"] = None
            pending = dict(ss["drafts"]) if ss["draft_findings"] else {}  # not in base_ds
            set_dataset(report.dataset)
            flash("success", report.message() + carry_pending(pending, report.kept))
            st.rerun()
        finally:
            files = []
            release_memory()  # the parsed upload's pages go back to the system
    err = ss.get("upload_error")
    if err:
        st.error(err[0] if REFUSED_WHOLE in err[0] else f"{err[0]} {REFUSED_WHOLE}")
        if err[1]:
            show_findings(err[1])
    base = ss["base_ds"]
    if base is not None:
        left_out = edits_left_out_text(ss["draft_findings"], "this zip holds")
        if left_out:
            st.caption(left_out)
        st.download_button(
            "Download the current dataset (zip of CSVs)",
            data=_zip_of(base),
            file_name=f"{base.name or 'dataset'}.zip",
            mime="application/zip",
            key="dataset_download",
        )

if ss["base_ds"] is None:
    st.error(ss.get("load_error") or "No dataset loaded.")
    if ss.get("load_findings"):
        show_findings(ss["load_findings"])
    st.info("Upload a dataset above to start.")
    st.stop()

origin = ss["origin_ds"]
base = ss["base_ds"]

# ------------------------------------------------------------------ status line
c1, c2, c3 = st.columns([3, 2, 1])
c1.markdown(
    f"**{base.name}** · {len(base.periods)} periods "
    f"({base.periods[0]} – {base.periods[-1]}) · hash `{base.hash[:12]}`"
)
status_box = c2.empty()
fallback = scenario_fallback_text(
    scenario_label(ss["scenario_name"], ss["overrides"]), ss.get("scenario_error")
)
if fallback:
    st.warning(fallback)
if c3.button("Discard edits", disabled=not ss["drafts"], key="discard_edits"):
    discard_drafts()
    flash("info", "Edits discarded: back to the data as loaded.")
    st.rerun()

# ------------------------------------------------------------------ table editor
table = st.selectbox("Table", TABLE_NAMES, key="data_table", persist_state="session")
spec = SPECS[table]
st.caption(spec.description + f" Key: {', '.join(spec.key)}.")

if ss.get("page_before") not in (None, ss.get("page_now")):
    new_editors()  # back from another page: the editors start from the drafts
key = editor_key(table)
src = ss["editor_src"]
loaded = editor_frame(origin, table)  # the table as loaded: its dtypes
previous = ss["drafts"].get(table, loaded)
if key not in ss or table not in src:
    # a fresh editor (first visit, or back from another page/table) starts from the draft
    # numbers as text: the grid's number cells filtered what was typed (ui.dataio)
    src[table] = editor_view(previous, table)
edited = from_editor(
    st.data_editor(
        src[table],
        key=key,
        num_rows="dynamic",
        column_config=column_config(table),
        hide_index=False,
        width="stretch",
    ),
    table,
    loaded,
)
if not frames_equal(edited, previous):
    submit_draft(table, edited)
    st.rerun()  # redraw the sidebar and status from the new data; the editor keeps its state

all_findings = table_findings()
edited_tables = sorted(ss["drafts"])
if ss["draft_findings"]:
    n = sum(f.severity == "error" for f in ss["draft_findings"])
    status_box.error(
        f"Edits have {n} error(s) ({errors_by_file(ss['draft_findings'])}); the last valid "
        "data stays active."
    )
elif ss["drafts"]:
    status_box.success(f"Edits are valid and active ({', '.join(edited_tables)}).")


def _findings_frame(fs: list[Finding], labels: list[object] | None = None) -> None:
    st.dataframe(
        findings_table(fs, labels),
        hide_index=True,
        width="stretch",
        column_config=findings_column_config(),
        placeholder=MISSING,  # a whole-file finding has no row: "–", never "None"
    )


# the selected table first, then the other edited tables, then the knock-on findings
fs = findings_for_table(all_findings, table)
if not fs and ss["draft_findings"]:
    st.info(f"No findings in {spec.filename} itself; the errors are in other tables (below).")
elif not fs:
    st.success(f"No findings for {spec.filename}.")
else:
    n_err = sum(f.severity == "error" for f in fs)
    (st.error if n_err else st.warning)(
        f"{n_err} error(s), {len(fs) - n_err} warning(s) in {spec.filename}."
    )
    _findings_frame(order_findings(fs), list(edited.index))  # the labels the editor shows
    st.caption(ROW_NUMBERING)
    rowed = [f for f in fs if f.row is not None and f.row >= 2]
    frame = edited  # the draft's rows in order, with the editor's index labels
    if rowed:
        st.caption("Rows with findings, by editor index (bad cells highlighted):")
        st.dataframe(highlight_rows(frame, rowed), width="stretch")

others = [f for f in all_findings if table_of_file(f.file) != table]
if others:
    first = [t for t in edited_tables if t != table]
    for t in first:
        ft = findings_for_table(others, t)
        if ft:
            n_err = sum(f.severity == "error" for f in ft)
            st.markdown(
                f"**{t}** (edited): {n_err} error(s), {len(ft) - n_err} warning(s). "
                "Select it above to edit it."
            )
            _findings_frame(order_findings(ft))
    rest = [f for f in others if table_of_file(f.file) not in first]
    lines, covered = knock_on_summary(rest, edited=[table, *first])
    if lines:
        st.error(
            f"{covered} knock-on error(s) in other tables (fix the edit, or edit those "
            "rows):\n" + "\n".join(f"- {line}" for line in lines)
        )
    counts: dict[str, list[int]] = {}
    for f in rest:
        counts.setdefault(table_of_file(f.file), [0, 0])[f.severity != "error"] += 1
    if counts:
        st.caption(
            "Other tables: "
            + "; ".join(
                f"**{t}** {e} error(s), {w} warning(s)" for t, (e, w) in sorted(counts.items())
            )
        )
        with st.expander(f"All {len(rest)} finding(s) in other tables", expanded=False):
            _findings_frame(order_findings(rest))
