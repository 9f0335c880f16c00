"""The DEM of a check read around the proposals (gis_sw.dem_reach) gives the whole read's paths.

- every flow path traced on a window of a DEM that is not cut at the window's inner edge
  (``FlowEnd.CUT``) is the path traced on the whole grid: same end, end cell and steps,
  checked on every cell of a rough synthetic DEM;
- a path cut at the window's edge is Condition A ``review``, where the whole DEM passes it:
  the one place windowed and whole findings may differ, and never a wrong pass;
- :func:`read_dem_reach` reads the DEM again until no path from the proposals is cut, and
  a check of a town whose runoff runs far beyond the first window then gives the whole
  read's findings, column by column.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import rasterio
import shapely
from affine import Affine
from pyproj import CRS as PROJ_CRS

import gis_sw
from gis_sw.analysis.flow import FlowEnd, FlowGrid
from gis_sw.dem_reach import cut_ends, read_dem_reach
from gis_sw.layers.build import make_proposals
from gis_sw.layers.manifest import resolve_source
from gis_sw.layers.raster import RasterLayer
from gis_sw.layers.read import LayerInspection, read_raster_entry
from gis_sw.ruleset import Ruleset
from tests.test_lawpermits_condition_a import condition_a, context, dem, impaired

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
CRS = "EPSG:2260"
WORKING = PROJ_CRS.from_user_input(CRS)
WINDOW_NOTE = "leave the part of the DEM that was read"


def _rough(rows: int, cols: int, seed: int) -> np.ndarray:
    """A rough surface (a tilt, waves and noise): paths of every length, pits and flats."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:rows, 0:cols].astype("float64")
    z = 0.05 * xx + 3.0 * np.sin(yy / 7.0) * np.cos(xx / 11.0) + rng.normal(0, 0.3, (rows, cols))
    z[rng.random((rows, cols)) < 0.01] = np.nan  # a few nodata cells
    return np.round(z, 1)  # level neighbours: flats


def _window(full: RasterLayer, r0: int, r1: int, c0: int, c1: int) -> RasterLayer:
    return RasterLayer(
        "dem",
        full.values[r0:r1, c0:c1],
        full.transform @ Affine.translation(c0, r0),
        full.crs,
        full_bounds=full.bounds,
    )


@pytest.mark.parametrize(
    "box",
    [(20, 70, 30, 90), (0, 50, 0, 60), (35, 80, 60, 100)],
    ids=["inside", "north-west-corner-of-the-grid", "south-east-corner-of-the-grid"],
)
def test_every_uncut_path_of_a_window_is_the_whole_grids(box: tuple[int, ...]) -> None:
    z = _rough(80, 100, seed=7)
    # some paths end in water (a brook in each window; the second's cells lack elevation)
    water = [shapely.box(1200.0, 1700.0, 1230.0, 1900.0), shapely.box(1400, 1650, 1410, 1750)]
    z[50:70, 80:82] = np.nan
    full = RasterLayer("dem", z, Affine(5.0, 0.0, 1000.0, 0.0, -5.0, 2000.0), WORKING)
    r0, r1, c0, c1 = box
    part = _window(full, r0, r1, c0, c1)
    rows, cols = np.mgrid[r0:r1, c0:c1]
    rows, cols = rows.ravel(), cols.ravel()
    whole = FlowGrid(full, water).trace(rows, cols)
    cut = FlowGrid(part, water).trace(rows - r0, cols - c0)
    kept = cut.end != FlowEnd.CUT
    assert 0 < kept.sum() < len(kept)  # some paths are cut, most are not
    assert (whole.end[kept] == cut.end[kept]).all()
    assert (whole.end_row[kept] == cut.end_row[kept] + r0).all()
    assert (whole.end_col[kept] == cut.end_col[kept] + c0).all()
    assert (whole.steps[kept] == cut.steps[kept]).all()
    assert {FlowEnd.WATER, FlowEnd.PIT} <= set(whole.end[kept].tolist())


def test_window_whose_edges_are_the_whole_grids_cuts_nothing() -> None:
    full = RasterLayer("dem", _rough(40, 50, seed=3), Affine(5.0, 0, 0, 0, -5.0, 200.0), WORKING)
    same = _window(full, 0, 40, 0, 50)
    rows, cols = (a.ravel() for a in np.mgrid[0:40, 0:50])
    a, b = FlowGrid(full, []).trace(rows, cols), FlowGrid(same, []).trace(rows, cols)
    assert not (b.end == FlowEnd.CUT).any()
    assert (a.end == b.end).all()
    assert (a.steps == b.steps).all()


