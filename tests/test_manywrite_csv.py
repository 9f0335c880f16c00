"""The column-by-column CSV writer gives pandas' text, byte for byte, on hostile tables.

The reference is what gis_sw wrote before (``csv_frame(frame).to_csv(...)``): every test
builds its table here, writes it both ways and compares the bytes.
"""

from __future__ import annotations

import io
import os
import random

import numpy as np
import pandas as pd
import pytest

from gis_sw.outputs.calcsheet import rounded, write_calc_sheet
from gis_sw.outputs.csvcells import EXCEL_BOM, csv_frame, csv_text, unescape_cell
from gis_sw.outputs.summary import SUMMARY_COLUMNS, summary_frame, write_summary_csv

HOSTILE = [
    "=cmd|' /C calc'!A0",
    '=HYPERLINK("http://example.com","x")',
    "+1+1",
    "-2+3",
    "-3.5",
    "+1e3",
    "@SUM(A1:A9)",
    "\tx",
    "\rx",
    'say "hi"',
    "a,b",
    "two\nlines",
    "cr\r\nlf",
    "nul\x00esc\x1b bell\x07",
    "<script>alert(1)</script>&amp;",
    "Lot 7/A",
    "Ωμέγα-7",
    "土地-12",
    "",
    " ",
    " padded ",
    "line\u2028sep",
    "'quoted already",
    "\ufeffbom",
]


def reference(frame: pd.DataFrame, lineterminator: str) -> str:
    """What gis_sw wrote before: pandas' writer over the escaped frame."""
    return str(csv_frame(frame).to_csv(index=False, lineterminator=lineterminator))


def hostile_frame(rows: int, seed: int) -> pd.DataFrame:
    """Every kind of column gis_sw writes, with hostile text, missing values and odd floats."""
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(HOSTILE), rows)
    texts = [HOSTILE[i] for i in pick]
    floats = rng.choice(
        np.array([0.0, -0.0, 1.5, -3.25, 1e16, 1e-5, 123456789.123, np.inf, -np.inf, np.nan]),
        rows,
    )
    with_missing: list[object] = [None if i % 5 == 0 else t for i, t in enumerate(texts)]
    if rows > 1:
        with_missing[1] = np.nan
    mixed: list[object] = [
        [3, 2.5, np.float64(0.1), True, None, "=x", "a,b", np.int64(7), np.nan][i % 9]
        for i in range(rows)
    ]
    return pd.DataFrame(
        {
            "proposal_id": pd.Series(texts, dtype="str"),
            "=name": pd.Series(texts[::-1], dtype="string"),
            "object_text": pd.Series(with_missing, dtype=object),
            "measured": floats,
            "small": floats.astype("float32"),
            "storm_yr": pd.array([None if i % 4 == 0 else i for i in range(rows)], dtype="Int64"),
            "count": np.arange(rows, dtype="int64") - rows // 2,
            "waived": rng.random(rows) < 0.5,
            "flag": pd.array([None if i % 3 == 0 else i % 2 == 0 for i in range(rows)], "boolean"),
            "mixed": pd.Series(mixed, dtype=object),
            "zone": pd.Categorical([["R-10", "=R-20", "a,b"][i % 3] for i in range(rows)]),
            "a,b": pd.Series([None] * rows, dtype=object),
        }
    )


@pytest.mark.parametrize("lineterminator", ["\n", "\r\n"])
@pytest.mark.parametrize("rows", [0, 1, 2, 37, 120])
def test_csv_text_is_pandas_text_on_hostile_columns(lineterminator: str, rows: int) -> None:
    frame = hostile_frame(rows, seed=rows)
    assert csv_text(frame, lineterminator=lineterminator) == reference(frame, lineterminator)


def test_csv_text_escapes_formulas_and_quotes_like_the_csv_module() -> None:
    frame = pd.DataFrame({"id": ["=cmd", "-3.5", "a,b", 'q"x', "x\ny"], "n": [1.0] * 5})
    text = csv_text(frame)
    assert text == ('id,n\n\'=cmd,1.0\n-3.5,1.0\n"a,b",1.0\n"q""x",1.0\n"x\ny",1.0\n')
    assert unescape_cell("'=cmd") == "=cmd"


