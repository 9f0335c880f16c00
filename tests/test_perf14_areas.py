"""The area-only sub-areas (levels of many small polygons) equal the overlay of the pieces."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pytest
import shapely

from gis_sw.analysis.runoff.areas import has_many_small_parts, level_area_columns
from gis_sw.analysis.runoff.cover import soil_groups, split_cover, subarea_columns
from gis_sw.analysis.runoff.params import parse_hydrology
from gis_sw.analysis.runoff.site import cover_levels
from gis_sw.ruleset import Ruleset

X0, Y0 = 685_000.0, 830_000.0
CRS = "EPSG:2260"


def small_boxes(n: int, seed: int) -> np.ndarray:
    """``n`` 4 x 4 ft boxes on a 6-ft grid 60 wide, a third shifted onto a neighbour."""
    rng = np.random.default_rng(seed)
    i = np.arange(n)
    x = X0 + (i % 60) * 6.0 + np.where(rng.random(n) < 0.33, 3.0, 0.0)
    y = Y0 + (i // 60) * 6.0
    return shapely.box(x, y, x + 4, y + 4)


def frame(column: str, values: list[str], geoms: list[shapely.Geometry]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({column: values}, geometry=geoms, crs=CRS)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_area_path_equals_the_overlay_of_pieces(ruleset: Ruleset, seed: int) -> None:
    params = parse_hydrology(ruleset)
    rng = np.random.default_rng(seed)
    area = shapely.box(X0 - 20, Y0 - 20, X0 + 380, Y0 + 90)
    boxes = small_boxes(900, seed)
    # buildings and pavement cut through some boxes; a land cover polygon takes part of the rest
    buildings = frame(
        "id",
        ["b1", "b2"],
        [
            shapely.box(X0 + 10.5, Y0 + 3.5, X0 + 60.5, Y0 + 40.5),
            shapely.box(X0 + 300, Y0 - 30, X0 + 330, Y0),
        ],
    )
    pavement = frame("id", ["p"], [shapely.box(X0 + 100.2, Y0 - 20, X0 + 130.7, Y0 + 90)])
    land_cover = frame(
        "cover",
        ["woods", "meadow"],
        [
            shapely.box(X0 + 200.5, Y0 + 20.5, X0 + 400, Y0 + 120),
            shapely.box(X0 - 40, Y0 + 60.5, X0 + 90, Y0 + 100),
        ],
    )
    # soil B west, C east, an overlap strip mapped twice, a gap no group covers, a "W" polygon
    split = 150.0 + float(rng.uniform(0, 3))
    soils = frame(
        "hsg",
        ["B", "C", "W"],
        [
            shapely.box(X0 - 30, Y0 - 30, X0 + split + 1.5, Y0 + 70),
            shapely.box(X0 + split - 1.5, Y0 - 30, X0 + 420, Y0 + 50),
            shapely.box(X0 + 250, Y0 + 50, X0 + 420, Y0 + 120),
        ],
    )
    impervious = frame(
        "surface", ["driveway"], [shapely.box(X0 + 30.5, Y0 + 50.5, X0 + 45.5, Y0 + 85.5)]
    )
    impervious["proposal_id"] = "P"
    disturbance = shapely.union_all(boxes)
    existing, levels = cover_levels(
        area,
        layers=(buildings, pavement, land_cover),
        impervious=impervious,
        disturbance=disturbance,
        params=params,
        problems=[],
    )
    (disturbed,) = (level for level in levels if level.source == "disturbed, not impervious")
    assert has_many_small_parts(disturbed.geometry)
    assert not any(has_many_small_parts(level.geometry) for level in existing)
    groups = soil_groups(soils, area, params)
    pieces = split_cover(area, levels, params.default_cover)
    expected = subarea_columns(pieces, soils, area, params, groups=groups)
    got = level_area_columns(
        area, levels, params.default_cover, soils=soils, groups=groups, params=params
    )
    keys = list(zip(expected["source"], expected["cover"], expected["hsg"], strict=True))
    assert list(zip(got["source"], got["cover"], got["hsg"], strict=True)) == keys
    assert got["area_sqft"] == pytest.approx(expected["area_sqft"], abs=0.01)
    np.testing.assert_array_equal(got["cn"], expected["cn"])
    np.testing.assert_array_equal(got["impervious"], expected["impervious"])
    # every kind of row is there: new impervious, existing building, disturbed ground, land
    # cover, the default cover, and unmapped ground (hsg None)
    sources = set(got["source"])
    assert {"new driveway", "existing building", "disturbed, not impervious"} <= sources
    assert {"land cover woods", "default pervious cover"} <= sources
    assert None in set(got["hsg"])
    # the table covers the area once, the strip mapped both B and C twice
    both = shapely.intersection(soils.geometry[0], soils.geometry[1])
    twice = shapely.intersection(both, area).area
    assert twice > 100.0
    assert float(got["area_sqft"].sum()) == pytest.approx(area.area + twice, abs=0.01)
