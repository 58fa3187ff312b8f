"""Findings as the pages show them: both row numberings, grouping by table, knock-on errors."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath
from typing import Any

import pandas as pd

from capacity.schema import SPECS, TABLE_NAMES
from capacity.validation import Finding

ROW_LABEL = "row (file; header = 1)"
"""Header of the findings' ``row`` column: the spreadsheet row the messages use."""

EDITOR_ROW_LABEL = "editor index"
"""Header of the findings' ``editor_row`` column: the index shown left of the editor."""

FILE_ROWS = (
    "Rows are numbered as in the file, like the messages: the header is row 1, the first "
    "data row is row 2."
)
"""Caption of a findings table about uploaded or loaded files."""

ROW_NUMBERING = (
    FILE_ROWS + " The editor's index on the left counts from 0 as the table was loaded (file "
    "row N is editor index N − 2); after a row is deleted the other rows keep their index, "
    "and the findings give the index the editor shows. A row added in the editor has no "
    "index there yet: the findings number it after the table's last index."
)
"""Caption explaining the two row numberings next to a findings table."""


def table_of_file(file: object) -> str:
    """Return the table a finding's file names (``sites.csv`` -> ``sites``)."""
    return PurePosixPath(str(file)).stem


def findings_for_table(findings: Iterable[Finding], table: str) -> list[Finding]:
    """Return the findings about one table's file (``sites.csv``, ``sites.parquet`` ...)."""
    return [f for f in findings if table_of_file(f.file) == table]


def _editor_label(row: int | None, labels: Sequence[Any] | None) -> Any:
    """Return the editor's index label of spreadsheet row ``row`` (None: header or none)."""
    if row is None or row < 2:
        return None
    if labels is None:
        return row - 2
    return labels[row - 2] if row - 2 < len(labels) else None


def findings_table(
    findings: Iterable[Finding], labels: Sequence[Any] | None = None
) -> pd.DataFrame:
    """Return findings as a frame: file, severity, row, editor_row, column, value, message.

    ``file`` names the table's file (``sites.csv``); ``row`` is the spreadsheet row the
    messages use (header = 1, first data row = 2); ``editor_row`` is the index the
    editor shows left of that row: ``labels[row - 2]`` when the editor's index labels
    are given (after a row is deleted the editor keeps the other rows' labels: the
    second row of the table may be labelled 1 or 5), else ``row - 2``; missing for the
    header row 1 and for a whole-file finding, which has no ``row`` either. Show the
    frame with :func:`findings_column_config` so the headers say which numbering is
    which.
    """
    rows = []
    for f in findings:
        rows.append(
            {
                "file": str(f.file),
                "severity": f.severity,
                "row": f.row,
                "editor_row": _editor_label(f.row, labels),
                "column": f.column or "",
                "value": "" if f.value is None else str(f.value),
                "message": f.message,
            }
        )
    df = pd.DataFrame(
        rows, columns=["file", "severity", "row", "editor_row", "column", "value", "message"]
    )
    df["row"] = df["row"].astype("Int64")
    df["editor_row"] = df["editor_row"].astype("Int64")
    return df


def findings_column_config() -> dict[str, Any]:
    """Column config of :func:`findings_table`: headers that name the row numbering."""
    import streamlit as st

    return {
        "file": st.column_config.TextColumn("file (table)"),
        "row": st.column_config.NumberColumn(ROW_LABEL, format="%d"),
        "editor_row": st.column_config.NumberColumn(EDITOR_ROW_LABEL, format="%d"),
    }


def order_findings(findings: Iterable[Finding], first: Sequence[str] = ()) -> list[Finding]:
    """Group findings by table: the tables in ``first`` in that order, then schema order.

    Within a table, errors come before warnings and the file order is kept.
    """
    rank = {t: i for i, t in enumerate(first)}
    n = len(rank)
    schema = {t: n + i for i, t in enumerate(TABLE_NAMES)}

    def key(item: tuple[int, Finding]) -> tuple[int, int, int]:
        i, f = item
        t = table_of_file(f.file)
        return (rank.get(t, schema.get(t, n + len(schema))), f.severity != "error", i)

    return [f for _, f in sorted(enumerate(findings), key=key)]


