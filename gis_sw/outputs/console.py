"""What ``gis-sw check`` prints by default: one block per application, at most 100 columns.

Each block opens with the application's verdict line, then lists its non-pass findings (fail,
review, required, info), one line each with the measured figure and limit, and the sentence
indented under it.  ``--details`` prints the full table of
:func:`gis_sw.outputs.summary.format_table` instead.
"""

from __future__ import annotations

import textwrap
from functools import lru_cache
from typing import Any

import pandas as pd

from gis_sw.outputs.application import summary_of_records

WIDTH = 100
_MARK = {"fail": "FAIL", "review": "REVIEW", "required": "REQUIRED", "info": "info"}


_SPECIAL_SPACE = frozenset("\t\n\x0b\x0c\r")


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
        and _SPECIAL_SPACE.isdisjoint(text)
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

    Plain: words apart by single spaces, none of the whitespace textwrap rewrites, no space
    at either end, no word too long for a line or made of Unicode spaces alone, and no
    hyphenated word where a line breaks (textwrap may break after its hyphen).
    Then textwrap's greedy filling is this loop (``tests/test_perf14_console.py`` compares
    them on random texts).
    """
    if (
        not text
        or text[0] == " "
        or text[-1] == " "
        or "  " in text
        or not _SPECIAL_SPACE.isdisjoint(text)
    ):
        return None
    words = text.split(" ")
    if max(map(len, words)) > width - max(len(initial_indent), len(subsequent_indent)):
        return None
    if not text.isascii() and not all(
        word.strip() for word in words
    ):  # a word of Unicode spaces: textwrap drops it
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


def format_blocks(findings: pd.DataFrame, *, width: int = WIDTH) -> str:
    """One block per application: verdict, then each non-pass finding, wrapped to ``width``."""
    blocks = []
    by_pid: dict[str, list[dict[Any, Any]]] = {}
    for record in records(findings.drop(columns="geometry", errors="ignore")):
        by_pid.setdefault(str(record["proposal_id"]), []).append(record)
    for proposal_id in sorted(by_pid):
        summary = summary_of_records(by_pid[proposal_id], proposal_id)
        passes = len(summary.passes)
        lines = wrap(
            f"{proposal_id}: {summary.verdict} ({passes} rule{'s' if passes != 1 else ''} met)",
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
            lines += wrap(item.message, width, initial_indent=" " * 11, subsequent_indent=" " * 11)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
