"""summary.xlsx built column by column with shared strings: the cells a plain writer gives.

The reference below states, cell by cell in plain Python, what every cell of every sheet
must read back as in openpyxl (value, type, format); the table is built here with hostile
text (formula-like ids, control characters, HTML, non-Latin ids) and odd numbers.
"""

from __future__ import annotations

import math
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from openpyxl import load_workbook

from gis_sw.outputs.excel import TOWN_SHEET, sheet_names, write_summary_xlsx
from gis_sw.outputs.summary import SUMMARY_COLUMNS, summary_frame

IDS = ["=cmd|' /C calc'!A0", "Lot 7/A", "Lot 7 A", "土地-12", "Ωμέγα", "<b>P&1</b>", "@SUM(A1)"]
TEXTS = [
    '=HYPERLINK("http://x")',
    "esc \x1b[31m red \x07",
    "<script>alert('x')</script> & more",
    "  padded  ",
    "tab\there",
    "two\nlines",
    "cr\rhere",
    "",
    None,
    "é § 183-12A",
    "x" * 90,
]


def _findings(rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(rows)
    measured = [120.0, -0.0, math.nan, math.inf, 1e16, 205.49240000010232, 9.99, 0.1]
    return pd.DataFrame(
        {
            "proposal_id": pd.Series([IDS[i % len(IDS)] for i in range(rows)], dtype="str"),
            "rule_id": [f"SW{101 + i % 9}" for i in range(rows)],
            "subject_id": [f"{IDS[i % 3]}:{i}" for i in range(rows)],
            "outcome": pd.Series(["fail", "pass", None][i % 3] for i in range(rows)),
            "waived": [True, False, None, "yes"][: max(rows, 1)] * (rows // 4)
            + [False] * (rows % 4),
            "waiver_reason": [TEXTS[i % len(TEXTS)] for i in range(rows)],
            "measured": [measured[i % len(measured)] for i in range(rows)],
            "threshold": pd.Series([250, None, 10.5, True][i % 4] for i in range(rows)),
            "unit": ["sq ft", "ft", "USD"] * (rows // 3) + ["%"] * (rows % 3),
            "message": [TEXTS[(i * 5) % len(TEXTS)] for i in range(rows)],
            "finding_id": [f"{rng.integers(0, 1 << 60):016x}" for _ in range(rows)],
        }
    )


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _expected_text(value: object) -> str | None:
    """A text cell as it reads back: control characters shown, line ends as XML reads them."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))
    return text.replace("\r\n", "\n").replace("\r", "\n") or None


def _expected_cell(value: object, numeric: bool) -> tuple[object, str]:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None, "n"
    if numeric and not isinstance(value, bool):
        number = float(value)  # type: ignore[arg-type]
        # 16 significant digits, as openpyxl wrote them
        return (float(f"{number:.16g}"), "n") if math.isfinite(number) else (None, "n")
    text = _expected_text(value)
    return text, "n" if text is None else "s"


def reference(findings: pd.DataFrame) -> dict[str, list[list[tuple[object, str]]]]:
    """Each sheet's rows of (value, type), header first, written the plain way."""
    frame = summary_frame(findings)
    header = [(name, "s") for name in frame.columns]
    numeric = {
        c: pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
        for c in frame.columns
    }
    rows = [
        [_expected_cell(v, numeric[c]) for c, v in zip(frame.columns, r, strict=True)]
        for r in frame.itertuples(index=False)
    ]
    pids = [str(p) for p in frame["proposal_id"]]
    sheets = {TOWN_SHEET: [header, *rows]}
    for pid, name in sorted(sheet_names(pids).items(), key=lambda kv: kv[1].lower()):
        sheets[name] = [header, *(row for row, p in zip(rows, pids, strict=True) if p == pid)]
    return sheets


def _widths(frame: pd.DataFrame, rows: list[int]) -> list[float]:
    out = []
    for c in frame.columns:
        values = frame[c].to_numpy(dtype=object)[rows[:200]]
        longest = max([len(str(c)), *(min(len(str(v)), 60) for v in values)])
        out.append(longest + 2)
    return out


def _read(path: Path) -> dict[str, list[list[tuple[object, str]]]]:
    book = load_workbook(path)
    sheets = {}
    for sheet in book.worksheets:
        assert sheet.freeze_panes == "A2"
        cells = []
        for row in sheet.iter_rows():
            for cell in row:
                assert cell.number_format == "General"
                assert not cell.font.b
            cells.append([(c.value, c.data_type) for c in row])
        sheets[sheet.title] = cells
    return sheets


def _numbers_equal(a: list, b: list) -> bool:
    """Rows equal, a number read back as int (120) equal to its float (120.0), -0 to -0.0."""
    return len(a) == len(b) and all(
        len(x) == len(y)
        and all(
            (u == v and t == s and type(u) is type(v))
            or (
                t == s == "n"
                and isinstance(u, int | float)
                and isinstance(v, int | float)
                and u == v
            )
            for (u, t), (v, s) in zip(x, y, strict=True)
        )
        for x, y in zip(a, b, strict=True)
    )


@pytest.mark.parametrize("rows", [1, 9, 64])
def test_xlsx_cells_equal_the_plain_reference(tmp_path: Path, rows: int) -> None:
    findings = _findings(rows)
    path = write_summary_xlsx(tmp_path / "summary.xlsx", findings)
    got = _read(path)
    expected = reference(findings)
    assert list(got) == list(expected)
    for name, cells in expected.items():
        assert _numbers_equal(got[name], cells), name


def test_xlsx_column_widths_and_formula_text(tmp_path: Path) -> None:
    findings = _findings(64)
    path = write_summary_xlsx(tmp_path / "summary.xlsx", findings)
    book = load_workbook(path)
    frame = summary_frame(findings)
    pids = [str(p) for p in frame["proposal_id"]]
    names = sheet_names(pids)
    for title, rows in [(TOWN_SHEET, list(range(len(pids))))] + [
        (names[p], [i for i, q in enumerate(pids) if q == p]) for p in set(pids)
    ]:
        sheet = book[title]
        got = [sheet.column_dimensions[chr(ord("A") + i)].width for i in range(len(frame.columns))]
        assert got == _widths(frame, rows), title
    town = book[TOWN_SHEET]
    assert town["A2"].value == "=cmd|' /C calc'!A0"
    assert town["A2"].data_type == "s"  # text, never a formula
    assert [c.value for c in town[1]] == list(SUMMARY_COLUMNS)


def test_xlsx_texts_are_shared_once(tmp_path: Path) -> None:
    """A sentence on the town sheet and its application's sheet is stored once."""
    findings = _findings(9)
    findings["message"] = "Same sentence & <tag> on every row"
    path = write_summary_xlsx(tmp_path / "summary.xlsx", findings)
    with zipfile.ZipFile(path) as book:
        strings = book.read("xl/sharedStrings.xml").decode("utf-8")
        sheets = [n for n in book.namelist() if n.startswith("xl/worksheets/")]
        assert strings.count("Same sentence &amp; &lt;tag&gt; on every row") == 1
        assert all("Same sentence" not in book.read(n).decode("utf-8") for n in sheets)


def test_xlsx_no_findings(tmp_path: Path) -> None:
    path = write_summary_xlsx(tmp_path / "summary.xlsx", _findings(0))
    got = _read(path)
    assert list(got) == [TOWN_SHEET]
    assert [v for v, _ in got[TOWN_SHEET][0]] == list(SUMMARY_COLUMNS)
    assert len(got[TOWN_SHEET]) == 1


def test_xlsx_widths_from_each_sheets_first_200_rows(tmp_path: Path) -> None:
    """A long text after an application's 200th row does not widen its sheet's column."""
    rows = 260
    findings = _findings(rows)
    findings["proposal_id"] = ["A"] * 230 + ["B"] * 30
    findings["message"] = ["short"] * rows
    findings.loc[215, "message"] = "L" * 50  # A's 216th row, the town's 216th
    findings.loc[240, "message"] = "M" * 40  # B's 11th row
    path = write_summary_xlsx(tmp_path / "summary.xlsx", findings)
    book = load_workbook(path, read_only=False)
    letter = chr(ord("A") + list(SUMMARY_COLUMNS).index("message"))
    assert book[TOWN_SHEET].column_dimensions[letter].width == len("message") + 2
    assert book["A"].column_dimensions[letter].width == len("message") + 2
    assert book["B"].column_dimensions[letter].width == 40 + 2
    frame = summary_frame(findings)
    assert [book["B"].column_dimensions[chr(ord("A") + i)].width for i in range(14)] == _widths(
        frame, list(range(230, 260))
    )
