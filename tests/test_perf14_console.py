"""The console's line wrapping: the one-line shortcut gives what textwrap gives."""

from __future__ import annotations

import random
import textwrap

import pytest

from gis_sw.outputs.console import wrap

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
