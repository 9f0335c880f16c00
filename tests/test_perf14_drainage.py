"""Default drainage areas of many proposals found at once: the same polygons as one by one."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pytest
import shapely

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.hydrology import MIN_OVERLAP_SQFT, runoff_results
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.ruleset import Ruleset

X0, Y0 = 685_000.0, 830_000.0
CRS = "EPSG:2260"


def _one_by_one(parcels: gpd.GeoDataFrame, dist: shapely.Geometry) -> shapely.Geometry:
    """The drainage area of one proposal as computed before: its own query and union."""
    idx = parcels.sindex.query(dist, predicate="intersects")
    touched = parcels.geometry.to_numpy()[idx]
    touched = touched[shapely.area(shapely.intersection(touched, dist)) >= MIN_OVERLAP_SQFT]
    if not len(touched):
        return dist
    return shapely.disjoint_subset_union_all([*touched, dist])


def test_bulk_drainage_areas_equal_one_by_one(ruleset: Ruleset) -> None:
    # a 6 x 4 grid of 100 x 80 ft lots; proposals inside one lot, across two or four lots,
    # touching a lot only along its edge, overlapping one by 0.004 sq ft, and off every lot
    lots = [
        shapely.box(X0 + 100 * i, Y0 + 80 * j, X0 + 100 * (i + 1), Y0 + 80 * (j + 1))
        for i in range(6)
        for j in range(4)
    ]
    parcels = gpd.GeoDataFrame(
        {"parcel_id": [f"L{k}" for k in range(len(lots))]}, geometry=lots, crs=CRS
    )
    dists = {
        "inside": shapely.box(X0 + 10, Y0 + 10, X0 + 30, Y0 + 30),
        "two": shapely.box(X0 + 90, Y0 + 10, X0 + 120, Y0 + 30),
        "four": shapely.box(X0 + 290, Y0 + 70, X0 + 310, Y0 + 90),
        "edge": shapely.box(X0 + 200, Y0 + 10, X0 + 300, Y0 + 30),  # lines up with lot edges
        "sliver": shapely.box(X0 + 400, Y0 + 200, X0 + 400.002, Y0 + 202),  # 0.004 sq ft in
        "off": shapely.box(X0 + 700, Y0 + 10, X0 + 720, Y0 + 30),
    }
    # "edge" overlaps lot L8 (x 200-300) and only touches L4's and L12's sides
    frame = gpd.GeoDataFrame({"proposal_id": list(dists)}, geometry=list(dists.values()), crs=CRS)
    layers = make_layerset(CRS, {"parcels": parcels})
    results = runoff_results(CheckContext(layers, make_proposals(CRS, frame), ruleset))
    got = {r.proposal_id: r.geometry for r in results}
    assert sorted(got) == sorted(dists)
    for pid, dist in dists.items():
        expected = _one_by_one(parcels, dist)
        assert shapely.equals_exact(got[pid], expected, tolerance=0.0), pid
    assert got["inside"].area == 8000.0  # the lot; the disturbance lies inside it
    assert got["two"].area == 16_000.0
    assert got["four"].area == 32_000.0
    assert got["edge"].area == 8000.0  # touching L4 and L12 along an edge takes neither in
    assert shapely.equals_exact(got["sliver"], dists["sliver"], tolerance=0.0)
    assert got["off"].area == 400.0
    assert np.isclose(got["sliver"].area, 0.004)


def test_drainage_area_of_many_small_polygons_equals_one_by_one(ruleset: Ruleset) -> None:
    """A proposal of 400 small boxes over four lots and beyond: its parts merged by part."""
    lots = [shapely.box(X0 + 60 * i, Y0, X0 + 60 * (i + 1), Y0 + 60) for i in range(4)]
    lots.append(shapely.box(X0 + 500, Y0, X0 + 560, Y0 + 60))  # a lot only one box grazes
    parcels = gpd.GeoDataFrame({"parcel_id": [f"L{k}" for k in range(5)]}, geometry=lots, crs=CRS)
    i = np.arange(400)
    x = X0 - 30 + (i % 50) * 6.0 + np.where(i % 3 == 0, 3.0, 0.0)  # from 30 ft west of the lots
    y = Y0 + (i // 50) * 9.0
    boxes = shapely.box(x, y, x + 4, y + 4)
    graze = shapely.box(X0 + 499.999, Y0 + 10, X0 + 500.001, Y0 + 12)  # 0.004 sq ft on L4
    frame = gpd.GeoDataFrame({"proposal_id": ["BIG"] * 401}, geometry=[*boxes, graze], crs=CRS)
    layers = make_layerset(CRS, {"parcels": parcels})
    proposals = make_proposals(CRS, frame)
    (result,) = runoff_results(CheckContext(layers, proposals, ruleset))
    dist = shapely.union_all([*boxes, graze])
    expected = _one_by_one(parcels, dist)
    assert shapely.get_num_geometries(dist) > 64  # the by-part path
    assert result.geometry.area == pytest.approx(expected.area, abs=0.01)
    assert shapely.difference(result.geometry, expected).area < 0.01
    assert shapely.difference(expected, result.geometry).area < 0.01
    # the four lots, the boxes west of them and beyond x = 240, not lot L4
    assert result.geometry.area == pytest.approx(
        shapely.union_all([*lots[:4], *boxes, graze]).area, abs=0.01
    )
