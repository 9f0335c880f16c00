"""The console's line wrapping: the one-line shortcut gives what textwrap gives."""

from __future__ import annotations

import math
import random
import textwrap

import pandas as pd
import pytest
import shapely

from gis_sw.analysis.engine import complete_findings
from gis_sw.analysis.findings import make_findings
from gis_sw.outputs.console import records, wrap
from gis_sw.ruleset import Ruleset

CASES = [
    "",
    " ",
    "   ",
    "a",
    "  REQUIRED SW401: 51 weekly reports against 7 weekly reports (§ 183-9A(2))",
    "ends in a space ",
    "  leading spaces kept",
    "tab\there",
    "new\nline",
    "carriage\rreturn",
    "double  spaces  inside",
    "x" * 89,
    "x" * 90,
    "x" * 91,
    "word " * 17 + "end",
    "non\u00a0breaking\u00a0space\u00a0",
    "hyphen-ated-words-that-are-long " * 3,
]


@pytest.mark.parametrize("text", CASES)
@pytest.mark.parametrize(("first", "rest"), [("", ""), ("", "  "), (" " * 11, " " * 11)])
def test_wrap_equals_textwrap(text: str, first: str, rest: str) -> None:
    expected = textwrap.wrap(text, 100, initial_indent=first, subsequent_indent=rest)
    assert wrap(text, 100, initial_indent=first, subsequent_indent=rest) == expected


def test_wrap_equals_textwrap_on_random_texts() -> None:
    rng = random.Random(183)
    alphabet = "ab §-.,()" + " " * 4 + "\t\n\u00a0"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120)))
        first = " " * rng.choice([0, 2, 11])
        width = rng.choice([20, 60, 100])
        expected = textwrap.wrap(text, width, initial_indent=first, subsequent_indent="  ")
        assert wrap(text, width, initial_indent=first, subsequent_indent="  ") == expected, text


def test_records_equal_to_dict_records(ruleset: Ruleset) -> None:
    rows = make_findings(
        "SW106",
        "EPSG:2260",
        proposal_id=["P-1", "P-1", "P-2"],
        subject_id=["a", "b", "c"],
        outcome=["fail", "review", "pass"],
        message=["m1", "Ünïcödé §", ""],
        measured=[268.0, float("nan"), 0.5],
        threshold=[250.0, 10.0, float("nan")],
        unit="sq ft",
        geometry=[shapely.box(0, 0, 1, 1), None, shapely.Point(0, 0)],
    )
    findings = complete_findings(rows, ruleset).drop(columns="geometry")
    findings["waived"] = [True, False, None]
    findings["waiver_reason"] = pd.Series(["why", None, pd.NA], dtype="string")
    got, expected = records(findings), findings.to_dict("records")
    assert len(got) == len(expected) == 3
    for mine, theirs in zip(got, expected, strict=True):
        assert list(mine) == list(theirs)
        for key, value in theirs.items():
            if isinstance(value, float) and math.isnan(value):
                assert isinstance(mine[key], float), key
                assert math.isnan(mine[key]), key
            else:
                assert type(mine[key]) is type(value), key
                assert mine[key] == value, key


def test_wrap_equals_textwrap_on_random_plain_texts() -> None:
    """Words and single spaces (the plain path), hyphens inside words, some as long as a line."""
    rng = random.Random(14)
    for _ in range(3000):
        words = [
            "".join(
                rng.choice("abc§.,()x-\u00a0\u2003") for _ in range(rng.choice([1, 3, 8, 25, 89]))
            )
            for _ in range(rng.randint(1, 40))
        ]
        text = " ".join(words)
        first = " " * rng.choice([0, 2, 11])
        rest = " " * rng.choice([0, 2, 11])
        width = rng.choice([20, 60, 100])
        expected = textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest)
        assert wrap(text, width, initial_indent=first, subsequent_indent=rest) == expected, text
