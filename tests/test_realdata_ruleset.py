"""Ruleset loading: non-finite numbers refused by name (issue 14)."""

from __future__ import annotations

import tomllib
from importlib import resources
from typing import Any

import pytest

from gis_sw.errors import RulesetError
from gis_sw.ruleset import parse_ruleset


def mount_pleasant_data() -> dict[str, Any]:
    text = resources.files("gis_sw.rulesets").joinpath("mount_pleasant_ny.toml").read_text()
    return tomllib.loads(text)


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("devices", "property_line_ft", float("nan")),
        ("devices", "habitable_basement_ft", float("inf")),
        ("permit", "threshold_any_zone_sqft", float("nan")),
        ("permit", "threshold_low_zone_sqft", float("-inf")),
        ("phasing", "max_disturbed_acres", float("inf")),
    ],
    ids=["nan-setback", "inf-setback", "nan-threshold", "minus-inf-threshold", "inf-acres"],
)
def test_non_finite_threshold_or_setback_is_refused_by_name(
    section: str, key: str, value: float
) -> None:
    data = mount_pleasant_data()
    data[section][key] = value
    with pytest.raises(RulesetError) as info:
        parse_ruleset(data, source="town.toml")
    assert f"[{section}] {key} = {value} is not a finite number" in str(info.value)


def test_non_finite_in_an_untyped_section_and_a_table_is_refused() -> None:
    data = mount_pleasant_data()
    data["storms"]["depths_in"]["25"] = float("nan")
    data.setdefault("hydrology", {})["some_factor"] = float("inf")
    with pytest.raises(RulesetError) as info:
        parse_ruleset(data, source="town.toml")
    text = str(info.value)
    assert "[storms] depths_in.25 = nan is not a finite number" in text
    assert "[hydrology] some_factor = inf is not a finite number" in text
