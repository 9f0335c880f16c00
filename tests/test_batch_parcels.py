"""Per-parcel batch figures on tiny hand-built towns, to the sq ft and 0.01 ft."""

from __future__ import annotations

import math

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from shapely.geometry import Point, Polygon, box

from gis_sw.analysis.distances import grown_radius
from gis_sw.batch.chunks import halo_ft, plan_chunks
from gis_sw.batch.parcels import BUFFER_QUAD_SEGS
from gis_sw.batch.run import RunOptions, rows_equal, screen_layers
from gis_sw.layers.build import make_layerset
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"


def frame(geoms: list[object], **columns: list[object]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(columns, geometry=gpd.GeoSeries(geoms, crs=CRS), crs=CRS)


def tiny_layers(parcels: gpd.GeoDataFrame | None = None) -> dict[str, gpd.GeoDataFrame]:
    if parcels is None:
        parcels = frame(
            [
                box(0, 0, 100, 100),  # A
                box(100, 0, 200, 100),  # B: R-20, two overlapping wetlands
                box(200, 0, 300, 100),  # C: water body
                box(400, 0, 500, 100),  # D: one building without basement
                box(600, 0, 640, 40),  # E: a well in the middle
                box(700, 0, 800, 100),  # F: building with habitable basement
            ],
            parcel_id=["A", "B", "C", "D", "E", "F"],
        )
    return {
        "parcels": parcels,
        "zoning": frame(
            [box(-1000, -1000, 40, 1000), box(40, -1000, 2000, 1000)], zone=["R-10", "R-20"]
        ),
        "wetlands": frame([box(120, 20, 160, 60), box(140, 40, 180, 80)], wetland_id=["W1", "W2"]),
        "water_bodies": frame([box(210, 10, 230, 30)], water_id=["H1"]),
        "floodplain": frame([box(-50, 90, 400, 200)]),
        "wells": frame(
            [Point(50, 150), Point(250, -50.01), Point(620, 20)], well_id=["1", "2", "3"]
        ),
        "septic_fields": frame([box(10, 10, 20, 20)], septic_id=["S1"]),
        "buildings": frame(
            [box(440, 40, 460, 60), box(740, 40, 760, 60)],
            building_id=["B1", "B2"],
            habitable_basement=[False, True],
            below_ground_storage=[False, False],
        ),
    }


@pytest.fixture(scope="module")
def tiny(ruleset: Ruleset) -> pd.DataFrame:
    layers = make_layerset(CRS, tiny_layers())
    rows = screen_layers(layers, ruleset, options=RunOptions(workers=1)).rows
    return rows.set_index("parcel_id")


def test_zones_and_permit_threshold(tiny: pd.DataFrame) -> None:
    a, b = tiny.loc["A"], tiny.loc["B"]
    assert a["zones"] == "R-10;R-20"
    assert a["zone_main"] == "R-20"
    assert a["low_zone_area_sqft"] == 4000.00
    assert a["permit_threshold_sqft"] == 100.0  # any part in R-10: the low threshold
    assert b["zones"] == "R-20"
    assert b["permit_threshold_sqft"] == 250.0


def test_overlapping_wetlands_counted_once(tiny: pd.DataFrame) -> None:
    b = tiny.loc["B"]
    assert b["wetland_sqft"] == 2800.00  # 1600 + 1600 - 400 overlap
    assert b["wetland_adjacent_sqft"] == 7200.00  # the rest of B is within 100 ft
    assert b["constrained_sqft"] == 10000.00
    assert b["constrained_fraction"] == 1.0
    assert bool(b["mostly_constrained"])
    assert b["screen"] == "mostly_constrained"
    assert b["result"] == "required"


def test_water_body_and_floodplain_areas(tiny: pd.DataFrame) -> None:
    assert tiny.loc["C", "water_body_sqft"] == 400.00
    for pid in ("A", "B", "C"):
        assert tiny.loc[pid, "floodplain_sqft"] == 1000.00  # the 10-ft strip y >= 90
    assert tiny.loc["D", "floodplain_sqft"] == 0.0


@pytest.mark.parametrize(
    ("parcel", "wells"),
    [("A", 1), ("C", 0)],
    ids=["well-50.00-ft-from-lot-counts", "well-50.01-ft-from-lot-does-not"],
)
def test_wells_within_50_ft(tiny: pd.DataFrame, parcel: str, wells: int) -> None:
    assert tiny.loc[parcel, "near_ft"] == 50.0
    assert tiny.loc[parcel, "wells_near"] == wells


def test_septic_fields_near(tiny: pd.DataFrame) -> None:
    assert tiny.loc["A", "septic_fields_near"] == 1
    assert tiny.loc["B", "septic_fields_near"] == 0  # 80 ft away


def test_siting_area_property_line_and_footprint(tiny: pd.DataFrame) -> None:
    d = tiny.loc["D"]
    # 10 ft from every lot line leaves 80 x 80 (less the 0.003 ft the setback radius is
    # grown by, as siting_polygons does); the 20 x 20 footprint is taken out
    side = 100 - 2 * grown_radius(10.0, BUFFER_QUAD_SEGS)
    assert side == pytest.approx(79.994, abs=0.001)
    assert d["roof_siting_sqft"] == round(side * side - 400, 2)
    assert d["vehicle_siting_sqft"] == d["roof_siting_sqft"]
    assert not bool(d["no_vehicle_site"])


def test_habitable_basement_setback(tiny: pd.DataFrame) -> None:
    f = tiny.loc["F"]
    # footprint grown by 20 ft: 20x20 + 4 sides of 20x20 + a circle of radius 20
    exact = 80 * 80 - (400 + 4 * 400 + math.pi * 400)
    assert abs(f["roof_siting_sqft"] - exact) < 3.0


def test_no_legal_place_for_a_vehicle_traffic_device(tiny: pd.DataFrame) -> None:
    e = tiny.loc["E"]
    side = 40 - 2 * grown_radius(10.0, BUFFER_QUAD_SEGS)
    assert e["roof_siting_sqft"] == round(side * side, 2)  # 20 x 20 inside the setback
    assert e["vehicle_siting_sqft"] == 0.0  # the well's 50 ft covers it all
    assert bool(e["no_vehicle_site"])
    assert e["screen"] == "no_vehicle_site"


def test_each_parcel_its_own_chunk_gives_the_same_rows(ruleset: Ruleset) -> None:
    layers = make_layerset(CRS, tiny_layers())
    whole = screen_layers(layers, ruleset, options=RunOptions(workers=1)).rows
    pieces = screen_layers(layers, ruleset, options=RunOptions(chunk_size=1, workers=2))
    assert pieces.plan.n_chunks == 6
    assert rows_equal(whole, pieces.rows)


def test_halo_covers_the_widest_distance(ruleset: Ruleset) -> None:
    assert halo_ft(ruleset) == 100.0
    parcels = gpd.GeoSeries([box(0, 0, 10, 10), box(1000, 0, 1010, 10)], crs=CRS)
    plan = plan_chunks(parcels, chunk_size=1, halo_ft=100.0)
    assert sorted(tuple(b) for b in plan.bounds) == [
        (-100.0, -100.0, 110.0, 110.0),
        (900.0, -100.0, 1110.0, 110.0),
    ]


def test_bad_parcels_are_reported_not_fatal(ruleset: Ruleset) -> None:
    bowtie = Polygon([(1000, 0), (1010, 10), (1010, 0), (1000, 10)])
    parcels = frame(
        [box(0, 0, 100, 100), bowtie, box(100, 0, 200, 100), None],
        parcel_id=["A", "X", "A", "N"],
    )
    layers = make_layerset(CRS, tiny_layers(parcels))
    result = screen_layers(layers, ruleset, options=RunOptions(chunk_size=2, workers=1))
    problems = result.prepared.problems
    assert problems[["row", "parcel_id", "problem"]].to_records(index=False).tolist() == [
        (0, "A", "duplicate parcel_id"),
        (1, "X", "invalid geometry"),
        (2, "A", "duplicate parcel_id"),
        (3, "N", "no geometry"),
    ]
    rows = result.rows
    assert rows["row"].tolist() == [0, 1, 2, 3]
    assert rows.loc[1, "area_sqft"] == 50.00  # two triangles of the repaired bow-tie
    assert "repaired" in rows.loc[1, "notes"]
    assert rows.loc[3, "screen"] == "review"
    assert np.isnan(rows.loc[3, "roof_siting_sqft"])
    assert rows.loc[0, "wells_near"] == 1
    assert rows.loc[2, "wetland_sqft"] == 2800.00
    assert "duplicate parcel_id" in result.prepared.summary()


def test_missing_layer_is_review_not_zero(ruleset: Ruleset) -> None:
    layers_in = tiny_layers()
    del layers_in["floodplain"]
    rows = screen_layers(make_layerset(CRS, layers_in), ruleset).rows
    assert rows["floodplain_sqft"].isna().all()
    assert set(rows["screen"]) == {"review"}
    assert "floodplain" in rows.loc[0, "notes"]


def test_no_zoning_under_a_parcel_is_review(ruleset: Ruleset) -> None:
    layers_in = tiny_layers()
    layers_in["zoning"] = frame([box(-1000, -1000, 150, 1000)], zone=["R-10"])
    rows = screen_layers(make_layerset(CRS, layers_in), ruleset).rows.set_index("parcel_id")
    assert np.isnan(rows.loc["D", "permit_threshold_sqft"])
    assert rows.loc["D", "screen"] == "review"
    assert "no zoning" in rows.loc["D", "notes"]
    assert rows.loc["B", "permit_threshold_sqft"] == 100.0  # half of B is R-10
    assert shapely.area(box(100, 0, 150, 100)) == rows.loc["B", "low_zone_area_sqft"]


@pytest.mark.parametrize("device_class", ["roof", "vehicle"])
def test_siting_area_agrees_with_siting_polygons(ruleset: Ruleset, device_class: str) -> None:
    """The batch's whole-array siting area and the device module's polygons agree.

    The batch buffers with 32 segments per quarter circle (siting_polygons: 128), both
    grown by the chord error, so the batch is never larger and at most a few sq ft smaller.
    """
    from gis_sw.analysis.siting import siting_polygons
    from gis_sw.batch.synthetic import synthetic_town

    layers = synthetic_town(300, seed=5)
    rows = screen_layers(layers, ruleset).rows
    polygons = siting_polygons(layers, ruleset, device_class=device_class)
    diff = rows[f"{device_class}_siting_sqft"].to_numpy() - polygons["area_sqft"].to_numpy()
    assert diff.max() <= 0.1
    assert diff.min() >= -3.0
    assert (rows[f"{device_class}_siting_sqft"] < 1.0).tolist() == (
        polygons["outcome"] == "fail"
    ).tolist()


def test_subdivide_keeps_area_and_attributes() -> None:
    from gis_sw.batch.chunks import subdivide

    pond = Point(0, 0).buffer(500, quad_segs=1024)  # 4,097 vertices
    layer = frame([pond, box(2000, 0, 2010, 10)], water_id=["big", "small"])
    pieces = subdivide(layer, max_vertices=256)
    assert len(pieces) > 16
    assert shapely.get_num_coordinates(pieces.geometry.to_numpy()).max() <= 256
    assert pieces["water_id"].tolist() == ["big"] * (len(pieces) - 1) + ["small"]
    assert round(pieces.area.sum(), 2) == round(pond.area + 100, 2)
    assert round(shapely.union_all(pieces.geometry[:-1].to_numpy()).area, 2) == round(pond.area, 2)
