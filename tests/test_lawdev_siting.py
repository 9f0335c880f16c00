"""Siting polygons read the law as SW201 and SW206 now do (issue 13), and a self-touching
parcel keeps its cut-out (issue 14).  Areas are computed by hand, to the sq ft."""

from __future__ import annotations

import math
from typing import Any

import geopandas as gpd
import numpy as np
import pyproj
import pytest
import shapely
from affine import Affine
from shapely.geometry import LineString, Point, Polygon, box

from gis_sw.analysis import infiltration
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.siting import siting_polygons
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.raster import RasterLayer
from gis_sw.layers.repair import repair_polygon
from gis_sw.layers.specs import GeometryKind
from gis_sw.layers.validate import _repair
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"


def frame(rows: list[dict[str, Any]]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS)


def dem(values: Any) -> RasterLayer:
    arr = np.asarray(values, dtype="float64")
    crs = pyproj.CRS.from_user_input(CRS)
    return RasterLayer("dem", arr, Affine(10, 0, 0, 0, -10, 100), crs, source="test")


# -- issue 14: a ring touching itself around a cut-out ------------------------------------

SELF_TOUCHING = Polygon(
    [(0, 0), (100, 0), (100, 100), (50, 100), (40, 60), (60, 60), (50, 100), (0, 100), (0, 0)]
)
CUT_OUT = Polygon([(50, 100), (40, 60), (60, 60)])  # 400 sq ft


def _cut_out_siting_area_sqft() -> float:
    """The 80 x 80 square 10 ft inside the lot lines, less the points within 10 ft of the
    triangle: the triangle's 10-ft outer band (area + perimeter x 10 + pi x 10^2) less its
    part beyond y = 90, which is the polygon between the two offset edges and the apex (up
    to the radii at the apex) plus the circular sector over the apex."""
    r = 10.0
    side = math.hypot(10, 40)
    band = 400 + (20 + 2 * side) * r + math.pi * r * r  # 1,738.78
    nx, ny = -40 / side, 10 / side  # outward normal of the edge (40, 60)-(50, 100)
    x90 = 40 + r * nx + 10 * (90 - (60 + r * ny)) / 40  # offset edge at y = 90
    ax, ay = 50 + r * nx, 100 + r * ny  # offset apex
    pts = [(x90, 90), (ax, ay), (50, 100), (100 - ax, ay), (100 - x90, 90)]
    poly = 0.5 * abs(
        sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1], strict=True))
    )
    sector = 0.5 * r * r * (math.pi - 2 * math.atan2(ny, -nx))
    return 80 * 80 - (band - (poly + sector))  # 5,049.96


def test_repair_keeps_the_cut_out() -> None:
    fixed = repair_polygon(SELF_TOUCHING)
    assert fixed.is_valid
    assert fixed.area == pytest.approx(10_000 - 400, abs=1e-9)
    assert shapely.intersection(fixed, CUT_OUT).area == pytest.approx(0.0, abs=1e-9)
    # what layers.validate now gives the reader
    (read,) = _repair(np.array([SELF_TOUCHING], dtype=object), GeometryKind.POLYGON)
    assert read.area == pytest.approx(9_600.0, abs=1e-9)


@pytest.mark.parametrize(
    "parcel",
    [
        pytest.param(SELF_TOUCHING, id="as-drawn-invalid"),
        pytest.param(repair_polygon(SELF_TOUCHING), id="as-read-repaired"),
    ],
)
def test_self_touching_parcel_siting_keeps_out_of_the_cut_out(
    ruleset: Ruleset, parcel: Polygon
) -> None:
    layers = make_layerset(CRS, {"parcels": frame([{"parcel_id": "A", "geometry": parcel}])})
    row = siting_polygons(layers, ruleset).iloc[0]
    expected = _cut_out_siting_area_sqft()
    assert expected == pytest.approx(5049.96, abs=0.01)
    assert row["area_sqft"] == pytest.approx(expected, abs=1.0)
    assert shapely.intersection(row["geometry"], CUT_OUT).area == 0.0
    assert shapely.distance(row["geometry"], CUT_OUT) == pytest.approx(10.0, abs=1e-3)


def test_repair_of_bow_tie_spike_and_overlapping_parts() -> None:
    bowtie = Polygon([(0, 0), (100, 100), (100, 0), (0, 100), (0, 0)])
    spike = Polygon([(0, 0), (100, 0), (100, 50), (150, 50), (100, 50), (100, 100), (0, 100)])
    overlapping = shapely.MultiPolygon([box(0, 0, 60, 60), box(40, 40, 100, 100)])
    assert repair_polygon(bowtie).area == pytest.approx(5_000.0)  # both lobes
    assert repair_polygon(spike).area == pytest.approx(10_000.0)
    assert repair_polygon(overlapping).area == pytest.approx(2 * 3600 - 400)  # overlap once


# -- up-gradient as SW201 reads it: flat within 0.33 ft is out -------------------------------


