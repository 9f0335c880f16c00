"""The batch's fast siting areas equal ``gis-sw siting``'s polygons on every lot.

The batch measures the siting polygons without drawing them
(:func:`gis_sw.analysis.siting.siting_areas`, 32 segments per quarter circle);
``gis-sw siting`` draws them (:func:`gis_sw.analysis.siting.siting_polygons`, 128).  The
tolerance stated in docs/batch.md ("Siting areas"): the batch's area is never more than
:data:`OVER_SQFT` larger (its 0.01 rounding), and smaller by at most the outline of the
drawn polygon times the growth of a 32-segment circle of the largest setback (50 ft:
0.0151 ft), the most a coarser grown circle can stand off the finer one (measured: 0.6 to
6 sq ft on 99% of the lots of the sample town, 14 sq ft on its 8-acre farm lot).
"""

from __future__ import annotations

import math

import geopandas as gpd
import numpy as np
import pytest
import shapely
from shapely.geometry import Point, box

from gis_sw.analysis.distances import grown_radius
from gis_sw.analysis.siting import DeviceClass, siting_areas, siting_by_class, siting_polygons
from gis_sw.batch.parcels import BUFFER_QUAD_SEGS
from gis_sw.batch.run import RunOptions, screen_layers
from gis_sw.layers.build import make_layerset
from gis_sw.ruleset import Ruleset
from gis_sw.sample.town import build_town

CRS = "EPSG:2260"
OVER_SQFT = 0.01
SAME_SQFT = 0.001
"""How far the drawn and the measured areas of the same polygons may differ (float rounding)."""


@pytest.fixture(scope="module")
def town() -> object:
    return build_town(parcels=300, seed=11)


@pytest.fixture(scope="module")
def vector_layers(town: object) -> object:
    # the batch reads the vector layers only (no DEM, no rasters, no device depth)
    return make_layerset(CRS, dict(town.vectors))  # type: ignore[attr-defined]


@pytest.mark.parametrize("device_class", ["roof", "vehicle"])
def test_batch_areas_equal_gis_sw_siting_on_every_lot(
    vector_layers: object, ruleset: Ruleset, device_class: str
) -> None:
    rows = screen_layers(vector_layers, ruleset, options=RunOptions(chunk_size=97)).rows  # type: ignore[arg-type]
    drawn = siting_polygons(vector_layers, ruleset, device_class=device_class)  # type: ignore[arg-type]
    assert len(rows) == len(drawn) == 300
    assert rows["parcel_id"].tolist() == drawn["parcel_id"].tolist()
    exact = shapely.area(drawn.geometry.to_numpy())
    batch = rows[f"{device_class}_siting_sqft"].to_numpy()
    gap = batch - exact
    setback_ft = ruleset.devices.vehicle_traffic_ft
    stand_off_ft = grown_radius(setback_ft, BUFFER_QUAD_SEGS) - setback_ft
    assert stand_off_ft == pytest.approx(0.0151, abs=0.0001)
    outline_ft = shapely.length(drawn.geometry.to_numpy())
    assert gap.max() <= OVER_SQFT
    assert (gap >= -(stand_off_ft * outline_ft + OVER_SQFT)).all()
    assert gap.min() < -1.0  # the bound is not idle: coarser circles do cost area
    # every lot of this town has room (the lots with none are the hand-built cases below)
    assert (exact > 1.0).all()
    assert ((batch < 1.0) == (drawn["outcome"] == "fail").to_numpy()).all()


def test_measured_areas_equal_drawn_areas_with_rasters_and_depth(
    town: object, ruleset: Ruleset
) -> None:
    layers = town.layerset()  # type: ignore[attr-defined]
    drawn = siting_by_class(layers, ruleset, depth_ft=4.0, quad_segs=32)
    measured = siting_areas(layers, ruleset, depth_ft=4.0, quad_segs=32)
    for klass in (DeviceClass.ROOF, DeviceClass.VEHICLE):
        exact = shapely.area(drawn[klass].geometry.to_numpy())
        assert np.abs(measured[klass] - exact).max() <= SAME_SQFT
        assert (exact > 1.0).sum() >= 100


