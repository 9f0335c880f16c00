"""The one reader of a claimed exemption: a letter, a citation or a heading, to the letter.

An applicant writes the exemption of § 183-5 (or another town's list) as they find it in the
law: ``"C"``, ``"(c)"``, ``"183-5C"``, ``"§ 183-5 C"``, ``"§ 183-5(C) routine maintenance"``
or the heading itself, ``"Cemetery graves"``.  :func:`parse_exemption` turns every one of
those into the letter of the ruleset's ``[exemptions]`` table, or ``None`` when the text names
no exemption of that table (then the reader reports it and SW104 answers ``review``).

The letters, their headings and the section number are data: the headings come from the
ruleset's ``[exemptions]`` table and the section from its citation of the exemptions
(``§ 183-5`` in Mount Pleasant); nothing here knows Chapter 183.

Reading rules, in order:

1. a bare letter (``C``, ``c``, ``(C)``, ``C.``), optionally after the section
   (``183-5C``, ``§ 183-5 C``, ``§183-5(c)``, ``Section 183-5C``), alone or followed by text;
   a letter followed by text without a mark (``A new house``) is *not* read as a letter;
2. otherwise the heading: the claim, compared word by word without case or punctuation, is
   the heading, a whole-word beginning of it (``Routine maintenance``), or starts with it;
   a claim that fits two headings names neither.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["accepted_forms", "parse_exemption", "section_number"]

_WORDS = re.compile(r"[a-z0-9]+")
_SECTION = re.compile(r"\d+(?:[-.]\d+)*")


def section_number(citation: str) -> str:
    """``"183-5"`` from ``"§ 183-5"`` (the first section number in a citation; ``""`` if none)."""
    match = _SECTION.search(citation or "")
    return match.group(0) if match else ""


def _words(text: str) -> list[str]:
    return _WORDS.findall(text.lower())


def _letter_pattern(section: str) -> re.Pattern[str]:
    """Match a letter, with or without the section before it; a mark is needed before any text."""
    cited = rf"(?:(?:§+|sec(?:tion|\.)?)\s*)?{re.escape(section)}\s*" if section else ""
    return re.compile(
        rf"^\s*(?:(?P<cited>{cited})|(?:§\s*)?)"
        r"(?P<open>\(\s*)?(?P<letter>[A-Za-z])(?(open)\s*\))"
        r"(?P<mark>\s*[.:)\-–]\s*|\s+(?=\S)|)(?P<rest>.*)$",
        re.IGNORECASE,
    )


def parse_exemption(
    claim: object, headings: Mapping[str, str], *, citation: str = ""
) -> str | None:
    """Return the letter of ``headings`` that ``claim`` names, or ``None``.

    Parameters
    ----------
    claim
        What the applicant wrote (text; ``None``, NA, any other non-text value and blank
        text give ``None``).
    headings
        Letter to heading, the ruleset's ``[exemptions]`` table.
    citation
        The ruleset's citation of the exemptions section (``"§ 183-5"``); its number is
        accepted before the letter.

    Returns
    -------
    str or None
        The upper-case letter, or ``None`` when the claim names no exemption of the table.
    """
    if not isinstance(claim, str):
        return None  # None, NA, NaN: nothing is claimed
    text = claim.strip()
    if not text or not headings:
        return None
    letters = {str(k).upper(): str(k) for k in headings}
    match = _letter_pattern(section_number(citation)).match(text)
    if match:
        letter = match.group("letter").upper()
        rest = match.group("rest").strip()
        marked = bool(match.group("cited") or match.group("open") or match.group("mark").strip())
        if letter in letters and (not rest or marked):
            return letters[letter]
    return _by_heading(text, headings)


def _by_heading(text: str, headings: Mapping[str, str]) -> str | None:
    claim = _words(text)
    if not claim:
        return None
    found = set()
    for letter, heading in headings.items():
        words = _words(str(heading))
        if not words:
            continue
        if claim == words[: len(claim)] or words == claim[: len(words)]:
            found.add(str(letter).upper())
    return found.pop() if len(found) == 1 else None


def accepted_forms(headings: Mapping[str, str], *, citation: str = "") -> str:
    """How to write a claim, for an error's fix: letters, a citation and a heading."""
    letters = sorted(str(k).upper() for k in headings)
    if not letters:
        return "leave it empty (the ruleset lists no exemptions)"
    section = section_number(citation)
    first = letters[0]
    example_heading = str(headings.get(first, headings[next(iter(headings))]))
    cited = f", its citation ({section}{first} or § {section} {first})" if section else ""
    return (
        f"write one of the letters {', '.join(letters)}{cited} or its heading "
        f"({example_heading!r}), or leave it empty"
    )
