"""The wetland adjacent band (issue 13 item 8, issue 16's SW106 case): exact to 0.01 sq ft,
one construction, built from the wetlands near the disturbance only.

Expected areas are closed forms: a square wetland's band has a quarter circle of radius
100 ft at each corner; a convex wetland's band has area P r + pi r**2 (Steiner's formula).
"""

from __future__ import annotations

import math
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from shapely.geometry import Point, box

from gis_sw.analysis.bands import (
    AREA_TOLERANCE_SQFT,
    DRAW_TOLERANCE_FT,
    adjacent_band,
    adjacent_band_near,
    adjacent_buffers,
    adjacent_outlines,
    arc_area_error_sqft,
    band_quad_segs,
    wetlands_near,
)
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.permits import check_mapped_resources
from gis_sw.batch.run import RunOptions, screen_layers
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.read import read_layers, read_proposals
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"
R = 100.0  # the ruleset's wetland adjacent area, checked below
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
WETLAND = box(0, 0, 100, 100)  # corner arcs centred on (100, 100) etc.


def circle_segment_integral(t: float, r: float = R) -> float:
    """Integral of sqrt(r^2 - x^2) from 0 to t."""
    return t / 2 * math.sqrt(r * r - t * t) + r * r / 2 * math.asin(t / r)


def sw106_adjacent(ruleset: Ruleset, disturbance: shapely.Geometry) -> pd.Series:
    frame = gpd.GeoDataFrame({"proposal_id": ["P1"]}, geometry=[disturbance], crs=CRS)
    proposals = make_proposals(CRS, frame, attributes=pd.DataFrame([{"proposal_id": "P1"}]))
    wetlands = gpd.GeoDataFrame(
        {"wetland_id": ["W1"], "name": ["Test marsh"]}, geometry=[WETLAND], crs=CRS
    )
    layers = make_layerset(CRS, {"wetlands": wetlands})
    found = check_mapped_resources(CheckContext(layers, proposals, ruleset))
    return found[found["subject_id"] == "P1:wetland_adjacent_area"].iloc[0]


def test_ruleset_band_is_100_ft(ruleset: Ruleset) -> None:
    assert ruleset.resources.wetland_adjacent_area_ft == R


def test_quad_segs_is_the_fewest_within_the_tolerance() -> None:
    n = band_quad_segs(R)
    # GEOS may stretch a chord to 1.5 times the angle: 2.25 times the loss per unit angle
    budget = AREA_TOLERANCE_SQFT / 2.25
    assert arc_area_error_sqft(R, n) <= budget < arc_area_error_sqft(R, n - 1)
    assert n == 2412
    # the sagitta r (1 - cos(pi / 4n)) is far under a hundredth of a foot
    assert R * (1 - math.cos(math.pi / (4 * n))) < 6e-6
    # the old 32 segments lose 12.61 sq ft over a full turn at 100 ft
    assert arc_area_error_sqft(R, 32) == pytest.approx(12.615, abs=0.001)
    assert band_quad_segs(2 * R) > band_quad_segs(R)
    with pytest.raises(ValueError, match="tolerance"):
        band_quad_segs(R, 0.0)


def test_quarter_disc_at_a_corner_to_the_hundredth(ruleset: Ruleset) -> None:
    row = sw106_adjacent(ruleset, box(100, 100, 200, 200))
    assert row["outcome"] == "required"
    assert row["measured"] == round(math.pi * R * R / 4, 2) == 7853.98
    assert "7,854 sq ft of the disturbance lies in the wetland adjacent area" in row["message"]


def test_half_of_the_corner_sector_to_the_hundredth(ruleset: Ruleset) -> None:
    # x from 100 to 150 of the quarter disc: the integral of sqrt(r^2 - x^2) over 0..50
    row = sw106_adjacent(ruleset, box(100, 100, 150, 250))
    assert row["measured"] == round(circle_segment_integral(50.0), 2) == 4783.06


@pytest.mark.parametrize(
    ("x0", "expected_sqft", "outcome"),
    [(199.99, None, "required"), (200.0, 0.0, "pass"), (200.01, 0.0, "pass")],
    ids=["99.99-ft", "100-ft", "100.01-ft"],
)
def test_lens_at_the_arc_a_hundredth_either_side(
    ruleset: Ruleset, x0: float, expected_sqft: float | None, outcome: str
) -> None:
    # a disturbance beyond the wetland's corner (y from 100), its left edge x0 - 100 ft
    # from the corner: inside the arc only a thin lens when x0 < 200
    row = sw106_adjacent(ruleset, box(x0, 100, x0 + 20, 120))
    if expected_sqft is None:
        d = x0 - 100.0
        t = math.sqrt(R * R - d * d)
        lens = circle_segment_integral(t) - d * t  # 0.0094 sq ft
        expected_sqft = round(lens, 2)
        assert expected_sqft == 0.01
    assert row["outcome"] == outcome
    assert row["measured"] == expected_sqft


