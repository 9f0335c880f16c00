"""``summary.xlsx``: the findings for Excel, one sheet per application and one for the town.

Cells from the data are written as text cells, never as formulas (a proposal id of
``=HYPERLINK(...)`` stays text), and control characters, which the XLSX format cannot hold,
are shown as ``\\xNN``.  Numbers (measured, limit) stay numbers so staff can sort and sum.
"""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from gis_sw.outputs.atomic import write_bytes_atomic
from gis_sw.outputs.summary import summary_frame

TOWN_SHEET = "Town"
_BAD_SHEET_CHARS = re.compile(r"[\[\]:*?/\\]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_MAX_SHEET = 31


def sheet_names(proposal_ids: Iterable[str]) -> dict[str, str]:
    """A unique, legal sheet name per proposal id (31 characters, no ``[]:*?/\\``).

    A name that had to change, or that collides with another, ends in a short stable hash of
    the id, so two ids never share a sheet.
    """
    names: dict[str, str] = {}
    taken = {TOWN_SHEET.lower()}
    for pid in sorted(set(proposal_ids)):
        clean = _CONTROL.sub("_", _BAD_SHEET_CHARS.sub("_", pid)).strip("'") or "proposal"
        name = clean[:_MAX_SHEET]
        if name != pid or name.lower() in taken:
            digest = hashlib.sha1(pid.encode("utf-8")).hexdigest()[:6]  # noqa: S324  (a name)
            name = f"{clean[: _MAX_SHEET - 7]}~{digest}"
        taken.add(name.lower())
        names[pid] = name
    return names


def _cell_text(value: object) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))


def _fill(sheet: object, frame: pd.DataFrame) -> None:
    from openpyxl.worksheet.worksheet import Worksheet

    assert isinstance(sheet, Worksheet)
    sheet.append(list(frame.columns))
    numeric = {c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])}
    for r, record in enumerate(frame.itertuples(index=False), start=2):
        for c, (column, value) in enumerate(zip(frame.columns, record, strict=True), start=1):
            if value is None or value is pd.NA or (isinstance(value, float) and value != value):  # noqa: PLR0124
                continue
            cell = sheet.cell(row=r, column=c)
            if column in numeric and not isinstance(value, bool):
                cell.value = float(value)
            else:
                cell.value = _cell_text(value)
                cell.data_type = "s"  # text, never a formula
    sheet.freeze_panes = "A2"
    for c, column in enumerate(frame.columns, start=1):
        width = max([len(str(column)), *(min(len(str(v)), 60) for v in frame[column].head(200))])
        sheet.column_dimensions[sheet.cell(row=1, column=c).column_letter].width = width + 2


def write_summary_xlsx(
    path: str | Path, findings: pd.DataFrame, *, overwrite: bool = False
) -> Path:
    """Write ``summary.xlsx`` atomically: a ``Town`` sheet of every finding, then one sheet
    per application.

    Raises
    ------
    OutputError
        If ``path`` exists without ``overwrite`` or cannot be written.
    """
    from openpyxl import Workbook

    frame = summary_frame(findings)
    book = Workbook()
    town = book.active
    town.title = TOWN_SHEET
    _fill(town, frame)
    names = sheet_names(frame["proposal_id"].astype(str))
    for pid, name in sorted(names.items(), key=lambda kv: kv[1].lower()):
        _fill(book.create_sheet(name), frame[frame["proposal_id"].astype(str) == pid])
    buffer = io.BytesIO()
    book.save(buffer)
    return write_bytes_atomic(path, buffer.getvalue(), overwrite=overwrite)
