"""CSV cells that a spreadsheet would run as a formula are escaped with a leading quote.

A text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is
read by Excel, LibreOffice and Google Sheets as a formula ("CSV injection"): an ID such
as ``=HYPERLINK("http://...")`` in a dataset would run when someone opens the CSV.
Every CSV the product writes for people (the dataset download, ``batch_summary.csv``,
the app's CSV downloads) passes through :func:`escape_formula_cells`, which prefixes
such text cells with a single quote ``'`` (the spreadsheet convention for "this is
text"). Numbers are never touched (a negative shadow price stays ``-3.5``), and
Parquet files keep every value exactly as it is.

The escape is reversible: a cell that already starts with quotes followed by a
trigger character gets one more quote, and :func:`unescape_formula_cells` (used when
the product reads a dataset CSV back) removes exactly one, so a downloaded dataset
loads back to the same values and content hash.
"""

from __future__ import annotations

import re

import pandas as pd

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula."""

_ESCAPED = re.compile(r"^'*[=+\-@\t\r]")
_UNESCAPE = re.compile(r"^'+[=+\-@\t\r]")


def escape_cell(value: str) -> str:
    """Return ``value`` with a leading ``'`` when a spreadsheet would run it as a formula.

    Examples
    --------
    >>> escape_cell("=1+1"), escape_cell("openai"), escape_cell("'=x")
    ("'=1+1", 'openai', "''=x")
    """
    return "'" + value if _ESCAPED.match(value) else value


def unescape_cell(value: str) -> str:
    """Inverse of :func:`escape_cell` (``"'=1+1"`` -> ``"=1+1"``); other text unchanged."""
    return value[1:] if _UNESCAPE.match(value) else value


def _text_columns(df: pd.DataFrame) -> list[str]:
    return [
        str(c)
        for c in df.columns
        if pd.api.types.is_object_dtype(df[c].dtype) or pd.api.types.is_string_dtype(df[c].dtype)
    ]


def escape_formula_cells(df: pd.DataFrame) -> pd.DataFrame:
    """Return a copy of ``df`` whose text cells are safe to open in a spreadsheet.

    Parameters
    ----------
    df : DataFrame
        Any table about to be written as CSV.

    Returns
    -------
    DataFrame
        Same shape and columns; in object/string columns each ``str`` cell that
        starts with ``= + - @``, a tab or a carriage return is prefixed with ``'``.
        Numeric columns (and non-string cells) are unchanged.
    """
    out = df.copy()
    for c in _text_columns(out):
        out[c] = out[c].map(lambda v: escape_cell(v) if isinstance(v, str) else v)
    return out


def unescape_formula_cells(df: pd.DataFrame) -> pd.DataFrame:
    """Return a copy of ``df`` with :func:`escape_formula_cells` undone on text cells."""
    out = df.copy()
    for c in _text_columns(out):
        out[c] = out[c].map(lambda v: unescape_cell(v) if isinstance(v, str) else v)
    return out


def to_safe_csv(df: pd.DataFrame, path_or_buf: object = None, **kwargs: object) -> str | None:
    """``DataFrame.to_csv`` after :func:`escape_formula_cells` (``index=False`` by default).

    Returns
    -------
    str or None
        The CSV text when ``path_or_buf`` is None, else None.
    """
    kwargs.setdefault("index", False)
    return escape_formula_cells(df).to_csv(path_or_buf, **kwargs)