def test_convex_wetland_band_is_steiner_exact() -> None:
    # a 256-gon "round" pond of radius 60: band area = P r + pi r^2
    pond = Point(1000, 1000).buffer(60.0, quad_segs=64)
    band = adjacent_band([pond], R)
    expected = shapely.length(pond) * R + math.pi * R * R
    assert shapely.area(band) == pytest.approx(expected, abs=AREA_TOLERANCE_SQFT)
    # the old 32-segment buffer was short by whole square feet
    old = shapely.difference(shapely.buffer(pond, R, quad_segs=32), pond)
    assert expected - shapely.area(old) > 3.0


def test_band_near_uses_only_the_wetlands_within_the_width() -> None:
    near = box(0, 0, 100, 100)
    far = [box(x, 5000, x + 50, 5050) for x in range(0, 100_000, 100)]  # 1,000 far away
    just = box(300.0, 0, 320, 20)  # exactly 100 ft from the disturbance below
    beyond = box(300.01, 40, 320, 60)  # 100.01 ft
    disturbance = box(150, 0, 200, 50)
    wetlands = np.array([*far, near, just, beyond], dtype=object)
    assert wetlands_near(wetlands, [disturbance], R).tolist() == [1000, 1001]
    local = shapely.intersection(adjacent_band_near(wetlands, [disturbance], R), disturbance)
    town = wetlands[-23:]  # 20 of the far ones and the three near: the whole band is slow
    whole = shapely.intersection(adjacent_band(town, R), disturbance)
    assert shapely.area(local) == pytest.approx(shapely.area(whole), abs=1e-6)
    assert round(shapely.area(local), 2) == 2500.0  # all of it within 100 ft of `near`


def test_local_band_equals_the_whole_town_band_on_the_sample(ruleset: Ruleset) -> None:
    layers = read_layers(SAMPLE / "layers.toml", ruleset=ruleset)
    proposals = read_proposals(SAMPLE / "proposals.gpkg", ruleset=ruleset)
    wetlands = layers.get("wetlands").geometry.to_numpy()
    unions = CheckContext(layers, proposals, ruleset).disturbance_union
    geoms = np.asarray(unions.to_numpy(), dtype=object)
    whole = shapely.area(shapely.intersection(geoms, adjacent_band(wetlands, R)))
    local = np.array(
        [shapely.area(shapely.intersection(g, adjacent_band_near(wetlands, [g], R))) for g in geoms]
    )
    assert np.round(local, 2).tolist() == np.round(whole, 2).tolist()
    assert (np.round(whole, 2) > 0).sum() >= 2  # the sample has proposals in the band
    # and SW106 reports those very figures
    found = check_mapped_resources(CheckContext(layers, proposals, ruleset))
    rows = found[found["subject_id"].str.endswith(":wetland_adjacent_area")]
    got = dict(zip(rows["proposal_id"], rows["measured"], strict=True))
    want = dict(zip(unions.index.astype(str), np.round(whole, 2), strict=True))
    assert {p: got[p] for p in want} == want


def test_batch_counts_the_same_exact_band(ruleset: Ruleset) -> None:
    def frame(geoms: list[object], **columns: list[object]) -> gpd.GeoDataFrame:
        return gpd.GeoDataFrame(columns, geometry=gpd.GeoSeries(geoms, crs=CRS), crs=CRS)

    layers = make_layerset(
        CRS,
        {
            "parcels": frame([box(100, 100, 200, 200)], parcel_id=["Q"]),
            "zoning": frame([box(-1000, -1000, 1000, 1000)], zone=["R-20"]),
            "wetlands": frame([WETLAND], wetland_id=["W1"]),
        },
    )
    rows = screen_layers(layers, ruleset, options=RunOptions(workers=1)).rows
    assert round(float(rows["wetland_adjacent_sqft"].iloc[0]), 2) == 7853.98


def test_maps_draw_the_same_buffers() -> None:
    buffers = adjacent_buffers([WETLAND], R)
    exact = 100 * 100 + 4 * 100 * R + math.pi * R * R
    assert shapely.area(buffers[0]) == pytest.approx(exact, abs=AREA_TOLERANCE_SQFT)
    assert adjacent_buffers([], R).shape == (0,)


def test_maps_draw_the_band_within_the_drawing_tolerance() -> None:
    drawn = adjacent_outlines([WETLAND], R)
    exact = adjacent_buffers([WETLAND], R)
    assert shapely.hausdorff_distance(drawn[0], exact[0]) <= DRAW_TOLERANCE_FT
    assert shapely.get_num_coordinates(drawn[0]) < shapely.get_num_coordinates(exact[0]) / 20