def _frame(geoms: list[object], **columns: list[object]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(columns, geometry=gpd.GeoSeries(geoms, crs=CRS), crs=CRS)


def _layers(parcels: list[object], buildings: list[object], wells: list[object]) -> object:
    return make_layerset(
        CRS,
        {
            "parcels": _frame(parcels, parcel_id=[f"P{i}" for i in range(len(parcels))]),
            "buildings": _frame(
                buildings,
                building_id=[f"B{i}" for i in range(len(buildings))],
                habitable_basement=[True] * len(buildings),
                below_ground_storage=[False] * len(buildings),
            ),
            "wells": _frame(wells, well_id=[f"W{i}" for i in range(len(wells))]),
            "septic_fields": _frame([box(5000, 5000, 5010, 5010)], septic_id=["S"]),
            "wetlands": _frame([box(9000, 9000, 9010, 9010)], wetland_id=["WL"]),
            "water_bodies": _frame([box(9500, 9500, 9510, 9510)], water_id=["H"]),
        },
        none=[k for k, drawn in (("buildings", buildings), ("wells", wells)) if not drawn],
    )


CASES = {
    # a house zone strictly inside the lot, alone: its area is taken without an overlay
    "zone-inside-alone": ([box(0, 0, 200, 200)], [box(90, 90, 110, 110)], []),
    # two house zones that overlap each other inside the lot: subtracted, not summed
    "zones-overlapping": (
        [box(0, 0, 200, 200)],
        [box(60, 90, 80, 110), box(100, 90, 120, 110)],
        [],
    ),
    # a house zone crossing the 10-ft line, and a well circle over the house zone
    "zone-crossing-well-over-it": (
        [box(0, 0, 100, 100)],
        [box(20, 40, 40, 60)],
        [Point(60, 50)],
    ),
    # a well whose 50 ft covers the whole lot: no vehicle room, no overlay needed
    "well-covers-the-lot": ([box(0, 0, 40, 40)], [], [Point(20, 20)]),
    # a lot too narrow for its 10-ft line setback, beside a lot with room
    "no-room-inside-the-setback": ([box(0, 0, 19.99, 100), box(30, 0, 130, 100)], [], []),
    # a lot with a courtyard cut out and a zone inside it
    "lot-with-a-hole": (
        [shapely.Polygon(box(0, 0, 300, 300).exterior, [box(120, 120, 180, 180).exterior.coords])],
        [box(30, 30, 50, 50)],
        [],
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_each_shortcut_gives_the_drawn_area(case: str, ruleset: Ruleset) -> None:
    parcels, buildings, wells = CASES[case]
    layers = _layers(parcels, buildings, wells)
    drawn = siting_by_class(layers, ruleset, quad_segs=32)  # type: ignore[arg-type]
    measured = siting_areas(layers, ruleset, quad_segs=32)  # type: ignore[arg-type]
    for klass in (DeviceClass.ROOF, DeviceClass.VEHICLE):
        exact = shapely.area(drawn[klass].geometry.to_numpy())
        assert measured[klass] == pytest.approx(exact, abs=SAME_SQFT)


def test_zone_inside_alone_to_the_sq_ft(ruleset: Ruleset) -> None:
    parcels, buildings, wells = CASES["zone-inside-alone"]
    roof = siting_areas(_layers(parcels, buildings, wells), ruleset, quad_segs=128)  # type: ignore[arg-type]
    side = 200 - 2 * grown_radius(10.0, 128)
    # a 20 x 20 house grown by 20 ft: 20x20 + 4 sides of 20x20 + a circle of radius 20
    zone = 400 + 4 * 400 + math.pi * 400
    assert roof[DeviceClass.ROOF][0] == pytest.approx(side * side - zone, abs=0.3)
    assert roof[DeviceClass.VEHICLE][0] == roof[DeviceClass.ROOF][0]


def test_covered_and_narrow_lots_have_no_room(ruleset: Ruleset) -> None:
    covered = siting_areas(_layers(*CASES["well-covers-the-lot"]), ruleset)  # type: ignore[arg-type]
    assert covered[DeviceClass.VEHICLE].tolist() == [0.0]
    assert covered[DeviceClass.ROOF][0] == pytest.approx((40 - 2 * grown_radius(10.0, 128)) ** 2)
    narrow = siting_areas(_layers(*CASES["no-room-inside-the-setback"]), ruleset)  # type: ignore[arg-type]
    assert narrow[DeviceClass.ROOF][0] == 0.0
    assert narrow[DeviceClass.ROOF][1] == pytest.approx((100 - 2 * grown_radius(10.0, 128)) ** 2)
