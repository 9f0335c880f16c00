"""Audit of the device rules (SW201-SW210): inputs that used to reach a wrong ``pass``.

Each case is a real lot, real rasters of 10-ft cells and one device; the law is
§ 183-12C(2)(c)[3], [4], [7] through the default ruleset's citations.
"""

from __future__ import annotations

import math
from typing import Any

import geopandas as gpd
import numpy as np
import pyproj
import pytest
import shapely
from affine import Affine
from shapely.geometry import Point, box

from gis_sw.analysis import infiltration
from gis_sw.analysis.context import CheckContext
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.raster import RasterLayer, RasterMode
from gis_sw.ruleset import Ruleset, load_ruleset

CRS = "EPSG:2260"


def frame(rows: list[dict[str, Any]]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS)


def grid(kind: str, values: np.ndarray) -> RasterLayer:
    """A 40 x 40 raster of 10-ft cells whose top-left corner is (-100, 300)."""
    return RasterLayer(
        kind,
        np.asarray(values, dtype="float64"),
        Affine(10, 0, -100, 0, -10, 300),
        pyproj.CRS.from_user_input(CRS),
        mode=RasterMode.ELEVATION,
        source="test",
    )


def flat(kind: str, value: float) -> RasterLayer:
    return grid(kind, np.full((40, 40), value))


def context(device: dict[str, Any], rasters: dict[str, RasterLayer] | None = None) -> CheckContext:
    ruleset_rasters = {
        "dem": flat("dem", 100.0),
        "seasonal_high_groundwater": flat("seasonal_high_groundwater", 80.0),
        "bedrock": flat("bedrock", 70.0),
    }
    ruleset_rasters.update(rasters or {})
    layers = make_layerset(
        CRS,
        {
            "parcels": frame([{"parcel_id": "104-22", "geometry": box(0, 0, 200, 200)}]),
            "wells": frame([{"well_id": "W-1", "geometry": Point(-80, -80)}]),
            "wetlands": frame([{"wetland_id": "WL-1", "geometry": box(-100, 280, -90, 290)}]),
            "water_bodies": frame([{"water_id": "WB-1", "geometry": box(280, 280, 290, 290)}]),
            "septic_fields": frame([{"septic_id": "S-1", "geometry": box(150, 150, 190, 190)}]),
            "buildings": frame(
                [
                    {
                        "building_id": "B-1",
                        "habitable_basement": True,
                        "geometry": box(10, 150, 40, 190),
                    }
                ]
            ),
        },
        ruleset_rasters,
    )
    row = {
        "device_id": "D-7",
        "proposal_id": "P-1",
        "serves_vehicle_traffic": True,
        "bottom_elevation_ft": 90.0,
        "has_sedimentation_device": True,
        "test_hole_logged": True,
        "geometry": Point(80, 80),
        **device,
    }
    disturbance = frame([{"proposal_id": "P-1", "geometry": box(60, 60, 100, 100)}])
    proposals = make_proposals(CRS, disturbance, frame([row]))
    return CheckContext(layers=layers, proposals=proposals, ruleset=load())


def load() -> Ruleset:
    return load_ruleset()


def one(rows: gpd.GeoDataFrame) -> Any:
    assert len(rows) == 1
    return rows.iloc[0]


HOLES = {"test_hole_groundwater_elevation_ft": 80.0, "test_hole_bedrock_elevation_ft": 70.0}
"""Logged test-hole elevations: SW203 and SW204 need no raster under the device."""

SPATIAL = {
    "SW201": infiltration.check_septic_upgradient,
    "SW202": infiltration.check_vehicle_traffic,
    "SW203": infiltration.check_groundwater_separation,
    "SW204": infiltration.check_bedrock_separation,
    "SW205": infiltration.check_property_line,
    "SW206": infiltration.check_habitable_basement,
    "SW210": infiltration.check_state_well_advisory,
}


