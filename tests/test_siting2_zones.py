"""The batch's low-threshold zone area reads each zone name once, however it is spelled."""

from __future__ import annotations

import geopandas as gpd
from shapely.geometry import box

from gis_sw.batch.run import RunOptions, screen_layers
from gis_sw.layers.build import make_layerset
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"


def _frame(geoms: list[object], **columns: list[object]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(columns, geometry=gpd.GeoSeries(geoms, crs=CRS), crs=CRS)


def test_low_zone_area_whatever_the_spelling(ruleset: Ruleset) -> None:
    # four 100 x 100 lots; zoning strips 25 ft wide named as town exports spell them
    parcels = _frame([box(x, 0, x + 100, 100) for x in (0, 200, 400, 600)], parcel_id=list("ABCD"))
    strips = [box(x, -10, x + 25, 110) for x in (0, 200, 225, 400, 600)]
    zoning = _frame(
        [*strips, box(625, -10, 700, 110)], zone=["r 10", "R10", "R-20", None, "R-20", "R-10"]
    )
    layers = make_layerset(CRS, {"parcels": parcels, "zoning": zoning})
    rows = screen_layers(layers, ruleset, options=RunOptions(workers=1, quick=True)).rows
    low = dict(zip(rows["parcel_id"], rows["low_zone_area_sqft"], strict=True))
    assert low == {"A": 2500.0, "B": 2500.0, "C": 0.0, "D": 7500.0}
    assert rows["permit_threshold_sqft"].tolist()[:2] == [100.0, 100.0]
