"""The findings builder every check uses (gis_sw.analysis.findings.Findings, rule_check)."""

from __future__ import annotations

import math
import tomllib
from importlib import resources
from typing import Any

import geopandas as gpd
import pandas as pd
import pytest
from shapely.geometry import Point, box

from gis_sw.analysis import permits
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.findings import CHECK_COLUMNS, Findings, Outcome, rule_check
from gis_sw.analysis.registry import RULES, RULES_BY_ID, rule_of, rule_title
from gis_sw.errors import RulesetError
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.ruleset import Ruleset, parse_ruleset

CRS = "EPSG:2260"


def test_rows_take_the_builders_defaults_and_round_measured_figures() -> None:
    rows = Findings("SW205", "§ 183-12C(2)(c)[6]", CRS)
    rows.threshold, rows.unit, rows.decimals = 10.0, "ft", 2
    rows.add("P1", Outcome.PASS, "far", subject_id="D-1", measured=10.004, geometry=Point(0, 0))
    rows.add("P1", Outcome.FAIL, "near", subject_id="D-2", measured=9.986, threshold=12.0)
    rows.add("P2", "review", "unknown", unit="")
    frame = rows.frame()
    assert list(frame.columns) == list(CHECK_COLUMNS)
    assert frame["rule_id"].tolist() == ["SW205"] * 3
    assert frame["subject_id"].tolist() == ["D-1", "D-2", "P2"]  # the proposal by default
    assert frame["outcome"].tolist() == ["pass", "fail", "review"]
    assert frame["measured"].tolist()[:2] == [10.0, 9.99]
    assert math.isnan(frame["measured"].iloc[2])
    assert frame["threshold"].tolist() == [10.0, 12.0, 10.0]
    assert frame["unit"].tolist() == ["ft", "ft", ""]
    assert frame.crs == CRS
    assert frame.geometry.iloc[0].equals(Point(0, 0))
    assert frame.geometry.iloc[1] is None


def test_extend_repeats_scalars_and_set_decides_a_row() -> None:
    rows = Findings("SW207", "§ 183-12C(2)(c)[8]", CRS)
    rows.extend(
        proposal_id=["P1", "P1"],
        subject_id=["D-1", "D-2"],
        outcome=Outcome.REVIEW,
        message="",
        geometry=[Point(1, 1), Point(2, 2)],
    )
    rows.set(1, Outcome.FAIL, "no sedimentation device", measured=0.0)
    frame = rows.frame()
    assert frame["outcome"].tolist() == ["review", "fail"]
    assert frame["message"].tolist() == ["", "no sedimentation device"]
    assert frame.geometry.iloc[1].equals(Point(2, 2))  # set without geometry keeps it
    assert len(rows) == 2


def test_extend_refuses_columns_of_different_lengths() -> None:
    rows = Findings("SW207", "", CRS)
    with pytest.raises(ValueError, match=r"SW207: finding columns have different lengths"):
        rows.extend(proposal_id=["P1", "P2"], outcome=["pass"], message="m")


def test_no_rows_is_an_empty_frame_with_the_check_columns() -> None:
    frame = Findings("SW101", "", CRS).frame()
    assert len(frame) == 0
    assert list(frame.columns) == list(CHECK_COLUMNS)
    assert frame.crs == CRS


def test_every_rule_check_knows_its_rule_from_the_registry() -> None:
    assert [rule_of(rule.check).rule_id for rule in RULES] == [rule.rule_id for rule in RULES]


def test_a_check_outside_the_registry_is_named_in_the_error(ruleset: Ruleset) -> None:
    @rule_check
    def check_nothing(ctx: CheckContext, rows: Findings) -> None:
        rows.add("P1", Outcome.PASS, "nothing")

    disturbance = gpd.GeoDataFrame({"proposal_id": ["P1"]}, geometry=[box(0, 0, 1, 1)], crs=CRS)
    ctx = CheckContext(make_layerset(CRS, {}), make_proposals(CRS, disturbance), ruleset)
    with pytest.raises(KeyError, match=r"check_nothing is the check of no rule"):
        check_nothing(ctx)


def test_a_check_called_directly_carries_its_rule_id_and_citation(ruleset: Ruleset) -> None:
    disturbance = gpd.GeoDataFrame(
        {"proposal_id": ["P1"]}, geometry=[box(1000, 0, 1025, 10)], crs=CRS
    )
    zoning = gpd.GeoDataFrame({"zone": ["R-20"]}, geometry=[box(0, 0, 5000, 5000)], crs=CRS)
    attrs = pd.DataFrame({"proposal_id": ["P1"]})
    ctx = CheckContext(
        make_layerset(CRS, {"zoning": zoning}),
        make_proposals(CRS, disturbance, attributes=attrs),
        ruleset,
    )
    row = permits.check_permit_threshold(ctx).iloc[0]
    assert (row["rule_id"], row["outcome"], row["measured"]) == ("SW101", "required", 250.0)
    assert row["message"].endswith(
        "a stormwater management control permit is required (§ 183-12A)."
    )


def _ruleset_with(edit: Any) -> Ruleset:
    text = resources.files("gis_sw.rulesets").joinpath("mount_pleasant_ny.toml").read_text()
    data = tomllib.loads(text)
    edit(data)
    return parse_ruleset(data, source="test")


def test_titles_are_filled_from_the_towns_numbers(ruleset: Ruleset) -> None:
    sw205, sw301 = RULES_BY_ID["SW205"], RULES_BY_ID["SW301"]
    assert rule_title(sw205, ruleset) == "Device 10 ft from every property line"
    # Mount Pleasant words SW301 itself ([titles]), its number filled from [phasing]
    assert rule_title(sw301, ruleset) == "Not more than 5 acres disturbed at any one time"

    def fifteen_feet(data: dict[str, Any]) -> None:
        data["devices"]["property_line_ft"] = 15.0
        data["phasing"]["max_disturbed_acres"] = 2.5
        del data["titles"]["SW301"]

    other = _ruleset_with(fifteen_feet)
    assert rule_title(sw205, other) == "Device 15 ft from every property line"
    assert rule_title(sw301, other) == "Not more than 2.5 acres disturbed at any one time"


def test_a_title_naming_a_field_the_ruleset_lacks_is_a_ruleset_error() -> None:
    def bad_title(data: dict[str, Any]) -> None:
        data["titles"]["SW205"] = "Device {devices.lot_line_feet:g} ft from the lot line"

    with pytest.raises(RulesetError, match=r"the title of SW205 .*lot_line_feet"):
        rule_title(RULES_BY_ID["SW205"], _ruleset_with(bad_title))
