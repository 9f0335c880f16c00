"""Rasters are read windowed to the area the layers need; a window still too large is refused.

A sparse GeoTIFF (tiled, compressed, only the tiles near the town written) can claim a
billion cells in a file of a few kilobytes: read whole it would ask for gigabytes.  The
reader takes only the window over the town's layers grown by the largest distance the
ruleset uses (100 ft for Mount Pleasant), and refuses a window over
:data:`~gis_sw.layers.rasters_io.MAX_RASTER_CELLS` cells naming the file and the size.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import rasterio
from click.testing import CliRunner, Result
from corpus import X0, Y0, manifest, write_town
from pyproj import Transformer
from rasterio.transform import from_origin
from rasterio.windows import Window

from gis_sw.cli import cli
from gis_sw.layers.rasters_io import MAX_RASTER_CELLS, largest_distance_ft
from gis_sw.layers.read import read_layers
from gis_sw.ruleset import Ruleset

# the corpus town's layers span x 0..5100 ft (far wetlands), y 0..100 ft from (X0, Y0)
TOWN = (X0, Y0, X0 + 5100.0, Y0 + 100.0)
REACH_FT = 100.0  # wetland_adjacent_area_ft, with [condition_a] edge_review_ft set to 100 below
_REACH: dict[str, Path] = {}


@pytest.fixture(scope="module", autouse=True)
def reach_ruleset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Mount Pleasant's ruleset with the flow-path reach (500 ft) cut to 100 ft, so the
    windows below are sized by the wetland adjacent area as they were designed."""
    from importlib import resources

    text = resources.files("gis_sw.rulesets").joinpath("mount_pleasant_ny.toml").read_text("utf-8")
    assert "edge_review_ft = 500.0" in text
    path = tmp_path_factory.mktemp("reach") / "reach100.toml"
    path.write_text(text.replace("edge_review_ft = 500.0", "edge_review_ft = 100.0"), "utf-8")
    _REACH["path"] = path
    return path


@pytest.fixture
def ruleset(reach_ruleset: Path) -> Ruleset:
    from gis_sw.ruleset import load_ruleset

    return load_ruleset(reach_ruleset)


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(cli, [*args, "--ruleset", str(_REACH["path"])])


def sparse_dem(
    path: Path,
    *,
    width: int,
    height: int,
    origin: tuple[float, float],
    cell: float,
    crs: str = "EPSG:2260",
    fill: tuple[Window, float] | None = None,
) -> Path:
    """A tiled, compressed, sparse float32 GeoTIFF: only ``fill``'s window is written."""
    with rasterio.open(
        path,
        "w",
        driver="GTiff",
        width=width,
        height=height,
        count=1,
        dtype="float32",
        crs=crs,
        transform=from_origin(*origin, cell, cell),
        nodata=-9999.0,
        tiled=True,
        blockxsize=256,
        blockysize=256,
        compress="deflate",
        sparse_ok=True,
        bigtiff="yes",
    ) as dst:
        if fill is not None:
            window, value = fill
            block = np.full((int(window.height), int(window.width)), value, dtype="float32")
            dst.write(block, 1, window=window)
    return path


def test_the_ruleset_reach_is_its_largest_distance(ruleset: Ruleset) -> None:
    assert largest_distance_ft(ruleset.raw) == REACH_FT
    assert largest_distance_ft({"a": {"x_ft": 3.0, "y": [{"z_ft": -7.5}]}, "n_ft": True}) == 7.5


def test_a_sparse_dem_of_a_billion_cells_is_read_over_the_town_only(
    tmp_path: Path, ruleset: Ruleset
) -> None:
    inputs = write_town(tmp_path)
    # 40,000 x 25,000 cells of 1 ft (1.0e9 cells, 7.5 GiB as float64) with the town inside;
    # the 6,000 x 1,000 cells around it hold 321.5 ft
    origin = (X0 - 10_000.0, Y0 + 10_000.0)
    near = Window(9_500, 9_500, 6_000, 1_000)
    dem = sparse_dem(
        tmp_path / "dem.tif",
        width=40_000,
        height=25_000,
        origin=origin,
        cell=1.0,
        fill=(near, 321.5),
    )
    assert dem.stat().st_size < 2_000_000  # the header claims 4 GB of float32 cells
    layers = manifest(
        tmp_path,
        {
            **{
                k: {"path": "town.gpkg", "layer": k}
                for k in ("parcels", "zoning", "wetlands", "water_bodies", "floodplain")
            },
            "dem": {"path": "dem.tif"},
        },
    )
    town = read_layers(layers, ruleset=ruleset)
    raster = town.raster("dem")
    assert raster is not None
    minx, miny, maxx, maxy = raster.bounds
    need = (TOWN[0] - REACH_FT, TOWN[1] - REACH_FT, TOWN[2] + REACH_FT, TOWN[3] + REACH_FT)
    # the window covers the town and the reach, and at most a few cells more
    assert 0 <= need[0] - minx <= 3
    assert 0 <= need[1] - miny <= 3
    assert 0 <= maxx - need[2] <= 3
    assert 0 <= maxy - need[3] <= 3
    assert raster.values.size < 1_700_000
    got = raster.sample_xy(
        np.array([X0 + 50.0, X0 - 99.0, X0 + 5199.0]), np.array([Y0 + 50.0, Y0 + 199.0, Y0 - 99.0])
    )
    assert got.tolist() == [321.5, 321.5, 321.5]
    report = town.reports["dem"]
    assert report.features == raster.values.size
    assert "read " in " ".join(report.warnings)
    assert "of its 40,000 x 25,000 cells" in " ".join(report.warnings)

    result = invoke(["validate", "--layers", str(layers), "--proposals", str(inputs.proposals)])
    assert result.exit_code == 0, result.output
    assert "dem: ok" in result.output


