"""Every vector format round-tripped through the layer readers, and reprojection.

Each test writes its own files into tmp_path: two parcels of 100 x 100 ft and 150 x 100 ft
and one zoning polygon in Mount Pleasant (EPSG:2260 coordinates near 685,000 / 830,000).
"""

from __future__ import annotations

import json
from pathlib import Path

import geopandas as gpd
import numpy as np
import pyogrio
import pytest
import shapely
from pyproj import CRS, Geod, Transformer

from gis_sw.errors import LayerError
from gis_sw.layers.read import read_layers
from gis_sw.ruleset import Ruleset

X0, Y0 = 685_000.0, 830_000.0
M_PER_FTUS = 1200.0 / 3937.0

# Test files without a CRS are written on purpose.
pytestmark = pytest.mark.filterwarnings("ignore:'crs' was not provided:UserWarning")


def parcels_frame(crs: str | None = "EPSG:2260") -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(
        {"parcel_id": ["P-1", "P-2"], "owner": ["Ames", "Burr"]},
        geometry=[
            shapely.box(X0, Y0, X0 + 100, Y0 + 100),
            shapely.box(X0 + 100, Y0, X0 + 250, Y0 + 100),
        ],
        crs=crs,
    )


def zoning_frame(crs: str | None = "EPSG:2260", zone_column: str = "zone") -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(
        {zone_column: ["R-10"]}, geometry=[shapely.box(X0, Y0, X0 + 250, Y0 + 100)], crs=crs
    )


def write_manifest(folder: Path, text: str) -> Path:
    path = folder / "layers.toml"
    path.write_text(text, encoding="utf-8")
    return path


def assert_town(layers, ruleset: Ruleset) -> None:
    parcels = layers.get("parcels").sort_values("parcel_id")  # FlatGeobuf reorders features
    assert CRS(parcels.crs).equals(ruleset.working_crs)
    assert list(parcels["parcel_id"]) == ["P-1", "P-2"]
    assert parcels.area.round(0).tolist() == [10_000.0, 15_000.0]
    zoning = layers.get("zoning")
    assert zoning["zone"].tolist() == ["R-10"]
    assert round(float(zoning.area.iloc[0])) == 25_000
    np.testing.assert_allclose(parcels.total_bounds, [X0, Y0, X0 + 250, Y0 + 100], atol=0.005)


def test_geopackage_source(tmp_path: Path, ruleset: Ruleset) -> None:
    gpkg = tmp_path / "town.gpkg"
    parcels_frame().to_file(gpkg, layer="parcels", engine="pyogrio")
    zoning_frame().to_file(gpkg, layer="zoning", engine="pyogrio")
    zoning_frame().to_file(gpkg, layer="roads", engine="pyogrio")
    layers = read_layers(gpkg, ruleset=ruleset)
    assert_town(layers, ruleset)
    assert "wetlands" in layers.missing
    assert "roads" not in layers.vectors
    assert layers.reports["parcels"].features == 2
    assert layers.reports["parcels"].units == "US survey foot"


@pytest.mark.parametrize(
    ("suffix", "driver"),
    [
        pytest.param(".shp", "ESRI Shapefile", id="shapefile"),
        pytest.param(".geojson", "GeoJSON", id="geojson"),
        pytest.param(".fgb", "FlatGeobuf", id="flatgeobuf"),
    ],
)
def test_single_layer_formats(tmp_path: Path, ruleset: Ruleset, suffix: str, driver: str) -> None:
    for name, frame in (("parcels", parcels_frame()), ("zoning", zoning_frame())):
        pyogrio.write_dataframe(frame, tmp_path / f"{name}{suffix}", driver=driver)
    manifest = write_manifest(
        tmp_path,
        f'[parcels]\npath = "parcels{suffix}"\n\n[zoning]\npath = "zoning{suffix}"\n',
    )
    layers = read_layers(manifest, ruleset=ruleset)
    assert_town(layers, ruleset)


