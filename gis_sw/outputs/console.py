"""What ``gis-sw check`` prints by default: one block per application, at most 100 columns.

Each block opens with the application's verdict line, then lists its non-pass findings (fail,
review, required, info), one line each with the measured figure and limit, and the sentence
indented under it.  ``--details`` prints the full table of
:func:`gis_sw.outputs.summary.format_table` instead.
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter
from functools import lru_cache
from typing import Any

import pandas as pd

from gis_sw.outputs.application import _figures, _text, verdict_sentence
from gis_sw.redact import printable

WIDTH = 100
_MARK = {"fail": "FAIL", "review": "REVIEW", "required": "REQUIRED", "info": "info"}


_SPECIAL_SPACE = re.compile("[\t\n\x0b\x0c\r]")
"""The whitespace textwrap rewrites (found by one search, not a set test per character)."""
_OTHER_SPACE = re.compile(r"[^\S ]")
"""Any whitespace but the plain space (Unicode spaces too: textwrap may drop a word of them)."""


def wrap(
    text: str, width: int, *, initial_indent: str = "", subsequent_indent: str = ""
) -> list[str]:
    """:func:`textwrap.wrap`, with the one-line case answered without it.

    A text that fits on its first line, holds none of the whitespace characters textwrap
    rewrites and does not end in whitespace comes back as ``initial_indent + text``, exactly as
    textwrap gives it; anything else goes to textwrap (20,000 applications' blocks: a fifth
    of a run went to wrapping lines that needed none).
    """
    if (
        text
        and len(initial_indent) + len(text) <= width
        and not text[-1].isspace()
        and _SPECIAL_SPACE.search(text) is None
    ):
        return [initial_indent + text]
    simple = _plain_wrap(text, width, initial_indent, subsequent_indent)
    if simple is not None:
        return simple
    return list(_textwrap(text, width, initial_indent, subsequent_indent))


def _plain_wrap(
    text: str, width: int, initial_indent: str, subsequent_indent: str
) -> list[str] | None:
    """Return textwrap's lines for a plain text, or None when the text is not plain.

    Plain: words apart by single spaces, no other whitespace (neither what textwrap
    rewrites nor a Unicode space, which might make a word textwrap drops), no space at
    either end, no word too long for a line, and no hyphenated word where a line breaks
    (textwrap may break after its hyphen).
    Then textwrap's greedy filling is this loop (``tests/test_perf14_console.py`` compares
    them on random texts).
    """
    if (
        not text
        or text[0] == " "
        or text[-1] == " "
        or "  " in text
        or _OTHER_SPACE.search(text) is not None
    ):
        return None
    words = text.split(" ")
    if max(map(len, words)) > width - max(len(initial_indent), len(subsequent_indent)):
        return None
    lines: list[str] = []
    indent, start, end = initial_indent, 0, len(text)
    while end - start > width - len(indent):
        # the longest run of whole words that fits: up to the last space within the width
        cut = text.rfind(" ", start, start + width - len(indent) + 1)
        after = text.find(" ", cut + 1)
        if "-" in text[cut + 1 : end if after < 0 else after]:
            return None  # textwrap might put the part before a hyphen on this line
        lines.append(indent + text[start:cut])
        indent, start = subsequent_indent, cut + 1
    lines.append(indent + text[start:])
    return lines


@lru_cache(maxsize=16_384)
def _textwrap(
    text: str, width: int, initial_indent: str, subsequent_indent: str
) -> tuple[str, ...]:
    """Return :func:`textwrap.wrap`'s lines, computed once per text.

    Thousands of applications share their "not required" sentences.
    """
    return tuple(
        textwrap.wrap(
            text, width, initial_indent=initial_indent, subsequent_indent=subsequent_indent
        )
    )


def _values(column: pd.Series) -> list[Any]:
    """Return a column as Python values, pandas' NA as None (as ``to_dict`` gives it)."""
    values = column.tolist()
    if isinstance(column.dtype, pd.api.extensions.ExtensionDtype):
        return [None if v is pd.NA else v for v in values]
    return values


def records(frame: pd.DataFrame) -> list[dict[Any, Any]]:
    """Return ``frame.to_dict("records")``, built column by column (a tenth of the time).

    Values come as :meth:`pandas.Series.tolist` gives them (Python scalars), pandas' NA as
    None, as ``frame.to_dict`` gives them (checked in ``tests/test_perf14_console.py``).
    """
    names = list(frame.columns)
    columns = [_values(frame[name]) for name in names]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


