"""The console blocks built column by column equal the blocks laid out record by record.

The reference is the way the blocks were built before: each application's findings as
records, :func:`gis_sw.outputs.application.summary_of_records`, its lines wrapped one by
one.  The findings are built here: hostile ids, odd outcomes, waived rows, odd figures.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from gis_sw.outputs.application import summary_of_records
from gis_sw.outputs.console import format_blocks, records, wrap
from gis_sw.redact import printable

_MARK = {"fail": "FAIL", "review": "REVIEW", "required": "REQUIRED", "info": "info"}
IDS = [
    "P-1",
    "=cmd|' /C calc'!A0",
    "土地-12",
    "Ωμέγα 7",
    "esc\x1b[31m",
    "two\nlines",
    "P-10",
    "P-2",
]
MESSAGES = [
    "Disturbance of 260 sq ft in zone R-10 reaches the 100 sq ft threshold (§ 183-12A).",
    "A long sentence with hyphenated-words-that-break and more words " * 4,
    "tab\tand  double  spaces and a trailing space ",
    "",
    None,
    "<script>alert(1)</script> & text",
]


def reference(findings: pd.DataFrame, width: int = 100) -> str:
    """The blocks as summary_of_records lays them out, application by application."""
    by_pid: dict[str, list[dict[Any, Any]]] = {}
    for record in records(findings.drop(columns="geometry", errors="ignore")):
        by_pid.setdefault(str(record["proposal_id"]), []).append(record)
    blocks = []
    for proposal_id in sorted(by_pid):
        summary = summary_of_records(by_pid[proposal_id], proposal_id)
        passes = len(summary.passes)
        lines = wrap(
            f"{printable(proposal_id)}: {summary.verdict} "
            f"({passes} rule{'s' if passes != 1 else ''} met)",
            width,
            subsequent_indent="  ",
        )
        for item in (*summary.problems, *summary.obligations, *summary.info):
            figures = ""
            if item.measured or item.limit:
                figures = f": {item.measured or '-'} against {item.limit or '-'}"
            waived = " (waived)" if item.waived else ""
            head = f"  {_MARK.get(item.outcome, item.outcome):<8} {item.rule_id}{waived}{figures}"
            lines += wrap(f"{head} ({item.citation})", width, subsequent_indent=" " * 11)
            lines += wrap(
                printable(item.message), width, initial_indent=" " * 11, subsequent_indent=" " * 11
            )
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _findings(rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    outcomes = ["fail", "review", "required", "info", "pass", "pass", "unknown", None]
    figures = [
        (260.0, 250.0, "sq ft"),
        (250.0, 250.0, "sq ft"),
        (65_340.0, 43_560.0, "sq ft"),
        (9.99, 10.0, "ft"),
        (-0.0, 0.0, "ft"),
        (0.0, 0.0, "ft"),  # equal to the row above as dict keys, written apart
        (-0.0, None, "ft"),
        (0.0, None, "ft"),
        (math.nan, 5.0, "in"),
        (None, None, None),
        (444.37, None, "USD"),
        (5.000001, 5.0, "acres"),
        (np.float64(7.5), 7, "weekly reports"),
    ]
    pick = rng.integers(0, len(figures), rows)
    return pd.DataFrame(
        {
            "proposal_id": pd.Series(
                [IDS[i] for i in rng.integers(0, len(IDS), rows)], dtype="str"
            ),
            "rule_id": [f"SW{r}" for r in rng.choice([101, 105, 205, 301, 106], rows)],
            "subject_id": [f"D{d}" for d in rng.integers(0, 4, rows)],
            "outcome": pd.Series([outcomes[i] for i in rng.integers(0, len(outcomes), rows)]),
            "waived": pd.Series([[True, False, None][i] for i in rng.integers(0, 3, rows)]),
            "measured": pd.Series([figures[k][0] for k in pick], dtype=object),
            "threshold": pd.Series([figures[k][1] for k in pick], dtype=object),
            "unit": [figures[k][2] for k in pick],
            "citation": [["§ 183-12A", None, "§ 183-12C(2)(c)[6]"][i % 3] for i in range(rows)],
            "message": [MESSAGES[m] for m in rng.integers(0, len(MESSAGES), rows)],
        }
    )


@pytest.mark.parametrize(("rows", "seed"), [(0, 0), (1, 1), (40, 2), (400, 3)])
def test_blocks_equal_summary_of_records_layout(rows: int, seed: int) -> None:
    findings = _findings(rows, seed)
    assert format_blocks(findings) == reference(findings)


@pytest.mark.parametrize("width", [40, 100])
def test_blocks_equal_on_typed_columns_and_narrow_width(width: int) -> None:
    findings = _findings(120, 9)
    findings["measured"] = pd.to_numeric(findings["measured"]).astype("float64")
    findings["waived"] = findings["waived"].fillna(value=False).astype(bool)
    findings["outcome"] = findings["outcome"].astype("str")
    assert format_blocks(findings, width=width) == reference(findings, width)


def test_blocks_verdict_counts_and_waived_marks() -> None:
    findings = pd.DataFrame(
        {
            "proposal_id": ["B", "A", "A", "A", "A"],
            "rule_id": ["SW101", "SW205", "SW205", "SW101", "SW301"],
            "subject_id": ["B", "D2", "D1", "A", "A"],
            "outcome": ["pass", "fail", "fail", "required", "pass"],
            "waived": [False, True, False, False, False],
            "measured": [1.0, 9.99, 9.98, 260.0, 2.0],
            "threshold": [2.0, 10.0, 10.0, 250.0, 5.0],
            "unit": ["acres", "ft", "ft", "sq ft", "acres"],
            "citation": ["§ 183-12A", "§ 183-12C(2)(c)[6]", "§ 183-12C(2)(c)[6]", "§ 183-12A", "x"],
            "message": ["ok", "close to the lot line", "closer", "permit", "ok"],
        }
    )
    text = format_blocks(findings)
    assert text == reference(findings)
    lines = text.splitlines()
    assert lines[0] == (
        "A: Does not comply as proposed: 1 rule fails; 1 obligation attaches. (1 rule met)"
    )
    assert lines[1] == "  FAIL     SW205: 9.98 ft against 10.00 ft (§ 183-12C(2)(c)[6])"  # D1 first
    assert lines[3] == "  FAIL     SW205 (waived): 9.99 ft against 10.00 ft (§ 183-12C(2)(c)[6])"
    assert lines[-1] == "B: Meets every screened rule; the law attaches no obligation. (1 rule met)"


def test_blocks_escape_control_characters_in_ids_and_sentences() -> None:
    findings = pd.DataFrame(
        {
            "proposal_id": ["P-1\x1b[2J", "two\nlines"],
            "rule_id": ["SW101", "SW101"],
            "subject_id": ["a", "b"],
            "outcome": ["fail", "review"],
            "waived": [False, False],
            "measured": [260.0, None],
            "threshold": [250.0, None],
            "unit": ["sq ft", None],
            "citation": ["§ 183-12A", "§ 183-12A"],
            "message": ["bell\x07 and \x1b[31mred", "fine"],
        }
    )
    text = format_blocks(findings)
    assert "\x1b" not in text
    assert "\x07" not in text
    lines = text.splitlines()
    assert lines[0].startswith("P-1\\x1b[2J: Does not comply as proposed")
    assert lines[2] == "           bell\\x07 and \\x1b[31mred"
    assert lines[4].startswith("two\\nlines: ")