@pytest.mark.parametrize(
    ("west_ft", "kept"),
    [
        pytest.param(99.66, True, id="0.34-ft-below-the-field-stays"),
        pytest.param(99.67, False, id="0.33-ft-below-the-field-goes"),
        pytest.param(99.68, False, id="0.32-ft-below-the-field-goes"),
    ],
)
def test_siting_removes_cells_flat_within_the_tolerance(
    ruleset: Ruleset, west_ft: float, kept: bool
) -> None:
    # field x 40-60, y 40-60 on ground 100.00; the column x 20-30 at ``west_ft``
    values = np.full((10, 10), 100.0)
    values[:, 2] = west_ft
    field = box(40, 40, 60, 60)
    layers = make_layerset(
        CRS,
        {
            "parcels": frame([{"parcel_id": "A", "geometry": box(0, 0, 100, 100)}]),
            "septic_fields": frame([{"septic_id": "S-1", "geometry": field}]),
        },
        {"dem": dem(values)},
    )
    allowed = siting_polygons(layers, ruleset).iloc[0]["geometry"]
    probe = Point(25, 50)  # 15 ft west of the field
    assert allowed.contains(probe) is kept
    # every cell within 20 ft of the field but that column is level with it: all out
    zone = shapely.buffer(field, 20, quad_segs=64)
    inner = box(10, 10, 90, 90)
    left = shapely.intersection(shapely.difference(inner, zone), allowed).area
    expected = inner.area - shapely.intersection(inner, zone).area
    if kept:  # the column's part of the zone, x 20-30, stays
        expected += shapely.intersection(
            shapely.intersection(inner, zone), box(20, 0, 30, 100)
        ).area
    assert allowed.area == pytest.approx(expected, abs=1.0)
    assert left == pytest.approx(inner.area - shapely.intersection(inner, zone).area, abs=1.0)
    # what siting keeps, SW201 passes, for a device given by its depth or its bottom
    devices = frame(
        [
            {"device_id": "D-d", "proposal_id": "P1", "depth_ft": 4.0, "geometry": probe},
            {"device_id": "D-b", "proposal_id": "P1", "bottom_elevation_ft": 90.0,
             "geometry": probe},
        ]
    )  # fmt: skip
    ctx = CheckContext(
        layers, make_proposals(CRS, frame([{"proposal_id": "P1", "geometry": inner}]), devices),
        ruleset,
    )  # fmt: skip
    outcomes = set(infiltration.check_septic_upgradient(ctx)["outcome"])
    assert outcomes == ({"pass"} if kept else {"review"})


# -- buildings: storage, unknown, 100 sq ft; streams for vehicle devices ---------------------

INNER = 80 * 80
HOUSE_ZONE = 20 * 20 + 4 * 20 * 20 + math.pi * 20**2  # a 20 x 20 house grown by 20 ft


def _lot(buildings: list[dict[str, Any]], **more: gpd.GeoDataFrame) -> Any:
    vectors = {
        "parcels": frame([{"parcel_id": "A", "geometry": box(0, 0, 100, 100)}]),
        "buildings": frame(buildings),
        **more,
    }
    return make_layerset(CRS, vectors)


@pytest.mark.parametrize(
    ("attrs", "area", "note"),
    [
        pytest.param({"habitable_basement": False, "below_ground_storage": False},
                     INNER - 400, False, id="neither-only-the-footprint"),
        pytest.param({"habitable_basement": False, "below_ground_storage": True},
                     INNER - HOUSE_ZONE, False, id="storage-20-ft-zone"),
        pytest.param({"habitable_basement": False}, INNER - HOUSE_ZONE, True,
                     id="storage-unknown-counts"),
    ],
)  # fmt: skip
def test_basement_or_storage_zone(
    ruleset: Ruleset, attrs: dict[str, bool], area: float, note: bool
) -> None:
    house = {"building_id": "B-1", **attrs, "geometry": box(40, 40, 60, 60)}
    row = siting_polygons(_lot([house]), ruleset).iloc[0]
    assert row["area_sqft"] == pytest.approx(area, abs=1.0)
    assert ("no below_ground_storage value" in row["reason"]) is note


@pytest.mark.parametrize(
    ("area_sqft", "zoned"),
    [(100.0, False), (100.01, True)],
    ids=["100.00-sq-ft-shed-no-zone", "100.01-sq-ft-shed-zone"],
)
def test_shed_of_100_sq_ft_has_no_basement_zone(
    ruleset: Ruleset, area_sqft: float, zoned: bool
) -> None:
    side = math.sqrt(area_sqft)
    shed = {
        "building_id": "S",
        "habitable_basement": True,
        "geometry": box(45, 45, 45 + side, 45 + side),
    }
    row = siting_polygons(_lot([shed]), ruleset).iloc[0]
    zone = area_sqft + 4 * side * 20 + math.pi * 20**2
    assert row["area_sqft"] == pytest.approx(INNER - (zone if zoned else area_sqft), abs=1.0)


def test_stream_line_takes_50_ft_from_vehicle_siting(ruleset: Ruleset) -> None:
    brook = frame([{"stream_id": "BR", "geometry": LineString([(120, -100), (120, 200)])}])
    far = {"building_id": "B", "habitable_basement": False, "below_ground_storage": False,
           "geometry": box(0, 0, 1, 1)}  # fmt: skip
    layers = _lot([far], streams=brook)
    row = siting_polygons(layers, ruleset, device_class="vehicle").iloc[0]
    # the brook at x = 120 keeps vehicle devices west of x = 70: inner x 10-70 (60 x 80)
    assert row["area_sqft"] == pytest.approx(60 * 80, abs=1.0)  # the shed is outside it
    assert (
        "within 50 ft of streams"
        in siting_polygons(
            _lot([far], streams=frame([{"geometry": LineString([(50, -10), (50, 110)])}])),
            ruleset,
            device_class="vehicle",
        ).iloc[0]["reason"]
    )
