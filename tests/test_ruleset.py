from __future__ import annotations

import tomllib
from importlib import resources

import pytest

from gis_sw.errors import RulesetError
from gis_sw.ruleset import load_ruleset, parse_ruleset


def _default_data() -> dict:
    text = resources.files("gis_sw.rulesets").joinpath("mount_pleasant_ny.toml").read_text()
    return tomllib.loads(text)


def test_default_ruleset_holds_the_numbers_of_chapter_183(ruleset):
    assert ruleset.permit.threshold_any_zone_sqft == 250.0
    assert ruleset.permit.threshold_low_zone_sqft == 100.0
    assert ruleset.zones.low_threshold_zones == ("R-10",)
    assert ruleset.devices.property_line_ft == 10.0
    assert ruleset.devices.septic_upgradient_ft == 20.0
    assert ruleset.devices.vehicle_traffic_ft == 50.0
    assert ruleset.devices.habitable_basement_ft == 20.0
    assert ruleset.phasing.max_disturbed_acres == 5.0
    assert dict(ruleset.storms.depths_in) == {
        1: 2.8,
        2: 3.5,
        5: 4.5,
        10: 5.0,
        25: 6.0,
        50: 7.0,
        100: 7.5,
    }
    assert ruleset.storms.design_depth_in == 6.0
    assert ruleset.permit.inspection_fee_fraction == 0.005
    assert ruleset.working_crs.to_epsg() == 2260
    assert ruleset.citation("SW101") == "§ 183-12A"


def test_every_rule_has_a_citation(ruleset):
    from gis_sw.analysis.registry import RULES

    ids = [r.rule_id for r in RULES]
    assert len(ids) == len(set(ids))
    for rule in RULES:
        assert ruleset.citation(rule.rule_id).strip()


def test_a_ruleset_file_by_path(tmp_path):
    path = tmp_path / "other_town.toml"
    text = resources.files("gis_sw.rulesets").joinpath("mount_pleasant_ny.toml").read_text()
    path.write_text(
        text.replace("threshold_any_zone_sqft = 250.0", "threshold_any_zone_sqft = 500.0")
    )
    assert load_ruleset(path).permit.threshold_any_zone_sqft == 500.0


def test_every_problem_is_reported_at_once():
    data = _default_data()
    data["permit"]["threshold_any_zone_sqft"] = "lots"
    del data["devices"]["property_line_ft"]
    data["ruleset"]["working_crs"] = "EPSG:4326"
    with pytest.raises(RulesetError) as info:
        parse_ruleset(data, source="bad.toml")
    text = str(info.value)
    assert "threshold_any_zone_sqft = 'lots' should be a number" in text
    assert "[devices] is missing property_line_ft" in text
    assert "geographic" in text
    assert "bad.toml" in text


def test_unknown_ruleset_name_names_the_fix():
    with pytest.raises(RulesetError, match="--ruleset"):
        load_ruleset("atlantis")


def test_missing_design_storm_depth():
    data = _default_data()
    data["storms"]["design_return_period_yr"] = 30
    with pytest.raises(RulesetError, match="design_return_period_yr = 30 has no depth"):
        parse_ruleset(data)


@pytest.mark.parametrize(
    ("zone", "low"),
    [
        ("R-10", True),
        ("r10", True),
        (" R 10 ", True),
        ("R_10", True),
        ("R-100", False),
        ("R-20", False),
        (None, False),
        (float("nan"), False),
    ],
)
def test_low_threshold_zone_names_match_whatever_their_spelling(ruleset, zone, low):
    assert ruleset.is_low_threshold_zone(zone) is low
    assert ruleset.low_threshold_mask([zone]).tolist() == [low]