def test_file_geodatabase(tmp_path: Path, ruleset: Ruleset) -> None:
    gdb = tmp_path / "town.gdb"
    pyogrio.write_dataframe(parcels_frame(), gdb, layer="Parcels", driver="OpenFileGDB")
    pyogrio.write_dataframe(zoning_frame(), gdb, layer="Zoning", driver="OpenFileGDB")
    manifest = write_manifest(
        tmp_path,
        '[parcels]\npath = "town.gdb"\nlayer = "Parcels"\n\n'
        '[zoning]\npath = "town.gdb"\nlayer = "Zoning"\n',
    )
    assert_town(read_layers(manifest, ruleset=ruleset), ruleset)


def test_multilayer_file_needs_a_layer_name(tmp_path: Path, ruleset: Ruleset) -> None:
    gdb = tmp_path / "town.gdb"
    pyogrio.write_dataframe(parcels_frame(), gdb, layer="Parcels", driver="OpenFileGDB")
    pyogrio.write_dataframe(zoning_frame(), gdb, layer="Zoning", driver="OpenFileGDB")
    manifest = write_manifest(
        tmp_path,
        '[parcels]\npath = "town.gdb"\n\n[zoning]\npath = "town.gdb"\nlayer = "Zones"\n',
    )
    with pytest.raises(LayerError) as info:
        read_layers(manifest, ruleset=ruleset)
    text = str(info.value)
    assert "holds several layers (Parcels, Zoning)" in text
    assert "has no layer 'Zones' (it has Parcels, Zoning)" in text


def test_geoparquet(tmp_path: Path, ruleset: Ruleset) -> None:
    parcels_frame().to_parquet(tmp_path / "parcels.parquet")
    zoning_frame().to_parquet(tmp_path / "zoning.parquet")
    manifest = write_manifest(
        tmp_path, '[parcels]\npath = "parcels.parquet"\n\n[zoning]\npath = "zoning.parquet"\n'
    )
    assert_town(read_layers(manifest, ruleset=ruleset), ruleset)


def test_topojson_with_manifest_crs(tmp_path: Path, ruleset: Ruleset) -> None:
    """TopoJSON carries no CRS: the manifest's crs says its arcs are EPSG:2260 feet."""
    topology = {
        "type": "Topology",
        "objects": {
            "zoning": {
                "type": "GeometryCollection",
                "geometries": [{"type": "Polygon", "arcs": [[0]], "properties": {"zone": "R-10"}}],
            }
        },
        "arcs": [[[X0, Y0], [X0 + 250, Y0], [X0 + 250, Y0 + 100], [X0, Y0 + 100], [X0, Y0]]],
    }
    (tmp_path / "zoning.topojson").write_text(json.dumps(topology), encoding="utf-8")
    parcels_frame().to_file(tmp_path / "parcels.gpkg", engine="pyogrio")
    manifest = write_manifest(
        tmp_path,
        '[parcels]\npath = "parcels.gpkg"\n\n'
        '[zoning]\npath = "zoning.topojson"\ncrs = "EPSG:2260"\n',
    )
    assert_town(read_layers(manifest, ruleset=ruleset), ruleset)


def test_dxf_closed_polylines_with_explicit_crs(tmp_path: Path, ruleset: Ruleset) -> None:
    rings = gpd.GeoDataFrame(geometry=[g.exterior for g in parcels_frame().geometry], crs=None)
    pyogrio.write_dataframe(rings, tmp_path / "parcels.dxf", driver="DXF")
    zoning_frame().to_file(tmp_path / "zoning.gpkg", engine="pyogrio")
    base = '[zoning]\npath = "zoning.gpkg"\n\n[parcels]\npath = "parcels.dxf"\n'
    with pytest.raises(LayerError, match=r"parcels\.dxf has no CRS\. Fix: give the CRS"):
        read_layers(write_manifest(tmp_path, base), ruleset=ruleset)
    # A DXF has no attributes of ours: parcel_id must come from somewhere; map EntityHandle.
    manifest = write_manifest(
        tmp_path, base + 'crs = "EPSG:2260"\ncolumns = { parcel_id = "EntityHandle" }\n'
    )
    layers = read_layers(manifest, ruleset=ruleset)
    parcels = layers.get("parcels")
    assert sorted(parcels.geom_type) == ["Polygon", "Polygon"]
    assert sorted(parcels.area.round(2)) == [10_000.0, 15_000.0]
    assert parcels["parcel_id"].notna().all()


