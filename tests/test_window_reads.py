"""Reading a town only around the proposals gives the findings of the whole town.

``gis_sw.read_town(..., around=proposals)`` reads each GeoPackage layer through its R-tree
within the proposals' reach (:mod:`gis_sw.around`).  These tests screen the same proposals
on a town read whole and on the town read by window and compare every column of every
finding (geometries as WKB), on the sample and on a town of 3,000 parcels generated here,
with features that lack their optional id (named by their row in the whole layer) and a
layer whose fids have gaps.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
import shapely

import gis_sw
from gis_sw.api import Town
from gis_sw.errors import LayerError
from gis_sw.layers.build import make_proposals
from gis_sw.layers.proposals import Proposals
from gis_sw.sample import generate_town

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
CRS = "EPSG:2260"


def _findings_equal(full: Town, windowed: Town, proposals: Proposals) -> int:
    a = full.screen(proposals).findings.reset_index(drop=True)
    b = windowed.screen(proposals).findings.reset_index(drop=True)
    columns = [c for c in a.columns if c != "geometry"]
    pd.testing.assert_frame_equal(a[columns], b[columns])
    assert a.geometry.to_wkb().tolist() == b.geometry.to_wkb().tolist()
    return len(a)


def _addition(x: float, y: float, pid: str = "ADD1") -> Proposals:
    """One 10 x 12 ft addition centred on (x, y), as a file would give it."""
    box = shapely.box(x - 5, y - 6, x + 5, y + 6)
    disturbance = gpd.GeoDataFrame({"proposal_id": [pid]}, geometry=[box], crs=CRS)
    return make_proposals(CRS, disturbance)


def _lot_point(town: Town, parcel_id: str) -> tuple[float, float]:
    point = town.parcel(parcel_id).geometry.iloc[0].representative_point()
    return float(point.x), float(point.y)


@pytest.fixture(scope="module")
def sample_town() -> Town:
    return gis_sw.read_town(SAMPLE / "layers.toml")


def test_sample_proposals_whole_file(sample_town: Town) -> None:
    proposals = gis_sw.read_proposals(SAMPLE / "proposals.gpkg", ruleset=sample_town.ruleset)
    windowed = gis_sw.read_town(SAMPLE / "layers.toml", around=proposals)
    assert _findings_equal(sample_town, windowed, proposals) > 100


def test_sample_each_proposal_alone(sample_town: Town) -> None:
    proposals = gis_sw.read_proposals(SAMPLE / "proposals.gpkg", ruleset=sample_town.ruleset)
    for pid in proposals.ids[::3]:
        one = proposals.subset([pid])
        windowed = gis_sw.read_town(SAMPLE / "layers.toml", around=one)
        assert windowed.windows, pid
        _findings_equal(sample_town, windowed, one)


def test_sample_addition_reads_part_of_the_town(sample_town: Town) -> None:
    x, y = _lot_point(sample_town, "3.1-2-5")
    addition = _addition(x, y)
    windowed = gis_sw.read_town(SAMPLE / "layers.toml", around=addition)
    parcels = len(windowed.layers.vectors["parcels"])
    assert 0 < parcels < len(sample_town.layers.vectors["parcels"])
    assert "read by window" in " ".join(windowed.layers.reports["parcels"].warnings)
    for kind in ("impaired_waters",):  # Condition A may trace runoff to any of them
        assert len(windowed.layers.vectors[kind]) == len(sample_town.layers.vectors[kind])
    dem, whole = windowed.layers.raster("dem"), sample_town.layers.raster("dem")
    assert dem is not None
    assert whole is not None
    # the DEM around the proposals (gis_sw.dem_reach): a window of the whole read's grid
    assert dem.full_bounds == whole.bounds
    col, row = ~whole.transform @ (dem.bounds[0], dem.bounds[3])
    rows, cols = dem.values.shape
    cells = whole.values[round(row) : round(row) + rows, round(col) : round(col) + cols]
    np.testing.assert_array_equal(dem.values, cells)
    _findings_equal(sample_town, windowed, addition)


def test_nearest_well_beyond_the_window_is_read(sample_town: Town) -> None:
    """The sample's wells all lie north of y = 826,440: an addition on a southern lot has
    its nearest well far beyond the reach, and SW208 must still name it."""
    wells = sample_town.layers.vectors["wells"]
    south = sample_town.parcels_near(684_600.0, 825_100.0).iloc[0]
    x, y = _lot_point(sample_town, str(south["parcel_id"]))
    addition = _addition(x, y)
    nearest = float(
        shapely.distance(wells.geometry.to_numpy(), addition.disturbance.geometry.iloc[0]).min()
    )
    assert nearest > sample_town.reach_ft
    windowed = gis_sw.read_town(SAMPLE / "layers.toml", around=addition)
    assert "wells" not in windowed.windows  # no well in the window: the layer is read whole
    assert len(windowed.layers.vectors["wells"]) == len(wells)
    assert "parcels" in windowed.windows
    _findings_equal(sample_town, windowed, addition)


def test_town_refuses_a_proposal_outside_what_it_read(sample_town: Town) -> None:
    x, y = _lot_point(sample_town, "3.1-2-5")
    windowed = gis_sw.read_town(SAMPLE / "layers.toml", around=_addition(x, y))
    far = _addition(683_100.0, 827_650.0, "FAR")
    with pytest.raises(LayerError, match="read only around other proposals"):
        windowed.screen(far)


# -- a generated town of a few thousand parcels ---------------------------------------------


@pytest.fixture(scope="module")
def big_town(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3,000 parcels; wetlands lose a third of their ids (named by layer row) and a fifth of
    their rows (gaps in the fids)."""
    out = tmp_path_factory.mktemp("town3000")
    generate_town(out, parcels=3000, seed=16, fmt="gpkg", overwrite=True, command="test")
    gpkg = out / "town.gpkg"
    wetlands = pyogrio.read_dataframe(gpkg, layer="wetlands")
    wetlands.loc[np.arange(len(wetlands)) % 3 == 1, "wetland_id"] = None
    pyogrio.write_dataframe(wetlands, gpkg, layer="wetlands")
    with sqlite3.connect(gpkg) as conn:  # gaps in the fids (the R-tree follows by trigger)
        conn.execute("DELETE FROM wetlands WHERE fid % 5 = 2")
    return out


