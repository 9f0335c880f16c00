"""``parse_hydrology`` split into one reader per sub-table: every problem named, in order."""

from __future__ import annotations

import pytest

from gis_sw.analysis.runoff.params import parse_hydrology
from gis_sw.errors import RulesetError
from gis_sw.ruleset import Ruleset, parse_ruleset


def _broken(ruleset: Ruleset, **changes: object) -> Ruleset:
    data = {k: dict(v) if isinstance(v, dict) else v for k, v in ruleset.raw.items()}
    data["hydrology"] = {**data["hydrology"], **changes}
    return parse_ruleset(data)


def test_every_sub_table_reports_its_problem_in_order(ruleset: Ruleset) -> None:
    hydro = ruleset.raw["hydrology"]
    covers = dict(hydro["covers"])
    covers["swamp"] = {"cn": [30, 40, 50], "c": 0.2}  # three curve numbers, not four
    covers["roof2"] = {"cn": [98, 98, 98, 101], "impervious": "yes", "c": "x"}
    broken = _broken(
        ruleset,
        covers=covers,
        cover_aliases={"forest": "jungle"},
        surface_cover=[1, 2],
        disturbed_cover="mud",
        dual_hsg="sometimes",
        round_composite_cn="yes",
        min_tc_hr=True,
        sheet_flow_p2_storm_yr=7,
        shallow_flow_k={"unpaved": -1.0},
        unit_peak={"Type III": {"ia_p": [0.3, 0.1], "c0": [1.0], "c1": [1.0, 2.0], "c2": 3}},
        rational_distribution={"a": 1.0},
        compare={"volume_tolerance_cf": -1.0},
    )
    with pytest.raises(RulesetError) as err:
        parse_hydrology(broken)
    text = str(err.value)
    expected = [
        "[hydrology.covers.swamp] cn has 3 values, expected 4",
        "[hydrology.covers.roof2] cn = [98.0, 98.0, 98.0, 101.0] should lie in (0, 100]",
        "[hydrology.covers.roof2] impervious = 'yes' should be true or false",
        "[hydrology.covers.roof2] c = 'x' should be a number",
        "[hydrology.cover_aliases] forest = 'jungle' is not a cover in covers",
        "[hydrology.surface_cover] should be a table of strings",
        "[hydrology] disturbed_cover = 'mud' should name a cover in [hydrology.covers]",
        '[hydrology] dual_hsg = \'sometimes\' should be "undrained" or "drained"',
        "[hydrology] round_composite_cn = 'yes' should be true or false",
        "[hydrology] min_tc_hr = True should be a number",
        "[hydrology] sheet_flow_p2_storm_yr = 7 should be a return period",
        "[hydrology.shallow_flow_k] unpaved = -1.0 should be above 0",
        "[hydrology] shallow_flow_surface = ",
        '[hydrology.unit_peak."Type III"] c0 has 1 values, expected 2',
        '[hydrology.unit_peak."Type III"] c2 = 3 should be a list of numbers',
        '[hydrology.unit_peak."Type III"] ia_p should increase',
        "[hydrology.unit_peak] has no table for [storms] distribution",
        "[hydrology.rational_distribution] b = None should be a number",
        "[hydrology.compare] volume_tolerance_cf = -1.0 should be 0 or more",
    ]
    positions = [text.find(part) for part in expected]
    assert all(p >= 0 for p in positions), [
        e for e, p in zip(expected, positions, strict=True) if p < 0
    ]
    assert positions == sorted(positions)  # in the order of the section's keys
    assert text.startswith(f"ruleset {broken.source or broken.name} has ")
    assert text.endswith("Fix: compare with gis_sw/rulesets/mount_pleasant_ny.toml.")


def test_the_default_ruleset_parses(ruleset: Ruleset) -> None:
    params = parse_hydrology(ruleset)
    raw = ruleset.raw["hydrology"]
    assert sorted(params.covers) == sorted(raw["covers"])
    assert params.default_cover == raw["default_cover"]
    assert params.sheet_flow_p2_storm_yr == raw["sheet_flow_p2_storm_yr"]
    assert params.mass_curve.a == float(raw["rational_distribution"]["a"])
    assert params.volume_tolerance_cf == float(raw["compare"]["volume_tolerance_cf"])