def test_reprojection_from_wgs84_geojson_keeps_areas(tmp_path: Path, ruleset: Ruleset) -> None:
    to_wgs84 = Transformer.from_crs("EPSG:2260", "EPSG:4326", always_xy=True)
    parcels = parcels_frame()
    dense = shapely.segmentize(np.asarray(parcels.geometry.values), 10.0)
    wgs84 = gpd.GeoDataFrame(
        parcels.drop(columns="geometry"),
        geometry=shapely.transform(dense, lambda xy: np.column_stack(to_wgs84.transform(*xy.T))),
        crs="EPSG:4326",
    )
    wgs84.to_file(tmp_path / "parcels.geojson", driver="GeoJSON", engine="pyogrio")
    zoning_frame().to_file(tmp_path / "zoning.gpkg", engine="pyogrio")
    manifest = write_manifest(
        tmp_path, '[parcels]\npath = "parcels.geojson"\n\n[zoning]\npath = "zoning.gpkg"\n'
    )
    layers = read_layers(manifest, ruleset=ruleset)
    got = layers.get("parcels").sort_values("parcel_id").area.to_numpy()
    np.testing.assert_allclose(got, [10_000.0, 15_000.0], rtol=0.001)
    # Independently of the projection: the ellipsoidal area of the WGS 84 polygons.
    geod = Geod(ellps="GRS80")
    geodesic_sqft = [
        abs(geod.geometry_area_perimeter(g)[0]) / M_PER_FTUS**2 for g in wgs84.geometry
    ]
    np.testing.assert_allclose(got, geodesic_sqft, rtol=0.001)
    report = layers.reports["parcels"]
    assert report.source_crs == "EPSG:4326"
    assert report.units == "degree"


def test_layer_without_crs_is_an_error_naming_file_and_fix(
    tmp_path: Path, ruleset: Ruleset
) -> None:
    pyogrio.write_dataframe(parcels_frame(crs=None), tmp_path / "parcels.shp")
    zoning_frame().to_file(tmp_path / "zoning.gpkg", engine="pyogrio")
    text = '[parcels]\npath = "parcels.shp"\n\n[zoning]\npath = "zoning.gpkg"\n'
    with pytest.raises(LayerError) as info:
        read_layers(write_manifest(tmp_path, text), ruleset=ruleset)
    message = str(info.value)
    assert "parcels.shp has no CRS" in message
    assert 'crs = "EPSG:' in message


def test_manifest_crs_applies_to_file_without_one(tmp_path: Path, ruleset: Ruleset) -> None:
    """Coordinates in NY Long Island (EPSG:2263) given by the manifest are reprojected."""
    to_2263 = Transformer.from_crs("EPSG:2260", "EPSG:2263", always_xy=True)
    parcels = parcels_frame()
    moved = shapely.transform(
        np.asarray(parcels.geometry.values), lambda xy: np.column_stack(to_2263.transform(*xy.T))
    )
    pyogrio.write_dataframe(
        gpd.GeoDataFrame(parcels.drop(columns="geometry"), geometry=moved, crs=None),
        tmp_path / "parcels.shp",
    )
    zoning_frame().to_file(tmp_path / "zoning.gpkg", engine="pyogrio")
    text = (
        '[manifest]\ncrs = "EPSG:2263"\n\n[parcels]\npath = "parcels.shp"\n\n'
        '[zoning]\npath = "zoning.gpkg"\n'
    )
    layers = read_layers(write_manifest(tmp_path, text), ruleset=ruleset)
    parcels_read = layers.get("parcels")
    np.testing.assert_allclose(parcels_read.total_bounds, [X0, Y0, X0 + 250, Y0 + 100], atol=0.01)
    assert layers.reports["parcels"].source_crs == "EPSG:2263"
    assert layers.reports["zoning"].source_crs == "EPSG:2260"


def test_file_crs_wins_over_manifest_crs(tmp_path: Path, ruleset: Ruleset) -> None:
    # [manifest] crs fills in for files without one; a layer's own crs overrides the file's
    # (issue 12, tests/test_realdata_layers.py)
    parcels_frame().to_file(tmp_path / "parcels.gpkg", engine="pyogrio")
    zoning_frame().to_file(tmp_path / "zoning.gpkg", engine="pyogrio")
    text = (
        '[manifest]\ncrs = "EPSG:2263"\n\n[parcels]\npath = "parcels.gpkg"\n\n'
        '[zoning]\npath = "zoning.gpkg"\n'
    )
    layers = read_layers(write_manifest(tmp_path, text), ruleset=ruleset)
    assert layers.get("parcels").area.round(0).tolist() == [10_000.0, 15_000.0]
    assert any("file's own CRS EPSG:2260" in w for w in layers.reports["parcels"].warnings)