@pytest.mark.parametrize("rule_id", sorted(SPATIAL))
def test_located_device_passes_every_spatial_rule(rule_id: str) -> None:
    # the control: the same device drawn at (80, 80) passes each rule
    assert one(SPATIAL[rule_id](context(HOLES)))["outcome"] == "pass"


@pytest.mark.parametrize(
    "geometry",
    [
        pytest.param(None, id="null-geometry"),
        pytest.param(Point(), id="empty-point"),
        pytest.param(shapely.Polygon(), id="empty-polygon"),
    ],
)
@pytest.mark.parametrize("rule_id", ["SW201", "SW202", "SW203", "SW204", "SW206", "SW210"])
def test_device_without_location_is_review_not_pass(rule_id: str, geometry: Any) -> None:
    # before: "has no septic field near it", "no well within 50 ft"... for a device nowhere
    found = one(SPATIAL[rule_id](context({**HOLES, "geometry": geometry})))
    assert found["outcome"] == "review"
    assert found["message"].startswith(
        "Device D-7 has no location (its geometry is null or empty), so this cannot be measured"
    )
    assert found["message"].endswith(f"devices layer ({load().citation(rule_id)}).")
    assert math.isnan(found["measured"])


def test_attribute_rules_still_read_a_device_without_location() -> None:
    ctx = context({"geometry": None})
    assert one(infiltration.check_sedimentation_device(ctx))["outcome"] == "pass"
    assert one(infiltration.check_test_holes(ctx))["outcome"] == "pass"


@pytest.mark.parametrize(
    ("device", "says"),
    [
        pytest.param(
            {"bottom_elevation_ft": math.inf}, "its bottom_elevation_ft is inf", id="bottom-inf"
        ),
        pytest.param(
            {"bottom_elevation_ft": -math.inf},
            "its bottom_elevation_ft is -inf",
            id="bottom-minus-inf",
        ),
        pytest.param(
            {"bottom_elevation_ft": None, "depth_ft": -5.0},
            "its depth_ft is -5, not a depth",
            id="depth-negative",
        ),
        pytest.param(
            {"bottom_elevation_ft": None, "depth_ft": math.inf},
            "its depth_ft is inf",
            id="depth-inf",
        ),
        pytest.param(
            {"bottom_elevation_ft": 1e9},
            "its bottom_elevation_ft 1,000,000,000.00 ft is above the highest ground under it "
            "(100.00 ft on the DEM)",
            id="bottom-above-ground",
        ),
        pytest.param(
            {"bottom_elevation_ft": 100.01},
            "its bottom_elevation_ft 100.01 ft is above the highest ground under it",
            id="bottom-0.01-ft-above-ground",
        ),
    ],
)
def test_sw203_sw204_impossible_bottom_is_review(device: dict[str, Any], says: str) -> None:
    ctx = context(device)
    for check in (infiltration.check_groundwater_separation, infiltration.check_bedrock_separation):
        found = one(check(ctx))
        assert found["outcome"] == "review"
        assert says in found["message"]


def test_sw203_bottom_at_ground_is_measured() -> None:
    # 100.00 ft: at the DEM's ground, 20.00 ft above the 80 ft groundwater
    found = one(infiltration.check_groundwater_separation(context({"bottom_elevation_ft": 100.0})))
    assert (found["outcome"], found["measured"]) == ("pass", 20.0)


@pytest.mark.parametrize("hole", [-math.inf, math.inf])
def test_sw203_test_hole_not_an_elevation_is_review(hole: float) -> None:
    # before: -inf gave a pass "inf ft above seasonal high groundwater"
    found = one(
        infiltration.check_groundwater_separation(
            context({"test_hole_groundwater_elevation_ft": hole})
        )
    )
    assert found["outcome"] == "review"
    assert f"its test_hole_groundwater_elevation_ft is {hole}, not an elevation" in found["message"]


def _gap(values: float, *, nodata_col: int) -> np.ndarray:
    arr = np.full((40, 40), values)
    arr[:, nodata_col] = np.nan
    return arr


