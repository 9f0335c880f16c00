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

import csv
import io
import re
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "CSV_ENCODING",
    "EXCEL_BOM",
    "FORMULA_STARTS",
    "csv_cell",
    "csv_frame",
    "csv_row",
    "csv_text",
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


# -- the CSV text of a whole frame, column by column ----------------------------------------

_CHUNK_ROWS = 50_000
"""Rows joined into text at a time (a 500,000-row sheet is not held as lists whole)."""


def csv_text(frame: pd.DataFrame, *, lineterminator: str = "\n") -> str:
    """Return ``csv_frame(frame).to_csv(index=False, lineterminator=lineterminator)``.

    The same text, built column by column: each column's distinct values are formatted,
    escaped (:func:`csv_cell`) and quoted once, as pandas and Python's :mod:`csv` module do
    it (floats as numpy's shortest text, a missing value as an empty field, a field holding
    the delimiter, the quote or a line end in quotes), and the rows are joined from them.
    pandas' writer formats and quotes every cell of every row in turn (a 560,000-row
    calculation sheet: seconds).  A frame with a column of another kind (dates, intervals,
    masked floats...) or a single column is written by pandas itself.
    ``tests/test_manywrite_csv.py`` compares the two on hostile text.
    """
    fields = [_column_fields(frame.iloc[:, i], lineterminator) for i in range(frame.shape[1])]
    columns = [f for f in fields if f is not None]
    if len(columns) < max(2, len(fields)) or frame.columns.nlevels != 1:
        return str(csv_frame(frame).to_csv(index=False, lineterminator=lineterminator))
    head = io.StringIO()
    csv.writer(head, lineterminator=lineterminator).writerow(
        [csv_cell(c) if isinstance(c, str) else c for c in frame.columns]
    )
    parts = [head.getvalue()]
    for start in range(0, len(frame), _CHUNK_ROWS):
        cells = [texts[codes[start : start + _CHUNK_ROWS]].tolist() for texts, codes in columns]
        parts.append(lineterminator.join(map(",".join, zip(*cells, strict=True))))
        parts.append(lineterminator)
    return "".join(parts)


def _column_fields(series: pd.Series, lineterminator: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Return a column's distinct field texts and each row's index into them.

    A missing value's code (-1) takes the last text, an empty field.  None: a column of a
    kind written by pandas.
    """
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        values = series.to_numpy()
        # by bit pattern: -0.0 and 0.0 are two texts; NaN is any of its patterns
        codes, bits = pd.factorize(values.view(f"i{values.itemsize}"))
        floats = bits.view(values.dtype)
        float_texts = floats.astype(str).astype(object)
        float_texts[np.isnan(floats)] = ""
        return float_texts, codes
    if isinstance(dtype, pd.CategoricalDtype):
        series = series.astype(object)
        dtype = series.dtype
    if isinstance(dtype, pd.StringDtype) or (
        pd.api.types.is_object_dtype(dtype)
        and pd.api.types.infer_dtype(series, skipna=True) in ("string", "empty")
    ):
        quote = _quoting(lineterminator)
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        texts = [quote(str(csv_cell(str(u)))) for u in np.asarray(uniques, dtype=object)]
        return np.array([*texts, ""], dtype=object), codes
    if _integer_or_bool(dtype):
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        return np.array([*map(str, np.asarray(uniques, dtype=object)), ""], dtype=object), codes
    if pd.api.types.is_object_dtype(dtype):
        quote = _quoting(lineterminator)
        missing = series.isna().to_numpy()
        cells = [
            "" if gone else quote(_object_text(value))
            for value, gone in zip(series.tolist(), missing.tolist(), strict=True)
        ]
        return np.array(cells, dtype=object), np.arange(len(cells))
    return None


def _integer_or_bool(dtype: Any) -> bool:
    """Tell whether a column holds integers or booleans (numpy's, or pandas' masked ones)."""
    if isinstance(dtype, np.dtype):
        return dtype.kind in "iub"
    return pd.api.types.is_extension_array_dtype(dtype) and (
        pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
    )


def _object_text(value: object) -> str:
    """Return the text Python's csv writer gives a value (after :func:`csv_cell`)."""
    if isinstance(value, str):
        return str(csv_cell(value))
    if isinstance(value, float):
        return float.__repr__(value)
    return str(value)


@cache
def _quoting(lineterminator: str) -> Callable[[str], str]:
    """Return the function that quotes a field as :func:`csv.writer` (minimal quoting) does.

    The characters that make it quote a field are found by asking the csv module itself
    (the delimiter, the quote character and those of the line terminator).
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator=lineterminator)
    special = []
    for char in {*map(chr, range(128)), *lineterminator}:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow([f"a{char}b", ""])
        if buffer.getvalue().startswith('"'):
            special.append(char)
    needs = re.compile("[" + re.escape("".join(sorted(special))) + "]")

    def quote(text: str) -> str:
        if needs.search(text) is None:
            return text
        return '"' + text.replace('"', '""') + '"'

    return quote