def errors_by_file(findings: Iterable[Finding]) -> str:
    """Where the errors are: ``"2 in sites.csv, 1 in demand.csv"`` (most first); ``""`` if none."""
    counts: dict[str, int] = {}
    for f in findings:
        if f.severity == "error":
            counts[str(f.file)] = counts.get(str(f.file), 0) + 1
    return ", ".join(f"{n} in {file}" for file, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def edits_left_out_text(findings: Iterable[Finding], what: str) -> str:
    """Say that ``what`` uses the last valid data, without the edits that have errors.

    ``""`` when no finding is an error. The download and the Plan page used that data
    without a word (only the sidebar said so).
    """
    where = errors_by_file(findings)
    if not where:
        return ""
    return (
        f"The edits have errors ({where}): {what} the last valid data, without those "
        "edits. Fix them on the Data page (they are kept there), or discard them."
    )


def _reference_of(f: Finding) -> tuple[str, str] | None:
    """``(table, column)`` a finding's column refers to, when it is an unknown reference."""
    spec = SPECS.get(table_of_file(f.file))
    if spec is None or f.severity != "error" or f.value is None:
        return None
    col = next((c for c in spec.columns if c.name == f.column), None)
    if col is None or col.references is None or not f.message.startswith("unknown "):
        return None
    return col.references


KNOCK_ON_LISTED = 5
"""Most errors of other tables that :func:`knock_on_summary` quotes one by one."""


def knock_on_summary(findings: Iterable[Finding], edited: Iterable[str]) -> tuple[list[str], int]:
    """Summarise the errors an edit caused in other tables.

    Renaming or deleting a key (a site, a chip ...) makes every row of another table
    that still names the old key fail. Those rows are counted per missing key instead
    of listed one by one; other errors of other tables (e.g. a renamed site with no
    grid rows) are quoted, at most :data:`KNOCK_ON_LISTED` of them.

    Parameters
    ----------
    findings : iterable of Finding
        The findings of one validation.
    edited : iterable of str
        Tables the user edited; their own findings are never summarised.

    Returns
    -------
    (list of str, int)
        Sentences, e.g. ``"51 rows in site_grid, site_water refer to site 'old_name',
        which is not in sites."`` (largest group first) then ``"site_grid.csv: site
        'new' has no grid row ..."``; and the number of errors the sentences cover.
    """
    mine = set(edited)
    groups: dict[tuple[str, str, str], tuple[int, list[str]]] = {}
    quoted: list[Finding] = []
    for f in findings:
        t = table_of_file(f.file)
        if t in mine or f.severity != "error":
            continue
        ref = _reference_of(f)
        if ref is None:
            quoted.append(f)
            continue
        n, tables = groups.get((ref[0], ref[1], str(f.value)), (0, []))
        groups[(ref[0], ref[1], str(f.value))] = (n + 1, tables if t in tables else [*tables, t])
    lines = [
        f"{n} row{'s' if n != 1 else ''} in {', '.join(tables)} refer{'' if n != 1 else 's'} "
        f"to {rc} {v!r}, which is not in {rt}."
        for (rt, rc, v), (n, tables) in sorted(groups.items(), key=lambda kv: -kv[1][0])
    ]
    lines += [f"{f.file}: {f.message}" for f in quoted[:KNOCK_ON_LISTED]]
    if len(quoted) > KNOCK_ON_LISTED:
        lines.append(f"… and {len(quoted) - KNOCK_ON_LISTED} more error(s) in other tables.")
    return lines, sum(n for n, _ in groups.values()) + len(quoted)


def highlight_rows(frame: pd.DataFrame, findings: Sequence[Finding]) -> Any:
    """Return a pandas Styler of the rows of ``frame`` named by findings, bad cells coloured.

    Errors are red, warnings amber. ``frame`` is the table as the editor returns it: row
    ``r`` of a finding is its position ``r - 2``, and the rows keep the editor's index
    labels.
    """
    pos: dict[int, dict[str, str]] = {}
    for f in findings:
        if f.row is None or f.row < 2 or f.row - 2 >= len(frame):
            continue
        cells = pos.setdefault(f.row - 2, {})
        colour = "#f8d7da" if f.severity == "error" else "#fff3cd"
        cols = [f.column] if f.column in frame.columns else list(frame.columns)
        for c in cols:
            if cells.get(c) != "#f8d7da":
                cells[c] = colour
    order = sorted(pos)
    sub = frame.iloc[order]
    styles = pd.DataFrame("", index=sub.index, columns=sub.columns)
    for i, p in enumerate(order):  # by position: the index is the editor's labels
        for c, colour in pos[p].items():
            styles.iloc[i, sub.columns.get_loc(c)] = f"background-color: {colour}"
    # cells as the editor shows them: "–" for a missing one (Styler wrote None), numbers
    # in their shortest text (it wrote 1000.000000)
    return sub.style.apply(lambda _: styles, axis=None).format(_cell_text, na_rep="–")


def _cell_text(value: object) -> str:
    """Return one present cell of the rows-with-findings table as the editor shows it."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(value)


MAX_FINDINGS_SHOWN = 500
"""Rows of a findings table the app shows; the rest are counted below it."""


def show_findings(findings: list[Finding], *, title: str = "") -> None:
    """Show findings grouped by file, as an error (or warning) box plus a table; never raises.

    The table has a ``file`` column naming the table each finding is about, and the
    spreadsheet row (header = 1) that the messages use.
    """
    import streamlit as st

    from capacity.validation import left_out_text
    from ui.formats import MISSING

    errors = [f for f in findings if f.severity == "error"]
    if title:
        (st.error if errors else st.warning)(title)
    if findings:
        ordered = order_findings(findings)
        st.dataframe(
            findings_table(ordered[:MAX_FINDINGS_SHOWN]).drop(columns=["editor_row"]),
            hide_index=True,
            width="stretch",
            column_config=findings_column_config(),
            placeholder=MISSING,  # a whole-file finding has no row: "–", never "None"
        )
        st.caption(FILE_ROWS)
        if len(ordered) > MAX_FINDINGS_SHOWN:
            st.caption(left_out_text(ordered, MAX_FINDINGS_SHOWN) + ".")
