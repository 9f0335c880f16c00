"""Validation of town layers: every problem of a layer named once, repairs counted."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import pandas as pd
import pytest
import shapely

from gis_sw.errors import LayerError
from gis_sw.layers.read import inspect_layers, read_layers
from gis_sw.layers.specs import TOWN_LAYERS
from gis_sw.layers.validate import bad_values, check_layer, listing, validate_layer
from gis_sw.ruleset import Ruleset

X0, Y0 = 685_000.0, 830_000.0
CRS_FT = "EPSG:2260"


def town_gpkg(folder: Path, **layers: gpd.GeoDataFrame) -> Path:
    """A GeoPackage with good parcels and zoning, replaced or extended by ``layers``."""
    base = {
        "parcels": gpd.GeoDataFrame(
            {"parcel_id": ["P-1", "P-2"]},
            geometry=[
                shapely.box(X0, Y0, X0 + 100, Y0 + 100),
                shapely.box(X0 + 100, Y0, X0 + 200, Y0 + 100),
            ],
            crs=CRS_FT,
        ),
        "zoning": gpd.GeoDataFrame(
            {"zone": ["R-10"]}, geometry=[shapely.box(X0, Y0, X0 + 200, Y0 + 100)], crs=CRS_FT
        ),
    }
    base.update(layers)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "town.gpkg"
    for name, frame in base.items():
        frame.to_file(path, layer=name, engine="pyogrio")
    return path


BOWTIE = shapely.Polygon([(X0, Y0), (X0 + 100, Y0 + 100), (X0 + 100, Y0), (X0, Y0 + 100)])
"""Self-intersecting: two triangles of 2,500 sq ft each meeting at the centre."""


def test_wrong_geometry_type_names_features(tmp_path: Path, ruleset: Ruleset) -> None:
    wells = gpd.GeoDataFrame(
        {"well_id": ["W-1", "W-2", "W-3"]},
        geometry=[
            shapely.Point(X0 + 10, Y0 + 10),
            shapely.box(X0, Y0, X0 + 5, Y0 + 5),
            shapely.box(X0 + 20, Y0, X0 + 25, Y0 + 5),
        ],
        crs=CRS_FT,
    )
    with pytest.raises(LayerError) as info:
        read_layers(town_gpkg(tmp_path, wells=wells), ruleset=ruleset)
    (problem,) = info.value.problems
    assert problem.layer == f"wells [{tmp_path / 'town.gpkg'}:wells]"
    assert problem.message == ("2 feature(s) are Polygon, not point: well_id W-2, well_id W-3.")
    assert problem.fix == "give wells as MultiPoint or Point geometries."


def test_missing_required_column(tmp_path: Path, ruleset: Ruleset) -> None:
    zoning = gpd.GeoDataFrame(
        {"ZONE_TYPE": ["R-10"], "NOTE": ["x"]},
        geometry=[shapely.box(X0, Y0, X0 + 200, Y0 + 100)],
        crs=CRS_FT,
    )
    with pytest.raises(LayerError) as info:
        read_layers(town_gpkg(tmp_path, zoning=zoning), ruleset=ruleset)
    (problem,) = info.value.problems
    assert problem.message == (
        "required column 'zone' is missing (columns present: ZONE_TYPE, NOTE)."
    )
    assert 'columns = { zone = "YOUR_COLUMN" }' in problem.fix


def test_column_mapping(tmp_path: Path, ruleset: Ruleset) -> None:
    zoning = gpd.GeoDataFrame(
        {"ZONE_TYPE": ["R-10", "R-20"], "zone": ["old", "old"]},
        geometry=[
            shapely.box(X0, Y0, X0 + 100, Y0 + 100),
            shapely.box(X0 + 100, Y0, X0 + 200, Y0 + 100),
        ],
        crs=CRS_FT,
    )
    gpkg = town_gpkg(tmp_path, zoning=zoning)
    manifest = tmp_path / "layers.toml"
    manifest.write_text(
        '[parcels]\npath = "town.gpkg"\nlayer = "parcels"\n\n'
        '[zoning]\npath = "town.gpkg"\nlayer = "zoning"\ncolumns = { zone = "ZONE_TYPE" }\n',
        encoding="utf-8",
    )
    layers = read_layers(manifest, ruleset=ruleset)
    assert layers.get("zoning")["zone"].tolist() == ["R-10", "R-20"]
    assert gpkg.exists()
    manifest.write_text(
        '[parcels]\npath = "town.gpkg"\nlayer = "parcels"\n\n'
        '[zoning]\npath = "town.gpkg"\nlayer = "zoning"\ncolumns = { zone = "ZONING" }\n',
        encoding="utf-8",
    )
    with pytest.raises(
        LayerError, match=r"the source has no column 'ZONING' \(it has ZONE_TYPE, zone\)"
    ):
        read_layers(manifest, ruleset=ruleset)
    manifest.write_text(
        '[parcels]\npath = "town.gpkg"\nlayer = "parcels"\n\n'
        '[zoning]\npath = "town.gpkg"\nlayer = "zoning"\ncolumns = { zones = "ZONE_TYPE" }\n',
        encoding="utf-8",
    )
    with pytest.raises(LayerError) as info:
        read_layers(manifest, ruleset=ruleset)
    messages = [p.message for p in info.value.problems]
    assert messages[0] == (
        "column mapping zones = 'ZONE_TYPE': 'zones' is not a column of zoning (its columns: zone)."
    )


def test_invalid_geometries_repaired_and_counted(tmp_path: Path, ruleset: Ruleset) -> None:
    parcels = gpd.GeoDataFrame(
        {"parcel_id": ["P-1", "P-2", "P-3"]},
        geometry=[
            shapely.box(X0 - 200, Y0, X0 - 100, Y0 + 100),
            BOWTIE,
            shapely.Polygon(
                [
                    (X0 + 200, Y0),
                    (X0 + 300, Y0),
                    (X0 + 300, Y0 + 100),
                    (X0 + 200, Y0 + 100),
                    (X0 + 200, Y0),
                    (X0 + 250, Y0 + 50),
                    (X0 + 200, Y0),
                ]
            ),
        ],
        crs=CRS_FT,
    )
    gpkg = town_gpkg(tmp_path, parcels=parcels)
    layers = read_layers(gpkg, ruleset=ruleset)
    report = layers.reports["parcels"]
    assert report.repaired_ids == ("parcel_id P-2", "parcel_id P-3")
    assert "2 invalid geometries repaired (make_valid)." in report.warnings
    read = layers.get("parcels").set_index("parcel_id")
    assert shapely.is_valid(read.geometry.values).all()
    assert read.geometry["P-2"].geom_type == "MultiPolygon"
    assert round(read.area["P-2"], 2) == 5_000.00
    assert set(read.geom_type) <= {"Polygon", "MultiPolygon"}

    with pytest.raises(LayerError) as info:
        read_layers(gpkg, ruleset=ruleset, strict=True)
    (problem,) = info.value.problems
    assert problem.message.startswith("2 invalid geometr(ies): parcel_id P-2 (Self-intersection")
    assert "without --strict" in problem.fix


def test_duplicate_ids_null_geometry_and_empty_values(tmp_path: Path, ruleset: Ruleset) -> None:
    parcels = gpd.GeoDataFrame(
        {"parcel_id": ["P-1", "P-1", "P-2", None, "P-1"]},
        geometry=[
            shapely.box(X0, Y0, X0 + 10, Y0 + 10),
            shapely.box(X0 + 10, Y0, X0 + 20, Y0 + 10),
            None,
            shapely.box(X0 + 30, Y0, X0 + 40, Y0 + 10),
            shapely.box(X0 + 40, Y0, X0 + 50, Y0 + 10),
        ],
        crs=CRS_FT,
    )
    with pytest.raises(LayerError) as info:
        read_layers(town_gpkg(tmp_path, parcels=parcels), ruleset=ruleset)
    messages = [p.message for p in info.value.problems]
    assert messages == [
        "1 feature(s) have no geometry: parcel_id P-2.",
        "duplicate parcel_id: 'P-1' (3 times).",
        "required column 'parcel_id' is empty for 1 feature(s): row 4.",
    ]


def test_every_layer_reported_in_one_error(tmp_path: Path, ruleset: Ruleset) -> None:
    parcels = gpd.GeoDataFrame(
        {"parcel_id": ["P-1", "P-1"]},
        geometry=[shapely.box(X0, Y0, X0 + 10, Y0 + 10), shapely.box(X0, Y0, X0 + 10, Y0 + 10)],
        crs=CRS_FT,
    )
    zoning = gpd.GeoDataFrame({"zone": pd.Series([], dtype=str)}, geometry=[], crs=CRS_FT)
    buildings = gpd.GeoDataFrame(
        {"building_id": ["B-1", "B-2"], "habitable_basement": ["yes", "maybe"]},
        geometry=[shapely.box(X0, Y0, X0 + 10, Y0 + 10), shapely.box(X0, Y0, X0 + 20, Y0 + 20)],
        crs=CRS_FT,
    )
    gpkg = town_gpkg(tmp_path, parcels=parcels, zoning=zoning, buildings=buildings)
    inspection = inspect_layers(gpkg, ruleset=ruleset)
    assert sorted(inspection.problems) == ["buildings", "parcels", "zoning"]
    assert inspection.problems["zoning"][0].message == "has no features."
    assert inspection.problems["buildings"][0].message == (
        "column 'habitable_basement' has values that are not yes/no: building_id B-2 = 'maybe'."
    )
    with pytest.raises(LayerError) as info:
        read_layers(gpkg, ruleset=ruleset)
    assert len(info.value.problems) == 3


def test_empty_optional_layer_is_refused_and_bools_parse(tmp_path: Path, ruleset: Ruleset) -> None:
    # an empty wells export would let the well rules pass on no data: it must be declared
    # none instead (tests/test_lead_empty_layers.py covers windows, where and skip)
    wells = gpd.GeoDataFrame({"well_id": pd.Series([], dtype=str)}, geometry=[], crs=CRS_FT)
    buildings = gpd.GeoDataFrame(
        {"building_id": [101, 102, 103], "habitable_basement": ["Y", "n", None]},
        geometry=[shapely.box(X0, Y0, X0 + 10, Y0 + 10)] * 3,
        crs=CRS_FT,
    )
    with pytest.raises(LayerError, match=r"wells .* has no features, so the rules"):
        read_layers(town_gpkg(tmp_path / "a", wells=wells, buildings=buildings), ruleset=ruleset)
    layers = read_layers(town_gpkg(tmp_path / "b", buildings=buildings), ruleset=ruleset)
    read = layers.get("buildings")
    assert read["building_id"].tolist() == ["101", "102", "103"]
    assert read["habitable_basement"].tolist() == [True, False, pd.NA]


def test_z_values_dropped(tmp_path: Path, ruleset: Ruleset) -> None:
    wells = gpd.GeoDataFrame(
        {"well_id": ["W-1"]}, geometry=[shapely.Point(X0, Y0, 312.5)], crs=CRS_FT
    )
    layers = read_layers(town_gpkg(tmp_path, wells=wells), ruleset=ruleset)
    geom = layers.get("wells").geometry.iloc[0]
    assert not geom.has_z
    assert (geom.x, geom.y) == (X0, Y0)
    assert "Z/M values dropped (2-D geometry is used)." in layers.reports["wells"].warnings


def test_validate_layer_in_memory_force_2d_and_float_ids() -> None:
    frame = gpd.GeoDataFrame(
        {"septic_id": [7.0, 8.0]},
        geometry=[
            shapely.Polygon([(0, 0, 1), (10, 0, 1), (10, 10, 1)]),
            shapely.box(20, 0, 30, 10),
        ],
        crs=CRS_FT,
    )
    validated = check_layer(frame, TOWN_LAYERS["septic_fields"])
    assert validated.frame["septic_id"].tolist() == ["7", "8"]
    assert not validated.frame.geometry.has_z.any()
    assert validated.warnings == ("Z/M values dropped (2-D geometry is used).",)
    _, problems = validate_layer(frame.iloc[:0], TOWN_LAYERS["parcels"])
    assert [p.message for p in problems] == [
        "required column 'parcel_id' is missing (columns present: septic_id).",
        "has no features.",
    ]


@pytest.mark.parametrize(
    ("kind", "values", "bad"),
    [
        pytest.param("bool", ["yes", "N", 1, 0.0, None, "", "maybe", 2], [6, 7], id="yes-no"),
        pytest.param(
            "date", ["2026-05-01", "2026-13-01", "05/01/2026", None], [1, 2], id="iso-dates"
        ),
        pytest.param("float", ["12.5", 3, "about 4", None], [2], id="numbers"),
        pytest.param("int", ["12", 3.0, 4.5, None], [2], id="whole-numbers"),
    ],
)
def test_bad_values(kind: str, values: list[object], bad: list[int]) -> None:
    mask = bad_values(pd.Series(values, dtype=object), kind)
    assert [i for i, flag in enumerate(mask) if flag] == bad


def test_listing_caps_at_ten() -> None:
    assert listing(range(3)) == "0, 1, 2"
    assert listing(range(10)) == "0, 1, 2, 3, 4, 5, 6, 7, 8, 9"
    assert listing(range(12)) == "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 2 more"