def test_generated_town_addition_and_sample_cases(big_town: Path) -> None:
    full = gis_sw.read_town(big_town / "layers.toml")
    names = full.layers.vectors["wetlands"]["wetland_id"]
    assert names.isna().sum() > 5  # ids missing: named by their row in the layer
    proposals = gis_sw.read_proposals(big_town / "proposals.gpkg", ruleset=full.ruleset)
    centre = shapely.box(*full.bounds).centroid
    lot = full.parcels_near(centre.x, centre.y, 300.0).iloc[0]
    x, y = _lot_point(full, str(lot["parcel_id"]))
    addition = _addition(x, y)
    windowed = gis_sw.read_town(big_town / "layers.toml", around=addition)
    assert len(windowed.layers.vectors["parcels"]) < len(full.layers.vectors["parcels"]) / 5
    dem, whole_dem = windowed.layers.raster("dem"), full.layers.raster("dem")
    assert dem is not None
    assert whole_dem is not None
    assert dem.values.size < whole_dem.values.size / 4  # the DEM read around it too
    assert dem.full_bounds == whole_dem.bounds
    _findings_equal(full, windowed, addition)
    for pid in proposals.ids[::4]:
        one = proposals.subset([pid])
        _findings_equal(full, gis_sw.read_town(big_town / "layers.toml", around=one), one)