def test_a_reprojected_sparse_dem_is_windowed_in_its_own_crs(
    tmp_path: Path, ruleset: Ruleset
) -> None:
    write_town(tmp_path)
    to_utm = Transformer.from_crs("EPSG:2260", "EPSG:26918", always_xy=True)
    e0, n0 = to_utm.transform(X0, Y0)
    # 1 m cells, 30,000 x 30,000 (9e8 cells); 3,000 x 1,000 m around the town hold 88.25
    origin = (float(np.floor(e0)) - 10_000.0, float(np.floor(n0)) + 10_000.0)
    dem = sparse_dem(
        tmp_path / "dem.tif",
        width=30_000,
        height=30_000,
        origin=origin,
        cell=1.0,
        crs="EPSG:26918",
        fill=(Window(9_500, 9_500, 3_000, 1_000), 88.25),
    )
    layers = manifest(
        tmp_path,
        {
            "parcels": {"path": "town.gpkg", "layer": "parcels"},
            "zoning": {"path": "town.gpkg", "layer": "zoning"},
            "dem": {"path": dem.name, "units": "ft"},
        },
    )
    town = read_layers(layers, ruleset=ruleset)
    raster = town.raster("dem")
    assert raster is not None
    assert raster.values.size < 200_000  # the 300 x 100 ft parcels and 100 ft around
    got = raster.sample_xy(np.array([X0 + 10.0, X0 + 290.0]), np.array([Y0 + 10.0, Y0 + 90.0]))
    np.testing.assert_allclose(got, [88.25, 88.25], atol=1e-9)
    assert "reprojected from EPSG:26918 (bilinear)." in town.reports["dem"].warnings


def test_a_window_still_too_large_is_refused_naming_the_file_and_size(tmp_path: Path) -> None:
    inputs = write_town(tmp_path)
    # 0.05 ft cells: the 5,300 x 300 ft needed are 106,000 x 6,000 = 636 million cells
    cell = 0.05
    origin = (X0 - 200.0, Y0 + 300.0)
    sparse_dem(tmp_path / "dem.tif", width=110_000, height=10_000, origin=origin, cell=cell)
    layers = manifest(
        tmp_path,
        {
            **{
                k: {"path": "town.gpkg", "layer": k}
                for k in ("parcels", "zoning", "wetlands", "water_bodies", "floodplain")
            },
            "dem": {"path": "dem.tif"},
        },
    )
    result = invoke(["validate", "--layers", str(layers)])  # the whole town's area
    assert result.exit_code == 2, result.output
    text = result.output
    assert str(tmp_path / "dem.tif") in text
    found = re.search(r"is ([\d,]+) x ([\d,]+) = ([\d,]+) cells \(([\d.]+) GiB", text)
    assert found is not None, text
    width, height, cells = (int(found[i].replace(",", "")) for i in (1, 2, 3))
    assert abs(width - 5300 / cell) <= 6
    assert abs(height - 300 / cell) <= 6
    assert cells == width * height > MAX_RASTER_CELLS
    assert float(found[4]) == round(cells * 8 / 2**30, 1)
    assert "gdal_translate -projwin" in text
    # check reads the DEM around the proposals only (gis_sw/dem_reach.py): that window fits,
    # and holds no elevation, which is refused by name all the same
    result = invoke(["check", str(inputs.proposals), "--layers", str(layers), "--map", "none"])
    assert result.exit_code == 2, result.output
    assert f"{tmp_path / 'dem.tif'}: holds no data in the area" in result.stderr


def test_a_whole_raster_over_the_limit_is_refused_when_no_layer_gives_an_area(
    tmp_path: Path, ruleset: Ruleset
) -> None:
    write_town(tmp_path)
    dem = sparse_dem(
        tmp_path / "dem.tif", width=20_000, height=20_000, origin=(X0, Y0 + 20_000.0), cell=1.0
    )
    # the wetlands given as parcels: no parcel_id, so no layer reads and gives an area
    layers = manifest(
        tmp_path,
        {"parcels": {"path": "town.gpkg", "layer": "wetlands"}, "dem": {"path": dem.name}},
    )
    result = invoke(["validate", "--layers", str(layers)])
    assert result.exit_code == 2
    lines = result.output.splitlines()
    at = lines.index("dem: 1 problem(s)")
    assert lines[at + 1] == f"  source:   {dem}"
    assert lines[at + 2].startswith(
        "  - the whole raster is 20,000 x 20,000 = 400,000,000 cells (3.0 GiB as 8-byte values)"
    )


@pytest.mark.parametrize("outside", [True, False], ids=["raster-beside-the-town", "all-nodata"])
def test_a_dem_with_no_data_over_the_town_is_refused(tmp_path: Path, outside: bool) -> None:
    write_town(tmp_path)
    origin = (X0 + 20_000.0, Y0 + 1_000.0) if outside else (X0 - 1_000.0, Y0 + 1_000.0)
    fill = (Window(0, 0, 512, 512), 50.0) if not outside else None
    sparse_dem(tmp_path / "dem.tif", width=8_000, height=3_000, origin=origin, cell=1.0, fill=fill)
    layers = manifest(
        tmp_path,
        {
            "parcels": {"path": "town.gpkg", "layer": "parcels"},
            "zoning": {"path": "town.gpkg", "layer": "zoning"},
            "dem": {"path": "dem.tif"},
        },
    )
    result = invoke(["validate", "--layers", str(layers)])
    assert result.exit_code == 2, result.output
    assert "holds no data in the area the other layers need" in result.output
