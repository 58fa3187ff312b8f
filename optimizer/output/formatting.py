"""Number formats: the summary's compact USD, k/M/B/T, energy, water, MW; the tables' units.

The second half is the one formatter of every table the app shows: a column's unit
comes from its name's suffix (``_mw`` -> MW, the units of
:data:`optimizer.output.table_schema.RESULT_TABLES`, tested against them), its header
carries that unit (``build [MW]``), its decimals follow the unit
(:func:`number_format`), and a share is a percent clipped to [0, 1]
(:func:`clip_share`).
"""

from __future__ import annotations

import math

__all__ = [
    "MONEY_SCALES",
    "UNIT_SUFFIXES",
    "clip_share",
    "column_header",
    "column_unit",
    "fmt_energy",
    "fmt_mw",
    "fmt_number",
    "fmt_qty",
    "fmt_usd",
    "fmt_water",
    "fmt_cell",
    "is_share",
    "money_axis",
    "money_scale",
    "number_format",
    "text_column",
]


def fmt_usd(x: float | None, digits: int = 1) -> str:
    """Format USD compactly: ``412.3e9 -> "$412.3B"``, ``-2.5e6 -> "-$2.5M"``.

    Returns "n/a" for None or NaN and "∞" / "-∞" for an infinite amount (e.g. an
    unbounded value of the stochastic solution).
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    sign = "-" if x < 0 else ""
    return f"{sign}${fmt_qty(abs(x), digits)}"


def fmt_qty(x: float | None, digits: int = 1) -> str:
    """Format a quantity with a k/M/B/T suffix: ``1234567 -> "1.2M"``; small ones plain."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    a = abs(x)
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return f"{x / div:.{digits}f}{suffix}"
    if a == 0:
        return "0"
    return f"{x:.{digits}f}" if a < 10 else f"{x:.0f}"


def fmt_energy(mwh: float) -> str:
    """Format energy from MWh: ``2.589e8 -> "258.90 TWh"``, ``1200 -> "1.20 GWh"``."""
    if abs(mwh) >= 1e6:
        return f"{mwh / 1e6:,.2f} TWh"
    if abs(mwh) >= 1e3:
        return f"{mwh / 1e3:,.2f} GWh"
    return f"{mwh:,.1f} MWh"


def fmt_water(m3: float) -> str:
    """Format water from m3: ``1.05e8 -> "104.94 million m3"``, ``2500 -> "2,500 m3"``."""
    if abs(m3) >= 1e6:
        return f"{m3 / 1e6:,.2f} million m3"
    return f"{m3:,.0f} m3"


def fmt_mw(x: float) -> str:
    """Format MW: ``1234.5 -> "1,234"``, ``12.34 -> "12.3"``, ``0.1234 -> "0.12"``."""
    a = abs(x)
    if a >= 100:
        return f"{x:,.0f}"
    if a >= 1:
        return f"{x:,.1f}"
    return f"{x:.2g}"


#: Unit of a column by its name's suffix (longest first), as the result tables' schemas
#: state it (``tests/test_app_formats.py`` checks each against
#: :data:`optimizer.output.table_schema.RESULT_TABLES`). A name equal to the suffix
#: without its underscore (``chips``, ``h100e``) has the unit too.
UNIT_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("_usd_per_h100e_period", "USD/H100e-quarter"),
    ("_usd_per_h100e", "USD/H100e"),
    ("_usd_per_unit", "USD/unit"),
    ("_usd_per_mwh", "USD/MWh"),
    ("_usd_per_mw", "USD/MW"),
    ("_usd_per_t", "USD/t CO2"),
    ("_t_per_mwh", "t CO2/MWh"),
    ("_l_per_kwh", "L/kWh"),
    ("_usd", "USD"),
    ("_mwh", "MWh"),
    ("_mw", "MW"),
    ("_kw", "kW"),
    ("_m3", "m3"),
    ("_h100e", "H100e"),
    ("_chips", "chips"),
    ("_wafers", "wafers"),
    ("_stacks", "stacks"),
    ("_t", "t CO2"),
    ("_s", "s"),
)

#: Columns that are shares (0-1) without ``share`` in their name.
SHARE_COLUMNS = frozenset({"utilisation", "mip_gap", "weight", "probability"})