def test_generated_town_named_features_keep_their_layer_row(big_town: Path) -> None:
    full = gis_sw.read_town(big_town / "layers.toml")
    wetlands = full.layers.vectors["wetlands"]
    rows = np.flatnonzero(wetlands["wetland_id"].isna().to_numpy())
    for row in rows[[0, len(rows) // 2, -1]]:
        point = wetlands.geometry.iloc[row].representative_point()
        lot = full.parcels_near(point.x, point.y, 500.0).iloc[0]
        x, y = _lot_point(full, str(lot["parcel_id"]))
        addition = _addition(x, y, "NEXT")
        geoms = addition.disturbance.geometry.to_numpy()
        windowed = gis_sw.read_town(big_town / "layers.toml", around=addition)
        assert len(windowed.layers.vectors["wetlands"]) < len(wetlands)
        want = full.local(geoms).vectors["wetlands"]["wetland_id"].tolist()
        got = windowed.local(geoms).vectors["wetlands"]["wetland_id"].tolist()
        assert f"#{row + 1}" in want
        assert got == want


def test_copy_without_rtree_is_read_whole(tmp_path: Path, sample_town: Town) -> None:
    """A GeoPackage layer without its R-tree cannot be read by window: it is read whole."""
    copy = tmp_path / "sample"
    shutil.copytree(SAMPLE, copy)
    with sqlite3.connect(copy / "town.gpkg") as conn:
        conn.execute(
            "DELETE FROM gpkg_extensions WHERE table_name = 'wells' "
            "AND extension_name = 'gpkg_rtree_index'"
        )
    x, y = _lot_point(sample_town, "3.1-2-5")
    addition = _addition(x, y)
    windowed = gis_sw.read_town(copy / "layers.toml", around=addition)
    assert "wells" not in windowed.windows
    assert len(windowed.layers.vectors["wells"]) == len(sample_town.layers.vectors["wells"])
    assert np.isin("parcels", list(windowed.windows))
    _findings_equal(sample_town, windowed, addition)


@pytest.mark.parametrize("covering", [True, False], ids=["bbox-covering", "no-covering"])
def test_geoparquet_by_bbox_covering(tmp_path: Path, sample_town: Town, covering: bool) -> None:
    """GeoParquet files with a bbox covering column are read by window (row groups of 50
    rows skipped by their statistics); without one, whole.  Wetlands (optional ids) are
    read whole either way."""
    text = (SAMPLE / "layers.toml").read_text(encoding="utf-8")
    for kind in ("parcels", "buildings", "wells", "wetlands"):
        frame = gpd.read_file(SAMPLE / "town.gpkg", layer=kind)
        frame.to_parquet(
            tmp_path / f"{kind}.parquet", write_covering_bbox=covering, row_group_size=50
        )
        old = f'[{kind}]\npath = "town.gpkg"\nlayer = "{kind}"\n'
        text = text.replace(old, f'[{kind}]\npath = "{kind}.parquet"\n')
    for name in ("town.gpkg", "dem.tif", "seasonal_high_groundwater.tif", "bedrock.tif"):
        shutil.copy(SAMPLE / name, tmp_path / name)
    (tmp_path / "layers.toml").write_text(text, encoding="utf-8")
    x, y = _lot_point(sample_town, "3.1-2-5")
    addition = _addition(x, y)
    windowed = gis_sw.read_town(tmp_path / "layers.toml", around=addition)
    assert ("parcels" in windowed.windows) is covering
    assert "wetlands" not in windowed.windows
    parcels = len(windowed.layers.vectors["parcels"])
    assert (parcels < 323) is covering
    _findings_equal(gis_sw.read_town(tmp_path / "layers.toml"), windowed, addition)


def test_reprojected_raster_is_read_over_the_town(tmp_path: Path, sample_town: Town) -> None:
    """A raster in another CRS is resampled onto a grid that follows the area read: read by
    window it would sample other values, so it is read over the whole town's area."""
    import rasterio
    from rasterio.warp import Resampling, calculate_default_transform, reproject

    copy = tmp_path / "sample"
    shutil.copytree(SAMPLE, copy)
    source = SAMPLE / "seasonal_high_groundwater.tif"
    with rasterio.open(source) as src:
        transform, width, height = calculate_default_transform(
            src.crs, "EPSG:2263", src.width, src.height, *src.bounds
        )
        profile = {**src.profile, "crs": "EPSG:2263", "transform": transform}
        profile.update(width=width, height=height)
        with rasterio.open(copy / source.name, "w", **profile) as dst:
            dst.update_tags(**src.tags())
            reproject(
                rasterio.band(src, 1),
                rasterio.band(dst, 1),
                dst_crs="EPSG:2263",
                resampling=Resampling.nearest,
            )
    full = gis_sw.read_town(copy / "layers.toml")
    proposals = gis_sw.read_proposals(SAMPLE / "proposals.gpkg", ruleset=full.ruleset)
    one = proposals.subset([proposals.ids[len(proposals.ids) // 2]])
    windowed = gis_sw.read_town(copy / "layers.toml", around=one)
    assert windowed.windows
    got, want = windowed.layers.raster(source.stem), full.layers.raster(source.stem)
    assert got is not None
    assert want is not None
    assert got.values.shape == want.values.shape
    assert got.transform == want.transform
    _findings_equal(full, windowed, one)


def test_a_feature_without_geometry_far_from_the_window_is_still_named(
    tmp_path: Path, sample_town: Town
) -> None:
    """A null geometry has no R-tree entry: the windowed read takes it all the same, so
    validation refuses it as a whole read does (it was silently left out)."""
    copy = tmp_path / "sample"
    shutil.copytree(SAMPLE, copy)
    parcels = pyogrio.read_dataframe(copy / "town.gpkg", layer="parcels")
    far = parcels.index[-1]
    parcels.loc[far, "geometry"] = None
    pyogrio.write_dataframe(parcels, copy / "town.gpkg", layer="parcels")
    x, y = _lot_point(sample_town, "3.1-2-5")
    with pytest.raises(LayerError) as whole:
        gis_sw.read_town(copy / "layers.toml")
    with pytest.raises(LayerError) as windowed:
        gis_sw.read_town(copy / "layers.toml", around=_addition(x, y))
    assert str(windowed.value) == str(whole.value)
    assert str(parcels.loc[far, "parcel_id"]) in str(windowed.value)
    assert "no geometry" in str(windowed.value)


def test_geoparquet_window_keeps_rows_without_a_bbox(tmp_path: Path) -> None:
    """Rows with no geometry or an empty one have no bbox: a window read keeps them."""
    from gis_sw.layers.window import ParquetWindow, read_parquet_window

    frame = gpd.GeoDataFrame(
        {"well_id": ["in", "null", "empty", "far"]},
        geometry=[
            shapely.box(0, 0, 1, 1),
            None,
            shapely.Polygon(),
            shapely.box(500, 500, 501, 501),
        ],
        crs=CRS,
    )
    path = tmp_path / "wells.parquet"
    frame.to_parquet(path, write_covering_bbox=True)
    found = read_parquet_window(path, ParquetWindow((0.0, 0.0, 2.0, 2.0)))
    assert found["well_id"].tolist() == ["in", "null", "empty"]
