"""Audit of the engine's coverage step: town features with no location never let a rule pass.

A well with a null geometry, a building whose footprint is empty, a septic field dropped
when the layer was read (``on_bad_feature = "skip"``): the rule relying on that layer
(``registry.RULE_LAYERS``) cannot know the device is not within its setback of it.  Before,
SW202, SW206, SW210 and SW201 passed; now they are ``review`` naming the features.
"""

from __future__ import annotations

from typing import Any

import geopandas as gpd
import pytest
from shapely.geometry import Point, box

from gis_sw.analysis.engine import run_rules
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.layerset import DroppedFeature, LayerReport
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"


def frame(rows: list[dict[str, Any]]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS)


def screen(
    ruleset: Ruleset,
    overrides: dict[str, gpd.GeoDataFrame],
    reports: dict[str, LayerReport] | None = None,
) -> gpd.GeoDataFrame:
    vectors = {
        "parcels": frame([{"parcel_id": "104-22", "geometry": box(0, 0, 200, 200)}]),
        "zoning": frame([{"zone": "R-20", "geometry": box(-500, -500, 500, 500)}]),
        "wells": frame([{"well_id": "W-1", "geometry": Point(-200, -200)}]),
        "wetlands": frame([{"wetland_id": "WL-1", "geometry": box(400, 400, 450, 450)}]),
        "water_bodies": frame([{"water_id": "WB-1", "geometry": box(-450, 400, -400, 450)}]),
        "septic_fields": frame([{"septic_id": "S-1", "geometry": box(150, 150, 190, 190)}]),
        "buildings": frame(
            [{"building_id": "B-1", "habitable_basement": True, "geometry": box(10, 150, 40, 190)}]
        ),
        **overrides,
    }
    layers = make_layerset(CRS, vectors, reports=reports)
    device = {
        "device_id": "D-7",
        "proposal_id": "P-1",
        "serves_vehicle_traffic": True,
        "geometry": Point(80, 80),
    }
    proposals = make_proposals(
        CRS,
        frame([{"proposal_id": "P-1", "geometry": box(60, 60, 100, 100)}]),
        frame([device]),
    )
    found = run_rules(layers, proposals, ruleset, select=["SW2"], on_error="raise")
    return found.set_index("rule_id")


def test_control_every_feature_located_passes(ruleset: Ruleset) -> None:
    found = screen(ruleset, {})
    for rule_id in ("SW201", "SW202", "SW206", "SW210"):
        assert found.loc[rule_id, "outcome"] == "pass", rule_id


@pytest.mark.parametrize("rule_id", ["SW202", "SW210"])
def test_well_with_no_geometry_makes_well_rules_review(ruleset: Ruleset, rule_id: str) -> None:
    wells = frame(
        [{"well_id": "W-1", "geometry": Point(-200, -200)}, {"well_id": "W-2", "geometry": None}]
    )
    found = screen(ruleset, {"wells": wells})
    assert found.loc[rule_id, "outcome"] == "review"
    assert found.loc[rule_id, "message"].startswith(
        f"Features of a layer {rule_id} relies on have no location (wells: W-2 (no geometry)), "
        f"so {rule_id} cannot pass on what the layers show: give them their geometry, or "
        "remove them from the layer, and screen again. (The layers show: "
    )
    # SW208 reports the nearest well: with one unlocated it is not known to be the nearest
    assert found.loc["SW208", "outcome"] == "review"


def test_building_with_empty_footprint_makes_sw206_review(ruleset: Ruleset) -> None:
    buildings = frame(
        [
            {"building_id": "B-1", "habitable_basement": True, "geometry": box(10, 150, 40, 190)},
            {
                "building_id": "B-2",
                "habitable_basement": True,
                "geometry": box(0, 0, 0, 0).buffer(0),
            },
        ]
    )
    found = screen(ruleset, {"buildings": buildings})
    assert found.loc["SW206", "outcome"] == "review"
    assert "(buildings: B-2 (no geometry))" in found.loc["SW206", "message"]


def test_septic_field_dropped_when_read_makes_sw201_review(ruleset: Ruleset) -> None:
    report = LayerReport(
        "septic_fields",
        "town.gpkg:septic_fields",
        1,
        "EPSG:2260",
        "US survey foot",
        (150.0, 150.0, 190.0, 190.0),
        dropped=(DroppedFeature("septic_fields", "row 2 (septic_id S-2)", "no geometry"),),
    )
    found = screen(ruleset, {}, {"septic_fields": report})
    assert found.loc["SW201", "outcome"] == "review"
    assert (
        "(septic fields: row 2 (septic_id S-2) (dropped when read: no geometry))"
        in found.loc["SW201", "message"]
    )


def test_a_fail_on_a_located_well_stays_fail(ruleset: Ruleset) -> None:
    # W-1 30.00 ft from the vehicle device: fails 50 ft whatever the unlocated W-2 is
    wells = frame(
        [{"well_id": "W-1", "geometry": Point(110, 80)}, {"well_id": "W-2", "geometry": None}]
    )
    found = screen(ruleset, {"wells": wells})
    assert (found.loc["SW202", "outcome"], found.loc["SW202", "measured"]) == ("fail", 30.0)