def test_folder_with_manifest_and_bad_manifest(tmp_path: Path, ruleset: Ruleset) -> None:
    parcels_frame().to_file(tmp_path / "parcels.gpkg", engine="pyogrio")
    zoning_frame().to_file(tmp_path / "zoning.gpkg", engine="pyogrio")
    write_manifest(tmp_path, '[parcels]\npath = "parcels.gpkg"\n\n[zoning]\npath = "zoning.gpkg"\n')
    assert_town(read_layers(tmp_path, ruleset=ruleset), ruleset)
    write_manifest(
        tmp_path,
        '[manifest]\ncrs = "EPSG:99999999"\n\n[parcel]\npath = "parcels.gpkg"\n\n'
        '[zoning]\npath = "zonig.gpkg"\nunits = "m"\n',
    )
    with pytest.raises(LayerError) as info:
        read_layers(tmp_path, ruleset=ruleset)
    problems = [p.message for p in info.value.problems]
    assert len(problems) == 4
    assert any("'EPSG:99999999' is not a CRS" in p for p in problems)
    assert any("'parcel' is not a layer kind" in p for p in problems)
    assert any("zonig.gpkg does not exist" in p for p in problems)
    assert any("units applies to rasters only" in p for p in problems)


def test_required_layer_not_provided(tmp_path: Path, ruleset: Ruleset) -> None:
    gpkg = tmp_path / "town.gpkg"
    parcels_frame().to_file(gpkg, layer="parcels", engine="pyogrio")
    with pytest.raises(LayerError, match=r"zoning: required layer is not provided"):
        read_layers(gpkg, ruleset=ruleset)


def test_missing_source_and_unknown_suffix(tmp_path: Path, ruleset: Ruleset) -> None:
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        read_layers(tmp_path / "nowhere.gpkg", ruleset=ruleset)
    (tmp_path / "town.csv").write_text("a\n1\n", encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="not a layers source"):
        read_layers(tmp_path / "town.csv", ruleset=ruleset)


def test_coordinates_that_do_not_fit_the_crs_are_refused(tmp_path: Path, ruleset: Ruleset) -> None:
    """Feet given as degrees: a latitude of 830,000 cannot be reprojected."""
    pyogrio.write_dataframe(parcels_frame(crs=None), tmp_path / "parcels.shp")
    zoning_frame().to_file(tmp_path / "zoning.gpkg", engine="pyogrio")
    text = '[parcels]\npath = "parcels.shp"\ncrs = "EPSG:4326"\n\n[zoning]\npath = "zoning.gpkg"\n'
    with pytest.raises(LayerError) as info:
        read_layers(write_manifest(tmp_path, text), ruleset=ruleset)
    assert "parcels.shp" in str(info.value)
    assert "EPSG:4326" in str(info.value)


def test_manifest_labels_never_show_a_password(tmp_path: Path) -> None:
    from gis_sw.layers.manifest import load_manifest

    path = write_manifest(
        tmp_path,
        '[parcels]\npostgis = "postgresql://gis:s3cret@db.town.local:5432/town"\n'
        'table = "parcels"\n\n[zoning]\npostgis = "host=db dbname=town password=s3cret"\n'
        'query = "SELECT * FROM zoning"\n\n[dem]\npath = "layers.toml"\nmode = "depth"\n',
    )
    with pytest.raises(LayerError, match=r"\[dem\]: a DEM holds ground elevations\."):
        load_manifest(path)
    path.write_text(path.read_text().replace('mode = "depth"', 'mode = "elevation"'))
    entries = load_manifest(path).entries
    assert entries["parcels"].label == "postgis:postgresql://gis@db.town.local:5432/town:parcels"
    assert entries["zoning"].label == "postgis:host=db dbname=town:query"
    assert entries["dem"].mode is not None
    assert entries["dem"].mode.value == "elevation"