def test_sw203_groundwater_raster_gap_under_part_of_device_is_review() -> None:
    # device 70..90 ft east; column 18 (x 80..90) has no groundwater data: 10 ft above it
    # on the measured half, unknown on the other
    rasters = {
        "seasonal_high_groundwater": grid("seasonal_high_groundwater", _gap(80.0, nodata_col=18))
    }
    found = one(
        infiltration.check_groundwater_separation(
            context({"geometry": box(71, 71, 89, 89)}, rasters)
        )
    )
    assert found["outcome"] == "review"
    assert found["measured"] == 10.0
    assert (
        "the seasonal high groundwater raster has no data under part of the device"
        in found["message"]
    )


def test_sw203_gap_does_not_hide_a_fail() -> None:
    # groundwater at 89 ft on the measured half: 1.00 ft, already below the 2 ft minimum
    rasters = {
        "seasonal_high_groundwater": grid("seasonal_high_groundwater", _gap(89.0, nodata_col=18))
    }
    found = one(
        infiltration.check_groundwater_separation(
            context({"geometry": box(71, 71, 89, 89)}, rasters)
        )
    )
    assert (found["outcome"], found["measured"]) == ("fail", 1.0)


def test_sw203_device_beyond_raster_extent_is_review() -> None:
    # the raster ends at x = 300; the trench runs to x = 310
    found = one(
        infiltration.check_groundwater_separation(context({"geometry": box(290, 100, 310, 110)}))
    )
    assert found["outcome"] == "review"
    assert "raster has no data under part of the device" in found["message"]


def _dem_down_gradient(*, gap: bool) -> RasterLayer:
    # ground 95 ft west of x = 140, 100 ft east of it (under the septic field): down-gradient
    arr = np.full((40, 40), 100.0)
    arr[:, :24] = 95.0
    if gap:
        arr[:, 22] = np.nan  # x 120..130, under the middle of the device
    return grid("dem", arr)


def test_sw201_down_gradient_device_passes_with_full_dem() -> None:
    found = one(
        infiltration.check_septic_upgradient(
            context({"geometry": box(115, 160, 135, 170)}, {"dem": _dem_down_gradient(gap=False)})
        )
    )
    assert (found["outcome"], found["measured"]) == ("pass", 15.0)


def test_sw201_dem_gap_under_device_is_review() -> None:
    # before: pass on the DEM cells either side of the gap (95 ft), as if the gap were lower
    found = one(
        infiltration.check_septic_upgradient(
            context({"geometry": box(115, 160, 135, 170)}, {"dem": _dem_down_gradient(gap=True)})
        )
    )
    assert (found["outcome"], found["measured"]) == ("review", 15.0)
    assert "the DEM has no data under the device or the field (or part of one)" in found["message"]


def test_sw208_reports_no_distances_for_a_device_without_location() -> None:
    found = one(infiltration.check_separation_report(context({"geometry": None})))
    assert found["outcome"] == "review"
    assert found["message"].startswith("Device D-7 has no location")


def test_sw203_depth_below_a_dem_gap_with_test_hole_is_review() -> None:
    # depth 10 ft below ground; the DEM has no data under the east half of the trench, so
    # the ground (and the bottom) read from the west half (100 ft) may be too high
    arr = np.full((40, 40), 100.0)
    arr[:, 18] = np.nan
    device = {
        "geometry": box(71, 71, 89, 89),
        "bottom_elevation_ft": None,
        "depth_ft": 10.0,
        "test_hole_groundwater_elevation_ft": 80.0,
    }
    found = one(
        infiltration.check_groundwater_separation(context(device, {"dem": grid("dem", arr)}))
    )
    assert (found["outcome"], found["measured"]) == ("review", 10.0)
    assert "the DEM has no data under part of the device, so its ground" in found["message"]
    device["geometry"] = box(61, 71, 79, 89)  # wholly over DEM data: 10.00 ft, passes
    found = one(
        infiltration.check_groundwater_separation(context(device, {"dem": grid("dem", arr)}))
    )
    assert (found["outcome"], found["measured"]) == ("pass", 10.0)
