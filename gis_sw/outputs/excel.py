r"""``summary.xlsx``: the findings for Excel, one sheet per application and one for the town.

Cells from the data are written as text cells, never as formulas (a proposal id of
``=HYPERLINK(...)`` stays text), and control characters, which the XLSX format cannot hold,
are shown as ``\xNN``.  Numbers (measured, limit) stay numbers so staff can sort and sum.

The workbook's XML is written here, column by column (a cell library took minutes for
20,000 applications).  Every distinct text is kept once, in the shared-strings table
(``xl/sharedStrings.xml``), and a text cell names its index: a finding's sentence is on
the town sheet and on its application's sheet, and the same sentence on thousands of rows
(inline strings made four times the XML to build and compress).
"""

from __future__ import annotations

import hashlib
import math
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


_EMPTY_CELL = "<c/>"
_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
_OFFICE = "application/vnd.openxmlformats-officedocument.spreadsheetml"
_CHUNK_ROWS = 20_000
"""Rows joined and written to the zip at a time (a 500,000-row sheet is not held whole)."""
_SHOWN_MAX = 60
"""Widest column, in characters."""
_WIDTH_ROWS = 200
"""A column is as wide as its longest value among a sheet's first rows."""


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


class SharedStrings:
    """The workbook's shared-strings table: each distinct (escaped) text once, in first use."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def cells(self, texts: list[str]) -> list[str]:
        """Return the ``<c>`` element of each text: its shared string, or empty for ``""``."""
        index = self.index
        out = []
        for text in _escaped(texts):
            if text:
                out.append(f'<c t="s"><v>{index.setdefault(text, len(index))}</v></c>')
            else:
                out.append(_EMPTY_CELL)
        return out

    def xml(self) -> str:
        """Return ``xl/sharedStrings.xml``."""
        items = "".join(f'<si><t xml:space="preserve">{t}</t></si>' for t in self.index)
        return (
            f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="{_NS}" '
            f'uniqueCount="{len(self.index)}">{items}</sst>'
        )


def _column_cells(
    column: pd.Series, strings: SharedStrings | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Every value's ``<c>`` element and its shown length (for the column width).

    Numbers of a numeric column are number cells; everything else (booleans too) is a
    text cell (a shared string of ``strings``, never a formula); a missing value (None,
    NA, NaN), a non-finite number or an empty text is an empty cell.  Texts and figures
    are formatted once per distinct value.
    """
    strings = SharedStrings() if strings is None else strings
    if isinstance(column.dtype, pd.StringDtype):
        return _text_column_cells(column, strings)
    if isinstance(column.dtype, np.dtype) and column.dtype.kind in "fb":
        return _float_or_bool_cells(column.to_numpy(), strings)
    values = column.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(values, skipna=True) == "string":
        return _text_column_cells(pd.Series(values, dtype=object), strings)
    n = len(values)
    present = ~pd.isna(values)
    shown = np.minimum(np.fromiter(map(len, map(str, values)), dtype="int64", count=n), _SHOWN_MAX)
    cells = np.full(n, _EMPTY_CELL, dtype=object)
    numeric = pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)
    if numeric:
        is_bool = np.fromiter((isinstance(v, bool) for v in values), dtype=bool, count=n)
        as_number = present & ~is_bool
        numbers = values[as_number].astype("float64")
        finite = np.isfinite(numbers)
        where = np.flatnonzero(as_number)[finite]
        codes, bits = pd.factorize(numbers[finite].view("int64"))  # -0.0 apart from 0.0
        distinct = bits.view("float64").tolist()
        texts = np.array([f"<c><v>{_number_text(x)}</v></c>" for x in distinct], dtype=object)
        cells[where] = texts[codes]
        present = present & is_bool  # booleans of a numeric column are text
    if present.any():
        codes, distinct = pd.factorize(np.array(list(map(str, values[present])), dtype=object))
        cells[present] = np.array(strings.cells(list(distinct)), dtype=object)[codes]
    return cells, shown


