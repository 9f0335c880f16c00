"""The rainfall CSV of ``gis-sw calendar --rain``: one row per day, ``date,inches``.

:func:`read_rainfall` reads it into ``{date: inches}`` for
:func:`gis_sw.analysis.calendar.build_calendar`; every bad row is one clear error naming the
file and the row.
"""

from __future__ import annotations

import codecs
import csv
import math
from datetime import date
from pathlib import Path

from gis_sw.errors import GisSwError, InputFileError

__all__ = ["RainfallError", "read_rainfall"]


class RainfallError(GisSwError, ValueError):
    """A rainfall CSV cannot be read as ``date,inches``."""


def read_rainfall(path: str | Path) -> dict[date, float]:
    """Daily rainfall from a CSV with the columns ``date`` (YYYY-MM-DD) and ``inches``.

    UTF-8 (with or without a byte-order mark) and UTF-16/32 with one are read; a file whose
    header has tabs and no comma (Excel's "Unicode text") is read as tab-separated.

    Raises
    ------
    InputFileError
        If the file does not exist, is not a regular file (a named pipe), or is not text.
    RainfallError
        Naming the row (counted from 1 after the header) for a missing column, a bad date,
        a value that is not a number of 0 or more, or a date given twice.
    """
    path = Path(path)
    if not path.exists():
        raise InputFileError(f"rainfall file {path} does not exist. Fix: check --rain.")
    from gis_sw.layers.proposals_io import check_input_file

    check_input_file(path, "rainfall CSV")
    text = _rainfall_text(path)
    lines = text.splitlines()
    tabbed = bool(lines) and "\t" in lines[0] and "," not in lines[0]
    reader = csv.DictReader(lines, delimiter="\t" if tabbed else ",")
    columns = [c.strip().lower() for c in reader.fieldnames or []]
    if "date" not in columns or "inches" not in columns:
        raise RainfallError(
            f"rainfall file {path} has columns {columns or 'none'}; it needs 'date' and "
            "'inches'. Fix: give a header line 'date,inches'."
        )
    reader.fieldnames = columns
    rain: dict[date, float] = {}
    for number, row in enumerate(reader, start=1):
        where = f"rainfall file {path}, row {number}"
        raw_day, raw_inches = (row.get("date") or "").strip(), (row.get("inches") or "").strip()
        extra = row.get(None)  # values beyond the header (restkey None)
        if extra:
            raise RainfallError(
                f"{where} ({raw_day}): more values than columns ({len(columns) + len(extra)} "
                f"for {len(columns)}); a decimal comma? Fix: write inches with a decimal point "
                "(0.75), or quote the value."
            )
        try:
            day = date.fromisoformat(raw_day)
        except ValueError:
            raise RainfallError(
                f"{where}: date {raw_day!r} is not a date. Fix: write it as YYYY-MM-DD."
            ) from None
        try:
            inches = float(raw_inches)
        except ValueError:
            inches = math.nan
        if not math.isfinite(inches) or inches < 0:
            raise RainfallError(
                f"{where} ({raw_day}): inches {raw_inches!r} is not a number of 0 or more. "
                "Fix: give the day's total rainfall in inches (0 for a dry day)."
            )
        if day in rain:
            raise RainfallError(
                f"{where}: {raw_day} is given twice. Fix: one row per day (the day's total)."
            )
        rain[day] = inches
    return rain


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
"""Byte-order marks and the encoding each names (Excel's "Unicode text" is UTF-16)."""


def _rainfall_text(path: Path) -> str:
    """Return the file's text: UTF-8, or UTF-16/32 (a byte-order mark or NUL bytes say so).

    Raises
    ------
    InputFileError
        If it cannot be read, or is not text in one of those encodings.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputFileError(
            f"rainfall file {path} cannot be read ({exc.strerror or exc}). Fix: check the "
            "path and its permissions."
        ) from None
    encoding = next((name for bom, name in _BOMS if data.startswith(bom)), "utf-8")
    head = data[:512]
    if encoding == "utf-8" and b"\x00" in head:  # UTF-16 without a byte-order mark
        odd, even = head[1::2].count(0), head[0::2].count(0)
        encoding = "utf-16-le" if odd > even else "utf-16-be"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise InputFileError(
            f"rainfall file {path} is not {encoding.upper().replace('-SIG', '')} text (byte "
            f"{exc.start + 1} cannot be decoded). Fix: save it as CSV UTF-8 (in Excel: "
            "Save As, 'CSV UTF-8 (Comma delimited)')."
        ) from None
