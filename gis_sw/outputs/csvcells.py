"""CSV cells a spreadsheet will not run: the one rule every CSV gis_sw writes follows.

Excel, LibreOffice and Google Sheets read a cell that begins with ``=``, ``+``, ``-``, ``@``,
a tab or a carriage return as a formula ("CSV injection"): a proposal id
``=HYPERLINK("http://…")`` would become a live link, ``@SUM(…)`` a calculation.  As OWASP
recommends, such a **text** cell is written with a leading apostrophe (``'=HYPERLINK(…)``),
which the spreadsheet shows as text and which a program can strip (:func:`unescape_cell`).

Numbers are left alone: a float or integer column keeps ``-3.5``, and text that is exactly a
number (``-3.5``, ``+1e3``) cannot be a formula, so it stays as written too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

__all__ = [
    "CSV_ENCODING",
    "EXCEL_BOM",
    "FORMULA_STARTS",
    "csv_cell",
    "csv_frame",
    "csv_row",
    "excel_text",
    "unescape_cell",
]

EXCEL_BOM = "\ufeff"
"""UTF-8 byte-order mark: without it Excel reads a CSV as the local code page and shows
"§ 183-12A" as "Â§ 183-12A".  Every CSV gis_sw writes starts with it; pandas, Python's
``csv`` module with ``encoding="utf-8-sig"``, QGIS and LibreOffice read it as UTF-8."""

CSV_ENCODING = "utf-8-sig"
"""The encoding of every CSV gis_sw writes (UTF-8 with :data:`EXCEL_BOM`)."""


def excel_text(text: str) -> str:
    """CSV text as gis_sw writes it: with :data:`EXCEL_BOM` in front (once)."""
    return text if text.startswith(EXCEL_BOM) else EXCEL_BOM + text


FORMULA_STARTS: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula."""

_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def csv_cell(value: object) -> object:
    """``value`` as it may go in a CSV cell: text that a spreadsheet would run gets a ``'``.

    Anything that is not text (numbers, booleans, missing values) is returned unchanged.
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        if _PLAIN_NUMBER.fullmatch(value):
            return value
        return "'" + value
    return value


def csv_row(values: Iterable[object]) -> list[object]:
    """:func:`csv_cell` of every value of a row (for :func:`csv.writer`)."""
    return [csv_cell(v) for v in values]


def csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Return a copy of ``frame`` whose text cells are safe (:func:`csv_cell`).

    Number columns and the column names are kept as they are, except a name that would
    itself run.
    """
    out = frame.copy()
    for column in out.columns:
        series = out[column]
        if isinstance(series.dtype, pd.CategoricalDtype):
            series = series.astype(object)
        if (
            pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)
        ) and _needs_escape(series):
            out[column] = series.map(csv_cell, na_action="ignore")
    out.columns = [csv_cell(c) if isinstance(c, str) else c for c in out.columns]
    return out


def _needs_escape(series: pd.Series) -> bool:
    """Tell whether :func:`csv_cell` changes any cell of a text column.

    Judged on the column's distinct values (an id or a cover name repeats over thousands of
    rows); a column of values that cannot be hashed is judged cell by cell.
    """
    try:
        distinct = pd.unique(series.dropna())
    except TypeError:
        distinct = series.dropna().to_numpy(dtype=object)
    return any(csv_cell(v) is not v for v in distinct)


def unescape_cell(value: object) -> object:
    """Return the text a user meant, from a cell :func:`csv_cell` wrote (``'=x``: ``=x``)."""
    if isinstance(value, str) and value.startswith("'") and value[1:].startswith(FORMULA_STARTS):
        return value[1:]
    return value