_USED = (
    *("proposal_id", "outcome", "waived", "rule_id", "subject_id"),
    *("citation", "message", "measured", "threshold", "unit"),
)
"""The columns a block shows or is ordered by."""
_LISTED = {"fail": 0, "review": 1, "required": 2, "info": 3}
"""Outcomes a block lists, in the order it lists them (passes are counted)."""


def format_blocks(findings: pd.DataFrame, *, width: int = WIDTH) -> str:
    r"""One block per application: verdict, then each non-pass finding, wrapped to ``width``.

    Ids and sentences are printed with control characters escaped
    (:func:`gis_sw.redact.printable`: ``\x1b``, ``\n``), so no id can forge a line or
    drive the terminal.

    Built column by column: the verdict from each application's counts, and the lines of
    a finding once per distinct (outcome, rule, figures, citation, sentence); the blocks
    are those :func:`gis_sw.outputs.application.summary_of_records` lays out
    (``tests/test_manywrite_console.py`` compares them on hostile findings).
    """
    n = len(findings)
    columns = {name: _values(findings[name]) for name in _USED if name in findings.columns}
    blank: list[Any] = [None] * n
    pids = [str(v) for v in columns["proposal_id"]]
    outcomes = [_text(v) for v in columns["outcome"]]
    waived = [bool(v) for v in columns.get("waived", blank)]
    rules = [str(v) for v in columns["rule_id"]]
    subjects = [str(v) for v in columns["subject_id"]]
    passes = Counter(p for p, o in zip(pids, outcomes, strict=True) if o == "pass")
    unwaived = Counter(
        (p, o) for p, o, w in zip(pids, outcomes, waived, strict=True) if not w and o in _LISTED
    )
    listed = [i for i, o in enumerate(outcomes) if o in _LISTED]
    listed.sort(key=lambda i: (pids[i], _LISTED[outcomes[i]], rules[i], subjects[i]))
    lines_of = _FindingLines(columns, blank, width)
    blocks, at = [], 0
    for pid in sorted(set(pids)):
        counts = {o: unwaived[pid, o] for o in ("fail", "review", "required")}
        met = passes[pid]
        lines = lines_of.wrap(
            f"{printable(pid)}: {verdict_sentence(counts)} "
            f"({met} rule{'s' if met != 1 else ''} met)",
            "",
            "  ",
        )
        while at < len(listed) and pids[listed[at]] == pid:
            lines += lines_of.finding(listed[at], outcomes[listed[at]], waived[listed[at]])
            at += 1
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


class _FindingLines:
    """The wrapped lines of findings, each distinct text wrapped once."""

    def __init__(self, columns: dict[Any, list[Any]], blank: list[Any], width: int) -> None:
        self.width = width
        self.rule_id = columns["rule_id"]
        self.citation = columns.get("citation", blank)
        self.message = columns.get("message", blank)
        self.measured = columns.get("measured", blank)
        self.threshold = columns.get("threshold", blank)
        self.unit = columns.get("unit", blank)
        self.figures: dict[tuple[Any, ...], tuple[str, str]] = {}
        self.wrapped: dict[tuple[str, str, str], list[str]] = {}

    def wrap(self, text: str, first: str, rest: str) -> list[str]:
        """Return :func:`wrap` of ``text`` at the width (computed once per text)."""
        key = (text, first, rest)
        found = self.wrapped.get(key)
        if found is None:
            found = self.wrapped[key] = wrap(
                text, self.width, initial_indent=first, subsequent_indent=rest
            )
        return found

    def finding(self, i: int, outcome: str, waived: bool) -> list[str]:
        """Return the head line(s) and the sentence's lines of row ``i``."""
        measured, limit, unit = self.measured[i], self.threshold[i], _text(self.unit[i])
        key = (type(measured), repr(measured), type(limit), repr(limit), unit)
        figures = self.figures.get(key)
        if figures is None:
            figures = self.figures[key] = _figures(measured, limit, unit)
        shown = f": {figures[0] or '-'} against {figures[1] or '-'}" if any(figures) else ""
        mark = f"{_MARK.get(outcome, outcome):<8}"
        head = f"  {mark} {_text(self.rule_id[i])}{' (waived)' if waived else ''}{shown}"
        indent = " " * 11
        return [
            *self.wrap(f"{head} ({_text(self.citation[i])})", "", indent),
            *self.wrap(printable(_text(self.message[i])), indent, indent),
        ]
