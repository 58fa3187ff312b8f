"""The order of the periods table: one cause, one finding.

Kept free of project imports (``capacity.table_checks`` calls it and builds the
findings).

A periods table that holds every quarter of its horizon once but in the wrong order
has one cause (the rows need sorting), so it gets one finding naming it, not one per
row out of place. Gaps and repeats are reported row by row, as before.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["period_order_problems"]


def period_order_problems(
    labels: Sequence[str], idx: Sequence[int | None], file: str
) -> list[tuple[int, str, str]]:
    """Return the findings about the order of a periods table.

    Parameters
    ----------
    labels : sequence of str
        The ``period`` column as written (row 2 of the file first).
    idx : sequence of int or None
        Quarter index of each label (None when it is not a quarter label).
    file : str
        File name used in the findings.

    Returns
    -------
    list of (row, value, message)
        Spreadsheet row (header = 1), the period as written and the message, for
        column ``period``. Empty when the periods are consecutive quarters in time
        order; one problem when only the order is wrong; else one per row that does
        not follow its predecessor.
    """
    valid = [i for i in idx if i is not None]
    out_of_place = [
        r
        for r in range(1, len(idx))
        if idx[r - 1] is not None and idx[r] is not None and idx[r] != idx[r - 1] + 1  # type: ignore[operator]
    ]
    if not out_of_place:
        return []
    s = sorted(valid)
    if len(valid) == len(idx) and s == list(range(s[0], s[0] + len(s))):
        r = out_of_place[0]
        return [
            (
                r + 2,
                str(labels[r]),
                f"the periods are not in time order (row {r + 2} '{labels[r]}' follows "
                f"'{labels[r - 1]}'): sort {file} by period; it holds every quarter from "
                f"{labels[idx.index(s[0])]} to {labels[idx.index(s[-1])]} once",
            )
        ]
    return [
        (
            r + 2,
            str(labels[r]),
            f"periods must be consecutive quarters in time order (previous row is {labels[r - 1]})",
        )
        for r in out_of_place
    ]
