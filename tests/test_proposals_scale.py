"""Huge proposals, small: many proposals at once and one proposal of many small polygons.

The timed versions (20,000 proposals, 100,000 polygons) are in
``benchmarks/bench_big_proposals.py``; these check that the fast paths give the figures the
plain computation gives.
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from click.testing import CliRunner

from gis_sw.analysis.engine import run_rules
from gis_sw.analysis.runoff.cover import CoverLevel, subareas
from gis_sw.analysis.runoff.params import parse_hydrology
from gis_sw.cli import cli
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.outputs.report import CHECK_OUTPUTS
from gis_sw.ruleset import Ruleset

X0, Y0 = 685_000.0, 830_000.0
CRS = "EPSG:2260"


def grid_of_small_boxes(n: int, *, size_ft: float = 4.0, step_ft: float = 6.0) -> np.ndarray:
    """``n`` boxes on a grid 50 wide, every third shifted half a step onto its neighbour."""
    i = np.arange(n)
    shift = np.where(i % 3 == 0, step_ft / 2, 0.0)
    x = X0 + (i % 50) * step_ft + shift
    y = Y0 + (i // 50) * step_ft
    return shapely.box(x, y, x + size_ft, y + size_ft)


def town(width_ft: float, height_ft: float) -> dict[str, gpd.GeoDataFrame]:
    lot = shapely.box(X0 - 10, Y0 - 10, X0 + width_ft, Y0 + height_ft)
    return {
        "parcels": gpd.GeoDataFrame({"parcel_id": ["A"]}, geometry=[lot], crs=CRS),
        "zoning": gpd.GeoDataFrame({"zone": ["R-20"]}, geometry=[lot], crs=CRS),
    }


def test_one_proposal_of_3000_small_polygons(ruleset: Ruleset) -> None:
    boxes = grid_of_small_boxes(3000)
    disturbance = gpd.GeoDataFrame({"proposal_id": ["BIG"] * len(boxes)}, geometry=boxes, crs=CRS)
    layers = make_layerset(CRS, town(320, 380))
    findings = run_rules(layers, make_proposals(CRS, disturbance), ruleset, select=["SW101"])
    expected = float(shapely.union_all(boxes).area)  # the plain union, overlaps counted once
    assert expected < 3000 * 16.0  # the shifted boxes overlap their neighbours
    row = findings[findings["rule_id"] == "SW101"].iloc[0]
    assert row["outcome"] == "required"
    assert float(row["measured"]) == pytest.approx(expected, abs=0.01)


def test_subareas_of_a_many_part_piece_match_the_overlay(ruleset: Ruleset) -> None:
    """Soil-group areas summed part by part equal one overlay of the whole piece."""
    params = parse_hydrology(ruleset)
    piece = shapely.union_all(grid_of_small_boxes(600))
    assert shapely.get_num_geometries(piece) > 64  # the part-by-part path
    # soil B on the west half, C on the east, a strip in the middle mapped twice, a gap
    soils = gpd.GeoDataFrame(
        {"hsg": ["B", "C"]},
        geometry=[
            shapely.box(X0 - 10, Y0 - 10, X0 + 151.5, Y0 + 200),
            shapely.box(X0 + 149.5, Y0 - 10, X0 + 400, Y0 + 40),
        ],
        crs=CRS,
    )
    area = shapely.box(X0 - 10, Y0 - 10, X0 + 400, Y0 + 200)
    cover = params.disturbed_cover
    table = subareas([CoverLevel("disturbed", cover, piece)], soils, area, params)
    assert table["hsg"].tolist().count(None) == 1  # unmapped ground: None, as the sheet reads it
    got = dict(zip(table["hsg"].fillna("none"), table["area_sqft"], strict=True))
    b, c = (shapely.intersection(g, area) for g in soils.geometry)
    assert got["B"] == pytest.approx(shapely.intersection(piece, b).area, abs=0.01)
    assert got["C"] == pytest.approx(shapely.intersection(piece, c).area, abs=0.01)
    left = shapely.difference(piece, shapely.union(b, c)).area
    assert got["none"] == pytest.approx(left, abs=0.01)
    assert left > 1000.0  # the gap north of C's strip is unmapped ground


def test_many_proposals_each_screened_once_and_no_file_per_proposal(
    tmp_path: Path, ruleset: Ruleset
) -> None:
    n = 300
    boxes = grid_of_small_boxes(n, size_ft=12.0, step_ft=20.0)  # 144 sq ft, some overlap
    ids = [f"P-{i:03d}" for i in range(n)]
    disturbance = gpd.GeoDataFrame(
        {"proposal_id": ids, "start_date": ["2026-05-01"] * n, "end_date": ["2026-06-30"] * n},
        geometry=boxes,
        crs=CRS,
    )
    folder = tmp_path / "in"
    folder.mkdir()
    for name, frame in town(1100, 140).items():
        frame.to_file(folder / "town.gpkg", layer=name, engine="pyogrio")
    disturbance.to_file(folder / "proposals.gpkg", layer="disturbance", engine="pyogrio")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli,
        [
            *("check", str(folder / "proposals.gpkg"), "--layers", str(folder / "town.gpkg")),
            *("--out", str(out), "--map", "none", "--fail-on", "never"),
        ],
    )
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(out / "summary.csv", dtype={"subject_id": str})
    sw101 = summary[summary["rule_id"] == "SW101"]
    assert sorted(sw101["subject_id"]) == ids
    assert set(sw101["outcome"]) == {"pass"}  # 144 sq ft < 250 sq ft in R-20
    assert sw101["measured"].round(2).eq(144.0).all()
    # dated proposals, --map none: no timeline (or any other file) per proposal
    assert sorted(p.name for p in out.iterdir()) == sorted([*CHECK_OUTPUTS, "calcsheet.csv"])


def test_runoff_of_a_many_part_proposal_runs_and_sums_to_its_area(ruleset: Ruleset) -> None:
    """SW501 on 900 small polygons, most beyond the lot (a drainage area of many parts), with
    a land cover polygon whose edge runs along some of them (pieces that are collections
    with lines): computed, not a crashed check."""
    boxes = grid_of_small_boxes(900)
    layers = town(150, 130)  # boxes reach x = 300 ft: those east of 150 ft are off the lot
    layers["soils"] = gpd.GeoDataFrame(
        {"hsg": ["B", "C"]},
        geometry=[
            shapely.box(X0 - 10, Y0 - 10, X0 + 151.5, Y0 + 140),
            shapely.box(X0 + 151.5, Y0 - 10, X0 + 320, Y0 + 140),
        ],
        crs=CRS,
    )
    layers["land_cover"] = gpd.GeoDataFrame(  # its west edge is the east edge of boxes at 162
        {"cover": ["woods"]}, geometry=[shapely.box(X0 + 166, Y0 - 10, X0 + 320, Y0 + 140)], crs=CRS
    )
    disturbance = gpd.GeoDataFrame({"proposal_id": ["BIG"] * len(boxes)}, geometry=boxes, crs=CRS)
    findings = run_rules(
        make_layerset(CRS, layers),
        make_proposals(CRS, disturbance),
        ruleset,
        select=["SW501"],
        on_error="raise",
    )
    (message,) = findings.loc[findings["rule_id"] == "SW501", "message"]
    assert message.startswith("TR-55, 25-year")
    drained = shapely.union_all([*boxes, layers["parcels"].geometry.iloc[0]]).area
    assert f"on {drained:,.0f} sq ft" in message


def test_subareas_of_a_collection_with_lines(ruleset: Ruleset) -> None:
    """A cover piece that is a collection (an overlay's by-product lines among its polygons)
    is summed by its polygons: lines have no area."""
    params = parse_hydrology(ruleset)
    polygons = list(shapely.get_parts(shapely.union_all(grid_of_small_boxes(300))))
    line = shapely.LineString([(X0 - 5, Y0 + 1), (X0 + 300, Y0 + 1)])  # crosses both soils
    piece = shapely.GeometryCollection([*polygons, line])
    soils = gpd.GeoDataFrame(
        {"hsg": ["B", "C"]},
        geometry=[
            shapely.box(X0 - 10, Y0 - 10, X0 + 151.5, Y0 + 100),
            shapely.box(X0 + 151.5, Y0 - 10, X0 + 400, Y0 + 100),
        ],
        crs=CRS,
    )
    area = shapely.box(X0 - 10, Y0 - 10, X0 + 400, Y0 + 100)
    table = subareas([CoverLevel("d", params.disturbed_cover, piece)], soils, area, params)
    polygonal = shapely.union_all(polygons)
    assert float(table["area_sqft"].sum()) == pytest.approx(polygonal.area, abs=0.01)
    b = shapely.intersection(polygonal, soils.geometry.iloc[0]).area
    assert float(table.loc[table["hsg"] == "B", "area_sqft"].iloc[0]) == pytest.approx(b, abs=0.01)