def _sw103_with(ruleset: Ruleset, layer: RasterLayer) -> pd.Series:
    ctx = context(ruleset, water=impaired(), surface="away")
    ctx.layers.rasters["dem"] = layer
    return condition_a(ctx)


def test_path_cut_at_the_window_is_review_where_the_whole_dem_passes(ruleset: Ruleset) -> None:
    # "away" falls south, off the DEM's south edge at y = 800: the whole grid passes it
    whole = dem("away")
    assert _sw103_with(ruleset, whole)["outcome"] == "pass"
    # a window ending at y = 950 of the whole grid (its south edge 150 ft further on)
    rows = int((1500.0 - 950.0) / 5.0)
    part = _window(whole, 0, rows, 0, whole.values.shape[1])
    found = _sw103_with(ruleset, part)
    assert found["outcome"] == "review"
    assert WINDOW_NOTE in found["message"]
    # with the window's south edge the whole grid's, the window passes it as the whole does
    edge = _window(whole, 20, whole.values.shape[0], 0, whole.values.shape[1])  # y <= 1400
    assert _sw103_with(ruleset, edge)["outcome"] == "pass"
    assert _sw103_with(ruleset, edge)["message"] == _sw103_with(ruleset, whole)["message"]


def _tilted_dem(path: Path, *, x0: float, y1: float, cols: int, rows: int) -> None:
    """10-ft cells falling 3 ft per 100 ft eastwards, with waves: runoff runs east, far."""
    yy, xx = np.mgrid[0:rows, 0:cols].astype("float64")
    z = 400.0 - 0.3 * xx + 2.0 * np.sin(yy / 9.0)
    with rasterio.open(
        path,
        "w",
        driver="GTiff",
        width=cols,
        height=rows,
        count=1,
        dtype="float64",
        crs=CRS,
        transform=Affine(10.0, 0.0, x0, 0.0, -10.0, y1),
        nodata=-9999.0,
        tiled=True,
        blockxsize=64,
        blockysize=64,
    ) as dst:
        dst.write(z, 1)


def test_read_dem_reach_reads_again_until_no_path_is_cut(tmp_path: Path, ruleset) -> None:
    dem_path = tmp_path / "dem.tif"
    _tilted_dem(dem_path, x0=0.0, y1=3000.0, cols=400, rows=300)  # x 0-4000, y 0-3000
    (tmp_path / "layers.toml").write_text('[dem]\npath = "dem.tif"\nmode = "elevation"\n')
    manifest = resolve_source(tmp_path / "layers.toml")
    entry = manifest.entries["dem"]
    full_area = (0.0, 0.0, 4000.0, 3000.0)
    first, _ = read_raster_entry(
        entry, working_crs=WORKING, area=(400.0, 1400.0, 700.0, 1600.0), full_area=full_area
    )
    site = np.array([shapely.box(500.0, 1490.0, 510.0, 1502.0)], dtype=object)
    assert len(cut_ends(first, site)) > 0  # runoff runs east, out of the first window
    inspection = LayerInspection(manifest=manifest, crs=WORKING)
    inspection.rasters["dem"] = first
    inspection.full_areas["dem"] = full_area
    read_dem_reach(inspection, site, ruleset=ruleset)
    grown = inspection.rasters["dem"]
    assert grown.bounds[2] == 4000.0  # read again as far as the east edge
    assert grown.values.shape[0] < 100  # a strip eastwards, not the whole file's 300 rows
    assert len(cut_ends(grown, site)) == 0
    whole, _ = read_raster_entry(entry, working_crs=WORKING, area=full_area)
    grid, all_of_it = FlowGrid(grown, []), FlowGrid(whole, [])
    rows, cols = grid.cells_of(site[0])
    a, b = grid.trace(rows, cols), all_of_it.trace(*all_of_it.cells_of(site[0]))
    assert a.end.tolist() == b.end.tolist() == [FlowEnd.EDGE] * len(rows)
    assert a.steps.tolist() == b.steps.tolist()
    assert (grid.centres(a.end_row, a.end_col) == all_of_it.centres(b.end_row, b.end_col)).all()


def _findings_equal(full, windowed, proposals) -> pd.DataFrame:
    a = full.screen(proposals).findings.reset_index(drop=True)
    b = windowed.screen(proposals).findings.reset_index(drop=True)
    columns = [c for c in a.columns if c != "geometry"]
    pd.testing.assert_frame_equal(a[columns], b[columns])
    assert a.geometry.to_wkb().tolist() == b.geometry.to_wkb().tolist()
    return a


