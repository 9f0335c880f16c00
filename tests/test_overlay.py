"""area_by_key: areas of polygons by zone and inside a layer, to the square foot."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pytest
import shapely
from shapely.geometry import box

from gis_sw.analysis.overlay import area_by_key, polygonal_part

CRS = "EPSG:2260"


@pytest.fixture
def zoning() -> gpd.GeoDataFrame:
    # R-10 west of x=100, R-20 east of it, a zone with no name further east
    return gpd.GeoDataFrame(
        {"zone": ["R-10", "R-20", "R-20", None]},
        geometry=[
            box(0, 0, 100, 100),
            box(100, 0, 200, 50),
            box(100, 50, 200, 100),
            box(200, 0, 300, 100),
        ],
        crs=CRS,
    )


def test_split_across_two_zones(zoning: gpd.GeoDataFrame) -> None:
    subjects = gpd.GeoSeries([box(94, 0, 120, 10)], index=["P-1"], crs=CRS)
    result = area_by_key(subjects, zoning, "zone", keep_geometry=True)
    assert list(result["subject"]) == ["P-1", "P-1"]
    assert dict(zip(result["key"], result["area_sqft"], strict=True)) == {
        "R-10": 60.0,
        "R-20": 200.0,
    }
    r10 = result.loc[result["key"] == "R-10", "geometry"].iloc[0]
    assert r10.equals(box(94, 0, 100, 10))


def test_subject_inside_one_zone_is_itself(zoning: gpd.GeoDataFrame) -> None:
    inside = box(10, 10, 20, 20)
    result = area_by_key(gpd.GeoSeries([inside], crs=CRS), zoning, "zone", keep_geometry=True)
    assert len(result) == 1
    assert result["area_sqft"].iloc[0] == 100.0
    assert result["geometry"].iloc[0] is inside or result["geometry"].iloc[0].equals(inside)


def test_two_features_same_key_are_one_row(zoning: gpd.GeoDataFrame) -> None:
    # crosses the line between the two R-20 polygons: 20 x 20 = 400 sq ft, one row
    subject = gpd.GeoSeries([box(150, 40, 170, 60)], crs=CRS)
    result = area_by_key(subject, zoning, "zone", keep_geometry=True)
    assert list(result["key"]) == ["R-20"]
    assert result["area_sqft"].iloc[0] == pytest.approx(400.0, abs=1e-9)
    assert result["geometry"].iloc[0].area == pytest.approx(400.0, abs=1e-9)


def test_missing_key_kept_as_none(zoning: gpd.GeoDataFrame) -> None:
    subject = gpd.GeoSeries([box(190, 0, 210, 10)], crs=CRS)
    result = area_by_key(subject, zoning, "zone")
    assert result["key"].tolist() == ["R-20", None]
    assert result["area_sqft"].tolist() == [100.0, 100.0]


def test_overlapping_features_counted_once_when_dissolved() -> None:
    wetlands = gpd.GeoDataFrame(geometry=[box(0, 0, 10, 10), box(5, 0, 15, 10)], crs=CRS)
    subject = gpd.GeoSeries([box(0, 0, 20, 10)], crs=CRS)
    assert area_by_key(subject, wetlands, None)["area_sqft"].tolist() == [150.0]
    # a coverage-style sum counts the 50 sq ft overlap twice, as documented
    assert area_by_key(subject, wetlands, None, dissolve=False)["area_sqft"].tolist() == [200.0]


def test_touching_only_and_empty_subjects_have_no_rows(zoning: gpd.GeoDataFrame) -> None:
    subjects = gpd.GeoSeries([box(-10, 0, 0, 10), shapely.Polygon(), None], crs=CRS)
    result = area_by_key(subjects, zoning, "zone")
    assert len(result) == 0
    assert list(result.columns) == ["subject", "key", "area_sqft"]


def test_many_subjects_keep_their_labels(zoning: gpd.GeoDataFrame) -> None:
    xs = np.arange(0, 290, 10.0)
    subjects = gpd.GeoSeries(
        shapely.box(xs, 0, xs + 10, 10), index=[f"s{i}" for i in range(len(xs))], crs=CRS
    )
    result = area_by_key(subjects, zoning, "zone")
    assert len(result) == len(xs)  # each 10 ft cell lies wholly in one zone
    assert (result["area_sqft"] == 100.0).all()
    assert result.loc[result["subject"] == "s9", "key"].iloc[0] == "R-10"
    assert result.loc[result["subject"] == "s10", "key"].iloc[0] == "R-20"
    assert result.loc[result["subject"] == "s25", "key"].iloc[0] is None


def test_bad_key_raises(zoning: gpd.GeoDataFrame) -> None:
    with pytest.raises(ValueError, match="no column 'district'"):
        area_by_key(gpd.GeoSeries([box(0, 0, 1, 1)], crs=CRS), zoning, "district")


def test_polygonal_part_drops_lines() -> None:
    collection = shapely.GeometryCollection([box(0, 0, 1, 1), shapely.LineString([(0, 0), (5, 5)])])
    assert polygonal_part(collection).equals(box(0, 0, 1, 1))
    assert polygonal_part(shapely.LineString([(0, 0), (1, 1)])).is_empty
