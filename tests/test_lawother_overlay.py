"""area_by_key cuts finely drawn features to each subject's box first: same areas."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import shapely
from shapely.geometry import Point, box

from gis_sw.analysis.overlay import CLIP_VERTICES, area_by_key

CRS = "EPSG:2260"


def test_clipped_overlay_gives_the_plain_intersection_areas() -> None:
    disc = Point(0, 0).buffer(100.0, quad_segs=512)  # 2,049 vertices: clipped
    ring = disc.difference(Point(0, 0).buffer(40.0, quad_segs=512))  # with a hole
    assert shapely.get_num_coordinates(disc) > CLIP_VERTICES
    subjects = gpd.GeoSeries(
        [
            box(50, -10, 150, 10),
            box(-30, -30, 30, 30),
            box(-200, -200, 200, 200),
            box(300, 0, 310, 10),
        ],
        index=["edge", "hole", "all", "none"],
        crs=CRS,
    )
    features = gpd.GeoDataFrame({"k": ["a"]}, geometry=[ring], crs=CRS)
    got = area_by_key(subjects, features, None, keep_geometry=True).set_index("subject")
    want = shapely.area(shapely.intersection(subjects.to_numpy(), ring))
    assert list(got.index) == ["edge", "hole", "all"]
    np.testing.assert_allclose(got["area_sqft"].to_numpy(), want[:3], rtol=0, atol=1e-6)
    assert round(float(got.loc["all", "area_sqft"]), 2) == round(ring.area, 2)
    np.testing.assert_allclose(shapely.area(got["geometry"].to_numpy()), want[:3], atol=1e-6)