def test_csv_text_random_texts_match_pandas() -> None:
    chars = "ab ,\"'\n\r\t=+-@.;|\x00\x1f\x7f0123456789eEΩ土\u2028\ufeff"
    rng = random.Random(183)
    values = ["".join(rng.choice(chars) for _ in range(rng.randint(0, 8))) for _ in range(3000)]
    frame = pd.DataFrame({"t": values, "u": values[::-1], "x": np.arange(3000) / 7})
    for lineterminator in ("\n", "\r\n"):
        assert csv_text(frame, lineterminator=lineterminator) == reference(frame, lineterminator)


def test_csv_text_every_character_quoted_as_the_csv_module_does() -> None:
    """Each of the first 0x3000 code points (not surrogates), alone and inside text."""
    points = [chr(i) for i in range(0x3000) if not 0xD800 <= i <= 0xDFFF]
    frame = pd.DataFrame({"alone": points, "inside": [f"a{c}b" for c in points]})
    for lineterminator in ("\n", "\r\n", "\r"):
        assert csv_text(frame, lineterminator=lineterminator) == reference(frame, lineterminator)


def test_csv_text_hands_other_kinds_to_pandas() -> None:
    """One column (an empty field alone is quoted), dates, masked floats: pandas' own text."""
    cases = [
        pd.DataFrame({"only": ["", "=x", None]}),
        pd.DataFrame({"day": pd.to_datetime(["2026-01-01", None]), "n": [1, 2]}),
        pd.DataFrame({"f": pd.array([1.5, None], dtype="Float64"), "n": ["a", "b"]}),
        pd.DataFrame(),
    ]
    for frame in cases:
        assert csv_text(frame) == reference(frame, "\n")


def _calc_table(rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame(
        {
            "proposal_id": [HOSTILE[i % len(HOSTILE)] for i in range(rows)],
            "drainage_id": [f"D-{i % 3}" for i in range(rows)],
            "line": ["subarea", "storm", "tc", "composite"] * (rows // 4),
            "area_sqft": rng.uniform(-5, 500_000, rows),
            "cn": rng.uniform(30, 98, rows),
            "storm_yr": pd.array([None, 1, 25, 100] * (rows // 4), dtype="Int64"),
            "s_in": np.where(np.arange(rows) % 2 == 0, np.nan, -0.00001),
            "note": ["DEM: highest, lowest", None, "", "x"] * (rows // 4),
        }
    )


def test_write_calc_sheet_bytes_are_the_pandas_file(tmp_path) -> None:
    table = _calc_table(48)
    written = write_calc_sheet(table, tmp_path / "calcsheet.csv")
    old = tmp_path / "old.csv"
    csv_frame(rounded(table)).to_csv(old, index=False, encoding="utf-8-sig")
    data = written.read_bytes()
    assert data == old.read_bytes()
    assert data.startswith(EXCEL_BOM.encode("utf-8"))
    assert os.linesep.encode() in data
    assert b"'=cmd|" in data  # the formula-injection escape stays
    assert b"-0.0" in data  # -0.00001 rounded to 4 places keeps its sign, as pandas wrote


def test_write_summary_csv_bytes_are_the_pandas_file(tmp_path) -> None:
    rows = 30
    findings = pd.DataFrame(
        {
            "proposal_id": [HOSTILE[i % len(HOSTILE)] for i in range(rows)],
            "rule_id": ["SW101", "SW205"] * (rows // 2),
            "subject_id": [f"{HOSTILE[i % 7]}:dev" for i in range(rows)],
            "outcome": ["fail", "pass", "review"] * (rows // 3),
            "waived": [True, False, None] * (rows // 3),
            "measured": np.linspace(-1, 260, rows),
            "threshold": [250.0] * rows,
            "message": [f'Disturbance of {i} sq ft, "quoted"\nnext' for i in range(rows)],
        }
    )
    path = write_summary_csv(tmp_path / "summary.csv", findings)
    buffer = io.StringIO()
    csv_frame(summary_frame(findings)).to_csv(buffer, index=False, lineterminator="\n")
    expected = EXCEL_BOM + buffer.getvalue()
    assert path.read_bytes() == expected.encode("utf-8")
    header = path.read_text(encoding="utf-8-sig").split("\n", 1)[0]
    assert header.split(",") == list(SUMMARY_COLUMNS)