#: printf format (Streamlit NumberColumn, sprintf-js) of a unit: whole numbers with
#: thousands separators for large quantities, one or two decimals for small ones.
UNIT_FORMATS = {
    "USD/MWh": "%,.2f",
    "USD/MW": "%,.0f",
    "USD/H100e": "%,.2f",
    "USD/t CO2": "%,.2f",
    "t CO2/MWh": "%.3f",
    "L/kWh": "%.2f",
    "MWh": "%,.0f",
    "MW": "%,.1f",
    "kW": "%,.2f",
    "m3": "%,.0f",
    "H100e": "%,.0f",
    "chips": "%,.0f",
    "wafers": "%,.0f",
    "stacks": "%,.0f",
    "t CO2": "%,.0f",
    "s": "%,.1f",
}


def column_unit(name: str) -> str:
    """Return the unit of a column from its name's suffix (``""`` when it has none).

    Examples
    --------
    >>> column_unit("build_mw"), column_unit("energy_usd_per_mwh"), column_unit("chips")
    ('MW', 'USD/MWh', 'chips')
    >>> column_unit("scenario")
    ''
    """
    for suffix, unit in UNIT_SUFFIXES:
        if name.endswith(suffix) or name == suffix[1:]:
            return unit
    return ""


def is_share(name: str) -> bool:
    """Tell whether a column is a share (0-1, shown as a percent): ``served_share``."""
    return name.endswith("share") or name.startswith("share_") or name in SHARE_COLUMNS


#: Words of column names written as the field writes them (``it_mw`` -> "IT [MW]").
ACRONYMS = {"it": "IT", "pue": "PUE", "wue": "WUE", "tdp": "TDP", "ppa": "PPA", "hbm": "HBM"}


def column_header(name: str, unit: str | None = None) -> str:
    """Return a column's header with its unit: ``build_mw -> "build [MW]"``.

    Parameters
    ----------
    name : str
        Column name; the unit suffix is dropped from the words.
    unit : str, optional
        The unit (default :func:`column_unit`); a share's header is ``[%]``.

    Examples
    --------
    >>> column_header("objective_usd"), column_header("served_share"), column_header("site")
    ('objective [USD]', 'served share [%]', 'site')
    >>> column_header("h100e"), column_header("chips"), column_header("it_mw")
    ('H100e', 'chips', 'IT [MW]')
    """
    unit = column_unit(name) if unit is None else unit
    if unit and any(name == suffix[1:] for suffix, _ in UNIT_SUFFIXES):
        return unit  # a column named by its unit (chips, h100e): the unit is the header
    words = name
    for suffix, u in UNIT_SUFFIXES:
        if u == unit and name.endswith(suffix) and name != suffix[1:]:
            words = name[: -len(suffix)]
            break
    words = " ".join(ACRONYMS.get(w, w) for w in words.split("_"))
    if is_share(name):
        return f"{words} [%]"
    return f"{words} [{unit}]" if unit else words


def number_format(name: str, integer: bool = False) -> str:
    """Return the display format of a numeric column (Streamlit NumberColumn ``format``).

    ``percent`` for a share; the unit's printf format of :data:`UNIT_FORMATS`;
    ``"%,d"`` for whole numbers without a unit (counts); ``"%,.3g"`` for other
    plain numbers (ratios, levels: three significant digits).

    Examples
    --------
    >>> number_format("build_mw"), number_format("n", integer=True), number_format("ratio")
    ('%,.1f', '%,d', '%,.3g')
    """
    if is_share(name):
        return "percent"
    unit = column_unit(name)
    if unit in UNIT_FORMATS:
        return UNIT_FORMATS[unit]
    return "%,d" if integer else "%,.3g"


def clip_share(x: float | None) -> float | None:
    """Clip a share to [0, 1] (``1.0000000002`` from float noise reads 100%); NaN kept."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return x
    return min(1.0, max(0.0, float(x)))


def fmt_number(x: float | None, unit: str = "") -> str:
    """Format one number as text with thousands separators and its unit's decimals.

    For cells whose unit differs row by row (the calibration table): USD compactly
    (:func:`fmt_usd`), a whole number with separators from 100 up, three significant
    digits below; ``n/a`` for a missing value, ``∞`` for an infinite one.

    Examples
    --------
    >>> fmt_number(687000.0), fmt_number(1.2345), fmt_number(2.5e10, "USD")
    ('687,000', '1.23', '$25.0B')
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if unit == "USD":
        return fmt_usd(x)
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"


