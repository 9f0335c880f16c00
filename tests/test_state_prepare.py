"""Identical parcel geometries are grouped exactly, whatever the ring start and orientation."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import shapely

from gis_sw.batch.prepare import prepare_parcels


def _parcels() -> gpd.GeoDataFrame:
    square = shapely.Polygon([(0, 0), (100, 0), (100, 100), (0, 100)])
    # the same square from another corner and the other way round: identical lots
    turned = shapely.Polygon([(100, 100), (100, 0), (0, 0), (0, 100)])
    # same envelope and vertex count as the square, another shape: not identical
    notched = shapely.Polygon([(0, 0), (100, 0), (100, 100), (50, 50), (0, 100)])
    kite = shapely.Polygon([(0, 0), (100, 0), (100, 100), (60, 40), (0, 100)])
    # 0.01 ft off the square's corner: not identical either
    moved = shapely.Polygon([(0, 0), (100, 0), (100, 100), (0.01, 100)])
    far = shapely.box(1000, 0, 1100, 100)
    geoms = [square, far, turned, notched, kite, moved, None, far]
    ids = ["A", "F", "B", "N", "K", "M", "X", "G"]
    return gpd.GeoDataFrame({"parcel_id": ids}, geometry=geoms, crs="EPSG:2260")


def test_identical_lots_are_grouped_and_lookalikes_are_not() -> None:
    prepared = prepare_parcels(_parcels())
    frame = prepared.parcels
    assert frame["_same_as"].tolist() == [-1, -1, 0, -1, -1, -1, -1, 1]
    assert frame["parcel_ids"].tolist() == ["A;B", "F;G", "A;B", "N", "K", "M", "X", "F;G"]
    assert np.array_equal(prepared.screened, [True, True, False, True, True, True, True, False])
    same = prepared.problems[prepared.problems["problem"] == "same geometry as another parcel"]
    assert same["row"].tolist() == [2, 7]
    assert same["value"].tolist() == ["row 0, parcel_id A", "row 1, parcel_id F"]


def test_no_two_lots_alike_groups_nothing() -> None:
    parcels = _parcels().iloc[[0, 1, 3, 4, 5, 6]].reset_index(drop=True)
    prepared = prepare_parcels(parcels)
    assert (prepared.parcels["_same_as"] == -1).all()
    assert prepared.parcels["parcel_ids"].tolist() == ["A", "F", "N", "K", "M", "X"]
