"""summary.xlsx written as XML by hand: what openpyxl reads back, and its speed."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gis_sw.outputs.excel import TOWN_SHEET, sheet_names, write_summary_xlsx
from gis_sw.outputs.summary import SUMMARY_COLUMNS


def _frame(pids: list[str], **columns: list[object]) -> pd.DataFrame:
    n = len(pids)
    base: dict[str, object] = {name: [f"{name}-{i}" for i in range(n)] for name in SUMMARY_COLUMNS}
    base |= {"proposal_id": pids, "waived": [False] * n, "measured": [1.5] * n}
    base |= {"threshold": [10.0] * n}
    base |= columns
    return pd.DataFrame(base)


def test_cells_read_back_as_written(tmp_path: Path) -> None:
    from openpyxl import load_workbook

    pids = ["A&B <1>", "A&B <1>", "=SUM(A1)", "Lot 7/A"]
    frame = _frame(
        pids,
        waived=[True, False, False, True],
        waiver_reason=["", None, "  padded  ", "tab\there"],
        measured=[120.0, float("nan"), 9.99, 205.49240000010232],
        threshold=[100, 250, 10, 0],
        message=['say "hi" & <b>', "bell\x07", "é § 183-12A", "x" * 80],
    )
    path = write_summary_xlsx(tmp_path / "summary.xlsx", frame)
    book = load_workbook(path)
    names = sheet_names(pids)
    assert book.sheetnames == [TOWN_SHEET, *sorted(names.values(), key=str.lower)]
    town = [list(r) for r in book[TOWN_SHEET].iter_rows(values_only=True)]
    assert town[0] == list(SUMMARY_COLUMNS)
    col = {name: i for i, name in enumerate(SUMMARY_COLUMNS)}
    assert [r[col["proposal_id"]] for r in town[1:]] == pids
    assert [r[col["waived"]] for r in town[1:]] == ["True", "False", "False", "True"]
    assert [r[col["waiver_reason"]] for r in town[1:]] == [None, None, "  padded  ", "tab\there"]
    assert [r[col["measured"]] for r in town[1:]] == [120, None, 9.99, 205.4924000001023]
    assert [r[col["threshold"]] for r in town[1:]] == [100, 250, 10, 0]
    assert [r[col["message"]] for r in town[1:]] == [
        'say "hi" & <b>',
        "bell\\x07",
        "é § 183-12A",
        "x" * 80,
    ]
    formula = book[TOWN_SHEET].cell(row=4, column=col["proposal_id"] + 1)
    assert formula.data_type == "s"
    assert formula.value == "=SUM(A1)"
    mine = [list(r) for r in book[names["A&B <1>"]].iter_rows(values_only=True)]
    assert mine == [town[0], town[1], town[2]]
    sheet = book[names["Lot 7/A"]]
    assert sheet.freeze_panes == "A2"
    message_letter = chr(ord("A") + col["message"])
    assert sheet.column_dimensions[message_letter].width == 62  # 60 at most, plus 2


def test_many_applications_fast(tmp_path: Path) -> None:
    """500 applications of 25 findings each (12,500 rows, 501 sheets) in seconds."""
    from openpyxl import load_workbook

    n_pid, per = 500, 25
    pids = [f"P-{i:05d}" for i in np.repeat(np.arange(n_pid), per)]
    frame = _frame(pids, measured=list(np.linspace(0, 1000, len(pids))))
    t0 = time.perf_counter()
    path = write_summary_xlsx(tmp_path / "summary.xlsx", frame)
    seconds = time.perf_counter() - t0
    assert seconds < 10, f"{seconds:.1f} s"
    book = load_workbook(path, read_only=True)
    assert len(book.sheetnames) == n_pid + 1
    last = [list(r) for r in book["P-00499"].iter_rows(values_only=True)]
    assert len(last) == per + 1
    assert last[-1][SUMMARY_COLUMNS.index("measured")] == pytest.approx(1000.0)


def test_refuses_to_overwrite(tmp_path: Path) -> None:
    from gis_sw.errors import OutputError

    path = write_summary_xlsx(tmp_path / "summary.xlsx", _frame(["P-1"]))
    before = path.read_bytes()
    with pytest.raises(OutputError):
        write_summary_xlsx(path, _frame(["P-2"]))
    assert path.read_bytes() == before