#: Scales of a money column (``_usd``), largest first: (smallest magnitude, divisor,
#: suffix of the scaled column's name, printf format). A column is shown in the largest
#: scale its largest finite magnitude reaches, so a plan of $1.96M reads ``$1.96M``,
#: not ``$0.00B``.
MONEY_SCALES: tuple[tuple[float, float, str, str], ...] = (
    (1e9, 1e9, "_bn", "$%,.2fB"),
    (1e6, 1e6, "_mn", "$%,.2fM"),
    (0.0, 1.0, "", "$%,.0f"),
)


def money_scale(largest: float) -> tuple[float, str, str]:
    """Return ``(divisor, name suffix, printf format)`` of a money column.

    Parameters
    ----------
    largest : float
        The column's largest finite magnitude in USD (NaN or 0 for an empty column).

    Examples
    --------
    >>> money_scale(1.2372e11), money_scale(1.96e6), money_scale(532.0)
    ((1000000000.0, '_bn', '$%,.2fB'), (1000000.0, '_mn', '$%,.2fM'), (1.0, '', '$%,.0f'))
    """
    a = 0.0 if math.isnan(largest) else abs(largest)
    for floor, div, suffix, fmt in MONEY_SCALES:
        if a >= floor:
            return div, suffix, fmt
    return MONEY_SCALES[-1][1:]  # pragma: no cover - the last floor is 0


def _printf(fmt: str, x: float) -> str:
    """Apply a printf format of :func:`number_format` / :data:`MONEY_SCALES` in Python."""
    head, _, tail = fmt.partition("%")
    spec = tail.rstrip("BM")
    suffix = tail[len(spec) :]
    if spec.endswith("d"):
        spec = spec[:-1] + ".0f"
    return (
        f"{head}{format(x, spec)}{suffix}"
        if x >= 0 or not head
        else f"-{head}{format(-x, spec)}{suffix}"
    )


def fmt_cell(x: float | None, fmt: str) -> str:
    """Format one cell with a column's format: ``percent``, a printf format, ``–`` if missing.

    Examples
    --------
    >>> fmt_cell(1234.56, "%,.1f"), fmt_cell(0.4759, "percent"), fmt_cell(None, "%,d")
    ('1,234.6', '47.6%', '–')
    >>> fmt_cell(-2.5e9 / 1e9, "$%,.2fB"), fmt_cell(float("inf"), "%,.0f")
    ('-$2.50B', '∞')
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    x = float(x)
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if fmt == "percent":
        return f"{clip_share(x):.1%}"
    return _printf(fmt, x)


def text_column(name: str, values: list[float | None]) -> tuple[str, list[str]]:
    """Return a numeric column's header and cells as text, in the app tables' formats.

    The one formatter of the app's tables (``ui.formats.table_view``) for a terminal:
    the header carries the unit (:func:`column_header`), money is scaled per column
    (:func:`money_scale`), a share is a percent clipped to [0, 1], other numbers take
    their unit's format (:func:`number_format`); a missing cell reads ``–``.

    Parameters
    ----------
    name : str
        Column name; its suffix gives the unit (``objective_usd``, ``build_mw``).
    values : list of float or None
        The cells.

    Returns
    -------
    (str, list of str)
        The header and one text per cell.

    Examples
    --------
    >>> text_column("objective_usd", [1.2372e11, 9.8e10])
    ('objective [USD]', ['$123.72B', '$98.00B'])
    >>> text_column("served_share", [1.0000000002, 0.5])
    ('served share [%]', ['100.0%', '50.0%'])
    """
    finite = [abs(float(v)) for v in values if v is not None and math.isfinite(float(v))]
    if column_unit(name) == "USD" and not is_share(name):
        div, _, fmt = money_scale(max(finite, default=0.0))
        cells = [fmt_cell(None if v is None else float(v) / div, fmt) for v in values]
        return column_header(name), cells
    whole = all(float(v).is_integer() for v in finite) and bool(finite)
    fmt = number_format(name, whole)
    return column_header(name), [fmt_cell(v, fmt) for v in values]


def money_axis(values: list[float]) -> tuple[float, str, str]:
    """Return ``(divisor, word, letter)`` of a chart's money axis, as :func:`money_scale`.

    Examples
    --------
    >>> money_axis([1.2e11, 9e10]), money_axis([1.96e6]), money_axis([532.0])
    ((1000000000.0, 'billion', 'B'), (1000000.0, 'million', 'M'), (1.0, '', ''))
    """
    finite = [abs(float(v)) for v in values if v is not None and math.isfinite(float(v))]
    div, _, fmt = money_scale(max(finite, default=0.0))
    letter = fmt[-1] if fmt[-1] in "BM" else ""
    return div, {"B": "billion", "M": "million"}.get(letter, ""), letter