def test_check_of_a_town_whose_runoff_runs_beyond_the_window(tmp_path: Path) -> None:
    """The sample town on a DEM 2.5 miles wide falling east: the addition's runoff runs
    ~9,000 ft east, past the town, to the file's edge; read around it, the DEM is read
    again and the findings are the whole read's."""
    copy = tmp_path / "sample"
    shutil.copytree(SAMPLE, copy)
    _tilted_dem(copy / "dem.tif", x0=680_000.0, y1=830_000.0, cols=1300, rows=600)
    full = gis_sw.read_town(copy / "layers.toml")
    point = full.parcel("3.1-2-5").geometry.iloc[0].representative_point()
    box = shapely.box(point.x - 5, point.y - 6, point.x + 5, point.y + 6)
    addition = make_proposals(
        CRS, gpd.GeoDataFrame({"proposal_id": ["ADD"]}, geometry=[box], crs=CRS)
    )
    windowed = gis_sw.read_town(copy / "layers.toml", around=addition)
    got, want = windowed.layers.raster("dem"), full.layers.raster("dem")
    assert got is not None
    assert want is not None
    assert got.values.size < want.values.size  # a window of the town's grid ...
    assert got.bounds[2] == want.bounds[2]  # ... read again to its east edge
    found = _findings_equal(full, windowed, addition)
    row = found[found["subject_id"] == "ADD:condition-A"].iloc[0]
    assert WINDOW_NOTE in row["message"]  # the town's grid ends where the file goes on


def test_gpkg_window_rows_without_a_scan_match_the_scan(tmp_path: Path) -> None:
    """Every fid located and without gaps: the rows come from the R-tree's count alone, and
    are those the scan for rows without an R-tree entry gives once one row is emptied."""
    import sqlite3

    import pyogrio

    from gis_sw.layers.window import GpkgWindow, gpkg_window_rows

    path = tmp_path / "wells.gpkg"
    wells = gpd.GeoDataFrame(
        {"well_id": [f"W{i}" for i in range(50)]},
        geometry=shapely.points(np.arange(50) * 10.0, np.zeros(50)),
        crs=CRS,
    )
    pyogrio.write_dataframe(wells, path, layer="wells")
    window = GpkgWindow("wells", (95.0, -1.0, 205.0, 1.0))
    found = gpkg_window_rows(path, window)
    assert found is not None
    fids, rows = found
    assert fids.tolist() == list(range(11, 22))  # x 100 to 200: fids 11-21
    assert rows.tolist() == list(range(10, 21))
    wells.loc[49, "geometry"] = None  # the last well loses its geometry (and its entry)
    pyogrio.write_dataframe(wells, path, layer="wells")
    with sqlite3.connect(path) as conn:
        assert conn.execute('SELECT count(*) FROM "rtree_wells_geom"').fetchone() == (49,)
    fids, rows = gpkg_window_rows(path, window) or (None, None)
    assert fids is not None
    assert rows is not None
    assert fids.tolist() == [*range(11, 22), 50]  # the scan finds it: validation names it
    assert rows.tolist() == [*range(10, 21), 49]


def test_held_gpkg_connection_follows_the_file(tmp_path: Path) -> None:
    """One connection serves the layers of one file version; a rewritten file gets a new
    one, and its new rows are read (not the old file's)."""
    import pyogrio

    from gis_sw.layers import window as win

    path = tmp_path / "wells.gpkg"
    wells = gpd.GeoDataFrame(
        {"well_id": ["A", "B"]}, geometry=shapely.points([0.0, 10.0], [0.0, 0.0]), crs=CRS
    )
    pyogrio.write_dataframe(wells, path, layer="wells")
    box = win.GpkgWindow("wells", (-1.0, -1.0, 11.0, 1.0))
    first = win._held_connection(path)
    assert first is not None
    assert win._held_connection(path) is first
    found = win.gpkg_window_rows(path, box)
    assert found is not None
    assert found[0].tolist() == [1, 2]
    more = pd.concat([wells, wells.assign(well_id=["C", "D"])], ignore_index=True)
    pyogrio.write_dataframe(gpd.GeoDataFrame(more, crs=CRS), path, layer="wells")
    assert win._held_connection(path) is not first
    found = win.gpkg_window_rows(path, box)
    assert found is not None
    assert found[0].tolist() == [1, 2, 3, 4]
