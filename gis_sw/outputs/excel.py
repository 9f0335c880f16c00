r"""``summary.xlsx``: the findings for Excel, one sheet per application and one for the town.

Cells from the data are written as text cells, never as formulas (a proposal id of
``=HYPERLINK(...)`` stays text), and control characters, which the XLSX format cannot hold,
are shown as ``\xNN``.  Numbers (measured, limit) stay numbers so staff can sort and sum.
"""

from __future__ import annotations

import hashlib
import re
import zipfile
from collections.abc import Iterable
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np
import pandas as pd

from gis_sw.outputs.atomic import atomic_path
from gis_sw.outputs.summary import summary_frame

TOWN_SHEET = "Town"
_BAD_SHEET_CHARS = re.compile(r"[\[\]:*?/\\]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_MAX_SHEET = 31


def sheet_names(proposal_ids: Iterable[str]) -> dict[str, str]:
    r"""Return a unique, legal sheet name per proposal id (31 characters, no ``[]:*?/\``).

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


_TEXT_CELL = ('<c t="inlineStr"><is><t xml:space="preserve">', "</t></is></c>")
_EMPTY_CELL = "<c/>"
_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
_SHEET_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"
_CHUNK_ROWS = 20_000
"""Rows joined and written to the zip at a time (a 500,000-row sheet is not held whole)."""


def _column_letter(index: int) -> str:
    """Return the column letters: ``A`` for 1, ``Z`` for 26, ``AA`` for 27."""
    letters = ""
    while index > 0:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def _number_text(number: float) -> str:
    """16 significant digits, ``120`` for a whole number (the figures openpyxl wrote)."""
    return f"{number:.16g}"


def _escaped(texts: list[str]) -> list[str]:
    r"""Return ``texts`` with control characters shown as ``\xNN`` and ``& < >`` as XML entities.

    Joined with NUL (which no text keeps: it is a control character) so each replacement is
    one pass over one string.
    """
    if _CONTROL.search("\n".join(texts)):
        texts = [_cell_text(t) for t in texts]
    joined = "\x00".join(texts)
    for char, entity in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;")):
        if char in joined:
            joined = joined.replace(char, entity)
    return joined.split("\x00") if texts else []


def _column_cells(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Every value's ``<c>`` element and its shown length (for the column width).

    Numbers of a numeric column are number cells; everything else (booleans too) is an
    inline string cell, never a formula; a missing value (None, NA, NaN) or an empty text
    is an empty cell.
    """
    values = column.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(values, skipna=True) == "string":
        return _text_column_cells(values)
    n = len(values)
    present = ~pd.isna(values)
    shown = np.minimum(np.fromiter(map(len, map(str, values)), dtype="int64", count=n), 60)
    cells = np.full(n, _EMPTY_CELL, dtype=object)
    numeric = pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)
    if numeric:
        is_bool = np.fromiter((isinstance(v, bool) for v in values), dtype=bool, count=n)
        as_number = present & ~is_bool
        numbers = values[as_number].astype("float64")
        finite = np.isfinite(numbers)
        where = np.flatnonzero(as_number)[finite]
        cells[where] = [f"<c><v>{_number_text(x)}</v></c>" for x in numbers[finite].tolist()]
        present = present & is_bool  # booleans of a numeric column are text
    if present.any():
        texts = list(map(str, values[present]))
        head, tail = _TEXT_CELL
        cells[present] = [f"{head}{t}{tail}" if t else _EMPTY_CELL for t in _escaped(texts)]
    return cells, shown


