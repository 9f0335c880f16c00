"""GeoTIFF rasters: reprojection from a metre CRS, value units, nodata, depth/elevation mode."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
import shapely
from pyproj import Transformer
from rasterio.transform import from_origin

from gis_sw.errors import LayerError
from gis_sw.layers.raster import RasterMode
from gis_sw.layers.read import read_layers
from gis_sw.ruleset import Ruleset

X0, Y0 = 685_000.0, 830_000.0
FT_US_PER_M = 3937.0 / 1200.0


def write_tif(
    path: Path,
    values: np.ndarray,
    *,
    crs: str | None,
    transform: rasterio.Affine,
    nodata: float | None = -9999.0,
    tags: dict[str, str] | None = None,
) -> Path:
    with rasterio.open(
        path,
        "w",
        driver="GTiff",
        width=values.shape[1],
        height=values.shape[0],
        count=1,
        dtype="float32",
        crs=crs,
        transform=transform,
        nodata=nodata,
    ) as dst:
        dst.write(values.astype("float32"), 1)
        if tags:
            dst.update_tags(**tags)
    return path


def town(folder: Path) -> Path:
    gpkg = folder / "town.gpkg"
    gpd.GeoDataFrame(
        {"parcel_id": ["P-1"]}, geometry=[shapely.box(X0, Y0, X0 + 100, Y0 + 100)], crs="EPSG:2260"
    ).to_file(gpkg, layer="parcels", engine="pyogrio")
    gpd.GeoDataFrame(
        {"zone": ["R-10"]}, geometry=[shapely.box(X0, Y0, X0 + 100, Y0 + 100)], crs="EPSG:2260"
    ).to_file(gpkg, layer="zoning", engine="pyogrio")
    return gpkg


def test_geotiffs_beside_geopackage_with_mode_tags(tmp_path: Path, ruleset: Ruleset) -> None:
    gpkg = town(tmp_path)
    grid = np.array([[310.0, 311.0, 312.0], [313.0, -9999.0, 315.0]])
    transform = from_origin(X0, Y0 + 100, 50, 50)
    write_tif(tmp_path / "dem.tif", grid, crs="EPSG:2260", transform=transform)
    write_tif(
        tmp_path / "seasonal_high_groundwater.tif",
        np.full((2, 3), 6.5),
        crs="EPSG:2260",
        transform=transform,
        tags={"GIS_SW_MODE": "depth"},
    )
    write_tif(
        tmp_path / "bedrock.tif",
        np.full((2, 3), 290.0),
        crs="EPSG:2260",
        transform=transform,
        tags={"GIS_SW_MODE": "elevation"},
    )
    layers = read_layers(gpkg, ruleset=ruleset)
    dem = layers.raster("dem")
    assert dem is not None
    assert dem.mode is RasterMode.ELEVATION
    assert dem.values[0].tolist() == [310.0, 311.0, 312.0]
    assert np.isnan(dem.values[1, 1])
    assert (
        dem.sample_xy(np.array([X0 + 25.0, X0 + 75.0]), np.array([Y0 + 75.0, Y0 + 25.0])).tolist()[
            0
        ]
        == 310.0
    )
    assert np.isnan(dem.sample_xy(np.array([X0 + 75.0]), np.array([Y0 + 25.0]))[0])
    assert dem.bounds == (X0, Y0, X0 + 150, Y0 + 100)
    assert layers.raster("seasonal_high_groundwater").mode is RasterMode.DEPTH
    assert layers.raster("bedrock").mode is RasterMode.ELEVATION
    assert layers.reports["dem"].features == 6
    assert layers.missing == tuple(
        k for k in layers.missing if k not in ("dem", "seasonal_high_groundwater", "bedrock")
    )


def test_raster_in_metres_crs_reprojected_and_converted(tmp_path: Path, ruleset: Ruleset) -> None:
    """A UTM 18N (metres) groundwater-elevation grid whose value rises 0.1 m per metre east.

    Bilinear resampling of a plane is exact, so every reprojected cell equals the plane at the
    cell centre's UTM easting, converted from metres to US survey feet.
    """
    to_utm = Transformer.from_crs("EPSG:2260", "EPSG:26918", always_xy=True)
    e0, n0 = to_utm.transform(X0, Y0)
    e0, n0 = float(np.floor(e0)) - 100.0, float(np.floor(n0)) + 200.0
    cols, rows, cell_m = 40, 40, 10.0
    east = e0 + (np.arange(cols) + 0.5) * cell_m
    grid = np.tile(50.0 + 0.1 * (east - e0), (rows, 1))
    tif = write_tif(
        tmp_path / "shgw_utm.tif",
        grid,
        crs="EPSG:26918",
        transform=from_origin(e0, n0, cell_m, cell_m),
        nodata=None,
    )
    gpkg = town(tmp_path)
    manifest = tmp_path / "layers.toml"
    manifest.write_text(
        f'[parcels]\npath = "{gpkg.name}"\nlayer = "parcels"\n\n'
        f'[zoning]\npath = "{gpkg.name}"\nlayer = "zoning"\n\n'
        f'[seasonal_high_groundwater]\npath = "{tif.name}"\nmode = "elevation"\nunits = "m"\n',
        encoding="utf-8",
    )
    layers = read_layers(manifest, ruleset=ruleset)
    shgw = layers.raster("seasonal_high_groundwater")
    assert shgw is not None
    assert shgw.mode is RasterMode.ELEVATION
    # Cell size kept near 10 m = 32.81 ftUS.
    assert shgw.cell_size[0] == pytest.approx(10.0 * FT_US_PER_M, rel=0.01)
    # Sample inside the area read: the parcel and the 100 ft the rules reach around it.
    xs = np.array([X0 - 90.0, X0 + 50.0, X0 + 190.0])
    ys = np.array([Y0 + 190.0, Y0 + 50.0, Y0 - 90.0])
    inv = ~shgw.transform
    cols_f, rows_f = inv @ (xs, ys)
    centre_x, centre_y = shgw.transform @ (np.floor(cols_f) + 0.5, np.floor(rows_f) + 0.5)
    east_m, _ = to_utm.transform(centre_x, centre_y)
    expected_ft = (50.0 + 0.1 * (np.asarray(east_m) - e0)) * FT_US_PER_M
    got = shgw.sample_xy(xs, ys)
    np.testing.assert_allclose(got, expected_ft, atol=0.01)
    report = layers.reports["seasonal_high_groundwater"]
    assert report.source_crs == "EPSG:26918"
    assert report.units == "metre"
    assert "reprojected from EPSG:26918 (bilinear)." in report.warnings


def test_groundwater_without_mode_is_refused(tmp_path: Path, ruleset: Ruleset) -> None:
    gpkg = town(tmp_path)
    write_tif(
        tmp_path / "seasonal_high_groundwater.tif",
        np.full((2, 2), 5.0),
        crs="EPSG:2260",
        transform=from_origin(X0, Y0 + 100, 50, 50),
    )
    with pytest.raises(LayerError) as info:
        read_layers(gpkg, ruleset=ruleset)
    (problem,) = info.value.problems
    assert problem.message == (
        "does not say whether its values are depths below ground or elevations."
    )
    assert 'mode = "depth"' in problem.fix


def test_raster_without_crs_and_all_nodata(tmp_path: Path, ruleset: Ruleset) -> None:
    gpkg = town(tmp_path)
    write_tif(
        tmp_path / "dem.tif",
        np.full((2, 2), 100.0),
        crs=None,
        transform=from_origin(X0, Y0 + 100, 50, 50),
    )
    write_tif(
        tmp_path / "bedrock.tif",
        np.full((2, 2), -9999.0),
        crs="EPSG:2260",
        transform=from_origin(X0, Y0 + 100, 50, 50),
        tags={"GIS_SW_MODE": "depth"},
    )
    with pytest.raises(LayerError) as info:
        read_layers(gpkg, ruleset=ruleset)
    text = str(info.value)
    assert "dem.tif has no CRS" in text
    assert "bedrock.tif: holds no data (every cell is nodata)." in text


def test_manifest_crs_for_raster_without_one(tmp_path: Path, ruleset: Ruleset) -> None:
    gpkg = town(tmp_path)
    write_tif(
        tmp_path / "dem.tif",
        np.array([[100.0, 101.0]]),
        crs=None,
        transform=from_origin(X0, Y0 + 50, 50, 50),
    )
    manifest = tmp_path / "layers.toml"
    manifest.write_text(
        f'[manifest]\ncrs = "EPSG:2260"\n\n[parcels]\npath = "{gpkg.name}"\nlayer = "parcels"\n\n'
        f'[zoning]\npath = "{gpkg.name}"\nlayer = "zoning"\n\n[dem]\npath = "dem.tif"\n',
        encoding="utf-8",
    )
    dem = read_layers(manifest, ruleset=ruleset).raster("dem")
    assert dem is not None
    assert dem.values.tolist() == [[100.0, 101.0]]
    assert dem.bounds == (X0, Y0, X0 + 100, Y0 + 50)
