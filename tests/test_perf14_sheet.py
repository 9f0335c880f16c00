"""The calculation sheet built column by column equals the frame of its row dicts."""

from __future__ import annotations

import geopandas as gpd
import pandas as pd
import shapely

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.hydrology import runoff_results
from gis_sw.analysis.runoff.sheet import SHEET_COLUMNS, calculation_sheet, sheet_rows
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.ruleset import Ruleset

X0, Y0 = 685_000.0, 830_000.0
CRS = "EPSG:2260"


def test_sheet_equals_the_frame_of_its_rows(ruleset: Ruleset) -> None:
    lots = [shapely.box(X0 + 100 * i, Y0, X0 + 100 * (i + 1), Y0 + 80) for i in range(4)]
    layers = {
        "parcels": gpd.GeoDataFrame({"parcel_id": ["A", "B", "C", "D"]}, geometry=lots, crs=CRS),
        "soils": gpd.GeoDataFrame(  # lot D has no soil: a review with no figures
            {"hsg": ["B", "C/D"]},
            geometry=[
                shapely.box(X0, Y0, X0 + 150, Y0 + 80),
                shapely.box(X0 + 150, Y0, X0 + 300, Y0 + 80),
            ],
            crs=CRS,
        ),
        "buildings": gpd.GeoDataFrame(
            {"id": ["b"]}, geometry=[shapely.box(X0 + 10, Y0 + 10, X0 + 40, Y0 + 40)], crs=CRS
        ),
        "land_cover": gpd.GeoDataFrame(
            {"cover": ["woods", "swamp"]},
            geometry=[
                shapely.box(X0 + 120, Y0, X0 + 250, Y0 + 80),
                shapely.box(X0, Y0 + 60, X0 + 50, Y0 + 80),
            ],
            crs=CRS,
        ),
    }
    disturbance = gpd.GeoDataFrame(
        {"proposal_id": ["P1", "P2", "P3"]},
        geometry=[
            shapely.box(X0 + 20, Y0 + 20, X0 + 130, Y0 + 50),
            shapely.box(X0 + 210, Y0 + 5, X0 + 260, Y0 + 30),
            shapely.box(X0 + 310, Y0 + 5, X0 + 330, Y0 + 30),
        ],
        crs=CRS,
    )
    results = runoff_results(
        CheckContext(make_layerset(CRS, layers), make_proposals(CRS, disturbance), ruleset)
    )
    assert len(results) == 3
    got = calculation_sheet(results)
    expected = pd.DataFrame([row for r in results for row in sheet_rows(r)]).reindex(
        columns=list(SHEET_COLUMNS)
    )
    for col in ("proposal_id", "drainage_id", "scenario", "line", "source", "cover", "hsg", "note"):
        expected[col] = expected[col].astype(object).where(expected[col].notna(), "").astype(str)
    expected["storm_yr"] = expected["storm_yr"].astype("Int64")
    pd.testing.assert_frame_equal(got, expected)
    assert set(got["line"]) >= {"subarea", "composite", "storm", "tc", "wqv"}
    assert got["storm_yr"].notna().sum() > 0
