"""Every rule of ``RULES`` has a passing, a failing and a boundary test, found by name.

Convention (issue 15, item 6): a test function's name, split at ``_``, holds the rule id in
lower case (``sw205``; several ids when one test covers several rules,
``test_sw502_sw503_...``) and the words of what it shows:

- ``pass``: the rule is met (``info`` for a rule whose every finding is info: SW107, SW208,
  SW501, SW504 report figures the law asks to see; ``required`` for SW211, whose answer is
  the obligations a device brings, :data:`NEVER_PASSES`);
- ``fail``: the rule is broken, or, for a rule that never fails, ``required`` (an
  obligation attaches) or ``review`` (the data cannot decide);
- ``boundary``: cases at exactly the rule's limit and 0.01 either side.

One parametrized test may carry several words when its cases show each (``test_sw205_
boundary_pass_fail`` runs 9.99, 10.00 and 10.01 ft).  Rules whose findings only ever say
``info`` have no failing side (:data:`NEVER_BREAKS`), and rules with no numeric limit have
no boundary (:data:`NO_LIMIT`); each names why.  The test files are read with :mod:`ast`
(no import, no collection), so this meta-test costs milliseconds.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from gis_sw.analysis.registry import RULES

TESTS = Path(__file__).parent

MEETS = {"pass", "info"}
BREAKS = {"fail", "required", "review"}
BOUNDARY = {"boundary"}

NEVER_BREAKS = {
    "SW107": "always info: the state's rules apply alongside the town's either way",
    "SW208": "always info: the distances the law asks the plan to maximise",
    "SW504": "always info: the water quality volume the devices must treat",
}
"""Rules with no failing (or required, or review) finding, and why."""

NEVER_PASSES = {
    "SW211": "required is its answer: maintenance obligations attach to every device",
}
"""Rules whose meeting side is ``required`` (never ``pass``); their other side is ``review``."""

NO_LIMIT = {
    "SW207": "a yes/no attribute: true, false and missing are its cases",
    "SW208": "a report of distances, with no limit to be on either side of",
    "SW209": "a yes/no attribute: true, false and missing are its cases",
    "SW501": "a summary of the design-storm figures, with no limit",
    "SW504": "a computed volume, with no limit",
}
"""Rules with no numeric limit to test exactly at, and why."""


def _test_names() -> list[str]:
    """Return the name of every test function under tests/ (module level and in classes)."""
    names = []
    for path in sorted(TESTS.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
                "test_"
            ):
                names.append(node.name)
    return names


def _rule_words(name: str) -> dict[str, set[str]]:
    """Return the rule ids one test name holds, each with the convention's words it carries."""
    words = set(name.split("_"))
    shown = words & (MEETS | BREAKS | BOUNDARY)
    return {w.upper(): set(shown) for w in words if re.fullmatch(r"sw\d{3}", w)}


def _sides() -> dict[str, set[str]]:
    """Return, per rule id named by a test, the words its tests' names carry."""
    found: dict[str, set[str]] = {}
    for name in _test_names():
        for rule_id, words in _rule_words(name).items():
            found.setdefault(rule_id, set()).update(words)
    return found


def test_every_rule_has_a_passing_a_failing_and_a_boundary_test() -> None:
    sides = _sides()
    missing = []
    for rule in RULES:
        words = sides.get(rule.rule_id, set())
        meets, breaks = MEETS, BREAKS
        if rule.rule_id in NEVER_PASSES:
            meets, breaks = {"required"}, {"fail", "review"}
        if not words & meets:
            missing.append(f"{rule.rule_id}: pass")
        if rule.rule_id not in NEVER_BREAKS and not words & breaks:
            missing.append(f"{rule.rule_id}: fail/required/review")
        if rule.rule_id not in NO_LIMIT and not words & BOUNDARY:
            missing.append(f"{rule.rule_id}: boundary")
    assert missing == []


def test_test_names_name_only_rules_that_exist() -> None:
    known = {rule.rule_id for rule in RULES}
    assert sorted(set(_sides()) - known) == []


def test_exceptions_are_rules_and_still_have_their_other_tests() -> None:
    known = {rule.rule_id for rule in RULES}
    assert set(NEVER_BREAKS) <= known
    assert set(NO_LIMIT) <= known
    assert set(NEVER_PASSES) <= known
    sides = _sides()
    # an exception waives one side only: the meeting side is tested for every rule
    assert all(sides.get(rule_id, set()) & MEETS for rule_id in {*NEVER_BREAKS, *NO_LIMIT})
    assert all("required" in sides.get(rule_id, set()) for rule_id in NEVER_PASSES)


def test_the_convention_reads_words_not_substrings() -> None:
    # "passes" or "failing" in a name is not the word the convention asks for
    assert _rule_words("test_sw205_passes_when_failing") == {"SW205": set()}
    assert _rule_words("test_sw502_sw503_boundary_pass_at_zero") == {
        "SW502": {"boundary", "pass"},
        "SW503": {"boundary", "pass"},
    }
    assert _rule_words("test_permit_threshold_sw101x") == {}


TITLE_TERMS = ("100-year", "TR-55")
"""Numbers in titles that are names of things (the law's floodplain, the NRCS method)."""


def test_titles_take_their_numbers_from_the_ruleset() -> None:
    # issue 15 item 4: "Device 10 ft from every property line" printed 10 ft in a town of 15
    for rule in RULES:
        text = re.sub(r"\{[^}]*\}", "", rule.title)
        for term in TITLE_TERMS:
            text = text.replace(term, "")
        assert re.search(r"\d", text) is None, (rule.rule_id, rule.title)