def _text_column_cells(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_column_cells` of a column of text (and missing values), built once per text.

    Rule ids, citations, outcomes and proposal ids repeat over thousands of rows.
    """
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    texts = [str(u) for u in uniques]
    head, tail = _TEXT_CELL
    unique_cells = np.array(
        [f"{head}{t}{tail}" if t else _EMPTY_CELL for t in _escaped(texts)] + [_EMPTY_CELL],
        dtype=object,
    )
    unique_shown = np.fromiter(map(len, texts), dtype="int64", count=len(texts))
    shown = np.empty(len(values), dtype="int64")
    found = codes >= 0
    shown[found] = unique_shown[codes[found]]
    missing = values[~found]  # None, NaN, NA: the length of their text, as for any column
    shown[~found] = np.fromiter(map(len, map(str, missing)), dtype="int64", count=len(missing))
    return unique_cells[codes], np.minimum(shown, 60)


def _sheet_head(widths: np.ndarray) -> str:
    cols = "".join(
        f'<col min="{i}" max="{i}" width="{w + 2}" customWidth="1"/>'
        for i, w in enumerate(widths.tolist(), start=1)
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="{_NS}">'
        '<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" '
        'activePane="bottomLeft" state="frozen"/></sheetView></sheetViews>'
        f"<cols>{cols}</cols><sheetData>"
    )


def _write_sheet(
    book: zipfile.ZipFile, name: str, header: str, rows: np.ndarray, widths: np.ndarray
) -> None:
    with book.open(name, "w", force_zip64=True) as handle:
        handle.write(_sheet_head(widths).encode("utf-8"))
        handle.write(f'<row r="1">{header}</row>'.encode())
        for start in range(0, len(rows), _CHUNK_ROWS):
            chunk = rows[start : start + _CHUNK_ROWS]
            handle.write(
                "".join(
                    f'<row r="{r}">{body}</row>'
                    for r, body in enumerate(chunk.tolist(), start=start + 2)
                ).encode("utf-8")
            )
        handle.write(b"</sheetData></worksheet>")


def _package_parts(sheets: list[str]) -> dict[str, str]:
    """Return the workbook, its relationships, styles and content types for ``sheets`` (names)."""
    head = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    listed = "".join(
        f'<sheet name="{escape(name, {chr(34): "&quot;"})}" sheetId="{i}" r:id="rId{i}"/>'
        for i, name in enumerate(sheets, start=1)
    )
    rels = "".join(
        f'<Relationship Id="rId{i}" Type="{_REL_NS}/worksheet" Target="worksheets/sheet{i}.xml"/>'
        for i in range(1, len(sheets) + 1)
    )
    styles_id = len(sheets) + 1
    overrides = "".join(
        f'<Override PartName="/xl/worksheets/sheet{i}.xml" ContentType="{_SHEET_TYPE}"/>'
        for i in range(1, len(sheets) + 1)
    )
    office = "application/vnd.openxmlformats-officedocument.spreadsheetml"
    return {
        "[Content_Types].xml": (
            f'{head}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" '
            'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/xl/workbook.xml" ContentType="{office}.sheet.main+xml"/>'
            f'<Override PartName="/xl/styles.xml" ContentType="{office}.styles+xml"/>'
            f"{overrides}</Types>"
        ),
        "_rels/.rels": (
            f'{head}<Relationships xmlns="{_PKG_REL_NS}"><Relationship Id="rId1" '
            f'Type="{_REL_NS}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
        ),
        "xl/workbook.xml": (
            f'{head}<workbook xmlns="{_NS}" xmlns:r="{_REL_NS}"><bookViews><workbookView/>'
            f"</bookViews><sheets>{listed}</sheets></workbook>"
        ),
        "xl/_rels/workbook.xml.rels": (
            f'{head}<Relationships xmlns="{_PKG_REL_NS}">{rels}<Relationship '
            f'Id="rId{styles_id}" Type="{_REL_NS}/styles" Target="styles.xml"/></Relationships>'
        ),
        "xl/styles.xml": (
            f'{head}<styleSheet xmlns="{_NS}"><fonts count="1"><font><sz val="11"/>'
            '<name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill '
            'patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill>'
            '</fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/>'
            '</border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" '
            'fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="1"><xf numFmtId="0" '
            'fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs><cellStyles count="1">'
            '<cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>'
        ),
    }


def write_summary_xlsx(
    path: str | Path, findings: pd.DataFrame, *, overwrite: bool = False
) -> Path:
    """Write ``summary.xlsx`` atomically: a ``Town`` sheet, then one sheet per application.

    The ``Town`` sheet holds every finding.

    The workbook's XML is written here, column by column (a cell library took minutes for
    20,000 applications): inline string cells for text, number cells for numbers, each
    row's cells built once and shared by the town sheet and its application's sheet.  A
    column is as wide as its longest value among a sheet's first 200 rows (60 at most).

    Raises
    ------
    OutputError
        If ``path`` exists without ``overwrite`` or cannot be written.
    """
    frame = summary_frame(findings)
    columns = list(frame.columns)
    header_cells, _ = _column_cells(pd.Series(columns, dtype=object))
    header = "".join(header_cells.tolist())
    title_len = np.array([len(str(c)) for c in columns], dtype="int64")
    built = [_column_cells(frame[c]) for c in columns]
    rows = np.full(len(frame), "", dtype=object)
    for cells, _ in built:
        rows = rows + cells
    shown = (
        np.column_stack([s for _, s in built]) if columns else np.zeros((len(frame), 0), "int64")
    )

    def widths(index: np.ndarray) -> np.ndarray:
        return np.maximum(title_len, shown[index[:200]].max(axis=0, initial=0))

    pids = frame["proposal_id"].astype(str).to_numpy()
    names = sheet_names(pids.tolist())
    by_pid: dict[str, list[int]] = {}
    for i, pid in enumerate(pids.tolist()):
        by_pid.setdefault(pid, []).append(i)
    order = [TOWN_SHEET, *sorted(names.values(), key=str.lower)]
    pid_of = {name: pid for pid, name in names.items()}
    with (
        atomic_path(path, overwrite=overwrite) as tmp,
        zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as book,
    ):
        for part, text in _package_parts(order).items():
            book.writestr(part, text)
        for i, name in enumerate(order, start=1):
            if name == TOWN_SHEET:
                index = np.arange(len(frame))
            else:
                index = np.array(by_pid[pid_of[name]], dtype="int64")
            _write_sheet(book, f"xl/worksheets/sheet{i}.xml", header, rows[index], widths(index))
    return Path(path)