def _float_or_bool_cells(
    values: np.ndarray, strings: SharedStrings
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_column_cells` of a numpy float or bool column, built once per distinct value.

    A float is a number cell (empty when NaN or infinite), a boolean a text cell; the
    shown length is that of the value's text (``nan`` too).
    """
    if values.dtype.kind == "f":
        # by bit pattern: -0.0 (written -0) apart from 0.0
        codes, bits = pd.factorize(values.astype("float64").view("int64"))
        distinct = bits.view("float64").tolist()
        cells = [
            f"<c><v>{_number_text(x)}</v></c>" if math.isfinite(x) else _EMPTY_CELL
            for x in distinct
        ]
    else:
        codes, flags = pd.factorize(values)
        distinct = flags.tolist()
        cells = strings.cells([str(x) for x in distinct])
    shown = np.array([min(len(str(x)), _SHOWN_MAX) for x in distinct], dtype="int64")
    return np.array(cells, dtype=object)[codes], shown[codes]


def _text_column_cells(column: pd.Series, strings: SharedStrings) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_column_cells` of a column of text (and missing values), built once per text.

    Rule ids, citations, outcomes and proposal ids repeat over thousands of rows.
    """
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    texts = list(map(str, np.asarray(uniques, dtype=object)))
    unique_cells = np.array([*strings.cells(texts), _EMPTY_CELL], dtype=object)
    unique_shown = np.fromiter(map(len, texts), dtype="int64", count=len(texts))
    shown = np.empty(len(column), dtype="int64")
    found = codes >= 0
    shown[found] = unique_shown[codes[found]]
    missing = column[~found].to_numpy(dtype=object)  # None, NaN, NA: the length of their text
    shown[~found] = np.fromiter(map(len, map(str, missing)), dtype="int64", count=len(missing))
    return unique_cells[codes], np.minimum(shown, _SHOWN_MAX)


def _sheet_head(widths: np.ndarray, header: str) -> str:
    cols = "".join(
        f'<col min="{i}" max="{i}" width="{w + 2}" customWidth="1"/>'
        for i, w in enumerate(widths.tolist(), start=1)
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="{_NS}">'
        '<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" '
        'activePane="bottomLeft" state="frozen"/></sheetView></sheetViews>'
        f'<cols>{cols}</cols><sheetData><row r="1">{header}</row>'
    )


_SHEET_TAIL = "</sheetData></worksheet>"


class _RowTags:
    """The ``<row r="N">`` opening tags, made once for the longest sheet."""

    def __init__(self, rows: int) -> None:
        self.tags = [f'<row r="{r}">' for r in range(2, rows + 2)]

    def body(self, rows: list[str], first: int = 0) -> str:
        """Return the ``<row>`` elements of ``rows``, the first at data row ``first`` (0: row 2)."""
        if not rows:
            return ""
        tags = self.tags[first : first + len(rows)]
        return "</row>".join(map(str.__add__, tags, rows)) + "</row>"


def _package_parts(sheets: list[str], strings: str) -> dict[str, str]:
    """Return the workbook, its relationships, styles, shared strings and content types."""
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
        f'<Override PartName="/xl/worksheets/sheet{i}.xml" ContentType="{_OFFICE}.worksheet+xml"/>'
        for i in range(1, len(sheets) + 1)
    )
    return {
        "[Content_Types].xml": (
            f'{head}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" '
            'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/xl/workbook.xml" ContentType="{_OFFICE}.sheet.main+xml"/>'
            f'<Override PartName="/xl/styles.xml" ContentType="{_OFFICE}.styles+xml"/>'
            '<Override PartName="/xl/sharedStrings.xml" '
            f'ContentType="{_OFFICE}.sharedStrings+xml"/>{overrides}</Types>'
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
            f'Id="rId{styles_id}" Type="{_REL_NS}/styles" Target="styles.xml"/><Relationship '
            f'Id="rId{styles_id + 1}" Type="{_REL_NS}/sharedStrings" '
            'Target="sharedStrings.xml"/></Relationships>'
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
        "xl/sharedStrings.xml": strings,
    }


def _group_widths(shown: np.ndarray, bounds: np.ndarray, title_len: np.ndarray) -> np.ndarray:
    """Return each group's column widths: its first rows' longest values, or the titles.

    ``shown`` holds the rows grouped (group ``k`` is ``bounds[k]:bounds[k + 1]``, none
    empty); one pass over them, not a search per group (20,000 applications).
    """
    if len(bounds) < 2:
        return np.zeros((0, len(title_len)), dtype="int64")
    rank = np.arange(len(shown)) - np.repeat(bounds[:-1], np.diff(bounds))
    first = np.where((rank < _WIDTH_ROWS)[:, None], shown, 0)
    return np.maximum(title_len, np.maximum.reduceat(first, bounds[:-1], axis=0))


def write_summary_xlsx(
    path: str | Path, findings: pd.DataFrame, *, overwrite: bool = False
) -> Path:
    """Write ``summary.xlsx`` atomically: a ``Town`` sheet, then one sheet per application.

    The ``Town`` sheet holds every finding; each row's cells are built once and shared by
    the town sheet and its application's sheet.  A column is as wide as its longest value
    among a sheet's first 200 rows (60 at most).

    Raises
    ------
    OutputError
        If ``path`` exists without ``overwrite`` or cannot be written.
    """
    frame = summary_frame(findings)
    columns = list(frame.columns)
    strings = SharedStrings()
    header_cells, _ = _column_cells(pd.Series(columns, dtype=object), strings)
    header = "".join(header_cells.tolist())
    title_len = np.array([len(str(c)) for c in columns], dtype="int64")
    built = [_column_cells(frame[c], strings) for c in columns]
    rows: list[str] = (
        list(map("".join, zip(*(cells.tolist() for cells, _ in built), strict=True)))
        if columns
        else [""] * len(frame)
    )
    shown = (
        np.column_stack([s for _, s in built]) if columns else np.zeros((len(frame), 0), "int64")
    )
    pids = frame["proposal_id"].astype(str).to_numpy(dtype=object)
    names = sheet_names(pids.tolist())
    codes, uniques = pd.factorize(pids)
    order = np.argsort(codes, kind="stable")  # each application's rows, in the town's order
    bounds = np.searchsorted(codes[order], np.arange(len(uniques) + 1))
    group = {pid: k for k, pid in enumerate(uniques.tolist())}
    group_widths = _group_widths(shown[order], bounds, title_len)
    pid_of = {name: pid for pid, name in names.items()}
    sheets = [TOWN_SHEET, *sorted(names.values(), key=str.lower)]
    tags = _RowTags(len(rows))
    with (
        atomic_path(path, overwrite=overwrite) as tmp,
        zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as book,
    ):
        for part, text in _package_parts(sheets, strings.xml()).items():
            book.writestr(part, text)
        widths = np.maximum(title_len, shown[:_WIDTH_ROWS].max(axis=0, initial=0))
        with book.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as handle:
            handle.write(_sheet_head(widths, header).encode("utf-8"))
            for start in range(0, len(rows), _CHUNK_ROWS):
                chunk = rows[start : start + _CHUNK_ROWS]
                handle.write(tags.body(chunk, start).encode("utf-8"))
            handle.write(_SHEET_TAIL.encode())
        heads: dict[bytes, str] = {}  # applications' sheets share their column widths
        for i, name in enumerate(sheets[1:], start=2):
            k = group[pid_of[name]]
            widths = group_widths[k]
            head = heads.get(widths.tobytes())
            if head is None:
                head = heads[widths.tobytes()] = _sheet_head(widths, header)
            body = tags.body([rows[j] for j in order[bounds[k] : bounds[k + 1]].tolist()])
            book.writestr(f"xl/worksheets/sheet{i}.xml", (head + body + _SHEET_TAIL).encode())
    return Path(path)
