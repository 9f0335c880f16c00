"""Soils of different groups overlapping inside a drainage area: review, never figures alone.

Two soil polygons of different hydrologic groups mapped over the same ground would count
that ground twice in the sub-areas (their areas adding up to more than the drainage area),
and the curve numbers would silently be weighted over more ground than there is.
"""

from __future__ import annotations

import geopandas as gpd
import pytest
import shapely

from gis_sw.analysis.runoff.params import parse_hydrology
from gis_sw.analysis.runoff.site import DrainageJob, TimeOfConcentration, compute_drainages
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"
X0, Y0 = 685_000.0, 830_000.0


def _result(ruleset: Ruleset, overlap_ft: float):
    """A 100 x 100 ft drainage area on soil B (west) and C (east) overlapping by a strip."""
    soils = gpd.GeoDataFrame(
        {"hsg": ["B", "C"]},
        geometry=[
            shapely.box(X0 - 10, Y0 - 10, X0 + 50 + overlap_ft, Y0 + 110),
            shapely.box(X0 + 50, Y0 - 10, X0 + 110, Y0 + 110),
        ],
        crs=CRS,
    )
    area = shapely.box(X0, Y0, X0 + 100, Y0 + 100)
    job = DrainageJob(
        "P",
        "P",
        area,
        None,
        shapely.box(X0 + 10, Y0 + 10, X0 + 30, Y0 + 30),
        TimeOfConcentration(0.1, "given tc_min on drainage_areas"),
    )
    storms = ruleset.storms
    (result,) = compute_drainages(
        [job],
        params=parse_hydrology(ruleset),
        storms_in=storms.depths_in,
        distribution=storms.distribution,
        soils=soils,
        buildings=None,
        pavement=None,
        land_cover=None,
    )
    return result


@pytest.mark.parametrize(
    ("overlap_ft", "problem"),
    [
        pytest.param(0.0, None, id="abutting-soils"),
        pytest.param(0.004, None, id="0.4-sq-ft-sliver-tolerated"),
        pytest.param(0.01, "(1 sq ft mapped twice)", id="1-sq-ft-mapped-twice"),
        pytest.param(20.0, "(2,000 sq ft mapped twice)", id="2000-sq-ft-mapped-twice"),
    ],
)
def test_overlapping_soil_groups_are_a_problem(
    ruleset: Ruleset, overlap_ft: float, problem: str | None
) -> None:
    result = _result(ruleset, overlap_ft)
    overlaps = [p for p in result.problems if "overlap" in p]
    if problem is None:
        assert overlaps == []
    else:
        assert len(overlaps) == 1
        assert problem in overlaps[0]
        assert "fix the overlaps in the soils layer" in overlaps[0]
